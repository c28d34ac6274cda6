/*
 * lval.c - the list value: chunked immutable versions with shared chunks
 * (lval.h has the layout, the ownership rules and the concurrency contract).
 *
 * Reference counts.  lv_root.refs and lv_chunk.refs are changed only by
 * writers building a version (under the key's stripe mutex, or RENAME/COPY
 * taking a reference for a copied header) and by lv_entry_free(), which the
 * table calls after the entry's grace periods.  Two writers of different keys
 * may share a root or chunk (after COPY), so the counts are atomics: an
 * increment is relaxed (the holder already owns a reference, so the object
 * cannot go away meanwhile); a decrement is acq_rel, so the thread that frees
 * sees every earlier holder's reads of the object done (the release of each
 * decrement pairs with the acquire of the last one).
 */
#include "server/lval.h"
#include "rcu/poison.h"
#include "server/util.h"

#include <stdlib.h>
#include <string.h>

static int lv_poison;

void lv_set_poison(int on)
{
	lv_poison = on;
}

static size_t chunk_alloc(uint32_t cap)
{
	return sizeof(struct lv_chunk) + cap;
}

static size_t root_alloc(uint32_t nch)
{
	return sizeof(struct lv_root) + (size_t)nch * sizeof(struct lv_slot);
}

static void chunk_put(struct lv_chunk *c)
{
	/* acq_rel: see the file comment. */
	if (atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) != 1)
		return;
	if (lv_poison)
		rcu_poison(c, chunk_alloc(c->cap)); /* not a dead store: rcu/poison.h */
	free(c);
}

void lv_root_put(const struct lv_root *cr)
{
	struct lv_root *r = (struct lv_root *)cr;

	if (!r || atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (uint32_t i = 0; i < r->nch; i++)
		chunk_put(r->ch[i].c);
	if (lv_poison)
		rcu_poison(r, root_alloc(r->nch)); /* not a dead store: rcu/poison.h */
	free(r);
}

void lv_write_hdr(void *dst, const struct lv_root *r)
{
	unsigned char *d = dst;
	uint64_t bytes = r->bytes;

	memset(d, 0, LV_HDR);
	d[0] = LV_TYPE_LIST;
	memcpy(d + 8, &r, sizeof(r));
	memcpy(d + 16, &bytes, 8);
}

void lv_entry_dup(void *arg, const struct ht_entry *e)
{
	struct lv_root *r = (struct lv_root *)lv_root_of(ht_entry_val(e));

	(void)arg;
	atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed); /* holder owns one already */
}

void lv_entry_free(void *arg, const struct ht_entry *e)
{
	(void)arg;
	if (*(const unsigned char *)ht_entry_val(e) == LV_TYPE_LIST)
		lv_root_put(lv_root_of(ht_entry_val(e)));
}

/* ------------------------------------------------------------ reading */

static inline uint32_t rd32(const char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

void lv_chunk_at(const struct lv_chunk *c, uint32_t ei, const char **p, size_t *len)
{
	uint32_t off = 0;

	for (uint32_t i = 0; i < ei; i++)
		off += 4 + rd32(c->data + off);
	*len = rd32(c->data + off);
	*p = c->data + off + 4;
}

/* The chunk holding element @idx: binary search on the firsts. */
static uint32_t chunk_of(const struct lv_root *r, uint64_t idx)
{
	uint32_t lo = 0, hi = r->nch - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;

		if (r->ch[mid].first <= idx)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

void lv_it_at(struct lv_it *it, const struct lv_root *r, uint64_t idx)
{
	const struct lv_chunk *c;
	uint32_t ei;

	it->r = r;
	it->ci = chunk_of(r, idx);
	c = r->ch[it->ci].c;
	ei = (uint32_t)(idx - r->ch[it->ci].first);
	it->ei = 0;
	it->off = 0;
	while (it->ei < ei) {
		it->off += 4 + rd32(c->data + it->off);
		it->ei++;
	}
}

int lv_it_next(struct lv_it *it, const char **p, size_t *len)
{
	const struct lv_chunk *c;

	while (it->ci < it->r->nch && it->ei >= it->r->ch[it->ci].c->n) {
		it->ci++;
		it->ei = 0;
		it->off = 0;
	}
	if (it->ci >= it->r->nch)
		return 0;
	c = it->r->ch[it->ci].c;
	*len = rd32(c->data + it->off);
	*p = c->data + it->off + 4;
	it->off += 4 + (uint32_t)*len;
	it->ei++;
	return 1;
}

/* The offsets of chunk @ci's elements into it->offs. */
static void rit_load(struct lv_rit *it, uint32_t ci)
{
	const struct lv_chunk *c = it->r->ch[ci].c;
	uint32_t off = 0;

	it->ci = ci;
	for (uint32_t i = 0; i < c->n && i < LV_CHUNK_MAX; i++) {
		it->offs[i] = off;
		off += 4 + rd32(c->data + off);
	}
}

void lv_rit_at(struct lv_rit *it, const struct lv_root *r, uint64_t idx)
{
	uint32_t ci = chunk_of(r, idx);

	it->r = r;
	rit_load(it, ci);
	it->ei = (int32_t)(idx - r->ch[ci].first);
}

int lv_rit_prev(struct lv_rit *it, const char **p, size_t *len)
{
	const struct lv_chunk *c;

	if (it->ei < 0) {
		if (it->ci == 0)
			return 0;
		rit_load(it, it->ci - 1);
		it->ei = (int32_t)it->r->ch[it->ci].c->n - 1;
	}
	c = it->r->ch[it->ci].c;
	*len = rd32(c->data + it->offs[it->ei]);
	*p = c->data + it->offs[it->ei] + 4;
	it->ei--;
	return 1;
}

void lv_index(const struct lv_root *r, uint64_t idx, const char **p, size_t *len)
{
	uint32_t ci = chunk_of(r, idx);

	lv_chunk_at(r->ch[ci].c, (uint32_t)(idx - r->ch[ci].first), p, len);
}

/* ------------------------------------------------------------ writing */

void lv_b_init(struct lv_b *b)
{
	memset(b, 0, sizeof(*b));
}

static void b_push_slot(struct lv_b *b, struct lv_chunk *c)
{
	if (b->nch == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 8;
		b->ch = xrealloc(b->ch, b->cap * sizeof(*b->ch));
	}
	b->ch[b->nch].c = c;
	b->ch[b->nch].first = b->count;
	b->nch++;
	b->count += c->n;
	b->bytes += chunk_alloc(c->cap);
}

/* Close the open chunk: it becomes the last slot. */
static void b_close(struct lv_b *b)
{
	struct lv_chunk *c = b->open;

	if (!c)
		return;
	b->open = NULL;
	if (!c->n) {
		free(c);
		return;
	}
	if (c->cap > c->used + 64) { /* give back the slack of a short chunk */
		struct lv_chunk *s = realloc(c, chunk_alloc(c->used));

		if (s)
			c = s;
		c->cap = c->used;
	}
	atomic_init(&c->refs, 0);
	b_push_slot(b, c);
}

/* Whether the open chunk takes @n more elements of @bytes payload. */
static int open_fits(const struct lv_b *b, uint32_t n, size_t bytes)
{
	const struct lv_chunk *c = b->open;

	return c && c->n + n <= LV_CHUNK_MAX && c->used + bytes <= LV_CHUNK_BYTES;
}

void lv_b_elem(struct lv_b *b, const void *p, size_t len)
{
	struct lv_chunk *c;
	uint32_t l = (uint32_t)len;

	if (!open_fits(b, 1, 4 + len)) {
		if (b->open && !b->open->n)
			; /* an empty open chunk too small for a big element: grow it */
		else
			b_close(b);
		if (!b->open) {
			size_t cap = 4 + len > LV_CHUNK_BYTES ? 4 + len : LV_CHUNK_BYTES;

			b->open = xmalloc(chunk_alloc(cap));
			b->open->n = 0;
			b->open->used = 0;
			b->open->cap = (uint32_t)cap;
		}
		if (b->open->cap < 4 + len) {
			b->open = xrealloc(b->open, chunk_alloc(4 + len));
			b->open->cap = (uint32_t)(4 + len);
		}
	}
	c = b->open;
	memcpy(c->data + c->used, &l, 4);
	if (len)
		memcpy(c->data + c->used + 4, p, len);
	c->used += 4 + l;
	c->n++;
}

/* Copy elements [@a, @b) of chunk @c into the builder: one memcpy when the
 * run fits the open chunk (a push's copy of the end chunk), else element by
 * element. */
static void b_copy(struct lv_b *b, const struct lv_chunk *c, uint32_t a, uint32_t e)
{
	uint32_t off = 0, end, i;

	for (i = 0; i < a; i++)
		off += 4 + rd32(c->data + off);
	for (end = off, i = a; i < e; i++)
		end += 4 + rd32(c->data + end);
	if (!b->open) {
		b->open = xmalloc(chunk_alloc(LV_CHUNK_BYTES));
		b->open->n = 0;
		b->open->used = 0;
		b->open->cap = LV_CHUNK_BYTES;
	}
	if (open_fits(b, e - a, end - off) && b->open->cap - b->open->used >= end - off) {
		memcpy(b->open->data + b->open->used, c->data + off, end - off);
		b->open->used += end - off;
		b->open->n += e - a;
		return;
	}
	for (i = a; i < e; i++) {
		uint32_t l = rd32(c->data + off);

		lv_b_elem(b, c->data + off + 4, l);
		off += 4 + l;
	}
}

void lv_b_range(struct lv_b *b, const struct lv_root *r, uint64_t from, uint64_t to,
		int reopen_last)
{
	uint32_t ci;

	if (!r || from >= to)
		return;
	for (ci = chunk_of(r, from); ci < r->nch && r->ch[ci].first < to; ci++) {
		struct lv_chunk *c = r->ch[ci].c;
		uint64_t cf = r->ch[ci].first;
		uint32_t a = from > cf ? (uint32_t)(from - cf) : 0;
		uint32_t e = to < cf + c->n ? (uint32_t)(to - cf) : c->n;
		int last = cf + c->n >= to;

		if (a == 0 && e == c->n && !open_fits(b, c->n, c->used) &&
		    !(last && reopen_last && c->n < LV_CHUNK_MAX && c->used < LV_CHUNK_BYTES)) {
			b_close(b);
			b_push_slot(b, c); /* shared: lv_b_finish() takes its reference */
			continue;
		}
		b_copy(b, c, a, e);
	}
}

const struct lv_root *lv_b_finish(struct lv_b *b)
{
	struct lv_root *r;

	b_close(b);
	if (!b->count) {
		free(b->ch);
		lv_b_init(b);
		return NULL;
	}
	r = xmalloc(root_alloc(b->nch));
	atomic_init(&r->refs, 1);
	r->count = b->count;
	r->nch = b->nch;
	r->pad = 0;
	r->bytes = b->bytes + root_alloc(b->nch);
	for (uint32_t i = 0; i < b->nch; i++) {
		r->ch[i] = b->ch[i];
		/* Relaxed: a shared chunk is held by the old root, which the
		 * writer's entry keeps alive; a new one is not yet published. */
		atomic_fetch_add_explicit(&r->ch[i].c->refs, 1, memory_order_relaxed);
	}
	free(b->ch);
	lv_b_init(b);
	return r;
}

void lv_b_abort(struct lv_b *b)
{
	for (uint32_t i = 0; i < b->nch; i++)
		if (!atomic_load_explicit(&b->ch[i].c->refs, memory_order_relaxed))
			free(b->ch[i].c); /* new, never shared */
	free(b->open);
	free(b->ch);
	lv_b_init(b);
}

int lv_validate(const struct lv_root *r)
{
	uint64_t first = 0, bytes = root_alloc(r->nch);

	if (!r->count || !r->nch)
		return -1;
	for (uint32_t i = 0; i < r->nch; i++) {
		const struct lv_chunk *c = r->ch[i].c;
		uint32_t off = 0;

		if (r->ch[i].first != first || !c->n || c->used > c->cap ||
		    atomic_load_explicit(&c->refs, memory_order_relaxed) < 1)
			return -1;
		for (uint32_t j = 0; j < c->n; j++) {
			if (off + 4 > c->used)
				return -1;
			off += 4 + rd32(c->data + off);
		}
		if (off != c->used)
			return -1;
		first += c->n;
		bytes += chunk_alloc(c->cap);
	}
	return first == r->count && bytes == r->bytes ? 0 : -1;
}
