/*
 * cmd_db.c - the commands that work across databases: SELECT's index, MOVE,
 * SWAPDB, and COPY's DB option (Redis's src/db.c).  The databases are db.c's
 * (db.h: slots of RCU-protected table pointers); docs/databases.md has the
 * design.
 *
 * MOVE and COPY ... DB write a second table while holding the source key's
 * stripe (the destination's ht_set() runs inside the source's ht_rmw()), so
 * the source and the destination change together for every writer.  Two
 * such commands in opposite directions would take two tables' stripes in
 * opposite orders, so they serialize on xdb_lock, taken before either
 * stripe; no other command holds stripes of two tables.  Workers, online.
 */
#define RCU_FLAVOR_QSBR
#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "server/cmd.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/lval.h"
#include "server/notify.h"
#include "server/multi.h"
#include "server/reply.h"

#include <errno.h>
#include <pthread.h>

static pthread_mutex_t xdb_lock = PTHREAD_MUTEX_INITIALIZER;

void cmd_select(struct conn *c, int argc)
{
	int id;

	(void)argc;
	if (db_get_index(c, 1, &id) == 0) {
		db_select(c, id);
		reply_ok(c);
	}
}

/* Across tables: the source key's value and TTL stored at the destination
 * (NX unless @replace), the source deleted if @move. */
struct xdb {
	struct ht *dst;
	const void *dkey;
	size_t dklen;
	int replace, move;
	int result; /* 1 stored, 0 source missing or destination taken */
	int found;  /* the source existed */
	int err;    /* the destination's error (-ENOMEM, -E2BIG), or 0 */
};

static int xdb_fn(struct ht_rmw *r, void *arg)
{
	struct xdb *x = arg;
	int rc;

	if (!r->old)
		return HT_RMW_KEEP;
	x->found = 1;
	if (!x->move && db_type(r->old) == OBJ_MODULE) { /* COPY ... DB: as in one db */
		if (x->replace || !ht_find_rcu(x->dst, x->dkey, x->dklen))
			x->err = -DB_ENOCOPY;
		return HT_RMW_KEEP;
	}
	if (ht_entry_extern(r->old))
		db_entry_dup(NULL, r->old); /* the copy's own reference (a list's root) */
	rc = ht_set(x->dst, x->dkey, x->dklen, ht_entry_val(r->old), ht_entry_vlen_arg(r->old),
		    r->expire_ms, x->replace ? 0 : HT_SET_NX, NULL);
	if (rc < 0 && ht_entry_extern(r->old))
		db_entry_free(NULL, r->old);
	if (rc == -EEXIST)
		return HT_RMW_KEEP;
	if (rc < 0) {
		x->err = rc;
		return HT_RMW_KEEP;
	}
	x->result = 1;
	return x->move ? HT_RMW_DELETE : HT_RMW_KEEP;
}

/* Run @x from key @i of the running command's table; reply the count or
 * the error.  The lock is taken offline: its holder may wait for stripes. */
static void xdb_run(struct conn *c, int i, struct xdb *x)
{
	int rc;

	rcu_thread_offline();
	pthread_mutex_lock(&xdb_lock);
	rcu_thread_online();
	rc = ht_rmw(db_of(c), K(i), xdb_fn, x);
	pthread_mutex_unlock(&xdb_lock);
	if (rc >= 0 && x->err == -DB_ENOCOPY) {
		db_hit(c, i, 1);
		reply_error(c, ERR_MODULE_NOCOPY);
		return;
	}
	if (rc < 0 || x->err < 0) {
		db_reply_ht_err(c, rc < 0 ? rc : x->err);
		return;
	}
	if (!x->move)
		db_hit(c, i, x->found); /* COPY's source: lookupKeyRead() */
	if (x->result) {
		SRV_DIRTY(c, 1);
		if (x->move)
			db_notify(c, NOTIFY_GENERIC, "move_from", i);
		if (notify_wanted(NOTIFY_GENERIC))
			notify_event(NOTIFY_GENERIC, x->move ? "move_to" : "copy_to", x->dkey,
				     x->dklen, db_index_of(x->dst));
		db_signal_if_list(x->dst, x->dkey, x->dklen);
	}
	reply_int(c, x->result);
}

void cmd_move(struct conn *c, int argc)
{
	struct xdb x = {.dkey = ARGV(c, 1), .dklen = ARGL(c, 1), .move = 1};
	int id;

	(void)argc;
	if (db_get_index(c, 2, &id) != 0)
		return;
	x.dst = db_at(id);
	if (x.dst == db_of(c)) {
		reply_error(c, "source and destination objects are the same");
		return;
	}
	xdb_run(c, 1, &x);
}

void db_copy_to(struct conn *c, struct ht *dst, int replace)
{
	struct xdb x = {.dst = dst, .dkey = ARGV(c, 2), .dklen = ARGL(c, 2), .replace = replace};

	xdb_run(c, 1, &x);
}

/*
 * SWAPDB a b.  Redis checks each index's integer form with its own error,
 * then both ranges; swapping a db with itself is a successful no-op.  The
 * swap (db_swap()) returns after a grace period, so no command that read
 * either slot before it is still running when +OK is sent.
 */
void cmd_swapdb(struct conn *c, int argc)
{
	int a, b;

	(void)argc;
	if (db_get_int(c, 1, "invalid first DB index", &a) != 0 ||
	    db_get_int(c, 2, "invalid second DB index", &b) != 0)
		return;
	if (a < 0 || b < 0 || a >= g_ndbs || b >= g_ndbs) {
		reply_error(c, ERR_DB_RANGE);
		return;
	}
	if (a != b) {
		db_swap(c->w, a, b);
		multi_touch_dbs(a, b);
	}
	SRV_DIRTY(c, 1);
	reply_ok(c);
}
