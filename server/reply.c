/*
 * reply.c - the reply encoders of rcukv-server (server/reply.h): RESP2, and
 * RESP3 after HELLO 3, appended to a connection's output buffer.
 *
 * Owns nothing shared: every function works on one connection and runs on
 * that connection's worker thread.  The request side is request.c; both
 * read the wire format's rules from resp/resp.h.
 */
#include "resp/resp.h"
#include "server/config.h"
#include "server/conn.h"
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

void reply_push(struct conn *c, long long n)
{
	reply_hdr(c, c->resp == 3 ? '>' : '*', n);
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

/* The lines of a HELP subcommand, as Redis prints them (simple strings). */
void reply_help(struct conn *c, const char *const *lines)
{
	long long n = 0;

	while (lines[n])
		n++;
	reply_array(c, n);
	for (long long i = 0; i < n; i++)
		reply_simple(c, lines[i]);
}
