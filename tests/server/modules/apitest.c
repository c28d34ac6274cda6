/*
 * tests/server/modules/apitest.c - a test module of rcukv's own (issue 20):
 * commands that exercise the API functions helloworld.c does not, so that
 * tests/server/cases_modules.txt can compare them with redis-server 7.0.15
 * running the same module.  Built at test time against Redis 7.0.15's
 * redismodule.h by tests/server/modules_fetch.sh.
 *
 *   apitest.call CMD [ARG...]     RedisModule_Call(.., "v", ..) and
 *                                 ReplyWithCallReply; NULL: "ERR errno N"
 *   apitest.walk CMD [ARG...]     the call's reply walked: type, length,
 *                                 integer, string, elements (one level)
 *   apitest.postponed N M         an array of N integers with an inner
 *                                 postponed array of M, lengths set last
 *   apitest.truncate KEY LEN      StringTruncate, then ValueLength
 *   apitest.set KEY VAL           StringSet (drops the TTL), KeyType
 *   apitest.del KEY               DeleteKey on a key opened for writing
 *   apitest.type KEY              KeyType of a key opened for reading
 *   apitest.double X              StringToDouble, ReplyWithDouble
 *   apitest.printf S N            CreateStringPrintf("%s-%lld")
 *   apitest.zadd KEY FLAGS SCORE ELE   ZsetAdd with FLAGS (a number, the
 *                                 REDISMODULE_ZADD_* bits): [rc, flags out]
 *   apitest.zincr KEY FLAGS INCR ELE   ZsetIncrby: [rc, flags out, score]
 *   apitest.zrem KEY ELE          ZsetRem: [rc, deleted], then ZsetScore
 *   apitest.zrev KEY MIN MAX MINEX MAXEX   ZsetLastInScoreRange walked
 *                                 back: members and scores
 *   apitest.hset KEY FLAGS F V [F V ...]   HashSet of up to 3 pairs (V
 *                                 "-": REDISMODULE_HASH_DELETE): [count, errno]
 *   apitest.hexists KEY F         HashGet with REDISMODULE_HASH_EXISTS and
 *                                 REDISMODULE_HASH_CFIELDS
 *   apitest.lget KEY INDEX        ListGet: the element, or "errno N"
 *   apitest.lset KEY INDEX VAL    ListSet: rc and errno, then ListPop both ends
 *   apitest.linsert KEY VAL       ListInsert at index 0 (rcukv does not
 *                                 implement it: the command fails by name)
 */
#include "redismodule.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

static int call_v(RedisModuleCtx *ctx, RedisModuleString **argv, int argc,
		  RedisModuleCallReply **out)
{
	const char *name = RedisModule_StringPtrLen(argv[1], NULL);

	*out = RedisModule_Call(ctx, name, "v", argv + 2, (size_t)(argc - 2));
	if (!*out) {
		RedisModuleString *e = RedisModule_CreateStringPrintf(ctx, "ERR errno %d", errno);

		RedisModule_ReplyWithError(ctx, RedisModule_StringPtrLen(e, NULL));
		return 0;
	}
	return 1;
}

static int apitest_call(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleCallReply *r;

	if (argc < 2)
		return RedisModule_WrongArity(ctx);
	RedisModule_AutoMemory(ctx);
	if (call_v(ctx, argv, argc, &r))
		RedisModule_ReplyWithCallReply(ctx, r);
	return REDISMODULE_OK;
}

static void walk_one(RedisModuleCtx *ctx, RedisModuleCallReply *r)
{
	size_t len = 0;
	const char *s;

	RedisModule_ReplyWithArray(ctx, 4);
	RedisModule_ReplyWithLongLong(ctx, RedisModule_CallReplyType(r));
	RedisModule_ReplyWithLongLong(ctx, (long long)RedisModule_CallReplyLength(r));
	RedisModule_ReplyWithLongLong(ctx, RedisModule_CallReplyInteger(r));
	s = RedisModule_CallReplyStringPtr(r, &len);
	if (s)
		RedisModule_ReplyWithStringBuffer(ctx, s, len);
	else
		RedisModule_ReplyWithNull(ctx);
}

static int apitest_walk(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleCallReply *r;
	size_t n;

	if (argc < 2)
		return RedisModule_WrongArity(ctx);
	RedisModule_AutoMemory(ctx);
	if (!call_v(ctx, argv, argc, &r))
		return REDISMODULE_OK;
	n = RedisModule_CallReplyType(r) == REDISMODULE_REPLY_ARRAY ? RedisModule_CallReplyLength(r)
								     : 0;
	RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
	walk_one(ctx, r);
	for (size_t i = 0; i < n; i++)
		walk_one(ctx, RedisModule_CallReplyArrayElement(r, i));
	RedisModule_ReplySetArrayLength(ctx, (long)n + 1);
	return REDISMODULE_OK;
}

static int apitest_postponed(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	long long n, m;

	if (argc != 3)
		return RedisModule_WrongArity(ctx);
	if (RedisModule_StringToLongLong(argv[1], &n) != REDISMODULE_OK ||
	    RedisModule_StringToLongLong(argv[2], &m) != REDISMODULE_OK || n < 0 || m < 0)
		return RedisModule_ReplyWithError(ctx, "ERR bad counts");
	RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
	for (long long i = 0; i < n; i++)
		RedisModule_ReplyWithLongLong(ctx, i);
	RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
	for (long long i = 0; i < m; i++)
		RedisModule_ReplyWithSimpleString(ctx, "x");
	RedisModule_ReplySetArrayLength(ctx, (long)m);
	RedisModule_ReplySetArrayLength(ctx, (long)n + 1);
	return REDISMODULE_OK;
}

static int apitest_truncate(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleKey *k;
	long long len;
	int rc;

	if (argc != 3)
		return RedisModule_WrongArity(ctx);
	if (RedisModule_StringToLongLong(argv[2], &len) != REDISMODULE_OK || len < 0)
		return RedisModule_ReplyWithError(ctx, "ERR bad length");
	k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
	rc = RedisModule_StringTruncate(k, (size_t)len);
	RedisModule_CloseKey(k);
	if (rc != REDISMODULE_OK)
		return RedisModule_ReplyWithError(ctx, "ERR truncate failed");
	k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
	RedisModule_ReplyWithLongLong(ctx, (long long)RedisModule_ValueLength(k));
	RedisModule_CloseKey(k);
	return REDISMODULE_OK;
}

static int apitest_set(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleKey *k;
	int t;

	if (argc != 3)
		return RedisModule_WrongArity(ctx);
	k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
	if (RedisModule_StringSet(k, argv[2]) != REDISMODULE_OK) {
		RedisModule_CloseKey(k);
		return RedisModule_ReplyWithError(ctx, "ERR set failed");
	}
	t = RedisModule_KeyType(k);
	RedisModule_CloseKey(k);
	return RedisModule_ReplyWithLongLong(ctx, t);
}

static int apitest_del(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleKey *k;
	int rc;

	if (argc != 2)
		return RedisModule_WrongArity(ctx);
	k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_WRITE);
	rc = RedisModule_DeleteKey(k);
	RedisModule_CloseKey(k);
	return RedisModule_ReplyWithLongLong(ctx, rc);
}

static int apitest_zadd(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleKey *k;
	long long fl;
	double score, now = 0;
	int f, rc, incr;

	if (argc != 5)
		return RedisModule_WrongArity(ctx);
	incr = !strcasecmp(RedisModule_StringPtrLen(argv[0], NULL), "apitest.zincr");
	if (RedisModule_StringToLongLong(argv[2], &fl) != REDISMODULE_OK ||
	    RedisModule_StringToDouble(argv[3], &score) != REDISMODULE_OK)
		return RedisModule_ReplyWithError(ctx, "ERR bad args");
	f = (int)fl;
	k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
	rc = incr ? RedisModule_ZsetIncrby(k, score, argv[4], &f, &now)
		  : RedisModule_ZsetAdd(k, score, argv[4], &f);
	RedisModule_CloseKey(k);
	RedisModule_ReplyWithArray(ctx, incr ? 3 : 2);
	RedisModule_ReplyWithLongLong(ctx, rc);
	RedisModule_ReplyWithLongLong(ctx, f);
	if (incr)
		RedisModule_ReplyWithDouble(ctx, now);
	return REDISMODULE_OK;
}

static int apitest_zrem(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleKey *k;
	int rc, del = -1, rc2;
	double score = -1;

	if (argc != 3)
		return RedisModule_WrongArity(ctx);
	k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
	rc = RedisModule_ZsetRem(k, argv[2], &del);
	rc2 = RedisModule_ZsetScore(k, argv[2], &score);
	RedisModule_CloseKey(k);
	RedisModule_ReplyWithArray(ctx, 4);
	RedisModule_ReplyWithLongLong(ctx, rc);
	RedisModule_ReplyWithLongLong(ctx, del);
	RedisModule_ReplyWithLongLong(ctx, rc2);
	RedisModule_ReplyWithDouble(ctx, score);
	return REDISMODULE_OK;
}

static int apitest_zrev(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleKey *k;
	double min, max;
	long long minex, maxex;
	long n = 0;

	if (argc != 6)
		return RedisModule_WrongArity(ctx);
	if (RedisModule_StringToDouble(argv[2], &min) != REDISMODULE_OK ||
	    RedisModule_StringToDouble(argv[3], &max) != REDISMODULE_OK ||
	    RedisModule_StringToLongLong(argv[4], &minex) != REDISMODULE_OK ||
	    RedisModule_StringToLongLong(argv[5], &maxex) != REDISMODULE_OK)
		return RedisModule_ReplyWithError(ctx, "ERR bad args");
	k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
	if (RedisModule_ZsetLastInScoreRange(k, min, max, (int)minex, (int)maxex) !=
	    REDISMODULE_OK) {
		RedisModule_CloseKey(k);
		return RedisModule_ReplyWithError(ctx, "ERR not a range");
	}
	RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
	while (!RedisModule_ZsetRangeEndReached(k)) {
		double score;
		RedisModuleString *ele = RedisModule_ZsetRangeCurrentElement(k, &score);

		RedisModule_ReplyWithString(ctx, ele);
		RedisModule_ReplyWithDouble(ctx, score);
		RedisModule_FreeString(ctx, ele);
		n += 2;
		if (!RedisModule_ZsetRangePrev(k))
			break;
	}
	RedisModule_ReplySetArrayLength(ctx, n);
	RedisModule_ZsetRangeStop(k);
	RedisModule_CloseKey(k);
	return REDISMODULE_OK;
}

static int apitest_hset(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleString *v[3] = {NULL, NULL, NULL}, *f[3] = {NULL, NULL, NULL};
	RedisModuleKey *k;
	long long fl;
	int n;

	if (argc < 5 || argc > 9 || (argc - 3) % 2)
		return RedisModule_WrongArity(ctx);
	if (RedisModule_StringToLongLong(argv[2], &fl) != REDISMODULE_OK)
		return RedisModule_ReplyWithError(ctx, "ERR bad flags");
	for (int i = 0; 3 + 2 * i < argc; i++) {
		f[i] = argv[3 + 2 * i];
		v[i] = strcmp(RedisModule_StringPtrLen(argv[4 + 2 * i], NULL), "-")
			   ? argv[4 + 2 * i]
			   : REDISMODULE_HASH_DELETE;
	}
	k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
	errno = 0;
	n = RedisModule_HashSet(k, (int)fl, f[0], v[0], f[1], v[1], f[2], v[2], NULL);
	RedisModule_CloseKey(k);
	RedisModule_ReplyWithArray(ctx, 2);
	RedisModule_ReplyWithLongLong(ctx, n);
	RedisModule_ReplyWithLongLong(ctx, errno);
	return REDISMODULE_OK;
}

static int apitest_hexists(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleKey *k;
	int e = -1, rc;

	if (argc != 3)
		return RedisModule_WrongArity(ctx);
	k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
	rc = RedisModule_HashGet(k, REDISMODULE_HASH_EXISTS | REDISMODULE_HASH_CFIELDS,
				 RedisModule_StringPtrLen(argv[2], NULL), &e, NULL);
	RedisModule_CloseKey(k);
	RedisModule_ReplyWithArray(ctx, 2);
	RedisModule_ReplyWithLongLong(ctx, rc);
	RedisModule_ReplyWithLongLong(ctx, e);
	return REDISMODULE_OK;
}

static int apitest_lget(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleKey *k;
	RedisModuleString *e;
	long long i;

	if (argc != 3)
		return RedisModule_WrongArity(ctx);
	if (RedisModule_StringToLongLong(argv[2], &i) != REDISMODULE_OK)
		return RedisModule_ReplyWithError(ctx, "ERR bad index");
	k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
	errno = 0;
	e = RedisModule_ListGet(k, (long)i);
	RedisModule_CloseKey(k);
	if (!e)
		return RedisModule_ReplyWithError(ctx, errno == EDOM ? "ERR errno EDOM"
					       : errno == ENOTSUP ? "ERR errno ENOTSUP"
								  : "ERR errno other");
	RedisModule_ReplyWithString(ctx, e);
	RedisModule_FreeString(ctx, e);
	return REDISMODULE_OK;
}

static int apitest_lset(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleKey *k;
	RedisModuleString *a, *b;
	long long i;
	int rc, err;

	if (argc != 4)
		return RedisModule_WrongArity(ctx);
	if (RedisModule_StringToLongLong(argv[2], &i) != REDISMODULE_OK)
		return RedisModule_ReplyWithError(ctx, "ERR bad index");
	k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
	errno = 0;
	rc = RedisModule_ListSet(k, (long)i, argv[3]);
	err = errno == EDOM ? 1 : errno == ENOTSUP ? 2 : errno ? 3 : 0;
	a = RedisModule_ListPop(k, REDISMODULE_LIST_HEAD);
	b = RedisModule_ListPop(k, REDISMODULE_LIST_TAIL);
	RedisModule_CloseKey(k);
	RedisModule_ReplyWithArray(ctx, 4);
	RedisModule_ReplyWithLongLong(ctx, rc);
	RedisModule_ReplyWithLongLong(ctx, err);
	if (a)
		RedisModule_ReplyWithString(ctx, a);
	else
		RedisModule_ReplyWithNull(ctx);
	if (b)
		RedisModule_ReplyWithString(ctx, b);
	else
		RedisModule_ReplyWithNull(ctx);
	if (a)
		RedisModule_FreeString(ctx, a);
	if (b)
		RedisModule_FreeString(ctx, b);
	return REDISMODULE_OK;
}

static int apitest_linsert(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleKey *k;
	int rc;

	if (argc != 3)
		return RedisModule_WrongArity(ctx);
	k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ | REDISMODULE_WRITE);
	rc = RedisModule_ListInsert(k, 0, argv[2]);
	RedisModule_CloseKey(k);
	return RedisModule_ReplyWithLongLong(ctx, rc);
}

static int apitest_type(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleKey *k;
	int t;

	if (argc != 2)
		return RedisModule_WrongArity(ctx);
	k = RedisModule_OpenKey(ctx, argv[1], REDISMODULE_READ);
	t = RedisModule_KeyType(k); /* NULL (no such key, read only): EMPTY */
	RedisModule_ReplyWithArray(ctx, 2);
	RedisModule_ReplyWithLongLong(ctx, k == NULL);
	RedisModule_ReplyWithLongLong(ctx, t);
	RedisModule_CloseKey(k);
	return REDISMODULE_OK;
}

static int apitest_double(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	double d;

	if (argc != 2)
		return RedisModule_WrongArity(ctx);
	if (RedisModule_StringToDouble(argv[1], &d) != REDISMODULE_OK)
		return RedisModule_ReplyWithError(ctx, "ERR not a double");
	return RedisModule_ReplyWithDouble(ctx, d);
}

static int apitest_printf(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	RedisModuleString *s;
	long long n;

	if (argc != 3)
		return RedisModule_WrongArity(ctx);
	if (RedisModule_StringToLongLong(argv[2], &n) != REDISMODULE_OK)
		return RedisModule_ReplyWithError(ctx, "ERR not a number");
	s = RedisModule_CreateStringPrintf(ctx, "%s-%lld", RedisModule_StringPtrLen(argv[1], NULL),
					   n);
	RedisModule_ReplyWithString(ctx, s);
	RedisModule_FreeString(ctx, s);
	return REDISMODULE_OK;
}

/* apitest.dict OP KEY [OP KEY ...]: a dict of the keys a aa ab b ba c
 * (values: their index), then for each pair a seek by OP to KEY and a walk:
 * "OP KEY:" then up to 3 Nexts, a Prev, a Compare "<=" "b", a Reseek "$"
 * and a Prev, each element as key=value, "-" at EOF.  Then the other calls:
 * SetC of an existing key, ReplaceC, Get of a missing key, DelC, Size.  One
 * bulk string a line, so both servers' answers compare byte for byte. */
static void dict_walk(RedisModuleCtx *ctx, RedisModuleDict *d, const char *op,
		      RedisModuleString *key, long long *n)
{
	RedisModuleDictIter *it = RedisModule_DictIteratorStart(d, op, key);
	char buf[256];
	size_t len, off;
	void *val;
	char *k;

	off = (size_t)snprintf(buf, sizeof(buf), "%s %s:", op, RedisModule_StringPtrLen(key, NULL));
	for (int i = 0; i < 5; i++) {
		if (i == 3)
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, " cmp<=b:%s",
						RedisModule_DictCompareC(it, "<=", "b", 1) ==
							REDISMODULE_OK
						    ? "y"
						    : "n");
		k = i < 3 ? RedisModule_DictNextC(it, &len, &val)
			  : RedisModule_DictPrevC(it, &len, &val);
		if (k)
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, " %.*s=%ld", (int)len,
						k, (long)(intptr_t)val);
		else
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, " -");
	}
	RedisModule_DictIteratorReseekC(it, "$", NULL, 0);
	k = RedisModule_DictPrevC(it, &len, NULL);
	off += (size_t)snprintf(buf + off, sizeof(buf) - off, " $prev:%.*s", k ? (int)len : 1,
				k ? k : "-");
	RedisModule_DictIteratorStop(it);
	RedisModule_ReplyWithStringBuffer(ctx, buf, off);
	(*n)++;
}

static int apitest_dict(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	static const char *const keys[] = {"b", "a", "c", "ab", "ba", "aa"};
	RedisModuleDict *d = RedisModule_CreateDict(NULL);
	long long n = 0;
	char buf[128];
	void *old = NULL;
	int nokey = 0;

	if (argc < 3 || argc % 2 == 0)
		return RedisModule_WrongArity(ctx);
	for (int i = 0; i < 6; i++)
		RedisModule_DictSetC(d, (void *)keys[i], strlen(keys[i]), (void *)(intptr_t)(i + 1));
	RedisModule_ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN);
	for (int i = 1; i + 1 < argc; i += 2)
		dict_walk(ctx, d, RedisModule_StringPtrLen(argv[i], NULL), argv[i + 1], &n);
	{ /* one call a statement: the order of a call's arguments is unspecified */
		int setc = RedisModule_DictSetC(d, "ab", 2, (void *)70);
		int repl = RedisModule_DictReplaceC(d, "ab", 2, (void *)71);
		long ab = (long)(intptr_t)RedisModule_DictGetC(d, "ab", 2, NULL);
		int del1, del2;

		snprintf(buf, sizeof(buf), "setc-existing:%s replacec-existing:%s get-ab:%ld",
			 setc == REDISMODULE_OK ? "ok" : "err", repl == REDISMODULE_OK ? "ok" : "err",
			 ab);
		RedisModule_ReplyWithSimpleString(ctx, buf), n++;
		RedisModule_DictGetC(d, "zz", 2, &nokey);
		del1 = RedisModule_DictDelC(d, "a", 1, &old);
		del2 = RedisModule_DictDelC(d, "a", 1, NULL);
		snprintf(buf, sizeof(buf), "get-zz-nokey:%d del-a:%s old:%ld del-a-again:%s size:%llu",
			 nokey, del1 == REDISMODULE_OK ? "ok" : "err", (long)(intptr_t)old,
			 del2 == REDISMODULE_OK ? "ok" : "err",
			 (unsigned long long)RedisModule_DictSize(d));
		RedisModule_ReplyWithSimpleString(ctx, buf), n++;
	}
	RedisModule_FreeDict(NULL, d);
	RedisModule_ReplySetArrayLength(ctx, n);
	return REDISMODULE_OK;
}

int RedisModule_OnLoad(RedisModuleCtx *ctx, RedisModuleString **argv, int argc)
{
	static const struct {
		const char *name;
		RedisModuleCmdFunc fn;
		const char *flags;
		int first, last, step;
	} cmds[] = {
	    {"apitest.call", apitest_call, "write", 0, 0, 0},
	    {"apitest.walk", apitest_walk, "write", 0, 0, 0},
	    {"apitest.postponed", apitest_postponed, "readonly", 0, 0, 0},
	    {"apitest.truncate", apitest_truncate, "write deny-oom", 1, 1, 1},
	    {"apitest.set", apitest_set, "write deny-oom", 1, 1, 1},
	    {"apitest.del", apitest_del, "write", 1, 1, 1},
	    {"apitest.type", apitest_type, "readonly fast", 1, 1, 1},
	    {"apitest.double", apitest_double, "readonly fast", 0, 0, 0},
	    {"apitest.printf", apitest_printf, "readonly fast", 0, 0, 0},
	    {"apitest.dict", apitest_dict, "readonly", 0, 0, 0},
	    {"apitest.zadd", apitest_zadd, "write deny-oom", 1, 1, 1},
	    {"apitest.zincr", apitest_zadd, "write deny-oom", 1, 1, 1},
	    {"apitest.zrem", apitest_zrem, "write", 1, 1, 1},
	    {"apitest.zrev", apitest_zrev, "readonly", 1, 1, 1},
	    {"apitest.hset", apitest_hset, "write deny-oom", 1, 1, 1},
	    {"apitest.hexists", apitest_hexists, "readonly", 1, 1, 1},
	    {"apitest.lget", apitest_lget, "write", 1, 1, 1},
	    {"apitest.lset", apitest_lset, "write deny-oom", 1, 1, 1},
	    {"apitest.linsert", apitest_linsert, "write deny-oom", 1, 1, 1},
	};

	(void)argv, (void)argc;
	if (RedisModule_Init(ctx, "apitest", 1, REDISMODULE_APIVER_1) == REDISMODULE_ERR)
		return REDISMODULE_ERR;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (RedisModule_CreateCommand(ctx, cmds[i].name, cmds[i].fn, cmds[i].flags,
					      cmds[i].first, cmds[i].last,
					      cmds[i].step) == REDISMODULE_ERR)
			return REDISMODULE_ERR;
	if (RedisModule_CreateCommand(ctx, "apitest.call", apitest_call, "write", 0, 0, 0) !=
	    REDISMODULE_ERR)
		return REDISMODULE_ERR; /* a name taken twice must be refused */
	if (RedisModule_CreateCommand(ctx, "apitest.badflag", apitest_call, "write nosuchflag", 0,
				      0, 0) != REDISMODULE_ERR)
		return REDISMODULE_ERR; /* an unknown flag must be refused */
	return REDISMODULE_OK;
}
