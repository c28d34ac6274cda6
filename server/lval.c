/*
 * lval.c - the list value: chunked immutable versions with shared chunks
 * (lval.h has the layout, the ownership rules and the concurrency contract).
 *
 * Reference counts.  lv_root.refs, lv_seg.refs and lv_chunk.refs are changed
 * only by
 * writers building a version (under the key's stripe mutex, or RENAME/COPY
 * taking a reference for a copied header) and by lv_entry_free(), which the
 * table calls after the entry's grace periods.  Two writers of different keys
 * may share a root, segment or chunk (after COPY), so the counts are atomics: an
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

/* A segment or root is followed by one byte per slot, "handed over": set
 * when the successor version took over that slot's reference (see "Handing
 * over" below).  Only writers and the free path touch those bytes. */
static size_t seg_alloc(uint32_t nch)
{
	return sizeof(struct lv_seg) + (size_t)nch * (sizeof(struct lv_slot) + 1);
}

static size_t root_alloc(uint32_t nseg)
{
	return sizeof(struct lv_root) + (size_t)nseg * (sizeof(struct lv_sslot) + 1);
}

static inline uint8_t *seg_gone(const struct lv_seg *s)
{
	return (uint8_t *)&((struct lv_seg *)s)->ch[s->nch];
}

static inline uint8_t *root_gone(const struct lv_root *r)
{
	return (uint8_t *)&((struct lv_root *)r)->sg[r->nseg];
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

static void seg_put(struct lv_seg *s)
{
	if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (uint32_t i = 0; i < s->nch; i++)
		if (!seg_gone(s)[i])
			chunk_put(s->ch[i].c);
	if (lv_poison)
		rcu_poison(s, seg_alloc(s->nch)); /* not a dead store: rcu/poison.h */
	free(s);
}

void lv_root_put(const struct lv_root *cr)
{
	struct lv_root *r = (struct lv_root *)cr;

	if (!r || atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (uint32_t i = 0; i < r->nseg; i++)
		if (!root_gone(r)[i])
			seg_put(r->sg[i].s);
	if (lv_poison)
		rcu_poison(r, root_alloc(r->nseg)); /* not a dead store: rcu/poison.h */
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

/* The segment holding element @idx: binary search on the firsts. */
static uint32_t seg_of(const struct lv_root *r, uint64_t idx)
{
	uint32_t lo = 0, hi = r->nseg - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;

		if (r->sg[mid].first <= idx)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* The chunk of @s holding its element @idx. */
static uint32_t chunk_of(const struct lv_seg *s, uint64_t idx)
{
	uint32_t lo = 0, hi = s->nch - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;

		if (s->ch[mid].first <= idx)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Segment, chunk and element in the chunk of list element @idx. */
static void locate(const struct lv_root *r, uint64_t idx, uint32_t *si, uint32_t *ci, uint32_t *ei)
{
	const struct lv_seg *s;

	*si = seg_of(r, idx);
	s = r->sg[*si].s;
	idx -= r->sg[*si].first;
	*ci = chunk_of(s, idx);
	*ei = (uint32_t)(idx - s->ch[*ci].first);
}

static inline const struct lv_chunk *chunk_at(const struct lv_root *r, uint32_t si, uint32_t ci)
{
	return r->sg[si].s->ch[ci].c;
}

void lv_it_at(struct lv_it *it, const struct lv_root *r, uint64_t idx)
{
	const struct lv_chunk *c;
	uint32_t ei;

	it->r = r;
	locate(r, idx, &it->si, &it->ci, &ei);
	c = chunk_at(r, it->si, it->ci);
	it->ei = 0;
	it->off = 0;
	while (it->ei < ei) {
		it->off += 4 + rd32(c->data + it->off);
		it->ei++;
	}
}

int lv_it_next(struct lv_it *it, const char **p, size_t *len)
{
	const struct lv_root *r = it->r;
	const struct lv_chunk *c;

	for (;;) {
		if (it->si >= r->nseg)
			return 0;
		if (it->ci >= r->sg[it->si].s->nch) {
			it->si++;
			it->ci = 0;
			continue;
		}
		if (it->ei < chunk_at(r, it->si, it->ci)->n)
			break;
		it->ci++;
		it->ei = 0;
		it->off = 0;
	}
	c = chunk_at(r, it->si, it->ci);
	*len = rd32(c->data + it->off);
	*p = c->data + it->off + 4;
	it->off += 4 + (uint32_t)*len;
	it->ei++;
	return 1;
}

/* The offsets of chunk (@si, @ci)'s elements into it->offs. */
static void rit_load(struct lv_rit *it, uint32_t si, uint32_t ci)
{
	const struct lv_chunk *c = chunk_at(it->r, si, ci);
	uint32_t off = 0;

	it->si = si;
	it->ci = ci;
	for (uint32_t i = 0; i < c->n && i < LV_CHUNK_MAX; i++) {
		it->offs[i] = off;
		off += 4 + rd32(c->data + off);
	}
}

void lv_rit_at(struct lv_rit *it, const struct lv_root *r, uint64_t idx)
{
	uint32_t si, ci, ei;

	it->r = r;
	locate(r, idx, &si, &ci, &ei);
	rit_load(it, si, ci);
	it->ei = (int32_t)ei;
}

int lv_rit_prev(struct lv_rit *it, const char **p, size_t *len)
{
	const struct lv_chunk *c;

	if (it->ei < 0) {
		if (it->ci > 0)
			rit_load(it, it->si, it->ci - 1);
		else if (it->si > 0)
			rit_load(it, it->si - 1, it->r->sg[it->si - 1].s->nch - 1);
		else
			return 0;
		it->ei = (int32_t)chunk_at(it->r, it->si, it->ci)->n - 1;
	}
	c = chunk_at(it->r, it->si, it->ci);
	*len = rd32(c->data + it->offs[it->ei]);
	*p = c->data + it->offs[it->ei] + 4;
	it->ei--;
	return 1;
}

void lv_index(const struct lv_root *r, uint64_t idx, const char **p, size_t *len)
{
	uint32_t si, ci, ei;

	locate(r, idx, &si, &ci, &ei);
	lv_chunk_at(chunk_at(r, si, ci), ei, p, len);
}

/* ------------------------------------------------------------ writing */

/*
 * The builder appends at its end only.  Closed chunks go into the open
 * segment (oseg); a full open segment is closed into sg[].  A whole segment
 * of the source is shared (one reference in lv_b_finish()) when nothing
 * before it is left open; b_add_seg() merges neighbours that fit one
 * segment (else pushes at the head would leave a segment per chunk).  New chunks and segments carry refs 0 until lv_b_finish(): shared
 * ones are held by the old root, which outlives the build, so refs 0 tells
 * them apart.
 */

void lv_b_init(struct lv_b *b)
{
	memset(b, 0, sizeof(*b));
}

static void b_push_sslot(struct lv_b *b, struct lv_seg *s)
{
	if (b->nseg == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 8;
		b->sg = xrealloc(b->sg, b->cap * sizeof(*b->sg));
	}
	b->sg[b->nseg].s = s;
	b->sg[b->nseg].first = b->count;
	b->nseg++;
}

/* Append segment @s (new, or shared with the old root) to sg[]; b->count
 * and b->bytes do not hold it yet.  When it and the last segment fit one,
 * both are replaced by a new segment with the two's chunk slots: so two
 * neighbours always hold more than LV_SEG_MAX chunks (the merge rule,
 * lval.h), whatever a write cut out or shared. */
static void b_add_seg(struct lv_b *b, struct lv_seg *s)
{
	struct lv_seg *p = b->nseg ? b->sg[b->nseg - 1].s : NULL, *m;

	if (!p || p->nch + s->nch > LV_SEG_MAX) {
		b_push_sslot(b, s);
		b->count += s->count;
		b->bytes += s->bytes;
		return;
	}
	m = xmalloc(seg_alloc(p->nch + s->nch));
	atomic_init(&m->refs, 0);
	m->nch = p->nch + s->nch;
	m->count = p->count + s->count;
	m->bytes = seg_alloc(m->nch) + (p->bytes - seg_alloc(p->nch)) + (s->bytes - seg_alloc(s->nch));
	memcpy(m->ch, p->ch, p->nch * sizeof(*m->ch));
	for (uint32_t j = 0; j < s->nch; j++) {
		m->ch[p->nch + j].c = s->ch[j].c;
		m->ch[p->nch + j].first = p->count + s->ch[j].first;
	}
	memset(seg_gone(m), 0, m->nch);
	b->bytes += m->bytes - p->bytes;
	b->count += s->count;
	b->sg[b->nseg - 1].s = m;
	/* a new segment's chunks are m's now; a shared one stays the old root's */
	if (!atomic_load_explicit(&p->refs, memory_order_relaxed))
		free(p);
	if (!atomic_load_explicit(&s->refs, memory_order_relaxed))
		free(s);
}

/* Close the open segment: it goes to sg[]. */
static void b_close_seg(struct lv_b *b)
{
	struct lv_seg *s = b->oseg, *t;

	if (!s)
		return;
	b->oseg = NULL;
	if (!s->nch) {
		free(s);
		return;
	}
	b->count -= s->count; /* b_add_seg() adds it back, with its own bytes */
	b->bytes -= s->bytes;
	t = realloc(s, seg_alloc(s->nch)); /* give back the unused slots */
	if (t)
		s = t;
	memset(seg_gone(s), 0, s->nch);
	s->bytes += seg_alloc(s->nch);
	b_add_seg(b, s);
}

/* Append chunk @c (new or shared) to the open segment. */
static void b_push_slot(struct lv_b *b, struct lv_chunk *c)
{
	struct lv_seg *s;

	if (b->oseg && b->oseg->nch == LV_SEG_MAX)
		b_close_seg(b);
	if (!b->oseg) {
		s = xmalloc(seg_alloc(LV_SEG_MAX));
		atomic_init(&s->refs, 0);
		s->nch = 0;
		s->count = 0;
		s->bytes = 0;
		b->oseg = s;
	}
	s = b->oseg;
	s->ch[s->nch].c = c;
	s->ch[s->nch].first = s->count;
	s->nch++;
	s->count += c->n;
	s->bytes += chunk_alloc(c->cap);
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
	if (e == c->n) /* to the chunk's end (pushes, LPOP): no walk */
		end = c->used;
	else
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

/* Whether chunk @c has room: a push at that end may fill a copy of it. */
static int has_room(const struct lv_chunk *c)
{
	return c->n < LV_CHUNK_MAX && c->used < LV_CHUNK_BYTES;
}

/* Whether the builder takes chunk @c whole (shared) rather than copying it:
 * it does not fit what the open chunk holds, and is not a last chunk with
 * room that @reopen asks to fill. */
static int takes_whole(const struct lv_b *b, const struct lv_chunk *c, int reopen)
{
	return !open_fits(b, c->n, c->used) && !(reopen && has_room(c));
}

/* Elements [@from, @to) of segment @s (0 <= from < to <= s->count). */
static void b_seg_range(struct lv_b *b, const struct lv_seg *s, uint64_t from, uint64_t to,
			int reopen_last)
{
	for (uint32_t ci = chunk_of(s, from); ci < s->nch && s->ch[ci].first < to; ci++) {
		struct lv_chunk *c = s->ch[ci].c;
		uint64_t cf = s->ch[ci].first;
		uint32_t a = from > cf ? (uint32_t)(from - cf) : 0;
		uint32_t e = to < cf + c->n ? (uint32_t)(to - cf) : c->n;
		int last = cf + c->n >= to;

		if (a == 0 && e == c->n && takes_whole(b, c, last && reopen_last)) {
			b_close(b);
			b_push_slot(b, c); /* shared: lv_b_finish() takes its reference */
			continue;
		}
		b_copy(b, c, a, e);
	}
}

void lv_b_range(struct lv_b *b, const struct lv_root *r, uint64_t from, uint64_t to,
		int reopen_last)
{
	if (!r || from >= to)
		return;
	for (uint32_t si = seg_of(r, from); si < r->nseg && r->sg[si].first < to; si++) {
		struct lv_seg *s = r->sg[si].s;
		uint64_t sf = r->sg[si].first;
		uint64_t a = from > sf ? from - sf : 0;
		uint64_t e = to < sf + s->count ? to - sf : s->count;
		int last = sf + s->count >= to;

		if (a == 0 && e == s->count && takes_whole(b, s->ch[0].c, 0) &&
		    !(last && reopen_last && has_room(s->ch[s->nch - 1].c))) {
			b_close(b);
			b_close_seg(b);
			b_add_seg(b, s); /* shared: lv_b_finish() takes its reference */
			continue;
		}
		b_seg_range(b, s, a, e, last && reopen_last);
	}
}

/*
 * Taking references.  A new segment (refs 0) takes one on each chunk it
 * holds, the new root one on each segment; a new chunk starts at one.
 *
 * Handing over (lv_b_finish_from()).  A version's successor usually shares
 * almost all of it, and the old version is freed after the grace periods
 * anyway: rather than counting each shared segment and chunk up now and down
 * again when the old version goes, the old version hands its references
 * over.  Its root marks the segment slots the new root shares as handed over
 * (root_gone()), and a segment of the old version that the new one does not
 * keep, and that nobody else holds (refs 1), marks the chunks the new
 * version's segments took (seg_gone()); the free path skips marked slots.  A
 * push then touches the copied segment and the root arrays, no shared count.
 * Only an old root held by one entry hands over (refs 1: the entry this
 * write replaces; after COPY, or while the table's own copy of the entry is
 * pending, it is 2, and the counts are taken as usual).  Safe because the
 * references simply move: a reader that can still see the old version
 * started before it was replaced, so before the new version and every later
 * one were retired, and their frees wait for it too.  The marks are written
 * under the key's stripe mutex while the old version is still the current
 * one, and read only when it is freed.  A new version the table then refuses
 * gives them back (lv_root_discard()).
 */

/* A new segment's chunks: new ones start at 1; one taken from the old
 * version is handed over when it comes from a segment of @old that is not
 * kept and held by @old alone (the walk position (*@si, *@ci) moves over
 * @old's segments in list order, skipping kept ones), else counted. */
static void take_chunks(struct lv_seg *s, const struct lv_root *old, uint32_t *si, uint32_t *ci)
{
	for (uint32_t j = 0; j < s->nch; j++) {
		struct lv_chunk *c = s->ch[j].c;
		int handed = 0;

		if (!atomic_load_explicit(&c->refs, memory_order_relaxed)) {
			atomic_store_explicit(&c->refs, 1, memory_order_relaxed);
			continue;
		}
		while (old && *si < old->nseg) {
			struct lv_seg *os = old->sg[*si].s;

			if (root_gone(old)[*si] || *ci >= os->nch) {
				(*si)++;
				*ci = 0;
				continue;
			}
			if (os->ch[*ci].c != c) {
				(*ci)++;
				continue;
			}
			if (atomic_load_explicit(&os->refs, memory_order_relaxed) == 1) {
				seg_gone(os)[*ci] = 1;
				handed = 1;
			}
			(*ci)++;
			break;
		}
		if (!handed)
			atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
	}
}

static const struct lv_root *finish(struct lv_b *b, const struct lv_root *old)
{
	struct lv_root *r;
	uint32_t oi = 0, si = 0, ci = 0;

	b_close(b);
	b_close_seg(b);
	if (!b->count) {
		free(b->sg);
		lv_b_init(b);
		return NULL;
	}
	if (old && atomic_load_explicit(&old->refs, memory_order_relaxed) != 1)
		old = NULL; /* shared: counts taken as usual */
	r = xmalloc(root_alloc(b->nseg));
	atomic_init(&r->refs, 1);
	r->count = b->count;
	r->nseg = b->nseg;
	r->pad = 0;
	r->bytes = b->bytes + root_alloc(b->nseg);
	memcpy(r->sg, b->sg, b->nseg * sizeof(*r->sg));
	memset(root_gone(r), 0, r->nseg);
	/* Shared segments first (they mark @old's root, which the chunk walk
	 * then skips): relaxed, since a shared segment or chunk is held by the
	 * old root, which the writer's entry keeps alive, and a new one is not
	 * yet published. */
	for (uint32_t i = 0; i < r->nseg; i++) {
		struct lv_seg *s = r->sg[i].s;

		if (!atomic_load_explicit(&s->refs, memory_order_relaxed))
			continue;
		while (old && oi < old->nseg && old->sg[oi].s != s)
			oi++;
		if (old && oi < old->nseg) {
			root_gone(old)[oi++] = 1;
			continue;
		}
		atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
	}
	for (uint32_t i = 0; i < r->nseg; i++) {
		struct lv_seg *s = r->sg[i].s;

		if (atomic_load_explicit(&s->refs, memory_order_relaxed))
			continue;
		take_chunks(s, old, &si, &ci);
		atomic_store_explicit(&s->refs, 1, memory_order_relaxed);
	}
	free(b->sg);
	lv_b_init(b);
	return r;
}

const struct lv_root *lv_b_finish(struct lv_b *b)
{
	return finish(b, NULL);
}

const struct lv_root *lv_b_finish_from(struct lv_b *b, const struct lv_root *old)
{
	return finish(b, old);
}

void lv_root_discard(const struct lv_root *nu, const struct lv_root *old)
{
	if (old) {
		for (uint32_t i = 0; i < old->nseg; i++) {
			struct lv_seg *s = old->sg[i].s;

			if (root_gone(old)[i]) {
				root_gone(old)[i] = 0;
				atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
				continue;
			}
			for (uint32_t j = 0; j < s->nch; j++)
				if (seg_gone(s)[j]) {
					seg_gone(s)[j] = 0;
					atomic_fetch_add_explicit(&s->ch[j].c->refs, 1,
								  memory_order_relaxed);
				}
		}
	}
	lv_root_put(nu);
}

/* Free new segment @s and the new chunks in it (shared ones are not ours). */
static void abort_seg(struct lv_seg *s)
{
	for (uint32_t j = 0; j < s->nch; j++)
		if (!atomic_load_explicit(&s->ch[j].c->refs, memory_order_relaxed))
			free(s->ch[j].c); /* new, never shared */
	free(s);
}

void lv_b_abort(struct lv_b *b)
{
	for (uint32_t i = 0; i < b->nseg; i++)
		if (!atomic_load_explicit(&b->sg[i].s->refs, memory_order_relaxed))
			abort_seg(b->sg[i].s);
	if (b->oseg)
		abort_seg(b->oseg);
	free(b->open);
	free(b->sg);
	lv_b_init(b);
}

/* One segment: firsts, counts, bytes, every chunk's walk. */
static int validate_seg(const struct lv_seg *s)
{
	uint64_t first = 0, bytes = seg_alloc(s->nch);

	if (!s->nch || s->nch > LV_SEG_MAX || atomic_load_explicit(&s->refs, memory_order_relaxed) < 1)
		return -1;
	for (uint32_t i = 0; i < s->nch; i++)
		if (seg_gone(s)[i])
			return -1; /* handed over: only a replaced version's */
	for (uint32_t i = 0; i < s->nch; i++) {
		const struct lv_chunk *c = s->ch[i].c;
		uint32_t off = 0;

		if (s->ch[i].first != first || !c->n || c->used > c->cap ||
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
	return first == s->count && bytes == s->bytes ? 0 : -1;
}

int lv_validate(const struct lv_root *r)
{
	uint64_t first = 0, bytes = root_alloc(r->nseg);

	if (!r->count || !r->nseg)
		return -1;
	for (uint32_t i = 0; i < r->nseg; i++) {
		const struct lv_seg *s = r->sg[i].s;

		if (r->sg[i].first != first || root_gone(r)[i] || validate_seg(s) < 0)
			return -1;
		/* the merge rule: two neighbours never fit one segment */
		if (i && r->sg[i - 1].s->nch + s->nch <= LV_SEG_MAX)
			return -1;
		first += s->count;
		bytes += s->bytes;
	}
	return first == r->count && bytes == r->bytes ? 0 : -1;
}
