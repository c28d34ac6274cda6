/*
 * client/hist.c: log-linear latency histogram in microseconds, in the
 * spirit of HdrHistogram (our own layout, see cli.h).
 *
 * Bucket layout, worked example with CLI_HIST_LIN_BITS = 8: values 0..255
 * have one bucket each (index = value).  A value v >= 256 with highest set
 * bit e (v in [2^e, 2^(e+1))) keeps its top 8 bits: sub = (v >> (e-7)) - 128
 * in 0..127, index = 256 + (e-8)*128 + sub.  So 1000 (e=9) -> sub =
 * (1000>>2)-128 = 122 -> index 506, a bucket holding 1000..1003.
 *
 * A histogram is written by one thread; merging happens after that thread
 * was joined.  Tested by tests/client/test_client.c on known inputs.
 */
#include "client/cli.h"

#include <math.h>
#include <string.h>

void cli_hist_init(struct cli_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned cli_hist_index(uint64_t us)
{
	unsigned e, sub;

	if (us < (1u << CLI_HIST_LIN_BITS))
		return (unsigned)us;
	e = 63u - (unsigned)__builtin_clzll(us);
	if (e >= CLI_HIST_MAX_EXP)
		return CLI_HIST_NBUCKETS - 1;
	sub = (unsigned)(us >> (e - (CLI_HIST_LIN_BITS - 1))) - CLI_HIST_SUB;
	return (1u << CLI_HIST_LIN_BITS) + (e - CLI_HIST_LIN_BITS) * CLI_HIST_SUB + sub;
}

uint64_t cli_hist_lowest(unsigned idx)
{
	unsigned e, sub;

	if (idx < (1u << CLI_HIST_LIN_BITS))
		return idx;
	idx -= 1u << CLI_HIST_LIN_BITS;
	e = idx / CLI_HIST_SUB + CLI_HIST_LIN_BITS;
	sub = idx % CLI_HIST_SUB;
	return (uint64_t)(CLI_HIST_SUB + sub) << (e - (CLI_HIST_LIN_BITS - 1));
}

uint64_t cli_hist_highest(unsigned idx)
{
	if (idx + 1 >= CLI_HIST_NBUCKETS)
		return UINT64_MAX;
	return cli_hist_lowest(idx + 1) - 1;
}

void cli_hist_record(struct cli_hist *h, uint64_t us)
{
	h->b[cli_hist_index(us)]++;
	h->count++;
	if (us < h->min)
		h->min = us;
	if (us > h->max)
		h->max = us;
	h->sum += (double)us;
	h->sumsq += (double)us * (double)us;
}

void cli_hist_merge(struct cli_hist *dst, const struct cli_hist *src)
{
	if (!src->count)
		return;
	for (unsigned i = 0; i < CLI_HIST_NBUCKETS; i++)
		dst->b[i] += src->b[i];
	dst->count += src->count;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
}

uint64_t cli_hist_percentile(const struct cli_hist *h, double p)
{
	uint64_t want, seen = 0;

	if (!h->count)
		return 0;
	if (p <= 0)
		return h->min;
	if (p >= 100)
		return h->max;
	/* The rank of the p-th sample, 1-based, rounded up (as HdrHistogram). */
	want = (uint64_t)ceil(p / 100.0 * (double)h->count);
	if (want < 1)
		want = 1;
	for (unsigned i = 0; i < CLI_HIST_NBUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want) {
			uint64_t v = cli_hist_highest(i);
			if (v > h->max)
				v = h->max;
			if (v < h->min)
				v = h->min;
			return v;
		}
	}
	return h->max;
}

double cli_hist_mean(const struct cli_hist *h)
{
	return h->count ? h->sum / (double)h->count : 0.0;
}

double cli_hist_stddev(const struct cli_hist *h)
{
	double m, v;

	if (h->count < 2)
		return 0.0;
	m = cli_hist_mean(h);
	v = h->sumsq / (double)h->count - m * m;
	return v > 0 ? sqrt(v) : 0.0;
}

/*
 * HdrHistogram's percentile distribution: percentile levels advance by
 * halving the distance to 100 % with 5 ticks per half, the way
 * outputPercentileDistribution(out, 5, 1000.0) prints; values in ms.
 */
void cli_hist_write_hdr(const struct cli_hist *h, FILE *f)
{
	const double scale = 1000.0;
	double level = 0.0;

	fprintf(f, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount",
		"1/(1-Percentile)");
	if (h->count) {
		uint64_t last_rank = 0;

		for (int guard = 0; guard < 2000; guard++) {
			uint64_t v = cli_hist_percentile(h, level);
			/* Samples at or below v. */
			uint64_t rank = 0;
			unsigned idx = cli_hist_index(v);
			for (unsigned i = 0; i <= idx && i < CLI_HIST_NBUCKETS; i++)
				rank += h->b[i];
			if (v >= h->max || rank >= h->count)
				break;
			if (rank != last_rank || guard == 0)
				fprintf(f, "%12.3f %2.12f %10llu %14.2f\n", (double)v / scale,
					level / 100.0, (unsigned long long)rank,
					1.0 / (1.0 - level / 100.0));
			last_rank = rank;
			/* Next level: 5 ticks per halving of the distance to 100 %. */
			double half = floor(log2(100.0 / (100.0 - level))) + 1;
			level += 100.0 / (5.0 * pow(2.0, half));
			if (level >= 100.0)
				break;
		}
		fprintf(f, "%12.3f %2.12f %10llu\n", (double)h->max / scale, 1.0,
			(unsigned long long)h->count);
	}
	fprintf(f, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", cli_hist_mean(h) / scale,
		cli_hist_stddev(h) / scale);
	fprintf(f, "#[Max     = %12.3f, Total count    = %12llu]\n",
		(double)(h->count ? h->max : 0) / scale, (unsigned long long)h->count);
	fprintf(f, "#[Buckets = %12u, SubBuckets     = %12u]\n",
		CLI_HIST_MAX_EXP - CLI_HIST_LIN_BITS + 1, CLI_HIST_SUB * 2);
}
