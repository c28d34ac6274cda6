/*
 * conn.c - the connection engine: a connection's query buffer, the request
 * pipeline, the flush queue, the output limits and pause, and its close.
 * No socket and no event loop here: bytes move through c->io (plain sockets
 * in net.c, TLS in tls.c, memory in tests/fuzz) and events are asked of
 * c->loop (libevent in net.c), see conn.h.
 *
 * I/O: a readable connection is read once (16 KiB, or the rest of a big bulk
 * argument), every complete command in the buffer runs (conn_process_input(),
 * request.c, which hands each to c->app->dispatch), and all replies leave in one write.
 * That write waits for the end of the loop turn (the worker's flush queue, as
 * Redis writes in beforeSleep): every ready connection's commands run first,
 * then every reply goes (conn_flush_queued()), so the clients these writes
 * wake do not interrupt the worker halfway through a turn.  Transports with
 * write_at_once (TLS), and a connection paused or closing, write at once.
 * If the transport does not take it all, write events are asked for; a
 * client whose unsent output passes client-output-buffer-pause is not read
 * (and its buffered commands not run) until the output drains, so one slow
 * reader costs its worker nothing and holds bounded memory.
 *
 * Threads: every function runs on the connection's worker (the owner
 * thread), online as a QSBR reader: commands run inside conn_on_read() and
 * may hold table references until they return.  The registry and the
 * CLIENT-visible fields are written as conn.h says.
 *
 * Tested by tests/server/test_server.c (pipelines, pause, output limits,
 * big arguments), test_tls.sh, and tests/fuzz, which runs this file on an
 * in-memory transport.
 */
#include "resp/resp.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/log.h"
#include "server/server.h"
#include "server/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int conn_flush(struct conn *c);

struct conn *conn_new(struct worker *w, int fd, int flags, const struct conn_io *io,
		      const struct conn_loop *loop, const struct conn_app *app)
{
	struct conn *c = xcalloc(1, sizeof(*c));

	c->fd = fd;
	c->w = w;
	c->io = io;
	c->loop = loop;
	c->app = app;
	c->resp = 2;
	c->bulklen = -1;
	c->flags = flags;
	/* As Redis: a client accepted while the default user needs no password
	 * stays authenticated if requirepass is set later. */
	c->authenticated = !cfg_password_required();
	c->id = atomic_fetch_add(&g_srv.next_client_id, 1) + 1;
	c->ctime_ms = util_mstime();
	atomic_store_explicit(&c->last_ms, c->ctime_ms, memory_order_relaxed);
	atomic_store_explicit(&c->last_cmd, -1, memory_order_relaxed);
	atomic_store_explicit(&c->last_sub, -1, memory_order_relaxed);
	atomic_store_explicit(&c->resp_pub, 2, memory_order_relaxed);
	atomic_store_explicit(&c->multi_count, -1, memory_order_relaxed);
	return c;
}

void conn_attach(struct conn *c)
{
	struct worker *w = c->w;

	c->loop->want(c, CONN_EV_READ, 1);
	c->reading = 1;

	c->wnext = w->conns;
	if (w->conns)
		w->conns->wprev = c;
	w->conns = c;
	atomic_fetch_add_explicit(&w->nconns, 1, memory_order_relaxed);

	if (c->app->opened)
		c->app->opened(c);
	STAT_ADD(w->st.conns_received, 1);
}

/* Queue c's replies for the end of the loop turn.  Context: owner worker. */
static void conn_queue_flush(struct conn *c)
{
	if (c->fqueued)
		return;
	c->fqueued = 1;
	c->fqnext = c->w->flushq;
	c->w->flushq = c;
}

void conn_close(struct conn *c)
{
	struct worker *w = c->w;

	if (c->fqueued) { /* closed by a command of another client this turn */
		struct conn **pp = &w->flushq;

		while (*pp != c)
			pp = &(*pp)->fqnext;
		*pp = c->fqnext;
		c->fqueued = 0;
	}

	if (c->app->closing)
		c->app->closing(c);

	if (c->wprev)
		c->wprev->wnext = c->wnext;
	else
		w->conns = c->wnext;
	if (c->wnext)
		c->wnext->wprev = c->wprev;
	atomic_fetch_sub_explicit(&w->nconns, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&g_srv.nclients, 1, memory_order_relaxed);

	c->loop->release(c);
	c->io->close(c);
	free(c->qbuf);
	free(c->out.buf);
	free(c->argv_off);
	free(c->argv_len);
	free((void *)c->argv);
	free(c->argl);
	free(c->inline_store);
	free(c);
}

static void conn_set_reading(struct conn *c, int on)
{
	if (on && !c->reading) {
		c->loop->want(c, CONN_EV_READ, 1);
		c->reading = 1;
	} else if (!on && c->reading) {
		c->loop->want(c, CONN_EV_READ, 0);
		c->reading = 0;
	}
}

/*
 * Run buffered commands, then flush.  If the run stopped for the output limit
 * and the socket took everything, run again (the client is waiting for replies
 * to commands it already sent and will send nothing more); after a few rounds
 * the rest waits for a later loop turn (conn_on_write(), through loop->again)
 * so one pipelining client cannot hold its worker.
 */
int conn_run(struct conn *c, int defer)
{
	for (int round = 0;; round++) {
		int r = conn_process_input(c);

		atomic_store_explicit(&c->qbuf_used, c->qlen - c->qpos, memory_order_relaxed);
		if (r < 0 && !(c->flags & CONN_CLOSE_AFTER_REPLY)) {
			conn_close(c);
			return -1;
		}
		if (SRV_UNLIKELY(c->flags & CONN_HELD)) /* argv points into qbuf: no read */
			conn_set_reading(c, 0);
		/* The common case: the replies leave at the end of the turn. */
		if (defer && !(c->flags & (CONN_INPUT_PAUSED | CONN_CLOSE_AFTER_REPLY |
					   CONN_CLOSE_ASAP))) {
			if (c->out.len > c->out.pos)
				conn_queue_flush(c);
			return 0;
		}
		if (conn_flush(c) < 0)
			return -1;
		if (!(c->flags & CONN_INPUT_PAUSED) || !c->reading)
			return 0; /* done, or conn_on_write() resumes when the output drains */
		if (round == 8) {
			c->loop->again(c, CONN_EV_WRITE);
			return 0;
		}
	}
}

/* --------------------------------------------------------- key prefetch */

#define PREFETCH_KEYS 32 /* keys warmed per read (the table takes up to HT_PREFETCH_MAX) */

/* One complete "$len\r\n<bytes>\r\n" at p: its bytes and the position after. */
static const char *scan_bulk(const char *p, const char *end, const char **arg, size_t *len)
{
	long long l;
	size_t used;

	if (p >= end || *p != '$' ||
	    resp_scan_header(p, (size_t)(end - p), &l, &used) != RESP_HDR_OK || l < 0 ||
	    (size_t)(end - p) - used < (size_t)l + 2)
		return NULL;
	*arg = p + used;
	*len = (size_t)l;
	return p + used + l + 2;
}

/*
 * Before a pipeline runs, find the first key (argv[1]) of each complete
 * multibulk command already in the query buffer and have the table start
 * loading their buckets and entries in parallel (c->app->prefetch: db_prefetch() in the server): the commands
 * then find them in cache instead of missing once per command, one after the
 * other.  Only a hint: anything unusual (inline commands, a command split
 * across reads, a big argument) just ends the scan; the parser proper checks
 * everything.  Context: worker, online.
 */
static void conn_prefetch_keys(struct conn *c)
{
	const char *p = c->qbuf + c->qpos, *end = c->qbuf + c->qlen;
	const char *keys[PREFETCH_KEYS];
	size_t lens[PREFETCH_KEYS];
	size_t n = 0;
	uint32_t wr = 0;

	if (!c->app->prefetch || c->reqtype != 0 || c->qlen - c->qpos < 64) /* or mid-command */
		return;
	while (n < PREFETCH_KEYS && p < end && *p == '*') {
		const char *a;
		size_t al, used;
		long long argc;

		if (resp_scan_header(p, (size_t)(end - p), &argc, &used) != RESP_HDR_OK ||
		    argc < 2 || argc > 1024 || !(p = scan_bulk(p + used, end, &a, &al)))
			break;
		/* the command's row says whether it may write: a write's stripe
		 * mutex is warmed too */
		if (!c->app->may_write || c->app->may_write(a, al))
			wr |= 1u << n;
		if (!(p = scan_bulk(p, end, &a, &al)))
			break;
		keys[n] = a;
		lens[n] = al;
		n++;
		for (long long i = 2; i < argc && p; i++)
			p = scan_bulk(p, end, &a, &al);
		if (!p)
			break;
	}
	if (n > 1)
		c->app->prefetch(c, n, keys, lens, wr);
}

/* ---------------------------------------------------------- read, write */

void conn_on_read(struct conn *c)
{
	size_t hint, room;
	ssize_t n;
	long long limit;

	STAT_ADD(c->w->st.reads, 1);
	hint = conn_read_hint(c);
	room = c->qcap - c->qlen;
	if (room < hint) {
		if (c->qpos > 0 && c->mb_left == 0 && c->qpos == c->qlen) {
			c->qpos = c->qlen = 0;
			room = c->qcap;
		}
		if (room < hint) {
			size_t cap = c->qcap ? c->qcap : PROTO_IOBUF_LEN;

			if (hint > PROTO_IOBUF_LEN) {
				cap = c->qlen + hint; /* doubling, ends exactly at the argument */
			} else {
				while (cap - c->qlen < hint)
					cap *= 2;
			}
			c->qbuf = xrealloc(c->qbuf, cap + 1);
			c->qcap = cap;
		}
	}
	n = c->io->read(c, c->qbuf + c->qlen, c->qcap - c->qlen);
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		srv_log(LL_VERBOSE, "Client closed connection id=%llu addr=%s",
			(unsigned long long)c->id, c->addr);
		conn_close(c);
		return;
	}
	c->qlen += (size_t)n;
	c->qread_total += (unsigned long long)n;
	STAT_ADD(c->w->st.net_in, (unsigned long long)n);
	atomic_store_explicit(&c->last_ms, util_mstime(), memory_order_relaxed);
	limit = atomic_load_explicit(&g_cfg.client_query_buffer_limit, memory_order_relaxed);
	if (c->qlen - c->qpos > (size_t)limit) {
		srv_log(LL_WARNING,
			"Closing client that reached max query buffer length: id=%llu addr=%s "
			"(qbuf initial bytes: \"%.32s\")",
			(unsigned long long)c->id, c->addr, c->qbuf + c->qpos);
		conn_close(c);
		return;
	}
	conn_prefetch_keys(c);
	/* TLS may hold decrypted bytes the socket no longer signals: come back */
	if (conn_run(c, !c->io->write_at_once) == 0 && c->io->pending && c->reading &&
	    c->io->pending(c))
		c->loop->again(c, CONN_EV_READ);
}

void conn_output_added(struct conn *c)
{
	if (!(c->flags & (CONN_CLOSE_AFTER_REPLY | CONN_CLOSE_ASAP)))
		conn_queue_flush(c);
}

/*
 * client-output-buffer-limit normal (pubsub for a subscribed client, as
 * Redis's getClientType()): unsent output at or over the hard limit, or over
 * the soft limit for longer than its seconds, closes the client (as Redis).
 * Checked after each write attempt, i.e. after every batch of commands or of
 * delivered messages, so a client that never reads holds at most one batch
 * over the limit.
 */
static int obuf_over_limit(struct conn *c)
{
	int ps = (c->flags & CONN_PUBSUB) != 0;
	long long hard = atomic_load_explicit(ps ? &g_cfg.cobl_ps_hard : &g_cfg.cobl_hard,
					      memory_order_relaxed);
	long long soft = atomic_load_explicit(ps ? &g_cfg.cobl_ps_soft : &g_cfg.cobl_soft,
					      memory_order_relaxed);
	long long used = (long long)(c->out.len - c->out.pos);

	if (hard > 0 && used >= hard)
		return 1;
	if (soft > 0 && used >= soft) {
		long long now = util_mstime();
		long long secs = atomic_load_explicit(
		    ps ? &g_cfg.cobl_ps_soft_secs : &g_cfg.cobl_soft_secs, memory_order_relaxed);

		if (!c->obuf_soft_since)
			c->obuf_soft_since = now;
		return now - c->obuf_soft_since >= secs * 1000;
	}
	c->obuf_soft_since = 0;
	return 0;
}

static void log_obuf_close(struct conn *c)
{
	srv_log(LL_WARNING, "Client id=%llu addr=%s closed for overcoming of output buffer limits.",
		(unsigned long long)c->id, c->addr);
}

/* Write what the transport takes.  Return -1 if c was closed (freed). */
static int conn_flush(struct conn *c)
{
	struct obuf *o = &c->out;
	long long soft;

	if (o->pos < o->len)
		STAT_ADD(c->w->st.writes, 1);
	while (o->pos < o->len) {
		ssize_t n = c->io->write(c, o->buf + o->pos, o->len - o->pos);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			srv_log(LL_VERBOSE, "Error writing to client: %s", strerror(errno));
			conn_close(c);
			return -1;
		}
		o->pos += (size_t)n;
		STAT_ADD(c->w->st.net_out, (unsigned long long)n);
	}
	if (o->pos == o->len) {
		o->pos = o->len = 0;
		if (o->cap > 1024 * 1024) { /* give back a big reply's buffer */
			STAT_ADD(c->w->st.reply_shrinks, 1);
			free(o->buf);
			o->buf = NULL;
			o->cap = 0;
		}
		c->obuf_soft_since = 0;
		if (c->flags & CONN_WRITE_PENDING) {
			c->loop->want(c, CONN_EV_WRITE, 0);
			c->flags &= ~CONN_WRITE_PENDING;
		}
		if (c->flags & (CONN_CLOSE_AFTER_REPLY | CONN_CLOSE_ASAP)) {
			conn_close(c);
			return -1;
		}
		conn_set_reading(c, !(c->flags & CONN_HELD));
		atomic_store_explicit(&c->obuf_used, 0, memory_order_relaxed);
		return 0;
	}
	if (!(c->flags & CONN_WRITE_PENDING)) {
		c->loop->want(c, CONN_EV_WRITE, 1);
		c->flags |= CONN_WRITE_PENDING;
	}
	if (obuf_over_limit(c)) {
		log_obuf_close(c);
		conn_close(c);
		return -1;
	}
	soft = atomic_load_explicit(&g_cfg.client_output_buffer_soft, memory_order_relaxed);
	if (o->len - o->pos > (size_t)soft || (c->flags & CONN_CLOSE_AFTER_REPLY))
		conn_set_reading(c, 0);
	atomic_store_explicit(&c->obuf_used, o->len - o->pos, memory_order_relaxed);
	return 0;
}

int conn_resume(struct conn *c)
{
	c->flags &= ~CONN_HELD;
	c->app->dispatch(c);
	if (!(c->flags & CONN_HELD)) {
		c->reqtype = 0;
		c->argc = 0;
		conn_set_reading(c, 1);
	}
	return conn_run(c, 0);
}

void conn_on_write(struct conn *c)
{
	if (conn_flush(c) < 0)
		return;
	/* Output drained: run the commands the output limit held back. */
	if (c->reading && (c->flags & CONN_INPUT_PAUSED) && conn_run(c, 0) < 0)
		return;
	/* Reading again: bytes TLS decrypted earlier raise no socket event. */
	if (c->io->pending && c->reading && c->io->pending(c))
		c->loop->again(c, CONN_EV_READ);
}

/* ------------------------------------------------------- worker's share */

void conn_flush_queued(struct worker *w)
{
	while (w->flushq) {
		struct conn *c = w->flushq;

		w->flushq = c->fqnext;
		c->fqueued = 0;
		(void)conn_flush(c); /* may close c */
	}
}

void conn_close_all(struct worker *w)
{
	while (w->conns) {
		struct conn *c = w->conns;
		struct obuf *o = &c->out;

		/* one last non-blocking attempt at replies in flight */
		while (o->pos < o->len) {
			ssize_t n = c->io->write(c, o->buf + o->pos, o->len - o->pos);

			if (n <= 0)
				break;
			o->pos += (size_t)n;
		}
		conn_close(c);
	}
}

void conn_cron(struct worker *w)
{
	long long tmo = atomic_load_explicit(&g_cfg.timeout, memory_order_relaxed);
	long long now = util_mstime();

	for (struct conn *c = w->conns, *next; c; c = next) {
		next = c->wnext;
		if (tmo > 0 && !(c->flags & CONN_MASTER) &&
		    now - atomic_load_explicit(&c->last_ms, memory_order_relaxed) > tmo * 1000) {
			srv_log(LL_VERBOSE, "Closing idle client");
			conn_close(c);
			continue;
		}
		/* a reader that stopped reading writes nothing: check here too */
		if (c->out.len > c->out.pos && obuf_over_limit(c)) {
			log_obuf_close(c);
			conn_close(c);
			continue;
		}
		/* Give back idle query buffers that grew for a big argument. */
		if (c->qlen == 0 && c->qcap > 64 * 1024) {
			free(c->qbuf);
			c->qbuf = NULL;
			c->qcap = 0;
		}
	}
}
