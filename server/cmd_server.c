/*
 * cmd_server.c - the server commands that touch no key (Redis's "server"
 * group, as far as rcukv has them): TIME, SHUTDOWN, ACL WHOAMI and the CONFIG
 * container (its GET and SET are config.c's, RESETSTAT is INFO's).  INFO is
 * info.c's, the persistence commands persist.c's, MEMORY and OBJECT evict.c's.
 *
 * Context: the connection's worker.  SHUTDOWN only asks the main thread
 * (server_request_shutdown()); the save and the exit happen there.
 *
 * Tested by tests/server/test_server.c and tests/server/test_startup.sh
 * (SHUTDOWN).
 */
#include "server/cmd.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/info.h"
#include "server/log.h"
#include "server/persist.h"
#include "server/reply.h"
#include "server/util.h"

#include <stddef.h>
#include <sys/time.h>

void cmd_time(struct conn *c, int argc)
{
	struct timeval tv;

	(void)argc;
	gettimeofday(&tv, NULL);
	reply_array(c, 2);
	reply_bulk_ll(c, tv.tv_sec);
	reply_bulk_ll(c, tv.tv_usec);
}

void cmd_shutdown(struct conn *c, int argc)
{
	int nosave = 0, save = 0, force = 0, abort_ = 0;

	for (int j = 1; j < argc; j++) {
		if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "nosave"))
			nosave = 1;
		else if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "save"))
			save = 1;
		else if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "now"))
			; /* no replicas to wait for */
		else if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "force"))
			force = 1;
		else if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "abort"))
			abort_ = 1;
		else {
			reply_error(c, ERR_SYNTAX);
			return;
		}
	}
	if ((abort_ && argc != 2) || (nosave && save)) {
		reply_error(c, ERR_SYNTAX);
		return;
	}
	if (abort_) {
		reply_error(c, "No shutdown in progress.");
		return;
	}
	srv_log(LL_WARNING, "User requested shutdown...");
	/* The save (persist_shutdown()) runs on the main thread with every
	 * worker paused between commands, so that no write lands after it.  As
	 * Redis: if the server exits, the client that asked gets no reply (its
	 * connection closes); if the save fails, it gets an error and the
	 * server goes on (net.c, worker_answer_shutdown()). */
	persist_set_shutdown_mode(nosave ? -1 : save ? 1 : 0, force);
	c->flags |= CONN_SHUTDOWN_WAIT;
	server_request_shutdown();
}

void acl_whoami(struct conn *c, int argc)
{
	(void)argc;
	reply_bulk_str(c, "default");
}

static const char *const config_help[] = {
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "HELP",
    "    Print this help.",
    NULL,
};

void config_sub(struct conn *c, int argc)
{
	const char *s = ARGV(c, 1);
	size_t sl = ARGL(c, 1);

	if (util_strcaseeq(s, sl, "get"))
		cfg_cmd_get(c, argc);
	else if (util_strcaseeq(s, sl, "set"))
		cfg_cmd_set(c, argc);
	else if (util_strcaseeq(s, sl, "resetstat")) {
		info_reset_stats();
		reply_ok(c);
	} else if (util_strcaseeq(s, sl, "help"))
		reply_help(c, config_help);
}
