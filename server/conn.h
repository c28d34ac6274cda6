/*
 * conn.h - a client connection and the engine that serves it (conn.c): its
 * query buffer, parser state, pipeline, reply buffer, flush queue, output
 * limits and pause, and the fields CLIENT LIST/INFO/KILL read.
 *
 * The engine knows no socket and no event loop.  Bytes come and go through
 * the connection's transport (struct conn_io: plain socket in net.c, TLS in
 * tls.c, memory in the fuzz harness), and the engine asks its event loop
 * (struct conn_loop: libevent in net.c, the fuzz harness's own) to start or
 * stop read and write events.  Each ops call is once per read(2) or write(2)
 * or per change of interest, never per byte or per command.
 *
 * A connection is touched only by its worker (the owner thread), except for
 * the fields marked otherwise below, which CLIENT LIST/INFO/KILL and INFO
 * clients read from other workers under the client registry lock
 * (g_clients_lock) or with atomic loads.  The engine's entry points run on
 * the owner worker, online as a QSBR reader (commands run inside them).
 * Tested through tests/server/test_server.c and tests/fuzz (which links
 * conn.c with an in-memory transport).
 */
#ifndef SERVER_CONN_H
#define SERVER_CONN_H

#include "resp/resp.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct obuf {
	char *buf;
	size_t len; /* bytes filled */
	size_t pos; /* bytes already written to the socket */
	size_t cap;
};

struct worker;
struct conn;
struct multi;
struct ht;
struct trk_client;

/*
 * A connection's transport.  Context: the owner worker.
 * @read:    read up to @n bytes into @buf: >0 bytes, 0 at EOF, -1 with errno
 *           (EAGAIN or EINTR: nothing now, wait for the next read event)
 * @write:   write up to @n bytes: >0 bytes taken, -1 with errno (EAGAIN:
 *           wait for a write event, EINTR: try again)
 * @pending: bytes already taken from the socket and buffered by the
 *           transport (TLS records decrypted ahead), which raise no read
 *           event: non-zero to be read again at once; NULL if it never has
 * @close:   release the transport (c->io_ctx, c->fd); called once, by
 *           conn_close(), after the loop's @release
 * @write_at_once: replies are written as soon as a read's commands have run
 *           instead of at the end of the loop turn (conn_flush_queued())
 */
struct conn_io {
	ssize_t (*read)(struct conn *c, void *buf, size_t n);
	ssize_t (*write)(struct conn *c, const void *buf, size_t n);
	int (*pending)(struct conn *c);
	void (*close)(struct conn *c);
	int write_at_once;
};

enum { CONN_EV_READ = 1, CONN_EV_WRITE = 2 };

/*
 * The event loop a connection lives in.  Context: the owner worker.  The
 * engine calls @want only when the interest changes (c->reading and
 * CONN_WRITE_PENDING hold the current one).
 * @want:    deliver read events (CONN_EV_READ: conn_on_read()) or
 *           write-ready events (CONN_EV_WRITE: conn_on_write()) from now on
 *           (@on), or stop
 * @again:   run conn_on_read() (CONN_EV_READ) or conn_on_write()
 *           (CONN_EV_WRITE) once on a later turn of the loop, whatever the
 *           socket says
 * @release: forget the connection (its events); called once, by
 *           conn_close(), before the transport's @close
 */
struct conn_loop {
	void (*want)(struct conn *c, int what, int on);
	void (*again)(struct conn *c, int what);
	void (*release)(struct conn *c);
};

#define CONN_CLOSE_AFTER_REPLY 0x1
#define CONN_CLOSE_ASAP 0x2
#define CONN_UNIX 0x4
#define CONN_WRITE_PENDING 0x8
/* conn_process_input() stopped with complete commands left because the
 * output passed client-output-buffer-pause; cleared when it runs again. */
#define CONN_INPUT_PAUSED 0x10
#define CONN_TLS 0x20
/* Sent SHUTDOWN: no more of its input runs until the shutdown is decided;
 * it is closed if the server exits, answered with an error if the final
 * save failed (net.c, worker_answer_shutdown()). */
#define CONN_SHUTDOWN_WAIT 0x40
/* Subscribed to at least one channel, pattern or shard channel (pubsub.c):
 * RESP2 allows only the subscribed-mode commands (cmd_dispatch()), and the
 * output limit is client-output-buffer-limit pubsub's. */
#define CONN_PUBSUB 0x80
/* Sent MONITOR (monitor.c): gets every other command's feed line; refused
 * the commands that read or write keys, as Redis refuses a replica. */
#define CONN_MONITOR 0x100
/* CLIENT NO-EVICT on (CLIENT LIST flag e; rcukv evicts no client anyway). */
#define CONN_NO_EVICT 0x200
/* The command just parsed must wait (CLIENT PAUSE, pause.c): dispatch set
 * this instead of running it.  It stays parsed (argc/argv) and the
 * connection is not read until conn_resume() dispatches it again. */
#define CONN_HELD 0x400
/* CLIENT REPLY OFF / SKIP (this command's reply) / SKIP next (cmd.c drops
 * the replies of a command run under OFF or SKIP). */
#define CONN_REPLY_OFF 0x800
#define CONN_REPLY_SKIP 0x1000
#define CONN_REPLY_SKIP_NEXT 0x2000
/* The link to our master (repl.c): its commands are obeyed (no refusal
 * but arity), their replies dropped; no idle timeout.  CLIENT LIST flag M. */
#define CONN_MASTER 0x4000
/* Blocked on keys (block.c): CONN_HELD is set too, but CLIENT PAUSE's
 * release leaves it alone; block.c resumes it. */
#define CONN_BLOCKED 0x8000

/* The protocol's limits are resp/resp.h's (RESP_INLINE_MAX, RESP_MBULK_BIG_ARG). */
#define PROTO_IOBUF_LEN (16 * 1024)
#define CONN_ARGV_INIT 16

/**
 * struct conn_app - what the layer above the engine does with a connection.
 * conn.c knows nothing of commands, the keyspace or the client registry: it
 * calls these, always on the connection's own worker, online.  The server's
 * is net.c's (cmd_dispatch(), cmd_may_write(), db_prefetch(), the registry);
 * the fuzz harnesses pass their own.
 * @dispatch:  run one parsed command (c->argc, argv, argl); from
 *             conn_process_input()
 * @may_write: whether the command named (@name, @len) may write, for the
 *             prefetch; NULL: every command may
 * @prefetch:  warm the keyspace for the first keys of the @n commands about to
 *             run (bit i of @for_write: key i is written); NULL: no prefetch
 * @opened:    @c is served from now on (conn_attach()); NULL: nothing
 * @closing:   @c is about to be freed (conn_close()); NULL: nothing
 */
struct conn_app {
	void (*dispatch)(struct conn *c);
	int (*may_write)(const char *name, size_t len);
	void (*prefetch)(struct conn *c, size_t n, const char *const keys[], const size_t klens[],
			 uint32_t for_write);
	void (*opened)(struct conn *c);
	void (*closing)(struct conn *c);
};

struct conn {
	uint64_t id;
	int fd;
	int flags; /* CONN_* ; owner thread */
	int resp;  /* 2 or 3; owner thread */
	struct worker *w;
	const struct conn_io *io;     /* transport; set before conn_attach() */
	void *io_ctx;		      /* the transport's state (SSL *), or NULL */
	const struct conn_loop *loop; /* set before conn_attach() */
	const struct conn_app *app;   /* what runs its commands; set by conn_new() */
	struct event *ev_read;	      /* net.c's loop: libevent events */
	struct event *ev_write;
	int reading; /* read events wanted (loop->want); owner thread */

	/* Query buffer: bytes [qpos, qlen) are unparsed.  owner thread */
	char *qbuf;
	size_t qlen, qcap, qpos;
	unsigned long long qread_total; /* bytes ever read into qbuf (repl.c's offset) */
	/* Parser state for a multibulk in progress; argv holds offsets into qbuf. */
	long long mb_left; /* elements still expected, 0 = none */
	long long bulklen; /* -1 = reading the $ header */
	int reqtype;	   /* 0 none, 1 multibulk, 2 inline */
	int argc, argv_cap;
	size_t *argv_off;
	size_t *argv_len;
	/* Decoded argv for the command being run. */
	const char **argv;
	size_t *argl;
	void *inline_store; /* inline: the split arguments (one resp_splitargs() block) */

	struct obuf out;

	/* Visible to other threads (CLIENT LIST/INFO/KILL, INFO clients). */
	char *name; /* g_clients_lock */
	char addr[64], laddr[64];
	long long ctime_ms;
	_Atomic long long last_ms; /* last interaction */
	_Atomic int last_cmd;	   /* index in the command table, -1 none */
	_Atomic int last_sub;	   /* subcommand index, -1 none */
	_Atomic size_t qbuf_used, obuf_used;
	_Atomic int kill; /* set by CLIENT KILL from any thread */
	_Atomic int resp_pub;
	_Atomic int multi_count; /* commands queued in MULTI, -1 outside (CLIENT LIST) */
	_Atomic int list_flags;	 /* CONN_MONITOR, CONN_NO_EVICT as CLIENT LIST shows them */
	struct multi *multi;	 /* MULTI/WATCH state (multi.h), NULL until used; owner */
	_Atomic int db;		 /* the selected database (SELECT); written by the owner */
	struct ht *ht;		 /* the running command's table (db.h db_of()); owner */
	struct trk_client *trk;	 /* CLIENT TRACKING state (tracking.c), NULL: off; owner */
	int trk_caching;	 /* CLIENT CACHING yes/no given for the next command; owner */
	_Atomic unsigned trk_flags;  /* TRK_* of tracking.h, for CLIENT LIST */
	_Atomic long long trk_redir; /* the REDIRECT id, for CLIENT LIST */
	/* Subscriptions per enum ps_kind (channels, patterns, shard channels):
	 * written by the owner (pubsub.c), read by CLIENT LIST. */
	_Atomic int ps_count[3];
	struct ps_client *ps; /* its pub/sub mailbox, NULL until it subscribes; owner thread */
	struct blk *blk;      /* blocked on keys (block.c), else NULL; owner thread */
	int authenticated; /* owner thread; AUTH/HELLO AUTH, or no password at accept */
	long long obuf_soft_since; /* ms when output passed the soft limit, 0 = under */

	/* Links: worker's list (owner) and global registry (g_clients_lock). */
	struct conn *wnext, *wprev;
	struct conn *gnext, *gprev;
	/* On the worker's flush queue (replies written at the end of the loop
	 * turn, conn_flush_queued()); owner thread. */
	struct conn *fqnext;
	int fqueued;
	/* Replication (replm.c), owner thread: REPLCONF listening-port and capa
	 * (bit 0: eof) before SYNC/PSYNC; the stream offset after this client's
	 * last propagated write (WAIT's target); WAIT's deadline while it is
	 * held (ms, 0: not waiting). */
	int repl_lport, repl_capa;
	long long repl_woff, wait_until;
};

/* Parse as many complete commands as available, running each (c->app->dispatch).  Return -1 if
 * the connection must close now (protocol error reply is queued).
 * request.c; called by the engine (conn_run()). */
int conn_process_input(struct conn *c);
/* How many bytes the next read should make room for (request.c). */
size_t conn_read_hint(struct conn *c);

/**
 * conn_new() - allocate a connection on worker @w for socket @fd.
 * @w:     the worker that will own it
 * @fd:    its socket, or -1 (the fuzz harness)
 * @flags: CONN_UNIX, CONN_TLS or 0
 * @io:    its transport
 * @loop:  its event loop
 * @app:   what runs its commands (struct conn_app)
 *
 * Fills the fields every connection starts with (id, times, RESP2, the
 * authentication state requirepass implies now).  The caller then fills
 * addr/laddr, io_ctx and its loop's state, and calls conn_attach().
 * Context: the owner worker.  Return: the connection (aborts on no memory).
 */
struct conn *conn_new(struct worker *w, int fd, int flags, const struct conn_io *io,
		      const struct conn_loop *loop, const struct conn_app *app);

/**
 * conn_attach() - start serving @c: read events on, on its worker's list,
 * in the client registry (visible to CLIENT LIST from here on).
 * Context: the owner worker; @c from conn_new().  g_srv.nclients was counted
 * by whoever accepted the socket; conn_close() uncounts it.
 */
void conn_attach(struct conn *c);

/**
 * conn_close() - close and free @c at once (unsent output is dropped).
 * Takes it off the flush queue, the registry and its worker's list, then
 * calls loop->release and io->close.
 * Context: the owner worker, not from inside one of @c's commands (a command
 * closes its own connection with CONN_CLOSE_AFTER_REPLY or CONN_CLOSE_ASAP).
 * @c is dead when this returns.
 */
void conn_close(struct conn *c);

/**
 * conn_on_read() - @c is readable: read once, run every complete command,
 * queue or write the replies.
 * Context: the owner worker, online (QSBR).  @c may be closed (freed).
 */
void conn_on_read(struct conn *c);

/**
 * conn_on_write() - @c is writable (or conn_run() asked for a later turn):
 * write what the transport takes, then run the commands the output pause
 * held back.  Context: as conn_on_read().  @c may be closed (freed).
 */
void conn_on_write(struct conn *c);

/**
 * conn_run() - run @c's buffered commands and flush.
 * @defer: non-zero to leave the replies on the worker's flush queue when
 *         nothing stops it (input pause, a pending close)
 * Context: as conn_on_read().  Return: -1 if @c was closed (freed), else 0.
 */
int conn_run(struct conn *c, int defer);

/**
 * conn_resume() - dispatch @c's held command (CONN_HELD) again, then go on
 * as conn_run() (it may be held again).
 * Context: as conn_on_read().  Return: -1 if @c was closed (freed), else 0.
 */
int conn_resume(struct conn *c);

/**
 * conn_flush_queued() - end of a loop turn: write the replies queued by this
 * turn's reads.  Context: @w's thread, online.  May close connections.
 */
void conn_flush_queued(struct worker *w);

/**
 * conn_cron() - once a second on @w: close idle clients (timeout) and
 * clients over the output limits, give back big idle query buffers.
 * Context: @w's thread, online.
 */
void conn_cron(struct worker *w);

/**
 * conn_close_all() - close every connection of @w after one last
 * non-blocking attempt to write each one's pending replies.
 * Context: @w's thread, as it stops.
 */
void conn_close_all(struct worker *w);

/**
 * conn_output_added() - output was appended to @c's reply buffer outside its
 * own commands (a pub/sub message): write it at the end of the loop turn.
 * Context: the owner worker, online.
 */
void conn_output_added(struct conn *c);

/* Arguments of the running command. */
#define ARGV(c, i) ((c)->argv[i])
#define ARGL(c, i) ((c)->argl[i])

#endif /* SERVER_CONN_H */
