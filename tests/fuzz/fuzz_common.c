/*
 * fuzz_common.c - the fake connection, the network layer's read path and the
 * strict RESP checker shared by fuzz_resp and fuzz_cmd (see fuzz_common.h).
 *
 * fz_feed() mirrors server/net.c (on_read, conn_run, conn_flush, on_write)
 * line for line where the parser can tell the difference: the same buffer
 * growth (conn_read_hint(), capacity + 1), the same read sizes, the same
 * query-buffer limit, the same flush bookkeeping, the same re-runs while the
 * output pause holds input back (conn_run()'s 9 rounds, then on_write() on
 * the next loop turns, which the copy runs before the next read).  Those functions are static
 * in net.c, so this is a copy: if net.c's read path changes, change this too
 * (notes/fuzz-needs.txt).
 */
#include "tests/fuzz/fuzz_common.h"
#include "server/client.h"
#include "server/log.h"

#include <sanitizer/asan_interface.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* The harnesses have no main.c: the process state is theirs. */
struct server g_srv;
struct worker fz_worker;

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
	in->chunks = s ? p + 2 : NULL;
	in->nchunks = s;
	in->data = p + 2 + s;
	in->len = n - 2 - s;
}

void fz_globals_init(void)
{
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

struct conn *fz_conn_new(void)
{
	struct conn *c = xcalloc(1, sizeof(*c));

	c->fd = -1;
	c->w = &fz_worker;
	c->resp = 2;
	c->bulklen = -1;
	c->id = atomic_fetch_add(&g_srv.next_client_id, 1) + 1;
	c->ctime_ms = util_mstime();
	atomic_store_explicit(&c->last_ms, c->ctime_ms, memory_order_relaxed);
	atomic_store_explicit(&c->last_cmd, -1, memory_order_relaxed);
	atomic_store_explicit(&c->last_sub, -1, memory_order_relaxed);
	atomic_store_explicit(&c->resp_pub, 2, memory_order_relaxed);
	snprintf(c->addr, sizeof(c->addr), "127.0.0.1:%d", 40000 + (int)(c->id % 20000));
	snprintf(c->laddr, sizeof(c->laddr), "127.0.0.1:6379");
	c->reading = 1;
	client_register(c);
	atomic_fetch_add_explicit(&g_srv.nclients, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&fz_worker.nconns, 1, memory_order_relaxed);
	return c;
}

void fz_conn_free(struct conn *c)
{
	client_unregister(c);
	atomic_fetch_sub_explicit(&g_srv.nclients, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&fz_worker.nconns, 1, memory_order_relaxed);
	if (c->qbuf)
		ASAN_UNPOISON_MEMORY_REGION(c->qbuf, c->qcap + 1);
	free(c->qbuf);
	free(c->out.buf);
	free(c->argv_off);
	free(c->argv_len);
	free((void *)c->argv);
	free(c->argl);
	free(c->inline_store);
	free(c);
}

/* ------------------------------------------------------- the read path */

/* conn_process_input() with the bytes past qlen poisoned: a parser that
 * looks past what arrived is caught even inside the buffer's capacity. */
static int process_input(struct conn *c)
{
	int r;

	if (c->qbuf)
		ASAN_POISON_MEMORY_REGION(c->qbuf + c->qlen, c->qcap + 1 - c->qlen);
	r = conn_process_input(c);
	if (c->qbuf)
		ASAN_UNPOISON_MEMORY_REGION(c->qbuf, c->qcap + 1);
	if (c->qpos > c->qlen || c->qlen > c->qcap)
		fz_fail("query buffer bounds broken: qpos %zu qlen %zu qcap %zu", c->qpos, c->qlen,
			c->qcap);
	return r;
}

/* conn_flush(): the fake client reads every byte at once. */
static int flush(struct conn *c, fz_flush_fn *on_flush, void *arg)
{
	struct obuf *o = &c->out;

	if (o->pos > o->len || o->len > o->cap)
		fz_fail("output buffer bounds broken: pos %zu len %zu cap %zu", o->pos, o->len, o->cap);
	if (on_flush && o->pos < o->len)
		on_flush(c, o->buf + o->pos, o->len - o->pos, arg);
	o->pos = o->len = 0;
	if (o->cap > 1024 * 1024) {
		free(o->buf);
		o->buf = NULL;
		o->cap = 0;
	}
	c->flags &= ~CONN_WRITE_PENDING;
	if (c->flags & (CONN_CLOSE_AFTER_REPLY | CONN_CLOSE_ASAP))
		return FZ_CLOSED_REPLY;
	c->reading = 1;
	atomic_store_explicit(&c->obuf_used, 0, memory_order_relaxed);
	return FZ_OPEN;
}

/* The closing status of a flush that closed the connection. */
static int closed(struct conn *c)
{
	return (c->flags & CONN_CLOSE_AFTER_REPLY) && !(c->flags & CONN_CLOSE_ASAP)
		       ? FZ_CLOSED_PROTO /* or QUIT / CLIENT KILL: the caller tells */
		       : FZ_CLOSED_REPLY;
}

/* Set when conn_run() hands the rest to the next loop turn (event_active()
 * on ev_write); fz_feed() then runs on_write() before the next read. */
static int write_active;

/* conn_run(): run, flush, and again while paused with the output gone, at
 * most 9 rounds, then the rest waits for on_write(). */
static int run(struct conn *c, fz_flush_fn *on_flush, void *arg)
{
	for (int round = 0;; round++) {
		int r = process_input(c);

		atomic_store_explicit(&c->qbuf_used, c->qlen - c->qpos, memory_order_relaxed);
		if (r < 0 && !(c->flags & CONN_CLOSE_AFTER_REPLY))
			return FZ_CLOSED_ASAP;
		if (flush(c, on_flush, arg) != FZ_OPEN)
			return closed(c);
		if (!(c->flags & CONN_INPUT_PAUSED) || !c->reading)
			return FZ_OPEN;
		if (round == 8) {
			write_active = 1;
			return FZ_OPEN;
		}
	}
}

/* on_write(): flush, then run what the output limit held back. */
static int on_write(struct conn *c, fz_flush_fn *on_flush, void *arg)
{
	write_active = 0;
	if (flush(c, on_flush, arg) != FZ_OPEN)
		return closed(c);
	if (c->reading && (c->flags & CONN_INPUT_PAUSED))
		return run(c, on_flush, arg);
	return FZ_OPEN;
}

/* on_read(): one read() of at most the room the buffer has.  *used = bytes taken. */
static int on_read(struct conn *c, const uint8_t *p, size_t avail, size_t *used,
		   fz_flush_fn *on_flush, void *arg)
{
	size_t hint = conn_read_hint(c), room = c->qcap - c->qlen, k;
	long long limit;

	if (room < hint) {
		if (c->qpos > 0 && c->mb_left == 0 && c->qpos == c->qlen) {
			c->qpos = c->qlen = 0;
			room = c->qcap;
		}
		if (room < hint) {
			size_t cap = c->qcap ? c->qcap : PROTO_IOBUF_LEN;

			if (hint > PROTO_IOBUF_LEN) {
				cap = c->qlen + hint;
			} else {
				while (cap - c->qlen < hint)
					cap *= 2;
			}
			c->qbuf = xrealloc(c->qbuf, cap + 1);
			c->qcap = cap;
		}
	}
	k = c->qcap - c->qlen;
	if (k > avail)
		k = avail;
	if (k == 0)
		fz_fail("on_read would read 0 bytes (qlen %zu qcap %zu hint %zu)", c->qlen, c->qcap,
			hint);
	memcpy(c->qbuf + c->qlen, p, k);
	c->qlen += k;
	*used = k;
	limit = atomic_load_explicit(&g_cfg.client_query_buffer_limit, memory_order_relaxed);
	if (c->qlen - c->qpos > (size_t)limit)
		return FZ_CLOSED_LIMIT;
	return run(c, on_flush, arg);
}

/* The event loop's next turns: on_write() while conn_run() activated it. */
static int write_events(struct conn *c, fz_flush_fn *on_flush, void *arg)
{
	int r = FZ_OPEN;

	for (int turn = 0; write_active && r == FZ_OPEN; turn++) {
		if (turn > 100000)
			fz_fail("on_write keeps re-activating itself");
		r = on_write(c, on_flush, arg);
	}
	write_active = 0;
	return r;
}

int fz_feed(struct conn *c, const uint8_t *data, size_t n, const uint8_t *chunks, size_t nchunks,
	    fz_flush_fn *on_flush, void *arg)
{
	size_t off = 0, ci = 0;

	write_active = 0;
	while (off < n) {
		size_t arrive = chunks ? (size_t)chunks[ci++ % nchunks] + 1 : n - off;

		if (arrive > n - off)
			arrive = n - off;
		/* The bytes of one arrival are read as the buffer makes room. */
		while (arrive) {
			size_t used;
			int r = on_read(c, data + off, arrive, &used, on_flush, arg);

			off += used;
			arrive -= used;
			if (r == FZ_OPEN)
				r = write_events(c, on_flush, arg);
			if (r != FZ_OPEN)
				return r;
		}
	}
	return FZ_OPEN;
}

/* ------------------------------------------------------- RESP checker */

#define BAD(msg) \
	do { \
		*why = (msg); \
		return -1; \
	} while (0)

/* Strict decimal integer: optional '-', no leading zeros, fits in int64. */
static int strict_ll(const char *p, size_t n, long long *out)
{
	unsigned long long v = 0, lim;
	size_t i = 0;
	int neg = 0;

	if (n == 0)
		return 0;
	if (p[0] == '-') {
		neg = 1;
		i = 1;
		if (n == 1)
			return 0;
	}
	if (p[i] == '0' && n - i > 1)
		return 0;
	if (neg && p[i] == '0')
		return 0;
	lim = neg ? (unsigned long long)INT64_MAX + 1 : (unsigned long long)INT64_MAX;
	for (; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		if (v > (lim - (unsigned)(p[i] - '0')) / 10)
			return 0;
		v = v * 10 + (unsigned)(p[i] - '0');
	}
	*out = neg ? (long long)(0 - v) : (long long)v;
	return 1;
}

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
		if (!strict_ll(p + 1, hlen, &v))
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
		if (!strict_ll(p + 1, hlen, &v) || v < -1)
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
		if (!strict_ll(p + 1, hlen, &count) || count < -1 || (count == -1 && p[0] != '*'))
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
