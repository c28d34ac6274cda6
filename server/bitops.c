/*
 * bitops.c - the bit-string arithmetic of bitops.h: counting, searching,
 * ranges, BITOP's combination and BITFIELD's fields.
 *
 * Bit order is Redis's (bit 0 = the MSB of byte 0).  Whole bytes and
 * 8-byte words are handled in bulk; the partial bytes at a range's edges
 * are masked.  Word loads go through memcpy, so buffers need no alignment.
 * Tested by tests/server/test_bitops.c.
 */
#include "server/bitops.h"

#include <string.h>

uint64_t bit_count(const unsigned char *p, size_t n)
{
	uint64_t bits = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		bits += (uint64_t)__builtin_popcountll(w);
	}
	for (; i < n; i++)
		bits += (uint64_t)__builtin_popcount(p[i]);
	return bits;
}

/* The bits of a byte at positions [from, to] (0 = MSB), 0 <= from <= to < 8. */
static unsigned char byte_mask(unsigned from, unsigned to)
{
	return (unsigned char)((0xffu >> from) & (0xffu << (7 - to)));
}

uint64_t bit_count_range(const unsigned char *p, uint64_t first, uint64_t last)
{
	uint64_t fb = first >> 3, lb = last >> 3;

	if (fb == lb)
		return (uint64_t)__builtin_popcount(p[fb] & byte_mask(first & 7, last & 7));
	return (uint64_t)__builtin_popcount(p[fb] & byte_mask(first & 7, 7)) +
	       bit_count(p + fb + 1, (size_t)(lb - fb - 1)) +
	       (uint64_t)__builtin_popcount(p[lb] & byte_mask(0, last & 7));
}

/* First bit equal to @bit in byte @b within positions [from, to], or -1. */
static int byte_pos(unsigned char b, unsigned from, unsigned to, int bit)
{
	unsigned m = bit ? b : (unsigned char)~b;

	m &= byte_mask(from, to);
	return m ? __builtin_clz(m) - (int)(8 * sizeof(unsigned) - 8) : -1;
}

long long bit_pos_range(const unsigned char *p, uint64_t first, uint64_t last, int bit)
{
	uint64_t fb = first >> 3, lb = last >> 3, i;
	unsigned char skip = bit ? 0x00 : 0xff; /* a byte with no bit sought */
	int k;

	if (fb == lb) {
		k = byte_pos(p[fb], first & 7, last & 7, bit);
		return k < 0 ? -1 : (long long)(fb * 8 + (uint64_t)k);
	}
	k = byte_pos(p[fb], first & 7, 7, bit);
	if (k >= 0)
		return (long long)(fb * 8 + (uint64_t)k);
	/* Whole words of skip bytes, then bytes, up to the last byte. */
	i = fb + 1;
	for (; i + 8 <= lb; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		if (w != (bit ? 0 : UINT64_MAX))
			break;
	}
	for (; i < lb; i++)
		if (p[i] != skip)
			return (long long)(i * 8 + (uint64_t)byte_pos(p[i], 0, 7, bit));
	k = byte_pos(p[lb], 0, last & 7, bit);
	return k < 0 ? -1 : (long long)(lb * 8 + (uint64_t)k);
}

int bit_range(long long *start, long long *end, long long len)
{
	long long s = *start, e = *end;

	if (s < 0)
		s += len;
	if (e < 0)
		e += len;
	if (s < 0)
		s = 0;
	if (e < 0)
		e = 0;
	if (e >= len)
		e = len - 1;
	*start = s;
	*end = e;
	return s <= e;
}

/* Byte @i of source @j, zero past its end. */
static unsigned char src_byte(const unsigned char *const src[], const size_t srclen[], size_t j,
			      size_t i)
{
	return i < srclen[j] ? src[j][i] : 0;
}

void bitop_combine(enum bitop_kind op, unsigned char *out, size_t outlen,
		   const unsigned char *const src[], const size_t srclen[], size_t n)
{
	for (size_t i = 0; i < outlen; i++) {
		unsigned char b = src_byte(src, srclen, 0, i);

		if (op == BITOP_NOT) {
			out[i] = (unsigned char)~b;
			continue;
		}
		for (size_t j = 1; j < n; j++) {
			unsigned char s = src_byte(src, srclen, j, i);

			if (op == BITOP_AND)
				b &= s;
			else if (op == BITOP_OR)
				b |= s;
			else
				b ^= s;
		}
		out[i] = b;
	}
}

/* The t.bits-bit two's complement value of the low bits of @u. */
static int64_t field_value(uint64_t u, struct bf_type t)
{
	if (t.bits < 64) {
		u &= ((uint64_t)1 << t.bits) - 1;
		if (t.sign && (u >> (t.bits - 1)))
			u |= UINT64_MAX << t.bits;
	}
	return (int64_t)u;
}

int64_t bf_get(const unsigned char *p, size_t len, uint64_t offset, struct bf_type t)
{
	uint64_t u = 0;

	for (unsigned j = 0; j < t.bits; j++, offset++) {
		uint64_t byte = offset >> 3;
		unsigned b = byte < len ? (p[byte] >> (7 - (offset & 7))) & 1u : 0;

		u = (u << 1) | b;
	}
	return field_value(u, t);
}

void bf_set(unsigned char *p, uint64_t offset, struct bf_type t, uint64_t v)
{
	for (unsigned j = 0; j < t.bits; j++, offset++) {
		unsigned shift = 7 - (unsigned)(offset & 7);
		unsigned b = (unsigned)(v >> (t.bits - 1 - j)) & 1u;

		p[offset >> 3] = (unsigned char)((p[offset >> 3] & ~(1u << shift)) | (b << shift));
	}
}

int bf_add(int64_t value, int64_t incr, struct bf_type t, enum bf_overflow ow, int64_t *out)
{
	/* The exact sum; an unsigned field's value is read as unsigned (a
	 * negative SET value is a huge one, as Redis reads it). */
	__int128 v = t.sign ? (__int128)value : (__int128)(uint64_t)value;
	__int128 sum = v + incr, max, min;

	if (t.sign) {
		max = ((__int128)1 << (t.bits - 1)) - 1;
		min = -max - 1;
	} else {
		max = ((__int128)1 << t.bits) - 1;
		min = 0;
	}
	if (sum >= min && sum <= max) {
		*out = (int64_t)sum;
		return 0;
	}
	if (ow == BF_SAT)
		*out = (int64_t)(sum > max ? max : min);
	else if (ow == BF_WRAP)
		*out = field_value((uint64_t)sum, t);
	return 1;
}
