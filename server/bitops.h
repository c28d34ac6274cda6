/*
 * bitops.h - pure bit-string arithmetic for the bitmap commands
 * (server/cmd_bit.c): population count, first set/clear bit, index ranges,
 * BITOP's byte combination, and BITFIELD's integer fields with their
 * overflow policies.
 *
 * A bit string is a byte array read as Redis reads it: bit 0 is the most
 * significant bit of byte 0, bit 8 the most significant bit of byte 1, and
 * so on; the string is zero beyond its length.  Nothing here allocates,
 * locks or touches the server: every function is a computation on the
 * buffers it is given, callable from any thread (tests/server/test_bitops.c
 * checks each against a bit-by-bit reference).
 */
#ifndef SERVER_BITOPS_H
#define SERVER_BITOPS_H

#include <stddef.h>
#include <stdint.h>

/* Number of bits set in p[0..n). */
uint64_t bit_count(const unsigned char *p, size_t n);

/*
 * Bits set in the inclusive bit range [first, last] of p (the caller makes
 * sure last < 8 * the buffer's length and first <= last).
 */
uint64_t bit_count_range(const unsigned char *p, uint64_t first, uint64_t last);

/*
 * bit_pos_range() - position of the first bit equal to @bit (0 or 1) in the
 * inclusive bit range [first, last] of p (last < 8 * its length, first <=
 * last).
 * Return: the absolute bit position, or -1 when the range holds no such bit.
 */
long long bit_pos_range(const unsigned char *p, uint64_t first, uint64_t last, int bit);

/*
 * bit_range() - clamp a Redis [start, end] index pair (negative: from the
 * end) to a string of @len units, as GETRANGE, BITCOUNT and BITPOS do:
 * negative indexes count from the end, both are clamped to [0, len - 1].
 * Return: 1 and the clamped pair in *start and *end, or 0 if the range is empty.
 */
int bit_range(long long *start, long long *end, long long len);

enum bitop_kind { BITOP_AND, BITOP_OR, BITOP_XOR, BITOP_NOT };

/*
 * bitop_combine() - BITOP: out[i] for i < outlen is @op over byte i of each
 * of the @n sources (src[j] of srclen[j] bytes, zero past its end; NOT takes
 * src[0] only).
 */
void bitop_combine(enum bitop_kind op, unsigned char *out, size_t outlen,
		   const unsigned char *const src[], const size_t srclen[], size_t n);

/* BITFIELD's OVERFLOW policies. */
enum bf_overflow { BF_WRAP, BF_SAT, BF_FAIL };

/* A BITFIELD integer type: i1..i64 or u1..u63. */
struct bf_type {
	unsigned bits;
	int sign;
};

/*
 * bf_get() - the @t field at bit @offset of p[0..len), zero past len;
 * signed fields are sign-extended.  Returned as the two's complement bits
 * of an int64_t (an unsigned field is at most 2^63 - 1).
 */
int64_t bf_get(const unsigned char *p, size_t len, uint64_t offset, struct bf_type t);

/* bf_set() - store the low t.bits bits of @v at bit @offset of p; the
 * caller has made p at least (offset + t.bits + 7) / 8 bytes long. */
void bf_set(unsigned char *p, uint64_t offset, struct bf_type t, uint64_t v);

/*
 * bf_add() - @value + @incr in the range of @t under policy @ow (a SET is
 * bf_add(value, 0): the value itself must fit).  @value is a field value
 * (bf_get()) or, for SET, the user's integer.
 * Return: 0 and the sum in *out; 1 on overflow, with *out the wrapped or
 * saturated result (BF_FAIL: *out unchanged, nothing to store).
 */
int bf_add(int64_t value, int64_t incr, struct bf_type t, enum bf_overflow ow, int64_t *out);

#endif /* SERVER_BITOPS_H */
