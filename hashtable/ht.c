/*
 * ht.c - the RCU hlist hash table (see ht.h for the API, the numbered ordering
 * and progress guarantees, and who may call what).
 *
 * Compiled once per flavor: -DRCU_FLAVOR_QSBR or -DRCU_FLAVOR_MEMB selects
 * what rcu_read_lock(), synchronize_rcu() and call_rcu() mean here.
 *
 * Layout.  struct ht points to the current bucket array (ht->tbl, RCU-protected)
 * and to an array of lock stripes.  Stripe s protects every bucket whose index
 * is congruent to s modulo the stripe count S, in every table size: all sizes
 * are powers of two >= S, so a key's stripe (hash & (S-1)) never changes while
 * the table grows or shrinks, and a bucket and its split/merge partners
 * always share one stripe.
 *
 * Resize (relativistic, Triplett/McKenney/Walpole, USENIX ATC 2011).  One
 * resize at a time (ht->resize_lock); the resizer never holds a stripe mutex
 * while waiting for a grace period.  Each stripe has a state (stripe mutex):
 *   NORMAL      plain hlist: pprev links valid, writers use the hlist_*_rcu
 *               primitives on ht->tbl.
 *   GROW_PREP   old table O (n buckets) still valid for readers; the new table
 *               N (2n) has heads N[i], N[i+n] pointing into O[i]'s chain at the
 *               first node of each destination.  Both views are complete.
 *   GROW_UNZIP  N published and a grace period passed: no reader uses O.
 *               N[i] and N[i+n] share interleaved tails that the unzip passes
 *               separate, one run boundary per chain per grace period.
 *   SHRINK_PREP O (2n) chains O[i] and O[i+n] are concatenated (tail of O[i]
 *               points at O[i+n]'s first node); M[i] (n) points at the
 *               combined chain.  Both views are complete.
 * In every state but NORMAL, a node may be the target of several links, so
 * pprev is meaningless; writers then work by "retargeting": for each head of
 * the stripe-group ("the head set"), walk its path and repoint the one link
 * that targets the node (ht_retarget()).  A delete repoints it to the node's
 * next, a replace to the new node.  Neither ever changes a node's own next,
 * so a reader standing on the node keeps its way forward, and neither makes
 * a remaining node unreachable from any head: only the resizer's unzip steps
 * shrink a path, and a grace period follows each pass of them.  When a stripe
 * returns to NORMAL the resizer rebuilds the pprev links of its buckets.
 *
 * Worked example, grow of one old bucket O[1] (n = 4) holding a1 b1 a2 b2,
 * where a* hash to new bucket 1 and b* to new bucket 5:
 *   prep:    N[1] -> a1,  N[5] -> b1  (both into the chain a1 b1 a2 b2)
 *   publish N, grace period (now no reader starts from O[1])
 *   pass 1:  chain 1's first foreign link is a1->b1, owner a1, not on chain
 *            5's path: a1->a2.  Chain 5's first foreign link is b1->a2, owner
 *            b1, which IS on chain 1's path (a1 b1 ...) before this pass: wait.
 *            Now  N[1]: a1 a2 b2,  N[5]: b1 a2 b2.   grace period
 *   pass 2:  chain 1: a2->b2, owner a2 is on chain 5's path: wait.  chain 5:
 *            b1->a2, owner b1 no longer on chain 1's path: b1->b2.
 *            Now  N[1]: a1 a2 b2,  N[5]: b1 b2.      grace period
 *   pass 3:  chain 1: a2->b2 (foreign run b2, then NULL): a2->NULL.  Done.
 * A reader standing on b1 during pass 1 keeps b1->a2 and finds a2.  Each
 * preconditions of a pass is evaluated before any link of the pass changes.
 *
 * Tortured by tests/hashtable/test_ht_torture.c (both flavors).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "hashtable/ht.h"
#include "rcu/poison.h"
#include "rcu/rcu.h"
#include "rcu/rculist.h"

#if !defined(RCU_FLAVOR_QSBR) && !defined(RCU_FLAVOR_MEMB)
#error "build ht.c with -DRCU_FLAVOR_QSBR or -DRCU_FLAVOR_MEMB"
#endif

#if defined(RCU_TSAN) && RCU_TSAN
/* ThreadSanitizer's deadlock detector tracks at most 64 mutexes held by one
 * thread; ht_flush(), ht_validate() and ht_txn() may hold every stripe. */
#define HT_DEFAULT_STRIPES 32u
#define HT_MAX_STRIPES 32u
#else
#define HT_DEFAULT_STRIPES 256u
#define HT_MAX_STRIPES (1u << 20)
#endif
#define HT_MAX_BUCKETS ((size_t)1 << 31)
#define HT_DEFAULT_BUCKETS 4096

/* Stripe states (struct ht_stripe.state). */
enum { S_NORMAL, S_GROW_PREP, S_GROW_UNZIP, S_SHRINK_PREP };

/* Abort on an impossible state or a failed pthread call. */
#define ht_die(...) rcu_die(__VA_ARGS__)
#define HT_CHECK(call)                                                                             \
	do {                                                                                       \
		int ht_check_rc_ = (call);                                                         \
		if (ht_check_rc_)                                                                  \
			ht_die("%s: %s", #call, strerror(ht_check_rc_));                           \
	} while (0)

struct ht_tbl {
	size_t mask;		   /* buckets - 1; immutable once published */
	struct ht_tbl *flush_next; /* worker's list of flushed tables (wlock) */
	struct hlist_head b[];	   /* first: RCU-protected, stripe mutex for writes */
};

/*
 * One writer lock and the counters of the buckets it protects.  Counters are
 * written under @lock with relaxed atomic stores and summed by anyone.
 */
struct ht_stripe {
	pthread_mutex_t lock;	  /* nests inside nothing but ht->resize_lock */
	int state;		  /* S_*; lock */
	_Atomic size_t count;	  /* entries in this stripe's buckets */
	_Atomic size_t expires;	  /* of which with an expiry */
	_Atomic size_t bytes;	  /* sum of ht_entry_size() */
	struct ht_batch *filling; /* unlinked entries awaiting company (lock) */
	struct ht_entry *retired; /* more of them, when @filling is full or could not
				   * be allocated (lock) */
	unsigned int nretired;	  /* entries in @filling and @retired (lock) */
	size_t rbytes;		  /* their bytes (lock) */
	_Atomic size_t retired_total; /* bytes ever retired here (ht_reclaim_progress) */
	size_t flush_seen; /* retired_total at the last idle-only ht_retire_flush() (lock) */
	/* The last small full batch, parked with its grace-period cookie until
	 * the next batch of this stripe fills: that writer frees it on the spot
	 * if the grace period has passed (retire_later()).  Lock. */
	struct ht_batch *parked;
	/* Unzip gating (state S_GROW_UNZIP; lock): a grace period must pass after
	 * any unzip change in this stripe before the next one (by the resizer or
	 * a helping writer). */
	unsigned long unzip_gp; /* cookie taken after the last unzip change */
	int unzip_dirty;	/* an unzip change was made in this state */
	int worker_wants;	/* the resizer waits for this stripe: writers hold off */
	/* Bytes of entries this stripe unlinked while an ht_snapshot() runs (they
	 * wait for its SRCU section), plus its share of a table flushed meanwhile.
	 * Written under @lock (relaxed), zeroed by the snapshot's end with every
	 * stripe held; summed by ht_stats(). */
	_Atomic size_t snap_bytes;
	/* Keys WATCHed by the hook's user that hash to this stripe (ht_watch());
	 * lock.  Non-zero: every publication here calls ht->watch_fn. */
	unsigned int watchers;
} __attribute__((aligned(64)));

struct ht {
	/* Read-mostly line: what every lookup touches. */
	struct ht_tbl *tbl;	   /* RCU-protected; written by the resizer and ht_flush()
				    * with resize_lock held (and, for flush, every stripe) */
	uint64_t seed;		   /* immutable */
	struct ht_stripe *stripes; /* immutable pointer */
	unsigned int nstripes;	   /* immutable, power of two */
	/* One sequence count per stripe, odd while an ht_txn() holds it: the
	 * lookups' consistency check (txn_seq_*()).  An array of its own, written
	 * only by transactions, so lookups share no line with stripe mutexes. */
	_Atomic uint32_t *txn_seq;
	int poison;		   /* immutable: poison entries before freeing */
	_Atomic uint32_t clock;	   /* access clock; relaxed */
	_Atomic uint32_t lfu;	   /* 0: LRU words, else lfu-log-factor + 1; relaxed */
	_Atomic uint32_t lfu_decay; /* lfu-decay-time in minutes; relaxed */
	int auto_resize;	   /* immutable */
	/* The running ht_snapshot(), or NULL.  Written only with every stripe
	 * mutex held (its begin and end); read by writers under one stripe
	 * mutex, so a relaxed load sees the value that mutex orders: the one
	 * load a write pays when no snapshot runs (loc_init(), retire_later()). */
	_Atomic(struct ht_snap *) snap;

	/* Resize state: written by the resizer with resize_lock held, before the
	 * first stripe leaves NORMAL; read by writers under a stripe mutex whose
	 * state is not NORMAL (the mutex orders the two). */
	struct ht_tbl *rs_old __attribute__((aligned(64))); /* off the lookup line */
	struct ht_tbl *rs_new;
	pthread_mutex_t resize_lock; /* serializes resize, flush, validate */
	_Atomic int resizing;
	_Atomic size_t nbuckets; /* size of ht->tbl; written with tbl, relaxed */
	/* A snapshot runs: no resize may start (bucket identity is fixed for its
	 * bitmap).  Written under resize_lock (relaxed), read under it by
	 * ht_resize() and as a hint by the worker; snap_cond (with resize_lock)
	 * wakes resizes waiting for the end. */
	_Atomic int snap_on;
	pthread_cond_t snap_cond;
	_Atomic int snap_busy; /* ht_snapshot() entered (-EBUSY for a second); CAS */

	/* Background thread: resizes and bulk frees.  All under wlock. */
	pthread_mutex_t wlock;
	pthread_cond_t wcond;
	pthread_t worker;
	int worker_started, worker_stop;
	struct ht_tbl *flushed;	 /* tables detached by ht_flush(), to free */
	_Atomic int want_resize; /* set by writers (relaxed hint), cleared by worker */
	/* Entries announced by ht_reserve() and not yet ht_reserve_done(): the
	 * shrink decision counts them, so a reservation is not undone before
	 * its inserts land (relaxed: a hint, read under resize_lock). */
	_Atomic size_t reserved;

	_Atomic size_t expire_cursor; /* ht_expire_cycle() position; relaxed */
	/* ht_watch_hook(): called under the stripe mutex for each publication in a
	 * stripe with watchers.  Set before any writer runs. */
	void (*watch_fn)(void *arg, const void *key, size_t klen, int kind);
	void *watch_arg;
	/* ht_remove_hook(): called under the stripe mutex with every entry that
	 * leaves the table by a delete, an expiry or a replacement (librcukv's
	 * removal callback and counters).  Set before any writer runs. */
	void (*remove_fn)(void *arg, const struct ht_entry *old, int kind);
	void *remove_arg;
	/* ht_extern_hook(): external memory of HT_VAL_EXTERN values.  Set
	 * before any writer runs; read by every thread that frees entries. */
	void (*ext_dup)(void *arg, const struct ht_entry *e);
	void (*ext_free)(void *arg, const struct ht_entry *e);
	void *ext_arg;
	_Atomic int watch_all; /* ht_watch_all() users: non-zero, every stripe is watched */

	_Atomic unsigned long st_grows, st_shrinks, st_passes, st_flushes, st_expired;
	_Atomic unsigned long st_parked_freed; /* parked batches freed by writers */
	/* Bytes of retired entries freed so far (cumulative; relaxed); the
	 * stripes count what they retired: ht_reclaim_progress(). */
	_Atomic size_t st_freed_bytes;

	/* ht_scan_all() readers: an SRCU domain, so a scan may sleep (KEYS,
	 * snapshots) without holding up the flavor's grace periods.  Entries
	 * are freed through @reclaim: the flavor's grace period, then one of
	 * scan_srcu per batch (hazard 1 in DESIGN.md).  @reclaim is NULL only
	 * when no reclaimer slot was free; then scans do not sleep-proof the
	 * table and run under the flavor's read side. */
	struct srcu_struct scan_srcu;
	struct srcu_reclaim *reclaim;
};

/* --- hashing and time -------------------------------------------------------- */

static inline uint64_t ht_mum(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t ht_rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* A multiply-fold hash over 16-byte strides; constants are odd 64-bit values
 * with well-mixed bits (the golden ratio and friends). */
uint64_t ht_hash(const void *key, size_t len, uint64_t seed)
{
	static const uint64_t k0 = 0x9e3779b97f4a7c15ULL, k1 = 0xc2b2ae3d27d4eb4fULL,
			      k2 = 0x165667b19e3779f9ULL, k3 = 0xd6e8feb86659fd93ULL;
	const unsigned char *p = key;
	uint64_t h = seed ^ ht_mum(len ^ k0, k1);
	uint64_t t = 0;

	while (len >= 16) {
		h = ht_mum(ht_rd64(p) ^ k1, ht_rd64(p + 8) ^ h ^ k2);
		p += 16;
		len -= 16;
	}
	if (len >= 8) {
		h = ht_mum(ht_rd64(p) ^ k2, h ^ k3);
		p += 8;
		len -= 8;
	}
	if (len)
		memcpy(&t, p, len);
	h = ht_mum(t ^ k3 ^ (uint64_t)len << 56, h ^ k0);
	return ht_mum(h ^ k1, h ^ (h >> 29) ^ k2);
}

/* librcukv builds this file with -DHT_CLOCK_MONOTONIC (relative TTLs that a
 * wall-clock step does not move); the server keeps Redis's absolute
 * CLOCK_REALTIME expiries. */
#ifdef HT_CLOCK_MONOTONIC
#define HT_CLOCK CLOCK_MONOTONIC
#else
#define HT_CLOCK CLOCK_REALTIME
#endif

int64_t ht_now_ms(void)
{
	struct timespec ts;

	clock_gettime(HT_CLOCK, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ht_lfu_set(struct ht *ht, int lfu, uint32_t log_factor, uint32_t decay_min)
{
	if (log_factor > 0xfffffffeu)
		log_factor = 0xfffffffeu;
	atomic_store_explicit(&ht->lfu_decay, decay_min, memory_order_relaxed);
	atomic_store_explicit(&ht->lfu, lfu ? log_factor + 1 : 0, memory_order_relaxed);
}

/* The access word a new entry starts with. */
static inline uint32_t access_init(struct ht *ht)
{
	uint32_t clk = atomic_load_explicit(&ht->clock, memory_order_relaxed);

	if (atomic_load_explicit(&ht->lfu, memory_order_relaxed))
		return (clk << 8) | HT_LFU_INIT;
	return clk;
}

/* LFU: the word after one access (see ht.h).  The PRNG is per thread. */
static uint32_t lfu_touched(struct ht *ht, uint32_t w, uint32_t lfu)
{
	static __thread uint64_t rnd;
	uint32_t now = atomic_load_explicit(&ht->clock, memory_order_relaxed) & 0xffffffu;
	uint32_t ctr = ht_lfu_decayed(w, now,
				      atomic_load_explicit(&ht->lfu_decay, memory_order_relaxed));

	if (ctr < 255) {
		double base = ctr > HT_LFU_INIT ? (double)(ctr - HT_LFU_INIT) : 0.0;
		uint64_t x = rnd ? rnd : (uint64_t)(uintptr_t)&rnd * 0x9e3779b97f4a7c15ULL + 1;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		rnd = x;
		/* probability 1 / (base * log_factor + 1); lfu is log_factor + 1 */
		if ((double)(x >> 11) * (1.0 / 9007199254740992.0) * (base * (lfu - 1) + 1.0) < 1.0)
			ctr++;
	}
	return (now << 8) | ctr;
}

void ht_clock_set(struct ht *ht, uint32_t clock)
{
	atomic_store_explicit(&ht->clock, clock, memory_order_relaxed);
}

/* --- entries ----------------------------------------------------------------- */

static inline struct ht_entry *node_entry(struct hlist_node *n)
{
	return container_of(n, struct ht_entry, node);
}

static inline int e_has_expire(const struct ht_entry *e)
{
	return (e->klen & HT_E_HAS_EXPIRE) != 0;
}

/* ht_expiry_hold()'s flag: written and read by its own thread only. */
static __thread int expiry_hold;

int ht_expiry_hold(int on)
{
	int was = expiry_hold;

	expiry_hold = on;
	return was;
}

/* Expired?  @now is fetched lazily: only entries with an expiry need it.  The
 * hold is tested last, so a live entry's lookup never reads it. */
static inline int e_expired(const struct ht_entry *e, int64_t *now)
{
	if (!e_has_expire(e))
		return 0;
	if (!*now)
		*now = ht_now_ms();
	return ht_entry_expire(e) <= *now && !expiry_hold;
}

static inline int e_match(const struct ht_entry *e, uint32_t h, const void *key, size_t klen)
{
	/* klen 0: the key may be NULL, which memcmp() must not see. */
	return e->hash == h && ht_entry_klen(e) == klen &&
	       (klen == 0 || memcmp(ht_entry_key(e), key, klen) == 0);
}

/* The length in a @vlen argument (HT_VAL_TAGGED masked off). */
static inline size_t vlen_of(size_t vlen)
{
	return vlen & ~(HT_VAL_TAGGED | HT_VAL_EXTERN);
}

/* A caller's @vlen (at most HT_MAX_VAL_LEN once masked) as an entry's vlen
 * field. */
static inline uint32_t vword_of(size_t vlen)
{
	return (uint32_t)vlen_of(vlen) | ((vlen & HT_VAL_TAGGED) ? HT_E_TAGGED : 0) |
	       ((vlen & HT_VAL_EXTERN) ? HT_E_EXTERN : 0);
}

/* Build an unpublished entry; the value may be filled later through @valp.
 * @vword: the value's length with HT_E_TAGGED (an entry's vlen field, or
 * vword_of() of a caller's @vlen). */
static struct ht_entry *e_new(struct ht *ht, uint32_t h, const void *key, size_t klen,
			      const void *val, uint32_t vword, int64_t expire_ms, char **valp)
{
	int hx = expire_ms != HT_NO_EXPIRE;
	size_t vlen = vword & HT_E_VLEN_MASK;
	struct ht_entry *e = malloc(sizeof(*e) + (hx ? 8 : 0) + klen + vlen);
	char *p;

	if (!e)
		return NULL;
	e->node.next = NULL;
	e->node.pprev = NULL;
	e->hash = h;
	atomic_init(&e->access, access_init(ht));
	e->klen = (uint32_t)klen | (hx ? HT_E_HAS_EXPIRE : 0);
	e->vlen = vword;
	p = e->data;
	if (hx) {
		memcpy(p, &expire_ms, 8);
		p += 8;
	}
	if (klen)
		memcpy(p, key, klen);
	p += klen;
	if (val && vlen)
		memcpy(p, val, vlen);
	if (valp)
		*valp = p;
	return e;
}

/*
 * Retirement.  An entry carries no rcu_head of its own (16 bytes per key
 * saved, deliberately).  Unlinked entries gather per stripe in the array of
 * the stripe's filling struct ht_batch (allocated with its first entry), so
 * that freeing them later touches only the array, never the entries' own
 * cold cache lines; if the array is full or could not be allocated, the
 * entry's `pprev`, dead to everyone once unlinked (readers never use it),
 * links it into the stripe's overflow list.  When a stripe has gathered
 * HT_RETIRE_BATCH entries (or HT_RETIRE_BYTES), they all go as one batch.
 * At most HT_RETIRE_BATCH - 1 entries per stripe wait for company; ht_free()
 * frees them after a grace period.
 *
 * Two ways out for a full batch:
 *  - parked (the common case: HT_RETIRE_BATCH entries of at most
 *    HT_PARK_BYTES in all): the stripe keeps it with a polled grace-period
 *    cookie taken under the stripe mutex, after every unlink in it, and asks
 *    for a grace period (start_poll, after the unlock).  When the stripe's
 *    next batch fills, the writer that fills it finds the parked one; if its
 *    cookie has completed and no ht_scan_all() (SRCU) reader is inside, it
 *    frees it right there, after the unlock: no callback, no other thread, and
 *    the memory goes back to the allocator of a thread that writes the table.
 *    Otherwise (grace period still running, or a scan inside) it takes the
 *    second way.  At most one batch per stripe is parked (HT_PARK_BYTES
 *    bounds what an idle stripe holds); ht_free() frees them.
 *  - ht_batch_retire(): call_rcu() then the SRCU reclaimer (below).
 * Which grace periods a parked batch waits for: the flavor's (the cookie) and
 * scan_srcu's (srcu_readers_active() false after the cookie completed, i.e.
 * the fast path of synchronize_srcu(); a scan inside sends the batch down the
 * full path instead), as hazard 1 in DESIGN.md asks.
 */
#define HT_RETIRE_BATCH 32
#define HT_RETIRE_BYTES ((size_t)64 << 10)
#define HT_PARK_BYTES ((size_t)8 << 10)

struct ht_batch {
	struct rcu_head rcu;	/* owned by RCU from call_rcu() until freed */
	struct ht_entry *first; /* overflow, linked through node.pprev */
	int poison;
	unsigned int n;	      /* used slots of e[] */
	unsigned long cookie; /* parked: get_state_synchronize_rcu() after the unlinks */
	size_t bytes;	      /* ht_entry_size() of all its entries, set when closed */
	struct ht *ht;	      /* whose st_freed_bytes counts the free */
	struct ht_entry *e[HT_RETIRE_BATCH];
};

static inline struct ht_entry *retired_next(struct ht_entry *e)
{
	return (struct ht_entry *)(void *)e->node.pprev;
}

/* Free an entry no reader can reach any more (no grace period needed); an
 * HT_VAL_EXTERN value's external memory goes first (ht_extern_hook()). */
static void e_free_now(struct ht *ht, struct ht_entry *e)
{
	if ((e->vlen & HT_E_EXTERN) && ht->ext_free)
		ht->ext_free(ht->ext_arg, e);
	if (ht->poison)
		rcu_poison(e, ht_entry_alloc_size(e)); /* not a dead store: rcu/poison.h */
	free(e);
}

static void e_free_list(struct ht *ht, struct ht_entry *e)
{
	struct ht_entry *nx;

	for (; e; e = nx) {
		nx = retired_next(e);
		e_free_now(ht, e);
	}
}

/* Prefetch a line we are about to write (a mutex, a block malloc() will hand
 * out next): exclusive, where the CPU has PREFETCHW (x86 CPUs without it
 * execute it as a NOP). */
static inline void prefetch_for_write(const void *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1);
#endif
}

/* Free a batch and its entries (no reader can reach them any more).  The
 * allocator hands these blocks out again first (its per-thread caches are
 * LIFO), and the new entry is written at once: start loading them for
 * writing now, all in parallel, instead of one store miss per new entry. */
static void batch_free_now(struct ht_batch *b)
{
	for (unsigned int i = 0; i < b->n; i++)
		prefetch_for_write(b->e[i]);
	for (unsigned int i = 0; i < b->n; i++)
		e_free_now(b->ht, b->e[i]);
	e_free_list(b->ht, b->first);
	atomic_fetch_add_explicit(&b->ht->st_freed_bytes, b->bytes, memory_order_relaxed);
	free(b);
}

static void batch_free_cb(struct rcu_head *head)
{
	batch_free_now(container_of(head, struct ht_batch, rcu));
}

/*
 * ht_batch_retire() - the general free path of entries unlinked from the table.
 * Which grace periods it waits for: the table's flavor (lookups) and then
 * ht->scan_srcu (ht_scan_all(), which may sleep), through the flavor-safe
 * reclaimer: one SRCU grace period covers every batch collected meanwhile.
 * Context: registered thread, holding no stripe mutex (memb's call_rcu may
 * wait for the callback backlog outside a section).
 */
static void ht_batch_retire(struct ht *ht, struct ht_batch *b)
{
	if (ht->reclaim)
		srcu_reclaim_defer(ht->reclaim, &b->rcu);
	else
		call_rcu(&b->rcu, batch_free_cb);
}

/*
 * ht_batch_free_parked() - free a parked batch whose cookie has completed (the
 * flavor's grace period is over), unless an ht_scan_all() reader may still
 * hold its entries: then the general path.  srcu_readers_active() orders the
 * caller's earlier poll before its counter loads (full fence) and its loads
 * are seq_cst, so the frees stay after them.
 * Context: as ht_batch_retire().
 */
static void ht_batch_free_parked(struct ht *ht, struct ht_batch *b)
{
	if (ht->reclaim && srcu_readers_active(&ht->scan_srcu)) {
		ht_batch_retire(ht, b);
		return;
	}
	batch_free_now(b);
	atomic_fetch_add_explicit(&ht->st_parked_freed, 1, memory_order_relaxed);
}

/*
 * ht_wait_readers() - the bulk counterpart of ht_batch_retire(): wait until no
 * reader of either kind (flavor lookups, SRCU scans) can hold a reference
 * taken before the call.
 * Context: outside any read-side section and any scan, no stripe mutex held.
 */
static void ht_wait_readers(struct ht *ht)
{
	synchronize_rcu();
	synchronize_srcu(&ht->scan_srcu);
}

/* What a critical section leaves for after the stripe unlock. */
struct retired {
	struct ht_batch *b;    /* for ht_batch_retire() */
	struct ht_batch *done; /* parked, cookie completed: ht_batch_free_parked() */
	int want_gp;	       /* a batch was parked: start_poll_synchronize_rcu() */
};

static inline void ctr_add(_Atomic size_t *c, size_t v);

/* Queue unlinked @e on its stripe.  Context: @e's stripe mutex held. */
static void retire_later(struct ht *ht, struct retired *r, struct ht_entry *e)
{
	struct ht_stripe *s = &ht->stripes[e->hash & (ht->nstripes - 1)];
	struct ht_batch *b, *old;

	if (!s->filling && !s->retired) {
		s->filling = malloc(sizeof(*s->filling)); /* NULL: the list takes them */
		if (s->filling) {
			s->filling->n = 0;
			s->filling->first = NULL;
			s->filling->poison = ht->poison;
			s->filling->bytes = 0;
			s->filling->ht = ht;
		}
	}
	if (s->filling && s->filling->n < HT_RETIRE_BATCH) {
		s->filling->e[s->filling->n++] = e;
	} else {
		e->node.pprev = (struct hlist_node **)(void *)s->retired;
		s->retired = e;
	}
	s->nretired++;
	/* The entry's own allocation: a replaced list version frees its root
	 * and at most a few chunks, not the list (HT_VAL_EXTERN). */
	s->rbytes += ht_entry_alloc_size(e);
	ctr_add(&s->retired_total, ht_entry_alloc_size(e));
	/* Relaxed: ht->snap changes only with every stripe held (we hold one). */
	if (RCU_UNLIKELY(atomic_load_explicit(&ht->snap, memory_order_relaxed) != NULL))
		ctr_add(&s->snap_bytes, ht_entry_size(e));
	if (s->nretired < HT_RETIRE_BATCH && s->rbytes < HT_RETIRE_BYTES)
		return;
	if (r->b || r->done) /* one batch per critical section; the next one takes the rest */
		return;
	b = s->filling;
	if (!b) {
		b = malloc(sizeof(*b));
		if (!b) /* keep them queued; a later retirement tries again */
			return;
		b->n = 0;
		b->poison = ht->poison;
		b->ht = ht;
	}
	b->first = s->retired;
	b->bytes = s->rbytes;
	s->filling = NULL;
	s->retired = NULL;
	s->nretired = 0;
	if (s->rbytes > HT_PARK_BYTES) {
		s->rbytes = 0;
		r->b = b;
		return;
	}
	s->rbytes = 0;
	/* Every entry of b was unlinked under this mutex before the fence in
	 * get_state: a grace period that begins after the cookie was taken
	 * begins after the unlinks. */
	b->cookie = get_state_synchronize_rcu();
	old = s->parked;
	s->parked = b;
	r->want_gp = 1;
	if (old) {
		if (poll_state_synchronize_rcu(old->cookie))
			r->done = old;
		else
			r->b = old; /* grace periods lag: the general path */
	}
}

static void retire_flush(struct ht *ht, struct retired *r)
{
	if (r->b)
		ht_batch_retire(ht, r->b);
	if (r->done)
		ht_batch_free_parked(ht, r->done);
	if (r->want_gp)
		(void)start_poll_synchronize_rcu();
	r->b = NULL;
	r->done = NULL;
	r->want_gp = 0;
}

void ht_reclaim_progress(struct ht *ht, size_t *retired, size_t *freed)
{
	size_t r = 0;

	*freed = atomic_load_explicit(&ht->st_freed_bytes, memory_order_relaxed);
	for (unsigned int i = 0; i < ht->nstripes; i++)
		r += atomic_load_explicit(&ht->stripes[i].retired_total, memory_order_relaxed);
	*retired = r;
}

size_t ht_retire_flush(struct ht *ht, int idle_only)
{
	size_t bytes = 0;

	for (unsigned int i = 0; i < ht->nstripes; i++) {
		struct ht_stripe *s = &ht->stripes[i];
		struct ht_batch *b = NULL, *parked;

		if (pthread_mutex_trylock(&s->lock) != 0)
			continue; /* a writer is there; it retires its own batches */
		if (idle_only) {
			size_t tot = atomic_load_explicit(&s->retired_total, memory_order_relaxed);

			if (tot != s->flush_seen) { /* still written: its writers go on */
				s->flush_seen = tot;
				HT_CHECK(pthread_mutex_unlock(&s->lock));
				continue;
			}
		}
		parked = s->parked;
		s->parked = NULL;
		if (s->nretired) {
			b = s->filling;
			if (!b && (b = malloc(sizeof(*b)))) {
				b->n = 0;
				b->poison = ht->poison;
				b->ht = ht;
			}
			if (b) {
				b->first = s->retired;
				b->bytes = s->rbytes;
				bytes += s->rbytes;
				s->filling = NULL;
				s->retired = NULL;
				s->nretired = 0;
				s->rbytes = 0;
			}
		}
		HT_CHECK(pthread_mutex_unlock(&s->lock));
		if (b)
			ht_batch_retire(ht, b);
		if (parked) {
			if (poll_state_synchronize_rcu(parked->cookie))
				ht_batch_free_parked(ht, parked);
			else
				ht_batch_retire(ht, parked);
		}
	}
	return bytes;
}

/* --- tables, stripes ---------------------------------------------------------- */

static struct ht_tbl *tbl_new(size_t nbuckets)
{
	struct ht_tbl *t = calloc(1, sizeof(*t) + nbuckets * sizeof(struct hlist_head));

	if (t)
		t->mask = nbuckets - 1;
	return t;
}

static inline struct ht_stripe *stripe_of(struct ht *ht, uint32_t h)
{
	return &ht->stripes[h & (ht->nstripes - 1)];
}

static inline void ctr_add(_Atomic size_t *c, size_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
			      memory_order_relaxed);
}

static inline void ctr_sub(_Atomic size_t *c, size_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) - v,
			      memory_order_relaxed);
}

static void stripe_account(struct ht_stripe *s, struct ht_entry *e, int sign)
{
	if (sign > 0) {
		ctr_add(&s->count, 1);
		ctr_add(&s->bytes, ht_entry_size(e));
		if (e_has_expire(e))
			ctr_add(&s->expires, 1);
	} else {
		ctr_sub(&s->count, 1);
		ctr_sub(&s->bytes, ht_entry_size(e));
		if (e_has_expire(e))
			ctr_sub(&s->expires, 1);
	}
}

static inline size_t tbl_size(const struct ht_tbl *t)
{
	return t->mask + 1;
}

/* --- background thread ------------------------------------------------------- */

static void *ht_worker(void *arg);

static void worker_kick(struct ht *ht)
{
	HT_CHECK(pthread_mutex_lock(&ht->wlock));
	if (!ht->worker_started && !ht->worker_stop) {
		if (pthread_create(&ht->worker, NULL, ht_worker, ht) == 0)
			ht->worker_started = 1;
	}
	pthread_cond_signal(&ht->wcond);
	HT_CHECK(pthread_mutex_unlock(&ht->wlock));
}

/* A writer's cheap check after changing stripe @s's count: this stripe's
 * load suggests the whole table is over (or far under) its load factor.  The
 * worker recounts exactly before resizing. */
static void maybe_request_resize(struct ht *ht, struct ht_stripe *s)
{
	size_t per, c, nb;

	if (!ht->auto_resize)
		return;
	nb = atomic_load_explicit(&ht->nbuckets, memory_order_relaxed);
	per = nb / ht->nstripes; /* buckets per stripe */
	c = atomic_load_explicit(&s->count, memory_order_relaxed);
	if (c > per + 2 || (per > 1 && c < per / 8)) {
		if (atomic_load_explicit(&ht->want_resize, memory_order_relaxed))
			return;
		if (nb >= HT_MAX_BUCKETS && c > per)
			return;
		atomic_store_explicit(&ht->want_resize, 1, memory_order_relaxed);
		worker_kick(ht);
	}
}

/* --- point-in-time snapshots: the capture ------------------------------------------ */

/*
 * A running ht_snapshot() (the algorithm and its invariant are at
 * ht_snapshot()).  Every field is immutable from the moment on, except as
 * noted.
 */
struct snap_vec {
	const struct ht_entry **v;
	size_t n, cap;
};

#define SNAP_WORD_BITS (sizeof(unsigned long) * CHAR_BIT)

struct ht_snap {
	struct ht_tbl *tbl; /* ht->tbl at the moment; stays allocated until the
			     * snapshot's SRCU section ends (ht_wait_readers()
			     * precedes every free of a bucket array) */
	int64_t at;	    /* ht_now_ms() at the moment: expiry is judged against it */
	/* Bit i: bucket i of @tbl is captured (its moment's entries recorded).
	 * Set once, under the mutex of bucket i's stripe; words are shared
	 * between stripes, hence atomic (relaxed: the stripe mutex orders each
	 * bit's test with its set). */
	_Atomic unsigned long *bits;
	/* Per stripe: entries writers captured, for the walker to emit (the
	 * stripe's mutex). */
	struct snap_vec *caps;
	/* ht_flush() detached @tbl: it no longer changes, writers capture
	 * nothing more.  Written with every stripe held, read under one. */
	int frozen;
	_Atomic int err; /* -ENOMEM: a capture could not record an entry */
};

static int snap_vec_push(struct snap_vec *v, const struct ht_entry *e)
{
	if (v->n == v->cap) {
		size_t nc = v->cap ? v->cap * 2 : 16;
		const struct ht_entry **nv = realloc(v->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		v->v = nv;
		v->cap = nc;
	}
	v->v[v->n++] = e;
	return 0;
}

/*
 * Capture bucket @i of the snapshot's table unless it already is: record
 * every entry of its chain that was live at the moment into @out, and mark
 * it.  The chain is the moment's chain: every change to the bucket since the
 * moment was preceded by this capture (loc_init()), or the bucket was frozen
 * whole by ht_flush().  Context: the stripe mutex of bucket @i held.
 */
static void snap_capture(struct ht_snap *sn, size_t i, struct snap_vec *out)
{
	_Atomic unsigned long *w = &sn->bits[i / SNAP_WORD_BITS];
	unsigned long bit = 1UL << (i % SNAP_WORD_BITS);
	struct hlist_node *n;

	if (atomic_load_explicit(w, memory_order_relaxed) & bit)
		return;
	atomic_fetch_or_explicit(w, bit, memory_order_relaxed);
	n = rcu_dereference_protected(sn->tbl->b[i].first, "stripe mutex");
	for (; n; n = rcu_dereference_protected(n->next, "stripe mutex")) {
		const struct ht_entry *e = node_entry(n);

		if (e_has_expire(e) && ht_entry_expire(e) <= sn->at)
			continue; /* expired at the moment */
		if (snap_vec_push(out, e))
			atomic_store_explicit(&sn->err, -ENOMEM, memory_order_relaxed);
	}
}

/*
 * The writers' side: about to change bucket @i (of ht->tbl, stripe @s) while
 * snapshot @sn runs: capture it first.  Context: @s's mutex held.
 */
__attribute__((noinline, cold)) static void snap_before_write(struct ht *ht, struct ht_snap *sn,
								struct ht_stripe *s, size_t i)
{
	if (sn->frozen)
		return; /* the table changing now was created after the moment */
	snap_capture(sn, i, &sn->caps[s - ht->stripes]);
}

/* --- the write side's view of one key ------------------------------------------ */

/* Where a key lives, for a writer holding the key's stripe mutex. */
struct loc {
	struct ht_stripe *s;
	int state;
	uint32_t h;
	struct hlist_head *primary;  /* a head whose path holds every node of h */
	struct hlist_head *heads[3]; /* the head set (zipped states) */
	int nheads;
	struct ht_entry *e; /* the entry for the key, or NULL */
};

/*
 * Fill @l for hash @h.  Every path that changes a bucket (insert, replace,
 * unlink: set, del, rmw, txn, expiry, lazy and active expiry, eviction)
 * starts here, with the stripe mutex held, before its first change: this is
 * where a running snapshot captures the bucket (invariant at ht_snapshot()).
 * Context: stripe mutex of @h held.
 */
static void loc_init(struct ht *ht, struct loc *l, uint32_t h)
{
	struct ht_snap *sn;
	struct ht_tbl *t, *o, *n;
	size_t i;

	l->s = stripe_of(ht, h);
	l->state = l->s->state;
	l->h = h;
	l->nheads = 0;
	if (RCU_LIKELY(l->state == S_NORMAL)) { /* the common case first */
		t = rcu_dereference_protected(ht->tbl, "stripe mutex");
		l->primary = &t->b[h & t->mask];
		/* Relaxed: ht->snap changes only with every stripe held (we
		 * hold one).  The one cost of snapshots when none runs. */
		sn = atomic_load_explicit(&ht->snap, memory_order_relaxed);
		if (RCU_UNLIKELY(sn != NULL))
			snap_before_write(ht, sn, l->s, h & t->mask);
		return;
	}
	switch (l->state) {
	case S_GROW_PREP:
		o = ht->rs_old;
		n = ht->rs_new;
		i = h & o->mask;
		l->primary = &o->b[i];
		l->heads[0] = &o->b[i];
		l->heads[1] = &n->b[i];
		l->heads[2] = &n->b[i + tbl_size(o)];
		l->nheads = 3;
		break;
	case S_GROW_UNZIP:
		o = ht->rs_old;
		n = ht->rs_new;
		i = h & o->mask;
		l->primary = &n->b[h & n->mask];
		l->heads[0] = &n->b[i];
		l->heads[1] = &n->b[i + tbl_size(o)];
		l->nheads = 2;
		break;
	case S_SHRINK_PREP:
		o = ht->rs_old; /* 2n */
		n = ht->rs_new; /* n */
		i = h & n->mask;
		l->primary = &o->b[h & o->mask];
		l->heads[0] = &o->b[i];
		l->heads[1] = &o->b[i + tbl_size(n)];
		l->heads[2] = &n->b[i];
		l->nheads = 3;
		break;
	default:
		ht_die("stripe state %d", l->state);
	}
	/* A snapshot begins only when no resize runs and holds them off. */
	if (atomic_load_explicit(&ht->snap, memory_order_relaxed))
		ht_die("snapshot running during a resize (stripe state %d)", l->state);
}

/* Find the key on the primary path (expired entries included). */
static struct ht_entry *loc_find(struct loc *l, const void *key, size_t klen)
{
	struct hlist_node *n = rcu_dereference_protected(l->primary->first, "stripe mutex");

	for (; n; n = rcu_dereference_protected(n->next, "stripe mutex")) {
		struct ht_entry *e = node_entry(n);

		if (e_match(e, l->h, key, klen))
			return l->e = e;
	}
	return l->e = NULL;
}

/*
 * ht_retarget() - on the path from @head, repoint the one link that targets
 * @from (NULL: the path's end) to @to, skipping the link owned by @skip.
 * Context: stripe mutex held.  Release store: @to may be a node just built;
 * pairs with rcu_dereference() in the readers' walk.
 */
static void ht_retarget(struct hlist_head *head, struct hlist_node *from, struct hlist_node *to,
			struct hlist_node *skip)
{
	struct hlist_node **slot = &head->first;

	for (;;) {
		struct hlist_node *cur = rcu_dereference_protected(*slot, "stripe mutex");

		if (cur == from && !(skip && slot == &skip->next)) {
			rcu_assign_pointer(*slot, to);
			return;
		}
		if (!cur)
			return;
		slot = &cur->next;
	}
}

/* A change in a stripe with watchers, or any change while the table
 * watches every key: tell the hook's user (WATCH, client tracking), after
 * the change is visible.  Context: stripe mutex held. */
static inline void loc_watch(struct ht *ht, struct loc *l, const struct ht_entry *e, int kind)
{
	if (RCU_UNLIKELY(l->s->watchers != 0 ||
			 atomic_load_explicit(&ht->watch_all, memory_order_relaxed)) &&
	    ht->watch_fn)
		ht->watch_fn(ht->watch_arg, ht_entry_key(e), ht_entry_klen(e), kind);
}

/* Unlink l->e (@kind: HT_WATCH_DELETE or HT_WATCH_EXPIRED, for the hook).
 * Context: stripe mutex held. */
static void loc_remove(struct ht *ht, struct loc *l, int kind)
{
	struct ht_entry *e = l->e;
	int i;

	if (l->state == S_NORMAL) {
		hlist_del_rcu(&e->node);
	} else {
		struct hlist_node *nx = rcu_dereference_protected(e->node.next, "stripe mutex");

		for (i = 0; i < l->nheads; i++)
			ht_retarget(l->heads[i], &e->node, nx, NULL);
		e->node.pprev = RCU_LIST_POISON_PREV;
	}
	stripe_account(l->s, e, -1);
	l->e = NULL;
	loc_watch(ht, l, e, kind); /* @e is retired, not freed, until a grace period */
	if (RCU_UNLIKELY(ht->remove_fn != NULL))
		ht->remove_fn(ht->remove_arg, e, kind);
}

/* Put @nu where l->e is.  Context: stripe mutex held. */
static void loc_replace(struct ht *ht, struct loc *l, struct ht_entry *nu)
{
	struct ht_entry *e = l->e;
	int i;

	if (l->state == S_NORMAL) {
		hlist_replace_rcu(&e->node, &nu->node);
	} else {
		nu->node.next = rcu_dereference_protected(e->node.next, "stripe mutex");
		nu->node.pprev = NULL;
		for (i = 0; i < l->nheads; i++)
			ht_retarget(l->heads[i], &e->node, &nu->node, &nu->node);
		e->node.pprev = RCU_LIST_POISON_PREV;
	}
	stripe_account(l->s, e, -1);
	stripe_account(l->s, nu, 1);
	l->e = nu;
	loc_watch(ht, l, nu, HT_WATCH_STORE);
	if (RCU_UNLIKELY(ht->remove_fn != NULL))
		ht->remove_fn(ht->remove_arg, e, HT_WATCH_STORE); /* @e: retired, as above */
}

/* Publish @nu for a key that has no entry.  Context: stripe mutex held. */
static void loc_insert(struct ht *ht, struct loc *l, struct ht_entry *nu)
{
	struct hlist_node *t;
	int i;

	switch (l->state) {
	case S_NORMAL:
		hlist_add_head_rcu(&nu->node, l->primary);
		break;
	case S_GROW_PREP:
		/* At the front of O[i] (old readers) and of N[dest]. */
		t = rcu_dereference_protected(l->primary->first, "stripe mutex");
		nu->node.next = t;
		nu->node.pprev = NULL;
		for (i = 0; i < l->nheads; i++)
			ht_retarget(l->heads[i], t, &nu->node, &nu->node);
		rcu_assign_pointer(ht->rs_new->b[l->h & ht->rs_new->mask].first, &nu->node);
		break;
	case S_GROW_UNZIP:
		t = rcu_dereference_protected(l->primary->first, "stripe mutex");
		nu->node.next = t;
		nu->node.pprev = NULL;
		rcu_assign_pointer(l->primary->first, &nu->node);
		break;
	case S_SHRINK_PREP:
		/* At the front of O[dest]; every link into that front follows. */
		t = rcu_dereference_protected(l->primary->first, "stripe mutex");
		nu->node.next = t;
		nu->node.pprev = NULL;
		for (i = 0; i < l->nheads; i++)
			ht_retarget(l->heads[i], t, &nu->node, &nu->node);
		break;
	default:
		ht_die("stripe state %d", l->state);
	}
	stripe_account(l->s, nu, 1);
	l->e = nu;
	loc_watch(ht, l, nu, HT_WATCH_INSERT);
}

/*
 * Transactions that nest (ht_txn()): while this thread runs an ht_txn()
 * function on a table, it already holds the stripes of the transaction's
 * keys; the single-key writers it calls (ht_set(), ht_rmw(), ...) and nested
 * ht_txn()s on those keys neither lock nor unlock them, and leave what they
 * retire to the outermost transaction's end.
 */
struct ht_txn {
	struct ht *ht;
	size_t n;
	const void *const *keys;
	const size_t *klens;
	uint32_t *hashes;
	uint32_t *st; /* the stripes held: ascending, unique (outermost only) */
	size_t ns;
	struct retired r;
	int counted;
	/* Outermost only: batches the nested writers left (chained through
	 * rcu.next, which is free until call_rcu()), and a stripe that grew. */
	struct ht_batch *defer_b, *defer_done;
	int defer_gp;
	struct ht_stripe *grew;
};

static _Thread_local struct ht_txn *tls_txn;

/* The transactions' seqlock fences (acquire on the read side, release on
 * the write side).  TSan does not model atomic_thread_fence(): there they
 * are rcu_smp_mb()'s seq_cst read-modify-write, which it does. */
#if defined(RCU_TSAN) && RCU_TSAN
#define txn_fence_acquire() rcu_smp_mb()
#define txn_fence_release() rcu_smp_mb()
#else
#define txn_fence_acquire() atomic_thread_fence(memory_order_acquire)
#define txn_fence_release() atomic_thread_fence(memory_order_release)
#endif

/* This thread's running transaction on @ht, or NULL. */
static inline struct ht_txn *txn_own(struct ht *ht)
{
	struct ht_txn *tx = tls_txn;

	return RCU_UNLIKELY(tx != NULL) && tx->ht == ht ? tx : NULL;
}

static int txn_holds(const struct ht_txn *tx, uint32_t si)
{
	size_t lo = 0, hi = tx->ns;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (tx->st[mid] == si)
			return 1;
		if (tx->st[mid] < si)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Take the stripe mutex of a single-key writer, unless this thread's
 * transaction holds it already.  A key outside the transaction's key set is
 * a caller bug (it would break the lock order): fatal. */
static void stripe_lock(struct ht *ht, struct ht_stripe *s)
{
	struct ht_txn *tx = txn_own(ht);

	if (RCU_UNLIKELY(tx != NULL)) {
		if (!txn_holds(tx, (uint32_t)(s - ht->stripes)))
			ht_die("ht_txn(): a write outside the transaction's keys");
		return;
	}
	HT_CHECK(pthread_mutex_lock(&s->lock));
}

/* Inside a transaction: keep @r's batches for its end (ht_txn()). */
static void txn_defer(struct ht_txn *tx, struct retired *r, struct ht_stripe *grew)
{
	if (r->b) {
		r->b->rcu.next = tx->defer_b ? &tx->defer_b->rcu : NULL;
		tx->defer_b = r->b;
	}
	if (r->done) {
		r->done->rcu.next = tx->defer_done ? &tx->defer_done->rcu : NULL;
		tx->defer_done = r->done;
	}
	tx->defer_gp |= r->want_gp;
	if (grew)
		tx->grew = grew;
	*r = (struct retired){NULL};
}

/* Lock the stripe of @h and locate the key; an expired entry is removed
 * (lazy expiry) and l->e left NULL. */
static void lock_find(struct ht *ht, struct loc *l, uint32_t h, const void *key, size_t klen,
		      struct retired *r)
{
	int64_t now = 0;

	stripe_lock(ht, stripe_of(ht, h));
	loc_init(ht, l, h);
	if (loc_find(l, key, klen) && e_expired(l->e, &now)) {
		struct ht_entry *e = l->e;

		loc_remove(ht, l, HT_WATCH_EXPIRED);
		retire_later(ht, r, e);
		atomic_fetch_add_explicit(&ht->st_expired, 1, memory_order_relaxed);
	}
}

#if defined(RCU_DEBUG) && RCU_DEBUG
/* Debug build: after each locked operation, validate the bucket it touched
 * (the per-operation form of ht_validate()).  Context: stripe mutex held. */
static void debug_check_bucket(struct ht *ht, struct loc *l)
{
	struct ht_tbl *t = rcu_dereference_protected(ht->tbl, "stripe mutex");
	struct hlist_node **prev, *n;
	size_t i = l->h & t->mask, len = 0;

	if (l->state != S_NORMAL)
		return;
	prev = &t->b[i].first;
	for (n = *prev; n; prev = &n->next, n = n->next) {
		if ((node_entry(n)->hash & t->mask) != i || n->pprev != prev || ++len > (1u << 30))
			ht_die("bucket %zu corrupt after an update (hash %08x)", i,
			       node_entry(n)->hash);
	}
}
#else
static inline void debug_check_bucket(struct ht *ht, struct loc *l)
{
	(void)ht;
	(void)l;
}
#endif

static void writer_help_unzip(struct ht *ht, struct loc *l);

static void unlock_retire(struct ht *ht, struct loc *l, struct retired *r, int counted)
{
	struct ht_txn *tx;

	writer_help_unzip(ht, l);
	debug_check_bucket(ht, l);
	if (RCU_UNLIKELY((tx = txn_own(ht)) != NULL)) {
		txn_defer(tx, r, counted ? l->s : NULL);
		return;
	}
	HT_CHECK(pthread_mutex_unlock(&l->s->lock));
	retire_flush(ht, r);
	if (counted)
		maybe_request_resize(ht, l->s);
}

/*
 * lock_blocking() - take a mutex that may be held across grace periods
 * (resize_lock) or a thread join.  A QSBR thread that is online goes offline
 * for the wait: the holder may be waiting for a grace period that needs this
 * thread's quiescent state.  Callers hold no RCU reference (their contract).
 */
static int qsbr_offline_begin(void)
{
#if defined(RCU_FLAVOR_QSBR)
	if (rcu_qsbr_reader_tls.link.registered &&
	    atomic_load_explicit(&rcu_qsbr_reader_tls.ctr, memory_order_relaxed) != 0) {
		rcu_qsbr_thread_offline();
		return 1;
	}
#endif
	return 0;
}

static void qsbr_offline_end(int was_online)
{
	if (was_online)
		rcu_thread_online();
}

static void lock_blocking(pthread_mutex_t *m)
{
	int was;

	if (pthread_mutex_trylock(m) == 0)
		return;
	was = qsbr_offline_begin();
	HT_CHECK(pthread_mutex_lock(m));
	qsbr_offline_end(was);
}

/* --- life cycle ---------------------------------------------------------------- */

static size_t pow2_at_least(size_t v)
{
	size_t p = 1;

	while (p < v && p < HT_MAX_BUCKETS)
		p <<= 1;
	return p;
}

struct ht *ht_new(const struct ht_options *opt)
{
	struct ht_options o = {0};
	struct ht *ht;
	unsigned int i;
	size_t nb;

	if (opt)
		o = *opt;
	if (!o.stripes)
		o.stripes = HT_DEFAULT_STRIPES;
	if (o.stripes & (o.stripes - 1)) {
		errno = EINVAL;
		return NULL;
	}
	if (o.stripes > HT_MAX_STRIPES)
		o.stripes = HT_MAX_STRIPES;
	/* Default 4096 buckets (32 KiB): a table filled fast from empty must
	 * not start so small that the first grows lag far behind (each unzip
	 * needs about one grace period per entry of the longest chain). */
	nb = pow2_at_least(o.initial_buckets ? o.initial_buckets : HT_DEFAULT_BUCKETS);
	if (nb < o.stripes)
		nb = o.stripes;
	ht = aligned_alloc(64, (sizeof(*ht) + 63) & ~(size_t)63);
	if (!ht)
		return NULL;
	memset(ht, 0, sizeof(*ht));
	ht->nstripes = o.stripes;
	ht->auto_resize = !o.no_auto_resize;
	ht->poison = o.poison_frees;
	ht->seed = o.seed;
	while (!ht->seed) {
		if (getrandom(&ht->seed, sizeof(ht->seed), GRND_NONBLOCK) != sizeof(ht->seed))
			ht->seed = (uint64_t)ht_now_ms() ^ (uint64_t)(uintptr_t)ht;
	}
	ht->stripes = aligned_alloc(64, sizeof(struct ht_stripe) * o.stripes);
	ht->tbl = tbl_new(nb);
	ht->txn_seq = calloc(o.stripes, sizeof(*ht->txn_seq));
	if (!ht->stripes || !ht->tbl || !ht->txn_seq) {
		free(ht->stripes);
		free(ht->tbl);
		free((void *)ht->txn_seq);
		free(ht);
		errno = ENOMEM;
		return NULL;
	}
	memset(ht->stripes, 0, sizeof(struct ht_stripe) * o.stripes);
	atomic_init(&ht->nbuckets, nb);
	for (i = 0; i < o.stripes; i++) {
		HT_CHECK(pthread_mutex_init(&ht->stripes[i].lock, NULL));
		ht->stripes[i].state = S_NORMAL;
	}
	HT_CHECK(pthread_mutex_init(&ht->resize_lock, NULL));
	HT_CHECK(pthread_cond_init(&ht->snap_cond, NULL));
	HT_CHECK(pthread_mutex_init(&ht->wlock, NULL));
	HT_CHECK(pthread_cond_init(&ht->wcond, NULL));
	HT_CHECK(init_srcu_struct(&ht->scan_srcu));
	ht->scan_srcu.name = "ht-scan";
	ht->reclaim = srcu_reclaim_new_flavor(&ht->scan_srcu, batch_free_cb, "ht");
	return ht;
}

static void tbl_free_entries(struct ht *ht, struct ht_tbl *t)
{
	size_t i;

	for (i = 0; i <= t->mask; i++) {
		struct hlist_node *n = t->b[i].first, *nx;

		for (; n; n = nx) {
			nx = n->next;
			e_free_now(ht, node_entry(n));
		}
	}
	free(t);
}

void ht_free(struct ht *ht)
{
	int started;

	if (!ht)
		return;
	HT_CHECK(pthread_mutex_lock(&ht->wlock));
	ht->worker_stop = 1;
	started = ht->worker_started;
	pthread_cond_signal(&ht->wcond);
	HT_CHECK(pthread_mutex_unlock(&ht->wlock));
	if (started) {
		int was = qsbr_offline_begin();

		HT_CHECK(pthread_join(ht->worker, NULL));
		qsbr_offline_end(was);
	}
	/* The worker frees what was flushed before it stops; anything left: */
	while (ht->flushed) {
		struct ht_tbl *t = ht->flushed;

		ht->flushed = t->flush_next;
		tbl_free_entries(ht, t);
	}
	/* Retired entries still waiting for a batch: one grace period covers
	 * them all.  Batches handed to call_rcu() must be freed before we
	 * return: rcu_barrier(). */
	ht_wait_readers(ht);
	for (unsigned int i = 0; i < ht->nstripes; i++) {
		struct ht_stripe *s = &ht->stripes[i];

		e_free_list(ht, s->retired);
		s->retired = NULL;
		if (s->filling)
			batch_free_now(s->filling);
		s->filling = NULL;
		if (s->parked)
			batch_free_now(s->parked);
		s->parked = NULL;
	}
	if (ht->reclaim) {
		int was = qsbr_offline_begin();

		srcu_reclaim_free(ht->reclaim); /* its rcu_barrier() and SRCU wait */
		qsbr_offline_end(was);
	}
	rcu_barrier();
	cleanup_srcu_struct(&ht->scan_srcu);
	tbl_free_entries(ht, ht->tbl);
	for (unsigned int i = 0; i < ht->nstripes; i++)
		pthread_mutex_destroy(&ht->stripes[i].lock);
	free(ht->stripes);
	free((void *)ht->txn_seq);
	pthread_mutex_destroy(&ht->resize_lock);
	pthread_cond_destroy(&ht->snap_cond);
	pthread_mutex_destroy(&ht->wlock);
	pthread_cond_destroy(&ht->wcond);
	free(ht);
}

/* --- read side ------------------------------------------------------------------ */

static inline void e_touch(struct ht *ht, const struct ht_entry *ce)
{
	struct ht_entry *e = (struct ht_entry *)ce;
	uint32_t clk = atomic_load_explicit(&ht->clock, memory_order_relaxed);
	uint32_t lfu = atomic_load_explicit(&ht->lfu, memory_order_relaxed);

	if (RCU_UNLIKELY(lfu))
		clk = lfu_touched(ht, atomic_load_explicit(&e->access, memory_order_relaxed), lfu);
	/* Relaxed, and only when it changed: hot reads stay read-only.  Two
	 * readers may race (one LFU increment lost): an approximation anyway. */
	if (atomic_load_explicit(&e->access, memory_order_relaxed) != clk)
		atomic_store_explicit(&e->access, clk, memory_order_relaxed);
}

/*
 * The transactions' sequence counts (seqlock reader side, per stripe).  An
 * ht_txn() makes the counts of its stripes odd before its first change and
 * even again after its last one: a lookup that saw an even count, then found
 * what it found, then sees the same count, saw none of a transaction or all
 * of it.  An odd count is waited out (a transaction holds its stripes only
 * for its function), except by the thread that runs that transaction, which
 * sees its own writes.  Single-key writes do not touch the counts: their one
 * pointer store is atomic already.
 */
static uint32_t txn_seq_wait(struct ht *ht, _Atomic uint32_t *q)
{
	uint32_t s;
	unsigned int spins = 0;

	while ((s = atomic_load_explicit(q, memory_order_acquire)) & 1) {
		if (txn_own(ht))
			return s; /* our own: constant until we end it */
		if (++spins % 64 == 0)
			sched_yield();
	}
	return s;
}

static inline uint32_t txn_seq_begin(struct ht *ht, uint32_t h)
{
	_Atomic uint32_t *q = &ht->txn_seq[h & (ht->nstripes - 1)];
	uint32_t s = atomic_load_explicit(q, memory_order_acquire);

	return RCU_UNLIKELY(s & 1) ? txn_seq_wait(ht, q) : s;
}

/* Non-zero if a transaction changed stripe of @h since txn_seq_begin(). */
static inline int txn_seq_retry(struct ht *ht, uint32_t h, uint32_t s)
{
	txn_fence_acquire();
	return atomic_load_explicit(&ht->txn_seq[h & (ht->nstripes - 1)],
				    memory_order_relaxed) != s;
}

static inline const struct ht_entry *find_rcu_once(struct ht *ht, uint32_t h, const void *key,
						   size_t klen, int touch)
{
	struct ht_tbl *t = rcu_dereference(ht->tbl);
	struct hlist_node *n = rcu_dereference(t->b[h & t->mask].first);

	for (; n; n = rcu_dereference(n->next)) {
		const struct ht_entry *e = node_entry(n);

		if (e->hash == h && ht_entry_klen(e) == klen &&
		    (klen == 0 || memcmp(ht_entry_key(e), key, klen) == 0)) {
			int64_t now = 0;

			if (RCU_UNLIKELY(e_expired(e, &now)))
				return NULL;
			if (touch)
				e_touch(ht, e);
			return e;
		}
	}
	return NULL;
}

static inline const struct ht_entry *find_rcu(struct ht *ht, uint32_t h, const void *key,
					      size_t klen, int touch)
{
	const struct ht_entry *e;
	uint32_t s;

	do {
		s = txn_seq_begin(ht, h);
		e = find_rcu_once(ht, h, key, klen, touch);
	} while (RCU_UNLIKELY(txn_seq_retry(ht, h, s)));
	return e;
}

const struct ht_entry *ht_find_rcu(struct ht *ht, const void *key, size_t klen)
{
	return find_rcu(ht, (uint32_t)ht_hash(key, klen, ht->seed), key, klen, 1);
}

/* ht_mfind_rcu()'s last resort: the stripes locked, as a transaction. */
static int mfind_locked(struct ht_txn *tx, void *arg)
{
	const struct ht_entry **out = arg;

	for (size_t i = 0; i < tx->n; i++) {
		out[i] = ht_txn_get(tx, i);
		if (out[i])
			e_touch(tx->ht, out[i]);
	}
	return 0;
}

#define MFIND_STACK 32
#define MFIND_TRIES 8

void ht_mfind_rcu(struct ht *ht, size_t n, const void *const keys[], const size_t klens[],
		  const struct ht_entry *out[])
{
	uint32_t hs[MFIND_STACK * 2], *h = hs, *sq;
	size_t i;
	int tries = 0;

	if (n > MFIND_STACK && !(h = malloc(n * 2 * sizeof(*h)))) {
		if (ht_txn(ht, n, keys, klens, mfind_locked, out) == 0)
			return;
		for (i = 0; i < n; i++) /* no memory at all: key by key */
			out[i] = ht_find_rcu(ht, keys[i], klens[i]);
		return;
	}
	sq = h + n;
	for (i = 0; i < n; i++)
		h[i] = (uint32_t)ht_hash(keys[i], klens[i], ht->seed);
	for (;;) {
		for (i = 0; i < n; i++)
			sq[i] = txn_seq_begin(ht, h[i]);
		for (i = 0; i < n; i++)
			out[i] = find_rcu_once(ht, h[i], keys[i], klens[i], 1);
		txn_fence_acquire();
		for (i = 0; i < n; i++)
			if (atomic_load_explicit(&ht->txn_seq[h[i] & (ht->nstripes - 1)],
						 memory_order_relaxed) != sq[i])
				break;
		if (RCU_LIKELY(i == n))
			break;
		if (++tries == MFIND_TRIES && ht_txn(ht, n, keys, klens, mfind_locked, out) == 0)
			break;
	}
	if (h != hs)
		free(h);
}

const struct ht_entry *ht_peek_rcu(struct ht *ht, const void *key, size_t klen)
{
	return find_rcu(ht, (uint32_t)ht_hash(key, klen, ht->seed), key, klen, 0);
}

/* Two passes: every bucket head first (independent misses overlap), with the
 * stripe mutex of keys to be written, then the first entry of each chain,
 * whose address the first pass brought in. */
void ht_prefetch(struct ht *ht, size_t n, const void *const keys[], const size_t klens[],
		 uint32_t for_write)
{
	struct ht_tbl *t = rcu_dereference(ht->tbl);
	struct hlist_head *b[HT_PREFETCH_MAX];
	size_t i;

	if (n > HT_PREFETCH_MAX)
		n = HT_PREFETCH_MAX;
	for (i = 0; i < n; i++) {
		uint32_t h = (uint32_t)ht_hash(keys[i], klens[i], ht->seed);

		b[i] = &t->b[h & t->mask];
		__builtin_prefetch(b[i]);
		if (for_write & (1u << i))
			prefetch_for_write(&stripe_of(ht, h)->lock);
	}
	for (i = 0; i < n; i++) {
		struct hlist_node *f = rcu_dereference(b[i]->first);

		if (f)
			__builtin_prefetch(f);
	}
}

long long ht_get(struct ht *ht, const void *key, size_t klen, void *buf, size_t bufsize,
		 int64_t *expire)
{
	const struct ht_entry *e;
	long long ret = -ENOENT;

	rcu_read_lock();
	e = ht_find_rcu(ht, key, klen);
	if (e) {
		size_t vl = ht_entry_vlen(e), n = vl < bufsize ? vl : bufsize;

		if (n)
			memcpy(buf, ht_entry_val(e), n);
		if (expire)
			*expire = ht_entry_expire(e);
		ret = (long long)vl;
	}
	rcu_read_unlock();
	return ret;
}

int ht_get_alloc(struct ht *ht, const void *key, size_t klen, void **val, size_t *vlen,
		 int64_t *expire)
{
	const struct ht_entry *e;
	int ret = -ENOENT;

	rcu_read_lock();
	e = ht_find_rcu(ht, key, klen);
	if (e) {
		size_t vl = ht_entry_vlen(e);
		char *p = malloc(vl + 1);

		if (!p) {
			ret = -ENOMEM;
		} else {
			memcpy(p, ht_entry_val(e), vl);
			p[vl] = 0;
			*val = p;
			if (vlen)
				*vlen = vl;
			if (expire)
				*expire = ht_entry_expire(e);
			ret = 0;
		}
	}
	rcu_read_unlock();
	return ret;
}

int ht_exists(struct ht *ht, const void *key, size_t klen)
{
	int ret;

	rcu_read_lock();
	ret = ht_find_rcu(ht, key, klen) != NULL;
	rcu_read_unlock();
	return ret;
}

/* --- write side ------------------------------------------------------------------- */

int ht_set(struct ht *ht, const void *key, size_t klen, const void *val, size_t vlen,
	   int64_t expire_ms, unsigned int flags, const struct ht_entry **old)
{
	uint32_t h;
	struct ht_entry *nu = NULL;
	struct retired r = {NULL};
	struct loc l;
	int ret = 0, counted = 0;

	if (old)
		*old = NULL;
	if (klen > HT_MAX_KEY_LEN || vlen_of(vlen) > HT_MAX_VAL_LEN)
		return -E2BIG;
	if ((flags & (HT_SET_NX | HT_SET_XX)) == (HT_SET_NX | HT_SET_XX))
		return -EINVAL;
	h = (uint32_t)ht_hash(key, klen, ht->seed);
	if (!(flags & HT_SET_KEEPTTL)) {
		nu = e_new(ht, h, key, klen, val, vword_of(vlen), expire_ms, NULL);
		if (!nu)
			return -ENOMEM;
	}
	lock_find(ht, &l, h, key, klen, &r);
	if (old)
		*old = l.e;
	if ((flags & HT_SET_NX) && l.e) {
		ret = -EEXIST;
	} else if ((flags & HT_SET_XX) && !l.e) {
		ret = -ENOENT;
	} else {
		if (!nu) {
			nu = e_new(ht, h, key, klen, val, vword_of(vlen),
				   l.e ? ht_entry_expire(l.e) : HT_NO_EXPIRE, NULL);
			if (!nu)
				ret = -ENOMEM;
		}
		if (nu) {
			if (l.e) {
				struct ht_entry *e = l.e;
				uint32_t lfu = atomic_load_explicit(&ht->lfu, memory_order_relaxed);

				/* LFU: an overwrite is an access of the key (Redis). */
				if (lfu)
					atomic_store_explicit(
					    &nu->access, lfu_touched(ht, ht_entry_access(e), lfu),
					    memory_order_relaxed);
				loc_replace(ht, &l, nu);
				retire_later(ht, &r, e);
			} else {
				loc_insert(ht, &l, nu);
				counted = 1;
			}
			nu = NULL;
		}
	}
	unlock_retire(ht, &l, &r, counted);
	free(nu);
	return ret;
}

int ht_del(struct ht *ht, const void *key, size_t klen)
{
	uint32_t h = (uint32_t)ht_hash(key, klen, ht->seed);
	struct retired r = {NULL};
	struct loc l;
	int ret = -ENOENT;

	lock_find(ht, &l, h, key, klen, &r);
	if (l.e) {
		struct ht_entry *e = l.e;

		loc_remove(ht, &l, HT_WATCH_DELETE);
		retire_later(ht, &r, e);
		ret = 0;
	}
	unlock_retire(ht, &l, &r, 1);
	return ret;
}

/* Replace l->e by a copy with expiry @x.  Context: stripe mutex held. */
static int replace_expire(struct ht *ht, struct loc *l, int64_t x, struct retired *r)
{
	struct ht_entry *e = l->e;
	struct ht_entry *nu = e_new(ht, e->hash, ht_entry_key(e), ht_entry_klen(e), ht_entry_val(e),
				    e->vlen, x, NULL);

	if (!nu)
		return -ENOMEM;
	if ((nu->vlen & HT_E_EXTERN) && ht->ext_dup)
		ht->ext_dup(ht->ext_arg, nu); /* the copy owns a reference too */
	atomic_store_explicit(&nu->access, ht_entry_access(e), memory_order_relaxed);
	loc_replace(ht, l, nu);
	retire_later(ht, r, e);
	return 0;
}

int ht_expire_set(struct ht *ht, const void *key, size_t klen, int64_t expire_ms,
		  unsigned int flags)
{
	uint32_t h = (uint32_t)ht_hash(key, klen, ht->seed);
	struct retired r = {NULL};
	struct loc l;
	int ret;

	if (expire_ms == HT_NO_EXPIRE)
		return -EINVAL;
	lock_find(ht, &l, h, key, klen, &r);
	if (!l.e) {
		ret = -ENOENT;
	} else {
		int64_t cur = ht_entry_expire(l.e);
		int ok = 1;

		if ((flags & HT_EXPIRE_NX) && cur != HT_NO_EXPIRE)
			ok = 0;
		if ((flags & HT_EXPIRE_XX) && cur == HT_NO_EXPIRE)
			ok = 0;
		/* No expiry counts as infinite: GT never holds, LT always does. */
		if ((flags & HT_EXPIRE_GT) && (cur == HT_NO_EXPIRE || expire_ms <= cur))
			ok = 0;
		if ((flags & HT_EXPIRE_LT) && cur != HT_NO_EXPIRE && expire_ms >= cur)
			ok = 0;
		ret = ok ? replace_expire(ht, &l, expire_ms, &r) : 0;
		if (ret == 0 && ok)
			ret = 1;
	}
	unlock_retire(ht, &l, &r, 0);
	return ret;
}

int ht_expire_get(struct ht *ht, const void *key, size_t klen, int64_t *expire_ms)
{
	const struct ht_entry *e;
	int ret = -ENOENT;

	rcu_read_lock();
	e = ht_find_rcu(ht, key, klen);
	if (e) {
		*expire_ms = ht_entry_expire(e);
		ret = 0;
	}
	rcu_read_unlock();
	return ret;
}

int ht_expire_clear(struct ht *ht, const void *key, size_t klen)
{
	uint32_t h = (uint32_t)ht_hash(key, klen, ht->seed);
	struct retired r = {NULL};
	struct loc l;
	int ret;

	lock_find(ht, &l, h, key, klen, &r);
	if (!l.e)
		ret = -ENOENT;
	else if (!e_has_expire(l.e))
		ret = 0;
	else
		ret = replace_expire(ht, &l, HT_NO_EXPIRE, &r) ?: 1;
	unlock_retire(ht, &l, &r, 0);
	return ret;
}

void *ht_rmw_alloc(struct ht_rmw *rm, size_t vlen)
{
	char *p;

	free(rm->nu);
	rm->nu = NULL;
	if (vlen_of(vlen) > HT_MAX_VAL_LEN)
		return NULL;
	/* The expiry slot follows rm->expire_ms as it is now; ht_rmw() fixes the
	 * layout if the callback changes it afterwards. */
	rm->nu = e_new(rm->ht, rm->hash, rm->key, rm->klen, NULL, vword_of(vlen), rm->expire_ms, &p);
	return rm->nu ? p : NULL;
}

/* Make @nu's expiry slot agree with @x (copying if the layout changes). */
static struct ht_entry *e_with_expire(struct ht *ht, struct ht_entry *nu, int64_t x)
{
	struct ht_entry *e2;

	if (e_has_expire(nu) == (x != HT_NO_EXPIRE)) {
		if (x != HT_NO_EXPIRE)
			memcpy(nu->data, &x, 8);
		return nu;
	}
	e2 = e_new(ht, nu->hash, ht_entry_key(nu), ht_entry_klen(nu), ht_entry_val(nu), nu->vlen, x,
		   NULL);
	free(nu);
	return e2;
}

int ht_rmw(struct ht *ht, const void *key, size_t klen, ht_rmw_fn fn, void *arg)
{
	uint32_t h;
	struct retired r = {NULL};
	struct ht_rmw rm;
	struct loc l;
	int ret, counted = 0;

	if (klen > HT_MAX_KEY_LEN)
		return -E2BIG;
	h = (uint32_t)ht_hash(key, klen, ht->seed);
	lock_find(ht, &l, h, key, klen, &r);
	memset(&rm, 0, sizeof(rm));
	rm.old = l.e;
	rm.expire_ms = l.e ? ht_entry_expire(l.e) : HT_NO_EXPIRE;
	rm.ht = ht;
	rm.hash = h;
	rm.key = key;
	rm.klen = klen;
	ret = fn(&rm, arg);
	if (ret == HT_RMW_STORE) {
		if (!rm.nu) {
			ret = -EINVAL;
		} else {
			rm.nu = e_with_expire(ht, rm.nu, rm.expire_ms);
			if (!rm.nu) {
				ret = -ENOMEM;
			} else if (l.e) {
				struct ht_entry *e = l.e;

				atomic_store_explicit(&rm.nu->access, ht_entry_access(e),
						      memory_order_relaxed);
				loc_replace(ht, &l, rm.nu);
				retire_later(ht, &r, e);
				rm.nu = NULL;
			} else {
				loc_insert(ht, &l, rm.nu);
				rm.nu = NULL;
				counted = 1;
			}
		}
	} else if (ret == HT_RMW_DELETE) {
		if (l.e) {
			struct ht_entry *e = l.e;

			loc_remove(ht, &l, HT_WATCH_DELETE);
			retire_later(ht, &r, e);
			counted = 1;
		}
	}
	unlock_retire(ht, &l, &r, counted);
	free(rm.nu);
	return ret;
}

/* --- transactions ------------------------------------------------------------------ */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Locate key @i (lazily expiring), with its stripe already locked. */
static int txn_loc(struct ht_txn *tx, size_t i, struct loc *l)
{
	int64_t now = 0;

	if (i >= tx->n)
		return -EINVAL;
	loc_init(tx->ht, l, tx->hashes[i]);
	if (loc_find(l, tx->keys[i], tx->klens[i]) && e_expired(l->e, &now)) {
		struct ht_entry *e = l->e;

		loc_remove(tx->ht, l, HT_WATCH_EXPIRED);
		retire_later(tx->ht, &tx->r, e);
		atomic_fetch_add_explicit(&tx->ht->st_expired, 1, memory_order_relaxed);
	}
	return 0;
}

const struct ht_entry *ht_txn_get(struct ht_txn *tx, size_t i)
{
	struct loc l;

	if (txn_loc(tx, i, &l))
		return NULL;
	return l.e;
}

int ht_txn_set(struct ht_txn *tx, size_t i, const void *val, size_t vlen, int64_t expire_ms)
{
	struct ht_entry *nu;
	struct loc l;

	if (txn_loc(tx, i, &l))
		return -EINVAL;
	if (vlen_of(vlen) > HT_MAX_VAL_LEN)
		return -E2BIG;
	nu = e_new(tx->ht, tx->hashes[i], tx->keys[i], tx->klens[i], val, vword_of(vlen), expire_ms,
		   NULL);
	if (!nu)
		return -ENOMEM;
	if (l.e) {
		struct ht_entry *e = l.e;

		loc_replace(tx->ht, &l, nu);
		retire_later(tx->ht, &tx->r, e);
	} else {
		loc_insert(tx->ht, &l, nu);
		tx->counted = 1;
	}
	return 0;
}

int ht_txn_del(struct ht_txn *tx, size_t i)
{
	struct loc l;
	struct ht_entry *e;

	if (txn_loc(tx, i, &l))
		return -EINVAL;
	if (!l.e)
		return -ENOENT;
	e = l.e;
	loc_remove(tx->ht, &l, HT_WATCH_DELETE);
	retire_later(tx->ht, &tx->r, e);
	tx->counted = 1;
	return 0;
}

/* The outermost transaction's end: what it and its nested writers retired. */
static void txn_flush(struct ht_txn *tx)
{
	struct ht_batch *b, *nx;

	retire_flush(tx->ht, &tx->r);
	for (b = tx->defer_b; b; b = nx) {
		nx = b->rcu.next ? (struct ht_batch *)(void *)b->rcu.next : NULL;
		ht_batch_retire(tx->ht, b);
	}
	for (b = tx->defer_done; b; b = nx) {
		nx = b->rcu.next ? (struct ht_batch *)(void *)b->rcu.next : NULL;
		ht_batch_free_parked(tx->ht, b);
	}
	if (tx->defer_gp)
		(void)start_poll_synchronize_rcu();
}

static void txn_seq_bump(struct ht *ht, const uint32_t *st, size_t ns, memory_order mo)
{
	for (size_t i = 0; i < ns; i++) {
		_Atomic uint32_t *q = &ht->txn_seq[st[i]];

		atomic_store_explicit(q, atomic_load_explicit(q, memory_order_relaxed) + 1, mo);
	}
}

int ht_txn(struct ht *ht, size_t n, const void *const keys[], const size_t klens[], ht_txn_fn fn,
	   void *arg)
{
	struct ht_txn tx = {.ht = ht, .n = n, .keys = keys, .klens = klens};
	struct ht_txn *own = txn_own(ht);
	uint32_t *st;
	size_t i, ns = 0;
	int ret;

	if (n == 0 || n > HT_TXN_MAX_KEYS)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (klens[i] > HT_MAX_KEY_LEN)
			return -E2BIG;
	tx.hashes = malloc(n * sizeof(uint32_t) * 2);
	if (!tx.hashes)
		return -ENOMEM;
	st = tx.hashes + n;
	for (i = 0; i < n; i++) {
		tx.hashes[i] = (uint32_t)ht_hash(keys[i], klens[i], ht->seed);
		st[i] = tx.hashes[i] & (ht->nstripes - 1);
	}
	/* Lock order: ascending stripe index, each once. */
	qsort(st, n, sizeof(*st), cmp_u32);
	for (i = 0; i < n; i++)
		if (i == 0 || st[i] != st[i - 1])
			st[ns++] = st[i];
	tx.st = st;
	tx.ns = ns;
	if (own) { /* nested: the outer transaction holds our stripes */
		for (i = 0; i < ns; i++)
			if (!txn_holds(own, st[i]))
				ht_die("ht_txn(): a nested transaction outside the outer one's keys");
		ret = fn(&tx, arg);
		txn_defer(own, &tx.r, tx.counted ? stripe_of(ht, tx.hashes[0]) : NULL);
		free(tx.hashes);
		return ret;
	}
	for (i = 0; i < ns; i++)
		HT_CHECK(pthread_mutex_lock(&ht->stripes[st[i]].lock));
	/* Odd: lookups of these stripes wait until the end (txn_seq_begin()).
	 * The release fence orders the odd counts before every change fn makes. */
	txn_seq_bump(ht, st, ns, memory_order_relaxed);
	txn_fence_release();
	tls_txn = &tx;
	ret = fn(&tx, arg);
	tls_txn = NULL;
	txn_seq_bump(ht, st, ns, memory_order_release);
	for (i = ns; i-- > 0;)
		HT_CHECK(pthread_mutex_unlock(&ht->stripes[st[i]].lock));
	txn_flush(&tx);
	if (tx.counted)
		maybe_request_resize(ht, stripe_of(ht, tx.hashes[0]));
	if (tx.grew)
		maybe_request_resize(ht, tx.grew);
	free(tx.hashes);
	return ret;
}

void ht_watch_hook(struct ht *ht, void (*fn)(void *arg, const void *key, size_t klen, int kind),
		   void *arg)
{
	ht->watch_fn = fn;
	ht->watch_arg = arg;
}

void ht_remove_hook(struct ht *ht, void (*fn)(void *arg, const struct ht_entry *old, int kind),
		    void *arg)
{
	ht->remove_fn = fn;
	ht->remove_arg = arg;
}

void ht_extern_hook(struct ht *ht, void (*dup_fn)(void *arg, const struct ht_entry *e),
		    void (*free_fn)(void *arg, const struct ht_entry *e), void *arg)
{
	ht->ext_dup = dup_fn;
	ht->ext_free = free_fn;
	ht->ext_arg = arg;
}

void ht_watch_all(struct ht *ht, int delta)
{
	atomic_fetch_add(&ht->watch_all, delta);
}

int ht_watch_all_on(struct ht *ht)
{
	return atomic_load_explicit(&ht->watch_all, memory_order_relaxed);
}

int ht_watch(struct ht *ht, const void *key, size_t klen, int delta)
{
	struct retired r = {NULL};
	struct loc l;
	uint32_t h;
	int present;

	if (klen > HT_MAX_KEY_LEN)
		return -E2BIG;
	h = (uint32_t)ht_hash(key, klen, ht->seed);
	lock_find(ht, &l, h, key, klen, &r);
	l.s->watchers += (unsigned int)delta;
	present = l.e != NULL;
	unlock_retire(ht, &l, &r, 0);
	return present;
}

/* --- whole table -------------------------------------------------------------------- */

size_t ht_count(struct ht *ht)
{
	size_t c = 0;

	for (unsigned int i = 0; i < ht->nstripes; i++)
		c += atomic_load_explicit(&ht->stripes[i].count, memory_order_relaxed);
	return c;
}

size_t ht_count_expires(struct ht *ht)
{
	size_t c = 0;

	for (unsigned int i = 0; i < ht->nstripes; i++)
		c += atomic_load_explicit(&ht->stripes[i].expires, memory_order_relaxed);
	return c;
}

static void lock_all(struct ht *ht)
{
	for (unsigned int i = 0; i < ht->nstripes; i++)
		HT_CHECK(pthread_mutex_lock(&ht->stripes[i].lock));
}

static void unlock_all(struct ht *ht)
{
	for (unsigned int i = ht->nstripes; i-- > 0;)
		HT_CHECK(pthread_mutex_unlock(&ht->stripes[i].lock));
}

int ht_flush(struct ht *ht)
{
	struct ht_tbl *nt = tbl_new(ht->nstripes), *old;
	struct ht_snap *sn;

	if (!nt)
		return -ENOMEM;
	lock_blocking(&ht->resize_lock);
	lock_all(ht);
	old = rcu_dereference_protected(ht->tbl, "resize_lock and every stripe");
	sn = atomic_load_explicit(&ht->snap, memory_order_relaxed);
	/* A running snapshot keeps walking the detached table, which no longer
	 * changes: it is freed by the worker after ht_wait_readers(), that is
	 * after the snapshot's SRCU section.  Tables flushed later hold only
	 * entries created after the moment. */
	if (sn)
		sn->frozen = 1;
	/* Release: publishes the empty buckets; pairs with find_rcu(). */
	rcu_assign_pointer(ht->tbl, nt);
	atomic_store_explicit(&ht->nbuckets, tbl_size(nt), memory_order_relaxed);
	for (unsigned int i = 0; i < ht->nstripes; i++) {
		struct ht_stripe *s = &ht->stripes[i];

		if (sn)
			ctr_add(&s->snap_bytes,
				atomic_load_explicit(&s->bytes, memory_order_relaxed));
		atomic_store_explicit(&s->count, 0, memory_order_relaxed);
		atomic_store_explicit(&s->expires, 0, memory_order_relaxed);
		atomic_store_explicit(&s->bytes, 0, memory_order_relaxed);
	}
	unlock_all(ht);
	HT_CHECK(pthread_mutex_unlock(&ht->resize_lock));
	atomic_fetch_add_explicit(&ht->st_flushes, 1, memory_order_relaxed);
	HT_CHECK(pthread_mutex_lock(&ht->wlock));
	old->flush_next = ht->flushed;
	ht->flushed = old;
	HT_CHECK(pthread_mutex_unlock(&ht->wlock));
	worker_kick(ht);
	return 0;
}

static inline uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x2545f4914f6cdd1dULL;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* Live entries of bucket @i of @t that belong there; @pick-th one (or count). */
static const struct ht_entry *bucket_pick(struct ht_tbl *t, size_t i, int volatile_only,
					  uint64_t *seed)
{
	const struct ht_entry *chosen = NULL;
	struct hlist_node *n = rcu_dereference(t->b[i].first);
	int64_t now = 0;
	size_t seen = 0;

	for (; n; n = rcu_dereference(n->next)) {
		const struct ht_entry *e = node_entry(n);

		if ((e->hash & t->mask) != i || e_expired(e, &now))
			continue;
		if (volatile_only && !e_has_expire(e))
			continue;
		seen++;
		if (xorshift(seed) % seen == 0) /* reservoir of one */
			chosen = e;
	}
	return chosen;
}

const struct ht_entry *ht_random_rcu(struct ht *ht, uint64_t *seed)
{
	struct ht_tbl *t = rcu_dereference(ht->tbl);
	size_t start = (size_t)xorshift(seed) & t->mask, i;

	for (i = 0; i <= t->mask; i++) {
		const struct ht_entry *e = bucket_pick(t, (start + i) & t->mask, 0, seed);

		if (e)
			return e;
	}
	return NULL;
}

size_t ht_sample_rcu(struct ht *ht, const struct ht_entry **out, size_t n, int volatile_only,
		     uint64_t *seed)
{
	struct ht_tbl *t = rcu_dereference(ht->tbl);
	size_t got = 0, tries;

	for (tries = 0; got < n && tries < n * 16 + 64; tries++) {
		const struct ht_entry *e =
		    bucket_pick(t, (size_t)xorshift(seed) & t->mask, volatile_only, seed);

		if (e)
			out[got++] = e;
	}
	/* A sparse table (a few keys in thousands of buckets): random probes
	 * miss, so walk on from a random bucket, as Redis's dictGetSomeKeys()
	 * does, until something is found or every bucket was seen. */
	if (!got && (volatile_only ? ht_count_expires(ht) : ht_count(ht))) {
		size_t start = (size_t)xorshift(seed) & t->mask;

		for (size_t i = 0; i <= t->mask && !got; i++) {
			const struct ht_entry *e =
			    bucket_pick(t, (start + i) & t->mask, volatile_only, seed);

			if (e)
				out[got++] = e;
		}
	}
	return got;
}

static inline uint64_t rev64(uint64_t v)
{
	v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
	v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
	v = ((v >> 4) & 0x0f0f0f0f0f0f0f0fULL) | ((v & 0x0f0f0f0f0f0f0f0fULL) << 4);
	return __builtin_bswap64(v);
}

/*
 * One scan step.  The cursor counts in reverse binary over the table's mask:
 * increment the bit-reversed cursor with all bits above the mask set.  Worked
 * example with 8 buckets (mask 7): 0 -> 4 -> 2 -> 6 -> 1 -> 5 -> 3 -> 7 -> 0.
 * Suppose the table grows to 16 after bucket 6 was visited: buckets 0, 4, 2,
 * 6 of the small table were exactly the large table's 0/8, 4/12, 2/10, 6/14,
 * and the cursor continues at 1 (reversed 4-bit order: 1, 9, 5, 13, ...),
 * skipping none of the unvisited ones.  After a shrink from 16 to 8, the
 * cursor keeps the bits above the smaller mask out of the next value, so a
 * small bucket visited again covers its large-table halves (some keys twice,
 * none missed).  Entries are reported only in the bucket their hash selects
 * (a chain being unzipped also holds its partner's nodes).
 */
static uint64_t scan_step(struct ht *ht, uint64_t v, size_t min_entries, ht_scan_fn fn, void *arg,
			  int *stop)
{
	struct ht_tbl *t = rcu_dereference(ht->tbl);
	uint64_t m = t->mask;
	size_t reported = 0, buckets = 0, max_buckets = min_entries * 10 + 1;
	int64_t now = 0;

	do {
		size_t i = (size_t)(v & m);
		struct hlist_node *n = rcu_dereference(t->b[i].first);

		for (; n; n = rcu_dereference(n->next)) {
			const struct ht_entry *e = node_entry(n);

			if ((e->hash & m) != i || e_expired(e, &now))
				continue;
			reported++;
			if (!*stop)
				*stop = fn(e, arg);
		}
		buckets++;
		v |= ~m;
		v = rev64(v);
		v++;
		v = rev64(v);
	} while (v && !*stop && reported < min_entries && buckets < max_buckets);
	return v;
}

uint64_t ht_scan_rcu(struct ht *ht, uint64_t cursor, size_t min_entries, ht_scan_fn fn, void *arg)
{
	int stop = 0;

	return scan_step(ht, cursor, min_entries ? min_entries : 1, fn, arg, &stop);
}

/*
 * The scan holds an SRCU section of ht->scan_srcu from start to end and no
 * section of the flavor (a QSBR caller goes offline), so @fn may sleep as long
 * as it likes without delaying the flavor's grace periods: entries, chains
 * and bucket arrays are all freed after an SRCU grace period too
 * (ht_batch_retire(), ht_wait_readers()).  While it runs, resizes wait for
 * it (stripe_unzip_ready()).
 */
int ht_scan_all(struct ht *ht, ht_scan_fn fn, void *arg)
{
	uint64_t v = 0;
	int stop = 0;

	if (!ht->reclaim) { /* no SRCU protection for entries: flavor steps */
		do {
			rcu_read_lock();
			v = scan_step(ht, v, 64, fn, arg, &stop);
			rcu_read_unlock();
			rcu_quiescent_state();
		} while (v && !stop);
		return stop;
	}
	{
		int idx = srcu_read_lock(&ht->scan_srcu);
		int was = qsbr_offline_begin();

		do
			v = scan_step(ht, v, 64, fn, arg, &stop);
		while (v && !stop);
		qsbr_offline_end(was);
		srcu_read_unlock(&ht->scan_srcu, idx);
	}
	return stop;
}

/*
 * ht_snapshot() - point-in-time walk (issue 8, point 4).
 *
 * The moment.  With resize_lock and then every stripe mutex held, the
 * snapshot records ht_now_ms() and publishes itself in ht->snap.  Every
 * change to a bucket happens under its stripe mutex, and an ht_txn() holds
 * all its stripes from its first read to its last write, so each update (and
 * each whole transaction) is wholly before or wholly after the moment.
 *
 * INVARIANT (for each bucket i of sn->tbl, under its stripe mutex): either
 * bit i is clear and bucket i's chain is exactly its chain at the moment, or
 * bit i is set and the entries of that moment's chain which were live at the
 * moment have been recorded exactly once (in the walker's buffer or in
 * sn->caps[stripe]).  It holds at the moment (no bit set); a writer keeps it
 * by capturing the bucket in loc_init() before its first change (one relaxed
 * load of ht->snap when no snapshot runs); the walker keeps it by capturing
 * the buckets in order; a flush freezes sn->tbl (no more changes to it),
 * resizes wait (bucket identity is fixed).  When the walk ends every bit is
 * set, so every entry live at the moment was recorded once and nothing
 * created later was (a new entry enters only buckets already captured or
 * tables created after the moment).
 *
 * Lifetime.  The SRCU section of ht->scan_srcu opened before the moment and
 * closed after the last @fn call keeps every recorded entry (and sn->tbl)
 * allocated: entries unlinked later are retired through ht_batch_retire()
 * (flavor grace period, then one of scan_srcu), flushed tables are freed after
 * ht_wait_readers(); entries unlinked before the moment are on no chain and
 * never recorded.  The captured pointer IS the version of the moment: entries
 * are immutable (except the access clock), an update builds a new one.
 *
 * Memory held: the entries unlinked while the snapshot runs (and a table
 * flushed meanwhile), counted per stripe in snap_bytes, plus 8 bytes a
 * recorded entry in the writers' capture lists, all bounded by the writes
 * during the snapshot; each stripe's list is handed to @fn and freed as soon
 * as the walker has passed that stripe (no writer captures there after).
 *
 * Locks: resize_lock, then the stripes (ascending), as ht_flush(); the
 * walker holds one stripe at a time, never while calling @fn.  resize_lock is
 * taken before the SRCU section opens: a resize in progress waits for SRCU
 * readers (stripe_unzip_ready()).
 */
static int snap_emit(struct snap_vec *v, ht_scan_fn fn, void *arg)
{
	int stop = 0;

	for (size_t k = 0; k < v->n && !stop; k++)
		stop = fn(v->v[k], arg);
	v->n = 0;
	return stop;
}

#define SNAP_BUCKETS_PER_LOCK 64

int ht_snapshot(struct ht *ht, ht_scan_fn fn, void (*begun)(void *arg), void *arg,
		int64_t *at_ms)
{
	struct snap_vec buf = {NULL, 0, 0}, mine;
	struct ht_snap *sn;
	struct ht_tbl *t;
	size_t nb, i, k;
	unsigned int si;
	int expected = 0, stop = 0, idx, was, err;

	if (!ht->reclaim) /* no SRCU reclaimer: entries could not be kept */
		return -ENOMEM;
	if (!atomic_compare_exchange_strong(&ht->snap_busy, &expected, 1))
		return -EBUSY;
	sn = calloc(1, sizeof(*sn));
	if (sn)
		sn->caps = calloc(ht->nstripes, sizeof(*sn->caps));
	if (!sn || !sn->caps)
		goto nomem;
	lock_blocking(&ht->resize_lock); /* a resize in progress ends first */
	t = rcu_dereference_protected(ht->tbl, "resize_lock");
	nb = tbl_size(t);
	sn->bits = calloc((nb + SNAP_WORD_BITS - 1) / SNAP_WORD_BITS, sizeof(*sn->bits));
	if (!sn->bits) {
		HT_CHECK(pthread_mutex_unlock(&ht->resize_lock));
		goto nomem;
	}
	idx = srcu_read_lock(&ht->scan_srcu);
	lock_all(ht);
	/* The moment: every writer is wholly before or after. */
	sn->tbl = t; /* flush changes ht->tbl only under resize_lock: still t */
	sn->at = ht_now_ms();
	atomic_store_explicit(&ht->snap, sn, memory_order_relaxed); /* every stripe held */
	atomic_store_explicit(&ht->snap_on, 1, memory_order_relaxed); /* resize_lock held */
	if (begun)
		begun(arg);
	unlock_all(ht);
	HT_CHECK(pthread_mutex_unlock(&ht->resize_lock));
	if (at_ms)
		*at_ms = sn->at;

	/* The walk: stripe by stripe (each stripe's buckets, a batch per lock
	 * hold), @fn outside every lock and every flavor section. */
	was = qsbr_offline_begin();
	for (si = 0; si < ht->nstripes && !stop; si++) {
		struct ht_stripe *s = &ht->stripes[si];

		for (i = si; i < nb && !stop;) {
			HT_CHECK(pthread_mutex_lock(&s->lock));
			for (k = 0; k < SNAP_BUCKETS_PER_LOCK && i < nb; k++, i += ht->nstripes)
				snap_capture(sn, i, &buf);
			HT_CHECK(pthread_mutex_unlock(&s->lock));
			stop = snap_emit(&buf, fn, arg);
		}
		if (stop)
			break;
		/* Every bucket of the stripe is captured: writers add nothing
		 * more to its list. */
		HT_CHECK(pthread_mutex_lock(&s->lock));
		mine = sn->caps[si];
		memset(&sn->caps[si], 0, sizeof(sn->caps[si]));
		HT_CHECK(pthread_mutex_unlock(&s->lock));
		stop = snap_emit(&mine, fn, arg);
		free(mine.v);
	}
	qsbr_offline_end(was);

	/* The end: writers stop capturing and counting; resizes may go on. */
	lock_blocking(&ht->resize_lock);
	lock_all(ht);
	atomic_store_explicit(&ht->snap, NULL, memory_order_relaxed);
	for (si = 0; si < ht->nstripes; si++)
		atomic_store_explicit(&ht->stripes[si].snap_bytes, 0, memory_order_relaxed);
	atomic_store_explicit(&ht->snap_on, 0, memory_order_relaxed);
	unlock_all(ht);
	HT_CHECK(pthread_cond_broadcast(&ht->snap_cond));
	HT_CHECK(pthread_mutex_unlock(&ht->resize_lock));
	/* The last use of a recorded entry was the last @fn call above. */
	srcu_read_unlock(&ht->scan_srcu, idx);

	err = atomic_load_explicit(&sn->err, memory_order_relaxed);
	for (si = 0; si < ht->nstripes; si++) /* left by a stopped walk */
		free(sn->caps[si].v);
	free(sn->caps);
	free(sn->bits);
	free(sn);
	free(buf.v);
	atomic_store(&ht->snap_busy, 0);
	if (atomic_load_explicit(&ht->want_resize, memory_order_relaxed))
		worker_kick(ht); /* resizes requested meanwhile */
	return stop ? stop : err;

nomem:
	if (sn)
		free(sn->caps);
	free(sn);
	atomic_store(&ht->snap_busy, 0);
	return -ENOMEM;
}

/* Remove the key of @e if its entry is still the expired one. */
static int del_if_expired(struct ht *ht, const struct ht_entry *e)
{
	struct retired r = {NULL};
	struct loc l;
	int64_t now = 0;
	int done = 0;
	/* One read: the stripe locked is the stripe unlock_retire() unlocks, even
	 * if @e were (wrongly) freed and reused meanwhile (a broken grace
	 * period must show up as a test failure, not as a stripe left locked). */
	uint32_t h = e->hash;

	stripe_lock(ht, stripe_of(ht, h));
	loc_init(ht, &l, h);
	if (loc_find(&l, ht_entry_key(e), ht_entry_klen(e)) && e_expired(l.e, &now)) {
		struct ht_entry *x = l.e;

		loc_remove(ht, &l, HT_WATCH_EXPIRED);
		retire_later(ht, &r, x);
		atomic_fetch_add_explicit(&ht->st_expired, 1, memory_order_relaxed);
		done = 1;
	}
	unlock_retire(ht, &l, &r, done);
	return done;
}

size_t ht_expire_cycle(struct ht *ht, size_t max_samples, size_t max_buckets, size_t *sampled,
		       size_t *expired)
{
	size_t ns = 0, nx = 0, nb = 0, pos;
	int64_t now = ht_now_ms();

	if (ht_count_expires(ht) == 0) {
		if (sampled)
			*sampled = 0;
		if (expired)
			*expired = 0;
		return 0;
	}
	if (!max_buckets)
		max_buckets = max_samples * 20 + 1;
	pos = atomic_load_explicit(&ht->expire_cursor, memory_order_relaxed);
	rcu_read_lock();
	while (ns < max_samples && nb < max_buckets) {
		struct ht_tbl *t = rcu_dereference(ht->tbl);
		size_t i = pos & t->mask;
		struct hlist_node *n = rcu_dereference(t->b[i].first);

		for (; n; n = rcu_dereference(n->next)) {
			const struct ht_entry *e = node_entry(n);

			if (!e_has_expire(e) || (e->hash & t->mask) != i)
				continue;
			ns++;
			/* @e stays valid: we are inside a read-side section. */
			if (ht_entry_expire(e) <= now && del_if_expired(ht, e))
				nx++;
		}
		pos = i + 1;
		nb++;
	}
	rcu_read_unlock();
	atomic_store_explicit(&ht->expire_cursor, pos, memory_order_relaxed);
	if (sampled)
		*sampled = ns;
	if (expired)
		*expired = nx;
	return nx;
}

/* --- resize --------------------------------------------------------------------------- */

/*
 * The resizer walks buckets i, i + S, i + 2S, ... of one stripe; their first
 * nodes are scattered in memory.  Prefetching the first node HT_PF_AHEAD
 * buckets ahead overlaps those misses.  @b lies in the stripe whose mutex the
 * caller holds (same residue modulo S), so the load races with nothing.
 */
#define HT_PF_AHEAD 8

static inline void prefetch_first(struct ht_tbl *t, size_t i)
{
	if (i <= t->mask) {
		struct hlist_node *n = rcu_dereference_protected(t->b[i].first, "stripe mutex");

		if (n)
			__builtin_prefetch(n);
	}
}

/* Rebuild the pprev links of bucket @b.  Context: stripe mutex held. */
static void fix_pprev(struct hlist_head *b)
{
	struct hlist_node **prev = &b->first, *n;

	for (n = *prev; n; n = n->next) {
		n->pprev = prev;
		prev = &n->next;
	}
}

/* Is @x on the path from @head?  Context: stripe mutex held. */
static int on_path(struct hlist_head *head, struct hlist_node *x)
{
	struct hlist_node *n = rcu_dereference_protected(head->first, "stripe mutex");

	for (; n; n = rcu_dereference_protected(n->next, "stripe mutex"))
		if (n == x)
			return 1;
	return 0;
}

/* The first link on chain @dest's path that targets a foreign node, and the
 * next own node after that foreign run. */
struct unzip_fix {
	struct hlist_node **slot; /* NULL: the chain is clean */
	struct hlist_node *owner; /* node owning @slot, NULL for the head */
	struct hlist_node *target;
};

static void unzip_find(struct hlist_head *head, size_t dest, size_t mask, struct unzip_fix *f)
{
	struct hlist_node **slot = &head->first, *n, *owner = NULL;

	f->slot = NULL;
	for (;;) {
		n = rcu_dereference_protected(*slot, "stripe mutex");
		if (!n)
			return;
		if ((node_entry(n)->hash & mask) != dest)
			break;
		owner = n;
		slot = &n->next;
	}
	while (n && (node_entry(n)->hash & mask) != dest)
		n = rcu_dereference_protected(n->next, "stripe mutex");
	f->slot = slot;
	f->owner = owner;
	f->target = n;
}

/*
 * One unzip step on old bucket @i (chains N[i] and N[i+osz]): fix the first
 * foreign link of each chain whose owner the other chain's path does not
 * reach.  Returns 1 if either chain still holds a foreign node.
 * Context: resizer, stripe mutex of @i held.
 */
static int unzip_bucket(struct ht *ht, size_t i, int *changed)
{
	struct ht_tbl *n = ht->rs_new;
	size_t osz = tbl_size(ht->rs_old);
	struct hlist_head *ha = &n->b[i], *hb = &n->b[i + osz];
	struct unzip_fix fa, fb;
	int oka, okb;

	unzip_find(ha, i, n->mask, &fa);
	unzip_find(hb, i + osz, n->mask, &fb);
	/* Preconditions first, against the state before this step. */
	oka = fa.slot && (!fa.owner || !on_path(hb, fa.owner));
	okb = fb.slot && (!fb.owner || !on_path(ha, fb.owner));
	if (oka) {
		/* Release for symmetry with the readers' consume loads;
		 * fa.target is already reachable. */
		rcu_assign_pointer(*fa.slot, fa.target);
		*changed = 1;
	}
	if (okb) {
		rcu_assign_pointer(*fb.slot, fb.target);
		*changed = 1;
	}
	return (fa.slot && (!oka || fa.target)) || (fb.slot && (!okb || fb.target));
}

/* Has a grace period passed since the last unzip change in @s?  Context: @s
 * locked.  The cookie covers the flavor's lookups; SRCU scanners walk chains
 * too, so a step also waits until none is inside (a scan that began before
 * the change has then ended).  A long scan thus holds the resize back; the
 * resizer's own waits (ht_wait_readers()) cover both kinds. */
static int stripe_unzip_ready(struct ht *ht, struct ht_stripe *s)
{
	return !s->unzip_dirty || (poll_state_synchronize_rcu(s->unzip_gp) &&
				   !srcu_readers_active(&ht->scan_srcu));
}

static void stripe_unzip_changed(struct ht_stripe *s)
{
	s->unzip_dirty = 1;
	s->unzip_gp = get_state_synchronize_rcu();
}

/*
 * One resizer pass over the buckets @list[0..n) of stripe @s (all in @s):
 * keeps in @list (compacted, count returned) those still zipped.  If @s is
 * not ready (a helping writer changed it within the current grace period),
 * nothing is done, everything stays listed and writers hold off until the
 * resizer's next pass.  Context: @s locked.
 */
static size_t unzip_stripe(struct ht *ht, struct ht_stripe *s, uint32_t *list, size_t n,
			   int *changed)
{
	size_t k, w = 0;
	int ch = 0;

	if (!stripe_unzip_ready(ht, s)) {
		s->worker_wants = 1;
		return n;
	}
	s->worker_wants = 0;
	for (k = 0; k < n; k++) {
		if (k + HT_PF_AHEAD < n) {
			prefetch_first(ht->rs_new, list[k + HT_PF_AHEAD]);
			prefetch_first(ht->rs_new, list[k + HT_PF_AHEAD] + tbl_size(ht->rs_old));
		}
		if (unzip_bucket(ht, list[k], &ch))
			list[w++] = list[k];
	}
	if (ch) {
		stripe_unzip_changed(s);
		*changed = 1;
	}
	return w;
}

/*
 * A writer that has just updated a stripe in S_GROW_UNZIP does one unzip step
 * on its own bucket pair, if a grace period has passed since the stripe's
 * last step and the resizer is not waiting for it.  This is back-pressure: a
 * writer that outruns the resizer (long chains) pays for part of the unzip,
 * so chains stop growing.  Context: stripe mutex held.
 */
static void writer_help_unzip(struct ht *ht, struct loc *l)
{
	int ch = 0;

	if (l->state != S_GROW_UNZIP || l->s->worker_wants || !stripe_unzip_ready(ht, l->s))
		return;
	unzip_bucket(ht, l->h & ht->rs_old->mask, &ch);
	if (ch)
		stripe_unzip_changed(l->s);
}

/*
 * Unzip until every chain is clean, one step per bucket per grace period.
 * The first pass visits every old bucket, stripe by stripe; later passes only
 * those still zipped (@todo, kept in stripe order), so a grow costs a few
 * full walks plus work proportional to the long chains.  Writers help (see
 * writer_help_unzip()); a bucket once clean stays clean (inserts go in front
 * of an own-destination node, deletes never add a link).
 */
static void unzip_all(struct ht *ht)
{
	size_t osz = tbl_size(ht->rs_old), i, ntodo = 0, k, w, start;
	uint32_t *todo = malloc(osz * sizeof(uint32_t));
	unsigned int si;
	int changed = 0, pending = 1;

	if (!todo) { /* no memory for the list: full passes, stripe by stripe */
		uint32_t one[64];

		while (pending) {
			pending = changed = 0;
			for (si = 0; si < ht->nstripes; si++) {
				struct ht_stripe *s = &ht->stripes[si];

				HT_CHECK(pthread_mutex_lock(&s->lock));
				for (i = si; i < osz;) {
					size_t n = 0;

					for (; i < osz && n < 64; i += ht->nstripes)
						one[n++] = (uint32_t)i;
					pending |= unzip_stripe(ht, s, one, n, &changed) != 0;
				}
				HT_CHECK(pthread_mutex_unlock(&s->lock));
			}
			if (pending || changed)
				ht_wait_readers(ht);
		}
		return;
	}
	for (si = 0; si < ht->nstripes; si++) {
		struct ht_stripe *s = &ht->stripes[si];

		start = ntodo;
		for (i = si; i < osz; i += ht->nstripes)
			todo[ntodo++] = (uint32_t)i;
		HT_CHECK(pthread_mutex_lock(&s->lock));
		ntodo = start + unzip_stripe(ht, s, todo + start, ntodo - start, &changed);
		HT_CHECK(pthread_mutex_unlock(&s->lock));
	}
	while (ntodo) {
		/* A reader may still stand on a node whose link we just moved. */
		ht_wait_readers(ht);
		atomic_fetch_add_explicit(&ht->st_passes, 1, memory_order_relaxed);
		changed = 0;
		for (k = 0, w = 0; k < ntodo;) {
			struct ht_stripe *s = stripe_of(ht, todo[k]);
			size_t e = k;

			while (e < ntodo && stripe_of(ht, todo[e]) == s)
				e++;
			HT_CHECK(pthread_mutex_lock(&s->lock));
			/* Compact in place: the kept entries of this stripe move down
			 * to todo[w...], which never overtakes todo[k...]. */
			memmove(todo + w, todo + k, (e - k) * sizeof(*todo));
			w += unzip_stripe(ht, s, todo + w, e - k, &changed);
			HT_CHECK(pthread_mutex_unlock(&s->lock));
			k = e;
		}
		ntodo = w;
	}
	if (changed)
		ht_wait_readers(ht);
	free(todo);
}

static int ht_grow(struct ht *ht)
{
	struct ht_tbl *o = rcu_dereference_protected(ht->tbl, "resize_lock");
	size_t osz = tbl_size(o), i;
	struct ht_tbl *n;
	unsigned int si;

	if (osz >= HT_MAX_BUCKETS)
		return 0;
	n = tbl_new(osz * 2);
	if (!n)
		return -ENOMEM;
	ht->rs_old = o;
	ht->rs_new = n;
	/* Prep: point the new heads into the old chains, stripe by stripe. */
	for (si = 0; si < ht->nstripes; si++) {
		struct ht_stripe *s = &ht->stripes[si];

		HT_CHECK(pthread_mutex_lock(&s->lock));
		for (i = si; i < osz; i += ht->nstripes) {
			struct hlist_node *x = o->b[i].first;
			int found_a = 0, found_b = 0;

			prefetch_first(o, i + HT_PF_AHEAD * ht->nstripes);

			for (; x && !(found_a && found_b); x = x->next) {
				size_t d = node_entry(x)->hash & n->mask;

				if (d == i && !found_a) {
					n->b[i].first = x; /* n is not yet published */
					found_a = 1;
				} else if (d != i && !found_b) {
					n->b[i + osz].first = x;
					found_b = 1;
				}
			}
		}
		s->state = S_GROW_PREP;
		HT_CHECK(pthread_mutex_unlock(&s->lock));
	}
	/* Release: publishes the new heads; pairs with find_rcu()'s load of tbl. */
	rcu_assign_pointer(ht->tbl, n);
	atomic_store_explicit(&ht->nbuckets, tbl_size(n), memory_order_relaxed);
	ht_wait_readers(ht); /* no reader starts from o any more */
	for (si = 0; si < ht->nstripes; si++) {
		HT_CHECK(pthread_mutex_lock(&ht->stripes[si].lock));
		ht->stripes[si].state = S_GROW_UNZIP;
		ht->stripes[si].unzip_dirty = 0;
		ht->stripes[si].worker_wants = 0;
		HT_CHECK(pthread_mutex_unlock(&ht->stripes[si].lock));
	}
	unzip_all(ht);
	for (si = 0; si < ht->nstripes; si++) {
		HT_CHECK(pthread_mutex_lock(&ht->stripes[si].lock));
		for (i = si; i < tbl_size(n); i += ht->nstripes) {
			prefetch_first(n, i + HT_PF_AHEAD * ht->nstripes);
			fix_pprev(&n->b[i]);
		}
		ht->stripes[si].state = S_NORMAL;
		HT_CHECK(pthread_mutex_unlock(&ht->stripes[si].lock));
	}
	ht->rs_old = ht->rs_new = NULL;
	free(o); /* unreachable since the grace period after publication */
	atomic_fetch_add_explicit(&ht->st_grows, 1, memory_order_relaxed);
	return 0;
}

static int ht_shrink(struct ht *ht)
{
	struct ht_tbl *o = rcu_dereference_protected(ht->tbl, "resize_lock");
	size_t nsz = tbl_size(o) / 2, i;
	struct ht_tbl *n;
	unsigned int si;

	if (nsz < ht->nstripes)
		return 0;
	n = tbl_new(nsz);
	if (!n)
		return -ENOMEM;
	ht->rs_old = o;
	ht->rs_new = n;
	for (si = 0; si < ht->nstripes; si++) {
		struct ht_stripe *s = &ht->stripes[si];

		HT_CHECK(pthread_mutex_lock(&s->lock));
		for (i = si; i < nsz; i += ht->nstripes) {
			struct hlist_node **slot = &o->b[i].first, *x;
			struct hlist_node *b = o->b[i + nsz].first;

			/* Zip: the tail of O[i] links to O[i+n]'s first node.
			 * Release: b is reachable by a new route; its contents
			 * must be visible to readers taking it (pairs with
			 * the rcu_dereference() in find_rcu()). */
			while ((x = *slot))
				slot = &x->next;
			if (b)
				rcu_assign_pointer(*slot, b);
			n->b[i].first = o->b[i].first ? o->b[i].first : b; /* unpublished */
		}
		s->state = S_SHRINK_PREP;
		HT_CHECK(pthread_mutex_unlock(&s->lock));
	}
	rcu_assign_pointer(ht->tbl, n);
	atomic_store_explicit(&ht->nbuckets, nsz, memory_order_relaxed);
	ht_wait_readers(ht); /* no reader starts from o any more */
	for (si = 0; si < ht->nstripes; si++) {
		HT_CHECK(pthread_mutex_lock(&ht->stripes[si].lock));
		for (i = si; i < nsz; i += ht->nstripes) {
			prefetch_first(n, i + HT_PF_AHEAD * ht->nstripes);
			fix_pprev(&n->b[i]);
		}
		ht->stripes[si].state = S_NORMAL;
		HT_CHECK(pthread_mutex_unlock(&ht->stripes[si].lock));
	}
	ht->rs_old = ht->rs_new = NULL;
	free(o);
	atomic_fetch_add_explicit(&ht->st_shrinks, 1, memory_order_relaxed);
	return 0;
}

/* Take resize_lock once no snapshot is running (snapshots hold resizes off). */
static void resize_lock_acquire(struct ht *ht)
{
	lock_blocking(&ht->resize_lock);
	while (atomic_load_explicit(&ht->snap_on, memory_order_relaxed)) {
		int was = qsbr_offline_begin();

		HT_CHECK(pthread_cond_wait(&ht->snap_cond, &ht->resize_lock));
		qsbr_offline_end(was);
	}
	atomic_store_explicit(&ht->resizing, 1, memory_order_relaxed);
}

static void resize_lock_release(struct ht *ht)
{
	atomic_store_explicit(&ht->resizing, 0, memory_order_relaxed);
	HT_CHECK(pthread_mutex_unlock(&ht->resize_lock));
}

int ht_resize(struct ht *ht, size_t nbuckets)
{
	size_t target = pow2_at_least(nbuckets);
	int ret = 0;

	if (target < ht->nstripes)
		target = ht->nstripes;
	resize_lock_acquire(ht);
	for (;;) {
		size_t cur = tbl_size(rcu_dereference_protected(ht->tbl, "resize_lock"));

		if (cur < target)
			ret = ht_grow(ht);
		else if (cur > target)
			ret = ht_shrink(ht);
		else
			break;
		if (ret)
			break;
	}
	resize_lock_release(ht);
	return ret;
}

int ht_reserve(struct ht *ht, size_t n)
{
	size_t want = ht_count(ht) + n;

	atomic_fetch_add_explicit(&ht->reserved, n, memory_order_relaxed);
	if (!ht->auto_resize || want <= atomic_load_explicit(&ht->nbuckets, memory_order_relaxed) ||
	    atomic_load_explicit(&ht->snap_on, memory_order_relaxed))
		return 0;
	return ht_resize(ht, want < HT_MAX_BUCKETS ? want : HT_MAX_BUCKETS);
}

void ht_reserve_done(struct ht *ht, size_t n)
{
	atomic_fetch_sub_explicit(&ht->reserved, n, memory_order_relaxed);
}

/*
 * Load factor policy: grow past 1 entry per bucket, shrink under 1/8.  One
 * step (double or halve), decided under resize_lock from the size it is about
 * to change, so an explicit ht_resize() that ran first is never undone by a
 * decision taken before it.  Returns 1 if it changed the size.
 */
static int auto_resize_step(struct ht *ht)
{
	int stepped = 0;

	resize_lock_acquire(ht);
	size_t nb = tbl_size(rcu_dereference_protected(ht->tbl, "resize_lock"));
	size_t c = ht_count(ht);

	if (c > nb && nb < HT_MAX_BUCKETS)
		stepped = ht_grow(ht) == 0;
	else if (c + atomic_load_explicit(&ht->reserved, memory_order_relaxed) < nb / 8 &&
		 nb > ht->nstripes)
		stepped = ht_shrink(ht) == 0;
	resize_lock_release(ht);
	return stepped;
}

static void auto_resize(struct ht *ht)
{
	while (auto_resize_step(ht)) {
		HT_CHECK(pthread_mutex_lock(&ht->wlock));
		int stop = ht->worker_stop;
		HT_CHECK(pthread_mutex_unlock(&ht->wlock));
		if (stop)
			return;
	}
}

static void *ht_worker(void *arg)
{
	struct ht *ht = arg;

	HT_CHECK(pthread_mutex_lock(&ht->wlock));
	for (;;) {
		struct ht_tbl *fl = ht->flushed;

		if (fl) {
			ht->flushed = NULL;
			HT_CHECK(pthread_mutex_unlock(&ht->wlock));
			ht_wait_readers(ht);
			while (fl) {
				struct ht_tbl *nx = fl->flush_next;

				tbl_free_entries(ht, fl);
				fl = nx;
			}
			HT_CHECK(pthread_mutex_lock(&ht->wlock));
			continue;
		}
		if (ht->worker_stop)
			break;
		/* While a snapshot runs, want_resize stays set (writers do not
		 * kick again); the snapshot's end kicks. */
		if (!atomic_load_explicit(&ht->snap_on, memory_order_relaxed) &&
		    atomic_exchange_explicit(&ht->want_resize, 0, memory_order_relaxed)) {
			HT_CHECK(pthread_mutex_unlock(&ht->wlock));
			auto_resize(ht);
			HT_CHECK(pthread_mutex_lock(&ht->wlock));
			continue;
		}
		HT_CHECK(pthread_cond_wait(&ht->wcond, &ht->wlock));
	}
	HT_CHECK(pthread_mutex_unlock(&ht->wlock));
	return NULL;
}

/* --- fork (ht.h) ------------------------------------------------------------------ */

/* Lock order as in the rest of the file: resize_lock, stripes ascending,
 * then wlock (writers kick the worker under a stripe mutex). */
void ht_fork_prepare(struct ht *ht)
{
	HT_CHECK(pthread_mutex_lock(&ht->resize_lock));
	for (unsigned int i = 0; i < ht->nstripes; i++)
		HT_CHECK(pthread_mutex_lock(&ht->stripes[i].lock));
	HT_CHECK(pthread_mutex_lock(&ht->wlock));
}

void ht_fork_prepare_reclaim(struct ht *ht)
{
	if (ht->reclaim)
		srcu_reclaim_fork_prepare(ht->reclaim);
}

void ht_fork_parent(struct ht *ht)
{
	if (ht->reclaim)
		srcu_reclaim_fork_parent(ht->reclaim);
	HT_CHECK(pthread_mutex_unlock(&ht->wlock));
	for (unsigned int i = ht->nstripes; i-- > 0;)
		HT_CHECK(pthread_mutex_unlock(&ht->stripes[i].lock));
	HT_CHECK(pthread_mutex_unlock(&ht->resize_lock));
}

int ht_fork_child(struct ht *ht, int no_scan_here)
{
	int rc = 0;

	/* The worker and the reclaimer did not come along; conditions they
	 * (or other lost threads) waited on start afresh. */
	ht->worker_started = 0;
	HT_CHECK(pthread_cond_init(&ht->wcond, NULL));
	HT_CHECK(pthread_cond_init(&ht->snap_cond, NULL));
	if (no_scan_here)
		srcu_fork_child_reset(&ht->scan_srcu);
	if (ht->reclaim)
		rc = srcu_reclaim_fork_child(ht->reclaim);
	HT_CHECK(pthread_mutex_unlock(&ht->wlock));
	for (unsigned int i = ht->nstripes; i-- > 0;)
		HT_CHECK(pthread_mutex_unlock(&ht->stripes[i].lock));
	HT_CHECK(pthread_mutex_unlock(&ht->resize_lock));
	/* A resize request the worker had taken is gone with it. */
	if (ht->auto_resize)
		atomic_store_explicit(&ht->want_resize, 0, memory_order_relaxed);
	return rc;
}

/* --- statistics, validation --------------------------------------------------------- */

void ht_stats(struct ht *ht, struct ht_stats *st)
{
	size_t b = 0;

	memset(st, 0, sizeof(*st));
	for (unsigned int i = 0; i < ht->nstripes; i++) {
		st->snapshot_held_bytes +=
		    atomic_load_explicit(&ht->stripes[i].snap_bytes, memory_order_relaxed);
		st->count += atomic_load_explicit(&ht->stripes[i].count, memory_order_relaxed);
		st->expires += atomic_load_explicit(&ht->stripes[i].expires, memory_order_relaxed);
		b += atomic_load_explicit(&ht->stripes[i].bytes, memory_order_relaxed);
	}
	st->entry_bytes = b;
	st->buckets = atomic_load_explicit(&ht->nbuckets, memory_order_relaxed);
	st->grows = atomic_load_explicit(&ht->st_grows, memory_order_relaxed);
	st->shrinks = atomic_load_explicit(&ht->st_shrinks, memory_order_relaxed);
	st->unzip_passes = atomic_load_explicit(&ht->st_passes, memory_order_relaxed);
	st->flushes = atomic_load_explicit(&ht->st_flushes, memory_order_relaxed);
	st->expired = atomic_load_explicit(&ht->st_expired, memory_order_relaxed);
	st->resizing = atomic_load_explicit(&ht->resizing, memory_order_relaxed);
	st->snapshot_running = atomic_load_explicit(&ht->snap_on, memory_order_relaxed);
	if (ht->reclaim) {
		struct srcu_reclaim_stats rs;

		srcu_reclaim_get_stats(ht->reclaim, &rs);
		st->retire_batches_waiting_scan = rs.waiting;
		st->retire_batches_freed = rs.freed;
	}
	st->retire_batches_freed +=
	    atomic_load_explicit(&ht->st_parked_freed, memory_order_relaxed);
}

int ht_validate(struct ht *ht)
{
	struct ht_tbl *t;
	size_t i, *cnt, *exp, *bytes;
	int bad = 0;

	cnt = calloc(ht->nstripes * 3, sizeof(size_t));
	if (!cnt)
		return -ENOMEM;
	exp = cnt + ht->nstripes;
	bytes = exp + ht->nstripes;
	lock_blocking(&ht->resize_lock);
	lock_all(ht);
	t = rcu_dereference_protected(ht->tbl, "every stripe");
	for (i = 0; i <= t->mask && bad < 10; i++) {
		struct hlist_node **prev = &t->b[i].first, *n;
		size_t len = 0;

		for (n = *prev; n; prev = &n->next, n = n->next) {
			struct ht_entry *e = node_entry(n);
			size_t s = e->hash & (ht->nstripes - 1);

			if ((e->hash & t->mask) != i) {
				fprintf(stderr, "ht_validate: bucket %zu holds hash %08x\n", i,
					e->hash);
				bad++;
			}
			if (n->pprev != prev) {
				fprintf(stderr, "ht_validate: bucket %zu: bad pprev\n", i);
				bad++;
			}
			if (++len > 100000000) {
				fprintf(stderr, "ht_validate: bucket %zu: cycle\n", i);
				bad++;
				break;
			}
			cnt[s]++;
			bytes[s] += ht_entry_size(e);
			if (e_has_expire(e))
				exp[s]++;
		}
	}
	for (i = 0; i < ht->nstripes && !bad; i++) {
		struct ht_stripe *s = &ht->stripes[i];

		if (s->state != S_NORMAL || cnt[i] != atomic_load(&s->count) ||
		    exp[i] != atomic_load(&s->expires) || bytes[i] != atomic_load(&s->bytes)) {
			fprintf(
			    stderr,
			    "ht_validate: stripe %zu: counters %zu/%zu/%zu, linked %zu/%zu/%zu\n",
			    i, atomic_load(&s->count), atomic_load(&s->expires),
			    atomic_load(&s->bytes), cnt[i], exp[i], bytes[i]);
			bad++;
		}
	}
	unlock_all(ht);
	HT_CHECK(pthread_mutex_unlock(&ht->resize_lock));
	free(cnt);
	return bad ? -EUCLEAN : 0;
}
