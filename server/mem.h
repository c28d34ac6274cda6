/*
 * mem.h - the server's memory figures: what the allocator says is allocated,
 * the process's RSS, the peak, the start-up baseline, the figure maxmemory is
 * checked against (and the evicted bytes it leaves out), one entry's
 * footprint, and the snapshot INFO memory and MEMORY STATS print.
 *
 * server/mem.c owns every one of these figures and the allocator's knobs
 * (jemalloc's malloc_conf, MEMORY PURGE, MEMORY MALLOC-STATS); evict.c keeps
 * the eviction policy and asks mem.c how much is used, info.c and the MEMORY
 * command print what mem.c measures.  Every function may be called from any
 * thread unless its Context line says otherwise; none takes a lock that a
 * caller may hold, except mem_lock (mem.c), which nests inside evict.c's
 * ev_lock and outside nothing.  Nothing here enters or needs an RCU read-side
 * section, except mem_entry_footprint(), whose entry must stay valid.
 *
 * Tested by tests/server/test_cache.sh (maxmemory, eviction, the in-flight
 * figure under a write flood) and tests/server/test_stats.sh (INFO memory
 * fields against Redis 7.0's layout).
 */
#ifndef SERVER_MEM_H
#define SERVER_MEM_H

#include <stddef.h>

struct ht_entry;

/**
 * mem_allocated() - the bytes the allocator says are allocated now.
 *
 * jemalloc's "stats.allocated" after an "epoch" refresh, the sanitizer
 * allocator's count in asan/tsan builds, mallinfo2() with plain libc.  Costs
 * microseconds (the epoch refresh): hot paths use mem_used_estimate().
 *
 * Context: any thread.
 * Return: bytes allocated, 0 if the allocator cannot say.
 */
size_t mem_allocated(void);

/**
 * mem_rss() - the process's resident set size, from /proc/self/statm.
 *
 * Context: any thread; reads a file.
 * Return: bytes, 0 if unreadable.
 */
size_t mem_rss(void);

/**
 * mem_system_total() - MemTotal of /proc/meminfo (total_system_memory).
 *
 * Context: any thread; reads a file.
 * Return: bytes, 0 if unreadable.
 */
unsigned long long mem_system_total(void);

/**
 * mem_startup_done() - record used_memory_startup (MEMORY STATS
 * startup.allocated): what is allocated once start-up is done.
 *
 * Context: main thread, once, after start-up and before any client is
 * accepted; the figure is read-only after.
 */
void mem_startup_done(void);

/**
 * mem_peak_sample() - raise used_memory_peak to what is allocated now.
 *
 * Context: the main thread's cron (INFO's info_sample_ops()); a relaxed
 * atomic, so INFO and MEMORY STATS on workers may raise it too.
 */
void mem_peak_sample(void);

/**
 * mem_peak_reset() - CONFIG RESETSTAT: forget the peak.
 *
 * Context: any thread.
 */
void mem_peak_reset(void);

/**
 * mem_used_estimate() - the used-memory figure maxmemory is checked against,
 * at most MEM_REFRESH_US (mem.c) old.
 *
 * The allocator's figure minus the evicted bytes still waiting for their
 * grace period (mem_not_counted()), cached: one caller at a time refreshes it
 * when it is older than MEM_REFRESH_US, the others read the cached value, so
 * a command costs one relaxed load or two.  Between refreshes it may lag by
 * what one millisecond of writes allocates.
 *
 * Context: any thread, before a command (evict_before_command()).
 * Return: bytes used for maxmemory.
 */
size_t mem_used_estimate(void);

/**
 * mem_used_refresh() - measure the maxmemory figure now and cache it.
 *
 * Context: any thread; may be called with evict.c's ev_lock held (takes
 * mem_lock inside it).
 * Return: bytes used for maxmemory, as mem_used_estimate() will say next.
 */
size_t mem_used_refresh(void);

/**
 * mem_used_cached() - the cached maxmemory figure, without refreshing it.
 *
 * Context: any thread.
 * Return: bytes used for maxmemory at the last refresh, less what
 * mem_used_sub() took off since.
 */
size_t mem_used_cached(void);

/**
 * mem_used_sub() - lower the cached figure by @n bytes an eviction freed
 * (saturating at 0), so that the next command does not evict them again
 * before the next refresh.
 * @n: bytes freed (entry footprints).
 *
 * Context: any thread (an evictor, with ev_lock held).
 */
void mem_used_sub(size_t n);

/**
 * mem_evicted_add() - count @bytes of entries an eviction pass just deleted
 * as in flight: allocated until their grace period ends, but left out of the
 * maxmemory figure so that no one evicts again for memory already on its way
 * back.
 * @bytes: the ht_entry_size() sum of the pass's deletions.
 *
 * Context: an evictor, after its deletions (evict.c, ev_lock held); takes
 * mem_lock.
 */
void mem_evicted_add(size_t bytes);

/**
 * mem_not_counted() - mem_not_counted_for_evict: the evicted bytes in flight
 * at the last measurement.
 *
 * Context: any thread; a relaxed load.
 * Return: bytes.
 */
size_t mem_not_counted(void);

/**
 * mem_entry_footprint() - the bytes an entry holds: its allocation's size
 * class plus its share of the bucket array (MEMORY USAGE, eviction).
 * @e: a live entry.
 *
 * Context: a QSBR reader (online, or in a read-side section) that found @e,
 * or the holder of @e's stripe mutex.
 * Return: bytes.
 */
size_t mem_entry_footprint(const struct ht_entry *e);

/**
 * mem_allocator_name() - mem_allocator of INFO memory: "jemalloc-5.3.0" as
 * Redis prints it, or "libc".
 *
 * Context: any thread.
 * Return: a static string.
 */
const char *mem_allocator_name(void);

/*
 * The figures of INFO memory and MEMORY STATS, one snapshot, Redis 7.0's
 * formulas (see mem_figures()).  Bytes of the allocator: jemalloc's stats.*.
 */
struct mem_figures {
	size_t used, rss, peak, startup, dataset, overhead, clients_normal;
	size_t allocated, active, resident;
	double peak_perc, dataset_perc; /* percent */
	double alloc_frag, alloc_rss, rss_overhead, frag;
	long long alloc_frag_bytes, alloc_rss_bytes, rss_overhead_bytes, frag_bytes;
};

/**
 * mem_figures() - fill @m with one snapshot of the memory figures.
 * @m: filled in whole.
 *
 * Raises the peak to the figure it reads.  Sums the clients' buffers
 * (client_mem_total(), which takes g_clients_lock): the caller must not hold
 * that lock.
 *
 * Context: any thread; reads /proc.
 */
void mem_figures(struct mem_figures *m);

/**
 * mem_purge() - MEMORY PURGE: ask jemalloc to return its dirty pages to the
 * system (all arenas).  Nothing with other allocators.
 *
 * Context: any thread.
 */
void mem_purge(void);

/**
 * mem_malloc_stats() - MEMORY MALLOC-STATS: the allocator's own report.
 * @len: set to the text's length.
 *
 * Context: any thread.
 * Return: a malloc'd, NUL-terminated text the caller frees (with a
 * non-jemalloc allocator, Redis's "Stats not supported" sentence).
 */
char *mem_malloc_stats(size_t *len);

#endif /* SERVER_MEM_H */
