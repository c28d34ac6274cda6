/*
 * server.h - the process's state (g_srv, server.c): workers, listeners,
 * shutdown and loading flags, ids, and the wakeups any thread may send.
 * Written by the main thread at start-up (main.c, net_init()); the _Atomic
 * fields are the ones other threads change or read afterwards.
 *
 * struct worker and its counters live here, not in net.h, because every layer
 * above the event loop reads them (a connection's worker, INFO's sums, CLIENT
 * KILL's wakeup) while only net.c runs them: with them in net.h, each of those
 * files would include the event loop's header and the include graph would loop
 * through net.c.
 */
#ifndef SERVER_SERVER_H
#define SERVER_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>

#include "server/config.h"

/* Per-worker counters: written by the owner with relaxed load+store (single
 * writer, no RMW), read by INFO from any thread with relaxed loads. */
struct wstats {
	_Atomic unsigned long long commands;
	_Atomic unsigned long long conns_received;
	_Atomic unsigned long long keyspace_hits;
	_Atomic unsigned long long keyspace_misses;
	_Atomic unsigned long long expired_keys;
	_Atomic unsigned long long net_in, net_out;
	_Atomic unsigned long long errors;
	_Atomic unsigned long long dirty; /* keys written (Redis's dirty counter), persist.c */
	/* total_reads_processed: read events handled (conn_on_read(), one per call,
	 * EOF included, as Redis's readQueryFromClient()); total_writes_processed:
	 * flushes of a connection with replies to send (conn_flush() in conn.c, as Redis's
	 * writeToClient()) */
	_Atomic unsigned long long reads, writes;
	/* reply_buffer_expands: a connection's reply buffer grown (reply.c, not its
	 * first allocation); reply_buffer_shrinks: a big one given back once
	 * drained (conn_flush()).  Redis resizes its reply buffer in a cron
	 * instead; these count the same events of rcukv's buffer. */
	_Atomic unsigned long long reply_expands, reply_shrinks;
};
#define STAT_ADD(field, n)                                                                         \
	atomic_store_explicit(&(field),                                                            \
			      atomic_load_explicit(&(field), memory_order_relaxed) + (n),          \
			      memory_order_relaxed)
#define STAT_GET(field) atomic_load_explicit(&(field), memory_order_relaxed)

struct worker {
	int idx;
	pthread_t thread;
	struct event_base *base;
	int notify_fd; /* eventfd: new fds, kill, stop */
	struct event *ev_notify;
	int pause_fd; /* timerfd: the end of a CLIENT PAUSE holding our clients */
	struct event *ev_pause;
	struct event *ev_cron;
	pthread_mutex_t qlock; /* protects pending fds */
	int *pending_fd;
	int *pending_unix;
	int npending, cap_pending;
	_Atomic int stop;
	_Atomic int kill_pending; /* CLIENT KILL marked one of our conns */
	int online;		  /* QSBR online; owner thread */
	struct conn *conns;	  /* owner thread */
	struct conn *flushq;	  /* connections with replies to write at the end of
				   * this loop turn (owner thread) */
	_Atomic int nconns;
	/* Loop turns finished (the owner stores with release; the acceptor
	 * loads with acquire, see hold_fd() in net.c). */
	_Atomic unsigned long turn;
	/* Odd while the worker is in a loop turn that may run commands (from
	 * going online to going offline at the turn's end), even while idle or
	 * parked: SWAPDB waits out the turns in progress (server_wait_turns()),
	 * which ht's offline lock waits do not end.  Owner writes. */
	_Atomic unsigned long busy;
	/* the thread's kernel id (INFO cpu reads its /proc stat): written once by
	 * the worker as it starts, read relaxed by INFO, 0 until then */
	_Atomic int tid;
	/* Pub/sub messages other workers published for our connections
	 * (pubsub.c): a lock-free stack, pushed by any worker, taken whole by
	 * the owner (pubsub_drain() in on_notify()). */
	struct ps_delivery *_Atomic ps_inbox;
	struct wstats st;
	struct script_vm *script_vm; /* its Lua state (script.c), NULL until used; owner */
	struct wcstats *cs; /* per-command stats (stats.c); set before the thread starts */
	char pad[64];
};

struct server {
	struct worker *workers;
	int nworkers;
	struct event_base *base; /* main thread */
	int notify_fd;		 /* eventfd: shutdown requests */
	_Atomic int shutdown_asap;
	/* 1 while the dump at start-up is not yet wholly in the table: commands
	 * without CMD_LOADING answer ERR_LOADING.  Set by the main thread before
	 * any command can run (persist_load_start()), cleared by the loader
	 * thread once, after its last insert; never set again.  Stays 1 after a
	 * failed or stopped load (the server is on its way out).  Read with
	 * acquire (persist_loading()). */
	_Atomic int loading;
	_Atomic int nclients;
	_Atomic unsigned long long next_client_id;
	_Atomic unsigned long long rejected_conns;
	long long start_ms;
	char executable[4096];
	pid_t pid;
	int listen_fds[2 * CFG_MAX_BIND + 1];
	int nlisten;
	struct event *listen_ev[2 * CFG_MAX_BIND + 1];
	char runid[41];
	char replid[41]; /* master_replid: random, chosen at start like runid */
};
extern struct server g_srv;

/**
 * server_wake_worker() - one more loop turn of worker @w (it reads its
 * pending queue and kill marks).  Any thread.
 */
void server_wake_worker(struct worker *w);

/*
 * The freeze, the second of Rusty Russell's answers (stop_machine()): a
 * worker stops every other worker at a quiescent point between commands,
 * does what needs a still world, and lets them go (MODULE UNLOAD with
 * module-unload-scheme freeze, module.c).
 * server_freeze(): from @self's command; the others park (offline) when they
 * next reach their event loop (net.c: server_freeze_pending() there, then
 * server_freeze_wait()); returns 0 once every other worker is parked, or -1
 * (nothing frozen) when one is not within @timeout_ms (a long command, a
 * busy script).  @self is online again on return.  Callers serialize among
 * themselves (module.c: mod_lock); a worker that waits for that lock must
 * call server_freeze_point() while it waits, or the freeze waits for it in
 * vain.
 * server_thaw(): after a server_freeze() that returned 0: the others go on.
 * server_freeze_point(): a worker offline inside a command (waiting for a
 * lock) parks here if another worker's freeze is on; other threads: no-op.
 * server_freeze_self(): worker @w's thread says which worker it is (once).
 * server_freeze_pending(): a freeze by another worker than @w is on.
 * server_freeze_wait(): @w, offline, parks until the freeze is over or @w
 * is told to stop.
 */
int server_freeze(struct worker *self, long timeout_ms);
void server_thaw(void);
void server_freeze_point(void);
void server_freeze_self(struct worker *w);
int server_freeze_pending(const struct worker *w);
void server_freeze_wait(struct worker *w);

/* What a socket handed to a worker is (server_hand_fd()): the kind of
 * listener it came from, or the link to our master (repl.c). */
enum { SRV_FD_TCP = 0, SRV_FD_UNIX = 1, SRV_FD_TLS = 2, SRV_FD_MASTER = 3 };
/**
 * server_hand_fd() - queue socket @fd of @kind (SRV_FD_*) for worker @w,
 * which makes it a connection on its next loop turn.  Any thread.
 */
void server_hand_fd(struct worker *w, int fd, int kind);
/**
 * server_arm_pause_timer() - a loop turn of @w in @ms milliseconds (its
 * pause_fd fires: pause.c releases the clients a CLIENT PAUSE held).
 * Replaces an earlier one.  @w's own thread.
 */
void server_arm_pause_timer(struct worker *w, long long ms);
/**
 * server_request_shutdown() - ask the main thread to shut down (SHUTDOWN, a
 * failed load).  Any thread; the save and exit happen on the main thread.
 */
void server_request_shutdown(void);
/** server_wake_main() - one more turn of the main loop.  Any thread. */
void server_wake_main(void);

/* Worker @w starts a turn that may run commands (odd w->busy; a full fence
 * before anything the turn reads), or ends it (even).  Owner thread. */
static inline void server_turn_begin(struct worker *w)
{
	atomic_fetch_add_explicit(&w->busy, 1, memory_order_seq_cst);
}

static inline void server_turn_end(struct worker *w)
{
	atomic_store_explicit(&w->busy, atomic_load_explicit(&w->busy, memory_order_relaxed) + 1,
			      memory_order_release);
}

/**
 * server_wait_turns() - wait until every worker but @self has ended the turn
 * it was in when called (a worker that is idle counts at once): whatever
 * those turns read before the call, they are done with.  @self ends its turn
 * for the wait and begins a new one after, so two waiters never wait for each
 * other.  Context: a worker, in a command, holding no lock another worker's
 * command may wait for; blocks (polling).  Call it offline.
 */
void server_wait_turns(struct worker *self);

#endif /* SERVER_SERVER_H */
