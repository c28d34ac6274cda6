/*
 * test_ht_txn.c - ht_txn() is atomic for lock-free readers (ht.h guarantee 9),
 * nests, and ht_watch() reports every publication; built once per flavor.
 * Entries are poisoned (0x6b) before they are freed, so a reader that kept a
 * freed entry sees a wrong key or value.
 *
 *  transfer  writers move random amounts between random accounts a:0..a:N-1
 *            in ht_txn() (half of them through the nested single-key writers:
 *            ht_set() and ht_rmw() inside the function, the way EXEC runs
 *            commands), while readers sum every account with ht_mfind_rcu():
 *            the total never changes.  Each transaction also stamps both of
 *            its accounts with a global generation; readers that look the two
 *            keys of a pair up one by one (ht_find_rcu(), in either order)
 *            never see the second key older than the first one's stamp says
 *            it must be.  A resizer grows and shrinks the table meanwhile.
 *  nested    a nested ht_txn() inside an outer one sees and publishes with
 *            the outer's stripes held; lookups from the same thread see the
 *            transaction's writes at once (no self-wait).
 *  watch     ht_watch() returns presence; the hook fires for set, rmw, txn
 *            and expiry changes of a watched stripe's keys, not for deletes,
 *            and not once the watch is dropped.
 * Duration: TORTURE_SECONDS (default 2) per flavor for "transfer".
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hashtable/ht.h"
#include "rcu/rcu.h"

#include "tests/check.h"

#define N_ACCT 64
#define START 1000
#define N_WRITERS 2
#define N_READERS 2

static struct ht *ht;
static atomic_int stop;
static _Atomic uint64_t gen;
static atomic_ulong n_txn, n_sums, n_pairs, bad_sum, bad_pair, bad_val;

/* An account's value: "<balance> <generation>" in a fixed-width record, so a
 * poisoned (freed) entry fails the parse. */
struct acct {
	long long bal;
	uint64_t gen;
};

static size_t acct_key(char *buf, int i)
{
	return (size_t)sprintf(buf, "a:%d", i);
}

static size_t acct_fmt(char *buf, const struct acct *a)
{
	return (size_t)sprintf(buf, "%020lld %020" PRIu64, a->bal, a->gen);
}

static int acct_parse(const struct ht_entry *e, struct acct *a)
{
	char tmp[64];
	size_t n = ht_entry_vlen(e);

	if (n != 41)
		return -1;
	memcpy(tmp, ht_entry_val(e), n);
	tmp[n] = 0;
	if (sscanf(tmp, "%lld %" SCNu64, &a->bal, &a->gen) != 2)
		return -1;
	return 0;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* --- transfer ---------------------------------------------------------------- */

struct xfer {
	int from, to;
	long long amount;
	uint64_t gen;
	int nested;
};

struct rmw_add {
	long long delta;
	uint64_t gen;
};

static int rmw_fn(struct ht_rmw *r, void *argp)
{
	struct rmw_add *x = argp;
	struct acct a;
	char buf[64];
	size_t n;
	void *p;

	if (!r->old || acct_parse(r->old, &a)) {
		atomic_fetch_add(&bad_val, 1);
		return HT_RMW_KEEP;
	}
	a.bal += x->delta;
	a.gen = x->gen;
	n = acct_fmt(buf, &a);
	p = ht_rmw_alloc(r, n);
	if (!p)
		return -ENOMEM;
	memcpy(p, buf, n);
	r->expire_ms = HT_NO_EXPIRE;
	return HT_RMW_STORE;
}

static int xfer_fn(struct ht_txn *tx, void *argp)
{
	struct xfer *x = argp;
	const struct ht_entry *e0 = ht_txn_get(tx, 0), *e1 = ht_txn_get(tx, 1);
	struct acct a, b;
	char buf[64], key[16];
	size_t n, kl;

	if (!e0 || !e1 || acct_parse(e0, &a) || acct_parse(e1, &b)) {
		atomic_fetch_add(&bad_val, 1);
		return -1;
	}
	if (x->nested) {
		/* As EXEC runs commands: the plain writers, stripes already held. */
		struct rmw_add add = {x->amount, x->gen};

		a.bal -= x->amount;
		a.gen = x->gen;
		n = acct_fmt(buf, &a);
		kl = acct_key(key, x->from);
		if (ht_set(ht, key, kl, buf, n, HT_NO_EXPIRE, 0, NULL))
			return -1;
		kl = acct_key(key, x->to);
		return ht_rmw(ht, key, kl, rmw_fn, &add) == HT_RMW_STORE ? 0 : -1;
	}
	a.bal -= x->amount;
	b.bal += x->amount;
	a.gen = b.gen = x->gen;
	n = acct_fmt(buf, &a);
	if (ht_txn_set(tx, 0, buf, n, HT_NO_EXPIRE))
		return -1;
	n = acct_fmt(buf, &b);
	return ht_txn_set(tx, 1, buf, n, HT_NO_EXPIRE);
}

static void *writer(void *arg)
{
	uint64_t s = (uintptr_t)arg * 0x9e3779b97f4a7c15ull;
	char k0[16], k1[16];

	rcu_register_thread();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		struct xfer x;
		const void *keys[2] = {k0, k1};
		size_t kl[2];

		x.from = (int)(rnd(&s) % N_ACCT);
		x.to = (int)(rnd(&s) % (N_ACCT - 1));
		if (x.to >= x.from)
			x.to++;
		x.amount = (long long)(rnd(&s) % 100);
		x.nested = (int)(rnd(&s) & 1);
		x.gen = atomic_fetch_add(&gen, 1) + 1;
		kl[0] = acct_key(k0, x.from);
		kl[1] = acct_key(k1, x.to);
		if (ht_txn(ht, 2, keys, kl, xfer_fn, &x) != 0)
			atomic_fetch_add(&bad_val, 1);
		atomic_fetch_add_explicit(&n_txn, 1, memory_order_relaxed);
		rcu_quiescent_state();
	}
	rcu_unregister_thread();
	return NULL;
}

static void sum_all(void)
{
	static _Thread_local char names[N_ACCT][16];
	const void *keys[N_ACCT];
	size_t kl[N_ACCT];
	const struct ht_entry *e[N_ACCT];
	long long total = 0;

	for (int i = 0; i < N_ACCT; i++) {
		kl[i] = acct_key(names[i], i);
		keys[i] = names[i];
	}
	rcu_read_lock();
	ht_mfind_rcu(ht, N_ACCT, keys, kl, e);
	for (int i = 0; i < N_ACCT; i++) {
		struct acct a;

		if (!e[i] || acct_parse(e[i], &a)) {
			atomic_fetch_add(&bad_val, 1);
			continue;
		}
		total += a.bal;
	}
	rcu_read_unlock();
	if (total != (long long)N_ACCT * START && atomic_fetch_add(&bad_sum, 1) < 5)
		printf("  MGET-style sum %lld, expected %lld\n", total, (long long)N_ACCT * START);
	atomic_fetch_add_explicit(&n_sums, 1, memory_order_relaxed);
}

/* Two accounts looked up one after the other: a transaction that wrote
 * both with generation g is wholly visible once one of them shows g, so the
 * second lookup's key carries a generation at least as new as any
 * transaction on both keys the first lookup saw.  The test checks the
 * simpler consequence on a fixed pair both touched only together. */
static void pair_check(uint64_t *s)
{
	char k0[16], k1[16];
	const struct ht_entry *e0, *e1;
	struct acct a, b;
	int first = (int)(rnd(s) & 1);

	acct_key(k0, first ? N_ACCT : N_ACCT + 1);
	acct_key(k1, first ? N_ACCT + 1 : N_ACCT);
	rcu_read_lock();
	e0 = ht_find_rcu(ht, k0, strlen(k0));
	e1 = ht_find_rcu(ht, k1, strlen(k1));
	if (!e0 || !e1 || acct_parse(e0, &a) || acct_parse(e1, &b)) {
		atomic_fetch_add(&bad_val, 1);
	} else if (b.gen < a.gen && atomic_fetch_add(&bad_pair, 1) < 5) {
		printf("  pair: %s at generation %" PRIu64 " then %s at older %" PRIu64 "\n",
		       k0, a.gen, k1, b.gen);
	}
	rcu_read_unlock();
	atomic_fetch_add_explicit(&n_pairs, 1, memory_order_relaxed);
}

/* The pair a:N, a:N+1 is written only together: by this thread, whose
 * transactions stamp both with one generation (nested writers, in either
 * order). */
static int pair_fn(struct ht_txn *tx, void *argp)
{
	uint64_t *g = argp;
	struct acct a = {0, *g};
	char buf[64], key[16];
	size_t n = acct_fmt(buf, &a);
	int order = (int)(*g & 1);

	(void)tx;
	for (int j = 0; j < 2; j++) {
		size_t kl = acct_key(key, N_ACCT + (j ^ order));

		if (ht_set(ht, key, kl, buf, n, HT_NO_EXPIRE, 0, NULL))
			return -1;
	}
	return 0;
}

static void *pair_writer(void *arg)
{
	char k0[16], k1[16];
	const void *keys[2] = {k0, k1};
	size_t kl[2];

	(void)arg;
	kl[0] = acct_key(k0, N_ACCT);
	kl[1] = acct_key(k1, N_ACCT + 1);
	rcu_register_thread();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		uint64_t g = atomic_fetch_add(&gen, 1) + 1;

		if (ht_txn(ht, 2, keys, kl, pair_fn, &g) != 0)
			atomic_fetch_add(&bad_val, 1);
		rcu_quiescent_state();
	}
	rcu_unregister_thread();
	return NULL;
}

static void *reader(void *arg)
{
	uint64_t s = ((uintptr_t)arg + 7) * 0x2545f4914f6cdd1dull;

	rcu_register_thread();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (rnd(&s) & 1)
			sum_all();
		else
			pair_check(&s);
		rcu_quiescent_state();
	}
	rcu_unregister_thread();
	return NULL;
}

static void *resizer(void *arg)
{
	size_t sizes[] = {64, 4096, 16, 1024};
	int i = 0;

	(void)arg;
	rcu_register_thread();
	rcu_thread_offline();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		ht_resize(ht, sizes[i++ % 4]);
		usleep(2000);
	}
	rcu_thread_online();
	rcu_unregister_thread();
	return NULL;
}

static void test_transfer(double secs)
{
	struct ht_options o = {.initial_buckets = 64, .stripes = 16, .poison_frees = 1,
			       .no_auto_resize = 1};
	pthread_t th[N_WRITERS + N_READERS + 2];
	int nt = 0;
	struct acct a = {START, 0};
	char key[16], buf[64];
	long long total = 0;

	ht = ht_new(&o);
	for (int i = 0; i < N_ACCT + 2; i++) {
		size_t kl = acct_key(key, i), n = acct_fmt(buf, &a);

		ht_set(ht, key, kl, buf, n, HT_NO_EXPIRE, 0, NULL);
	}
	atomic_store(&stop, 0);
	for (int i = 0; i < N_WRITERS; i++)
		pthread_create(&th[nt++], NULL, writer, (void *)(uintptr_t)(i + 1));
	pthread_create(&th[nt++], NULL, pair_writer, NULL);
	for (int i = 0; i < N_READERS; i++)
		pthread_create(&th[nt++], NULL, reader, (void *)(uintptr_t)(i + 1));
	pthread_create(&th[nt++], NULL, resizer, NULL);
	rcu_thread_offline();
	{
		struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};

		nanosleep(&ts, NULL);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	rcu_thread_online();
	for (int i = 0; i < N_ACCT; i++) {
		const struct ht_entry *e;

		acct_key(key, i);
		rcu_read_lock();
		e = ht_find_rcu(ht, key, strlen(key));
		if (e && !acct_parse(e, &a))
			total += a.bal;
		rcu_read_unlock();
	}
	printf("flavor %s, %.1f s: %lu transactions, %lu sums, %lu pair reads\n",
	       RCU_FLAVOR_NAME, secs, n_txn, n_sums, n_pairs);
	CHECK(n_txn > 0 && n_sums > 0 && n_pairs > 0, "every thread made progress");
	CHECK(bad_val == 0, "every value read was well-formed (%lu were not)", bad_val);
	CHECK(bad_sum == 0, "ht_mfind_rcu() never saw a partial transaction (%lu sums off)",
	      bad_sum);
	CHECK(bad_pair == 0, "single lookups never saw a partial transaction (%lu pairs off)",
	      bad_pair);
	CHECK(total == (long long)N_ACCT * START, "the total is still %d (%lld)", N_ACCT * START,
	      total);
	CHECK(ht_validate(ht) == 0, "ht_validate() after the run");
	ht_free(ht);
	ht = NULL;
}

/* --- nested ------------------------------------------------------------------- */

struct nest_arg {
	int inner_saw;
	int self_saw;
};

static int inner_fn(struct ht_txn *tx, void *argp)
{
	struct nest_arg *na = argp;
	const struct ht_entry *e = ht_txn_get(tx, 0);

	na->inner_saw = e && ht_entry_vlen(e) == 5 && !memcmp(ht_entry_val(e), "outer", 5);
	return ht_txn_set(tx, 0, "inner", 5, HT_NO_EXPIRE);
}

static int outer_fn(struct ht_txn *tx, void *argp)
{
	struct nest_arg *na = argp;
	const void *k[1] = {"x"};
	size_t kl[1] = {1};
	const struct ht_entry *e;

	if (ht_txn_set(tx, 0, "outer", 5, HT_NO_EXPIRE))
		return -1;
	if (ht_txn(ht, 1, k, kl, inner_fn, na) != 0)
		return -2;
	e = ht_find_rcu(ht, "x", 1); /* our own stripe is odd: no self-wait */
	na->self_saw = e && ht_entry_vlen(e) == 5 && !memcmp(ht_entry_val(e), "inner", 5);
	return ht_del(ht, "y", 1) == 0 ? 0 : -3;
}

static void test_nested(void)
{
	struct ht_options o = {.poison_frees = 1};
	const void *k[2] = {"x", "y"};
	size_t kl[2] = {1, 1};
	struct nest_arg na = {0, 0};
	const struct ht_entry *e;

	ht = ht_new(&o);
	ht_set(ht, "y", 1, "1", 1, HT_NO_EXPIRE, 0, NULL);
	CHECK(ht_txn(ht, 2, k, kl, outer_fn, &na) == 0, "outer transaction with a nested one");
	CHECK(na.inner_saw, "the nested transaction sees the outer's write");
	CHECK(na.self_saw, "a lookup inside the transaction sees its writes");
	rcu_read_lock();
	e = ht_find_rcu(ht, "x", 1);
	CHECK(e && ht_entry_vlen(e) == 5 && !memcmp(ht_entry_val(e), "inner", 5),
	      "after: x = inner");
	CHECK(ht_find_rcu(ht, "y", 1) == NULL, "after: y deleted by the nested ht_del()");
	rcu_read_unlock();
	CHECK(ht_validate(ht) == 0, "ht_validate() after nesting");
	ht_free(ht);
	ht = NULL;
}

/* --- watch -------------------------------------------------------------------- */

static int hook_calls;
static char hook_last[32];

static int hook_kind;

static void hook(void *arg, const void *key, size_t klen, int kind)
{
	(void)arg;
	hook_calls++;
	hook_kind = kind;
	snprintf(hook_last, sizeof(hook_last), "%.*s", (int)klen, (const char *)key);
}

static int keep_fn(struct ht_rmw *r, void *arg)
{
	(void)arg;
	if (!r->old)
		return HT_RMW_KEEP;
	memcpy(ht_rmw_alloc(r, 1), "z", 1);
	r->expire_ms = HT_NO_EXPIRE;
	return HT_RMW_STORE;
}

static int txn_set_fn(struct ht_txn *tx, void *arg)
{
	(void)arg;
	return ht_txn_set(tx, 0, "t", 1, HT_NO_EXPIRE);
}

static void test_watch(void)
{
	struct ht_options o = {.stripes = 1, .poison_frees = 1}; /* every key in the stripe */
	const void *k[1] = {"w"};
	size_t kl[1] = {1};

	ht = ht_new(&o);
	ht_watch_hook(ht, hook, NULL);
	CHECK(ht_watch(ht, "w", 1, 1) == 0, "ht_watch() of a missing key: 0");
	CHECK(ht_set(ht, "w", 1, "v", 1, HT_NO_EXPIRE, 0, NULL) == 0 && hook_calls == 1 &&
		  !strcmp(hook_last, "w"),
	      "set of the watched key calls the hook (%d calls)", hook_calls);
	CHECK(hook_kind == HT_WATCH_INSERT, "... as an insert: the key was missing (kind %d)",
	      hook_kind);
	ht_rmw(ht, "w", 1, keep_fn, NULL);
	CHECK(hook_calls == 2, "rmw calls it (%d)", hook_calls);
	ht_txn(ht, 1, k, kl, txn_set_fn, NULL);
	CHECK(hook_calls == 3, "ht_txn_set() calls it (%d)", hook_calls);
	ht_expire_set(ht, "w", 1, ht_now_ms() + 100000, 0);
	CHECK(hook_calls == 4, "an expiry change calls it (%d)", hook_calls);
	CHECK(hook_kind == HT_WATCH_STORE, "... as a store");
	ht_del(ht, "w", 1);
	CHECK(hook_calls == 5 && hook_kind == HT_WATCH_DELETE, "a delete calls it as a delete (%d)",
	      hook_calls);
	ht_set(ht, "other", 5, "v", 1, HT_NO_EXPIRE, 0, NULL);
	CHECK(hook_calls == 6 && !strcmp(hook_last, "other"),
	      "another key of the stripe calls it too: the hook sorts them (%d)", hook_calls);
	CHECK(ht_watch(ht, "other", 5, 0) == 1, "ht_watch() of a present key: 1");
	ht_set(ht, "gone", 4, "v", 1, ht_now_ms() - 1000 + 1001, 0, NULL);
	hook_calls = 0;
	usleep(5000);
	CHECK(ht_del(ht, "gone", 4) == -ENOENT && hook_calls == 1 && hook_kind == HT_WATCH_EXPIRED,
	      "a writer removing an expired key calls it as expired (%d, kind %d)", hook_calls,
	      hook_kind);
	CHECK(ht_watch(ht, "w", 1, -1) == 0, "unwatch");
	hook_calls = 0;
	ht_set(ht, "w", 1, "v", 1, HT_NO_EXPIRE, 0, NULL);
	CHECK(hook_calls == 0, "no watchers left: no call (%d)", hook_calls);
	ht_watch_all(ht, 1);
	ht_set(ht, "w", 1, "v", 1, HT_NO_EXPIRE, 0, NULL);
	CHECK(hook_calls == 1, "ht_watch_all(): every change calls it (%d)", hook_calls);
	ht_watch_all(ht, -1);
	ht_free(ht);
	ht = NULL;
}

int main(void)
{
	double secs = 2;
	const char *env = getenv("TORTURE_SECONDS");

	if (env && atof(env) > 0)
		secs = atof(env);
	setvbuf(stdout, NULL, _IOLBF, 0);
	rcu_register_thread();
	test_nested();
	test_watch();
	test_transfer(secs);
	rcu_unregister_thread();
	return check_summary();
}
