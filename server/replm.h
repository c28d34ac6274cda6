/*
 * replm.h - rcukv as a replication master (replm.c): SYNC/PSYNC served to
 * Redis replicas, the write stream in one order, the backlog, partial
 * resync, WAIT, min-replicas-to-write.  docs/replication.md, "rcukv as a
 * master".
 *
 * Context: propagate.c brackets every write cmd_run() runs while a backlog
 * exists (g_replm_on) with replm_lock()/replm_unlock(); with none, the cost
 * is one relaxed load per command.
 */
#ifndef SERVER_REPLM_H
#define SERVER_REPLM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct conn;

/* 1 while a backlog exists: writes then run under the stream lock. */
extern _Atomic int g_replm_on;

static inline int replm_on(void)
{
	return atomic_load_explicit(&g_replm_on, memory_order_relaxed);
}

/* The stream, for propagate.c (which decides what a command appends).
 * replm_lock(): take the stream lock (offline while contended; an online
 * QSBR thread); replm_unlock(@wrote): release it, waking the feeder if
 * @wrote.  Between them: replm_emitting() (a backlog exists),
 * replm_emit() one command, replm_emit_select() a SELECT if the stream's db
 * is not @db, replm_offset_locked() master_repl_offset. */
void replm_lock(void);
void replm_unlock(int wrote);
int replm_emitting(void);
void replm_emit(int argc, const char *const *argv, const size_t *argl);
void replm_emit_select(int db);
long long replm_offset_locked(void);

/* SYNC (@psync 0) and PSYNC replid offset: the connection becomes a
 * replica (its socket moves to replm.c's threads; @c closes). */
void replm_sync(struct conn *c, int argc, int psync);

/* db.c's hooks (db_set_repl_hooks()): @key of @db was removed because its
 * time passed, the stream gets DEL (under the key's stripe mutex); around
 * the main thread's active expiry batches (online QSBR thread). */
void replm_key_expired(int db, const void *key, size_t klen);
void replm_cron_lock(void);
void replm_cron_unlock(void);

/* Start-up, main thread, after db_init(), before the workers: set db.c's
 * hooks. */
void replm_init(void);
/* Shutdown, main thread, after the workers stopped and before the tables
 * are freed: drop every replica, join every thread. */
void replm_stop(void);

/* -NOREPLICAS check for a write: 1 when min-replicas-to-write is not met. */
int replm_refuses_writes(void);
/* WAIT numreplicas timeout (arguments checked by the caller). */
void replm_wait(struct conn *c, long long n, long long timeout_ms);
/* ROLE and INFO replication of a master. */
void replm_role_reply(struct conn *c);
size_t replm_info(char *buf, size_t len);
/* repl-timeout (repl.c's option, @seconds stays valid): a replica that has
 * not acked for that long is dropped.  Start-up, before any replica. */
void replm_set_timeout(_Atomic long long *seconds);
/* INFO stats: @which 0 sync_full, 1 sync_partial_ok, 2 sync_partial_err. */
unsigned long long replm_stat(int which);
/* CLIENT LIST lines of the replicas (a malloc()ed string, *@len bytes). */
char *replm_client_lines(size_t *len);
/* CLIENT KILL TYPE replica: drop them all.  Return: how many. */
int replm_kill_replicas(void);

#endif /* SERVER_REPLM_H */
