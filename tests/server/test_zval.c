/*
 * test_zval.c - unit test of server/zval.c, the immutable sorted set
 * encoding.
 *
 * A model (an unsorted array of member strings and scores) takes the same
 * random edits as the encoding: several ZADD-like sets and ZREM-like
 * deletes in one zv_edit (a member set twice, deleted then set again), and
 * rank-range deletes (ZREMRANGEBYRANK, ZPOP).  The value is rebuilt after
 * every edit, alternately in both encodings, across the index threshold
 * (ZV_IDX_MIN) both ways.  After each: the count, the elements in strict
 * (score, member) order and equal to the sorted model, every member found
 * (zv_find) at its rank with its score, an absent one not, the size as
 * zv_edit_size() said, and random score ranges (inclusive and exclusive,
 * infinite) against a brute-force count.  Lex ranges are checked on sets
 * of equal scores; zv_d2string() and zv_parse_score() on Redis's edge
 * cases.  Ends with "N passed, M failed, K skipped".
 */
#include "server/zval.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

#define NM 300

static char mm[NM][16];
static size_t mml[NM];
static double ms[NM];
static int mn;
static char names[200][8]; /* stable member bytes for the edits to point at */
static size_t namel[200];
static uint64_t seed = 88172645463325252ULL;

static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

static int model_find(const char *m, size_t ml)
{
	for (int i = 0; i < mn; i++)
		if (mml[i] == ml && !memcmp(mm[i], m, ml))
			return i;
	return -1;
}

static void model_set(const char *m, size_t ml, double s)
{
	int i = model_find(m, ml);

	if (i < 0) {
		i = mn++;
		memcpy(mm[i], m, ml);
		mml[i] = ml;
	}
	ms[i] = s;
}

static void model_del_at(int i)
{
	mn--;
	memmove(mm[i], mm[mn], sizeof(mm[0]));
	mml[i] = mml[mn];
	ms[i] = ms[mn];
}

static int model_cmp(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	struct zv_item ia = {ms[a], mm[a], mml[a]}, ib = {ms[b], mm[b], mml[b]};

	return zv_item_cmp(&ia, &ib);
}

/* The model's indexes in (score, member) order, into @ord. */
static void model_sorted(int *ord)
{
	for (int i = 0; i < mn; i++)
		ord[i] = i;
	qsort(ord, (size_t)mn, sizeof(*ord), model_cmp);
}

static void *finish_write(struct zv_edit *ed, int enc, size_t *size)
{
	void *v;

	zv_edit_finish(ed);
	*size = zv_edit_size(ed);
	v = malloc(*size);
	zv_edit_write(ed, v, enc);
	return v;
}

/* 1 if @v holds exactly the model. */
static int matches(const void *v, size_t size, int enc)
{
	int ord[NM];
	struct zv_item it, prev;

	if ((int)zv_count(v) != mn || zv_enc(v) != enc)
		return 0;
	model_sorted(ord);
	for (int i = 0; i < mn; i++) {
		zv_at(v, (uint32_t)i, &it);
		if (it.ml != mml[ord[i]] || memcmp(it.m, mm[ord[i]], it.ml) ||
		    it.score != ms[ord[i]])
			return 0;
		if (i > 0 && zv_item_cmp(&prev, &it) >= 0)
			return 0;
		if (zv_find(v, it.m, it.ml) != i || zv_score_at(v, (uint32_t)i) != it.score)
			return 0;
		prev = it;
	}
	(void)size;
	return zv_find(v, "absent", 6) == -1;
}

static double pick_score(void)
{
	static const double s[] = {0, 1, 1, 2, -1, 2.5, 1e300, -INFINITY, INFINITY, 3, 3, 7};

	return rnd() % 3 ? (double)(rnd() % 50) - 10 : s[rnd() % (sizeof(s) / sizeof(s[0]))];
}

/* Random score ranges against a brute-force count of the model. */
static int ranges_ok(const void *v)
{
	for (int k = 0; k < 20; k++) {
		struct zv_sbound lo = {pick_score(), (int)(rnd() % 2)},
				 hi = {pick_score(), (int)(rnd() % 2)};
		uint32_t from, to, want = 0;

		zv_score_range(v, &lo, &hi, &from, &to);
		for (int i = 0; i < mn; i++)
			want += (lo.excl ? ms[i] > lo.v : ms[i] >= lo.v) &&
				(hi.excl ? ms[i] < hi.v : ms[i] <= hi.v);
		if (to - from != want)
			return 0;
		for (uint32_t p = from; p < to; p++) {
			double d = zv_score_at(v, p);

			if ((lo.excl ? d <= lo.v : d < lo.v) || (hi.excl ? d >= hi.v : d > hi.v))
				return 0;
		}
	}
	return 1;
}

static void random_edits(void)
{
	void *v = NULL;
	size_t size = 0;
	int bad = 0, steps = 0, indexed = 0, small = 0;

	for (int step = 0; step < 3000; step++) {
		struct zv_edit ed;
		int enc = step % 2 ? ZV_ENC_SKIPLIST : ZV_ENC_LISTPACK;
		/* grow to about 150 members, then shrink below the index threshold */
		int grow = (step / 500) % 2 == 0;
		void *nv;

		zv_edit_init(&ed, v);
		if (v && rnd() % 5 == 0) {
			/* a rank range: ZREMRANGEBYRANK / ZPOP on the old value */
			uint32_t n = zv_count(v), a = (uint32_t)(rnd() % n), b = a + (uint32_t)(rnd() % 4);
			int ord[NM];
			char gone[NM] = {0};

			if (b > n)
				b = n;
			model_sorted(ord);
			for (uint32_t p = a; p < b; p++)
				gone[ord[p]] = 1;
			for (int i = mn - 1; i >= 0; i--)
				if (gone[i])
					model_del_at(i);
			zv_edit_del_range(&ed, a, b);
		} else {
			int nops = 1 + (int)(rnd() % 6);

			for (int o = 0; o < nops; o++) {
				unsigned k = (unsigned)(rnd() % 200);
				const char *m = names[k];
				size_t ml = namel[k];
				int want_new = model_find(m, ml) < 0;
				int i;

				if (rnd() % 40 < (grow ? 30u : 1u)) {
					double s = pick_score();

					model_set(m, ml, s);
					if (zv_edit_set(&ed, m, ml, s) != want_new)
						bad++;
				} else {
					i = model_find(m, ml);
					if (zv_edit_del(&ed, m, ml) != (i >= 0))
						bad++;
					if (i >= 0)
						model_del_at(i);
				}
			}
		}
		if (ed.live != (size_t)mn)
			bad++;
		if (mn == 0) {
			zv_edit_fini(&ed);
			free(v);
			v = NULL;
			continue;
		}
		nv = finish_write(&ed, enc, &size);
		zv_edit_fini(&ed);
		free(v);
		v = nv;
		if (!matches(v, size, enc) || !ranges_ok(v))
			bad++;
		indexed += mn > ZV_IDX_MIN;
		small += mn <= ZV_IDX_MIN;
		steps++;
	}
	CHECK(bad == 0 && steps > 2000, "%d random edits match the model (%d bad)", steps, bad);
	CHECK(indexed > 300 && small > 300, "both sides of the index threshold (%d, %d)", indexed,
	      small);
	free(v);
}

/* Several changes of one member in one edit; -0; an unchanged score. */
static void one_edit(void)
{
	struct zv_edit ed;
	size_t size;
	void *v, *v2;
	double s;

	zv_edit_init(&ed, NULL);
	CHECK(zv_edit_set(&ed, "b", 1, 2) == 1 && zv_edit_set(&ed, "a", 1, 2) == 1 &&
		  zv_edit_set(&ed, "b", 1, 1) == 0,
	      "a member set twice in one edit counts once");
	CHECK(zv_edit_del(&ed, "a", 1) == 1 && zv_edit_del(&ed, "a", 1) == 0 &&
		  zv_edit_set(&ed, "a", 1, 5) == 1,
	      "deleted then set again in one edit");
	CHECK(zv_edit_get(&ed, "a", 1, &s) && s == 5 && !zv_edit_get(&ed, "c", 1, &s),
	      "zv_edit_get sees the edit");
	v = finish_write(&ed, ZV_ENC_LISTPACK, &size);
	zv_edit_fini(&ed);
	{
		struct zv_item a, b;

		zv_at(v, 0, &a);
		zv_at(v, 1, &b);
		CHECK(zv_count(v) == 2 && a.m[0] == 'b' && a.score == 1 && b.m[0] == 'a' &&
			  b.score == 5,
		      "written in score order");
	}
	/* -0: a listpack holds it as 0, a skiplist keeps it */
	zv_edit_init(&ed, NULL);
	zv_edit_set(&ed, "z", 1, -0.0);
	v2 = finish_write(&ed, ZV_ENC_LISTPACK, &size);
	CHECK(!signbit(zv_score_at(v2, 0)), "a listpack reads -0 back as 0");
	free(v2);
	v2 = finish_write(&ed, ZV_ENC_SKIPLIST, &size);
	CHECK(signbit(zv_score_at(v2, 0)), "a skiplist keeps -0");
	free(v2);
	zv_edit_fini(&ed);
	/* an update to the same score keeps the element; 0 == -0 */
	zv_edit_init(&ed, v);
	CHECK(zv_edit_set(&ed, "b", 1, 1) == 0 && ed.nadd == 0, "an unchanged score moves nothing");
	zv_edit_fini(&ed);
	free(v);
}

/* Lex ranges on equal scores, against brute force. */
static void lex_ranges(void)
{
	static const char *const ms_[] = {"", "a", "aa", "ab", "b", "ba", "c", "\xff", "a\x00"};
	static const char *const bs[] = {"-", "+", "[", "(", "[a", "(a", "[aa", "(ab", "[b",
					 "(c", "[d", "(\xff", "[a\x00"};
	size_t bl[sizeof(bs) / sizeof(bs[0])];
	struct zv_edit ed;
	size_t size, n = sizeof(ms_) / sizeof(ms_[0]);
	void *v;
	int bad = 0;

	zv_edit_init(&ed, NULL);
	for (size_t i = 0; i < n; i++)
		zv_edit_set(&ed, ms_[i], i == n - 1 ? 2 : strlen(ms_[i]), 0);
	v = finish_write(&ed, ZV_ENC_LISTPACK, &size);
	zv_edit_fini(&ed);
	for (size_t i = 0; i < sizeof(bs) / sizeof(bs[0]); i++)
		bl[i] = i == sizeof(bs) / sizeof(bs[0]) - 1 ? 3 : strlen(bs[i]);
	for (size_t i = 0; i < sizeof(bs) / sizeof(bs[0]); i++) {
		for (size_t j = 0; j < sizeof(bs) / sizeof(bs[0]); j++) {
			struct zv_lbound lo, hi;
			uint32_t from, to, want = 0;

			lo.kind = bs[i][0] == '-' ? ZV_LEX_MINUS : bs[i][0] == '+' ? ZV_LEX_PLUS
					: bs[i][0] == '[' ? ZV_LEX_INCL : ZV_LEX_EXCL;
			hi.kind = bs[j][0] == '-' ? ZV_LEX_MINUS : bs[j][0] == '+' ? ZV_LEX_PLUS
					: bs[j][0] == '[' ? ZV_LEX_INCL : ZV_LEX_EXCL;
			lo.s = bs[i] + 1;
			lo.l = bl[i] - 1;
			hi.s = bs[j] + 1;
			hi.l = bl[j] - 1;
			zv_lex_range(v, &lo, &hi, &from, &to);
			for (uint32_t p = 0; p < zv_count(v); p++) {
				struct zv_item it;
				int ge, le;

				zv_at(v, p, &it);
				ge = lo.kind == ZV_LEX_MINUS  ? 1
				     : lo.kind == ZV_LEX_PLUS ? 0
				     : lo.kind == ZV_LEX_INCL ? zv_mcmp(it.m, it.ml, lo.s, lo.l) >= 0
							      : zv_mcmp(it.m, it.ml, lo.s, lo.l) > 0;
				le = hi.kind == ZV_LEX_PLUS    ? 1
				     : hi.kind == ZV_LEX_MINUS ? 0
				     : hi.kind == ZV_LEX_INCL  ? zv_mcmp(it.m, it.ml, hi.s, hi.l) <= 0
							       : zv_mcmp(it.m, it.ml, hi.s, hi.l) < 0;
				want += ge && le;
			}
			if ((to > from ? to - from : 0) != want)
				bad++;
		}
	}
	CHECK(bad == 0, "lex ranges of every pair of bounds match brute force (%d bad)", bad);
	free(v);
}

static void numbers(void)
{
	static const struct {
		double d;
		const char *s;
	} f[] = {{1.1, "1.1000000000000001"},
		 {-0.0, "-0"},
		 {0, "0"},
		 {1e17, "100000000000000000"},
		 {4611686018427387904.0, "4611686018427387904"},
		 {1e19, "1e+19"},
		 {INFINITY, "inf"},
		 {-INFINITY, "-inf"},
		 {2.5, "2.5"},
		 {-3, "-3"}};
	static const char *const good[] = {"1", "-1.5", "inf", "-inf", "+inf", "1e300", "0x10",
					   ".5", "5.", "1E2", "infinity"};
	static const char *const badv[] = {"", " 1", "1 ", "nan", "x", "1e400", "1e-400",
					   "1.5x", "--1"};
	char buf[64];
	int bad = 0;
	double d;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		int n = zv_d2string(buf, sizeof(buf), f[i].d);

		if ((size_t)n != strlen(f[i].s) || strcmp(buf, f[i].s)) {
			printf("d2string %.17g: %s, want %s\n", f[i].d, buf, f[i].s);
			bad++;
		}
	}
	CHECK(bad == 0, "zv_d2string() as Redis 7.0's d2string()");
	bad = 0;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		bad += zv_parse_score(good[i], strlen(good[i]), &d) != 0;
	for (size_t i = 0; i < sizeof(badv) / sizeof(badv[0]); i++)
		bad += zv_parse_score(badv[i], strlen(badv[i]), &d) == 0;
	bad += zv_parse_score("1\0", 2, &d) == 0; /* a NUL inside is not the end */
	CHECK(bad == 0, "zv_parse_score() accepts and refuses what ZADD does (%d bad)", bad);
}

int main(void)
{
	for (int k = 0; k < 200; k++)
		namel[k] = (size_t)snprintf(names[k], sizeof(names[k]), "m%d", k);
	random_edits();
	one_edit();
	lex_ranges();
	numbers();
	return check_summary();
}
