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
#include "server/lval.h"
#include "server/db_set.h"
#include "server/notify.h"
#include "server/evict.h"
#include "server/persist.h"
#include "server/rdb.h"
#include "server/repl.h"
#include "server/replm.h"
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
	db_hit(c, 1, e != NULL);
	if (!e) {
		reply_null(c);
		return;
	}
	if (persist_dump(e, &p, &n)) {
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
	size_t vlen;	/* its length, | HT_VAL_TAGGED for a hash */
	void *hash;	/* a hash payload's value (hval.h), malloc()ed */
	size_t hlen;
	unsigned char list[LV_HDR]; /* a list payload's value (lval.h) */
	bool is_list;	/* list[] holds a reference until an entry takes it */
	bool is_module; /* list[] holds a module value's header (db.h), ditto */
	bool stored;	/* out: restore_fn stored the value */
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
		return (a->vlen & ~(HT_VAL_TAGGED | HT_VAL_EXTERN)) > HT_MAX_VAL_LEN ? -E2BIG
										: -ENOMEM;
	memcpy(p, a->val, a->vlen & ~(HT_VAL_TAGGED | HT_VAL_EXTERN));
	r->expire_ms = a->expire;
	a->stored = true;
	return HT_RMW_STORE;
}

/* The payload's value into @a, or -1 after replying Redis's error.
 *
 * rcukv stores strings, hashes, sets and sorted sets (docs/types.md).  A payload whose type byte Redis 7.0 does not
 * know (rdbLoadObjectType() refuses it), or a module value (no module is
 * loaded here, and Redis without the module fails rdbLoadObject()), or a
 * value that does not parse, gets Redis's "Bad data format".  A well-formed
 * list or stream, which Redis would restore, is refused
 * with an error naming its type rather than with "Bad data format": the
 * payload is not bad, this server cannot hold it. */
/* A hash payload's pairs: the hash value built into the restore_arg. */
static int restore_hash(void *arg, const struct rdb_pair *p, size_t n)
{
	struct restore_arg *a = arg;
	void *v;

	if (db_hash_build(p, n, &v, &a->hlen) < 0)
		return -EBADMSG; /* Redis: "Bad data format" */
	a->hash = v;
	return 0;
}

/* A set payload's members: the set value built into the restore_arg (the
 * hash fields hold it: both are one tagged value). */
static int restore_set(void *arg, const struct rdb_pair *m, size_t n)
{
	struct restore_arg *a = arg;
	void *v;

	if (db_set_build(m, n, &v, &a->hlen) < 0)
		return -EBADMSG; /* Redis: "Bad data format" */
	a->hash = v;
	return 0;
}

/* A sorted set payload's elements: the value built into the restore_arg
 * (hash and hlen hold any tagged value). */
static int restore_zset(void *arg, const struct rdb_zel *z, size_t n, int lp)
{
	struct restore_arg *a = arg;
	void *v;

	if (db_zset_build(z, n, lp, &v, &a->hlen) < 0)
		return -EBADMSG; /* Redis: "Bad data format" */
	a->hash = v;
	return 0;
}

/* A list payload's elements: the list built into the restore_arg. */
static int restore_list(void *arg, const struct rdb_pair *p, size_t n)
{
	struct restore_arg *a = arg;

	db_list_build(p, n, a->list);
	a->is_list = true;
	return 0;
}

/* A module value's payload: its type's rdb_load builds it (module_type.c);
 * a type no module registered is "Bad data format", as Redis. */
static int restore_module(void *arg, uint64_t id, struct rdb_module_in *in)
{
	struct restore_arg *a = arg;
	char err[256];
	int rc = db_mod_hooks.load ? db_mod_hooks.load(id, in, a->list, err, sizeof(err)) : -ENOENT;

	if (rc != 0)
		return -EBADMSG;
	a->is_module = true;
	return 0;
}

/* Drop the reference list[] holds (a list's or a module value's). */
static void restore_drop(struct restore_arg *a)
{
	if (a->is_list)
		db_list_drop(a->list);
	else if (a->is_module)
		db_mod_hooks.free(a->list);
	a->is_list = a->is_module = false;
}

static int restore_payload(struct conn *c, struct restore_arg *a, void **val)
{
	enum rdb_kind kind = RDB_KIND_STRING;
	struct rdb_restore_sinks sinks = {restore_hash, restore_set, restore_zset, restore_list,
					  restore_module, a};
	int rc = rdb_restore_typed(K(3), val, &a->vlen, &kind, &sinks);

	if (rc == 0 && (a->is_list || a->is_module)) {
		*val = NULL;
		a->val = a->list;
		a->vlen = a->is_list ? LV_VLEN : DB_MODULE_VLEN;
		return 0;
	}
	restore_drop(a); /* built, then the payload failed */

	if (rc == 0 && a->hash) {
		*val = a->hash;
		a->val = *val;
		a->vlen = a->hlen | HT_VAL_TAGGED;
		return 0;
	}
	free(a->hash); /* a hash whose payload failed after it was built */
	a->hash = NULL;
	if (rc == 0) {
		a->val = *val;
		return 0;
	}
	if (rc == -EPROTO)
		reply_error(c, ERR_DUMP_FOOTER);
	else if (rc == -ENOTSUP)
		reply_errorf(c, "DUMP payload holds a %s value; rcukv-server stores strings and hashes only",
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
	/* a replica keeps it and waits for its master's DEL (Redis's
	 * checkAlreadyExpired()) */
	a.expired = ttl && ttl <= util_mstime() && !repl_is_replica();
	a.replace = o.replace;
	rc = ht_rmw(db_of(c), K(1), restore_fn, &a);
	free(val);
	if (!(rc == HT_RMW_STORE && a.stored))
		restore_drop(&a); /* not stored: the reference is ours */
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
	if (rc == HT_RMW_STORE) {
		db_notify(c, NOTIFY_GENERIC, "restore", 1);
		db_signal_if_list(db_of(c), K(1));
	}
	else if (a.deleted)
		db_notify(c, NOTIFY_GENERIC, "del", 1);
	reply_ok(c);
}

/* WAIT numreplicas timeout: the count of replicas that acknowledged this
 * client's last propagated write.  Arguments are checked as Redis does (a
 * replica refuses first, then numreplicas, then timeout in ms).  Enough acks
 * (or inside MULTI) answer at once; otherwise the client is held until they
 * come or the timeout passes (0: for ever): replm_wait(), docs/replication.md. */
void cmd_wait(struct conn *c, int argc)
{
	long long n, timeout;

	(void)argc;
	if (repl_is_replica()) {
		reply_error(c, "WAIT cannot be used with replica instances. Please also note that "
			       "since Redis 4.0 if a replica is configured to be writable (which is "
			       "not the default) writes to replicas are just local and are not "
			       "propagated.");
		return;
	}
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
	replm_wait(c, n, timeout); /* replm.c: blocks until acks or the timeout */
}
