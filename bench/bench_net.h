/*
 * bench/bench_net.h: what the hiredis load generators of bench/ share
 * (bench_pubsub.c, bench_multi.c).
 *
 * hiredis connects and runs the set-up commands; the timed part reads with
 * its own epoll loop and a fixed-frame reader, because every reply these
 * benchmarks expect in the timed part has a length known in advance (a
 * message of a fixed channel and payload size, the replies to one fixed
 * transaction).  A frame that differs from what is expected is an error, so
 * a benchmark also checks every reply it counts.
 *
 * Ownership: a struct bn_conn belongs to the one thread that polls it; its
 * callback runs on that thread.  Nothing here is shared between threads.
 */
#ifndef RCUKV_BENCH_NET_H
#define RCUKV_BENCH_NET_H

#include "client/cli.h" /* struct cli_hist */

#include <getopt.h> /* BN_OPTS */
#include <hiredis/hiredis.h>
#include <stddef.h>
#include <stdint.h>

struct bn_conn;
/* Called once per complete frame of c->frame bytes at @f, with the time the
 * read that completed it returned.  Returns 0, or -1 to fail the conn. */
typedef int (*bn_frame_fn)(struct bn_conn *c, const char *f, uint64_t now_ns);

struct bn_conn {
	redisContext *ctx; /* owns the socket; set up through it, then read raw */
	int fd;
	size_t frame; /* bytes per frame, > 0 */
	bn_frame_fn on_frame;
	void *arg; /* the owner's */
	char *buf; /* unconsumed bytes: buf[0..len), len < frame between reads */
	size_t len, cap;
};

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t bn_now_ns(void);
/* Print "PROG: MSG" on stderr and exit(1); PROG is set by bn_init(). */
__attribute__((noreturn, format(printf, 1, 2))) void bn_die(const char *fmt, ...);
void bn_init(const char *prog);
/* A parsed positive integer option, or bn_die() naming @what. */
long long bn_arg(const char *what, const char *s, long long min, long long max);

/* The options both generators take: --host, --port, the connection count
 * (named by the program: --subs, --clients), --threads, --ms, --size. */
struct bn_opts {
	const char *host;
	int port, conns, nthreads;
	long long ms, size;
};
#define BN_OPTS(conns_name)                                                                        \
	{"host", required_argument, NULL, 'h'}, {"port", required_argument, NULL, 'p'},            \
	    {conns_name, required_argument, NULL, 'c'}, {"threads", required_argument, NULL, 't'}, \
	    {"ms", required_argument, NULL, 's'},                                                  \
	{                                                                                          \
		"size", required_argument, NULL, 'd'                                               \
	}
/* getopt_long over @opts: BN_OPTS entries set @o (sizes below @min_size
 * refused), the others go to @more, which returns 0 for an option it does
 * not know.  Then @usage() (which exits) on an unknown option, a missing
 * --port or a left-over argument. */
void bn_parse(int argc, char **argv, const struct option *opts, struct bn_opts *o,
	      long long min_size, int (*more)(int ch, const char *arg), void (*usage)(void));
/* epoll_create1(0), or bn_die(). */
int bn_epoll(void);

/* Connect (blocking, TCP_NODELAY by hiredis) or bn_die(). */
redisContext *bn_connect(const char *host, int port);
/* The next reply on @ctx (blocking; flushes appended commands first), which
 * must be an integer: the integer, or bn_die() naming @what. */
long long bn_reply_int(redisContext *ctx, const char *what);
/* Make c's socket non-blocking and register it in epoll set @ep (EPOLLIN).
 * c->ctx, frame and on_frame are set by the caller before. */
void bn_attach(struct bn_conn *c, int ep);
/* Write all of p[0..n) to a non-blocking socket (polls for room when the
 * socket buffer is full).  Returns 0, or -1 with errno set. */
int bn_write_all(int fd, const char *p, size_t n);
/* One epoll_wait on @ep (at most @timeout_ms): reads every ready conn and
 * hands its complete frames to its callback.  Returns -1 when a conn hit
 * EOF, a read error or a callback failure (reported on stderr), else 0. */
int bn_poll(int ep, int timeout_ms);
void bn_close(struct bn_conn *c);

/* "name=value" pairs of a histogram for the result line the scripts parse:
 * "p50_us=.. p99_us=.. max_us=..". */
void bn_print_hist(const struct cli_hist *h);

#endif /* RCUKV_BENCH_NET_H */
