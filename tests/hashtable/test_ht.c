/*
 * test_ht.c - unit tests of every ht_* operation and option (hashtable/ht.h),
 * built once per flavor (RCU_FLAVOR_QSBR / RCU_FLAVOR_MEMB).  Each test ends
 * with ht_validate() (pprev links, buckets, counters).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hashtable/ht.h"
#include "rcu/rcu.h"

#define S(x) x, strlen(x)

static struct ht *mk(size_t initial, int autoresize)
{
	struct ht_options o = {.initial_buckets = initial ? initial : 1,
			       .stripes = 16,
			       .no_auto_resize = !autoresize,
			       .poison_frees = 1};
	struct ht *ht = ht_new(&o);

	assert_non_null(ht);
	return ht;
}

static void done(struct ht *ht)
{
	assert_int_equal(ht_validate(ht), 0);
	ht_free(ht);
}

static int getstr(struct ht *ht, const char *k, char *buf, size_t n)
{
	long long r = ht_get(ht, k, strlen(k), buf, n - 1, NULL);

	if (r >= 0)
		buf[r < (long long)n - 1 ? r : (long long)n - 1] = 0;
	return (int)r;
}

static void test_basic(void **st)
{
	struct ht *ht = mk(0, 1);
	char buf[64];
	void *v;
	size_t vl;

	(void)st;
	assert_int_equal(ht_get(ht, S("a"), buf, sizeof(buf), NULL), -ENOENT);
	assert_int_equal(ht_exists(ht, S("a")), 0);
	assert_int_equal(ht_set(ht, S("a"), S("one"), HT_NO_EXPIRE, 0, NULL), 0);
	assert_int_equal(getstr(ht, "a", buf, sizeof(buf)), 3);
	assert_string_equal(buf, "one");
	assert_int_equal(ht_exists(ht, S("a")), 1);
	assert_int_equal(ht_set(ht, S("a"), S("uno!"), HT_NO_EXPIRE, 0, NULL), 0);
	assert_int_equal(getstr(ht, "a", buf, sizeof(buf)), 4);
	assert_string_equal(buf, "uno!");
	assert_int_equal(ht_count(ht), 1);
	/* truncation: the full length is returned */
	assert_int_equal(ht_get(ht, S("a"), buf, 2, NULL), 4);
	assert_int_equal(ht_get(ht, S("a"), NULL, 0, NULL), 4);
	assert_int_equal(ht_get_alloc(ht, S("a"), &v, &vl, NULL), 0);
	assert_int_equal(vl, 4);
	assert_string_equal(v, "uno!");
	free(v);
	assert_int_equal(ht_del(ht, S("a")), 0);
	assert_int_equal(ht_del(ht, S("a")), -ENOENT);
	assert_int_equal(ht_count(ht), 0);
	/* binary keys and values, empty key, empty value */
	assert_int_equal(ht_set(ht, "a\0b", 3, "x\0y", 3, 0, 0, NULL), 0);
	assert_int_equal(ht_set(ht, "a\0c", 3, "", 0, 0, 0, NULL), 0);
	assert_int_equal(ht_set(ht, "", 0, "empty", 5, 0, 0, NULL), 0);
	assert_int_equal(ht_get(ht, "a\0b", 3, buf, sizeof(buf), NULL), 3);
	assert_memory_equal(buf, "x\0y", 3);
	assert_int_equal(ht_get(ht, "a\0c", 3, buf, sizeof(buf), NULL), 0);
	assert_int_equal(ht_get(ht, "", 0, buf, sizeof(buf), NULL), 5);
	assert_int_equal(ht_get(ht, "a", 1, buf, sizeof(buf), NULL), -ENOENT);
	assert_int_equal(ht_count(ht), 3);
	/* NULL with length 0 is the empty key / empty value */
	assert_int_equal(ht_set(ht, NULL, 0, NULL, 0, 0, 0, NULL), 0);
	assert_int_equal(ht_get(ht, NULL, 0, NULL, 0, NULL), 0);
	assert_int_equal(ht_del(ht, NULL, 0), 0);
	assert_int_equal(ht_exists(ht, "", 0), 0);
	assert_int_equal(ht_set(ht, "", 0, "empty", 5, 0, 0, NULL), 0);
	/* too long: rejected before the key is read */
	assert_int_equal(ht_set(ht, "k", HT_MAX_KEY_LEN + 1, "v", 1, 0, 0, NULL), -E2BIG);
	assert_int_equal(ht_set(ht, "k", 1, "v", HT_MAX_VAL_LEN + 1, 0, 0, NULL), -E2BIG);
	done(ht);
}

static void test_set_options(void **st)
{
	struct ht *ht = mk(0, 1);
	const struct ht_entry *old;
	int64_t x;
	char buf[16];

	(void)st;
	assert_int_equal(ht_set(ht, S("k"), S("v1"), 0, HT_SET_XX, NULL), -ENOENT);
	assert_int_equal(ht_exists(ht, S("k")), 0);
	assert_int_equal(ht_set(ht, S("k"), S("v1"), 0, HT_SET_NX, NULL), 0);
	assert_int_equal(ht_set(ht, S("k"), S("v2"), 0, HT_SET_NX, NULL), -EEXIST);
	assert_int_equal(getstr(ht, "k", buf, sizeof(buf)), 2);
	assert_string_equal(buf, "v1");
	assert_int_equal(ht_set(ht, S("k"), S("v3"), 0, HT_SET_XX, NULL), 0);
	assert_int_equal(ht_set(ht, S("k"), S("v1"), 0, HT_SET_NX | HT_SET_XX, NULL), -EINVAL);
	/* SET ... GET: the old entry, valid inside the section */
	rcu_read_lock();
	assert_int_equal(ht_set(ht, S("k"), S("v4"), 0, 0, &old), 0);
	assert_non_null(old);
	assert_int_equal(ht_entry_vlen(old), 2);
	assert_memory_equal(ht_entry_val(old), "v3", 2);
	assert_memory_equal(ht_entry_key(old), "k", 1);
	assert_int_equal(ht_set(ht, S("new"), S("n"), 0, 0, &old), 0);
	assert_null(old);
	assert_int_equal(ht_set(ht, S("k"), S("v5"), 0, HT_SET_NX, &old), -EEXIST);
	assert_non_null(old);
	assert_memory_equal(ht_entry_val(old), "v4", 2);
	rcu_read_unlock();
	/* expiry on set, KEEPTTL, and a plain set clears it */
	int64_t far = ht_now_ms() + 3600 * 1000;
	assert_int_equal(ht_set(ht, S("k"), S("t1"), far, 0, NULL), 0);
	assert_int_equal(ht_expire_get(ht, S("k"), &x), 0);
	assert_int_equal(x, far);
	assert_int_equal(ht_count_expires(ht), 1);
	assert_int_equal(ht_set(ht, S("k"), S("t2"), 0, HT_SET_KEEPTTL, NULL), 0);
	assert_int_equal(ht_expire_get(ht, S("k"), &x), 0);
	assert_int_equal(x, far);
	assert_int_equal(getstr(ht, "k", buf, sizeof(buf)), 2);
	assert_string_equal(buf, "t2");
	assert_int_equal(ht_set(ht, S("k"), S("t3"), 0, 0, NULL), 0);
	assert_int_equal(ht_expire_get(ht, S("k"), &x), 0);
	assert_int_equal(x, HT_NO_EXPIRE);
	assert_int_equal(ht_count_expires(ht), 0);
	/* KEEPTTL on an absent key stores without expiry */
	assert_int_equal(ht_set(ht, S("k2"), S("z"), 0, HT_SET_KEEPTTL, NULL), 0);
	assert_int_equal(ht_expire_get(ht, S("k2"), &x), 0);
	assert_int_equal(x, HT_NO_EXPIRE);
	done(ht);
}

static void test_expiry(void **st)
{
	struct ht *ht = mk(0, 1);
	int64_t now = ht_now_ms(), x;
	struct ht_stats hs;
	char buf[16];

	(void)st;
	/* already expired: invisible at once */
	assert_int_equal(ht_set(ht, S("gone"), S("v"), now - 1, 0, NULL), 0);
	assert_int_equal(ht_exists(ht, S("gone")), 0);
	assert_int_equal(ht_expire_get(ht, S("gone"), &x), -ENOENT);
	assert_int_equal(ht_count(ht), 1); /* not yet removed */
	/* a writer meeting it removes it (NX sees it as absent) */
	assert_int_equal(ht_set(ht, S("gone"), S("back"), 0, HT_SET_NX, NULL), 0);
	assert_int_equal(getstr(ht, "gone", buf, sizeof(buf)), 4);
	ht_stats(ht, &hs);
	assert_int_equal(hs.expired, 1);
	assert_int_equal(ht_count(ht), 1);
	/* del of an expired key: removed, reported absent */
	assert_int_equal(ht_set(ht, S("e2"), S("v"), now - 5, 0, NULL), 0);
	assert_int_equal(ht_del(ht, S("e2")), -ENOENT);
	assert_int_equal(ht_count(ht), 1);

	/* EXPIRE and its options */
	assert_int_equal(ht_expire_set(ht, S("nokey"), now + 1000, 0), -ENOENT);
	assert_int_equal(ht_expire_set(ht, S("gone"), HT_NO_EXPIRE, 0), -EINVAL);
	assert_int_equal(ht_expire_set(ht, S("gone"), now + 100000, HT_EXPIRE_XX), 0);
	assert_int_equal(ht_expire_set(ht, S("gone"), now + 100000, HT_EXPIRE_GT), 0);
	assert_int_equal(ht_expire_set(ht, S("gone"), now + 100000, HT_EXPIRE_LT), 1);
	assert_int_equal(ht_expire_get(ht, S("gone"), &x), 0);
	assert_int_equal(x, now + 100000);
	assert_int_equal(ht_expire_set(ht, S("gone"), now + 200000, HT_EXPIRE_NX), 0);
	assert_int_equal(ht_expire_set(ht, S("gone"), now + 200000, HT_EXPIRE_LT), 0);
	assert_int_equal(ht_expire_set(ht, S("gone"), now + 200000, HT_EXPIRE_GT), 1);
	assert_int_equal(ht_expire_set(ht, S("gone"), now + 50000, HT_EXPIRE_XX | HT_EXPIRE_LT), 1);
	assert_int_equal(ht_expire_get(ht, S("gone"), &x), 0);
	assert_int_equal(x, now + 50000);
	assert_int_equal(getstr(ht, "gone", buf, sizeof(buf)), 4); /* value kept */
	assert_string_equal(buf, "back");
	assert_int_equal(ht_count_expires(ht), 1);
	/* PERSIST */
	assert_int_equal(ht_expire_clear(ht, S("gone")), 1);
	assert_int_equal(ht_expire_clear(ht, S("gone")), 0);
	assert_int_equal(ht_expire_clear(ht, S("nokey")), -ENOENT);
	assert_int_equal(ht_count_expires(ht), 0);
	/* EXPIRE into the past: the key disappears */
	assert_int_equal(ht_expire_set(ht, S("gone"), now - 1, 0), 1);
	assert_int_equal(ht_exists(ht, S("gone")), 0);
	done(ht);
}

/* ht_expiry_hold() (guarantee 5's exception): this thread sees expired
 * entries as live, and neither a writer nor the cycle removes them as
 * expired; released, they are expired again. */
static void test_expiry_hold(void **st)
{
	struct ht *ht = mk(0, 1);
	int64_t now = ht_now_ms(), x;
	struct ht_stats hs;
	char buf[16];

	(void)st;
	assert_int_equal(ht_set(ht, S("a"), S("va"), now - 1, 0, NULL), 0);
	assert_int_equal(ht_set(ht, S("b"), S("vb"), now - 1, 0, NULL), 0);
	assert_int_equal(ht_set(ht, S("c"), S("vc"), now - 1, 0, NULL), 0);
	assert_int_equal(ht_expiry_hold(1), 0);
	assert_int_equal(ht_exists(ht, S("a")), 1);
	assert_int_equal(getstr(ht, "a", buf, sizeof(buf)), 2);
	assert_int_equal(ht_expire_get(ht, S("a"), &x), 0);
	assert_int_equal(x, now - 1);
	assert_int_equal(ht_expire_cycle(ht, 20, 0, NULL, NULL), 0);
	/* a writer acts on the entry: NX and XX find it, KEEPTTL keeps its past time */
	assert_int_equal(ht_set(ht, S("a"), S("no"), 0, HT_SET_NX, NULL), -EEXIST);
	assert_int_equal(ht_set(ht, S("b"), S("wb"), 0, HT_SET_XX | HT_SET_KEEPTTL, NULL), 0);
	assert_int_equal(ht_del(ht, S("c")), 0);
	assert_int_equal(ht_expiry_hold(0), 1);
	ht_stats(ht, &hs);
	assert_int_equal(hs.expired, 0);
	assert_int_equal(ht_count(ht), 2);
	/* released: expired again, and the cycle removes them */
	assert_int_equal(ht_exists(ht, S("a")), 0);
	assert_int_equal(ht_exists(ht, S("b")), 0);
	assert_int_equal(ht_expire_cycle(ht, 20, 0, NULL, NULL), 2);
	assert_int_equal(ht_count(ht), 0);
	done(ht);
}

static void test_expire_cycle(void **st)
{
	struct ht *ht = mk(0, 0);
	int64_t now = ht_now_ms();
	size_t sampled = 0, expired = 0, total = 0, i;
	char k[32];

	(void)st;
	for (i = 0; i < 300; i++) {
		snprintf(k, sizeof(k), "k%zu", i);
		/* a third expired, a third with a future expiry, a third without */
		assert_int_equal(ht_set(ht, k, strlen(k), "v", 1,
					i % 3 == 0   ? now - 10
					: i % 3 == 1 ? now + 3600000
						     : 0,
					0, NULL),
				 0);
	}
	assert_int_equal(ht_count_expires(ht), 200);
	for (i = 0; i < 100 && total < 100; i++) {
		total += ht_expire_cycle(ht, 20, 0, &sampled, &expired);
		assert_true(sampled <= 20 + 100); /* the last bucket may overshoot */
	}
	assert_int_equal(total, 100);
	assert_int_equal(ht_count(ht), 200);
	assert_int_equal(ht_count_expires(ht), 100);
	done(ht);
}

struct incr_arg {
	long long by;
	long long result;
};

static int incr_fn(struct ht_rmw *r, void *arg)
{
	struct incr_arg *a = arg;
	long long v = 0;
	char num[32], *p;
	int n;

	if (r->old) {
		size_t l = ht_entry_vlen(r->old);

		if (l >= sizeof(num))
			return -EINVAL;
		memcpy(num, ht_entry_val(r->old), l);
		num[l] = 0;
		v = strtoll(num, &p, 10);
		if (*p)
			return -EINVAL;
	}
	v += a->by;
	n = snprintf(num, sizeof(num), "%lld", v);
	p = ht_rmw_alloc(r, (size_t)n);
	if (!p)
		return -ENOMEM;
	memcpy(p, num, (size_t)n);
	a->result = v;
	return HT_RMW_STORE;
}

static int append_fn(struct ht_rmw *r, void *arg)
{
	const char *s = arg;
	size_t ol = r->old ? ht_entry_vlen(r->old) : 0;
	char *p = ht_rmw_alloc(r, ol + strlen(s));

	if (!p)
		return -ENOMEM;
	if (ol)
		memcpy(p, ht_entry_val(r->old), ol);
	memcpy(p + ol, s, strlen(s));
	return HT_RMW_STORE;
}

static int ret_fn(struct ht_rmw *r, void *arg)
{
	(void)r;
	return *(int *)arg;
}

static int set_expire_fn(struct ht_rmw *r, void *arg)
{
	char *p = ht_rmw_alloc(r, 1);

	*p = 'E';
	r->expire_ms = *(int64_t *)arg;
	return HT_RMW_STORE;
}

static void test_rmw(void **st)
{
	struct ht *ht = mk(0, 1);
	struct incr_arg ia = {5, 0};
	int64_t x, far = ht_now_ms() + 3600000;
	char buf[32];
	int code;

	(void)st;
	assert_int_equal(ht_rmw(ht, S("n"), incr_fn, &ia), HT_RMW_STORE);
	assert_int_equal(ia.result, 5);
	ia.by = -7;
	assert_int_equal(ht_rmw(ht, S("n"), incr_fn, &ia), HT_RMW_STORE);
	assert_int_equal(getstr(ht, "n", buf, sizeof(buf)), 2);
	assert_string_equal(buf, "-2");
	/* the callback's error changes nothing */
	assert_int_equal(ht_set(ht, S("s"), S("abc"), far, 0, NULL), 0);
	assert_int_equal(ht_rmw(ht, S("s"), incr_fn, &ia), -EINVAL);
	/* APPEND keeps the expiry */
	assert_int_equal(ht_rmw(ht, S("s"), append_fn, "def"), HT_RMW_STORE);
	assert_int_equal(getstr(ht, "s", buf, sizeof(buf)), 6);
	assert_string_equal(buf, "abcdef");
	assert_int_equal(ht_expire_get(ht, S("s"), &x), 0);
	assert_int_equal(x, far);
	assert_int_equal(ht_rmw(ht, S("new"), append_fn, "xy"), HT_RMW_STORE);
	assert_int_equal(getstr(ht, "new", buf, sizeof(buf)), 2);
	/* KEEP, DELETE, STORE without a buffer */
	code = HT_RMW_KEEP;
	assert_int_equal(ht_rmw(ht, S("s"), ret_fn, &code), HT_RMW_KEEP);
	assert_int_equal(ht_exists(ht, S("s")), 1);
	code = HT_RMW_DELETE;
	assert_int_equal(ht_rmw(ht, S("s"), ret_fn, &code), HT_RMW_DELETE);
	assert_int_equal(ht_exists(ht, S("s")), 0);
	assert_int_equal(ht_rmw(ht, S("absent"), ret_fn, &code), HT_RMW_DELETE);
	code = HT_RMW_STORE;
	assert_int_equal(ht_rmw(ht, S("n"), ret_fn, &code), -EINVAL);
	/* the callback may change the expiry (and the layout) */
	assert_int_equal(ht_rmw(ht, S("n"), set_expire_fn, &far), HT_RMW_STORE);
	assert_int_equal(ht_expire_get(ht, S("n"), &x), 0);
	assert_int_equal(x, far);
	x = HT_NO_EXPIRE;
	assert_int_equal(ht_rmw(ht, S("n"), set_expire_fn, &x), HT_RMW_STORE);
	assert_int_equal(ht_expire_get(ht, S("n"), &x), 0);
	assert_int_equal(x, HT_NO_EXPIRE);
	assert_int_equal(getstr(ht, "n", buf, sizeof(buf)), 1);
	assert_string_equal(buf, "E");
	assert_int_equal(ht_count_expires(ht), 0);
	done(ht);
}

/* MSETNX over n keys: all or nothing. */
static int msetnx_fn(struct ht_txn *tx, void *arg)
{
	size_t n = *(size_t *)arg, i;

	for (i = 0; i < n; i++)
		if (ht_txn_get(tx, i))
			return 0;
	for (i = 0; i < n; i++)
		assert_int_equal(ht_txn_set(tx, i, "m", 1, HT_NO_EXPIRE), 0);
	return 1;
}

/* RENAME keys[0] -> keys[1], keeping the value and the expiry. */
static int rename_fn(struct ht_txn *tx, void *arg)
{
	const struct ht_entry *src = ht_txn_get(tx, 0);
	int rc;

	(void)arg;
	if (!src)
		return -ENOENT;
	rc = ht_txn_set(tx, 1, ht_entry_val(src), ht_entry_vlen(src), ht_entry_expire(src));
	if (rc)
		return rc;
	return ht_txn_del(tx, 0);
}

static void test_txn(void **st)
{
	struct ht *ht = mk(0, 1);
	const void *keys[40];
	size_t klens[40], n = 40, i;
	char names[40][24], buf[8];
	int64_t x, far = ht_now_ms() + 100000;

	(void)st;
	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "t%zu", i);
		keys[i] = names[i];
		klens[i] = strlen(names[i]);
	}
	assert_int_equal(ht_txn(ht, n, keys, klens, msetnx_fn, &n), 1);
	assert_int_equal(ht_count(ht), 40);
	assert_int_equal(ht_txn(ht, n, keys, klens, msetnx_fn, &n), 0);
	assert_int_equal(ht_txn(ht, 0, keys, klens, msetnx_fn, &n), -EINVAL);
	/* rename with expiry; then onto itself (duplicate keys allowed) */
	assert_int_equal(ht_set(ht, S("src"), S("val"), far, 0, NULL), 0);
	const void *rk[2] = {"src", "dst"};
	size_t rl[2] = {3, 3};
	assert_int_equal(ht_txn(ht, 2, rk, rl, rename_fn, NULL), 0);
	assert_int_equal(ht_exists(ht, S("src")), 0);
	assert_int_equal(getstr(ht, "dst", buf, sizeof(buf)), 3);
	assert_int_equal(ht_expire_get(ht, S("dst"), &x), 0);
	assert_int_equal(x, far);
	assert_int_equal(ht_txn(ht, 2, rk, rl, rename_fn, NULL), -ENOENT);
	assert_int_equal(ht_count_expires(ht), 1);
	done(ht);
}

static void test_flush(void **st)
{
	struct ht *ht = mk(0, 1);
	char k[32];
	size_t i;

	(void)st;
	for (i = 0; i < 2000; i++) {
		snprintf(k, sizeof(k), "f%zu", i);
		assert_int_equal(ht_set(ht, k, strlen(k), k, strlen(k),
					i & 1 ? ht_now_ms() + 99999 : 0, 0, NULL),
				 0);
	}
	assert_int_equal(ht_count(ht), 2000);
	assert_int_equal(ht_count_expires(ht), 1000);
	assert_int_equal(ht_flush(ht), 0);
	assert_int_equal(ht_count(ht), 0);
	assert_int_equal(ht_count_expires(ht), 0);
	assert_int_equal(ht_exists(ht, S("f1")), 0);
	assert_int_equal(ht_set(ht, S("f1"), S("again"), 0, 0, NULL), 0);
	assert_int_equal(ht_count(ht), 1);
	assert_int_equal(ht_flush(ht), 0);
	done(ht); /* frees the flushed tables (LeakSanitizer checks under asan) */
}

static int count_fn(const struct ht_entry *e, void *arg)
{
	unsigned char *seen = arg;
	char k[16];
	unsigned long i;

	assert_true(ht_entry_klen(e) < sizeof(k));
	memcpy(k, ht_entry_key(e), ht_entry_klen(e));
	k[ht_entry_klen(e)] = 0;
	i = strtoul(k + 1, NULL, 10);
	if (seen[i] < 255)
		seen[i]++;
	return 0;
}

static void fill(struct ht *ht, size_t n)
{
	char k[32];

	for (size_t i = 0; i < n; i++) {
		snprintf(k, sizeof(k), "r%zu", i);
		assert_int_equal(ht_set(ht, k, strlen(k), k, strlen(k), 0, 0, NULL), 0);
	}
}

static void check_all(struct ht *ht, size_t n)
{
	char k[32], buf[32];

	for (size_t i = 0; i < n; i++) {
		snprintf(k, sizeof(k), "r%zu", i);
		assert_int_equal(getstr(ht, k, buf, sizeof(buf)), (int)strlen(k));
		assert_string_equal(buf, k);
	}
}

static void test_resize(void **st)
{
	struct ht *ht = mk(0, 0);
	struct ht_stats hs;
	size_t n = 5000;

	(void)st;
	fill(ht, n);
	ht_stats(ht, &hs);
	assert_int_equal(hs.buckets, 16);
	assert_int_equal(ht_resize(ht, 8192), 0);
	ht_stats(ht, &hs);
	assert_int_equal(hs.buckets, 8192);
	assert_int_equal(hs.grows, 9);
	assert_true(hs.unzip_passes >= 9);
	assert_int_equal(ht_validate(ht), 0);
	check_all(ht, n);
	assert_int_equal(ht_resize(ht, 3), 0); /* clamped to the stripe count */
	ht_stats(ht, &hs);
	assert_int_equal(hs.buckets, 16);
	assert_int_equal(hs.shrinks, 9);
	assert_int_equal(ht_validate(ht), 0);
	check_all(ht, n);
	assert_int_equal(ht_count(ht), n);
	done(ht);
}

static void test_auto_resize(void **st)
{
	struct ht *ht = mk(0, 1);
	struct ht_stats hs;
	char k[32];
	int i;

	(void)st;
	fill(ht, 4000);
	/* The worker resizes in the background: wait (bounded) until it has
	 * caught up.  What is asserted is the outcome, not a time. */
	for (i = 0; i < 2000; i++) {
		ht_stats(ht, &hs);
		if (hs.buckets >= 4000 && !hs.resizing)
			break;
		rcu_thread_offline();
		usleep(5000);
		rcu_thread_online();
	}
	assert_true(hs.buckets >= 4000);
	assert_true(hs.grows >= 8);
	check_all(ht, 4000);
	for (i = 0; i < 4000; i++) {
		snprintf(k, sizeof(k), "r%d", i);
		assert_int_equal(ht_del(ht, k, strlen(k)), 0);
	}
	for (i = 0; i < 2000; i++) {
		ht_stats(ht, &hs);
		if (hs.buckets <= 64 && !hs.resizing)
			break;
		rcu_thread_offline();
		usleep(5000);
		rcu_thread_online();
	}
	assert_true(hs.shrinks >= 1);
	assert_true(hs.buckets <= 64);
	done(ht);
}

/*
 * An explicit ht_resize() is not undone by a policy decision the worker took
 * before it.  Each round: grow to 65536 buckets by hand (far over the policy
 * for 3000 keys), churn a few keys so writers kick the worker (which wants to
 * shrink), then ht_resize(8192), which the policy accepts for 3000 keys.
 * Whatever the worker decided before must not land after: the size stays 8192.
 */
static void test_explicit_resize_kept(void **st)
{
	struct ht *ht = mk(0, 1);
	struct ht_stats hs;
	char k[32];
	int undone = 0;

	(void)st;
	fill(ht, 3000);
	for (int r = 0; r < 60; r++) {
		assert_int_equal(ht_resize(ht, 65536), 0);
		for (int i = 0; i < 40; i++) {
			snprintf(k, sizeof(k), "r%d", (r * 40 + i) % 3000);
			assert_int_equal(ht_del(ht, k, strlen(k)), 0);
			assert_int_equal(ht_set(ht, k, strlen(k), k, strlen(k), 0, 0, NULL), 0);
		}
		assert_int_equal(ht_resize(ht, 8192), 0);
		/* Give a stale decision time to land (it never should). */
		for (int w = 0; w < 5; w++) {
			rcu_thread_offline();
			usleep(2000);
			rcu_thread_online();
			ht_stats(ht, &hs);
			if (hs.buckets != 8192) {
				undone++;
				break;
			}
		}
	}
	assert_int_equal(undone, 0);
	check_all(ht, 3000);
	done(ht);
}

/* ht_reserve(): grows at once past the load factor for the entries to come
 * (the caller stays online, as a worker in one big MSET); a no-op when
 * there is room or auto-resize is off; the entries are all there after. */
static void test_reserve(void **st)
{
	struct ht *ht = mk(0, 1), *fixed = mk(64, 0);
	struct ht_stats hs;

	(void)st;
	fill(ht, 100);
	ht_stats(ht, &hs);
	size_t before = hs.buckets;
	assert_int_equal(ht_reserve(ht, 100000), 0);
	ht_stats(ht, &hs);
	assert_true(hs.buckets >= 100100);
	assert_true(hs.buckets > before);
	before = hs.buckets;
	assert_int_equal(ht_reserve(ht, 1000), 0); /* room enough: nothing */
	ht_stats(ht, &hs);
	assert_int_equal(hs.buckets, before);
	fill(ht, 100000);
	ht_reserve_done(ht, 101000);
	check_all(ht, 100000);
	assert_int_equal(ht_reserve(fixed, 100000), 0); /* auto-resize off */
	ht_stats(fixed, &hs);
	assert_int_equal(hs.buckets, 64);
	done(ht);
	done(fixed);
}

static void test_scan(void **st)
{
	struct ht *ht = mk(0, 1);
	size_t n = 3000, i;
	unsigned char *seen = calloc(n, 1);
	uint64_t cur = 0;
	int steps = 0;

	(void)st;
	fill(ht, n);
	do {
		rcu_read_lock();
		cur = ht_scan_rcu(ht, cur, 10, count_fn, seen);
		rcu_read_unlock();
		rcu_quiescent_state();
		steps++;
	} while (cur && steps < 100000);
	assert_int_equal(cur, 0);
	for (i = 0; i < n; i++)
		assert_true(seen[i] >= 1);
	memset(seen, 0, n);
	assert_int_equal(ht_scan_all(ht, count_fn, seen), 0);
	for (i = 0; i < n; i++)
		assert_int_equal(seen[i], 1); /* no resize: exactly once */
	/* scan of an empty table ends at once */
	assert_int_equal(ht_flush(ht), 0);
	rcu_read_lock();
	assert_int_equal(ht_scan_rcu(ht, 0, 10, count_fn, seen), 0);
	rcu_read_unlock();
	free(seen);
	done(ht);
}

/* ht.h guarantee 4: a cursor scan interleaved with grows and shrinks (one
 * resize between every two steps) still reports every key. */
static void test_scan_across_resize(void **st)
{
	static const size_t sizes[] = {4096, 16, 64, 8192, 32, 1024, 16, 256};
	struct ht *ht = mk(0, 0);
	size_t n = 2000, i, dups = 0;
	unsigned char *seen = calloc(n, 1);
	uint64_t cur = 0;
	int steps = 0;

	(void)st;
	fill(ht, n);
	do {
		rcu_read_lock();
		cur = ht_scan_rcu(ht, cur, 5, count_fn, seen);
		rcu_read_unlock();
		assert_int_equal(ht_resize(ht, sizes[steps % 8]), 0);
		steps++;
	} while (cur && steps < 100000);
	assert_int_equal(cur, 0);
	for (i = 0; i < n; i++) {
		assert_true(seen[i] >= 1);
		dups += seen[i] - 1;
	}
	printf("scan across %d resizes: %zu keys, %zu reported twice or more\n", steps, n, dups);
	free(seen);
	done(ht);
}

static void test_random_sample(void **st)
{
	struct ht *ht = mk(0, 1);
	const struct ht_entry *out[8];
	uint64_t seed = 42;
	size_t got;
	int i;

	(void)st;
	rcu_read_lock();
	assert_null(ht_random_rcu(ht, &seed));
	assert_int_equal(ht_sample_rcu(ht, out, 8, 0, &seed), 0);
	rcu_read_unlock();
	fill(ht, 100);
	assert_int_equal(ht_set(ht, S("vol"), S("v"), ht_now_ms() + 100000, 0, NULL), 0);
	rcu_read_lock();
	for (i = 0; i < 50; i++)
		assert_non_null(ht_random_rcu(ht, &seed));
	got = ht_sample_rcu(ht, out, 8, 0, &seed);
	assert_true(got >= 1 && got <= 8);
	got = ht_sample_rcu(ht, out, 8, 1, &seed);
	for (i = 0; i < (int)got; i++)
		assert_int_not_equal(ht_entry_expire(out[i]), HT_NO_EXPIRE);
	rcu_read_unlock();
	done(ht);
}

static void test_clock_and_stats(void **st)
{
	struct ht *ht = mk(0, 1);
	const struct ht_entry *e;
	struct ht_stats hs;

	(void)st;
	ht_clock_set(ht, 7);
	assert_int_equal(ht_set(ht, S("c"), S("v"), 0, 0, NULL), 0);
	rcu_read_lock();
	e = ht_find_rcu(ht, S("c"));
	assert_int_equal(ht_entry_access(e), 7);
	ht_clock_set(ht, 9);
	e = ht_find_rcu(ht, S("c"));
	assert_int_equal(ht_entry_access(e), 9);
	rcu_read_unlock();
	ht_stats(ht, &hs);
	assert_int_equal(hs.count, 1);
	assert_int_equal(hs.entry_bytes, sizeof(struct ht_entry) + 2);
	assert_int_equal(ht_hash("abc", 3, 1), ht_hash("abc", 3, 1));
	assert_int_not_equal(ht_hash("abc", 3, 1), ht_hash("abd", 3, 1));
	assert_int_not_equal(ht_hash("abc", 3, 1), ht_hash("abc", 3, 2));
	done(ht);
}

/* Overwritten entries are freed while the writer goes on (parked batches,
 * freed by the next writer of their stripe once their grace period passed),
 * with no scan running and before ht_free(); poisoned on free, validated. */
static void test_parked_frees(void **st)
{
	struct ht *ht = mk(1024, 0);
	struct ht_stats hs;
	char k[32], v[32];

	(void)st;
	for (int round = 0; round < 40; round++) {
		for (int i = 0; i < 1000; i++) {
			int kl = snprintf(k, sizeof(k), "key:%d", i);
			int vl = snprintf(v, sizeof(v), "v%d:%d", round, i);

			assert_int_equal(ht_set(ht, k, (size_t)kl, v, (size_t)vl, HT_NO_EXPIRE, 0,
						NULL),
					 0);
		}
		/* a quiescent state, then a pause offline: grace periods end */
		rcu_quiescent_state();
		rcu_thread_offline();
		usleep(2000);
		rcu_thread_online();
	}
	ht_stats(ht, &hs);
	print_message("batches freed during the run: %lu\n", hs.retire_batches_freed);
	assert_true(hs.retire_batches_freed > 0);
	assert_int_equal(getstr(ht, "key:7", v, sizeof(v)), 5);
	assert_string_equal(v, "v39:7");
	done(ht);
}

/* ht_remove_hook(): every entry that leaves the table, with its kind and
 * its old value, valid during the call; ht_flush() reports nothing. */
struct removed {
	int n[4];
	char last[16];
};

static void remove_fn(void *arg, const struct ht_entry *old, int kind)
{
	struct removed *r = arg;
	size_t n = ht_entry_vlen(old) < sizeof(r->last) - 1 ? ht_entry_vlen(old) : sizeof(r->last) - 1;

	r->n[kind]++;
	memcpy(r->last, ht_entry_val(old), n);
	r->last[n] = 0;
}

static void test_remove_hook(void **st)
{
	struct ht *ht = mk(0, 1);
	struct removed r = {{0}, ""};
	int code = HT_RMW_DELETE;

	(void)st;
	ht_remove_hook(ht, remove_fn, &r);
	assert_int_equal(ht_set(ht, S("a"), S("one"), HT_NO_EXPIRE, 0, NULL), 0);
	assert_int_equal(r.n[HT_WATCH_STORE] + r.n[HT_WATCH_INSERT], 0);
	assert_int_equal(ht_set(ht, S("a"), S("two"), HT_NO_EXPIRE, 0, NULL), 0);
	assert_int_equal(r.n[HT_WATCH_STORE], 1);
	assert_string_equal(r.last, "one");
	assert_int_equal(ht_expire_set(ht, S("a"), ht_now_ms() + 60000, 0), 1);
	assert_int_equal(r.n[HT_WATCH_STORE], 2); /* an expiry change replaces too */
	assert_int_equal(ht_del(ht, S("a")), 0);
	assert_int_equal(r.n[HT_WATCH_DELETE], 1);
	assert_string_equal(r.last, "two");
	assert_int_equal(ht_set(ht, S("b"), S("bee"), HT_NO_EXPIRE, 0, NULL), 0);
	assert_int_equal(ht_rmw(ht, S("b"), ret_fn, &code), HT_RMW_DELETE);
	assert_int_equal(r.n[HT_WATCH_DELETE], 2);
	assert_string_equal(r.last, "bee");
	assert_int_equal(ht_set(ht, S("e"), S("old"), ht_now_ms() - 1, 0, NULL), 0);
	while (r.n[HT_WATCH_EXPIRED] == 0 && ht_count(ht))
		ht_expire_cycle(ht, 20, 0, NULL, NULL);
	assert_int_equal(r.n[HT_WATCH_EXPIRED], 1);
	assert_string_equal(r.last, "old");
	assert_int_equal(ht_set(ht, S("f"), S("x"), HT_NO_EXPIRE, 0, NULL), 0);
	assert_int_equal(ht_flush(ht), 0);
	assert_int_equal(r.n[HT_WATCH_DELETE], 2);
	assert_int_equal(r.n[HT_WATCH_INSERT], 0); /* inserts remove nothing */
	done(ht);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_basic),
	    cmocka_unit_test(test_set_options),
	    cmocka_unit_test(test_expiry),
	    cmocka_unit_test(test_expiry_hold),
	    cmocka_unit_test(test_expire_cycle),
	    cmocka_unit_test(test_rmw),
	    cmocka_unit_test(test_txn),
	    cmocka_unit_test(test_flush),
	    cmocka_unit_test(test_resize),
	    cmocka_unit_test(test_auto_resize),
	    cmocka_unit_test(test_explicit_resize_kept),
	    cmocka_unit_test(test_reserve),
	    cmocka_unit_test(test_scan),
	    cmocka_unit_test(test_scan_across_resize),
	    cmocka_unit_test(test_random_sample),
	    cmocka_unit_test(test_clock_and_stats),
	    cmocka_unit_test(test_parked_frees),
	    cmocka_unit_test(test_remove_hook),
	};
	int n = (int)(sizeof(tests) / sizeof(tests[0])), failed;

	rcu_register_thread();
	failed = cmocka_run_group_tests_name("ht_" RCU_FLAVOR_NAME, tests, NULL, NULL);
	rcu_unregister_thread();
	printf("%d passed, %d failed\n", n - failed, failed);
	return failed ? 1 : 0;
}
