/*
 * bench_stats.c - what INFO commandstats / latencystats cost per command:
 * the instrumentation cmd_run() wraps around every command (two
 * stats_clock() reads and stats_cmd_done(): calls, time, failed flag, the
 * latency histogram), timed in a loop around an empty command, on one
 * thread, as the worker runs it.  Variants: TSC or CLOCK_MONOTONIC timing,
 * latency-tracking yes or no; and what INFO latencystats pays per command
 * and worker to merge a histogram.
 *
 * Prints BENCH lines (../shared/BENCHMARKS.md):
 *   BENCH stats.cmd_overhead.<tsc|clock>[_nolatency] N ns   per command
 *   BENCH stats.cmd_overhead.none N ns                       the empty loop
 *   BENCH stats.info_merge_per_cmd N us                      one histogram
 *   RATIO stats.cmd_overhead_tsc_vs_clock R lower            tsc / clock
 * Each figure is the median of 5 sections of ~0.5 s (BENCH_QUICK=1: 3 of
 * ~0.1 s).  The redis-benchmark before/after figures are in bench/RESULTS.md.
 * Links server/stats.o, lathist.o, util.o and log.o only; g_cfg and g_srv
 * are this program's.
 */
#include "server/lathist.h"
#include "server/log.h"
#include "server/config.h"
#include "server/net.h"
#include "server/server.h"
#include "server/stats.h"
#include "server/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* stats.c registers its options with config.c, which would bring the whole
 * server in; the bench sets the one it needs directly. */
void cfg_register(struct cfg_group *g)
{
	(void)g;
}

struct cfg g_cfg;
struct server g_srv;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ns per iteration of @n instrumented empty commands (@bare: no stats) */
static double section(struct worker *w, long n, int bare)
{
	double t0 = now_ns();

	for (long i = 0; i < n; i++) {
		if (bare) {
			__asm__ volatile("" ::: "memory");
			continue;
		}
		unsigned long long c0 = stats_clock();

		__asm__ volatile("" ::: "memory"); /* the command */
		stats_cmd_done(w, (int)(i & 3), stats_clock() - c0, 0);
	}
	return (now_ns() - t0) / (double)n;
}

static double median(struct worker *w, long n, int reps, int bare)
{
	double v[8];

	for (int r = 0; r < reps; r++)
		v[r] = section(w, n, bare);
	qsort(v, (size_t)reps, sizeof(v[0]), cmp_d);
	return v[reps / 2];
}

int main(void)
{
	static const char *const names[] = {"get", "set", "incr", "config|get"};
	int quick = getenv("BENCH_QUICK") != NULL, reps = quick ? 3 : 5;
	double target = quick ? 1e8 : 5e8, tsc, res[4], none, merge;
	struct worker *w;
	unsigned long long *h = xmalloc(LATHIST_LEN * sizeof(*h));
	struct stats_cmd_sum sum;
	long n;

	g_cfg.loglevel = LL_WARNING;
	g_srv.nworkers = 1;
	g_srv.workers = xcalloc(1, sizeof(struct worker));
	w = &g_srv.workers[0];
	stats_init(4, names);
	stats_worker_init(w); /* worker 0 calibrates the TSC */
	tsc = stats_tsc_ns;
	atomic_store(&stats_latency_tracking, 1);
	/* size the sections from a short calibration run */
	n = (long)(target / section(w, 1000000, 0));
	for (int v = 0; v < 4; v++) {
		stats_tsc_ns = v < 2 ? tsc : 0;
		atomic_store(&stats_latency_tracking, v % 2 == 0);
		if (v < 2 && tsc <= 0) {
			res[v] = -1;
			continue;
		}
		res[v] = median(w, n, reps, 0);
	}
	stats_tsc_ns = tsc;
	none = median(w, n, reps, 1);
	{
		double t0 = now_ns();
		int k = quick ? 200 : 1000;

		for (int i = 0; i < k; i++)
			stats_cmd_sum(i & 3, &sum, h);
		merge = (now_ns() - t0) / k / 1000;
	}
	if (res[0] >= 0) {
		printf("BENCH stats.cmd_overhead.tsc %.1f ns\n", res[0]);
		printf("BENCH stats.cmd_overhead.tsc_nolatency %.1f ns\n", res[1]);
	} else {
		printf("no TSC timing here (clocksource is not tsc): clock figures only\n");
	}
	printf("BENCH stats.cmd_overhead.clock %.1f ns\n", res[2]);
	printf("BENCH stats.cmd_overhead.clock_nolatency %.1f ns\n", res[3]);
	printf("BENCH stats.cmd_overhead.none %.1f ns\n", none);
	printf("BENCH stats.info_merge_per_cmd %.2f us\n", merge);
	if (res[0] >= 0)
		printf("RATIO stats.cmd_overhead_tsc_vs_clock %.2f lower\n", res[0] / res[2]);
	printf("(%ld commands per section, median of %d; %.0f samples in the merged histogram)\n",
	       n, reps, (double)sum.samples);
	stats_fini();
	free(g_srv.workers);
	free(h);
	return 0;
}
