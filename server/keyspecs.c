/*
 * keyspecs.c - the key-spec flags COMMAND GETKEYSANDFLAGS reports (cmd.h,
 * cmd_key_flags()), as Redis 7.0.15's key specs give them for the commands
 * rcukv has (the keys themselves are the rows' first/last/step).  A key
 * takes the flags of the last spec beginning at or before its position;
 * SET and BITFIELD, whose flags vary with their arguments, decide as
 * Redis's setGetKeys() and bitfieldGetKeys() do.
 *
 * Data: generated from redis-server 7.0.15's COMMAND INFO key specs; a
 * command added to commands.def with keys needs its line here (a command
 * missing here reports no flags).  Tested by tests/server/cases_admin.txt.
 */
#include "server/cmd.h"
#include "server/conn.h"
#include "server/util.h"

#include <string.h>
#include <strings.h>

struct keyspec {
	const char *flags; /* Redis's flag names, space separated */
	int begin;	   /* the spec's first key position */
};

static const struct {
	const char *name; /* full name: "object|encoding" */
	struct keyspec spec[2];
} keyspecs[] = {
    {"get", {{"RO access", 1}}},
    {"set", {{"RW access update", 1}}},
    {"setnx", {{"OW insert", 1}}},
    {"setex", {{"OW update", 1}}},
    {"psetex", {{"OW update", 1}}},
    {"getset", {{"RW access update", 1}}},
    {"getdel", {{"RW access delete", 1}}},
    {"getex", {{"RW access update", 1}}},
    {"mget", {{"RO access", 1}}},
    {"mset", {{"OW update", 1}}},
    {"msetnx", {{"OW insert", 1}}},
    {"del", {{"RM delete", 1}}},
    {"unlink", {{"RM delete", 1}}},
    {"exists", {{"RO", 1}}},
    {"touch", {{"RO", 1}}},
    {"sort", {{"RO access", 1}, {"OW update", 2}}},
    {"sort_ro", {{"RO access", 1}}},
    {"incr", {{"RW access update", 1}}},
    {"decr", {{"RW access update", 1}}},
    {"incrby", {{"RW access update", 1}}},
    {"decrby", {{"RW access update", 1}}},
    {"incrbyfloat", {{"RW access update", 1}}},
    {"append", {{"RW insert", 1}}},
    {"strlen", {{"RO", 1}}},
    {"getrange", {{"RO access", 1}}},
    {"substr", {{"RO access", 1}}},
    {"setrange", {{"RW update", 1}}},
    {"lcs", {{"RO access", 1}}},
    {"setbit", {{"RW access update", 1}}},
    {"getbit", {{"RO access", 1}}},
    {"bitcount", {{"RO access", 1}}},
    {"bitpos", {{"RO access", 1}}},
    {"bitop", {{"OW update", 2}, {"RO access", 3}}},
    {"bitfield", {{"RW access update", 1}}},
    {"bitfield_ro", {{"RO access", 1}}},
    {"hset", {{"RW update", 1}}},
    {"hsetnx", {{"RW insert", 1}}},
    {"hget", {{"RO access", 1}}},
    {"hmget", {{"RO access", 1}}},
    {"hmset", {{"RW update", 1}}},
    {"hgetall", {{"RO access", 1}}},
    {"hkeys", {{"RO access", 1}}},
    {"hvals", {{"RO access", 1}}},
    {"hlen", {{"RO", 1}}},
    {"hstrlen", {{"RO", 1}}},
    {"hexists", {{"RO", 1}}},
    {"hdel", {{"RW delete", 1}}},
    {"hincrby", {{"RW access update", 1}}},
    {"hincrbyfloat", {{"RW access update", 1}}},
    {"hrandfield", {{"RO access", 1}}},
    {"hscan", {{"RO access", 1}}},
    {"sadd", {{"RW insert", 1}}},
    {"srem", {{"RW delete", 1}}},
    {"smembers", {{"RO access", 1}}},
    {"sismember", {{"RO", 1}}},
    {"smismember", {{"RO access", 1}}},
    {"scard", {{"RO", 1}}},
    {"spop", {{"RW access delete", 1}}},
    {"srandmember", {{"RO access", 1}}},
    {"smove", {{"RW access delete", 1}, {"RW insert", 2}}},
    {"sinter", {{"RO access", 1}}},
    {"sinterstore", {{"RW update", 1}, {"RO access", 2}}},
    {"sunion", {{"RO access", 1}}},
    {"sunionstore", {{"OW update", 1}, {"RO access", 2}}},
    {"sdiff", {{"RO access", 1}}},
    {"sdiffstore", {{"OW update", 1}, {"RO access", 2}}},
    {"sscan", {{"RO access", 1}}},
    {"zadd", {{"RW update", 1}}},
    {"zincrby", {{"RW access update", 1}}},
    {"zrem", {{"RW delete", 1}}},
    {"zremrangebyscore", {{"RW delete", 1}}},
    {"zremrangebyrank", {{"RW delete", 1}}},
    {"zremrangebylex", {{"RW delete", 1}}},
    {"zunionstore", {{"OW update", 1}, {"RO access", 2}}},
    {"zinterstore", {{"OW update", 1}, {"RO access", 2}}},
    {"zdiffstore", {{"OW update", 1}, {"RO access", 2}}},
    {"zunion", {{"RO access", 1}}},
    {"zinter", {{"RO access", 1}}},
    {"zintercard", {{"RO access", 1}}},
    {"zdiff", {{"RO access", 1}}},
    {"zmpop", {{"RW access delete", 1}}},
    {"zrange", {{"RO access", 1}}},
    {"zrangestore", {{"OW update", 1}, {"RO access", 2}}},
    {"zrangebyscore", {{"RO access", 1}}},
    {"zrevrangebyscore", {{"RO access", 1}}},
    {"zrangebylex", {{"RO access", 1}}},
    {"zrevrangebylex", {{"RO access", 1}}},
    {"zcount", {{"RO access", 1}}},
    {"zlexcount", {{"RO access", 1}}},
    {"zrevrange", {{"RO access", 1}}},
    {"zcard", {{"RO", 1}}},
    {"zscore", {{"RO access", 1}}},
    {"zmscore", {{"RO access", 1}}},
    {"zrank", {{"RO access", 1}}},
    {"zrevrank", {{"RO access", 1}}},
    {"zscan", {{"RO access", 1}}},
    {"bzpopmin", {{"RW access delete", 1}}},
    {"bzpopmax", {{"RW access delete", 1}}},
    {"bzmpop", {{"RW access delete", 3}}},
    {"zpopmin", {{"RW access delete", 1}}},
    {"zpopmax", {{"RW access delete", 1}}},
    {"zrandmember", {{"RO access", 1}}},
    {"lindex", {{"RO access", 1}}},
    {"linsert", {{"RW insert", 1}}},
    {"llen", {{"RO", 1}}},
    {"lmove", {{"RW access delete", 1}, {"RW insert", 2}}},
    {"lpop", {{"RW access delete", 1}}},
    {"lpos", {{"RO access", 1}}},
    {"lpush", {{"RW insert", 1}}},
    {"lpushx", {{"RW insert", 1}}},
    {"lrange", {{"RO access", 1}}},
    {"lrem", {{"RW delete", 1}}},
    {"lset", {{"RW update", 1}}},
    {"ltrim", {{"RW delete", 1}}},
    {"rpop", {{"RW access delete", 1}}},
    {"rpoplpush", {{"RW access delete", 1}, {"RW insert", 2}}},
    {"rpush", {{"RW insert", 1}}},
    {"rpushx", {{"RW insert", 1}}},
    {"blpop", {{"RW access delete", 1}}},
    {"brpop", {{"RW access delete", 1}}},
    {"blmove", {{"RW access delete", 1}, {"RW insert", 2}}},
    {"brpoplpush", {{"RW access delete", 1}, {"RW insert", 2}}},
    {"lmpop", {{"RW access delete", 2}}},
    {"blmpop", {{"RW access delete", 3}}},
    {"expire", {{"RW update", 1}}},
    {"pexpire", {{"RW update", 1}}},
    {"expireat", {{"RW update", 1}}},
    {"pexpireat", {{"RW update", 1}}},
    {"ttl", {{"RO access", 1}}},
    {"pttl", {{"RO access", 1}}},
    {"expiretime", {{"RO access", 1}}},
    {"pexpiretime", {{"RO access", 1}}},
    {"persist", {{"RW update", 1}}},
    {"type", {{"RO", 1}}},
    {"rename", {{"RW access delete", 1}, {"OW update", 2}}},
    {"renamenx", {{"RW access delete", 1}, {"OW insert", 2}}},
    {"copy", {{"RO access", 1}, {"OW update", 2}}},
    {"dump", {{"RO access", 1}}},
    {"restore", {{"OW update", 1}}},
    {"watch", {{"RO", 1}}},
    {"object|encoding", {{"RO", 2}}},
    {"object|freq", {{"RO", 2}}},
    {"object|idletime", {{"RO", 2}}},
    {"object|refcount", {{"RO", 2}}},
    {"memory|usage", {{"RO", 2}}},
    {"ssubscribe", {{"not_key", 1}}},
    {"sunsubscribe", {{"not_key", 1}}},
    {"spublish", {{"not_key", 1}}},
};

/* SET: RW access update with a GET argument, else OW update. */
static const char *set_flags(const struct conn *c, int from)
{
	for (int i = from + 3; i < c->argc; i++)
		if (util_strcaseeq(ARGV(c, i), ARGL(c, i), "get"))
			return "RW access update";
	return "OW update";
}

/* BITFIELD: RO access when it only GETs (and sets OVERFLOW). */
static const char *bitfield_flags(const struct conn *c, int from)
{
	for (int i = from + 2; i < c->argc; i++) {
		int rem = c->argc - i - 1;

		if (!strcasecmp(ARGV(c, i), "get") && rem >= 2)
			i += 2;
		else if (!strcasecmp(ARGV(c, i), "overflow") && rem >= 1)
			i += 1;
		else
			return "RW access update";
	}
	return "RO access";
}

const char *cmd_key_flags(const struct cmd *k, const struct conn *c, int from, int pos)
{
	if (!strcmp(k->fullname, "set"))
		return set_flags(c, from);
	if (!strcmp(k->fullname, "bitfield"))
		return bitfield_flags(c, from);
	for (size_t i = 0; i < sizeof(keyspecs) / sizeof(keyspecs[0]); i++) {
		if (strcmp(keyspecs[i].name, k->fullname))
			continue;
		return keyspecs[i].spec[1].flags && pos >= keyspecs[i].spec[1].begin
			   ? keyspecs[i].spec[1].flags
			   : keyspecs[i].spec[0].flags;
	}
	return "";
}
