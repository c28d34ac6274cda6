/*
 * client/cli.h: the one header of rcukv-cli, a Redis client and load generator.
 *
 * What it owns: the RESP2/RESP3 reply scanner and reply tree (resp.c), the
 * redis-cli compatible reply formatter (format.c), a blocking connection that
 * uses hiredis to connect and our own reader to parse replies (conn.c, because
 * Debian's hiredis 0.14 does not parse RESP3), the latency histogram (hist.c),
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
 * Tests: tests/client/test_hist.c (histogram, scanner, argument splitting),
 * tests/client/test_cli.sh (output against the real redis-cli),
 * tests/client/test_bench.sh (load generator, checked from the server side).
 *
 * The client shares no code with server/: it only knows what a Redis client
 * must know.
 */
#ifndef RCUKV_CLIENT_CLI_H
#define RCUKV_CLIENT_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- RESP reply scanner and tree (resp.c) ---- */

/* Limits of the reader; a reply past them is a protocol error. */
#define CLI_RESP_MAX_DEPTH 64	      /* nested aggregates */
#define CLI_RESP_MAX_LINE (64 * 1024) /* header line (simple strings too) */
#define CLI_RESP_MAX_BULK (512LL * 1024 * 1024)
#define CLI_RESP_MAX_ELEMS (1LL << 32)

enum cli_scan_status {
	CLI_SCAN_DONE = 0,  /* one whole reply lies in buf[0, s->pos) */
	CLI_SCAN_AGAIN = 1, /* need more bytes: call again with the same state */
	CLI_SCAN_ERROR = -1 /* protocol error; s->err says what */
};

/*
 * A resumable scanner: it finds where one reply ends without building it.
 * State stays valid across calls as long as buf keeps the same prefix (the
 * buffer may grow or move).  Attributes ('|') are skipped and not counted.
 */
struct cli_scan {
	size_t pos;			    /* offset of the next element */
	int depth;			    /* open aggregates */
	long long left[CLI_RESP_MAX_DEPTH]; /* elements still due, per level */
	char attr[CLI_RESP_MAX_DEPTH];	    /* level is an attribute map */
	char top;			    /* type byte of the top-level reply */
	long long top_len;		    /* its length/count (-1: null) */
	char err[64];
};

/* Ready @s for a new reply starting at buf[0]. */
void cli_scan_init(struct cli_scan *s);
/**
 * cli_scan - find the end of one reply without building it.
 * @s: state from cli_scan_init(), kept across calls for the same reply.
 * @buf, @len: the bytes received so far; the reply starts at buf[0].
 *
 * Context: any thread that owns @s; never allocates, never reads past @len.
 * Return: CLI_SCAN_DONE (the reply is buf[0, s->pos), s->top and s->top_len
 * describe it), CLI_SCAN_AGAIN (call again with more bytes), or
 * CLI_SCAN_ERROR (s->err names the violation; the connection is unusable).
 */
int cli_scan(struct cli_scan *s, const char *buf, size_t len);

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
 * @buf, @len: bytes for which cli_scan() returned CLI_SCAN_DONE with pos=@len.
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

/*
 * cli_split_args - split a line with redis-cli's quoting rules: "..." with
 * \n \r \t \b \a \\ \" \xHH escapes, '...' with \' only, a closing quote must
 * be followed by a space or the end.
 * Return: argument count (>= 0) with *argvp, *lensp malloc'ed (free with
 * cli_free_args), or -1 on unbalanced quotes.
 */
int cli_split_args(const char *line, char ***argvp, size_t **lensp);
void cli_free_args(int argc, char **argv, size_t *lens);

/* ---- blocking connection (conn.c) ---- */

struct cli_conn_opts {
	const char *host;
	int port;
	const char *socket;   /* unix socket path, or NULL */
	const char *user;     /* AUTH user, or NULL */
	const char *password; /* AUTH password, or NULL */
	int db;		      /* SELECT when non-zero */
	int resp3;	      /* HELLO 3 after connecting */
	int timeout_ms;	      /* connect timeout */
};

struct cli_conn {
	void *hc; /* redisContext: hiredis owns the socket */
	int fd;
	char *rbuf; /* bytes received and not yet consumed */
	size_t rlen, rcap;
	int eof;       /* the server closed the connection */
	char err[256]; /* last error, for the user */
};

/**
 * cli_conn_open - connect (TCP or unix socket) through hiredis.
 * @c: caller storage, overwritten; release with cli_conn_close().
 * @o: where and how; only host/port/socket/timeout_ms are used here.
 *
 * Context: blocks up to o->timeout_ms.  No handshake (cli_conn_handshake).
 * Return: 0, or -1 with c->err holding redis-cli's "Could not connect" text.
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
