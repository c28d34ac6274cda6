/*
 * resp.c - the RESP wire format of rcukv-server: the request parser
 * (multibulk and inline, with Redis 7's protocol errors and limits) and the
 * reply encoders (RESP2, and RESP3 after HELLO 3).
 *
 * Owns nothing shared: every function works on one connection and runs on
 * that connection's worker thread.  Limits: a multibulk count up to INT_MAX
 * (argv grows as elements arrive, so a huge count costs nothing up front),
 * bulk length up to proto-max-bulk-len, header and inline lines up to
 * RESP_INLINE_MAX.  "Need more bytes" is the status 0 from
 * parse_command(), not an error.
 *
 * Hostile input is tested by tests/server/test_server.c (protocol section).
 */
#include "resp/resp.h"
#include "server/cmd.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/log.h"
#include "server/net.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/stats.h"
#include "server/util.h"

#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- output */

static inline char *obuf_reserve(struct conn *c, size_t n)
{
	struct obuf *o = &c->out;

	if (SRV_UNLIKELY(o->cap - o->len < n)) {
		size_t need = o->len + n, cap = o->cap ? o->cap : 16384;

		/* Compact already-written bytes first. */
		if (o->pos && o->pos == o->len) {
			o->len = o->pos = 0;
			need = n;
		} else if (o->pos > o->len / 2) {
			memmove(o->buf, o->buf + o->pos, o->len - o->pos);
			o->len -= o->pos;
			o->pos = 0;
			need = o->len + n;
		}
		while (cap < need)
			cap *= 2;
		if (cap != o->cap) {
			if (o->cap)
				STAT_ADD(c->w->st.reply_expands, 1);
			o->buf = xrealloc(o->buf, cap);
			o->cap = cap;
		}
	}
	return o->buf + o->len;
}

char *reply_reserve(struct conn *c, size_t n)
{
	return obuf_reserve(c, n);
}

void reply_commit(struct conn *c, size_t n)
{
	c->out.len += n;
}

void reply_raw(struct conn *c, const char *p, size_t n)
{
	char *d = obuf_reserve(c, n);

	memcpy(d, p, n);
	c->out.len += n;
}

/* "<prefix><ll>\r\n" */
static void reply_hdr(struct conn *c, char prefix, long long v)
{
	char *d = obuf_reserve(c, 24);
	size_t n;

	d[0] = prefix;
	n = 1 + resp_ll2str(d + 1, v);
	d[n++] = '\r';
	d[n++] = '\n';
	c->out.len += n;
}

void reply_simple(struct conn *c, const char *s)
{
	size_t n = strlen(s);
	char *d = obuf_reserve(c, n + 3);

	d[0] = '+';
	memcpy(d + 1, s, n);
	d[n + 1] = '\r';
	d[n + 2] = '\n';
	c->out.len += n + 3;
}

void reply_ok(struct conn *c)
{
	reply_raw(c, "+OK\r\n", 5);
}

/* Errors: a message that starts with '-' carries its own code, otherwise
 * "-ERR " is added.  Newlines become spaces so the reply stays one line. */
void reply_error(struct conn *c, const char *msg)
{
	size_t n = strlen(msg);
	char *d = obuf_reserve(c, n + 8), *s;

	s = d;
	if (msg[0] != '-') {
		memcpy(d, "-ERR ", 5);
		d += 5;
	}
	memcpy(d, msg, n);
	for (size_t i = 0; i < n; i++)
		if (d[i] == '\r' || d[i] == '\n')
			d[i] = ' ';
	d += n;
	*d++ = '\r';
	*d++ = '\n';
	c->out.len += (size_t)(d - s);
	if (c->w) {
		STAT_ADD(c->w->st.errors, 1);
		stats_error(c->w, msg, n); /* errorstat_<prefix> */
	}
}

void reply_err_code(struct conn *c, const char *full)
{
	reply_error(c, full);
}

void reply_errorf(struct conn *c, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	reply_error(c, buf);
}

void reply_int(struct conn *c, long long v)
{
	if (v == 0) {
		reply_raw(c, ":0\r\n", 4);
		return;
	}
	if (v == 1) {
		reply_raw(c, ":1\r\n", 4);
		return;
	}
	reply_hdr(c, ':', v);
}

void reply_bulk(struct conn *c, const void *p, size_t n)
{
	char *d = obuf_reserve(c, n + 32);
	size_t h;

	d[0] = '$';
	h = 1 + resp_ll2str(d + 1, (long long)n);
	d[h++] = '\r';
	d[h++] = '\n';
	memcpy(d + h, p, n);
	h += n;
	d[h++] = '\r';
	d[h++] = '\n';
	c->out.len += h;
}

void reply_bulk_str(struct conn *c, const char *s)
{
	reply_bulk(c, s, strlen(s));
}

void reply_bulk_ll(struct conn *c, long long v)
{
	char buf[24];
	int n = (int)resp_ll2str(buf, v);

	reply_bulk(c, buf, (size_t)n);
}

void reply_null(struct conn *c)
{
	if (c->resp >= 3)
		reply_raw(c, "_\r\n", 3);
	else
		reply_raw(c, "$-1\r\n", 5);
}

void reply_null_array(struct conn *c)
{
	if (c->resp >= 3)
		reply_raw(c, "_\r\n", 3);
	else
		reply_raw(c, "*-1\r\n", 5);
}

void reply_array(struct conn *c, long long n)
{
	reply_hdr(c, '*', n);
}

void reply_map(struct conn *c, long long n)
{
	if (c->resp >= 3)
		reply_hdr(c, '%', n);
	else
		reply_hdr(c, '*', n * 2);
}

void reply_set(struct conn *c, long long n)
{
	reply_hdr(c, c->resp >= 3 ? '~' : '*', n);
}

void reply_bool(struct conn *c, int v)
{
	if (c->resp >= 3)
		reply_raw(c, v ? "#t\r\n" : "#f\r\n", 4);
	else
		reply_int(c, v ? 1 : 0);
}

void reply_double(struct conn *c, double d)
{
	char buf[128];
	int n;

	if (isinf(d)) {
		if (c->resp >= 3) {
			reply_raw(c, d > 0 ? ",inf\r\n" : ",-inf\r\n", d > 0 ? 6 : 7);
			return;
		}
		n = snprintf(buf, sizeof(buf), "%s", d > 0 ? "inf" : "-inf");
	} else {
		n = snprintf(buf, sizeof(buf), "%.17g", d);
	}
	if (c->resp >= 3) {
		char out[160];
		int m = snprintf(out, sizeof(out), ",%s\r\n", buf);

		reply_raw(c, out, (size_t)m);
	} else {
		reply_bulk(c, buf, (size_t)n);
	}
}

/* Long double to the shortest text that round-trips in 17 digits, as Redis
 * prints INCRBYFLOAT results: no exponent, trailing zeros removed. */
int ld2string(char *buf, size_t len, long double value, int humanfriendly)
{
	int l;

	(void)humanfriendly;
	if (isinf(value)) {
		if (len < 5)
			return 0;
		if (value > 0) {
			memcpy(buf, "inf", 3);
			l = 3;
		} else {
			memcpy(buf, "-inf", 4);
			l = 4;
		}
		buf[l] = '\0';
		return l;
	}
	l = snprintf(buf, len, "%.17Lf", value);
	if (l < 0 || (size_t)l >= len)
		return 0;
	if (strchr(buf, '.')) {
		char *p = buf + l - 1;

		while (*p == '0') {
			p--;
			l--;
		}
		if (*p == '.')
			l--;
	}
	if (l == 2 && buf[0] == '-' && buf[1] == '0') {
		buf[0] = '0';
		l = 1;
	}
	buf[l] = '\0';
	return l;
}

void reply_long_double_bulk(struct conn *c, long double d)
{
	char buf[5 * 1024];
	int n = ld2string(buf, sizeof(buf), d, 1);

	reply_bulk(c, buf, (size_t)n);
}

void reply_verbatim(struct conn *c, const char *p, size_t n)
{
	if (c->resp >= 3) {
		reply_hdr(c, '=', (long long)n + 4);
		reply_raw(c, "txt:", 4);
		reply_raw(c, p, n);
		reply_raw(c, "\r\n", 2);
	} else {
		reply_bulk(c, p, n);
	}
}

/* ---------------------------------------------------------------- input */

static void proto_error(struct conn *c, const char *msg)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "Protocol error: %s", msg);
	reply_error(c, buf);
	c->flags |= CONN_CLOSE_AFTER_REPLY;
	srv_log(LL_VERBOSE, "Protocol error (%s) from client: id=%llu addr=%s", msg,
		(unsigned long long)c->id, c->addr);
}

static void argv_push(struct conn *c, size_t off, size_t len)
{
	if (c->argc == c->argv_cap) {
		int cap = c->argv_cap ? c->argv_cap * 2 : CONN_ARGV_INIT;

		c->argv_off = xrealloc(c->argv_off, (size_t)cap * sizeof(size_t));
		c->argv_len = xrealloc(c->argv_len, (size_t)cap * sizeof(size_t));
		c->argv = xrealloc((void *)c->argv, (size_t)cap * sizeof(char *));
		c->argl = xrealloc(c->argl, (size_t)cap * sizeof(size_t));
		c->argv_cap = cap;
	}
	c->argv_off[c->argc] = off;
	c->argv_len[c->argc] = len;
	c->argc++;
}

/*
 * Try to parse one command at c->qpos.
 * Return: 1 a command is ready in c->argv/argl (c->argc args),
 *         0 need more bytes (or an empty request was consumed: check qpos),
 *        -1 protocol error (reply queued, close after reply).
 */
static int parse_inline(struct conn *c)
{
	char *start = c->qbuf + c->qpos;
	size_t avail = c->qlen - c->qpos;
	char *nl = memchr(start, '\n', avail);
	size_t linelen;
	char **argv;
	size_t *lens;
	int argc;

	/* Redis finds the newline with strchr(), which stops at a NUL: a line
	 * with a NUL before its newline is never complete (it waits for more,
	 * then hits the inline limit). */
	if (nl && memchr(start, '\0', (size_t)(nl - start)))
		nl = NULL;
	if (!nl) {
		if (avail > RESP_INLINE_MAX) {
			proto_error(c, "too big inline request");
			return -1;
		}
		return 0;
	}
	linelen = (size_t)(nl - start);
	if (linelen && start[linelen - 1] == '\r')
		linelen--;
	argc = util_splitargs(start, linelen, &argv, &lens);
	if (argc < 0) {
		proto_error(c, "unbalanced quotes in request");
		return -1;
	}
	c->qpos += (size_t)(nl - start) + 1;
	if (argc == 0) {
		free(argv);
		return 2; /* empty line: consumed, no command */
	}
	free(c->inline_store);
	c->inline_store = argv; /* one block: the pointers, lengths and bytes */
	c->argc = 0;
	for (int i = 0; i < argc; i++)
		argv_push(c, 0, lens[i]);
	for (int i = 0; i < argc; i++) {
		c->argv[i] = argv[i];
		c->argl[i] = lens[i];
	}
	c->reqtype = 2;
	return 1;
}

static int parse_multibulk(struct conn *c)
{
	long long ll;
	size_t used;
	int r;

	if (c->mb_left == 0) {
		r = resp_scan_header(c->qbuf + c->qpos, c->qlen - c->qpos, &ll, &used);
		if (r == RESP_HDR_LONG) {
			proto_error(c, "too big mbulk count string");
			return -1;
		}
		if (r == RESP_HDR_MORE)
			return 0;
		if (r == RESP_HDR_BADNUM || ll > INT32_MAX) {
			proto_error(c, "invalid multibulk length");
			return -1;
		}
		c->qpos += used;
		if (ll <= 0)
			return 2;
		c->mb_left = ll;
		c->bulklen = -1;
		c->argc = 0;
		c->reqtype = 1;
	}
	while (c->mb_left) {
		if (c->bulklen == -1) {
			const char *start = c->qbuf + c->qpos;

			r = resp_scan_header(start, c->qlen - c->qpos, &ll, &used);
			if (r == RESP_HDR_LONG) {
				proto_error(c, "too big bulk count string");
				return -1;
			}
			if (r == RESP_HDR_MORE)
				return 0;
			if (start[0] != '$') {
				char msg[64];

				snprintf(msg, sizeof(msg), "expected '$', got '%c'", start[0]);
				proto_error(c, msg);
				return -1;
			}
			if (r == RESP_HDR_BADNUM || ll < 0 ||
			    ll > atomic_load_explicit(&g_cfg.proto_max_bulk_len,
						      memory_order_relaxed)) {
				proto_error(c, "invalid bulk length");
				return -1;
			}
			c->qpos += used;
			c->bulklen = ll;
		}
		if (c->qlen - c->qpos < (size_t)c->bulklen + 2)
			return 0;
		argv_push(c, c->qpos, (size_t)c->bulklen);
		c->qpos += (size_t)c->bulklen + 2;
		c->bulklen = -1;
		c->mb_left--;
	}
	for (int i = 0; i < c->argc; i++) {
		char *p = c->qbuf + c->argv_off[i];

		p[c->argv_len[i]] = '\0'; /* the '\r' after the bulk: argv are C strings too */
		c->argv[i] = p;
		c->argl[i] = c->argv_len[i];
	}
	return 1;
}

/* Offset where the partially parsed command begins (its arguments must be
 * kept when the buffer is compacted), or qpos when nothing is in progress. */
static size_t keep_from(struct conn *c)
{
	if (c->mb_left && c->argc)
		return c->argv_off[0] < c->qpos ? c->argv_off[0] : c->qpos;
	return c->qpos;
}

static void compact_qbuf(struct conn *c)
{
	size_t from = keep_from(c);

	if (from == 0)
		return;
	if (from < c->qlen)
		memmove(c->qbuf, c->qbuf + from, c->qlen - from);
	c->qlen -= from;
	c->qpos -= from;
	for (int i = 0; i < c->argc && c->mb_left; i++)
		c->argv_off[i] -= from;
}

int conn_process_input(struct conn *c)
{
	long long soft =
	    atomic_load_explicit(&g_cfg.client_output_buffer_soft, memory_order_relaxed);

	c->flags &= ~CONN_INPUT_PAUSED;
	while (c->qpos < c->qlen &&
	       !(c->flags & (CONN_CLOSE_AFTER_REPLY | CONN_CLOSE_ASAP | CONN_SHUTDOWN_WAIT))) {
		int r;

		if (c->out.len - c->out.pos > (size_t)soft) {
			/* Slow reader: stop here; conn_run() or on_write() resumes
			 * once the output has gone (see CONN_INPUT_PAUSED). */
			c->flags |= CONN_INPUT_PAUSED;
			break;
		}
		if (c->reqtype == 0)
			c->reqtype = c->qbuf[c->qpos] == '*' ? 1 : 2;
		r = c->reqtype == 1 ? parse_multibulk(c) : parse_inline(c);
		if (r == 0)
			break;
		if (r < 0)
			return -1;
		if (r == 2) {
			c->reqtype = 0;
			c->argc = 0;
			continue;
		}
		c->dispatch(c);
		c->reqtype = 0;
		c->argc = 0;
	}
	if (c->qpos == c->qlen && c->mb_left == 0) {
		c->qpos = c->qlen = 0;
	} else if (c->qpos > 0 && (c->qlen == c->qcap || c->qpos > c->qcap / 2 ||
				   (c->mb_left && c->bulklen >= RESP_MBULK_BIG_ARG))) {
		compact_qbuf(c);
	}
	return (c->flags & CONN_CLOSE_ASAP) ? -1 : 0;
}

/* How many bytes the next read should make room for.  A big bulk argument in
 * progress gets room for as much again as has arrived (the buffer doubles), up
 * to the whole argument: the buffer grows only as fast as the client really
 * sends, so a bare "$536870000" header costs nothing. */
size_t conn_read_hint(struct conn *c)
{
	if (c->reqtype == 1 && c->mb_left && c->bulklen >= RESP_MBULK_BIG_ARG) {
		size_t have = c->qlen - c->qpos;
		size_t need = (size_t)c->bulklen + 2;

		if (need > have) {
			size_t want = need - have;

			if (have < PROTO_IOBUF_LEN)
				have = PROTO_IOBUF_LEN;
			return want < have ? want : have;
		}
	}
	return PROTO_IOBUF_LEN;
}
