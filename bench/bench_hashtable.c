/*
 * bench_hashtable.c - `make bench-hashtable`: rcukv's RCU hash table (ht.h,
 * QSBR flavor, as rcukv-server uses it) side by side with liburcu's cds_lfht
 * (urcu-qsbr), in one run, alternating, same keys (1,000,000 16-byte keys,
 * 32-byte values), same hash function and seed, same thread counts
 * (issue 4, section 7; ../shared/BENCHMARKS.md for the format).
 *
 * Figures, each the median of 3 repetitions (timed sections of 1 s, 0.5 s
 * with BENCH_QUICK=1); rcukv runs first in odd repetitions and lfht first in
 * even ones, so neither always gets the cold (or the warm) machine:
 *   lookup_1t, lookup_2t      random hits, 1 and 2 reader threads
 *   lookup_during_replace     1 reader while 1 writer replaces values
 *   insert                    1 thread filling an empty auto-resizing table
 *   bytes_per_entry           jemalloc stats.allocated growth per entry,
 *                             minus the 48 key+value bytes (buckets included)
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jemalloc/jemalloc.h>

#include "bench/bench_hashtable.h"
#include "hashtable/ht.h"
#include "rcu/rcu.h"

#define NKEYS 1000000UL
#define REPS 3

/* --- the rcukv side -------------------------------------------------------------- */

static void *r_create(void)
{
	struct ht_options o = {.seed = BENCH_SEED};

	return ht_new(&o);
}

static void r_destroy(void *t)
{
	ht_free(t);
}

static void r_reg(void)
{
	rcu_register_thread();
}

static void r_unreg(void)
{
	rcu_unregister_thread();
}

static void r_offline(void)
{
	rcu_thread_offline();
}

static void r_online(void)
{
	rcu_thread_online();
}

static int r_insert(void *t, const char *key, const char *val)
{
	static unsigned long n;
	int rc = ht_set(t, key, BENCH_KLEN, val, BENCH_VLEN, HT_NO_EXPIRE, 0, NULL);

	if ((++n & 63) == 0)
		rcu_quiescent_state(); /* QSBR duty, as a server's event loop does */
	return rc;
}

static unsigned long r_lookups(void *t, const char *keys, size_t nkeys, uint64_t *seed,
			       unsigned long n)
{
	unsigned long hits = 0, i;

	for (i = 0; i < n; i++) {
		const char *k = keys + (bench_rnd(seed) % nkeys) * BENCH_KLEN;
		const struct ht_entry *e;

		rcu_read_lock();
		e = ht_find_rcu(t, k, BENCH_KLEN);
		if (e)
			hits += *(const unsigned char *)ht_entry_val(e) != 0;
		rcu_read_unlock();
		if ((i & (BENCH_QS_EVERY - 1)) == BENCH_QS_EVERY - 1)
			rcu_quiescent_state();
	}
	rcu_quiescent_state();
	return hits;
}

static unsigned long r_replaces(void *t, const char *keys, size_t nkeys, uint64_t *seed,
				unsigned long n, const char *val)
{
	unsigned long done = 0, i;

	for (i = 0; i < n; i++) {
		const char *k = keys + (bench_rnd(seed) % nkeys) * BENCH_KLEN;

		if (ht_set(t, k, BENCH_KLEN, val, BENCH_VLEN, HT_NO_EXPIRE, 0, NULL) == 0)
			done++;
		if ((i & 63) == 63)
			rcu_quiescent_state();
	}
	rcu_quiescent_state();
	return done;
}

static void r_settle(void *t)
{
	struct ht_stats st;
	int i;

	for (i = 0; t && i < 3000; i++) {
		ht_stats(t, &st);
		if (!st.resizing && st.count <= st.buckets && st.count >= st.buckets / 8)
			break;
		rcu_thread_offline();
		usleep(2000);
		rcu_thread_online();
	}
	rcu_barrier();
}

static const struct bench_sys rcukv_sys = {
    .name = "rcukv",
    .create = r_create,
    .destroy = r_destroy,
    .thread_reg = r_reg,
    .thread_unreg = r_unreg,
    .offline = r_offline,
    .online = r_online,
    .insert = r_insert,
    .lookups = r_lookups,
    .replaces = r_replaces,
    .settle = r_settle,
};

/* --- driver -------------------------------------------------------------------------- */

static char *keys;
static char val_a[BENCH_VLEN], val_b[BENCH_VLEN];
static double section_s = 1.0;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t allocated(void)
{
	uint64_t epoch = 1;
	size_t sz = sizeof(epoch), a = 0;

	mallctl("epoch", &epoch, &sz, &epoch, sz);
	sz = sizeof(a);
	if (mallctl("stats.allocated", &a, &sz, NULL, 0))
		return 0;
	return a;
}

struct job {
	const struct bench_sys *sys;
	void *t;
	int writer;
	uint64_t seed;
	unsigned long ops;
	_Atomic int *go, *stop;
};

static void *job_run(void *arg)
{
	struct job *j = arg;

	j->sys->thread_reg();
	j->sys->offline();
	while (!atomic_load(j->go))
		usleep(100);
	j->sys->online();
	while (!atomic_load_explicit(j->stop, memory_order_relaxed)) {
		if (j->writer)
			j->ops += j->sys->replaces(j->t, keys, NKEYS, &j->seed, 256,
						   (j->ops & 256) ? val_a : val_b);
		else
			j->ops += (j->sys->lookups(j->t, keys, NKEYS, &j->seed, 4096), 4096);
	}
	j->sys->thread_unreg();
	return NULL;
}

/* Run @nreaders readers (+ a writer if @writer) for one timed section.
 * Returns reader ops/s; *@wrate receives the writer's ops/s. */
static double timed(const struct bench_sys *sys, void *t, int nreaders, int writer, double *wrate)
{
	struct job j[3];
	pthread_t th[3];
	_Atomic int go = 0, stop = 0;
	int n = nreaders + (writer ? 1 : 0), i;
	double t0, t1;
	unsigned long rops = 0;

	for (i = 0; i < n; i++) {
		j[i] =
		    (struct job){sys, t,   i >= nreaders, 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1),
				 0,   &go, &stop};
		pthread_create(&th[i], NULL, job_run, &j[i]);
	}
	sys->offline();
	usleep(20000);
	t0 = now_s();
	atomic_store(&go, 1);
	usleep((useconds_t)(section_s * 1e6));
	atomic_store(&stop, 1);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	t1 = now_s();
	sys->online();
	for (i = 0; i < nreaders; i++)
		rops += j[i].ops;
	if (wrate)
		*wrate = writer ? (double)j[nreaders].ops / (t1 - t0) : 0;
	return (double)rops / (t1 - t0);
}

enum { F_L1, F_L2, F_LR, F_WR, F_INS, F_MEM, NF };
static const char *fname[NF] = {
    "lookup_1t", "lookup_2t",	   "lookup_during_replace", "replace_during_lookup",
    "insert",	 "bytes_per_entry"};
static const char *funit[NF] = {"ops/s", "ops/s", "ops/s", "ops/s", "ops/s", "bytes"};
static double res[2][NF][REPS];

static void one_rep(int si, const struct bench_sys *sys, int rep)
{
	size_t a0, a1, i;
	double t0, t1;
	void *t;

	sys->settle(NULL);
	a0 = allocated();
	t = sys->create();
	t0 = now_s();
	for (i = 0; i < NKEYS; i++)
		if (sys->insert(t, keys + i * BENCH_KLEN, val_a)) {
			fprintf(stderr, "%s: insert failed\n", sys->name);
			exit(1);
		}
	t1 = now_s();
	res[si][F_INS][rep] = (double)NKEYS / (t1 - t0);
	sys->settle(t);
	a1 = allocated();
	res[si][F_MEM][rep] = (double)(a1 - a0) / (double)NKEYS - (BENCH_KLEN + BENCH_VLEN);
	res[si][F_L1][rep] = timed(sys, t, 1, 0, NULL);
	res[si][F_L2][rep] = timed(sys, t, 2, 0, NULL);
	res[si][F_LR][rep] = timed(sys, t, 1, 1, &res[si][F_WR][rep]);
	sys->destroy(t);
	printf("  rep %d %-6s insert %.0f/s, %.1f B/entry, lookups 1t %.0f/s, 2t %.0f/s, "
	       "during replace %.0f/s (replaces %.0f/s)\n",
	       rep, sys->name, res[si][F_INS][rep], res[si][F_MEM][rep], res[si][F_L1][rep],
	       res[si][F_L2][rep], res[si][F_LR][rep], res[si][F_WR][rep]);
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v)
{
	double c[REPS];

	memcpy(c, v, sizeof(c));
	qsort(c, REPS, sizeof(double), cmpd);
	return c[REPS / 2];
}

int main(void)
{
	const struct bench_sys *sys[2] = {&rcukv_sys, &bench_lfht_sys};
	const char *q = getenv("BENCH_QUICK");
	size_t i;
	int rep, s, f;

	if (q && *q && strcmp(q, "0"))
		section_s = 0.5;
	setvbuf(stdout, NULL, _IOLBF, 0);
	keys = malloc(NKEYS * BENCH_KLEN);
	for (i = 0; i < NKEYS; i++) {
		char tmp[BENCH_KLEN + 1];

		snprintf(tmp, sizeof(tmp), "key:%012zu", i * 2654435761UL % 1000000000000UL);
		memcpy(keys + i * BENCH_KLEN, tmp, BENCH_KLEN);
	}
	memset(val_a, 'a', sizeof(val_a));
	memset(val_b, 'b', sizeof(val_b));
	printf("bench-hashtable: %lu keys of %d bytes, values of %d bytes, %.1f s sections, "
	       "%d repetitions, %ld cores\n",
	       NKEYS, BENCH_KLEN, BENCH_VLEN, section_s, REPS, sysconf(_SC_NPROCESSORS_ONLN));
	for (s = 0; s < 2; s++)
		sys[s]->thread_reg();
	/* rep is 0-based: rep 0 (the first, odd, repetition) runs rcukv first. */
	for (rep = 0; rep < REPS; rep++)
		for (int k = 0; k < 2; k++) {
			s = (rep & 1) ? 1 - k : k;
			one_rep(s, sys[s], rep);
		}
	for (f = 0; f < NF; f++) {
		double m[2];

		for (s = 0; s < 2; s++) {
			m[s] = median(res[s][f]);
			printf("BENCH hashtable.%s.%s %.*f %s\n", fname[f], sys[s]->name,
			       f == F_MEM ? 1 : 0, m[s], funit[f]);
		}
		/* A reference that measured zero has no ratio: stop, never print 0. */
		if (!(m[1] > 0)) {
			fprintf(stderr, "bench_hashtable: hashtable.%s: the lfht reference measured "
				"%g %s; no ratio, stopping\n", fname[f], m[1], funit[f]);
			return 1;
		}
		printf("RATIO hashtable.%s %.2f %s\n", fname[f], m[0] / m[1],
		       f == F_MEM ? "lower" : "higher");
	}
	for (s = 1; s >= 0; s--)
		sys[s]->thread_unreg();
	free(keys);
	return 0;
}
