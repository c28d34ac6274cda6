/*
 * zval.h - the immutable encoding of a sorted set value (docs/types.md
 * "Sorted sets"): what a tagged table entry (ht.h HT_VAL_TAGGED) of type
 * ZV_TYPE_ZSET holds.
 *
 * Layout, integers little-endian u32 and scores IEEE doubles, read with
 * memcpy (the value has no alignment):
 *   header  [u8 type = ZV_TYPE_ZSET][u8 enc][u16 0][u32 count]
 *           [u32 idx_off][u32 idx_cap]                          16 bytes
 *   offsets count times u32: element i's offset from the value's start
 *   elements count times [f64 score][u32 mlen][member], in (score, member)
 *           order: Redis's order (scores ascending, equal scores by memcmp
 *           of the members, a shorter prefix first)
 *   index   idx_cap u32 slots at idx_off (only when idx_cap > 0): open
 *           addressing with linear probing over hv_field_hash() of the
 *           member; a slot holds 1 + the element's position (its rank), 0
 *           if empty.  Built past ZV_IDX_MIN elements, whatever the
 *           encoding, so ZSCORE and ZRANK of a big set are O(1).
 *
 * The offsets make every element reachable by position, so rank and score
 * and lex ranges are binary searches and ZRANGE of m elements costs
 * O(log n + m).
 *
 * Invariants: members are distinct; no score is NaN; count >= 1 for a
 * stored value (a set whose last member goes is deleted); enc is
 * ZV_ENC_LISTPACK or ZV_ENC_SKIPLIST and only names what OBJECT ENCODING
 * answers (the layout is the same).
 *
 * Concurrency: a value is never written after its entry is published; a
 * writer builds a new one (zv_edit_*) inside ht_rmw() and the table
 * replaces the entry whole, the old freed after a grace period.  Readers
 * parse a value with no lock.  Nothing here allocates except zv_edit_*.
 * Tested by tests/server/test_zval.c against a model; tortured by
 * tests/server/test_zset_torture.c (run by test_zset.sh).
 */
#ifndef SERVER_ZVAL_H
#define SERVER_ZVAL_H

#include <stddef.h>
#include <stdint.h>

#define ZV_TYPE_ZSET 3	   /* the type byte: Redis's OBJ_ZSET */
#define ZV_ENC_LISTPACK 0  /* OBJECT ENCODING "listpack" */
#define ZV_ENC_SKIPLIST 1  /* OBJECT ENCODING "skiplist" */
#define ZV_HDR 16
#define ZV_IDX_MIN 16	   /* more elements than this: the member index */

struct zv_item {
	double score;
	const char *m; /* NULL: deleted (zv_edit only) */
	size_t ml;
};

uint32_t zv_count(const void *v);
int zv_enc(const void *v);
/* Element @i (0 <= i < count), pointing into @v. */
void zv_at(const void *v, uint32_t i, struct zv_item *it);
double zv_score_at(const void *v, uint32_t i);
/* Position of member @m, or -1.  O(1) with the index, else O(n). */
long zv_find(const void *v, const void *m, size_t ml);

/* A score bound: @excl for "(". */
struct zv_sbound {
	double v;
	int excl;
};
/* A lex bound: ZV_LEX_MINUS "-", ZV_LEX_PLUS "+", ZV_LEX_INCL "[s",
 * ZV_LEX_EXCL "(s". */
enum { ZV_LEX_MINUS, ZV_LEX_PLUS, ZV_LEX_INCL, ZV_LEX_EXCL };
struct zv_lbound {
	int kind;
	const char *s;
	size_t l;
};

/* Positions [*from, *to) of the elements inside the score range [min, max]
 * (exclusive ends as the bounds say); empty when *from >= *to.  O(log n). */
void zv_score_range(const void *v, const struct zv_sbound *min, const struct zv_sbound *max,
		    uint32_t *from, uint32_t *to);
/* The same for a lex range (meaningful when all scores are equal, as in
 * Redis). */
void zv_lex_range(const void *v, const struct zv_lbound *min, const struct zv_lbound *max,
		  uint32_t *from, uint32_t *to);
/* Redis's member order: memcmp, then the shorter first. */
int zv_mcmp(const char *a, size_t al, const char *b, size_t bl);
/* Redis's (score, member) order. */
int zv_item_cmp(const struct zv_item *a, const struct zv_item *b);

/*
 * An edit: the old value's elements (by reference) minus what is removed,
 * plus new or re-scored elements, then written out whole.  Pointers into
 * the old value and into the arguments must stay valid until
 * zv_edit_write().  An edit of NULL builds a new set (a STORE command, a
 * loaded dump).
 */
struct zv_edit {
	const void *old;	/* NULL: a new set */
	uint32_t nold;
	unsigned char *gone;	/* nold flags: old element removed (or moved to add) */
	struct zv_item *add;	/* new elements; m NULL once deleted */
	size_t nadd, cap;
	uint32_t *aidx;		/* 1 + position in add, linear probing by member hash */
	size_t acap;
	size_t live;		/* elements after the edit */
	size_t maxml;		/* longest member added (the listpack value limit) */
	/* after zv_edit_finish(): add sorted, compacted */
	size_t bytes;		/* element bytes of the live elements */
	int finished;
};

void zv_edit_init(struct zv_edit *ed, const void *old);
/* Score of member @m as the edit has it: 1 and *@score, or 0. */
int zv_edit_get(struct zv_edit *ed, const void *m, size_t ml, double *score);
/* Set member @m's score: 1 if the member is new, 0 if it was there. */
int zv_edit_set(struct zv_edit *ed, const void *m, size_t ml, double score);
/* Delete member @m: 1 if it was there. */
int zv_edit_del(struct zv_edit *ed, const void *m, size_t ml);
/* Delete old positions [from, to) (the edit must not have changed them). */
void zv_edit_del_range(struct zv_edit *ed, uint32_t from, uint32_t to);
/* Sort what was added; then zv_edit_size()/zv_edit_write(). */
void zv_edit_finish(struct zv_edit *ed);
/* Bytes of the value zv_edit_write() writes (ed->live > 0, finished). */
size_t zv_edit_size(const struct zv_edit *ed);
/* Write the value into @dst of zv_edit_size() bytes with encoding @enc. */
void zv_edit_write(const struct zv_edit *ed, void *dst, int enc);
void zv_edit_fini(struct zv_edit *ed);

/* Redis 7.0's d2string(): how a listpack stores a score ("-0", "inf",
 * an integer when the double is one within +-2^53... else "%.17g").
 * Returns the length written into @buf (at least 32 bytes). */
int zv_d2string(char *buf, size_t len, double d);
/* Redis's strtod of a score argument ("inf", "-inf", "+inf" accepted; NaN
 * and trailing bytes refused): 0 and *@d, or -1. */
int zv_parse_score(const char *s, size_t l, double *d);

#endif /* SERVER_ZVAL_H */
