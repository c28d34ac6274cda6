/*
 * cmd_conn.c - the connection commands (Redis's "connection" group): PING,
 * ECHO, QUIT, AUTH, HELLO (SELECT is cmd_db.c's).  CLIENT is client.c's.
 *
 * Context: the connection's worker, inside its QSBR read-side section (see
 * net.h); they touch only the connection running them, and the registry
 * through client_set_name().
 *
 * Tested by tests/server/test_server.c (cases in tests/server/cases.txt and
 * cases_auth.txt) and tests/server/test_security.sh.
 */
#include "resp/resp.h"
#include "server/client.h"
#include "server/cmd.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/log.h"
#include "server/repl.h"
#include "server/reply.h"
#include "server/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cmd_ping(struct conn *c, int argc)
{
	if (argc > 2) {
		reply_error(c, "wrong number of arguments for 'ping' command");
		return;
	}
	if ((c->flags & CONN_PUBSUB) && c->resp == 2) { /* subscribed: ["pong", msg] */
		reply_array(c, 2);
		reply_bulk_str(c, "pong");
		reply_bulk(c, argc == 2 ? ARGV(c, 1) : "", argc == 2 ? ARGL(c, 1) : 0);
	} else if (argc == 2) {
		reply_bulk(c, ARGV(c, 1), ARGL(c, 1));
	} else {
		reply_raw(c, "+PONG\r\n", 7);
	}
}

void cmd_echo(struct conn *c, int argc)
{
	(void)argc;
	reply_bulk(c, ARGV(c, 1), ARGL(c, 1));
}

void cmd_quit(struct conn *c, int argc)
{
	(void)argc;
	reply_ok(c);
	c->flags |= CONN_CLOSE_AFTER_REPLY;
}

#define ERR_AUTH_NOPASS                                                                            \
	"AUTH <password> called without any password configured for the default user. Are you "    \
	"sure your configuration is correct?"
#define ERR_WRONGPASS "-WRONGPASS invalid username-password pair or user is disabled."

/*
 * One user, "default": without requirepass it takes any password (nopass);
 * with one, only that password (compared in constant time).  Any other user
 * name fails, as Redis answers with no ACL users defined.
 */
static int auth_check(const char *user, size_t ulen, const char *pw, size_t pwlen)
{
	int is_default = ulen == 7 && !memcmp(user, "default", 7);
	int ok = cfg_check_password(pw, pwlen); /* always run: same time for any user */

	if (!is_default)
		return 0;
	return cfg_password_required() ? ok : 1;
}

void cmd_auth(struct conn *c, int argc)
{
	int ok;

	if (argc > 3) {
		reply_error(c, ERR_SYNTAX);
		return;
	}
	if (argc == 2) {
		if (!cfg_password_required()) {
			reply_error(c, ERR_AUTH_NOPASS);
			return;
		}
		ok = auth_check("default", 7, ARGV(c, 1), ARGL(c, 1));
	} else {
		ok = auth_check(ARGV(c, 1), ARGL(c, 1), ARGV(c, 2), ARGL(c, 2));
	}
	if (ok) {
		c->authenticated = 1;
		reply_ok(c);
	} else {
		srv_log(LL_VERBOSE, "failed AUTH from %s", c->addr);
		reply_error(c, ERR_WRONGPASS);
	}
}

void cmd_hello(struct conn *c, int argc)
{
	long long ver = 0;
	const char *name = NULL;
	size_t namelen = 0;
	int have_auth = 0, auth_ok = 1;

	if (argc >= 2) {
		if (!resp_str2ll(ARGV(c, 1), ARGL(c, 1), &ver)) {
			reply_error(c, "Protocol version is not an integer or out of range");
			return;
		}
		if (ver < 2 || ver > 3) {
			reply_error(c, "-NOPROTO unsupported protocol version");
			return;
		}
	}
	for (int j = 2; j < argc; j++) {
		int more = argc - 1 - j;

		if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "auth") && more >= 2) {
			have_auth = 1;
			auth_ok = auth_check(ARGV(c, j + 1), ARGL(c, j + 1), ARGV(c, j + 2),
					     ARGL(c, j + 2));
			j += 2;
		} else if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "setname") && more) {
			name = ARGV(c, j + 1);
			namelen = ARGL(c, j + 1);
			j++;
		} else {
			reply_errorf(c, "Syntax error in HELLO option '%s'", ARGV(c, j));
			return;
		}
	}
	if (have_auth && !auth_ok) {
		reply_error(c, ERR_WRONGPASS);
		return;
	}
	if (have_auth)
		c->authenticated = 1;
	if (!c->authenticated && cfg_password_required()) {
		reply_error(c,
			    "-NOAUTH HELLO must be called with the client already authenticated, "
			    "otherwise the HELLO AUTH <user> <pass> option can be used to "
			    "authenticate the client and select the RESP protocol version at "
			    "the same time");
		return;
	}
	if (name && client_set_name(c, name, namelen) < 0)
		return;
	if (ver) {
		c->resp = (int)ver;
		atomic_store_explicit(&c->resp_pub, c->resp, memory_order_relaxed);
	}
	reply_map(c, 7);
	reply_bulk_str(c, "server");
	reply_bulk_str(c, "redis");
	reply_bulk_str(c, "version");
	reply_bulk_str(c, REDIS_COMPAT_VERSION);
	reply_bulk_str(c, "proto");
	reply_int(c, c->resp);
	reply_bulk_str(c, "id");
	reply_int(c, (long long)c->id);
	reply_bulk_str(c, "mode");
	reply_bulk_str(c, "standalone");
	reply_bulk_str(c, "role");
	reply_bulk_str(c, repl_is_replica() ? "replica" : "master");
	reply_bulk_str(c, "modules");
	reply_array(c, 0);
}
