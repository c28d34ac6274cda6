/*
 * hval.c - the immutable hash value encoding (hval.h): parsing for readers
 * (no lock, no allocation) and the copy-modify-write builder writers use
 * inside ht_rmw().  O(n) per write by design for this increment
 * (docs/types.md names what replaces it for big hashes).
 */
#include "server/hval.h"
#include "server/util.h"

#include <stdlib.h>
#include <string.h>

#define rd32 hv_rd32
#define wr32 hv_wr32

uint32_t hv_count(const void *v)
{
	return rd32((const char *)v + 4);
}

int hv_enc(const void *v)
{
	return ((const unsigned char *)v)[1];
}

static inline void pair_at(const char *v, size_t off, struct hv_pair *p)
{
	p->fl = rd32(v + off);
	p->vl = rd32(v + off + 4);
	p->f = v + off + 8;
	p->v = p->f + p->fl;
}

int hv_next(const void *v, size_t *off, struct hv_pair *p)
{
	const char *s = v;
	size_t end = rd32(s + 8);

	if (*off == 0)
		*off = HV_HDR;
	if (*off >= end)
		return 0;
	pair_at(s, *off, p);
	*off += 8 + p->fl + p->vl;
	return 1;
}

void hv_at(const void *v, uint32_t i, struct hv_pair *p)
{
	size_t off = 0;

	for (uint32_t k = 0; k <= i; k++)
		hv_next(v, &off, p);
}

uint64_t hv_field_hash(const void *f, size_t fl)
{
	const unsigned char *s = f;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < fl; i++) {
		h ^= s[i];
		h *= 1099511628211ULL;
	}
	return h ^ (h >> 29);
}

int hv_find(const void *v, const void *f, size_t fl, struct hv_pair *p, size_t *off)
{
	const char *s = v;
	uint32_t cap = rd32(s + 12);

	if (cap) {
		const char *idx = s + rd32(s + 8);
		uint32_t mask = cap - 1, i = (uint32_t)hv_field_hash(f, fl) & mask;

		for (;; i = (i + 1) & mask) {
			uint32_t slot = rd32(idx + 4 * (size_t)i);

			if (!slot)
				return 0;
			pair_at(s, slot - 1, p);
			if (p->fl == fl && (fl == 0 || memcmp(p->f, f, fl) == 0)) {
				if (off)
					*off = slot - 1;
				return 1;
			}
		}
	}
	for (size_t o = 0, at;;) {
		at = o ? o : HV_HDR;
		if (!hv_next(v, &o, p))
			return 0;
		if (p->fl == fl && (fl == 0 || memcmp(p->f, f, fl) == 0)) {
			if (off)
				*off = at;
			return 1;
		}
	}
}

static int scan_cmp(const void *x, const void *y)
{
	const struct hv_scan_item *a = x, *b = y;

	return a->h < b->h ? -1 : a->h > b->h;
}

size_t hv_scan_page(struct hv_scan_item *it, size_t n, long long count, uint64_t *next)
{
	size_t k = (size_t)count;

	*next = 0;
	qsort(it, n, sizeof(*it), scan_cmp);
	if ((unsigned long long)count >= n)
		return n;
	while (k < n && it[k].h == it[k - 1].h) /* keep a hash's elements together */
		k++;
	if (k < n)
		*next = it[k].h; /* never 0: it[k].h > it[0].h >= 0 */
	return k;
}

/* ------------------------------------------------------------- writing */

static void ed_grow(struct hv_edit *ed)
{
	if (ed->n < ed->cap)
		return;
	ed->cap = ed->cap ? ed->cap * 2 : 8;
	ed->ps = xrealloc(ed->ps, ed->cap * sizeof(*ed->ps));
}

void hv_edit_init(struct hv_edit *ed, const void *old)
{
	memset(ed, 0, sizeof(*ed));
	ed->old = old;
	if (!old)
		return;
	ed->cap = hv_count(old) + 4;
	ed->ps = xmalloc(ed->cap * sizeof(*ed->ps));
	ed->offs = xmalloc((hv_count(old) + 1) * sizeof(*ed->offs));
	for (size_t off = 0, at = HV_HDR; hv_next(old, &off, &ed->ps[ed->n]); at = off) {
		ed->offs[ed->n] = at;
		ed->bytes += 8 + ed->ps[ed->n].fl + ed->ps[ed->n].vl;
		ed->n++;
	}
	ed->nold = ed->live = ed->n;
}

static int same(const struct hv_pair *p, const void *f, size_t fl)
{
	return p->f && p->fl == fl && (fl == 0 || memcmp(p->f, f, fl) == 0);
}

long hv_edit_find(const struct hv_edit *ed, const void *f, size_t fl)
{
	struct hv_pair p;
	size_t off;

	if (ed->old && hv_find(ed->old, f, fl, &p, &off)) {
		size_t lo = 0, hi = ed->nold;

		while (lo < hi) { /* offs[] ascend: binary search */
			size_t mid = (lo + hi) / 2;

			if (ed->offs[mid] < off)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < ed->nold && ed->offs[lo] == off && ed->ps[lo].f)
			return (long)lo;
	}
	if (ed->aidx) {
		size_t mask = ed->acap - 1, j = (size_t)hv_field_hash(f, fl) & mask;

		for (; ed->aidx[j]; j = (j + 1) & mask)
			if (same(&ed->ps[ed->aidx[j] - 1], f, fl))
				return (long)ed->aidx[j] - 1;
		return -1;
	}
	for (size_t i = ed->nold; i < ed->n; i++)
		if (same(&ed->ps[i], f, fl))
			return (long)i;
	return -1;
}

/* Put new pair @i into the index of new pairs (built, or doubled, when it
 * would pass half full; deleted pairs keep their slots). */
static void aidx_add(struct hv_edit *ed, size_t i)
{
	size_t added = ed->n - ed->nold, mask, j;

	if (added <= HV_EDIT_SCAN)
		return;
	if (!ed->aidx || added * 2 > ed->acap) {
		size_t cap = ed->acap ? ed->acap * 2 : 64;

		while (cap < added * 2)
			cap *= 2;
		free(ed->aidx);
		ed->aidx = xcalloc(cap, sizeof(*ed->aidx));
		ed->acap = cap;
		for (size_t k = ed->nold; k < ed->n; k++) {
			const struct hv_pair *p = &ed->ps[k];

			for (j = (size_t)hv_field_hash(p->f, p->fl) & (cap - 1); ed->aidx[j];
			     j = (j + 1) & (cap - 1))
				;
			ed->aidx[j] = (uint32_t)k + 1;
		}
		return;
	}
	mask = ed->acap - 1;
	for (j = (size_t)hv_field_hash(ed->ps[i].f, ed->ps[i].fl) & mask; ed->aidx[j];
	     j = (j + 1) & mask)
		;
	ed->aidx[j] = (uint32_t)i + 1;
}

int hv_edit_set(struct hv_edit *ed, const void *f, size_t fl, const void *v, size_t vl)
{
	long i = hv_edit_find(ed, f, fl);

	if (i >= 0) {
		ed->bytes = ed->bytes - ed->ps[i].vl + vl;
		ed->ps[i].v = v;
		ed->ps[i].vl = vl;
		return 0;
	}
	ed_grow(ed);
	ed->ps[ed->n++] = (struct hv_pair){f, fl, v, vl};
	aidx_add(ed, ed->n - 1);
	ed->live++;
	ed->bytes += 8 + fl + vl;
	return 1;
}

int hv_edit_del(struct hv_edit *ed, const void *f, size_t fl)
{
	long i = hv_edit_find(ed, f, fl);

	if (i < 0)
		return 0;
	ed->bytes -= 8 + ed->ps[i].fl + ed->ps[i].vl;
	ed->ps[i].f = NULL;
	ed->live--;
	return 1;
}

static uint32_t idx_cap_of(size_t live, int enc)
{
	uint32_t cap = 8;

	if (enc != HV_ENC_HASHTABLE)
		return 0;
	while (cap < live * 2)
		cap *= 2;
	return cap;
}

size_t hv_edit_size(const struct hv_edit *ed, int enc)
{
	return HV_HDR + ed->bytes + 4 * (size_t)idx_cap_of(ed->live, enc);
}

void hv_edit_write(const struct hv_edit *ed, void *dst, int enc)
{
	char *d = dst, *idx;
	size_t off = HV_HDR;
	uint32_t cap = idx_cap_of(ed->live, enc);

	d[0] = HV_TYPE_HASH;
	d[1] = (char)enc;
	d[2] = d[3] = 0;
	wr32(d + 4, (uint32_t)ed->live);
	wr32(d + 8, (uint32_t)(HV_HDR + ed->bytes));
	wr32(d + 12, cap);
	idx = d + HV_HDR + ed->bytes;
	if (cap)
		memset(idx, 0, 4 * (size_t)cap);
	for (size_t i = 0; i < ed->n; i++) {
		const struct hv_pair *p = &ed->ps[i];

		if (!p->f)
			continue;
		wr32(d + off, (uint32_t)p->fl);
		wr32(d + off + 4, (uint32_t)p->vl);
		if (p->fl)
			memcpy(d + off + 8, p->f, p->fl);
		if (p->vl)
			memcpy(d + off + 8 + p->fl, p->v, p->vl);
		if (cap) {
			uint32_t mask = cap - 1, j = (uint32_t)hv_field_hash(p->f, p->fl) & mask;

			while (rd32(idx + 4 * (size_t)j))
				j = (j + 1) & mask;
			wr32(idx + 4 * (size_t)j, (uint32_t)off + 1);
		}
		off += 8 + p->fl + p->vl;
	}
}

int hv_edit_load(struct hv_edit *ed, const struct hv_pair *ps, size_t n)
{
	size_t cap = 8;
	uint32_t *idx;

	while (cap < n * 2)
		cap *= 2;
	idx = calloc(cap, sizeof(*idx));
	if (!idx)
		return -1;
	hv_edit_init(ed, NULL);
	ed->ps = xmalloc((n ? n : 1) * sizeof(*ed->ps));
	ed->cap = n ? n : 1;
	for (size_t i = 0; i < n; i++) {
		size_t j = (size_t)hv_field_hash(ps[i].f, ps[i].fl) & (cap - 1);

		for (; idx[j]; j = (j + 1) & (cap - 1)) {
			if (same(&ps[idx[j] - 1], ps[i].f, ps[i].fl)) {
				free(idx);
				hv_edit_fini(ed);
				return -1;
			}
		}
		idx[j] = (uint32_t)i + 1;
		ed->ps[ed->n++] = ps[i];
		ed->bytes += 8 + ps[i].fl + ps[i].vl;
	}
	ed->live = n;
	free(idx);
	return 0;
}

void hv_edit_fini(struct hv_edit *ed)
{
	free(ed->ps);
	free(ed->offs);
	free(ed->aidx);
	ed->ps = NULL;
	ed->offs = NULL;
	ed->aidx = NULL;
}
