/*
 * db.c - the keyspace: the one RCU hash table (db0) the commands run on
 * (cmd_string.c, cmd_keys.c, cmd_expire.c), the helpers they share (db.h),
 * the prefetch, the active expiry cycle and the keyspace statistics.
 *
 * Commands run on worker threads that are online QSBR readers, so every
 * *_rcu lookup is inside a read-side section that lasts until the worker's
 * next quiescent state (after the whole read pass).  The active expiry cycle
 * runs on the main thread's cron (db_active_expire_cycle).
 */
#define RCU_FLAVOR_QSBR
#include "resp/resp.h"
#include "server/db.h"
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ht *g_db;
static _Atomic long long avg_ttl;

/* The table's watch hook (ht_watch_hook()): a key changed, under its
 * stripe's mutex; WATCH and client tracking hear of it, and an expired key
 * is announced (keyspace notifications' "expired"). */
static void key_changed(void *arg, const void *key, size_t klen, int kind)
{
	(void)arg;
	multi_touched(key, klen, kind);
	tracking_touched(key, klen);
	if (kind == HT_WATCH_EXPIRED && notify_wanted(NOTIFY_EXPIRED))
		notify_event(NOTIFY_EXPIRED, "expired", key, klen, 0);
}

void db_init(void)
{
	g_db = ht_new(NULL);
	if (!g_db)
		srv_die("cannot create the hash table");
	multi_init(g_db);
	tracking_init(g_db);
	notify_init(g_db);
	ht_watch_hook(g_db, key_changed, NULL);
}

void db_fini(void)
{
	ht_free(g_db);
	g_db = NULL;
}

struct ht *db_table(void)
{
	return g_db;
}

size_t db_buckets(void)
{
	struct ht_stats st;

	ht_stats(g_db, &st);
	return st.buckets;
}

unsigned long long db_size(void)
{
	return ht_count(g_db);
}

unsigned long long db_expires(void)
{
	return ht_count_expires(g_db);
}

long long db_avg_ttl(void)
{
	return atomic_load_explicit(&avg_ttl, memory_order_relaxed);
}

unsigned long long db_expired_total(void)
{
	struct ht_stats st;

	if (!g_db)
		return 0;
	ht_stats(g_db, &st);
	return st.expired;
}

size_t db_entry_bytes(void)
{
	struct ht_stats st;

	if (!g_db)
		return 0;
	ht_stats(g_db, &st);
	return st.entry_bytes;
}

/* Warm the table for the keys of the commands a worker is about to run (bit i
 * of @for_write: key i is written).  Context: worker, online (read side). */
void db_prefetch(size_t n, const char *const keys[], const size_t klens[], uint32_t for_write)
{
	ht_prefetch(g_db, n, (const void *const *)keys, klens, for_write);
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
	rc = ht_txn(g_db, n, keys, lens, fn, arg);
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

/*
 * Main thread cron, hz times a second, Redis's slow active expire cycle:
 * sample 20 keys with a TTL from a rotating cursor and remove the expired
 * ones, again and again while more than 10% of a sample had expired (the more
 * it finds, the harder it works), within 25% of the cron period (each time
 * the cap stops it counts in expired_time_cap_reached_count).  Also keeps
 * expired_stale_perc (moving average of the expired share of samples),
 * expire_cycle_cpu_milliseconds and avg_ttl.
 */
#define EXPIRE_KEYS_PER_LOOP 20
#define EXPIRE_ACCEPTABLE_STALE 10 /* percent */
#define EXPIRE_SLOW_TIME_PERC 25
void db_active_expire_cycle(void)
{
	long long hz = atomic_load_explicit(&g_cfg.hz, memory_order_relaxed);
	long long budget_us = 1000000 / (hz ? hz : 10) * EXPIRE_SLOW_TIME_PERC / 100;
	long long start = util_ustime(), elapsed;
	size_t sampled, expired, total_sampled = 0, total_expired = 0;

	for (;;) {
		ht_expire_cycle(g_db, EXPIRE_KEYS_PER_LOOP, 0, &sampled, &expired);
		total_sampled += sampled;
		total_expired += expired;
		if (sampled == 0 || expired * 100 <= sampled * EXPIRE_ACCEPTABLE_STALE)
			break;
		if (util_ustime() - start > budget_us) {
			STAT_ADD(expire_cap_reached, 1);
			break;
		}
	}
	elapsed = util_ustime() - start;
	STAT_ADD(expire_cycle_us, (unsigned long long)elapsed);
	{
		double cur = total_sampled ? (double)total_expired / (double)total_sampled : 0.0;
		double old = atomic_load_explicit(&expired_stale_perc, memory_order_relaxed);

		atomic_store_explicit(&expired_stale_perc, cur * 0.05 + old * 0.95,
				      memory_order_relaxed);
	}
	{
		const struct ht_entry *s[20];
		static uint64_t seed = 88172645463325252ULL;
		size_t n;
		long long now = util_mstime(), sum = 0, cnt = 0, prev;

		rcu_read_lock();
		n = ht_sample_rcu(g_db, s, 20, 1, &seed);
		for (size_t i = 0; i < n; i++) {
			int64_t x = ht_entry_expire(s[i]);

			if (x > now) {
				sum += x - now;
				cnt++;
			}
		}
		rcu_read_unlock();
		prev = atomic_load_explicit(&avg_ttl, memory_order_relaxed);
		if (cnt) {
			long long cur = sum / cnt;

			atomic_store_explicit(&avg_ttl, prev ? (prev * 49 + cur) / 50 : cur,
					      memory_order_relaxed);
		} else if (ht_count_expires(g_db) == 0) {
			atomic_store_explicit(&avg_ttl, 0, memory_order_relaxed);
		}
	}
}
