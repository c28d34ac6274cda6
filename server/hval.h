/*
 * hval.h - the immutable encoding of a hash value (docs/types.md): what a
 * tagged table entry (ht.h HT_VAL_TAGGED) of type HV_TYPE_HASH holds.
 *
 * Layout, all integers little-endian u32 read with memcpy (the value has no
 * alignment):
 *   header  [u8 type = HV_TYPE_HASH][u8 enc][u16 0][u32 count]
 *           [u32 idx_off][u32 idx_cap]                          16 bytes
 *   pairs   count times [u32 flen][u32 vlen][field][value], in insertion
 *           order (Redis's listpack order: a new field goes last, an update
 *           keeps its place, a delete closes the gap)
 *   index   idx_cap u32 slots at idx_off (only when idx_cap > 0): open
 *           addressing with linear probing over hv_field_hash(); a slot
 *           holds 1 + the offset of its pair, 0 if empty.  Built for
 *           HV_ENC_HASHTABLE values, so a lookup in a big hash is O(1)
 *           instead of a walk.
 *
 * Invariants: fields are distinct; count >= 1 for a stored value (a hash
 * whose last field goes is deleted); enc is sticky (a hashtable-encoded
 * hash stays so, as in Redis).
 *
 * Concurrency: a value is never written after its entry is published; a
 * writer builds a new one (hv_edit_*) inside ht_rmw() and the table
 * replaces the entry whole, the old freed after a grace period.  Readers
 * parse a value with no lock.  Nothing here allocates except hv_edit_*.
 * Tortured by tests/server/test_hash_torture.c (run by test_hash.sh).
 */
#ifndef SERVER_HVAL_H
#define SERVER_HVAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HV_TYPE_HASH 4	   /* the type byte: Redis's OBJ_HASH */
#define HV_ENC_LISTPACK 0  /* OBJECT ENCODING "listpack" */
#define HV_ENC_HASHTABLE 1 /* OBJECT ENCODING "hashtable" */
#define HV_HDR 16

struct hv_pair {
	const char *f; /* NULL: deleted (hv_edit only) */
	size_t fl;
	const char *v;
	size_t vl;
};

/* The header fields of value @v (at least HV_HDR bytes). */
uint32_t hv_count(const void *v);
int hv_enc(const void *v);

/* Iterate: *@off starts at 0; fills @p and returns 1, or 0 at the end. */
int hv_next(const void *v, size_t *off, struct hv_pair *p);

/* Find field @f: 1 with @p filled (and *@off its pair's offset if @off is
 * not NULL), or 0. */
int hv_find(const void *v, const void *f, size_t fl, struct hv_pair *p, size_t *off);

/* The @i-th pair (0-based, O(i)), for HRANDFIELD. */
void hv_at(const void *v, uint32_t i, struct hv_pair *p);

/* The field hash of the index (also HSCAN's cursor order). */
uint64_t hv_field_hash(const void *f, size_t fl);

/* Unaligned little-endian u32 access, for this encoding and sval.h's. */
static inline uint32_t hv_rd32(const void *p)
{
	uint32_t x;

	memcpy(&x, p, 4);
	return x;
}

static inline void hv_wr32(void *p, uint32_t x)
{
	memcpy(p, &x, 4);
}

/*
 * One page of a scan in hash order (HSCAN and SSCAN of hashtable-encoded
 * values): @it[@n] holds the elements whose hash is at least the cursor;
 * they are sorted by hash and cut after @count, keeping the elements of one
 * hash together.  Return: how many make the page; *@next is the cursor to
 * go on from (the first hash left out), 0 when the page ends the scan.
 * Every element present for the whole scan comes back exactly once.
 */
struct hv_scan_item {
	uint64_t h;
	const void *a, *b; /* a field and its value, or a member (b NULL) */
	size_t al, bl;
};
size_t hv_scan_page(struct hv_scan_item *it, size_t n, long long count, uint64_t *next);

/*
 * An edit: the old value's pairs (by reference) plus changes, then written
 * out whole as a new value.  Pointers into the old value and into the
 * arguments must stay valid until hv_edit_write().
 */
struct hv_edit {
	const void *old;     /* NULL: a new hash */
	struct hv_pair *ps;  /* old pairs in order, then new ones */
	size_t *offs;	     /* offs[i]: old pair i's offset (ascending) */
	size_t nold, n, cap; /* pairs from old, pairs in ps, room */
	size_t live;	     /* pairs not deleted */
	size_t bytes;	     /* pair bytes of the live pairs */
	/* Past HV_EDIT_SCAN new pairs, an index of them (1 + their position in
	 * ps, 0 empty; linear probing over hv_field_hash()), so that an HSET
	 * of many new fields costs O(n), not O(n^2). */
	uint32_t *aidx;
	size_t acap;
};
#define HV_EDIT_SCAN 16

void hv_edit_init(struct hv_edit *ed, const void *old);
/* Index in ed->ps of field @f, or -1. */
long hv_edit_find(const struct hv_edit *ed, const void *f, size_t fl);
/* Set field @f to @v: 1 if the field is new, 0 if it was updated. */
int hv_edit_set(struct hv_edit *ed, const void *f, size_t fl, const void *v, size_t vl);
/* Delete field @f: 1 if it was there. */
int hv_edit_del(struct hv_edit *ed, const void *f, size_t fl);
/* Bytes of the value hv_edit_write() writes with encoding @enc. */
size_t hv_edit_size(const struct hv_edit *ed, int enc);
/* Write the value (ed->live > 0) into @dst of hv_edit_size() bytes. */
void hv_edit_write(const struct hv_edit *ed, void *dst, int enc);
/* An edit of a new hash holding @ps[@n] (a loaded dump): 0, or -1 if two
 * fields are equal (ed is then empty) or memory ran out.  O(n). */
int hv_edit_load(struct hv_edit *ed, const struct hv_pair *ps, size_t n);
void hv_edit_fini(struct hv_edit *ed);

#endif /* SERVER_HVAL_H */
