/*
 * fuzz_common.c - the fake worker and connection, the in-memory transport
 * and event loop that run server/conn.c (the connection engine itself, not a
 * copy), and the strict RESP checker shared by fuzz_resp and fuzz_cmd (see
 * fuzz_common.h).
 *
 * The harness is the event loop: fz_feed() delivers each arrival of bytes as
 * read events (conn_on_read(), whose one read takes what the query buffer has
 * room for), ends each loop turn as a worker does (conn_flush_queued()), and
 * runs the write events the engine asked for (conn_on_write()) on the next
 * turns, before the next read.  The fake client reads every reply byte at
 * once, like a fast reader.
 */
#include "resp/resp.h"
#include "tests/fuzz/fuzz_common.h"
#include "server/log.h"

#include <errno.h>
#include <sanitizer/asan_interface.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct worker fz_worker;
/* Set from bit 7 of an input's flags byte by fz_split_input(): the next
 * connections' transport writes at once, as TLS does (else at the end of the
 * loop turn, as plain sockets). */
static int fz_write_at_once;

void fz_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "\n*** fuzz check failed: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

void fz_split_input(const uint8_t *p, size_t n, struct fz_input *in)
{
	size_t s;

	memset(in, 0, sizeof(*in));
	fz_write_at_once = 0;
	if (n < 2) {
		in->data = p;
		in->len = n;
		return;
	}
	s = p[1] & 15u;
	if (n < 2 + s) {
		in->data = p;
		in->len = n;
		return;
	}
	in->flags = p[0];
	fz_write_at_once = p[0] >> 7;
	in->chunks = s ? p + 2 : NULL;
	in->nchunks = s;
	in->data = p + 2 + s;
	in->len = n - 2 - s;
}

static const struct conn_app *fz_app;

void fz_globals_init(const struct conn_app *app)
{
	fz_app = app;
	cfg_defaults();
	atomic_store(&g_cfg.loglevel, LL_WARNING);
	srv_log_init("/dev/null", 0, 'F');
	g_srv.pid = getpid();
	g_srv.start_ms = util_mstime();
	snprintf(g_srv.runid, sizeof(g_srv.runid), "%040d", 0);
	g_srv.notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	fz_worker.notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g_srv.notify_fd < 0 || fz_worker.notify_fd < 0)
		fz_fail("eventfd");
	g_srv.workers = &fz_worker;
	g_srv.nworkers = 1;
}

/* ------------------------------------------------- transport and loop */

/* The connection being fed (fz_feed()), what is left of the current
 * arrival, where its replies go, and how it ended. */
static struct {
	struct conn *c;
	const uint8_t *p;
	size_t avail, used;
	fz_flush_fn *on_flush;
	void *arg;
	int status;   /* FZ_OPEN until conn_close() */
	int write_ev; /* a write event due on the next loop turn */
} feed;

/* The bytes past qlen are poisoned while the engine runs: a parser that
 * looks past what arrived is caught even inside the buffer's capacity. */
static void poison_tail(struct conn *c)
{
	if (c->qbuf)
		ASAN_POISON_MEMORY_REGION(c->qbuf + c->qlen, c->qcap + 1 - c->qlen);
}

static void unpoison(struct conn *c)
{
	if (c->qbuf)
		ASAN_UNPOISON_MEMORY_REGION(c->qbuf, c->qcap + 1);
}

/* One read(2): at most what is left of the arrival, never 0 bytes asked. */
static ssize_t mem_read(struct conn *c, void *buf, size_t n)
{
	size_t k = n < feed.avail ? n : feed.avail;

	FZ_CHECK(c == feed.c, "read on a connection that is not being fed");
	FZ_CHECK(n > 0, "conn_on_read would read 0 bytes (qlen %zu qcap %zu hint %zu)", c->qlen,
		 c->qcap, conn_read_hint(c));
	FZ_CHECK(feed.avail > 0, "read event with nothing arrived");
	unpoison(c);
	memcpy(buf, feed.p, k);
	feed.p += k;
	feed.avail -= k;
	feed.used += k;
	ASAN_POISON_MEMORY_REGION((char *)buf + k, n + 1 - k);
	return (ssize_t)k;
}

/* The fake client takes every byte at once. */
static ssize_t mem_write(struct conn *c, const void *buf, size_t n)
{
	const struct obuf *o = &c->out;

	FZ_CHECK(o->pos < o->len && o->len <= o->cap && (const char *)buf == o->buf + o->pos &&
			 n == o->len - o->pos,
		 "output buffer bounds broken: pos %zu len %zu cap %zu, write of %zu", o->pos,
		 o->len, o->cap, n);
	if (c == feed.c && feed.on_flush)
		feed.on_flush(c, buf, n, feed.arg);
	return (ssize_t)n;
}

/* Why the engine closed it, from the flags it set (an in-memory connection
 * sees no EOF, write error or timeout): a command's CLOSE_ASAP (closed at
 * once), a protocol error's CLOSE_AFTER_REPLY (or QUIT, CLIENT KILL: the
 * caller tells), both (closed once the reply went), or neither: the query
 * buffer limit. */
static void mem_close(struct conn *c)
{
	int asap = c->flags & CONN_CLOSE_ASAP, after = c->flags & CONN_CLOSE_AFTER_REPLY;

	unpoison(c);
	if (c == feed.c)
		feed.status = asap ? (after ? FZ_CLOSED_REPLY : FZ_CLOSED_ASAP)
				   : (after ? FZ_CLOSED_PROTO : FZ_CLOSED_LIMIT);
}

static const struct conn_io mem_io = {.read = mem_read, .write = mem_write, .close = mem_close};
static const struct conn_io mem_io_at_once = {
	.read = mem_read, .write = mem_write, .close = mem_close, .write_at_once = 1};

/* Read events are always on (c->reading says so); write interest is met on
 * the next turn, as the client drains everything. */
static void loop_want(struct conn *c, int what, int on)
{
	if (c == feed.c && what == CONN_EV_WRITE)
		feed.write_ev = on;
}

/* Only write events: a read again is for transports with bytes pending. */
static void loop_again(struct conn *c, int what)
{
	FZ_CHECK(c == feed.c && what == CONN_EV_WRITE,
		 "event %d asked for a connection that is not being fed or has nothing pending",
		 what);
	feed.write_ev = 1;
}

/* The closed connection's due event goes with it, as event_free()'s. */
static void loop_release(struct conn *c)
{
	if (c == feed.c)
		feed.write_ev = 0;
}

static const struct conn_loop mem_loop = {
	.want = loop_want,
	.again = loop_again,
	.release = loop_release,
};

struct conn *fz_conn_new(void)
{
	struct conn *c = conn_new(&fz_worker, -1, 0, fz_write_at_once ? &mem_io_at_once : &mem_io,
				  &mem_loop, fz_app);

	snprintf(c->addr, sizeof(c->addr), "127.0.0.1:%d", 40000 + (int)(c->id % 20000));
	snprintf(c->laddr, sizeof(c->laddr), "127.0.0.1:6379");
	atomic_fetch_add_explicit(&g_srv.nclients, 1, memory_order_relaxed); /* as the acceptor */
	conn_attach(c);
	return c;
}

void fz_conn_free(struct conn *c)
{
	conn_close(c);
}

/* ------------------------------------------------------- the read path */

/* After each event: the engine's query buffer stays within bounds. */
static int after_event(void)
{
	struct conn *c = feed.c;

	if (feed.status != FZ_OPEN)
		return feed.status;
	if (c->qpos > c->qlen || c->qlen > c->qcap)
		fz_fail("query buffer bounds broken: qpos %zu qlen %zu qcap %zu", c->qpos, c->qlen,
			c->qcap);
	return FZ_OPEN;
}

/* The end of a loop turn and the turns after it: the queued replies go,
 * then the write events the engine asked for run, one per turn, until none
 * is due. */
static int loop_turns(void)
{
	int r;

	for (int turn = 0;; turn++) {
		conn_flush_queued(&fz_worker);
		if ((r = after_event()) != FZ_OPEN || !feed.write_ev)
			return r;
		if (turn > 100000)
			fz_fail("on_write keeps re-activating itself");
		poison_tail(feed.c);
		feed.write_ev = 0;
		conn_on_write(feed.c);
		if ((r = after_event()) != FZ_OPEN)
			return r;
	}
}

int fz_feed(struct conn *c, const uint8_t *data, size_t n, const uint8_t *chunks, size_t nchunks,
	    fz_flush_fn *on_flush, void *arg)
{
	size_t off = 0, ci = 0;
	int r = FZ_OPEN;

	memset(&feed, 0, sizeof(feed));
	feed.c = c;
	feed.on_flush = on_flush;
	feed.arg = arg;
	feed.status = FZ_OPEN;
	while (off < n && r == FZ_OPEN) {
		size_t arrive = chunks ? (size_t)chunks[ci++ % nchunks] + 1 : n - off;

		if (arrive > n - off)
			arrive = n - off;
		/* The bytes of one arrival are read as the buffer makes room:
		 * one read event per read(2), each followed by the loop's turn. */
		feed.p = data + off;
		feed.avail = arrive;
		while (feed.avail && r == FZ_OPEN) {
			FZ_CHECK(c->reading, "bytes arrived, output drained, and the connection "
					     "reads no more: the client would wait for ever");
			feed.used = 0;
			conn_on_read(c);
			if ((r = after_event()) == FZ_OPEN)
				r = loop_turns();
			off += feed.used;
		}
	}
	if (r == FZ_OPEN)
		unpoison(c);
	feed.c = NULL;
	return r;
}

/* ------------------------------------------------------- RESP checker */

#define BAD(msg) \
	do { \
		*why = (msg); \
		return -1; \
	} while (0)

static int valid_double(const char *p, size_t n)
{
	char buf[400], *end;

	if (n == 0 || n >= sizeof(buf))
		return 0;
	if ((n == 3 && !memcmp(p, "inf", 3)) || (n == 4 && !memcmp(p, "-inf", 4)) ||
	    (n == 3 && !memcmp(p, "nan", 3)))
		return 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	if (buf[0] == ' ' || buf[0] == '+')
		return 0;
	(void)strtod(buf, &end);
	return *end == '\0';
}

static long check(const char *p, size_t n, int resp3, int depth, const char **why)
{
	size_t i, hlen, hdr_end;
	long long v = 0, count = 0, mult = 1;
	long total;

	if (depth > 64)
		BAD("nesting deeper than 64");
	if (n == 0)
		return 0;
	for (i = 1; i < n; i++) {
		if (p[i] == '\n')
			BAD("bare LF in a header or simple reply");
		if (p[i] == '\r')
			break;
	}
	if (i >= n || i + 1 >= n)
		return 0;
	if (p[i + 1] != '\n')
		BAD("CR not followed by LF");
	hlen = i - 1;
	hdr_end = i + 2;
	switch (p[0]) {
	case '+':
		return (long)hdr_end;
	case '-':
		if (hlen == 0)
			BAD("empty error");
		return (long)hdr_end;
	case ':':
		if (!resp_str2ll(p + 1, hlen, &v))
			BAD("bad integer reply");
		return (long)hdr_end;
	case '(':
		if (!resp3)
			BAD("RESP3 big number to a RESP2 client");
		for (size_t k = 1; k <= hlen; k++)
			if (!((p[k] >= '0' && p[k] <= '9') || (k == 1 && p[k] == '-' && hlen > 1)))
				BAD("bad big number");
		if (hlen == 0)
			BAD("empty big number");
		return (long)hdr_end;
	case '_':
		if (!resp3)
			BAD("RESP3 null to a RESP2 client");
		if (hlen != 0)
			BAD("null with a payload");
		return (long)hdr_end;
	case '#':
		if (!resp3)
			BAD("RESP3 boolean to a RESP2 client");
		if (hlen != 1 || (p[1] != 't' && p[1] != 'f'))
			BAD("bad boolean");
		return (long)hdr_end;
	case ',':
		if (!resp3)
			BAD("RESP3 double to a RESP2 client");
		if (!valid_double(p + 1, hlen))
			BAD("bad double");
		return (long)hdr_end;
	case '=':
	case '!':
		if (!resp3)
			BAD("RESP3 verbatim/blob error to a RESP2 client");
		/* fall through */
	case '$':
		if (!resp_str2ll(p + 1, hlen, &v) || v < -1)
			BAD("bad bulk length");
		if (v == -1) {
			if (p[0] != '$')
				BAD("null verbatim/blob error");
			return (long)hdr_end;
		}
		if ((unsigned long long)v > n - hdr_end || n - hdr_end - (size_t)v < 2)
			return 0;
		if (p[hdr_end + (size_t)v] != '\r' || p[hdr_end + (size_t)v + 1] != '\n')
			BAD("bulk not followed by CRLF");
		if (p[0] == '=' && (v < 4 || p[hdr_end + 3] != ':'))
			BAD("verbatim string without a 3-letter format");
		return (long)(hdr_end + (size_t)v + 2);
	case '%':
	case '~':
	case '>':
		if (!resp3)
			BAD("RESP3 aggregate to a RESP2 client");
		if (p[0] == '%')
			mult = 2;
		/* fall through */
	case '*':
		if (!resp_str2ll(p + 1, hlen, &count) || count < -1 || (count == -1 && p[0] != '*'))
			BAD("bad aggregate count");
		if (count > (long long)n)       /* every element takes at least 3 bytes */
			return 0;
		total = (long)hdr_end;
		for (long long k = 0; k < count * mult; k++) {
			long r = check(p + total, n - (size_t)total, resp3, depth + 1, why);

			if (r <= 0)
				return r;
			total += r;
		}
		return total;
	default:
		BAD("unknown reply type byte");
	}
}

long fz_resp_check(const char *p, size_t n, int resp3, const char **why)
{
	*why = "";
	return check(p, n, resp3, 0, why);
}
