/*
 * bench/bench_multi.c: MULTI/EXEC transactions of 4 SETs against one server,
 * the multi_set4 line of bench/bench_server.sh (which runs it against
 * rcukv-server and redis-server in turn).
 *
 * --clients connections over --threads threads (connection i on thread
 * i % threads, one epoll set each).  A connection writes one transaction at a
 * time, the six commands pipelined in one write:
 *   MULTI, SET key:<r1> <v>, SET key:<r2> <v>, SET key:<r3> <v>,
 *   SET key:<r4> <v>, EXEC
 * keys "key:%012llu" (redis-benchmark's -r form) drawn uniformly from
 * --keys, values of --size bytes; the next one goes out when the six replies
 * are in.  The replies are a fixed frame, +OK, four +QUEUED, *4 and four +OK,
 * checked byte for byte: anything else fails the run.
 *
 * Timing: after a --warmup-ms warm-up, transactions whose EXEC reply comes
 * back in the next --ms are counted, with their latency from the write of
 * MULTI to the EXEC reply.
 *
 * Output, one line (bench_server.sh parses it; it never starts with BENCH):
 *   multi txns=N all=A secs=S txn_per_s=R p50_us=.. p99_us=.. max_us=..
 * all counts every transaction completed, warm-up included (for the server's
 * CPU time per transaction).
 *
 * Concurrency: a connection and its thread's counters belong to that thread;
 * the main thread reads them after pthread_join.
 */
#include "bench/bench_net.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NSETS 4
#define KEY_DIGITS 12
#define REPLY                                                                                      \
	"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*4\r\n+OK\r\n+OK\r\n+OK\r\n+OK\r\n"

struct txn_thread {
	pthread_t tid;
	int ep;
	uint64_t txns, all; /* counted, and every completed one */
	struct cli_hist hist;
};

struct txn_conn {
	struct bn_conn bc;
	struct txn_thread *t;
	char *req; /* the six commands; key digits rewritten per transaction */
	size_t reqlen;
	size_t keyoff[NSETS];
	uint64_t rnd;	  /* xorshift64 state */
	uint64_t sent_ns; /* when the transaction in flight was written */
};

static struct {
	struct bn_opts o; /* o.conns: the connections */
	long long keys, warmup_ms;
	uint64_t m_start, m_end; /* the counted window, CLOCK_MONOTONIC ns */
} g = {.o = {.host = "127.0.0.1", .conns = 50, .nthreads = 2, .ms = 3000, .size = 32},
       .keys = 1000000,
       .warmup_ms = 300};

/* The request template: RESP of MULTI, NSETS SETs and EXEC; c->keyoff[i]
 * is where the digits of the i-th key start. */
static void build_request(struct txn_conn *c)
{
	size_t cap = 64 + NSETS * (64 + (size_t)g.o.size), n;
	char *p = malloc(cap);

	if (!p)
		bn_die("out of memory");
	n = (size_t)snprintf(p, cap, "*1\r\n$5\r\nMULTI\r\n");
	for (int i = 0; i < NSETS; i++) {
		n += (size_t)snprintf(p + n, cap - n,
				      "*3\r\n$3\r\nSET\r\n$%d\r\nkey:", 4 + KEY_DIGITS);
		c->keyoff[i] = n;
		n += (size_t)snprintf(p + n, cap - n, "%0*d\r\n$%lld\r\n", KEY_DIGITS, 0, g.o.size);
		memset(p + n, 'x', (size_t)g.o.size);
		n += (size_t)g.o.size;
		n += (size_t)snprintf(p + n, cap - n, "\r\n");
	}
	n += (size_t)snprintf(p + n, cap - n, "*1\r\n$4\r\nEXEC\r\n");
	c->req = p;
	c->reqlen = n;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void send_txn(struct txn_conn *c)
{
	char digits[24]; /* room for any 64-bit value; keys < 10^KEY_DIGITS */

	for (int i = 0; i < NSETS; i++) {
		snprintf(digits, sizeof(digits), "%0*llu", KEY_DIGITS,
			 (unsigned long long)(xorshift(&c->rnd) % (uint64_t)g.keys));
		memcpy(c->req + c->keyoff[i], digits, KEY_DIGITS);
	}
	c->sent_ns = bn_now_ns();
	if (bn_write_all(c->bc.fd, c->req, c->reqlen) < 0)
		bn_die("write: connection lost");
}

static int on_reply(struct bn_conn *bc, const char *f, uint64_t now)
{
	struct txn_conn *c = bc->arg;
	struct txn_thread *t = c->t;

	if (memcmp(f, REPLY, bc->frame)) {
		fprintf(stderr, "bench_multi: unexpected reply '%.*s'\n", (int)bc->frame, f);
		return -1;
	}
	t->all++;
	if (now >= g.m_start && now < g.m_end) {
		t->txns++;
		cli_hist_record(&t->hist, (now - c->sent_ns) / 1000);
	}
	if (now < g.m_end)
		send_txn(c);
	return 0;
}

static void *txn_main(void *arg)
{
	struct txn_thread *t = arg;

	while (bn_now_ns() < g.m_end)
		if (bn_poll(t->ep, 50) < 0)
			bn_die("a connection failed");
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_multi --port P [--host H] [--clients 50] [--threads 2] "
			"[--ms 3000] [--warmup-ms 300] [--keys 1000000] [--size 32]\n");
	exit(2);
}

/* The options of bench_multi's own (bn_parse()'s @more). */
static int multi_opt(int ch, const char *arg)
{
	switch (ch) {
	case 'w':
		g.warmup_ms = bn_arg("--warmup-ms", arg, 0, 600000);
		return 1;
	case 'k':
		g.keys = bn_arg("--keys", arg, 1, 999999999999ll);
		return 1;
	}
	return 0;
}

static const struct option multi_opts[] = {BN_OPTS("clients"),
					   {"warmup-ms", required_argument, NULL, 'w'},
					   {"keys", required_argument, NULL, 'k'},
					   {NULL, 0, NULL, 0}};

int main(int argc, char **argv)
{
	struct txn_thread *t;
	struct txn_conn *conns;
	struct cli_hist all;
	uint64_t txns = 0, done = 0;

	bn_init("bench_multi");
	bn_parse(argc, argv, multi_opts, &g.o, 0, multi_opt, usage);
	t = calloc((size_t)g.o.nthreads, sizeof(*t));
	conns = calloc((size_t)g.o.conns, sizeof(*conns));
	if (!t || !conns)
		bn_die("out of memory");
	for (int i = 0; i < g.o.nthreads; i++) {
		t[i].ep = bn_epoll();
		cli_hist_init(&t[i].hist);
	}
	for (int i = 0; i < g.o.conns; i++) {
		struct txn_conn *c = &conns[i];

		c->t = &t[i % g.o.nthreads];
		c->rnd = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
		c->bc.ctx = bn_connect(g.o.host, g.o.port);
		c->bc.frame = sizeof(REPLY) - 1;
		c->bc.on_frame = on_reply;
		c->bc.arg = c;
		bn_attach(&c->bc, c->t->ep);
		build_request(c);
	}
	g.m_start = bn_now_ns() + (uint64_t)g.warmup_ms * 1000000u;
	g.m_end = g.m_start + (uint64_t)g.o.ms * 1000000u;
	/* the first transaction of every connection; the replies drive the rest */
	for (int i = 0; i < g.o.conns; i++)
		send_txn(&conns[i]);
	for (int i = 0; i < g.o.nthreads; i++)
		if (pthread_create(&t[i].tid, NULL, txn_main, &t[i]))
			bn_die("pthread_create failed");
	cli_hist_init(&all);
	for (int i = 0; i < g.o.nthreads; i++) {
		pthread_join(t[i].tid, NULL);
		txns += t[i].txns;
		done += t[i].all;
		cli_hist_merge(&all, &t[i].hist);
	}
	if (!txns)
		bn_die("no transaction completed in the timed window");
	printf("multi txns=%llu all=%llu secs=%.3f txn_per_s=%.0f ", (unsigned long long)txns,
	       (unsigned long long)done, (double)g.o.ms / 1000,
	       (double)txns * 1000 / (double)g.o.ms);
	bn_print_hist(&all);
	printf("\n");
	for (int i = 0; i < g.o.conns; i++) {
		bn_close(&conns[i].bc);
		free(conns[i].req);
	}
	for (int i = 0; i < g.o.nthreads; i++)
		close(t[i].ep);
	free(conns);
	free(t);
	return 0;
}
