/*
 * rcukv.c - librcukv: the embeddable cache API (rcukv.h) over the RCU hash
 * table (ht.h), memb flavor, so that the application has no quiescent-state
 * duties: every call registers its thread on first use.  The table's objects
 * for this library are built with -DHT_CLOCK_MONOTONIC: expiries are
 * CLOCK_MONOTONIC milliseconds, so a wall-clock step moves no TTL.
 *
 * Owns: struct rcukv (the table, the options, the expiry thread).
 *
 * Expiry.  Each cache runs one background thread (the server's active expiry
 * cycle, adapted): every RCUKV_EXPIRE_PERIOD_MS it samples entries that carry
 * a TTL from a rotating cursor and removes the expired ones, again and again
 * while more than RCUKV_EXPIRE_STALE_PCT percent of a sample had expired,
 * within RCUKV_EXPIRE_BUDGET_MS.  So expired entries that no one touches
 * leave the table, with or without a memory limit.
 *
 * Eviction under max_memory.  Invariants:
 *  1. A set that returns an error stored nothing: room is made *before* the
 *     entry is stored (make_room()), and the entry goes in only when the
 *     cache is under the limit by its size.
 *  2. Expired entries go before live ones: each eviction first runs an
 *     expiry step (from the same rotating cursor as the expiry thread) and
 *     evicts a live entry only if that step removed nothing; when sampling
 *     finds no live victim, a larger expiry step runs.
 *  3. Live victims: sample RCUKV_EVICT_SAMPLES live entries, delete the one
 *     with the oldest access clock (the table stores the clock on lookups;
 *     writers advance it in 10 ms units), never the key being stored.
 *  4. After a store, concurrent writers may have pushed the cache over the
 *     limit: the writer evicts again (best effort, not the key it stored)
 *     and still returns 0, since its entry is stored.
 *
 * Tested by tests/hashtable/test_rcukv.c (TTL fill, count, eviction order)
 * and examples/cache/cache.c (built and run by make test, and linked through
 * pkg-config after a test install, tests/hashtable/test_install.sh).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hashtable/ht.h"
#include "hashtable/rcukv.h"
#include "rcu/rcu.h"

#if !defined(RCU_FLAVOR_MEMB)
#error "librcukv is built with -DRCU_FLAVOR_MEMB"
#endif

#define RCUKV_EVICT_SAMPLES 5
#define RCUKV_EVICT_MAX_ROUNDS 64
#define RCUKV_EXPIRE_SAMPLES 20	  /* entries with a TTL looked at per step */
#define RCUKV_EXPIRE_STALE_PCT 25 /* step again while more than this expired */
#define RCUKV_EXPIRE_PERIOD_MS 100
#define RCUKV_EXPIRE_BUDGET_MS 25

/* Abort through one place, naming the call (STYLE.md 5). */
#define RCUKV_DIE(fn, ...)                                                                         \
	do {                                                                                       \
		fprintf(stderr, "librcukv: %s: ", fn);                                             \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		abort();                                                                           \
	} while (0)

#define RCUKV_OPEN 0x6f70656eu	 /* kv->magic of an open cache */
#define RCUKV_CLOSED 0x636c6f73u /* kv->magic after rcukv_close() */

struct rcukv {
	/* RCUKV_OPEN from rcukv_open() to rcukv_close(), then RCUKV_CLOSED.  The
	 * struct is never freed: closed ones wait on g_shells for the next
	 * open, so a call on a closed cache finds RCUKV_CLOSED (until the
	 * shell is reused) instead of freed memory.  Written under g_lock;
	 * relaxed loads by every call (a check, not a synchronization). */
	_Atomic unsigned int magic;
	rcukv *next_shell; /* g_shells link; g_lock */
	rcukv *next_open;  /* g_caches link while open; g_lock */
	struct ht *ht;
	/* Bytes of entries before writes evict, 0 for none: set at open and by
	 * rcukv_set_max_memory(); relaxed loads (each store() reads it once,
	 * so a change applies from the next write on). */
	_Atomic size_t max_memory;
	int64_t t0;	       /* ht_now_ms() at open; immutable */
	_Atomic uint64_t seed; /* sampling PRNG seed; relaxed, races are harmless */

	/* Expiry thread.  @lock protects @stop and is held while a cycle runs;
	 * @cond (CLOCK_MONOTONIC) wakes the thread to stop. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t expirer;
	int stop;
};

/*
 * Library state.  g_lock protects g_open and g_caches (the open caches) and
 * g_shells (closed struct rcukv kept for reuse).  It nests inside nothing;
 * held across fork() by the atfork handlers (which take each cache's lock
 * and table locks inside it), and across rcu_memb_shutdown() so that a
 * shutdown and a fork never stop the callback thread at once.
 */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long g_open;
static rcukv *g_caches;
static rcukv *g_shells;
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

/* rcukv_iterate() callbacks running on this thread (nesting depth), and the
 * innermost one's cache: close and clear refuse to run inside them. */
static __thread unsigned int tls_iter_depth;
static __thread rcukv *tls_iter_kv;

/* Check @kv is open, then register the calling thread with memb on first
 * use (unregistered at exit by the RCU library).  @fn names the call. */
static inline void enter(rcukv *kv, const char *fn)
{
	if (RCU_UNLIKELY(!kv ||
			 atomic_load_explicit(&kv->magic, memory_order_relaxed) != RCUKV_OPEN))
		RCUKV_DIE(fn, "%s", !kv ? "NULL cache" : "cache used after rcukv_close()");
	if (RCU_UNLIKELY(!rcu_memb_reader_tls.link.registered))
		rcu_memb_register_thread();
}

/* One expiry cycle: steps while the sample was more than
 * RCUKV_EXPIRE_STALE_PCT expired, for at most RCUKV_EXPIRE_BUDGET_MS.
 * Context: registered thread, outside a section. */
static void expire_cycle(rcukv *kv)
{
	int64_t start = ht_now_ms();

	for (;;) {
		size_t sampled, expired;

		ht_expire_cycle(kv->ht, RCUKV_EXPIRE_SAMPLES, 0, &sampled, &expired);
		if (expired * 100 <= sampled * RCUKV_EXPIRE_STALE_PCT)
			break;
		if (ht_now_ms() - start >= RCUKV_EXPIRE_BUDGET_MS)
			break;
	}
	/* Deletions by this thread alone fill stripe batches slowly: send them
	 * down the grace-period path so their memory comes back. */
	ht_retire_flush(kv->ht, 1);
}

static void deadline_in(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* The expiry thread: a cycle every RCUKV_EXPIRE_PERIOD_MS until kv->stop. */
static void *expirer_main(void *arg)
{
	rcukv *kv = arg;
	struct timespec ts;

	rcu_memb_register_thread();
	pthread_mutex_lock(&kv->lock);
	while (!kv->stop) {
		deadline_in(&ts, RCUKV_EXPIRE_PERIOD_MS);
		if (pthread_cond_timedwait(&kv->cond, &kv->lock, &ts) == 0 || kv->stop)
			continue;
		expire_cycle(kv); /* with @lock held: fork waits for a cycle's end */
	}
	pthread_mutex_unlock(&kv->lock);
	return NULL;
}

static int expirer_start(rcukv *kv)
{
	pthread_condattr_t ca;
	int rc;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	rc = pthread_cond_init(&kv->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (rc)
		return -rc;
	pthread_mutex_init(&kv->lock, NULL);
	kv->stop = 0;
	rc = pthread_create(&kv->expirer, NULL, expirer_main, kv);
	if (rc) {
		pthread_cond_destroy(&kv->cond);
		pthread_mutex_destroy(&kv->lock);
		return -rc;
	}
	return 0;
}

static void expirer_stop(rcukv *kv)
{
	pthread_mutex_lock(&kv->lock);
	kv->stop = 1;
	pthread_cond_signal(&kv->cond);
	pthread_mutex_unlock(&kv->lock);
	pthread_join(kv->expirer, NULL);
	pthread_cond_destroy(&kv->cond);
	pthread_mutex_destroy(&kv->lock);
}

/*
 * fork() without exec: the child gets one thread, the forking one, and a copy
 * of every lock as it was.  So before the fork every open cache is brought
 * to a point where none of its locks is held by another thread and no
 * background step is half-done (expiry thread between cycles: kv->lock;
 * table: ht_fork_prepare()), then the RCU flavor (callbacks run, callback
 * thread joined), then the table's SRCU reclaimer.  The parent releases all
 * that; the child also restarts the threads it lost (expiry, reclaimer; the
 * RCU callback thread and the table's worker start on demand).  g_lock is
 * held throughout, so no cache opens or closes meanwhile.
 */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&g_lock);
	for (rcukv *kv = g_caches; kv; kv = kv->next_open) {
		pthread_mutex_lock(&kv->lock);
		ht_fork_prepare(kv->ht);
	}
	if (g_caches) {
		if (!rcu_memb_reader_tls.link.registered)
			rcu_memb_register_thread(); /* the child's one reader */
		rcu_memb_before_fork();
	}
	for (rcukv *kv = g_caches; kv; kv = kv->next_open)
		ht_fork_prepare_reclaim(kv->ht);
}

static void atfork_parent(void)
{
	for (rcukv *kv = g_caches; kv; kv = kv->next_open)
		ht_fork_parent(kv->ht);
	if (g_caches)
		rcu_memb_after_fork_parent();
	for (rcukv *kv = g_caches; kv; kv = kv->next_open)
		pthread_mutex_unlock(&kv->lock);
	pthread_mutex_unlock(&g_lock);
}

static void atfork_child(void)
{
	if (g_caches)
		rcu_memb_after_fork_child();
	for (rcukv *kv = g_caches; kv; kv = kv->next_open) {
		pthread_condattr_t ca;

		if (ht_fork_child(kv->ht, tls_iter_depth == 0))
			RCUKV_DIE("fork", "cannot restart a cache's reclaimer thread in the child");
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&kv->cond, &ca);
		pthread_condattr_destroy(&ca);
		pthread_mutex_unlock(&kv->lock);
		if (pthread_create(&kv->expirer, NULL, expirer_main, kv))
			RCUKV_DIE("fork", "cannot restart a cache's expiry thread in the child");
	}
	pthread_mutex_unlock(&g_lock);
}

static void atfork_register(void)
{
	if (pthread_atfork(atfork_prepare, atfork_parent, atfork_child))
		RCUKV_DIE("rcukv_open", "pthread_atfork failed");
}

/* A struct rcukv to fill: a closed shell if one waits, else a new one. */
static rcukv *shell_get(void)
{
	rcukv *kv;

	pthread_mutex_lock(&g_lock);
	kv = g_shells;
	if (kv)
		g_shells = kv->next_shell;
	pthread_mutex_unlock(&g_lock);
	if (!kv)
		kv = malloc(sizeof(*kv));
	if (kv) {
		memset((char *)kv + sizeof(kv->magic), 0, sizeof(*kv) - sizeof(kv->magic));
		atomic_store_explicit(&kv->magic, RCUKV_CLOSED, memory_order_relaxed);
	}
	return kv;
}

/* Mark @kv closed and keep it for reuse.  Return: caches still open. */
static unsigned long shell_put(rcukv *kv, int was_open)
{
	unsigned long left;

	pthread_mutex_lock(&g_lock);
	atomic_store_explicit(&kv->magic, RCUKV_CLOSED, memory_order_relaxed);
	kv->next_shell = g_shells;
	g_shells = kv;
	if (was_open) {
		rcukv **pp = &g_caches;

		while (*pp != kv)
			pp = &(*pp)->next_open;
		*pp = kv->next_open;
		g_open--;
	}
	left = g_open;
	pthread_mutex_unlock(&g_lock);
	return left;
}

rcukv *rcukv_open(const struct rcukv_options *opt)
{
	struct ht_options o = {0};
	rcukv *kv = shell_get();
	int rc;

	if (!kv) {
		errno = ENOMEM;
		return NULL;
	}
	if (opt) {
		o.initial_buckets = opt->initial_size;
		atomic_store_explicit(&kv->max_memory, opt->max_memory, memory_order_relaxed);
	}
	kv->ht = ht_new(&o);
	if (!kv->ht) {
		rc = errno;
		shell_put(kv, 0);
		errno = rc;
		return NULL;
	}
	kv->t0 = ht_now_ms();
	atomic_init(&kv->seed, (uint64_t)kv->t0 | 1);
	rc = expirer_start(kv);
	if (rc) {
		ht_free(kv->ht);
		shell_put(kv, 0);
		errno = -rc;
		return NULL;
	}
	pthread_once(&g_atfork_once, atfork_register);
	pthread_mutex_lock(&g_lock);
	g_open++;
	kv->next_open = g_caches;
	g_caches = kv;
	atomic_store_explicit(&kv->magic, RCUKV_OPEN, memory_order_relaxed);
	pthread_mutex_unlock(&g_lock);
	return kv;
}

/* Closing the last cache ends the RCU callback thread (rcu_memb_shutdown():
 * a barrier, then a join); the next open starts it again on demand. */
void rcukv_close(rcukv *kv)
{
	if (!kv)
		return;
	enter(kv, __func__);
	if (tls_iter_depth)
		RCUKV_DIE(__func__, "called from inside an rcukv_iterate() callback");
	expirer_stop(kv);
	ht_free(kv->ht);
	kv->ht = NULL;
	if (shell_put(kv, 1) == 0)
		rcukv_shutdown();
}

int rcukv_shutdown(void)
{
	unsigned long open;

	if (tls_iter_depth)
		RCUKV_DIE(__func__, "called from inside an rcukv_iterate() callback");
	pthread_mutex_lock(&g_lock);
	open = g_open;
	if (!open)
		rcu_memb_shutdown();
	pthread_mutex_unlock(&g_lock);
	return open ? -EBUSY : 0;
}

static int64_t deadline(uint64_t ttl_ms)
{
	if (!ttl_ms)
		return HT_NO_EXPIRE;
	if (ttl_ms > (uint64_t)INT64_MAX / 2)
		return INT64_MAX / 2;
	return ht_now_ms() + (int64_t)ttl_ms;
}

/* Bytes an entry will take, as ht_entry_size() will count it. */
static size_t entry_size(size_t klen, size_t vlen, uint64_t ttl_ms)
{
	return sizeof(struct ht_entry) + (ttl_ms ? 8 : 0) + klen + vlen;
}

static size_t used_bytes(rcukv *kv)
{
	struct ht_stats st;

	ht_stats(kv->ht, &st);
	return st.entry_bytes;
}

static int is_key(const struct ht_entry *e, const void *key, size_t klen)
{
	return ht_entry_klen(e) == klen && (klen == 0 || memcmp(ht_entry_key(e), key, klen) == 0);
}

/* Delete the least recently used of a few sampled live entries, not @key.
 * Return: 1 one deleted (or lost a race to a concurrent delete), 0 no live
 * victim sampled, -ENOMEM. */
static int evict_live(rcukv *kv, const void *key, size_t klen)
{
	const struct ht_entry *s[RCUKV_EVICT_SAMPLES], *victim = NULL;
	uint64_t seed =
	    atomic_fetch_add_explicit(&kv->seed, 0x9e3779b97f4a7c15ULL, memory_order_relaxed);
	void *vkey = NULL;
	size_t n, i, vklen = 0;

	rcu_read_lock();
	n = ht_sample_rcu(kv->ht, s, RCUKV_EVICT_SAMPLES, 0, &seed);
	for (i = 0; i < n; i++) {
		if (is_key(s[i], key, klen))
			continue;
		if (!victim || ht_entry_access(s[i]) < ht_entry_access(victim))
			victim = s[i];
	}
	if (victim) {
		/* Copy the key out: @victim is valid only inside this section,
		 * and ht_del() must run outside it (memb: may wait on the
		 * call_rcu() backlog). */
		vklen = ht_entry_klen(victim);
		vkey = malloc(vklen ? vklen : 1);
		if (vkey && vklen)
			memcpy(vkey, ht_entry_key(victim), vklen);
	}
	rcu_read_unlock();
	if (!victim)
		return 0;
	if (!vkey)
		return -ENOMEM;
	ht_del(kv->ht, vkey, vklen);
	free(vkey);
	return 1;
}

/* Free at least one entry's worth: expired entries first (invariant 2).
 * Return: 1 progress, 0 nothing found to remove, -ENOMEM. */
static int evict_one(rcukv *kv, const void *key, size_t klen)
{
	int rc;

	if (ht_expire_cycle(kv->ht, RCUKV_EVICT_SAMPLES, 0, NULL, NULL))
		return 1;
	rc = evict_live(kv, key, klen);
	if (rc)
		return rc;
	/* No live entry sampled: the table may hold only expired ones. */
	return ht_expire_cycle(kv->ht, RCUKV_EXPIRE_SAMPLES * 4, 0, NULL, NULL) ? 1 : 0;
}

/* Evict until @need more bytes fit under @max (not @key).
 * Return: 0, or -ENOMEM if it cannot. */
static int make_room(rcukv *kv, size_t max, size_t need, const void *key, size_t klen)
{
	for (int rounds = 0; rounds < RCUKV_EVICT_MAX_ROUNDS; rounds++) {
		int rc;

		if (used_bytes(kv) + need <= max)
			return 0;
		rc = evict_one(kv, key, klen);
		if (rc < 0)
			return rc;
		if (rc == 0 && ht_count(kv->ht) == 0)
			break;
	}
	return used_bytes(kv) + need <= max ? 0 : -ENOMEM;
}

static int store(rcukv *kv, const void *key, size_t klen, const void *val, size_t vlen,
		 uint64_t ttl_ms, unsigned int flags, const char *fn)
{
	size_t need = entry_size(klen, vlen, ttl_ms), max;
	int rc;

	enter(kv, fn);
	max = atomic_load_explicit(&kv->max_memory, memory_order_relaxed);
	if (max) {
		/* An entry that alone exceeds the limit would evict everything
		 * in vain. */
		if (need > max)
			return -ENOMEM;
		if (flags & HT_SET_NX && ht_exists(kv->ht, key, klen))
			return -EEXIST;
		rc = make_room(kv, max, need, key, klen);
		if (rc)
			return rc; /* invariant 1: nothing stored */
	}
	ht_clock_set(kv->ht, (uint32_t)((ht_now_ms() - kv->t0) / 10));
	rc = ht_set(kv->ht, key, klen, val, vlen, deadline(ttl_ms), flags, NULL);
	if (rc == 0 && max)
		make_room(kv, max, 0, key, klen); /* invariant 4: best effort */
	return rc;
}

/* A lower limit is met at once: evict (expired entries first) until under
 * it or the table is empty. */
int rcukv_set_max_memory(rcukv *kv, size_t bytes)
{
	enter(kv, __func__);
	atomic_store_explicit(&kv->max_memory, bytes, memory_order_relaxed);
	while (bytes && used_bytes(kv) > bytes && ht_count(kv->ht))
		if (evict_one(kv, NULL, 0) <= 0)
			break;
	return 0;
}

size_t rcukv_max_memory(rcukv *kv)
{
	enter(kv, __func__);
	return atomic_load_explicit(&kv->max_memory, memory_order_relaxed);
}

int rcukv_set(rcukv *kv, const void *key, size_t klen, const void *val, size_t vlen,
	      uint64_t ttl_ms)
{
	return store(kv, key, klen, val, vlen, ttl_ms, 0, __func__);
}

int rcukv_add(rcukv *kv, const void *key, size_t klen, const void *val, size_t vlen,
	      uint64_t ttl_ms)
{
	return store(kv, key, klen, val, vlen, ttl_ms, HT_SET_NX, __func__);
}

int rcukv_get(rcukv *kv, const void *key, size_t klen, void **val, size_t *vlen)
{
	enter(kv, __func__);
	return ht_get_alloc(kv->ht, key, klen, val, vlen, NULL);
}

long long rcukv_get_buf(rcukv *kv, const void *key, size_t klen, void *buf, size_t bufsize)
{
	enter(kv, __func__);
	return ht_get(kv->ht, key, klen, buf, bufsize, NULL);
}

int rcukv_exists(rcukv *kv, const void *key, size_t klen)
{
	enter(kv, __func__);
	return ht_exists(kv->ht, key, klen);
}

int rcukv_del(rcukv *kv, const void *key, size_t klen)
{
	enter(kv, __func__);
	return ht_del(kv->ht, key, klen);
}

int rcukv_expire(rcukv *kv, const void *key, size_t klen, uint64_t ttl_ms)
{
	int rc;

	enter(kv, __func__);
	if (!ttl_ms)
		rc = ht_expire_clear(kv->ht, key, klen);
	else
		rc = ht_expire_set(kv->ht, key, klen, deadline(ttl_ms), 0);
	return rc < 0 ? rc : 0;
}

long long rcukv_ttl(rcukv *kv, const void *key, size_t klen)
{
	int64_t x;
	int rc;

	enter(kv, __func__);
	rc = ht_expire_get(kv->ht, key, klen, &x);
	if (rc)
		return rc;
	if (x == HT_NO_EXPIRE)
		return -1;
	x -= ht_now_ms();
	return x < 0 ? 0 : x;
}

struct incr_ctx {
	long long by, result;
};

static int incr_cb(struct ht_rmw *r, void *arg)
{
	struct incr_ctx *c = arg;
	long long v = 0;
	char num[32], *end;
	int n;

	if (r->old) {
		size_t l = ht_entry_vlen(r->old);

		if (l == 0 || l >= sizeof(num))
			return -EINVAL;
		memcpy(num, ht_entry_val(r->old), l);
		num[l] = 0;
		errno = 0;
		v = strtoll(num, &end, 10);
		if (*end || errno)
			return -EINVAL;
	}
	if (__builtin_add_overflow(v, c->by, &v))
		return -ERANGE;
	n = snprintf(num, sizeof(num), "%lld", v);
	end = ht_rmw_alloc(r, (size_t)n);
	if (!end)
		return -ENOMEM;
	memcpy(end, num, (size_t)n);
	c->result = v;
	return HT_RMW_STORE;
}

int rcukv_incr(rcukv *kv, const void *key, size_t klen, long long by, long long *result)
{
	struct incr_ctx c = {by, 0};
	int rc;

	enter(kv, __func__);
	rc = ht_rmw(kv->ht, key, klen, incr_cb, &c);
	if (rc < 0)
		return rc;
	if (result)
		*result = c.result;
	return 0;
}

struct iter_ctx {
	rcukv_iter_fn fn;
	void *arg;
};

static int iter_cb(const struct ht_entry *e, void *arg)
{
	struct iter_ctx *c = arg;

	return c->fn(ht_entry_key(e), ht_entry_klen(e), ht_entry_val(e), ht_entry_vlen(e), c->arg);
}

int rcukv_iterate(rcukv *kv, rcukv_iter_fn fn, void *arg)
{
	struct iter_ctx c = {fn, arg};
	rcukv *outer = tls_iter_kv;
	int rc;

	enter(kv, __func__);
	if (tls_iter_depth && outer == kv)
		RCUKV_DIE(__func__,
			  "called from inside an rcukv_iterate() callback on the same cache");
	tls_iter_depth++;
	tls_iter_kv = kv;
	rc = ht_scan_all(kv->ht, iter_cb, &c);
	tls_iter_kv = outer;
	tls_iter_depth--;
	return rc;
}

static int count_cb(const struct ht_entry *e, void *arg)
{
	(void)e;
	++*(size_t *)arg;
	return 0;
}

/* Live entries: without TTLs the table's counter; with some, a walk (the
 * scan reports live entries only), one read-side section per step. */
size_t rcukv_count(rcukv *kv)
{
	size_t n = 0, all;
	uint64_t cur = 0;

	enter(kv, __func__);
	all = ht_count(kv->ht);
	if (ht_count_expires(kv->ht) == 0)
		return all;
	do {
		rcu_read_lock();
		cur = ht_scan_rcu(kv->ht, cur, 256, count_cb, &n);
		rcu_read_unlock();
	} while (cur);
	return n < all ? n : all; /* a resize meanwhile may report a key twice */
}

size_t rcukv_memory(rcukv *kv)
{
	enter(kv, __func__);
	return used_bytes(kv);
}

int rcukv_clear(rcukv *kv)
{
	enter(kv, __func__);
	if (tls_iter_depth && tls_iter_kv == kv)
		RCUKV_DIE(__func__,
			  "called from inside an rcukv_iterate() callback on the same cache");
	return ht_flush(kv->ht);
}

void rcukv_free(void *p)
{
	free(p);
}
