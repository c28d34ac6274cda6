/*
 * lathist.c - percentiles of the log-linear latency histogram (lathist.h).
 * Pure functions; tested by tests/server/test_lathist.c.
 */
#include "server/lathist.h"

#include <stdio.h>
#include <string.h>

uint64_t lathist_lowest(unsigned idx)
{
	unsigned b;

	if (idx < 256)
		return idx;
	b = idx / 128 - 1;
	return (uint64_t)(idx % 128 + 128) << b;
}

uint64_t lathist_highest(unsigned idx)
{
	if (idx < 256)
		return idx;
	return lathist_lowest(idx) + (1ULL << (idx / 128 - 1)) - 1;
}

uint64_t lathist_percentile(const unsigned long long *counts, unsigned long long total, double pct)
{
	double p = pct < 100.0 ? pct : 100.0;
	unsigned long long rank = (unsigned long long)((p / 100.0) * (double)total + 0.5), seen = 0;

	if (rank < 1)
		rank = 1;
	for (unsigned i = 0; i < LATHIST_LEN; i++) {
		seen += counts[i];
		if (seen >= rank)
			return pct == 0.0 ? lathist_lowest(i) : lathist_highest(i);
	}
	return 0;
}

size_t lathist_fmt_pct(char *buf, size_t len, double pct)
{
	int n = snprintf(buf, len, "%f", pct);
	size_t k;

	if (n < 0 || (size_t)n >= len)
		return 0;
	k = (size_t)n;
	if (strchr(buf, '.')) {
		while (k > 0 && buf[k - 1] == '0')
			k--;
		if (k > 0 && buf[k - 1] == '.')
			k--;
	}
	buf[k] = '\0';
	return k;
}
