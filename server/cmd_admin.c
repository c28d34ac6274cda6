/*
 * cmd_admin.c - the server's diagnostics commands, as Redis 7.0.15 gives
 * them: SLOWLOG (over slowlog.h), LATENCY (over latency.h, and INFO
 * latencystats' per-command histograms for HISTOGRAM), MONITOR (over
 * monitor.h), and CLIENT's admin subcommands: PAUSE/UNPAUSE (over pause.h),
 * NO-EVICT, REPLY and UNBLOCK; RESET; CONFIG REWRITE (over
 * config_rewrite.c).
 *
 * Context: the connection's worker, inside its command.
 * Tested by tests/server/cases_admin.txt (tests/server/test_admin.sh).
 */
#include "server/block.h"
#include "server/client.h"
#include "server/cmd.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/lathist.h"
#include "server/latency.h"
#include "server/monitor.h"
#include "server/multi.h"
#include "server/pause.h"
#include "server/pubsub.h"
#include "server/tracking.h"
#include "server/reply.h"
#include "server/slowlog.h"
#include "server/stats.h"
#include "server/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Redis's addReplySubcommandSyntaxError(): a subcommand given the wrong
 * arguments for what its handler checks itself. */
static void subcommand_syntax(struct conn *c, const char *container)
{
	reply_errorf(c,
		     "unknown subcommand or wrong number of arguments for '%.128s'. Try %s HELP.",
		     ARGV(c, 1), container);
}

/* ------------------------------------------------------------- SLOWLOG */

void cmd_slowlog_get(struct conn *c, int argc)
{
	long long count = 10;

	if (argc > 3) {
		subcommand_syntax(c, "SLOWLOG");
		return;
	}
	if (argc == 3 && (!resp_str2ll(ARGV(c, 2), ARGL(c, 2), &count) || count < -1)) {
		reply_error(c, "count should be greater than or equal to -1");
		return;
	}
	slowlog_reply(c, count);
}

void cmd_slowlog_len(struct conn *c, int argc)
{
	(void)argc;
	reply_int(c, slowlog_len());
}

void cmd_slowlog_reset(struct conn *c, int argc)
{
	(void)argc;
	slowlog_reset();
	reply_ok(c);
}

static const char *const slowlog_help[] = {
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
    "HELP",
    "    Prints this help.",
    NULL,
};

void cmd_slowlog_help(struct conn *c, int argc)
{
	(void)argc;
	reply_help(c, slowlog_help);
}

/* ------------------------------------------------------------- LATENCY */

void cmd_latency_latest(struct conn *c, int argc)
{
	(void)argc;
	latency_reply_latest(c);
}

void cmd_latency_history(struct conn *c, int argc)
{
	(void)argc;
	latency_reply_history(c, ARGV(c, 2), ARGL(c, 2));
}

void cmd_latency_reset(struct conn *c, int argc)
{
	int n = 0;

	if (argc == 2)
		n = latency_reset(NULL, 0);
	for (int j = 2; j < argc; j++)
		n += latency_reset(ARGV(c, j), ARGL(c, j));
	reply_int(c, n);
}

void cmd_latency_doctor(struct conn *c, int argc)
{
	(void)argc;
	latency_reply_doctor(c);
}

/*
 * One command's entry of LATENCY HISTOGRAM, as Redis's fillCommandCDF():
 * {calls, histogram_usec: {us: cumulative count}} with one key per power of
 * two from 1024 ns (the highest value of that level's bucket, in whole us)
 * where the cumulative count grew, up to the level that holds them all.
 */
static void histogram_one(struct conn *c, const char *name, const unsigned long long *h,
			  unsigned long long total)
{
	unsigned long long cum = 0, prev = 0;
	unsigned idx = 0, n = 0;
	struct hist_point {
		unsigned long long us, cum;
	} pts[64];

	for (unsigned long long level = 1024; cum < total && n < 64; level <<= 1) {
		unsigned top = lathist_index(level);

		for (; idx <= top; idx++)
			cum += h[idx];
		if (cum > prev)
			pts[n++] = (struct hist_point){lathist_highest(top) / 1000, cum};
		prev = cum;
		if (level >= LATHIST_MAX)
			break;
	}
	reply_bulk_str(c, name);
	reply_map(c, 2);
	reply_bulk_str(c, "calls");
	reply_int(c, (long long)total);
	reply_bulk_str(c, "histogram_usec");
	reply_map(c, n);
	for (unsigned i = 0; i < n; i++) {
		reply_int(c, (long long)pts[i].us);
		reply_int(c, (long long)pts[i].cum);
	}
}

/* Whether INFO slot name @slot is what LATENCY HISTOGRAM's @arg names: the
 * command itself, or a subcommand of the container it names. */
static int histogram_match(const char *slot, const char *arg, size_t len)
{
	size_t sl = strlen(slot);

	if (util_strcaseeq(arg, len, slot))
		return 1;
	return sl > len && slot[len] == '|' && !memchr(arg, '|', len) &&
	       !strncasecmp(slot, arg, len);
}

/* The slots with samples that @arg names (all for NULL): replied when
 * @c is not NULL, counted either way. */
static int histogram_walk(struct conn *c, const char *arg, size_t len, unsigned long long *h)
{
	int n = 0;

	for (int s = 0; s < stats_nslots(); s++) {
		struct stats_cmd_sum sum;

		if (arg && !histogram_match(stats_slot_name(s), arg, len))
			continue;
		stats_cmd_sum(s, &sum, h); /* samples are counted with @h only */
		if (!sum.samples)
			continue;
		n++;
		if (c)
			histogram_one(c, stats_slot_name(s), h, sum.samples);
	}
	return n;
}

void cmd_latency_histogram(struct conn *c, int argc)
{
	unsigned long long *h = xmalloc(LATHIST_LEN * sizeof(*h));
	int n = 0;

	if (argc == 2) {
		reply_map(c, histogram_walk(NULL, NULL, 0, h));
		histogram_walk(c, NULL, 0, h);
	} else {
		for (int j = 2; j < argc; j++)
			n += histogram_walk(NULL, ARGV(c, j), ARGL(c, j), h);
		reply_map(c, n);
		for (int j = 2; j < argc; j++)
			histogram_walk(c, ARGV(c, j), ARGL(c, j), h);
	}
	free(h);
}

static const char *const latency_help[] = {
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the "
    "specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP",
    "    Prints this help.",
    NULL,
};

void cmd_latency_help(struct conn *c, int argc)
{
	(void)argc;
	reply_help(c, latency_help);
}

/* ------------------------------------------------------------- MONITOR */

/* As Redis: refused inside EXEC (a client that must get one reply per
 * command), no reply at all from a connection already monitoring. */
void cmd_monitor(struct conn *c, int argc)
{
	(void)argc;
	if (c->multi && c->multi->in_exec) {
		reply_error(c, "MONITOR isn't allowed for DENY BLOCKING client");
		return;
	}
	if (c->flags & CONN_MONITOR)
		return;
	monitor_add(c);
	reply_ok(c);
}

/* ------------------------------------------------------ CLIENT (admin) */

/* CLIENT PAUSE timeout [WRITE|ALL]: the mode is checked before the timeout,
 * as Redis does; a timeout of 0 pauses nothing. */
void cmd_client_pause(struct conn *c, int argc)
{
	int type = PAUSE_ALL;
	long long ms;

	if (argc > 4) {
		subcommand_syntax(c, "CLIENT");
		return;
	}
	if (argc == 4) {
		if (util_strcaseeq(ARGV(c, 3), ARGL(c, 3), "write")) {
			type = PAUSE_WRITE;
		} else if (!util_strcaseeq(ARGV(c, 3), ARGL(c, 3), "all")) {
			reply_error(c, "CLIENT PAUSE mode must be WRITE or ALL");
			return;
		}
	}
	if (!resp_str2ll(ARGV(c, 2), ARGL(c, 2), &ms)) {
		reply_error(c, "timeout is not an integer or out of range");
		return;
	}
	if (ms < 0) {
		reply_error(c, "timeout is negative");
		return;
	}
	/* Redis adds the time unchecked: a huge timeout wraps and ends at once */
	pause_clients(type, ms ? (long long)((unsigned long long)ms + (unsigned long long)util_mstime())
			       : 0);
	reply_ok(c);
}

void cmd_client_unpause(struct conn *c, int argc)
{
	(void)argc;
	pause_clients_end();
	reply_ok(c);
}

void cmd_client_no_evict(struct conn *c, int argc)
{
	(void)argc;
	if (util_strcaseeq(ARGV(c, 2), ARGL(c, 2), "on")) {
		c->flags |= CONN_NO_EVICT;
		atomic_fetch_or_explicit(&c->list_flags, CONN_NO_EVICT, memory_order_relaxed);
	} else if (util_strcaseeq(ARGV(c, 2), ARGL(c, 2), "off")) {
		c->flags &= ~CONN_NO_EVICT;
		atomic_fetch_and_explicit(&c->list_flags, ~CONN_NO_EVICT, memory_order_relaxed);
	} else {
		reply_error(c, ERR_SYNTAX);
		return;
	}
	reply_ok(c);
}

/* CLIENT REPLY ON|OFF|SKIP: OFF and SKIP answer nothing (cmd_dispatch()
 * drops this reply and, for SKIP, the next command's). */
void cmd_client_reply(struct conn *c, int argc)
{
	(void)argc;
	if (util_strcaseeq(ARGV(c, 2), ARGL(c, 2), "on")) {
		c->flags &= ~(CONN_REPLY_OFF | CONN_REPLY_SKIP | CONN_REPLY_SKIP_NEXT);
		reply_ok(c);
	} else if (util_strcaseeq(ARGV(c, 2), ARGL(c, 2), "off")) {
		c->flags |= CONN_REPLY_OFF;
	} else if (util_strcaseeq(ARGV(c, 2), ARGL(c, 2), "skip")) {
		if (!(c->flags & CONN_REPLY_OFF))
			c->flags |= CONN_REPLY_SKIP_NEXT;
	} else {
		reply_error(c, ERR_SYNTAX);
	}
}

/* CLIENT UNBLOCK id [TIMEOUT|ERROR]: a client blocked on keys (block.c)
 * answers as if it timed out, or -UNBLOCKED; 1 if it was blocked. */
void cmd_client_unblock(struct conn *c, int argc)
{
	long long id;

	if (argc > 4) {
		subcommand_syntax(c, "CLIENT");
		return;
	}
	if (argc == 4 && !util_strcaseeq(ARGV(c, 3), ARGL(c, 3), "timeout") &&
	    !util_strcaseeq(ARGV(c, 3), ARGL(c, 3), "error")) {
		reply_error(c, "CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
		return;
	}
	if (!resp_str2ll(ARGV(c, 2), ARGL(c, 2), &id)) {
		reply_error(c, ERR_NOT_INT);
		return;
	}
	reply_int(c, block_unblock((unsigned long long)id,
				   argc == 4 && util_strcaseeq(ARGV(c, 3), ARGL(c, 3), "error")));
}

/* ---------------------------------------------------------------- RESET */

/* As Redis's clearClientConnectionState(): out of MONITOR, tracking, MULTI
 * (and its WATCHes) and every subscription, back to RESP2, the default user's
 * authentication (none when requirepass is set), no name, CLIENT REPLY ON
 * (a SKIP for this very command stands).  No-evict stays. */
void cmd_reset(struct conn *c, int argc)
{
	(void)argc;
	monitor_remove(c);
	tracking_off(c);
	multi_discard(c);
	pubsub_reset(c);
	c->resp = 2;
	atomic_store_explicit(&c->resp_pub, 2, memory_order_relaxed);
	c->authenticated = !cfg_password_required();
	client_set_name(c, "", 0);
	c->flags &= ~(CONN_REPLY_OFF | CONN_REPLY_SKIP_NEXT);
	reply_simple(c, "RESET");
}

/* ------------------------------------------------------ CONFIG REWRITE */

void cmd_config_rewrite(struct conn *c, int argc)
{
	int r;

	(void)argc;
	if (!g_cfg.config_file) {
		reply_error(c, "The server is running without a config file");
		return;
	}
	cfg_set_lock();
	r = cfg_rewrite();
	cfg_set_unlock();
	if (r < 0)
		reply_errorf(c, "Rewriting config file: %s", strerror(errno));
	else
		reply_ok(c);
}
