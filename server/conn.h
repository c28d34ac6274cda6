/*
 * conn.h - a client connection: its query buffer, parser state, reply
 * buffer and the fields CLIENT LIST/INFO/KILL read.
 *
 * A connection is touched only by its worker (the owner thread), except for
 * the fields marked otherwise below, which CLIENT LIST/INFO/KILL and INFO
 * clients read from other workers under the client registry lock
 * (g_clients_lock) or with atomic loads.
 */
#ifndef SERVER_CONN_H
#define SERVER_CONN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct obuf {
	char *buf;
	size_t len; /* bytes filled */
	size_t pos; /* bytes already written to the socket */
	size_t cap;
};

struct worker;

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

#define PROTO_INLINE_MAX_SIZE (64 * 1024)
#define PROTO_IOBUF_LEN (16 * 1024)
#define PROTO_MBULK_BIG_ARG (32 * 1024)
#define CONN_ARGV_INIT 16

struct conn {
	uint64_t id;
	int fd;
	int flags; /* CONN_* ; owner thread */
	int resp;  /* 2 or 3; owner thread */
	struct worker *w;
	struct event *ev_read;
	struct event *ev_write;
	int reading; /* ev_read is added */

	/* Query buffer: bytes [qpos, qlen) are unparsed.  owner thread */
	char *qbuf;
	size_t qlen, qcap, qpos;
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
	char *inline_store; /* inline: split args storage */

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
	int authenticated; /* owner thread; AUTH/HELLO AUTH, or no password at accept */
	long long obuf_soft_since; /* ms when output passed the soft limit, 0 = under */
	void *ssl;		   /* SSL * of a TLS connection, else NULL */

	/* Links: worker's list (owner) and global registry (g_clients_lock). */
	struct conn *wnext, *wprev;
	struct conn *gnext, *gprev;
	/* On the worker's flush queue (replies written after the loop turn,
	 * net.c worker_flush_queued()); owner thread. */
	struct conn *fqnext;
	int fqueued;
};

/* Parse as many complete commands as available, running each.  Return -1 if
 * the connection must close now (protocol error reply is queued). */
int conn_process_input(struct conn *c);
size_t conn_read_hint(struct conn *c);

void conn_close(struct conn *c);

/* Arguments of the running command. */
#define ARGV(c, i) ((c)->argv[i])
#define ARGL(c, i) ((c)->argl[i])

#endif /* SERVER_CONN_H */
