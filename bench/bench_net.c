/*
 * bench/bench_net.c: connections, the epoll loop and the fixed-frame reader
 * of the hiredis load generators (see bench_net.h).
 */
#include "bench/bench_net.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define BN_READ_CHUNK 65536
#define BN_EVENTS 64

static const char *bn_prog = "bench";

void bn_init(const char *prog)
{
	bn_prog = prog;
}

void bn_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", bn_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

uint64_t bn_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

long long bn_arg(const char *what, const char *s, long long min, long long max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		bn_die("%s: '%s' is not an integer in %lld..%lld", what, s, min, max);
	return v;
}

static int bn_opt(struct bn_opts *o, int ch, const char *arg, long long min_size)
{
	switch (ch) {
	case 'h':
		o->host = arg;
		return 1;
	case 'p':
		o->port = (int)bn_arg("--port", arg, 1, 65535);
		return 1;
	case 'c':
		o->conns = (int)bn_arg("connections", arg, 1, 10000);
		return 1;
	case 't':
		o->nthreads = (int)bn_arg("--threads", arg, 1, 64);
		return 1;
	case 's':
		o->ms = bn_arg("--ms", arg, 100, 600000);
		return 1;
	case 'd':
		o->size = bn_arg("--size", arg, min_size, 1 << 20);
		return 1;
	}
	return 0;
}

void bn_parse(int argc, char **argv, const struct option *opts, struct bn_opts *o,
	      long long min_size, int (*more)(int ch, const char *arg), void (*usage)(void))
{
	int ch;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1)
		if (!bn_opt(o, ch, optarg, min_size) && !more(ch, optarg))
			usage();
	if (!o->port || optind != argc)
		usage();
}

int bn_epoll(void)
{
	int ep = epoll_create1(0);

	if (ep < 0)
		bn_die("epoll_create1: %s", strerror(errno));
	return ep;
}

redisContext *bn_connect(const char *host, int port)
{
	redisContext *ctx = redisConnect(host, port);

	if (!ctx)
		bn_die("connect %s:%d: out of memory", host, port);
	if (ctx->err)
		bn_die("connect %s:%d: %s", host, port, ctx->errstr);
	return ctx;
}

long long bn_reply_int(redisContext *ctx, const char *what)
{
	redisReply *r;
	long long v;

	if (redisGetReply(ctx, (void **)&r) != REDIS_OK || !r)
		bn_die("%s: %s", what, ctx->errstr);
	if (r->type != REDIS_REPLY_INTEGER)
		bn_die("%s: reply type %d, not an integer (%s)", what, r->type,
		       r->type == REDIS_REPLY_ERROR ? r->str : "");
	v = r->integer;
	freeReplyObject(r);
	return v;
}

void bn_attach(struct bn_conn *c, int ep)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
	int fl;

	c->fd = c->ctx->fd;
	fl = fcntl(c->fd, F_GETFL);
	if (fl < 0 || fcntl(c->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		bn_die("fcntl: %s", strerror(errno));
	if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0)
		bn_die("epoll_ctl: %s", strerror(errno));
	c->cap = c->frame + BN_READ_CHUNK;
	c->buf = malloc(c->cap);
	if (!c->buf)
		bn_die("out of memory");
	c->len = 0;
}

int bn_write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w > 0) {
			p += w;
			n -= (size_t)w;
		} else if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = {.fd = fd, .events = POLLOUT};

			if (poll(&pfd, 1, 1000) < 0 && errno != EINTR)
				return -1;
		} else if (w < 0 && errno != EINTR) {
			return -1;
		}
	}
	return 0;
}

/* Consume the complete frames of c->buf, keep the partial one at the front. */
static int bn_frames(struct bn_conn *c, uint64_t now)
{
	size_t off = 0;

	while (c->len - off >= c->frame) {
		if (c->on_frame(c, c->buf + off, now) < 0)
			return -1;
		off += c->frame;
	}
	memmove(c->buf, c->buf + off, c->len - off);
	c->len -= off;
	return 0;
}

/* One read of what the socket has (epoll is level-triggered: a conn with
 * more comes back next turn, so no conn starves the others); the buffer
 * always has room for a chunk past a partial frame. */
static int bn_read(struct bn_conn *c)
{
	ssize_t r = read(c->fd, c->buf + c->len, c->cap - c->len);

	if (r > 0) {
		c->len += (size_t)r;
		return bn_frames(c, bn_now_ns());
	}
	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	fprintf(stderr, "%s: connection fd %d: %s\n", bn_prog, c->fd,
		r ? strerror(errno) : "closed by the server");
	return -1;
}

int bn_poll(int ep, int timeout_ms)
{
	struct epoll_event ev[BN_EVENTS];
	int n = epoll_wait(ep, ev, BN_EVENTS, timeout_ms);

	if (n < 0)
		return errno == EINTR ? 0 : -1;
	for (int i = 0; i < n; i++)
		if (bn_read(ev[i].data.ptr) < 0)
			return -1;
	return 0;
}

void bn_close(struct bn_conn *c)
{
	free(c->buf);
	c->buf = NULL;
	redisFree(c->ctx);
	c->ctx = NULL;
}

void bn_print_hist(const struct cli_hist *h)
{
	printf("p50_us=%llu p99_us=%llu max_us=%llu",
	       (unsigned long long)cli_hist_percentile(h, 50.0),
	       (unsigned long long)cli_hist_percentile(h, 99.0),
	       (unsigned long long)(h->count ? h->max : 0));
}
