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
 *  3. Live victims: sample rcukv_options.samples live entries (volatile
 *     policies: entries with a TTL), delete the one with the highest score
 *     of the policy (evict_score(): idle clock ticks for LRU, 255 - decayed
 *     counter for LFU, nearest expiry for volatile-ttl; a random sample for
 *     the random policies), never the key being stored.  The table stores
 *     the clock on lookups; writers and the expiry thread advance it (10 ms
 *     ticks, or minutes under LFU).  Volatile victims are deleted with
 *     ht_rmw() only if they still carry a TTL.  noeviction removes expired
 *     entries only.
 *  4. After a store, concurrent writers may have pushed the cache over the
 *     limit: the writer evicts again (best effort, not the key it stored)
 *     and still returns 0, since its entry is stored.
 *
 * Removals.  ht_remove_hook() hands on_remove() every entry that leaves the
 * table (delete, replacement, expiry), on the writer's thread under its
 * stripe mutex; thread-local flags say which deletes are evictions and
 * which replacements are only TTL changes.  It counts them and calls the
 * application's callback.
 *
 * Tested by tests/hashtable/test_rcukv.c (TTL fill, count, eviction order,
 * policies, stats, removal reasons, single flight)
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

#define RCUKV_EVICT_SAMPLES 5	  /* default rcukv_options.samples */
#define RCUKV_EVICT_SAMPLES_MAX 64
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

#define RCUKV_LRU_UNIT_MS 10	/* LRU clock tick (the server's LRU_UNIT_MS) */
#define RCUKV_LFU_LOG_FACTOR 10 /* the server's lfu-log-factor default */
#define RCUKV_LFU_DECAY_MIN 1	/* the server's lfu-decay-time default */

/*
 * Counters (rcukv_stats()).  Each cache keeps RCUKV_STAT_STRIPES stripes of
 * counters (cache-line aligned) plus one shared overflow stripe.  A thread
 * owns one stripe slot, the same in every cache, from its first count until
 * it exits (slot_get(); a pthread key destructor gives the slot back), so a
 * stripe has one writer at a time: the owner adds with a relaxed load and
 * store (no read-modify-write, no line another thread writes, as the
 * server's per-worker stats), and a lookup adds no shared-cacheline write.
 * The next owner of a slot carries on from the counts left in it: the slot
 * changes hands under g_slot_lock, which orders the old owner's last store
 * before the new owner's first load.  Threads beyond RCUKV_STAT_STRIPES
 * live at once share the overflow stripe with relaxed fetch_adds.
 * rcukv_stats() sums relaxed loads: a moment's sum, never torn, exact once
 * the counting threads have finished their calls.
 */
#define RCUKV_STAT_STRIPES 64
enum {
	ST_HITS,
	ST_MISSES,
	ST_SETS,
	ST_DELETES,
	ST_REPLACED,
	ST_EVICTED,
	ST_EXPIRED,
	ST_LOADS,
	ST_LOAD_ERRORS,
	ST_LOAD_WAITS,
	ST_N
};
struct stat_stripe {
	_Atomic uint64_t c[ST_N];
} __attribute__((aligned(64)));

/*
 * Single flight (rcukv_get_or_load()).  A load in flight is a struct load on
 * the list of the stripe its key hashes to.  @lock protects the list and
 * every field of its loads; @cond is broadcast when one of them is done.
 * The leader unlinks its load once the value is stored (so a caller that
 * finds no load finds the value, or loads again after a store failed);
 * waiters hold a reference (@refs) and read @rc and @val after @done, which
 * never change again.  The last reference frees it.  The lock nests inside
 * nothing and is never held across the loader or a table write.
 */
#define RCUKV_LOAD_STRIPES 16
struct load {
	struct load *next; /* stripe list; stripe lock */
	uint64_t hash;
	char *key;
	size_t klen;
	pthread_t leader; /* the thread running the loader */
	int done, rc, refs;
	void *val; /* the loader's buffer, freed with the load */
	size_t vlen;
};
struct load_stripe {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct load *head;
} __attribute__((aligned(64)));

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

	/* Options, immutable after open. */
	enum rcukv_policy policy;
	unsigned int samples; /* 1..RCUKV_EVICT_SAMPLES_MAX */
	rcukv_removal_fn on_removal;
	void *removal_arg;

	struct load_stripe loads[RCUKV_LOAD_STRIPES];
	struct stat_stripe st[RCUKV_STAT_STRIPES + 1]; /* see above; the last: overflow */
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

/* The cache whose removal callback runs on this thread (innermost), to
 * refuse calls on it from inside; and what this thread's table writes are
 * doing, for the removal hook: an eviction (its deletes are RCUKV_EVICTED),
 * an expiry change (its replacement is not reported). */
static __thread rcukv *tls_cb_kv;
static __thread int tls_evicting, tls_expiry_change;

/* This thread's counter slot + 1 (0: none yet; RCUKV_STAT_STRIPES + 1:
 * the shared overflow stripe). */
static __thread unsigned int tls_stat_slot;

/* Free slots (bit i: slot i), protected by g_slot_lock, which nests inside
 * everything (count_add() runs under stripe mutexes) and is taken last by
 * atfork_prepare(). */
static pthread_mutex_t g_slot_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_slot_free = ~(uint64_t)0;
static pthread_key_t g_slot_key;
static pthread_once_t g_slot_once = PTHREAD_ONCE_INIT;

_Static_assert(RCUKV_STAT_STRIPES == 64, "g_slot_free is one 64-bit word");

static void slot_put(void *p)
{
	unsigned int slot = (unsigned int)(uintptr_t)p;

	pthread_mutex_lock(&g_slot_lock);
	g_slot_free |= (uint64_t)1 << (slot - 1);
	pthread_mutex_unlock(&g_slot_lock);
}

static void slot_key_create(void)
{
	if (pthread_key_create(&g_slot_key, slot_put))
		RCUKV_DIE("rcukv", "pthread_key_create failed");
}

/* A slot for this thread: a free one (given back when the thread exits), or
 * the overflow stripe. */
static __attribute__((noinline)) unsigned int slot_get(void)
{
	unsigned int slot = RCUKV_STAT_STRIPES + 1;

	pthread_once(&g_slot_once, slot_key_create);
	pthread_mutex_lock(&g_slot_lock);
	if (g_slot_free) {
		slot = (unsigned int)__builtin_ctzll(g_slot_free) + 1;
		g_slot_free &= g_slot_free - 1;
	}
	pthread_mutex_unlock(&g_slot_lock);
	if (slot <= RCUKV_STAT_STRIPES && pthread_setspecific(g_slot_key, (void *)(uintptr_t)slot)) {
		slot_put((void *)(uintptr_t)slot);
		slot = RCUKV_STAT_STRIPES + 1;
	}
	tls_stat_slot = slot;
	return slot;
}

static inline void count_add(rcukv *kv, int which, uint64_t n)
{
	unsigned int slot = tls_stat_slot;
	_Atomic uint64_t *c;

	if (RCU_UNLIKELY(!slot))
		slot = slot_get();
	c = &kv->st[slot - 1].c[which];
	if (RCU_LIKELY(slot <= RCUKV_STAT_STRIPES)) /* ours alone: no RMW needed */
		atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
				      memory_order_relaxed);
	else
		atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* Check @kv is open, then register the calling thread with memb on first
 * use (unregistered at exit by the RCU library).  @fn names the call. */
static inline void enter(rcukv *kv, const char *fn)
{
	if (RCU_UNLIKELY(!kv ||
			 atomic_load_explicit(&kv->magic, memory_order_relaxed) != RCUKV_OPEN))
		RCUKV_DIE(fn, "%s", !kv ? "NULL cache" : "cache used after rcukv_close()");
	if (RCU_UNLIKELY(tls_cb_kv == kv))
		RCUKV_DIE(fn, "called from inside the removal callback of the same cache");
	if (RCU_UNLIKELY(!rcu_memb_reader_tls.link.registered))
		rcu_memb_register_thread();
}

static int policy_lfu(enum rcukv_policy p)
{
	return p == RCUKV_ALLKEYS_LFU || p == RCUKV_VOLATILE_LFU;
}

static int policy_volatile(enum rcukv_policy p)
{
	return p == RCUKV_VOLATILE_LRU || p == RCUKV_VOLATILE_LFU || p == RCUKV_VOLATILE_TTL ||
	       p == RCUKV_VOLATILE_RANDOM;
}

/* The table's access clock now: LRU_UNIT_MS ticks since open, or, under an
 * LFU policy, minutes (24 bits; ht.h's LFU words). */
static uint32_t clock_now(rcukv *kv)
{
	int64_t ms = ht_now_ms() - kv->t0;

	if (policy_lfu(kv->policy))
		return (uint32_t)(ms / 60000) & 0xffffffu;
	return (uint32_t)(ms / RCUKV_LRU_UNIT_MS);
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
		ht_clock_set(kv->ht, clock_now(kv)); /* reads alone age entries too */
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
		for (int i = 0; i < RCUKV_LOAD_STRIPES; i++)
			pthread_mutex_lock(&kv->loads[i].lock);
		ht_fork_prepare(kv->ht);
	}
	if (g_caches) {
		if (!rcu_memb_reader_tls.link.registered)
			rcu_memb_register_thread(); /* the child's one reader */
		rcu_memb_before_fork();
	}
	for (rcukv *kv = g_caches; kv; kv = kv->next_open)
		ht_fork_prepare_reclaim(kv->ht);
	pthread_mutex_lock(&g_slot_lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&g_slot_lock);
	for (rcukv *kv = g_caches; kv; kv = kv->next_open)
		ht_fork_parent(kv->ht);
	if (g_caches)
		rcu_memb_after_fork_parent();
	for (rcukv *kv = g_caches; kv; kv = kv->next_open) {
		for (int i = 0; i < RCUKV_LOAD_STRIPES; i++)
			pthread_mutex_unlock(&kv->loads[i].lock);
		pthread_mutex_unlock(&kv->lock);
	}
	pthread_mutex_unlock(&g_lock);
}

static void atfork_child(void)
{
	/* Slots of the parent's other threads stay taken in the child: their
	 * counts stay in the sums, and new threads use the others. */
	pthread_mutex_unlock(&g_slot_lock);
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
		/* Loads other threads ran are gone with them: forget them (their
		 * structs leak); a load of this thread goes on (load_finish()
		 * finds it off the list). */
		for (int i = 0; i < RCUKV_LOAD_STRIPES; i++) {
			kv->loads[i].head = NULL;
			pthread_cond_init(&kv->loads[i].cond, NULL);
			pthread_mutex_unlock(&kv->loads[i].lock);
		}
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
		kv = aligned_alloc(_Alignof(rcukv), sizeof(*kv)); /* counter stripes: 64 */
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

static void on_remove(void *arg, const struct ht_entry *e, int kind);

static int options_valid(const struct rcukv_options *opt)
{
	if (!opt)
		return 1;
	for (size_t i = 0; i < sizeof(opt->reserved) / sizeof(opt->reserved[0]); i++)
		if (opt->reserved[i])
			return 0;
	return (unsigned int)opt->policy <= RCUKV_NOEVICTION &&
	       opt->samples <= RCUKV_EVICT_SAMPLES_MAX;
}

static void loads_init(rcukv *kv)
{
	for (int i = 0; i < RCUKV_LOAD_STRIPES; i++) {
		pthread_mutex_init(&kv->loads[i].lock, NULL);
		pthread_cond_init(&kv->loads[i].cond, NULL);
		kv->loads[i].head = NULL;
	}
}

static void loads_fini(rcukv *kv)
{
	for (int i = 0; i < RCUKV_LOAD_STRIPES; i++) {
		pthread_cond_destroy(&kv->loads[i].cond);
		pthread_mutex_destroy(&kv->loads[i].lock);
	}
}

rcukv *rcukv_open(const struct rcukv_options *opt)
{
	struct ht_options o = {0};
	rcukv *kv;
	int rc;

	if (!options_valid(opt)) {
		errno = EINVAL;
		return NULL;
	}
	kv = shell_get();
	if (!kv) {
		errno = ENOMEM;
		return NULL;
	}
	kv->samples = RCUKV_EVICT_SAMPLES;
	if (opt) {
		o.initial_buckets = opt->initial_size;
		atomic_store_explicit(&kv->max_memory, opt->max_memory, memory_order_relaxed);
		kv->policy = opt->policy;
		if (opt->samples)
			kv->samples = opt->samples;
		kv->on_removal = opt->on_removal;
		kv->removal_arg = opt->removal_arg;
	}
	kv->ht = ht_new(&o);
	if (!kv->ht) {
		rc = errno;
		shell_put(kv, 0);
		errno = rc;
		return NULL;
	}
	ht_remove_hook(kv->ht, on_remove, kv);
	if (policy_lfu(kv->policy))
		ht_lfu_set(kv->ht, 1, RCUKV_LFU_LOG_FACTOR, RCUKV_LFU_DECAY_MIN);
	loads_init(kv);
	kv->t0 = ht_now_ms();
	atomic_init(&kv->seed, (uint64_t)kv->t0 | 1);
	rc = expirer_start(kv);
	if (rc) {
		loads_fini(kv);
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
	loads_fini(kv);
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

/*
 * The removal hook (ht_remove_hook()): every entry that leaves the table
 * passes here, on the writer's thread with its stripe mutex held.  Counts
 * it, then calls the application's callback with tls_cb_kv set, so that a
 * call on the same cache from inside is caught by enter().
 */
static void on_remove(void *arg, const struct ht_entry *e, int kind)
{
	rcukv *kv = arg;
	enum rcukv_reason why;
	rcukv *outer;

	switch (kind) {
	case HT_WATCH_STORE:
		if (tls_expiry_change)
			return; /* rcukv_expire(): same key and value, new TTL */
		why = RCUKV_REPLACED;
		count_add(kv, ST_REPLACED, 1);
		break;
	case HT_WATCH_EXPIRED:
		why = RCUKV_EXPIRED;
		count_add(kv, ST_EXPIRED, 1);
		break;
	default:
		why = tls_evicting ? RCUKV_EVICTED : RCUKV_DELETED;
		count_add(kv, tls_evicting ? ST_EVICTED : ST_DELETES, 1);
		break;
	}
	if (!kv->on_removal)
		return;
	outer = tls_cb_kv;
	tls_cb_kv = kv;
	kv->on_removal(ht_entry_key(e), ht_entry_klen(e), ht_entry_val(e), ht_entry_vlen(e), why,
		       kv->removal_arg);
	tls_cb_kv = outer;
}

/* Eviction score of a sampled entry under @kv's policy: higher goes first
 * (the server's entry_score()). */
static uint64_t evict_score(rcukv *kv, const struct ht_entry *e, uint32_t now)
{
	uint32_t w = ht_entry_access(e);

	switch (kv->policy) {
	case RCUKV_ALLKEYS_LFU:
	case RCUKV_VOLATILE_LFU:
		return 255 - ht_lfu_decayed(w, now, RCUKV_LFU_DECAY_MIN);
	case RCUKV_VOLATILE_TTL:
		return UINT64_MAX - (uint64_t)ht_entry_expire(e);
	default:
		return (uint32_t)(now - w); /* idle ticks */
	}
}

/* Volatile policies delete a victim only if it still has a TTL (it may have
 * lost it since it was sampled), as the server does. */
static int del_if_volatile(struct ht_rmw *r, void *arg)
{
	(void)arg;
	if (r->old && ht_entry_expire(r->old) != HT_NO_EXPIRE)
		return HT_RMW_DELETE;
	return HT_RMW_KEEP;
}

/* Evict one of a few sampled live entries, as the policy chooses, not @key.
 * Return: 1 one evicted (or lost a race to a concurrent delete), 0 no
 * candidate sampled, -ENOMEM. */
static int evict_live(rcukv *kv, const void *key, size_t klen)
{
	const struct ht_entry *s[RCUKV_EVICT_SAMPLES_MAX], *victim = NULL;
	uint64_t seed =
	    atomic_fetch_add_explicit(&kv->seed, 0x9e3779b97f4a7c15ULL, memory_order_relaxed);
	int vol = policy_volatile(kv->policy);
	int rnd = kv->policy == RCUKV_ALLKEYS_RANDOM || kv->policy == RCUKV_VOLATILE_RANDOM;
	uint32_t now = clock_now(kv);
	uint64_t best = 0;
	void *vkey = NULL;
	size_t n, i, vklen = 0;

	rcu_read_lock();
	n = ht_sample_rcu(kv->ht, s, rnd ? 2 : kv->samples, vol, &seed);
	for (i = 0; i < n; i++) {
		uint64_t sc;

		if (is_key(s[i], key, klen))
			continue;
		if (rnd) { /* the samples come from random buckets already */
			victim = s[i];
			break;
		}
		sc = evict_score(kv, s[i], now);
		if (!victim || sc > best) {
			victim = s[i];
			best = sc;
		}
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
	tls_evicting = 1; /* on_remove(): this delete is an eviction */
	if (vol)
		ht_rmw(kv->ht, vkey, vklen, del_if_volatile, NULL);
	else
		ht_del(kv->ht, vkey, vklen);
	tls_evicting = 0;
	free(vkey);
	return 1;
}

/* Free at least one entry's worth: expired entries first (invariant 2),
 * then a victim of the policy (none under noeviction).
 * Return: 1 progress, 0 nothing found to remove, -ENOMEM. */
static int evict_one(rcukv *kv, const void *key, size_t klen)
{
	int rc;

	if (ht_expire_cycle(kv->ht, RCUKV_EVICT_SAMPLES, 0, NULL, NULL))
		return 1;
	if (kv->policy != RCUKV_NOEVICTION) {
		rc = evict_live(kv, key, klen);
		if (rc)
			return rc;
	}
	/* No candidate sampled: the table may hold only expired ones. */
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
		if (rc == 0)
			break; /* nothing may go (noeviction, volatile without TTLs) */
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
	ht_clock_set(kv->ht, clock_now(kv));
	rc = ht_set(kv->ht, key, klen, val, vlen, deadline(ttl_ms), flags, NULL);
	if (rc)
		return rc;
	count_add(kv, ST_SETS, 1);
	if (max)
		make_room(kv, max, 0, key, klen); /* invariant 4: best effort */
	return 0;
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
	int rc;

	enter(kv, __func__);
	rc = ht_get_alloc(kv->ht, key, klen, val, vlen, NULL);
	if (rc != -ENOMEM)
		count_add(kv, rc == 0 ? ST_HITS : ST_MISSES, 1);
	return rc;
}

long long rcukv_get_buf(rcukv *kv, const void *key, size_t klen, void *buf, size_t bufsize)
{
	long long n;

	enter(kv, __func__);
	n = ht_get(kv->ht, key, klen, buf, bufsize, NULL);
	count_add(kv, n >= 0 ? ST_HITS : ST_MISSES, 1);
	return n;
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
	tls_expiry_change = 1; /* on_remove(): the replacement is no removal */
	if (!ttl_ms)
		rc = ht_expire_clear(kv->ht, key, klen);
	else
		rc = ht_expire_set(kv->ht, key, klen, deadline(ttl_ms), 0);
	tls_expiry_change = 0;
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
	count_add(kv, ST_SETS, 1);
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

int rcukv_stats(rcukv *kv, struct rcukv_stats *out)
{
	uint64_t sum[ST_N] = {0};
	size_t retired, freed;

	enter(kv, __func__);
	if (!out)
		return -EINVAL;
	for (int i = 0; i <= RCUKV_STAT_STRIPES; i++)
		for (int j = 0; j < ST_N; j++)
			sum[j] += atomic_load_explicit(&kv->st[i].c[j], memory_order_relaxed);
	memset(out, 0, sizeof(*out));
	out->hits = sum[ST_HITS];
	out->misses = sum[ST_MISSES];
	out->sets = sum[ST_SETS];
	out->deletes = sum[ST_DELETES];
	out->replacements = sum[ST_REPLACED];
	out->evictions = sum[ST_EVICTED];
	out->expirations = sum[ST_EXPIRED];
	out->loads = sum[ST_LOADS];
	out->load_errors = sum[ST_LOAD_ERRORS];
	out->load_waits = sum[ST_LOAD_WAITS];
	out->entries = ht_count(kv->ht);
	out->bytes_in_use = used_bytes(kv);
	/* Unlinked minus freed: what grace periods and a running iteration
	 * (its SRCU section holds the batches) keep allocated.  The two sums
	 * are read one after the other: a free between them may make freed
	 * pass retired for a moment. */
	ht_reclaim_progress(kv->ht, &retired, &freed);
	out->bytes_pinned = retired > freed ? retired - freed : 0;
	out->max_memory = atomic_load_explicit(&kv->max_memory, memory_order_relaxed);
	return 0;
}

static int copy_out(const void *src, size_t n, void **val, size_t *vlen)
{
	char *p = malloc(n + 1);

	if (!p)
		return -ENOMEM;
	if (n)
		memcpy(p, src, n);
	p[n] = 0;
	*val = p;
	if (vlen)
		*vlen = n;
	return 0;
}

/* Drop a reference to @l.  Context: its stripe lock held. */
static void load_put(struct load *l)
{
	if (--l->refs)
		return;
	free(l->val);
	free(l->key);
	free(l);
}

/* Wait for another caller's load @l of our key, then copy its result.
 * Context: @ls locked on entry, unlocked on return. */
static int load_wait(rcukv *kv, struct load_stripe *ls, struct load *l, void **val, size_t *vlen)
{
	int rc;

	if (pthread_equal(l->leader, pthread_self()))
		RCUKV_DIE("rcukv_get_or_load",
			  "called from inside its own loader for the same key (self-deadlock)");
	l->refs++;
	count_add(kv, ST_LOAD_WAITS, 1);
	while (!l->done)
		pthread_cond_wait(&ls->cond, &ls->lock);
	pthread_mutex_unlock(&ls->lock);
	/* @rc and @val never change after @done: copy without the lock. */
	rc = l->rc;
	if (rc == 0)
		rc = copy_out(l->val, l->vlen, val, vlen);
	pthread_mutex_lock(&ls->lock);
	load_put(l);
	pthread_mutex_unlock(&ls->lock);
	return rc;
}

/*
 * rcukv_get_or_load(): a lock-free lookup; on a miss, under the key's load
 * stripe lock, either join the load in flight or (after a second lookup, in
 * case a load finished between our miss and the lock) start one.  The
 * leader runs the loader without any lock, stores the value, then under the
 * lock marks the load done, unlinks it and wakes the waiters.
 */
int rcukv_get_or_load(rcukv *kv, const void *key, size_t klen, rcukv_loader_fn loader, void *arg,
		      void **val, size_t *vlen, uint64_t ttl_ms)
{
	struct load_stripe *ls;
	struct load *l, **pp;
	void *lv = NULL;
	size_t ll = 0;
	uint64_t h;
	int rc;

	enter(kv, __func__);
	if (!loader || !val || (klen && !key))
		return -EINVAL;
	rc = ht_get_alloc(kv->ht, key, klen, val, vlen, NULL);
	if (rc != -ENOENT) {
		if (rc == 0)
			count_add(kv, ST_HITS, 1);
		return rc;
	}
	count_add(kv, ST_MISSES, 1);
	h = ht_hash(key, klen, 0);
	ls = &kv->loads[h % RCUKV_LOAD_STRIPES];
	pthread_mutex_lock(&ls->lock);
	for (l = ls->head; l; l = l->next)
		if (l->hash == h && l->klen == klen && (!klen || memcmp(l->key, key, klen) == 0))
			return load_wait(kv, ls, l, val, vlen);
	rc = ht_get_alloc(kv->ht, key, klen, val, vlen, NULL);
	if (rc != -ENOENT) {
		pthread_mutex_unlock(&ls->lock);
		return rc;
	}
	l = calloc(1, sizeof(*l));
	if (l)
		l->key = malloc(klen ? klen : 1);
	if (!l || !l->key) {
		pthread_mutex_unlock(&ls->lock);
		free(l);
		return -ENOMEM;
	}
	if (klen)
		memcpy(l->key, key, klen);
	l->hash = h;
	l->klen = klen;
	l->leader = pthread_self();
	l->refs = 1;
	l->next = ls->head;
	ls->head = l;
	pthread_mutex_unlock(&ls->lock);

	count_add(kv, ST_LOADS, 1);
	rc = loader(key, klen, &lv, &ll, arg);
	if (rc > 0 || (rc == 0 && !lv && ll))
		rc = -EINVAL; /* not a negative errno, or no value */
	if (rc == 0)
		store(kv, key, klen, lv ? lv : "", ll, ttl_ms, 0, __func__);
	else
		count_add(kv, ST_LOAD_ERRORS, 1);

	pthread_mutex_lock(&ls->lock);
	l->done = 1;
	l->rc = rc;
	l->val = rc == 0 ? lv : NULL;
	l->vlen = ll;
	/* Unlink; absent only in a fork child that forgot the list. */
	for (pp = &ls->head; *pp; pp = &(*pp)->next)
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	pthread_cond_broadcast(&ls->cond);
	pthread_mutex_unlock(&ls->lock);
	if (rc)
		free(lv);
	else
		rc = copy_out(lv ? lv : "", ll, val, vlen);
	pthread_mutex_lock(&ls->lock);
	load_put(l);
	pthread_mutex_unlock(&ls->lock);
	return rc;
}

void rcukv_free(void *p)
{
	free(p);
}
