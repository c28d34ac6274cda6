/*
 * test_ht_snapshot.c - ht_snapshot() is a point-in-time walk (issue 8, point
 * 4), built once per flavor.  Entries are poisoned (0x6b) before they are
 * freed, so an entry freed under the walk shows as a wrong key or value.
 *
 *  sweep    a writer sets k0..kN-1 to its sweep number, over and over, while
 *           the walk sleeps now and then: the dump shows k0..kj-1 at sweep
 *           n+1 and the rest at n, for one j (never a later value before an
 *           earlier one); every key exactly once; entries handed to @fn are
 *           intact at the end of the walk.
 *  txn      writers run ht_txn() pairs a:i + b:i = 1000 (and delete or
 *           recreate both at once, and four-key transactions): every pair in
 *           the dump sums to 1000, or is absent as a whole.
 *  churn    after the moment a writer deletes, replaces and inserts keys and
 *           waits; the dump has every key of the moment with its value of
 *           the moment and none created later.
 *  expiry   keys expired before the moment are not dumped; keys live at the
 *           moment are dumped even when expired after it (ht_expire_set(),
 *           active and lazy expiry remove them during the walk); near
 *           expiries follow the rule "dumped iff expiry > at_ms".
 *  resize   inserts push the table past its load factor and a thread calls
 *           ht_resize() during the walk: resizes wait for the end, then run.
 *  flush    ht_flush() during the walk: the dump is still the moment's data,
 *           and the flushed entries stay intact until the walk ends.
 *  busy     a second ht_snapshot() meanwhile gets -EBUSY.
 * Every case checks snapshot_held_bytes > 0 during (when entries were
 * replaced) and == 0 after, snapshot_running, and ht_validate().
 *
 * `test_ht_snapshot_<flavor> --bench [keys]` instead fills 2,000,000 keys
 * (or [keys]) and prints the walk's throughput, ht_snapshot() beside
 * ht_scan_all(), idle and under a writer (figures, not checks).
 */
#include <errno.h>
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


static struct ht *new_table(size_t buckets, int auto_resize)
{
	struct ht_options o = {.poison_frees = 1,
			       .initial_buckets = buckets,
			       .no_auto_resize = !auto_resize};
	struct ht *t = ht_new(&o);

	if (!t) {
		perror("ht_new");
		exit(2);
	}
	return t;
}

static void set_str(struct ht *t, const char *k, const char *v, int64_t exp)
{
	int rc = ht_set(t, k, strlen(k), v, strlen(v), exp, 0, NULL);

	if (rc) {
		fprintf(stderr, "ht_set(%s): %d\n", k, rc);
		exit(2);
	}
}

/* Sleep @us with the QSBR thread offline (memb: a plain sleep). */
static void nap(unsigned int us)
{
	rcu_thread_offline();
	usleep(us);
	rcu_thread_online();
}

static void join_offline(pthread_t th)
{
	rcu_thread_offline();
	pthread_join(th, NULL);
	rcu_thread_online();
}

/* Parse "<prefix><number>" keys; -1 if the prefix differs. */
static long key_num(const struct ht_entry *e, const char *prefix)
{
	size_t pl = strlen(prefix), kl = ht_entry_klen(e);
	char buf[32];

	if (kl <= pl || kl - pl >= sizeof(buf) || memcmp(ht_entry_key(e), prefix, pl))
		return -1;
	memcpy(buf, (const char *)ht_entry_key(e) + pl, kl - pl);
	buf[kl - pl] = 0;
	return strtol(buf, NULL, 10);
}

static long val_num(const struct ht_entry *e)
{
	char buf[32];
	size_t vl = ht_entry_vlen(e);

	if (vl == 0 || vl >= sizeof(buf))
		return -1;
	memcpy(buf, ht_entry_val(e), vl);
	buf[vl] = 0;
	return strtol(buf, NULL, 10);
}

/* --- entries handed to @fn, re-checked at the end of the walk ----------------- */

struct held {
	const struct ht_entry **e;
	char (*copy)[48]; /* key '=' value, as first seen */
	size_t n, cap;
};

static void held_add(struct held *h, const struct ht_entry *e)
{
	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 1024;
		h->e = realloc(h->e, h->cap * sizeof(*h->e));
		h->copy = realloc(h->copy, h->cap * sizeof(*h->copy));
		if (!h->e || !h->copy)
			exit(2);
	}
	snprintf(h->copy[h->n], sizeof(h->copy[0]), "%.*s=%.*s", (int)ht_entry_klen(e),
		 (const char *)ht_entry_key(e), (int)ht_entry_vlen(e),
		 (const char *)ht_entry_val(e));
	h->e[h->n++] = e;
}

/* Inside the walk: are all entries handed out so far still intact? */
static size_t held_corrupt(struct held *h)
{
	char now[48];
	size_t bad = 0;

	for (size_t i = 0; i < h->n; i++) {
		const struct ht_entry *e = h->e[i];

		if (ht_entry_klen(e) > 40 || ht_entry_vlen(e) > 40) {
			bad++;
			continue;
		}
		snprintf(now, sizeof(now), "%.*s=%.*s", (int)ht_entry_klen(e),
			 (const char *)ht_entry_key(e), (int)ht_entry_vlen(e),
			 (const char *)ht_entry_val(e));
		bad += strcmp(now, h->copy[i]) != 0;
	}
	return bad;
}

static void held_free(struct held *h)
{
	free(h->e);
	free(h->copy);
	memset(h, 0, sizeof(*h));
}

/* Wait (bounded: about @ms) until *@flag >= @want. */
static int wait_for(_Atomic unsigned long *flag, unsigned long want, int ms)
{
	for (int i = 0; i < ms && atomic_load(flag) < want; i++)
		usleep(1000);
	return atomic_load(flag) >= want;
}

/* --- sweep ---------------------------------------------------------------------- */

#define SWEEP_KEYS 2000

static struct ht *ht;
static _Atomic int stop;
static _Atomic unsigned long sweeps, begun_flag, writer_done;

struct sweep_dump {
	long val[SWEEP_KEYS];
	int seen[SWEEP_KEYS];
	size_t entries, dup, foreign, corrupt, calls;
	size_t held_max;
	int running_seen;
	unsigned long sweeps_at_begin, sweeps_during;
	struct held held;
};

static void on_begun(void *arg)
{
	(void)arg;
	atomic_fetch_add(&begun_flag, 1);
}

static void *sweep_writer(void *arg)
{
	char k[32], v[32];
	unsigned long n = 1;

	(void)arg;
	rcu_register_thread();
	while (!atomic_load(&stop)) {
		int vl = snprintf(v, sizeof(v), "%lu", n);

		for (int i = 0; i < SWEEP_KEYS; i++) {
			int kl = snprintf(k, sizeof(k), "k:%d", i);

			ht_set(ht, k, (size_t)kl, v, (size_t)vl, HT_NO_EXPIRE, 0, NULL);
			if ((i & 63) == 0)
				rcu_quiescent_state();
		}
		atomic_store(&sweeps, n);
		n++;
	}
	rcu_unregister_thread();
	return NULL;
}

static int sweep_fn(const struct ht_entry *e, void *arg)
{
	struct sweep_dump *d = arg;
	long i = key_num(e, "k:");

	d->calls++;
	if (i < 0 || i >= SWEEP_KEYS) {
		d->foreign++;
		return 0;
	}
	d->dup += d->seen[i]++ != 0;
	d->val[i] = val_num(e);
	d->entries++;
	held_add(&d->held, e);
	if (d->calls == SWEEP_KEYS / 2) {
		/* Let the writer overwrite every key twice while we sleep. */
		wait_for(&sweeps, d->sweeps_at_begin + 2, 5000);
	}
	if (d->calls % 200 == 0) {
		struct ht_stats st;

		usleep(2000); /* the walk sleeps (disk I/O) */
		ht_stats(ht, &st);
		if (st.snapshot_held_bytes > d->held_max)
			d->held_max = st.snapshot_held_bytes;
		d->running_seen |= st.snapshot_running;
	}
	if (d->calls == SWEEP_KEYS) {
		d->corrupt = held_corrupt(&d->held);
		d->sweeps_during = atomic_load(&sweeps) - d->sweeps_at_begin;
	}
	return 0;
}

static void sweep_begun(void *arg)
{
	struct sweep_dump *d = arg;

	d->sweeps_at_begin = atomic_load(&sweeps);
}

static void test_sweep(void)
{
	pthread_t w;
	char k[32];
	struct ht_stats st;
	int rounds = 3;

	ht = new_table(1024, 1);
	for (int i = 0; i < SWEEP_KEYS; i++) {
		snprintf(k, sizeof(k), "k:%d", i);
		set_str(ht, k, "0", HT_NO_EXPIRE);
	}
	atomic_store(&stop, 0);
	atomic_store(&sweeps, 0);
	pthread_create(&w, NULL, sweep_writer, NULL);
	wait_for(&sweeps, 1, 5000);
	for (int r = 0; r < rounds; r++) {
		struct sweep_dump *d = calloc(1, sizeof(*d));
		int64_t at = 0;
		int rc = ht_snapshot(ht, sweep_fn, sweep_begun, d, &at);
		long n, j = 0;
		int ok = 1;

		CHECK(rc == 0, "ht_snapshot returned %d", rc);
		CHECK(d->entries == SWEEP_KEYS && d->dup == 0 && d->foreign == 0,
		      "every key exactly once: %zu entries, %zu dup, %zu foreign", d->entries,
		      d->dup, d->foreign);
		/* k0..kj-1 at n+1, kj.. at n. */
		n = d->val[SWEEP_KEYS - 1];
		while (j < SWEEP_KEYS && d->val[j] == n + 1)
			j++;
		for (long i = j; i < SWEEP_KEYS; i++)
			ok &= d->val[i] == n;
		CHECK(ok, "point in time: k0..k%ld at %ld, then k%ld = %ld (expected %ld)", j - 1,
		      n + 1, j, j < SWEEP_KEYS ? d->val[j] : -1, n);
		if (r == 0)
			printf("sweep: dump shows k0..k%ld at sweep %ld, the rest at %ld; writer "
			       "swept %lu times during the walk; held up to %zu bytes\n",
			       j - 1, n + 1, n, d->sweeps_during, d->held_max);
		CHECK(d->sweeps_during >= 2, "the writer swept every key during the walk (%lu)",
		      d->sweeps_during);
		CHECK(d->corrupt == 0, "entries handed to fn intact until the end (%zu bad)",
		      d->corrupt);
		CHECK(d->held_max > 0 && d->running_seen,
		      "snapshot_held_bytes > 0 and snapshot_running during the walk");
		ht_stats(ht, &st);
		CHECK(st.snapshot_held_bytes == 0 && !st.snapshot_running,
		      "held bytes back to 0 after (%zu)", st.snapshot_held_bytes);
		held_free(&d->held);
		free(d);
	}
	atomic_store(&stop, 1);
	join_offline(w);
	CHECK(ht_validate(ht) == 0, "validate");
	ht_free(ht);
}

/* --- txn all-or-nothing ----------------------------------------------------------- */

#define PAIRS 500

static void *txn_writer(void *arg);

struct pair_dump {
	long a[PAIRS], b[PAIRS];
	int has_a[PAIRS], has_b[PAIRS];
	size_t calls;
};

struct txn_op {
	int kind; /* 0: set pair(s), 1: delete pair, 2: set pair only if absent */
	long x[2];
};

static int txn_cb(struct ht_txn *tx, void *arg)
{
	struct txn_op *op = arg;
	char v[32];
	int vl;

	for (size_t p = 0; p < 2; p++) {
		if (op->x[p] < 0)
			continue;
		if (op->kind == 1) {
			ht_txn_del(tx, 2 * p);
			ht_txn_del(tx, 2 * p + 1);
			continue;
		}
		if (op->kind == 2 && ht_txn_get(tx, 2 * p))
			continue;
		vl = snprintf(v, sizeof(v), "%ld", op->x[p]);
		ht_txn_set(tx, 2 * p, v, (size_t)vl, HT_NO_EXPIRE);
		vl = snprintf(v, sizeof(v), "%ld", 1000 - op->x[p]);
		ht_txn_set(tx, 2 * p + 1, v, (size_t)vl, HT_NO_EXPIRE);
	}
	return 0;
}

static void *txn_writer(void *arg)
{
	uint64_t seed = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ULL + 1;
	char kb[4][32];
	const void *keys[4];
	size_t klens[4];
	unsigned long ops = 0;

	rcu_register_thread();
	while (!atomic_load(&stop)) {
		struct txn_op op;
		size_t n = 2;
		long i, j;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		i = (long)(seed % PAIRS);
		j = (long)((seed >> 20) % PAIRS);
		op.kind = (seed >> 40) % 10 == 0 ? 1 : (seed >> 40) % 10 == 1 ? 2 : 0;
		op.x[0] = (long)((seed >> 8) % 1001);
		op.x[1] = -1;
		klens[0] = (size_t)snprintf(kb[0], 32, "a:%ld", i);
		klens[1] = (size_t)snprintf(kb[1], 32, "b:%ld", i);
		if ((seed >> 50) % 2 && j != i) { /* a four-key transaction */
			op.x[1] = (long)((seed >> 30) % 1001);
			klens[2] = (size_t)snprintf(kb[2], 32, "a:%ld", j);
			klens[3] = (size_t)snprintf(kb[3], 32, "b:%ld", j);
			n = 4;
		}
		for (size_t q = 0; q < n; q++)
			keys[q] = kb[q];
		ht_txn(ht, n, keys, klens, txn_cb, &op);
		if ((++ops & 31) == 0)
			rcu_quiescent_state();
		atomic_fetch_add(&writer_done, 1);
	}
	rcu_unregister_thread();
	return NULL;
}

static int pair_fn(const struct ht_entry *e, void *arg)
{
	struct pair_dump *d = arg;
	long i;

	if ((i = key_num(e, "a:")) >= 0 && i < PAIRS) {
		d->a[i] = val_num(e);
		d->has_a[i]++;
	} else if ((i = key_num(e, "b:")) >= 0 && i < PAIRS) {
		d->b[i] = val_num(e);
		d->has_b[i]++;
	}
	if (++d->calls % 100 == 0)
		usleep(1000);
	return 0;
}

static void test_txn(void)
{
	pthread_t w[2];
	char k[32];
	int bad_sum = 0, bad_half = 0, dup = 0, absent = 0;
	unsigned long before;

	ht = new_table(256, 1);
	for (int i = 0; i < PAIRS; i++) {
		snprintf(k, sizeof(k), "a:%d", i);
		set_str(ht, k, "400", HT_NO_EXPIRE);
		snprintf(k, sizeof(k), "b:%d", i);
		set_str(ht, k, "600", HT_NO_EXPIRE);
	}
	atomic_store(&stop, 0);
	atomic_store(&writer_done, 0);
	for (int t = 0; t < 2; t++)
		pthread_create(&w[t], NULL, txn_writer, (void *)(uintptr_t)(t + 1));
	wait_for(&writer_done, 100, 5000);
	for (int r = 0; r < 3; r++) {
		struct pair_dump *d = calloc(1, sizeof(*d));
		int rc;

		before = atomic_load(&writer_done);
		rc = ht_snapshot(ht, pair_fn, NULL, d, NULL);
		CHECK(rc == 0, "ht_snapshot returned %d", rc);
		CHECK(atomic_load(&writer_done) > before + 100,
		      "transactions ran during the walk (%lu)", atomic_load(&writer_done) - before);
		for (int i = 0; i < PAIRS; i++) {
			dup += d->has_a[i] > 1 || d->has_b[i] > 1;
			if (d->has_a[i] != d->has_b[i])
				bad_half++;
			else if (!d->has_a[i])
				absent++;
			else if (d->a[i] + d->b[i] != 1000)
				bad_sum++;
		}
		free(d);
	}
	atomic_store(&stop, 1);
	for (int t = 0; t < 2; t++)
		join_offline(w[t]);
	printf("txn: %lu transactions; pairs absent as a whole in dumps: %d\n",
	       atomic_load(&writer_done), absent);
	CHECK(bad_sum == 0 && bad_half == 0 && dup == 0,
	      "every pair whole: %d bad sums, %d half pairs, %d duplicates", bad_sum, bad_half,
	      dup);
	CHECK(ht_validate(ht) == 0, "validate");
	ht_free(ht);
}

/* --- churn: deletes, replaces and inserts after the moment ------------------------ */

#define CHURN_KEYS 3000

struct churn_dump {
	int seen[CHURN_KEYS];
	long val[CHURN_KEYS];
	size_t later, calls, held_max;
	struct held held;
	size_t corrupt;
};

static void *churn_writer(void *arg)
{
	char k[32];

	(void)arg;
	rcu_register_thread();
	while (!atomic_load(&begun_flag))
		nap(200);
	for (int i = 0; i < CHURN_KEYS; i++) {
		int kl = snprintf(k, sizeof(k), "c:%d", i);

		if (i % 3 == 0)
			ht_del(ht, k, (size_t)kl);
		else if (i % 3 == 1)
			ht_set(ht, k, (size_t)kl, "999999", 6, HT_NO_EXPIRE, 0, NULL);
		kl = snprintf(k, sizeof(k), "new:%d", i);
		ht_set(ht, k, (size_t)kl, "1", 1, HT_NO_EXPIRE, 0, NULL);
		if ((i & 63) == 0)
			rcu_quiescent_state();
	}
	atomic_store(&writer_done, 1);
	rcu_unregister_thread();
	return NULL;
}

static int churn_fn(const struct ht_entry *e, void *arg)
{
	struct churn_dump *d = arg;
	long i = key_num(e, "c:");

	if (d->calls++ == 0) { /* let the whole churn happen after the moment */
		struct ht_stats st;

		wait_for(&writer_done, 1, 10000);
		ht_stats(ht, &st);
		d->held_max = st.snapshot_held_bytes;
	}
	if (i >= 0 && i < CHURN_KEYS) {
		d->seen[i]++;
		d->val[i] = val_num(e);
		held_add(&d->held, e);
	} else {
		d->later++;
	}
	if (d->calls == CHURN_KEYS)
		d->corrupt = held_corrupt(&d->held);
	return 0;
}

static void test_churn(void)
{
	struct churn_dump *d = calloc(1, sizeof(*d));
	pthread_t w;
	char k[32], v[32];
	int missing = 0, wrong = 0, rc;
	struct ht_stats st;

	ht = new_table(4096, 0);
	for (int i = 0; i < CHURN_KEYS; i++) {
		snprintf(k, sizeof(k), "c:%d", i);
		snprintf(v, sizeof(v), "%d", i);
		set_str(ht, k, v, HT_NO_EXPIRE);
	}
	atomic_store(&begun_flag, 0);
	atomic_store(&writer_done, 0);
	pthread_create(&w, NULL, churn_writer, NULL);
	rc = ht_snapshot(ht, churn_fn, on_begun, d, NULL);
	join_offline(w);
	for (int i = 0; i < CHURN_KEYS; i++) {
		missing += d->seen[i] != 1;
		wrong += d->seen[i] && d->val[i] != i;
	}
	CHECK(rc == 0 && atomic_load(&writer_done), "snapshot %d, churn done", rc);
	CHECK(missing == 0 && wrong == 0,
	      "deleted and replaced keys dumped with the moment's value (%d missing, %d wrong)",
	      missing, wrong);
	CHECK(d->later == 0, "keys created after the moment not dumped (%zu)", d->later);
	CHECK(d->corrupt == 0, "entries intact until the end (%zu bad)", d->corrupt);
	CHECK(d->held_max > 0, "held bytes counted the deleted and replaced entries (%zu)",
	      d->held_max);
	ht_stats(ht, &st);
	CHECK(st.snapshot_held_bytes == 0, "held bytes 0 after (%zu)", st.snapshot_held_bytes);
	printf("churn: %d keys deleted/replaced and %d created during the walk; held %zu bytes\n",
	       CHURN_KEYS * 2 / 3, CHURN_KEYS, d->held_max);
	CHECK(ht_validate(ht) == 0, "validate");
	held_free(&d->held);
	free(d);
	ht_free(ht);
}

/* --- expiry judged at the moment -------------------------------------------------- */

#define EXP_KEYS 600

/* x:i   i % 4 == 0: expired long before the moment
 *       i % 4 == 1: far future; after the moment ht_expire_set() to the past,
 *                   then active (even i/4) or lazy (odd) expiry removes it
 *       i % 4 == 2: near expiry, judged by the rule expiry > at_ms
 *       i % 4 == 3: no expiry; after the moment ht_expire_set() far future */
static int64_t exp_of[EXP_KEYS];

struct exp_dump {
	int seen[EXP_KEYS];
	int64_t exp[EXP_KEYS];
	size_t calls;
	struct held held;
	size_t corrupt;
	size_t removed_during;
};

static void *exp_writer(void *arg)
{
	char k[32];
	size_t removed = 0;

	(void)arg;
	rcu_register_thread();
	while (!atomic_load(&begun_flag))
		nap(200);
	for (int i = 1; i < EXP_KEYS; i += 2) {
		int kl = snprintf(k, sizeof(k), "x:%d", i);

		if (i % 4 == 1)
			ht_expire_set(ht, k, (size_t)kl, ht_now_ms() - 5, 0);
		else
			ht_expire_set(ht, k, (size_t)kl, ht_now_ms() + 3600000, 0);
	}
	for (int i = 1; i < EXP_KEYS; i += 4) {
		int kl = snprintf(k, sizeof(k), "x:%d", i);

		if ((i / 4) % 2) /* lazy: a writer meets it */
			ht_set(ht, k, (size_t)kl, "z", 1, HT_NO_EXPIRE, HT_SET_XX, NULL);
	}
	for (int r = 0; r < 100; r++) {
		size_t x = 0;

		ht_expire_cycle(ht, 1000, 0, NULL, &x);
		removed += x;
		rcu_quiescent_state();
	}
	atomic_store(&writer_done, removed + 1);
	rcu_unregister_thread();
	return NULL;
}

static int exp_fn(const struct ht_entry *e, void *arg)
{
	struct exp_dump *d = arg;
	long i = key_num(e, "x:");

	if (d->calls++ == 0)
		wait_for(&writer_done, 1, 10000);
	if (i >= 0 && i < EXP_KEYS) {
		d->seen[i]++;
		d->exp[i] = ht_entry_expire(e);
		held_add(&d->held, e);
	}
	return 0;
}

static void test_expiry(void)
{
	struct exp_dump *d = calloc(1, sizeof(*d));
	pthread_t w;
	char k[32];
	int64_t now = ht_now_ms(), at = 0;
	int bad = 0, near_live = 0, near_dead = 0, rc;
	struct ht_stats st;

	ht = new_table(1024, 0);
	for (int i = 0; i < EXP_KEYS; i++) {
		switch (i % 4) {
		case 0:
			exp_of[i] = now - 1000;
			break;
		case 1:
			exp_of[i] = now + 3600000;
			break;
		case 2:
			exp_of[i] = now + (i % 40) - 20; /* around the moment */
			break;
		default:
			exp_of[i] = HT_NO_EXPIRE;
		}
		snprintf(k, sizeof(k), "x:%d", i);
		set_str(ht, k, "v", exp_of[i]);
	}
	atomic_store(&begun_flag, 0);
	atomic_store(&writer_done, 0);
	pthread_create(&w, NULL, exp_writer, NULL);
	rc = ht_snapshot(ht, exp_fn, on_begun, d, &at);
	join_offline(w);
	CHECK(rc == 0 && at >= now, "snapshot %d, at_ms %lld", rc, (long long)at);
	for (int i = 0; i < EXP_KEYS; i++) {
		int live = exp_of[i] == HT_NO_EXPIRE || exp_of[i] > at;

		if (d->seen[i] != live || (live && d->exp[i] != exp_of[i])) {
			if (bad++ < 5)
				printf("  x:%d expiry %lld at %lld: seen %d, dumped expiry %lld\n", i,
				       (long long)exp_of[i], (long long)at, d->seen[i],
				       (long long)d->exp[i]);
		}
		if (i % 4 == 2)
			live ? near_live++ : near_dead++;
	}
	CHECK(bad == 0, "dumped iff live at the moment, with the moment's expiry (%d wrong)", bad);
	CHECK(atomic_load(&writer_done) > 1, "expiry removed keys during the walk (%lu)",
	      atomic_load(&writer_done) - 1);
	printf("expiry: at_ms %lld; near keys live %d, expired %d; %lu removed during the walk\n",
	       (long long)at, near_live, near_dead, atomic_load(&writer_done) - 1);
	ht_stats(ht, &st);
	CHECK(st.snapshot_held_bytes == 0, "held bytes 0 after");
	CHECK(ht_validate(ht) == 0, "validate");
	held_free(&d->held);
	free(d);
	ht_free(ht);
}

/* --- resize pressure and flush during the walk ------------------------------------- */

#define RS_KEYS 4000

struct rs_dump {
	int seen[RS_KEYS];
	long val[RS_KEYS];
	size_t later, calls;
	struct held held;
	size_t corrupt;
	size_t buckets_during;
	unsigned long resizes_during;
	int resizing_during;
};

static int do_flush;
static _Atomic unsigned long resize_done;

static void *rs_writer(void *arg)
{
	char k[32];

	(void)arg;
	rcu_register_thread();
	while (!atomic_load(&begun_flag))
		nap(200);
	for (int i = 0; i < RS_KEYS; i += 2) { /* replace half */
		int kl = snprintf(k, sizeof(k), "r:%d", i);

		ht_set(ht, k, (size_t)kl, "-1", 2, HT_NO_EXPIRE, 0, NULL);
	}
	if (do_flush) {
		ht_flush(ht);
		rcu_quiescent_state();
	}
	for (int i = 0; i < RS_KEYS * 4; i++) { /* far past the load factor */
		int kl = snprintf(k, sizeof(k), "grow:%d", i);

		ht_set(ht, k, (size_t)kl, "g", 1, HT_NO_EXPIRE, 0, NULL);
		if ((i & 63) == 0)
			rcu_quiescent_state();
	}
	atomic_store(&writer_done, 1);
	rcu_unregister_thread();
	return NULL;
}

static void *rs_resizer(void *arg)
{
	(void)arg;
	rcu_register_thread();
	while (!atomic_load(&begun_flag))
		nap(200);
	rcu_thread_offline();
	ht_resize(ht, 1 << 15); /* waits for the walk to end */
	rcu_thread_online();
	atomic_store(&resize_done, 1);
	rcu_unregister_thread();
	return NULL;
}

static int rs_fn(const struct ht_entry *e, void *arg)
{
	struct rs_dump *d = arg;
	long i = key_num(e, "r:");

	if (d->calls++ == 0) {
		struct ht_stats st;

		wait_for(&writer_done, 1, 10000);
		usleep(20000); /* give the worker and the resizer a chance */
		ht_stats(ht, &st);
		d->buckets_during = st.buckets;
		d->resizes_during = st.grows + st.shrinks;
		d->resizing_during = st.resizing || atomic_load(&resize_done);
	}
	if (i >= 0 && i < RS_KEYS) {
		d->seen[i]++;
		d->val[i] = val_num(e);
		held_add(&d->held, e);
	} else {
		d->later++;
	}
	if (d->calls == RS_KEYS)
		d->corrupt = held_corrupt(&d->held);
	return 0;
}

static void test_resize_flush(int flush)
{
	struct rs_dump *d = calloc(1, sizeof(*d));
	pthread_t w, r;
	char k[32], v[32];
	int bad = 0, rc;
	struct ht_stats st0, st;

	ht = new_table(1024, 1);
	for (int i = 0; i < RS_KEYS; i++) {
		snprintf(k, sizeof(k), "r:%d", i);
		snprintf(v, sizeof(v), "%d", i);
		set_str(ht, k, v, HT_NO_EXPIRE);
	}
	/* Let the auto-resize catch up before the moment. */
	for (int i = 0; i < 2000; i++) {
		ht_stats(ht, &st0);
		if (!st0.resizing && st0.buckets >= RS_KEYS)
			break;
		nap(1000);
	}
	do_flush = flush;
	atomic_store(&begun_flag, 0);
	atomic_store(&writer_done, 0);
	atomic_store(&resize_done, 0);
	pthread_create(&w, NULL, rs_writer, NULL);
	pthread_create(&r, NULL, rs_resizer, NULL);
	rc = ht_snapshot(ht, rs_fn, on_begun, d, NULL);
	join_offline(w);
	join_offline(r);
	for (int i = 0; i < RS_KEYS; i++)
		bad += d->seen[i] != 1 || d->val[i] != i;
	CHECK(rc == 0, "snapshot %d", rc);
	CHECK(bad == 0 && d->later == 0, "%s: the moment's data (%d wrong, %zu later keys)",
	      flush ? "flush" : "resize", bad, d->later);
	CHECK(d->corrupt == 0, "entries intact until the end (%zu bad)", d->corrupt);
	CHECK((flush || d->buckets_during == st0.buckets) && !d->resizing_during,
	      "no resize during the walk (buckets %zu -> %zu)", st0.buckets, d->buckets_during);
	ht_stats(ht, &st);
	/* (The background resizer may be half-way to its own target: count
	 * resizes, not the final size.) */
	CHECK(atomic_load(&resize_done) && st.grows + st.shrinks > d->resizes_during,
	      "the waiting resizes ran after the walk (buckets %zu)", st.buckets);
	CHECK(st.snapshot_held_bytes == 0 && !st.snapshot_running, "held bytes 0 after (%zu)",
	      st.snapshot_held_bytes);
	if (flush)
		CHECK(st.count == RS_KEYS * 4, "after the flush: the keys written since (%zu)",
		      st.count);
	printf("%s: buckets %zu during the walk, %zu after\n", flush ? "flush" : "resize",
	       d->buckets_during, st.buckets);
	CHECK(ht_validate(ht) == 0, "validate");
	held_free(&d->held);
	free(d);
	ht_free(ht);
}

/* --- -EBUSY ---------------------------------------------------------------------- */

static _Atomic long second_rc = 1;

static int nop_fn(const struct ht_entry *e, void *arg)
{
	(void)e;
	(void)arg;
	return 0;
}

static void *second_snapshot(void *arg)
{
	(void)arg;
	rcu_register_thread();
	while (!atomic_load(&begun_flag))
		nap(200);
	rcu_thread_offline();
	atomic_store(&second_rc, ht_snapshot(ht, nop_fn, NULL, NULL, NULL));
	rcu_thread_online();
	rcu_unregister_thread();
	return NULL;
}

static int busy_fn(const struct ht_entry *e, void *arg)
{
	size_t *calls = arg;

	(void)e;
	if ((*calls)++ == 0) {
		for (int i = 0; i < 10000 && atomic_load(&second_rc) == 1; i++)
			usleep(1000);
	}
	return *calls == 10 ? 42 : 0; /* and stop early */
}

static void test_busy(void)
{
	pthread_t t;
	size_t calls = 0;
	int rc;
	struct ht_stats st;
	char k[32];

	ht = new_table(256, 1);
	for (int i = 0; i < 100; i++) {
		snprintf(k, sizeof(k), "b:%d", i);
		set_str(ht, k, "v", HT_NO_EXPIRE);
	}
	atomic_store(&begun_flag, 0);
	pthread_create(&t, NULL, second_snapshot, NULL);
	rc = ht_snapshot(ht, busy_fn, on_begun, &calls, NULL);
	join_offline(t);
	CHECK(atomic_load(&second_rc) == -EBUSY, "a second snapshot gets -EBUSY (%ld)",
	      atomic_load(&second_rc));
	CHECK(rc == 42 && calls == 10, "fn's non-zero return stops the walk (%d after %zu)", rc,
	      calls);
	calls = 0;
	rc = ht_snapshot(ht, nop_fn, NULL, NULL, NULL);
	CHECK(rc == 0, "a snapshot after the first one ended runs (%d)", rc);
	ht_stats(ht, &st);
	CHECK(st.snapshot_held_bytes == 0 && !st.snapshot_running, "idle after");
	ht_free(ht);
}

/* --- throughput (figures, not checks) ---------------------------------------------- */

struct bench_acc {
	size_t n, bytes;
};

static int bench_fn(const struct ht_entry *e, void *arg)
{
	struct bench_acc *a = arg;

	a->n++;
	a->bytes += ht_entry_klen(e) + ht_entry_vlen(e);
	return 0;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *bench_writer(void *arg)
{
	size_t nkeys = *(size_t *)arg;
	uint64_t s = 88172645463325252ULL;
	char k[32], v[32];

	rcu_register_thread();
	while (!atomic_load(&stop)) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		int kl = snprintf(k, sizeof(k), "key:%zu", (size_t)(s % nkeys));
		int vl = snprintf(v, sizeof(v), "%llu", (unsigned long long)s);

		ht_set(ht, k, (size_t)kl, v, (size_t)vl, HT_NO_EXPIRE, 0, NULL);
		if ((s & 63) == 0)
			rcu_quiescent_state();
		atomic_fetch_add_explicit(&writer_done, 1, memory_order_relaxed);
	}
	rcu_unregister_thread();
	return NULL;
}

static const char *const bench_name[4] = {"snapshot_idle", "scan_all_idle", "snapshot_writer",
					  "scan_all_writer"};

/* The table for the bench: keys key:0..nkeys-1 -> value:N. */
static void bench_fill(size_t nkeys)
{
	char k[32], v[32];

	ht = new_table(nkeys, 1);
	for (size_t i = 0; i < nkeys; i++) {
		int kl = snprintf(k, sizeof(k), "key:%zu", i);
		int vl = snprintf(v, sizeof(v), "value:%zu", i);

		ht_set(ht, k, (size_t)kl, v, (size_t)vl, HT_NO_EXPIRE, 0, NULL);
		if ((i & 1023) == 0)
			rcu_quiescent_state();
	}
}

/* One timed walk (@kind 0: ht_snapshot(), 1: ht_scan_all()) of repetition
 * @rep in @phase (1: with the writer running), printed.  Return: entries/s. */
static double bench_walk(int phase, int rep, int kind)
{
	struct bench_acc a = {0, 0};
	double t0 = mono(), dt, rate;
	unsigned long w0 = atomic_load(&writer_done);

	if (kind == 0)
		ht_snapshot(ht, bench_fn, NULL, &a, NULL);
	else
		ht_scan_all(ht, bench_fn, &a);
	dt = mono() - t0;
	rate = (double)a.n / dt;
	printf("  %s rep %d: %zu entries in %.3f s (%.0f entries/s)", bench_name[phase * 2 + kind],
	       rep, a.n, dt, rate);
	if (phase)
		printf(", %lu writes meanwhile", atomic_load(&writer_done) - w0);
	printf("\n");
	rcu_quiescent_state();
	return rate;
}

/* Phase 0 idle, phase 1 with a writer doing random SETs: three repetitions
 * of both walks, the best rate of each kept in @best. */
static void bench_phase(int phase, size_t *nkeys, double best[4])
{
	pthread_t w;

	if (phase) {
		atomic_store(&stop, 0);
		atomic_store(&writer_done, 0);
		pthread_create(&w, NULL, bench_writer, nkeys);
	}
	for (int rep = 0; rep < 3; rep++)
		for (int kind = 0; kind < 2; kind++) {
			double rate = bench_walk(phase, rep, kind);

			if (rate > best[phase * 2 + kind])
				best[phase * 2 + kind] = rate;
		}
	if (phase) {
		atomic_store(&stop, 1);
		join_offline(w);
	}
}

static int run_bench(size_t nkeys)
{
	double best[4] = {0, 0, 0, 0};
	struct ht_stats st;
	size_t held_max = 0;

	bench_fill(nkeys);
	for (int phase = 0; phase < 2; phase++)
		bench_phase(phase, &nkeys, best);
	ht_stats(ht, &st);
	held_max = st.snapshot_held_bytes;
	for (int i = 0; i < 4; i++)
		printf("BENCH hashtable.%s_%zuk.rcukv %.0f entries/s\n", bench_name[i],
		       nkeys / 1000, best[i]);
	printf("RATIO hashtable.snapshot_vs_scan_all_idle %.2f higher\n", best[0] / best[1]);
	printf("(best of 3; held bytes after: %zu)\n", held_max);
	ht_free(ht);
	return 0;
}

int main(int argc, char **argv)
{
	rcu_register_thread();
	if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
		size_t n = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 2000000;

		run_bench(n ? n : 2000000);
		rcu_unregister_thread();
		return 0;
	}
	test_sweep();
	test_txn();
	test_churn();
	test_expiry();
	test_resize_flush(0);
	test_resize_flush(1);
	test_busy();
	rcu_unregister_thread();
	return check_summary();
}
