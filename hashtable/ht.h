/*
 * ht.h - the RCU hlist hash table: the data structure every request touches.
 *
 * What it is.  A table of `struct hlist_head` buckets (one pointer each) whose
 * entries are single allocations holding key, value, hash, an optional
 * absolute expiry (ms since the Unix epoch) and an access clock for eviction.
 * Entries are immutable once published except `access` (relaxed atomics): an
 * update builds a new entry and swaps it in with hlist_replace_rcu(); the old
 * one is freed after a grace period.  Deliberate absence: entries embed no
 * rcu_head (16 bytes a key); retired entries gather in batches of up to 32 per
 * lock stripe.  A small full batch is parked on its stripe with a polled
 * grace-period cookie and freed by the next writer that fills the stripe's
 * next batch, once the cookie completed and no ht_scan_all()/ht_snapshot()
 * (SRCU) reader is inside; any other batch takes one rcu_head through
 * ht_batch_retire() (flavor grace period, then SRCU).  Retirement in ht.c
 * explains both paths.
 *
 * Flavor.  The same sources are compiled once per RCU flavor:
 * -DRCU_FLAVOR_QSBR into $(B)/libht_qsbr.a (rcukv-server) and
 * -DRCU_FLAVOR_MEMB into $(B)/librcukv.a / .so (embedders, through rcukv.h).
 * "Read-side section" below means: QSBR, between two quiescent states of a
 * registered online thread; memb, between rcu_read_lock() and rcu_read_unlock()
 * of a registered thread.  A binary links exactly one of the two libraries.
 *
 * Who may call what.
 *  - Functions ending in _rcu must be called inside a read-side section; what
 *    they return is valid until that section ends (QSBR: the caller's next
 *    quiescent state or offline period).
 *  - Every other function may be called inside or outside a section by a
 *    registered thread (it enters its own section where it needs one), except
 *    ht_free(), ht_resize() and ht_scan_all(), which must be called outside
 *    any read-side section (QSBR: the thread holds no RCU reference).
 *  - QSBR callers keep reporting quiescent states as usual: the background
 *    resize and the bulk free after ht_flush() wait for grace periods, and a
 *    table that cannot resize keeps working with longer chains.
 *  - Writers serialize per lock stripe (a mutex per hash suffix), never
 *    globally.  A writer may block briefly on a stripe mutex; no function
 *    holds a stripe mutex while waiting for a grace period.
 *
 * Ordering guarantees (numbered for the tests, tests/hashtable/):
 *  1. A reader that finds an entry sees its key, value and expiry fully
 *     initialised (release store at publication, consume/acquire load in the
 *     walk).
 *  2. Per key, updates are linearizable: each set/del/rmw/txn on a key runs
 *     under that key's stripe mutex, and a reader sees either the entry before
 *     or the entry after an update, never neither (hlist_replace_rcu()).
 *  3. A reader walking a bucket while the table grows or shrinks neither
 *     misses a key present throughout its walk nor loops (relativistic
 *     resize, Triplett/McKenney/Walpole, USENIX ATC 2011; see ht.c).
 *  4. ht_scan_rcu() cursors visit every key present for the whole scan at
 *     least once, across any number of grows and shrinks (reverse-binary
 *     cursor); keys may be visited more than once.
 *  5. An entry whose expiry is <= ht_now_ms() is invisible to every reader
 *     function; writers that meet it remove it (lazy expiry).  Exception: on
 *     a thread inside ht_expiry_hold(1) no entry counts as expired, for
 *     readers, writers and the expiry cycle alike (a replica applying its
 *     master's stream).
 *  9. An ht_txn() is atomic for every lookup: a reader on any thread sees
 *     none of its changes or all of them, and ht_mfind_rcu() sees several
 *     keys at one moment (a sequence count per stripe, odd while a
 *     transaction holds it; tests/hashtable/test_ht_txn.c).
 *  8. ht_snapshot() reports exactly the entries live at its moment (taken
 *     with every stripe held: each update and each ht_txn() is wholly before
 *     or after it), each once, with their values of that moment
 *     (tests/hashtable/test_ht_snapshot.c).
 * Progress guarantees:
 *  6. Readers never lock, never wait for a writer or the resizer, and write
 *     shared memory only to refresh an entry's access clock when it changed;
 *     the one exception is a lookup in a stripe an ht_txn() holds at that
 *     moment, which waits for the transaction's end (for its function, never
 *     for a grace period), and an ht_mfind_rcu() that transactions overtook
 *     eight times, which then locks its keys' stripes once.
 *  7. Writers wait only for other writers on the same stripe and for the
 *     resizer's short per-stripe steps (each O(buckets per stripe)).  While
 *     the table grows, a writer may also do one unzip step on its own bucket
 *     (O(chain length)): back-pressure that keeps a fast writer from leaving
 *     the resize behind.
 *
 * Tortured by tests/hashtable/test_ht_torture.c (readers, writers, deleters,
 * an expirer and a resizer at once, poisoned frees), once per flavor.
 */
#ifndef HT_H
#define HT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "rcu/rculist.h"

/* Longest key and longest value accepted (Redis's proto-max-bulk-len). */
#define HT_MAX_KEY_LEN ((size_t)512 << 20)
#define HT_MAX_VAL_LEN ((size_t)512 << 20)

/* Expiry value meaning "no expiry".  Any other value is absolute ms since the
 * Unix epoch (CLOCK_REALTIME), the unit of Redis's PEXPIREAT; in librcukv's
 * build (-DHT_CLOCK_MONOTONIC), ms of CLOCK_MONOTONIC. */
#define HT_NO_EXPIRE ((int64_t)0)

/* klen's top bit: the entry carries an 8-byte expiry before its key. */
#define HT_E_HAS_EXPIRE 0x80000000u
#define HT_E_KLEN_MASK 0x7fffffffu
/* vlen's top bit: the value is "tagged", a mark the table carries for its
 * user and never interprets (the server's typed values: a tagged value starts
 * with the server's type byte; untagged values are plain strings).  Copies the
 * table makes (an expiry change, a rewritten layout) keep it. */
#define HT_E_TAGGED 0x80000000u
/* vlen's next bit: the value owns memory outside the entry (a list's chunks):
 * see ht_extern_hook().  No real length reaches it (HT_MAX_VAL_LEN is 2^29). */
#define HT_E_EXTERN 0x40000000u
#define HT_E_VLEN_MASK 0x3fffffffu
/* To store a tagged value, OR this into the @vlen argument of ht_set(),
 * ht_rmw_alloc() and ht_txn_set() (a bit no real length reaches). */
#define HT_VAL_TAGGED ((size_t)1 << 62)
/* OR this into @vlen (with HT_VAL_TAGGED) to store a value that owns external
 * memory: the table calls the ht_extern_hook() functions for it.  Such a value
 * is at least 8 bytes long and its last 8 bytes are a uint64_t: the bytes of
 * external memory it owns, which ht_entry_size() adds. */
#define HT_VAL_EXTERN ((size_t)1 << 61)

/*
 * One key-value pair, one allocation: [header][int64 expiry if flagged][key][value].
 * Immutable after publication except `access`.  Readers use the accessors.
 */
struct ht_entry {
	struct hlist_node node;	 /* next: RCU-protected; pprev: stripe mutex only,
				  * and after unlinking the retired-list link */
	uint32_t hash;		 /* low 32 bits of ht_hash(key); bucket = hash & mask */
	_Atomic uint32_t access; /* eviction clock; readers and writers, relaxed */
	uint32_t klen;		 /* key length | HT_E_HAS_EXPIRE */
	uint32_t vlen;		 /* value length | HT_E_TAGGED */
	char data[];		 /* see above; 8-byte aligned */
};

static inline const void *ht_entry_key(const struct ht_entry *e)
{
	return e->data + ((e->klen & HT_E_HAS_EXPIRE) ? 8 : 0);
}

static inline size_t ht_entry_klen(const struct ht_entry *e)
{
	return e->klen & HT_E_KLEN_MASK;
}

static inline const void *ht_entry_val(const struct ht_entry *e)
{
	return (const char *)ht_entry_key(e) + ht_entry_klen(e);
}

static inline size_t ht_entry_vlen(const struct ht_entry *e)
{
	return e->vlen & HT_E_VLEN_MASK;
}

/* ht_entry_tagged() - whether the value was stored with HT_VAL_TAGGED. */
static inline int ht_entry_tagged(const struct ht_entry *e)
{
	return (e->vlen & HT_E_TAGGED) != 0;
}

/* ht_entry_vlen_arg() - the @vlen argument that stores @e's value again
 * with its tag (RENAME, COPY, MOVE). */
static inline size_t ht_entry_vlen_arg(const struct ht_entry *e)
{
	return ht_entry_vlen(e) | (ht_entry_tagged(e) ? HT_VAL_TAGGED : 0) |
	       ((e->vlen & HT_E_EXTERN) ? HT_VAL_EXTERN : 0);
}

/* ht_entry_extern() - whether the value was stored with HT_VAL_EXTERN.  A
 * caller that stores a copy of such a value (RENAME, COPY, MOVE) must first
 * take a reference of its own to what it points to: the new entry owns it. */
static inline int ht_entry_extern(const struct ht_entry *e)
{
	return (e->vlen & HT_E_EXTERN) != 0;
}

/* ht_entry_extern_bytes() - the external bytes an HT_VAL_EXTERN value owns
 * (its last 8 bytes), 0 for any other. */
static inline size_t ht_entry_extern_bytes(const struct ht_entry *e)
{
	uint64_t x = 0;

	if (e->vlen & HT_E_EXTERN)
		__builtin_memcpy(&x, (const char *)ht_entry_val(e) + ht_entry_vlen(e) - 8, 8);
	return (size_t)x;
}

/* ht_entry_expire() - absolute expiry in ms, or HT_NO_EXPIRE. */
static inline int64_t ht_entry_expire(const struct ht_entry *e)
{
	int64_t x;

	if (!(e->klen & HT_E_HAS_EXPIRE))
		return HT_NO_EXPIRE;
	__builtin_memcpy(&x, e->data, sizeof(x));
	return x;
}

/* ht_entry_access() - the access clock last stored (relaxed load). */
static inline uint32_t ht_entry_access(const struct ht_entry *e)
{
	return atomic_load_explicit(&((struct ht_entry *)e)->access, memory_order_relaxed);
}

/* ht_entry_access_store() - replace the access clock (RESTORE's IDLETIME and
 * FREQ; relaxed store, as lookups store it).  Context: inside a read-side
 * section holding @e. */
static inline void ht_entry_access_store(const struct ht_entry *e, uint32_t w)
{
	atomic_store_explicit(&((struct ht_entry *)e)->access, w, memory_order_relaxed);
}

/* ht_entry_alloc_size() - bytes allocated for @e itself, as requested from
 * malloc. */
static inline size_t ht_entry_alloc_size(const struct ht_entry *e)
{
	return sizeof(*e) + ((e->klen & HT_E_HAS_EXPIRE) ? 8 : 0) + ht_entry_klen(e) + ht_entry_vlen(e);
}

/* ht_entry_size() - the memory @e accounts for: its allocation plus the
 * external memory an HT_VAL_EXTERN value owns (memory accounting, eviction,
 * ht_stats().entry_bytes). */
static inline size_t ht_entry_size(const struct ht_entry *e)
{
	return ht_entry_alloc_size(e) + ht_entry_extern_bytes(e);
}

struct ht;

struct ht_options {
	size_t initial_buckets; /* rounded up to a power of two (at least `stripes`);
				 * 0: 4096 */
	unsigned int stripes;	/* writer lock stripes, a power of two (0: 256;
				 * at most 32 in a ThreadSanitizer build);
				 * also the smallest bucket count */
	int no_auto_resize;	/* 1: only ht_resize() changes the size */
	uint64_t seed;		/* hash seed; 0: random per table */
	int poison_frees;	/* 1: fill entries with 0x6b before freeing (tests) */
};

/**
 * ht_new() - create an empty table.
 * @opt: options, or NULL for defaults.
 * Context: any thread.  The background thread (resize, bulk free) starts on
 * first need; it reads no entry, so it does not register with the flavor: it
 * only waits for grace periods.
 * Return: the table, or NULL (errno ENOMEM or EINVAL).
 */
struct ht *ht_new(const struct ht_options *opt);

/**
 * ht_free() - destroy the table: stop its thread, wait for pending frees
 * (rcu_barrier()), free every entry and the buckets.
 * Context: no other thread uses @ht any more; outside any read-side section.
 * Blocks.
 */
void ht_free(struct ht *ht);

/* ht_hash() - the table's hash function (also used by the benchmark). */
uint64_t ht_hash(const void *key, size_t len, uint64_t seed);

/* ht_now_ms() - CLOCK_REALTIME in ms (CLOCK_MONOTONIC with
 * -DHT_CLOCK_MONOTONIC), the clock expiry is compared with. */
int64_t ht_now_ms(void);

/**
 * ht_clock_set() - set the access clock that lookups store into entries they
 * find (only when different, so hot reads do not write).  Default 0.
 * In LFU mode (ht_lfu_set()) the clock is a time in minutes (24 bits used).
 * Context: any thread.
 */
void ht_clock_set(struct ht *ht, uint32_t clock);

/*
 * LFU mode (Redis's maxmemory-policy *-lfu): the access word holds
 * (minutes << 8) | counter, minutes being the clock (24 bits) when the counter
 * was last decayed or incremented, counter an 8-bit logarithmic access count.
 * A lookup decays the counter by one per @decay_min minutes elapsed, then
 * increments it with probability 1 / ((counter - HT_LFU_INIT) * log_factor + 1),
 * and stores it back with the current minutes (only when that changes the
 * word).  New entries start at HT_LFU_INIT; a SET over a live key keeps the
 * old entry's word, as Redis keeps the object's LFU data on overwrite.
 */
#define HT_LFU_INIT 5u

/**
 * ht_lfu_set() - switch the meaning of the access word.
 * @lfu: 0 LRU (lookups store the clock), 1 LFU as above.
 * @log_factor, @decay_min: lfu-log-factor, lfu-decay-time (0: never decay).
 * Context: any thread; words already stored keep their bits (as in Redis,
 * switching policy at run time takes a while to settle).
 */
void ht_lfu_set(struct ht *ht, int lfu, uint32_t log_factor, uint32_t decay_min);

/* ht_lfu_decayed() - the counter of LFU word @w at @now_min minutes. */
static inline uint32_t ht_lfu_decayed(uint32_t w, uint32_t now_min, uint32_t decay_min)
{
	uint32_t ctr = w & 0xffu, elapsed = (now_min - (w >> 8)) & 0xffffffu, periods;

	if (!decay_min)
		return ctr;
	periods = elapsed / decay_min;
	return periods > ctr ? 0 : ctr - periods;
}

/**
 * ht_expiry_hold() - while @on, this thread sees every entry as live, however
 * old its expiry: lookups find it, writers act on it instead of removing it
 * (no HT_WATCH_EXPIRED, no "expired" count).  A replica sets it around its
 * master's commands, which must act on exactly what the master saw (Redis
 * 7.0's expireIfNeeded() returns "not expired" for the master client).
 * Context: any thread; the flag is per thread, so other threads are unaffected.
 * Return: the previous setting (for nesting).
 */
int ht_expiry_hold(int on);

/* --- read side ------------------------------------------------------------- */

/**
 * ht_find_rcu() - zero-copy lookup.
 * Context: inside a read-side section.  Never blocks, never locks.
 * Return: the live (unexpired) entry for the key, or NULL.  Valid until the
 * section ends; never freed by the caller.
 */
const struct ht_entry *ht_find_rcu(struct ht *ht, const void *key, size_t klen);

/* ht_peek_rcu() - as ht_find_rcu() but leaves the access word alone (OBJECT,
 * MEMORY USAGE: looking does not count as an access).  Context: as above. */
const struct ht_entry *ht_peek_rcu(struct ht *ht, const void *key, size_t klen);

/**
 * ht_prefetch() - start loading, in parallel, the bucket heads and first
 * entries that lookups of @n keys will touch, so that the lookups (or
 * updates) that follow find them in cache.  A hint: changes nothing, and
 * keys beyond HT_PREFETCH_MAX are ignored.  Worth it for a batch of keys
 * known in advance (a pipeline of commands).
 * @for_write: bit i set: key i is about to be updated; its stripe mutex is
 * prefetched for writing too.
 * Context: inside a read-side section.  Never blocks, never locks.
 */
#define HT_PREFETCH_MAX 32
void ht_prefetch(struct ht *ht, size_t n, const void *const keys[], const size_t klens[],
		 uint32_t for_write);

/**
 * ht_get() - copy-out lookup into a caller buffer.
 * @buf, @bufsize: receives min(value length, @bufsize) bytes; may be NULL/0.
 * @expire: if not NULL, receives the expiry (HT_NO_EXPIRE if none).
 * Context: registered thread, inside or outside a section.  Never blocks.
 * Return: the full value length (>= 0; compare with @bufsize to detect
 * truncation) or -ENOENT.
 */
long long ht_get(struct ht *ht, const void *key, size_t klen, void *buf, size_t bufsize,
		 int64_t *expire);

/**
 * ht_get_alloc() - copy-out lookup into a new buffer.
 * @val: receives a malloc()ed copy of the value (NUL-terminated for
 * convenience, the NUL not counted); the caller frees it with free().
 * @vlen: receives the value length.
 * Context: as ht_get().  Return: 0, -ENOENT or -ENOMEM.
 */
int ht_get_alloc(struct ht *ht, const void *key, size_t klen, void **val, size_t *vlen,
		 int64_t *expire);

/* ht_exists() - 1 if a live entry exists, else 0.  Context: as ht_get(). */
int ht_exists(struct ht *ht, const void *key, size_t klen);

/* --- write side ------------------------------------------------------------ */

/* ht_set() flags (Redis SET options). */
#define HT_SET_NX 0x1u	    /* store only if absent */
#define HT_SET_XX 0x2u	    /* store only if present */
#define HT_SET_KEEPTTL 0x4u /* keep the existing expiry; @expire_ms ignored */

/**
 * ht_set() - store a value.
 * @expire_ms: absolute expiry or HT_NO_EXPIRE (ignored with HT_SET_KEEPTTL).
 *             A value <= ht_now_ms() stores an entry that is at once invisible.
 * @flags: HT_SET_* above.
 * @old: if not NULL, receives the previous live entry or NULL (SET ... GET);
 *       it stays valid only inside the caller's read-side section, so a
 *       caller that passes @old must be inside one.  Under NX/XX it receives
 *       the current entry even when nothing is stored.
 * Context: registered thread.  Takes the key's stripe mutex; may wait on the
 * flavor's call_rcu() backlog limit (memb: only outside a section).
 * Return: 0 stored, -EEXIST (NX, key present), -ENOENT (XX, key absent),
 * -E2BIG (key or value too long), -ENOMEM.
 */
int ht_set(struct ht *ht, const void *key, size_t klen, const void *val, size_t vlen,
	   int64_t expire_ms, unsigned int flags, const struct ht_entry **old);

/**
 * ht_del() - remove a key.
 * Context: as ht_set().  Return: 0 removed, -ENOENT absent (or expired).
 */
int ht_del(struct ht *ht, const void *key, size_t klen);

/* ht_expire_set() flags (Redis 7 EXPIRE options). */
#define HT_EXPIRE_NX 0x1u /* only if the key has no expiry */
#define HT_EXPIRE_XX 0x2u /* only if the key has an expiry */
#define HT_EXPIRE_GT 0x4u /* only if greater than the current one (none = infinite) */
#define HT_EXPIRE_LT 0x8u /* only if less than the current one (none = infinite) */

/**
 * ht_expire_set() - set an absolute expiry (replaces the entry).
 * Context: as ht_set().
 * Return: 1 set, 0 condition not met, -ENOENT absent, -ENOMEM, -EINVAL
 * (@expire_ms == HT_NO_EXPIRE: use ht_expire_clear()).
 */
int ht_expire_set(struct ht *ht, const void *key, size_t klen, int64_t expire_ms,
		  unsigned int flags);

/**
 * ht_expire_get() - the key's expiry.
 * Context: as ht_get().  Return: 0 with *@expire_ms (HT_NO_EXPIRE if none),
 * or -ENOENT.
 */
int ht_expire_get(struct ht *ht, const void *key, size_t klen, int64_t *expire_ms);

/**
 * ht_expire_clear() - remove the key's expiry (PERSIST).
 * Context: as ht_set().  Return: 1 removed, 0 it had none, -ENOENT, -ENOMEM.
 */
int ht_expire_clear(struct ht *ht, const void *key, size_t klen);

/*
 * Read-modify-write (INCR, APPEND, SETRANGE, INCRBYFLOAT, ...).  The callback
 * runs under the key's stripe mutex, so no concurrent update is lost.
 */
struct ht_rmw {
	/* in: the current live value, if any */
	const struct ht_entry *old; /* NULL if absent; valid during the callback */
	/* in/out: the new entry's expiry; starts as old's (or HT_NO_EXPIRE) */
	int64_t expire_ms;
	/* private */
	struct ht *ht;
	struct ht_entry *nu;
	uint32_t hash;
	const void *key;
	size_t klen;
};

#define HT_RMW_STORE 0	/* store the value written into ht_rmw_alloc()'s buffer */
#define HT_RMW_KEEP 1	/* change nothing */
#define HT_RMW_DELETE 2 /* delete the key */

/**
 * ht_rmw_alloc() - inside an rmw callback: allocate the new value.
 * Return: a buffer of @vlen bytes to fill (it is the new entry's value), or
 * NULL (ENOMEM, or @vlen > HT_MAX_VAL_LEN); calling it again replaces the
 * earlier buffer.
 */
void *ht_rmw_alloc(struct ht_rmw *r, size_t vlen);

/* Return HT_RMW_* or a negative errno (nothing is changed, and ht_rmw()
 * returns it).  Must not block long or call ht_* on the same table. */
typedef int (*ht_rmw_fn)(struct ht_rmw *r, void *arg);

/**
 * ht_rmw() - read, modify, write one key atomically.
 * Context: as ht_set(); @fn runs with the stripe mutex held.
 * Return: what @fn returned (HT_RMW_*), -ENOMEM, or @fn's negative errno.
 * HT_RMW_STORE without a successful ht_rmw_alloc() returns -EINVAL.
 */
int ht_rmw(struct ht *ht, const void *key, size_t klen, ht_rmw_fn fn, void *arg);

/*
 * Multi-key transactions (MSET, MSETNX, RENAME, RENAMENX, COPY): the stripes
 * of all keys are locked in ascending order, then @fn runs and may read and
 * write those keys (and only those, by index).
 */
struct ht_txn;
typedef int (*ht_txn_fn)(struct ht_txn *tx, void *arg);

/**
 * ht_txn() - run @fn with the stripes of @keys locked, atomically for every
 * reader (guarantee 9).
 * @n: number of keys, at most HT_TXN_MAX_KEYS; duplicates are allowed.
 * Context: as ht_set().  @fn may use ht_txn_get/set/del, and may call the
 * single-key writers (ht_set(), ht_del(), ht_rmw(), ht_expire_*(),
 * ht_watch() is not one) and ht_txn() itself on @ht for keys among @keys
 * only: those find their stripes held and leave them so; a key outside @keys
 * is fatal (it would break the lock order).  Lookups from @fn's thread see
 * the transaction's changes at once.  @fn must not call the whole-table
 * functions (ht_flush(), ht_snapshot(), ht_resize(), ...).
 * Return: what @fn returned, -EINVAL (n == 0 or too many keys), -E2BIG.
 */
#define HT_TXN_MAX_KEYS ((size_t)1 << 30) /* more than a command can carry (argc is an int) */
int ht_txn(struct ht *ht, size_t n, const void *const keys[], const size_t klens[], ht_txn_fn fn,
	   void *arg);

/**
 * ht_mfind_rcu() - ht_find_rcu() of @n keys at one moment: out[i] is key i's
 * entry or NULL, and no ht_txn() is half seen (guarantee 9).
 * Context: as ht_find_rcu().
 */
void ht_mfind_rcu(struct ht *ht, size_t n, const void *const keys[], const size_t klens[],
		  const struct ht_entry *out[]);

/* What changed, for the watch hook. */
#define HT_WATCH_STORE 0   /* replaced: set, rmw, txn, an expiry change */
#define HT_WATCH_DELETE 1  /* deleted: del, an rmw or txn delete, eviction */
#define HT_WATCH_EXPIRED 2 /* removed because its time had passed (lazy or active) */
#define HT_WATCH_INSERT 3  /* inserted: the key had no entry (or an expired one, removed first) */

/**
 * ht_watch_hook() - have @fn called for every change of a key whose stripe
 * has watchers (ht_watch()), or of any key while ht_watch_all() is on: an
 * insert or replacement, a delete, an expired key's removal (@kind), after
 * the change is visible to lookups, with that stripe's mutex held.  @fn
 * must be short, may take its own locks (nested inside the stripe's), and
 * must not call ht_* on @ht.  ht_flush() calls nothing.
 * Context: once, before any writer runs.
 */
void ht_watch_hook(struct ht *ht, void (*fn)(void *arg, const void *key, size_t klen, int kind),
		   void *arg);
/**
 * ht_remove_hook() - have @fn called with every entry that leaves the table:
 * @kind HT_WATCH_DELETE (del, an rmw or txn delete), HT_WATCH_EXPIRED (lazy
 * or active expiry) or HT_WATCH_STORE (replaced by a new entry for its key:
 * set, rmw, txn, an expiry change), after the change is visible, with the
 * key's stripe mutex held.  @old is unlinked but not yet freed: its key and
 * value are valid during the call only.  @fn must be short, may take its own
 * locks (nested inside the stripe's), and must not call ht_* on @ht.
 * ht_flush() and ht_free() call nothing.  Without a hook the cost is one
 * pointer test per removal.
 * Context: once, before any writer runs.
 */
void ht_remove_hook(struct ht *ht, void (*fn)(void *arg, const struct ht_entry *old, int kind),
		    void *arg);
/**
 * ht_extern_hook() - the functions that manage the external memory of
 * HT_VAL_EXTERN values.  @free_fn is called once for every such entry when
 * the table really frees it: after its grace periods (the flavor's and the
 * scan domain's, so no lookup, scan or snapshot still sees it), and also by
 * ht_flush()'s bulk free and ht_free(); @dup_fn is called when the table
 * itself copies such a value into a new entry (an expiry change), so that
 * the copy owns a reference of its own.  Both get the entry (valid during
 * the call), run on whatever thread frees or copies (a writer under a stripe
 * mutex, the reclaimer, the table's worker), must be short, must not block
 * and must not call ht_* on @ht.  Without a hook such values leak their
 * external memory.  An rmw callback that built an external value and then
 * fails, or whose value the table cannot store (-ENOMEM), keeps its
 * ownership: the table frees only the entry.
 * Context: once, before any writer runs.
 */
void ht_extern_hook(struct ht *ht, void (*dup_fn)(void *arg, const struct ht_entry *e),
		    void (*free_fn)(void *arg, const struct ht_entry *e), void *arg);
/* ht_watch_all() - @delta +1: one more user wants the hook called for every
 * change; -1: one less (with none left, only stripes with watchers call it).
 * A writer already past its check when this turns on may still skip the
 * hook: wait for a grace period after it to be sure no writer does.  Any
 * thread.  ht_watch_all_on(): whether any user wants it. */
void ht_watch_all(struct ht *ht, int delta);
int ht_watch_all_on(struct ht *ht);
/**
 * ht_watch() - add @delta (+1 or -1) to the watchers of @key's stripe, and
 * return whether @key is present (1) or not (0), at one moment under the
 * stripe mutex: a publication after it calls the hook; -E2BIG.
 * Context: as ht_set(), not inside an ht_txn() function.
 */
int ht_watch(struct ht *ht, const void *key, size_t klen, int delta);

/* Inside @fn: the live entry of key @i or NULL.  Valid until @fn returns (and,
 * if the caller is in a read-side section, until it ends). */
const struct ht_entry *ht_txn_get(struct ht_txn *tx, size_t i);
/* Inside @fn: store key @i.  Return 0, -E2BIG, -ENOMEM, -EINVAL (bad @i). */
int ht_txn_set(struct ht_txn *tx, size_t i, const void *val, size_t vlen, int64_t expire_ms);
/* Inside @fn: delete key @i.  Return 0 or -ENOENT. */
int ht_txn_del(struct ht_txn *tx, size_t i);

/* --- whole table ----------------------------------------------------------- */

/* ht_count() - live entries, plus expired ones not yet removed.  Context: any
 * thread; sums per-stripe counters (O(stripes)), a snapshot. */
size_t ht_count(struct ht *ht);
/* ht_count_expires() - entries that carry an expiry (Redis "expires="). */
size_t ht_count_expires(struct ht *ht);

/**
 * ht_flush() - remove every entry (FLUSHDB).  Readers see the table empty
 * from the return; the entries are freed by the background thread after a
 * grace period.
 * Context: registered thread, outside any read-side section (QSBR: holding no
 * RCU reference).  Waits for a resize in progress to finish.
 * Return: 0 or -ENOMEM.
 */
int ht_flush(struct ht *ht);

/**
 * ht_random_rcu() - a random live entry (RANDOMKEY), or NULL if none is found.
 * @seed: the caller's PRNG state (any value; updated).
 * Context: inside a read-side section.  Never locks.
 */
const struct ht_entry *ht_random_rcu(struct ht *ht, uint64_t *seed);

/**
 * ht_sample_rcu() - up to @n live entries from random buckets (eviction pools):
 * at least one whenever the table holds one (a sparse table is walked).
 * @volatile_only: only entries with an expiry.
 * Context: inside a read-side section.  Return: entries stored in @out.
 */
size_t ht_sample_rcu(struct ht *ht, const struct ht_entry **out, size_t n, int volatile_only,
		     uint64_t *seed);

/* Callback of the scans: return 0 to continue, non-zero to stop. */
typedef int (*ht_scan_fn)(const struct ht_entry *e, void *arg);

/**
 * ht_scan_rcu() - one SCAN step with a stateless reverse-binary cursor.
 * @cursor: 0 to start, then the value returned by the previous call.
 * @min_entries: visit buckets until at least this many live entries were
 *   reported (or 10 times as many buckets were visited, or the scan ended).
 * @fn: called for each live entry of the visited buckets (may be called for an
 *   entry more than once over a whole scan).  Return non-zero to stop after
 *   the current bucket.
 * Context: inside a read-side section.  Never locks.
 * Return: the next cursor; 0 when the scan is complete.
 * Guarantee 4: every key present from the first call to the last is reported.
 */
uint64_t ht_scan_rcu(struct ht *ht, uint64_t cursor, size_t min_entries, ht_scan_fn fn, void *arg);

/**
 * ht_scan_all() - walk the whole table (KEYS, snapshots).  Guarantee 4 holds.
 * @fn: called for each entry inside one SRCU read-side section of the table's
 *   scan domain that lasts the whole scan, and outside any section of the
 *   flavor (a QSBR caller is offline meanwhile): @fn may block and sleep
 *   without delaying the flavor's grace periods, and every entry it was given
 *   stays valid until ht_scan_all() returns.  A long scan holds back resizes
 *   and the freeing of replaced entries (not lookups or writes).  @fn must not
 *   call ht_free(), ht_resize() or ht_scan_all() on the same table.
 * Context: registered thread outside any read-side section, holding no RCU
 * reference.
 * Return: 0, or the non-zero value that stopped the scan.
 */
int ht_scan_all(struct ht *ht, ht_scan_fn fn, void *arg);

/**
 * ht_snapshot() - a point-in-time walk of the table.
 * @fn: called once for each entry that was live (present and not expired) at the
 *   snapshot's moment, with the value it had then, even while writers change or delete
 *   it meanwhile; never for an entry created later.  An ht_txn() (MSET, RENAME...)
 *   appears wholly or not at all.  @fn may block and sleep (disk I/O) without delaying
 *   the flavor's grace periods or any lookup; every entry it was given stays valid
 *   until ht_snapshot() returns.  @fn returns non-zero to stop.
 * @begun: if not NULL, called exactly once at the snapshot's moment (the
 *   linearization point) with @arg; it runs while writers are held off, so it must be
 *   short, must not block and must not touch the table.
 * @at_ms: if not NULL, receives the snapshot's time (ht_now_ms() at the moment), the
 *   clock against which expiry was judged.
 * Context: as ht_scan_all(): registered thread outside any read-side section.
 *   At most one ht_snapshot() runs per table at a time (-EBUSY otherwise).
 *   Waits for a resize in progress to end, then holds resizes off until it
 *   returns (ht_resize() waits; the background resizer catches up after).
 *   ht_flush() during the walk empties the table at once, as ever; the walk
 *   goes on over the detached entries, which are freed after it.
 *   Writers pay for the snapshot only on the first change to each bucket
 *   (recording that bucket's entries); with no snapshot, one load.
 *   Memory: entries unlinked while it runs (and a table flushed meanwhile)
 *   stay allocated until it returns: ht_stats.snapshot_held_bytes.
 * Return: 0, the non-zero value that stopped the walk, or a negative errno
 *   (-EBUSY, -ENOMEM; -ENOMEM also if a writer could not record the entries
 *   of a bucket, after the walk ran: the dump is then incomplete).
 */
int ht_snapshot(struct ht *ht, ht_scan_fn fn, void (*begun)(void *arg), void *arg,
		int64_t *at_ms);

/**
 * ht_expire_cycle() - active expiry: from an internal cursor, look at up to
 * @max_samples entries that carry an expiry and remove the expired ones.
 * @max_buckets: bound on buckets visited (0: 20 * @max_samples).
 * @sampled, @expired: if not NULL, receive what was looked at and removed.
 * Context: as ht_set().  Return: the number removed.
 */
size_t ht_expire_cycle(struct ht *ht, size_t max_samples, size_t max_buckets, size_t *sampled,
		       size_t *expired);

/**
 * ht_resize() - change the bucket count now (rounded to a power of two,
 * clamped to [stripes, 2^31]); grows or shrinks one doubling at a time.
 * Context: registered thread outside any read-side section; blocks for grace
 * periods, and until a running ht_snapshot() returns.  Serialized with the
 * background resizer and ht_flush().
 * Return: 0 or -ENOMEM.
 */
int ht_resize(struct ht *ht, size_t nbuckets);

/**
 * ht_reserve() - make room for @n more entries: if the table would go past
 * its load factor (one entry per bucket) with them, grow it now.  For one
 * caller about to insert many keys in one go while it stays online (an MSET
 * of a million keys): the background resizer cannot grow the table
 * meanwhile, since growing waits for grace periods and they wait for that
 * caller, so every insert would walk longer chains (measured: MSET of 1M
 * keys into an empty table did not answer within 30 s).  Does nothing when
 * auto-resize is off or while a snapshot runs (a grow would wait for its
 * end).  Until ht_reserve_done(@n), the background resizer counts the @n
 * entries as there (it does not shrink the table back meanwhile).
 * Context: as ht_resize(); the caller holds no reference to entries (it goes
 * offline while it waits).  Return: 0 or -ENOMEM (the reservation holds
 * either way: call ht_reserve_done()).
 */
int ht_reserve(struct ht *ht, size_t n);
/** ht_reserve_done() - the @n entries of an ht_reserve() are in (or not
 * coming).  Context: any. */
void ht_reserve_done(struct ht *ht, size_t n);

struct ht_stats {
	size_t count;		    /* entries (as ht_count()) */
	size_t expires;		    /* entries with an expiry */
	size_t buckets;		    /* current bucket count */
	size_t entry_bytes;	    /* sum of ht_entry_size() of entries in the table */
	unsigned long grows;	    /* completed grows */
	unsigned long shrinks;	    /* completed shrinks */
	unsigned long unzip_passes; /* grace periods spent unzipping */
	unsigned long flushes;	    /* ht_flush() calls */
	unsigned long expired;	    /* entries removed because they had expired */
	int resizing;		    /* a resize is in progress */
	/* Batches of replaced entries past the flavor's grace period, waiting
	 * for an SRCU grace period of the scan domain (a running ht_scan_all()
	 * holds them), and batches freed so far. */
	unsigned long retire_batches_waiting_scan;
	unsigned long retire_batches_freed;
	/* ht_snapshot(): bytes of replaced/deleted entries kept alive for a
	 * running snapshot, and whether one runs. */
	size_t snapshot_held_bytes;
	int snapshot_running;
};

/**
 * ht_retire_flush() - send every stripe's retired entries still waiting for
 * company (at most 31 per stripe) and its parked batch down the grace-period
 * path now (a parked batch whose grace period is over is freed at once), so
 * that memory freed by deletions comes back after one grace period even when
 * few writes follow (maxmemory eviction).  Stripes whose mutex is busy are
 * skipped.
 * @idle_only: 1: only stripes that retired nothing since the previous
 * idle_only call (their writers stopped; busy stripes send their own batches
 * and keep the writers' cheap path); 0: every stripe.
 * Context: registered thread, holding no stripe mutex and, QSBR, no
 * reference it still needs freed memory for; O(stripes).
 * Return: the bytes of the waiting entries sent.
 */
size_t ht_retire_flush(struct ht *ht, int idle_only);

/**
 * ht_reclaim_progress() - bytes (ht_entry_size()) of entries unlinked so far
 * (@retired: waiting for company, parked, waiting for a grace period, or
 * freed) and of those freed after their grace periods (@freed), both
 * cumulative since ht_new(): @retired - @freed is what deletions and
 * overwrites hold that readers may still see (maxmemory eviction uses it not
 * to evict again for memory already on its way back).  Not counted: entries
 * freed in bulk by ht_flush() and ht_free().
 * Context: any thread; O(stripes) relaxed loads.
 */
void ht_reclaim_progress(struct ht *ht, size_t *retired, size_t *freed);

/*
 * fork() without exec (librcukv's pthread_atfork handlers):
 *  - ht_fork_prepare(): take resize_lock, every stripe mutex and the worker's
 *    lock, so no resize, write or worker step is half-done in the copy;
 *  - the flavor's before-fork hook (rcu_memb_before_fork());
 *  - ht_fork_prepare_reclaim(): hold the SRCU reclaimer (srcu.h);
 * then ht_fork_parent() in the parent, or in the child ht_fork_child(),
 * which releases the same, restarts the reclaimer thread, marks the worker
 * thread absent (it starts again on demand) and, with @no_scan_here (the
 * forking thread is inside no ht_scan_all() of @ht), forgets the scans the
 * parent's other threads ran.  A flushed table the worker was freeing at the
 * fork leaks in the child.
 * Context: the forking thread, outside any read-side section, holding no
 * stripe mutex.  ht_fork_child() return: 0 or -errno.
 */
void ht_fork_prepare(struct ht *ht);
void ht_fork_prepare_reclaim(struct ht *ht);
void ht_fork_parent(struct ht *ht);
int ht_fork_child(struct ht *ht, int no_scan_here);

/* ht_stats() - a snapshot.  Context: any thread. */
void ht_stats(struct ht *ht, struct ht_stats *st);

/**
 * ht_validate() - check the structure: each entry in the bucket its hash
 * selects, pprev links consistent, counters equal to what is linked.
 * Context: registered thread; waits for a running resize, then takes every
 * stripe mutex.
 * Return: 0, or -EUCLEAN with a message on stderr.
 */
int ht_validate(struct ht *ht);

#endif /* HT_H */
