/*
 * tests/server/modules/racer.c - a test module of rcukv's own (issue 20),
 * built at test time against Redis 7.0.15's redismodule.h by
 * tests/server/modules_fetch.sh.
 *
 * A module written for Redis, where every module callback runs on one
 * thread: racer.incr reads a global counter, works a little, and writes it
 * back plus one, with no lock of its own; racer.get replies the counter and
 * racer.reset zeroes it.  Called from clients on several workers, the
 * counter ends exact only if the server runs one module callback at a time
 * (rcukv's module lock, docs/modules.md); test_modules.sh checks it.
 */
#include "redismodule.h"

static long long counter;

static int racer_incr(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	volatile long long v;

	(void)argv;
	if (argc != 1)
		return RedisModule_WrongArity(ctx);
	v = counter;
	for (volatile int i = 0; i < 2000; i++) /* the window another thread would hit */
		;
	counter = v + 1;
	return RedisModule_ReplyWithLongLong(ctx, v + 1);
}

static int racer_get(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	(void)argv;
	if (argc != 1)
		return RedisModule_WrongArity(ctx);
	return RedisModule_ReplyWithLongLong(ctx, counter);
}

static int racer_reset(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	(void)argv;
	if (argc != 1)
		return RedisModule_WrongArity(ctx);
	counter = 0;
	return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	(void)argv, (void)argc;
	if (RedisModule_Init(ctx, "racer", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR)
		return REDISMODULE_ERR;
	if (RedisModule_CreateCommand(ctx, "racer.incr", racer_incr, "write", 0, 0, 0) ==
		    REDISMODULE_ERR ||
	    RedisModule_CreateCommand(ctx, "racer.get", racer_get, "readonly", 0, 0, 0) ==
		    REDISMODULE_ERR ||
	    RedisModule_CreateCommand(ctx, "racer.reset", racer_reset, "write", 0, 0, 0) ==
		    REDISMODULE_ERR)
		return REDISMODULE_ERR;
	return REDISMODULE_OK;
}
