/*
 * block.h - clients blocked on keys (BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP;
 * sorted sets' BZPOPMIN/BZPOPMAX/BZMPOP can plug in the same way).
 *
 * The model.  A blocking command first tries to serve itself as the
 * non-blocking one would.  When it cannot (every key empty or missing) it
 * calls block_wait(): the connection keeps its parsed command and stops
 * being read (conn.c's CONN_HELD, as CLIENT PAUSE holds a command), and is
 * queued on each of its keys, in arrival order.  A write that may make a key
 * servable calls block_signal_key() after it is published; the first waiter
 * of that key that is not already woken is marked ready and handed to its
 * own worker (a per-worker inbox under block_lock, then the worker's eventfd:
 * server_wake_worker(), as pub/sub delivers across workers).  That worker,
 * in block_drain() (its notify callback), dispatches the held command again:
 * the handler runs from the start, finds block_retry() true and tries again.
 * If it serves itself (or times out, or CLIENT UNBLOCK ends it) it calls
 * block_done(), which drops the waiter and, if the waiter had been woken,
 * signals its keys again, so the next waiter in line gets its turn (a push
 * of three elements wakes three waiters one after another, in FIFO order).
 * If it still cannot serve itself (another client took the element first)
 * it calls block_wait() again and keeps its place in every queue.
 *
 * Timeouts: a libevent timer on the connection's worker; when it fires the
 * command is dispatched again with block_timed_out() true and answers nil.
 * A blocked connection that closes is forgotten (block_conn_closed(), from
 * client_unregister()).  Inside EXEC (and scripts, which refuse the blocking
 * commands anyway) a command never blocks: block_allowed() is 0 and the
 * handler answers as if the timeout had passed.
 *
 * Locking: block_lock (a mutex) protects the key queues, the inboxes and
 * every waiter's queue links and flags; it nests inside nothing and no
 * callback runs under it.  block_signal_key() costs one relaxed load when no
 * client is blocked (the push hot path).  A waiter (struct blk) belongs to
 * its connection (c->blk) and is freed by its worker only.
 *
 * Tested by tests/server/test_list.sh (blocked on one worker, pushed from
 * another, FIFO of three clients, timeouts, disconnects, CLIENT UNBLOCK).
 */
#ifndef SERVER_BLOCK_H
#define SERVER_BLOCK_H

#include <stddef.h>

struct conn;
struct worker;
struct ht;

/* Keys at most one blocking command waits on (BLPOP k1 ... kN). */
#define BLOCK_MAX_KEYS 1024

/**
 * block_wait() - hold @c's command until a key of @kidx[0..n-1] (argument
 * indexes) in table @ht is signalled, the timeout passes or it is unblocked.
 * @timeout_ms: relative, 0 forever.  Called again by a retry that still
 * cannot serve itself: the place in each queue and the deadline are kept.
 * Context: @c's worker, from the command's handler (nothing replied yet).
 */
void block_wait(struct conn *c, struct ht *ht, int n, const int *kidx, long long timeout_ms);

/* block_wait() on keys given as bytes (@keys[i], @klens[i]), not argument
 * indexes: a module's RedisModule_BlockClientOnKeys. */
void block_wait_keys(struct conn *c, struct ht *ht, int n, const void *const *keys,
		     const size_t *klens, long long timeout_ms);
/* What blocked @c besides its command (a module's blocked-client handle):
 * set after block_wait*(), read on its retry; NULL for the built-in
 * commands.  The close hook runs when a connection that has one closes
 * while blocked (before its waiter is dropped); set once at start-up. */
void block_set_owner(struct conn *c, void *owner);
void *block_owner(const struct conn *c);
void block_set_close_hook(void (*hook)(struct conn *c, void *owner));
/* The key whose signal woke @c's waiter (valid during its retry), or NULL. */
const void *block_woken_key(const struct conn *c, size_t *klen);

/* Whether this run of @c's command is a retry of a blocked one. */
int block_retry(const struct conn *c);
/* Whether the retry was caused by the timeout (or CLIENT UNBLOCK TIMEOUT):
 * 1, or 2 for CLIENT UNBLOCK ... ERROR; 0 otherwise. */
int block_timed_out(const struct conn *c);
/* The retry is over (served, timed out, unblocked): forget @c's waiter. */
void block_done(struct conn *c);
/* Whether @c's command may block now (not in EXEC, not a master's link). */
int block_allowed(const struct conn *c);

/**
 * block_signal_key() - @key of table @ht may now serve a blocked client:
 * wake the first waiter not yet woken.  Context: any worker, after the
 * change is published (outside the stripe mutex); never blocks long.
 */
void block_signal_key(struct ht *ht, const void *key, size_t klen);

/* Run the commands of @w's woken waiters again.  @w's thread, online. */
void block_drain(struct worker *w);
/* @c closes: forget it.  Its worker. */
void block_conn_closed(struct conn *c);
/* CLIENT UNBLOCK @id: 1 if that client was blocked (it answers nil for
 * @err 0, -UNBLOCKED for 1), else 0.  @err -1: wake it for a retry with
 * no timeout (a module's UnblockClient).  Any thread. */
int block_unblock(unsigned long long id, int err);
/* Clients blocked now (INFO clients blocked_clients), and those of them
 * with a timeout (clients_in_timeout_table). */
long long block_count(void);
long long block_count_timed(void);


/*
 * The parts every blocking command shares (cmd_list.c, cmd_zset.c), on
 * @c's worker inside its handler:
 * block_get_timeout(): argument @j as Redis's timeout in seconds (a
 *   double): *@ms relative (0 forever), or -1 after the error reply.
 * block_end(): a retry that did not block again: forget the waiter.
 * block_wait_or_nil(): nothing could be served: in EXEC or on timeout
 *   answer nil (@bulk: a null bulk on the first run, else a null array)
 *   and return 1; else block on the keys @kidx[0..n-1] of @ht, return 0.
 * block_unblocked_err(): a retry after the timeout or CLIENT UNBLOCK
 *   answers nil (or -UNBLOCKED) without looking at the keys, as Redis:
 *   1 after the reply, else 0.
 */
int block_get_timeout(struct conn *c, int j, long long *ms);
void block_end(struct conn *c);
int block_wait_or_nil(struct conn *c, struct ht *ht, int n, const int *kidx, long long ms,
		      int bulk);
int block_unblocked_err(struct conn *c);
/* block_start(): block_get_timeout() of argument @tj, then
 * block_unblocked_err(): -1 when the command is over (replied), else 0.
 * block_on_range(): block_wait_or_nil() on the @n keys from argument @first
 * (at most BLOCK_MAX_KEYS of them), a null array when it cannot block. */
int block_start(struct conn *c, int tj, long long *ms);
void block_on_range(struct conn *c, struct ht *ht, int first, long long n, long long ms);

#endif /* SERVER_BLOCK_H */
