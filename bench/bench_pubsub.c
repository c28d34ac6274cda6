/*
 * bench/bench_pubsub.c: Pub/Sub fan-out against one server (rcukv-server or
 * redis-server), for bench/bench_pubsub.sh, which runs it against both.
 *
 * One publisher (the main thread, one hiredis connection) PUBLISHes to one
 * channel; --subs subscriber connections, SUBSCRIBEd before the publisher
 * starts, are read by --threads threads (subscriber i on thread i % threads),
 * each with its own epoll set.  The server spreads the connections over its
 * workers (rcukv: least loaded, round-robin among equals), so deliveries
 * cross workers.
 *
 * Every payload is --size bytes and starts with a 20-digit send time
 * (CLOCK_MONOTONIC ns, same host); a subscriber takes the time once per
 * read and records now - stamp for every message of that read.  Every frame
 * must be exactly [message, channel, payload] as sized, and every PUBLISH
 * reply must count --subs receivers, or the run fails.
 *
 * Modes:
 *   flood  the publisher pipelines batches of PUBLISH as long as fewer than
 *          --window messages per subscriber are published but not yet
 *          delivered (published - delivered/subs): the highest rate the
 *          server sustains end to end, with a bounded backlog (no output
 *          buffer limit is ever reached).  Stamp: the time of the append.
 *   paced  one PUBLISH every 1/--rate s for --ms (a late slot goes out at
 *          once): the latency at a load both servers carry.  The stamp is
 *          the time of the write, as in flood: stamping the slot's time
 *          would add the publisher's own timer wake-up delay, which on the
 *          shared 2-core machine reached 20 ms at p99 against 2-4 ms from
 *          the write (measured 2026-12-07, both servers).
 * The run ends --ms after the first publish, once every delivery arrived
 * (at most 5 s more; missing deliveries fail the run).
 *
 * Output, one line (the script parses it; it never starts with BENCH):
 *   pubsub mode=M published=N delivered=D secs=S msgs_per_s=R p50_us=..
 *   p99_us=.. max_us=..
 * msgs_per_s is deliveries (total over subscribers) per second from the
 * first publish to the last delivery.
 *
 * Concurrency: sub_thread.delivered is written by its thread and read by the
 * publisher (seq_cst with g.waiting: a publisher that sets waiting and then
 * sees no room is woken through g.efd by the thread whose delivery makes
 * room, Dekker style; a 1 ms timeout bounds any miss anyway).  Histograms
 * and last_ns are read after pthread_join.
 */
#include "bench/bench_net.h"

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define CHANNEL "bench:pubsub"
#define STAMP_DIGITS 20
#define BATCH 16
#define DRAIN_NS 5000000000ull

struct sub_thread {
	pthread_t tid;
	int ep;
	_Atomic uint64_t delivered;
	uint64_t last_ns; /* time of the last delivery; read after join */
	struct cli_hist hist;
} __attribute__((aligned(64)));

static struct {
	struct bn_opts o; /* o.conns: the subscribers */
	int paced;
	long long window, rate;
	char hdr[64]; /* what precedes every payload */
	size_t hdrlen;
	struct sub_thread *t;
	struct bn_conn *conns;
	atomic_int stop, waiting;
	int efd;
} g = {.o = {.host = "127.0.0.1", .conns = 50, .nthreads = 2, .ms = 3000, .size = 64},
       .window = 32,
       .rate = 2000};

static int on_message(struct bn_conn *c, const char *f, uint64_t now)
{
	struct sub_thread *t = c->arg;
	const char *p = f + g.hdrlen;
	uint64_t stamp = 0;

	if (memcmp(f, g.hdr, g.hdrlen) || memcmp(f + c->frame - 2, "\r\n", 2)) {
		fprintf(stderr, "bench_pubsub: unexpected frame '%.*s'\n", (int)g.hdrlen, f);
		return -1;
	}
	for (int i = 0; i < STAMP_DIGITS; i++)
		stamp = stamp * 10 + (uint64_t)(p[i] - '0');
	cli_hist_record(&t->hist, now > stamp ? (now - stamp) / 1000 : 0);
	t->last_ns = now;
	atomic_fetch_add(&t->delivered, 1);
	if (atomic_load(&g.waiting) && atomic_exchange(&g.waiting, 0)) {
		uint64_t one = 1;

		if (write(g.efd, &one, sizeof(one)) < 0) {
			/* the publisher also wakes up by its timeout */
		}
	}
	return 0;
}

static void *sub_main(void *arg)
{
	struct sub_thread *t = arg;

	while (!atomic_load_explicit(&g.stop, memory_order_relaxed))
		if (bn_poll(t->ep, 50) < 0)
			bn_die("a subscriber failed");
	return NULL;
}

static uint64_t delivered(void)
{
	uint64_t d = 0;

	for (int i = 0; i < g.o.nthreads; i++)
		d += atomic_load(&g.t[i].delivered);
	return d;
}

/* Subscribe every connection (blocking, confirmation checked), then hand it
 * to its thread's epoll set. */
static void subscribe_all(void)
{
	g.conns = calloc((size_t)g.o.conns, sizeof(*g.conns));
	g.t = calloc((size_t)g.o.nthreads, sizeof(*g.t));
	if (!g.conns || !g.t)
		bn_die("out of memory");
	for (int i = 0; i < g.o.nthreads; i++) {
		g.t[i].ep = bn_epoll();
		cli_hist_init(&g.t[i].hist);
	}
	for (int i = 0; i < g.o.conns; i++) {
		struct bn_conn *c = &g.conns[i];
		redisReply *r;

		c->ctx = bn_connect(g.o.host, g.o.port);
		r = redisCommand(c->ctx, "SUBSCRIBE %s", CHANNEL);
		if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 3)
			bn_die("SUBSCRIBE: no [subscribe, channel, count] reply");
		freeReplyObject(r);
		c->frame = g.hdrlen + (size_t)g.o.size + 2;
		c->on_frame = on_message;
		c->arg = &g.t[i % g.o.nthreads];
		bn_attach(c, g.t[i % g.o.nthreads].ep);
	}
}

/* Append one PUBLISH whose payload starts with @stamp. */
static void publish(redisContext *ctx, char *payload, uint64_t stamp)
{
	char digits[STAMP_DIGITS + 1];

	snprintf(digits, sizeof(digits), "%0*llu", STAMP_DIGITS, (unsigned long long)stamp);
	memcpy(payload, digits, STAMP_DIGITS);
	if (redisAppendCommand(ctx, "PUBLISH %s %b", CHANNEL, payload, (size_t)g.o.size) !=
	    REDIS_OK)
		bn_die("PUBLISH: out of memory");
}

static void publish_replies(redisContext *ctx, int n)
{
	for (int i = 0; i < n; i++) {
		long long v = bn_reply_int(ctx, "PUBLISH");

		if (v != g.o.conns)
			bn_die("PUBLISH reached %lld subscribers, not %d", v, g.o.conns);
	}
}

/* Sleep until a delivery makes room in the window (or 1 ms). */
static void wait_room(uint64_t published)
{
	struct pollfd pfd = {.fd = g.efd, .events = POLLIN};
	uint64_t v;

	atomic_store(&g.waiting, 1);
	if ((long long)(published - delivered() / (uint64_t)g.o.conns) >= g.window)
		poll(&pfd, 1, 1);
	atomic_store(&g.waiting, 0);
	if (read(g.efd, &v, sizeof(v)) < 0) {
		/* nothing was written: the timeout or the room came first */
	}
}

static uint64_t run_flood(redisContext *ctx, char *payload, uint64_t t0)
{
	uint64_t end = t0 + (uint64_t)((double)g.o.ms * 1e6), published = 0;

	while (bn_now_ns() < end) {
		long long room =
		    g.window - (long long)(published - delivered() / (uint64_t)g.o.conns);
		int k = room < BATCH ? (int)room : BATCH;

		if (k <= 0) {
			wait_room(published);
			continue;
		}
		for (int i = 0; i < k; i++)
			publish(ctx, payload, bn_now_ns());
		publish_replies(ctx, k);
		published += (uint64_t)k;
	}
	return published;
}

static uint64_t run_paced(redisContext *ctx, char *payload, uint64_t t0)
{
	uint64_t n = (uint64_t)((double)g.o.ms * (double)g.rate / 1000), i;

	for (i = 0; i < n; i++) {
		uint64_t slot = t0 + i * 1000000000ull / (uint64_t)g.rate;
		struct timespec ts = {.tv_sec = (time_t)(slot / 1000000000u),
				      .tv_nsec = (long)(slot % 1000000000u)};

		if (bn_now_ns() < slot)
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		publish(ctx, payload, bn_now_ns());
		publish_replies(ctx, 1);
	}
	return n;
}

static void report(uint64_t published, uint64_t t0)
{
	struct cli_hist all;
	uint64_t last = 0, d = delivered();

	cli_hist_init(&all);
	for (int i = 0; i < g.o.nthreads; i++) {
		cli_hist_merge(&all, &g.t[i].hist);
		if (g.t[i].last_ns > last)
			last = g.t[i].last_ns;
	}
	if (d != published * (uint64_t)g.o.conns)
		bn_die("%llu of %llu deliveries arrived", (unsigned long long)d,
		       (unsigned long long)(published * (uint64_t)g.o.conns));
	if (last <= t0)
		bn_die("nothing was delivered");
	printf("pubsub mode=%s published=%llu delivered=%llu secs=%.3f msgs_per_s=%.0f ",
	       g.paced ? "paced" : "flood", (unsigned long long)published, (unsigned long long)d,
	       (double)(last - t0) / 1e9, (double)d * 1e9 / (double)(last - t0));
	bn_print_hist(&all);
	printf("\n");
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_pubsub --port P [--host H] [--subs 50] [--threads 2] "
			"[--ms 3000] [--size 64] [--mode flood|paced] [--window 32] "
			"[--rate 2000]\n");
	exit(2);
}

/* The options of bench_pubsub's own (bn_parse()'s @more). */
static int pubsub_opt(int ch, const char *arg)
{
	switch (ch) {
	case 'w':
		g.window = bn_arg("--window", arg, 1, 1 << 20);
		return 1;
	case 'r':
		g.rate = bn_arg("--rate", arg, 1, 10000000);
		return 1;
	case 'm':
		if (strcmp(arg, "flood") && strcmp(arg, "paced"))
			usage();
		g.paced = !strcmp(arg, "paced");
		return 1;
	}
	return 0;
}

static const struct option pubsub_opts[] = {BN_OPTS("subs"),
					    {"mode", required_argument, NULL, 'm'},
					    {"window", required_argument, NULL, 'w'},
					    {"rate", required_argument, NULL, 'r'},
					    {NULL, 0, NULL, 0}};

int main(int argc, char **argv)
{
	redisContext *ctx;
	char *payload;
	uint64_t t0, published;

	bn_init("bench_pubsub");
	bn_parse(argc, argv, pubsub_opts, &g.o, STAMP_DIGITS, pubsub_opt, usage);
	g.hdrlen =
	    (size_t)snprintf(g.hdr, sizeof(g.hdr), "*3\r\n$7\r\nmessage\r\n$%zu\r\n%s\r\n$%lld\r\n",
			     strlen(CHANNEL), CHANNEL, g.o.size);
	g.efd = eventfd(0, EFD_NONBLOCK);
	payload = malloc((size_t)g.o.size);
	if (g.efd < 0 || !payload)
		bn_die("eventfd or out of memory");
	memset(payload, 'x', (size_t)g.o.size);
	subscribe_all();
	ctx = bn_connect(g.o.host, g.o.port);
	for (int i = 0; i < g.o.nthreads; i++)
		if (pthread_create(&g.t[i].tid, NULL, sub_main, &g.t[i]))
			bn_die("pthread_create failed");
	t0 = bn_now_ns();
	published = g.paced ? run_paced(ctx, payload, t0) : run_flood(ctx, payload, t0);
	while (delivered() < published * (uint64_t)g.o.conns &&
	       bn_now_ns() - t0 < (uint64_t)((double)g.o.ms * 1e6) + DRAIN_NS) {
		struct timespec ms = {0, 1000000};

		nanosleep(&ms, NULL);
	}
	atomic_store(&g.stop, 1);
	for (int i = 0; i < g.o.nthreads; i++)
		pthread_join(g.t[i].tid, NULL);
	report(published, t0);
	for (int i = 0; i < g.o.conns; i++)
		bn_close(&g.conns[i]);
	redisFree(ctx);
	for (int i = 0; i < g.o.nthreads; i++)
		close(g.t[i].ep);
	close(g.efd);
	free(g.conns);
	free(g.t);
	free(payload);
	return 0;
}
