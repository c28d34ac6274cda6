/*
 * sval.c - the immutable set value encoding (sval.h): parsing for readers
 * (no lock, no allocation) and the copy-modify-write builder writers use
 * inside ht_rmw() and ht_txn().  O(n) per write by design for this
 * increment, as for hashes (docs/types.md says what replaces it).
 */
#include "server/sval.h"
#include "resp/resp.h"
#include "server/hval.h"
#include "server/util.h"

#include <stdlib.h>
#include <string.h>

#define rd32 hv_rd32
#define wr32 hv_wr32

static inline int64_t rd64(const void *p)
{
	int64_t x;

	memcpy(&x, p, 8);
	return x;
}

uint32_t sv_count(const void *v)
{
	return rd32((const char *)v + 4);
}

int sv_enc(const void *v)
{
	return ((const unsigned char *)v)[1];
}

int sv_is_int(const void *s, size_t l, int64_t *iv)
{
	long long x;

	if (!resp_str2ll(s, l, &x))
		return 0;
	*iv = (int64_t)x;
	return 1;
}

static void int_mem(int64_t x, struct sv_mem *m)
{
	m->l = resp_ll2str(m->buf, (long long)x);
	m->p = m->buf;
}

int sv_next(const void *v, size_t *off, struct sv_mem *m)
{
	const char *s = v;
	size_t end = rd32(s + 8);

	if (*off == 0)
		*off = SV_HDR;
	if (*off >= end)
		return 0;
	if (sv_enc(v) == SV_ENC_INTSET) {
		int_mem(rd64(s + *off), m);
		*off += 8;
		return 1;
	}
	m->l = rd32(s + *off);
	m->p = s + *off + 4;
	*off += 4 + m->l;
	return 1;
}

int sv_has(const void *v, const void *p, size_t l)
{
	const char *s = v;
	uint32_t n = sv_count(v);

	if (sv_enc(v) == SV_ENC_INTSET) {
		int64_t x;
		uint32_t lo = 0, hi = n;

		if (!sv_is_int(p, l, &x))
			return 0;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			int64_t y = rd64(s + SV_HDR + 8 * (size_t)mid);

			if (y == x)
				return 1;
			if (y < x)
				lo = mid + 1;
			else
				hi = mid;
		}
		return 0;
	}
	{
		uint32_t cap = rd32(s + 12), mask = cap - 1;
		const char *idx = s + rd32(s + 8);

		for (uint32_t i = (uint32_t)hv_field_hash(p, l) & mask;; i = (i + 1) & mask) {
			uint32_t slot = rd32(idx + 4 * (size_t)i);

			if (!slot)
				return 0;
			if (rd32(s + slot - 1) == l && (l == 0 || memcmp(s + slot - 1 + 4, p, l) == 0))
				return 1;
		}
	}
}

void sv_random(const void *v, uint64_t (*rnd)(void), struct sv_mem *m)
{
	const char *s = v;

	if (sv_enc(v) == SV_ENC_INTSET) {
		int_mem(rd64(s + SV_HDR + 8 * (size_t)(rnd() % sv_count(v))), m);
		return;
	}
	{
		/* every member has one slot and at least a quarter of the slots
		 * are full: uniform, O(1) expected */
		uint32_t cap = rd32(s + 12);
		const char *idx = s + rd32(s + 8);

		for (;;) {
			uint32_t slot = rd32(idx + 4 * (size_t)(rnd() & (cap - 1)));

			if (slot) {
				m->l = rd32(s + slot - 1);
				m->p = s + slot - 1 + 4;
				return;
			}
		}
	}
}

/* ------------------------------------------------------------- writing */

static int same(const struct sv_m *m, const void *s, size_t l)
{
	return m->l == l && (l == 0 || memcmp(m->p, s, l) == 0);
}

static void idx_put(uint32_t *idx, size_t icap, const struct sv_m *m, size_t i)
{
	size_t j = (size_t)hv_field_hash(m->p, m->l) & (icap - 1);

	while (idx[j])
		j = (j + 1) & (icap - 1);
	idx[j] = (uint32_t)i + 1;
}

/* Room for one more entry in ms and in the index (kept under half full). */
static void ed_grow(struct sv_edit *ed)
{
	if (ed->n == ed->cap) {
		ed->cap = ed->cap ? ed->cap * 2 : 8;
		ed->ms = xrealloc(ed->ms, ed->cap * sizeof(*ed->ms));
	}
	if ((ed->n + 1) * 2 >= ed->icap) {
		size_t cap = ed->icap ? ed->icap * 2 : 16;

		while ((ed->n + 1) * 2 >= cap)
			cap *= 2;
		free(ed->idx);
		ed->idx = xcalloc(cap, sizeof(*ed->idx));
		ed->icap = cap;
		for (size_t i = 0; i < ed->n; i++)
			idx_put(ed->idx, cap, &ed->ms[i], i);
	}
}

static void ed_append(struct sv_edit *ed, const char *p, size_t l, int isint, int64_t iv)
{
	ed_grow(ed);
	ed->ms[ed->n] = (struct sv_m){p, (uint32_t)l, (uint8_t)isint, 0, iv};
	idx_put(ed->idx, ed->icap, &ed->ms[ed->n], ed->n);
	ed->n++;
	ed->live++;
	ed->bytes += 4 + l;
	ed->nonint += !isint;
}

void sv_edit_init(struct sv_edit *ed, const void *old)
{
	struct sv_mem m;
	uint32_t n;

	memset(ed, 0, sizeof(*ed));
	if (!old)
		return;
	n = sv_count(old);
	ed->cap = (size_t)n + 4;
	ed->ms = xmalloc(ed->cap * sizeof(*ed->ms));
	ed->icap = 16;
	while (ed->icap <= ((size_t)n + 4) * 2)
		ed->icap *= 2;
	ed->idx = xcalloc(ed->icap, sizeof(*ed->idx));
	if (sv_enc(old) == SV_ENC_INTSET) {
		char *a = ed->arena = xmalloc((size_t)n * 21 + 1);
		const char *s = old;

		for (uint32_t i = 0; i < n; i++) {
			int64_t x = rd64(s + SV_HDR + 8 * (size_t)i);
			size_t l = resp_ll2str(a, (long long)x);

			ed_append(ed, a, l, 1, x);
			a += l;
		}
		return;
	}
	for (size_t off = 0; sv_next(old, &off, &m);) {
		int64_t x;
		int isint = sv_is_int(m.p, m.l, &x);

		ed_append(ed, m.p, m.l, isint, isint ? x : 0);
	}
}

static long ed_find(const struct sv_edit *ed, const void *s, size_t l)
{
	if (!ed->icap)
		return -1;
	for (size_t j = (size_t)hv_field_hash(s, l) & (ed->icap - 1); ed->idx[j];
	     j = (j + 1) & (ed->icap - 1))
		if (same(&ed->ms[ed->idx[j] - 1], s, l))
			return (long)ed->idx[j] - 1;
	return -1;
}

int sv_edit_has(const struct sv_edit *ed, const void *s, size_t l)
{
	long i = ed_find(ed, s, l);

	return i >= 0 && !ed->ms[i].dead;
}

int sv_edit_add(struct sv_edit *ed, const void *s, size_t l)
{
	long i = ed_find(ed, s, l);
	int64_t x = 0;
	int isint;

	if (i >= 0 && !ed->ms[i].dead)
		return 0;
	ed->added = 1;
	if (i >= 0) { /* removed in this edit, back again: same place */
		struct sv_m *m = &ed->ms[i];

		m->dead = 0;
		ed->live++;
		ed->bytes += 4 + m->l;
		ed->nonint += !m->isint;
		return 1;
	}
	isint = sv_is_int(s, l, &x);
	ed_append(ed, s, l, isint, x);
	return 1;
}

int sv_edit_rem(struct sv_edit *ed, const void *s, size_t l)
{
	long i = ed_find(ed, s, l);
	struct sv_m *m;

	if (i < 0 || ed->ms[i].dead)
		return 0;
	m = &ed->ms[i];
	m->dead = 1;
	ed->live--;
	ed->bytes -= 4 + m->l;
	ed->nonint -= !m->isint;
	return 1;
}

int sv_edit_enc(const struct sv_edit *ed, int old_enc, long long max_intset)
{
	if (old_enc == SV_ENC_HASHTABLE || ed->nonint)
		return SV_ENC_HASHTABLE;
	if (ed->added && (long long)ed->live > max_intset)
		return SV_ENC_HASHTABLE;
	return SV_ENC_INTSET;
}

static uint32_t idx_cap_of(size_t live)
{
	uint32_t cap = 4;

	while (cap < live * 2)
		cap *= 2;
	return cap;
}

size_t sv_edit_size(const struct sv_edit *ed, int enc)
{
	if (enc == SV_ENC_INTSET)
		return SV_HDR + 8 * ed->live;
	return SV_HDR + ed->bytes + 4 * (size_t)idx_cap_of(ed->live);
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

void sv_edit_write(const struct sv_edit *ed, void *dst, int enc)
{
	char *d = dst;
	size_t off = SV_HDR;

	d[0] = SV_TYPE_SET;
	d[1] = (char)enc;
	d[2] = d[3] = 0;
	wr32(d + 4, (uint32_t)ed->live);
	if (enc == SV_ENC_INTSET) {
		int64_t *v = xmalloc((ed->live ? ed->live : 1) * sizeof(*v));
		size_t k = 0;

		for (size_t i = 0; i < ed->n; i++)
			if (!ed->ms[i].dead)
				v[k++] = ed->ms[i].iv;
		qsort(v, k, sizeof(*v), cmp64);
		memcpy(d + SV_HDR, v, 8 * k);
		free(v);
		wr32(d + 8, (uint32_t)(SV_HDR + 8 * k));
		wr32(d + 12, 0);
		return;
	}
	{
		uint32_t cap = idx_cap_of(ed->live), mask = cap - 1;
		char *idx = d + SV_HDR + ed->bytes;

		wr32(d + 8, (uint32_t)(SV_HDR + ed->bytes));
		wr32(d + 12, cap);
		memset(idx, 0, 4 * (size_t)cap);
		for (size_t i = 0; i < ed->n; i++) {
			const struct sv_m *m = &ed->ms[i];
			uint32_t j;

			if (m->dead)
				continue;
			wr32(d + off, m->l);
			if (m->l)
				memcpy(d + off + 4, m->p, m->l);
			for (j = (uint32_t)hv_field_hash(m->p, m->l) & mask; rd32(idx + 4 * (size_t)j);
			     j = (j + 1) & mask)
				;
			wr32(idx + 4 * (size_t)j, (uint32_t)off + 1);
			off += 4 + m->l;
		}
	}
}

void sv_edit_fini(struct sv_edit *ed)
{
	free(ed->ms);
	free(ed->idx);
	free(ed->arena);
	memset(ed, 0, sizeof(*ed));
}
