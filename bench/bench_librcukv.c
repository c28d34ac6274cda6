/*
 * bench_librcukv.c - `make bench-librcukv`: librcukv as an application's
 * cache tier, side by side in one run with the cache an application would
 * write otherwise: a pthread_rwlock around a GLib GHashTable with a strict
 * LRU list (issue 21).
 *
 * Workload (the same for both, generated once): 2 threads, keys drawn from a
 * Zipf(0.99) distribution over 1,000,000 keys, 90 % gets and 10 % sets of a
 * 100-byte value with a TTL of 2 to 5 s, a memory limit of 10 % of the
 * working set.  Both caches count an entry as 32 + 8 + key + value bytes
 * (librcukv's own accounting), so both hold about the same number of entries.
 * Each cache is warmed up, then timed sections alternate between the two
 * (REPS each, median ops/s reported); the hit ratio is gets that found a
 * value over all gets of the timed sections.  Every hit is checked: the value
 * names its key.  A cache that returns a wrong value, or does no work, stops
 * the benchmark with an error and no RATIO line.
 *
 * The baseline: lookups take the read lock, then a mutex to move the entry to
 * the head of the LRU list (a strict LRU must write on every hit); sets take
 * the write lock, insert at the head and evict from the tail until under the
 * limit; an expired entry is a miss and goes when it is evicted or set.
 * liburcu's cds_lfht is not run here: it has no memory limit, eviction or
 * TTL to compare (bench/bench_hashtable.c compares it with the table).
 *
 * Output: BENCH/RATIO lines as shared/BENCHMARKS.md; BENCH_QUICK=1 shortens
 * the timed sections.
 */
#include <errno.h>
#include <glib.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hashtable/rcukv.h"

#define NKEYS 1000000u
#define THREADS 2
#define OPS_PER_THREAD (1u << 22) /* replayed cyclically */
#define VLEN 100
#define KLEN 12
#define ENTRY_BYTES(kl, vl) (32 + 8 + (kl) + (vl)) /* as librcukv counts */
#define SET_BIT 0x80000000u
#define REPS 3

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t now_ms(void)
{
	return (int64_t)(now_s() * 1000.0);
}

/* --- the workload ------------------------------------------------------------- */

static uint32_t *g_ops[THREADS]; /* key index | SET_BIT */

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* Zipf(theta) over NKEYS by inverting the CDF (binary search); rank r maps
 * to key (r * 7919) % NKEYS so hot keys are not neighbours. */
static int make_ops(double theta)
{
	double *cdf = malloc(sizeof(double) * NKEYS), sum = 0;

	if (!cdf)
		return -ENOMEM;
	for (uint32_t i = 0; i < NKEYS; i++) {
		sum += 1.0 / pow((double)(i + 1), theta);
		cdf[i] = sum;
	}
	for (int t = 0; t < THREADS; t++) {
		uint64_t seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(t + 1);

		g_ops[t] = malloc(sizeof(uint32_t) * OPS_PER_THREAD);
		if (!g_ops[t]) {
			free(cdf);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < OPS_PER_THREAD; i++) {
			double u =
			    (double)(xorshift(&seed) >> 11) * (1.0 / 9007199254740992.0) * sum;
			uint32_t lo = 0, hi = NKEYS - 1;

			while (lo < hi) {
				uint32_t mid = (lo + hi) / 2;

				if (cdf[mid] < u)
					lo = mid + 1;
				else
					hi = mid;
			}
			g_ops[t][i] = (uint32_t)(((uint64_t)lo * 7919u) % NKEYS) |
				      (xorshift(&seed) % 10 == 0 ? SET_BIT : 0);
		}
	}
	free(cdf);
	return 0;
}

static void key_of(uint32_t k, char out[KLEN])
{
	static const char hex[] = "0123456789abcdef";

	memcpy(out, "key:", 4);
	for (int i = 0; i < 8; i++)
		out[4 + i] = hex[(k >> (28 - 4 * i)) & 15];
}

/* A value names its key in its first 4 bytes; the rest is filler. */
static void value_of(uint32_t k, char out[VLEN])
{
	memset(out, 'v', VLEN);
	memcpy(out, &k, sizeof(k));
}

static uint64_t ttl_of(uint32_t i)
{
	return 2000 + i % 3000;
}

/* --- the systems -------------------------------------------------------------- */

struct sys {
	const char *name;
	void *(*open)(size_t limit);
	/* Return: value length, or -1 on a miss. */
	long (*get)(void *c, const char *k, size_t kl, char *buf, size_t n);
	int (*set)(void *c, const char *k, size_t kl, const char *v, size_t vl, uint64_t ttl);
	void (*close)(void *c);
	/* Optional: print the cache's own counters (before close). */
	void (*report)(void *c);
};

static void *rk_open(size_t limit)
{
	struct rcukv_options o = {.initial_size = (size_t)NKEYS / 8, .max_memory = limit};

	return rcukv_open(&o);
}

static long rk_get(void *c, const char *k, size_t kl, char *buf, size_t n)
{
	long long r = rcukv_get_buf(c, k, kl, buf, n);

	return r < 0 ? -1 : (long)r;
}

static int rk_set(void *c, const char *k, size_t kl, const char *v, size_t vl, uint64_t ttl)
{
	return rcukv_set(c, k, kl, v, vl, ttl);
}

static void rk_close(void *c)
{
	rcukv_close(c);
}

/* rcukv_stats() over the whole run (warm-up included): the cache's own hit
 * ratio, next to the driver's count of the timed sections. */
static void rk_report(void *c)
{
	struct rcukv_stats st;

	if (rcukv_stats(c, &st))
		return;
	printf("# rcukv stats: hit ratio %.4f (%llu hits, %llu misses), %llu sets, %llu evictions, "
	       "%llu expirations, %llu bytes in use, %llu pinned\n",
	       st.hits + st.misses ? (double)st.hits / (double)(st.hits + st.misses) : 0.0,
	       (unsigned long long)st.hits, (unsigned long long)st.misses,
	       (unsigned long long)st.sets, (unsigned long long)st.evictions,
	       (unsigned long long)st.expirations, (unsigned long long)st.bytes_in_use,
	       (unsigned long long)st.bytes_pinned);
}

/*
 * The baseline.  @lock (rwlock) protects @table, every entry and @bytes;
 * @lru_lock protects the list's links and nests inside @lock held for
 * reading (under the write lock the list needs no second lock).
 */
struct lru_entry {
	GList link; /* in lru.queue; data points to the entry */
	int64_t expire;
	size_t vlen;
	char key[KLEN + 1];
	char val[];
};

struct lru {
	pthread_rwlock_t lock;
	pthread_mutex_t lru_lock;
	GHashTable *table; /* key (NUL-terminated, in the entry) -> entry */
	GQueue queue;	   /* head: most recently used */
	size_t bytes, limit;
};

static void *lru_open(size_t limit)
{
	struct lru *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	pthread_rwlock_init(&l->lock, NULL);
	pthread_mutex_init(&l->lru_lock, NULL);
	l->table = g_hash_table_new(g_str_hash, g_str_equal);
	g_queue_init(&l->queue);
	l->limit = limit;
	return l;
}

static long lru_get(void *c, const char *k, size_t kl, char *buf, size_t n)
{
	struct lru *l = c;
	char key[KLEN + 1];
	struct lru_entry *e;
	long r = -1;

	memcpy(key, k, kl);
	key[kl] = 0;
	pthread_rwlock_rdlock(&l->lock);
	e = g_hash_table_lookup(l->table, key);
	if (e && (!e->expire || e->expire > now_ms())) {
		memcpy(buf, e->val, e->vlen < n ? e->vlen : n);
		r = (long)e->vlen;
		pthread_mutex_lock(&l->lru_lock);
		g_queue_unlink(&l->queue, &e->link);
		g_queue_push_head_link(&l->queue, &e->link);
		pthread_mutex_unlock(&l->lru_lock);
	}
	pthread_rwlock_unlock(&l->lock);
	return r;
}

/* Context: write lock held. */
static void lru_drop(struct lru *l, struct lru_entry *e)
{
	g_hash_table_remove(l->table, e->key);
	g_queue_unlink(&l->queue, &e->link);
	l->bytes -= ENTRY_BYTES(KLEN, e->vlen);
	free(e);
}

static int lru_set(void *c, const char *k, size_t kl, const char *v, size_t vl, uint64_t ttl)
{
	struct lru *l = c;
	struct lru_entry *e = malloc(sizeof(*e) + vl), *old;

	if (!e)
		return -ENOMEM;
	memcpy(e->key, k, kl);
	e->key[kl] = 0;
	memcpy(e->val, v, vl);
	e->vlen = vl;
	e->expire = ttl ? now_ms() + (int64_t)ttl : 0;
	e->link = (GList){.data = e};
	pthread_rwlock_wrlock(&l->lock);
	old = g_hash_table_lookup(l->table, e->key);
	if (old)
		lru_drop(l, old);
	while (l->queue.tail && l->bytes + ENTRY_BYTES(KLEN, vl) > l->limit)
		lru_drop(l, l->queue.tail->data);
	g_hash_table_insert(l->table, e->key, e);
	g_queue_push_head_link(&l->queue, &e->link);
	l->bytes += ENTRY_BYTES(KLEN, vl);
	pthread_rwlock_unlock(&l->lock);
	return 0;
}

static void lru_close(void *c)
{
	struct lru *l = c;

	pthread_rwlock_wrlock(&l->lock);
	while (l->queue.tail)
		lru_drop(l, l->queue.tail->data);
	pthread_rwlock_unlock(&l->lock);
	g_hash_table_destroy(l->table);
	pthread_rwlock_destroy(&l->lock);
	pthread_mutex_destroy(&l->lru_lock);
	free(l);
}

static const struct sys g_sys[] = {
    {"rcukv", rk_open, rk_get, rk_set, rk_close, rk_report},
    {"rwlock_ghash_lru", lru_open, lru_get, lru_set, lru_close, NULL},
};
#define NSYS (sizeof(g_sys) / sizeof(g_sys[0]))

/* --- the driver ----------------------------------------------------------------- */

struct counts {
	unsigned long long ops, gets, hits, wrong, set_errors;
};

struct worker {
	const struct sys *s;
	void *cache;
	int t;
	uint32_t pos; /* where this thread is in its op array (kept across sections) */
	atomic_int *stop;
	struct counts c;
};

static void *run_worker(void *arg)
{
	struct worker *w = arg;
	const uint32_t *ops = g_ops[w->t];
	char key[KLEN], val[VLEN], buf[VLEN];
	struct counts c = {0};

	while (!atomic_load_explicit(w->stop, memory_order_relaxed)) {
		for (int i = 0; i < 256; i++) {
			uint32_t op = ops[w->pos++ & (OPS_PER_THREAD - 1)], k = op & ~SET_BIT;

			key_of(k, key);
			if (op & SET_BIT) {
				value_of(k, val);
				c.set_errors +=
				    w->s->set(w->cache, key, KLEN, val, VLEN, ttl_of(w->pos)) != 0;
			} else {
				long r = w->s->get(w->cache, key, KLEN, buf, sizeof(buf));

				c.gets++;
				if (r >= 0) {
					c.hits++;
					c.wrong += r != VLEN || memcmp(buf, &k, sizeof(k)) != 0;
				}
			}
		}
		c.ops += 256;
	}
	w->c = c;
	return NULL;
}

/* One section of @secs on @cache with THREADS threads; adds to @sum.
 * Return: ops/s. */
static double section(const struct sys *s, void *cache, uint32_t pos[THREADS], double secs,
		      struct counts *sum)
{
	struct worker w[THREADS];
	pthread_t th[THREADS];
	atomic_int stop = 0;
	struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
	double t0, dt;
	unsigned long long ops = 0;

	t0 = now_s();
	for (int t = 0; t < THREADS; t++) {
		w[t] =
		    (struct worker){.s = s, .cache = cache, .t = t, .pos = pos[t], .stop = &stop};
		pthread_create(&th[t], NULL, run_worker, &w[t]);
	}
	nanosleep(&ts, NULL);
	atomic_store(&stop, 1);
	for (int t = 0; t < THREADS; t++) {
		pthread_join(th[t], NULL);
		pos[t] = w[t].pos;
		ops += w[t].c.ops;
		if (sum) {
			sum->ops += w[t].c.ops;
			sum->gets += w[t].c.gets;
			sum->hits += w[t].c.hits;
			sum->wrong += w[t].c.wrong;
			sum->set_errors += w[t].c.set_errors;
		}
	}
	dt = now_s() - t0;
	return (double)ops / dt;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	int quick =
	    getenv("BENCH_QUICK") && *getenv("BENCH_QUICK") && *getenv("BENCH_QUICK") != '0';
	double secs = quick ? 0.25 : 1.0, warm = quick ? 0.5 : 2.0;
	size_t working_set = (size_t)NKEYS * ENTRY_BYTES(KLEN, VLEN), limit = working_set / 10;
	void *cache[NSYS];
	uint32_t pos[NSYS][THREADS] = {{0}};
	double rate[NSYS][REPS], med[NSYS], hit[NSYS];
	struct counts sum[NSYS] = {{0}};
	int bad = 0;

	printf(
	    "# librcukv vs pthread_rwlock + GHashTable + LRU: %d threads, Zipf 0.99 over %u keys,\n"
	    "# 90%% get / 10%% set (%d-byte values, TTL 2-5 s), limit %zu bytes (10%% of %zu)\n",
	    THREADS, NKEYS, VLEN, limit, working_set);
	if (make_ops(0.99)) {
		fprintf(stderr, "bench_librcukv: out of memory for the workload\n");
		return 1;
	}
	for (size_t s = 0; s < NSYS; s++) {
		cache[s] = g_sys[s].open(limit);
		if (!cache[s]) {
			fprintf(stderr, "bench_librcukv: %s: cannot open the cache\n",
				g_sys[s].name);
			return 1;
		}
		section(&g_sys[s], cache[s], pos[s], warm, NULL);
	}
	for (int r = 0; r < REPS; r++)
		for (size_t s = 0; s < NSYS; s++) {
			rate[s][r] = section(&g_sys[s], cache[s], pos[s], secs, &sum[s]);
			printf("# rep %d %-18s %12.0f ops/s\n", r, g_sys[s].name, rate[s][r]);
		}
	for (size_t s = 0; s < NSYS; s++) {
		qsort(rate[s], REPS, sizeof(double), cmp_double);
		med[s] = rate[s][REPS / 2];
		hit[s] = sum[s].gets ? (double)sum[s].hits / (double)sum[s].gets : 0;
		printf("# %-18s gets %llu hits %llu wrong %llu set errors %llu\n", g_sys[s].name,
		       sum[s].gets, sum[s].hits, sum[s].wrong, sum[s].set_errors);
		if (sum[s].wrong || sum[s].set_errors || !sum[s].hits || med[s] <= 0) {
			fprintf(stderr,
				"bench_librcukv: %s failed (wrong values, set errors or no hits)\n",
				g_sys[s].name);
			bad = 1;
		}
		if (g_sys[s].report)
			g_sys[s].report(cache[s]);
		g_sys[s].close(cache[s]);
	}
	if (bad)
		return 1;
	for (size_t s = 0; s < NSYS; s++) {
		printf("BENCH librcukv.zipf99_get90.ops.%s %.0f ops/s\n", g_sys[s].name, med[s]);
		printf("BENCH librcukv.zipf99_get90.hit_ratio.%s %.4f ratio\n", g_sys[s].name,
		       hit[s]);
	}
	printf("RATIO librcukv.zipf99_get90.ops %.2f higher\n", med[0] / med[1]);
	printf("RATIO librcukv.zipf99_get90.hit_ratio %.3f higher\n", hit[0] / hit[1]);
	for (int t = 0; t < THREADS; t++)
		free(g_ops[t]);
	return 0;
}
