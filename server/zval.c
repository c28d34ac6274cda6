/*
 * zval.c - the immutable sorted set value encoding (zval.h): parsing and
 * binary searches for readers (no lock, no allocation) and the
 * copy-modify-write builder writers use inside ht_rmw().  A write costs
 * O(n + m log m) for m changed members of an n-member set (the kept old
 * elements are already sorted: the changed ones are sorted and merged in);
 * docs/types.md names what replaces it for big sets.
 */
#include "server/zval.h"
#include "server/hval.h"
#include "server/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline uint32_t rd32(const void *p)
{
	uint32_t x;

	memcpy(&x, p, 4);
	return x;
}

static inline void wr32(void *p, uint32_t x)
{
	memcpy(p, &x, 4);
}

uint32_t zv_count(const void *v)
{
	return rd32((const char *)v + 4);
}

int zv_enc(const void *v)
{
	return ((const unsigned char *)v)[1];
}

void zv_at(const void *v, uint32_t i, struct zv_item *it)
{
	const char *s = v;
	uint32_t off = rd32(s + ZV_HDR + 4 * (size_t)i);

	memcpy(&it->score, s + off, 8);
	it->ml = rd32(s + off + 8);
	it->m = s + off + 12;
}

double zv_score_at(const void *v, uint32_t i)
{
	const char *s = v;
	double d;

	memcpy(&d, s + rd32(s + ZV_HDR + 4 * (size_t)i), 8);
	return d;
}

int zv_mcmp(const char *a, size_t al, const char *b, size_t bl)
{
	int r = memcmp(a, b, al < bl ? al : bl);

	if (r)
		return r;
	return al < bl ? -1 : al > bl;
}

int zv_item_cmp(const struct zv_item *a, const struct zv_item *b)
{
	if (a->score < b->score)
		return -1;
	if (a->score > b->score)
		return 1;
	return zv_mcmp(a->m, a->ml, b->m, b->ml);
}

long zv_find(const void *v, const void *m, size_t ml)
{
	const char *s = v;
	uint32_t n = zv_count(v), cap = rd32(s + 12);
	struct zv_item it;

	if (cap) {
		const char *idx = s + rd32(s + 8);
		uint32_t mask = cap - 1;

		for (uint32_t h = (uint32_t)hv_field_hash(m, ml) & mask;; h = (h + 1) & mask) {
			uint32_t slot = rd32(idx + 4 * (size_t)h);

			if (!slot)
				return -1;
			zv_at(v, slot - 1, &it);
			if (it.ml == ml && !memcmp(it.m, m, ml))
				return (long)slot - 1;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		zv_at(v, i, &it);
		if (it.ml == ml && !memcmp(it.m, m, ml))
			return (long)i;
	}
	return -1;
}

/* ---------------------------------------------------------- range search */

/* First position whose score is > @x (@gt) or >= @x. */
static uint32_t score_first(const void *v, double x, int gt)
{
	uint32_t lo = 0, hi = zv_count(v);

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		double d = zv_score_at(v, mid);

		if (gt ? d <= x : d < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void zv_score_range(const void *v, const struct zv_sbound *min, const struct zv_sbound *max,
		    uint32_t *from, uint32_t *to)
{
	*from = score_first(v, min->v, min->excl); /* the first inside */
	*to = score_first(v, max->v, !max->excl);  /* the first past the end */
	if (*to < *from)
		*to = *from;
}

/* Whether member (@m, @ml) is before bound @b: below it (@strict) or at
 * most it, an exclusive bound counting as one step further. */
static int lex_before(const struct zv_lbound *b, const char *m, size_t ml, int strict)
{
	int r;

	switch (b->kind) {
	case ZV_LEX_MINUS:
		return 0;
	case ZV_LEX_PLUS:
		return 1;
	default:
		r = zv_mcmp(m, ml, b->s, b->l);
		return (b->kind == ZV_LEX_EXCL) == strict ? r <= 0 : r < 0;
	}
}

void zv_lex_range(const void *v, const struct zv_lbound *min, const struct zv_lbound *max,
		  uint32_t *from, uint32_t *to)
{
	uint32_t lo = 0, hi = zv_count(v);
	struct zv_item it;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		zv_at(v, mid, &it);
		if (lex_before(min, it.m, it.ml, 1)) /* below the range */
			lo = mid + 1;
		else
			hi = mid;
	}
	*from = lo;
	hi = zv_count(v);
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		zv_at(v, mid, &it);
		if (lex_before(max, it.m, it.ml, 0)) /* not past its end */
			lo = mid + 1;
		else
			hi = mid;
	}
	*to = lo;
}

/* --------------------------------------------------------------- editing */

void zv_edit_init(struct zv_edit *ed, const void *old)
{
	memset(ed, 0, sizeof(*ed));
	ed->old = old;
	ed->nold = old ? zv_count(old) : 0;
	ed->live = ed->nold;
}

static void aidx_put(uint32_t *idx, size_t cap, const struct zv_item *it, uint32_t pos)
{
	size_t mask = cap - 1;

	for (size_t h = hv_field_hash(it->m, it->ml) & mask;; h = (h + 1) & mask) {
		if (!idx[h]) {
			idx[h] = pos + 1;
			return;
		}
	}
}

/* Position in ed->add of live member @m, or -1. */
static long add_find(const struct zv_edit *ed, const void *m, size_t ml)
{
	size_t mask;

	if (!ed->acap)
		return -1;
	mask = ed->acap - 1;
	for (size_t h = hv_field_hash(m, ml) & mask;; h = (h + 1) & mask) {
		uint32_t slot = ed->aidx[h];
		const struct zv_item *it;

		if (!slot)
			return -1;
		it = &ed->add[slot - 1];
		/* a deleted add (m NULL) keeps its slot: the probe goes on */
		if (it->m && it->ml == ml && !memcmp(it->m, m, ml))
			return (long)slot - 1;
	}
}

/* Position of live old member @m, or -1. */
static long old_find(const struct zv_edit *ed, const void *m, size_t ml)
{
	long i;

	if (!ed->old)
		return -1;
	i = zv_find(ed->old, m, ml);
	if (i >= 0 && ed->gone && ed->gone[i])
		return -1;
	return i;
}

static void mark_gone(struct zv_edit *ed, uint32_t i)
{
	if (!ed->gone)
		ed->gone = xcalloc(ed->nold ? ed->nold : 1, 1);
	ed->gone[i] = 1;
}

static void add_push(struct zv_edit *ed, const void *m, size_t ml, double score)
{
	if (ed->nadd == ed->cap) {
		ed->cap = ed->cap ? ed->cap * 2 : 8;
		ed->add = xrealloc(ed->add, ed->cap * sizeof(*ed->add));
	}
	ed->add[ed->nadd] = (struct zv_item){score, m, ml};
	if (2 * (ed->nadd + 1) > ed->acap) {
		size_t cap = ed->acap ? ed->acap * 2 : 16;

		while (cap < 2 * (ed->nadd + 1))
			cap *= 2;
		free(ed->aidx);
		ed->aidx = xcalloc(cap, sizeof(*ed->aidx));
		ed->acap = cap;
		for (size_t i = 0; i < ed->nadd; i++)
			aidx_put(ed->aidx, cap, &ed->add[i], (uint32_t)i);
	}
	aidx_put(ed->aidx, ed->acap, &ed->add[ed->nadd], (uint32_t)ed->nadd);
	ed->nadd++;
	if (ml > ed->maxml)
		ed->maxml = ml;
}

int zv_edit_get(struct zv_edit *ed, const void *m, size_t ml, double *score)
{
	long i = add_find(ed, m, ml);

	if (i >= 0) {
		*score = ed->add[i].score;
		return 1;
	}
	i = old_find(ed, m, ml);
	if (i >= 0) {
		*score = zv_score_at(ed->old, (uint32_t)i);
		return 1;
	}
	return 0;
}

int zv_edit_set(struct zv_edit *ed, const void *m, size_t ml, double score)
{
	long i = add_find(ed, m, ml);

	ed->finished = 0;
	if (i >= 0) {
		ed->add[i].score = score;
		return 0;
	}
	i = old_find(ed, m, ml);
	if (i >= 0) {
		struct zv_item it;

		zv_at(ed->old, (uint32_t)i, &it);
		if (it.score == score)
			return 0; /* unchanged (0 and -0 too, as Redis): it keeps its place */
		mark_gone(ed, (uint32_t)i);
		add_push(ed, it.m, it.ml, score);
		return 0;
	}
	add_push(ed, m, ml, score);
	ed->live++;
	return 1;
}

int zv_edit_del(struct zv_edit *ed, const void *m, size_t ml)
{
	long i = add_find(ed, m, ml);

	ed->finished = 0;
	if (i >= 0) {
		ed->add[i].m = NULL; /* keeps ml: the probe chain stays whole */
		ed->live--;
		return 1;
	}
	i = old_find(ed, m, ml);
	if (i >= 0) {
		mark_gone(ed, (uint32_t)i);
		ed->live--;
		return 1;
	}
	return 0;
}

void zv_edit_del_range(struct zv_edit *ed, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to && i < ed->nold; i++) {
		if (ed->gone && ed->gone[i])
			continue;
		mark_gone(ed, i);
		ed->live--;
	}
}

static int item_qcmp(const void *x, const void *y)
{
	return zv_item_cmp(x, y);
}

void zv_edit_finish(struct zv_edit *ed)
{
	size_t k = 0;
	struct zv_item it;

	for (size_t i = 0; i < ed->nadd; i++)
		if (ed->add[i].m)
			ed->add[k++] = ed->add[i];
	ed->nadd = k;
	/* the add index is stale now: no more lookups after finish */
	free(ed->aidx);
	ed->aidx = NULL;
	ed->acap = 0;
	if (ed->nadd > 1)
		qsort(ed->add, ed->nadd, sizeof(*ed->add), item_qcmp);
	ed->bytes = 0;
	for (uint32_t i = 0; i < ed->nold; i++) {
		if (ed->gone && ed->gone[i])
			continue;
		zv_at(ed->old, i, &it);
		ed->bytes += 12 + it.ml;
	}
	for (size_t i = 0; i < ed->nadd; i++)
		ed->bytes += 12 + ed->add[i].ml;
	ed->finished = 1;
}

static uint32_t idx_cap_for(size_t n)
{
	uint32_t cap = 16;

	if (n <= ZV_IDX_MIN)
		return 0;
	while (cap < 2 * n)
		cap *= 2;
	return cap;
}

size_t zv_edit_size(const struct zv_edit *ed)
{
	return ZV_HDR + 4 * ed->live + ed->bytes + 4 * (size_t)idx_cap_for(ed->live);
}

void zv_edit_write(const struct zv_edit *ed, void *dst, int enc)
{
	char *d = dst;
	uint32_t cap = idx_cap_for(ed->live), n = 0, i = 0;
	size_t off = ZV_HDR + 4 * ed->live, a = 0;
	struct zv_item it, *pick;

	d[0] = ZV_TYPE_ZSET;
	d[1] = (char)enc;
	d[2] = d[3] = 0;
	wr32(d + 4, (uint32_t)ed->live);
	for (;;) {
		while (i < ed->nold && ed->gone && ed->gone[i])
			i++;
		if (i < ed->nold)
			zv_at(ed->old, i, &it);
		if (i < ed->nold && (a >= ed->nadd || zv_item_cmp(&it, &ed->add[a]) < 0)) {
			pick = &it;
			i++;
		} else if (a < ed->nadd) {
			pick = &ed->add[a++];
		} else {
			break;
		}
		wr32(d + ZV_HDR + 4 * (size_t)n, (uint32_t)off);
		if (enc == ZV_ENC_LISTPACK && pick->score == 0) /* a listpack holds "-0" as 0 */
			memcpy(d + off, &(double){0.0}, 8);
		else
			memcpy(d + off, &pick->score, 8);
		wr32(d + off + 8, (uint32_t)pick->ml);
		memcpy(d + off + 12, pick->m, pick->ml);
		off += 12 + pick->ml;
		n++;
	}
	wr32(d + 8, (uint32_t)off);
	wr32(d + 12, cap);
	if (cap) {
		memset(d + off, 0, 4 * (size_t)cap);
		for (uint32_t p = 0; p < n; p++) {
			uint32_t mask = cap - 1;

			zv_at(d, p, &it);
			for (uint32_t h = (uint32_t)hv_field_hash(it.m, it.ml) & mask;; h = (h + 1) & mask) {
				if (!rd32(d + off + 4 * (size_t)h)) {
					wr32(d + off + 4 * (size_t)h, p + 1);
					break;
				}
			}
		}
	}
}

void zv_edit_fini(struct zv_edit *ed)
{
	free(ed->gone);
	free(ed->add);
	free(ed->aidx);
	memset(ed, 0, sizeof(*ed));
}

/* ------------------------------------------------------------- numbers */

int zv_d2string(char *buf, size_t len, double d)
{
	if (isnan(d))
		return snprintf(buf, len, "nan");
	if (isinf(d))
		return snprintf(buf, len, d < 0 ? "-inf" : "inf");
	if (d == 0)
		return snprintf(buf, len, signbit(d) ? "-0" : "0");
	if (d >= (double)(-LLONG_MAX / 2) && d <= (double)(LLONG_MAX / 2)) {
		long long ll = (long long)d;

		if ((double)ll == d)
			return snprintf(buf, len, "%lld", ll);
	}
	return snprintf(buf, len, "%.17g", d);
}

int zv_parse_score(const char *s, size_t l, double *d)
{
	char sbuf[256], *buf = sbuf, *end;
	double v;
	int rc = 0;

	if (l == 0 || s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r'))
		return -1;
	if (l >= sizeof(sbuf))
		buf = xmalloc(l + 1);
	memcpy(buf, s, l);
	buf[l] = 0;
	errno = 0;
	v = strtod(buf, &end);
	if ((size_t)(end - buf) != l || isnan(v) ||
	    (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || fpclassify(v) == FP_ZERO)))
		rc = -1;
	else
		*d = v;
	if (buf != sbuf)
		free(buf);
	return rc;
}
