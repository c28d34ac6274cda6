/*
 * lathist.h - the latency histogram behind INFO latencystats: log-linear
 * buckets laid out as an HDR histogram with lowest value 1, highest
 * 1,000,000,000 and 2 significant digits (what Redis 7.0 keeps per command),
 * so that a percentile prints the same number Redis would print for the same
 * samples.
 *
 * Layout.  Values 0..255 have a bucket each.  Above, bucket b (b >= 1) holds
 * [128 << b, 256 << b) in 128 sub-buckets of width 1 << b, so a value is
 * reported with a relative error below 1/128 (0.79%): a percentile is the
 * highest value of the sub-bucket it falls in, never lower than the sample
 * (percentile 0: the lowest value, never higher).  Samples are nanoseconds;
 * below 1 they count as 1, above LATHIST_MAX as LATHIST_MAX.  LATHIST_LEN
 * counters cover it all (3,072, 24 KiB of 64-bit counts).
 *
 * Percentile p of n samples: the value at rank (int)(p / 100 * n + 0.5),
 * at least 1, counting up from the smallest, as hdr_value_at_percentile().
 *
 * Pure functions, no state, no locking: the counters belong to the caller
 * (server/stats.c keeps one array per command and worker and merges them).
 * Tested by tests/server/test_lathist.c.
 */
#ifndef SERVER_LATHIST_H
#define SERVER_LATHIST_H

#include <stddef.h>
#include <stdint.h>

#define LATHIST_MAX 1000000000ULL /* 1 s in ns: larger samples count as this */
#define LATHIST_LEN 3072	  /* (23 buckets + 1) * 128 half sub-buckets */

/**
 * lathist_index() - counter index of a sample.
 * @v: the sample (ns); clamped to [1, LATHIST_MAX].
 *
 * Context: any.
 * Return: an index below LATHIST_LEN.
 */
static inline unsigned lathist_index(uint64_t v)
{
	unsigned b;

	if (v < 1)
		v = 1;
	if (v > LATHIST_MAX)
		v = LATHIST_MAX;
	if (v < 256)
		return (unsigned)v;
	b = (unsigned)(64 - __builtin_clzll(v)) - 8; /* v in [128 << b, 256 << b) */
	return b * 128 + (unsigned)(v >> b);
}

/**
 * lathist_lowest() - the smallest value counted at @idx.
 * @idx: a counter index (below LATHIST_LEN).
 *
 * Context: any.
 * Return: that value.
 */
uint64_t lathist_lowest(unsigned idx);

/**
 * lathist_highest() - the largest value counted at @idx.
 * @idx: a counter index (below LATHIST_LEN).
 *
 * Context: any.
 * Return: that value.
 */
uint64_t lathist_highest(unsigned idx);

/**
 * lathist_percentile() - the value at percentile @pct of @counts.
 * @counts: LATHIST_LEN counters.
 * @total: their sum (0 gives 0).
 * @pct: the percentile, 0..100 (above 100 counts as 100).
 *
 * Context: any; reads @counts only.
 * Return: the highest value of the counter the rank falls in (the lowest for
 * @pct 0), or 0 when @total is 0.
 */
uint64_t lathist_percentile(const unsigned long long *counts, unsigned long long total, double pct);

/**
 * lathist_fmt_pct() - a percentile as Redis prints it ("%f" without
 * trailing zeros or a trailing point: 50, 99.9, 33.333333).
 * @buf: where to write.
 * @len: its size (32 is plenty for 0..100).
 * @pct: the percentile.
 *
 * Context: any.
 * Return: the length written.
 */
size_t lathist_fmt_pct(char *buf, size_t len, double pct);

#endif /* SERVER_LATHIST_H */
