/*
 * rcukv.c - librcukv: the embeddable cache API (rcukv.h) over the RCU hash
 * table (ht.h), memb flavor, so that the application has no quiescent-state
 * duties: every call registers its thread on first use.
 *
 * Owns: struct rcukv (the table and the options).  Eviction under max_memory:
 * after a write, while the entries' bytes exceed the limit, sample a few
 * entries and delete the one with the oldest access clock (the table stores
 * the clock on lookups; writers advance it in 10 ms units).
 *
 * Tested by examples/cache/cache.c (built and run by make test, and linked
 * through pkg-config after a test install, tests/hashtable/test_install.sh).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtable/ht.h"
#include "hashtable/rcukv.h"
#include "rcu/rcu.h"

#if !defined(RCU_FLAVOR_MEMB)
#error "librcukv is built with -DRCU_FLAVOR_MEMB"
#endif

#define RCUKV_EVICT_SAMPLES 5
#define RCUKV_EVICT_MAX_ROUNDS 64

struct rcukv {
	struct ht *ht;
	size_t max_memory;     /* immutable */
	int64_t t0;	       /* ht_now_ms() at open; immutable */
	_Atomic uint64_t seed; /* sampling PRNG seed; relaxed, races are harmless */
};

/* Register the calling thread with memb on first use (unregistered at exit
 * by the RCU library). */
static inline void enter(void)
{
	if (RCU_UNLIKELY(!rcu_memb_reader_tls.link.registered))
		rcu_memb_register_thread();
}

rcukv *rcukv_open(const struct rcukv_options *opt)
{
	struct ht_options o = {0};
	rcukv *kv = calloc(1, sizeof(*kv));

	if (!kv) {
		errno = ENOMEM;
		return NULL;
	}
	if (opt) {
		o.initial_buckets = opt->initial_size;
		kv->max_memory = opt->max_memory;
	}
	kv->ht = ht_new(&o);
	if (!kv->ht) {
		free(kv);
		return NULL;
	}
	kv->t0 = ht_now_ms();
	atomic_init(&kv->seed, (uint64_t)kv->t0 | 1);
	return kv;
}

void rcukv_close(rcukv *kv)
{
	if (!kv)
		return;
	enter();
	ht_free(kv->ht);
	free(kv);
}

static int64_t deadline(uint64_t ttl_ms)
{
	if (!ttl_ms)
		return HT_NO_EXPIRE;
	if (ttl_ms > (uint64_t)INT64_MAX / 2)
		return INT64_MAX / 2;
	return ht_now_ms() + (int64_t)ttl_ms;
}

/* Evict until under max_memory, never the key just stored (@key).
 * Return: 0, or -ENOMEM if it cannot. */
static int evict(rcukv *kv, const void *key, size_t klen)
{
	struct ht_stats st;
	int rounds;

	for (rounds = 0; rounds < RCUKV_EVICT_MAX_ROUNDS; rounds++) {
		const struct ht_entry *s[RCUKV_EVICT_SAMPLES], *victim = NULL;
		uint64_t seed = atomic_fetch_add_explicit(&kv->seed, 0x9e3779b97f4a7c15ULL,
							  memory_order_relaxed);
		void *vkey = NULL;
		size_t n, i, vklen = 0;

		ht_stats(kv->ht, &st);
		if (st.entry_bytes <= kv->max_memory)
			return 0;
		rcu_read_lock();
		n = ht_sample_rcu(kv->ht, s, RCUKV_EVICT_SAMPLES, 0, &seed);
		for (i = 0; i < n; i++) {
			if (ht_entry_klen(s[i]) == klen &&
			    (klen == 0 || memcmp(ht_entry_key(s[i]), key, klen) == 0))
				continue;
			if (!victim || ht_entry_access(s[i]) < ht_entry_access(victim))
				victim = s[i];
		}
		if (victim) {
			vklen = ht_entry_klen(victim);
			vkey = malloc(vklen ? vklen : 1);
			if (vkey && vklen)
				memcpy(vkey, ht_entry_key(victim), vklen);
		}
		rcu_read_unlock();
		if (!victim) {
			if (st.count > 1)
				continue; /* sampled only the new key: sample again */
			/* the new entry alone is over the limit: refuse it */
			ht_del(kv->ht, key, klen);
			return -ENOMEM;
		}
		if (!vkey)
			return -ENOMEM;
		ht_del(kv->ht, vkey, vklen);
		free(vkey);
	}
	ht_stats(kv->ht, &st);
	return st.entry_bytes <= kv->max_memory ? 0 : -ENOMEM;
}

static int store(rcukv *kv, const void *key, size_t klen, const void *val, size_t vlen,
		 uint64_t ttl_ms, unsigned int flags)
{
	int rc;

	enter();
	/* An entry that alone exceeds the limit would evict everything in vain. */
	if (kv->max_memory && sizeof(struct ht_entry) + 8 + klen + vlen > kv->max_memory)
		return -ENOMEM;
	ht_clock_set(kv->ht, (uint32_t)((ht_now_ms() - kv->t0) / 10));
	rc = ht_set(kv->ht, key, klen, val, vlen, deadline(ttl_ms), flags, NULL);
	if (rc == 0 && kv->max_memory)
		rc = evict(kv, key, klen);
	return rc;
}

int rcukv_set(rcukv *kv, const void *key, size_t klen, const void *val, size_t vlen,
	      uint64_t ttl_ms)
{
	return store(kv, key, klen, val, vlen, ttl_ms, 0);
}

int rcukv_add(rcukv *kv, const void *key, size_t klen, const void *val, size_t vlen,
	      uint64_t ttl_ms)
{
	return store(kv, key, klen, val, vlen, ttl_ms, HT_SET_NX);
}

int rcukv_get(rcukv *kv, const void *key, size_t klen, void **val, size_t *vlen)
{
	enter();
	return ht_get_alloc(kv->ht, key, klen, val, vlen, NULL);
}

long long rcukv_get_buf(rcukv *kv, const void *key, size_t klen, void *buf, size_t bufsize)
{
	enter();
	return ht_get(kv->ht, key, klen, buf, bufsize, NULL);
}

int rcukv_exists(rcukv *kv, const void *key, size_t klen)
{
	enter();
	return ht_exists(kv->ht, key, klen);
}

int rcukv_del(rcukv *kv, const void *key, size_t klen)
{
	enter();
	return ht_del(kv->ht, key, klen);
}

int rcukv_expire(rcukv *kv, const void *key, size_t klen, uint64_t ttl_ms)
{
	int rc;

	enter();
	if (!ttl_ms)
		rc = ht_expire_clear(kv->ht, key, klen);
	else
		rc = ht_expire_set(kv->ht, key, klen, deadline(ttl_ms), 0);
	return rc < 0 ? rc : 0;
}

long long rcukv_ttl(rcukv *kv, const void *key, size_t klen)
{
	int64_t x;
	int rc;

	enter();
	rc = ht_expire_get(kv->ht, key, klen, &x);
	if (rc)
		return rc;
	if (x == HT_NO_EXPIRE)
		return -1;
	x -= ht_now_ms();
	return x < 0 ? 0 : x;
}

struct incr_ctx {
	long long by, result;
};

static int incr_cb(struct ht_rmw *r, void *arg)
{
	struct incr_ctx *c = arg;
	long long v = 0;
	char num[32], *end;
	int n;

	if (r->old) {
		size_t l = ht_entry_vlen(r->old);

		if (l == 0 || l >= sizeof(num))
			return -EINVAL;
		memcpy(num, ht_entry_val(r->old), l);
		num[l] = 0;
		errno = 0;
		v = strtoll(num, &end, 10);
		if (*end || errno)
			return -EINVAL;
	}
	if (__builtin_add_overflow(v, c->by, &v))
		return -ERANGE;
	n = snprintf(num, sizeof(num), "%lld", v);
	end = ht_rmw_alloc(r, (size_t)n);
	if (!end)
		return -ENOMEM;
	memcpy(end, num, (size_t)n);
	c->result = v;
	return HT_RMW_STORE;
}

int rcukv_incr(rcukv *kv, const void *key, size_t klen, long long by, long long *result)
{
	struct incr_ctx c = {by, 0};
	int rc;

	enter();
	rc = ht_rmw(kv->ht, key, klen, incr_cb, &c);
	if (rc < 0)
		return rc;
	if (result)
		*result = c.result;
	return 0;
}

struct iter_ctx {
	rcukv_iter_fn fn;
	void *arg;
};

static int iter_cb(const struct ht_entry *e, void *arg)
{
	struct iter_ctx *c = arg;

	return c->fn(ht_entry_key(e), ht_entry_klen(e), ht_entry_val(e), ht_entry_vlen(e), c->arg);
}

int rcukv_iterate(rcukv *kv, rcukv_iter_fn fn, void *arg)
{
	struct iter_ctx c = {fn, arg};

	enter();
	return ht_scan_all(kv->ht, iter_cb, &c);
}

size_t rcukv_count(rcukv *kv)
{
	return ht_count(kv->ht);
}

size_t rcukv_memory(rcukv *kv)
{
	struct ht_stats st;

	ht_stats(kv->ht, &st);
	return st.entry_bytes;
}

int rcukv_clear(rcukv *kv)
{
	enter();
	return ht_flush(kv->ht);
}

void rcukv_free(void *p)
{
	free(p);
}
