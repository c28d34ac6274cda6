/*
 * bench_srcu.c - SRCU figures for `make bench-rcu` (issue 3): srcu_read_lock
 * + unlock cost, synchronize_srcu() latency with no reader (the QRCU fast
 * path) and with busy readers, and the flavor-safe reclaimer's throughput.
 * liburcu has no SRCU: the fast path is compared with liburcu memb's
 * synchronize_rcu() with no reader inside a section (bench_srcu_urcu.c), in
 * its two set-ups: one registered reader thread, idle (registered), and no
 * registered thread at all (unregistered, the cheaper: nothing to wait for).
 * Both are printed; the RATIO is taken against the faster of the two, so
 * that the reference is liburcu at its best.
 * Output: ../shared/BENCHMARKS.md.  BENCH_QUICK=1 shortens every section.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_srcu.h"
#define RCU_FLAVOR_MEMB
#include "rcu/rcu.h"

static int quick;

double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return v[(int)(p * (n - 1))];
}

static double median3(double a, double b, double c)
{
	double v[3] = { a, b, c };

	qsort(v, 3, sizeof(double), cmp_double);
	return v[1];
}

/* ns per srcu_read_lock()+unlock() pair on one thread, timed >= 0.5 s. */
static double time_read_side(struct srcu_struct *ss)
{
	double secs = quick ? 0.2 : 0.6, t0 = bench_now_ns(), t;
	unsigned long n = 0;

	do {
		for (int i = 0; i < 100000; i++) {
			int idx = srcu_read_lock(ss);

			srcu_read_unlock(ss, idx);
		}
		n += 100000;
		t = bench_now_ns();
	} while (t - t0 < secs * 1e9);
	return (t - t0) / (double)n;
}

static _Atomic int busy_stop;

static void *busy_reader(void *arg)
{
	struct srcu_struct *ss = arg;

	while (!atomic_load_explicit(&busy_stop, memory_order_relaxed)) {
		int idx = srcu_read_lock(ss);

		for (volatile int k = 0; k < 50; k++)
			;
		srcu_read_unlock(ss, idx);
	}
	return NULL;
}

static void free_cb(struct rcu_head *h)
{
	free(h);
}

int main(void)
{
	struct srcu_struct ss;
	int n;
	double *s = malloc(sizeof(double) * 200000), r[3], med[3], p99[3], um[3], up99[3];
	double umr[3], umr99[3];

	quick = getenv("BENCH_QUICK") && strcmp(getenv("BENCH_QUICK"), "0");
	n = quick ? 20000 : 200000;
	init_srcu_struct(&ss);

	for (int k = 0; k < 3; k++)
		r[k] = time_read_side(&ss);
	printf("BENCH rcu.srcu_read_lock_unlock.rcukv %.3g ns\n", median3(r[0], r[1], r[2]));

	/* synchronize_srcu() with no reader vs liburcu memb, alternating.
	 * Medians come from batches of BATCH calls (so that the clock's own
	 * cost, about as long as the fast path, is not counted); p99 from
	 * single calls, clock included, for both systems alike. */
	for (int k = 0; k < 3; k++) {
		enum { BATCH = 100 };
		int nb = n / BATCH;

		for (int i = 0; i < nb; i++) {
			double t0 = bench_now_ns();

			for (int j = 0; j < BATCH; j++)
				synchronize_srcu(&ss);
			s[i] = (bench_now_ns() - t0) / BATCH;
		}
		med[k] = pct(s, nb, 0.5);
		for (int i = 0; i < n; i++) {
			double t0 = bench_now_ns();

			synchronize_srcu(&ss);
			s[i] = bench_now_ns() - t0;
		}
		p99[k] = pct(s, n, 0.99);
		bench_urcu_memb_sync(s, n / 10, 1, BATCH);
		um[k] = pct(s, n / 10 / BATCH, 0.5);
		bench_urcu_memb_sync(s, n / 10, 1, 1);
		up99[k] = pct(s, n / 10, 0.99);
		bench_urcu_memb_sync(s, n / 10, 0, BATCH);
		umr[k] = pct(s, n / 10 / BATCH, 0.5);
		bench_urcu_memb_sync(s, n / 10, 0, 1);
		umr99[k] = pct(s, n / 10, 0.99);
	}
	{
		double a = median3(med[0], med[1], med[2]), b = median3(um[0], um[1], um[2]);
		double bu = median3(umr[0], umr[1], umr[2]), best = bu < b ? bu : b;

		printf("BENCH rcu.synchronize_srcu_noreaders_median.rcukv %.3g ns\n", a);
		printf("BENCH rcu.synchronize_srcu_noreaders_p99.rcukv %.3g ns\n",
		       median3(p99[0], p99[1], p99[2]));
		printf("BENCH rcu.synchronize_rcu_noreaders_median.memb.liburcu %.4g ns\n", b);
		printf("BENCH rcu.synchronize_rcu_noreaders_p99.memb.liburcu %.4g ns\n",
		       median3(up99[0], up99[1], up99[2]));
		printf("BENCH rcu.synchronize_rcu_unregistered_median.memb.liburcu %.4g ns\n", bu);
		printf("BENCH rcu.synchronize_rcu_unregistered_p99.memb.liburcu %.4g ns\n",
		       median3(umr99[0], umr99[1], umr99[2]));
		/* The reference is the faster of liburcu's two set-ups (registered
		 * idle reader, or no registered thread), whichever won this run. */
		if (!(best > 0)) {
			fprintf(stderr, "bench_srcu: liburcu memb synchronize_rcu() measured %g ns; "
				"no ratio, stopping\n", best);
			return 1;
		}
		printf("# rcu.synchronize_srcu_noreaders: against liburcu %s (%.4g ns)\n",
		       best == bu ? "unregistered" : "registered", best);
		printf("RATIO rcu.synchronize_srcu_noreaders %.4f lower\n", a / best);
	}

	/* With busy readers: the slow path (flip and drain). */
	{
		pthread_t t;
		int m = quick ? 2000 : 20000;

		atomic_store(&busy_stop, 0);
		pthread_create(&t, NULL, busy_reader, &ss);
		for (int k = 0; k < 3; k++) {
			for (int i = 0; i < m; i++) {
				double t0 = bench_now_ns();

				synchronize_srcu(&ss);
				s[i] = bench_now_ns() - t0;
			}
			med[k] = pct(s, m, 0.5);
			p99[k] = pct(s, m, 0.99);
		}
		atomic_store(&busy_stop, 1);
		pthread_join(t, NULL);
		printf("BENCH rcu.synchronize_srcu_busy_reader_median.rcukv %.4g ns\n",
		       median3(med[0], med[1], med[2]));
		printf("BENCH rcu.synchronize_srcu_busy_reader_p99.rcukv %.4g ns\n",
		       median3(p99[0], p99[1], p99[2]));
	}

	/* Flavor-safe free throughput: defer, then wait for all to be freed. */
	{
		struct srcu_reclaim *rc = srcu_reclaim_new_memb(&ss, free_cb, "bench");
		unsigned long per = quick ? 500000 : 2000000;

		rcu_register_thread();
		for (int k = 0; k < 3; k++) {
			double t0 = bench_now_ns();

			for (unsigned long i = 0; i < per; i++)
				srcu_reclaim_defer(rc, malloc(sizeof(struct rcu_head) + 48));
			srcu_reclaim_barrier(rc);
			r[k] = (double)per / ((bench_now_ns() - t0) / 1e9);
		}
		printf("BENCH rcu.srcu_reclaim_throughput.memb.rcukv %.4g objects/s\n",
		       median3(r[0], r[1], r[2]));
		for (int k = 0; k < 3; k++) {
			double t0 = bench_now_ns();

			for (unsigned long i = 0; i < per; i++)
				call_rcu(malloc(sizeof(struct rcu_head) + 48), free_cb);
			rcu_barrier();
			r[k] = (double)per / ((bench_now_ns() - t0) / 1e9);
		}
		printf("BENCH rcu.call_rcu_free_throughput.memb.rcukv %.4g objects/s\n",
		       median3(r[0], r[1], r[2]));
		rcu_unregister_thread();
		srcu_reclaim_free(rc);
	}
	cleanup_srcu_struct(&ss);
	free(s);
	return 0;
}
