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
 * (approximated LRU, by sampling).
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
 * cache from inside its callback.  Not detected: rcukv_close() while another
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

struct rcukv_options {
	size_t initial_size; /* expected number of entries (0: small); the table
			      * grows and shrinks by itself */
	size_t max_memory;   /* bytes of entries before writes evict (0: no limit) */
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
 * With max_memory, room is made first (expired entries, then the least
 * recently used of a few sampled live ones, never @key itself); concurrent
 * writers may overshoot the limit briefly by about one entry each.
 * Return: 0 stored; -E2BIG, -ENOMEM (the entry alone is larger than
 * max_memory, or room could not be made): nothing was stored and an old
 * value under @key is unchanged.
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
 * A lower limit is met before the call returns: entries are evicted as by a
 * write (expired first, then sampled LRU) until rcukv_memory() is under it.
 * Writes already running finish against the limit they read.
 * Return: 0.
 */
int rcukv_set_max_memory(rcukv *kv, size_t bytes);

/* rcukv_max_memory() - the current memory limit (0: none). */
size_t rcukv_max_memory(rcukv *kv);

/* rcukv_clear() - remove every entry; their memory is freed in the background. */
int rcukv_clear(rcukv *kv);

/* rcukv_free() - free a buffer returned by rcukv_get(). */
void rcukv_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* RCUKV_H */
