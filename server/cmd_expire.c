/*
 * cmd_expire.c - the expiry commands: EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL
 * PTTL EXPIRETIME PEXPIRETIME PERSIST.
 *
 * Workers, QSBR read side (see db.h).  A time in the past deletes the key
 * under ht_rmw(), as Redis does; the options NX XX GT LT are checked in
 * Redis's order.  Lazy and active expiry themselves live in db.c.  Replies
 * follow Redis 7.0 byte for byte (tests/server/cases.txt).
 */
#define RCU_FLAVOR_QSBR
#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "server/cmd.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/notify.h"
#include "server/repl.h"
#include "server/reply.h"
#include "server/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	if (db_get_ll(c, 2, &when) < 0)
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
	/* a time in the past deletes, except on a replica: it stores the past
	 * time and waits for its master's DEL (Redis's checkAlreadyExpired()) */
	if (when <= util_mstime() && !repl_is_replica()) {
		struct expire_arg a = {flags, 0};

		rc = ht_rmw(db_of(c), K(1), expire_past_fn, &a);
		if (rc < 0)
			db_reply_ht_err(c, rc);
		else
			reply_int(c, a.result);
		if (rc >= 0 && a.result > 0) {
			SRV_DIRTY(c, 1);
			db_notify(c, NOTIFY_GENERIC, "del", 1);
		}
		return;
	}
	rc = ht_expire_set(
	    db_of(c), K(1), when,
	    ((flags & EXP_NX) ? HT_EXPIRE_NX : 0) | ((flags & EXP_XX) ? HT_EXPIRE_XX : 0) |
		((flags & EXP_GT) ? HT_EXPIRE_GT : 0) | ((flags & EXP_LT) ? HT_EXPIRE_LT : 0));
	if (rc > 0) {
		SRV_DIRTY(c, 1);
		db_notify(c, NOTIFY_GENERIC, "expire", 1);
	}
	if (rc == -ENOENT)
		reply_int(c, 0);
	else if (rc < 0)
		db_reply_ht_err(c, rc);
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

	int found = ht_expire_get(db_of(c), K(1), &exp) == 0;

	db_hit(c, 1, found); /* as lookupKeyReadWithFlags(LOOKUP_NOTOUCH) */
	if (!found) {
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
	rc = ht_expire_clear(db_of(c), K(1));
	if (rc > 0) {
		SRV_DIRTY(c, 1);
		db_notify(c, NOTIFY_GENERIC, "persist", 1);
	}
	if (rc == -ENOENT)
		reply_int(c, 0);
	else if (rc < 0)
		db_reply_ht_err(c, rc);
	else
		reply_int(c, rc);
}
