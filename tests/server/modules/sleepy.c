/*
 * tests/server/modules/sleepy.c - a test module of rcukv's own (issue 20),
 * built at test time against Redis 7.0.15's redismodule.h by
 * tests/server/modules_fetch.sh.
 *
 * sleepy.call runs DEBUG SLEEP 0.002 through RedisModule_Call and replies
 * "+slept": the worker goes offline (QSBR) while a frame of this module is
 * on its stack, so a grace period alone does not prove it has left the
 * module.  MODULE UNLOAD must also wait for the module's in-flight count
 * (docs/modules.md, "Drain"); tests/server/test_modules_torture.py unloads
 * it under callers of sleepy.call.  Needs enable-debug-command yes.
 */
#include "redismodule.h"

static int sleepy_call(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleCallReply *r;

	(void)argv;
	if (argc != 1)
		return RedisModule_WrongArity(ctx);
	r = RedisModule_Call(ctx, "DEBUG", "cc", "SLEEP", "0.002");
	if (!r || RedisModule_CallReplyType(r) != REDISMODULE_REPLY_STRING) {
		if (r)
			RedisModule_FreeCallReply(r);
		return RedisModule_ReplyWithError(ctx, "ERR DEBUG SLEEP failed");
	}
	RedisModule_FreeCallReply(r);
	return RedisModule_ReplyWithSimpleString(ctx, "slept");
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	(void)argv, (void)argc;
	if (RedisModule_Init(ctx, "sleepy", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR)
		return REDISMODULE_ERR;
	if (RedisModule_CreateCommand(ctx, "sleepy.call", sleepy_call, "readonly", 0, 0, 0) ==
	    REDISMODULE_ERR)
		return REDISMODULE_ERR;
	return REDISMODULE_OK;
}
