/*
 * module_keys.c - the Redis 7.0 module API's calls on an open key that holds
 * a list, a hash or a sorted set (docs/modules.md, "Lists, hashes and sorted
 * sets"): ListPush, ListPop, ListGet, ListSet, HashSet, HashGet, ZsetAdd,
 * ZsetIncrby, ZsetRem, ZsetScore and the range iteration (ZsetFirstIn*,
 * ZsetLastIn*, ZsetRange*).
 *
 * Contract: as the rest of module_api.c, every call runs rcukv's own
 * commands for the key through the table (module_key_callv(): LPUSH, RPOP,
 * HSET, ZADD, ZRANGE ...), so a module writes with the table's writers and
 * reads as a client does, and the errno values and return codes are Redis
 * 7.0.15's (src/module.c).  What differs, because rcukv's commands run on
 * every worker at once: a call that is one step in Redis (a HashSet of
 * several fields) is several commands here, each atomic, and a range
 * iteration walks the members the range held when it began (one ZRANGE),
 * where Redis walks the live skiplist under its one thread.
 *
 * Owns: a key's struct mod_zrange (the range's reply), freed by
 * ZsetRangeStop, a new range, or CloseKey (module_zrange_stop()).
 */
#include "server/module.h"

#include "server/util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK 0
#define ERR 1
#define M_WRITE 2
#define RT_STRING 0
#define RT_ERROR 1
#define RT_INTEGER 2
#define RT_ARRAY 3
#define KT_EMPTY 0
#define KT_LIST 2
#define KT_HASH 3
#define KT_ZSET 5
#define LIST_HEAD 0
#define HASH_NX (1 << 0)
#define HASH_XX (1 << 1)
#define HASH_CFIELDS (1 << 2)
#define HASH_EXISTS (1 << 3)
#define HASH_COUNT_ALL (1 << 4)
#define HASH_DELETE ((Str *)(long)1)
#define ZADD_XX (1 << 0)
#define ZADD_NX (1 << 1)
#define ZADD_ADDED (1 << 2)
#define ZADD_UPDATED (1 << 3)
#define ZADD_NOP (1 << 4)
#define ZADD_GT (1 << 5)
#define ZADD_LT (1 << 6)

typedef struct RedisModuleString Str;
typedef struct RedisModuleKey Key;
typedef struct RedisModuleCallReply Reply;

/* A range being iterated: the ZRANGE reply (members, and their scores
 * after each one for a score range) and where the iteration stands. */
struct mod_zrange {
	Reply *r;
	size_t n;   /* members in r */
	int stride; /* 2: member, score; 1: members only (a lex range) */
	long cur;   /* index of the current member; out of [0, n): ended */
};

static Reply *call1(Key *k, const char *cmd, const char *a, size_t al)
{
	return module_key_callv(k, cmd, a ? 1 : 0, &a, &al);
}

static Str *made(Key *k, const char *p, size_t n)
{
	return module_string_made(k->ctx, p, n); /* AutoMemory's when it is on */
}

static int parse_score(const char *p, size_t n, double *out)
{
	char buf[64], *end;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	*out = strtod(buf, &end);
	return *end ? -1 : 0;
}

/* ------------------------------------------------------------------ lists */

/* Why a list call on @k must fail, as Redis's errno (0: it may go on). */
static int list_refuses(Key *k, int empty_ok, int write)
{
	int t;

	if (!k)
		return EINVAL;
	t = module_key_type(k);
	if (t != KT_LIST && !(empty_ok && t == KT_EMPTY))
		return ENOTSUP;
	if (write && !(k->mode & M_WRITE))
		return EBADF;
	return 0;
}

static int api_list_push(Key *k, int where, Str *ele)
{
	Reply *r;
	int ok;

	if ((errno = ele ? list_refuses(k, 1, 1) : EINVAL))
		return ERR;
	r = call1(k, where == LIST_HEAD ? "lpush" : "rpush", ele->ptr, ele->len);
	ok = r && r->type == RT_INTEGER;
	module_reply_free(r);
	if (!ok)
		errno = ENOTSUP; /* the key changed type under us */
	return ok ? OK : ERR;
}

static Str *api_list_pop(Key *k, int where)
{
	Reply *r;
	Str *s = NULL;

	if ((errno = list_refuses(k, 0, 1)))
		return NULL;
	r = call1(k, where == LIST_HEAD ? "lpop" : "rpop", NULL, 0);
	if (r && r->type == RT_STRING)
		s = made(k, r->str, r->len);
	else
		errno = ENOTSUP; /* emptied or retyped by another client meanwhile */
	module_reply_free(r);
	return s;
}

static Str *api_list_get(Key *k, long index)
{
	char buf[32];
	Reply *r;
	Str *s = NULL;

	if ((errno = list_refuses(k, 0, 0)))
		return NULL;
	r = call1(k, "lindex", buf, (size_t)snprintf(buf, sizeof(buf), "%ld", index));
	if (r && r->type == RT_STRING)
		s = made(k, r->str, r->len);
	else
		errno = EDOM;
	module_reply_free(r);
	return s;
}

static int api_list_set(Key *k, long index, Str *value)
{
	char buf[32];
	const char *a[2] = {buf, NULL};
	size_t al[2];
	Reply *r;
	int ok;

	if ((errno = value ? list_refuses(k, 0, 1) : EINVAL))
		return ERR;
	al[0] = (size_t)snprintf(buf, sizeof(buf), "%ld", index);
	a[1] = value->ptr, al[1] = value->len;
	r = module_key_callv(k, "lset", 2, a, al);
	ok = r && r->type == RT_STRING;
	module_reply_free(r);
	if (!ok)
		errno = EDOM;
	return ok ? OK : ERR;
}

/* ------------------------------------------------------------------ hashes */

/* The next field of a HashSet/HashGet argument list (NULL: the end). */
static const char *next_field(va_list *ap, int flags, size_t *len)
{
	if (flags & HASH_CFIELDS) {
		const char *f = va_arg(*ap, const char *);

		*len = f ? strlen(f) : 0;
		return f;
	} else {
		Str *f = va_arg(*ap, Str *);

		*len = f ? f->len : 0;
		return f ? f->ptr : NULL;
	}
}

static int hexists(Key *k, const char *f, size_t fl)
{
	Reply *r = call1(k, "hexists", f, fl);
	int e = r && r->type == RT_INTEGER && r->integer == 1;

	module_reply_free(r);
	return e;
}

static int api_hash_set(Key *k, int flags, ...)
{
	va_list ap;
	const char *f;
	size_t fl;
	int count = 0, t;

	if (!k || (flags & ~(HASH_NX | HASH_XX | HASH_CFIELDS | HASH_COUNT_ALL))) {
		errno = EINVAL;
		return 0;
	}
	t = module_key_type(k);
	if (t != KT_EMPTY && t != KT_HASH) {
		errno = ENOTSUP;
		return 0;
	}
	if (!(k->mode & M_WRITE)) {
		errno = EBADF;
		return 0;
	}
	va_start(ap, flags);
	while ((f = next_field(&ap, flags, &fl))) {
		Str *v = va_arg(ap, Str *);
		Reply *r;

		if (flags & (HASH_NX | HASH_XX)) {
			int e = hexists(k, f, fl);

			if (((flags & HASH_XX) && !e) || ((flags & HASH_NX) && e))
				continue;
		}
		if (v == HASH_DELETE) {
			r = call1(k, "hdel", f, fl);
			if (r && r->type == RT_INTEGER)
				count += (int)r->integer;
		} else {
			const char *a[2] = {f, v->ptr};
			size_t al[2] = {fl, v->len};

			r = module_key_callv(k, "hset", 2, a, al);
			/* HSET answers 1 for a field it added: Redis counts
			 * the ones it updated, or all with COUNT_ALL */
			if (r && r->type == RT_INTEGER)
				count += (flags & HASH_COUNT_ALL) ? 1 : r->integer == 0;
		}
		module_reply_free(r);
	}
	va_end(ap);
	if (count == 0)
		errno = ENOENT;
	return count;
}

static int api_hash_get(Key *k, int flags, ...)
{
	va_list ap;
	const char *f;
	size_t fl;
	int t = module_key_type(k);

	if (t != KT_EMPTY && t != KT_HASH)
		return ERR;
	va_start(ap, flags);
	while ((f = next_field(&ap, flags, &fl))) {
		if (flags & HASH_EXISTS) {
			int *e = va_arg(ap, int *);

			*e = t == KT_HASH && hexists(k, f, fl);
		} else {
			Str **v = va_arg(ap, Str **);
			Reply *r = t == KT_HASH ? call1(k, "hget", f, fl) : NULL;

			*v = r && r->type == RT_STRING ? made(k, r->str, r->len) : NULL;
			module_reply_free(r);
		}
	}
	va_end(ap);
	return OK;
}

/* ------------------------------------------------------------ sorted sets */

static int zscore(Key *k, Str *ele, double *score)
{
	Reply *r = call1(k, "zscore", ele->ptr, ele->len);
	int ok = r && r->type == RT_STRING && parse_score(r->str, r->len, score) == 0;

	module_reply_free(r);
	return ok;
}

static const char *fmt_score(char *buf, size_t n, double d)
{
	if (isinf(d))
		snprintf(buf, n, "%s", d > 0 ? "inf" : "-inf");
	else
		snprintf(buf, n, "%.17g", d);
	return buf;
}

/* ZADD key [XX|NX] [GT|LT] [INCR] score ele: the flags in @fl (in, and
 * what happened, out) as Redis's zsetAdd() reports them. */
static int zadd(Key *k, double score, Str *ele, int *fl, int incr, double *newscore)
{
	char sbuf[64];
	const char *a[6];
	size_t al[6];
	int n = 0, in = fl ? *fl : 0, out = 0, existed;
	double cur = 0, now;
	Reply *r;

	if (!k || !ele || !(k->mode & M_WRITE))
		return ERR;
	if (module_key_type(k) != KT_EMPTY && module_key_type(k) != KT_ZSET)
		return ERR;
	if (isnan(score)) {
		if (fl)
			*fl = 0;
		return ERR;
	}
	existed = zscore(k, ele, &cur);
	if (in & ZADD_XX)
		a[n] = "xx", al[n++] = 2;
	if (in & ZADD_NX)
		a[n] = "nx", al[n++] = 2;
	if (in & ZADD_GT)
		a[n] = "gt", al[n++] = 2;
	if (in & ZADD_LT)
		a[n] = "lt", al[n++] = 2;
	if (incr)
		a[n] = "incr", al[n++] = 4;
	a[n] = fmt_score(sbuf, sizeof(sbuf), score), al[n] = strlen(sbuf), n++;
	a[n] = ele->ptr, al[n++] = ele->len;
	r = module_key_callv(k, "zadd", n, a, al);
	if (!r || r->type == RT_ERROR) { /* a NaN sum, flags ZADD refuses */
		module_reply_free(r);
		if (fl)
			*fl = 0;
		return ERR;
	}
	module_reply_free(r);
	if (!zscore(k, ele, &now))
		out = ZADD_NOP; /* XX on a missing member (or gone meanwhile) */
	else if (!existed)
		out = ZADD_ADDED;
	else if (now != cur)
		out = ZADD_UPDATED;
	else if (in & (ZADD_NX | ZADD_GT | ZADD_LT))
		out = ZADD_NOP; /* NX on a member, GT/LT refusing an equal score */
	if (newscore && out != ZADD_NOP)
		*newscore = now; /* as zsetAdd(): even when the score stayed */
	if (fl)
		*fl = out;
	return OK;
}

static int api_zset_add(Key *k, double score, Str *ele, int *fl)
{
	return zadd(k, score, ele, fl, 0, NULL);
}

static int api_zset_incrby(Key *k, double score, Str *ele, int *fl, double *newscore)
{
	return zadd(k, score, ele, fl, 1, newscore);
}

static int api_zset_rem(Key *k, Str *ele, int *deleted)
{
	Reply *r;
	int t;

	if (!k || !ele || !(k->mode & M_WRITE))
		return ERR;
	t = module_key_type(k);
	if (t != KT_EMPTY && t != KT_ZSET)
		return ERR;
	r = t == KT_ZSET ? call1(k, "zrem", ele->ptr, ele->len) : NULL;
	if (deleted)
		*deleted = r && r->type == RT_INTEGER && r->integer == 1;
	module_reply_free(r);
	return OK;
}

static int api_zset_score(Key *k, Str *ele, double *score)
{
	if (!k || !ele || module_key_type(k) != KT_ZSET)
		return ERR;
	return zscore(k, ele, score) ? OK : ERR;
}

void module_zrange_stop(Key *k)
{
	if (!k || !k->zr)
		return;
	module_reply_free(k->zr->r);
	free(k->zr);
	k->zr = NULL;
}

/* Begin a range with "ZRANGE key min max BYSCORE|BYLEX [WITHSCORES]". */
static int zrange_begin(Key *k, const char *min, size_t minl, const char *max, size_t maxl,
			int lex, int first)
{
	const char *a[4] = {min, max, lex ? "bylex" : "byscore", "withscores"};
	size_t al[4] = {minl, maxl, lex ? 5 : 7, 10};
	struct mod_zrange *z;
	Reply *r;

	if (!k || module_key_type(k) != KT_ZSET)
		return ERR;
	module_zrange_stop(k);
	r = module_key_callv(k, "zrange", lex ? 3 : 4, a, al);
	if (!r || r->type != RT_ARRAY) { /* a bad lex range */
		module_reply_free(r);
		return ERR;
	}
	z = xcalloc(1, sizeof(*z));
	z->r = r;
	z->stride = lex ? 1 : 2;
	z->n = r->len / (size_t)z->stride;
	z->cur = first ? 0 : (long)z->n - 1;
	k->zr = z;
	return OK;
}

static int score_range(Key *k, double min, double max, int minex, int maxex, int first)
{
	char lo[72], hi[72];

	lo[0] = '(', hi[0] = '(';
	fmt_score(lo + 1, sizeof(lo) - 1, min);
	fmt_score(hi + 1, sizeof(hi) - 1, max);
	return zrange_begin(k, lo + !minex, strlen(lo + !minex), hi + !maxex, strlen(hi + !maxex),
			    0, first);
}

static int api_zset_first_in_score_range(Key *k, double min, double max, int minex, int maxex)
{
	return score_range(k, min, max, minex, maxex, 1);
}

static int api_zset_last_in_score_range(Key *k, double min, double max, int minex, int maxex)
{
	return score_range(k, min, max, minex, maxex, 0);
}

static int api_zset_first_in_lex_range(Key *k, Str *min, Str *max)
{
	return zrange_begin(k, min->ptr, min->len, max->ptr, max->len, 1, 1);
}

static int api_zset_last_in_lex_range(Key *k, Str *min, Str *max)
{
	return zrange_begin(k, min->ptr, min->len, max->ptr, max->len, 1, 0);
}

static int zr_ended(const Key *k)
{
	return !k || !k->zr || k->zr->cur < 0 || (size_t)k->zr->cur >= k->zr->n;
}

static int api_zset_range_end_reached(Key *k)
{
	return zr_ended(k);
}

static Str *api_zset_range_current_element(Key *k, double *score)
{
	const Reply *m;
	Str *s;

	if (zr_ended(k))
		return NULL;
	m = &k->zr->r->elems[(size_t)k->zr->cur * (size_t)k->zr->stride];
	s = made(k, m->str, m->len);
	if (score && k->zr->stride == 2) {
		if (parse_score(m[1].str, m[1].len, score) != 0)
			*score = 0;
	} else if (score && !zscore(k, s, score)) { /* a lex range: asked for */
		*score = 0;
	}
	return s;
}

static int zr_step(Key *k, long d)
{
	if (zr_ended(k))
		return 0;
	k->zr->cur += d;
	return !zr_ended(k);
}

static int api_zset_range_next(Key *k)
{
	return zr_step(k, 1);
}

static int api_zset_range_prev(Key *k)
{
	return zr_step(k, -1);
}

static void api_zset_range_stop(Key *k)
{
	module_zrange_stop(k);
}

/* ---------------------------------------------------------- the registry */

static const struct mod_api_fn api[] = {
    MOD_API(ListPush, api_list_push),
    MOD_API(ListPop, api_list_pop),
    MOD_API(ListGet, api_list_get),
    MOD_API(ListSet, api_list_set),
    MOD_API(HashSet, api_hash_set),
    MOD_API(HashGet, api_hash_get),
    MOD_API(ZsetAdd, api_zset_add),
    MOD_API(ZsetIncrby, api_zset_incrby),
    MOD_API(ZsetRem, api_zset_rem),
    MOD_API(ZsetScore, api_zset_score),
    MOD_API(ZsetFirstInScoreRange, api_zset_first_in_score_range),
    MOD_API(ZsetLastInScoreRange, api_zset_last_in_score_range),
    MOD_API(ZsetFirstInLexRange, api_zset_first_in_lex_range),
    MOD_API(ZsetLastInLexRange, api_zset_last_in_lex_range),
    MOD_API(ZsetRangeEndReached, api_zset_range_end_reached),
    MOD_API(ZsetRangeCurrentElement, api_zset_range_current_element),
    MOD_API(ZsetRangeNext, api_zset_range_next),
    MOD_API(ZsetRangePrev, api_zset_range_prev),
    MOD_API(ZsetRangeStop, api_zset_range_stop),
};

void *module_keys_api(const char *name)
{
	return module_api_find(api, sizeof(api) / sizeof(api[0]), name);
}
