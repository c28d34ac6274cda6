/*
 * cmd_string.c - the string commands: GET SET SETNX SETEX PSETEX GETSET
 * GETDEL GETEX MGET MSET MSETNX STRLEN INCR DECR INCRBY DECRBY INCRBYFLOAT
 * APPEND SETRANGE GETRANGE (and its old name SUBSTR) LCS.
 *
 * Handlers run on workers, inside their QSBR read-side section: entries
 * found by *_rcu lookups are copied into the reply before the handler
 * returns.  MSET and MSETNX run under ht_txn() (db_run_txn), read-modify-write
 * commands (the INCR family, APPEND, SETRANGE, GETDEL, GETEX) under ht_rmw(),
 * so no client sees half of one and concurrent INCRs lose nothing (ht.h
 * guarantee 2).  Replies follow Redis 7.0 byte for byte
 * (tests/server/cases.txt).
 */
#define RCU_FLAVOR_QSBR
#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "resp/resp.h"
#include "server/bitops.h"
#include "server/cmd.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/notify.h"
#include "server/repl.h"
#include "server/reply.h"
#include "server/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ GET / SET */

void cmd_get(struct conn *c, int argc)
{
	const struct ht_entry *e;

	(void)argc;
	e = ht_find_rcu(db_of(c), K(1));
	db_hit(c, 1, e != NULL);
	if (!db_is_str(c, e))
		return;
	if (e)
		reply_entry_val(c, e);
	else
		reply_null(c);
}

#define SET_NX 0x1
#define SET_XX 0x2
#define SET_GET 0x4
#define SET_KEEPTTL 0x8
#define SET_EX 0x10
#define SET_PX 0x20
#define SET_EXAT 0x40
#define SET_PXAT 0x80
#define SET_PERSIST 0x100

enum { CMD_SET_KIND, CMD_GETEX_KIND };

/*
 * Parse SET / GETEX options starting at argv[first].  On success *flags and
 * *expire (absolute ms, or 0) are set; on error the reply is queued and -1
 * returned.
 */
static int parse_set_opts(struct conn *c, int argc, int first, int kind, const char *cmdname,
			  unsigned *flags, long long *expire)
{
	int exp_arg = -1;

	*flags = 0;
	*expire = 0;
	for (int j = first; j < argc; j++) {
		const char *o = ARGV(c, j);
		size_t ol = ARGL(c, j);
		int more = j < argc - 1;
		unsigned f = *flags;

		if (kind == CMD_SET_KIND && util_strcaseeq(o, ol, "nx") && !(f & (SET_XX))) {
			*flags |= SET_NX;
		} else if (kind == CMD_SET_KIND && util_strcaseeq(o, ol, "xx") && !(f & SET_NX)) {
			*flags |= SET_XX;
		} else if (kind == CMD_SET_KIND && util_strcaseeq(o, ol, "get")) {
			*flags |= SET_GET;
		} else if (kind == CMD_SET_KIND && util_strcaseeq(o, ol, "keepttl") &&
			   !(f & (SET_EX | SET_PX | SET_EXAT | SET_PXAT | SET_PERSIST))) {
			*flags |= SET_KEEPTTL;
		} else if (kind == CMD_GETEX_KIND && util_strcaseeq(o, ol, "persist") &&
			   !(f & (SET_EX | SET_PX | SET_EXAT | SET_PXAT | SET_KEEPTTL))) {
			*flags |= SET_PERSIST;
		} else if ((util_strcaseeq(o, ol, "ex") || util_strcaseeq(o, ol, "px") ||
			    util_strcaseeq(o, ol, "exat") || util_strcaseeq(o, ol, "pxat")) &&
			   !(f &
			     (SET_KEEPTTL | SET_PERSIST | SET_EX | SET_PX | SET_EXAT | SET_PXAT)) &&
			   more) {
			if (util_strcaseeq(o, ol, "ex"))
				*flags |= SET_EX;
			else if (util_strcaseeq(o, ol, "px"))
				*flags |= SET_PX;
			else if (util_strcaseeq(o, ol, "exat"))
				*flags |= SET_EXAT;
			else
				*flags |= SET_PXAT;
			exp_arg = ++j;
		} else {
			reply_error(c, ERR_SYNTAX);
			return -1;
		}
	}
	if (exp_arg >= 0) {
		long long ms;

		if (db_get_ll(c, exp_arg, &ms) < 0)
			return -1;
		if (ms <= 0 || ((*flags & (SET_EX | SET_EXAT)) && ms > LLONG_MAX / 1000)) {
			reply_errorf(c, ERR_EXPIRE_FMT, cmdname);
			return -1;
		}
		if (*flags & (SET_EX | SET_EXAT))
			ms *= 1000;
		if (*flags & (SET_EX | SET_PX))
			ms = wrap_add(ms, util_mstime());
		if (ms <= 0) {
			reply_errorf(c, ERR_EXPIRE_FMT, cmdname);
			return -1;
		}
		*expire = ms;
	}
	return 0;
}

static void set_generic(struct conn *c, int kidx, int vidx, unsigned flags, long long expire,
			int reply_kind)
{
	const struct ht_entry *old = NULL;
	unsigned hf = 0;
	int rc;

	if (flags & SET_NX)
		hf |= HT_SET_NX;
	if (flags & SET_XX)
		hf |= HT_SET_XX;
	if (flags & SET_KEEPTTL)
		hf |= HT_SET_KEEPTTL;
	if (flags & SET_GET) {
		/* as Redis's getGenericCommand() first: a read, and nothing is
		 * set on a key of another type */
		const struct ht_entry *e = ht_find_rcu(db_of(c), K(kidx));

		db_hit(c, kidx, e != NULL);
		if (!db_is_str(c, e))
			return;
	}
	rc = ht_set(db_of(c), K(kidx), K(vidx), expire ? expire : HT_NO_EXPIRE, hf,
		    (flags & SET_GET) ? &old : NULL);
	if (rc < 0 && rc != -EEXIST && rc != -ENOENT) {
		db_reply_ht_err(c, rc);
		return;
	}
	if (rc == 0) {
		SRV_DIRTY(c, 1);
		db_notify(c, NOTIFY_STRING, "set", kidx);
		if (expire)
			db_notify(c, NOTIFY_GENERIC, "expire", kidx);
	}
	if (flags & SET_GET) {
		/* A writer on another worker may have made it a hash between
		 * the check and the set: the set is done, its old value is
		 * no string reply. */
		if (old && db_type(old) != OBJ_STRING)
			reply_error(c, ERR_WRONGTYPE);
		else if (old)
			reply_entry_val(c, old);
		else
			reply_null(c);
		return;
	}
	if (reply_kind == 1) { /* SETNX */
		reply_int(c, rc == 0);
		return;
	}
	if (rc == 0)
		reply_ok(c);
	else
		reply_null(c);
}

void cmd_set(struct conn *c, int argc)
{
	unsigned flags;
	long long expire;

	if (parse_set_opts(c, argc, 3, CMD_SET_KIND, "set", &flags, &expire) < 0)
		return;
	set_generic(c, 1, 2, flags, expire, 0);
}

void cmd_setnx(struct conn *c, int argc)
{
	(void)argc;
	set_generic(c, 1, 2, SET_NX, 0, 1);
}

static void setex_generic(struct conn *c, int seconds, const char *name)
{
	long long t;

	if (db_get_ll(c, 2, &t) < 0)
		return;
	if (t <= 0 || (seconds && t > LLONG_MAX / 1000)) {
		reply_errorf(c, ERR_EXPIRE_FMT, name);
		return;
	}
	if (seconds)
		t *= 1000;
	t = wrap_add(t, util_mstime());
	if (t <= 0) {
		reply_errorf(c, ERR_EXPIRE_FMT, name);
		return;
	}
	{
		int rc = ht_set(db_of(c), K(1), K(3), t, 0, NULL);

		if (rc < 0) {
			db_reply_ht_err(c, rc);
		} else {
			SRV_DIRTY(c, 1);
			db_notify(c, NOTIFY_STRING, "set", 1);
			db_notify(c, NOTIFY_GENERIC, "expire", 1);
			reply_ok(c);
		}
	}
}

void cmd_setex(struct conn *c, int argc)
{
	(void)argc;
	setex_generic(c, 1, "setex");
}

void cmd_psetex(struct conn *c, int argc)
{
	(void)argc;
	setex_generic(c, 0, "psetex");
}

void cmd_getset(struct conn *c, int argc)
{
	(void)argc;
	set_generic(c, 1, 2, SET_GET, 0, 0);
}

/* GETDEL and GETEX: read the value and change the key in one rmw. */
struct getx_arg {
	struct conn *c;
	unsigned flags;
	long long expire;
	int del;
};

static int getx_fn(struct ht_rmw *r, void *argp)
{
	struct getx_arg *a = argp;
	void *buf;

	db_hit(a->c, 1, r->old != NULL);
	if (!r->old) {
		reply_null(a->c);
		return HT_RMW_KEEP;
	}
	if (!db_is_str(a->c, r->old))
		return HT_RMW_KEEP;
	reply_entry_val(a->c, r->old);
	if (a->del)
		return HT_RMW_DELETE;
	if (a->flags & SET_PERSIST) {
		if (ht_entry_expire(r->old) == HT_NO_EXPIRE)
			return HT_RMW_KEEP;
		r->expire_ms = HT_NO_EXPIRE;
	} else if (a->expire) {
		/* on a replica, stored: the master's DEL follows (Redis's
		 * checkAlreadyExpired()) */
		if (a->expire <= util_mstime() && !repl_is_replica())
			return HT_RMW_DELETE;
		r->expire_ms = a->expire;
	} else {
		return HT_RMW_KEEP;
	}
	buf = ht_rmw_alloc(r, ht_entry_vlen(r->old));
	if (!buf)
		return -ENOMEM;
	memcpy(buf, ht_entry_val(r->old), ht_entry_vlen(r->old));
	return HT_RMW_STORE;
}

static void getx_done(struct conn *c, const struct getx_arg *a, int rc)
{
	if (rc < 0) {
		db_reply_ht_err(c, rc);
	} else if (rc == HT_RMW_STORE || rc == HT_RMW_DELETE) {
		SRV_DIRTY(c, 1);
		if (rc == HT_RMW_DELETE)
			db_notify(c, NOTIFY_GENERIC, "del", 1);
		else
			db_notify(c, NOTIFY_GENERIC, (a->flags & SET_PERSIST) ? "persist" : "expire", 1);
	}
}

void cmd_getdel(struct conn *c, int argc)
{
	struct getx_arg a = {c, 0, 0, 1};
	int rc;

	(void)argc;
	rc = ht_rmw(db_of(c), K(1), getx_fn, &a);
	getx_done(c, &a, rc);
}

void cmd_getex(struct conn *c, int argc)
{
	struct getx_arg a = {c, 0, 0, 0};
	int rc;

	if (parse_set_opts(c, argc, 2, CMD_GETEX_KIND, "getex", &a.flags, &a.expire) < 0)
		return;
	if (!a.flags) {
		cmd_get(c, 2);
		return;
	}
	rc = ht_rmw(db_of(c), K(1), getx_fn, &a);
	getx_done(c, &a, rc);
}

/* All keys at one moment: a transaction (EXEC, MSET) on another worker is
 * seen whole or not at all (ht_mfind_rcu()). */
void cmd_mget(struct conn *c, int argc)
{
	const struct ht_entry *stack[16], **e = stack;
	size_t n = (size_t)argc - 1;

	if (n > sizeof(stack) / sizeof(stack[0]))
		e = xmalloc(n * sizeof(*e));
	ht_mfind_rcu(db_of(c), n, (const void *const *)(c->argv + 1), c->argl + 1, e);
	reply_array(c, argc - 1);
	for (size_t j = 0; j < n; j++) {
		db_hit(c, 1 + (int)j, e[j] != NULL);
		if (e[j] && db_type(e[j]) == OBJ_STRING) /* another type reads as nil */
			reply_entry_val(c, e[j]);
		else
			reply_null(c);
	}
	if (e != stack)
		free(e);
}

/* ---------------------------------------------------- multi-key (txn) */

struct mset_arg {
	struct conn *c;
	int nx;
	int stored;
};

static int mset_fn(struct ht_txn *tx, void *argp)
{
	struct mset_arg *a = argp;
	struct conn *c = a->c;
	size_t n = (size_t)(c->argc - 1) / 2;

	if (a->nx) {
		for (size_t i = 0; i < n; i++)
			if (ht_txn_get(tx, i))
				return 0;
	}
	for (size_t i = 0; i < n; i++) {
		int rc = ht_txn_set(tx, i, ARGV(c, 2 + 2 * (int)i), ARGL(c, 2 + 2 * (int)i),
				    HT_NO_EXPIRE);

		if (rc < 0)
			return rc;
	}
	a->stored = 1;
	return 0;
}

static void mset_generic(struct conn *c, int argc, int nx)
{
	struct mset_arg a = {c, nx, 0};
	size_t n, reserved;
	int *idx, rc;

	if (argc % 2 == 0) {
		reply_errorf(c, "wrong number of arguments for '%s' command",
			     nx ? "msetnx" : "mset");
		return;
	}
	n = (size_t)(argc - 1) / 2;
	if (n > HT_TXN_MAX_KEYS) {
		reply_error(c, "too many keys in one command");
		return;
	}
	/* Many keys: grow the table first (ht_reserve()); this command holds
	 * no table reference yet. */
	reserved = n >= 128 ? n : 0;
	if (reserved)
		(void)ht_reserve(db_of(c), reserved);
	idx = xmalloc(n * sizeof(int));
	for (size_t i = 0; i < n; i++)
		idx[i] = 1 + 2 * (int)i;
	rc = db_run_txn(c, n, idx, mset_fn, &a);
	if (reserved)
		ht_reserve_done(db_of(c), reserved);
	free(idx);
	if (rc < 0) {
		db_reply_ht_err(c, rc);
		return;
	}
	if (a.stored) {
		SRV_DIRTY(c, n);
		for (size_t i = 0; i < n; i++)
			db_notify(c, NOTIFY_STRING, "set", 1 + 2 * (int)i);
	}
	if (nx)
		reply_int(c, a.stored);
	else
		reply_ok(c);
}

void cmd_mset(struct conn *c, int argc)
{
	mset_generic(c, argc, 0);
}

void cmd_msetnx(struct conn *c, int argc)
{
	mset_generic(c, argc, 1);
}

void cmd_strlen(struct conn *c, int argc)
{
	const struct ht_entry *e;

	(void)argc;
	e = ht_find_rcu(db_of(c), K(1));
	db_hit(c, 1, e != NULL);
	if (db_is_str(c, e))
		reply_int(c, e ? (long long)ht_entry_vlen(e) : 0);
}

/* ------------------------------------------------------ INCR and family */

struct incr_arg {
	long long by;
	long long result;
	long double fby;
	long double fresult;
};

#define E_NOTINT 1001
#define E_OVERFLOW 1002
#define E_NOTFLOAT 1003
#define E_NAN 1004
#define E_MAXSIZE 1005

static int incr_fn(struct ht_rmw *r, void *argp)
{
	struct incr_arg *a = argp;
	long long v = 0;
	char buf[24], *dst;
	int n;

	if (r->old && db_type(r->old) != OBJ_STRING)
		return -DB_EWRONGTYPE;
	if (r->old && !resp_str2ll(ht_entry_val(r->old), ht_entry_vlen(r->old), &v))
		return -E_NOTINT;
	if ((a->by < 0 && v < 0 && a->by < LLONG_MIN - v) ||
	    (a->by > 0 && v > 0 && a->by > LLONG_MAX - v))
		return -E_OVERFLOW;
	v += a->by;
	n = (int)resp_ll2str(buf, v);
	dst = ht_rmw_alloc(r, (size_t)n);
	if (!dst)
		return -ENOMEM;
	memcpy(dst, buf, (size_t)n);
	a->result = v;
	return HT_RMW_STORE;
}

static void reply_rmw_err(struct conn *c, int rc)
{
	switch (-rc) {
	case E_NOTINT:
		reply_error(c, ERR_NOT_INT);
		break;
	case E_OVERFLOW:
		reply_error(c, "increment or decrement would overflow");
		break;
	case E_NOTFLOAT:
		reply_error(c, ERR_NOT_FLOAT);
		break;
	case E_NAN:
		reply_error(c, "increment would produce NaN or Infinity");
		break;
	case E_MAXSIZE:
		reply_error(c, ERR_MAXSIZE);
		break;
	default:
		db_reply_ht_err(c, rc);
	}
}

static void incr_generic(struct conn *c, long long by)
{
	struct incr_arg a = {by, 0, 0, 0};
	int rc = ht_rmw(db_of(c), K(1), incr_fn, &a);

	if (rc < 0) {
		reply_rmw_err(c, rc);
	} else {
		SRV_DIRTY(c, 1);
		db_notify(c, NOTIFY_STRING, "incrby", 1);
		reply_int(c, a.result);
	}
}

void cmd_incr(struct conn *c, int argc)
{
	(void)argc;
	incr_generic(c, 1);
}

void cmd_decr(struct conn *c, int argc)
{
	(void)argc;
	incr_generic(c, -1);
}

void cmd_incrby(struct conn *c, int argc)
{
	long long by;

	(void)argc;
	if (db_get_ll(c, 2, &by) < 0)
		return;
	incr_generic(c, by);
}

void cmd_decrby(struct conn *c, int argc)
{
	long long by;

	(void)argc;
	if (db_get_ll(c, 2, &by) < 0)
		return;
	if (by == LLONG_MIN) {
		reply_error(c, "decrement would overflow");
		return;
	}
	incr_generic(c, -by);
}

static int incrfloat_fn(struct ht_rmw *r, void *argp)
{
	struct incr_arg *a = argp;
	long double v = 0;
	char buf[5200], *dst;
	int n;

	if (r->old && db_type(r->old) != OBJ_STRING)
		return -DB_EWRONGTYPE;
	if (r->old && !util_str2ld(ht_entry_val(r->old), ht_entry_vlen(r->old), &v))
		return -E_NOTFLOAT;
	v += a->fby;
	if (isnan(v) || isinf(v))
		return -E_NAN;
	n = ld2string(buf, sizeof(buf), v, 1);
	dst = ht_rmw_alloc(r, (size_t)n);
	if (!dst)
		return -ENOMEM;
	memcpy(dst, buf, (size_t)n);
	a->fresult = v;
	return HT_RMW_STORE;
}

void cmd_incrbyfloat(struct conn *c, int argc)
{
	struct incr_arg a = {0, 0, 0, 0};
	int rc;

	(void)argc;
	if (!util_str2ld(K(2), &a.fby)) {
		reply_error(c, ERR_NOT_FLOAT);
		return;
	}
	rc = ht_rmw(db_of(c), K(1), incrfloat_fn, &a);
	if (rc < 0) {
		reply_rmw_err(c, rc);
	} else {
		SRV_DIRTY(c, 1);
		db_notify(c, NOTIFY_STRING, "incrbyfloat", 1);
		reply_long_double_bulk(c, a.fresult);
	}
}

/* ------------------------------------------------- APPEND, SETRANGE ... */

struct range_arg {
	const char *p;
	size_t n;
	long long offset; /* SETRANGE; -1 for APPEND */
	long long newlen;
};

static int append_fn(struct ht_rmw *r, void *argp)
{
	struct range_arg *a = argp;
	size_t oldlen = r->old ? ht_entry_vlen(r->old) : 0;
	size_t total;
	long long max = atomic_load_explicit(&g_cfg.proto_max_bulk_len, memory_order_relaxed);
	char *dst;

	if (r->old && db_type(r->old) != OBJ_STRING)
		return -DB_EWRONGTYPE;
	if (a->offset < 0) {
		total = oldlen + a->n;
		if (r->old && total > (size_t)max)
			return -E_MAXSIZE;
		dst = ht_rmw_alloc(r, total);
		if (!dst)
			return -ENOMEM;
		if (oldlen)
			memcpy(dst, ht_entry_val(r->old), oldlen);
		memcpy(dst + oldlen, a->p, a->n);
		a->newlen = (long long)total;
		return HT_RMW_STORE;
	}
	/* SETRANGE */
	if (a->n == 0) {
		a->newlen = (long long)oldlen;
		return HT_RMW_KEEP;
	}
	if ((unsigned long long)a->offset + a->n > (unsigned long long)max)
		return -E_MAXSIZE;
	total = (size_t)a->offset + a->n;
	if (total < oldlen)
		total = oldlen;
	dst = ht_rmw_alloc(r, total);
	if (!dst)
		return -ENOMEM;
	memset(dst, 0, total);
	if (oldlen)
		memcpy(dst, ht_entry_val(r->old), oldlen);
	memcpy(dst + a->offset, a->p, a->n);
	a->newlen = (long long)total;
	return HT_RMW_STORE;
}

/* APPEND and SETRANGE: store through append_fn, reply the new length */
static void range_store(struct conn *c, struct range_arg *a)
{
	int rc = ht_rmw(db_of(c), K(1), append_fn, a);

	if (rc == HT_RMW_STORE) {
		SRV_DIRTY(c, 1);
		db_notify(c, NOTIFY_STRING, a->offset < 0 ? "append" : "setrange", 1);
	}
	if (rc < 0)
		reply_rmw_err(c, rc);
	else
		reply_int(c, a->newlen);
}

void cmd_append(struct conn *c, int argc)
{
	struct range_arg a = {ARGV(c, 2), ARGL(c, 2), -1, 0};

	(void)argc;
	range_store(c, &a);
}

void cmd_setrange(struct conn *c, int argc)
{
	struct range_arg a = {ARGV(c, 3), ARGL(c, 3), 0, 0};

	(void)argc;
	if (db_get_ll(c, 2, &a.offset) < 0)
		return;
	if (a.offset < 0) {
		reply_error(c, "offset is out of range");
		return;
	}
	range_store(c, &a);
}

void cmd_getrange(struct conn *c, int argc)
{
	long long start, end, len;
	const struct ht_entry *e;
	const char *p;

	(void)argc;
	if (db_get_ll(c, 2, &start) < 0 || db_get_ll(c, 3, &end) < 0)
		return;
	e = ht_find_rcu(db_of(c), K(1));
	db_hit(c, 1, e != NULL);
	if (!db_is_str(c, e))
		return;
	if (!e) {
		reply_bulk(c, "", 0);
		return;
	}
	p = ht_entry_val(e);
	len = (long long)ht_entry_vlen(e);
	if (start < 0 && end < 0 && start > end) {
		reply_bulk(c, "", 0);
		return;
	}
	if (!bit_range(&start, &end, len)) {
		reply_bulk(c, "", 0);
		return;
	}
	reply_bulk(c, p + start, (size_t)(end - start + 1));
}

/* ------------------------------------------------------------------ LCS */

/*
 * LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]: the longest
 * common subsequence by the textbook dynamic programme, a table of
 * (alen + 1) * (blen + 1) lengths, bounded by proto-max-bulk-len as Redis
 * bounds it.  The walk back from the table's corner takes the same turns as
 * Redis's (up when the cell above is longer, else left), so the string and
 * the match ranges are Redis's, byte for byte.  Like Redis, this runs to
 * completion on the worker: a big LCS delays that worker's quiescent state,
 * so grace periods wait for it; the entries stay valid meanwhile.
 */
struct lcs_opts {
	int len, idx, withmatchlen;
	long long minmatchlen;
};

/* One matched run: a[a0..a1] equals b[b0..b1]. */
struct lcs_match {
	uint32_t a0, a1, b0, b1;
};

struct lcs {
	const char *a, *b;
	uint32_t alen, blen;
	uint32_t *t; /* t[i * (blen + 1) + j]: LCS length of a[0..i), b[0..j) */
};

#define LCS_T(l, i, j) ((l)->t[(size_t)(i) * ((l)->blen + 1) + (j)])

/* Options from argument 3 on, in Redis's order of checks; -1 after an
 * error reply. */
static int lcs_parse(struct conn *c, int argc, struct lcs_opts *o)
{
	for (int j = 3; j < argc; j++) {
		if (util_strcaseeq(K(j), "idx")) {
			o->idx = 1;
		} else if (util_strcaseeq(K(j), "len")) {
			o->len = 1;
		} else if (util_strcaseeq(K(j), "withmatchlen")) {
			o->withmatchlen = 1;
		} else if (util_strcaseeq(K(j), "minmatchlen") && j < argc - 1) {
			if (db_get_ll(c, ++j, &o->minmatchlen) < 0)
				return -1;
			if (o->minmatchlen < 0)
				o->minmatchlen = 0;
		} else {
			reply_error(c, ERR_SYNTAX);
			return -1;
		}
	}
	if (o->len && o->idx) {
		reply_error(c, "If you want both the length and indexes, please just use IDX.");
		return -1;
	}
	return 0;
}

static void lcs_fill(struct lcs *l)
{
	for (uint32_t i = 0; i <= l->alen; i++) {
		for (uint32_t j = 0; j <= l->blen; j++) {
			uint32_t v = 0;

			if (i && j && l->a[i - 1] == l->b[j - 1])
				v = LCS_T(l, i - 1, j - 1) + 1;
			else if (i && j)
				v = LCS_T(l, i - 1, j) > LCS_T(l, i, j - 1) ? LCS_T(l, i - 1, j)
									    : LCS_T(l, i, j - 1);
			LCS_T(l, i, j) = v;
		}
	}
}

/*
 * Walk back from the corner: the common string into @out (its length is the
 * corner's value), and the runs of at least @minlen into @m (last run
 * first).  Return the number of runs stored.
 */
static uint32_t lcs_walk(const struct lcs *l, char *out, struct lcs_match *m, long long minlen)
{
	uint32_t i = l->alen, j = l->blen, k = LCS_T(l, i, j), nm = 0;
	struct lcs_match cur = {0, 0, 0, 0};
	int open = 0;

	while (i > 0 && j > 0) {
		int close;

		if (l->a[i - 1] == l->b[j - 1]) {
			out[--k] = l->a[i - 1];
			if (!open) {
				cur.a1 = i - 1;
				cur.b1 = j - 1;
				open = 1;
			}
			cur.a0 = --i;
			cur.b0 = --j;
			close = i == 0 || j == 0;
		} else {
			if (LCS_T(l, i - 1, j) > LCS_T(l, i, j - 1))
				i--;
			else
				j--;
			close = open;
		}
		if (close) {
			if (cur.a1 - cur.a0 + 1 >= minlen)
				m[nm++] = cur;
			open = 0;
		}
	}
	return nm;
}

static void lcs_reply_idx(struct conn *c, const struct lcs *l, const struct lcs_match *m,
			  uint32_t nm, int withlen)
{
	reply_map(c, 2);
	reply_bulk_str(c, "matches");
	reply_array(c, nm);
	for (uint32_t i = 0; i < nm; i++) {
		reply_array(c, 2 + withlen);
		reply_array(c, 2);
		reply_int(c, m[i].a0);
		reply_int(c, m[i].a1);
		reply_array(c, 2);
		reply_int(c, m[i].b0);
		reply_int(c, m[i].b1);
		if (withlen)
			reply_int(c, m[i].a1 - m[i].a0 + 1);
	}
	reply_bulk_str(c, "len");
	reply_int(c, LCS_T(l, l->alen, l->blen));
}

/* The live value of argument @i (a missing key reads as ""), a keyspace
 * hit or miss counted. */
static const char *lcs_value(struct conn *c, int i, size_t *len)
{
	const struct ht_entry *e = ht_find_rcu(db_of(c), K(i));

	db_hit(c, i, e != NULL);
	*len = e ? ht_entry_vlen(e) : 0;
	if (e && db_type(e) != OBJ_STRING)
		return NULL;
	return e ? ht_entry_val(e) : "";
}

void cmd_lcs(struct conn *c, int argc)
{
	struct lcs_opts o = {0, 0, 0, 0};
	struct lcs l;
	size_t alen, blen;
	unsigned long long cells, bytes;
	long long max = atomic_load_explicit(&g_cfg.proto_max_bulk_len, memory_order_relaxed);

	l.a = lcs_value(c, 1, &alen);
	l.b = lcs_value(c, 2, &blen);
	if (!l.a || !l.b) {
		reply_error(c, "The specified keys must contain string values");
		return;
	}
	if (lcs_parse(c, argc, &o) < 0)
		return;
	if (alen >= UINT32_MAX - 1 || blen >= UINT32_MAX - 1) {
		reply_error(c, "String too long for LCS");
		return;
	}
	l.alen = (uint32_t)alen;
	l.blen = (uint32_t)blen;
	cells = (unsigned long long)(alen + 1) * (blen + 1);
	bytes = cells * sizeof(uint32_t);
	if (bytes > (unsigned long long)max) {
		reply_error(c, "Insufficient memory, transient memory for LCS exceeds "
			       "proto-max-bulk-len");
		return;
	}
	l.t = malloc((size_t)bytes);
	if (!l.t) {
		reply_error(c, "Insufficient memory, failed allocating transient memory for LCS");
		return;
	}
	lcs_fill(&l);
	if (o.len) {
		reply_int(c, LCS_T(&l, l.alen, l.blen));
	} else {
		uint32_t n = LCS_T(&l, l.alen, l.blen);
		char *out = xmalloc(n + 1);
		struct lcs_match *m = xmalloc(((size_t)n + 1) * sizeof(*m));
		uint32_t nm = lcs_walk(&l, out, m, o.idx ? o.minmatchlen : 0);

		if (o.idx)
			lcs_reply_idx(c, &l, m, nm, o.withmatchlen);
		else
			reply_bulk(c, out, n);
		free(m);
		free(out);
	}
	free(l.t);
}
