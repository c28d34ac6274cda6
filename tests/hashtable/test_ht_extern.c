/*
 * test_ht_extern.c - ht_extern_hook(): values that own external memory
 * (HT_VAL_EXTERN, the server's lists) get their free function called exactly
 * once per entry, only when the entry is really freed (after replacement,
 * delete, ht_flush() or ht_free()), and their dup function when the table
 * copies the value itself (an expiry change); ht_entry_size() and
 * ht_stats().entry_bytes include the external bytes.  Built once per flavor.
 *
 * The external object is a refcounted block; every entry holding it owns one
 * reference.  At the end every block's count must be back to zero and no
 * block may have gone below zero.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtable/ht.h"
#include "rcu/rcu.h"

#include "tests/check.h"

#define NOBJ 64

struct obj {
	atomic_int refs;
	atomic_int negative;
};

static struct obj objs[NOBJ];
static atomic_int n_free, n_dup;

/* The value: [u8 type][7 pad][u64 obj index][u64 external bytes]. */
struct xval {
	uint8_t type;
	uint8_t pad[7];
	uint64_t idx;
	uint64_t ext;
};

static void x_free(void *arg, const struct ht_entry *e)
{
	struct xval v;

	(void)arg;
	memcpy(&v, ht_entry_val(e), sizeof(v));
	if (atomic_fetch_sub(&objs[v.idx].refs, 1) <= 0)
		atomic_fetch_add(&objs[v.idx].negative, 1);
	atomic_fetch_add(&n_free, 1);
}

static void x_dup(void *arg, const struct ht_entry *e)
{
	struct xval v;

	(void)arg;
	memcpy(&v, ht_entry_val(e), sizeof(v));
	atomic_fetch_add(&objs[v.idx].refs, 1);
	atomic_fetch_add(&n_dup, 1);
}

static int store(struct ht *ht, const char *key, uint64_t idx, uint64_t ext)
{
	struct xval v = {1, {0}, idx, ext};

	atomic_fetch_add(&objs[idx].refs, 1); /* the new entry's reference */
	return ht_set(ht, key, strlen(key), &v, sizeof(v) | HT_VAL_TAGGED | HT_VAL_EXTERN,
		      HT_NO_EXPIRE, 0, NULL);
}

static int live_refs(void)
{
	int s = 0;

	for (int i = 0; i < NOBJ; i++)
		s += atomic_load(&objs[i].refs);
	return s;
}

static int negatives(void)
{
	int s = 0;

	for (int i = 0; i < NOBJ; i++)
		s += atomic_load(&objs[i].negative);
	return s;
}

static void test_basic(void)
{
	struct ht_options o = {0};
	struct ht *ht;
	struct ht_stats st;
	const struct ht_entry *e;
	char key[32];

	o.poison_frees = 1;
	ht = ht_new(&o);
	CHECK(ht != NULL, "ht_new");
	ht_extern_hook(ht, x_dup, x_free, NULL);
	CHECK(store(ht, "a", 0, 1000) == 0, "store a");
	rcu_read_lock();
	e = ht_find_rcu(ht, "a", 1);
	CHECK(e && ht_entry_extern(e) && ht_entry_tagged(e), "a is tagged and extern");
	CHECK(e && ht_entry_vlen(e) == sizeof(struct xval), "vlen is the value's length");
	CHECK(e && ht_entry_extern_bytes(e) == 1000, "external bytes read back");
	CHECK(e && ht_entry_size(e) == ht_entry_alloc_size(e) + 1000, "entry size counts them");
	CHECK(e && (ht_entry_vlen_arg(e) & HT_VAL_EXTERN), "vlen_arg keeps the extern bit");
	rcu_read_unlock();
	ht_stats(ht, &st);
	CHECK(st.entry_bytes >= 1000, "entry_bytes counts external bytes (%zu)", st.entry_bytes);
	/* an expiry change copies the value: dup */
	CHECK(ht_expire_set(ht, "a", 1, ht_now_ms() + 100000, 0) == 1, "expire a");
	CHECK(atomic_load(&n_dup) == 1, "dup called once for the copy");
	CHECK(ht_expire_clear(ht, "a", 1) == 1, "persist a");
	CHECK(atomic_load(&n_dup) == 2, "dup called for the second copy");
	/* replacements and deletes */
	for (int i = 0; i < 200; i++) {
		snprintf(key, sizeof(key), "k%d", i % 20);
		store(ht, key, (uint64_t)(i % NOBJ), 64);
	}
	for (int i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		CHECK(ht_del(ht, key, strlen(key)) == 0, "del %s", key);
	}
	/* a plain string beside them: no hook call */
	CHECK(ht_set(ht, "s", 1, "v", 1, HT_NO_EXPIRE, 0, NULL) == 0, "plain set");
	/* live: a + k10..k19, each one reference at least */
	CHECK(live_refs() >= 11, "live entries keep their references (%d)", live_refs());
	CHECK(ht_flush(ht) == 0, "flush");
	ht_free(ht);
	CHECK(live_refs() == 0, "every reference dropped after flush and free (%d left)", live_refs());
	CHECK(negatives() == 0, "no reference dropped twice");
	CHECK(atomic_load(&n_free) == 200 + 1 + 2, "free called once per entry (%d)",
	      atomic_load(&n_free));
}

/* ht_free() with live and retired extern entries: every one freed once. */
static void test_free_live(void)
{
	struct ht *ht = ht_new(NULL);
	char key[32];

	ht_extern_hook(ht, x_dup, x_free, NULL);
	atomic_store(&n_free, 0);
	for (int i = 0; i < 500; i++) {
		snprintf(key, sizeof(key), "f%d", i % 50);
		store(ht, key, (uint64_t)(i % NOBJ), 8);
	}
	ht_free(ht);
	CHECK(live_refs() == 0, "ht_free dropped every reference (%d left)", live_refs());
	CHECK(atomic_load(&n_free) == 500, "free called once per entry (%d)", atomic_load(&n_free));
	CHECK(negatives() == 0, "no reference dropped twice");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	rcu_register_thread();
	test_basic();
	test_free_live();
	rcu_unregister_thread();
	return check_summary();
}
