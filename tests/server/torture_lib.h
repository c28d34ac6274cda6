/*
 * tests/server/torture_lib.h - what the collection tortures share
 * (test_hash/set/zset/list_torture.c): the command line, the connection, the
 * writers' reply check, the generator, and the run of writer and reader
 * threads.  Header-only (static inline): each torture is one program.
 *
 * A torture declares `static int port; static long ops;` and
 * `static atomic_int writers_left;` before including this, and its writers
 * decrement writers_left when they finish (the readers read until then).
 */
#ifndef TESTS_SERVER_TORTURE_LIB_H
#define TESTS_SERVER_TORTURE_LIB_H

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A connection to the server on --port, or exit 2. */
static inline redisContext *conn(void)
{
	redisContext *c = redisConnect("127.0.0.1", port);

	if (!c || c->err) {
		fprintf(stderr, "connect to port %d: %s\n", port, c ? c->errstr : "no memory");
		exit(2);
	}
	return c;
}

/* xorshift64: each thread its own state. */
static inline uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A writer's reply: none (the connection failed) exits 2, an error reply
 * counts in *@bad. */
static inline void tl_cmd_ok(redisContext *c, redisReply *r, atomic_long *bad)
{
	if (!r) {
		fprintf(stderr, "writer: %s\n", c->errstr);
		exit(2);
	}
	if (r->type == REDIS_REPLY_ERROR) {
		fprintf(stderr, "writer: error reply %s\n", r->str);
		(*bad)++;
	}
	freeReplyObject(r);
}

/* `--port P` into port, the steps per writer from environment variable
 * @ops_env into ops when set; line-buffered stdout, SIGPIPE ignored.
 * Usage errors exit 2. */
static inline void tl_args(int argc, char **argv, const char *ops_env)
{
	const char *env = getenv(ops_env);

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (argc != 3 || strcmp(argv[1], "--port") || (port = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: %s --port P\n", argv[0]);
		exit(2);
	}
	if (env && atol(env) > 0)
		ops = atol(env);
}

/* A FLUSHALL, then @setup (a CONFIG SET, or NULL) on one connection. */
static inline void tl_reset(const char *setup)
{
	redisContext *c = conn();

	freeReplyObject(redisCommand(c, "FLUSHALL"));
	if (setup)
		freeReplyObject(redisCommand(c, setup));
	redisFree(c);
}

/* @nw writers and @nr readers, each given its index; returns when all end. */
static inline void tl_run(void *(*writer)(void *), int nw, void *(*reader)(void *), int nr)
{
	pthread_t th[64];

	if (nw + nr > 64)
		exit(2);
	atomic_store(&writers_left, nw);
	for (int i = 0; i < nw; i++)
		pthread_create(&th[i], NULL, writer, (void *)(uintptr_t)i);
	for (int i = 0; i < nr; i++)
		pthread_create(&th[nw + i], NULL, reader, (void *)(uintptr_t)i);
	for (int i = 0; i < nw + nr; i++)
		pthread_join(th[i], NULL);
}

#endif /* TESTS_SERVER_TORTURE_LIB_H */
