/*
 * fuzz_resp.c - libFuzzer harness for rcukv-server's RESP request parser
 * (server/request.c: conn_process_input(), parse_multibulk(), parse_inline()).
 *
 * The client bytes go through the connection engine (fz_feed(): server/conn.c
 * on an in-memory transport) twice on fresh connections: once as one
 * arrival, once split at the fuzzer-chosen chunk sizes.  This file's
 * record_command() stands in for the command layer (the connections'
 * dispatch callback, fz_globals_init()): it records every command (argc,
 * each argument's bytes) and checks the parser's promises.
 *
 * Checked, else abort:
 *  - no crash, no out-of-bounds access (ASan; the query buffer past qlen is
 *    poisoned), no UB (UBSan), no leak (LSan);
 *  - every argument is NUL-terminated, a multibulk argument lies inside the
 *    query buffer and is at most proto-max-bulk-len long;
 *  - the two runs agree: the same commands in the same order, then the same
 *    end (open and waiting with the same partial state, or the same protocol
 *    error reply);
 *  - no stall: with the connection open after the last read, running the
 *    parser again dispatches nothing (else a client waiting for replies to
 *    commands it has fully sent would wait for ever: finding 1 of
 *    docs/fuzzing.md, input regress/fuzz_resp/stall-paused-pipeline.bin);
 *  - the limits (once, at start-up): over-long inline request, count lines
 *    and bulk lengths get Redis's protocol errors.
 *
 * Flags byte (see fuzz_common.h for the input format):
 *   bit 0    each command gets an 8-byte reply and client-output-buffer-pause
 *            is 16 bytes, so the parser pauses as for a slow reader
 *   bits 1-2 proto-max-bulk-len: 512 MB (default), 16, 1000, 40000
 */
#define RCU_FLAVOR_QSBR
#include "rcu/rcu.h"
#include "server/client.h"
#include "tests/fuzz/fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct outcome {
	unsigned char *cmds;    /* argc(4) then per arg len(8) + bytes */
	size_t clen, ccap;
	unsigned long ncmds;
	char *out;              /* every byte the client received */
	size_t olen, ocap;
	int status;             /* FZ_* */
	/* parser state left when open */
	size_t unparsed;
	long long mb_left, bulklen;
	int argc, reqtype;
};

static struct outcome *cur;
static int reply_each;

static void grow(unsigned char **b, size_t *len, size_t *cap, const void *p, size_t n)
{
	if (*cap - *len < n) {
		size_t nc = *cap ? *cap : 256;

		while (nc - *len < n)
			nc *= 2;
		*b = realloc(*b, nc);
		if (!*b)
			abort();
		*cap = nc;
	}
	memcpy(*b + *len, p, n);
	*len += n;
}

static void record_command(struct conn *c)
{
	long long max = atomic_load_explicit(&g_cfg.proto_max_bulk_len, memory_order_relaxed);
	uint32_t argc = (uint32_t)c->argc;

	FZ_CHECK(c->argc >= 1, "command with argc %d", c->argc);
	FZ_CHECK(c->reqtype == 1 || c->reqtype == 2, "command with reqtype %d", c->reqtype);
	FZ_CHECK(c->argc <= c->argv_cap, "argc %d > argv_cap %d", c->argc, c->argv_cap);
	grow(&cur->cmds, &cur->clen, &cur->ccap, &argc, sizeof(argc));
	for (int i = 0; i < c->argc; i++) {
		uint64_t l = c->argl[i];

		FZ_CHECK(c->argv[i] != NULL, "argv[%d] is NULL", i);
		if (c->reqtype == 1) {
			FZ_CHECK(c->argl[i] <= (size_t)max, "argument %d of %zu bytes > proto-max-bulk-len %lld",
				 i, c->argl[i], max);
			FZ_CHECK(c->argv[i] >= c->qbuf && c->argv[i] + c->argl[i] < c->qbuf + c->qlen,
				 "multibulk argument %d outside the query buffer", i);
		}
		FZ_CHECK(c->argv[i][c->argl[i]] == '\0', "argument %d not NUL-terminated", i);
		grow(&cur->cmds, &cur->clen, &cur->ccap, &l, sizeof(l));
		grow(&cur->cmds, &cur->clen, &cur->ccap, c->argv[i], c->argl[i]);
	}
	cur->ncmds++;
	if (reply_each)
		reply_raw(c, "+REPLY\r\n", 8);
}

static void on_flush(struct conn *c, const char *p, size_t n, void *arg)
{
	struct outcome *o = arg;

	(void)c;
	grow((unsigned char **)&o->out, &o->olen, &o->ocap, p, n);
}

static void run(const uint8_t *data, size_t n, const uint8_t *chunks, size_t nchunks,
		struct outcome *o)
{
	struct conn *c = fz_conn_new();

	memset(o, 0, sizeof(*o));
	cur = o;
	o->status = fz_feed(c, data, n, chunks, nchunks, on_flush, o);
	if (o->status == FZ_OPEN) {
		unsigned long before = o->ncmds;

		/* Nothing more arrives: would the server ever run what is buffered? */
		if (conn_process_input(c) >= 0)
			FZ_CHECK(o->ncmds == before,
				 "stall: %lu complete command(s) left in the query buffer after the last "
				 "read, and no event will run them", o->ncmds - before);
	}
	if (o->status == FZ_OPEN) {
		o->unparsed = c->qlen - c->qpos;
		o->mb_left = c->mb_left;
		o->bulklen = c->bulklen;
		o->argc = c->mb_left ? c->argc : 0;
		o->reqtype = c->qpos < c->qlen || c->mb_left ? c->reqtype : 0;
		fz_conn_free(c);
	}
	cur = NULL;
}

static void outcome_free(struct outcome *o)
{
	free(o->cmds);
	free(o->out);
}

static const char *status_name(int s)
{
	static const char *const n[] = { "open", "protocol error", "closed asap", "query buffer limit",
					 "closed after reply" };

	return s >= 0 && s <= FZ_CLOSED_REPLY ? n[s] : "?";
}

static int same(const void *a, size_t alen, const void *b, size_t blen)
{
	return alen == blen && (alen == 0 || !memcmp(a, b, alen));
}

static void compare(const struct outcome *a, const struct outcome *b)
{

	FZ_CHECK(a->ncmds == b->ncmds, "whole: %lu commands, in pieces: %lu", a->ncmds, b->ncmds);
	FZ_CHECK(same(a->cmds, a->clen, b->cmds, b->clen),
		 "whole and in pieces parse different commands");
	FZ_CHECK(a->status == b->status, "whole ends '%s', in pieces '%s'", status_name(a->status),
		 status_name(b->status));
	FZ_CHECK(same(a->out, a->olen, b->out, b->olen),
		 "whole and in pieces send different replies (%zu vs %zu bytes)", a->olen, b->olen);
	if (a->status == FZ_OPEN) {
		FZ_CHECK(a->unparsed == b->unparsed && a->mb_left == b->mb_left &&
				 a->bulklen == b->bulklen && a->argc == b->argc,
			 "different waiting states: unparsed %zu/%zu mb_left %lld/%lld bulklen %lld/%lld argc %d/%d",
			 a->unparsed, b->unparsed, a->mb_left, b->mb_left, a->bulklen, b->bulklen, a->argc,
			 b->argc);
	}
}

static const long long bulk_limits[4] = { 512LL * 1024 * 1024, 16, 1000, 40000 };

static void set_mode(unsigned flags)
{
	reply_each = flags & 1;
	atomic_store(&g_cfg.client_output_buffer_soft, reply_each ? 16 : 1024 * 1024);
	atomic_store(&g_cfg.proto_max_bulk_len, bulk_limits[(flags >> 1) & 3]);
}

/* The limits, once: each input must end in this protocol error. */
static void expect_error(const char *what, const char *p, size_t n, const char *err)
{
	struct outcome o;

	run((const uint8_t *)p, n, NULL, 0, &o);
	if (o.status != FZ_CLOSED_PROTO || o.olen < strlen(err) || !memmem(o.out, o.olen, err, strlen(err)))
		fz_fail("limit check '%s': expected '%s', got status '%s' and %zu reply bytes '%.*s'",
			what, err, status_name(o.status), o.olen, (int)(o.olen < 200 ? o.olen : 200),
			o.out ? o.out : "");
	outcome_free(&o);
}

static void check_limits(void)
{
	size_t big = RESP_INLINE_MAX + 100;
	char *p = malloc(big + 64);

	if (!p)
		abort();
	set_mode(0);
	memset(p, 'a', big);
	expect_error("inline line", p, big, "Protocol error: too big inline request");
	p[0] = '*';
	memset(p + 1, '1', big - 1);
	expect_error("count line", p, big, "Protocol error: too big mbulk count string");
	memcpy(p, "*1\r\n$", 5);
	expect_error("bulk length line", p, big, "Protocol error: too big bulk count string");
	expect_error("count over INT32_MAX", "*2147483648\r\n", 13,
		     "Protocol error: invalid multibulk length");
	expect_error("negative bulk", "*1\r\n$-1\r\n", 10, "Protocol error: invalid bulk length");
	expect_error("bulk over proto-max-bulk-len", "*1\r\n$536870913\r\n", 17,
		     "Protocol error: invalid bulk length");
	set_mode(2 << 1);
	expect_error("bulk over a small proto-max-bulk-len", "*1\r\n$1001\r\n", 11,
		     "Protocol error: invalid bulk length");
	expect_error("unbalanced quotes", "SET \"a b\r\n", 10,
		     "Protocol error: unbalanced quotes in request");
	expect_error("not a bulk", "*1\r\n:1\r\n", 8, "Protocol error: expected '$', got ':'");
	free(p);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* The registry, as the server's; no keyspace, so no prefetch. */
	static const struct conn_app app = {
		.dispatch = record_command,
		.opened = client_register,
		.closing = client_unregister,
	};

	/* A connection's close frees its pub/sub mailbox with call_rcu(), as
	 * on a worker: this thread is a QSBR reader like one. */
	rcu_register_thread();
	fz_globals_init(&app);
	check_limits();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_input in;
	struct outcome whole, pieces;

	fz_split_input(data, size, &in);
	set_mode(in.flags);
	run(in.data, in.len, NULL, 0, &whole);
	run(in.data, in.len, in.chunks ? in.chunks : (const uint8_t *)"\0", in.chunks ? in.nchunks : 1,
	    &pieces);
	compare(&whole, &pieces);
	outcome_free(&whole);
	outcome_free(&pieces);
	/* As a worker between loop turns: the mailboxes of this input's
	 * connections are freed once their grace period ends. */
	rcu_quiescent_state();
	rcu_barrier();
	return 0;
}
