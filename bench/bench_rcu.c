/*
 * bench_rcu.c - `make bench-rcu`: rcukv's RCU flavors side by side with
 * liburcu 0.13's same flavors (Debian liburcu-dev; benchmark only, never
 * linked into the product), printing BENCH and RATIO lines as
 * ../shared/BENCHMARKS.md describes.
 *
 * One source, five translation units (bench/bench.mk):
 *   -DBENCH_DRIVER                          main(), timing, medians, output
 *   -DBENCH_SYS_RCUKV -DBENCH_FLAVOR_QSBR   the figures against rcukv qsbr
 *   -DBENCH_SYS_RCUKV -DBENCH_FLAVOR_MEMB   ... rcukv memb
 *   -DBENCH_SYS_URCU  -DBENCH_FLAVOR_QSBR   ... liburcu qsbr (inline fast paths, _LGPL_SOURCE)
 *   -DBENCH_SYS_URCU  -DBENCH_FLAVOR_MEMB   ... liburcu memb
 * The figure code below is written once against the kernel's plain names
 * (rcu_read_lock(), call_rcu(), ...), which rcu/rcu.h and liburcu's map
 * headers both provide; only the includes differ.  The two libraries cannot
 * share a translation unit (both define struct rcu_head and
 * rcu_dereference()), but their link-time symbols are disjoint (rcu_qsbr_* and
 * rcu_memb_* against urcu_qsbr_* and urcu_memb_*), so one binary holds all four
 * and the driver alternates the systems within each repetition.
 *
 * Method: every timed section lasts at least BENCH_SECS (0.5 s; 0.1 s with
 * BENCH_QUICK=1), is repeated BENCH_REPS (3) times with the order of the two
 * systems alternating, and the median is reported.  The allocator is jemalloc
 * (linked by bench.mk) for both systems.  Two deliberate settings:
 *   - call_rcu() enqueue cost and rcu_barrier() after 1e6 callbacks run with
 *     rcukv's per-thread callback limit lifted (rcu_set_callback_limit(0)), so
 *     that they time the enqueue fast path and a real 1e6 backlog rather than
 *     the flood throttle; the limit is set back to 100000 (the documented
 *     default) afterwards.  The flood figures keep the limit.
 *   - the callback backlog is compared at one enqueue rate for both
 *     (BENCH_PACED_RATE, paced producers), not flat out, where the two
 *     libraries' producers run at very different rates; the flat-out
 *     backlog is printed as rcukv's bound (see flood_pair()).
 * A reference that measured zero stops the bench with a message (emit()).
 *   - QSBR threads go offline around every wait they do themselves (the
 *     callback waits and rcu_barrier()), for both systems alike.
 * Loop costs (read side, quiescent state, offline+online, call_rcu()
 * enqueue) divide the measuring thread's CPU time (CLOCK_THREAD_CPUTIME_ID)
 * by the operations done, so that time other processes take on the shared
 * machine does not count; latencies and rates are wall-clock.
 * Memb has no quiescent states, so quiescent_state and offline_online are
 * reported for qsbr only.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* --- shared between the translation units -------------------------------- */

/* One system-and-flavor: every figure, one repetition per call. */
struct bench_rcu_ops {
	const char *sys;      /* "rcukv" or "liburcu" */
	const char *flavor;   /* "qsbr" or "memb" */
	/* ns per rcu_read_lock()+rcu_read_unlock() pair, mean over @threads threads */
	double (*read_cost)(int threads, double secs);
	double (*qs_cost)(double secs);               /* ns; NULL without QSBR */
	double (*offline_online_cost)(double secs);   /* ns; NULL without QSBR */
	/* synchronize_rcu() latency, us, with one idle or one busy reader */
	void (*sync_latency)(int busy, double secs, double *median, double *p99);
	double (*enqueue_cost)(double secs);          /* ns per call_rcu() */
	double (*cb_latency)(double secs);            /* us, call_rcu() to callback, idle */
	/* two producers flat out: callbacks invoked per second, backlog high water */
	void (*cb_flood)(double secs, double *per_sec, double *hwm, int *capped);
	/* two producers paced at @rate callbacks/s in all: backlog high water and
	 * mean, and the rate the producers actually reached */
	void (*cb_paced)(double secs, double rate, double *hwm, double *mean, double *achieved);
	double (*barrier_idle)(double secs);          /* us */
	double (*barrier_after)(long ncb, double secs); /* ms, after ncb callbacks */
};

uint64_t bench_now_ns(void);
uint64_t bench_cpu_ns(void);
double bench_median(double *v, size_t n);
double bench_percentile(double *v, size_t n, double pct);
void bench_start_threads(pthread_t *t, int n, void *(*fn)(void *), void *arg);
void bench_join_threads(pthread_t *t, int n);

extern const struct bench_rcu_ops bench_rcu_rcukv_qsbr, bench_rcu_rcukv_memb,
	bench_rcu_urcu_qsbr, bench_rcu_urcu_memb;

#define BENCH_REPS 3
#define BENCH_CB_LIMIT_DEFAULT 100000UL    /* rcukv's documented default */
#define BENCH_FLOOD_CAP 8000000L           /* backlog at which producers pause */
/* The paced backlog figure's enqueue rate (both producers together), the same
 * for both libraries: about a tenth of the slower library's flat-out rate here
 * (liburcu, ~1e7/s on 2 cores), so that both keep up and the backlog measures
 * how fast each turns callbacks around, not how fast each lets producers run.
 * BENCH_PACED_RATE=<callbacks/s> overrides it. */
#define BENCH_PACED_RATE 1000000.0
#define BENCH_PACED_BATCH 64               /* callbacks per producer wake-up */
/* A paced producer that reached less than this share of its rate fell behind:
 * its backlog is not one at the common rate and gets no ratio. */
#define BENCH_PACED_KEEPUP 0.95

/* ========================================================================== */
#if defined(BENCH_DRIVER)

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* CPU time of the calling thread: loop costs divide this, not wall time, so
 * that time the scheduler gives to other processes on the shared machine does
 * not count against either system. */
uint64_t bench_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bench_percentile(double *v, size_t n, double pct)
{
	size_t i;

	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	i = (size_t)(pct / 100.0 * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

double bench_median(double *v, size_t n)
{
	return bench_percentile(v, n, 50.0);
}

void bench_start_threads(pthread_t *t, int n, void *(*fn)(void *), void *arg)
{
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, arg) != 0) {
			perror("bench_rcu: pthread_create");
			exit(1);
		}
}

void bench_join_threads(pthread_t *t, int n)
{
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* Issue 2's targets, as "rcukv/liburcu must be at most (or at least) x". */
struct target {
	const char *figure;
	double limit;
	int at_least;
};
static const struct target targets[] = {
	{ "read_lock_unlock_1t", 1.1, 0 }, { "read_lock_unlock_2t", 1.1, 0 },
	{ "quiescent_state", 1.1, 0 },     { "offline_online", 1.1, 0 },
	{ "synchronize_rcu_idle_median", 1.0, 0 }, { "synchronize_rcu_idle_p99", 1.0, 0 },
	{ "synchronize_rcu_busy_median", 1.0, 0 }, { "synchronize_rcu_busy_p99", 1.0, 0 },
	{ "call_rcu_enqueue", 0.5, 0 },    { "call_rcu_latency_idle", 0.1, 0 },
	{ "rcu_barrier_idle", 0.1, 0 },    { "callbacks_per_sec_2p", 1.0, 1 },
};

static int n_misses;
static char misses[2048];

static void emit(const char *figure, const char *flavor, double a, double b,
		 const char *unit, int higher_better)
{
	double ratio;

	/* A reference that measured zero (or failed) has no ratio: stop rather
	 * than print a RATIO of 0 (or inf) that a chart would follow. */
	if (!(b > 0)) {
		printf("BENCH rcu.%s.%s.rcukv %.4g %s\n", figure, flavor, a, unit);
		fprintf(stderr, "bench_rcu: rcu.%s.%s: the liburcu reference measured %g %s; "
			"no ratio, stopping\n", figure, flavor, b, unit);
		exit(1);
	}
	ratio = a / b;
	printf("BENCH rcu.%s.%s.rcukv %.4g %s\n", figure, flavor, a, unit);
	printf("BENCH rcu.%s.%s.liburcu %.4g %s\n", figure, flavor, b, unit);
	printf("RATIO rcu.%s.%s %.3g %s\n", figure, flavor, ratio,
	       higher_better ? "higher" : "lower");
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		const struct target *t = &targets[i];

		if (strcmp(t->figure, figure) != 0)
			continue;
		if (t->at_least ? ratio < t->limit : ratio > t->limit) {
			size_t len = strlen(misses);

			n_misses++;
			snprintf(misses + len, sizeof(misses) - len,
				 "  rcu.%s.%s: ratio %.3f, target %s %.2f\n", figure, flavor,
				 ratio, t->at_least ? ">=" : "<=", t->limit);
		}
	}
	fflush(stdout);
}

/* Runs fig for both systems, BENCH_REPS times, alternating which goes first,
 * and returns the medians. */
typedef double (*fig1_fn)(const struct bench_rcu_ops *o, double secs);

static void run_pair(const struct bench_rcu_ops *pair[2], fig1_fn fig, double secs,
		     double med[2])
{
	double v[2][BENCH_REPS];

	for (int r = 0; r < BENCH_REPS; r++)
		for (int k = 0; k < 2; k++) {
			int s = (r & 1) ? 1 - k : k;

			v[s][r] = fig(pair[s], secs);
		}
	for (int s = 0; s < 2; s++)
		med[s] = bench_median(v[s], BENCH_REPS);
}

static double f_read1(const struct bench_rcu_ops *o, double s) { return o->read_cost(1, s); }
static double f_read2(const struct bench_rcu_ops *o, double s) { return o->read_cost(2, s); }
static double f_qs(const struct bench_rcu_ops *o, double s) { return o->qs_cost(s); }
static double f_offon(const struct bench_rcu_ops *o, double s) { return o->offline_online_cost(s); }
static double f_enq(const struct bench_rcu_ops *o, double s) { return o->enqueue_cost(s); }
static double f_cblat(const struct bench_rcu_ops *o, double s) { return o->cb_latency(s); }
static double f_bidle(const struct bench_rcu_ops *o, double s) { return o->barrier_idle(s); }
static double f_bafter(const struct bench_rcu_ops *o, double s) { return o->barrier_after(1000000, s); }

static void sync_pair(const struct bench_rcu_ops *pair[2], int busy, double secs,
		      const char *flavor)
{
	double med[2][BENCH_REPS], p99[2][BENCH_REPS];
	double m[2], p[2];
	char name[64];

	for (int r = 0; r < BENCH_REPS; r++)
		for (int k = 0; k < 2; k++) {
			int s = (r & 1) ? 1 - k : k;

			pair[s]->sync_latency(busy, secs, &med[s][r], &p99[s][r]);
		}
	for (int s = 0; s < 2; s++) {
		m[s] = bench_median(med[s], BENCH_REPS);
		p[s] = bench_median(p99[s], BENCH_REPS);
	}
	snprintf(name, sizeof(name), "synchronize_rcu_%s_median", busy ? "busy" : "idle");
	emit(name, flavor, m[0], m[1], "us", 0);
	snprintf(name, sizeof(name), "synchronize_rcu_%s_p99", busy ? "busy" : "idle");
	emit(name, flavor, p[0], p[1], "us", 0);
}

static int n_unpaced;   /* paced runs in which a producer fell behind */

/* Two figures from two kinds of run:
 *   callbacks_per_sec_2p     producers flat out: how many callbacks each
 *                            library invokes per second.  Flat out, rcukv's
 *                            producers are throttled at its per-thread limit
 *                            and liburcu's are not, so the two enqueue at very
 *                            different rates and their backlogs are not
 *                            comparable (0.07x to 2.8x from run to run): the
 *                            backlog of that run is reported as rcukv's bound
 *                            (callback_backlog_bound_2p, BENCH only).
 *   callback_backlog_hwm_2p  producers paced at the same rate for both
 *                            (BENCH_PACED_RATE): the backlog's high-water mark
 *                            (RATIO) and mean (BENCH), which then say how
 *                            quickly each library turns callbacks around.  A
 *                            run whose producers fell behind that rate gets
 *                            no ratio and makes the bench exit non-zero. */
static void flood_pair(const struct bench_rcu_ops *pair[2], double secs, const char *flavor)
{
	double rate[2][BENCH_REPS], hwm[2][BENCH_REPS], mean[2][BENCH_REPS];
	double got[2][BENCH_REPS], flat_hwm[2][BENCH_REPS], pr;
	const char *env = getenv("BENCH_PACED_RATE");
	int capped[2] = { 0, 0 }, behind = 0;

	pr = env && atof(env) > 0 ? atof(env) : BENCH_PACED_RATE;
	for (int r = 0; r < BENCH_REPS; r++)
		for (int k = 0; k < 2; k++) {
			int s = (r & 1) ? 1 - k : k;
			int c = 0;

			pair[s]->cb_flood(secs, &rate[s][r], &flat_hwm[s][r], &c);
			capped[s] |= c;
		}
	emit("callbacks_per_sec_2p", flavor, bench_median(rate[0], BENCH_REPS),
	     bench_median(rate[1], BENCH_REPS), "callbacks/s", 1);
	printf("BENCH rcu.callback_backlog_bound_2p.%s.rcukv %.4g callbacks\n", flavor,
	       bench_median(flat_hwm[0], BENCH_REPS));
	printf("# rcu.callback_backlog_bound_2p: rcukv's backlog high-water mark with two "
	       "producers flat out, under its limit of %lu per thread; liburcu has no "
	       "such limit (its flat-out high-water mark: %.4g)\n",
	       BENCH_CB_LIMIT_DEFAULT, bench_median(flat_hwm[1], BENCH_REPS));
	for (int s = 0; s < 2; s++)
		if (capped[s])
			printf("# note: %s %s backlog reached %ld; producers paused there "
			       "(without the pause it grows further)\n",
			       pair[s]->sys, flavor, BENCH_FLOOD_CAP);
	if (pr > 0.5 * bench_median(rate[0], BENCH_REPS) ||
	    pr > 0.5 * bench_median(rate[1], BENCH_REPS))
		printf("# note: the paced rate %.4g/s is more than half a flat-out rate "
		       "measured above; BENCH_PACED_RATE sets a lower one\n", pr);

	for (int r = 0; r < BENCH_REPS; r++)
		for (int k = 0; k < 2; k++) {
			int s = (r & 1) ? 1 - k : k;

			pair[s]->cb_paced(secs, pr, &hwm[s][r], &mean[s][r], &got[s][r]);
			if (got[s][r] < BENCH_PACED_KEEPUP * pr) {
				printf("# %s %s paced run %d: producers reached %.4g of %.4g "
				       "callbacks/s (fell behind)\n", pair[s]->sys, flavor, r + 1,
				       got[s][r], pr);
				behind = 1;
			}
		}
	printf("BENCH rcu.callback_paced_rate_2p.%s %.4g callbacks/s\n", flavor, pr);
	for (int s = 0; s < 2; s++)
		printf("BENCH rcu.callback_backlog_mean_2p.%s.%s %.4g callbacks\n", flavor,
		       pair[s]->sys, bench_median(mean[s], BENCH_REPS));
	if (behind) {
		for (int s = 0; s < 2; s++)
			printf("BENCH rcu.callback_backlog_hwm_2p.%s.%s %.4g callbacks\n", flavor,
			       pair[s]->sys, bench_median(hwm[s], BENCH_REPS));
		fprintf(stderr, "bench_rcu: rcu.callback_backlog_hwm_2p.%s: a producer fell "
			"behind the paced rate; no ratio\n", flavor);
		n_unpaced++;
		return;
	}
	emit("callback_backlog_hwm_2p", flavor, bench_median(hwm[0], BENCH_REPS),
	     bench_median(hwm[1], BENCH_REPS), "callbacks", 0);
}

/* BENCH_ONLY=<substring>[,<substring>...]: run only the figures whose name
 * contains one of them. */
static int wanted(const char *figure)
{
	const char *only = getenv("BENCH_ONLY");
	char buf[256], *save = NULL;

	if (!only || !*only)
		return 1;
	snprintf(buf, sizeof(buf), "%s", only);
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save))
		if (strstr(figure, w))
			return 1;
	return 0;
}

static void run_flavor(const struct bench_rcu_ops *pair[2], double secs)
{
	const char *fl = pair[0]->flavor;
	double m[2];

	printf("# --- %s: rcukv against liburcu 0.13 ---\n", fl);
	if (wanted("read_lock_unlock_1t")) {
		run_pair(pair, f_read1, secs, m);
		emit("read_lock_unlock_1t", fl, m[0], m[1], "ns", 0);
	}
	if (wanted("read_lock_unlock_2t")) {
		run_pair(pair, f_read2, secs, m);
		emit("read_lock_unlock_2t", fl, m[0], m[1], "ns", 0);
	}
	if (pair[0]->qs_cost && pair[1]->qs_cost && wanted("quiescent_state")) {
		run_pair(pair, f_qs, secs, m);
		emit("quiescent_state", fl, m[0], m[1], "ns", 0);
	}
	if (pair[0]->offline_online_cost && pair[1]->offline_online_cost &&
	    wanted("offline_online")) {
		run_pair(pair, f_offon, secs, m);
		emit("offline_online", fl, m[0], m[1], "ns", 0);
	}
	if (wanted("synchronize_rcu_idle"))
		sync_pair(pair, 0, secs, fl);
	if (wanted("synchronize_rcu_busy"))
		sync_pair(pair, 1, secs, fl);
	if (wanted("call_rcu_enqueue")) {
		run_pair(pair, f_enq, secs, m);
		emit("call_rcu_enqueue", fl, m[0], m[1], "ns", 0);
	}
	if (wanted("call_rcu_latency_idle")) {
		run_pair(pair, f_cblat, secs, m);
		emit("call_rcu_latency_idle", fl, m[0], m[1], "us", 0);
	}
	if (wanted("callbacks_per_sec_2p") || wanted("callback_backlog_hwm_2p"))
		flood_pair(pair, secs, fl);
	if (wanted("rcu_barrier_idle")) {
		run_pair(pair, f_bidle, secs, m);
		emit("rcu_barrier_idle", fl, m[0], m[1], "us", 0);
	}
	if (wanted("rcu_barrier_after_1e6")) {
		run_pair(pair, f_bafter, secs, m);
		emit("rcu_barrier_after_1e6", fl, m[0], m[1], "ms", 0);
	}
}

int main(void)
{
	const char *q = getenv("BENCH_QUICK");
	double secs = (q && *q && strcmp(q, "0") != 0) ? 0.1 : 0.5;
	const struct bench_rcu_ops *qsbr[2] = { &bench_rcu_rcukv_qsbr, &bench_rcu_urcu_qsbr };
	const struct bench_rcu_ops *memb[2] = { &bench_rcu_rcukv_memb, &bench_rcu_urcu_memb };
	uint64_t t0 = bench_now_ns();

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# bench-rcu: %ld cores online, timed sections %.1f s, %d repetitions, "
	       "median reported\n", sysconf(_SC_NPROCESSORS_ONLN), secs, BENCH_REPS);
	run_flavor(qsbr, secs);
	run_flavor(memb, secs);
	printf("# bench-rcu: done in %.1f s\n", (double)(bench_now_ns() - t0) / 1e9);
	if (n_misses)
		printf("# issue 2 targets missed (%d):\n%s", n_misses, misses);
	else
		printf("# issue 2 targets: all met\n");
	return n_unpaced ? 1 : 0;
}

/* ========================================================================== */
#elif defined(BENCH_SYS_RCUKV) || defined(BENCH_SYS_URCU)

#if defined(BENCH_FLAVOR_QSBR)
#define BENCH_QSBR 1
#define BENCH_FLAVOR "qsbr"
#elif defined(BENCH_FLAVOR_MEMB)
#define BENCH_QSBR 0
#define BENCH_FLAVOR "memb"
#else
#error "define BENCH_FLAVOR_QSBR or BENCH_FLAVOR_MEMB"
#endif

#if defined(BENCH_SYS_RCUKV)
#if BENCH_QSBR
#define RCU_FLAVOR_QSBR
#define BENCH_OPS bench_rcu_rcukv_qsbr
#else
#define RCU_FLAVOR_MEMB
#define BENCH_OPS bench_rcu_rcukv_memb
#endif
#include "rcu/rcu.h"
#define BENCH_SYS "rcukv"
#define BENCH_SET_CB_LIMIT(n) rcu_set_callback_limit(n)
#else /* liburcu, with its inline fast paths */
#define _LGPL_SOURCE
#define URCU_API_MAP     /* keep the plain names mapped onto this flavor */
#if BENCH_QSBR
#include <urcu/urcu-qsbr.h>
#define BENCH_OPS bench_rcu_urcu_qsbr
#else
#include <urcu/urcu-memb.h>
#define BENCH_OPS bench_rcu_urcu_memb
#endif
#define BENCH_SYS "liburcu"
#define BENCH_SET_CB_LIMIT(n) ((void)(n))   /* liburcu has no such limit */
#endif

#define BENCH_BARRIER() __asm__ __volatile__("" ::: "memory")

#if BENCH_QSBR
#define BENCH_OFFLINE() rcu_thread_offline()
#define BENCH_ONLINE() rcu_thread_online()
#define BENCH_QS() rcu_quiescent_state()
#else
#define BENCH_OFFLINE() ((void)0)
#define BENCH_ONLINE() ((void)0)
#define BENCH_QS() ((void)0)
#endif

static _Atomic int go;

static void wait_go(void)
{
	while (!atomic_load_explicit(&go, memory_order_acquire))
		sched_yield();
}

/* --- read side ------------------------------------------------------------ */

struct read_arg {
	double secs;
	_Atomic int ready;
	double ns_sum;
	pthread_mutex_t lock;
};

static void *read_thread(void *p)
{
	struct read_arg *a = p;
	uint64_t n = 0, t0, c0, lim = (uint64_t)(a->secs * 1e9);

	rcu_register_thread();
	atomic_fetch_add(&a->ready, 1);
	wait_go();
	t0 = bench_now_ns();
	c0 = bench_cpu_ns();
	do {
		for (int i = 0; i < 4096; i++) {
			rcu_read_lock();
			BENCH_BARRIER();
			rcu_read_unlock();
		}
		n += 4096;
	} while (bench_now_ns() - t0 < lim);
	c0 = bench_cpu_ns() - c0;
	BENCH_QS();
	rcu_unregister_thread();
	pthread_mutex_lock(&a->lock);
	a->ns_sum += (double)c0 / (double)n;
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

static double read_cost(int threads, double secs)
{
	struct read_arg a = { .secs = secs, .lock = PTHREAD_MUTEX_INITIALIZER };
	pthread_t t[8];

	atomic_store(&go, 0);
	bench_start_threads(t, threads, read_thread, &a);
	while (atomic_load(&a.ready) < threads)
		sched_yield();
	atomic_store_explicit(&go, 1, memory_order_release);
	bench_join_threads(t, threads);
	return a.ns_sum / threads;
}

#if BENCH_QSBR
struct loop_arg {
	double secs;
	int which;          /* 0: quiescent state, 1: offline+online */
	double ns;
};

static void *qs_thread(void *p)
{
	struct loop_arg *a = p;
	uint64_t n = 0, t0, c0, lim = (uint64_t)(a->secs * 1e9);

	rcu_register_thread();
	t0 = bench_now_ns();
	c0 = bench_cpu_ns();
	do {
		if (a->which == 0) {
			for (int i = 0; i < 4096; i++) {
				rcu_quiescent_state();
				BENCH_BARRIER();
			}
		} else {
			for (int i = 0; i < 4096; i++) {
				rcu_thread_offline();
				rcu_thread_online();
			}
		}
		n += 4096;
	} while (bench_now_ns() - t0 < lim);
	c0 = bench_cpu_ns() - c0;
	rcu_unregister_thread();
	a->ns = (double)c0 / (double)n;
	return NULL;
}

static double loop_cost(int which, double secs)
{
	struct loop_arg a = { .secs = secs, .which = which };
	pthread_t t;

	bench_start_threads(&t, 1, qs_thread, &a);
	bench_join_threads(&t, 1);
	return a.ns;
}

static double qs_cost(double secs)
{
	return loop_cost(0, secs);
}

static double offline_online_cost(double secs)
{
	return loop_cost(1, secs);
}
#endif

/* --- synchronize_rcu() latency -------------------------------------------- */

struct obj {
	long value;
};
static struct obj obj_a = { 1 }, obj_b = { 2 };
static struct obj *shared_obj = &obj_a;   /* RCU-protected; never freed */

struct sync_reader_arg {
	int busy;
	_Atomic int stop;
	_Atomic int ready;
	long sink;
};

static void *sync_reader(void *p)
{
	struct sync_reader_arg *a = p;
	long sink = 0;

	rcu_register_thread();
	if (a->busy) {
		atomic_store(&a->ready, 1);
		while (!atomic_load_explicit(&a->stop, memory_order_relaxed)) {
			for (int i = 0; i < 256; i++) {
				rcu_read_lock();
				sink += rcu_dereference(shared_obj)->value;
				rcu_read_unlock();
			}
			BENCH_QS();
		}
	} else {
		BENCH_OFFLINE();   /* an idle QSBR thread blocks offline */
		atomic_store(&a->ready, 1);
		while (!atomic_load_explicit(&a->stop, memory_order_relaxed))
			usleep(1000);
		BENCH_ONLINE();
	}
	a->sink = sink;
	rcu_unregister_thread();
	return NULL;
}

static void sync_latency(int busy, double secs, double *median, double *p99)
{
	struct sync_reader_arg a = { .busy = busy };
	size_t cap = 1 << 20, n = 0;
	double *lat = malloc(cap * sizeof(*lat));
	uint64_t t0, lim = (uint64_t)(secs * 1e9);
	pthread_t t;

	if (!lat)
		abort();
	bench_start_threads(&t, 1, sync_reader, &a);
	while (!atomic_load(&a.ready))
		sched_yield();
	t0 = bench_now_ns();
	do {
		uint64_t s = bench_now_ns();

		/* Alternate the published object, as an updater would. */
		rcu_assign_pointer(shared_obj, (n & 1) ? &obj_a : &obj_b);
		synchronize_rcu();
		if (n < cap)
			lat[n++] = (double)(bench_now_ns() - s) / 1e3;
	} while (bench_now_ns() - t0 < lim);
	atomic_store(&a.stop, 1);
	bench_join_threads(&t, 1);
	*median = bench_median(lat, n);
	*p99 = bench_percentile(lat, n, 99.0);
	free(lat);
}

/* --- call_rcu() enqueue cost ---------------------------------------------- */

#define ENQ_BATCH 65536
#define ENQ_NBATCH 4
static struct rcu_head *enq_pool;                 /* ENQ_NBATCH * ENQ_BATCH heads */
static _Atomic long enq_done[ENQ_NBATCH];          /* callbacks run, per batch */

static void enq_cb(struct rcu_head *h)
{
	size_t i = (size_t)(h - enq_pool);

	atomic_fetch_add_explicit(&enq_done[i / ENQ_BATCH], 1, memory_order_relaxed);
}

/* Waits, offline, until batch @b's callbacks have all run. */
static void enq_wait_batch(int b)
{
	if (atomic_load(&enq_done[b]) == ENQ_BATCH)
		return;
	BENCH_OFFLINE();
	while (atomic_load(&enq_done[b]) != ENQ_BATCH)
		usleep(100);
	BENCH_ONLINE();
}

struct enq_arg {
	double secs;
	double ns;
};

static void *enq_thread(void *p)
{
	struct enq_arg *a = p;
	uint64_t timed = 0, n = 0, lim = (uint64_t)(a->secs * 1e9);
	int b = 0;

	rcu_register_thread();
	for (int i = 0; i < ENQ_NBATCH; i++)
		atomic_store(&enq_done[i], ENQ_BATCH);   /* all free */
	do {
		struct rcu_head *base = enq_pool + (size_t)b * ENQ_BATCH;
		uint64_t t0;

		enq_wait_batch(b);
		atomic_store(&enq_done[b], 0);
		t0 = bench_cpu_ns();
		for (int i = 0; i < ENQ_BATCH; i++)
			call_rcu(&base[i], enq_cb);
		timed += bench_cpu_ns() - t0;
		n += ENQ_BATCH;
		BENCH_QS();
		b = (b + 1) % ENQ_NBATCH;
	} while (timed < lim);
	for (int i = 0; i < ENQ_NBATCH; i++)
		enq_wait_batch(i);
	rcu_unregister_thread();
	a->ns = (double)timed / (double)n;
	return NULL;
}

static double enqueue_cost(double secs)
{
	struct enq_arg a = { .secs = secs };
	pthread_t t;

	enq_pool = calloc((size_t)ENQ_NBATCH * ENQ_BATCH, sizeof(*enq_pool));
	if (!enq_pool)
		abort();
	BENCH_SET_CB_LIMIT(0);
	bench_start_threads(&t, 1, enq_thread, &a);
	bench_join_threads(&t, 1);
	BENCH_SET_CB_LIMIT(BENCH_CB_LIMIT_DEFAULT);
	free(enq_pool);
	enq_pool = NULL;
	return a.ns;
}

/* --- call_rcu() to callback latency, idle --------------------------------- */

struct lat_obj {
	struct rcu_head head;
	uint64_t t_call;
	_Atomic uint64_t t_cb;    /* set by the callback; 0 until then */
};

static void lat_cb(struct rcu_head *h)
{
	struct lat_obj *o = (struct lat_obj *)(void *)((char *)h - offsetof(struct lat_obj, head));

	atomic_store_explicit(&o->t_cb, bench_now_ns(), memory_order_release);
}

struct cblat_arg {
	double secs;
	double median_us;
};

static void *cblat_thread(void *p)
{
	struct cblat_arg *a = p;
	size_t cap = 1 << 16, n = 0;
	double *lat = malloc(cap * sizeof(*lat));
	uint64_t t0, lim = (uint64_t)(a->secs * 1e9);
	struct lat_obj o;

	if (!lat)
		abort();
	rcu_register_thread();
	t0 = bench_now_ns();
	do {
		memset(&o, 0, sizeof(o));
		o.t_call = bench_now_ns();
		call_rcu(&o.head, lat_cb);
		BENCH_OFFLINE();
		while (!atomic_load_explicit(&o.t_cb, memory_order_acquire))
			usleep(20);
		BENCH_ONLINE();
		if (n < cap)
			lat[n++] = (double)(atomic_load(&o.t_cb) - o.t_call) / 1e3;
	} while (bench_now_ns() - t0 < lim);
	rcu_unregister_thread();
	a->median_us = bench_median(lat, n);
	free(lat);
	return NULL;
}

static double cb_latency(double secs)
{
	struct cblat_arg a = { .secs = secs };
	pthread_t t;

	bench_start_threads(&t, 1, cblat_thread, &a);
	bench_join_threads(&t, 1);
	return a.median_us;
}

/* --- flood: two producers flat out ---------------------------------------- */

struct flood_obj {
	struct rcu_head head;
	char payload[16];
};

static _Atomic long flood_invoked;
static _Atomic long flood_produced;
static _Atomic int flood_stop;

static void flood_cb(struct rcu_head *h)
{
	free(h);   /* head is the first member of struct flood_obj */
	atomic_fetch_add_explicit(&flood_invoked, 1, memory_order_relaxed);
}

static void *flood_producer(void *p)
{
	long mine = 0;

	(void)p;
	rcu_register_thread();
	wait_go();
	while (!atomic_load_explicit(&flood_stop, memory_order_relaxed)) {
		for (int i = 0; i < 64; i++) {
			struct flood_obj *o = malloc(sizeof(*o));

			if (!o)
				abort();
			o->payload[0] = (char)i;
			call_rcu(&o->head, flood_cb);
		}
		mine += 64;
		atomic_fetch_add_explicit(&flood_produced, 64, memory_order_relaxed);
		BENCH_QS();
		if (atomic_load_explicit(&flood_produced, memory_order_relaxed) -
		    atomic_load_explicit(&flood_invoked, memory_order_relaxed) > BENCH_FLOOD_CAP) {
			BENCH_OFFLINE();
			usleep(1000);
			BENCH_ONLINE();
		}
	}
	rcu_unregister_thread();
	return NULL;
}

static void noop_cb(struct rcu_head *h);

/* Registers, optionally queues one callback (@p non-NULL: the head), and waits
 * for every callback. */
static void *barrier_helper(void *p)
{
	rcu_register_thread();
	if (p)
		call_rcu(p, noop_cb);
	BENCH_OFFLINE();
	rcu_barrier();
	BENCH_ONLINE();
	rcu_unregister_thread();
	return NULL;
}

static void barrier_registered(struct rcu_head *warm)
{
	pthread_t t;

	bench_start_threads(&t, 1, barrier_helper, warm);
	bench_join_threads(&t, 1);
}

/* Sample the callback backlog (produced - invoked) every millisecond from
 * @t0 for @lim ns: its high-water mark into *@high, the sum of the samples and
 * their count into *@sum / *@nsamp (either may be NULL).  Returns the time the
 * last sample was taken. */
static uint64_t sample_backlog(uint64_t t0, uint64_t lim, long *high, double *sum, long *nsamp)
{
	uint64_t t1;

	do {
		long b;

		usleep(1000);
		b = atomic_load(&flood_produced) - atomic_load(&flood_invoked);
		if (b > *high)
			*high = b;
		if (sum) {
			*sum += (double)b;
			(*nsamp)++;
		}
	} while ((t1 = bench_now_ns()) - t0 < lim);
	return t1;
}

static void cb_flood(double secs, double *per_sec, double *hwm, int *capped)
{
	pthread_t t[2];
	uint64_t t0, t1, lim = (uint64_t)(secs * 1e9);
	long inv0, inv1, high = 0;

	atomic_store(&flood_invoked, 0);
	atomic_store(&flood_produced, 0);
	atomic_store(&flood_stop, 0);
	atomic_store(&go, 0);
	bench_start_threads(t, 2, flood_producer, NULL);
	atomic_store_explicit(&go, 1, memory_order_release);
	t0 = bench_now_ns();
	inv0 = atomic_load(&flood_invoked);
	t1 = sample_backlog(t0, lim, &high, NULL, NULL);
	inv1 = atomic_load(&flood_invoked);
	atomic_store(&flood_stop, 1);
	bench_join_threads(t, 2);
	barrier_registered(NULL);
	*per_sec = (double)(inv1 - inv0) / ((double)(t1 - t0) / 1e9);
	*hwm = (double)high;
	*capped = high > BENCH_FLOOD_CAP;
}

/* --- paced: two producers at a fixed rate ---------------------------------- */

struct paced_arg {
	double rate;            /* callbacks/s for this producer */
	uint64_t t0;            /* schedule origin, bench_now_ns() */
};

/* Enqueues BENCH_PACED_BATCH callbacks every BATCH / rate seconds on an
 * absolute schedule, sleeping (offline, for QSBR) until each slot.  A producer
 * that is late by more than 10 ms drops the deficit instead of bursting to
 * catch up (a burst would be a flood, not the common rate); the rate it
 * reached is what cb_paced() reports, and falling behind voids the figure. */
static void *paced_producer(void *p)
{
	struct paced_arg *a = p;
	uint64_t step = (uint64_t)(BENCH_PACED_BATCH * 1e9 / a->rate), next;

	rcu_register_thread();
	wait_go();
	next = a->t0;
	while (!atomic_load_explicit(&flood_stop, memory_order_relaxed)) {
		uint64_t now = bench_now_ns();

		if (now < next) {
			struct timespec ts = { (time_t)(next / 1000000000ULL),
					       (long)(next % 1000000000ULL) };

			BENCH_OFFLINE();
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			BENCH_ONLINE();
			continue;
		}
		if (now - next > 10000000ULL)
			next = now;
		for (int i = 0; i < BENCH_PACED_BATCH; i++) {
			struct flood_obj *o = malloc(sizeof(*o));

			if (!o)
				abort();
			o->payload[0] = (char)i;
			call_rcu(&o->head, flood_cb);
		}
		atomic_fetch_add_explicit(&flood_produced, BENCH_PACED_BATCH, memory_order_relaxed);
		next += step;
		BENCH_QS();
	}
	rcu_unregister_thread();
	return NULL;
}

static void cb_paced(double secs, double rate, double *hwm, double *mean, double *achieved)
{
	pthread_t t[2];
	struct paced_arg a;
	uint64_t t0, t1, lim = (uint64_t)(secs * 1e9);
	long high = 0, p0, p1;
	double sum = 0;
	long nsamp = 0;

	atomic_store(&flood_invoked, 0);
	atomic_store(&flood_produced, 0);
	atomic_store(&flood_stop, 0);
	atomic_store(&go, 0);
	a.rate = rate / 2;
	a.t0 = bench_now_ns() + 2000000;   /* the threads are up by then */
	bench_start_threads(t, 2, paced_producer, &a);
	atomic_store_explicit(&go, 1, memory_order_release);
	while (bench_now_ns() < a.t0)
		usleep(200);
	t0 = bench_now_ns();
	p0 = atomic_load(&flood_produced);
	t1 = sample_backlog(t0, lim, &high, &sum, &nsamp);
	p1 = atomic_load(&flood_produced);
	atomic_store(&flood_stop, 1);
	bench_join_threads(t, 2);
	barrier_registered(NULL);
	*hwm = (double)high;
	*mean = nsamp ? sum / (double)nsamp : 0;
	*achieved = (double)(p1 - p0) / ((double)(t1 - t0) / 1e9);
}

/* --- rcu_barrier() --------------------------------------------------------- */

static void noop_cb(struct rcu_head *h)
{
	(void)h;
}

struct barrier_arg {
	double secs;
	long ncb;
	double median;
};

static void *barrier_idle_thread(void *p)
{
	struct barrier_arg *a = p;
	size_t cap = 1 << 16, n = 0;
	double *lat = malloc(cap * sizeof(*lat));
	uint64_t t0, lim = (uint64_t)(a->secs * 1e9);

	if (!lat)
		abort();
	rcu_register_thread();
	BENCH_OFFLINE();
	t0 = bench_now_ns();
	do {
		uint64_t s = bench_now_ns();

		rcu_barrier();
		if (n < cap)
			lat[n++] = (double)(bench_now_ns() - s) / 1e3;
	} while (bench_now_ns() - t0 < lim);
	BENCH_ONLINE();
	rcu_unregister_thread();
	a->median = bench_median(lat, n);
	free(lat);
	return NULL;
}

static struct rcu_head warm_head;

static double barrier_idle(double secs)
{
	struct barrier_arg a = { .secs = secs };
	pthread_t t;

	/* Idle, not pristine: the callback machinery has run (liburcu creates
	 * its worker on the first call_rcu()), and nothing is pending. */
	barrier_registered(&warm_head);
	bench_start_threads(&t, 1, barrier_idle_thread, &a);
	bench_join_threads(&t, 1);
	return a.median;
}

static void *barrier_after_thread(void *p)
{
	struct barrier_arg *a = p;
	struct rcu_head *heads = calloc((size_t)a->ncb, sizeof(*heads));
	double lat[256];
	size_t n = 0;
	uint64_t timed = 0, lim = (uint64_t)(a->secs * 1e9);

	if (!heads)
		abort();
	rcu_register_thread();
	do {
		uint64_t s;

		for (long i = 0; i < a->ncb; i++)
			call_rcu(&heads[i], noop_cb);
		/* The clock starts before going offline: going offline lets the
		 * grace period end, and if the woken callback thread preempts us
		 * inside rcu_thread_offline() the whole backlog can run before
		 * rcu_barrier() is even called. */
		s = bench_now_ns();
		BENCH_OFFLINE();
		rcu_barrier();
		s = bench_now_ns() - s;
		BENCH_ONLINE();
		timed += s;
		lat[n++] = (double)s / 1e6;
	} while (timed < lim && n < 256);
	rcu_unregister_thread();
	free(heads);
	a->median = bench_median(lat, n);
	return NULL;
}

static double barrier_after(long ncb, double secs)
{
	struct barrier_arg a = { .secs = secs, .ncb = ncb };
	pthread_t t;

	BENCH_SET_CB_LIMIT(0);
	bench_start_threads(&t, 1, barrier_after_thread, &a);
	bench_join_threads(&t, 1);
	BENCH_SET_CB_LIMIT(BENCH_CB_LIMIT_DEFAULT);
	return a.median;
}

const struct bench_rcu_ops BENCH_OPS = {
	.sys = BENCH_SYS,
	.flavor = BENCH_FLAVOR,
	.read_cost = read_cost,
#if BENCH_QSBR
	.qs_cost = qs_cost,
	.offline_online_cost = offline_online_cost,
#endif
	.sync_latency = sync_latency,
	.enqueue_cost = enqueue_cost,
	.cb_latency = cb_latency,
	.cb_flood = cb_flood,
	.cb_paced = cb_paced,
	.barrier_idle = barrier_idle,
	.barrier_after = barrier_after,
};

#else
#error "build with -DBENCH_DRIVER, or -DBENCH_SYS_RCUKV / -DBENCH_SYS_URCU and a flavor"
#endif
