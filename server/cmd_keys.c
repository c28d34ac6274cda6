/*
 * cmd_keys.c - the generic key commands: DEL UNLINK EXISTS TYPE RENAME
 * RENAMENX COPY KEYS SCAN RANDOMKEY DBSIZE FLUSHDB FLUSHALL.
 *
 * Workers, QSBR read side (see db.h).  RENAME, RENAMENX and COPY run under
 * ht_txn() (db_run_txn): a reader on another worker sees the source and the
 * destination either both before or both after.  KEYS and SCAN walk the
 * table without a lock (ht_scan's cursor survives resizes).  Replies follow
 * Redis 7.0 byte for byte (tests/server/cases.txt).
 */
#define RCU_FLAVOR_QSBR
#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "resp/resp.h"
#include "server/cmd.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/lval.h"
#include "server/notify.h"
#include "server/multi.h"
#include "server/persist.h"
#include "server/reply.h"
#include "server/tracking.h"
#include "server/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* RENAME / RENAMENX / COPY: keys[0] = source, keys[1] = destination. */
struct move_arg {
	int nx;	    /* fail if destination exists */
	int copy;   /* keep the source */
	int result; /* 1 done, 0 not done, -1 no such key */
};

static int move_fn(struct ht_txn *tx, void *argp)
{
	struct move_arg *a = argp;
	const struct ht_entry *src = ht_txn_get(tx, 0);
	int rc;

	if (!src) {
		a->result = -1;
		return 0;
	}
	if (a->nx && ht_txn_get(tx, 1)) {
		a->result = 0;
		return 0;
	}
	if (a->copy && db_type(src) == OBJ_MODULE) { /* no type here has a copy callback */
		a->result = -2;
		return 0;
	}
	if (ht_entry_extern(src))
		db_entry_dup(NULL, src); /* the copy's own reference (a list's root) */
	rc = ht_txn_set(tx, 1, ht_entry_val(src), ht_entry_vlen_arg(src), ht_entry_expire(src));
	if (rc < 0) {
		if (ht_entry_extern(src))
			db_entry_free(NULL, src);
		return rc;
	}
	if (!a->copy)
		ht_txn_del(tx, 0);
	a->result = 1;
	return 0;
}

static void rename_generic(struct conn *c, int nx)
{
	struct move_arg a = {nx, 0, 0};
	static const int idx[2] = {1, 2};
	int rc;

	if (ARGL(c, 1) == ARGL(c, 2) && !memcmp(ARGV(c, 1), ARGV(c, 2), ARGL(c, 1))) {
		if (!ht_find_rcu(db_of(c), K(1)))
			reply_error(c, ERR_NO_KEY);
		else if (nx)
			reply_int(c, 0);
		else
			reply_ok(c);
		return;
	}
	rc = db_run_txn(c, 2, idx, move_fn, &a);
	if (rc >= 0 && a.result > 0) {
		SRV_DIRTY(c, 1);
		db_notify(c, NOTIFY_GENERIC, "rename_from", 1);
		db_notify(c, NOTIFY_GENERIC, "rename_to", 2);
		db_signal_if_list(db_of(c), K(2));
	}
	if (rc < 0)
		db_reply_ht_err(c, rc);
	else if (a.result < 0)
		reply_error(c, ERR_NO_KEY);
	else if (nx)
		reply_int(c, a.result);
	else
		reply_ok(c);
}

void cmd_rename(struct conn *c, int argc)
{
	(void)argc;
	rename_generic(c, 0);
}

void cmd_renamenx(struct conn *c, int argc)
{
	(void)argc;
	rename_generic(c, 1);
}

void cmd_copy(struct conn *c, int argc)
{
	struct move_arg a = {1, 1, 0};
	static const int idx[2] = {1, 2};
	struct ht *dst = db_of(c);
	int rc;

	for (int j = 3; j < argc; j++) {
		if (util_strcaseeq(K(j), "replace")) {
			a.nx = 0;
		} else if (util_strcaseeq(K(j), "db") && j + 1 < argc) {
			int id;

			if (db_get_index(c, j + 1, &id) != 0)
				return;
			dst = db_at(id);
			j++;
		} else {
			reply_error(c, ERR_SYNTAX);
			return;
		}
	}
	if (dst != db_of(c)) {
		db_copy_to(c, dst, !a.nx);
		return;
	}
	if (ARGL(c, 1) == ARGL(c, 2) && !memcmp(ARGV(c, 1), ARGV(c, 2), ARGL(c, 1))) {
		reply_error(c, "source and destination objects are the same");
		return;
	}
	rc = db_run_txn(c, 2, idx, move_fn, &a);
	if (rc >= 0)
		db_hit(c, 1, a.result != -1); /* the source, as lookupKeyRead() */
	if (rc >= 0 && a.result == -2) {
		reply_error(c, ERR_MODULE_NOCOPY);
		return;
	}
	if (rc >= 0 && a.result > 0) {
		SRV_DIRTY(c, 1);
		db_notify(c, NOTIFY_GENERIC, "copy_to", 2);
		db_signal_if_list(db_of(c), K(2));
	}
	if (rc < 0)
		db_reply_ht_err(c, rc);
	else
		reply_int(c, a.result > 0);
}

/* ------------------------------------------------------------- DEL etc */

void cmd_del(struct conn *c, int argc)
{
	long long n = 0;

	for (int j = 1; j < argc; j++) {
		if (ht_del(db_of(c), K(j)) == 0) {
			n++;
			db_notify(c, NOTIFY_GENERIC, "del", j);
		}
	}
	SRV_DIRTY(c, n);
	reply_int(c, n);
}

void cmd_exists(struct conn *c, int argc)
{
	long long n = 0;

	/* No touch, as Redis (LOOKUP_NOTOUCH): EXISTS is no access for LRU/LFU. */
	for (int j = 1; j < argc; j++) {
		int found = ht_peek_rcu(db_of(c), K(j)) != NULL;

		db_hit(c, j, found);
		n += found;
	}
	reply_int(c, n);
}

/*
 * TOUCH key [key ...]: the number of keys that exist.  Unlike EXISTS, each
 * lookup is an access, as Redis's lookupKeyRead(): it refreshes the key's
 * LRU/LFU word (OBJECT IDLETIME restarts from 0), counts a keyspace hit or
 * miss, and an expired key is found missing.  Lock-free: ht_find_rcu() under
 * the worker's read-side section, like GET.
 */
void cmd_touch(struct conn *c, int argc)
{
	long long n = 0;

	for (int j = 1; j < argc; j++) {
		int found = ht_find_rcu(db_of(c), K(j)) != NULL;

		db_hit(c, j, found);
		n += found;
	}
	reply_int(c, n);
}

void cmd_type(struct conn *c, int argc)
{
	const struct ht_entry *e = ht_peek_rcu(db_of(c), K(1)); /* no touch, as Redis */

	(void)argc;
	db_hit(c, 1, e != NULL);
	reply_simple(c, e ? db_entry_type_name(e) : "none");
}

/* ----------------------------------------------------- KEYS, SCAN, ... */

struct keylist {
	char **k;
	size_t *l;
	size_t n, cap;
	const char *pat;
	size_t plen;
	int all;
	int type; /* SCAN TYPE: only keys of this type; -1 any, -2 none */
	const char *tname; /* SCAN TYPE's name when it names no core type (a
			    * module type's, matched as Redis 7.0 does) */
	size_t tlen;
};

static void keylist_add(struct keylist *kl, const void *k, size_t l)
{
	if (kl->n == kl->cap) {
		kl->cap = kl->cap ? kl->cap * 2 : 64;
		kl->k = xrealloc(kl->k, kl->cap * sizeof(*kl->k));
		kl->l = xrealloc(kl->l, kl->cap * sizeof(*kl->l));
	}
	kl->k[kl->n] = xmemdup(k, l);
	kl->l[kl->n] = l;
	kl->n++;
}

static int keys_fn(const struct ht_entry *e, void *arg)
{
	struct keylist *kl = arg;
	const char *k = ht_entry_key(e);
	size_t l = ht_entry_klen(e);

	if (kl->type == -2 && kl->tname) {
		const char *n = db_type(e) == OBJ_MODULE ? db_entry_type_name(e) : NULL;

		if (!n || !util_strcaseeq(kl->tname, kl->tlen, n))
			return 0;
	} else if (kl->type != -1 && db_type(e) != kl->type) {
		return 0;
	}
	if (kl->all || util_glob_match(kl->pat, kl->plen, k, l, 0))
		keylist_add(kl, k, l);
	return 0;
}

static void keylist_reply_free(struct conn *c, struct keylist *kl)
{
	reply_array(c, (long long)kl->n);
	for (size_t i = 0; i < kl->n; i++) {
		reply_bulk(c, kl->k[i], kl->l[i]);
		free(kl->k[i]);
	}
	free(kl->k);
	free(kl->l);
}

void cmd_keys(struct conn *c, int argc)
{
	struct keylist kl = {0};

	(void)argc;
	kl.type = -1;
	kl.pat = ARGV(c, 1);
	kl.plen = ARGL(c, 1);
	kl.all = kl.plen == 1 && kl.pat[0] == '*';
	/* ht_scan_all() leaves the read-side section between buckets; this
	 * command holds no table reference while it runs. */
	ht_scan_all(db_of(c), keys_fn, &kl);
	keylist_reply_free(c, &kl);
}

void cmd_scan(struct conn *c, int argc)
{
	struct keylist kl = {0};
	unsigned long long cursor;
	long long count = 10;
	char buf[24];
	uint64_t next;

	if (db_scan_cursor(c, 1, &cursor) < 0)
		return;
	kl.all = 1;
	kl.type = -1;
	for (int j = 2; j < argc; j += 2) {
		const char *pat = kl.pat;
		size_t plen = kl.plen;
		int rc = db_scan_opt(c, j, argc, &count, &pat, &plen);

		if (rc < 0)
			return;
		if (rc > 0) {
			kl.pat = pat;
			kl.plen = plen;
			kl.all = !pat;
		} else if (rc == 0 && util_strcaseeq(K(j), "type") && j + 1 < argc) {
			kl.type = -2; /* an unknown name matches nothing (7.0) */
			kl.tname = ARGV(c, j + 1);
			kl.tlen = ARGL(c, j + 1);
			for (int t = OBJ_STRING; t <= OBJ_HASH; t++)
				if (util_strcaseeq(K(j + 1), db_type_name(t)))
					kl.type = t;
		} else if (rc == 0) {
			reply_error(c, ERR_SYNTAX);
			return;
		}
	}
	/* COUNT is a hint of work: a sparse table gets a few more steps, so a
	 * small keyspace is returned in one call as Redis does. */
	next = cursor;
	for (int round = 0; round < 16; round++) {
		if (ht_count(db_of(c)) == 0) {
			next = 0;
			break;
		}
		next = ht_scan_rcu(db_of(c), next, (size_t)count - kl.n, keys_fn, &kl);
		if (next == 0 || kl.n >= (size_t)count)
			break;
	}
	reply_array(c, 2);
	reply_bulk(c, buf, (size_t)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)next));
	keylist_reply_free(c, &kl);
}

static _Thread_local uint64_t rnd_seed;

void cmd_randomkey(struct conn *c, int argc)
{
	const struct ht_entry *e;

	(void)argc;
	if (!rnd_seed)
		rnd_seed = (uint64_t)util_ustime() ^ (uint64_t)(uintptr_t)c;
	e = ht_random_rcu(db_of(c), &rnd_seed);
	if (e)
		reply_bulk(c, ht_entry_key(e), ht_entry_klen(e));
	else
		reply_null(c);
}

void cmd_dbsize(struct conn *c, int argc)
{
	(void)argc;
	reply_int(c, (long long)ht_count(db_of(c)));
}

/* Empty db @i (its table @ht): its watched keys that exist break first
 * (Redis's touchAllWatchedKeysInDb()).  Add the keys removed to *@removed. */
static int flush_one(int i, struct ht *ht, size_t *removed)
{
	size_t n = ht_count(ht);
	int rc;

	multi_touch_dbs(i, -1);
	rc = ht_flush(ht);
	if (rc == 0) {
		*removed += n;
		db_avg_ttl_reset(i);
	}
	return rc;
}

void cmd_flush(struct conn *c, int argc)
{
	int all = util_strcaseeq(K(0), "flushall");
	size_t removed = 0;
	int rc = 0;

	if (argc > 2 ||
	    (argc == 2 && !util_strcaseeq(K(1), "async") && !util_strcaseeq(K(1), "sync"))) {
		reply_error(c, ERR_SYNTAX);
		return;
	}
	if (all) /* Redis's emptyData() forgets a replica's written keys */
		db_replica_keys_forget();
	if (all)
		for (int i = 0; i < g_ndbs && rc == 0; i++)
			rc = flush_one(i, db_at(i), &removed);
	else
		rc = flush_one(atomic_load_explicit(&c->db, memory_order_relaxed), db_of(c),
			       &removed);
	SRV_DIRTY(c, removed);
	if (rc < 0) {
		db_reply_ht_err(c, rc);
	} else {
		if (all)
			persist_flushall();
		tracking_flushed(); /* every tracking client: all keys changed */
		reply_ok(c);
	}
}
