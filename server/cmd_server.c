/*
 * cmd_server.c - the server commands that touch no key (Redis's "server"
 * group, as far as rcukv has them): TIME, SHUTDOWN, ACL WHOAMI and CONFIG
 * (GET, SET, RESETSTAT, HELP), over config.h's registry of option rows:
 * config.c parses, checks and stores values; what CONFIG prints, the order it
 * checks arguments in and the errors it gives are here.  SAVE, BGSAVE and
 * LASTSAVE, over persist.h.  INFO is info.c's, MEMORY and OBJECT are
 * cmd_object.c's.
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
#include <stdlib.h>
#include <string.h>
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

/* The reply SAVE and BGSAVE give for what persist.c did. */
static void reply_persist(struct conn *c, enum persist_result r)
{
	switch (r) {
	case PERSIST_DONE:
		reply_ok(c);
		break;
	case PERSIST_STARTED:
		reply_simple(c, "Background saving started");
		break;
	case PERSIST_SCHEDULED:
		reply_simple(c, "Background saving scheduled");
		break;
	case PERSIST_BUSY:
		reply_error(c, "Background save already in progress");
		break;
	default:
		reply_err_code(c, "-ERR");
		break;
	}
}

void cmd_save(struct conn *c, int argc)
{
	(void)argc;
	reply_persist(c, persist_save_now());
}

void cmd_bgsave(struct conn *c, int argc)
{
	int schedule = 0;

	if (argc > 1) {
		if (argc == 2 && util_strcaseeq(ARGV(c, 1), ARGL(c, 1), "schedule")) {
			schedule = 1;
		} else {
			reply_error(c, ERR_SYNTAX);
			return;
		}
	}
	reply_persist(c, persist_bgsave(schedule));
}

void cmd_lastsave(struct conn *c, int argc)
{
	(void)argc;
	reply_int(c, persist_lastsave());
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

/* CONFIG GET pattern...: every row one of the patterns matches, in the
 * registry's order (by name), as a map; hidden rows never. */
void cmd_config_get(struct conn *c, int argc)
{
	char *match = xcalloc((size_t)cfg_nopts() + 1, 1);
	int n = 0;

	for (int a = 2; a < argc; a++) {
		for (int i = 0; i < cfg_nopts(); i++) {
			const struct cfg_opt *o = cfg_opt_at(i);

			if (o->flags & CFG_HIDDEN)
				continue;
			if (!match[i] &&
			    util_glob_match(ARGV(c, a), ARGL(c, a), o->name, strlen(o->name), 1)) {
				match[i] = 1;
				n++;
			}
		}
	}
	reply_map(c, n);
	for (int i = 0; i < cfg_nopts(); i++) {
		char val[1024];

		if (!match[i])
			continue;
		cfg_opt_value(cfg_opt_at(i), val, sizeof(val));
		reply_bulk_str(c, cfg_opt_at(i)->name);
		reply_bulk_str(c, val);
	}
	free(match);
}

/* enable-protected-configs: yes, or local and the client is on this host. */
static int protected_allowed(const struct conn *c)
{
	return cmd_protected_allowed(
	    c, atomic_load_explicit(&g_cfg.enable_protected_configs, memory_order_relaxed));
}

#define SET_MAX_PAIRS 64

/* CONFIG SET's checks of the names, in Redis's order; NULL when they pass. */
static const char *set_check_names(struct conn *c, int argc, const struct cfg_opt **found,
				   int *nfound)
{
	*nfound = 0;
	if ((argc - 2) % 2 != 0 || argc - 2 > 2 * SET_MAX_PAIRS) {
		reply_errorf(c, "Unknown option or number of arguments for CONFIG SET - '%.*s'",
			     (int)ARGL(c, 2), ARGV(c, 2));
		return "";
	}
	for (int a = 2; a < argc; a += 2) {
		const struct cfg_opt *o = cfg_find(ARGV(c, a), ARGL(c, a));
		const char *why = NULL;

		if (!o) {
			reply_errorf(
			    c, "Unknown option or number of arguments for CONFIG SET - '%.*s'",
			    (int)ARGL(c, a), ARGV(c, a));
			return "";
		}
		for (int k = 0; k < *nfound; k++)
			if (found[k] == o)
				why = "duplicate parameter";
		if (!why && o->mut == CFG_STARTUP)
			why = "can't set immutable config";
		if (!why && o->mut == CFG_PROTECTED && !protected_allowed(c))
			why = "can't set protected config";
		if (why) {
			reply_errorf(c, "CONFIG SET failed (possibly related to argument '%s') - %s",
				     o->name, why);
			return why;
		}
		found[(*nfound)++] = o;
	}
	return NULL;
}

void cmd_config_set(struct conn *c, int argc)
{
	const struct cfg_opt *found[SET_MAX_PAIRS];
	long long vals[SET_MAX_PAIRS];
	char errbuf[200];
	int nfound;

	cfg_set_lock();
	if (set_check_names(c, argc, found, &nfound))
		goto out;
	/* Parse every value first, then apply: all or nothing, as Redis 7. */
	for (int k = 0; k < nfound; k++) {
		const char *err = cfg_set_value(found[k], ARGV(c, 3 + 2 * k), ARGL(c, 3 + 2 * k),
					       &vals[k], 0, errbuf, sizeof(errbuf));

		if (err) {
			reply_errorf(c,
				     "CONFIG SET failed (possibly related to argument '%s') - %s",
				     found[k]->name, err);
			goto out;
		}
	}
	for (int k = 0; k < nfound; k++)
		cfg_set_value(found[k], ARGV(c, 3 + 2 * k), ARGL(c, 3 + 2 * k), &vals[k], 1, errbuf,
			      sizeof(errbuf));
	reply_ok(c);
out:
	cfg_set_unlock();
}

void cmd_config_resetstat(struct conn *c, int argc)
{
	(void)argc;
	info_reset_stats();
	reply_ok(c);
}

void cmd_config_help(struct conn *c, int argc)
{
	(void)argc;
	reply_help(c, config_help);
}
