/*
 * tests/server/modules/tsctest.c - a test module of rcukv's own, built at
 * test time against Redis 7.0.15's redismodule.h by
 * tests/server/modules_fetch.sh: the thread-safe context paths helloblock.c
 * does not reach (docs/modules.md, "Thread-safe contexts").
 *
 * tsc.trylock: from the command itself, which holds the lock: TryLock of a
 *   detached context answers ERR with errno EBUSY (Redis's main thread holds
 *   its GIL while it runs a command); replies [rc, errno == EBUSY].
 * tsc.thread KEY: a thread, with the client blocked: a detached context
 *   (TryLock until it succeeds), RedisModule_Call SET KEY, OpenKey/KeyType,
 *   Log, a reply on a GetThreadSafeContext(NULL) context (dropped, OK);
 *   then GetThreadSafeContext(bc) replies [trylock-ok, SET's reply, key
 *   type, null-ctx reply rc, GET's reply] and UnblockClient.
 * tsc.misuse: rcukv only (Redis deadlocks or crashes on these): a thread
 *   locks twice and unlocks twice, calls RedisModule_Call unlocked, and
 *   uses its context after freeing it; replies what each answered.
 * Tested by tests/server/test_modules_block.py.
 */
#include "redismodule.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

static int tsc_trylock(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleCtx *t = RedisModule_GetDetachedThreadSafeContext(ctx);
	int rc, busy;

	(void)argv, (void)argc;
	errno = 0;
	rc = RedisModule_ThreadSafeContextTryLock(t);
	busy = errno == EBUSY;
	if (rc == REDISMODULE_OK)
		RedisModule_ThreadSafeContextUnlock(t);
	RedisModule_FreeThreadSafeContext(t);
	RedisModule_ReplyWithArray(ctx, 2);
	RedisModule_ReplyWithLongLong(ctx, rc);
	RedisModule_ReplyWithLongLong(ctx, busy);
	return REDISMODULE_OK;
}

struct job {
	RedisModuleBlockedClient *bc;
	RedisModuleCtx *d; /* detached, made by the command */
	char key[64];
};

static void reply_call(RedisModuleCtx *ctx, RedisModuleCallReply *r)
{
	if (r)
		RedisModule_ReplyWithCallReply(ctx, r);
	else
		RedisModule_ReplyWithSimpleString(ctx, "NULL");
}

static void *thread_main(void *arg)
{
	struct job *j = arg;
	RedisModuleCtx *d = j->d, *n, *ctx;
	RedisModuleCallReply *set, *get;
	RedisModuleString *k;
	RedisModuleKey *key;
	int tries = 0, type, nrc;

	while (RedisModule_ThreadSafeContextTryLock(d) != REDISMODULE_OK && tries < 1000000)
		tries++;
	if (tries == 1000000)
		RedisModule_ThreadSafeContextLock(d);
	set = RedisModule_Call(d, "SET", "cc", j->key, "v1");
	k = RedisModule_CreateString(d, j->key, strlen(j->key));
	key = RedisModule_OpenKey(d, k, REDISMODULE_READ);
	type = RedisModule_KeyType(key);
	RedisModule_CloseKey(key);
	RedisModule_FreeString(d, k);
	get = RedisModule_Call(d, "GET", "c", j->key);
	RedisModule_Log(d, "notice", "tsctest thread ran SET %s", j->key);
	RedisModule_ThreadSafeContextUnlock(d);
	n = RedisModule_GetThreadSafeContext(NULL);
	nrc = RedisModule_ReplyWithSimpleString(n, "dropped");
	RedisModule_FreeThreadSafeContext(n);

	ctx = RedisModule_GetThreadSafeContext(j->bc);
	RedisModule_ReplyWithArray(ctx, 5);
	RedisModule_ReplyWithLongLong(ctx, 1);
	reply_call(ctx, set);
	RedisModule_ReplyWithLongLong(ctx, type);
	RedisModule_ReplyWithLongLong(ctx, nrc);
	reply_call(ctx, get);
	RedisModule_FreeThreadSafeContext(ctx);
	if (set)
		RedisModule_FreeCallReply(set);
	if (get)
		RedisModule_FreeCallReply(get);
	RedisModule_FreeThreadSafeContext(d);
	RedisModule_UnblockClient(j->bc, NULL);
	RedisModule_Free(j);
	return NULL;
}

static void *misuse_main(void *arg)
{
	struct job *j = arg;
	RedisModuleCtx *d = j->d, *ctx;
	RedisModuleCallReply *r;
	int unlocked_null, freed_null, nested_ok;

	r = RedisModule_Call(d, "PING", ""); /* not locked: rcukv refuses */
	unlocked_null = r == NULL && errno == EPERM;
	if (r)
		RedisModule_FreeCallReply(r);
	RedisModule_ThreadSafeContextLock(d);
	RedisModule_ThreadSafeContextLock(d); /* twice: rcukv nests */
	r = RedisModule_Call(d, "PING", "");
	nested_ok = r != NULL;
	if (r)
		RedisModule_FreeCallReply(r);
	RedisModule_ThreadSafeContextUnlock(d);
	RedisModule_ThreadSafeContextUnlock(d);
	RedisModule_ThreadSafeContextUnlock(d); /* once too often: ignored */
	RedisModule_FreeThreadSafeContext(d);
	RedisModule_ThreadSafeContextLock(d);
	r = RedisModule_Call(d, "PING", ""); /* freed: refused */
	freed_null = r == NULL;
	RedisModule_ThreadSafeContextUnlock(d);
	RedisModule_FreeThreadSafeContext(d); /* twice: ignored */

	ctx = RedisModule_GetThreadSafeContext(j->bc);
	RedisModule_ReplyWithArray(ctx, 3);
	RedisModule_ReplyWithLongLong(ctx, unlocked_null);
	RedisModule_ReplyWithLongLong(ctx, nested_ok);
	RedisModule_ReplyWithLongLong(ctx, freed_null);
	RedisModule_FreeThreadSafeContext(ctx);
	RedisModule_UnblockClient(j->bc, NULL);
	RedisModule_Free(j);
	return NULL;
}

static int start(RedisModuleCtx *ctx, RedisModuleString **argv, void *(*fn)(void *))
{
	struct job *j = RedisModule_Alloc(sizeof(*j));
	pthread_t tid;
	size_t len = 0;
	const char *k = argv ? RedisModule_StringPtrLen(argv[1], &len) : "";

	if (len >= sizeof(j->key))
		len = sizeof(j->key) - 1;
	memcpy(j->key, k, len);
	j->key[len] = 0;
	j->d = RedisModule_GetDetachedThreadSafeContext(ctx);
	j->bc = RedisModule_BlockClient(ctx, NULL, NULL, NULL, 0);
	if (pthread_create(&tid, NULL, fn, j) != 0) {
		RedisModule_AbortBlock(j->bc);
		RedisModule_FreeThreadSafeContext(j->d);
		RedisModule_Free(j);
		return RedisModule_ReplyWithError(ctx, "ERR can't start thread");
	}
	pthread_detach(tid);
	return REDISMODULE_OK;
}

static int tsc_thread(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	if (argc != 2)
		return RedisModule_WrongArity(ctx);
	return start(ctx, argv, thread_main);
}

static int tsc_misuse(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	(void)argv;
	if (argc != 1)
		return RedisModule_WrongArity(ctx);
	return start(ctx, NULL, misuse_main);
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	(void)argv, (void)argc;
	if (RedisModule_Init(ctx, "tsctest", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR)
		return REDISMODULE_ERR;
	if (RedisModule_CreateCommand(ctx, "tsc.trylock", tsc_trylock, "", 0, 0, 0) ==
		    REDISMODULE_ERR ||
	    RedisModule_CreateCommand(ctx, "tsc.thread", tsc_thread, "", 0, 0, 0) ==
		    REDISMODULE_ERR ||
	    RedisModule_CreateCommand(ctx, "tsc.misuse", tsc_misuse, "", 0, 0, 0) ==
		    REDISMODULE_ERR)
		return REDISMODULE_ERR;
	return REDISMODULE_OK;
}
