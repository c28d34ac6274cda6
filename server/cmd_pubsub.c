/*
 * cmd_pubsub.c - the pub/sub commands, as Redis 7.0's src/pubsub.c files
 * them: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, PUBSUB
 * (CHANNELS, NUMSUB, NUMPAT, SHARDCHANNELS, SHARDNUMSUB, HELP), SSUBSCRIBE,
 * SUNSUBSCRIBE, SPUBLISH.  The state and the delivery are pubsub.c's; the
 * RESP2 subscribed-mode rule is cmd_dispatch()'s, PING's subscribed reply
 * cmd_ping()'s.
 *
 * Context: each handler runs on its connection's worker, online.  Without a
 * cluster, shard channels are a namespace of their own with no slot checks
 * (as redis-server standalone).
 */
#include "server/cmd.h"
#include "server/conn.h"
#include "server/pubsub.h"
#include "server/reply.h"

/* SUBSCRIBE / PSUBSCRIBE / SSUBSCRIBE name... */
static void subscribe_args(struct conn *c, int argc, enum ps_kind kind)
{
	for (int j = 1; j < argc; j++)
		pubsub_subscribe(c, kind, ARGV(c, j), ARGL(c, j));
}

/* (P|S)UNSUBSCRIBE [name...]: none named is all of them. */
static void unsubscribe_args(struct conn *c, int argc, enum ps_kind kind)
{
	if (argc == 1)
		pubsub_unsubscribe_all(c, kind);
	for (int j = 1; j < argc; j++)
		pubsub_unsubscribe(c, kind, ARGV(c, j), ARGL(c, j));
}

void cmd_subscribe(struct conn *c, int argc)
{
	subscribe_args(c, argc, PS_CHANNEL);
}

void cmd_psubscribe(struct conn *c, int argc)
{
	subscribe_args(c, argc, PS_PATTERN);
}

void cmd_ssubscribe(struct conn *c, int argc)
{
	subscribe_args(c, argc, PS_SHARD);
}

void cmd_unsubscribe(struct conn *c, int argc)
{
	unsubscribe_args(c, argc, PS_CHANNEL);
}

void cmd_punsubscribe(struct conn *c, int argc)
{
	unsubscribe_args(c, argc, PS_PATTERN);
}

void cmd_sunsubscribe(struct conn *c, int argc)
{
	unsubscribe_args(c, argc, PS_SHARD);
}

void cmd_publish(struct conn *c, int argc)
{
	(void)argc;
	reply_int(c, pubsub_publish(c, PS_CHANNEL, ARGV(c, 1), ARGL(c, 1), ARGV(c, 2), ARGL(c, 2)));
}

void cmd_spublish(struct conn *c, int argc)
{
	(void)argc;
	reply_int(c, pubsub_publish(c, PS_SHARD, ARGV(c, 1), ARGL(c, 1), ARGV(c, 2), ARGL(c, 2)));
}

/* ------------------------------------------------------------- PUBSUB */

/* PUBSUB CHANNELS / SHARDCHANNELS [pattern]: Redis checks the count in the
 * handler, with its subcommand syntax error. */
static void channels(struct conn *c, int argc, enum ps_kind kind)
{
	if (argc > 3) {
		reply_errorf(c,
			     "unknown subcommand or wrong number of arguments for '%.128s'. "
			     "Try PUBSUB HELP.",
			     ARGV(c, 1));
		return;
	}
	pubsub_reply_channels(c, kind, argc == 3 ? ARGV(c, 2) : NULL, argc == 3 ? ARGL(c, 2) : 0);
}

/* PUBSUB NUMSUB / SHARDNUMSUB [channel...]: [channel, count]... */
static void numsub(struct conn *c, int argc, enum ps_kind kind)
{
	reply_array(c, (long long)(argc - 2) * 2);
	for (int j = 2; j < argc; j++) {
		reply_bulk(c, ARGV(c, j), ARGL(c, j));
		reply_int(c, pubsub_numsub(kind, ARGV(c, j), ARGL(c, j)));
	}
}

void cmd_pubsub_channels(struct conn *c, int argc)
{
	channels(c, argc, PS_CHANNEL);
}

void cmd_pubsub_shardchannels(struct conn *c, int argc)
{
	channels(c, argc, PS_SHARD);
}

void cmd_pubsub_numsub(struct conn *c, int argc)
{
	numsub(c, argc, PS_CHANNEL);
}

void cmd_pubsub_shardnumsub(struct conn *c, int argc)
{
	numsub(c, argc, PS_SHARD);
}

void cmd_pubsub_numpat(struct conn *c, int argc)
{
	(void)argc;
	reply_int(c, pubsub_count(PS_PATTERN));
}

static const char *const pubsub_help[] = {
    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: "
    "'*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
    "HELP",
    "    Prints this help.",
    NULL,
};

void cmd_pubsub_help(struct conn *c, int argc)
{
	(void)argc;
	reply_help(c, pubsub_help);
}
