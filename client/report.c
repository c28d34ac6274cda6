/*
 * client/report.c: reports of "rcukv-cli bench": the text summary, --json,
 * --hdr (HdrHistogram percentile distribution), --svg (latency by percentile
 * on a log percentile axis, and throughput over time) and --svg-compare
 * (two --json runs on one chart).
 *
 * The JSON is written here and read back only by cli_svg_compare(), which
 * looks for the keys it wrote ("label", "latency_curve_us",
 * "throughput_series"); it is not a general JSON parser.
 *
 * Single-threaded (main thread, after the run).  Tested by
 * tests/client/test_bench.sh (xmllint parses every SVG) and test_client.c.
 */
#include "client/bench_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double pct_levels[] = {50, 90, 99, 99.9, 99.99};
static const char *pct_names[] = {"p50", "p90", "p99", "p99.9", "p99.99"};
#define NPCT 5

static double ms(uint64_t us)
{
	return (double)us / 1000.0;
}

void bench_report_text(const struct bench_result *r, FILE *f)
{
	fprintf(f, "rcukv-cli bench: %s, %d thread%s x %d client%s, pipeline %d, %s", r->target,
		r->threads, r->threads == 1 ? "" : "s", r->clients, r->clients == 1 ? "" : "s",
		r->pipeline, r->rate > 0 ? "open loop" : "closed loop");
	if (r->rate > 0)
		fprintf(f, " at %.0f ops/s", r->rate);
	fprintf(f, "\n");
	if (r->command)
		fprintf(f, "  workload: \"%s\", ", r->command);
	else
		fprintf(f, "  workload: GET:SET %u:%u, ", r->ratio_get, r->ratio_set);
	fprintf(f, "%lld keys (%s", r->keys, r->pattern);
	if (!strcmp(r->pattern, "zipf"))
		fprintf(f, " s=%.2f", r->zipf_s);
	if (r->dmin == r->dmax)
		fprintf(f, "), value %zu bytes, prefix \"%s\"\n", r->dmin, r->prefix);
	else
		fprintf(f, "), value %zu-%zu bytes, prefix \"%s\"\n", r->dmin, r->dmax, r->prefix);
	fprintf(f, "  measured: %llu requests in %.3f s", (unsigned long long)r->done, r->elapsed);
	if (r->warmup > 0)
		fprintf(f, " after %.1f s of warmup", r->warmup);
	fprintf(f, "\n\n");
	fprintf(f, "throughput   %.1f ops/s\n", r->elapsed > 0 ? (double)r->done / r->elapsed : 0);
	fprintf(f, "requests     %llu", (unsigned long long)r->done);
	for (int k = 0; k < r->nkinds; k++)
		fprintf(f, "%s%s %llu", k ? ", " : " (", r->kind_name[k],
			(unsigned long long)r->kind_done[k]);
	fprintf(f, ")\n");
	for (int k = 0; k < r->nkinds; k++)
		if (r->kind_hits[k] || r->kind_misses[k])
			fprintf(f, "hits/misses  %s %llu hits, %llu misses (%.1f%% hits)\n",
				r->kind_name[k], (unsigned long long)r->kind_hits[k],
				(unsigned long long)r->kind_misses[k],
				100.0 * (double)r->kind_hits[k] /
				    (double)(r->kind_hits[k] + r->kind_misses[k]));
	fprintf(f, "errors       %llu", (unsigned long long)r->errors);
	for (int e = 0; e < r->nerr; e++)
		fprintf(f, "%s%s %llu", e ? ", " : " (", r->err[e].name,
			(unsigned long long)r->err[e].n);
	fprintf(f, "%s\n\n", r->nerr ? ")" : "");
	fprintf(f, "latency (ms) %9s %9s %9s %9s %9s %9s %9s %9s\n", "min", "p50", "p90", "p99",
		"p99.9", "p99.99", "max", "mean");
	for (int k = -1; k < r->nkinds; k++) {
		const struct cli_hist *h = k < 0 ? &r->all : &r->kind_hist[k];
		if (k >= 0 && r->nkinds == 1)
			break;
		fprintf(f, "  %-10s %9.3f", k < 0 ? "all" : r->kind_name[k],
			ms(h->count ? h->min : 0));
		for (int i = 0; i < NPCT; i++)
			fprintf(f, " %9.3f", ms(cli_hist_percentile(h, pct_levels[i])));
		fprintf(f, " %9.3f %9.3f\n", ms(h->max), cli_hist_mean(h) / 1000.0);
	}
}

/* ---- JSON ---- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_hist(FILE *f, const struct cli_hist *h)
{
	fprintf(f, "{\"count\": %llu, \"min\": %llu, \"mean\": %.1f, \"stddev\": %.1f",
		(unsigned long long)h->count, (unsigned long long)(h->count ? h->min : 0),
		cli_hist_mean(h), cli_hist_stddev(h));
	for (int i = 0; i < NPCT; i++)
		fprintf(f, ", \"%s\": %llu", pct_names[i],
			(unsigned long long)cli_hist_percentile(h, pct_levels[i]));
	fprintf(f, ", \"max\": %llu}", (unsigned long long)h->max);
}

/*
 * Points of the latency-by-percentile curve: percentile levels that halve
 * the distance to 100 % with 5 ticks per half (HdrHistogram's iteration),
 * until 1/(1-p) passes the sample count, then the maximum at 100 %.
 */
static size_t curve_points(const struct cli_hist *h, double *pct, double *val, size_t cap)
{
	size_t n = 0;
	double level = 0;

	if (!h->count)
		return 0;
	while (n + 1 < cap && level < 100.0) {
		pct[n] = level;
		val[n] = (double)cli_hist_percentile(h, level);
		n++;
		if (100.0 / (100.0 - level) > (double)h->count)
			break;
		double half = floor(log2(100.0 / (100.0 - level))) + 1;
		level += 100.0 / (5.0 * pow(2.0, half));
	}
	pct[n] = 100.0;
	val[n] = (double)h->max;
	return n + 1;
}

#define CURVE_CAP 256

int bench_report_json(const struct bench_result *r, const char *path)
{
	FILE *f = fopen(path, "w");
	double pct[CURVE_CAP], val[CURVE_CAP];
	size_t n;

	if (!f) {
		fprintf(stderr, "rcukv-cli bench: cannot write --json %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	fprintf(f, "{\n  \"tool\": \"rcukv-cli bench\",\n  \"label\": ");
	json_str(f, r->label ? r->label : r->target);
	fprintf(f, ",\n  \"target\": ");
	json_str(f, r->target);
	fprintf(f,
		",\n  \"config\": {\"threads\": %d, \"clients\": %d, \"pipeline\": %d, "
		"\"loop\": \"%s\", \"rate\": %.3f, \"requests_limit\": %lld, \"duration_s\": %.3f, "
		"\"warmup_s\": %.3f, \"ratio_get\": %u, \"ratio_set\": %u, \"keys\": %lld, "
		"\"key_pattern\": \"%s\", \"zipf_s\": %.3f, \"data_size_min\": %zu, "
		"\"data_size_max\": %zu, \"key_prefix\": ",
		r->threads, r->clients, r->pipeline, r->rate > 0 ? "open" : "closed", r->rate,
		r->requests_asked, r->duration_asked, r->warmup, r->ratio_get, r->ratio_set,
		r->keys, r->pattern, r->zipf_s, r->dmin, r->dmax);
	json_str(f, r->prefix);
	fprintf(f, ", \"command\": ");
	if (r->command)
		json_str(f, r->command);
	else
		fprintf(f, "null");
	fprintf(
	    f,
	    "},\n  \"elapsed_s\": %.6f,\n  \"requests\": %llu,\n  \"throughput_ops\": %.1f,\n"
	    "  \"hits\": %llu,\n  \"misses\": %llu,\n  \"errors\": %llu,\n  \"errors_by_type\": {",
	    r->elapsed, (unsigned long long)r->done,
	    r->elapsed > 0 ? (double)r->done / r->elapsed : 0.0, (unsigned long long)r->hits,
	    (unsigned long long)r->misses, (unsigned long long)r->errors);
	for (int e = 0; e < r->nerr; e++) {
		fprintf(f, "%s", e ? ", " : "");
		json_str(f, r->err[e].name);
		fprintf(f, ": %llu", (unsigned long long)r->err[e].n);
	}
	fprintf(f, "},\n  \"commands\": {");
	for (int k = 0; k < r->nkinds; k++) {
		fprintf(f, "%s\n    ", k ? "," : "");
		json_str(f, r->kind_name[k]);
		fprintf(f,
			": {\"requests\": %llu, \"hits\": %llu, \"misses\": %llu, \"latency_us\": ",
			(unsigned long long)r->kind_done[k], (unsigned long long)r->kind_hits[k],
			(unsigned long long)r->kind_misses[k]);
		json_hist(f, &r->kind_hist[k]);
		fprintf(f, "}");
	}
	fprintf(f, "\n  },\n  \"latency_us\": ");
	json_hist(f, &r->all);
	fprintf(f, ",\n  \"latency_curve_us\": [");
	n = curve_points(&r->all, pct, val, CURVE_CAP);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s[%.10g, %.0f]", i ? ", " : "", pct[i], val[i]);
	fprintf(f, "],\n  \"throughput_series\": {\"interval_s\": %.3f, \"ops_per_s\": [",
		r->series_interval);
	for (size_t i = 0; i < r->nseries; i++)
		fprintf(f, "%s%.1f", i ? ", " : "", r->series[i]);
	fprintf(f, "]}\n}\n");
	if (fclose(f) != 0) {
		fprintf(stderr, "rcukv-cli bench: writing --json %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int bench_report_hdr(const struct bench_result *r, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "rcukv-cli bench: cannot write --hdr %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	cli_hist_write_hdr(&r->all, f);
	if (fclose(f) != 0) {
		fprintf(stderr, "rcukv-cli bench: writing --hdr %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- SVG ---- */

struct series {
	char label[320];
	double pct[CURVE_CAP], val[CURVE_CAP]; /* latency curve, us */
	size_t n;
	double interval;
	double *tput;
	size_t ntput;
	double ops, p50, p99, p999, max; /* us, except ops */
};

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			if ((unsigned char)*s >= 0x20)
				fputc(*s, f);
		}
	}
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) for about 5 ticks. */
static double nice_step(double range)
{
	double raw = range / 5.0, p, m;

	if (raw <= 0)
		return 1;
	p = pow(10.0, floor(log10(raw)));
	m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static const char *colors[] = {"#1f77b4", "#d62728"};

#define W 900
#define PL 90  /* plot left */
#define PR 860 /* plot right */
#define T1 70  /* latency plot top */
#define B1 380 /* latency plot bottom */
#define T2 470 /* throughput plot top */
#define B2 650 /* throughput plot bottom */
#define H 720

static void fmt_pct(char *b, size_t n, int decade)
{
	/* decade d: 1/(1-p) = 10^d, so p = 100 - 10^(2-d) percent. */
	if (decade == 0)
		snprintf(b, n, "0%%");
	else {
		int nines = decade;
		char s[32] = "99";
		if (nines == 1) {
			snprintf(b, n, "90%%");
			return;
		}
		if (nines > 2) {
			strcat(s, ".");
			for (int i = 2; i < nines && i < 10; i++)
				strcat(s, "9");
		}
		snprintf(b, n, "%s%%", s);
	}
}

/* The two panels' scales, from every series: the percentile axis in
 * decades of 1/(1-p) (at most 7), latency (ms) and throughput tops with
 * their tick steps, and the time axis. */
struct svg_axes {
	double xmax_dec;    /* percentile axis length, decades */
	double ytop, ystep; /* latency, ms */
	double ttop, tstep; /* throughput, ops/s */
	double xtop, xstep; /* time, s */
};

static void svg_axes(struct svg_axes *a, const struct series *s, int ns)
{
	double xmax_dec = 1, ymax = 0, tmax = 0, tlen = 0;

	for (int i = 0; i < ns; i++) {
		for (size_t j = 0; j < s[i].n; j++)
			if (s[i].val[j] > ymax)
				ymax = s[i].val[j];
		/* The last finite percentile point sets the axis length. */
		if (s[i].n >= 2) {
			double d = log10(100.0 / (100.0 - s[i].pct[s[i].n - 2]));
			if (ceil(d) > xmax_dec)
				xmax_dec = ceil(d);
		}
		for (size_t j = 0; j < s[i].ntput; j++)
			if (s[i].tput[j] > tmax)
				tmax = s[i].tput[j];
		if ((double)s[i].ntput * s[i].interval > tlen)
			tlen = (double)s[i].ntput * s[i].interval;
	}
	if (xmax_dec > 7)
		xmax_dec = 7;
	ymax /= 1000.0; /* ms */
	a->xmax_dec = xmax_dec;
	a->ystep = nice_step(ymax > 0 ? ymax : 1);
	a->ytop = ceil((ymax > 0 ? ymax * 1.05 : 1) / a->ystep) * a->ystep;
	a->tstep = nice_step(tmax > 0 ? tmax : 1);
	a->ttop = ceil((tmax > 0 ? tmax * 1.05 : 1) / a->tstep) * a->tstep;
	a->xstep = nice_step(tlen > 0 ? tlen : 1);
	a->xtop = tlen > 0 ? tlen : 1;
}

/* The document's head, the title, and one legend line per series. */
static void svg_head(FILE *f, const struct series *s, int ns, const char *title)
{
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" "
		"font-size=\"12\">\n",
		W, H, W, H);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", PL);
	xml_text(f, title);
	fprintf(f, "</text>\n");
	for (int i = 0; i < ns; i++) {
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"%s\"/>\n", PL,
			36 + 14 * i, colors[i]);
		fprintf(f, "<text x=\"%d\" y=\"%d\">", PL + 20, 42 + 14 * i);
		xml_text(f, s[i].label);
		fprintf(f, ": %.0f ops/s, p50 %.3f ms, p99 %.3f ms, max %.3f ms</text>\n", s[i].ops,
			s[i].p50 / 1000, s[i].p99 / 1000, s[i].max / 1000);
	}
}

/* Horizontal grid lines of a panel from @top to @bottom, one per @step up
 * to @vtop; the caller opens and closes the group. */
static void svg_hgrid(FILE *f, int top, int bottom, double vtop, double step)
{
	for (double y = 0; y <= vtop + step / 2; y += step) {
		double py = bottom - (bottom - top) * y / vtop;
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", PL, py, PR, py);
	}
}

/* A panel's frame. */
static void svg_frame(FILE *f, int top, int bottom)
{
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		"stroke=\"#333\"/>\n",
		PL, top, PR - PL, bottom - top);
}

/* Panel 1's title, grid, axis labels and frame: latency by percentile, log
 * axis on 1/(1-p). */
static void svg_latency_axes(FILE *f, const struct svg_axes *a)
{
	char buf[64];

	fprintf(f,
		"<text x=\"%d\" y=\"%d\" font-weight=\"bold\">Latency by percentile "
		"(ms)</text>\n",
		PR - 200, T1 - 8);
	fprintf(f, "<g stroke=\"#ddd\">\n");
	svg_hgrid(f, T1, B1, a->ytop, a->ystep);
	for (int d = 0; d <= (int)a->xmax_dec; d++) {
		double px = PL + (PR - PL) * d / a->xmax_dec;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", px, T1, px, B1);
	}
	fprintf(f, "</g>\n<g text-anchor=\"end\">\n");
	for (double y = 0; y <= a->ytop + a->ystep / 2; y += a->ystep)
		fprintf(f, "<text x=\"%d\" y=\"%.1f\">%g</text>\n", PL - 6,
			B1 - (B1 - T1) * y / a->ytop + 4, y);
	fprintf(f, "</g>\n<g text-anchor=\"middle\">\n");
	for (int d = 0; d <= (int)a->xmax_dec; d++) {
		fmt_pct(buf, sizeof(buf), d);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\">%s</text>\n",
			PL + (PR - PL) * d / a->xmax_dec, B1 + 16, buf);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\">percentile (log scale of 1/(1-p))</text>\n",
		(PL + PR) / 2, B1 + 34);
	fprintf(f, "</g>\n");
	svg_frame(f, T1, B1);
}

/* Series @i's p50, p99 and p99.9 marked with their values: series 0 labels
 * right, series 1 left. */
static void svg_latency_marks(FILE *f, const struct series *s, int i, const struct svg_axes *a)
{
	const double mp[3] = {50, 99, 99.9};
	const double mv[3] = {s->p50, s->p99, s->p999};
	const char *mn[3] = {"p50", "p99", "p99.9"};

	for (int m = 0; m < 3; m++) {
		double d = log10(100.0 / (100.0 - mp[m]));
		if (d > a->xmax_dec || mv[m] <= 0)
			continue;
		double px = PL + (PR - PL) * d / a->xmax_dec;
		double py = B1 - (B1 - T1) * (mv[m] / 1000.0) / a->ytop;
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", px, py,
			colors[i]);
		fprintf(f,
			"<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\" font-size=\"11\" "
			"stroke=\"white\" "
			"stroke-width=\"3\" paint-order=\"stroke\"%s>%s %.3f ms"
			"</text>\n",
			i == 0 ? px + 5 : px - 5, py - 7, colors[i],
			i == 0 ? "" : " text-anchor=\"end\"", mn[m], mv[m] / 1000.0);
	}
}

/* Series @i's latency curve in panel 1, with its marks. */
static void svg_latency_curve(FILE *f, const struct series *s, int i, const struct svg_axes *a)
{
	if (!s->n)
		return;
	fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
		colors[i]);
	for (size_t j = 0; j < s->n; j++) {
		double d = s->pct[j] >= 100 ? a->xmax_dec : log10(100.0 / (100.0 - s->pct[j]));
		if (d > a->xmax_dec)
			d = a->xmax_dec;
		fprintf(f, "%.1f,%.1f ", PL + (PR - PL) * d / a->xmax_dec,
			B1 - (B1 - T1) * (s->val[j] / 1000.0) / a->ytop);
	}
	fprintf(f, "\"/>\n");
	svg_latency_marks(f, s, i, a);
}

/* Panel 2's title, grid, axis labels and frame: throughput over time. */
static void svg_tput_axes(FILE *f, const struct svg_axes *a)
{
	fprintf(f,
		"<text x=\"%d\" y=\"%d\" font-weight=\"bold\">Throughput (ops/s) over "
		"time (s)</text>\n",
		PL, T2 - 8);
	fprintf(f, "<g stroke=\"#ddd\">\n");
	svg_hgrid(f, T2, B2, a->ttop, a->tstep);
	fprintf(f, "</g>\n<g text-anchor=\"end\">\n");
	for (double y = 0; y <= a->ttop + a->tstep / 2; y += a->tstep)
		fprintf(f, "<text x=\"%d\" y=\"%.1f\">%.6g</text>\n", PL - 6,
			B2 - (B2 - T2) * y / a->ttop + 4, y);
	fprintf(f, "</g>\n<g text-anchor=\"middle\">\n");
	for (double x = 0; x <= a->xtop + 1e-9; x += a->xstep)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\">%g</text>\n", PL + (PR - PL) * x / a->xtop,
			B2 + 16, x);
	fprintf(f, "<text x=\"%d\" y=\"%d\">time since the start of measurement (s)</text>\n",
		(PL + PR) / 2, B2 + 34);
	fprintf(f, "</g>\n");
	svg_frame(f, T2, B2);
}

/* Series @i's throughput samples in panel 2. */
static void svg_tput_curve(FILE *f, const struct series *s, int i, const struct svg_axes *a)
{
	if (!s->ntput)
		return;
	fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
		colors[i]);
	for (size_t j = 0; j < s->ntput; j++)
		fprintf(f, "%.1f,%.1f ", PL + (PR - PL) * ((double)(j + 1) * s->interval) / a->xtop,
			B2 - (B2 - T2) * s->tput[j] / a->ttop);
	fprintf(f, "\"/>\n");
}

/* The chart of @ns series (1 or 2): legend, latency by percentile, then
 * throughput over time. */
static void write_svg(FILE *f, struct series *s, int ns, const char *title)
{
	struct svg_axes a;

	svg_axes(&a, s, ns);
	svg_head(f, s, ns, title);
	svg_latency_axes(f, &a);
	for (int i = 0; i < ns; i++)
		svg_latency_curve(f, &s[i], i, &a);
	svg_tput_axes(f, &a);
	for (int i = 0; i < ns; i++)
		svg_tput_curve(f, &s[i], i, &a);
	fprintf(f, "</svg>\n");
}

static FILE *open_out(const char *path)
{
	FILE *f = path ? fopen(path, "w") : stdout;

	if (!f)
		fprintf(stderr, "rcukv-cli bench: cannot write --svg %s: %s\n", path,
			strerror(errno));
	return f;
}

static int close_out(FILE *f, const char *path)
{
	if (f == stdout)
		return fflush(f) == 0 ? 0 : -1;
	if (fclose(f) != 0) {
		fprintf(stderr, "rcukv-cli bench: writing --svg %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int bench_report_svg(const struct bench_result *r, const char *path)
{
	struct series *s = calloc(1, sizeof(*s));
	char title[700];
	FILE *f;
	int rc;

	if (!s)
		return -1;
	snprintf(s->label, sizeof(s->label), "%s", r->label ? r->label : r->target);
	s->n = curve_points(&r->all, s->pct, s->val, CURVE_CAP);
	s->interval = r->series_interval;
	s->tput = r->series;
	s->ntput = r->nseries;
	s->ops = r->elapsed > 0 ? (double)r->done / r->elapsed : 0;
	s->p50 = (double)cli_hist_percentile(&r->all, 50);
	s->p99 = (double)cli_hist_percentile(&r->all, 99);
	s->p999 = (double)cli_hist_percentile(&r->all, 99.9);
	s->max = (double)r->all.max;
	char loop[64] = "closed loop";
	if (r->rate > 0)
		snprintf(loop, sizeof(loop), "open loop at %.0f ops/s", r->rate);
	snprintf(title, sizeof(title), "rcukv-cli bench %s: %d thr x %d conn, pipeline %d, %s",
		 r->target, r->threads, r->clients, r->pipeline, loop);
	f = open_out(path);
	if (!f) {
		free(s);
		return -1;
	}
	write_svg(f, s, 1, title);
	rc = close_out(f, path);
	free(s);
	return rc;
}

/* ---- --svg-compare: read back our own JSON ---- */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	struct cli_buf b = {0};
	char tmp[65536];
	size_t n;

	if (!f)
		return NULL;
	cli_buf_add(&b, "", 0);
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		cli_buf_add(&b, tmp, n);
	fclose(f);
	return b.p;
}

/* Position just after "key": in the text, or NULL. */
static const char *after_key(const char *text, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(text, pat);
	return p ? p + strlen(pat) : NULL;
}

static double num_at(const char *text, const char *key, double dflt)
{
	const char *p = after_key(text, key);
	char *end;
	double v;

	if (!p)
		return dflt;
	v = strtod(p, &end);
	return end == p ? dflt : v;
}

static int load_series(const char *path, struct series *s)
{
	char *t = slurp(path);
	const char *p, *q;

	if (!t) {
		fprintf(stderr, "rcukv-cli bench: cannot read %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!strstr(t, "\"tool\": \"rcukv-cli bench\"") ||
	    !(p = after_key(t, "latency_curve_us"))) {
		fprintf(stderr, "rcukv-cli bench: %s is not a --json file of rcukv-cli bench\n",
			path);
		free(t);
		return -1;
	}
	/* Label: the first string after "label": (our writer escapes quotes). */
	q = after_key(t, "label");
	if (q && (q = strchr(q, '"'))) {
		size_t i = 0;
		for (q++; *q && *q != '"' && i + 1 < sizeof(s->label); q++) {
			if (*q == '\\' && q[1])
				q++;
			s->label[i++] = *q;
		}
		s->label[i] = '\0';
	}
	/* [[pct, val], ...] */
	p = strchr(p, '[');
	s->n = 0;
	while (p && s->n < CURVE_CAP) {
		char *end;
		p = strchr(p + 1, '[');
		if (!p)
			break;
		s->pct[s->n] = strtod(p + 1, &end);
		if (end == p + 1 || *end != ',')
			break;
		s->val[s->n] = strtod(end + 1, &end);
		s->n++;
		p = end;
		while (*p == ' ')
			p++;
		if (*p != ']')
			break;
		p++;
		while (*p == ' ')
			p++;
		if (*p != ',')
			break; /* "]]": the end of the curve */
	}
	const char *ts = after_key(t, "throughput_series");
	s->interval = ts ? num_at(ts, "interval_s", 0.1) : 0.1;
	p = ts ? after_key(ts, "ops_per_s") : NULL;
	if (p && (p = strchr(p, '['))) {
		size_t cap = 64;
		s->tput = malloc(sizeof(double) * cap);
		p++;
		while (s->tput) {
			char *end;
			double v = strtod(p, &end);
			if (end == p)
				break;
			if (s->ntput == cap) {
				double *n2 = realloc(s->tput, sizeof(double) * cap * 2);
				if (!n2)
					break;
				s->tput = n2;
				cap *= 2;
			}
			s->tput[s->ntput++] = v;
			p = end;
			while (*p == ' ' || *p == ',')
				p++;
		}
	}
	s->ops = num_at(t, "throughput_ops", 0);
	/* The top-level latency object is the last "latency_us" key. */
	const char *last = NULL, *scan = t;
	while ((scan = after_key(scan, "latency_us")) != NULL)
		last = scan;
	if (last) {
		s->p50 = num_at(last, "p50", 0);
		s->p99 = num_at(last, "p99", 0);
		s->p999 = num_at(last, "p99.9", 0);
		s->max = num_at(last, "max", 0);
	}
	free(t);
	if (s->n == 0) {
		fprintf(stderr, "rcukv-cli bench: %s has no latency curve\n", path);
		return -1;
	}
	return 0;
}

int cli_svg_compare(const char *a, const char *b, const char *out)
{
	struct series *s = calloc(2, sizeof(*s));
	FILE *f;
	int rc = 1;

	if (!s)
		return 1;
	if (load_series(a, &s[0]) == 0 && load_series(b, &s[1]) == 0) {
		char title[700];
		snprintf(title, sizeof(title), "rcukv-cli bench: %s vs %s", s[0].label, s[1].label);
		f = open_out(out);
		if (f) {
			write_svg(f, s, 2, title);
			rc = close_out(f, out) == 0 ? 0 : 1;
		}
	}
	free(s[0].tput);
	free(s[1].tput);
	free(s);
	return rc;
}
