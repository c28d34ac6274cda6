/*
 * fuzz_common.h - what the two libFuzzer harnesses of rcukv-server share: a
 * fake worker, connections served by the connection engine itself
 * (server/conn.c) over an in-memory transport and event loop, and a strict
 * RESP2/RESP3 reply checker.
 *
 * Input format of both harnesses (tests/fuzz/README):
 *   byte 0      flags: bits 0-6 harness specific; bit 7, both harnesses: the
 *               transport writes replies at once, as TLS does (else at the
 *               end of the loop turn, as plain sockets)
 *   byte 1      low 4 bits: S, the number of chunk-size bytes that follow
 *   S bytes     chunk sizes, each b + 1 (1..256), used in turn, cyclically
 *   the rest    the bytes the client sends
 * An input shorter than its header is all data, with flags 0 and no chunks.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "server/cmd.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/util.h"

struct fz_input {
	unsigned flags;
	const uint8_t *chunks;  /* chunk sizes (b + 1), or NULL: one chunk */
	size_t nchunks;
	const uint8_t *data;
	size_t len;
};

void fz_split_input(const uint8_t *p, size_t n, struct fz_input *in);

/* Abort with a message (libFuzzer reports it as a crash with the input). */
__attribute__((noreturn, format(printf, 1, 2))) void fz_fail(const char *fmt, ...);
#define FZ_CHECK(cond, ...) \
	do { \
		if (!(cond)) \
			fz_fail(__VA_ARGS__); \
	} while (0)

/* One worker and its connections, made by conn_new() and conn_attach() as
 * net.c's acceptor does, with the transport bit 7 of the last input's flags
 * chose (fz_split_input()). */
extern struct worker fz_worker;
/* Once: g_cfg, g_srv, log to /dev/null; @app->dispatch runs every command of
 * the connections fz_conn_new() makes (the harness's, not cmd_dispatch()). */
void fz_globals_init(const struct conn_app *app);
struct conn *fz_conn_new(void);
void fz_conn_free(struct conn *c);          /* conn_close() of an open connection */

/* Outcome of feeding bytes through the read path. */
enum { FZ_OPEN = 0, FZ_CLOSED_PROTO, FZ_CLOSED_ASAP, FZ_CLOSED_LIMIT, FZ_CLOSED_REPLY };

/*
 * Feed @n bytes in arrivals of the given chunk sizes (cyclic; NULL = all at
 * once), as a socket would deliver them to the engine: each arrival is read
 * by read events (conn_on_read(): its buffer growth, its one read of at most
 * the room the buffer has, the query-buffer limit, the pipeline), each read
 * followed by the end of the loop turn (conn_flush_queued()) and the write
 * events the engine asked for (conn_on_write()).  The fake client takes
 * every reply byte at once, like a fast reader.  Bytes in the query buffer
 * past qlen are poisoned for ASan while the engine runs.
 * @on_flush, if set, sees the output bytes as they are written.
 * Return FZ_OPEN or the reason the server closed the connection; @c is
 * freed (conn_close()) unless FZ_OPEN.
 */
typedef void fz_flush_fn(struct conn *c, const char *p, size_t n, void *arg);
int fz_feed(struct conn *c, const uint8_t *data, size_t n, const uint8_t *chunks,
	    size_t nchunks, fz_flush_fn *on_flush, void *arg);

/*
 * Strict RESP checker.  Parse one reply at p[0..n).  Return the number of
 * bytes it takes (> 0), 0 if incomplete, -1 if malformed (*why says what).
 * resp3 = 0 rejects RESP3-only types.
 */
long fz_resp_check(const char *p, size_t n, int resp3, const char **why);

#endif /* FUZZ_COMMON_H */
