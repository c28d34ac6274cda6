/*
 * test_sval.c - unit test of server/sval.c, the immutable set encoding.
 *
 * A model (the members as strings, in insertion order) takes the same
 * random SADD/SREM edits as the encoding, with a small intset limit so the
 * sets cross it both ways; after every edit the value is rebuilt with the
 * encoding Redis 7.0 would give it (sv_edit_enc()), and checked against the
 * model: the count; the encoding (hashtable once a non-integer came or a
 * member was added past the limit, and for good); the walk (sv_next) gives
 * the model's members, ascending by value for an intset and in insertion
 * order for a hashtable; every model member is found (sv_has) and absent
 * ones (non-canonical integers among them) are not; sv_random() only draws
 * members and, over many draws, every one; the size is sv_edit_size()'s.
 * Several edits in one sv_edit (a member removed then added again, a member
 * added twice) are covered too.  Ends with "N passed, M failed, K skipped".
 */
#include "server/sval.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

#define NU 400	     /* the universe of members */
#define MAX_INTSET 40 /* the intset limit of the random test */

static char uni[NU][24];
static int model[NU], mn; /* member indexes in insertion order */
static int in_model[NU];

static uint64_t rs = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* Members: integers (some negative, the int64 edges), and strings that
 * look like integers but are not canonical ("01", "+3", "-0"). */
static void make_universe(void)
{
	for (int i = 0; i < NU; i++) {
		if (i < 300)
			snprintf(uni[i], sizeof(uni[i]), "%d", (i % 2 ? -1 : 1) * i * 37);
		else if (i == 300)
			snprintf(uni[i], sizeof(uni[i]), "9223372036854775807");
		else if (i == 301)
			snprintf(uni[i], sizeof(uni[i]), "-9223372036854775808");
		else if (i < 350)
			snprintf(uni[i], sizeof(uni[i]), "m%d", i);
		else if (i < 360)
			snprintf(uni[i], sizeof(uni[i]), "0%d", i);
		else if (i < 370)
			snprintf(uni[i], sizeof(uni[i]), "+%d", i);
		else if (i == 370)
			snprintf(uni[i], sizeof(uni[i]), "-0");
		else if (i == 371)
			snprintf(uni[i], sizeof(uni[i]), "9223372036854775808");
		else
			snprintf(uni[i], sizeof(uni[i]), "s%d", i * 7);
	}
}

static int is_canon_int(const char *s)
{
	int64_t x;

	return sv_is_int(s, strlen(s), &x);
}

static void *build(struct sv_edit *ed, int enc, size_t *size)
{
	void *v;

	*size = sv_edit_size(ed, enc);
	v = malloc(*size);
	sv_edit_write(ed, v, enc);
	return v;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* 1 if @v holds exactly the model: ascending for an intset, in insertion
 * order for a hashtable. */
static int matches(const void *v, int enc)
{
	struct sv_mem m;
	size_t off = 0;
	int i = 0;
	long long *want = NULL;

	if ((int)sv_count(v) != mn || sv_enc(v) != enc)
		return 0;
	if (enc == SV_ENC_INTSET) {
		want = malloc((size_t)(mn ? mn : 1) * sizeof(*want));
		for (int k = 0; k < mn; k++)
			want[k] = strtoll(uni[model[k]], NULL, 10);
		qsort(want, (size_t)mn, sizeof(*want), cmp_ll);
	}
	while (sv_next(v, &off, &m)) {
		char buf[32];

		if (i >= mn)
			break;
		if (want)
			snprintf(buf, sizeof(buf), "%lld", want[i]);
		else
			snprintf(buf, sizeof(buf), "%s", uni[model[i]]);
		if (m.l != strlen(buf) || memcmp(m.p, buf, m.l) != 0)
			break;
		i++;
	}
	free(want);
	return i == mn && !sv_next(v, &off, &m);
}

static void model_add(int u)
{
	if (in_model[u])
		return;
	in_model[u] = 1;
	model[mn++] = u;
}

static void model_rem(int u)
{
	if (!in_model[u])
		return;
	in_model[u] = 0;
	for (int k = 0; k < mn; k++) {
		if (model[k] == u) {
			memmove(&model[k], &model[k + 1], (size_t)(mn - k - 1) * sizeof(model[0]));
			mn--;
			return;
		}
	}
}

static void test_random(void)
{
	void *v = NULL;
	int enc = -1, bad_enc = 0, bad_walk = 0, bad_find = 0, bad_rand = 0, crossed = 0;

	make_universe();
	for (int step = 0; step < 6000; step++) {
		struct sv_edit ed;
		int u = (int)(rnd() % (step < 3000 ? 320 : NU)), add = rnd() % 3 != 0, changed,
		    want_enc;
		size_t size;

		if (step % 1500 == 0 && v) { /* start again: a new set */
			free(v);
			v = NULL;
			enc = -1;
			memset(in_model, 0, sizeof(in_model));
			mn = 0;
		}
		sv_edit_init(&ed, v);
		changed = add ? sv_edit_add(&ed, uni[u], strlen(uni[u]))
			      : sv_edit_rem(&ed, uni[u], strlen(uni[u]));
		if (changed != (add ? !in_model[u] : in_model[u]))
			bad_find++;
		if (add)
			model_add(u);
		else
			model_rem(u);
		if (!changed || ed.live == 0) {
			sv_edit_fini(&ed);
			if (ed.live == 0 && changed) { /* the last member went: no value */
				free(v);
				v = NULL;
				enc = -1;
			}
			continue;
		}
		/* Redis 7.0: hashtable is sticky; a non-integer, or an add past the
		 * limit, converts */
		want_enc = enc == SV_ENC_HASHTABLE ? SV_ENC_HASHTABLE : SV_ENC_INTSET;
		if (add && !is_canon_int(uni[u]))
			want_enc = SV_ENC_HASHTABLE;
		if (add && mn > MAX_INTSET)
			want_enc = SV_ENC_HASHTABLE;
		if (sv_edit_enc(&ed, enc, MAX_INTSET) != want_enc)
			bad_enc++;
		crossed += enc == SV_ENC_INTSET && want_enc == SV_ENC_HASHTABLE;
		if (enc == SV_ENC_INTSET && want_enc == SV_ENC_HASHTABLE) {
			/* converted: the intset's members in its (ascending) order,
			 * then the new one */
			for (int i = 1; i < mn - 1; i++)
				for (int k = i; k > 0 && strtoll(uni[model[k - 1]], NULL, 10) >
							    strtoll(uni[model[k]], NULL, 10); k--) {
					int t = model[k];

					model[k] = model[k - 1];
					model[k - 1] = t;
				}
		}
		{
			void *nv = build(&ed, want_enc, &size);

			sv_edit_fini(&ed);
			free(v);
			v = nv;
			enc = want_enc;
		}
		if (!matches(v, enc))
			bad_walk++;
		for (int k = 0; k < NU; k++)
			if (sv_has(v, uni[k], strlen(uni[k])) != in_model[k])
				bad_find++;
		if (step % 50 == 0) {
			int seen[NU] = {0}, nseen = 0;

			for (int d = 0; d < 40 * mn + 100; d++) {
				struct sv_mem m;
				int k;

				sv_random(v, rnd, &m);
				for (k = 0; k < NU; k++)
					if (strlen(uni[k]) == m.l && !memcmp(uni[k], m.p, m.l))
						break;
				if (k == NU || !in_model[k])
					bad_rand++;
				else if (!seen[k]++)
					nseen++;
			}
			if (nseen != mn)
				bad_rand++;
		}
	}
	CHECK(bad_enc == 0, "%d edits got another encoding than Redis's", bad_enc);
	CHECK(bad_walk == 0, "%d values walked otherwise than the model", bad_walk);
	CHECK(bad_find == 0, "%d membership answers differ from the model", bad_find);
	CHECK(bad_rand == 0, "%d random draws outside the set, or members never drawn", bad_rand);
	CHECK(crossed > 3, "the sets crossed the intset limit %d times", crossed);
	free(v);
}

/* Several changes in one edit, and the size of what is written. */
static void test_multi_edit(void)
{
	struct sv_edit ed;
	void *v;
	size_t size;
	struct sv_mem m;
	size_t off = 0;
	char got[64] = "";

	sv_edit_init(&ed, NULL);
	CHECK(sv_edit_add(&ed, "3", 1) == 1 && sv_edit_add(&ed, "1", 1) == 1 &&
		      sv_edit_add(&ed, "3", 1) == 0 && sv_edit_add(&ed, "2", 1) == 1,
	      "adds count only new members");
	CHECK(sv_edit_rem(&ed, "1", 1) == 1 && sv_edit_rem(&ed, "1", 1) == 0 &&
		      sv_edit_add(&ed, "1", 1) == 1 && ed.live == 3,
	      "a member removed, then added again, in one edit");
	CHECK(sv_edit_enc(&ed, -1, 512) == SV_ENC_INTSET && sv_edit_enc(&ed, -1, 2) == SV_ENC_HASHTABLE,
	      "a new set of three integers: intset under 512, hashtable over 2");
	v = build(&ed, SV_ENC_INTSET, &size);
	sv_edit_fini(&ed);
	CHECK(size == SV_HDR + 3 * 8, "an intset of 3 is %zu bytes", size);
	while (sv_next(v, &off, &m))
		strncat(got, m.p, m.l);
	CHECK(!strcmp(got, "123"), "intset walks ascending: %s", got);
	sv_edit_init(&ed, v);
	CHECK(sv_edit_has(&ed, "2", 1) && !sv_edit_has(&ed, "02", 2), "an edit of an intset finds its members");
	sv_edit_add(&ed, "x", 1);
	CHECK(sv_edit_enc(&ed, SV_ENC_INTSET, 512) == SV_ENC_HASHTABLE, "a non-integer converts");
	free(v);
	v = build(&ed, SV_ENC_HASHTABLE, &size);
	sv_edit_fini(&ed);
	off = 0;
	got[0] = 0;
	while (sv_next(v, &off, &m))
		strncat(got, m.p, m.l);
	CHECK(!strcmp(got, "123x") && sv_has(v, "x", 1) && sv_has(v, "3", 1) && !sv_has(v, "4", 1),
	      "the converted set keeps the intset's order, then the new member: %s", got);
	sv_edit_init(&ed, v);
	sv_edit_rem(&ed, "x", 1);
	CHECK(sv_edit_enc(&ed, SV_ENC_HASHTABLE, 512) == SV_ENC_HASHTABLE, "hashtable is sticky");
	sv_edit_fini(&ed);
	sv_edit_init(&ed, NULL);
	CHECK(sv_edit_add(&ed, "", 0) == 1 && sv_edit_add(&ed, "", 0) == 0 &&
		      sv_edit_enc(&ed, -1, 512) == SV_ENC_HASHTABLE,
	      "the empty member is a string");
	sv_edit_fini(&ed);
	free(v);
}

int main(void)
{
	test_random();
	test_multi_edit();
	return check_summary();
}
