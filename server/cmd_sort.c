/*
 * cmd_sort.c - SORT and SORT_RO (Redis's src/sort.c): sort the elements of
 * a list, a set or a sorted set, numerically or as strings, by themselves
 * or by weights that BY finds in other keys, take a LIMIT range, GET other
 * keys' values (or hash fields) for each element, and reply them or, with
 * STORE, write them as a list.
 *
 * Concurrency.  SORT and SORT_RO without STORE are readers: they parse the
 * entry ht_find_rcu() returned, inside the worker's QSBR read-side section,
 * with no lock, exactly as LRANGE, SMEMBERS and ZRANGE read theirs; every
 * element pointer stays valid until the command returns.  BY and GET read
 * the keys their patterns name with ht_find_rcu() too (Redis's
 * lookupKeyByPattern(): a lookup that counts a hit or a miss), so each such
 * key is seen as one version of it.  SORT ... STORE runs in one ht_txn()
 * over the destination and the source (db_run_txn(), as LMOVE and
 * ZRANGESTORE do): the source is read and the destination written with both
 * stripes held, so no reader sees a destination made from a source another
 * client changed halfway, or half written.  Its BY/GET lookups run inside
 * that transaction; a lookup from a thread that holds a transaction never
 * waits for another's (ht.c txn_seq_wait()), so two SORT ... STOREs cannot
 * wait for each other.  EXEC and scripts must hold the destination's stripe:
 * cmd_numkeys_range() (cmd.c) finds it, walking the options as
 * sort_parse() does.
 *
 * Replies are Redis 7.0.15's byte for byte (tests/server/cases_sort.txt,
 * run by tests/server/test_sort.sh), with the differences docs/types.md
 * ("SORT") lists: ties that Redis's unstable partial sort (BY with ALPHA
 * and LIMIT) leaves in its own order, and the sorted set Redis converts to
 * the skiplist encoding when it sorts it.
 */
#define RCU_FLAVOR_QSBR
#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "server/block.h"
#include "server/cmd.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/hval.h"
#include "server/lval.h"
#include "server/notify.h"
#include "server/reply.h"
#include "server/script.h"
#include "server/sval.h"
#include "server/util.h"
#include "server/zval.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ERR_SORT_CONV "One or more scores can't be converted into double"

/* A BY or GET pattern, taken apart once (Redis's lookupKeyByPattern() does
 * it per element).  Redis finds '#', '*' and "->" with C string functions,
 * so they count only before the first NUL byte; the lengths are the whole
 * argument's. */
struct sort_pat {
	int hash;	   /* exactly "#": the element itself */
	int star;	   /* 0: no '*' (a constant: no key) */
	size_t pre, post;  /* the key: pre bytes, the element, post bytes */
	const char *p;	   /* the pattern */
	const char *field; /* "->field": a hash field of the key, or NULL */
	size_t fl;
};

static void pat_init(struct sort_pat *s, const char *p, size_t l)
{
	const char *star = strchr(p, '*'), *f;

	memset(s, 0, sizeof(*s));
	s->p = p;
	s->hash = p[0] == '#' && p[1] == '\0';
	if (s->hash || !star)
		return;
	s->star = 1;
	s->pre = (size_t)(star - p);
	f = strstr(star + 1, "->");
	if (f && f[2] != '\0') {
		s->field = f + 2;
		s->fl = l - (size_t)(f - p) - 2;
	}
	s->post = l - (s->pre + 1) - (s->field ? s->fl + 2 : 0);
}

/* The options, as Redis's sortCommandGeneric() parses them. */
struct sort_opts {
	int desc, alpha, dontsort;
	long long lstart, lcount;
	int by;	   /* argument of the last BY, 0 none */
	int store; /* argument of the last STORE's key, 0 none */
	int ngets;
	struct sort_pat bypat;
	struct sort_pat *gets;
};

/* One element to sort.  @p points into the source's value, or into @ib for
 * an intset member; the vector never moves once loaded (the sort orders
 * pointers to it). */
struct sort_el {
	const char *p;
	size_t l;
	double score;
	const char *w; /* ALPHA with BY: the weight, NULL if it has none */
	size_t wl;
	char ib[24];
};

struct sort_res {
	struct sort_el *els;
	struct sort_el **v; /* the order */
	long n;		    /* the vector's length */
	long start, end;    /* the output range of v */
	int conv_err;
};

/* Key-name buffer for the patterns' lookups. */
struct sort_kbuf {
	char *b;
	size_t cap;
};

/*
 * Redis's lookupKeyByPattern(): the value pattern @s names for element
 * @el: 1 with *@v/@vl (pointing into the element or a live entry), or 0
 * when there is none (no '*', a missing key, a key of another type, a
 * missing field).  A key lookup counts a keyspace hit or miss.
 */
static int pat_lookup(struct conn *c, const struct sort_pat *s, struct sort_kbuf *kb,
		      const char *el, size_t ell, const char **v, size_t *vl)
{
	const struct ht_entry *e;
	size_t kl;

	if (s->hash) {
		*v = el;
		*vl = ell;
		return 1;
	}
	if (!s->star)
		return 0;
	kl = s->pre + ell + s->post;
	if (kl > kb->cap) {
		kb->cap = kl * 2;
		kb->b = xrealloc(kb->b, kb->cap);
	}
	memcpy(kb->b, s->p, s->pre);
	memcpy(kb->b + s->pre, el, ell);
	memcpy(kb->b + s->pre + ell, s->p + s->pre + 1, s->post);
	e = ht_find_rcu(db_of(c), kb->b, kl);
	db_hit_key(c, kb->b, kl, e != NULL);
	if (!e)
		return 0;
	if (s->field) {
		struct hv_pair hp;

		if (db_type(e) != OBJ_HASH || !hv_find(ht_entry_val(e), s->field, s->fl, &hp, NULL))
			return 0;
		*v = hp.v;
		*vl = hp.vl;
		return 1;
	}
	if (db_type(e) != OBJ_STRING)
		return 0;
	*v = ht_entry_val(e);
	*vl = ht_entry_vlen(e);
	return 1;
}

/*
 * The options from argument 2 on (SORT_RO: @ro, no STORE).  Redis's rules:
 * ASC, DESC and LIMIT and BY and STORE take the last one given, ALPHA and a
 * BY without '*' (no sorting) stick, an option short of its arguments is a
 * syntax error, LIMIT's numbers are parsed as they come.  0, or -1 after
 * an error reply.
 */
static int sort_parse(struct conn *c, int argc, int ro, struct sort_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->lcount = -1;
	for (int j = 2; j < argc; j++) {
		int left = argc - j - 1;
		const char *a = ARGV(c, j);

		if (!strcasecmp(a, "asc")) {
			o->desc = 0;
		} else if (!strcasecmp(a, "desc")) {
			o->desc = 1;
		} else if (!strcasecmp(a, "alpha")) {
			o->alpha = 1;
		} else if (!strcasecmp(a, "limit") && left >= 2) {
			if (db_get_ll(c, j + 1, &o->lstart) < 0 || db_get_ll(c, j + 2, &o->lcount) < 0)
				return -1;
			j += 2;
		} else if (!ro && !strcasecmp(a, "store") && left >= 1) {
			o->store = ++j;
		} else if (!strcasecmp(a, "by") && left >= 1) {
			o->by = ++j;
			if (!strchr(ARGV(c, j), '*'))
				o->dontsort = 1;
		} else if (!strcasecmp(a, "get") && left >= 1) {
			o->ngets++;
			j++;
		} else {
			reply_error(c, ERR_SYNTAX);
			return -1;
		}
	}
	if (o->by)
		pat_init(&o->bypat, ARGV(c, o->by), ARGL(c, o->by));
	if (o->ngets) {
		int g = 0;

		o->gets = xmalloc((size_t)o->ngets * sizeof(*o->gets));
		/* the GETs in order: their arguments follow a "get" the loop
		 * above accepted, so the same walk finds them again */
		for (int j = 2; j < argc; j++) {
			const char *a = ARGV(c, j);

			if (!strcasecmp(a, "limit"))
				j += 2;
			else if ((!ro && !strcasecmp(a, "store")) || !strcasecmp(a, "by"))
				j++;
			else if (!strcasecmp(a, "get")) {
				j++;
				pat_init(&o->gets[g++], ARGV(c, j), ARGL(c, j));
			}
		}
	}
	return 0;
}

/* A C string copy of @p (Redis's strtod and strcoll stop at a NUL). */
static int sort_strtod(const char *p, size_t l, double *d)
{
	char stack[64], *s = l < sizeof(stack) ? stack : xmalloc(l + 1), *end;
	int ok;

	memcpy(s, p, l);
	s[l] = '\0';
	errno = 0;
	*d = strtod(s, &end);
	ok = end[0] == '\0' && errno != ERANGE && !isnan(*d);
	if (s != stack)
		free(s);
	return ok;
}

/* strcoll() in the C locale (the server never sets LC_COLLATE): strcmp()
 * of the bytes up to the first NUL. */
static int coll(const char *a, size_t al, const char *b, size_t bl)
{
	size_t n = al < bl ? al : bl;

	for (size_t i = 0; i < n; i++) {
		unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];

		if (x != y || x == 0)
			return x != y ? (x < y ? -1 : 1) : 0;
	}
	if (al == bl)
		return 0;
	/* the shorter ends first: a NUL, unless the longer has a NUL there */
	return al < bl ? (b[n] ? -1 : 0) : (a[n] ? 1 : 0);
}

struct sort_cmp {
	int desc, alpha, by, store;
};

/* Redis's sortCompare(). */
static int sort_cmp(const struct sort_cmp *k, const struct sort_el *a, const struct sort_el *b)
{
	int cmp;

	if (!k->alpha) {
		if (a->score > b->score)
			cmp = 1;
		else if (a->score < b->score)
			cmp = -1;
		else
			cmp = zv_mcmp(a->p, a->l, b->p, b->l);
	} else if (k->by) {
		if (!a->w || !b->w)
			cmp = a->w == b->w ? 0 : (!a->w ? -1 : 1);
		else if (k->store)
			cmp = zv_mcmp(a->w, a->wl, b->w, b->wl);
		else
			cmp = coll(a->w, a->wl, b->w, b->wl);
	} else if (k->store) {
		cmp = zv_mcmp(a->p, a->l, b->p, b->l);
	} else {
		cmp = coll(a->p, a->l, b->p, b->l);
	}
	return k->desc ? -cmp : cmp;
}

/* A stable merge sort, as glibc's qsort() (a merge sort whenever it can
 * allocate) orders ties: in their input order. */
static void msort(const struct sort_cmp *k, struct sort_el **v, struct sort_el **tmp, long n)
{
	long h = n / 2, i = 0, j = h, o = 0;

	if (n < 2)
		return;
	msort(k, v, tmp, h);
	msort(k, v + h, tmp, n - h);
	while (i < h && j < n)
		tmp[o++] = sort_cmp(k, v[i], v[j]) <= 0 ? v[i++] : v[j++];
	while (i < h)
		tmp[o++] = v[i++];
	memcpy(v, tmp, (size_t)o * sizeof(*v));
}

/* Load the vector: @from..@from+@n of the source in its order (reverse for
 * @rev; a list or a sorted set), or the whole of it. */
static void load_list(const void *val, long from, long n, int rev, struct sort_el *els)
{
	const struct lv_root *r = lv_root_of(val);
	long j = 0;

	if (n <= 0)
		return;
	if (rev) {
		struct lv_rit *it = xmalloc(sizeof(*it));

		lv_rit_at(it, r, r->count - 1 - (uint64_t)from);
		while (j < n && lv_rit_prev(it, &els[j].p, &els[j].l))
			j++;
		free(it);
	} else {
		struct lv_it it;

		lv_it_at(&it, r, (uint64_t)from);
		while (j < n && lv_it_next(&it, &els[j].p, &els[j].l))
			j++;
	}
}

static void load_zset(const void *val, long from, long n, int rev, struct sort_el *els)
{
	uint32_t cnt = zv_count(val);

	for (long j = 0; j < n; j++) {
		struct zv_item it;

		zv_at(val, rev ? cnt - 1 - (uint32_t)(from + j) : (uint32_t)(from + j), &it);
		els[j].p = it.m;
		els[j].l = it.ml;
	}
}

static void load_set(const void *val, struct sort_el *els)
{
	size_t off = 0;
	struct sv_mem m;
	long j = 0;

	while (sv_next(val, &off, &m)) {
		if (m.p == m.buf) {
			memcpy(els[j].ib, m.buf, m.l);
			els[j].p = els[j].ib;
		} else {
			els[j].p = m.p;
		}
		els[j].l = m.l;
		j++;
	}
}

/*
 * The body of sortCommandGeneric(): the elements of @e (NULL: an empty
 * list) in the output's order, v[start..end].  -1 when @e is of another
 * type (nothing replied).
 */
static int sort_run(struct conn *c, struct sort_opts *o, const struct ht_entry *e,
		    struct sort_kbuf *kb, struct sort_res *res)
{
	int type = e ? db_type(e) : OBJ_LIST;
	const void *val = e ? ht_entry_val(e) : NULL;
	int dontsort = o->dontsort, alpha = o->alpha, by = o->by;
	long vlen, start, end, cnt;
	struct sort_cmp k;

	memset(res, 0, sizeof(*res));
	if (type != OBJ_LIST && type != OBJ_SET && type != OBJ_ZSET)
		return -1;
	/* A set has no order of its own: sorted as strings when the result
	 * is stored or a script reads it (so replicas and AOF agree). */
	if (dontsort && type == OBJ_SET && (o->store || script_in_call())) {
		dontsort = 0;
		alpha = 1;
		by = 0;
	}
	vlen = !val ? 0
	       : type == OBJ_LIST ? (long)lv_root_of(val)->count
	       : type == OBJ_SET  ? (long)sv_count(val)
				  : (long)zv_count(val);
	/* LIMIT, clamped as Redis clamps it */
	start = o->lstart < 0 ? 0 : o->lstart > vlen ? vlen : (long)o->lstart;
	cnt = o->lcount < -1 ? -1 : o->lcount > vlen ? vlen : (long)o->lcount;
	end = cnt < 0 ? vlen - 1 : start + cnt - 1;
	if (start >= vlen) {
		start = vlen - 1;
		end = vlen - 2;
	}
	if (end >= vlen)
		end = vlen - 1;
	res->n = vlen;
	/* a list or sorted set that is not sorted: just the range, in its
	 * order (DESC: from its end) */
	if (type != OBJ_SET && dontsort && (start != 0 || end != vlen - 1))
		res->n = end - start + 1;
	res->els = xmalloc((size_t)(res->n ? res->n : 1) * sizeof(*res->els));
	res->v = xmalloc((size_t)(res->n ? res->n : 1) * sizeof(*res->v));
	for (long j = 0; j < res->n; j++) {
		res->els[j].score = 0;
		res->els[j].w = NULL;
		res->v[j] = &res->els[j];
	}
	if (type == OBJ_SET) {
		load_set(val, res->els);
	} else if (dontsort) {
		if (end >= start || type == OBJ_ZSET) {
			if (val)
				(type == OBJ_LIST ? load_list : load_zset)(val, start, res->n, o->desc,
									   res->els);
			end -= start;
			start = 0;
		}
	} else if (val) {
		(type == OBJ_LIST ? load_list : load_zset)(val, 0, res->n, 0, res->els);
	}
	res->start = start;
	res->end = end;
	if (dontsort)
		return 0;
	for (long j = 0; j < res->n; j++) {
		struct sort_el *x = &res->els[j];
		const char *w = x->p;
		size_t wl = x->l;

		if (by && !pat_lookup(c, &o->bypat, kb, x->p, x->l, &w, &wl))
			continue;
		if (alpha) {
			if (by) {
				x->w = w;
				x->wl = wl;
			}
		} else if (!sort_strtod(w, wl, &x->score)) {
			res->conv_err = 1;
		}
	}
	k = (struct sort_cmp){o->desc, alpha, by != 0, o->store != 0};
	if (res->n > 1) {
		struct sort_el **tmp = xmalloc((size_t)res->n * sizeof(*tmp));

		msort(&k, res->v, tmp, res->n);
		free(tmp);
	}
	return 0;
}

static void sort_res_free(struct sort_res *res)
{
	free(res->els);
	free(res->v);
}

/* The reply's or the stored list's length. */
static long out_len(const struct sort_opts *o, const struct sort_res *r)
{
	long n = r->end - r->start + 1;

	return o->ngets ? o->ngets * n : n;
}

static void sort_reply(struct conn *c, struct sort_opts *o, struct sort_res *r, struct sort_kbuf *kb)
{
	reply_array(c, out_len(o, r));
	for (long j = r->start; j <= r->end; j++) {
		const struct sort_el *x = r->v[j];

		if (!o->ngets)
			reply_bulk(c, x->p, x->l);
		for (int g = 0; g < o->ngets; g++) {
			const char *v;
			size_t vl;

			if (pat_lookup(c, &o->gets[g], kb, x->p, x->l, &v, &vl))
				reply_bulk(c, v, vl);
			else
				reply_null(c);
		}
	}
}

/* SORT ... STORE: key 0 of the transaction is the destination, key 1 the
 * source. */
struct sort_store {
	struct conn *c;
	struct sort_opts *o;
	struct sort_kbuf *kb;
	long n;	     /* the reply */
	int conv_err;
	int stored;  /* the destination was written */
	int deleted; /* the destination was deleted (empty result) */
};

static int store_fn(struct ht_txn *tx, void *arg)
{
	struct sort_store *a = arg;
	const struct ht_entry *e = ht_txn_get(tx, 1);
	struct sort_res r;
	struct lv_b b;
	char hdr[LV_HDR];
	const struct lv_root *root;
	int rc = 0;

	a->stored = a->deleted = a->conv_err = 0;
	a->n = 0;
	db_hit(a->c, 1, e != NULL);
	if (sort_run(a->c, a->o, e, a->kb, &r) < 0)
		return -DB_EWRONGTYPE;
	if (r.conv_err) {
		a->conv_err = 1;
		sort_res_free(&r);
		return 0;
	}
	a->n = out_len(a->o, &r);
	if (a->n == 0) {
		a->deleted = ht_txn_del(tx, 0) == 0;
		sort_res_free(&r);
		return 0;
	}
	lv_b_init(&b);
	for (long j = r.start; j <= r.end; j++) {
		const struct sort_el *x = r.v[j];

		if (!a->o->ngets)
			lv_b_elem(&b, x->p, x->l);
		for (int g = 0; g < a->o->ngets; g++) {
			const char *v = "";
			size_t vl = 0;

			pat_lookup(a->c, &a->o->gets[g], a->kb, x->p, x->l, &v, &vl);
			lv_b_elem(&b, v, vl);
		}
	}
	root = lv_b_finish(&b);
	lv_write_hdr(hdr, root);
	rc = ht_txn_set(tx, 0, hdr, LV_VLEN, HT_NO_EXPIRE);
	if (rc < 0)
		lv_root_put(root); /* not stored: the reference is ours */
	else
		a->stored = 1;
	sort_res_free(&r);
	return rc;
}

static void sort_generic(struct conn *c, int argc, int ro)
{
	struct sort_opts o;
	struct sort_kbuf kb = {0};

	if (sort_parse(c, argc, ro, &o) < 0)
		goto out;
	if (o.store) {
		int idx[2] = {o.store, 1}, rc;
		struct sort_store a = {.c = c, .o = &o, .kb = &kb};

		rc = db_run_txn(c, 2, idx, store_fn, &a);
		if (rc < 0) {
			db_reply_ht_err(c, rc);
			goto out;
		}
		if (a.conv_err) {
			reply_error(c, ERR_SORT_CONV);
			goto out;
		}
		if (a.stored) {
			SRV_DIRTY(c, a.n);
			db_notify(c, NOTIFY_LIST, "sortstore", o.store);
			db_signal_if_list(db_of(c), K(o.store)); /* a blocked BLPOP on it */
		} else if (a.deleted) {
			SRV_DIRTY(c, 1);
			db_notify(c, NOTIFY_GENERIC, "del", o.store);
		}
		reply_int(c, a.n);
	} else {
		const struct ht_entry *e = ht_find_rcu(db_of(c), K(1));
		struct sort_res r;

		db_hit(c, 1, e != NULL);
		if (sort_run(c, &o, e, &kb, &r) < 0) {
			reply_error(c, ERR_WRONGTYPE);
			goto out;
		}
		if (r.conv_err)
			reply_error(c, ERR_SORT_CONV);
		else
			sort_reply(c, &o, &r, &kb);
		sort_res_free(&r);
	}
out:
	free(o.gets);
	free(kb.b);
}

void cmd_sort(struct conn *c, int argc)
{
	sort_generic(c, argc, 0);
}

void cmd_sort_ro(struct conn *c, int argc)
{
	sort_generic(c, argc, 1);
}
