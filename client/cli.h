/*
 * client/cli.h: the one header of rcukv-cli, a Redis client and load generator.
 *
 * What it owns: the RESP2/RESP3 reply tree (reply.c; the scanner is resp/'s), the
 * redis-cli compatible reply formatter (format.c), a blocking connection that
 * uses hiredis to connect and our own reader to parse replies (conn.c, because
 * Debian's hiredis 0.14 does not parse RESP3), its TLS transport over OpenSSL
 * (tls.c, because that hiredis has no hiredis_ssl), the latency histogram (hist.c),
 * the load generator (bench.c) and its reports (report.c).
 *
 * Invariants: a struct cli_reply owns every child and every string under it and
 * is released by cli_reply_free() only.  The scanner never reads past the
 * length it is given and never allocates.
 *
 * Concurrency: everything here is single-threaded except the histogram, which
 * is owned by one thread while recording and merged by the main thread after
 * the recording threads were joined (pthread_join orders the accesses).
 *
 * Tests: tests/client/test_client.c (histogram, scanner, argument splitting),
 * tests/client/test_cli.sh (output against the real redis-cli),
 * tests/client/test_bench.sh (load generator, checked from the server side),
 * tests/client/test_tls.sh (every mode over TLS, against rcukv and redis).
 *
 * The client shares no code with server/: it only knows what a Redis client
 * must know.
 */
#ifndef RCUKV_CLIENT_CLI_H
#define RCUKV_CLIENT_CLI_H

#include "resp/resp.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* ---- RESP reply tree (reply.c) ---- */

/* The scanner that finds where a reply ends is resp_scan() (resp/resp.h);
 * the tree is built only from a reply it found complete. */

enum cli_rtype {
	CLI_R_STRING,
	CLI_R_STATUS,
	CLI_R_ERROR,
	CLI_R_INTEGER,
	CLI_R_NIL,
	CLI_R_ARRAY,
	CLI_R_MAP,
	CLI_R_SET,
	CLI_R_PUSH,
	CLI_R_DOUBLE,
	CLI_R_BOOL,
	CLI_R_BIGNUM,
	CLI_R_VERB
};

struct cli_reply {
	enum cli_rtype type;
	long long integer; /* INTEGER, BOOL */
	char *str;	   /* STRING .. BIGNUM: NUL-terminated copy */
	size_t len;
	size_t elements; /* aggregates; MAP counts keys and values */
	struct cli_reply **element;
	char vtype[4]; /* VERB: "txt", "mkd" */
};

/*
 * cli_reply_parse - build the tree of one complete reply.
 * @buf, @len: bytes for which resp_scan() returned RESP_SCAN_DONE with pos=@len.
 * Return: the reply (caller frees with cli_reply_free), or NULL on a
 * protocol error or out of memory.
 */
struct cli_reply *cli_reply_parse(const char *buf, size_t len);
void cli_reply_free(struct cli_reply *r);

/* ---- formatting as redis-cli prints (format.c) ---- */

/* Growable byte buffer: the caller frees b->p. */
struct cli_buf {
	char *p;
	size_t len, cap;
};

void cli_buf_add(struct cli_buf *b, const void *p, size_t n);
void cli_buf_addstr(struct cli_buf *b, const char *s);
void cli_buf_printf(struct cli_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Quoted form as redis-cli shows strings on a terminal: "a\n\x01". */
void cli_buf_repr(struct cli_buf *b, const char *p, size_t n);

enum cli_output { CLI_OUT_RAW, CLI_OUT_TTY };

/* Append the reply in redis-cli's terminal (TTY) or raw form, with the final newline. */
void cli_format_reply(struct cli_buf *b, const struct cli_reply *r, enum cli_output mode);

/* Splitting a line with redis-cli's quoting: resp_splitargs() (resp/resp.h). */

/* ---- blocking connection (conn.c) ---- */

/* redis-cli's TLS options; the strings are borrowed (argv) and outlive every connection. */
struct cli_tls_opts {
	int enabled;	       /* --tls, or a rediss:// URI */
	int insecure;	       /* --insecure: no certificate verification at all */
	const char *sni;       /* --sni: name sent and checked (default: -h; none on -s) */
	const char *cacert;    /* --cacert file, or NULL */
	const char *cacertdir; /* --cacertdir, or NULL; neither: the system's CAs */
	const char *cert;      /* --cert: client certificate (needs key) */
	const char *key;       /* --key: its private key */
};

struct cli_conn_opts {
	const char *host;
	int port;
	const char *socket;   /* unix socket path, or NULL */
	const char *user;     /* AUTH user, or NULL */
	const char *password; /* AUTH password, or NULL */
	int db;		      /* SELECT when non-zero */
	int resp3;	      /* HELLO 3 after connecting */
	int timeout_ms;	      /* connect timeout (the TLS handshake too) */
	struct cli_tls_opts tls;
	/* SSL_CTX made by cli_tls_setup() from tls, NULL without TLS; read-only
	 * once connections exist, shared by copies of these options (bench). */
	void *tls_ctx;
};

struct cli_conn {
	void *hc; /* redisContext: hiredis owns the socket */
	int fd;
	void *ssl;  /* SSL over fd when TLS (tls.c), else NULL */
	char *rbuf; /* bytes received and not yet consumed */
	size_t rlen, rcap;
	int eof;       /* the server closed the connection */
	char err[512]; /* last error, for the user */
};

/**
 * cli_conn_open - connect (TCP or unix socket) through hiredis, then run the
 * TLS handshake when o->tls_ctx is set.
 * @c: caller storage, overwritten; release with cli_conn_close().
 * @o: where and how; only host/port/socket/timeout_ms are used here.
 *
 * Context: blocks up to o->timeout_ms (connect, and again for TLS).  No
 * AUTH/HELLO/SELECT (cli_conn_handshake).
 * Return: 0, or -1 with c->err holding redis-cli's "Could not connect" text
 * (for TLS: "... SSL_connect failed: certificate verify failed (reason)").
 */
int cli_conn_open(struct cli_conn *c, const struct cli_conn_opts *o);
/*
 * cli_conn_handshake - AUTH, HELLO 3, SELECT as asked.  Failures print a
 * redis-cli style line on stderr ("AUTH failed: ...").
 * Return: 0, or -1 if the connection failed underneath.
 */
int cli_conn_handshake(struct cli_conn *c, const struct cli_conn_opts *o);
void cli_conn_close(struct cli_conn *c);
/* Encode argv as a RESP array into b. */
void cli_encode_cmd(struct cli_buf *b, int argc, char **argv, const size_t *lens);
/**
 * cli_conn_send - write one command, blocking until it is all written.
 * @lens: byte lengths of @argv, or NULL for NUL-terminated arguments.
 * Return: 0, or -1 with c->err set (the connection should be closed).
 */
int cli_conn_send(struct cli_conn *c, int argc, char **argv, const size_t *lens);
/**
 * cli_conn_read - read one reply, blocking (no read timeout: BLPOP may wait).
 * Return: the reply (caller frees with cli_reply_free), or NULL with c->err
 * set when the server closed, the read failed or the reply was malformed.
 */
struct cli_reply *cli_conn_read(struct cli_conn *c);
/**
 * cli_conn_recv - read bytes as read(2) does, over TLS when c->ssl is set.
 * @c: an open connection; its descriptor may be blocking or not.
 *
 * Context: the connection's owner thread.
 * Return: bytes read (> 0), 0 when the server closed, or -1 with errno:
 * EAGAIN/EINTR (retry; over TLS also when OpenSSL needs to write first),
 * anything else with c->err set ("Error: ...").
 */
ssize_t cli_conn_recv(struct cli_conn *c, void *buf, size_t n);
/**
 * cli_conn_xmit - write bytes as write(2) does, over TLS when c->ssl is set.
 * A retry after EAGAIN must pass the unwritten bytes again in front (the
 * buffer may have moved or grown since).
 * Return: bytes written (> 0), or -1 with errno (EAGAIN/EINTR: retry;
 * anything else with c->err set).
 */
ssize_t cli_conn_xmit(struct cli_conn *c, const void *buf, size_t n);
/* Does the connection hold received bytes that poll/epoll cannot see (TLS)? */
int cli_conn_pending(const struct cli_conn *c);

/* ---- TLS transport (tls.c); see conn.c for the plain one ---- */

/**
 * cli_tls_setup - make o->tls_ctx from o->tls (CA, client certificate, verification).
 * @o: options; nothing is done unless o->tls.enabled, or when tls_ctx exists.
 *
 * Context: main thread, before any connection.  Prints redis-cli's message
 * ("Could not negotiate a TLS connection: Invalid CA Certificate
 * File/Directory", "... Invalid client certificate", "... Invalid private key").
 * Return: 0, or -1 (exit status 1, as redis-cli).
 */
int cli_tls_setup(struct cli_conn_opts *o);
/* Free o->tls_ctx (after every connection made from it was closed). */
void cli_tls_teardown(struct cli_conn_opts *o);
/**
 * cli_tls_handshake - run the TLS client handshake on c->fd and verify the server.
 * @where: "host:port" or the socket path, for messages.
 *
 * Context: blocks up to o->timeout_ms; the descriptor must be blocking.
 * Return: 0 with c->ssl set, or -1 with c->err set.
 */
int cli_tls_handshake(struct cli_conn *c, const struct cli_conn_opts *o, const char *where);
/* Transport halves of cli_conn_recv/cli_conn_xmit/cli_conn_pending for c->ssl. */
ssize_t cli_tls_recv(struct cli_conn *c, void *buf, size_t n);
ssize_t cli_tls_send(struct cli_conn *c, const void *buf, size_t n);
int cli_tls_pending(const struct cli_conn *c);
/* Send close_notify (best effort, never waits) and free c->ssl; the fd stays open. */
void cli_tls_close(struct cli_conn *c);

/* ---- latency histogram (hist.c) ---- */

/*
 * Log-linear buckets over microseconds: values below 2^CLI_HIST_LIN_BITS
 * are exact; above, each power of two is cut into 2^(CLI_HIST_LIN_BITS-1)
 * equal sub-buckets, so a bucket is at most 1/128 (0.8 %) of its value
 * wide.  Covers 0 .. 2^CLI_HIST_MAX_EXP us (about 71 minutes); larger values
 * land in the last bucket but min/max/sum stay exact.
 */
#define CLI_HIST_LIN_BITS 8
#define CLI_HIST_SUB (1u << (CLI_HIST_LIN_BITS - 1))
#define CLI_HIST_MAX_EXP 32
#define CLI_HIST_NBUCKETS                                                                          \
	((1u << CLI_HIST_LIN_BITS) + (CLI_HIST_MAX_EXP - CLI_HIST_LIN_BITS) * CLI_HIST_SUB)

struct cli_hist {
	uint64_t count;
	uint64_t min, max; /* exact, in us; min is UINT64_MAX when empty */
	double sum, sumsq; /* for mean and standard deviation */
	uint64_t b[CLI_HIST_NBUCKETS];
};

/* Context for all cli_hist_*: the caller owns @h (no internal locking). */
void cli_hist_init(struct cli_hist *h);
/* Record one value in microseconds; O(1), never fails. */
void cli_hist_record(struct cli_hist *h, uint64_t us);
/* Add every sample of @src to @dst; @src is unchanged. */
void cli_hist_merge(struct cli_hist *dst, const struct cli_hist *src);
unsigned cli_hist_index(uint64_t us);
uint64_t cli_hist_lowest(unsigned idx);	 /* smallest value of a bucket */
uint64_t cli_hist_highest(unsigned idx); /* largest value of a bucket */
/* Value at percentile p (0..100): the highest value equivalent to the
 * bucket holding the p-th sample, clamped to [min, max]; 0 when empty. */
uint64_t cli_hist_percentile(const struct cli_hist *h, double p);
double cli_hist_mean(const struct cli_hist *h);
double cli_hist_stddev(const struct cli_hist *h);
/* HdrHistogram "percentile distribution" text, values in milliseconds. */
void cli_hist_write_hdr(const struct cli_hist *h, FILE *f);

/* ---- load generator (bench.c, report.c) ---- */

/**
 * cli_bench_main - "rcukv-cli bench ARGS": parse, connect, run, report.
 * @argc, @argv: argv[0] is "bench"; getopt state is reset here.
 * @base: connection options given before "bench" (bench flags override).
 *
 * Context: main thread; starts and joins its worker threads; ignores SIGPIPE.
 * Return: the exit status: 0 when the run completed (error replies are
 * counted, not fatal), 1 on a bad flag, an unreachable server, a refused
 * AUTH, or when every connection was lost.
 */
int cli_bench_main(int argc, char **argv, const struct cli_conn_opts *base);
/**
 * cli_svg_compare - draw two --json runs of rcukv-cli bench on one chart.
 * @out: SVG path, or NULL for stdout.
 * Return: the exit status (1 with a message when a file is unreadable).
 */
int cli_svg_compare(const char *a, const char *b, const char *out);

/*
 * Abort with file, function, line and errno text: for impossible states,
 * failed pthread calls and out of memory (the client has no way around it).
 */
#define cli_die(msg) cli_die_at(__FILE__, __func__, __LINE__, (msg))
void cli_die_at(const char *file, const char *func, int line, const char *msg)
    __attribute__((noreturn));

#endif /* RCUKV_CLIENT_CLI_H */
