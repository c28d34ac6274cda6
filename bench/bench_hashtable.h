/*
 * bench_hashtable.h - what the two sides of bench_hashtable share: the table
 * under test (rcukv's ht, QSBR) and liburcu's cds_lfht (urcu-qsbr) live in
 * separate translation units, because their RCU headers define the same
 * macro names.  Same keys, same hash function (ht_hash, same seed), same
 * thread counts, same workloads.
 */
#ifndef BENCH_HASHTABLE_H
#define BENCH_HASHTABLE_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_KLEN 16
#define BENCH_VLEN 32
#define BENCH_SEED 0x5eed5eed12345678ULL
#define BENCH_QS_EVERY 256 /* lookups between quiescent states */

/* From hashtable/ht.c (declared here: ht.h cannot be included next to urcu). */
uint64_t ht_hash(const void *key, size_t len, uint64_t seed);

struct bench_sys {
	const char *name;
	void *(*create)(void);
	void (*destroy)(void *t);
	void (*thread_reg)(void); /* register the calling thread, online */
	void (*thread_unreg)(void);
	void (*offline)(void); /* around sleeps of a registered thread */
	void (*online)(void);
	/* key: BENCH_KLEN bytes; val: BENCH_VLEN bytes.  0 on success. */
	int (*insert)(void *t, const char *key, const char *val);
	/* @n lookups of random keys out of @keys[0..nkeys); returns hits. */
	unsigned long (*lookups)(void *t, const char *keys, size_t nkeys, uint64_t *seed,
				 unsigned long n);
	/* @n replacements of random keys' values; returns replacements done. */
	unsigned long (*replaces)(void *t, const char *keys, size_t nkeys, uint64_t *seed,
				  unsigned long n, const char *val);
	void (*settle)(void *t); /* wait for background resizes and frees */
};

extern const struct bench_sys bench_lfht_sys;

static inline uint64_t bench_rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

#endif
