/*
 * mem.c - the memory figures (server/mem.h): the allocator's count, RSS, the
 * peak and the start-up baseline, the used-memory figure maxmemory is checked
 * against with the evicted bytes still in flight left out, entry footprints,
 * the INFO memory / MEMORY STATS snapshot, and the allocator's knobs.
 *
 * Used memory.  What the allocator says is allocated: jemalloc's
 * "stats.allocated" (after an "epoch" refresh), the sanitizer allocator's
 * count in asan/tsan builds, mallinfo2() with plain libc.  Entries replaced or
 * removed but still waiting for a grace period are still allocated, so memory
 * waiting for reclamation counts against maxmemory with no extra bookkeeping,
 * and so do client buffers, as in Redis; the one exception is evicted entries
 * still waiting for their grace period (e_out below), which eviction must not
 * evict for a second time.  Refreshing the allocator's statistics costs
 * microseconds, so commands read a cached figure (mem_est) that is refreshed
 * when it is older than MEM_REFRESH_US and lowered by what each eviction
 * frees; the cron refreshes it too (evict_cron()).  Between refreshes the
 * figure may lag by what one millisecond of writes allocates: the "small
 * margin" over maxmemory.
 *
 * Concurrency.  mem_lock protects the in-flight accounting (e_out, last_f);
 * it is held for a few loads and stores, nests inside evict.c's ev_lock
 * (evictors call mem_used_refresh() and mem_evicted_add() with it held) and
 * takes nothing inside.  Every other field is a relaxed atomic with one
 * meaning per load: a figure, never a pointer to something it publishes.
 * startup_mem is written once by the main thread before any client is
 * accepted (accepting a connection orders it before every command).
 *
 * Tested by tests/server/test_cache.sh (limits under a write flood, the
 * in-flight figure) and tests/server/test_stats.sh (INFO memory's layout).
 */
#define RCU_FLAVOR_QSBR
#include "server/client.h"
#include "server/db.h"
#include "server/mem.h"
#include "server/util.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(SRV_JEMALLOC) && SRV_JEMALLOC
#include <jemalloc/jemalloc.h>
/*
 * One arena instead of jemalloc's default four per CPU.  Entries are
 * allocated by the workers and freed by whichever thread ends their grace
 * period (a writer, the callback thread, the reclaimer): with several arenas
 * the freed regions are scattered over partly used slabs of each, and in an
 * overwrite flood of 1M keys RSS grew 36% in 24 s while allocated stayed flat
 * (allocator.active grew with it); with two arenas 23% in 30 s; with one it
 * stayed flat (bench-memory, memory.flood_rss_growth).  Small objects come
 * from the threads' caches, so SET/GET -P 16 throughput did not change in an
 * A/B of 3 runs each.  The MALLOC_CONF environment variable still overrides.
 */
const char *malloc_conf = "narenas:1";
#define STR_(x) #x
#define STR(x) STR_(x)
/* as Redis: "jemalloc-5.3.0" */
#define MEM_ALLOCATOR_NAME                                                                         \
	"jemalloc-" STR(JEMALLOC_VERSION_MAJOR) "." STR(JEMALLOC_VERSION_MINOR) "." STR(           \
	    JEMALLOC_VERSION_BUGFIX)
#else
#define MEM_ALLOCATOR_NAME "libc"
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MEM_SANITIZER_ALLOC 1
size_t __sanitizer_get_current_allocated_bytes(void); /* libasan / libtsan */
#endif
#endif

#define MEM_REFRESH_US 1000 /* cached used-memory figure: at most this old */
#define BUCKET_SHARE 8	    /* bytes of bucket array per key, roughly */

static _Atomic size_t mem_est;	     /* cached figure for maxmemory */
static _Atomic long long mem_est_us; /* when it was measured */
static _Atomic int mem_refreshing;   /* one refresher at a time */
static _Atomic size_t mem_peak;	     /* used_memory_peak; 0 after RESETSTAT */
static size_t startup_mem; /* mem_startup_done(): main thread, before any client; read-only after */

/* ------------------------------------------------------------ allocator */

size_t mem_allocated(void)
{
#if defined(SRV_JEMALLOC) && SRV_JEMALLOC
	uint64_t epoch = 1;
	size_t sz = sizeof(epoch), allocated = 0, asz = sizeof(allocated);

	mallctl("epoch", &epoch, &sz, &epoch, sz);
	if (mallctl("stats.allocated", &allocated, &asz, NULL, 0) == 0)
		return allocated;
	return 0;
#elif defined(MEM_SANITIZER_ALLOC)
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
#endif
}

/* allocator_allocated, _active, _resident: one epoch (mem_allocated()'s
 * refresh) for the three; without jemalloc, active = resident = allocated */
static void allocator_figures(size_t *allocated, size_t *active, size_t *resident)
{
	*allocated = mem_allocated();
	*active = *resident = *allocated;
#if defined(SRV_JEMALLOC) && SRV_JEMALLOC
	{
		size_t sz = sizeof(size_t);

		mallctl("stats.active", active, &sz, NULL, 0);
		sz = sizeof(size_t);
		mallctl("stats.resident", resident, &sz, NULL, 0);
	}
#endif
}

const char *mem_allocator_name(void)
{
	return MEM_ALLOCATOR_NAME;
}

void mem_purge(void)
{
#if defined(SRV_JEMALLOC) && SRV_JEMALLOC
	char name[64];

	snprintf(name, sizeof(name), "arena.%u.purge", (unsigned)MALLCTL_ARENAS_ALL);
	mallctl(name, NULL, NULL, NULL, 0);
#endif
}

#if defined(SRV_JEMALLOC) && SRV_JEMALLOC
struct mstats {
	char *p;
	size_t len, cap;
};

/* malloc_stats_print()'s writer: appends @s to the text */
static void mstats_cb(void *arg, const char *s)
{
	struct mstats *ms = arg;
	size_t n = strlen(s);

	if (ms->len + n + 1 > ms->cap) {
		ms->cap = (ms->len + n + 1) * 2;
		ms->p = xrealloc(ms->p, ms->cap);
	}
	memcpy(ms->p + ms->len, s, n + 1);
	ms->len += n;
}
#endif

char *mem_malloc_stats(size_t *len)
{
#if defined(SRV_JEMALLOC) && SRV_JEMALLOC
	struct mstats ms = {NULL, 0, 0};

	malloc_stats_print(mstats_cb, &ms, NULL);
	if (!ms.p)
		ms.p = xcalloc(1, 1);
	*len = ms.len;
	return ms.p;
#else
	static const char msg[] = "Stats not supported for the current allocator";
	char *p = xmalloc(sizeof(msg));

	memcpy(p, msg, sizeof(msg));
	*len = sizeof(msg) - 1;
	return p;
#endif
}

/* ------------------------------------------------------------ process */

size_t mem_rss(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, res = 0;

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

unsigned long long mem_system_total(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long long kb = 0;
	char line[256];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

void mem_startup_done(void)
{
	startup_mem = mem_allocated();
}

/* Raise the peak to @used (a relaxed check-then-store: two raisers may
 * leave the smaller of their figures, as Redis's cron-only peak would miss
 * it too).  Return the peak. */
static size_t peak_note(size_t used)
{
	if (used > atomic_load_explicit(&mem_peak, memory_order_relaxed))
		atomic_store_explicit(&mem_peak, used, memory_order_relaxed);
	return atomic_load_explicit(&mem_peak, memory_order_relaxed);
}

void mem_peak_sample(void)
{
	peak_note(mem_allocated());
}

void mem_peak_reset(void)
{
	atomic_store(&mem_peak, 0);
}

/* ------------------------------------------------------------ maxmemory */

/*
 * Evicted memory in flight.  An evicted entry is still allocated until its
 * grace period ends and it is freed; counting it as used would make the next
 * measurement evict again for memory already on its way back, and under a
 * fast loop of measurements evict everything.  So each eviction pass adds
 * what it evicted to e_out (mem_evicted_add()); used memory for maxmemory =
 * allocated - e_out.  The table counts the bytes it has retired (R) and
 * freed (F) (ht_reclaim_progress()); whatever is freed is taken to be
 * evictions and other garbage in proportion (e_out shrinks by the freed share
 * of all garbage outstanding), and e_out never exceeds R - F, what really
 * waits.  INFO memory shows it as mem_not_counted_for_evict.  Garbage of
 * overwrites and deletes is not "in flight" in this sense: it counts against
 * the limit like any memory waiting for a grace period.
 */
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t e_out, last_f;	    /* mem_lock */
static _Atomic size_t inflight_pub; /* last computed, for lock-free readers */

/* Bring e_out up to date with what the table freed since (mem_lock held). */
static size_t inflight_now(void)
{
	size_t retired, freed, gprev;

	db_reclaim_progress(&retired, &freed);
	gprev = retired - last_f; /* outstanding then, plus retired since */
	if (freed != last_f && gprev)
		e_out -= (size_t)((double)e_out * (double)(freed - last_f) / (double)gprev);
	last_f = freed;
	if (e_out > retired - freed)
		e_out = retired - freed;
	atomic_store_explicit(&inflight_pub, e_out, memory_order_relaxed);
	return e_out;
}

void mem_evicted_add(size_t bytes)
{
	pthread_mutex_lock(&mem_lock);
	inflight_now(); /* account what was freed before this pass's entries */
	e_out += bytes;
	pthread_mutex_unlock(&mem_lock);
}

size_t mem_not_counted(void)
{
	return atomic_load_explicit(&inflight_pub, memory_order_relaxed);
}

size_t mem_used_refresh(void)
{
	size_t used = mem_allocated(), inflight;

	pthread_mutex_lock(&mem_lock);
	inflight = inflight_now();
	pthread_mutex_unlock(&mem_lock);
	used = used > inflight ? used - inflight : 0;

	atomic_store_explicit(&mem_est, used, memory_order_relaxed);
	atomic_store_explicit(&mem_est_us, util_ustime(), memory_order_relaxed);
	return used;
}

size_t mem_used_estimate(void)
{
	long long now = util_ustime();

	if (now - atomic_load_explicit(&mem_est_us, memory_order_relaxed) > MEM_REFRESH_US &&
	    !atomic_exchange_explicit(&mem_refreshing, 1, memory_order_acquire)) {
		size_t used = mem_used_refresh();

		/* Release: pairs with the acquire exchange of the next refresher. */
		atomic_store_explicit(&mem_refreshing, 0, memory_order_release);
		return used;
	}
	return atomic_load_explicit(&mem_est, memory_order_relaxed);
}

size_t mem_used_cached(void)
{
	return atomic_load_explicit(&mem_est, memory_order_relaxed);
}

void mem_used_sub(size_t n)
{
	size_t cur = atomic_load_explicit(&mem_est, memory_order_relaxed);

	while (!atomic_compare_exchange_weak_explicit(&mem_est, &cur, cur > n ? cur - n : 0,
						      memory_order_relaxed, memory_order_relaxed))
		;
}

size_t mem_entry_footprint(const struct ht_entry *e)
{
	/* plus what an HT_VAL_EXTERN value owns (a list's root and chunks) */
	return malloc_usable_size((void *)e) + BUCKET_SHARE + ht_entry_extern_bytes(e);
}

/* ------------------------------------------------------------ snapshot */

static double ratio(size_t a, size_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

/*
 * Redis 7.0's formulas (getMemoryOverheadData()): the dataset is what the
 * table's entries take (db_entry_bytes()), the overhead everything else;
 * percentages of the peak and of the memory used since start-up (at least 1
 * byte, as Redis); the allocator's fragmentation = active / allocated, its
 * RSS share = resident / active, the process's RSS overhead = RSS /
 * resident, and the whole fragmentation = RSS / used.  Without jemalloc,
 * active = resident = used.
 */
void mem_figures(struct mem_figures *m)
{
	size_t net;

	allocator_figures(&m->allocated, &m->active, &m->resident);
	m->used = m->allocated;
	m->rss = mem_rss();
	m->peak = peak_note(m->used);
	m->startup = startup_mem;
	m->dataset = db_entry_bytes();
	m->overhead = m->used > m->dataset ? m->used - m->dataset : 0;
	m->clients_normal = client_mem_total();
	net = m->used > m->startup ? m->used - m->startup : 1;
	m->dataset_perc = 100.0 * (double)m->dataset / (double)net;
	m->peak_perc = 100.0 * ratio(m->used, m->peak);
	m->alloc_frag = ratio(m->active, m->allocated);
	m->alloc_frag_bytes = (long long)m->active - (long long)m->allocated;
	m->alloc_rss = ratio(m->resident, m->active);
	m->alloc_rss_bytes = (long long)m->resident - (long long)m->active;
	m->rss_overhead = ratio(m->rss, m->resident);
	m->rss_overhead_bytes = (long long)m->rss - (long long)m->resident;
	m->frag = ratio(m->rss, m->used);
	m->frag_bytes = (long long)m->rss - (long long)m->used;
}
