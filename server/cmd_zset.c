/*
 * cmd_zset.c - the sorted set commands: ZADD ZINCRBY ZREM ZCARD ZSCORE
 * ZMSCORE ZRANK ZREVRANK ZCOUNT ZLEXCOUNT ZRANGE ZRANGESTORE ZRANGEBYSCORE
 * ZREVRANGEBYSCORE ZRANGEBYLEX ZREVRANGEBYLEX ZREVRANGE ZREMRANGEBYRANK
 * ZREMRANGEBYSCORE ZREMRANGEBYLEX ZPOPMIN ZPOPMAX ZMPOP ZRANDMEMBER ZUNION
 * ZINTER ZDIFF ZUNIONSTORE ZINTERSTORE ZDIFFSTORE ZINTERCARD ZSCAN.  Not
 * the blocking BZPOPMIN BZPOPMAX BZMPOP (they wait for the lists' blocking
 * machinery).
 *
 * A sorted set is one table entry whose tagged value is zval.h's immutable
 * encoding (members in (score, member) order, by position, plus a member
 * index for big sets).  Readers parse the entry ht_find_rcu() returned,
 * inside the worker's QSBR read-side section, with no lock: they see the
 * set before or after any write, never half of one.  Single-key writers run
 * under ht_rmw() (the key's stripe mutex) and copy the old value with their
 * change into a new entry, which the table publishes in place of the old
 * one, freed after a grace period (ht.h guarantee 2).  The STORE commands
 * read their sources and write their destination in one ht_txn()
 * (db_run_txn()), so no reader sees a destination computed from sources
 * changed halfway; ZUNION/ZINTER/ZDIFF/ZINTERCARD read their keys at one
 * moment (ht_mfind_rcu()).  O(n) per write; docs/types.md says what
 * replaces it.  Replies follow Redis 7.0.15 byte for byte
 * (tests/server/cases_zset.txt); tortured by tests/server/test_zset.sh.
 */
#define RCU_FLAVOR_QSBR
#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "resp/resp.h"
#include "server/block.h"
#include "server/cmd.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/hval.h"
#include "server/notify.h"
#include "server/reply.h"
#include "server/util.h"
#include "server/zval.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERR_NAN "-ERR resulting score is not a number (NaN)"
#define ERR_MINMAX "-ERR min or max is not a float"
#define ERR_LEXRANGE "-ERR min or max not valid string range item"
#define ERR_POSITIVE "-ERR value is out of range, must be positive"

/* ------------------------------------------------------------- helpers */

/* The sorted set of entry @e, or NULL; *@ok 0 after a WRONGTYPE reply. */
static const void *zset_of(struct conn *c, const struct ht_entry *e, int *ok)
{
	*ok = 1;
	if (!e)
		return NULL;
	if (db_type(e) != OBJ_ZSET) {
		reply_error(c, ERR_WRONGTYPE);
		*ok = 0;
		return NULL;
	}
	return ht_entry_val(e);
}

/* The sorted set at argument @k (an access: hit or miss counted). */
static const void *zset_read(struct conn *c, int k, int *ok)
{
	const struct ht_entry *e = ht_find_rcu(db_of(c), K(k));

	db_hit(c, k, e != NULL);
	return zset_of(c, e, ok);
}

/* Argument @i as a long (Redis's getLongFromObjectOrReply). */
static int get_long(struct conn *c, int i, long long *v)
{
	return db_get_ll(c, i, v);
}

/* A score range bound, as Redis's zslParseRange(): "(" for exclusive,
 * strtod over the NUL-terminated argument, NaN refused. */
static int parse_sbound(const char *s, struct zv_sbound *b)
{
	char *end;

	b->excl = s[0] == '(';
	b->v = strtod(s + b->excl, &end);
	return *end == '\0' && !isnan(b->v) ? 0 : -1;
}

static int parse_srange(struct conn *c, int imin, int imax, struct zv_sbound *min,
			struct zv_sbound *max)
{
	if (parse_sbound(ARGV(c, imin), min) < 0 || parse_sbound(ARGV(c, imax), max) < 0) {
		reply_error(c, ERR_MINMAX);
		return -1;
	}
	return 0;
}

static int parse_lbound(const char *s, size_t l, struct zv_lbound *b)
{
	if (l == 0)
		return -1;
	switch (s[0]) {
	case '+':
		b->kind = ZV_LEX_PLUS;
		return l == 1 ? 0 : -1;
	case '-':
		b->kind = ZV_LEX_MINUS;
		return l == 1 ? 0 : -1;
	case '(':
		b->kind = ZV_LEX_EXCL;
		break;
	case '[':
		b->kind = ZV_LEX_INCL;
		break;
	default:
		return -1;
	}
	b->s = s + 1;
	b->l = l - 1;
	return 0;
}

static int parse_lrange(struct conn *c, int imin, int imax, struct zv_lbound *min,
			struct zv_lbound *max)
{
	if (parse_lbound(K(imin), min) < 0 || parse_lbound(K(imax), max) < 0) {
		reply_error(c, ERR_LEXRANGE);
		return -1;
	}
	return 0;
}

/* Positions [*from, *to) of rank range start..end (Redis's sanitizing),
 * for a set of @n elements, in forward order; 0 if empty. */
static int rank_range(long long start, long long end, uint32_t n, uint32_t *from, uint32_t *to)
{
	long long llen = n;

	if (start < 0)
		start = llen + start;
	if (end < 0)
		end = llen + end;
	if (start < 0)
		start = 0;
	if (start > end || start >= llen)
		return 0;
	if (end >= llen)
		end = llen - 1;
	*from = (uint32_t)start;
	*to = (uint32_t)end + 1;
	return 1;
}

/* One element of a reply: member, then its score if @ws (a pair in RESP3). */
static void reply_elem(struct conn *c, const struct zv_item *it, int ws)
{
	if (ws && c->resp > 2)
		reply_array(c, 2);
	reply_bulk(c, it->m, it->ml);
	if (ws)
		reply_double(c, it->score);
}

static void reply_elems_hdr(struct conn *c, long long n, int ws)
{
	reply_array(c, ws && c->resp == 2 ? n * 2 : n);
}

/* The encoding a set of @n members, the longest @maxml bytes, is built
 * with (a STORE destination, a loaded dump). */
static int fresh_enc(size_t n, size_t maxml)
{
	return (long long)n <= db_zset_lp_entries() && db_zset_lp_fits(maxml) ? ZV_ENC_LISTPACK
									      : ZV_ENC_SKIPLIST;
}

/* Store the finished edit @ed into rmw @r with encoding @enc. */
static int rmw_store(struct ht_rmw *r, struct zv_edit *ed, int enc)
{
	size_t n;
	char *dst;

	zv_edit_finish(ed);
	if (ed->live == 0)
		return HT_RMW_DELETE;
	n = zv_edit_size(ed);
	dst = ht_rmw_alloc(r, n | HT_VAL_TAGGED);
	if (!dst)
		return n > HT_MAX_VAL_LEN ? -E2BIG : -ENOMEM;
	zv_edit_write(ed, dst, enc);
	return HT_RMW_STORE;
}

/* Store the edit @ed as key @i of transaction @tx (deleting it when
 * empty): 0 or a negative errno.  *@stored: 1 stored, 0 deleted or none. */
static int txn_store(struct ht_txn *tx, size_t i, struct zv_edit *ed, int *stored, int *deleted)
{
	size_t n;
	char *buf;
	int rc;

	zv_edit_finish(ed);
	*stored = *deleted = 0;
	if (ed->live == 0) {
		*deleted = ht_txn_del(tx, i) == 0;
		return 0;
	}
	n = zv_edit_size(ed);
	if (n > HT_MAX_VAL_LEN)
		return -E2BIG;
	buf = xmalloc(n);
	zv_edit_write(ed, buf, fresh_enc(ed->live, ed->maxml));
	rc = ht_txn_set(tx, i, buf, n | HT_VAL_TAGGED, HT_NO_EXPIRE);
	free(buf);
	*stored = rc == 0;
	return rc;
}

/* ------------------------------------------------------------- reading */

void cmd_zcard(struct conn *c, int argc)
{
	int ok;
	const void *z = zset_read(c, 1, &ok);

	(void)argc;
	if (ok)
		reply_int(c, z ? zv_count(z) : 0);
}

void cmd_zscore(struct conn *c, int argc)
{
	int ok;
	const void *z = zset_read(c, 1, &ok);
	long i;

	(void)argc;
	if (!ok)
		return;
	i = z ? zv_find(z, K(2)) : -1;
	if (i < 0)
		reply_null(c);
	else
		reply_double(c, zv_score_at(z, (uint32_t)i));
}

void cmd_zmscore(struct conn *c, int argc)
{
	int ok;
	const void *z = zset_read(c, 1, &ok);

	if (!ok)
		return;
	reply_array(c, argc - 2);
	for (int j = 2; j < argc; j++) {
		long i = z ? zv_find(z, K(j)) : -1;

		if (i < 0)
			reply_null(c);
		else
			reply_double(c, zv_score_at(z, (uint32_t)i));
	}
}

static void zrank_generic(struct conn *c, int rev)
{
	int ok;
	const void *z = zset_read(c, 1, &ok);
	long i;

	if (!ok)
		return;
	i = z ? zv_find(z, K(2)) : -1;
	if (i < 0)
		reply_null(c);
	else
		reply_int(c, rev ? (long long)zv_count(z) - 1 - i : i);
}

void cmd_zrank(struct conn *c, int argc)
{
	(void)argc;
	zrank_generic(c, 0);
}

void cmd_zrevrank(struct conn *c, int argc)
{
	(void)argc;
	zrank_generic(c, 1);
}

void cmd_zcount(struct conn *c, int argc)
{
	struct zv_sbound min, max;
	uint32_t from, to;
	const void *z;
	int ok;

	(void)argc;
	if (parse_srange(c, 2, 3, &min, &max) < 0)
		return;
	z = zset_read(c, 1, &ok);
	if (!ok)
		return;
	if (!z) {
		reply_int(c, 0);
		return;
	}
	zv_score_range(z, &min, &max, &from, &to);
	reply_int(c, to - from);
}

void cmd_zlexcount(struct conn *c, int argc)
{
	struct zv_lbound min, max;
	uint32_t from, to;
	const void *z;
	int ok;

	(void)argc;
	if (parse_lrange(c, 2, 3, &min, &max) < 0)
		return;
	z = zset_read(c, 1, &ok);
	if (!ok)
		return;
	if (!z) {
		reply_int(c, 0);
		return;
	}
	zv_lex_range(z, &min, &max, &from, &to);
	reply_int(c, to > from ? to - from : 0);
}

/* ------------------------------------------------------ the ZRANGE family */

enum zr_type { ZR_AUTO, ZR_RANK, ZR_SCORE, ZR_LEX };
enum zr_dir { ZR_DAUTO, ZR_FWD, ZR_REV };

struct zrange {
	enum zr_type type;
	int rev, withscores;
	long long start, end, offset, limit;
	struct zv_sbound smin, smax;
	struct zv_lbound lmin, lmax;
};

/* Parse Redis's zrangeGenericCommand() arguments from @at (the key); 0 or
 * -1 after an error reply. */
static int zrange_parse(struct conn *c, int at, int store, enum zr_type type, enum zr_dir dir,
			struct zrange *q)
{
	int minidx = at + 1, maxidx = at + 2;

	memset(q, 0, sizeof(*q));
	q->limit = -1;
	for (int j = at + 3; j < c->argc; j++) {
		int left = c->argc - j - 1;

		if (!store && util_strcaseeq(K(j), "withscores")) {
			q->withscores = 1;
		} else if (util_strcaseeq(K(j), "limit") && left >= 2) {
			if (get_long(c, j + 1, &q->offset) < 0 || get_long(c, j + 2, &q->limit) < 0)
				return -1;
			j += 2;
		} else if (dir == ZR_DAUTO && util_strcaseeq(K(j), "rev")) {
			dir = ZR_REV;
		} else if (type == ZR_AUTO && util_strcaseeq(K(j), "bylex")) {
			type = ZR_LEX;
		} else if (type == ZR_AUTO && util_strcaseeq(K(j), "byscore")) {
			type = ZR_SCORE;
		} else {
			reply_error(c, ERR_SYNTAX);
			return -1;
		}
	}
	if (dir == ZR_DAUTO)
		dir = ZR_FWD;
	if (type == ZR_AUTO)
		type = ZR_RANK;
	if (q->limit != -1 && type == ZR_RANK) {
		reply_error(c, "syntax error, LIMIT is only supported in combination with either "
			       "BYSCORE or BYLEX");
		return -1;
	}
	if (q->withscores && type == ZR_LEX) {
		reply_error(c, "syntax error, WITHSCORES not supported in combination with BYLEX");
		return -1;
	}
	if (dir == ZR_REV && type != ZR_RANK) {
		int t = minidx;

		minidx = maxidx;
		maxidx = t;
	}
	q->type = type;
	q->rev = dir == ZR_REV;
	switch (type) {
	case ZR_SCORE:
		return parse_srange(c, minidx, maxidx, &q->smin, &q->smax);
	case ZR_LEX:
		return parse_lrange(c, minidx, maxidx, &q->lmin, &q->lmax);
	default:
		if (get_long(c, minidx, &q->start) < 0 || get_long(c, maxidx, &q->end) < 0)
			return -1;
		return 0;
	}
}

/* The range @q selects in @z: positions [*from, *to) and how many to skip
 * from the range's start in its direction (*skip) and take (*take). */
static void zrange_select(const void *z, const struct zrange *q, uint32_t *from, uint32_t *to,
			  uint32_t *take)
{
	uint32_t n = zv_count(z), len;

	*from = *to = *take = 0;
	if (q->type == ZR_RANK) {
		uint32_t f, t;

		if (!rank_range(q->start, q->end, n, &f, &t))
			return;
		if (q->rev) {
			*from = n - t;
			*to = n - f;
		} else {
			*from = f;
			*to = t;
		}
		*take = *to - *from;
		return;
	}
	if (q->type == ZR_SCORE)
		zv_score_range(z, &q->smin, &q->smax, from, to);
	else
		zv_lex_range(z, &q->lmin, &q->lmax, from, to);
	if (*to < *from)
		*to = *from;
	len = *to - *from;
	if (q->offset < 0 || (unsigned long long)q->offset >= len) {
		*to = *from;
		return;
	}
	len -= (uint32_t)q->offset;
	if (q->rev)
		*to -= (uint32_t)q->offset;
	else
		*from += (uint32_t)q->offset;
	if (q->limit >= 0 && (unsigned long long)q->limit < len)
		len = (uint32_t)q->limit;
	if (q->rev)
		*from = *to - len;
	else
		*to = *from + len;
	*take = len;
}

static void zrange_reply(struct conn *c, const void *z, const struct zrange *q)
{
	uint32_t from, to, take;
	struct zv_item it;

	zrange_select(z, q, &from, &to, &take);
	reply_elems_hdr(c, take, q->withscores);
	for (uint32_t k = 0; k < take; k++) {
		zv_at(z, q->rev ? to - 1 - k : from + k, &it);
		reply_elem(c, &it, q->withscores);
	}
}

static void zrange_generic(struct conn *c, enum zr_type type, enum zr_dir dir)
{
	struct zrange q;
	const void *z;
	int ok;

	if (zrange_parse(c, 1, 0, type, dir, &q) < 0)
		return;
	z = zset_read(c, 1, &ok);
	if (!ok)
		return;
	if (!z) {
		reply_array(c, 0);
		return;
	}
	zrange_reply(c, z, &q);
}

void cmd_zrange(struct conn *c, int argc)
{
	(void)argc;
	zrange_generic(c, ZR_AUTO, ZR_DAUTO);
}

void cmd_zrevrange(struct conn *c, int argc)
{
	(void)argc;
	zrange_generic(c, ZR_RANK, ZR_REV);
}

void cmd_zrangebyscore(struct conn *c, int argc)
{
	(void)argc;
	zrange_generic(c, ZR_SCORE, ZR_FWD);
}

void cmd_zrevrangebyscore(struct conn *c, int argc)
{
	(void)argc;
	zrange_generic(c, ZR_SCORE, ZR_REV);
}

void cmd_zrangebylex(struct conn *c, int argc)
{
	(void)argc;
	zrange_generic(c, ZR_LEX, ZR_FWD);
}

void cmd_zrevrangebylex(struct conn *c, int argc)
{
	(void)argc;
	zrange_generic(c, ZR_LEX, ZR_REV);
}

/* ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]:
 * key 0 of the transaction is the destination, key 1 the source. */
struct zrs {
	struct conn *c;
	const struct zrange *q;
	long long n; /* out: the destination's size */
	int stored, deleted;
};

static int zrangestore_fn(struct ht_txn *tx, void *arg)
{
	struct zrs *a = arg;
	const struct ht_entry *e = ht_txn_get(tx, 1);
	const void *z;
	struct zv_edit ed;
	uint32_t from, to, take;
	struct zv_item it;
	int rc;

	db_hit(a->c, 2, e != NULL);
	if (e && db_type(e) != OBJ_ZSET)
		return -DB_EWRONGTYPE;
	z = e ? ht_entry_val(e) : NULL;
	zv_edit_init(&ed, NULL);
	if (z) {
		zrange_select(z, a->q, &from, &to, &take);
		for (uint32_t k = 0; k < take; k++) {
			zv_at(z, from + k, &it);
			zv_edit_set(&ed, it.m, it.ml, it.score);
		}
	}
	a->n = (long long)ed.live;
	rc = txn_store(tx, 0, &ed, &a->stored, &a->deleted);
	zv_edit_fini(&ed);
	return rc;
}

void cmd_zrangestore(struct conn *c, int argc)
{
	static const int idx[2] = {1, 2};
	struct zrange q;
	struct zrs a = {c, &q, 0, 0, 0};
	int rc;

	(void)argc;
	if (zrange_parse(c, 2, 1, ZR_AUTO, ZR_DAUTO, &q) < 0)
		return;
	rc = db_run_txn(c, 2, idx, zrangestore_fn, &a);
	if (rc >= 0)
		db_signal_if_list(db_of(c), K(1)); /* a blocked BZPOPMIN on the destination */
	if (rc < 0) {
		db_reply_ht_err(c, rc);
		return;
	}
	reply_int(c, a.n);
	if (a.stored) {
		SRV_DIRTY(c, 1);
		db_notify(c, NOTIFY_ZSET, "zrangestore", 1);
	} else if (a.deleted) {
		SRV_DIRTY(c, 1);
		db_notify(c, NOTIFY_GENERIC, "del", 1);
	}
}

/* ------------------------------------------------------------- writing */

enum zw_op { ZW_ADD, ZW_REM, ZW_REMRANGE, ZW_POP };

#define ZADD_NX 1
#define ZADD_XX 2
#define ZADD_GT 4
#define ZADD_LT 8
#define ZADD_CH 16
#define ZADD_INCR 32

#define E_ZNAN 1301

/* One write, run by zset_write_fn() under the key's stripe mutex. */
struct zw {
	struct conn *c;
	enum zw_op op;
	/* ZW_ADD */
	int flags, first; /* the first score's argument */
	double *scores;
	long long added, updated, processed;
	double newscore;
	/* ZW_REM / ZW_REMRANGE / ZW_POP */
	long long deleted;
	struct zrange q; /* ZW_REMRANGE: type and range */
	int max;	 /* ZW_POP: from the top */
	long long count;
	char *popped;	 /* ZW_POP: the popped elements, [f64][u32 ml][m] */
	size_t poplen;
	int key_deleted, missing;
};

static void zw_apply_add(struct conn *c, struct zw *a, struct zv_edit *ed)
{
	int n = (c->argc - a->first) / 2;

	for (int j = 0; j < n; j++) {
		const char *m = ARGV(c, a->first + 2 * j + 1);
		size_t ml = ARGL(c, a->first + 2 * j + 1);
		double cur, score = a->scores[j];

		if (zv_edit_get(ed, m, ml, &cur)) {
			if (a->flags & ZADD_NX)
				continue;
			if (a->flags & ZADD_INCR) {
				score += cur;
				if (isnan(score)) {
					a->added = -1; /* the NaN error */
					return;
				}
			}
			if (((a->flags & ZADD_LT) && score >= cur) ||
			    ((a->flags & ZADD_GT) && score <= cur))
				continue;
			a->processed++;
			a->newscore = score;
			if (score != cur) {
				zv_edit_set(ed, m, ml, score);
				a->updated++;
			}
		} else if (!(a->flags & ZADD_XX)) {
			zv_edit_set(ed, m, ml, score);
			a->added++;
			a->processed++;
			a->newscore = score;
		}
	}
}

static void pop_push(struct zw *a, const struct zv_item *it)
{
	a->popped = xrealloc(a->popped, a->poplen + 12 + it->ml);
	memcpy(a->popped + a->poplen, &it->score, 8);
	memcpy(a->popped + a->poplen + 8, &(uint32_t){(uint32_t)it->ml}, 4);
	memcpy(a->popped + a->poplen + 12, it->m, it->ml);
	a->poplen += 12 + it->ml;
}

static int zset_write_fn(struct ht_rmw *r, void *arg)
{
	struct zw *a = arg;
	struct conn *c = a->c;
	struct zv_edit ed;
	const void *old = NULL;
	int enc = ZV_ENC_LISTPACK, rc;
	uint32_t from = 0, to = 0, take = 0;

	if (r->old) {
		if (db_type(r->old) != OBJ_ZSET)
			return -DB_EWRONGTYPE;
		old = ht_entry_val(r->old);
		enc = zv_enc(old);
	} else {
		a->missing = 1;
		if (a->op != ZW_ADD || (a->flags & ZADD_XX))
			return HT_RMW_KEEP;
	}
	zv_edit_init(&ed, old);
	switch (a->op) {
	case ZW_ADD:
		zw_apply_add(c, a, &ed);
		if (a->added < 0) {
			zv_edit_fini(&ed);
			return -E_ZNAN;
		}
		break;
	case ZW_REM:
		for (int j = 2; j < c->argc && ed.live; j++)
			a->deleted += zv_edit_del(&ed, K(j));
		break;
	case ZW_REMRANGE:
		zrange_select(old, &a->q, &from, &to, &take);
		zv_edit_del_range(&ed, from, from + take);
		a->deleted = take;
		break;
	case ZW_POP: {
		uint32_t n = zv_count(old);
		struct zv_item it;

		take = a->count > (long long)n ? n : (uint32_t)a->count;
		for (uint32_t k = 0; k < take; k++) {
			zv_at(old, a->max ? n - 1 - k : k, &it);
			pop_push(a, &it);
		}
		if (a->max)
			zv_edit_del_range(&ed, n - take, n);
		else
			zv_edit_del_range(&ed, 0, take);
		a->deleted = take;
		break;
	}
	}
	if (a->added + a->updated + a->deleted == 0) {
		zv_edit_fini(&ed);
		return HT_RMW_KEEP;
	}
	if (enc == ZV_ENC_LISTPACK &&
	    ((long long)ed.live > db_zset_lp_entries() || !db_zset_lp_fits(ed.maxml)))
		enc = ZV_ENC_SKIPLIST; /* sticky, as Redis never converts back */
	rc = rmw_store(r, &ed, enc);
	a->key_deleted = rc == HT_RMW_DELETE;
	zv_edit_fini(&ed);
	return rc;
}

/* Run @a on key argument @k; 0, or -1 after an error reply. */
static int zset_write(struct conn *c, int k, struct zw *a)
{
	int rc = ht_rmw(db_of(c), K(k), zset_write_fn, a);

	if (rc >= 0) {
		if (a->op == ZW_ADD) /* after publication: a blocked BZPOPMIN may take it */
			block_signal_key(db_of(c), K(k));
		return 0;
	}
	if (rc == -E_ZNAN)
		reply_error(c, ERR_NAN);
	else
		db_reply_ht_err(c, rc);
	return -1;
}

static void zadd_generic(struct conn *c, int argc, int flags)
{
	static const struct {
		const char *name;
		int flag;
	} opts[] = {{"nx", ZADD_NX}, {"xx", ZADD_XX}, {"ch", ZADD_CH},
		    {"incr", ZADD_INCR}, {"gt", ZADD_GT}, {"lt", ZADD_LT}};
	struct zw *a;
	int j = 2, n;

	for (; j < argc; j++) {
		size_t o = 0;

		while (o < sizeof(opts) / sizeof(opts[0]) && !util_strcaseeq(K(j), opts[o].name))
			o++;
		if (o == sizeof(opts) / sizeof(opts[0]))
			break;
		flags |= opts[o].flag;
	}
	n = argc - j;
	if (n == 0 || n % 2) {
		reply_error(c, ERR_SYNTAX);
		return;
	}
	n /= 2;
	if ((flags & ZADD_NX) && (flags & ZADD_XX)) {
		reply_error(c, "XX and NX options at the same time are not compatible");
		return;
	}
	if (((flags & ZADD_GT) && (flags & ZADD_NX)) || ((flags & ZADD_LT) && (flags & ZADD_NX)) ||
	    ((flags & ZADD_GT) && (flags & ZADD_LT))) {
		reply_error(c, "GT, LT, and/or NX options at the same time are not compatible");
		return;
	}
	if ((flags & ZADD_INCR) && n > 1) {
		reply_error(c, "INCR option supports a single increment-element pair");
		return;
	}
	a = xcalloc(1, sizeof(*a));
	a->c = c;
	a->op = ZW_ADD;
	a->flags = flags;
	a->first = j;
	a->scores = xmalloc((size_t)n * sizeof(double));
	for (int k = 0; k < n; k++) {
		if (zv_parse_score(K(j + 2 * k), &a->scores[k]) < 0) {
			reply_error(c, ERR_NOT_FLOAT);
			goto out;
		}
	}
	if (zset_write(c, 1, a) < 0)
		goto out;
	if (a->added || a->updated) {
		SRV_DIRTY(c, a->added + a->updated);
		db_notify(c, NOTIFY_ZSET, (flags & ZADD_INCR) ? "zincr" : "zadd", 1);
	}
	if (flags & ZADD_INCR) {
		if (a->processed)
			reply_double(c, a->newscore);
		else
			reply_null(c);
	} else {
		reply_int(c, (flags & ZADD_CH) ? a->added + a->updated : a->added);
	}
out:
	free(a->scores);
	free(a);
}

void cmd_zadd(struct conn *c, int argc)
{
	zadd_generic(c, argc, 0);
}

void cmd_zincrby(struct conn *c, int argc)
{
	zadd_generic(c, argc, ZADD_INCR);
}

void cmd_zrem(struct conn *c, int argc)
{
	struct zw *a = xcalloc(1, sizeof(*a));

	(void)argc;
	a->c = c;
	a->op = ZW_REM;
	if (zset_write(c, 1, a) == 0) {
		if (a->deleted) {
			SRV_DIRTY(c, a->deleted);
			db_notify(c, NOTIFY_ZSET, "zrem", 1);
			if (a->key_deleted)
				db_notify(c, NOTIFY_GENERIC, "del", 1);
		}
		reply_int(c, a->deleted);
	}
	free(a);
}

static void zremrange_generic(struct conn *c, enum zr_type type, const char *event)
{
	struct zw *a = xcalloc(1, sizeof(*a));

	a->c = c;
	a->op = ZW_REMRANGE;
	a->q.type = type;
	a->q.limit = -1;
	if (type == ZR_RANK) {
		if (get_long(c, 2, &a->q.start) < 0 || get_long(c, 3, &a->q.end) < 0)
			goto out;
	} else if (type == ZR_SCORE) {
		if (parse_srange(c, 2, 3, &a->q.smin, &a->q.smax) < 0)
			goto out;
	} else if (parse_lrange(c, 2, 3, &a->q.lmin, &a->q.lmax) < 0) {
		goto out;
	}
	if (zset_write(c, 1, a) == 0) {
		if (a->deleted) {
			SRV_DIRTY(c, a->deleted);
			db_notify(c, NOTIFY_ZSET, event, 1);
			if (a->key_deleted)
				db_notify(c, NOTIFY_GENERIC, "del", 1);
		}
		reply_int(c, a->deleted);
	}
out:
	free(a);
}

void cmd_zremrangebyrank(struct conn *c, int argc)
{
	(void)argc;
	zremrange_generic(c, ZR_RANK, "zremrangebyrank");
}

void cmd_zremrangebyscore(struct conn *c, int argc)
{
	(void)argc;
	zremrange_generic(c, ZR_SCORE, "zremrangebyscore");
}

void cmd_zremrangebylex(struct conn *c, int argc)
{
	(void)argc;
	zremrange_generic(c, ZR_LEX, "zremrangebylex");
}

/* ---------------------------------------------------------- ZPOP, ZMPOP */

/*
 * Pop up to @count from the first non-empty sorted set among the keys at
 * arguments @k0..@k0+@nk-1 (Redis's genericZpopCommand()): a missing key is
 * skipped, a key of another type is WRONGTYPE.  @emitkey: the reply names
 * the key (ZMPOP); @nested: pairs as arrays; @nil_empty: nothing to pop is
 * a null array, else an empty one.  Each key is popped in one ht_rmw(), so
 * the pop is atomic per key.
 */
static int zpop_generic(struct conn *c, int k0, int nk, int max, long long count, int emitkey,
			int nested, int nil_empty)
{
	struct zw a;

	if (count == 0) { /* ZPOPMIN key 0: the type is still checked */
		int ok;

		zset_of(c, ht_find_rcu(db_of(c), K(k0)), &ok);
		if (ok)
			reply_array(c, 0);
		return 1;
	}
	if (count < 0)
		count = 1;
	for (int k = k0; k < k0 + nk; k++) {
		memset(&a, 0, sizeof(a));
		a.c = c;
		a.op = ZW_POP;
		a.max = max;
		a.count = count;
		if (zset_write(c, k, &a) < 0) {
			free(a.popped);
			return 1;
		}
		if (a.missing)
			continue;
		if (emitkey == 2) { /* BZPOPMIN/BZPOPMAX: key, member, score */
			reply_array(c, 3);
			reply_bulk(c, K(k));
		} else if (emitkey) {
			reply_array(c, 2);
			reply_bulk(c, K(k));
		}
		if (emitkey != 2)
			reply_array(c, nested ? a.deleted : a.deleted * 2);
		for (size_t off = 0; off < a.poplen;) {
			struct zv_item it;
			uint32_t ml;

			memcpy(&it.score, a.popped + off, 8);
			memcpy(&ml, a.popped + off + 8, 4);
			it.ml = ml;
			it.m = a.popped + off + 12;
			off += 12 + ml;
			if (nested)
				reply_array(c, 2);
			reply_bulk(c, it.m, it.ml);
			reply_double(c, it.score);
		}
		free(a.popped);
		SRV_DIRTY(c, a.deleted);
		db_notify(c, NOTIFY_ZSET, max ? "zpopmax" : "zpopmin", k);
		if (a.key_deleted)
			db_notify(c, NOTIFY_GENERIC, "del", k);
		return 1;
	}
	if (nil_empty == 2) /* a blocking pop: the caller decides */
		return 0;
	if (nil_empty)
		reply_null_array(c);
	else
		reply_array(c, 0);
	return 1;
}

static void zpopminmax(struct conn *c, int argc, int max)
{
	long long count = -1;

	if (argc > 3) {
		reply_error(c, ERR_SYNTAX);
		return;
	}
	if (argc == 3) {
		if (!resp_str2ll(K(2), &count) || count < 0) {
			reply_error(c, ERR_POSITIVE);
			return;
		}
	}
	zpop_generic(c, 1, 1, max, count, 0, c->resp > 2 && count != -1, 0);
}

void cmd_zpopmin(struct conn *c, int argc)
{
	zpopminmax(c, argc, 0);
}

void cmd_zpopmax(struct conn *c, int argc)
{
	zpopminmax(c, argc, 1);
}

/* Argument @i as a long in [1, LONG_MAX], else error @msg. */
static int get_positive_nz(struct conn *c, int i, const char *msg, long long *v)
{
	if (!resp_str2ll(K(i), v) || *v < 1) {
		reply_error(c, msg);
		return -1;
	}
	return 0;
}

/* [B]ZMPOP's arguments from @at (numkeys): the direction and count; -1
 * after the error reply. */
static int zmpop_args(struct conn *c, int argc, int at, long long *numkeys, int *max,
		      long long *count)
{
	int where;

	*count = -1;
	if (get_positive_nz(c, at, "numkeys should be greater than 0", numkeys) < 0)
		return -1;
	if (*numkeys > argc - at - 1) {
		reply_error(c, ERR_SYNTAX);
		return -1;
	}
	where = at + 1 + (int)*numkeys;
	if (where >= argc) {
		reply_error(c, ERR_SYNTAX);
		return -1;
	}
	if (util_strcaseeq(K(where), "min")) {
		*max = 0;
	} else if (util_strcaseeq(K(where), "max")) {
		*max = 1;
	} else {
		reply_error(c, ERR_SYNTAX);
		return -1;
	}
	for (int j = where + 1; j < argc; j++) {
		if (*count == -1 && util_strcaseeq(K(j), "count") && j + 1 < argc) {
			j++;
			if (get_positive_nz(c, j, "count should be greater than 0", count) < 0)
				return -1;
		} else {
			reply_error(c, ERR_SYNTAX);
			return -1;
		}
	}
	return 0;
}

void cmd_zmpop(struct conn *c, int argc)
{
	long long numkeys, count;
	int max;

	if (zmpop_args(c, argc, 1, &numkeys, &max, &count) < 0)
		return;
	zpop_generic(c, 2, (int)numkeys, max, count < 0 ? 1 : count, 1, 1, 1);
}

/* ------------------------------------------------ BZPOPMIN BZPOPMAX BZMPOP */

/* The blocking pops (block.h, as the lists' BLPOP): pop as the non-blocking
 * command would; with nothing to pop, block on the keys until a write that
 * may give one a member (ZADD, ZINCRBY, a STORE, RENAME/COPY/MOVE/RESTORE
 * of a sorted set) signals it, the timeout passes or CLIENT UNBLOCK. */
static void bzpop_generic(struct conn *c, int argc, int max)
{
	long long ms;

	if (block_start(c, argc - 1, &ms) < 0)
		return;
	if (zpop_generic(c, 1, argc - 2, max, -1, 2, 0, 2))
		block_end(c);
	else
		block_on_range(c, db_of(c), 1, argc - 2, ms);
}

void cmd_bzpopmin(struct conn *c, int argc)
{
	bzpop_generic(c, argc, 0);
}

void cmd_bzpopmax(struct conn *c, int argc)
{
	bzpop_generic(c, argc, 1);
}

void cmd_bzmpop(struct conn *c, int argc)
{
	long long ms, numkeys, count;
	int max;

	if (block_get_timeout(c, 1, &ms) < 0 || zmpop_args(c, argc, 2, &numkeys, &max, &count) < 0) {
		block_end(c);
		return;
	}
	if (block_unblocked_err(c))
		return;
	if (zpop_generic(c, 3, (int)numkeys, max, count < 0 ? 1 : count, 1, 1, 2))
		block_end(c);
	else
		block_on_range(c, db_of(c), 3, numkeys, ms);
}

/* ----------------------------------------------------------- ZRANDMEMBER */

/* ZRANDMEMBER key count [WITHSCORES], Redis 7.0's cases: a negative count
 * (or 1) draws with repetition, a count at least the size returns the whole
 * set from the highest element down (Redis iterates a sorted set from its
 * tail), a smaller one distinct members (selection sampling, in the set's
 * order). */
static void zrandmember_count(struct conn *c, long long l, int ws)
{
	int ok;
	const void *z = zset_read(c, 1, &ok);
	unsigned long long count = l >= 0 ? (unsigned long long)l : (unsigned long long)-l;
	uint32_t size;
	struct zv_item it;

	if (!ok)
		return;
	if (!z || count == 0) {
		reply_array(c, 0);
		return;
	}
	size = zv_count(z);
	if (l < 0 || count == 1) {
		reply_elems_hdr(c, (long long)count, ws);
		while (count--) {
			zv_at(z, (uint32_t)(db_rand64() % size), &it);
			reply_elem(c, &it, ws);
		}
		return;
	}
	if (count >= size) { /* the whole set, from the top: Redis's zset iterator order */
		reply_elems_hdr(c, size, ws);
		for (uint32_t i = size; i-- > 0;) {
			zv_at(z, i, &it);
			reply_elem(c, &it, ws);
		}
		return;
	}
	reply_elems_hdr(c, (long long)count, ws);
	for (uint32_t i = 0, left = size; count && i < size; i++, left--) {
		if (count == left || db_rand64() % left < count) {
			zv_at(z, i, &it);
			reply_elem(c, &it, ws);
			count--;
		}
	}
}

void cmd_zrandmember(struct conn *c, int argc)
{
	struct zv_item it;
	const void *z;
	int ok;

	if (argc >= 3) {
		long long l;
		int ws;

		if (db_rand_count_args(c, argc, "withscores", &l, &ws) == 0)
			zrandmember_count(c, l, ws);
		return;
	}
	z = zset_read(c, 1, &ok);
	if (!ok)
		return;
	if (!z) {
		reply_null(c);
		return;
	}
	zv_at(z, (uint32_t)(db_rand64() % zv_count(z)), &it);
	reply_bulk(c, it.m, it.ml);
}

/* ----------------------------------------------------------------- ZSCAN */

/*
 * ZSCAN key cursor [MATCH pattern] [COUNT count].  A listpack-encoded set
 * is returned whole with cursor 0, as Redis does, scores as its listpack
 * holds them (zv_d2string()).  A skiplist-encoded one is walked in the
 * order of its members' hashes (hv_field_hash()): the cursor is the hash to
 * go on from, so every member present for the whole scan is returned
 * exactly once whatever writers do meanwhile; scores as Redis prints a
 * dict's ("%.17Lg").  Each call is O(n log n) (docs/types.md).
 */
struct zs_item {
	uint64_t h;
	struct zv_item it;
};

static int zs_cmp(const void *x, const void *y)
{
	const struct zs_item *a = x, *b = y;

	return a->h < b->h ? -1 : a->h > b->h;
}

void cmd_zscan(struct conn *c, int argc)
{
	unsigned long long cursor;
	long long count = 10;
	const char *pat = NULL;
	size_t plen = 0, n = 0, keep = 0;
	const void *z;
	struct zs_item *it;
	uint64_t next = 0;
	uint32_t size;
	char buf[64];
	int ok, lp;

	if (db_scan_cursor(c, 2, &cursor) < 0)
		return;
	z = zset_read(c, 1, &ok);
	if (!ok)
		return;
	if (!z) {
		reply_raw(c, "*2\r\n$1\r\n0\r\n*0\r\n", 15);
		return;
	}
	for (int j = 3; j < argc; j += 2) {
		int rc = db_scan_opt(c, j, argc, &count, &pat, &plen);

		if (rc < 0)
			return;
		if (rc == 0) {
			reply_error(c, ERR_SYNTAX);
			return;
		}
	}
	size = zv_count(z);
	lp = zv_enc(z) == ZV_ENC_LISTPACK;
	it = xmalloc((size_t)size * sizeof(*it));
	for (uint32_t i = 0; i < size; i++) {
		struct zv_item e;
		uint64_t h;

		zv_at(z, i, &e);
		h = hv_field_hash(e.m, e.ml);
		if (lp || h >= cursor)
			it[n++] = (struct zs_item){h, e};
	}
	if (!lp) {
		qsort(it, n, sizeof(*it), zs_cmp);
		if ((unsigned long long)count < n) {
			size_t k = (size_t)count;

			while (k < n && it[k].h == it[k - 1].h)
				k++;
			if (k < n)
				next = it[k].h;
			n = k;
		}
	}
	for (size_t i = 0; i < n; i++)
		keep += !pat || util_glob_match(pat, plen, it[i].it.m, it[i].it.ml, 0);
	reply_array(c, 2);
	reply_bulk(c, buf, (size_t)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)next));
	reply_array(c, (long long)keep * 2);
	for (size_t i = 0; i < n; i++) {
		int l;

		if (pat && !util_glob_match(pat, plen, it[i].it.m, it[i].it.ml, 0))
			continue;
		reply_bulk(c, it[i].it.m, it[i].it.ml);
		if (lp)
			l = zv_d2string(buf, sizeof(buf), it[i].it.score);
		else if (isinf(it[i].it.score))
			l = snprintf(buf, sizeof(buf), "%s", it[i].it.score > 0 ? "inf" : "-inf");
		else
			l = snprintf(buf, sizeof(buf), "%.17Lg", (long double)it[i].it.score);
		reply_bulk(c, buf, (size_t)l);
	}
	free(it);
}

/* ------------------------------------------ ZUNION ZINTER ZDIFF, STORE */

enum zop { ZOP_UNION, ZOP_INTER, ZOP_DIFF };
enum { AGG_SUM, AGG_MIN, AGG_MAX };

/* One set operation (Redis's zunionInterDiffGenericCommand()). */
struct zsetop {
	struct conn *c;
	enum zop op;
	int store, card;     /* a STORE command (key 0 the destination); ZINTERCARD */
	const char *name;    /* the command's name, for an error */
	int numkeys_at;	     /* argument of numkeys; the keys follow */
	long long nsrc;
	double *weights;
	int agg, withscores;
	long long limit;
	const char *opt_err; /* an option error, replied after the type checks */
	/* out */
	long long n;
	int stored, deleted;
};

/* Parse numkeys and the options; -1 after an error reply.  Option errors
 * are kept in a->opt_err: Redis reports a WRONGTYPE source first. */
static int zsetop_parse(struct conn *c, struct zsetop *a)
{
	long long setnum;
	int j;

	if (get_long(c, a->numkeys_at, &setnum) < 0)
		return -1;
	if (setnum < 1) {
		reply_errorf(c, "at least 1 input key is needed for '%s' command", a->name);
		return -1;
	}
	if (setnum > c->argc - (a->numkeys_at + 1)) {
		reply_error(c, ERR_SYNTAX);
		return -1;
	}
	a->nsrc = setnum;
	a->weights = xmalloc((size_t)setnum * sizeof(double));
	for (long long i = 0; i < setnum; i++)
		a->weights[i] = 1.0;
	j = a->numkeys_at + 1 + (int)setnum;
	while (j < c->argc && !a->opt_err) {
		int remaining = c->argc - j;

		if (a->op != ZOP_DIFF && !a->card && remaining >= setnum + 1 &&
		    util_strcaseeq(K(j), "weights")) {
			j++;
			for (long long i = 0; i < setnum; i++, j++) {
				if (zv_parse_score(K(j), &a->weights[i]) < 0) {
					a->opt_err = "-ERR weight value is not a float";
					break;
				}
			}
		} else if (a->op != ZOP_DIFF && !a->card && remaining >= 2 &&
			   util_strcaseeq(K(j), "aggregate")) {
			j++;
			if (util_strcaseeq(K(j), "sum"))
				a->agg = AGG_SUM;
			else if (util_strcaseeq(K(j), "min"))
				a->agg = AGG_MIN;
			else if (util_strcaseeq(K(j), "max"))
				a->agg = AGG_MAX;
			else
				a->opt_err = ERR_SYNTAX;
			j++;
		} else if (!a->store && !a->card && util_strcaseeq(K(j), "withscores")) {
			j++;
			a->withscores = 1;
		} else if (a->card && remaining >= 2 && util_strcaseeq(K(j), "limit")) {
			j++;
			if (!resp_str2ll(K(j), &a->limit))
				a->opt_err = "-ERR LIMIT can't be negative";
			else if (a->limit < 0)
				a->opt_err = "-ERR LIMIT can't be negative";
			j++;
		} else {
			a->opt_err = ERR_SYNTAX;
		}
	}
	return 0;
}

static void aggregate(double *t, double v, int agg)
{
	if (agg == AGG_SUM) {
		*t += v;
		if (isnan(*t))
			*t = 0.0;
	} else if (agg == AGG_MIN) {
		if (v < *t)
			*t = v;
	} else if (v > *t) {
		*t = v;
	}
}

struct zsrc {
	const void *z; /* NULL: missing (empty) */
	double w;
};

static int zsrc_cmp(const void *x, const void *y)
{
	const struct zsrc *a = x, *b = y;
	uint32_t na = a->z ? zv_count(a->z) : 0, nb = b->z ? zv_count(b->z) : 0;

	return na < nb ? -1 : na > nb;
}

/* The operation over the sources @s[@n] (already type-checked) into @ed (a
 * new set); for ZINTERCARD only the count, in *@card. */
static void zsetop_run(struct zsetop *a, struct zsrc *s, long long n, struct zv_edit *ed,
		       long long *card)
{
	struct zv_item it;
	double cur;

	*card = 0;
	if (a->op != ZOP_DIFF)
		qsort(s, (size_t)n, sizeof(*s), zsrc_cmp);
	if (a->op == ZOP_UNION) {
		for (long long i = 0; i < n; i++) {
			uint32_t cnt = s[i].z ? zv_count(s[i].z) : 0;

			for (uint32_t k = 0; k < cnt; k++) {
				double score;

				zv_at(s[i].z, k, &it);
				score = s[i].w * it.score;
				if (isnan(score))
					score = 0;
				if (zv_edit_get(ed, it.m, it.ml, &cur)) {
					aggregate(&cur, score, a->agg);
					zv_edit_set(ed, it.m, it.ml, cur);
				} else {
					zv_edit_set(ed, it.m, it.ml, score);
				}
			}
		}
		return;
	}
	if (!s[0].z)
		return;
	for (uint32_t k = 0, cnt = zv_count(s[0].z); k < cnt; k++) {
		double score;
		long long j;

		zv_at(s[0].z, k, &it);
		score = a->op == ZOP_DIFF ? it.score : s[0].w * it.score;
		if (isnan(score))
			score = 0;
		for (j = 1; j < n; j++) {
			long p;

			if (a->op == ZOP_INTER && s[j].z == s[0].z) {
				double v = it.score * s[j].w;

				if (isnan(v))
					v = 0;
				aggregate(&score, v, a->agg);
				continue;
			}
			p = s[j].z ? zv_find(s[j].z, it.m, it.ml) : -1;
			if (a->op == ZOP_DIFF) {
				if (p >= 0)
					break;
				continue;
			}
			if (p < 0)
				break;
			{
				double v = zv_score_at(s[j].z, (uint32_t)p) * s[j].w;

				if (isnan(v))
					v = 0;
				aggregate(&score, v, a->agg);
			}
		}
		if (j < n)
			continue;
		if (a->card) {
			(*card)++;
			if (a->limit && *card >= a->limit)
				return;
			continue;
		}
		zv_edit_set(ed, it.m, it.ml, score);
	}
}

/* The sources' entries @es[nsrc]: type-checked into @s; 0, or -1 (a
 * WRONGTYPE source). */
static int zsetop_sources(struct zsetop *a, const struct ht_entry *const *es, struct zsrc *s)
{
	for (long long i = 0; i < a->nsrc; i++) {
		db_hit(a->c, a->numkeys_at + 1 + (int)i, es[i] != NULL);
		if (es[i] && db_type(es[i]) != OBJ_ZSET)
			return -1;
		s[i].z = es[i] ? ht_entry_val(es[i]) : NULL;
		s[i].w = a->weights[i];
	}
	return 0;
}

#define E_ZOPT 1302

static int zsetop_store_fn(struct ht_txn *tx, void *arg)
{
	struct zsetop *a = arg;
	const struct ht_entry **es = xmalloc((size_t)a->nsrc * sizeof(*es));
	struct zsrc *s = xmalloc((size_t)a->nsrc * sizeof(*s));
	struct zv_edit ed;
	long long card;
	int rc;

	for (long long i = 0; i < a->nsrc; i++)
		es[i] = ht_txn_get(tx, (size_t)i + 1);
	if (zsetop_sources(a, es, s) < 0) {
		rc = -DB_EWRONGTYPE;
	} else if (a->opt_err) {
		rc = -E_ZOPT;
	} else {
		zv_edit_init(&ed, NULL);
		zsetop_run(a, s, a->nsrc, &ed, &card);
		a->n = (long long)ed.live;
		rc = txn_store(tx, 0, &ed, &a->stored, &a->deleted);
		zv_edit_fini(&ed);
	}
	free(es);
	free(s);
	return rc;
}

static void zsetop_generic(struct conn *c, enum zop op, int store, int card, const char *name)
{
	struct zsetop a = {0};

	a.c = c;
	a.name = name;
	a.op = op;
	a.store = store;
	a.card = card;
	a.numkeys_at = store ? 2 : 1;
	if (zsetop_parse(c, &a) < 0)
		goto out;
	if (store) {
		int *idx = xmalloc(((size_t)a.nsrc + 1) * sizeof(*idx));
		int rc;

		idx[0] = 1;
		for (long long i = 0; i < a.nsrc; i++)
			idx[i + 1] = 3 + (int)i;
		rc = db_run_txn(c, (size_t)a.nsrc + 1, idx, zsetop_store_fn, &a);
		if (rc >= 0)
			db_signal_if_list(db_of(c), K(1)); /* a blocked BZPOPMIN on the destination */
		free(idx);
		if (rc == -E_ZOPT) {
			reply_error(c, a.opt_err);
		} else if (rc < 0) {
			db_reply_ht_err(c, rc);
		} else {
			reply_int(c, a.n);
			if (a.stored) {
				SRV_DIRTY(c, 1);
				db_notify(c, NOTIFY_ZSET,
					  op == ZOP_UNION   ? "zunionstore"
					  : op == ZOP_INTER ? "zinterstore"
							    : "zdiffstore",
					  1);
			} else if (a.deleted) {
				SRV_DIRTY(c, 1);
				db_notify(c, NOTIFY_GENERIC, "del", 1);
			}
		}
	} else {
		size_t n = (size_t)a.nsrc;
		const void **keys = xmalloc(n * sizeof(*keys));
		size_t *lens = xmalloc(n * sizeof(*lens));
		const struct ht_entry **es = xmalloc(n * sizeof(*es));
		struct zsrc *s = xmalloc(n * sizeof(*s));
		struct zv_edit ed;
		long long cnt;

		for (size_t i = 0; i < n; i++) {
			keys[i] = ARGV(c, a.numkeys_at + 1 + (int)i);
			lens[i] = ARGL(c, a.numkeys_at + 1 + (int)i);
		}
		ht_mfind_rcu(db_of(c), n, keys, lens, es);
		if (zsetop_sources(&a, es, s) < 0) {
			reply_error(c, ERR_WRONGTYPE);
		} else if (a.opt_err) {
			reply_error(c, a.opt_err);
		} else {
			zv_edit_init(&ed, NULL);
			zsetop_run(&a, s, a.nsrc, &ed, &cnt);
			if (card) {
				reply_int(c, cnt);
			} else {
				zv_edit_finish(&ed);
				reply_elems_hdr(c, (long long)ed.live, a.withscores);
				/* finished: the edit's elements are ed.add, sorted */
				for (size_t i = 0; i < ed.nadd; i++)
					reply_elem(c, &ed.add[i], a.withscores);
			}
			zv_edit_fini(&ed);
		}
		free(keys);
		free(lens);
		free(es);
		free(s);
	}
out:
	free(a.weights);
}

void cmd_zunion(struct conn *c, int argc)
{
	(void)argc;
	zsetop_generic(c, ZOP_UNION, 0, 0, "zunion");
}

void cmd_zinter(struct conn *c, int argc)
{
	(void)argc;
	zsetop_generic(c, ZOP_INTER, 0, 0, "zinter");
}

void cmd_zdiff(struct conn *c, int argc)
{
	(void)argc;
	zsetop_generic(c, ZOP_DIFF, 0, 0, "zdiff");
}

void cmd_zunionstore(struct conn *c, int argc)
{
	(void)argc;
	zsetop_generic(c, ZOP_UNION, 1, 0, "zunionstore");
}

void cmd_zinterstore(struct conn *c, int argc)
{
	(void)argc;
	zsetop_generic(c, ZOP_INTER, 1, 0, "zinterstore");
}

void cmd_zdiffstore(struct conn *c, int argc)
{
	(void)argc;
	zsetop_generic(c, ZOP_DIFF, 1, 0, "zdiffstore");
}

void cmd_zintercard(struct conn *c, int argc)
{
	(void)argc;
	zsetop_generic(c, ZOP_INTER, 0, 1, "zintercard");
}
