/*
 * cmd_repl.c - REPLICAOF, SLAVEOF, ROLE and REPLCONF: rcukv as a replica of
 * a Redis master (the machinery is repl.c; docs/replication.md).
 */
#include "server/cmd.h"
#include "server/conn.h"
#include "server/repl.h"
#include "server/replm.h"
#include "server/reply.h"
#include "server/util.h"

#include <stdio.h>
#include <string.h>

/* REPLICAOF host port | NO ONE, in Redis 7.0's order of checks: NO ONE
 * first (any case), then the port (0-65535, "Invalid master port"). */
void cmd_replicaof(struct conn *c, int argc)
{
	long long port;
	char host[256];

	(void)argc;
	if (util_strcaseeq(ARGV(c, 1), ARGL(c, 1), "no") &&
	    util_strcaseeq(ARGV(c, 2), ARGL(c, 2), "one")) {
		repl_set_master(NULL, 0);
		reply_ok(c);
		return;
	}
	if (c->flags & CONN_MASTER) {
		reply_error(c, "Command is not valid when client is a replica.");
		return;
	}
	if (!resp_str2ll(ARGV(c, 2), ARGL(c, 2), &port) || port < 0 || port > 65535) {
		reply_error(c, "Invalid master port");
		return;
	}
	snprintf(host, sizeof(host), "%.*s", (int)(ARGL(c, 1) < 255 ? ARGL(c, 1) : 255),
		 ARGV(c, 1));
	if (repl_set_master(host, (int)port) == 1) {
		reply_simple(c, "OK Already connected to specified master");
		return;
	}
	reply_ok(c);
}

void cmd_role(struct conn *c, int argc)
{
	(void)argc;
	repl_role_reply(c);
}

void cmd_replconf(struct conn *c, int argc)
{
	repl_replconf(c, argc);
}

/* SYNC, PSYNC replid offset: serve a replica (replm.c). */
static void sync_cmd(struct conn *c, int argc, int psync)
{
	/* chained replication is not built: a replica serves none */
	if (repl_is_replica()) {
		reply_error(c, "-NOMASTERLINK Can't SYNC while not connected with my master");
		return;
	}
	replm_sync(c, argc, psync);
}

void cmd_sync(struct conn *c, int argc)
{
	sync_cmd(c, argc, 0);
}

void cmd_psync(struct conn *c, int argc)
{
	sync_cmd(c, argc, 1);
}
