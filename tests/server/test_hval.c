/*
 * test_hval.c - unit test of server/hval.c, the immutable hash encoding.
 *
 * A model (arrays of field and value strings in insertion order) takes the
 * same random HSET/HDEL edits as the encoding, which is rebuilt after every
 * edit in both encodings (listpack: linear lookups; hashtable: the index);
 * after each, the walk (hv_next) gives the model's pairs in the model's
 * order, every model field is found (hv_find) with its value, absent fields
 * are not, the count matches, and the size is what hv_edit_size() said.
 * Several edits in one hv_edit (a multi-field HSET, a field set twice) and
 * hv_edit_load()'s duplicate check are covered too.  Ends with "N passed,
 * M failed, K skipped".
 */
#include "server/hval.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

#define NF 700

static char mf[NF][16], mv[NF][24];
static int mn;

static int model_find(const char *f)
{
	for (int i = 0; i < mn; i++)
		if (!strcmp(mf[i], f))
			return i;
	return -1;
}

/* The encoding of the old value @old with @edits applied by @fn into a new
 * malloc()ed value. */
static void *rebuild(const void *old, int enc, size_t *size)
{
	struct hv_edit ed;
	void *v;

	hv_edit_init(&ed, old);
	*size = hv_edit_size(&ed, enc);
	v = malloc(*size);
	hv_edit_write(&ed, v, enc);
	hv_edit_fini(&ed);
	return v;
}

/* 1 if @v holds exactly the model, in order. */
static int matches(const void *v)
{
	struct hv_pair p;
	size_t off = 0;
	int i = 0;

	if ((int)hv_count(v) != mn)
		return 0;
	while (hv_next(v, &off, &p)) {
		if (i >= mn || p.fl != strlen(mf[i]) || memcmp(p.f, mf[i], p.fl) ||
		    p.vl != strlen(mv[i]) || memcmp(p.v, mv[i], p.vl))
			return 0;
		i++;
	}
	if (i != mn)
		return 0;
	for (i = 0; i < mn; i++)
		if (!hv_find(v, mf[i], strlen(mf[i]), &p, NULL) || p.vl != strlen(mv[i]) ||
		    memcmp(p.v, mv[i], p.vl))
			return 0;
	return !hv_find(v, "absent", 6, &p, NULL);
}

static void test_random(int enc)
{
	uint64_t s = 88172645463325252ULL;
	void *v = NULL;
	size_t size = 0;
	int bad = 0, steps = 0;

	mn = 0;
	for (int n = 0; n < 4000; n++) {
		struct hv_edit ed;
		char f[16], val[24];
		int op, k;
		void *nv;

		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		op = (int)(s % 3);
		k = (int)((s >> 8) % (n < 2000 ? NF : 40));
		snprintf(f, sizeof(f), "f%d", k);
		snprintf(val, sizeof(val), "v%d.%d", k, n);
		hv_edit_init(&ed, v);
		if (op < 2 || !v) { /* set */
			int i = model_find(f), isnew = hv_edit_set(&ed, f, strlen(f), val, strlen(val));

			bad += isnew != (i < 0);
			if (i < 0)
				i = mn++;
			strcpy(mf[i], f);
			strcpy(mv[i], val);
		} else { /* delete, closing the gap */
			int i = model_find(f), del = hv_edit_del(&ed, f, strlen(f));

			bad += del != (i >= 0);
			if (i >= 0) {
				memmove(mf[i], mf[i + 1], sizeof(mf[0]) * (size_t)(mn - i - 1));
				memmove(mv[i], mv[i + 1], sizeof(mv[0]) * (size_t)(mn - i - 1));
				mn--;
			}
		}
		if (ed.live == 0) {
			hv_edit_fini(&ed);
			free(v);
			v = NULL;
			continue;
		}
		size = hv_edit_size(&ed, enc);
		nv = malloc(size);
		hv_edit_write(&ed, nv, enc);
		hv_edit_fini(&ed);
		free(v);
		v = nv;
		bad += !matches(v) || hv_enc(v) != enc;
		steps++;
	}
	if (v) { /* a copy without edits is the same */
		void *c = rebuild(v, enc, &size);

		bad += !matches(c);
		free(c);
	}
	free(v);
	CHECK(bad == 0 && steps > 1000, "encoding %d: %d random edits match the model (%d bad)", enc,
	      steps, bad);
}

static void test_multi_edit(void)
{
	struct hv_edit ed;
	struct hv_pair p;
	size_t size, off = 0;
	void *v;
	int created;

	hv_edit_init(&ed, NULL);
	created = hv_edit_set(&ed, "a", 1, "1", 1);
	created += hv_edit_set(&ed, "b", 1, "2", 1);
	created += hv_edit_set(&ed, "a", 1, "3", 1); /* HSET h a 1 b 2 a 3 */
	CHECK(created == 2 && ed.live == 2, "a field set twice in one edit counts once");
	size = hv_edit_size(&ed, HV_ENC_LISTPACK);
	v = malloc(size);
	hv_edit_write(&ed, v, HV_ENC_LISTPACK);
	hv_edit_fini(&ed);
	CHECK(hv_next(v, &off, &p) && p.fl == 1 && p.f[0] == 'a' && p.v[0] == '3',
	      "the update keeps the field's place, last value wins");
	CHECK(hv_find(v, "b", 1, &p, NULL) && p.v[0] == '2', "the other field");
	{
		struct hv_edit e2;

		hv_edit_init(&e2, v);
		CHECK(hv_edit_del(&e2, "a", 1) == 1 && hv_edit_del(&e2, "a", 1) == 0,
		      "a field deleted twice in one edit counts once");
		CHECK(e2.live == 1, "one left");
		hv_edit_fini(&e2);
	}
	free(v);
}

/* One edit of many new fields (each set twice, some deleted): the index of
 * new pairs (past HV_EDIT_SCAN) finds them all. */
static void test_many_new(void)
{
	static char f[3000][12];
	struct hv_edit ed;
	struct hv_pair p;
	size_t size;
	int created = 0, bad = 0;
	void *v;

	hv_edit_init(&ed, NULL);
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < 3000; i++) {
			snprintf(f[i], sizeof(f[i]), "n%d", i);
			created += hv_edit_set(&ed, f[i], strlen(f[i]), pass ? "2" : "1", 1);
		}
	for (int i = 0; i < 3000; i += 3)
		bad += hv_edit_del(&ed, f[i], strlen(f[i])) != 1;
	CHECK(created == 3000 && bad == 0 && ed.live == 2000,
	      "3000 new fields set twice in one edit, 1000 deleted (%d created)", created);
	size = hv_edit_size(&ed, HV_ENC_HASHTABLE);
	v = malloc(size);
	hv_edit_write(&ed, v, HV_ENC_HASHTABLE);
	hv_edit_fini(&ed);
	for (int i = 0; i < 3000; i++) {
		int found = hv_find(v, f[i], strlen(f[i]), &p, NULL);

		bad += i % 3 ? !found || p.v[0] != '2' : found;
	}
	CHECK(bad == 0 && hv_count(v) == 2000, "the written hash holds them (%d bad)", bad);
	free(v);
}

static void test_load(void)
{
	struct hv_pair ps[3] = {{"x", 1, "1", 1}, {"y", 1, "2", 1}, {"x", 1, "3", 1}};
	struct hv_edit ed;

	CHECK(hv_edit_load(&ed, ps, 3) == -1, "a loaded hash with a duplicate field is refused");
	CHECK(hv_edit_load(&ed, ps, 2) == 0 && ed.live == 2, "distinct fields load");
	hv_edit_fini(&ed);
}

int main(void)
{
	test_random(HV_ENC_LISTPACK);
	test_random(HV_ENC_HASHTABLE);
	test_multi_edit();
	test_many_new();
	test_load();
	return check_summary();
}
