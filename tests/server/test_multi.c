/*
 * tests/server/test_multi.c - MULTI/EXEC is atomic for every reader and WATCH
 * misses no write, under load from several clients on every worker (issue
 * 16 item 2), with hiredis.  Runs against the server at --port P (started by
 * tests/server/test_multi.sh: rcukv-server with --threads 2, then a
 * redis-server, which proves the checks):
 *
 *   transfer  clients move random amounts between ACCOUNTS accounts with
 *             MULTI DECRBY a x / INCRBY b x EXEC, pipelined;
 *   optimist  clients do the same with WATCH a b, GET a, GET b, then MULTI
 *             SET a a-x / SET b b+x EXEC, retrying when EXEC answers nil: a
 *             WATCH that missed a write from another client loses an
 *             update, and the total changes;
 *   pair      one client writes pair:a and pair:b in one MULTI/EXEC, both
 *             to the same increasing number;
 *   readers   MGET every account (the total never changes: no reader sees
 *             half a transfer), and GET pair:a then GET pair:b one by one
 *             (pair:b is never older than pair:a was: no reader sees half a
 *             transaction, even across two commands).
 * Every loop is bounded (TEST_MULTI_OPS operations per client, default
 * 2000).  At the end the total is still ACCOUNTS * 1000, and, when the
 * optimists ever collided, their retries show WATCH at work (else a skip).
 * Ends with "N passed, M failed, K skipped".
 */
#include "tests/check.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ACCOUNTS 16
#define START 1000
#define TRANSFERS 2
#define OPTIMISTS 2
#define READERS 2

static int port;
static long ops = 2000;
static atomic_long n_exec, n_retry, n_sums, n_pairs, bad_sum, bad_pair, bad_reply;
static atomic_int writers_left;

static redisContext *conn(void)
{
	struct timeval tv = {30, 0};
	redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);

	if (!c || c->err) {
		fprintf(stderr, "connect to %d: %s\n", port, c ? c->errstr : "no memory");
		exit(2);
	}
	redisSetTimeout(c, tv);
	return c;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Two different random accounts. */
static void pick(uint64_t *s, int *a, int *b)
{
	*a = (int)(rnd(s) % ACCOUNTS);
	*b = (int)(rnd(s) % (ACCOUNTS - 1));
	if (*b >= *a)
		(*b)++;
}

/* Read the next reply; count it bad unless it has @type. */
static redisReply *next(redisContext *c, int type)
{
	redisReply *r = NULL;

	if (redisGetReply(c, (void **)&r) != REDIS_OK || !r) {
		fprintf(stderr, "connection lost: %s\n", c->errstr);
		exit(2);
	}
	if (type >= 0 && r->type != type && atomic_fetch_add(&bad_reply, 1) < 5)
		printf("  unexpected reply type %d (want %d) %s\n", r->type, type,
		       r->type == REDIS_REPLY_ERROR ? r->str : "");
	return r;
}

static void *transfer(void *arg)
{
	uint64_t s = (uintptr_t)arg * 0x9e3779b97f4a7c15ull;
	redisContext *c = conn();

	for (long i = 0; i < ops; i++) {
		int a, b;
		int x = (int)(rnd(&s) % 50);
		redisReply *r;

		pick(&s, &a, &b);
		redisAppendCommand(c, "MULTI");
		redisAppendCommand(c, "DECRBY acct:%d %d", a, x);
		redisAppendCommand(c, "INCRBY acct:%d %d", b, x);
		redisAppendCommand(c, "EXEC");
		freeReplyObject(next(c, REDIS_REPLY_STATUS));
		freeReplyObject(next(c, REDIS_REPLY_STATUS));
		freeReplyObject(next(c, REDIS_REPLY_STATUS));
		r = next(c, REDIS_REPLY_ARRAY);
		if (r->type == REDIS_REPLY_ARRAY && r->elements != 2)
			atomic_fetch_add(&bad_reply, 1);
		freeReplyObject(r);
		atomic_fetch_add_explicit(&n_exec, 1, memory_order_relaxed);
	}
	redisFree(c);
	atomic_fetch_sub(&writers_left, 1);
	return NULL;
}

static long long as_ll(const redisReply *r)
{
	return r && r->type == REDIS_REPLY_STRING ? atoll(r->str) : -1;
}

static void *optimist(void *arg)
{
	uint64_t s = ((uintptr_t)arg + 11) * 0x2545f4914f6cdd1dull;
	redisContext *c = conn();

	for (long i = 0; i < ops; i++) {
		int a, b, x = (int)(rnd(&s) % 50);

		pick(&s, &a, &b);
		for (;;) {
			long long va, vb;
			redisReply *r;

			freeReplyObject(redisCommand(c, "WATCH acct:%d acct:%d", a, b));
			r = redisCommand(c, "GET acct:%d", a);
			va = as_ll(r);
			freeReplyObject(r);
			r = redisCommand(c, "GET acct:%d", b);
			vb = as_ll(r);
			freeReplyObject(r);
			redisAppendCommand(c, "MULTI");
			redisAppendCommand(c, "SET acct:%d %lld", a, va - x);
			redisAppendCommand(c, "SET acct:%d %lld", b, vb + x);
			redisAppendCommand(c, "EXEC");
			freeReplyObject(next(c, REDIS_REPLY_STATUS));
			freeReplyObject(next(c, REDIS_REPLY_STATUS));
			freeReplyObject(next(c, REDIS_REPLY_STATUS));
			r = next(c, -1);
			if (r->type == REDIS_REPLY_ARRAY) {
				freeReplyObject(r);
				break;
			}
			if (r->type != REDIS_REPLY_NIL)
				atomic_fetch_add(&bad_reply, 1);
			freeReplyObject(r);
			atomic_fetch_add_explicit(&n_retry, 1, memory_order_relaxed);
		}
		atomic_fetch_add_explicit(&n_exec, 1, memory_order_relaxed);
	}
	redisFree(c);
	atomic_fetch_sub(&writers_left, 1);
	return NULL;
}

static void *pair_writer(void *arg)
{
	redisContext *c = conn();

	(void)arg;
	for (long g = 1; g <= ops; g++) {
		/* The order of the two SETs alternates: a reader must not care. */
		redisAppendCommand(c, "MULTI");
		redisAppendCommand(c, "SET pair:%s %ld", g & 1 ? "a" : "b", g);
		redisAppendCommand(c, "SET pair:%s %ld", g & 1 ? "b" : "a", g);
		redisAppendCommand(c, "EXEC");
		for (int k = 0; k < 3; k++)
			freeReplyObject(next(c, REDIS_REPLY_STATUS));
		freeReplyObject(next(c, REDIS_REPLY_ARRAY));
	}
	redisFree(c);
	atomic_fetch_sub(&writers_left, 1);
	return NULL;
}

static void check_sum(redisContext *c)
{
	char *argv[ACCOUNTS + 1];
	char names[ACCOUNTS][16];
	redisReply *r;
	long long total = 0;

	argv[0] = "MGET";
	for (int i = 0; i < ACCOUNTS; i++) {
		snprintf(names[i], sizeof(names[i]), "acct:%d", i);
		argv[i + 1] = names[i];
	}
	r = redisCommandArgv(c, ACCOUNTS + 1, (const char **)argv, NULL);
	if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != ACCOUNTS) {
		atomic_fetch_add(&bad_reply, 1);
	} else {
		for (size_t i = 0; i < r->elements; i++)
			total += as_ll(r->element[i]);
		if (total != (long long)ACCOUNTS * START && atomic_fetch_add(&bad_sum, 1) < 5)
			printf("  MGET total %lld, expected %d\n", total, ACCOUNTS * START);
	}
	freeReplyObject(r);
	atomic_fetch_add_explicit(&n_sums, 1, memory_order_relaxed);
}

static void check_pair(redisContext *c, uint64_t *s)
{
	int b_first = (int)(rnd(s) & 1);
	redisReply *r1 = redisCommand(c, "GET pair:%s", b_first ? "b" : "a");
	redisReply *r2 = redisCommand(c, "GET pair:%s", b_first ? "a" : "b");
	long long first = as_ll(r1), second = as_ll(r2);

	/* Both written by every transaction: the one read second is at least
	 * as new as the one read first, whichever key that is. */
	if (second < first && atomic_fetch_add(&bad_pair, 1) < 5)
		printf("  GET pair:%s = %lld, then GET pair:%s = %lld (older)\n", b_first ? "b" : "a",
		       first, b_first ? "a" : "b", second);
	freeReplyObject(r1);
	freeReplyObject(r2);
	atomic_fetch_add_explicit(&n_pairs, 1, memory_order_relaxed);
}

static void *reader(void *arg)
{
	uint64_t s = ((uintptr_t)arg + 3) * 0x9e3779b97f4a7c15ull;
	redisContext *c = conn();

	/* While any writer runs, and at most 4 reads per writer operation. */
	for (long i = 0; i < ops * 4 && atomic_load(&writers_left) > 0; i++) {
		if (rnd(&s) & 1)
			check_sum(c);
		else
			check_pair(c, &s);
	}
	redisFree(c);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[TRANSFERS + OPTIMISTS + 1 + READERS];
	int nt = 0;
	redisContext *c;
	redisReply *r;
	const char *env = getenv("TEST_MULTI_OPS");

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (argc != 3 || strcmp(argv[1], "--port")) {
		fprintf(stderr, "usage: %s --port P\n", argv[0]);
		return 2;
	}
	port = atoi(argv[2]);
	if (env && atol(env) > 0)
		ops = atol(env);
	c = conn();
	freeReplyObject(redisCommand(c, "FLUSHALL"));
	for (int i = 0; i < ACCOUNTS; i++)
		freeReplyObject(redisCommand(c, "SET acct:%d %d", i, START));
	freeReplyObject(redisCommand(c, "MSET pair:a 0 pair:b 0"));
	atomic_store(&writers_left, TRANSFERS + OPTIMISTS + 1);
	for (int i = 0; i < TRANSFERS; i++)
		pthread_create(&th[nt++], NULL, transfer, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < OPTIMISTS; i++)
		pthread_create(&th[nt++], NULL, optimist, (void *)(uintptr_t)(i + 1));
	pthread_create(&th[nt++], NULL, pair_writer, NULL);
	for (int i = 0; i < READERS; i++)
		pthread_create(&th[nt++], NULL, reader, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	printf("%ld ops per writer: %ld EXECs, %ld WATCH retries, %ld MGET totals, %ld pair "
	       "reads\n",
	       ops, (long)n_exec, (long)n_retry, (long)n_sums, (long)n_pairs);
	CHECK(n_exec == (TRANSFERS + OPTIMISTS) * ops, "every transfer committed (%ld)",
	      (long)n_exec);
	CHECK(bad_reply == 0, "every reply had the expected type (%ld did not)", (long)bad_reply);
	CHECK(n_sums > 0 && bad_sum == 0, "no MGET saw half a transfer (%ld of %ld totals off)",
	      (long)bad_sum, (long)n_sums);
	CHECK(n_pairs > 0 && bad_pair == 0,
	      "no pair of GETs saw half a transaction (%ld of %ld off)", (long)bad_pair,
	      (long)n_pairs);
	check_sum(c);
	CHECK(bad_sum == 0, "the total is still %d at the end (no lost update: WATCH saw every "
			    "conflicting write)",
	      ACCOUNTS * START);
	if (n_retry > 0)
		CHECK(1, "WATCH aborted %ld EXECs that a concurrent write made stale", (long)n_retry);
	else
		SKIP("the optimists never collided: WATCH's abort path was not exercised here");
	r = redisCommand(c, "GET pair:a");
	CHECK(as_ll(r) == ops, "pair:a ends at %ld (%lld)", ops, as_ll(r));
	freeReplyObject(r);
	redisFree(c);
	return check_summary();
}
