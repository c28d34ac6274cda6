/*
 * request.c - the request parser of rcukv-server (conn.h's
 * conn_process_input() and conn_read_hint()): multibulk and inline requests
 * out of a connection's query buffer into its argv, with Redis 7's protocol
 * errors and limits, each complete command handed to the connection's
 * dispatch callback.
 *
 * Owns nothing shared: every function works on one connection and runs on
 * that connection's worker thread.  Limits: a multibulk count up to INT_MAX
 * (argv grows as elements arrive, so a huge count costs nothing up front),
 * bulk length up to proto-max-bulk-len, header and inline lines up to
 * RESP_INLINE_MAX (resp/resp.h, whose scanner reads the headers).  "Need
 * more bytes" is the status 0 from the parse functions, not an error.
 *
 * Hostile input is tested by tests/server/test_server.c (protocol section)
 * and the fuzz_resp harness (tests/fuzz/).
 */
#include "resp/resp.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/log.h"
#include "server/reply.h"
#include "server/util.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	if (SRV_UNLIKELY(c->flags & CONN_HELD))
		return 0; /* conn_resume() runs the held command first */
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
		c->app->dispatch(c);
		if (SRV_UNLIKELY(c->flags & CONN_HELD))
			return 0; /* kept parsed, the buffer as it is: conn_resume() */
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
