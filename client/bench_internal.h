/*
 * client/bench_internal.h: what bench.c (the load generator) hands to
 * report.c (text, JSON, HDR and SVG reports).  Private to client/.
 *
 * A struct bench_result is filled by the main thread after every worker was
 * joined, and is read-only afterwards.
 */
#ifndef RCUKV_CLIENT_BENCH_INTERNAL_H
#define RCUKV_CLIENT_BENCH_INTERNAL_H

#include "client/cli.h"

#define BENCH_MAX_KINDS 3 /* GET, SET, or the --command template */
#define BENCH_MAX_ERRTYPES 16

struct bench_errtype {
	char name[32]; /* first word of the error: "ERR", "WRONGTYPE", "connection" */
	uint64_t n;
};

struct bench_result {
	/* what ran */
	char target[300];
	int threads, clients, pipeline;
	double rate;		  /* 0: closed loop */
	long long requests_asked; /* 0: duration mode */
	double duration_asked, warmup;
	long long keys;
	const char *pattern;
	double zipf_s;
	size_t dmin, dmax;
	const char *prefix;
	const char *command; /* template text, or NULL */
	const char *label;
	unsigned ratio_get, ratio_set;
	/* what happened (measured phase only) */
	double elapsed; /* seconds from measure start to last reply */
	uint64_t done, errors, hits, misses;
	int nkinds;
	char kind_name[BENCH_MAX_KINDS][32];
	uint64_t kind_done[BENCH_MAX_KINDS];
	uint64_t kind_hits[BENCH_MAX_KINDS], kind_misses[BENCH_MAX_KINDS];
	struct cli_hist kind_hist[BENCH_MAX_KINDS];
	struct cli_hist all;
	struct bench_errtype err[BENCH_MAX_ERRTYPES];
	int nerr;
	/* throughput over time, measured phase, one sample per interval */
	double series_interval;
	double *series; /* ops/s per interval */
	size_t nseries;
};

void bench_report_text(const struct bench_result *r, FILE *f);
int bench_report_json(const struct bench_result *r, const char *path);
int bench_report_hdr(const struct bench_result *r, const char *path);
int bench_report_svg(const struct bench_result *r, const char *path);

#endif /* RCUKV_CLIENT_BENCH_INTERNAL_H */
