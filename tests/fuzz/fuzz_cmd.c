/*
 * fuzz_cmd.c - libFuzzer harness for rcukv-server's command layer: the bytes
 * are parsed (server/request.c, through fz_feed(): the connection engine,
 * server/conn.c, on an in-memory transport) and every command runs for real
 * (server/cmd.c, db.c, config.c, info.c) against a real QSBR hash table, on
 * a fake connection whose output the harness reads.
 *
 * The connections' dispatch callback is check_command() (fz_globals_init()),
 * which runs cmd_dispatch(), so each command's reply bytes are checked as
 * they are produced:
 *  - exactly one reply per command, except SHUTDOWN (none: the connection
 *    closes), checked by the strict RESP2/RESP3 checker of fuzz_common.c;
 *  - a RESP2 client never gets a RESP3 type;
 *  - in RESP2, hiredis's redisReader parses the same bytes into one reply and
 *    consumes them exactly (hiredis 0.14 has no RESP3, and gives up past 7
 *    nested aggregates: such replies, COMMAND DOCS's, rely on the strict
 *    checker alone);
 *  - no crash, out-of-bounds access, UB or leak (ASan, UBSan, LSan).
 * Each input gets a fresh table and connection (plus an idle named second
 * client for CLIENT LIST/KILL), freed at its end after one active-expiry
 * cycle (db_fini() waits for the RCU callbacks), so a leak shows in that input.
 *
 * Harness limits (so one input cannot take seconds or gigabytes): the input is
 * at most 4 kB (-max_len), proto-max-bulk-len is held at 1 MB (CONFIG SET may
 * raise it; the harness lowers it again after the command: SETRANGE would
 * otherwise allocate up to 512 MB), the configuration is reset per input,
 * and harness_refuses() keeps commands whose work is a number they are
 * given (SRANDMEMBER -1000000000) from running.
 *
 * Flags byte: bit 0 starts the connection in RESP3 (as after HELLO 3).
 */
#define RCU_FLAVOR_QSBR
#include "rcu/rcu.h"
#include "server/client.h"
#include "server/db.h"
#include "server/multi.h"
#include "server/tracking.h"
#include "server/util.h"
#include "resp/resp.h"
#include "tests/fuzz/fuzz_common.h"

#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HARNESS_MAX_BULK (1024LL * 1024)

static unsigned long n_commands;

static void check_hiredis(const char *p, size_t n)
{
	redisReader *r = redisReaderCreate();
	void *reply = NULL;

	FZ_CHECK(r != NULL, "redisReaderCreate");
	FZ_CHECK(redisReaderFeed(r, p, n) == REDIS_OK, "redisReaderFeed failed");
	if (redisReaderGetReply(r, &reply) != REDIS_OK) {
		/* hiredis 0.14 (Debian 12) stops at 7 nested aggregates; COMMAND
		 * DOCS nests deeper, as Redis 7's does (12 levels): the strict
		 * checker has passed the bytes already. */
		FZ_CHECK(strstr(r->errstr, "nested multi bulk replies with depth") != NULL,
			 "hiredis rejects the reply: %s (%.*s)", r->errstr, (int)(n < 200 ? n : 200), p);
		redisReaderFree(r);
		return;
	}
	FZ_CHECK(reply != NULL, "hiredis finds no complete reply in %zu bytes", n);
	FZ_CHECK(r->len == r->pos, "hiredis leaves %zu of %zu bytes after the reply", r->len - r->pos,
		 n);
	freeReplyObject(reply);
	reply = NULL;
	FZ_CHECK(redisReaderGetReply(r, &reply) == REDIS_OK && reply == NULL,
		 "hiredis finds a second reply");
	redisReaderFree(r);
}

/* Work a command does in proportion to a number it is given rather than to
 * data the input built: SRANDMEMBER/HRANDFIELD/ZRANDMEMBER with a negative
 * count reply |count| elements (as Redis's do), DEBUG SLEEP sleeps.  The
 * harness answers such a command with an error of its own instead of running
 * it (one reply still, which the checks below see).  NULL: run it. */
#define HARNESS_MAX_COUNT 100000LL

static const char *harness_refuses(struct conn *c, int argc)
{
	const char *name = c->argv[0];
	size_t nl = c->argl[0];
	long long v;

	if (argc >= 3 && (util_strcaseeq(name, nl, "srandmember") ||
			  util_strcaseeq(name, nl, "hrandfield") ||
			  util_strcaseeq(name, nl, "zrandmember"))) {
		if (resp_str2ll(c->argv[2], c->argl[2], &v) &&
		    (v > HARNESS_MAX_COUNT || v < -HARNESS_MAX_COUNT))
			return "harness: count past the harness's bound";
	}
	if (argc == 3 && util_strcaseeq(name, nl, "debug") &&
	    util_strcaseeq(c->argv[1], c->argl[1], "sleep"))
		return "harness: DEBUG SLEEP not run";
	return NULL;
}

static void check_command(struct conn *c)
{
	size_t before = c->out.len, n;
	int flags = c->flags;
	const char *why;
	long used;
	char name[32];

	FZ_CHECK(c->out.pos == 0, "output not flushed between commands of one read (pos %zu)",
		 c->out.pos);
	snprintf(name, sizeof(name), "%.*s", (int)(c->argl[0] < 24 ? c->argl[0] : 24), c->argv[0]);
	why = harness_refuses(c, c->argc);
	if (why)
		reply_error(c, why);
	else
		cmd_dispatch(c);
	n_commands++;
	n = c->out.len - before;
	if ((c->flags & CONN_SHUTDOWN_WAIT) && !(flags & CONN_SHUTDOWN_WAIT)) {
		/* SHUTDOWN waits, silent, for the main thread's decision (main.c,
		 * shutdown_begin()).  Here it is always "the final save failed":
		 * the reply worker_answer_shutdown() (net.c) then sends, and the
		 * connection goes on. */
		FZ_CHECK(n == 0, "'%s' waits for the shutdown but queued %zu reply bytes", name, n);
		c->flags &= ~CONN_SHUTDOWN_WAIT;
		reply_error(c, "Errors trying to SHUTDOWN. Check logs.");
		n = c->out.len - before;
		atomic_store(&g_srv.shutdown_asap, 0);
	}
	if ((c->flags & CONN_CLOSE_ASAP) && !(flags & CONN_CLOSE_ASAP)) {
		FZ_CHECK(n == 0, "'%s' closes the connection at once but queued %zu reply bytes", name, n);
	} else {
		used = fz_resp_check(c->out.buf + before, n, c->resp >= 3, &why);
		FZ_CHECK(used >= 0, "'%s': malformed reply (%s): '%.*s'", name, why,
			 (int)(n < 300 ? n : 300), c->out.buf + before);
		FZ_CHECK(used != 0, "'%s': incomplete reply (%zu bytes): '%.*s'", name, n,
			 (int)(n < 300 ? n : 300), c->out.buf + before);
		FZ_CHECK((size_t)used == n, "'%s': %zu reply bytes, one reply takes %ld: '%.*s'", name, n,
			 used, (int)(n < 300 ? n : 300), c->out.buf + before);
		if (c->resp < 3)
			check_hiredis(c->out.buf + before, n);
	}
	if (atomic_load(&g_cfg.proto_max_bulk_len) > HARNESS_MAX_BULK)
		atomic_store(&g_cfg.proto_max_bulk_len, HARNESS_MAX_BULK);
	/* As a worker between loop turns: this thread holds no table reference
	 * now, so grace periods (and the frees they release) can end. */
	rcu_quiescent_state();
}

static struct {
	long long maxclients, timeout, keepalive, qbuf_limit, hz, soft;
	int loglevel;
} saved;

static void cfg_reset(void)
{
	atomic_store(&g_cfg.maxclients, saved.maxclients);
	atomic_store(&g_cfg.timeout, saved.timeout);
	atomic_store(&g_cfg.tcp_keepalive, saved.keepalive);
	atomic_store(&g_cfg.client_query_buffer_limit, saved.qbuf_limit);
	atomic_store(&g_cfg.hz, saved.hz);
	atomic_store(&g_cfg.client_output_buffer_soft, saved.soft);
	atomic_store(&g_cfg.loglevel, saved.loglevel);
	atomic_store(&g_cfg.proto_max_bulk_len, HARNESS_MAX_BULK);
	atomic_store(&g_srv.shutdown_asap, 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* As the server's net.c: the transaction state, then the registry. */
static void fz_closing(struct conn *c)
{
	tracking_off(c);
	multi_release(c);
	client_unregister(c);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	static const struct conn_app app = {
		.dispatch = check_command,
		.may_write = cmd_may_write,
		.prefetch = db_prefetch,
		.opened = client_register,
		.closing = fz_closing,
	};

	fz_globals_init(&app);
	saved.maxclients = atomic_load(&g_cfg.maxclients);
	saved.timeout = atomic_load(&g_cfg.timeout);
	saved.keepalive = atomic_load(&g_cfg.tcp_keepalive);
	saved.qbuf_limit = atomic_load(&g_cfg.client_query_buffer_limit);
	saved.hz = atomic_load(&g_cfg.hz);
	saved.soft = atomic_load(&g_cfg.client_output_buffer_soft);
	saved.loglevel = atomic_load(&g_cfg.loglevel);
	rcu_register_thread();
	db_init(); /* the keyspace the commands run on; the table comes from commands.def */
	cmd_init();
	db_fini();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_input in;
	struct conn *c, *other;
	int st;

	fz_split_input(data, size, &in);
	cfg_reset();
	db_init();
	/* A second, idle client: CLIENT LIST / KILL have someone else to see. */
	other = fz_conn_new();
	other->name = xstrdup("bystander");
	c = fz_conn_new();
	if (in.flags & 1)
		c->resp = 3;
	st = fz_feed(c, in.data, in.len, in.chunks, in.nchunks, NULL, NULL);
	if (st == FZ_OPEN) {
		unsigned long before = n_commands;

		/* Nothing more arrives: nothing complete may be left unrun. */
		if (conn_process_input(c) >= 0)
			FZ_CHECK(n_commands == before, "stall: %lu complete command(s) left unrun",
				 n_commands - before);
	}
	/* The main thread's cron: expire what the input left with a TTL. */
	db_active_expire_cycle();
	FZ_CHECK(other->out.len == 0 && other->qlen == 0, "the idle client got bytes");
	if (st == FZ_OPEN)
		fz_conn_free(c);
	fz_conn_free(other);
	db_fini();
	rcu_barrier();
	return 0;
}
