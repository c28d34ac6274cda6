/*
 * rcukv.h - librcukv, an in-process cache for C programs.
 *
 * A key-value cache that any number of threads may use at once.  Lookups take
 * no lock and never wait for writers; writers lock only a small stripe of the
 * table.  Keys and values are byte strings (binary-safe, up to 512 MiB each).
 * Entries may carry a time to live, relative and measured on CLOCK_MONOTONIC
 * (a wall-clock step moves no expiry).  Expired entries are invisible at
 * once and removed in the background: each cache runs one thread that
 * samples entries with a TTL ten times a second and deletes the expired
 * ones (again while more than a quarter of a sample had expired), so their
 * memory comes back even if no one touches them.  With a memory limit,
 * writes make room before storing: expired entries first, then live ones
 * chosen by the eviction policy (rcukv_options.policy: the server's eight
 * maxmemory policies, approximated LRU by default, by sampling).
 *
 * What cache users expect (CacheLib, Caffeine, Ristretto): counters and
 * memory figures (rcukv_stats(); per-thread stripes, so a lookup writes no
 * shared cache line), a removal callback for deletes, replacements,
 * evictions and expirations (rcukv_options.on_removal), and a get-or-load
 * call in which concurrent misses of one key run the loader once
 * (rcukv_get_or_load()).
 *
 * Threads: no registration or other duty is asked of the application.  The
 * library registers each calling thread with its RCU flavor (memb) on first
 * use and unregisters it when the thread exits.
 *
 * Background threads: each open cache runs an expiry thread; the library
 * runs one RCU callback thread (frees replaced entries after grace periods)
 * while any cache is open.  Closing the last cache joins them all, so a
 * program that closed its caches has no thread of the library left
 * (valgrind's leak check is quiet); opening again starts them again.
 *
 * fork(): supported without exec (pthread_atfork handlers, as liburcu's
 * call_rcu_before_fork() does by hand).  Just before the fork every open
 * cache is brought to rest (writers on it wait a moment; pending frees are
 * done), so the child may use, clear and close every cache it inherited,
 * with its own background threads.  Do not fork from inside an iterate
 * callback; an iteration another thread was running is simply absent in the
 * child.
 *
 * Misuse that aborts with a message naming the call, in every build: a NULL
 * cache; a call on a cache after rcukv_close() (while its struct has not been
 * reused by a later rcukv_open(): after that, the stale pointer reaches the
 * new cache); rcukv_close() or rcukv_shutdown() from inside an
 * rcukv_iterate() callback; rcukv_iterate() or rcukv_clear() of the same
 * cache from inside its callback; any call on a cache from inside its
 * removal callback; rcukv_get_or_load() of a key from inside its own
 * loader.  Not detected: rcukv_close() while another
 * thread still uses the cache (its calls may touch freed memory), and a
 * value pointer from an iterate callback kept past the callback.
 *
 * Memory ownership: rcukv never keeps pointers to the caller's buffers; it
 * copies keys and values in.  Values returned by rcukv_get() are new copies
 * that the caller frees with rcukv_free().  Pointers passed to an
 * rcukv_iterate() callback are valid only during that call.
 *
 * Errors: functions return 0 on success and a negative errno on failure
 * (-ENOENT absent, -ENOMEM, -E2BIG too long, -EINVAL bad argument);
 * rcukv_open() returns NULL and sets errno.  A write that returns an error
 * changed nothing.
 *
 * Build (README.md, section librcukv): shared,
 *   cc app.c $(pkg-config --cflags --libs rcukv) \
 *      -Wl,-rpath,$(pkg-config --variable=libdir rcukv)
 * (without the rpath the program finds librcukv.so.0 only through
 * LD_LIBRARY_PATH or a system library directory); static, name the archive,
 * since -lrcukv picks the .so:
 *   cc app.c $(pkg-config --cflags rcukv) \
 *      $(pkg-config --variable=libdir rcukv)/librcukv.a -pthread
 * Both libraries define only rcukv_* symbols and need only libc and
 * pthreads (no jemalloc: the application's malloc is used).
 * Design notes: docs/librcukv.md.
 */
#ifndef RCUKV_H
#define RCUKV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rcukv rcukv;

/* Eviction policies under max_memory (the server's maxmemory-policy values,
 * docs/eviction.md).  Every policy removes expired entries first; "volatile"
 * ones then evict only entries that carry a TTL, "allkeys" ones any entry.
 * LRU and LFU are approximated by sampling (rcukv_options.samples entries
 * per eviction); LFU keeps Redis's 8-bit logarithmic counter (log factor
 * 10, decay one per minute).  When no entry may be evicted (noeviction, or
 * a volatile policy with no TTL left), the write returns -ENOMEM and stores
 * nothing. */
enum rcukv_policy {
	RCUKV_ALLKEYS_LRU = 0, /* the default */
	RCUKV_ALLKEYS_LFU,
	RCUKV_VOLATILE_LRU,
	RCUKV_VOLATILE_LFU,
	RCUKV_VOLATILE_TTL, /* the soonest-expiring of the sampled entries */
	RCUKV_ALLKEYS_RANDOM,
	RCUKV_VOLATILE_RANDOM,
	RCUKV_NOEVICTION,
};

/* Why an entry left the cache, for the removal callback. */
enum rcukv_reason {
	RCUKV_DELETED = 0, /* rcukv_del() */
	RCUKV_REPLACED,	   /* a set, incr or loaded value for its key replaced it
			    * (not reported: an rcukv_expire() change) */
	RCUKV_EVICTED,	   /* removed to make room under max_memory */
	RCUKV_EXPIRED,	   /* its TTL had passed (expiry thread, a writer, eviction) */
};

/**
 * rcukv_removal_fn - called once for each entry that leaves the cache by
 * rcukv_del(), replacement, eviction or expiry.  Not called by
 * rcukv_clear() or rcukv_close().
 * @key, @val: the old entry's key and value, valid only during the call.
 * Context: runs on the thread that removed the entry (the writer that
 * called rcukv_set(), rcukv_del(), ...; the cache's expiry thread for most
 * expirations; rcukv_set_max_memory()'s caller), synchronously, while the
 * library holds that key's internal write lock (other writers of keys in
 * the same lock stripe wait; readers do not).  It must be short and must
 * not block.  It must not call any rcukv function on the same cache
 * (detected: aborts naming the call); calls on other caches are allowed,
 * but two caches whose callbacks write into each other can deadlock.
 */
typedef void (*rcukv_removal_fn)(const void *key, size_t klen, const void *val, size_t vlen,
				 enum rcukv_reason reason, void *arg);

/* Options.  Zero-initialise the whole struct ({0}) and set what you need:
 * zero is the default of every field, and fields added later come out of
 * @reserved (which rcukv_open() requires to be zero), so a program built
 * against this header keeps working with a later library. */
struct rcukv_options {
	size_t initial_size; /* expected number of entries (0: small); the table
			      * grows and shrinks by itself */
	size_t max_memory;   /* bytes of entries before writes evict (0: no limit) */
	enum rcukv_policy policy; /* what writes evict under max_memory */
	unsigned int samples;	  /* entries sampled per eviction (0: 5; at most 64) */
	rcukv_removal_fn on_removal; /* NULL: none */
	void *removal_arg;	     /* passed to @on_removal */
	uint64_t reserved[8];	     /* must be zero */
};

/* Counters since rcukv_open(), and memory now (rcukv_stats()). */
struct rcukv_stats {
	uint64_t hits;	       /* rcukv_get(), rcukv_get_buf(), rcukv_get_or_load()
				* lookups that found the key */
	uint64_t misses;       /* ... that did not (exists() and ttl() count neither) */
	uint64_t sets;	       /* stores: set, add, incr, loaded values */
	uint64_t deletes;      /* entries removed by rcukv_del() */
	uint64_t replacements; /* entries replaced by a store */
	uint64_t evictions;    /* entries evicted under max_memory */
	uint64_t expirations;  /* expired entries removed */
	uint64_t loads;	       /* rcukv_get_or_load() loader calls */
	uint64_t load_errors;  /* ... that returned an error */
	uint64_t load_waits;   /* get_or_load() callers that waited for another's load */
	uint64_t entries;      /* entries in the table, expired ones not yet removed
				* included (O(1), unlike rcukv_count()) */
	uint64_t bytes_in_use; /* rcukv_memory() */
	uint64_t bytes_pinned; /* bytes of entries unlinked (deleted, replaced,
				* evicted, expired) but not yet freed: waiting for
				* readers' grace periods or held by a running
				* rcukv_iterate().  Not counted in bytes_in_use nor
				* bounded by max_memory. */
	uint64_t max_memory;   /* the current limit (0: none) */
	uint64_t reserved[8];  /* zero; later fields come from here */
};

/**
 * rcukv_open() - create a cache.
 * @opt: options, or NULL for defaults.
 * Return: the cache, or NULL with errno set (ENOMEM, EINVAL).
 */
rcukv *rcukv_open(const struct rcukv_options *opt);

/**
 * rcukv_close() - destroy the cache and free every entry; waits until memory
 * freed in the background (after grace periods) has been returned, and
 * stops the cache's expiry thread.  Closing the last open cache also ends
 * the library's RCU callback thread (as rcukv_shutdown()).
 * Context: no other thread uses @kv any more; not inside an iterate callback.
 */
void rcukv_close(rcukv *kv);

/**
 * rcukv_shutdown() - end the library's RCU callback thread now (every
 * pending free done).  rcukv_close() of the last cache does this already;
 * the thread starts again on demand.
 * Return: 0, or -EBUSY while a cache is open (nothing done).
 */
int rcukv_shutdown(void);

/**
 * rcukv_set() - store a copy of @val under a copy of @key.
 * @ttl_ms: time to live in milliseconds, or 0 for none.
 * With max_memory, room is made first (expired entries, then victims of
 * the policy among a few sampled live ones, never @key itself); concurrent
 * writers may overshoot the limit briefly by about one entry each.  Entries
 * evicted, and an old value replaced, go to the removal callback on this
 * thread before the call returns.
 * Return: 0 stored; -E2BIG, -ENOMEM (the entry alone is larger than
 * max_memory, or room could not be made: noeviction, a volatile policy with
 * no TTL left, or 64 rounds without progress): nothing was stored and an
 * old value under @key is unchanged.
 */
int rcukv_set(rcukv *kv, const void *key, size_t klen, const void *val, size_t vlen,
	      uint64_t ttl_ms);

/**
 * rcukv_add() - as rcukv_set(), only if the key is absent.
 * Return: 0, -EEXIST, or as rcukv_set().
 */
int rcukv_add(rcukv *kv, const void *key, size_t klen, const void *val, size_t vlen,
	      uint64_t ttl_ms);

/**
 * rcukv_get() - copy a value out.
 * @val: receives a new buffer holding the value followed by a NUL byte (not
 *       counted in *@vlen); the caller frees it with rcukv_free().
 * @vlen: receives the value length (may be NULL).
 * Return: 0, -ENOENT, -ENOMEM.
 */
int rcukv_get(rcukv *kv, const void *key, size_t klen, void **val, size_t *vlen);

/**
 * rcukv_get_buf() - copy a value into the caller's buffer.
 * Return: the value's full length (it was truncated if larger than @bufsize),
 * or -ENOENT.
 */
long long rcukv_get_buf(rcukv *kv, const void *key, size_t klen, void *buf, size_t bufsize);

/* rcukv_exists() - 1 if the key is present, 0 if not. */
int rcukv_exists(rcukv *kv, const void *key, size_t klen);

/* rcukv_del() - remove a key.  Return: 0 or -ENOENT. */
int rcukv_del(rcukv *kv, const void *key, size_t klen);

/**
 * rcukv_expire() - set the key's time to live (0: remove it, keeping the key
 * forever).  Return: 0 or -ENOENT.
 */
int rcukv_expire(rcukv *kv, const void *key, size_t klen, uint64_t ttl_ms);

/**
 * rcukv_ttl() - remaining time to live.
 * Return: milliseconds left (>= 0), -1 if the key has none, -ENOENT (< -1).
 */
long long rcukv_ttl(rcukv *kv, const void *key, size_t klen);

/* rcukv_incr() - add @by to a decimal integer value (absent: 0) and store it.
 * Return: 0 with *@result, -EINVAL (not an integer), -ERANGE (overflow). */
int rcukv_incr(rcukv *kv, const void *key, size_t klen, long long by, long long *result);

/* Iteration callback; return 0 to continue, non-zero to stop. */
typedef int (*rcukv_iter_fn)(const void *key, size_t klen, const void *val, size_t vlen, void *arg);

/**
 * rcukv_iterate() - call @fn for each entry.  Every entry present for the
 * whole iteration is visited at least once (rarely twice, when the table is
 * resized meanwhile); entries added or removed meanwhile may or may not be.
 * @fn must not call rcukv functions on the same cache.
 * Memory: the iteration is one SRCU read-side section of the cache's table,
 * so every entry replaced or deleted while it runs stays allocated until it
 * returns (not counted by rcukv_memory(), nor bounded by max_memory): a slow
 * @fn under a write load pins memory without bound.  Keep @fn short, or copy
 * what it needs and return.  Pointers given to @fn are valid only during
 * that call.
 * Return: 0, or the non-zero value that stopped the iteration.
 */
int rcukv_iterate(rcukv *kv, rcukv_iter_fn fn, void *arg);

/* rcukv_count() - number of live entries (expired ones not counted).  O(1)
 * while no entry has a TTL; otherwise a walk of the table, O(entries), that
 * may count a key twice while the table resizes. */
size_t rcukv_count(rcukv *kv);

/* rcukv_memory() - bytes held by entries in the table, expired ones not yet
 * removed included (what max_memory is compared with). */
size_t rcukv_memory(rcukv *kv);

/**
 * rcukv_set_max_memory() - change the memory limit at run time (0: none).
 * A lower limit is met before the call returns, as far as the policy
 * allows: entries are evicted as by a write (expired first, then the
 * policy's victims; noeviction removes only expired ones) until
 * rcukv_memory() is under it.
 * Writes already running finish against the limit they read.
 * Return: 0.
 */
int rcukv_set_max_memory(rcukv *kv, size_t bytes);

/* rcukv_max_memory() - the current memory limit (0: none). */
size_t rcukv_max_memory(rcukv *kv);

/**
 * rcukv_stats() - fill @out with the cache's counters and memory figures.
 * Counters are kept per thread stripe and summed here: a lookup writes no
 * cache line another thread writes (up to 64 threads alive at once; beyond
 * that the others share one stripe, still without losing counts).  A sum taken while
 * other threads run may be a few operations behind them, never torn; once
 * they have finished (joined), it is exact.
 * Return: 0, or -EINVAL (@out NULL).
 */
int rcukv_stats(rcukv *kv, struct rcukv_stats *out);

/**
 * rcukv_loader_fn - produce the value of a key that rcukv_get_or_load()
 * missed.
 * @val, @vlen: on success, receive a buffer from malloc() holding the value
 * (the library frees it) and its length.
 * Context: runs on one of the callers' threads, holding no lock of the
 * library; it may block, sleep, and call rcukv functions on any cache,
 * except rcukv_get_or_load() of the same key on the same cache (a self
 * deadlock: detected, aborts).
 * Return: 0, or a negative errno that every waiting caller receives.
 */
typedef int (*rcukv_loader_fn)(const void *key, size_t klen, void **val, size_t *vlen,
			       void *arg);

/**
 * rcukv_get_or_load() - rcukv_get(), and on a miss run @loader and store
 * its value with @ttl_ms (single flight: while a load of the key runs, other
 * callers of the key on this cache wait for it instead of loading again,
 * and all receive its value or its error).  A loader error stores nothing
 * and is not remembered: the next caller loads again.  If the loaded value
 * cannot be stored (-ENOMEM under max_memory, -E2BIG) the callers still get
 * it; a later call loads again.  Hits never lock; a miss takes a lock of a
 * small striped table of loads in flight.
 * @val, @vlen: as rcukv_get(): a new copy for each caller, freed with
 * rcukv_free().
 * Context: any thread; blocks while the loader runs.
 * Return: 0, -ENOMEM, -EINVAL (@loader or @val NULL; or the loader
 * returned a positive value, or no buffer for a non-empty value), or the
 * loader's negative errno.
 */
int rcukv_get_or_load(rcukv *kv, const void *key, size_t klen, rcukv_loader_fn loader, void *arg,
		      void **val, size_t *vlen, uint64_t ttl_ms);

/* rcukv_clear() - remove every entry; their memory is freed in the background. */
int rcukv_clear(rcukv *kv);

/* rcukv_free() - free a buffer returned by rcukv_get(). */
void rcukv_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* RCUKV_H */
