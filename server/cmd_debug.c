/*
 * cmd_debug.c - DEBUG, as far as rcukv has it, as Redis 7.0.15 answers it:
 * SLEEP, OBJECT (a string's line), SET-ACTIVE-EXPIRE, HELP (the subcommands
 * here only).  Refused unless enable-debug-command allows the client
 * (cmd.c's refuse(), before authentication, as Redis).
 *
 * Context: the connection's worker, inside its command.  DEBUG SLEEP stops
 * the worker as Redis stops its server, but offline (QSBR) so that grace
 * periods, and so the other workers, go on.
 * Tested by tests/server/cases_admin.txt and tests/server/test_admin.sh
 * (enable-debug-command yes).
 */
#define RCU_FLAVOR_QSBR
#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "server/cmd.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/evict.h"
#include "server/persist.h"
#include "server/rdb.h"
#include "server/reply.h"
#include "server/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const debug_help[] = {
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "HELP",
    "    Prints this help.",
    NULL,
};

/* DEBUG SLEEP: strtod() of the argument, unchecked, as Redis. */
static void debug_sleep(struct conn *c)
{
	long long us = (long long)(strtod(ARGV(c, 2), NULL) * 1000000);
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};

	rcu_thread_offline(); /* nothing of the table is held here */
	nanosleep(&ts, NULL);
	rcu_thread_online();
	reply_ok(c);
}

/* DEBUG OBJECT key: Redis's line for a string value.  The address is the
 * entry's, lru the LRU clock (seconds, 24 bits) of the last access. */
static void debug_object(struct conn *c)
{
	const struct ht_entry *e = ht_peek_rcu(db_of(c), ARGV(c, 2), ARGL(c, 2));
	const char *enc;
	long long v = -1, idle;
	void *payload = NULL;
	size_t plen = 0;
	char line[256];

	if (!e) {
		reply_error(c, ERR_NO_KEY);
		return;
	}
	enc = db_type(e) == OBJ_STRING ? db_str_encoding(e, &v) : db_encoding(e);
	/* serializedlength: the value's RDB encoding, DUMP's payload less its
	 * type byte, RDB version and CRC */
	if (persist_dump(e, &payload, &plen) != 0)
		plen = 11;
	free(payload);
	idle = evict_entry_idle_s(e);
	snprintf(line, sizeof(line),
		 "Value at:%p refcount:%d encoding:%s serializedlength:%zu lru:%lld "
		 "lru_seconds_idle:%lld",
		 (const void *)e,
		 !strcmp(enc, "int") && v >= 0 && v < 10000 && evict_shares_integers() ? INT_MAX
											 : 1,
		 enc, plen - 11, (util_mstime() / 1000 - idle) & ((1 << 24) - 1), idle);
	reply_simple(c, line);
}

void cmd_debug(struct conn *c, int argc)
{
	const char *sub = ARGV(c, 1);
	size_t sl = ARGL(c, 1);

	if (argc == 2 && util_strcaseeq(sub, sl, "help")) {
		reply_help(c, debug_help);
	} else if (argc == 3 && util_strcaseeq(sub, sl, "sleep")) {
		debug_sleep(c);
	} else if (argc == 3 && util_strcaseeq(sub, sl, "object")) {
		debug_object(c);
	} else if (argc == 3 && util_strcaseeq(sub, sl, "set-active-expire")) {
		atomic_store_explicit(&db_active_expire_enabled, atoi(ARGV(c, 2)) != 0,
				      memory_order_relaxed);
		reply_ok(c);
	} else {
		reply_errorf(c,
			     "unknown subcommand or wrong number of arguments for '%.128s'. Try "
			     "DEBUG HELP.",
			     sub);
	}
}
