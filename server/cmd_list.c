/*
 * cmd_list.c - the list commands: LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN
 * LRANGE LINDEX LSET LINSERT LREM LTRIM LPOS LMOVE RPOPLPUSH LMPOP, and the
 * options list-max-listpack-size (list-max-ziplist-size) and
 * list-compress-depth (accepted; lval.h fixes the chunk size).
 *
 * A list is one table entry whose tagged value points to an immutable
 * version (lval.h).  Readers (LRANGE, LINDEX, LLEN, LPOS) walk the version
 * the entry ht_find_rcu() returned points to, inside the worker's QSBR
 * read-side section, with no lock: one command sees one version.  Writers
 * run under ht_rmw() (the key's stripe mutex): they build a new version that
 * shares the chunks they do not change and publish it in a new entry; the old
 * entry, and with it the old root and the chunks only it held, is freed after
 * the grace periods (lv_entry_free(), the table's extern hook).  Popped
 * elements are replied from the old version, which stays valid until the
 * worker's next quiescent state.  LMOVE/RPOPLPUSH run both keys in one
 * ht_txn(), so no reader sees the element in both lists or in neither.
 * Replies follow Redis 7.0.15 byte for byte (tests/server/cases_list.txt);
 * tortured by tests/server/test_list_torture.c.
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
#include "server/lval.h"
#include "server/notify.h"
#include "server/reply.h"
#include "server/util.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LEFT 0
#define RIGHT 1

/* ------------------------------------------------------------- reading */

/* The list at argument @k (an access: hit or miss counted), or NULL.  *ok
 * is 0 after a WRONGTYPE reply. */
static const struct lv_root *list_read(struct conn *c, int k, int *ok)
{
	const struct ht_entry *e = ht_find_rcu(db_of(c), K(k));

	db_hit(c, k, e != NULL);
	*ok = 1;
	if (!e)
		return NULL;
	if (db_type(e) != OBJ_LIST) {
		reply_error(c, ERR_WRONGTYPE);
		*ok = 0;
		return NULL;
	}
	return lv_root_of(ht_entry_val(e));
}

void cmd_llen(struct conn *c, int argc)
{
	int ok;
	const struct lv_root *r = list_read(c, 1, &ok);

	(void)argc;
	if (ok)
		reply_int(c, r ? (long long)r->count : 0);
}

void cmd_lindex(struct conn *c, int argc)
{
	long long idx;
	int ok;
	const struct lv_root *r;
	const char *p;
	size_t n;

	(void)argc;
	r = list_read(c, 1, &ok); /* Redis: the key, its type, then the index */
	if (!ok)
		return;
	if (!r) {
		reply_null(c);
		return;
	}
	if (db_get_ll(c, 2, &idx) < 0)
		return;
	if (idx < 0)
		idx += (long long)r->count;
	if (idx < 0 || (unsigned long long)idx >= r->count) {
		reply_null(c);
		return;
	}
	lv_index(r, (uint64_t)idx, &p, &n);
	reply_bulk(c, p, n);
}

/* Reply elements [@a, @a + @n) of @r. */
static void reply_range(struct conn *c, const struct lv_root *r, uint64_t a, uint64_t n)
{
	struct lv_it it;
	const char *p;
	size_t len;

	reply_array(c, (long long)n);
	if (!n)
		return;
	lv_it_at(&it, r, a);
	for (uint64_t i = 0; i < n && lv_it_next(&it, &p, &len); i++)
		reply_bulk(c, p, len);
}

/* Elements [@a, @b) of @r in reverse order (from b-1 down to a). */
static void reply_range_rev(struct conn *c, const struct lv_root *r, uint64_t a, uint64_t b)
{
	struct lv_rit *it;
	const char *p;
	size_t len;

	reply_array(c, (long long)(b - a));
	if (b == a)
		return;
	it = xmalloc(sizeof(*it));
	lv_rit_at(it, r, b - 1);
	for (uint64_t i = b; i > a && lv_rit_prev(it, &p, &len); i--)
		reply_bulk(c, p, len);
	free(it);
}

/* A walk from the head (@back 0) or the tail: the next element and its
 * index, 0 at the end. */
struct walk {
	int back;
	uint64_t idx, n;
	struct lv_it f;
	struct lv_rit *b;
};

static void walk_init(struct walk *w, const struct lv_root *r, int back)
{
	w->back = back;
	w->n = r->count;
	w->idx = 0;
	if (back) {
		w->b = xmalloc(sizeof(*w->b));
		lv_rit_at(w->b, r, r->count - 1);
	} else {
		w->b = NULL;
		lv_it_at(&w->f, r, 0);
	}
}

static int walk_next(struct walk *w, const char **p, size_t *len, uint64_t *idx)
{
	if (w->idx >= w->n || !(w->back ? lv_rit_prev(w->b, p, len) : lv_it_next(&w->f, p, len)))
		return 0;
	*idx = w->back ? w->n - 1 - w->idx : w->idx;
	w->idx++;
	return 1;
}

static void walk_fini(struct walk *w)
{
	free(w->b);
}

/* Redis's start/stop clamp: [*a, *b) of @len, empty when out of range. */
static void clamp_range(long long start, long long end, uint64_t len, uint64_t *a, uint64_t *b)
{
	long long l = (long long)len;

	if (start < 0)
		start += l;
	if (end < 0)
		end += l;
	if (start < 0)
		start = 0;
	if (start > end || start >= l) {
		*a = *b = 0;
		return;
	}
	if (end >= l)
		end = l - 1;
	*a = (uint64_t)start;
	*b = (uint64_t)end + 1;
}

void cmd_lrange(struct conn *c, int argc)
{
	long long start, end;
	uint64_t a, b;
	int ok;
	const struct lv_root *r;

	(void)argc;
	if (db_get_ll(c, 2, &start) < 0 || db_get_ll(c, 3, &end) < 0)
		return;
	r = list_read(c, 1, &ok);
	if (!ok)
		return;
	if (!r) {
		reply_array(c, 0);
		return;
	}
	clamp_range(start, end, r->count, &a, &b);
	reply_range(c, r, a, b - a);
}

void cmd_lpos(struct conn *c, int argc)
{
	long long rank = 1, count = -1, maxlen = 0, matches = 0;
	int ok;
	const struct lv_root *r;

	for (int j = 3; j < argc; j++) {
		const char *o = ARGV(c, j);
		int more = argc - j - 1;

		if (!strcasecmp(o, "RANK") && more) {
			if (db_get_ll(c, ++j, &rank) < 0)
				return;
			if (rank == 0) {
				reply_error(c, "RANK can't be zero: use 1 to start from the first match, "
					       "2 from the second ... or use negative to start from the "
					       "end of the list");
				return;
			}
		} else if (!strcasecmp(o, "COUNT") && more) {
			if (db_get_ll(c, ++j, &count) < 0)
				return;
			if (count < 0) {
				reply_error(c, "COUNT can't be negative");
				return;
			}
		} else if (!strcasecmp(o, "MAXLEN") && more) {
			if (db_get_ll(c, ++j, &maxlen) < 0)
				return;
			if (maxlen < 0) {
				reply_error(c, "MAXLEN can't be negative");
				return;
			}
		} else {
			reply_error(c, ERR_SYNTAX);
			return;
		}
	}
	r = list_read(c, 1, &ok);
	if (!ok)
		return;
	if (!r) {
		if (count != -1)
			reply_array(c, 0);
		else
			reply_null(c);
		return;
	}
	{
		/* Redis negates a negative rank; LLONG_MIN stays negative there
		 * and matches from the first hit. */
		long long want = count == -1 ? 1 : count;
		long long skip = rank == LLONG_MIN ? 0 : (rank < 0 ? -rank : rank) - 1;
		long long *found = NULL, nf = 0, cap = 0;
		uint64_t n = r->count, seen = 0;
		size_t elen = ARGL(c, 2);
		const char *el = ARGV(c, 2);

		struct walk w;
		const char *p;
		size_t len;
		uint64_t idx;

		(void)n;
		walk_init(&w, r, rank < 0);
		while (walk_next(&w, &p, &len, &idx)) {
			if (maxlen && seen >= (uint64_t)maxlen)
				break;
			seen++;
			if (len != elen || memcmp(p, el, len))
				continue;
			if (skip > 0) {
				skip--;
				continue;
			}
			if (nf == cap) {
				cap = cap ? cap * 2 : 16;
				found = xrealloc(found, (size_t)cap * sizeof(*found));
			}
			found[nf++] = (long long)idx;
			matches++;
			if (want && matches >= want)
				break;
		}
		walk_fini(&w);
		if (count != -1) {
			reply_array(c, nf);
			for (long long i = 0; i < nf; i++)
				reply_int(c, found[i]);
		} else if (nf) {
			reply_int(c, found[0]);
		} else {
			reply_null(c);
		}
		free(found);
	}
}

/* ------------------------------------------------------------- writing */

enum lw_op { LW_PUSH, LW_POP, LW_SET, LW_INSERT, LW_REM, LW_TRIM };

#define E_LNOKEY 1301
#define E_LRANGE 1302

/* One write, run by list_write_fn() under the key's stripe mutex. */
struct lw {
	struct conn *c;
	enum lw_op op;
	int where;		      /* LEFT or RIGHT */
	int xx;			      /* PUSHX: only onto an existing list */
	int pushargs;		      /* PUSH: first element argument (the rest follow) */
	const char *const *elems;     /* PUSH from elsewhere (LMOVE): elements */
	const size_t *elens;
	int nelems;
	long long count, index;	      /* POP count; SET index; REM count */
	long long start, stop;	      /* TRIM */
	int before;		      /* INSERT */
	/* out */
	const struct lv_root *old;    /* the version replaced: replies read it */
	const struct lv_root *nu;     /* the version stored (until the table took it) */
	uint64_t a, b;		      /* POP: popped range [a, b) of old */
	long long res;		      /* new length, removed count, ... */
	int changed, key_deleted, absent;
};

/* PUSH: the new version of @old with @a's elements at its @where end. */
static void build_push(struct lw *a, const struct lv_root *old, struct lv_b *b)
{
	struct conn *c = a->c;
	int n = a->elems ? a->nelems : c->argc - a->pushargs;
	uint64_t cnt = old ? old->count : 0;

	if (a->where == RIGHT) {
		lv_b_range(b, old, 0, cnt, 1);
		for (int i = 0; i < n; i++) {
			if (a->elems)
				lv_b_elem(b, a->elems[i], a->elens[i]);
			else
				lv_b_elem(b, K(a->pushargs + i));
		}
	} else {
		for (int i = n - 1; i >= 0; i--) {
			if (a->elems)
				lv_b_elem(b, a->elems[i], a->elens[i]);
			else
				lv_b_elem(b, K(a->pushargs + i));
		}
		lv_b_range(b, old, 0, cnt, 0);
	}
}

static int eq_arg(const char *p, size_t len, struct conn *c, int j)
{
	return len == ARGL(c, j) && !memcmp(p, ARGV(c, j), len);
}

/* The change of @a on @old (never NULL) into @b; 0 (a->changed says
 * whether there is one) or a negative error. */
static int lw_apply(struct lw *a, const struct lv_root *old, struct lv_b *b)
{
	struct conn *c = a->c;
	uint64_t n = old->count;

	switch (a->op) {
	case LW_PUSH:
		build_push(a, old, b);
		a->changed = 1;
		return 0;
	case LW_POP: {
		uint64_t k = (uint64_t)a->count > n ? n : (uint64_t)a->count;

		if (a->where == LEFT) {
			a->a = 0;
			a->b = k;
			lv_b_range(b, old, k, n, 0);
		} else {
			a->a = n - k;
			a->b = n;
			lv_b_range(b, old, 0, n - k, 0);
		}
		a->changed = k > 0;
		return 0;
	}
	case LW_SET: {
		long long idx = a->index < 0 ? a->index + (long long)n : a->index;

		if (idx < 0 || (uint64_t)idx >= n)
			return -E_LRANGE;
		lv_b_range(b, old, 0, (uint64_t)idx, 0);
		lv_b_elem(b, K(3));
		lv_b_range(b, old, (uint64_t)idx + 1, n, 0);
		a->changed = 1;
		return 0;
	}
	case LW_INSERT: {
		struct lv_it it;
		const char *p;
		size_t len;
		uint64_t i = 0;

		lv_it_at(&it, old, 0);
		for (; lv_it_next(&it, &p, &len); i++)
			if (eq_arg(p, len, c, 3))
				break;
		if (i == n) {
			a->res = -1;
			return 0;
		}
		if (!a->before)
			i++;
		lv_b_range(b, old, 0, i, 0);
		lv_b_elem(b, K(4));
		lv_b_range(b, old, i, n, 0);
		a->changed = 1;
		a->res = (long long)n + 1;
		return 0;
	}
	case LW_REM: {
		/* Walk in the count's direction, marking matches; keep runs. */
		uint64_t removed = 0, limit = a->count < 0 ? (uint64_t)(-(a->count + 1)) + 1
							 : (uint64_t)a->count;
		uint64_t *pos = NULL, np = 0, cap = 0;

		struct walk w;
		const char *p;
		size_t len;
		uint64_t idx;

		walk_init(&w, old, a->count < 0);
		while (walk_next(&w, &p, &len, &idx)) {
			if (limit && removed >= limit)
				break;
			if (!eq_arg(p, len, c, 3))
				continue;
			if (np == cap) {
				cap = cap ? cap * 2 : 16;
				pos = xrealloc(pos, cap * sizeof(*pos));
			}
			pos[np++] = idx;
			removed++;
		}
		walk_fini(&w);
		if (np) {
			uint64_t from = 0;

			if (a->count < 0) /* ascending */
				for (uint64_t i = 0; i < np / 2; i++) {
					uint64_t t = pos[i];

					pos[i] = pos[np - 1 - i];
					pos[np - 1 - i] = t;
				}
			for (uint64_t i = 0; i < np; i++) {
				lv_b_range(b, old, from, pos[i], 0);
				from = pos[i] + 1;
			}
			lv_b_range(b, old, from, n, 0);
			a->changed = 1;
		}
		free(pos);
		a->res = (long long)removed;
		return 0;
	}
	case LW_TRIM: {
		uint64_t lo, hi;

		clamp_range(a->start, a->stop, n, &lo, &hi);
		lv_b_range(b, old, lo, hi, 0);
		a->changed = lo != 0 || hi != n;
		return 0;
	}
	}
	return 0;
}

static int list_write_fn(struct ht_rmw *r, void *arg)
{
	struct lw *a = arg;
	const struct lv_root *old = NULL;
	struct lv_b b;
	char *dst;
	int rc;

	a->old = a->nu = NULL;
	a->changed = a->key_deleted = 0;
	a->absent = !r->old;
	if (r->old) {
		if (db_type(r->old) != OBJ_LIST)
			return -DB_EWRONGTYPE;
		old = lv_root_of(ht_entry_val(r->old));
	} else if (a->op != LW_PUSH || a->xx) {
		return a->op == LW_SET ? -E_LNOKEY : HT_RMW_KEEP;
	}
	a->old = old;
	lv_b_init(&b);
	if (!old) {
		build_push(a, NULL, &b);
		a->changed = 1;
		rc = 0;
	} else {
		rc = lw_apply(a, old, &b);
	}
	if (rc < 0 || !a->changed) {
		lv_b_abort(&b);
		return rc < 0 ? rc : HT_RMW_KEEP;
	}
	a->nu = old ? lv_b_finish_from(&b, old) : lv_b_finish(&b);
	if (!a->nu) {
		a->key_deleted = 1;
		return HT_RMW_DELETE;
	}
	if (a->op == LW_PUSH)
		a->res = (long long)a->nu->count;
	dst = ht_rmw_alloc(r, LV_VLEN);
	if (!dst) {
		lv_root_discard(a->nu, old);
		a->nu = NULL;
		return -ENOMEM;
	}
	lv_write_hdr(dst, a->nu);
	return HT_RMW_STORE;
}

/* Run @a on key argument @k; 0, or -1 after an error reply. */
static int list_write_key(struct conn *c, struct lw *a, const void *key, size_t klen)
{
	int rc = ht_rmw(db_of(c), key, klen, list_write_fn, a);

	if (rc == -ENOMEM && a->nu) /* stored by the callback, refused by the table */
		lv_root_discard(a->nu, a->old);
	if (rc >= 0)
		return 0;
	if (rc == -E_LNOKEY)
		reply_error(c, ERR_NO_KEY);
	else if (rc == -E_LRANGE)
		reply_error(c, "index out of range");
	else
		db_reply_ht_err(c, rc);
	return -1;
}

static int list_write(struct conn *c, struct lw *a)
{
	return list_write_key(c, a, K(1));
}

static void push_generic(struct conn *c, int where, int xx)
{
	struct lw a = {0};

	a.c = c;
	a.op = LW_PUSH;
	a.where = where;
	a.xx = xx;
	a.pushargs = 2;
	if (list_write(c, &a) < 0)
		return;
	if (a.changed) {
		SRV_DIRTY(c, c->argc - 2);
		db_notify(c, NOTIFY_LIST, where == LEFT ? "lpush" : "rpush", 1);
		block_signal_key(db_of(c), K(1)); /* after publication: block.h */
	}
	reply_int(c, a.changed ? a.res : 0);
}

void cmd_lpush(struct conn *c, int argc)
{
	(void)argc;
	push_generic(c, LEFT, 0);
}

void cmd_rpush(struct conn *c, int argc)
{
	(void)argc;
	push_generic(c, RIGHT, 0);
}

void cmd_lpushx(struct conn *c, int argc)
{
	(void)argc;
	push_generic(c, LEFT, 1);
}

void cmd_rpushx(struct conn *c, int argc)
{
	(void)argc;
	push_generic(c, RIGHT, 1);
}

/* Pop up to @count from key argument @k at @where: 1 popped (a->old, a->a,
 * a->b say what), 0 absent or empty, -1 after an error reply. */
static int pop_key(struct conn *c, struct lw *a, int k, int where, long long count)
{
	memset(a, 0, sizeof(*a));
	a->c = c;
	a->op = LW_POP;
	a->where = where;
	a->count = count;
	if (list_write_key(c, a, K(k)) < 0)
		return -1;
	if (!a->changed)
		return 0;
	SRV_DIRTY(c, a->b - a->a);
	db_notify(c, NOTIFY_LIST, where == LEFT ? "lpop" : "rpop", k);
	if (a->key_deleted)
		db_notify(c, NOTIFY_GENERIC, "del", k);
	return 1;
}

/* Reply the popped elements in pop order. */
static void reply_popped(struct conn *c, const struct lw *a)
{
	if (a->where == LEFT)
		reply_range(c, a->old, a->a, a->b - a->a);
	else
		reply_range_rev(c, a->old, a->a, a->b);
}

static void pop_generic(struct conn *c, int argc, int where)
{
	long long count = 1;
	int has = argc == 3, rc, ok;
	struct lw a;
	const struct lv_root *r;

	if (argc > 3) {
		reply_errorf(c, "wrong number of arguments for '%s' command",
			     where == LEFT ? "lpop" : "rpop");
		return;
	}
	if (has && (!resp_str2ll(K(2), &count) || count < 0)) {
		reply_error(c, "value is out of range, must be positive");
		return;
	}
	r = list_read(c, 1, &ok);
	if (!ok)
		return;
	if (!r) {
		if (has)
			reply_null_array(c);
		else
			reply_null(c);
		return;
	}
	if (has && count == 0) {
		reply_array(c, 0);
		return;
	}
	rc = pop_key(c, &a, 1, where, count);
	if (rc < 0)
		return;
	if (rc == 0) { /* emptied by another worker since the lookup */
		if (has)
			reply_null_array(c);
		else
			reply_null(c);
		return;
	}
	if (has) {
		reply_popped(c, &a);
	} else {
		const char *p;
		size_t len;

		lv_index(a.old, a.a, &p, &len);
		reply_bulk(c, p, len);
	}
}

void cmd_lpop(struct conn *c, int argc)
{
	pop_generic(c, argc, LEFT);
}

void cmd_rpop(struct conn *c, int argc)
{
	pop_generic(c, argc, RIGHT);
}

void cmd_lset(struct conn *c, int argc)
{
	struct lw a = {0};

	const struct ht_entry *e = ht_find_rcu(db_of(c), K(1));

	(void)argc;
	/* Redis: the key (no such key), its type, then the index. */
	if (!e) {
		reply_error(c, ERR_NO_KEY);
		return;
	}
	if (db_type(e) != OBJ_LIST) {
		reply_error(c, ERR_WRONGTYPE);
		return;
	}
	if (db_get_ll(c, 2, &a.index) < 0)
		return;
	a.c = c;
	a.op = LW_SET;
	if (list_write(c, &a) < 0)
		return;
	SRV_DIRTY(c, 1);
	db_notify(c, NOTIFY_LIST, "lset", 1);
	block_signal_key(db_of(c), K(1)); /* only wakes what a push missed */
	reply_ok(c);
}

void cmd_linsert(struct conn *c, int argc)
{
	struct lw a = {0};

	(void)argc;
	if (!strcasecmp(ARGV(c, 2), "after")) {
		a.before = 0;
	} else if (!strcasecmp(ARGV(c, 2), "before")) {
		a.before = 1;
	} else {
		reply_error(c, ERR_SYNTAX);
		return;
	}
	a.c = c;
	a.op = LW_INSERT;
	if (list_write(c, &a) < 0)
		return;
	if (a.absent) {
		reply_int(c, 0);
		return;
	}
	if (a.changed) {
		SRV_DIRTY(c, 1);
		db_notify(c, NOTIFY_LIST, "linsert", 1);
	}
	reply_int(c, a.res);
}

void cmd_lrem(struct conn *c, int argc)
{
	struct lw a = {0};

	(void)argc;
	if (db_get_ll(c, 2, &a.count) < 0)
		return;
	a.c = c;
	a.op = LW_REM;
	if (list_write(c, &a) < 0)
		return;
	if (a.changed) {
		SRV_DIRTY(c, a.res);
		db_notify(c, NOTIFY_LIST, "lrem", 1);
		if (a.key_deleted)
			db_notify(c, NOTIFY_GENERIC, "del", 1);
	}
	reply_int(c, a.absent ? 0 : a.res);
}

void cmd_ltrim(struct conn *c, int argc)
{
	struct lw a = {0};

	(void)argc;
	if (db_get_ll(c, 2, &a.start) < 0 || db_get_ll(c, 3, &a.stop) < 0)
		return;
	a.c = c;
	a.op = LW_TRIM;
	if (list_write(c, &a) < 0)
		return;
	if (!a.absent) {
		SRV_DIRTY(c, 1);
		db_notify(c, NOTIFY_LIST, "ltrim", 1);
		if (a.key_deleted)
			db_notify(c, NOTIFY_GENERIC, "del", 1);
	}
	reply_ok(c);
}

/* ------------------------------------------------------------- moving */

/* LMOVE in one transaction over both keys. */
struct mv {
	struct conn *c;
	int wfrom, wto;
	int err;       /* 1 WRONGTYPE */
	int moved;
	struct lw pop; /* pop.old holds the element */
	struct lw push;
	const char *el;
	size_t elen;
};

static int move_fn(struct ht_txn *tx, void *arg)
{
	struct mv *m = arg;
	struct conn *c = m->c;
	const struct ht_entry *src = ht_txn_get(tx, 0), *dst = ht_txn_get(tx, 1);
	const char *el[1];
	size_t el_len[1];
	int rc;

	if (!src)
		return 0;
	if (db_type(src) != OBJ_LIST || (dst && db_type(dst) != OBJ_LIST)) {
		m->err = 1;
		return 0;
	}
	memset(&m->pop, 0, sizeof(m->pop));
	m->pop.c = c;
	m->pop.op = LW_POP;
	m->pop.where = m->wfrom;
	m->pop.count = 1;
	rc = ht_rmw(db_of(c), K(1), list_write_fn, &m->pop);
	if (rc == -ENOMEM && m->pop.nu) /* stored by the callback, refused by the table */
		lv_root_discard(m->pop.nu, m->pop.old);
	if (rc < 0 || !m->pop.changed)
		return 0;
	lv_index(m->pop.old, m->pop.a, &m->el, &m->elen);
	el[0] = m->el;
	el_len[0] = m->elen;
	memset(&m->push, 0, sizeof(m->push));
	m->push.c = c;
	m->push.op = LW_PUSH;
	m->push.where = m->wto;
	m->push.elems = el;
	m->push.elens = el_len;
	m->push.nelems = 1;
	rc = ht_rmw(db_of(c), K(2), list_write_fn, &m->push);
	if (rc < 0) { /* only ENOMEM */
		if (m->push.nu)
			lv_root_discard(m->push.nu, m->push.old);
		return 0;
	}
	m->moved = 1;
	return 0;
}

/* Move one element from key 1's @wfrom end to key 2's @wto end and reply
 * it (nil if key 1 is empty); 1 moved. */
static int list_move(struct conn *c, int wfrom, int wto, int reply_nil)
{
	static const int idx[2] = {1, 2};
	struct mv m;
	int rc;

	memset(&m, 0, sizeof(m));
	m.c = c;
	m.wfrom = wfrom;
	m.wto = wto;
	rc = db_run_txn(c, 2, idx, move_fn, &m);
	if (rc < 0) {
		db_reply_ht_err(c, rc);
		return -1;
	}
	if (m.err) {
		reply_error(c, ERR_WRONGTYPE);
		return -1;
	}
	if (!m.moved) {
		if (reply_nil)
			reply_null(c);
		return 0;
	}
	SRV_DIRTY(c, 1);
	/* Redis's order: the push's event, then the pop's, then del */
	db_notify(c, NOTIFY_LIST, wto == LEFT ? "lpush" : "rpush", 2);
	db_notify(c, NOTIFY_LIST, wfrom == LEFT ? "lpop" : "rpop", 1);
	if (m.pop.key_deleted)
		db_notify(c, NOTIFY_GENERIC, "del", 1);
	block_signal_key(db_of(c), K(2));
	reply_bulk(c, m.el, m.elen);
	return 1;
}

/* LEFT/RIGHT at argument @j into *@w; -1 after a syntax error reply. */
static int list_where(struct conn *c, int j, int *w)
{
	if (!strcasecmp(ARGV(c, j), "left"))
		*w = LEFT;
	else if (!strcasecmp(ARGV(c, j), "right"))
		*w = RIGHT;
	else {
		reply_error(c, ERR_SYNTAX);
		return -1;
	}
	return 0;
}

void cmd_lmove(struct conn *c, int argc)
{
	int wf, wt;

	(void)argc;
	if (list_where(c, 3, &wf) < 0 || list_where(c, 4, &wt) < 0)
		return;
	list_move(c, wf, wt, 1);
}

void cmd_rpoplpush(struct conn *c, int argc)
{
	(void)argc;
	list_move(c, RIGHT, LEFT, 1);
}

/* LMPOP's arguments from @first (numkeys): keys at [first+1, first+1+n),
 * the direction and the count; 0 or -1 after an error reply. */
static int list_mpop_args(struct conn *c, int argc, int first, long long *nkeys, int *where,
		   long long *count)
{
	long long j;

	if (!resp_str2ll(K(first), nkeys) || *nkeys <= 0) {
		reply_error(c, "numkeys should be greater than 0");
		return -1;
	}
	j = first + *nkeys + 1;
	if (*nkeys >= argc || j >= argc) {
		reply_error(c, ERR_SYNTAX);
		return -1;
	}
	if (list_where(c, (int)j, where) < 0)
		return -1;
	*count = -1;
	for (j++; j < argc; j++) {
		if (*count == -1 && !strcasecmp(ARGV(c, (int)j), "count") && j + 1 < argc) {
			j++;
			if (!resp_str2ll(K((int)j), count) || *count <= 0) {
				reply_error(c, "count should be greater than 0");
				return -1;
			}
		} else {
			reply_error(c, ERR_SYNTAX);
			return -1;
		}
	}
	if (*count == -1)
		*count = 1;
	return 0;
}

/* Pop from the first non-empty list of keys [@k0, @k0 + @n) and reply
 * [key, [elements]]: 1 done, 0 all empty (nothing replied), -1 error. */
static int list_mpop_keys(struct conn *c, int k0, int n, int where, long long count)
{
	for (int k = k0; k < k0 + n; k++) {
		struct lw a;
		int rc = pop_key(c, &a, k, where, count);

		if (rc < 0)
			return -1;
		if (rc == 0)
			continue;
		reply_array(c, 2);
		reply_bulk(c, K(k));
		reply_popped(c, &a);
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------ blocking */

static void bpop_generic(struct conn *c, int argc, int where)
{
	long long ms;

	if (block_start(c, argc - 1, &ms) < 0)
		return;
	for (int k = 1; k < argc - 1; k++) {
		struct lw a;
		int rc = pop_key(c, &a, k, where, 1);
		const char *p;
		size_t len;

		if (rc < 0) {
			block_end(c);
			return;
		}
		if (rc == 0)
			continue;
		lv_index(a.old, a.a, &p, &len);
		reply_array(c, 2);
		reply_bulk(c, K(k));
		reply_bulk(c, p, len);
		block_end(c);
		return;
	}
	block_on_range(c, db_of(c), 1, argc - 2, ms);
}

void cmd_blpop(struct conn *c, int argc)
{
	bpop_generic(c, argc, LEFT);
}

void cmd_brpop(struct conn *c, int argc)
{
	bpop_generic(c, argc, RIGHT);
}

static void bmove_generic(struct conn *c, int wf, int wt, int tj)
{
	static const int src[1] = {1};
	long long ms;
	int rc;

	if (block_get_timeout(c, tj, &ms) < 0) {
		block_end(c);
		return;
	}
	if (block_unblocked_err(c))
		return;
	rc = list_move(c, wf, wt, 0);
	if (rc != 0) { /* moved and replied, or an error replied */
		block_end(c);
		return;
	}
	block_wait_or_nil(c, db_of(c), 1, src, ms, 1);
}

void cmd_blmove(struct conn *c, int argc)
{
	int wf, wt;

	(void)argc;
	if (list_where(c, 3, &wf) < 0 || list_where(c, 4, &wt) < 0) {
		block_end(c);
		return;
	}
	bmove_generic(c, wf, wt, 5);
}

void cmd_brpoplpush(struct conn *c, int argc)
{
	(void)argc;
	bmove_generic(c, RIGHT, LEFT, 3);
}

void cmd_blmpop(struct conn *c, int argc)
{
	long long ms, n, count;
	int where, rc;

	if (block_get_timeout(c, 1, &ms) < 0 || list_mpop_args(c, argc, 2, &n, &where, &count) < 0) {
		block_end(c);
		return;
	}
	if (block_unblocked_err(c))
		return;
	rc = list_mpop_keys(c, 3, (int)n, where, count);
	if (rc != 0) {
		block_end(c);
		return;
	}
	block_on_range(c, db_of(c), 3, n, ms);
}

void cmd_lmpop(struct conn *c, int argc)
{
	long long n, count;
	int where;

	if (list_mpop_args(c, argc, 1, &n, &where, &count) < 0)
		return;
	if (list_mpop_keys(c, 2, (int)n, where, count) == 0)
		reply_null_array(c);
}

/* ------------------------------------------------------------- options */

/* list-max-listpack-size (and its old name), list-compress-depth: accepted
 * and reported as Redis's; the chunk size is lval.h's LV_CHUNK_BYTES (8 KB,
 * the default -2) and chunks are never compressed. */
static _Atomic long long list_max_lp_size = -2, list_compress_depth = 0;

static const struct cfg_opt list_rows[] = {
    {.name = "list-max-listpack-size", .kind = CFG_INT, .mut = CFG_MUTABLE,
     .field = &list_max_lp_size, .min = INT_MIN, .max = INT_MAX, .def = "-2"},
    {.name = "list-max-ziplist-size", .kind = CFG_INT, .mut = CFG_MUTABLE,
     .field = &list_max_lp_size, .min = INT_MIN, .max = INT_MAX, .def = "-2"},
    {.name = "list-compress-depth", .kind = CFG_INT, .mut = CFG_MUTABLE,
     .field = &list_compress_depth, .min = 0, .max = INT_MAX, .def = "0"},
};

static struct cfg_group list_group = {
    "list", list_rows, (int)(sizeof(list_rows) / sizeof(list_rows[0])), NULL, NULL, NULL};
CFG_REGISTER(list_group)
