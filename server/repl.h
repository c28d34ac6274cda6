/*
 * repl.h - rcukv as a replica of a Redis master (repl.c): REPLICAOF, the
 * PSYNC handshake, full resync from the master's RDB, the command stream
 * applied on one worker, partial resync after a lost link.  docs/replication.md.
 */
#ifndef SERVER_REPL_H
#define SERVER_REPL_H

#include <stddef.h>

struct conn;
struct worker;

/* Start-up, main thread, after persist_load_start(): begin following the
 * master `replicaof` named in the configuration, if any. */
void repl_start(void);
/* Shutdown, main thread, after the workers stopped: end the replication
 * thread (a transfer or load in progress is abandoned). */
void repl_stop(void);

/* REPLICAOF host port (@port 0-65535) or, with @host NULL, NO ONE.
 * Return: 0, or 1 when already following that master. */
int repl_set_master(const char *host, int port);

/* 1 when writes from normal clients must get -READONLY (a replica with
 * replica-read-only yes).  One relaxed load. */
int repl_refuses_writes(void);
/* 1 when commands not flagged CMD_STALE must get -MASTERDOWN (a replica
 * whose link is down, with replica-serve-stale-data no).  Relaxed loads. */
int repl_masterdown(void);
/* 1 while this server follows a master (REPLICAOF host port). */
int repl_is_replica(void);
/* repl_takes_writes() - a replica with replica-read-only no (relaxed). */
int repl_takes_writes(void);

/* The conn_app pieces of the master link (net.c builds its conn_app from
 * them): run one command of the stream (@run: the server's dispatch);
 * the link is served from now on; the link is going away (after the
 * registry's own closing). */
void repl_dispatch(struct conn *c, void (*run)(struct conn *c));
void repl_link_opened(struct conn *c);
void repl_link_closing(struct conn *c);
/* Once a second on each worker: the owner of the link sends REPLCONF ACK. */
void repl_cron(struct worker *w);

/* ROLE's reply. */
void repl_role_reply(struct conn *c);
/* REPLCONF's reply for a client that is not our master. */
void repl_replconf(struct conn *c, int argc);
/* INFO replication's text (CRLF lines). */
void repl_info(char *buf, size_t len);

#endif /* SERVER_REPL_H */
