/*
 * cmd_set.c - the set commands: SADD SREM SMEMBERS SISMEMBER SMISMEMBER
 * SCARD SPOP SRANDMEMBER SMOVE SINTER SINTERCARD SINTERSTORE SUNION
 * SUNIONSTORE SDIFF SDIFFSTORE SSCAN (Redis's src/t_set.c group).
 *
 * A set is one table entry whose tagged value is sval.h's immutable
 * encoding, exactly as a hash is hval.h's (cmd_hash.c).  Readers parse the
 * entry ht_find_rcu() (or ht_mfind_rcu(), for several keys at one moment)
 * returned, inside the worker's QSBR read-side section, with no lock.
 * Single-key writers (SADD SREM SPOP) run under ht_rmw() on the key's
 * stripe; the multi-key writers (SMOVE and the STORE forms) run under
 * ht_txn() over every key they name, destination first, so each is wholly
 * before or after any reader's lookup of those keys (ht.h guarantee 9).  A
 * writer copies the old value with its change into a new entry, the old
 * freed after a grace period.  O(n) per write (docs/types.md).  Replies
 * follow Redis 7.0.15 byte for byte where Redis fixes the order
 * (tests/server/cases_set.txt, test_set.sh); tortured by
 * tests/server/test_set_torture.c.
 */
#define RCU_FLAVOR_QSBR
#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "resp/resp.h"
#include "server/cmd.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/db_set.h"
#include "server/hval.h"
#include "server/notify.h"
#include "server/reply.h"
#include "server/sval.h"
#include "server/util.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local uint64_t rnd;

static uint64_t rnd_next(void)
{
	if (!rnd)
		rnd = (uint64_t)util_ustime() ^ (uint64_t)(uintptr_t)&rnd;
	rnd ^= rnd << 13;
	rnd ^= rnd >> 7;
	rnd ^= rnd << 17;
	return rnd;
}

/* ------------------------------------------------------------- a pool */

struct sw_str {
	const char *p;
	size_t l;
};

/* Strings copied out of intset members (or out of a value the caller will
 * not keep): blocks that never move, so the pointers handed out stay valid
 * until pool_free(). */
struct pool {
	char *blk;
	size_t used, size;
	char **all;
	size_t n;
};

static const char *pool_dup(struct pool *p, const char *s, size_t l)
{
	char *d;

	if (!p->blk || p->used + l > p->size) {
		p->size = l > 4096 ? l : 4096;
		p->blk = xmalloc(p->size);
		p->used = 0;
		p->all = xrealloc(p->all, (p->n + 1) * sizeof(*p->all));
		p->all[p->n++] = p->blk;
	}
	d = p->blk + p->used;
	if (l)
		memcpy(d, s, l);
	p->used += l;
	return d;
}

static void pool_free(struct pool *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->all[i]);
	free(p->all);
	memset(p, 0, sizeof(*p));
}

/* ------------------------------------------------------------- reading */

/* The set at argument @kidx (an access: hit or miss counted), or NULL.
 * *ok is 0 after a WRONGTYPE reply. */
static const void *set_read(struct conn *c, int kidx, int *ok)
{
	const struct ht_entry *e = ht_find_rcu(db_of(c), K(kidx));

	db_hit(c, kidx, e != NULL);
	*ok = 1;
	if (!e)
		return NULL;
	if (db_type(e) != OBJ_SET) {
		reply_error(c, ERR_WRONGTYPE);
		*ok = 0;
		return NULL;
	}
	return ht_entry_val(e);
}

static void reply_members(struct conn *c, const void *s)
{
	struct sv_mem m;

	reply_set(c, s ? sv_count(s) : 0);
	for (size_t off = 0; s && sv_next(s, &off, &m);)
		reply_bulk(c, m.p, m.l);
}

void cmd_smembers(struct conn *c, int argc)
{
	int ok;
	const void *s = set_read(c, 1, &ok);

	(void)argc;
	if (ok)
		reply_members(c, s);
}

void cmd_sismember(struct conn *c, int argc)
{
	int ok;
	const void *s = set_read(c, 1, &ok);

	(void)argc;
	if (ok)
		reply_int(c, s && sv_has(s, K(2)));
}

void cmd_smismember(struct conn *c, int argc)
{
	int ok;
	const void *s = set_read(c, 1, &ok);

	if (!ok)
		return;
	reply_array(c, argc - 2);
	for (int j = 2; j < argc; j++)
		reply_int(c, s && sv_has(s, K(j)));
}

void cmd_scard(struct conn *c, int argc)
{
	int ok;
	const void *s = set_read(c, 1, &ok);

	(void)argc;
	if (ok)
		reply_int(c, s ? sv_count(s) : 0);
}

/* ------------------------------------------------------------- writing */

enum sw_op { SW_ADD, SW_REM, SW_POP };

/* One single-key write, run by set_write_fn() under the key's stripe. */
struct sw {
	struct conn *c;
	enum sw_op op;
	unsigned long long count; /* SPOP's count */
	int with_count;
	long long changed;	  /* members added (ADD), removed (REM, POP) */
	int key_deleted;	  /* the last member went */
	int missing;		  /* no such key */
	/* SPOP's members, copied (the old value may go once we return) */
	struct pool pool;
	struct sw_str *out;
	size_t nout;
};

/* Store @ed (live > 0) with encoding @enc as the rmw's new value. */
static int store_edit(struct ht_rmw *r, const struct sv_edit *ed, int enc)
{
	size_t n = sv_edit_size(ed, enc);
	char *dst = ht_rmw_alloc(r, n | HT_VAL_TAGGED);

	if (!dst)
		return n > HT_MAX_VAL_LEN ? -E2BIG : -ENOMEM;
	sv_edit_write(ed, dst, enc);
	return HT_RMW_STORE;
}

/* The encoding of a set built from scratch with @ed's live members (Redis
 * 7.0's setTypeCreate() then setTypeAdd() of each). */
static int fresh_enc(const struct sv_edit *ed)
{
	return ed->nonint || (long long)ed->live > db_set_max_intset() ? SV_ENC_HASHTABLE
								      : SV_ENC_INTSET;
}

static void out_add(struct sw *a, const char *p, size_t l)
{
	if ((a->nout & (a->nout - 1)) == 0 || a->nout == 0)
		a->out = xrealloc(a->out, (a->nout ? a->nout * 2 : 1) * sizeof(*a->out));
	a->out[a->nout++] = (struct sw_str){pool_dup(&a->pool, p, l), l};
}

/* SPOP under the stripe: Redis 7.0's cases.  A count of at least the size
 * pops the whole set (replied in its order); otherwise @count distinct
 * random members go, and when the few that stay are picked instead (Redis's
 * case 3: remaining * 5 <= count) the rest is a new set from scratch. */
static int pop_apply(struct sw *a, struct sv_edit *ed, int old_enc, struct ht_rmw *r)
{
	size_t size = ed->live;
	unsigned long long count = a->with_count ? a->count : 1;

	if (count >= size) {
		for (size_t i = 0; i < ed->n; i++)
			out_add(a, ed->ms[i].p, ed->ms[i].l);
		a->changed = (long long)size;
		a->key_deleted = 1;
		return HT_RMW_DELETE;
	}
	{
		size_t *ix = xmalloc(size * sizeof(*ix));
		size_t remaining = size - (size_t)count;
		int enc = old_enc;

		for (size_t i = 0; i < size; i++)
			ix[i] = i;
		for (size_t i = 0; i < count; i++) { /* partial Fisher-Yates */
			size_t j = i + (size_t)(rnd_next() % (size - i)), t = ix[i];

			ix[i] = ix[j];
			ix[j] = t;
		}
		for (size_t i = 0; i < count; i++) {
			const struct sv_m *m = &ed->ms[ix[i]];

			out_add(a, m->p, m->l);
			sv_edit_rem(ed, m->p, m->l);
		}
		free(ix);
		if (a->with_count && remaining * 5 <= count)
			enc = fresh_enc(ed);
		a->changed = (long long)count;
		return store_edit(r, ed, enc);
	}
}

static int set_write_fn(struct ht_rmw *r, void *arg)
{
	struct sw *a = arg;
	struct conn *c = a->c;
	struct sv_edit ed;
	const void *old = NULL;
	int old_enc = -1, rc;

	/* a fresh start, should the table run us again */
	pool_free(&a->pool);
	a->nout = 0;
	a->changed = a->key_deleted = a->missing = 0;
	if (r->old) {
		if (db_type(r->old) != OBJ_SET)
			return -DB_EWRONGTYPE;
		old = ht_entry_val(r->old);
		old_enc = sv_enc(old);
	} else if (a->op != SW_ADD) {
		a->missing = 1;
		return HT_RMW_KEEP;
	}
	if (a->op == SW_POP && a->with_count && a->count == 0)
		return HT_RMW_KEEP;
	sv_edit_init(&ed, old);
	switch (a->op) {
	case SW_ADD:
		for (int j = 2; j < c->argc; j++)
			a->changed += sv_edit_add(&ed, K(j));
		rc = a->changed ? store_edit(r, &ed, sv_edit_enc(&ed, old_enc, db_set_max_intset()))
				: HT_RMW_KEEP;
		break;
	case SW_REM:
		for (int j = 2; j < c->argc && ed.live; j++)
			a->changed += sv_edit_rem(&ed, K(j));
		if (!a->changed) {
			rc = HT_RMW_KEEP;
		} else if (ed.live == 0) {
			a->key_deleted = 1;
			rc = HT_RMW_DELETE;
		} else {
			rc = store_edit(r, &ed, old_enc);
		}
		break;
	case SW_POP:
	default:
		rc = pop_apply(a, &ed, old_enc, r);
		break;
	}
	sv_edit_fini(&ed);
	return rc;
}

/* Run @a on key argument 1; 0, or -1 after an error reply. */
static int set_write(struct conn *c, struct sw *a)
{
	int rc = ht_rmw(db_of(c), K(1), set_write_fn, a);

	if (rc >= 0)
		return 0;
	db_reply_ht_err(c, rc);
	return -1;
}

static void sw_free(struct sw *a)
{
	pool_free(&a->pool);
	free(a->out);
	free(a);
}

/* SADD and SREM: the count of members added or removed; @event announced
 * when it is not 0, then "del" if the last member went. */
static void add_rem(struct conn *c, enum sw_op op, const char *event)
{
	struct sw *a = xcalloc(1, sizeof(*a));

	a->c = c;
	a->op = op;
	if (set_write(c, a) == 0) {
		if (a->changed) {
			SRV_DIRTY(c, a->changed);
			db_notify(c, NOTIFY_SET, event, 1);
			if (a->key_deleted)
				db_notify(c, NOTIFY_GENERIC, "del", 1);
		}
		reply_int(c, a->changed);
	}
	sw_free(a);
}

void cmd_sadd(struct conn *c, int argc)
{
	(void)argc;
	add_rem(c, SW_ADD, "sadd");
}

void cmd_srem(struct conn *c, int argc)
{
	(void)argc;
	add_rem(c, SW_REM, "srem");
}

void cmd_spop(struct conn *c, int argc)
{
	struct sw *a;

	if (argc > 3) {
		reply_error(c, ERR_SYNTAX);
		return;
	}
	a = xcalloc(1, sizeof(*a));
	a->c = c;
	a->op = SW_POP;
	if (argc == 3) {
		long long l;

		if (!resp_str2ll(K(2), &l) || l < 0) {
			reply_error(c, "value is out of range, must be positive");
			sw_free(a);
			return;
		}
		a->with_count = 1;
		a->count = (unsigned long long)l;
	}
	if (set_write(c, a) == 0) {
		if (a->missing || (a->with_count && a->count == 0)) {
			if (a->with_count)
				reply_set(c, 0);
			else
				reply_null(c);
		} else {
			SRV_DIRTY(c, a->changed);
			db_notify(c, NOTIFY_SET, "spop", 1);
			if (a->key_deleted)
				db_notify(c, NOTIFY_GENERIC, "del", 1);
			if (a->with_count)
				reply_set(c, (long long)a->nout);
			for (size_t i = 0; i < a->nout; i++)
				reply_bulk(c, a->out[i].p, a->out[i].l);
		}
	}
	sw_free(a);
}

/* --------------------------------------------------------- SRANDMEMBER */

void cmd_srandmember(struct conn *c, int argc)
{
	struct sv_mem m;
	const void *s;
	long long l;
	unsigned long long count;
	uint32_t size;
	int ok;

	if (argc > 3) {
		reply_error(c, ERR_SYNTAX);
		return;
	}
	if (argc == 2) {
		s = set_read(c, 1, &ok);
		if (!ok)
			return;
		if (!s) {
			reply_null(c);
			return;
		}
		sv_random(s, rnd_next, &m);
		reply_bulk(c, m.p, m.l);
		return;
	}
	if (db_get_ll(c, 2, &l) < 0)
		return;
	if (l < -LLONG_MAX) {
		reply_error(c, "value is out of range, value must between "
			       "-9223372036854775807 and 9223372036854775807");
		return;
	}
	count = l >= 0 ? (unsigned long long)l : (unsigned long long)-l;
	s = set_read(c, 1, &ok);
	if (!ok)
		return;
	if (!s || count == 0) {
		reply_array(c, 0);
		return;
	}
	size = sv_count(s);
	if (l < 0) { /* with repetition */
		reply_array(c, (long long)count);
		while (count--) {
			sv_random(s, rnd_next, &m);
			reply_bulk(c, m.p, m.l);
		}
		return;
	}
	if (count >= size) { /* the whole set, in its order (an intset ascending) */
		reply_array(c, size);
		for (size_t off = 0; sv_next(s, &off, &m);)
			reply_bulk(c, m.p, m.l);
		return;
	}
	/* distinct members: selection sampling, O(n) */
	reply_array(c, (long long)count);
	{
		uint32_t left = size;
		unsigned long long need = count;

		for (size_t off = 0; need && sv_next(s, &off, &m); left--) {
			if (rnd_next() % left < need) {
				reply_bulk(c, m.p, m.l);
				need--;
			}
		}
	}
}

/* --------------------------------------------------------------- SMOVE */

struct smove_arg {
	struct conn *c;
	int result;	 /* the reply: 0 or 1 */
	int moved;	 /* removed from the source */
	int src_deleted; /* the source's last member went */
	int added;	 /* the destination gained the member */
};

static int txn_store(struct ht_txn *tx, size_t i, const struct sv_edit *ed, int enc,
		     int64_t expire_ms)
{
	size_t n = sv_edit_size(ed, enc);
	char *v = xmalloc(n);
	int rc;

	sv_edit_write(ed, v, enc);
	rc = ht_txn_set(tx, i, v, n | HT_VAL_TAGGED, expire_ms);
	free(v);
	return rc;
}

/* Key 0 the source, key 1 the destination. */
static int smove_fn(struct ht_txn *tx, void *arg)
{
	struct smove_arg *a = arg;
	struct conn *c = a->c;
	const struct ht_entry *src = ht_txn_get(tx, 0), *dst = ht_txn_get(tx, 1);
	struct sv_edit es, ed;
	int rc = 0;

	a->result = a->moved = a->src_deleted = a->added = 0;
	if (!src)
		return 0;
	if (db_type(src) != OBJ_SET || (dst && db_type(dst) != OBJ_SET))
		return -DB_EWRONGTYPE;
	if (src == dst || (ARGL(c, 1) == ARGL(c, 2) && memcmp(ARGV(c, 1), ARGV(c, 2), ARGL(c, 1)) == 0)) {
		a->result = sv_has(ht_entry_val(src), K(3));
		return 0;
	}
	if (!sv_has(ht_entry_val(src), K(3)))
		return 0;
	sv_edit_init(&ed, dst ? ht_entry_val(dst) : NULL);
	a->added = sv_edit_add(&ed, K(3));
	sv_edit_init(&es, ht_entry_val(src));
	sv_edit_rem(&es, K(3));
	/* both values are built before either key changes */
	if (es.live == 0) {
		rc = ht_txn_del(tx, 0);
		a->src_deleted = 1;
	} else {
		rc = txn_store(tx, 0, &es, sv_enc(ht_entry_val(src)), ht_entry_expire(src));
	}
	if (rc == 0 && a->added)
		rc = txn_store(tx, 1, &ed,
			       sv_edit_enc(&ed, dst ? sv_enc(ht_entry_val(dst)) : -1, db_set_max_intset()),
			       dst ? ht_entry_expire(dst) : HT_NO_EXPIRE);
	sv_edit_fini(&es);
	sv_edit_fini(&ed);
	if (rc < 0)
		return rc;
	a->result = a->moved = 1;
	return 0;
}

void cmd_smove(struct conn *c, int argc)
{
	static const int idx[2] = {1, 2};
	struct smove_arg a = {c, 0, 0, 0, 0};
	int rc;

	(void)argc;
	rc = db_run_txn(c, 2, idx, smove_fn, &a);
	if (rc < 0) {
		db_reply_ht_err(c, rc);
		return;
	}
	if (a.moved) {
		db_notify(c, NOTIFY_SET, "srem", 1);
		if (a.src_deleted)
			db_notify(c, NOTIFY_GENERIC, "del", 1);
		SRV_DIRTY(c, 1 + a.added);
		if (a.added)
			db_notify(c, NOTIFY_SET, "sadd", 2);
	}
	reply_int(c, a.result);
}

/* ------------------------------------------- SINTER SUNION SDIFF (STORE) */

enum so_op { SO_INTER, SO_UNION, SO_DIFF };

/* Look up @n set values: @e[i] the entries (hits counted in order, as
 * Redis's lookups); 0, or -1 at the first one of another type. */
static int sets_of(struct conn *c, const struct ht_entry *const *e, int first, size_t n,
		   const void **sets)
{
	for (size_t j = 0; j < n; j++) {
		db_hit(c, first + (int)j, e[j] != NULL);
		if (e[j] && db_type(e[j]) != OBJ_SET)
			return -1;
		sets[j] = e[j] ? ht_entry_val(e[j]) : NULL;
	}
	return 0;
}

/* Add member @m to @ed, copying an intset member's string into @p. */
static int ed_add_mem(struct sv_edit *ed, struct pool *p, const void *set, const struct sv_mem *m)
{
	if (sv_enc(set) == SV_ENC_INTSET)
		return sv_edit_add(ed, pool_dup(p, m->p, m->l), m->l);
	return sv_edit_add(ed, m->p, m->l);
}

/*
 * The result of @op over @sets[@n] (NULL: a missing key, an empty set) into
 * @ed (its strings in @p), as Redis 7.0 computes it: SINTER walks the
 * smallest set and keeps what every other holds, stopping at @limit members
 * (0: none); SUNION adds every set; SDIFF takes Redis's cheaper algorithm,
 * which decides the encoding of a stored result (*@enc): algorithm 2 first
 * adds the whole first set.  Members keep the order they were added in.
 */
static void set_op(enum so_op op, const void **sets, size_t n, unsigned long long limit,
		   struct sv_edit *ed, struct pool *p, int *enc)
{
	struct sv_mem m;
	int peak_ht = 0;

	sv_edit_init(ed, NULL);
	if (op == SO_INTER) {
		size_t *ord = xmalloc(n * sizeof(*ord)), first;

		for (size_t j = 0; j < n; j++) {
			if (!sets[j]) {
				free(ord);
				*enc = SV_ENC_INTSET;
				return;
			}
			ord[j] = j;
		}
		for (size_t i = 1; i < n; i++) /* stable, by cardinality */
			for (size_t k = i; k > 0 && sv_count(sets[ord[k - 1]]) > sv_count(sets[ord[k]]); k--) {
				size_t t = ord[k];

				ord[k] = ord[k - 1];
				ord[k - 1] = t;
			}
		first = ord[0];
		for (size_t off = 0; sv_next(sets[first], &off, &m);) {
			size_t j;

			for (j = 1; j < n; j++)
				if (sets[ord[j]] != sets[first] && !sv_has(sets[ord[j]], m.p, m.l))
					break;
			if (j == n) {
				ed_add_mem(ed, p, sets[first], &m);
				if (limit && ed->live >= limit)
					break;
			}
		}
		free(ord);
	} else if (op == SO_UNION) {
		for (size_t j = 0; j < n; j++)
			for (size_t off = 0; sets[j] && sv_next(sets[j], &off, &m);)
				ed_add_mem(ed, p, sets[j], &m);
	} else if (sets[0]) {
		long long one = 0, two = 0;

		for (size_t j = 0; j < n; j++) {
			if (!sets[j])
				continue;
			one += sv_count(sets[0]);
			two += sv_count(sets[j]);
		}
		one /= 2;
		if (one <= two) { /* algorithm 1: each member of the first against the rest */
			for (size_t off = 0; sv_next(sets[0], &off, &m);) {
				size_t j;

				for (j = 1; j < n; j++) {
					if (!sets[j])
						continue;
					if (sets[j] == sets[0] || sv_has(sets[j], m.p, m.l))
						break;
				}
				if (j == n)
					ed_add_mem(ed, p, sets[0], &m);
			}
		} else { /* algorithm 2: the first set, minus every other */
			for (size_t off = 0; sv_next(sets[0], &off, &m);)
				ed_add_mem(ed, p, sets[0], &m);
			peak_ht = fresh_enc(ed) == SV_ENC_HASHTABLE;
			for (size_t j = 1; j < n && ed->live; j++)
				for (size_t off = 0; sets[j] && sv_next(sets[j], &off, &m);)
					sv_edit_rem(ed, m.p, m.l);
		}
	}
	*enc = peak_ht ? SV_ENC_HASHTABLE : fresh_enc(ed);
}

static int cmp_iv(const void *x, const void *y)
{
	const struct sv_m *a = *(const struct sv_m *const *)x, *b = *(const struct sv_m *const *)y;

	return a->iv < b->iv ? -1 : a->iv > b->iv;
}

/* Reply @ed's live members as a set: ascending when @sorted (the result is
 * an intset in Redis), else in their order. */
static void reply_edit(struct conn *c, const struct sv_edit *ed, int sorted)
{
	const struct sv_m **v = xmalloc((ed->n ? ed->n : 1) * sizeof(*v));
	size_t k = 0;

	for (size_t i = 0; i < ed->n; i++)
		if (!ed->ms[i].dead)
			v[k++] = &ed->ms[i];
	if (sorted)
		qsort(v, k, sizeof(*v), cmp_iv);
	reply_set(c, (long long)k);
	for (size_t i = 0; i < k; i++)
		reply_bulk(c, v[i]->p, v[i]->l);
	free(v);
}

/* SINTER SUNION SDIFF SINTERCARD: keys at arguments first..first+n-1, read
 * at one moment (ht_mfind_rcu()). */
static void set_op_read(struct conn *c, enum so_op op, int first, size_t n, int card,
			unsigned long long limit)
{
	const struct ht_entry *stack[16], **e = stack;
	const void *sstack[16], **sets = sstack;
	struct sv_edit ed;
	struct pool p = {0};
	int enc;

	if (n > 16) {
		e = xmalloc(n * sizeof(*e));
		sets = xmalloc(n * sizeof(*sets));
	}
	ht_mfind_rcu(db_of(c), n, (const void *const *)(c->argv + first), c->argl + first, e);
	if (sets_of(c, e, first, n, sets) < 0) {
		reply_error(c, ERR_WRONGTYPE);
	} else {
		set_op(op, sets, n, limit, &ed, &p, &enc);
		if (card)
			reply_int(c, (long long)ed.live);
		else
			reply_edit(c, &ed, op != SO_INTER && enc == SV_ENC_INTSET);
		sv_edit_fini(&ed);
		pool_free(&p);
	}
	if (e != stack) {
		free(e);
		free(sets);
	}
}

void cmd_sinter(struct conn *c, int argc)
{
	set_op_read(c, SO_INTER, 1, (size_t)argc - 1, 0, 0);
}

void cmd_sunion(struct conn *c, int argc)
{
	set_op_read(c, SO_UNION, 1, (size_t)argc - 1, 0, 0);
}

void cmd_sdiff(struct conn *c, int argc)
{
	set_op_read(c, SO_DIFF, 1, (size_t)argc - 1, 0, 0);
}

void cmd_sintercard(struct conn *c, int argc)
{
	long long numkeys, limit = 0;

	/* Redis's getRangeLongFromObjectOrReply() with a message: the same
	 * text for a non-number as for a number out of range */
	if (!resp_str2ll(K(1), &numkeys) || numkeys < 1) {
		reply_error(c, "numkeys should be greater than 0");
		return;
	}
	if (numkeys > argc - 2) {
		reply_error(c, "Number of keys can't be greater than number of args");
		return;
	}
	for (int j = 2 + (int)numkeys; j < argc; j++) {
		if (util_strcaseeq(K(j), "limit") && j + 1 < argc) {
			if (!resp_str2ll(K(j + 1), &limit) || limit < 0) {
				reply_error(c, "LIMIT can't be negative");
				return;
			}
			j++;
		} else {
			reply_error(c, ERR_SYNTAX);
			return;
		}
	}
	set_op_read(c, SO_INTER, 2, (size_t)numkeys, 1, (unsigned long long)limit);
}

struct store_arg {
	struct conn *c;
	enum so_op op;
	size_t nsrc;
	long long card; /* the reply */
	int stored;	/* the destination was written */
	int deleted;	/* the destination was deleted (empty result) */
};

/* Key 0 the destination, keys 1..nsrc the sources. */
static int store_fn(struct ht_txn *tx, void *arg)
{
	struct store_arg *a = arg;
	const struct ht_entry *stack[16], **e = stack;
	const void *sstack[16], **sets = sstack;
	struct sv_edit ed;
	struct pool p = {0};
	int enc, rc = 0;

	a->card = a->stored = a->deleted = 0;
	if (a->nsrc > 16) {
		e = xmalloc(a->nsrc * sizeof(*e));
		sets = xmalloc(a->nsrc * sizeof(*sets));
	}
	for (size_t j = 0; j < a->nsrc; j++)
		e[j] = ht_txn_get(tx, j + 1);
	if (sets_of(a->c, e, 2, a->nsrc, sets) < 0) {
		rc = -DB_EWRONGTYPE;
	} else {
		set_op(a->op, sets, a->nsrc, 0, &ed, &p, &enc);
		a->card = (long long)ed.live;
		if (ed.live) {
			rc = txn_store(tx, 0, &ed, enc, HT_NO_EXPIRE);
			a->stored = rc == 0;
		} else {
			a->deleted = ht_txn_del(tx, 0) == 0;
		}
		sv_edit_fini(&ed);
		pool_free(&p);
	}
	if (e != stack) {
		free(e);
		free(sets);
	}
	return rc;
}

static void store_generic(struct conn *c, int argc, enum so_op op)
{
	static const char *const ev[] = {"sinterstore", "sunionstore", "sdiffstore"};
	struct store_arg a = {c, op, (size_t)argc - 2, 0, 0, 0};
	size_t n = (size_t)argc - 1;
	int *idx = xmalloc(n * sizeof(*idx)), rc;

	for (size_t i = 0; i < n; i++)
		idx[i] = 1 + (int)i;
	rc = db_run_txn(c, n, idx, store_fn, &a);
	free(idx);
	if (rc < 0) {
		db_reply_ht_err(c, rc);
		return;
	}
	if (a.stored) {
		db_notify(c, NOTIFY_SET, ev[op], 1);
	} else if (a.deleted) {
		db_notify(c, NOTIFY_GENERIC, "del", 1);
	}
	SRV_DIRTY(c, 1);
	reply_int(c, a.card);
}

void cmd_sinterstore(struct conn *c, int argc)
{
	store_generic(c, argc, SO_INTER);
}

void cmd_sunionstore(struct conn *c, int argc)
{
	store_generic(c, argc, SO_UNION);
}

void cmd_sdiffstore(struct conn *c, int argc)
{
	store_generic(c, argc, SO_DIFF);
}

/* ----------------------------------------------------------------- SSCAN */

/*
 * SSCAN key cursor [MATCH pattern] [COUNT count].  An intset comes back
 * whole with cursor 0, as Redis does.  A hashtable-encoded set is walked in
 * the order of its members' hv_field_hash(): the cursor is the hash to go
 * on from, so every member present for the whole scan is returned exactly
 * once whatever writers do meanwhile (each call O(n log n), as HSCAN's).
 */
void cmd_sscan(struct conn *c, int argc)
{
	unsigned long long cursor;
	long long count = 10;
	const char *pat = NULL;
	size_t plen = 0, n = 0;
	const void *s;
	struct hv_scan_item *it;
	struct sv_mem m;
	struct pool p = {0};
	uint64_t next = 0;
	int ok, intset;

	if (db_scan_cursor(c, 2, &cursor) < 0)
		return;
	s = set_read(c, 1, &ok);
	if (!ok)
		return;
	if (!s) {
		reply_raw(c, "*2\r\n$1\r\n0\r\n*0\r\n", 15);
		return;
	}
	if (db_scan_opts(c, 3, argc, &count, &pat, &plen) < 0)
		return;
	intset = sv_enc(s) == SV_ENC_INTSET;
	it = xmalloc((size_t)sv_count(s) * sizeof(*it));
	for (size_t off = 0; sv_next(s, &off, &m);) {
		uint64_t h = intset ? 0 : hv_field_hash(m.p, m.l);

		if (intset)
			it[n++] = (struct hv_scan_item){0, pool_dup(&p, m.p, m.l), NULL, m.l, 0};
		else if (h >= cursor)
			it[n++] = (struct hv_scan_item){h, m.p, NULL, m.l, 0};
	}
	if (!intset)
		n = hv_scan_page(it, n, count, &next);
	db_scan_reply(c, next, it, n, pat, plen);
	free(it);
	pool_free(&p);
}
