/*
 * bench_hashtable_lfht.c - the reference side of bench_hashtable: liburcu's
 * lock-free resizable hash table (cds_lfht, liburcu-cds) with urcu-qsbr, as a
 * user of it would write a key-value cache on it: one allocation per entry
 * (node, rcu_head, lengths, key and value inline), auto-resize, replacement
 * with cds_lfht_add_replace() and call_rcu() of the old node.
 * Benchmark-only: never linked into the product.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <urcu-qsbr.h>
#include <urcu/rculfhash.h>

#include "bench/bench_hashtable.h"

struct lnode {
	struct cds_lfht_node node;
	struct rcu_head rcu;
	uint32_t klen, vlen;
	char data[];
};

static int match(struct cds_lfht_node *n, const void *key)
{
	struct lnode *e = caa_container_of(n, struct lnode, node);

	return e->klen == BENCH_KLEN && memcmp(e->data, key, BENCH_KLEN) == 0;
}

static void *l_create(void)
{
	return cds_lfht_new(1, 1, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING, NULL);
}

static void free_cb(struct rcu_head *h)
{
	free(caa_container_of(h, struct lnode, rcu));
}

static void l_destroy(void *t)
{
	struct cds_lfht_iter it;
	struct cds_lfht_node *n;

	cds_lfht_for_each(t, &it, n)
	{
		if (!cds_lfht_del(t, n))
			call_rcu(&caa_container_of(n, struct lnode, node)->rcu, free_cb);
	}
	rcu_thread_offline();
	cds_lfht_destroy(t, NULL);
	rcu_barrier();
	rcu_thread_online();
}

static void l_reg(void)
{
	rcu_register_thread();
}

static void l_unreg(void)
{
	rcu_unregister_thread();
}

static void l_offline(void)
{
	rcu_thread_offline();
}

static void l_online(void)
{
	rcu_thread_online();
}

static struct lnode *mk(const char *key, const char *val)
{
	struct lnode *e = malloc(sizeof(*e) + BENCH_KLEN + BENCH_VLEN);

	if (!e)
		return NULL;
	cds_lfht_node_init(&e->node);
	e->klen = BENCH_KLEN;
	e->vlen = BENCH_VLEN;
	memcpy(e->data, key, BENCH_KLEN);
	memcpy(e->data + BENCH_KLEN, val, BENCH_VLEN);
	return e;
}

static int l_insert(void *t, const char *key, const char *val)
{
	static unsigned long cnt;
	struct lnode *e = mk(key, val);
	struct cds_lfht_node *r;

	if (!e)
		return -1;
	if ((++cnt & 63) == 0)
		rcu_quiescent_state(); /* as the rcukv side does */
	rcu_read_lock();
	r = cds_lfht_add_unique(t, ht_hash(key, BENCH_KLEN, BENCH_SEED), match, key, &e->node);
	rcu_read_unlock();
	if (r != &e->node) {
		free(e);
		return -1;
	}
	return 0;
}

static unsigned long l_lookups(void *t, const char *keys, size_t nkeys, uint64_t *seed,
			       unsigned long n)
{
	unsigned long hits = 0, i;
	struct cds_lfht_iter it;

	for (i = 0; i < n; i++) {
		const char *k = keys + (bench_rnd(seed) % nkeys) * BENCH_KLEN;
		struct cds_lfht_node *node;

		rcu_read_lock();
		cds_lfht_lookup(t, ht_hash(k, BENCH_KLEN, BENCH_SEED), match, k, &it);
		node = cds_lfht_iter_get_node(&it);
		if (node)
			hits += (unsigned char)caa_container_of(node, struct lnode, node)
				    ->data[BENCH_KLEN] != 0;
		rcu_read_unlock();
		if ((i & (BENCH_QS_EVERY - 1)) == BENCH_QS_EVERY - 1)
			rcu_quiescent_state();
	}
	rcu_quiescent_state();
	return hits;
}

static unsigned long l_replaces(void *t, const char *keys, size_t nkeys, uint64_t *seed,
				unsigned long n, const char *val)
{
	unsigned long done = 0, i;

	for (i = 0; i < n; i++) {
		const char *k = keys + (bench_rnd(seed) % nkeys) * BENCH_KLEN;
		struct lnode *e = mk(k, val);
		struct cds_lfht_node *old;

		if (!e)
			break;
		rcu_read_lock();
		old =
		    cds_lfht_add_replace(t, ht_hash(k, BENCH_KLEN, BENCH_SEED), match, k, &e->node);
		rcu_read_unlock();
		if (old)
			call_rcu(&caa_container_of(old, struct lnode, node)->rcu, free_cb);
		done++;
		if ((i & 63) == 63)
			rcu_quiescent_state();
	}
	rcu_quiescent_state();
	return done;
}

static void l_settle(void *t)
{
	(void)t;
	rcu_thread_offline();
	usleep(200 * 1000); /* auto-resize runs in liburcu's worker */
	rcu_barrier();
	rcu_thread_online();
}

const struct bench_sys bench_lfht_sys = {
    .name = "lfht",
    .create = l_create,
    .destroy = l_destroy,
    .thread_reg = l_reg,
    .thread_unreg = l_unreg,
    .offline = l_offline,
    .online = l_online,
    .insert = l_insert,
    .lookups = l_lookups,
    .replaces = l_replaces,
    .settle = l_settle,
};
