/*
 * db.c - the keyspace: string-key commands on the RCU hash table (ht.h),
 * lazy and active expiry, KEYS/SCAN/RANDOMKEY and the keyspace statistics.
 *
 * Owns the one table (db0).  Commands run on worker threads that are online
 * QSBR readers, so every *_rcu lookup is inside a read-side section that lasts
 * until the worker's next quiescent state (after the whole read pass); entries
 * found are copied into the reply at once.  Multi-key commands (MSET, MSETNX,
 * RENAME, RENAMENX, COPY) run under ht_txn(), read-modify-write commands (INCR
 * family, APPEND, SETRANGE, GETDEL, GETEX) under ht_rmw(), so no client sees
 * half of one and concurrent INCRs lose nothing (ht.h guarantee 2).
 *
 * The active expiry cycle runs on the main thread's cron (db_active_expire_cycle).
 * Replies follow Redis 7.0 byte for byte; tests/server/cases.txt checks them.
 */
#define RCU_FLAVOR_QSBR
#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "server/server_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct ht *db;
static _Atomic long long avg_ttl;

void db_init(void)
{
	db = ht_new(NULL);
	if (!db)
		srv_die("cannot create the hash table");
}

void db_fini(void)
{
	ht_free(db);
	db = NULL;
}

struct ht *db_table(void)
{
	return db;
}

size_t db_buckets(void)
{
	struct ht_stats st;

	ht_stats(db, &st);
	return st.buckets;
}

unsigned long long db_size(void)
{
	return ht_count(db);
}

unsigned long long db_expires(void)
{
	return ht_count_expires(db);
}

long long db_avg_ttl(void)
{
	return atomic_load_explicit(&avg_ttl, memory_order_relaxed);
}

unsigned long long db_expired_total(void)
{
	struct ht_stats st;

	if (!db)
		return 0;
	ht_stats(db, &st);
	return st.expired;
}

size_t db_entry_bytes(void)
{
	struct ht_stats st;

	if (!db)
		return 0;
	ht_stats(db, &st);
	return st.entry_bytes;
}

/* Warm the table for the keys of the commands a worker is about to run (bit i
 * of @for_write: key i is written).  Context: worker, online (read side). */
void db_prefetch(size_t n, const char *const keys[], const size_t klens[], uint32_t for_write)
{
	ht_prefetch(db, n, (const void *const *)keys, klens, for_write);
}

/* ------------------------------------------------------------- helpers */

#define K(i) ARGV(c, i), ARGL(c, i)
#define ERR_EXPIRE_FMT "invalid expire time in '%s' command"
#define ERR_MAXSIZE "string exceeds maximum allowed size (proto-max-bulk-len)"

static void hit(struct conn *c, int found)
{
	if (found)
		STAT_ADD(c->w->st.keyspace_hits, 1);
	else
		STAT_ADD(c->w->st.keyspace_misses, 1);
}

/* Reply for a negative errno from the table that no command expects. */
static void reply_ht_err(struct conn *c, int rc)
{
	if (rc == -E2BIG)
		reply_error(c, ERR_MAXSIZE);
	else if (rc == -ENOMEM)
		reply_error(c, ERR_OOM);
	else
		reply_errorf(c, "internal error %d", rc);
}

static void reply_entry_val(struct conn *c, const struct ht_entry *e)
{
	reply_bulk(c, ht_entry_val(e), ht_entry_vlen(e));
}

static int get_ll(struct conn *c, int i, long long *v)
{
	if (!util_str2ll(K(i), v)) {
		reply_error(c, ERR_NOT_INT);
		return -1;
	}
	return 0;
}

/* wrapping add, as Redis's int64 arithmetic on expiry times */
static long long wrap_add(long long a, long long b)
{
	return (long long)((unsigned long long)a + (unsigned long long)b);
}

/* ------------------------------------------------------------ GET / SET */

void cmd_get(struct conn *c, int argc)
{
	const struct ht_entry *e;

	(void)argc;
	e = ht_find_rcu(db, K(1));
	hit(c, e != NULL);
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

		if (get_ll(c, exp_arg, &ms) < 0)
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
	rc = ht_set(db, K(kidx), K(vidx), expire ? expire : HT_NO_EXPIRE, hf,
		    (flags & SET_GET) ? &old : NULL);
	if (rc < 0 && rc != -EEXIST && rc != -ENOENT) {
		reply_ht_err(c, rc);
		return;
	}
	if (rc == 0)
		SRV_DIRTY(c, 1);
	if (flags & SET_GET) {
		if (old)
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

	if (get_ll(c, 2, &t) < 0)
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
		int rc = ht_set(db, K(1), K(3), t, 0, NULL);

		if (rc < 0) {
			reply_ht_err(c, rc);
		} else {
			SRV_DIRTY(c, 1);
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

	hit(a->c, r->old != NULL);
	if (!r->old) {
		reply_null(a->c);
		return HT_RMW_KEEP;
	}
	reply_entry_val(a->c, r->old);
	if (a->del)
		return HT_RMW_DELETE;
	if (a->flags & SET_PERSIST) {
		if (ht_entry_expire(r->old) == HT_NO_EXPIRE)
			return HT_RMW_KEEP;
		r->expire_ms = HT_NO_EXPIRE;
	} else if (a->expire) {
		if (a->expire <= util_mstime())
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

void cmd_getdel(struct conn *c, int argc)
{
	struct getx_arg a = {c, 0, 0, 1};
	int rc;

	(void)argc;
	rc = ht_rmw(db, K(1), getx_fn, &a);
	if (rc < 0)
		reply_ht_err(c, rc);
	else if (rc == HT_RMW_STORE || rc == HT_RMW_DELETE)
		SRV_DIRTY(c, 1);
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
	rc = ht_rmw(db, K(1), getx_fn, &a);
	if (rc < 0)
		reply_ht_err(c, rc);
	else if (rc == HT_RMW_STORE || rc == HT_RMW_DELETE)
		SRV_DIRTY(c, 1);
}

void cmd_mget(struct conn *c, int argc)
{
	reply_array(c, argc - 1);
	for (int j = 1; j < argc; j++) {
		const struct ht_entry *e = ht_find_rcu(db, K(j));

		hit(c, e != NULL);
		if (e)
			reply_entry_val(c, e);
		else
			reply_null(c);
	}
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

static int run_txn(struct conn *c, size_t n, const int *argidx, ht_txn_fn fn, void *arg)
{
	const void *kstack[16] = {0};
	size_t lstack[16] = {0};
	const void **keys = n <= 16 ? kstack : xmalloc(n * sizeof(*keys));
	size_t *lens = n <= 16 ? lstack : xmalloc(n * sizeof(*lens));
	int rc;

	for (size_t i = 0; i < n; i++) {
		keys[i] = ARGV(c, argidx[i]);
		lens[i] = ARGL(c, argidx[i]);
	}
	rc = ht_txn(db, n, keys, lens, fn, arg);
	if (keys != kstack) {
		free((void *)keys);
		free(lens);
	}
	return rc;
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
		(void)ht_reserve(db, reserved);
	idx = xmalloc(n * sizeof(int));
	for (size_t i = 0; i < n; i++)
		idx[i] = 1 + 2 * (int)i;
	rc = run_txn(c, n, idx, mset_fn, &a);
	if (reserved)
		ht_reserve_done(db, reserved);
	free(idx);
	if (rc < 0) {
		reply_ht_err(c, rc);
		return;
	}
	if (a.stored)
		SRV_DIRTY(c, n);
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

/* RENAME / RENAMENX / COPY: keys[0] = source, keys[1] = destination. */
struct move_arg {
	int nx;	    /* fail if destination exists */
	int copy;   /* keep the source */
	int result; /* 1 done, 0 not done, -1 no such key */
};

static int move_fn(struct ht_txn *tx, void *argp)
{
	struct move_arg *a = argp;
	const struct ht_entry *src = ht_txn_get(tx, 0);
	int rc;

	if (!src) {
		a->result = -1;
		return 0;
	}
	if (a->nx && ht_txn_get(tx, 1)) {
		a->result = 0;
		return 0;
	}
	rc = ht_txn_set(tx, 1, ht_entry_val(src), ht_entry_vlen(src), ht_entry_expire(src));
	if (rc < 0)
		return rc;
	if (!a->copy)
		ht_txn_del(tx, 0);
	a->result = 1;
	return 0;
}

static void rename_generic(struct conn *c, int nx)
{
	struct move_arg a = {nx, 0, 0};
	static const int idx[2] = {1, 2};
	int rc;

	if (ARGL(c, 1) == ARGL(c, 2) && !memcmp(ARGV(c, 1), ARGV(c, 2), ARGL(c, 1))) {
		if (!ht_find_rcu(db, K(1)))
			reply_error(c, ERR_NO_KEY);
		else if (nx)
			reply_int(c, 0);
		else
			reply_ok(c);
		return;
	}
	rc = run_txn(c, 2, idx, move_fn, &a);
	if (rc >= 0 && a.result > 0)
		SRV_DIRTY(c, 1);
	if (rc < 0)
		reply_ht_err(c, rc);
	else if (a.result < 0)
		reply_error(c, ERR_NO_KEY);
	else if (nx)
		reply_int(c, a.result);
	else
		reply_ok(c);
}

void cmd_rename(struct conn *c, int argc)
{
	(void)argc;
	rename_generic(c, 0);
}

void cmd_renamenx(struct conn *c, int argc)
{
	(void)argc;
	rename_generic(c, 1);
}

void cmd_copy(struct conn *c, int argc)
{
	struct move_arg a = {1, 1, 0};
	static const int idx[2] = {1, 2};
	int rc;

	for (int j = 3; j < argc; j++) {
		if (util_strcaseeq(K(j), "replace")) {
			a.nx = 0;
		} else if (util_strcaseeq(K(j), "db") && j + 1 < argc) {
			long long dbid;

			if (!util_str2ll(K(j + 1), &dbid)) {
				reply_error(c, ERR_NOT_INT);
				return;
			}
			if (dbid < INT32_MIN || dbid > INT32_MAX) {
				reply_error(c, "value is out of range, value must between "
					       "-2147483648 and 2147483647");
				return;
			}
			if (dbid != 0) {
				reply_error(c, ERR_DB_RANGE);
				return;
			}
			j++;
		} else {
			reply_error(c, ERR_SYNTAX);
			return;
		}
	}
	if (ARGL(c, 1) == ARGL(c, 2) && !memcmp(ARGV(c, 1), ARGV(c, 2), ARGL(c, 1))) {
		reply_error(c, "source and destination objects are the same");
		return;
	}
	rc = run_txn(c, 2, idx, move_fn, &a);
	if (rc >= 0 && a.result > 0)
		SRV_DIRTY(c, 1);
	if (rc < 0)
		reply_ht_err(c, rc);
	else
		reply_int(c, a.result > 0);
}

/* ------------------------------------------------------------- DEL etc */

void cmd_del(struct conn *c, int argc)
{
	long long n = 0;

	for (int j = 1; j < argc; j++)
		n += ht_del(db, K(j)) == 0;
	SRV_DIRTY(c, n);
	reply_int(c, n);
}

void cmd_exists(struct conn *c, int argc)
{
	long long n = 0;

	/* No touch, as Redis (LOOKUP_NOTOUCH): EXISTS is no access for LRU/LFU. */
	for (int j = 1; j < argc; j++)
		n += ht_peek_rcu(db, K(j)) != NULL;
	reply_int(c, n);
}

void cmd_type(struct conn *c, int argc)
{
	(void)argc;
	if (ht_peek_rcu(db, K(1))) /* no touch, as Redis */
		reply_raw(c, "+string\r\n", 9);
	else
		reply_raw(c, "+none\r\n", 7);
}

void cmd_strlen(struct conn *c, int argc)
{
	const struct ht_entry *e;

	(void)argc;
	e = ht_find_rcu(db, K(1));
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

	if (r->old && !util_str2ll(ht_entry_val(r->old), ht_entry_vlen(r->old), &v))
		return -E_NOTINT;
	if ((a->by < 0 && v < 0 && a->by < LLONG_MIN - v) ||
	    (a->by > 0 && v > 0 && a->by > LLONG_MAX - v))
		return -E_OVERFLOW;
	v += a->by;
	n = util_ll2str(buf, v);
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
		reply_ht_err(c, rc);
	}
}

static void incr_generic(struct conn *c, long long by)
{
	struct incr_arg a = {by, 0, 0, 0};
	int rc = ht_rmw(db, K(1), incr_fn, &a);

	if (rc < 0) {
		reply_rmw_err(c, rc);
	} else {
		SRV_DIRTY(c, 1);
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
	if (get_ll(c, 2, &by) < 0)
		return;
	incr_generic(c, by);
}

void cmd_decrby(struct conn *c, int argc)
{
	long long by;

	(void)argc;
	if (get_ll(c, 2, &by) < 0)
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
	rc = ht_rmw(db, K(1), incrfloat_fn, &a);
	if (rc < 0) {
		reply_rmw_err(c, rc);
	} else {
		SRV_DIRTY(c, 1);
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

void cmd_append(struct conn *c, int argc)
{
	struct range_arg a = {ARGV(c, 2), ARGL(c, 2), -1, 0};
	int rc;

	(void)argc;
	rc = ht_rmw(db, K(1), append_fn, &a);
	if (rc == HT_RMW_STORE)
		SRV_DIRTY(c, 1);
	if (rc < 0)
		reply_rmw_err(c, rc);
	else
		reply_int(c, a.newlen);
}

void cmd_setrange(struct conn *c, int argc)
{
	struct range_arg a = {ARGV(c, 3), ARGL(c, 3), 0, 0};
	int rc;

	(void)argc;
	if (get_ll(c, 2, &a.offset) < 0)
		return;
	if (a.offset < 0) {
		reply_error(c, "offset is out of range");
		return;
	}
	rc = ht_rmw(db, K(1), append_fn, &a);
	if (rc == HT_RMW_STORE)
		SRV_DIRTY(c, 1);
	if (rc < 0)
		reply_rmw_err(c, rc);
	else
		reply_int(c, a.newlen);
}

void cmd_getrange(struct conn *c, int argc)
{
	long long start, end, len;
	const struct ht_entry *e;
	const char *p;

	(void)argc;
	if (get_ll(c, 2, &start) < 0 || get_ll(c, 3, &end) < 0)
		return;
	e = ht_find_rcu(db, K(1));
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
	if (start < 0)
		start = len + start;
	if (end < 0)
		end = len + end;
	if (start < 0)
		start = 0;
	if (end < 0)
		end = 0;
	if (end >= len)
		end = len - 1;
	if (start > end || len == 0) {
		reply_bulk(c, "", 0);
		return;
	}
	reply_bulk(c, p + start, (size_t)(end - start + 1));
}

/* ------------------------------------------------------------- expiry */

#define EXP_NX 0x1
#define EXP_XX 0x2
#define EXP_GT 0x4
#define EXP_LT 0x8

struct expire_arg {
	unsigned flags;
	int result;
};

/* Expiry in the past: delete the key if the condition holds. */
static int expire_past_fn(struct ht_rmw *r, void *argp)
{
	struct expire_arg *a = argp;
	int64_t cur;

	if (!r->old) {
		a->result = 0;
		return HT_RMW_KEEP;
	}
	cur = ht_entry_expire(r->old);
	if (((a->flags & EXP_NX) && cur != HT_NO_EXPIRE) ||
	    ((a->flags & EXP_XX) && cur == HT_NO_EXPIRE) || (a->flags & EXP_GT) ||
	    ((a->flags & EXP_LT) && 0)) {
		/* GT: a past time is never greater than the current expiry (which
		 * is in the future or infinite). */
		a->result = 0;
		return HT_RMW_KEEP;
	}
	a->result = 1;
	return HT_RMW_DELETE;
}

static void expire_generic(struct conn *c, int argc, long long basetime, int seconds,
			   const char *name)
{
	unsigned flags = 0;
	long long when;
	int rc;

	for (int j = 3; j < argc; j++) {
		if (util_strcaseeq(K(j), "nx"))
			flags |= EXP_NX;
		else if (util_strcaseeq(K(j), "xx"))
			flags |= EXP_XX;
		else if (util_strcaseeq(K(j), "gt"))
			flags |= EXP_GT;
		else if (util_strcaseeq(K(j), "lt"))
			flags |= EXP_LT;
		else {
			reply_errorf(c, "Unsupported option %s", ARGV(c, j));
			return;
		}
	}
	if ((flags & EXP_NX) && (flags & (EXP_XX | EXP_GT | EXP_LT))) {
		reply_error(c, "NX and XX, GT or LT options at the same time are not compatible");
		return;
	}
	if ((flags & EXP_GT) && (flags & EXP_LT)) {
		reply_error(c, "GT and LT options at the same time are not compatible");
		return;
	}
	if (get_ll(c, 2, &when) < 0)
		return;
	if (seconds) {
		if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) {
			reply_errorf(c, ERR_EXPIRE_FMT, name);
			return;
		}
		when *= 1000;
	}
	if (when > LLONG_MAX - basetime) {
		reply_errorf(c, ERR_EXPIRE_FMT, name);
		return;
	}
	when += basetime;
	if (when <= util_mstime()) {
		struct expire_arg a = {flags, 0};

		rc = ht_rmw(db, K(1), expire_past_fn, &a);
		if (rc < 0)
			reply_ht_err(c, rc);
		else
			reply_int(c, a.result);
		SRV_DIRTY(c, rc >= 0 && a.result > 0);
		return;
	}
	rc = ht_expire_set(
	    db, K(1), when,
	    ((flags & EXP_NX) ? HT_EXPIRE_NX : 0) | ((flags & EXP_XX) ? HT_EXPIRE_XX : 0) |
		((flags & EXP_GT) ? HT_EXPIRE_GT : 0) | ((flags & EXP_LT) ? HT_EXPIRE_LT : 0));
	if (rc > 0)
		SRV_DIRTY(c, 1);
	if (rc == -ENOENT)
		reply_int(c, 0);
	else if (rc < 0)
		reply_ht_err(c, rc);
	else
		reply_int(c, rc);
}

void cmd_expire(struct conn *c, int argc)
{
	expire_generic(c, argc, util_mstime(), 1, "expire");
}

void cmd_pexpire(struct conn *c, int argc)
{
	expire_generic(c, argc, util_mstime(), 0, "pexpire");
}

void cmd_expireat(struct conn *c, int argc)
{
	expire_generic(c, argc, 0, 1, "expireat");
}

void cmd_pexpireat(struct conn *c, int argc)
{
	expire_generic(c, argc, 0, 0, "pexpireat");
}

static void ttl_generic(struct conn *c, int ms, int abs)
{
	int64_t exp;

	if (ht_expire_get(db, K(1), &exp) < 0) {
		reply_int(c, -2);
		return;
	}
	if (exp == HT_NO_EXPIRE) {
		reply_int(c, -1);
		return;
	}
	if (abs) {
		reply_int(c, ms ? exp : (exp + 500) / 1000);
		return;
	}
	{
		long long ttl = exp - util_mstime();

		if (ttl < 0)
			ttl = 0;
		reply_int(c, ms ? ttl : (ttl + 500) / 1000);
	}
}

void cmd_ttl(struct conn *c, int argc)
{
	(void)argc;
	ttl_generic(c, 0, 0);
}

void cmd_pttl(struct conn *c, int argc)
{
	(void)argc;
	ttl_generic(c, 1, 0);
}

void cmd_expiretime(struct conn *c, int argc)
{
	(void)argc;
	ttl_generic(c, 0, 1);
}

void cmd_pexpiretime(struct conn *c, int argc)
{
	(void)argc;
	ttl_generic(c, 1, 1);
}

void cmd_persist(struct conn *c, int argc)
{
	int rc;

	(void)argc;
	rc = ht_expire_clear(db, K(1));
	if (rc > 0)
		SRV_DIRTY(c, 1);
	if (rc == -ENOENT)
		reply_int(c, 0);
	else if (rc < 0)
		reply_ht_err(c, rc);
	else
		reply_int(c, rc);
}

/* ----------------------------------------------------- KEYS, SCAN, ... */

struct keylist {
	char **k;
	size_t *l;
	size_t n, cap;
	const char *pat;
	size_t plen;
	int all;
};

static void keylist_add(struct keylist *kl, const void *k, size_t l)
{
	if (kl->n == kl->cap) {
		kl->cap = kl->cap ? kl->cap * 2 : 64;
		kl->k = xrealloc(kl->k, kl->cap * sizeof(*kl->k));
		kl->l = xrealloc(kl->l, kl->cap * sizeof(*kl->l));
	}
	kl->k[kl->n] = xmemdup(k, l);
	kl->l[kl->n] = l;
	kl->n++;
}

static int keys_fn(const struct ht_entry *e, void *arg)
{
	struct keylist *kl = arg;
	const char *k = ht_entry_key(e);
	size_t l = ht_entry_klen(e);

	if (kl->all || util_glob_match(kl->pat, kl->plen, k, l, 0))
		keylist_add(kl, k, l);
	return 0;
}

static void keylist_reply_free(struct conn *c, struct keylist *kl)
{
	reply_array(c, (long long)kl->n);
	for (size_t i = 0; i < kl->n; i++) {
		reply_bulk(c, kl->k[i], kl->l[i]);
		free(kl->k[i]);
	}
	free(kl->k);
	free(kl->l);
}

void cmd_keys(struct conn *c, int argc)
{
	struct keylist kl = {0};

	(void)argc;
	kl.pat = ARGV(c, 1);
	kl.plen = ARGL(c, 1);
	kl.all = kl.plen == 1 && kl.pat[0] == '*';
	/* ht_scan_all() leaves the read-side section between buckets; this
	 * command holds no table reference while it runs. */
	ht_scan_all(db, keys_fn, &kl);
	keylist_reply_free(c, &kl);
}

void cmd_scan(struct conn *c, int argc)
{
	struct keylist kl = {0};
	unsigned long long cursor;
	long long count = 10;
	int type_none = 0;
	char buf[24];
	uint64_t next;

	/* Redis parses the cursor with strtoul: a leading '-' wraps. */
	{
		const char *s = ARGV(c, 1);
		char *end;

		errno = 0;
		cursor = strtoull(s, &end, 10);
		if (ARGL(c, 1) == 0 || s[0] == ' ' || s[0] == '\t' || *end != '\0' ||
		    end != s + ARGL(c, 1) || errno == ERANGE) {
			reply_error(c, "invalid cursor");
			return;
		}
	}
	kl.all = 1;
	for (int j = 2; j < argc; j++) {
		int more = argc - j - 1;

		if (util_strcaseeq(K(j), "count") && more >= 1) {
			if (get_ll(c, j + 1, &count) < 0)
				return;
			if (count < 1) {
				reply_error(c, ERR_SYNTAX);
				return;
			}
			j++;
		} else if (util_strcaseeq(K(j), "match") && more >= 1) {
			kl.pat = ARGV(c, j + 1);
			kl.plen = ARGL(c, j + 1);
			kl.all = kl.plen == 1 && kl.pat[0] == '*';
			j++;
		} else if (util_strcaseeq(K(j), "type") && more >= 1) {
			type_none = !util_strcaseeq(K(j + 1), "string");
			j++;
		} else {
			reply_error(c, ERR_SYNTAX);
			return;
		}
	}
	/* COUNT is a hint of work: a sparse table gets a few more steps, so a
	 * small keyspace is returned in one call as Redis does. */
	next = cursor;
	for (int round = 0; round < 16; round++) {
		if (ht_count(db) == 0) {
			next = 0;
			break;
		}
		next = ht_scan_rcu(db, next, (size_t)count - kl.n, keys_fn, &kl);
		if (next == 0 || kl.n >= (size_t)count)
			break;
	}
	if (type_none) {
		for (size_t i = 0; i < kl.n; i++)
			free(kl.k[i]);
		kl.n = 0;
	}
	reply_array(c, 2);
	reply_bulk(c, buf, (size_t)snprintf(buf, sizeof(buf), "%llu", (unsigned long long)next));
	keylist_reply_free(c, &kl);
}

static _Thread_local uint64_t rnd_seed;

void cmd_randomkey(struct conn *c, int argc)
{
	const struct ht_entry *e;

	(void)argc;
	if (!rnd_seed)
		rnd_seed = (uint64_t)util_ustime() ^ (uint64_t)(uintptr_t)c;
	e = ht_random_rcu(db, &rnd_seed);
	if (e)
		reply_bulk(c, ht_entry_key(e), ht_entry_klen(e));
	else
		reply_null(c);
}

void cmd_dbsize(struct conn *c, int argc)
{
	(void)argc;
	reply_int(c, (long long)ht_count(db));
}

void cmd_flush(struct conn *c, int argc)
{
	size_t removed;
	int rc;

	if (argc > 2 ||
	    (argc == 2 && !util_strcaseeq(K(1), "async") && !util_strcaseeq(K(1), "sync"))) {
		reply_error(c, ERR_SYNTAX);
		return;
	}
	removed = ht_count(db);
	rc = ht_flush(db);
	if (rc < 0) {
		reply_ht_err(c, rc);
	} else {
		SRV_DIRTY(c, removed);
		if (util_strcaseeq(K(0), "flushall"))
			persist_flushall();
		reply_ok(c);
	}
}

/* --------------------------------------------------------- active expiry */

/* Expiry statistics (INFO stats), written by the cron only. */
static _Atomic double expired_stale_perc;
static _Atomic unsigned long long expire_cap_reached, expire_cycle_us;

void db_expire_stats(double *stale_perc, unsigned long long *cap_reached,
		     unsigned long long *cpu_ms)
{
	*stale_perc = atomic_load_explicit(&expired_stale_perc, memory_order_relaxed) * 100.0;
	*cap_reached = atomic_load_explicit(&expire_cap_reached, memory_order_relaxed);
	*cpu_ms = atomic_load_explicit(&expire_cycle_us, memory_order_relaxed) / 1000;
}

/*
 * Main thread cron, hz times a second, Redis's slow active expire cycle:
 * sample 20 keys with a TTL from a rotating cursor and remove the expired
 * ones, again and again while more than 10% of a sample had expired (the more
 * it finds, the harder it works), within 25% of the cron period (each time
 * the cap stops it counts in expired_time_cap_reached_count).  Also keeps
 * expired_stale_perc (moving average of the expired share of samples),
 * expire_cycle_cpu_milliseconds and avg_ttl.
 */
#define EXPIRE_KEYS_PER_LOOP 20
#define EXPIRE_ACCEPTABLE_STALE 10 /* percent */
#define EXPIRE_SLOW_TIME_PERC 25
void db_active_expire_cycle(void)
{
	long long hz = atomic_load_explicit(&g_cfg.hz, memory_order_relaxed);
	long long budget_us = 1000000 / (hz ? hz : 10) * EXPIRE_SLOW_TIME_PERC / 100;
	long long start = util_ustime(), elapsed;
	size_t sampled, expired, total_sampled = 0, total_expired = 0;

	for (;;) {
		ht_expire_cycle(db, EXPIRE_KEYS_PER_LOOP, 0, &sampled, &expired);
		total_sampled += sampled;
		total_expired += expired;
		if (sampled == 0 || expired * 100 <= sampled * EXPIRE_ACCEPTABLE_STALE)
			break;
		if (util_ustime() - start > budget_us) {
			STAT_ADD(expire_cap_reached, 1);
			break;
		}
	}
	elapsed = util_ustime() - start;
	STAT_ADD(expire_cycle_us, (unsigned long long)elapsed);
	{
		double cur = total_sampled ? (double)total_expired / (double)total_sampled : 0.0;
		double old = atomic_load_explicit(&expired_stale_perc, memory_order_relaxed);

		atomic_store_explicit(&expired_stale_perc, cur * 0.05 + old * 0.95,
				      memory_order_relaxed);
	}
	{
		const struct ht_entry *s[20];
		static uint64_t seed = 88172645463325252ULL;
		size_t n;
		long long now = util_mstime(), sum = 0, cnt = 0, prev;

		rcu_read_lock();
		n = ht_sample_rcu(db, s, 20, 1, &seed);
		for (size_t i = 0; i < n; i++) {
			int64_t x = ht_entry_expire(s[i]);

			if (x > now) {
				sum += x - now;
				cnt++;
			}
		}
		rcu_read_unlock();
		prev = atomic_load_explicit(&avg_ttl, memory_order_relaxed);
		if (cnt) {
			long long cur = sum / cnt;

			atomic_store_explicit(&avg_ttl, prev ? (prev * 49 + cur) / 50 : cur,
					      memory_order_relaxed);
		} else if (ht_count_expires(db) == 0) {
			atomic_store_explicit(&avg_ttl, 0, memory_order_relaxed);
		}
	}
}
