/*
 * client/conn.c: one blocking connection of rcukv-cli.
 *
 * hiredis opens the socket (TCP with TCP_NODELAY, or unix) and owns it; we
 * write RESP ourselves and read with our own scanner because Debian's hiredis
 * 0.14 knows only RESP2.  With TLS (o->tls_ctx), tls.c runs OpenSSL over that
 * socket and every byte goes through cli_conn_recv()/cli_conn_xmit(), which
 * pick the transport.  A connection belongs to one thread.
 *
 * Tested by tests/client/test_cli.sh (command, stdin and interactive modes)
 * and tests/client/test_tls.sh (the same over TLS).
 */
#include "resp/resp.h"
#include "client/cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

int cli_conn_open(struct cli_conn *c, const struct cli_conn_opts *o)
{
	struct timeval tv = {o->timeout_ms / 1000, (o->timeout_ms % 1000) * 1000};
	redisContext *hc;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (o->socket)
		hc = redisConnectUnixWithTimeout(o->socket, tv);
	else
		hc = redisConnectWithTimeout(o->host, o->port, tv);
	if (!hc) {
		snprintf(c->err, sizeof(c->err), "out of memory");
		return -1;
	}
	if (hc->err) {
		if (o->socket)
			snprintf(c->err, sizeof(c->err), "Could not connect to Redis at %s: %s",
				 o->socket, hc->errstr);
		else
			snprintf(c->err, sizeof(c->err), "Could not connect to Redis at %s:%d: %s",
				 o->host, o->port, hc->errstr);
		redisFree(hc);
		return -1;
	}
	c->hc = hc;
	c->fd = hc->fd;
	if (o->tls_ctx) {
		char where[300];
		if (o->socket)
			snprintf(where, sizeof(where), "%s", o->socket);
		else
			snprintf(where, sizeof(where), "%s:%d", o->host, o->port);
		if (cli_tls_handshake(c, o, where) != 0) {
			redisFree(hc);
			c->hc = NULL;
			c->fd = -1;
			return -1;
		}
	}
	/* The connect timeout must not become a read timeout (BLPOP may wait). */
	struct timeval zero = {0, 0};
	redisSetTimeout(hc, zero);
	return 0;
}

ssize_t cli_conn_recv(struct cli_conn *c, void *buf, size_t n)
{
	ssize_t r;

	if (c->ssl)
		return cli_tls_recv(c, buf, n);
	r = read(c->fd, buf, n);
	if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		snprintf(c->err, sizeof(c->err), "Error: %s", strerror(errno));
	return r;
}

ssize_t cli_conn_xmit(struct cli_conn *c, const void *buf, size_t n)
{
	ssize_t r;

	if (c->ssl)
		return cli_tls_send(c, buf, n);
	r = write(c->fd, buf, n);
	if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		snprintf(c->err, sizeof(c->err), "Error: %s", strerror(errno));
	return r;
}

int cli_conn_pending(const struct cli_conn *c)
{
	return cli_tls_pending(c);
}

void cli_conn_close(struct cli_conn *c)
{
	cli_tls_close(c); /* before hiredis closes the descriptor under it */
	if (c->hc)
		redisFree(c->hc);
	c->hc = NULL;
	c->fd = -1;
	free(c->rbuf);
	c->rbuf = NULL;
	c->rlen = c->rcap = 0;
}

void cli_encode_cmd(struct cli_buf *b, int argc, char **argv, const size_t *lens)
{
	cli_buf_printf(b, "*%d\r\n", argc);
	for (int i = 0; i < argc; i++) {
		size_t n = lens ? lens[i] : strlen(argv[i]);
		cli_buf_printf(b, "$%zu\r\n", n);
		cli_buf_add(b, argv[i], n);
		cli_buf_add(b, "\r\n", 2);
	}
}

int cli_conn_send(struct cli_conn *c, int argc, char **argv, const size_t *lens)
{
	struct cli_buf b = {0};
	size_t off = 0;

	if (c->fd < 0) {
		snprintf(c->err, sizeof(c->err), "not connected");
		return -1;
	}
	cli_encode_cmd(&b, argc, argv, lens);
	while (off < b.len) {
		ssize_t n = cli_conn_xmit(c, b.p + off, b.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				snprintf(c->err, sizeof(c->err), "Error: send timed out");
			else if (n == 0)
				snprintf(c->err, sizeof(c->err), "Error: %s", strerror(EPIPE));
			free(b.p);
			return -1;
		}
		off += (size_t)n;
	}
	free(b.p);
	return 0;
}

struct cli_reply *cli_conn_read(struct cli_conn *c)
{
	struct resp_scan s;

	resp_scan_init(&s);
	for (;;) {
		int st = resp_scan(&s, c->rbuf ? c->rbuf : "", c->rlen);

		if (st == RESP_SCAN_DONE) {
			struct cli_reply *r = cli_reply_parse(c->rbuf, s.pos);
			memmove(c->rbuf, c->rbuf + s.pos, c->rlen - s.pos);
			c->rlen -= s.pos;
			if (!r)
				snprintf(c->err, sizeof(c->err),
					 "Error: out of memory or bad reply");
			return r;
		}
		if (st == RESP_SCAN_ERROR) {
			snprintf(c->err, sizeof(c->err), "Error: %s", s.err);
			return NULL;
		}
		if (c->fd < 0) {
			snprintf(c->err, sizeof(c->err), "not connected");
			return NULL;
		}
		if (c->rcap - c->rlen < 16384) {
			size_t cap = c->rcap ? c->rcap * 2 : 65536;
			char *p = realloc(c->rbuf, cap);
			if (!p) {
				snprintf(c->err, sizeof(c->err), "Error: out of memory");
				return NULL;
			}
			c->rbuf = p;
			c->rcap = cap;
		}
		ssize_t n = cli_conn_recv(c, c->rbuf + c->rlen, c->rcap - c->rlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			c->eof = 1;
			snprintf(c->err, sizeof(c->err), "Error: Server closed the connection");
			return NULL;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			snprintf(c->err, sizeof(c->err), "Error: no reply within the timeout");
			return NULL;
		}
		if (n < 0)
			return NULL; /* c->err set by cli_conn_recv */
		c->rlen += (size_t)n;
	}
}

/* Send one command and print a failure the way redis-cli does. */
static int handshake_cmd(struct cli_conn *c, const char *what, int argc, char **argv)
{
	struct cli_reply *r;

	if (cli_conn_send(c, argc, argv, NULL) != 0 || !(r = cli_conn_read(c)))
		return -1;
	if (r->type == CLI_R_ERROR)
		fprintf(stderr, "%s failed: %s\n", what, r->str);
	cli_reply_free(r);
	return 0;
}

int cli_conn_handshake(struct cli_conn *c, const struct cli_conn_opts *o)
{
	char dbs[16];

	if (o->password) {
		char *a[3] = {"AUTH", (char *)(o->user ? o->user : o->password),
			      (char *)o->password};
		if (handshake_cmd(c, "AUTH", o->user ? 3 : 2, a) != 0)
			return -1;
	}
	if (o->db) {
		char *a[2] = {"SELECT", dbs};
		snprintf(dbs, sizeof(dbs), "%d", o->db);
		char what[32];
		snprintf(what, sizeof(what), "SELECT %d", o->db);
		if (handshake_cmd(c, what, 2, a) != 0)
			return -1;
	}
	if (o->resp3) {
		char *a[2] = {"HELLO", "3"};
		if (handshake_cmd(c, "HELLO", 2, a) != 0)
			return -1;
	}
	return 0;
}
