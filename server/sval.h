/*
 * sval.h - the immutable encoding of a set value (docs/types.md "Sets"):
 * what a tagged table entry (ht.h HT_VAL_TAGGED) of type SV_TYPE_SET holds.
 *
 * Layout, integers little-endian, read with memcpy (no alignment):
 *   header  [u8 type = SV_TYPE_SET][u8 enc][u16 0][u32 count]
 *           [u32 idx_off][u32 idx_cap]                          16 bytes
 *   intset     (SV_ENC_INTSET) count int64 members, strictly ascending
 *              (Redis's intset order: SMEMBERS replies in it); idx_off is
 *              the end, idx_cap 0.  A lookup is a binary search.
 *   hashtable  (SV_ENC_HASHTABLE) count times [u32 len][member bytes], in
 *              insertion order (a removal closes the gap), then idx_cap u32
 *              slots at idx_off: open addressing with linear probing over
 *              hv_field_hash(), a slot holding 1 + its member's offset, 0 if
 *              empty; idx_cap is a power of two >= 2 * count, so a lookup is
 *              O(1) and a random slot probe finds a member in O(1) expected.
 *
 * Invariants: members are distinct; count >= 1 for a stored value (a set
 * whose last member goes is deleted); an intset's members are the canonical
 * decimal forms of int64 values (resp_str2ll() accepts them), so string
 * equality is member equality in both encodings; the hashtable encoding is
 * sticky (a write never converts back, as in Redis).
 *
 * Concurrency: a value is never written after its entry is published; a
 * writer builds a new one (sv_edit_*) inside ht_rmw() or ht_txn() and the
 * table replaces the entry whole, the old freed after a grace period.
 * Readers parse a value with no lock and no allocation.  Tested against a
 * model by tests/server/test_sval.c; tortured by test_set_torture.c.
 */
#ifndef SERVER_SVAL_H
#define SERVER_SVAL_H

#include <stddef.h>
#include <stdint.h>

#define SV_TYPE_SET 2	   /* the type byte: Redis's OBJ_SET */
#define SV_ENC_INTSET 0	   /* OBJECT ENCODING "intset" */
#define SV_ENC_HASHTABLE 1 /* OBJECT ENCODING "hashtable" */
#define SV_HDR 16

/* One member as a reader sees it: @p (@l bytes) points into the value, or
 * into @buf for an intset member (its decimal form). */
struct sv_mem {
	const char *p;
	size_t l;
	char buf[24];
};

/* The header fields of value @v. */
uint32_t sv_count(const void *v);
int sv_enc(const void *v);

/* Iterate: *@off starts at 0; fills @m and returns 1, or 0 at the end. */
int sv_next(const void *v, size_t *off, struct sv_mem *m);
/* 1 if @s (@l bytes) is a member of @v. */
int sv_has(const void *v, const void *s, size_t l);
/* A uniformly random member of @v, drawing with @rnd. */
void sv_random(const void *v, uint64_t (*rnd)(void), struct sv_mem *m);

/* Whether @s is an intset member (a strict int64, Redis's
 * isSdsRepresentableAsLongLong()); *@iv its value. */
int sv_is_int(const void *s, size_t l, int64_t *iv);

/*
 * An edit: the old value's members (by reference; an intset's as decimal
 * strings in @arena) plus changes, then written out whole as a new value.
 * Pointers into the old value and into the arguments must stay valid until
 * sv_edit_write().  Every operation is O(1) expected (an index over all
 * members); init and write are O(n) (O(n log n) for an intset, which is
 * sorted).
 */
struct sv_m {
	const char *p;
	uint32_t l;
	uint8_t isint, dead;
	int64_t iv;
};

struct sv_edit {
	struct sv_m *ms;     /* old members in order, then added ones */
	size_t n, cap, live; /* entries in ms, room, entries not dead */
	uint32_t *idx;	     /* 1 + position in ms, 0 empty; linear probing */
	size_t icap;	     /* power of two > 2 * n */
	char *arena;	     /* an old intset's members as strings */
	size_t bytes;	     /* 4 + length of every live member */
	size_t nonint;	     /* live members that are not integers */
	int added;	     /* sv_edit_add() added a member */
};

void sv_edit_init(struct sv_edit *ed, const void *old);
/* Add member @s: 1 if it is new, 0 if it was there. */
int sv_edit_add(struct sv_edit *ed, const void *s, size_t l);
/* Remove member @s: 1 if it was there. */
int sv_edit_rem(struct sv_edit *ed, const void *s, size_t l);
/* 1 if @s is a live member. */
int sv_edit_has(const struct sv_edit *ed, const void *s, size_t l);
/* The encoding a set whose old encoding is @old_enc (-1: a new set) gets
 * after the edit, as Redis 7.0 converts: hashtable stays hashtable; an
 * intset (or a new set) becomes hashtable when a non-integer is added, or
 * when a member is added and the count passes @max_intset. */
int sv_edit_enc(const struct sv_edit *ed, int old_enc, long long max_intset);
/* Bytes of the value sv_edit_write() writes with encoding @enc. */
size_t sv_edit_size(const struct sv_edit *ed, int enc);
/* Write the value (ed->live > 0; SV_ENC_INTSET only when ed->nonint == 0)
 * into @dst of sv_edit_size() bytes. */
void sv_edit_write(const struct sv_edit *ed, void *dst, int enc);
void sv_edit_fini(struct sv_edit *ed);

#endif /* SERVER_SVAL_H */
