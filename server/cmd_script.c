/*
 * cmd_script.c - the scripting group: EVAL EVALSHA EVAL_RO EVALSHA_RO and
 * SCRIPT FLUSH/HELP/LOAD/EXISTS/KILL (Redis's src/eval.c commands).  Thin
 * handlers over the engine, script.c (script.h; design in
 * docs/scripting.md).  Replies are Redis 7.0.15's
 * (tests/server/cases_script.txt).
 */
#include "server/cmd.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/reply.h"
#include "server/script.h"
#include "server/util.h"

#include <limits.h>

void cmd_eval(struct conn *c, int argc)
{
	script_eval(c, argc, 0, 0);
}

void cmd_evalsha(struct conn *c, int argc)
{
	script_eval(c, argc, 1, 0);
}

void cmd_eval_ro(struct conn *c, int argc)
{
	script_eval(c, argc, 0, 1);
}

void cmd_evalsha_ro(struct conn *c, int argc)
{
	script_eval(c, argc, 1, 1);
}

/* SCRIPT FLUSH [ASYNC|SYNC]: both empty the cache at once (what is freed
 * later is each worker's state, at its next script). */
void cmd_script_flush(struct conn *c, int argc)
{
	if (argc > 3 || (argc == 3 && !util_strcaseeq(ARGV(c, 2), ARGL(c, 2), "sync") &&
			 !util_strcaseeq(ARGV(c, 2), ARGL(c, 2), "async"))) {
		reply_error(c, "SCRIPT FLUSH only support SYNC|ASYNC option");
		return;
	}
	script_flush();
	reply_ok(c);
}

void cmd_script_load(struct conn *c, int argc)
{
	(void)argc;
	script_load(c, ARGV(c, 2), ARGL(c, 2));
}

void cmd_script_exists(struct conn *c, int argc)
{
	reply_array(c, argc - 2);
	for (int j = 2; j < argc; j++)
		reply_int(c, script_exists(ARGV(c, j), ARGL(c, j)));
}

void cmd_script_kill(struct conn *c, int argc)
{
	(void)argc;
	switch (script_kill()) {
	case 0:
		reply_ok(c);
		break;
	case -2:
		reply_error(c, "-UNKILLABLE Sorry the script already executed write commands against "
			       "the dataset. You can either wait the script termination or kill the "
			       "server in a hard way using the SHUTDOWN NOSAVE command.");
		break;
	default:
		reply_error(c, "-NOTBUSY No scripts in execution right now.");
	}
}

static const char *const script_help[] = {
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
    NULL,
};

void cmd_script_help(struct conn *c, int argc)
{
	(void)argc;
	reply_help(c, script_help);
}

/* lua-time-limit and its Redis 7 name busy-reply-threshold: one value. */
extern _Atomic long long script_busy_ms;
static const struct cfg_opt script_rows[] = {
    {.name = "busy-reply-threshold", .kind = CFG_INT, .mut = CFG_MUTABLE, .field = &script_busy_ms,
     .min = 0, .max = LONG_MAX, .def = "5000"},
    {.name = "lua-time-limit", .kind = CFG_INT, .mut = CFG_MUTABLE, .field = &script_busy_ms,
     .min = 0, .max = LONG_MAX, .def = "5000"},
};

static struct cfg_group script_group = {
    "script", script_rows, (int)(sizeof(script_rows) / sizeof(script_rows[0])), NULL, NULL, NULL};
CFG_REGISTER(script_group)
