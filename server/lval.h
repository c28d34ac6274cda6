/*
 * lval.h - the list value (docs/types.md, Lists): what a tagged table entry
 * of type OBJ_LIST holds, and the builder writers use to make a new version.
 *
 * Shape.  The entry's value is a 24-byte header stored with HT_VAL_TAGGED |
 * HT_VAL_EXTERN: [u8 OBJ_LIST][u8 0][u16 0][u32 0][root pointer][u64
 * external bytes].  The root (struct lv_root) is a two-level tree, immutable
 * once published: the element count, the external bytes (root, segments and
 * chunks), and an array of segment pointers, each with the index of its first
 * element.  A segment (struct lv_seg) holds up to LV_SEG_MAX chunk pointers,
 * each with the index of its first element in the segment (two binary
 * searches for LINDEX/LRANGE).  A chunk (struct lv_chunk) holds at most
 * LV_CHUNK_MAX elements or LV_CHUNK_BYTES payload bytes ([u32 len][bytes]
 * each; a bigger element sits alone in its chunk).
 *
 * Writes.  A writer (under ht_rmw(), the key's stripe mutex) builds a new
 * root: segments it does not change are shared with the old root, chunks it
 * does not change are shared with the old segments, the one or two chunks it
 * changes are copied with the change (bounded: one chunk).  A push or pop at
 * either end thus costs one chunk copy, one segment's pointer array (at most
 * LV_SEG_MAX slots) and the root's segment array: for a million short
 * elements about 2,000 chunks in 32 to 63 segments, so about 100 slots and
 * reference counts per write instead of 2,000 with a flat chunk array.  The
 * builder merges a short run of chunks with its neighbour segment, so two
 * adjacent segments always hold more than LV_SEG_MAX chunks between them and
 * a list of C chunks has at most 2 C / LV_SEG_MAX + 1 segments.
 *
 * Ownership and reclamation.  Each entry owns one reference to its root
 * (lv_root.refs); each root owns one reference to each of its segments
 * (lv_seg.refs), each segment one to each of its chunks (lv_chunk.refs).
 * Only writers (building a root) and the table's free hook (lv_entry_free(),
 * called by ht.c once the entry's grace periods are over: the flavor's and
 * the scan domain's, so neither a lookup nor a scan nor an RDB snapshot can
 * still reach it) touch the counts; readers never write shared memory.  A
 * segment or chunk shared by consecutive versions is freed with the last one
 * that holds it.  RENAME/COPY/MOVE copy the header: lv_entry_dup() first.
 *
 * Readers.  lv_root_of() of an entry found by ht_find_rcu() is valid for the
 * whole read-side section, since the entry is: a command sees one version.
 * Tested by tests/server/test_lval.c (against a model); tortured by
 * tests/server/test_list_torture.c.
 */
#ifndef SERVER_LVAL_H
#define SERVER_LVAL_H

#include "hashtable/ht.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define LV_TYPE_LIST 1 /* Redis's OBJ_LIST */
#define LV_HDR 24      /* the entry's value */
#define LV_CHUNK_MAX 512
#define LV_CHUNK_BYTES 8192 /* Redis's list-max-listpack-size -2: 8 KB a node */
#ifndef LV_SEG_MAX		    /* test_lval_seg4 builds with 4 */
#define LV_SEG_MAX 64 /* chunks a segment holds */
#endif

struct lv_chunk {
	_Atomic uint32_t refs; /* segments holding it: writers and the free hook only */
	uint32_t n;	       /* elements */
	uint32_t used;	       /* payload bytes */
	uint32_t cap;	       /* payload bytes allocated */
	char data[];	       /* n times [u32 len][bytes] */
};

struct lv_slot {
	struct lv_chunk *c;
	uint64_t first; /* index of c's first element in its segment */
};

struct lv_seg {
	_Atomic uint32_t refs; /* roots holding it: writers and the free hook only */
	uint32_t nch;	       /* chunks, 1 to LV_SEG_MAX */
	uint64_t count;	       /* elements */
	uint64_t bytes;	       /* this segment plus its chunks */
	struct lv_slot ch[];
};

struct lv_sslot {
	struct lv_seg *s;
	uint64_t first; /* index of s's first element in the list */
};

struct lv_root {
	_Atomic long refs; /* entries holding it: writers and the free hook only */
	uint64_t count;	   /* elements, >= 1 */
	uint64_t bytes;	   /* external bytes: this root, its segments and chunks */
	uint32_t nseg;
	uint32_t pad;
	struct lv_sslot sg[];
};

/* The root of list value @val (an entry's value, LV_HDR bytes). */
static inline const struct lv_root *lv_root_of(const void *val)
{
	const struct lv_root *r;

	__builtin_memcpy(&r, (const char *)val + 8, sizeof(r));
	return r;
}

/* Write the LV_HDR-byte value for @r into @dst (an ht_rmw_alloc() buffer of
 * LV_HDR | HT_VAL_TAGGED | HT_VAL_EXTERN); the entry takes over the
 * reference the builder returned. */
void lv_write_hdr(void *dst, const struct lv_root *r);
#define LV_VLEN ((size_t)LV_HDR | HT_VAL_TAGGED | HT_VAL_EXTERN)

/* ht_extern_hook() functions: an entry copy takes a root reference, a freed
 * entry drops its one.  Any thread; no lock. */
void lv_entry_dup(void *arg, const struct ht_entry *e);
void lv_entry_free(void *arg, const struct ht_entry *e);
/* Drop a reference a builder returned that no entry took (an error path). */
void lv_root_put(const struct lv_root *r);
/* Poison (0x6b) roots, segments and chunks before freeing them
 * (RCUKV_POISON_FREES). */
void lv_set_poison(int on);

/* ------------------------------------------------------------ reading */

/* A position in a list: segment @si, its chunk @ci, element @ei of it at
 * byte offset @off. */
struct lv_it {
	const struct lv_root *r;
	uint32_t si, ci, ei;
	uint32_t off;
};

/* Position @it at element @idx (0 <= idx < count); O(log segments + log
 * LV_SEG_MAX + chunk). */
void lv_it_at(struct lv_it *it, const struct lv_root *r, uint64_t idx);
/* The element at @it (1) and step forward; 0 past the end. */
int lv_it_next(struct lv_it *it, const char **p, size_t *len);
/* Backwards: lv_rit_at() at element @idx (0 <= idx < count), then each
 * lv_rit_prev() gives it and steps back (0 before the first).  Holds one
 * chunk's offsets. */
struct lv_rit {
	const struct lv_root *r;
	uint32_t si, ci;
	int32_t ei;
	uint32_t offs[LV_CHUNK_MAX];
};
void lv_rit_at(struct lv_rit *it, const struct lv_root *r, uint64_t idx);
int lv_rit_prev(struct lv_rit *it, const char **p, size_t *len);
/* Element @idx (0 <= idx < count). */
void lv_index(const struct lv_root *r, uint64_t idx, const char **p, size_t *len);
/* Element @ei of chunk @c, walking from its start (O(ei)). */
void lv_chunk_at(const struct lv_chunk *c, uint32_t ei, const char **p, size_t *len);

/* ------------------------------------------------------------ writing */

/*
 * A builder: a new root assembled from pieces of an old one (shared whole
 * chunks, copied partial ones) and new elements.  Pointers into the old
 * root and into the arguments must stay valid until lv_b_finish().
 */
struct lv_b {
	struct lv_sslot *sg;   /* closed segments: new ones (refs 0) or shared */
	uint32_t nseg, cap;
	struct lv_seg *oseg;   /* being filled (LV_SEG_MAX slots), not yet in sg[] */
	struct lv_chunk *open; /* being filled, not yet in oseg */
	uint64_t count;	       /* elements in sg[] and oseg */
	uint64_t bytes;	       /* their external bytes (oseg's own once closed) */
};

void lv_b_init(struct lv_b *b);
/* Append one element. */
void lv_b_elem(struct lv_b *b, const void *p, size_t len);
/* Append elements [@from, @to) of @r: whole chunks shared, partial ones
 * copied; a whole chunk that fits the open chunk is merged into it.  With
 * @reopen_last, a last chunk with room is copied into the open chunk (so a
 * push at the tail fills it instead of starting a chunk of one). */
void lv_b_range(struct lv_b *b, const struct lv_root *r, uint64_t from, uint64_t to,
		int reopen_last);
/* The new root holding one reference (NULL when empty; the builder is reset
 * either way), or drop everything on an error path (lv_b_abort()). */
const struct lv_root *lv_b_finish(struct lv_b *b);
void lv_b_abort(struct lv_b *b);
/* lv_b_finish() of the version that replaces @old in the same entry (the
 * builder's source, still current, the caller holding the key's stripe
 * mutex): @old hands over the references the new version shares, instead of
 * the new version counting them (lval.c, "Handing over").  The new version
 * must then be stored in place of @old; if it is not, lv_root_discard(). */
const struct lv_root *lv_b_finish_from(struct lv_b *b, const struct lv_root *old);
/* Drop a version lv_b_finish_from(@old) made that was not stored: @old gets
 * its references back. */
void lv_root_discard(const struct lv_root *nu, const struct lv_root *old);

/* Whole-structure check for tests: counts, firsts, bytes; 0 or -1. */
int lv_validate(const struct lv_root *r);

#endif /* SERVER_LVAL_H */
