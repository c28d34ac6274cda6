/*
 * multi.h - a connection's transaction state (multi.c): the commands queued
 * between MULTI and EXEC, and the keys it WATCHes, with the registry that
 * tells a watcher its key was written.  The commands themselves are
 * cmd_multi.c's; dispatch (cmd.c) queues through multi_queue().
 *
 * Context: every function runs on the connection's own worker, online as a
 * QSBR reader, except multi_touched(), which the table's hook calls from any
 * writer (ht_watch_hook(): a change in a stripe with watchers, under that
 * stripe's mutex).  The registry has its own mutex, nested inside stripe
 * mutexes and outside nothing: WATCH and UNWATCH take it with no stripe held,
 * and call ht_watch() (which takes a stripe) only after releasing it.
 *
 * How a write breaks a WATCH (Redis's touchWatchedKey semantics):
 *  - a write of the key (SET, INCR, EXPIRE, MSET, RENAME, DEL, eviction, a
 *    transaction's write...) from any worker calls multi_touched(), which
 *    marks every watcher dirty;
 *  - the removal of an expired key calls nothing: EXEC compares each key's
 *    presence with the presence WATCH saw (multi_watch_broken()), with the
 *    keys' stripes held, so a key that expired after WATCH breaks it and a
 *    key that was already absent stays unbroken, as in Redis;
 *  - FLUSHDB, FLUSHALL and SWAPDB break the watches of keys that exist in
 *    the dbs they change (multi_touch_dbs()).
 * A watch is on (db, key); docs/databases.md says how SWAPDB moves tables
 * under the watches.
 */
#ifndef SERVER_MULTI_H
#define SERVER_MULTI_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct conn;
struct ht;

/* One queued command: its arguments, copied out of the query buffer. */
struct multi_cmd {
	int argc;
	const char **argv;
	size_t *argl;
};

struct watch_ref;

struct multi {
	int active;	    /* between MULTI and EXEC/DISCARD */
	int dirty_exec;	    /* a command was refused while queueing: EXECABORT */
	int in_exec;	    /* EXEC is running the queue */
	uint32_t cmd_flags; /* CMD_* of every queued command, OR'ed (EXEC's checks) */
	struct multi_cmd *q;
	int nq, capq;
	size_t qbytes;	      /* argument bytes queued (CLIENT LIST multi-mem) */
	_Atomic int dirty_cas; /* a watched key was written (multi_touched()) */
	struct watch_ref **w;  /* the keys WATCHed, in WATCH order */
	int nw, capw;
};

/* At db_init(): how to find the table of a database now (db.c's db_at()). */
void multi_init(struct ht *(*db_table_of)(int db));
/* The connection's state, allocated at first use (aborts on no memory). */
struct multi *multi_of(struct conn *c);
/* Inside MULTI (and not running EXEC): commands are queued. */
static inline int multi_queueing(const struct multi *m)
{
	return m && m->active && !m->in_exec;
}
/* Queue the running command (c->argc, argv, argl) with its CMD_* @flags. */
void multi_queue(struct conn *c, uint32_t flags);
/* A command was refused while queueing: EXEC will abort. */
void multi_flag(struct conn *c);
/* End the transaction: free the queue, leave MULTI, drop every WATCH. */
void multi_discard(struct conn *c);

/* WATCH @key (once per key and connection). */
void multi_watch(struct conn *c, const void *key, size_t klen);
/* Drop every WATCH and forget the dirty mark (UNWATCH, EXEC, DISCARD). */
void multi_unwatch_all(struct conn *c);
/* Whether EXEC must fail: a watched key was written, or its presence is not
 * what WATCH saw.  Context: the watched keys' stripes held (inside EXEC's
 * ht_txn()), so no write can slip between this check and the commands. */
int multi_watch_broken(struct conn *c);
/* The watched keys, for EXEC's key set: key @i of multi_of(c)->nw. */
void multi_watch_key(struct conn *c, int i, int *db, const void **key, size_t *klen);
/* From the table's hook (db.c): @key changed (@kind: HT_WATCH_*). */
void multi_touched(int db, const void *key, size_t klen, int kind);
/* FLUSHDB/FLUSHALL (@b -1) and SWAPDB: break the watches of keys watched in
 * db @a or @b that exist in either (Redis's touchAllWatchedKeysInDb()). */
void multi_touch_dbs(int a, int b);
/* The connection is closing: free everything (client_unregister()). */
void multi_release(struct conn *c);

#endif /* SERVER_MULTI_H */
