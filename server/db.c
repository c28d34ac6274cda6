/*
 * db.c - the keyspace: the databases (one RCU hash table each, in slots
 * SWAPDB exchanges; docs/databases.md) the commands run on, the helpers the
 * command files share (db.h), the prefetch, the active expiry cycle over
 * every db and the keyspace statistics.
 *
 * Commands run on worker threads that are online QSBR readers, so every
 * *_rcu lookup is inside a read-side section that lasts until the worker's
 * next quiescent state (after the whole read pass).  The active expiry cycle
 * runs on the main thread's cron (db_active_expire_cycle).
 */
#define RCU_FLAVOR_QSBR
#include "resp/resp.h"
#include "server/multi.h"
#include "server/notify.h"
#include "server/tracking.h"
#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/hval.h"
#include "server/sval.h"
#include "server/zval.h"
#include "server/block.h"
#include "server/lval.h"
#include "server/rdb.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ht *_Atomic *g_dbs;
int g_ndbs;
/* SWAPDB's: one swap at a time (and db_tables() sees none half done). */
static pthread_mutex_t swap_lock = PTHREAD_MUTEX_INITIALIZER;
/* Per db: the cron's moving average of the sampled keys' TTL (INFO). */
static _Atomic long long *avg_ttl;

/* replm.c's, set at start-up before any worker runs (db_set_repl_hooks()). */
static struct db_repl_hooks db_hooks;

/* Every table's watch hook (ht_watch_hook(), @arg the table): a key
 * changed, under its stripe's mutex; WATCH (on the table's db now) and
 * client tracking (which ignores dbs, as Redis's) hear of it, and an
 * expired key is announced (keyspace notifications' "expired"). */
static void key_changed(void *arg, const void *key, size_t klen, int kind)
{
	int db = db_index_of(arg);

	multi_touched(db, key, klen, kind);
	tracking_touched(key, klen);
	if (kind == HT_WATCH_EXPIRED && notify_wanted(NOTIFY_EXPIRED))
		notify_event(NOTIFY_EXPIRED, "expired", key, klen, db);
	else if (kind == HT_WATCH_INSERT && notify_wanted(NOTIFY_NEW))
		notify_event(NOTIFY_NEW, "new", key, klen, db);
}

/* Every table's remove hook (ht_remove_hook(), @arg the table): an entry
 * left the table; one removed because its time passed is the replication
 * stream's DEL (replm.c).  Under its stripe's mutex.  Without replication
 * the cost is this call and one compare per replaced entry. */
static void entry_removed(void *arg, const struct ht_entry *old, int kind)
{
	if (kind == HT_WATCH_EXPIRED && db_hooks.expired)
		db_hooks.expired(db_index_of(arg), ht_entry_key(old), ht_entry_klen(old));
}

/* For multi.c: db_at() as a function. */
static struct ht *table_of(int db)
{
	return db_at(db);
}

/* For tracking.c and notify.c: ht_watch_all() on every table (the set of
 * tables is fixed; SWAPDB only permutes it). */
static void watch_all(int delta)
{
	for (int i = 0; i < g_ndbs; i++)
		ht_watch_all(db_at(i), delta);
}

void db_init(void)
{
	g_ndbs = g_cfg.databases > 0 ? g_cfg.databases : 1;
	g_dbs = xcalloc((size_t)g_ndbs, sizeof(*g_dbs));
	avg_ttl = xmalloc((size_t)g_ndbs * sizeof(*avg_ttl));
	/* RCUKV_POISON_FREES=1 (tests only: tests/server/test_hash.sh): the
	 * tables fill entries with 0x6b before freeing them, so a reader
	 * still holding one sees garbage, not a plausible old value. */
	const char *poison = getenv("RCUKV_POISON_FREES");
	struct ht_options opt = {.poison_frees = poison && !strcmp(poison, "1")};

	for (int i = 0; i < g_ndbs; i++) {
		struct ht *ht = ht_new(&opt);

		if (!ht)
			srv_die("cannot create the hash table of db %d", i);
		atomic_init(&g_dbs[i], ht);
		atomic_init(&avg_ttl[i], 0);
		ht_watch_hook(ht, key_changed, ht);
		ht_extern_hook(ht, db_entry_dup, db_entry_free, NULL); /* lists', module values */
		ht_remove_hook(ht, entry_removed, ht);
	}
	lv_set_poison(opt.poison_frees);
	multi_init(table_of);
	tracking_init(watch_all);
	notify_init(watch_all);
}

struct db_module_hooks db_mod_hooks; /* set before the workers start, read-only after */

void db_set_module_hooks(const struct db_module_hooks *h)
{
	db_mod_hooks = *h;
}

void db_entry_dup(void *arg, const struct ht_entry *e)
{
	if (db_type(e) == OBJ_MODULE) {
		if (db_mod_hooks.dup)
			db_mod_hooks.dup(ht_entry_val(e));
		return;
	}
	lv_entry_dup(arg, e);
}

void db_entry_free(void *arg, const struct ht_entry *e)
{
	if (db_type(e) == OBJ_MODULE) {
		if (db_mod_hooks.free)
			db_mod_hooks.free(ht_entry_val(e));
		return;
	}
	lv_entry_free(arg, e);
}

const char *db_entry_type_name(const struct ht_entry *e)
{
	if (db_type(e) == OBJ_MODULE && db_mod_hooks.type_name)
		return db_mod_hooks.type_name(ht_entry_val(e));
	return db_type_name(db_type(e));
}

void db_set_repl_hooks(const struct db_repl_hooks *h)
{
	db_hooks = *h;
}


void db_fini(void)
{
	for (int i = 0; g_dbs && i < g_ndbs; i++)
		ht_free(db_at(i));
	db_replica_keys_forget();
	free(g_dbs);
	free((void *)avg_ttl);
	g_dbs = NULL;
	avg_ttl = NULL;
}

void db_tables(struct ht **out)
{
	pthread_mutex_lock(&swap_lock);
	for (int i = 0; i < g_ndbs; i++)
		out[i] = db_at(i);
	pthread_mutex_unlock(&swap_lock);
}

int db_index_of(const struct ht *ht)
{
	for (int i = 0; i < g_ndbs; i++)
		if (db_at(i) == ht)
			return i;
	return -1;
}

int db_get_int(struct conn *c, int i, const char *msg, int *id)
{
	long long v;

	if (!resp_str2ll(K(i), &v)) {
		reply_error(c, msg ? msg : ERR_NOT_INT);
		return -1;
	}
	if (v < INT_MIN || v > INT_MAX) {
		reply_error(c, msg ? msg : ERR_INT_RANGE);
		return -1;
	}
	*id = (int)v;
	return 0;
}

int db_get_index(struct conn *c, int i, int *id)
{
	if (db_get_int(c, i, NULL, id) != 0)
		return -1;
	if (*id < 0 || *id >= g_ndbs) {
		reply_error(c, ERR_DB_RANGE);
		return -1;
	}
	return 0;
}

void db_select(struct conn *c, int id)
{
	atomic_store_explicit(&c->db, id, memory_order_relaxed);
	c->ht = db_at(id);
}

/*
 * The swap publishes both slots (seq_cst stores) under swap_lock, then waits
 * until every other worker has ended the loop turn it was in
 * (server_wait_turns()): a command that read slot a or b before the swap
 * (its c->ht) runs inside such a turn, even while it waits offline for a
 * stripe, so when the wait returns every such command has finished, and
 * SWAPDB's reply comes after all of them (docs/databases.md).  A grace period
 * would not do: ht's writers wait for a contended stripe offline.  The lock
 * is taken and the wait made offline, so neither holds up grace periods.
 */
void db_swap(struct worker *self, int a, int b)
{
	struct ht *ta, *tb;

	rcu_thread_offline();
	pthread_mutex_lock(&swap_lock);
	ta = db_at(a);
	tb = db_at(b);
	atomic_store_explicit(&g_dbs[a], tb, memory_order_seq_cst);
	atomic_store_explicit(&g_dbs[b], ta, memory_order_seq_cst);
	{
		long long x = atomic_load(&avg_ttl[a]);

		atomic_store(&avg_ttl[a], atomic_load(&avg_ttl[b]));
		atomic_store(&avg_ttl[b], x);
	}
	pthread_mutex_unlock(&swap_lock);
	server_wait_turns(self);
	rcu_thread_online();
}

unsigned long long db_size(void)
{
	unsigned long long n = 0;

	for (int i = 0; i < g_ndbs; i++)
		n += ht_count(db_at(i));
	return n;
}

unsigned long long db_keys_of(int i)
{
	return ht_count(db_at(i));
}

unsigned long long db_expires_of(int i)
{
	return ht_count_expires(db_at(i));
}

long long db_avg_ttl_of(int i)
{
	return atomic_load_explicit(&avg_ttl[i], memory_order_relaxed);
}

void db_avg_ttl_reset(int i)
{
	atomic_store_explicit(&avg_ttl[i], 0, memory_order_relaxed);
}

void db_stats_total(struct ht_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (int i = 0; g_dbs && i < g_ndbs; i++) {
		struct ht_stats st;

		ht_stats(db_at(i), &st);
		sum->count += st.count;
		sum->expires += st.expires;
		sum->buckets += st.buckets;
		sum->entry_bytes += st.entry_bytes;
		sum->expired += st.expired;
		sum->snapshot_held_bytes += st.snapshot_held_bytes;
	}
}

void db_reclaim_progress(size_t *retired, size_t *freed)
{
	*retired = 0;
	*freed = 0;
	for (int i = 0; g_dbs && i < g_ndbs; i++) {
		size_t r, f;

		ht_reclaim_progress(db_at(i), &r, &f);
		*retired += r;
		*freed += f;
	}
}

unsigned long long db_expired_total(void)
{
	struct ht_stats st;

	db_stats_total(&st);
	return st.expired;
}

size_t db_entry_bytes(void)
{
	struct ht_stats st;

	db_stats_total(&st);
	return st.entry_bytes;
}

/* Warm the table for the keys of the commands a worker is about to run (bit i
 * of @for_write: key i is written).  Context: worker, online (read side). */
void db_prefetch(struct conn *c, size_t n, const char *const keys[], const size_t klens[],
		 uint32_t for_write)
{
	ht_prefetch(db_at(atomic_load_explicit(&c->db, memory_order_relaxed)), n, (const void *const *)keys, klens, for_write);
}

/* ------------------------------------------------------------- helpers */

void db_hit(struct conn *c, int kidx, int found)
{
	db_hit_key(c, K(kidx), found);
}

void db_hit_key(struct conn *c, const void *key, size_t klen, int found)
{
	if (found) {
		STAT_ADD(c->w->st.keyspace_hits, 1);
	} else {
		STAT_ADD(c->w->st.keyspace_misses, 1);
		if (notify_wanted(NOTIFY_KEY_MISS))
			notify_event(NOTIFY_KEY_MISS, "keymiss", key, klen,
				     atomic_load_explicit(&c->db, memory_order_relaxed));
	}
}

void db_notify(struct conn *c, int type, const char *event, int kidx)
{
	if (notify_wanted(type))
		notify_event(type, event, K(kidx), atomic_load_explicit(&c->db, memory_order_relaxed));
}

/* hash-max-listpack-entries / -value: when a hash leaves the listpack
 * encoding (relaxed; read by writers). */
static _Atomic long long max_lp_entries = 512, max_lp_value = 64;

static const struct cfg_opt hash_rows[] = {
    {.name = "hash-max-listpack-entries", .kind = CFG_INT, .mut = CFG_MUTABLE,
     .field = &max_lp_entries, .min = 0, .max = LONG_MAX, .def = "512"},
    {.name = "hash-max-ziplist-entries", .kind = CFG_INT, .mut = CFG_MUTABLE,
     .field = &max_lp_entries, .min = 0, .max = LONG_MAX, .def = "512"},
    {.name = "hash-max-listpack-value", .kind = CFG_MEM, .mut = CFG_MUTABLE,
     .field = &max_lp_value, .min = 0, .max = LONG_MAX, .def = "64"},
    {.name = "hash-max-ziplist-value", .kind = CFG_MEM, .mut = CFG_MUTABLE,
     .field = &max_lp_value, .min = 0, .max = LONG_MAX, .def = "64"},
};

static struct cfg_group hash_group = {
    "hash", hash_rows, (int)(sizeof(hash_rows) / sizeof(hash_rows[0])), NULL, NULL, NULL};
CFG_REGISTER(hash_group)

long long db_hash_lp_entries(void)
{
	return atomic_load_explicit(&max_lp_entries, memory_order_relaxed);
}

int db_hash_lp_fits(size_t n)
{
	return (long long)n <= atomic_load_explicit(&max_lp_value, memory_order_relaxed);
}

struct rdb_pair *db_hash_pairs(const struct ht_entry *e, size_t *n)
{
	const void *h = ht_entry_val(e);
	struct rdb_pair *p = xmalloc(((size_t)hv_count(h) + 1) * sizeof(*p));
	struct hv_pair hp;

	*n = 0;
	for (size_t off = 0; hv_next(h, &off, &hp);)
		p[(*n)++] = (struct rdb_pair){hp.f, hp.fl, hp.v, hp.vl};
	return p;
}

int db_hash_build(const struct rdb_pair *p, size_t n, void **out, size_t *outlen)
{
	struct hv_pair *hp = xmalloc((n ? n : 1) * sizeof(*hp));
	int enc = (long long)n > db_hash_lp_entries() ? HV_ENC_HASHTABLE : HV_ENC_LISTPACK;
	struct hv_edit ed;

	for (size_t i = 0; i < n; i++) {
		hp[i] = (struct hv_pair){p[i].f, p[i].fl, p[i].v, p[i].vl};
		if (!db_hash_lp_fits(p[i].fl) || !db_hash_lp_fits(p[i].vl))
			enc = HV_ENC_HASHTABLE;
	}
	if (n == 0 || hv_edit_load(&ed, hp, n) < 0) {
		free(hp);
		return -1;
	}
	*outlen = hv_edit_size(&ed, enc);
	*out = xmalloc(*outlen);
	hv_edit_write(&ed, *out, enc);
	hv_edit_fini(&ed);
	free(hp);
	return 0;
}

/* zset-max-listpack-entries / -value: when a sorted set leaves the listpack
 * encoding (relaxed; read by writers).  Redis 7.0's defaults. */
static _Atomic long long zmax_lp_entries = 128, zmax_lp_value = 64;

static const struct cfg_opt zset_rows[] = {
    {.name = "zset-max-listpack-entries", .kind = CFG_INT, .mut = CFG_MUTABLE,
     .field = &zmax_lp_entries, .min = 0, .max = LONG_MAX, .def = "128"},
    {.name = "zset-max-ziplist-entries", .kind = CFG_INT, .mut = CFG_MUTABLE,
     .field = &zmax_lp_entries, .min = 0, .max = LONG_MAX, .def = "128"},
    {.name = "zset-max-listpack-value", .kind = CFG_MEM, .mut = CFG_MUTABLE,
     .field = &zmax_lp_value, .min = 0, .max = LONG_MAX, .def = "64"},
    {.name = "zset-max-ziplist-value", .kind = CFG_MEM, .mut = CFG_MUTABLE,
     .field = &zmax_lp_value, .min = 0, .max = LONG_MAX, .def = "64"},
};

static struct cfg_group zset_group = {
    "zset", zset_rows, (int)(sizeof(zset_rows) / sizeof(zset_rows[0])), NULL, NULL, NULL};
CFG_REGISTER(zset_group)

long long db_zset_lp_entries(void)
{
	return atomic_load_explicit(&zmax_lp_entries, memory_order_relaxed);
}

int db_zset_lp_fits(size_t n)
{
	return (long long)n <= atomic_load_explicit(&zmax_lp_value, memory_order_relaxed);
}

struct rdb_zel *db_zset_elems(const struct ht_entry *e, size_t *n)
{
	const void *z = ht_entry_val(e);
	struct rdb_zel *out = xmalloc(((size_t)zv_count(z) + 1) * sizeof(*out));
	struct zv_item it;

	*n = zv_count(z);
	for (uint32_t i = 0; i < *n; i++) {
		zv_at(z, i, &it);
		out[i] = (struct rdb_zel){it.m, it.ml, it.score};
	}
	return out;
}

int db_zset_build(const struct rdb_zel *z, size_t n, int lp, void **out, size_t *outlen)
{
	struct zv_edit ed;
	int rc = 0;

	zv_edit_init(&ed, NULL);
	for (size_t i = 0; i < n && rc == 0; i++)
		if (!zv_edit_set(&ed, z[i].m, z[i].ml, z[i].score))
			rc = -1; /* a duplicate member */
	if (rc == 0 && n > 0) {
		zv_edit_finish(&ed);
		*outlen = zv_edit_size(&ed);
		if (*outlen > HT_MAX_VAL_LEN) {
			rc = -1;
		} else {
			int enc = (long long)n <= db_zset_lp_entries() && (lp || db_zset_lp_fits(ed.maxml))
				      ? ZV_ENC_LISTPACK
				      : ZV_ENC_SKIPLIST;

			*out = xmalloc(*outlen);
			zv_edit_write(&ed, *out, enc);
		}
	} else {
		rc = -1;
	}
	zv_edit_fini(&ed);
	return rc;
}

int db_rand_count_args(struct conn *c, int argc, const char *with, long long *l, int *withp)
{
	if (db_get_ll(c, 2, l) < 0)
		return -1;
	if (*l < -LLONG_MAX) {
		reply_error(c, "value is out of range, value must between "
			       "-9223372036854775807 and 9223372036854775807");
		return -1;
	}
	if (argc > 4 || (argc == 4 && !util_strcaseeq(K(3), with))) {
		reply_error(c, ERR_SYNTAX);
		return -1;
	}
	*withp = argc == 4;
	if (*withp && (*l < -LLONG_MAX / 2 || *l > LLONG_MAX / 2)) {
		reply_error(c, "value is out of range");
		return -1;
	}
	return 0;
}

uint64_t db_rand64(void)
{
	static _Thread_local uint64_t rnd; /* this thread's state only */

	if (!rnd)
		rnd = (uint64_t)util_ustime() ^ (uint64_t)(uintptr_t)&rnd;
	rnd ^= rnd << 13;
	rnd ^= rnd >> 7;
	rnd ^= rnd << 17;
	return rnd;
}

struct rdb_pair *db_list_elems(const struct ht_entry *e, size_t *n)
{
	const struct lv_root *r = lv_root_of(ht_entry_val(e));
	struct rdb_pair *p = xmalloc((size_t)r->count * sizeof(*p));
	struct lv_it it;
	const char *s;
	size_t len, i = 0;

	lv_it_at(&it, r, 0);
	while (lv_it_next(&it, &s, &len))
		p[i++] = (struct rdb_pair){s, len, NULL, 0};
	*n = i;
	return p;
}

void db_list_build(const struct rdb_pair *p, size_t n, void *hdr)
{
	struct lv_b b;

	lv_b_init(&b);
	for (size_t i = 0; i < n; i++)
		lv_b_elem(&b, p[i].f, p[i].fl);
	lv_write_hdr(hdr, lv_b_finish(&b));
}

void db_list_drop(const void *hdr)
{
	lv_root_put(lv_root_of(hdr));
}

void db_signal_if_list(struct ht *ht, const void *key, size_t klen)
{
	const struct ht_entry *e;

	if (!block_count())
		return;
	e = ht_peek_rcu(ht, key, klen);
	if (e && (db_type(e) == OBJ_LIST || db_type(e) == OBJ_ZSET))
		block_signal_key(ht, key, klen);
}

const char *db_type_name(int t)
{
	static const char *const names[] = {"string", "list", "set", "zset", "hash"};

	return t >= 0 && t <= OBJ_HASH ? names[t] : "none";
}

const char *db_encoding(const struct ht_entry *e)
{
	if (db_type(e) == OBJ_HASH)
		return hv_enc(ht_entry_val(e)) == HV_ENC_HASHTABLE ? "hashtable" : "listpack";
	if (db_type(e) == OBJ_SET)
		return sv_enc(ht_entry_val(e)) == SV_ENC_HASHTABLE ? "hashtable" : "intset";
	if (db_type(e) == OBJ_ZSET)
		return zv_enc(ht_entry_val(e)) == ZV_ENC_SKIPLIST ? "skiplist" : "listpack";
	if (db_type(e) == OBJ_LIST)
		return "quicklist"; /* Redis 7.0: every list */
	if (db_type(e) == OBJ_MODULE)
		return "raw"; /* Redis 7.0: a module value is OBJ_ENCODING_RAW */
	return db_str_encoding(e, NULL);
}

int db_is_str(struct conn *c, const struct ht_entry *e)
{
	if (!e || db_type(e) == OBJ_STRING)
		return 1;
	reply_error(c, ERR_WRONGTYPE);
	return 0;
}

void db_reply_ht_err(struct conn *c, int rc)
{
	if (rc == -DB_EWRONGTYPE)
		reply_error(c, ERR_WRONGTYPE);
	else if (rc == -E2BIG)
		reply_error(c, ERR_MAXSIZE);
	else if (rc == -ENOMEM)
		reply_error(c, ERR_OOM);
	else
		reply_errorf(c, "internal error %d", rc);
}

void reply_entry_val(struct conn *c, const struct ht_entry *e)
{
	reply_bulk(c, ht_entry_val(e), ht_entry_vlen(e));
}

int db_scan_cursor(struct conn *c, int i, unsigned long long *cursor)
{
	/* Redis parses the cursor with strtoul: a leading '-' wraps. */
	const char *s = ARGV(c, i);
	char *end;

	errno = 0;
	*cursor = strtoull(s, &end, 10);
	if (ARGL(c, i) == 0 || s[0] == ' ' || s[0] == '\t' || *end != '\0' ||
	    end != s + ARGL(c, i) || errno == ERANGE) {
		reply_error(c, "invalid cursor");
		return -1;
	}
	return 0;
}

int db_scan_opt(struct conn *c, int j, int argc, long long *count, const char **pat,
		size_t *plen)
{
	if (j + 1 >= argc)
		return 0;
	if (util_strcaseeq(K(j), "count")) {
		if (db_get_ll(c, j + 1, count) < 0)
			return -1;
		if (*count < 1) {
			reply_error(c, ERR_SYNTAX);
			return -1;
		}
		return 1;
	}
	if (util_strcaseeq(K(j), "match")) {
		*pat = ARGV(c, j + 1);
		*plen = ARGL(c, j + 1);
		if (*plen == 1 && (*pat)[0] == '*')
			*pat = NULL; /* matches everything */
		return 1;
	}
	return 0;
}

int db_scan_opts(struct conn *c, int j, int argc, long long *count, const char **pat,
		 size_t *plen)
{
	for (; j < argc; j += 2) {
		int rc = db_scan_opt(c, j, argc, count, pat, plen);

		if (rc < 0)
			return -1;
		if (rc == 0) {
			reply_error(c, ERR_SYNTAX);
			return -1;
		}
	}
	return 0;
}

void db_scan_reply(struct conn *c, uint64_t next, const struct hv_scan_item *it, size_t n,
		   const char *pat, size_t plen)
{
	size_t keep = 0;
	char buf[24];

	for (size_t i = 0; i < n; i++)
		keep += !pat || util_glob_match(pat, plen, it[i].a, it[i].al, 0);
	reply_array(c, 2);
	reply_bulk(c, buf, (size_t)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)next));
	reply_array(c, (long long)keep * (n && it[0].b ? 2 : 1));
	for (size_t i = 0; i < n; i++) {
		if (pat && !util_glob_match(pat, plen, it[i].a, it[i].al, 0))
			continue;
		reply_bulk(c, it[i].a, it[i].al);
		if (it[i].b)
			reply_bulk(c, it[i].b, it[i].bl);
	}
}

int db_get_ll(struct conn *c, int i, long long *v)
{
	if (!resp_str2ll(K(i), v)) {
		reply_error(c, ERR_NOT_INT);
		return -1;
	}
	return 0;
}

int db_run_txn(struct conn *c, size_t n, const int *argidx, ht_txn_fn fn, void *arg)
{
	const void *kstack[16] = {0};
	size_t lstack[16] = {0};
	const void **keys = n <= 16 ? kstack : xmalloc(n * sizeof(*keys));
	size_t *lens = n <= 16 ? lstack : xmalloc(n * sizeof(*lens));
	int rc;

	for (size_t i = 0; i < n; i++) {
		keys[i] = ARGV(c, argidx[i]);
		lens[i] = ARGL(c, argidx[i]);
	}
	rc = ht_txn(db_of(c), n, keys, lens, fn, arg);
	if (keys != kstack) {
		free((void *)keys);
		free(lens);
	}
	return rc;
}

/* --------------------------------------------------------- active expiry */

/* Expiry statistics (INFO stats), written by the cron only. */
static _Atomic double expired_stale_perc;
static _Atomic unsigned long long expire_cap_reached, expire_cycle_us;

void db_expire_stats(double *stale_perc, unsigned long long *cap_reached,
		     unsigned long long *cpu_ms)
{
	*stale_perc = atomic_load_explicit(&expired_stale_perc, memory_order_relaxed) * 100.0;
	*cap_reached = atomic_load_explicit(&expire_cap_reached, memory_order_relaxed);
	*cpu_ms = atomic_load_explicit(&expire_cycle_us, memory_order_relaxed) / 1000;
}

#define EXPIRE_KEYS_PER_LOOP 20
#define EXPIRE_ACCEPTABLE_STALE 10 /* percent */
#define EXPIRE_SLOW_TIME_PERC 25

/* Sample db @ht's keys with a TTL until a sample is mostly live or the
 * budget (an absolute time in us) is spent; add to the totals.  Return 1 if
 * the budget stopped it. */
static int expire_db(struct ht *ht, long long deadline, size_t *total_sampled,
		     size_t *total_expired)
{
	size_t sampled, expired;

	for (;;) {
		/* always under the stream lock: an expired key's DEL takes its
		 * place among the writes (replm.c); uncontended without replicas */
		if (db_hooks.cycle_lock)
			db_hooks.cycle_lock();
		ht_expire_cycle(ht, EXPIRE_KEYS_PER_LOOP, 0, &sampled, &expired);
		if (db_hooks.cycle_lock)
			db_hooks.cycle_unlock();
		*total_sampled += sampled;
		*total_expired += expired;
		if (sampled == 0 || expired * 100 <= sampled * EXPIRE_ACCEPTABLE_STALE)
			return 0;
		if (util_ustime() > deadline)
			return 1;
	}
}

/* Fold a sample of db @i's TTLs into its avg_ttl (Redis's db->avg_ttl). */
static void update_avg_ttl(int i)
{
	const struct ht_entry *s[20];
	static uint64_t seed = 88172645463325252ULL;
	struct ht *ht = db_at(i);
	size_t n;
	long long now = util_mstime(), sum = 0, cnt = 0, prev;

	rcu_read_lock();
	n = ht_sample_rcu(ht, s, 20, 1, &seed);
	for (size_t j = 0; j < n; j++) {
		int64_t x = ht_entry_expire(s[j]);

		/* A RESTORE ... ABSTTL can set an expire near INT64_MAX:
		 * saturate rather than overflow the sum. */
		if (x > now) {
			if (__builtin_add_overflow(sum, x - now, &sum))
				sum = LLONG_MAX;
			cnt++;
		}
	}
	rcu_read_unlock();
	prev = atomic_load_explicit(&avg_ttl[i], memory_order_relaxed);
	if (cnt) {
		long long cur = sum / cnt;

		atomic_store_explicit(&avg_ttl[i], prev ? (prev * 49 + cur) / 50 : cur,
				      memory_order_relaxed);
	} else if (ht_count_expires(ht) == 0) {
		atomic_store_explicit(&avg_ttl[i], 0, memory_order_relaxed);
	}
}

/*
 * Main thread cron, hz times a second, Redis's slow active expire cycle:
 * in every database with keys with a TTL (a rotating start, as Redis's
 * current_db), sample 20 of them from the table's rotating cursor and remove
 * the expired ones, again and again while more than 10% of a sample had
 * expired (the more it finds, the harder it works), within 25% of the cron
 * period for all databases (each time the cap stops it counts in
 * expired_time_cap_reached_count).  Also keeps expired_stale_perc (moving
 * average of the expired share of samples), expire_cycle_cpu_milliseconds
 * and each db's avg_ttl.
 */

_Atomic int db_active_expire_enabled = 1;

/*
 * Keys written with a TTL on a writable replica (db.h).  A chained hash of
 * (db, key) under wk_lock.  Lock order: the stream lock (cycle_lock), then
 * wk_lock, then a stripe mutex: a worker may still hold the stream lock
 * after a write (propagate.c keeps it for the next one), so the cron takes
 * the stream lock first too.  wk_count is written under wk_lock and read
 * relaxed by the cron to skip an empty set.
 */
struct wkey {
	struct wkey *next;
	int db;
	size_t klen;
	char key[];
};
#define WK_BUCKETS 1024
static pthread_mutex_t wk_lock = PTHREAD_MUTEX_INITIALIZER;
static struct wkey *wk_b[WK_BUCKETS];
static _Atomic size_t wk_count;

static struct wkey **wk_slot(int db, const void *key, size_t klen)
{
	struct wkey **p = &wk_b[(ht_hash(key, klen, (uint64_t)db) & (WK_BUCKETS - 1))];

	while (*p && !((*p)->db == db && (*p)->klen == klen && !memcmp((*p)->key, key, klen)))
		p = &(*p)->next;
	return p;
}

/* The expiry of key @key (HT_NO_EXPIRE if none), a past one too; -ENOENT. */
static int expire_held(struct ht *ht, const void *key, size_t klen, int64_t *x)
{
	int was = ht_expiry_hold(1), rc = ht_expire_get(ht, key, klen, x);

	ht_expiry_hold(was);
	return rc;
}

void db_replica_key_written(int db, const void *key, size_t klen)
{
	struct wkey **p, *w;
	int64_t x;

	if (expire_held(db_at(db), key, klen, &x) != 0 || x == HT_NO_EXPIRE)
		return;
	pthread_mutex_lock(&wk_lock);
	p = wk_slot(db, key, klen);
	if (!*p) {
		w = xmalloc(sizeof(*w) + klen);
		w->next = NULL;
		w->db = db;
		w->klen = klen;
		memcpy(w->key, key, klen);
		*p = w;
		atomic_store_explicit(&wk_count,
				      atomic_load_explicit(&wk_count, memory_order_relaxed) + 1,
				      memory_order_relaxed);
	}
	pthread_mutex_unlock(&wk_lock);
}

/* An rmw that changes nothing: its lookup removes an expired entry. */
static int keep_fn(struct ht_rmw *r, void *arg)
{
	(void)r;
	(void)arg;
	return HT_RMW_KEEP;
}

void db_replica_expire_cycle(void)
{
	int64_t now = ht_now_ms(), x;
	size_t gone = 0;

	if (!atomic_load_explicit(&wk_count, memory_order_relaxed) ||
	    !atomic_load_explicit(&db_active_expire_enabled, memory_order_relaxed))
		return;
	if (db_hooks.cycle_lock)
		db_hooks.cycle_lock();
	pthread_mutex_lock(&wk_lock);
	for (size_t i = 0; i < WK_BUCKETS; i++) {
		struct wkey **p = &wk_b[i], *w;

		while ((w = *p) != NULL) {
			struct ht *ht = db_at(w->db);
			int rc = expire_held(ht, w->key, w->klen, &x);

			if (rc == 0 && x != HT_NO_EXPIRE && x > now) {
				p = &w->next;
				continue;
			}
			if (rc == 0 && x != HT_NO_EXPIRE)
				(void)ht_rmw(ht, w->key, w->klen, keep_fn, NULL);
			*p = w->next;
			free(w);
			gone++;
		}
	}
	atomic_store_explicit(&wk_count,
			      atomic_load_explicit(&wk_count, memory_order_relaxed) - gone,
			      memory_order_relaxed);
	pthread_mutex_unlock(&wk_lock);
	if (db_hooks.cycle_unlock)
		db_hooks.cycle_unlock();
}

void db_replica_keys_forget(void)
{
	pthread_mutex_lock(&wk_lock);
	for (size_t i = 0; i < WK_BUCKETS; i++) {
		struct wkey *w = wk_b[i], *n;

		for (; w; w = n) {
			n = w->next;
			free(w);
		}
		wk_b[i] = NULL;
	}
	atomic_store_explicit(&wk_count, 0, memory_order_relaxed);
	pthread_mutex_unlock(&wk_lock);
}

const char *db_str_encoding(const struct ht_entry *e, long long *ival)
{
	size_t n = ht_entry_vlen(e);
	long long v;

	if (n <= 20 && resp_str2ll(ht_entry_val(e), n, &v)) {
		if (ival)
			*ival = v;
		return "int";
	}
	return n <= 44 ? "embstr" : "raw";
}

void db_active_expire_cycle(void)
{
	static int next_db;
	long long hz = atomic_load_explicit(&g_cfg.hz, memory_order_relaxed);
	long long budget_us = 1000000 / (hz ? hz : 10) * EXPIRE_SLOW_TIME_PERC / 100;
	long long start = util_ustime(), elapsed;
	size_t total_sampled = 0, total_expired = 0;

	if (!atomic_load_explicit(&db_active_expire_enabled, memory_order_relaxed))
		return;
	for (int k = 0; k < g_ndbs; k++) {
		int i = (next_db + k) % g_ndbs;
		struct ht *ht = db_at(i);

		if (ht_count_expires(ht) == 0) {
			atomic_store_explicit(&avg_ttl[i], 0, memory_order_relaxed);
			continue;
		}
		if (expire_db(ht, start + budget_us, &total_sampled, &total_expired)) {
			STAT_ADD(expire_cap_reached, 1);
			next_db = i; /* resume here next time */
			break;
		}
		update_avg_ttl(i);
	}
	elapsed = util_ustime() - start;
	STAT_ADD(expire_cycle_us, (unsigned long long)elapsed);
	{
		double cur = total_sampled ? (double)total_expired / (double)total_sampled : 0.0;
		double old = atomic_load_explicit(&expired_stale_perc, memory_order_relaxed);

		atomic_store_explicit(&expired_stale_perc, cur * 0.05 + old * 0.95,
				      memory_order_relaxed);
	}
}
