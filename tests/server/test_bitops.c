/*
 * test_bitops.c - unit test of server/bitops.c, the bit-string arithmetic
 * of the bitmap commands.
 *
 * Every function is checked against a reference written the slow, obvious
 * way (one bit at a time, sums in __int128): bit_count_range and
 * bit_pos_range over every range of random and of all-0/all-1 buffers of a
 * few lengths (the word loops start and end at every alignment), bit_range
 * against GETRANGE's examples, bitop_combine for each operation over
 * sources of different lengths, bf_get/bf_set for every width at shifting
 * offsets (set then get returns the value, neighbours unchanged), and
 * bf_add at the edges of each width under WRAP, SAT and FAIL.  Ends with
 * "N passed, M failed, K skipped"; a reference mismatch is one failure
 * naming its inputs.
 */
#include "server/bitops.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/check.h"

/* ------------------------------------------------------------ references */

static int ref_bit(const unsigned char *p, size_t len, uint64_t i)
{
	return (i >> 3) < len ? (p[i >> 3] >> (7 - (i & 7))) & 1 : 0;
}

static uint64_t ref_count(const unsigned char *p, uint64_t first, uint64_t last)
{
	uint64_t n = 0;

	for (uint64_t i = first; i <= last; i++)
		n += (uint64_t)ref_bit(p, SIZE_MAX, i);
	return n;
}

static long long ref_pos(const unsigned char *p, uint64_t first, uint64_t last, int bit)
{
	for (uint64_t i = first; i <= last; i++)
		if (ref_bit(p, SIZE_MAX, i) == bit)
			return (long long)i;
	return -1;
}

/* Reproducible pseudo-random words: a multiplicative hash of a counter. */
static uint64_t rng_counter;

static uint64_t next_rand(void)
{
	uint64_t k = ++rng_counter * 0x9e3779b97f4a7c15ull;

	return k ^ (k >> 29);
}

static void fill(unsigned char *p, size_t n, int kind)
{
	for (size_t i = 0; i < n; i++)
		p[i] = kind == 0 ? 0x00 : kind == 1 ? 0xff : (unsigned char)next_rand();
}

/* ------------------------------------------------------------ count, pos */

/* Every range of a @n-byte buffer of each kind; one check per buffer. */
static void test_ranges(size_t n)
{
	unsigned char buf[40];

	for (int kind = 0; kind < 3; kind++) {
		int bad = 0;

		fill(buf, n, kind);
		for (uint64_t f = 0; f < n * 8 && !bad; f++) {
			for (uint64_t l = f; l < n * 8 && !bad; l++) {
				bad |= bit_count_range(buf, f, l) != ref_count(buf, f, l);
				for (int b = 0; b < 2; b++)
					bad |= bit_pos_range(buf, f, l, b) != ref_pos(buf, f, l, b);
				if (bad)
					printf("  mismatch: %zu bytes kind %d range [%llu, %llu]\n", n,
					       kind, (unsigned long long)f, (unsigned long long)l);
			}
		}
		CHECK(!bad, "count/pos over every range of %zu bytes (kind %d)", n, kind);
		CHECK(bit_count(buf, n) == ref_count(buf, 0, n * 8 - 1), "bit_count of %zu bytes", n);
	}
}

/* A one in a sea of zeros (and the reverse) far past the word loop's start. */
static void test_sparse(void)
{
	unsigned char buf[4096];

	for (int b = 0; b < 2; b++) {
		fill(buf, sizeof(buf), b ? 0 : 1);
		buf[3001] = b ? 0x04 : 0xfb;
		CHECK(bit_pos_range(buf, 3, sizeof(buf) * 8 - 1, b) == 3001 * 8 + 5,
		      "bit_pos_range finds bit %d at 24013 (got %lld)", b,
		      bit_pos_range(buf, 3, sizeof(buf) * 8 - 1, b));
		CHECK(bit_pos_range(buf, 24014, sizeof(buf) * 8 - 1, b) == -1,
		      "bit_pos_range: none of bit %d after it", b);
		CHECK(bit_count(buf, sizeof(buf)) == (b ? 1 : sizeof(buf) * 8 - 1),
		      "bit_count of a sparse buffer (bit %d)", b);
	}
}

static void test_bit_range(void)
{
	static const struct {
		long long s, e, len;
		int ok;
		long long rs, re;
	} t[] = {
	    {0, -1, 12, 1, 0, 11},	  {-5, -1, 12, 1, 7, 11},   {7, 100, 12, 1, 7, 11},
	    {-100, 2, 12, 1, 0, 2},	  {5, 2, 12, 0, 5, 2},	    {0, -1, 0, 0, 0, -1},
	    {LLONG_MIN, LLONG_MAX, 12, 1, 0, 11},		    {LLONG_MAX, LLONG_MAX, 12, 0, 0, 0},
	    {-1, -1, 1, 1, 0, 0},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		long long s = t[i].s, e = t[i].e;
		int ok = bit_range(&s, &e, t[i].len);

		CHECK(ok == t[i].ok && (!ok || (s == t[i].rs && e == t[i].re)),
		      "bit_range(%lld, %lld, len %lld) = %d [%lld, %lld]", t[i].s, t[i].e, t[i].len,
		      ok, s, e);
	}
}

/* ------------------------------------------------------------------ BITOP */

static void test_bitop(void)
{
	const unsigned char a[] = {0xf0, 0x0f, 0xaa}, b[] = {0xff, 0x01}, c[] = {0x0f};
	const unsigned char *src[] = {a, b, c};
	const size_t len[] = {3, 2, 1};
	const unsigned char want[4][3] = {
	    {0x00, 0x00, 0x00}, /* AND: c is zero past its end */
	    {0xff, 0x0f, 0xaa},
	    {0x00, 0x0e, 0xaa},
	    {0x0f, 0xf0, 0x55}, /* NOT a */
	};
	unsigned char out[3];

	for (int op = BITOP_AND; op <= BITOP_NOT; op++) {
		bitop_combine((enum bitop_kind)op, out, 3, src, len, op == BITOP_NOT ? 1 : 3);
		CHECK(!memcmp(out, want[op], 3), "bitop %d: %02x %02x %02x", op, out[0], out[1],
		      out[2]);
	}
	bitop_combine(BITOP_NOT, out, 3, &src[2], &len[2], 1);
	CHECK(out[0] == 0xf0 && out[1] == 0xff && out[2] == 0xff,
	      "NOT of a short source reads zeros past its end");
}

/* --------------------------------------------------------------- BITFIELD */

/* Every width at several offsets: set then get round-trips, other bits stay. */
static void test_bf_get_set(void)
{
	unsigned char buf[24], before[24];
	int bad = 0;

	for (int sign = 0; sign < 2; sign++) {
		for (unsigned bits = 1; bits <= (sign ? 64u : 63u); bits++) {
			struct bf_type t = {bits, sign};

			for (uint64_t off = 0; off < 70; off += 3) {
				uint64_t v = next_rand();
				int64_t want;

				fill(buf, sizeof(buf), 2);
				memcpy(before, buf, sizeof(buf));
				bf_set(buf, off, t, v);
				want = (int64_t)(bits < 64 ? v & ((1ull << bits) - 1) : v);
				if (sign && bits < 64 && ((uint64_t)want >> (bits - 1)))
					want = (int64_t)((uint64_t)want | (UINT64_MAX << bits));
				bad |= bf_get(buf, sizeof(buf), off, t) != want;
				for (uint64_t i = 0; i < sizeof(buf) * 8; i++)
					if (i < off || i >= off + bits)
						bad |= ref_bit(buf, sizeof(buf), i) !=
						       ref_bit(before, sizeof(before), i);
			}
		}
	}
	CHECK(!bad, "bf_set then bf_get: every width and offset, neighbours unchanged");
	fill(buf, 2, 1);
	CHECK(bf_get(buf, 2, 12, (struct bf_type){8, 0}) == 0xf0,
	      "bf_get reads zeros past the end");
	CHECK(bf_get(buf, 2, 12, (struct bf_type){8, 1}) == -16, "signed bf_get sign-extends");
	CHECK(bf_get(NULL, 0, 1000, (struct bf_type){64, 1}) == 0, "bf_get of nothing is 0");
}

struct add_case {
	unsigned bits;
	int sign;
	int64_t value, incr;
	int over;
	int64_t wrap, sat;
};

static void test_bf_add(void)
{
	static const struct add_case t[] = {
	    {8, 0, 250, 10, 1, 4, 255},
	    {8, 0, 5, -10, 1, 251, 0},
	    {8, 0, 200, 55, 0, 255, 255},
	    {8, 0, -1, 0, 1, 255, 255}, /* SET u8 -1: a huge unsigned value */
	    {8, 1, 127, 1, 1, -128, 127},
	    {8, 1, -128, -1, 1, 127, -128},
	    {8, 1, 200, 0, 1, -56, 127}, /* SET i8 200 */
	    {8, 1, -200, 0, 1, 56, -128},
	    {1, 1, 0, -1, 0, -1, -1},
	    {1, 1, -1, -1, 1, 0, -1},
	    {63, 0, INT64_MAX, 5, 1, 4, INT64_MAX},
	    {63, 0, 1, INT64_MIN, 1, 1, 0},
	    {64, 1, INT64_MAX, 1, 1, INT64_MIN, INT64_MAX},
	    {64, 1, INT64_MIN, -1, 1, INT64_MAX, INT64_MIN},
	    {64, 1, -2, INT64_MIN, 1, INT64_MAX - 1, INT64_MIN},
	    {64, 1, -1, INT64_MIN + 1, 0, INT64_MIN, INT64_MIN},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct bf_type ty = {t[i].bits, t[i].sign};
		int64_t w = 12345, s = 12345, f = 12345;
		int ow = bf_add(t[i].value, t[i].incr, ty, BF_WRAP, &w);
		int os = bf_add(t[i].value, t[i].incr, ty, BF_SAT, &s);
		int of = bf_add(t[i].value, t[i].incr, ty, BF_FAIL, &f);

		CHECK(ow == t[i].over && os == t[i].over && of == t[i].over &&
			  w == t[i].wrap && s == t[i].sat && f == (t[i].over ? 12345 : t[i].wrap),
		      "bf_add(%lld, %lld, %c%u): over %d/%d/%d wrap %lld sat %lld fail %lld",
		      (long long)t[i].value, (long long)t[i].incr, t[i].sign ? 'i' : 'u', t[i].bits,
		      ow, os, of, (long long)w, (long long)s, (long long)f);
	}
}

int main(void)
{
	static const size_t lens[] = {1, 2, 7, 8, 9, 17, 33};

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		test_ranges(lens[i]);
	test_sparse();
	test_bit_range();
	test_bitop();
	test_bf_get_set();
	test_bf_add();
	return check_summary();
}
