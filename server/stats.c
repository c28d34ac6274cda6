/*
 * stats.c - the counters behind INFO commandstats, errorstats and
 * latencystats, kept per worker thread (Redis 7.0's fields and meanings).
 *
 * Every command and subcommand has a slot (numbered by cmd.c, which also
 * chooses the order INFO lists them in).  Each worker owns a struct wcstats:
 * per slot the calls, the nanoseconds they ran, the rejected calls (refused
 * before running: arity, NOAUTH, LOADING, OOM, MISCONF), the failed calls (ran and
 * replied at least one error) and a latency histogram (lathist.h), allocated
 * on the slot's first timed call; and a table of the error prefixes its
 * clients were sent (ERR, WRONGTYPE, ...), names append-only.
 *
 * Concurrency: one writer per wcstats, its worker.  Counters are written with
 * relaxed load + store (no read-modify-write, no shared cache line on the hot
 * path) and read by INFO from any thread with relaxed loads, then summed; a
 * sum may be a few commands behind a worker, never torn.  Pointers and names
 * that INFO follows are published with release stores (hist, nerr) and read
 * with acquire loads.
 *
 * Timing: cmd_run() reads stats_clock() before and after the command's proc
 * (only the proc, as Redis times call()): rdtsc, scaled by a factor
 * calibrated against CLOCK_MONOTONIC at start-up, when the kernel's
 * clocksource is the TSC, else clock_gettime(CLOCK_MONOTONIC).  Durations are
 * kept in ns (Redis keeps whole us): usec is their sum / 1000, and the
 * histogram gets the ns (finer percentiles than Redis's, same format).
 * bench/bench_stats.c measures the whole cost per command.
 *
 * CONFIG RESETSTAT writes nothing of other threads: stats_reset() advances
 * stats_epoch.  A worker whose wcstats.epoch is behind clears its own
 * counters (zero stores, histograms kept allocated, error names kept with
 * count 0) before it next counts, then publishes the new epoch; INFO counts a
 * worker that is behind as all zeros.  So after RESETSTAT returns, every INFO
 * sees zeros until new commands run, on every worker, idle or not.
 *
 * Tested by tests/server/test_stats.sh (exact counts after known sequences,
 * RESETSTAT, concurrent clients on both workers) and test_lathist.c.
 */
#include "server/config.h"
#include "server/lathist.h"
#include "server/log.h"
#include "server/server.h"
#include "server/stats.h"
#include "server/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cstat {
	_Atomic unsigned long long calls, ns, rejected, failed;
	/* NULL until the slot's first timed call; owner stores with release,
	 * INFO loads with acquire; freed by stats_fini() only. */
	_Atomic(_Atomic unsigned long long *) hist;
};

struct errstat {
	char name[STATS_ERR_NAME_MAX + 1]; /* written before nerr publishes it, then fixed */
	_Atomic unsigned long long count;
};

struct wcstats {
	/* epoch the counters belong to: owner stores with release after clearing;
	 * INFO loads with acquire (pairs with stats_cleared()) */
	_Atomic unsigned epoch;
	_Atomic int nerr; /* names published: owner release, INFO acquire */
	struct errstat err[STATS_ERR_TYPES];
	struct cstat slot[]; /* nslots */
};

static _Atomic unsigned stats_epoch; /* advanced by stats_reset(), any thread */
static int nslots;
static const char **slot_names; /* set once by stats_init() before workers start */

/* latency-tracking-info-percentiles: CONFIG SET / INFO, under pctl_lock */
static pthread_mutex_t pctl_lock = PTHREAD_MUTEX_INITIALIZER;
static double *pctl;
static int npctl;
static const double pctl_default[] = {50, 99, 99.9};

void stats_init(int n, const char *const *names)
{
	free(slot_names);
	slot_names = xmalloc((size_t)(n ? n : 1) * sizeof(*slot_names));
	for (int i = 0; i < n; i++)
		slot_names[i] = names[i];
	nslots = n;
	pthread_mutex_lock(&pctl_lock);
	if (!pctl) {
		npctl = (int)(sizeof(pctl_default) / sizeof(pctl_default[0]));
		pctl = xmalloc(sizeof(pctl_default));
		memcpy(pctl, pctl_default, sizeof(pctl_default));
	}
	pthread_mutex_unlock(&pctl_lock);
}

double stats_tsc_ns;

/* One calibration window of about 2 ms: TSC ticks against CLOCK_MONOTONIC,
 * each end read between two clock reads less than 2 us apart (else 0: a
 * preemption; try again). */
static double tsc_window(void)
{
#if defined(__x86_64__)
	struct timespec a, b;
	unsigned long long c0, c1;
	double t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &a);
	c0 = __rdtsc();
	clock_gettime(CLOCK_MONOTONIC, &b);
	t0 = ((double)a.tv_sec * 1e9 + (double)a.tv_nsec + (double)b.tv_sec * 1e9 +
	      (double)b.tv_nsec) /
	     2;
	if ((double)b.tv_sec * 1e9 + (double)b.tv_nsec - t0 > 1000)
		return 0;
	do {
		clock_gettime(CLOCK_MONOTONIC, &a);
	} while ((double)a.tv_sec * 1e9 + (double)a.tv_nsec - t0 < 2e6);
	c1 = __rdtsc();
	clock_gettime(CLOCK_MONOTONIC, &b);
	t1 = ((double)a.tv_sec * 1e9 + (double)a.tv_nsec + (double)b.tv_sec * 1e9 +
	      (double)b.tv_nsec) /
	     2;
	if ((double)b.tv_sec * 1e9 + (double)b.tv_nsec - t1 > 1000 || c1 <= c0)
		return 0;
	return (t1 - t0) / (double)(c1 - c0);
#else
	return 0;
#endif
}

/* Use the TSC only where the kernel does (its clocksource is "tsc": the
 * counter is invariant and synchronised across cores), and only when two
 * calibration windows agree within 0.1%; else CLOCK_MONOTONIC. */
static void stats_clock_init(void)
{
	char src[32] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	double a = 0, b = 0;

	if (f) {
		if (!fgets(src, sizeof(src), f))
			src[0] = '\0';
		fclose(f);
	}
	if (strcmp(src, "tsc\n") == 0) {
		for (int i = 0; i < 10 && a <= 0; i++)
			a = tsc_window();
		for (int i = 0; i < 10 && b <= 0; i++)
			b = tsc_window();
	}
	if (a > 0 && b > 0 && a / b < 1.001 && b / a < 1.001)
		stats_tsc_ns = (a + b) / 2;
	if (stats_tsc_ns > 0)
		srv_log(LL_VERBOSE, "Command timing: TSC, %.6f ns per tick", stats_tsc_ns);
	else
		srv_log(LL_VERBOSE, "Command timing: CLOCK_MONOTONIC (clocksource %.*s)",
			(int)strcspn(src, "\n"), src[0] ? src : "unknown");
}

void stats_worker_init(struct worker *w)
{
	if (w->idx == 0)
		stats_clock_init();
	w->cs = xcalloc(1, sizeof(struct wcstats) + (size_t)nslots * sizeof(struct cstat));
	atomic_store_explicit(&w->cs->epoch, atomic_load(&stats_epoch), memory_order_release);
}

void stats_fini(void)
{
	for (int i = 0; i < g_srv.nworkers; i++) {
		struct wcstats *ws = g_srv.workers[i].cs;

		if (!ws)
			continue;
		for (int s = 0; s < nslots; s++)
			free((void *)atomic_load(&ws->slot[s].hist));
		free(ws);
		g_srv.workers[i].cs = NULL;
	}
	free(slot_names);
	slot_names = NULL;
	nslots = 0;
	pthread_mutex_lock(&pctl_lock);
	free(pctl);
	pctl = NULL;
	npctl = 0;
	pthread_mutex_unlock(&pctl_lock);
}

/* Owner thread: RESETSTAT happened since we last counted; zero our counters,
 * then publish the epoch (release: the zeros before the epoch INFO checks). */
static __attribute__((noinline)) void stats_cleared(struct wcstats *ws, unsigned epoch)
{
	for (int s = 0; s < nslots; s++) {
		struct cstat *c = &ws->slot[s];
		_Atomic unsigned long long *h =
		    atomic_load_explicit(&c->hist, memory_order_relaxed);

		atomic_store_explicit(&c->calls, 0, memory_order_relaxed);
		atomic_store_explicit(&c->ns, 0, memory_order_relaxed);
		atomic_store_explicit(&c->rejected, 0, memory_order_relaxed);
		atomic_store_explicit(&c->failed, 0, memory_order_relaxed);
		for (unsigned i = 0; h && i < LATHIST_LEN; i++)
			atomic_store_explicit(&h[i], 0, memory_order_relaxed);
	}
	for (int e = 0; e < atomic_load_explicit(&ws->nerr, memory_order_relaxed); e++)
		atomic_store_explicit(&ws->err[e].count, 0, memory_order_relaxed);
	atomic_store_explicit(&ws->epoch, epoch, memory_order_release);
}

static inline struct wcstats *stats_own(struct worker *w)
{
	struct wcstats *ws = w ? w->cs : NULL;
	unsigned epoch;

	if (SRV_UNLIKELY(!ws))
		return NULL;
	epoch = atomic_load_explicit(&stats_epoch, memory_order_relaxed);
	if (SRV_UNLIKELY(epoch != atomic_load_explicit(&ws->epoch, memory_order_relaxed)))
		stats_cleared(ws, epoch);
	return ws;
}

static __attribute__((noinline)) _Atomic unsigned long long *stats_hist_new(struct cstat *c)
{
	_Atomic unsigned long long *h = xcalloc(LATHIST_LEN, sizeof(*h));

	/* Release: the zeroed counts before the pointer; pairs with the acquire
	 * load in stats_cmd_sum(). */
	atomic_store_explicit(&c->hist, h, memory_order_release);
	return h;
}

void stats_cmd_done(struct worker *w, int slot, unsigned long long clocks, int failed)
{
	struct wcstats *ws = stats_own(w);
	unsigned long long ns = stats_clocks_ns(clocks);
	struct cstat *c;

	if (!ws)
		return;
	c = &ws->slot[slot];
	STAT_ADD(c->calls, 1);
	STAT_ADD(c->ns, ns);
	if (failed)
		STAT_ADD(c->failed, 1);
	if (atomic_load_explicit(&stats_latency_tracking, memory_order_relaxed)) {
		_Atomic unsigned long long *h =
		    atomic_load_explicit(&c->hist, memory_order_relaxed);

		if (SRV_UNLIKELY(!h))
			h = stats_hist_new(c);
		STAT_ADD(h[lathist_index(ns)], 1);
	}
}

void stats_cmd_rejected(struct worker *w, int slot)
{
	struct wcstats *ws = stats_own(w);

	if (ws)
		STAT_ADD(ws->slot[slot].rejected, 1);
}

void stats_error(struct worker *w, const char *msg, size_t len)
{
	struct wcstats *ws = stats_own(w);
	const char *name = "ERR", *sp;
	size_t nlen = 3;
	int n;

	if (!ws)
		return;
	/* Redis's rule: "-PREFIX rest" within the first 32 bytes, else ERR */
	if (len && msg[0] == '-' && (sp = memchr(msg, ' ', len < 32 ? len : 32)) != NULL) {
		name = msg + 1;
		nlen = (size_t)(sp - msg) - 1;
	}
	n = atomic_load_explicit(&ws->nerr, memory_order_relaxed);
	for (int e = 0; e < n; e++) {
		if (!strncmp(ws->err[e].name, name, nlen) && ws->err[e].name[nlen] == '\0') {
			STAT_ADD(ws->err[e].count, 1);
			return;
		}
	}
	if (n == STATS_ERR_TYPES)
		return; /* our own error texts have far fewer prefixes: see the header */
	memcpy(ws->err[n].name, name, nlen);
	ws->err[n].name[nlen] = '\0';
	atomic_store_explicit(&ws->err[n].count, 1, memory_order_relaxed);
	/* Release: the name and count before the entry is visible; pairs with
	 * the acquire load in stats_errors(). */
	atomic_store_explicit(&ws->nerr, n + 1, memory_order_release);
}

void stats_reset(void)
{
	/* seq_cst (rare): ordered before RESETSTAT's reply is written, so an
	 * INFO the client sends next sees the new epoch (stats_cmd_sum()) */
	atomic_fetch_add(&stats_epoch, 1);
}

int stats_nslots(void)
{
	return nslots;
}

const char *stats_slot_name(int slot)
{
	return slot_names[slot];
}

/* The workers whose counters are current (not behind a RESETSTAT). */
static int stats_current(const struct wcstats *ws, unsigned epoch)
{
	/* Acquire: pairs with the release in stats_cleared(); the zeros it
	 * stored are seen by the loads that follow. */
	return ws && atomic_load_explicit(&ws->epoch, memory_order_acquire) == epoch;
}

void stats_cmd_sum(int slot, struct stats_cmd_sum *out, unsigned long long *hist)
{
	unsigned epoch = atomic_load_explicit(&stats_epoch, memory_order_relaxed);
	unsigned long long ns = 0;

	memset(out, 0, sizeof(*out));
	if (hist)
		memset(hist, 0, LATHIST_LEN * sizeof(*hist));
	for (int i = 0; i < g_srv.nworkers; i++) {
		const struct wcstats *ws = g_srv.workers[i].cs;
		const struct cstat *c;
		_Atomic unsigned long long *h;

		if (!stats_current(ws, epoch))
			continue;
		c = &ws->slot[slot];
		out->calls += atomic_load_explicit(&c->calls, memory_order_relaxed);
		ns += atomic_load_explicit(&c->ns, memory_order_relaxed);
		out->rejected += atomic_load_explicit(&c->rejected, memory_order_relaxed);
		out->failed += atomic_load_explicit(&c->failed, memory_order_relaxed);
		h = atomic_load_explicit(&((struct cstat *)c)->hist, memory_order_acquire);
		for (unsigned k = 0; hist && h && k < LATHIST_LEN; k++) {
			unsigned long long v = atomic_load_explicit(&h[k], memory_order_relaxed);

			hist[k] += v;
			out->samples += v;
		}
	}
	out->usec = ns / 1000;
}

static int err_cmp(const void *a, const void *b)
{
	return strcmp(((const struct stats_err_sum *)a)->name,
		      ((const struct stats_err_sum *)b)->name);
}

int stats_errors(struct stats_err_sum *out, int max)
{
	unsigned epoch = atomic_load_explicit(&stats_epoch, memory_order_relaxed);
	int n = 0;

	for (int i = 0; i < g_srv.nworkers; i++) {
		struct wcstats *ws = g_srv.workers[i].cs;
		int ne;

		if (!stats_current(ws, epoch))
			continue;
		ne = atomic_load_explicit(&ws->nerr, memory_order_acquire);
		for (int e = 0; e < ne; e++) {
			unsigned long long v =
			    atomic_load_explicit(&ws->err[e].count, memory_order_relaxed);
			int k;

			if (!v)
				continue;
			for (k = 0; k < n && strcmp(out[k].name, ws->err[e].name); k++)
				;
			if (k == n) {
				if (n == max)
					continue;
				memcpy(out[n].name, ws->err[e].name, sizeof(out[n].name));
				out[n++].count = 0;
			}
			out[k].count += v;
		}
	}
	qsort(out, (size_t)n, sizeof(*out), err_cmp);
	return n;
}

/* ------------------------------------- latency-tracking-info-percentiles */

static const char *stats_pctl_set(int argc, char **argv, int apply)
{
	double *v;

	/* one empty word is the empty list (config file: ...percentiles "") */
	if (argc == 1 && argv[0][0] == '\0')
		argc = 0;
	v = xmalloc((size_t)(argc ? argc : 1) * sizeof(*v));
	for (int i = 0; i < argc; i++) {
		long double d;

		if (!util_str2ld(argv[i], strlen(argv[i]), &d)) {
			free(v);
			return "Invalid latency-tracking-info-percentiles parameters";
		}
		if (d > 100.0L || d < 0.0L) {
			free(v);
			return "latency-tracking-info-percentiles parameters should sit between "
			       "[0.0,100.0]";
		}
		v[i] = (double)d;
	}
	if (!apply) {
		free(v);
		return NULL;
	}
	pthread_mutex_lock(&pctl_lock);
	free(pctl);
	pctl = v;
	npctl = argc;
	pthread_mutex_unlock(&pctl_lock);
	return NULL;
}

static const char *stats_pctl_set_str(const char *val, size_t len, int apply)
{
	char *copy = xmalloc(len + 1), **argv = xmalloc((len + 1) * sizeof(*argv));
	int argc = 0;
	const char *err;

	/* CONFIG SET splits at each single space, as Redis 7.0: "50  99" holds
	 * an empty word, which is invalid; "" is the empty list */
	memcpy(copy, val, len);
	copy[len] = '\0';
	if (len) {
		argv[argc++] = copy;
		for (char *p = copy; *p; p++) {
			if (*p == ' ') {
				*p = '\0';
				argv[argc++] = p + 1;
			}
		}
	}
	err = stats_pctl_set(argc, argv, apply);
	free(argv);
	free(copy);
	return err;
}

static void stats_pctl_get(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	pthread_mutex_lock(&pctl_lock);
	for (int i = 0; i < npctl && n + 40 < len; i++) {
		if (i)
			buf[n++] = ' ';
		n += lathist_fmt_pct(buf + n, len - n, pctl[i]);
	}
	pthread_mutex_unlock(&pctl_lock);
}

int stats_pctl_copy(double **out)
{
	int n;

	pthread_mutex_lock(&pctl_lock);
	n = npctl;
	*out = xmalloc((size_t)(n ? n : 1) * sizeof(**out));
	if (n)
		memcpy(*out, pctl, (size_t)n * sizeof(**out));
	pthread_mutex_unlock(&pctl_lock);
	return n;
}

unsigned long long stats_total(size_t off)
{
	unsigned long long t = 0;

	for (int i = 0; i < g_srv.nworkers; i++) {
		_Atomic unsigned long long *p =
		    (_Atomic unsigned long long *)(void *)((char *)&g_srv.workers[i].st + off);

		t += atomic_load_explicit(p, memory_order_relaxed);
	}
	return t;
}

/* ------------------------------------------------------------ options */

_Atomic long long stats_latency_tracking;

/* latency-tracking-info-percentiles: one value to split from CONFIG SET (and
 * from --opt "50 99"), one word per percentile from a config line. */
static const char *pctl_opt_set(const struct cfg_opt *o, int argc, char **argv,
				const size_t *lens, int startup, int apply)
{
	(void)o;
	if (!startup)
		return stats_pctl_set_str(argv[0], lens[0], apply);
	if (argc == 1 && strchr(argv[0], ' '))
		return stats_pctl_set_str(argv[0], strlen(argv[0]), apply);
	return stats_pctl_set(argc, argv, apply);
}

static void pctl_opt_get(const struct cfg_opt *o, char *buf, size_t len)
{
	(void)o;
	stats_pctl_get(buf, len);
}

static const struct cfg_opt stats_rows[] = {
    {.name = "latency-tracking", .kind = CFG_BOOL, .mut = CFG_MUTABLE,
     .field = &stats_latency_tracking, .max = 1, .def = "yes"},
    {.name = "latency-tracking-info-percentiles", .kind = CFG_SPECIAL, .mut = CFG_MUTABLE,
     .set = pctl_opt_set, .get = pctl_opt_get},
};

static struct cfg_group stats_group = {"stats", stats_rows,
				       (int)(sizeof(stats_rows) / sizeof(stats_rows[0])), NULL,
				       NULL, NULL};
CFG_REGISTER(stats_group)
