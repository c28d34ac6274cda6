/*
 * fuzz_common.h - what the two libFuzzer harnesses of rcukv-server share: a
 * fake connection and worker, the network layer's read path (server/net.c's
 * on_read, conn_run and conn_flush, minus the socket) and a strict RESP2/RESP3
 * reply checker.
 *
 * Input format of both harnesses (tests/fuzz/README):
 *   byte 0      flags (harness specific)
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
#include "server/net.h"
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

/* One worker and one connection, set up as net.c's conn_new() does. */
extern struct worker fz_worker;
void fz_globals_init(void);                 /* once: g_cfg, g_srv, log to /dev/null */
struct conn *fz_conn_new(void);
void fz_conn_free(struct conn *c);          /* as conn_close() */

/* Outcome of feeding bytes through the read path. */
enum { FZ_OPEN = 0, FZ_CLOSED_PROTO, FZ_CLOSED_ASAP, FZ_CLOSED_LIMIT, FZ_CLOSED_REPLY };

/*
 * Feed @n bytes in reads of the given chunk sizes (cyclic; NULL = as much as
 * the buffer takes), exactly as net.c's on_read would receive them from the
 * socket: grow the query buffer as on_read does, read at most the room it
 * leaves, check the query-buffer limit, run conn_process_input(), then flush
 * (the fake client takes every byte at once, like a fast reader).  Bytes in
 * the query buffer past qlen are poisoned for ASan while the parser runs.
 * @on_flush, if set, sees the output bytes before they are dropped.
 * Return FZ_OPEN or the reason the server closed the connection.
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
