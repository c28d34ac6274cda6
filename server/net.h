/*
 * net.h - listeners, the acceptor, the worker threads and their event loops
 * (net.c, libevent).
 *
 * Every worker thread and the main thread are registered QSBR readers: they
 * report a quiescent state once per event-loop turn and are offline while they
 * block in epoll (see worker_main() in net.c).  Commands therefore run inside
 * an implicit QSBR read-side section and may hold table references until they
 * return.
 */
#ifndef SERVER_NET_H
#define SERVER_NET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

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
	/* the thread's kernel id (INFO cpu reads its /proc stat): written once by
	 * the worker as it starts, read relaxed by INFO, 0 until then */
	_Atomic int tid;
	struct wstats st;
	struct wcstats *cs; /* per-command stats (stats.c); set before the thread starts */
	char pad[64];
};


void net_init(void);
int net_listen(void);
void net_start_workers(void);
void net_stop(void);
void net_request_shutdown(void);
/* Main thread: park every worker between commands (a shutdown's final save),
 * and let them go on; shutdown_failed: answer the SHUTDOWN callers' waits. */
void net_pause_workers(void);
void net_resume_workers(int shutdown_failed);
void net_wake_main(void); /* any thread: one more turn of the main loop */
void conn_wake_worker(struct worker *w);

#endif /* SERVER_NET_H */
