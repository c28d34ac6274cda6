/*
 * test_lathist.c - unit test of server/lathist.c, the latency histogram of
 * INFO latencystats:
 *   1. every value from 1 to 2^20 and a sweep up to LATHIST_MAX lands in a
 *      counter whose [lowest, highest] holds it, indices grow with the value,
 *      stay below LATHIST_LEN, and highest - value < value / 128 (the error
 *      bound lathist.h documents); values past LATHIST_MAX count as it;
 *   2. single samples print what redis-server 7.0.15 printed for the same
 *      durations (1 us -> 1.003, 3 us -> 3.007, 223 us -> 223.231, ...;
 *      p0 of 5 us -> 4.992; 0 -> 0.001);
 *   3. the rank rule (p / 100 * n + 0.5, at least 1) on known sets;
 *   4. percentile names as Redis prints them (50, 99.9, 33.333333, 100).
 * Ends with "N passed, M failed, K skipped" (tests/check.h).
 */
#include "server/lathist.h"

#include <stdio.h>
#include <string.h>

#include "tests/check.h"


static unsigned long long h[LATHIST_LEN];
static unsigned long long total;

static void reset(void)
{
	memset(h, 0, sizeof(h));
	total = 0;
}

static void add(uint64_t v, unsigned long long n)
{
	h[lathist_index(v)] += n;
	total += n;
}

/* One value: bucket bounds hold it, the error bound holds.  0 if wrong. */
static int value_ok(uint64_t v, unsigned *prev)
{
	unsigned i = lathist_index(v);
	uint64_t lo = lathist_lowest(i), hi = lathist_highest(i);

	if (i >= LATHIST_LEN || i < *prev || lo > v || hi < v || (hi - v) * 128 > v) {
		printf("FAIL value %llu: index %u (previous %u) [%llu, %llu]\n",
		       (unsigned long long)v, i, *prev, (unsigned long long)lo,
		       (unsigned long long)hi);
		return 0;
	}
	*prev = i;
	return 1;
}

static void test_layout(void)
{
	unsigned prev = 0;
	int ok = 1;

	for (uint64_t v = 1; v <= (1u << 20) && ok; v++)
		ok = value_ok(v, &prev);
	for (uint64_t v = (1u << 20); v <= LATHIST_MAX && ok; v += v / 997 + 1)
		ok = value_ok(v, &prev);
	ok = ok && value_ok(LATHIST_MAX, &prev);
	CHECK(ok, "bucket bounds and the 1/128 error bound for 1..LATHIST_MAX");
	CHECK(lathist_index(0) == lathist_index(1), "0 counts as 1");
	CHECK(lathist_index(LATHIST_MAX * 5) == lathist_index(LATHIST_MAX),
	      "past LATHIST_MAX counts as it");
	for (unsigned i = 1; i < LATHIST_LEN && ok; i++)
		if (lathist_lowest(i) != 0 && lathist_index(lathist_lowest(i)) != i &&
		    lathist_lowest(i) <= LATHIST_MAX)
			ok = 0, printf("FAIL index %u: lowest %llu maps to %u\n", i,
				       (unsigned long long)lathist_lowest(i),
				       lathist_index(lathist_lowest(i)));
	CHECK(ok, "lowest(i) maps back to i");
}

/* What redis-server 7.0.15 printed for one sample of @us microseconds. */
static void one(unsigned long long us, double pct, unsigned long long want)
{
	uint64_t got;

	reset();
	add(us * 1000, 1);
	got = lathist_percentile(h, total, pct);
	CHECK(got == want, "%llu us p%g: %llu, Redis prints %llu", us, pct, (unsigned long long)got,
	      want);
}

static void test_redis_values(void)
{
	one(1, 50, 1003);
	one(3, 99, 3007);
	one(6, 50, 6015);
	one(7, 99.9, 7007);
	one(8, 50, 8031);
	one(9, 99, 9023);
	one(12, 50, 12031);
	one(15, 50, 15039);
	one(62, 99, 62207);
	one(80, 50, 80383);
	one(223, 50, 223231);
	one(5, 0, 4992);
	one(0, 50, 1); /* 0 us: "0.001" */
	reset();
	CHECK(lathist_percentile(h, 0, 50) == 0, "empty histogram: 0");
}

static void test_ranks(void)
{
	reset();
	add(15000, 1);
	add(62000, 1);
	CHECK(lathist_percentile(h, total, 50) == 15039, "2 samples p50 is the first");
	CHECK(lathist_percentile(h, total, 99) == 62207, "2 samples p99 is the second");
	CHECK(lathist_percentile(h, total, 0) == 14976, "2 samples p0: lowest of the first");
	reset();
	for (unsigned v = 1; v <= 10; v++)
		add(v * 100, 1); /* exact below 256, width 2 / 4 above */
	CHECK(lathist_percentile(h, total, 50) == 501, "1..10 x100 p50 = rank 5: %llu",
	      (unsigned long long)lathist_percentile(h, total, 50));
	CHECK(lathist_percentile(h, total, 54) == 501, "p54: rank 5.9 -> 5");
	CHECK(lathist_percentile(h, total, 55) == 603, "p55: rank 6.0 -> 6: %llu",
	      (unsigned long long)lathist_percentile(h, total, 55));
	CHECK(lathist_percentile(h, total, 100) == 1003, "p100 is the maximum");
	CHECK(lathist_percentile(h, total, 250) == 1003, "above 100 counts as 100");
	CHECK(lathist_percentile(h, total, 1) == 100, "p1: rank 0.6 -> at least 1");
	reset();
	add(1000, 999);
	add(2000000, 1);
	CHECK(lathist_percentile(h, total, 99.9) == 1003, "999 fast + 1 slow: p99.9 fast");
	CHECK(lathist_percentile(h, total, 99.95) == 2000000 + 8191 - (2000000 % 8192),
	      "p99.95 slow: %llu", (unsigned long long)lathist_percentile(h, total, 99.95));
}

static void fmt(double pct, const char *want)
{
	char b[64];

	lathist_fmt_pct(b, sizeof(b), pct);
	CHECK(!strcmp(b, want), "percentile %.10g printed \"%s\", Redis prints \"%s\"", pct, b,
	      want);
}

int main(void)
{
	test_layout();
	test_redis_values();
	test_ranks();
	fmt(50, "50");
	fmt(99, "99");
	fmt(99.9, "99.9");
	fmt(0, "0");
	fmt(0.5, "0.5");
	fmt(100, "100");
	fmt(33.3333333333, "33.333333");
	fmt(99.9999999, "100");
	fmt(99.999, "99.999");
	return check_summary();
}
