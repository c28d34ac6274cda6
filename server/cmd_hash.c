/*
 * cmd_hash.c - the hash commands: HSET HSETNX HMSET HGET HMGET HGETALL
 * HKEYS HVALS HLEN HSTRLEN HEXISTS HDEL HINCRBY HINCRBYFLOAT HRANDFIELD
 * HSCAN, and the options hash-max-listpack-entries/-value (and their old
 * ziplist names).
 *
 * A hash is one table entry whose tagged value is hval.h's immutable
 * encoding.  Readers (HGET, HGETALL, ...) parse the entry ht_find_rcu()
 * returned, inside the worker's QSBR read-side section, with no lock: they
 * see the value before or after any write, never half of one.  Writers run
 * under ht_rmw() (the key's stripe mutex): they copy the old value with
 * their change into a new entry, which the table publishes in place of the
 * old one, freed after a grace period (ht.h guarantee 2) - exactly how a
 * string is replaced.  O(n) per write; docs/types.md says what replaces it.
 * Replies follow Redis 7.0.15 byte for byte (tests/server/cases_hash.txt);
 * tortured by tests/server/test_hash.sh.
 */
#define RCU_FLAVOR_QSBR
#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "resp/resp.h"
#include "server/cmd.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/hval.h"
#include "server/notify.h"
#include "server/reply.h"
#include "server/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------- reading */

/* The hash at argument 1 (an access: hit or miss counted), or NULL.  *ok
 * is 0 after a WRONGTYPE reply. */
static const void *hash_read(struct conn *c, int *ok)
{
	const struct ht_entry *e = ht_find_rcu(db_of(c), K(1));

	db_hit(c, 1, e != NULL);
	*ok = 1;
	if (!e)
		return NULL;
	if (db_type(e) != OBJ_HASH) {
		reply_error(c, ERR_WRONGTYPE);
		*ok = 0;
		return NULL;
	}
	return ht_entry_val(e);
}

void cmd_hget(struct conn *c, int argc)
{
	struct hv_pair p;
	int ok;
	const void *h = hash_read(c, &ok);

	(void)argc;
	if (!ok)
		return;
	if (h && hv_find(h, K(2), &p, NULL))
		reply_bulk(c, p.v, p.vl);
	else
		reply_null(c);
}

void cmd_hmget(struct conn *c, int argc)
{
	struct hv_pair p;
	int ok;
	const void *h = hash_read(c, &ok);

	if (!ok)
		return;
	reply_array(c, argc - 2);
	for (int j = 2; j < argc; j++) {
		if (h && hv_find(h, K(j), &p, NULL))
			reply_bulk(c, p.v, p.vl);
		else
			reply_null(c);
	}
}

#define WANT_F 1
#define WANT_V 2

static void getall_generic(struct conn *c, int what)
{
	struct hv_pair p;
	int ok;
	const void *h = hash_read(c, &ok);
	uint32_t n;

	if (!ok)
		return;
	n = h ? hv_count(h) : 0;
	if (what == (WANT_F | WANT_V))
		reply_map(c, n);
	else
		reply_array(c, n);
	for (size_t off = 0; h && hv_next(h, &off, &p);) {
		if (what & WANT_F)
			reply_bulk(c, p.f, p.fl);
		if (what & WANT_V)
			reply_bulk(c, p.v, p.vl);
	}
}

void cmd_hgetall(struct conn *c, int argc)
{
	(void)argc;
	getall_generic(c, WANT_F | WANT_V);
}

void cmd_hkeys(struct conn *c, int argc)
{
	(void)argc;
	getall_generic(c, WANT_F);
}

void cmd_hvals(struct conn *c, int argc)
{
	(void)argc;
	getall_generic(c, WANT_V);
}

void cmd_hlen(struct conn *c, int argc)
{
	int ok;
	const void *h = hash_read(c, &ok);

	(void)argc;
	if (ok)
		reply_int(c, h ? hv_count(h) : 0);
}

void cmd_hstrlen(struct conn *c, int argc)
{
	struct hv_pair p;
	int ok;
	const void *h = hash_read(c, &ok);

	(void)argc;
	if (ok)
		reply_int(c, h && hv_find(h, K(2), &p, NULL) ? (long long)p.vl : 0);
}

void cmd_hexists(struct conn *c, int argc)
{
	struct hv_pair p;
	int ok;
	const void *h = hash_read(c, &ok);

	(void)argc;
	if (ok)
		reply_int(c, h && hv_find(h, K(2), &p, NULL));
}

/* ------------------------------------------------------------- writing */

enum hw_op { HW_SET, HW_SETNX, HW_DEL, HW_INCR, HW_INCRF };

#define E_HNOTINT 1201
#define E_HNOTFLOAT 1202
#define E_HOVERFLOW 1203
#define E_HNAN 1204

/* One write, run by hash_write_fn() under the key's stripe mutex. */
struct hw {
	struct conn *c;
	enum hw_op op;
	long long changed; /* fields created (SET), set (SETNX), deleted (DEL) */
	int modified;	   /* the value changes (an update creates no field) */
	int key_deleted;   /* DEL removed the last field */
	long long by, ires;
	long double fby;
	char num[5200]; /* the new number (INCR, INCRF) */
	size_t numlen;
};

/* Whether the listpack encoding may hold a field or value of @n bytes. */
static int lp_fits(size_t n)
{
	return db_hash_lp_fits(n);
}

/* The changes of @a on @ed; 0 or a negative error. */
static int hw_apply(struct conn *c, struct hw *a, struct hv_edit *ed, int *big)
{
	struct hv_pair p;
	long i;

	switch (a->op) {
	case HW_SET:
		for (int j = 2; j + 1 < c->argc; j += 2) {
			a->changed += hv_edit_set(ed, K(j), K(j + 1));
			a->modified = 1;
			*big |= !lp_fits(ARGL(c, j)) || !lp_fits(ARGL(c, j + 1));
		}
		return 0;
	case HW_SETNX:
		if (hv_edit_find(ed, K(2)) >= 0)
			return 0;
		a->changed = hv_edit_set(ed, K(2), K(3));
		a->modified = 1;
		*big |= !lp_fits(ARGL(c, 2)) || !lp_fits(ARGL(c, 3));
		return 0;
	case HW_DEL:
		for (int j = 2; j < c->argc && ed->live; j++)
			a->changed += hv_edit_del(ed, K(j));
		a->modified = a->changed > 0;
		return 0;
	case HW_INCR: {
		long long v = 0;

		i = hv_edit_find(ed, K(2));
		if (i >= 0) {
			p = ed->ps[i];
			if (!resp_str2ll(p.v, p.vl, &v))
				return -E_HNOTINT;
		}
		if ((a->by < 0 && v < 0 && a->by < LLONG_MIN - v) ||
		    (a->by > 0 && v > 0 && a->by > LLONG_MAX - v))
			return -E_HOVERFLOW;
		a->ires = v + a->by;
		a->numlen = resp_ll2str(a->num, a->ires);
		break;
	}
	case HW_INCRF: {
		long double v = 0;

		i = hv_edit_find(ed, K(2));
		if (i >= 0) {
			p = ed->ps[i];
			if (!util_str2ld(p.v, p.vl, &v))
				return -E_HNOTFLOAT;
		}
		v += a->fby;
		if (isnan(v) || isinf(v))
			return -E_HNAN;
		a->numlen = (size_t)ld2string(a->num, sizeof(a->num), v, 1);
		break;
	}
	}
	hv_edit_set(ed, K(2), a->num, a->numlen);
	*big |= !lp_fits(ARGL(c, 2)) || !lp_fits(a->numlen);
	a->changed = a->modified = 1;
	return 0;
}

static int hash_write_fn(struct ht_rmw *r, void *arg)
{
	struct hw *a = arg;
	struct hv_edit ed;
	const void *old = NULL;
	int enc = HV_ENC_LISTPACK, big = 0, rc;
	size_t n;
	char *dst;

	if (r->old) {
		if (db_type(r->old) != OBJ_HASH)
			return -DB_EWRONGTYPE;
		old = ht_entry_val(r->old);
		enc = hv_enc(old);
	} else if (a->op == HW_DEL) {
		return HT_RMW_KEEP;
	}
	hv_edit_init(&ed, old);
	rc = hw_apply(a->c, a, &ed, &big);
	if (rc < 0 || !a->modified) {
		hv_edit_fini(&ed);
		return rc < 0 ? rc : HT_RMW_KEEP;
	}
	if (ed.live == 0) {
		hv_edit_fini(&ed);
		a->key_deleted = 1;
		return HT_RMW_DELETE;
	}
	if (big || (long long)ed.live > db_hash_lp_entries())
		enc = HV_ENC_HASHTABLE; /* sticky, as Redis never converts back */
	n = hv_edit_size(&ed, enc);
	dst = ht_rmw_alloc(r, n | HT_VAL_TAGGED);
	if (!dst) {
		hv_edit_fini(&ed);
		return n > HT_MAX_VAL_LEN ? -E2BIG : -ENOMEM;
	}
	hv_edit_write(&ed, dst, enc);
	hv_edit_fini(&ed);
	return HT_RMW_STORE;
}

/* Run @a on key argument 1; 0, or -1 after an error reply. */
static int hash_write(struct conn *c, struct hw *a)
{
	int rc = ht_rmw(db_of(c), K(1), hash_write_fn, a);

	if (rc >= 0)
		return 0;
	if (rc == -E_HNOTINT)
		reply_error(c, "hash value is not an integer");
	else if (rc == -E_HNOTFLOAT)
		reply_error(c, "hash value is not a float");
	else if (rc == -E_HOVERFLOW)
		reply_error(c, "increment or decrement would overflow");
	else if (rc == -E_HNAN)
		reply_error(c, "increment would produce NaN or Infinity");
	else
		db_reply_ht_err(c, rc);
	return -1;
}

static void hset_generic(struct conn *c, int argc, int hmset)
{
	struct hw *a;

	if (argc % 2 == 1) {
		reply_errorf(c, "wrong number of arguments for '%s' command",
			     hmset ? "hmset" : "hset");
		return;
	}
	a = xcalloc(1, sizeof(*a));
	a->c = c;
	a->op = HW_SET;
	if (hash_write(c, a) == 0) {
		SRV_DIRTY(c, (argc - 2) / 2);
		db_notify(c, NOTIFY_HASH, "hset", 1);
		if (hmset)
			reply_ok(c);
		else
			reply_int(c, a->changed);
	}
	free(a);
}

void cmd_hset(struct conn *c, int argc)
{
	hset_generic(c, argc, 0);
}

void cmd_hmset(struct conn *c, int argc)
{
	hset_generic(c, argc, 1);
}

void cmd_hsetnx(struct conn *c, int argc)
{
	struct hw *a = xcalloc(1, sizeof(*a));

	(void)argc;
	a->c = c;
	a->op = HW_SETNX;
	if (hash_write(c, a) == 0) {
		if (a->changed) {
			SRV_DIRTY(c, 1);
			db_notify(c, NOTIFY_HASH, "hset", 1);
		}
		reply_int(c, a->changed);
	}
	free(a);
}

void cmd_hdel(struct conn *c, int argc)
{
	struct hw *a = xcalloc(1, sizeof(*a));

	(void)argc;
	a->c = c;
	a->op = HW_DEL;
	if (hash_write(c, a) == 0) {
		if (a->changed) {
			SRV_DIRTY(c, a->changed);
			db_notify(c, NOTIFY_HASH, "hdel", 1);
			if (a->key_deleted)
				db_notify(c, NOTIFY_GENERIC, "del", 1);
		}
		reply_int(c, a->changed);
	}
	free(a);
}

void cmd_hincrby(struct conn *c, int argc)
{
	struct hw *a = xcalloc(1, sizeof(*a));

	(void)argc;
	a->c = c;
	a->op = HW_INCR;
	if (db_get_ll(c, 3, &a->by) == 0 && hash_write(c, a) == 0) {
		SRV_DIRTY(c, 1);
		db_notify(c, NOTIFY_HASH, "hincrby", 1);
		reply_int(c, a->ires);
	}
	free(a);
}

void cmd_hincrbyfloat(struct conn *c, int argc)
{
	struct hw *a = xcalloc(1, sizeof(*a));

	(void)argc;
	a->c = c;
	a->op = HW_INCRF;
	if (!util_str2ld(K(3), &a->fby)) {
		reply_error(c, ERR_NOT_FLOAT);
	} else if (isnan(a->fby) || isinf(a->fby)) {
		reply_error(c, "value is NaN or Infinity");
	} else if (hash_write(c, a) == 0) {
		SRV_DIRTY(c, 1);
		db_notify(c, NOTIFY_HASH, "hincrbyfloat", 1);
		reply_bulk(c, a->num, a->numlen);
	}
	free(a);
}

/* ------------------------------------------------------------ HRANDFIELD */

static void rf_pair(struct conn *c, const struct hv_pair *p, int withvalues)
{
	if (withvalues && c->resp > 2)
		reply_array(c, 2);
	reply_bulk(c, p->f, p->fl);
	if (withvalues)
		reply_bulk(c, p->v, p->vl);
}

/* HRANDFIELD key count [WITHVALUES], as Redis 7.0's cases: a negative count
 * (or 1) draws with repetition, a count at least the size returns the whole
 * hash in order, a smaller one distinct fields (selection sampling, so in
 * the hash's order). */
static void hrandfield_count(struct conn *c, long long l, int withvalues)
{
	int ok;
	const void *h = hash_read(c, &ok);
	unsigned long long count = l >= 0 ? (unsigned long long)l : (unsigned long long)-l;
	uint32_t size;
	struct hv_pair p;

	if (!ok)
		return;
	if (!h || count == 0) {
		reply_array(c, 0);
		return;
	}
	size = hv_count(h);
	if (l < 0 || count == 1) {
		/* the pairs once (O(n)), then each draw O(1) */
		struct hv_pair *all = xmalloc((size_t)size * sizeof(*all));
		uint32_t k = 0;

		for (size_t off = 0; hv_next(h, &off, &all[k]);)
			k++;
		reply_array(c, (long long)(withvalues && c->resp == 2 ? count * 2 : count));
		while (count--)
			rf_pair(c, &all[db_rand64() % size], withvalues);
		free(all);
		return;
	}
	if (count > size)
		count = size;
	reply_array(c, (long long)(withvalues && c->resp == 2 ? count * 2 : count));
	{
		uint32_t left = size;
		unsigned long long need = count;

		for (size_t off = 0; need && hv_next(h, &off, &p); left--) {
			if (db_rand64() % left < need) {
				rf_pair(c, &p, withvalues);
				need--;
			}
		}
	}
}

void cmd_hrandfield(struct conn *c, int argc)
{
	struct hv_pair p;
	const void *h;
	int ok;

	if (argc >= 3) {
		long long l;
		int wv;

		if (db_rand_count_args(c, argc, "withvalues", &l, &wv) == 0)
			hrandfield_count(c, l, wv);
		return;
	}
	h = hash_read(c, &ok);
	if (!ok)
		return;
	if (!h) {
		reply_null(c);
		return;
	}
	hv_at(h, (uint32_t)(db_rand64() % hv_count(h)), &p);
	reply_bulk(c, p.f, p.fl);
}

/* ----------------------------------------------------------------- HSCAN */

/*
 * HSCAN key cursor [MATCH pattern] [COUNT count].  A listpack-encoded hash
 * is returned whole with cursor 0, as Redis does.  A hashtable-encoded one
 * is walked in the order of hv_field_hash(): the cursor is the hash to go
 * on from, so every field present for the whole scan is returned exactly
 * once whatever writers do meanwhile (each call is O(n), docs/types.md).
 */
void cmd_hscan(struct conn *c, int argc)
{
	unsigned long long cursor;
	long long count = 10;
	const char *pat = NULL;
	size_t plen = 0, n = 0;
	const void *h;
	struct hv_scan_item *it;
	struct hv_pair p;
	uint64_t next = 0;
	int ok;

	if (db_scan_cursor(c, 2, &cursor) < 0)
		return;
	h = hash_read(c, &ok);
	if (!ok)
		return;
	if (!h) {
		reply_raw(c, "*2\r\n$1\r\n0\r\n*0\r\n", 15);
		return;
	}
	if (db_scan_opts(c, 3, argc, &count, &pat, &plen) < 0)
		return;
	it = xmalloc((size_t)hv_count(h) * sizeof(*it));
	for (size_t off = 0; hv_next(h, &off, &p);) {
		uint64_t fh = hv_field_hash(p.f, p.fl);

		if (hv_enc(h) == HV_ENC_LISTPACK || fh >= cursor)
			it[n++] = (struct hv_scan_item){fh, p.f, p.v, p.fl, p.vl};
	}
	if (hv_enc(h) == HV_ENC_HASHTABLE)
		n = hv_scan_page(it, n, count, &next);
	db_scan_reply(c, next, it, n, pat, plen);
	free(it);
}
