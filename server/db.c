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
	for (int i = 0; i < g_ndbs; i++) {
		struct ht *ht = ht_new(NULL);

		if (!ht)
			srv_die("cannot create the hash table of db %d", i);
		atomic_init(&g_dbs[i], ht);
		atomic_init(&avg_ttl[i], 0);
		ht_watch_hook(ht, key_changed, ht);
	}
	multi_init(table_of);
	tracking_init(watch_all);
	notify_init(watch_all);
}

void db_fini(void)
{
	for (int i = 0; g_dbs && i < g_ndbs; i++)
		ht_free(db_at(i));
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

void db_hit(struct conn *c, int found)
{
	if (found)
		STAT_ADD(c->w->st.keyspace_hits, 1);
	else
		STAT_ADD(c->w->st.keyspace_misses, 1);
}

void db_reply_ht_err(struct conn *c, int rc)
{
	if (rc == -E2BIG)
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
		ht_expire_cycle(ht, EXPIRE_KEYS_PER_LOOP, 0, &sampled, &expired);
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

		if (x > now) {
			sum += x - now;
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
void db_active_expire_cycle(void)
{
	static int next_db;
	long long hz = atomic_load_explicit(&g_cfg.hz, memory_order_relaxed);
	long long budget_us = 1000000 / (hz ? hz : 10) * EXPIRE_SLOW_TIME_PERC / 100;
	long long start = util_ustime(), elapsed;
	size_t total_sampled = 0, total_expired = 0;

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
