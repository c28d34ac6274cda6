/*
 * stats.h - per-command statistics (stats.c): INFO commandstats, errorstats,
 * latencystats, and the sums of the per-worker counters.
 */
#ifndef SERVER_STATS_H
#define SERVER_STATS_H

#include <stddef.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "server/util.h"

/* per-command statistics (stats.c): INFO commandstats, errorstats,
 * latencystats.  Counters per worker, written by the owner only. */
#define STATS_ERR_NAME_MAX 31 /* an error prefix is found within 32 bytes */
#define STATS_ERR_TYPES 64    /* distinct prefixes counted per worker */
struct worker;
struct wcstats;
struct stats_cmd_sum {
	unsigned long long calls, usec, rejected, failed;
	unsigned long long samples; /* latency histogram total */
};
struct stats_err_sum {
	char name[STATS_ERR_NAME_MAX + 1];
	unsigned long long count;
};
/* Slots: every command and subcommand, in the order INFO lists them;
 * @names must outlive the server (cmd.c's static names). */
void stats_init(int nslots, const char *const *names);
/* Nanoseconds per TSC tick, calibrated against CLOCK_MONOTONIC by the first
 * stats_worker_init() (before any worker starts, never written after), when
 * the kernel's own clocksource is the TSC; 0: stats_clock() reads
 * CLOCK_MONOTONIC.  rdtsc costs ~12 ns here, clock_gettime() ~28 ns. */
extern double stats_tsc_ns;
/* A command's start or end: TSC ticks, or ns; stats_cmd_done() converts. */
static inline unsigned long long stats_clock(void)
{
	struct timespec ts;

#if defined(__x86_64__)
	if (SRV_LIKELY(stats_tsc_ns > 0))
		return __rdtsc();
#endif
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}
/* A stats_clock() difference in ns (a TSC read on another core may be
 * behind: a negative difference is 0). */
static inline unsigned long long stats_clocks_ns(unsigned long long clocks)
{
	if (stats_tsc_ns > 0)
		return (long long)clocks > 0 ? (unsigned long long)((double)clocks * stats_tsc_ns) : 0;
	return clocks;
}
void stats_worker_init(struct worker *w); /* net_init(), before the thread starts */
void stats_fini(void);			  /* cmd_fini(), after the workers are joined */
/* Owner thread of @w (NULL or a worker without stats: nothing counted).
 * @clocks: stats_clock() after - before. */
void stats_cmd_done(struct worker *w, int slot, unsigned long long clocks, int failed);
void stats_cmd_rejected(struct worker *w, int slot);
void stats_error(struct worker *w, const char *msg, size_t len); /* reply_error() */
void stats_reset(void); /* CONFIG RESETSTAT, any thread */
/* INFO, any thread */
int stats_nslots(void);
const char *stats_slot_name(int slot);
/* @hist: NULL or LATHIST_LEN counters, filled with the merged histogram */
void stats_cmd_sum(int slot, struct stats_cmd_sum *out, unsigned long long *hist);
int stats_errors(struct stats_err_sum *out, int max); /* sorted by name */
/* latency-tracking-info-percentiles: NULL or the reason; @apply 0 checks only */
/* latency-tracking (a row of stats.c): INFO latencystats histograms on; relaxed loads */
extern _Atomic long long stats_latency_tracking;
int stats_pctl_copy(double **out); /* count; *out malloc'd */

/* The sum over the workers of the wstats counter at byte offset @off (net.h);
 * any thread, relaxed loads. */
unsigned long long stats_total(size_t off);
#define STATS_TOTAL(field) stats_total(offsetof(struct wstats, field))

#endif /* SERVER_STATS_H */
