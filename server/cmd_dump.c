/*
 * cmd_dump.c - DUMP, RESTORE and WAIT: a key's value as a portable payload
 * and back, and the replication barrier of a server with no replicas.
 *
 * The payload is rdb.c's (rdb_dump_string(), rdb_restore_string()): the
 * value's RDB encoding, the RDB version (10) and a CRC64, byte for byte what
 * redis-server 7.0 produces for the same string, so a DUMP taken from either
 * server RESTOREs in the other.  DUMP compresses as rdbcompression says, as
 * Redis's does.
 *
 * Context: the connection's worker, online (QSBR): entries looked up stay
 * valid until the command returns.  RESTORE writes under ht_rmw(), so the
 * BUSYKEY check and the store are one step for every other writer.
 *
 * Tested by tests/server/cases_dump.txt (replies recorded from redis-server
 * 7.0.15, replayed against both) and tests/server/test_dump.sh (payloads
 * carried from redis-server to rcukv-server and back).
 */
#define RCU_FLAVOR_QSBR
#include "hashtable/ht.h"
#include "resp/resp.h"
#include "server/cmd.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/evict.h"
#include "server/persist.h"
#include "server/rdb.h"
#include "server/reply.h"
#include "server/util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define ERR_BUSYKEY "-BUSYKEY Target key name already exists."
#define ERR_DUMP_FOOTER "-ERR DUMP payload version or checksum are wrong"
#define ERR_DUMP_FORMAT "-ERR Bad data format"

/* DUMP key: nil for a missing key.  The lookup is an access (Redis's
 * lookupKeyRead()): it counts a hit or a miss and refreshes LRU/LFU. */
void cmd_dump(struct conn *c, int argc)
{
	const struct ht_entry *e = ht_find_rcu(db_of(c), K(1));
	void *p;
	size_t n;

	(void)argc;
	db_hit(c, e != NULL);
	if (!e) {
		reply_null(c);
		return;
	}
	if (rdb_dump_string(ht_entry_val(e), ht_entry_vlen(e), persist_rdbcompression(), &p, &n)) {
		reply_error(c, ERR_OOM);
		return;
	}
	reply_bulk(c, p, n);
	free(p);
}

/* RESTORE's options.  lfu_freq and lru_idle stay -1 when not given; Redis
 * refuses the second of IDLETIME and FREQ as a syntax error. */
struct restore_opts {
	bool replace, absttl;
	long long lfu_freq, lru_idle;
};

/* [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency] from argument 4 on,
 * in Redis's order (each option's own errors as it comes).  Return: 0, or
 * -1 after replying the error. */
static int restore_parse(struct conn *c, int argc, struct restore_opts *o)
{
	o->replace = o->absttl = false;
	o->lfu_freq = o->lru_idle = -1;
	for (int j = 4; j < argc; j++) {
		bool more = j + 1 < argc;

		if (util_strcaseeq(K(j), "replace")) {
			o->replace = true;
		} else if (util_strcaseeq(K(j), "absttl")) {
			o->absttl = true;
		} else if (util_strcaseeq(K(j), "idletime") && more && o->lfu_freq == -1) {
			if (db_get_ll(c, ++j, &o->lru_idle))
				return -1;
			if (o->lru_idle < 0) {
				reply_error(c, "Invalid IDLETIME value, must be >= 0");
				return -1;
			}
		} else if (util_strcaseeq(K(j), "freq") && more && o->lru_idle == -1) {
			if (db_get_ll(c, ++j, &o->lfu_freq))
				return -1;
			if (o->lfu_freq < 0 || o->lfu_freq > 255) {
				reply_error(c, "Invalid FREQ value, must be >= 0 and <= 255");
				return -1;
			}
		} else {
			reply_error(c, ERR_SYNTAX);
			return -1;
		}
	}
	return 0;
}

/* The store itself, under the key's stripe lock. */
struct restore_arg {
	const void *val;
	size_t vlen;
	int64_t expire; /* absolute ms, or HT_NO_EXPIRE */
	bool replace;
	bool expired; /* the TTL is already past: only delete (REPLACE) */
	bool busy;    /* out: the key exists and REPLACE was not given */
	bool deleted; /* out: an old key was deleted by an expired REPLACE */
};

static int restore_fn(struct ht_rmw *r, void *argp)
{
	struct restore_arg *a = argp;
	void *p;

	if (r->old && !a->replace) {
		a->busy = true;
		return HT_RMW_KEEP;
	}
	if (a->expired) {
		a->deleted = r->old != NULL;
		return r->old ? HT_RMW_DELETE : HT_RMW_KEEP;
	}
	p = ht_rmw_alloc(r, a->vlen);
	if (!p)
		return a->vlen > HT_MAX_VAL_LEN ? -E2BIG : -ENOMEM;
	memcpy(p, a->val, a->vlen);
	r->expire_ms = a->expire;
	return HT_RMW_STORE;
}

/* The payload's value into @a, or -1 after replying Redis's error.
 *
 * rcukv stores strings only.  A payload whose type byte Redis 7.0 does not
 * know (rdbLoadObjectType() refuses it), or a module value (no module is
 * loaded here, and Redis without the module fails rdbLoadObject()), or a
 * value that does not parse, gets Redis's "Bad data format".  A well-formed
 * list, set, zset, hash or stream, which Redis would restore, is refused
 * with an error naming its type rather than with "Bad data format": the
 * payload is not bad, this server cannot hold it. */
static int restore_payload(struct conn *c, struct restore_arg *a, void **val)
{
	enum rdb_kind kind = RDB_KIND_STRING;
	int rc = rdb_restore_string(K(3), val, &a->vlen, &kind);

	if (rc == 0) {
		a->val = *val;
		return 0;
	}
	if (rc == -EPROTO)
		reply_error(c, ERR_DUMP_FOOTER);
	else if (rc == -ENOTSUP)
		reply_errorf(c, "DUMP payload holds a %s value; rcukv-server stores strings only",
			     rdb_kind_name(kind));
	else if (rc == -ENOMEM)
		reply_error(c, ERR_OOM);
	else
		reply_error(c, ERR_DUMP_FORMAT);
	return -1;
}

/* RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f]
 * Checks in Redis's order: options, the key (BUSYKEY without REPLACE; the
 * lookup expires a stale key and counts no hit), the TTL, the payload's
 * footer, its value.  A TTL of 0 is no expiry; one already past (ABSTTL, or
 * an overflowing relative TTL) creates nothing and, with REPLACE, deletes
 * the old key: the reply is +OK either way. */
void cmd_restore(struct conn *c, int argc)
{
	struct restore_opts o;
	struct restore_arg a = {0};
	void *val = NULL;
	long long ttl;
	int rc;

	if (restore_parse(c, argc, &o))
		return;
	if (!o.replace && ht_peek_rcu(db_of(c), K(1))) {
		reply_error(c, ERR_BUSYKEY);
		return;
	}
	if (db_get_ll(c, 2, &ttl))
		return;
	if (ttl < 0) {
		reply_error(c, "Invalid TTL value, must be >= 0");
		return;
	}
	if (restore_payload(c, &a, &val))
		return;
	if (ttl && !o.absttl)
		ttl = wrap_add(ttl, util_mstime());
	a.expire = ttl ? ttl : HT_NO_EXPIRE;
	a.expired = ttl && ttl <= util_mstime();
	a.replace = o.replace;
	rc = ht_rmw(db_of(c), K(1), restore_fn, &a);
	free(val);
	if (rc < 0) {
		db_reply_ht_err(c, rc);
		return;
	}
	if (a.busy) {
		reply_error(c, ERR_BUSYKEY);
		return;
	}
	if (rc == HT_RMW_STORE) {
		const struct ht_entry *e = ht_peek_rcu(db_of(c), K(1));

		/* Another writer may have replaced the key since: then the
		 * word set is its entry's, which costs only an estimate. */
		if (e)
			evict_entry_restore(e, o.lfu_freq, o.lru_idle);
	}
	if (rc == HT_RMW_STORE || a.deleted)
		SRV_DIRTY(c, 1);
	reply_ok(c);
}

/* WAIT numreplicas timeout: no replica ever acknowledges here, so the count
 * is 0.  Arguments are checked as Redis does (numreplicas, then timeout in
 * ms).  Redis answers at once when numreplicas <= 0 (and inside MULTI);
 * asked for more it blocks until the timeout (0: for ever) and then answers
 * 0.  rcukv answers 0 at once in every case: a handler must not block its
 * worker, and there is no blocked-client state yet to park the connection
 * in (the same reply, sooner). */
void cmd_wait(struct conn *c, int argc)
{
	long long n, timeout;

	(void)argc;
	if (db_get_ll(c, 1, &n))
		return;
	if (!resp_str2ll(K(2), &timeout)) {
		reply_error(c, "timeout is not an integer or out of range");
		return;
	}
	if (timeout < 0) {
		reply_error(c, "timeout is negative");
		return;
	}
	reply_int(c, 0);
}
