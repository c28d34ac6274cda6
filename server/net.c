/*
 * net.c - listening sockets, the acceptor, worker threads, their event loops
 * (libevent) and wakeups; the plain-socket transport and the libevent side of
 * a connection (struct conn_io, struct conn_loop: conn.h).
 *
 * Threads: the main thread owns the listening sockets (TCP and Unix), accepts,
 * and hands each new socket to a worker round-robin through the worker's
 * pending queue (w->qlock) and eventfd.  Each worker owns one event_base and
 * every connection on it; no other thread touches a connection's buffers.
 * libevent runs without its own locking (evthread is not enabled), because
 * every event_base is used by one thread only.  What a connection does with
 * its bytes (pipeline, flush queue, output pause) is conn.c's.
 *
 * RCU: workers are QSBR readers.  Each loop turn reports a quiescent state and
 * goes offline before blocking in epoll; the read and write callbacks come back
 * online before running commands (conn_online()).
 *
 * Every connection is in the client registry (client.h) from accept to close.
 *
 * Shutdown (net_stop): listeners close, each worker flushes what it can to its
 * clients, closes them, reports a last quiescent state, unregisters and exits.
 */
#define RCU_FLAVOR_QSBR
#include "rcu/rcu.h"
#include "server/client.h"
#include "server/cmd.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/log.h"
#include "server/multi.h"
#include "server/tracking.h"
#include "server/net.h"
#include "server/pause.h"
#include "server/block.h"
#include "server/pubsub.h"
#include "server/propagate.h"
#include "server/repl.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/script.h"
#include "server/stats.h"
#include "server/tls.h"
#include "server/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>


static void on_read(evutil_socket_t fd, short what, void *arg);
static void on_write(evutil_socket_t fd, short what, void *arg);

static inline void conn_online(struct worker *w)
{
	if (SRV_UNLIKELY(!w->online)) {
		server_turn_begin(w);
		rcu_thread_online();
		w->online = 1;
	}
}

/* ----------------------------------------------------------- connections */

static void set_sock_opts(int fd, int is_unix)
{
	int one = 1;
	long long ka = atomic_load_explicit(&g_cfg.tcp_keepalive, memory_order_relaxed);

	if (is_unix)
		return;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (ka > 0) {
		int idle = (int)ka, intvl = (int)(ka / 3 ? ka / 3 : 1), cnt = 3;

		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	}
}

static void fmt_addr(const struct sockaddr_storage *ss, char *buf, size_t len, int is_unix)
{
	char host[INET6_ADDRSTRLEN] = "?";
	int port = 0;

	if (is_unix) {
		snprintf(buf, len, "%s:0", g_cfg.unixsocket ? g_cfg.unixsocket : "");
		return;
	}
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)(const void *)ss;

		inet_ntop(AF_INET, &s->sin_addr, host, sizeof(host));
		port = ntohs(s->sin_port);
		snprintf(buf, len, "%s:%d", host, port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)(const void *)ss;

		inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof(host));
		port = ntohs(s->sin6_port);
		snprintf(buf, len, "%s:%d", host, port);
	} else {
		snprintf(buf, len, "?:0");
	}
}

enum { LISTEN_TCP = SRV_FD_TCP, LISTEN_UNIX = SRV_FD_UNIX, LISTEN_TLS = SRV_FD_TLS };

/* The plain-socket transport.  Context: the connection's worker. */
static ssize_t sock_read(struct conn *c, void *buf, size_t n)
{
	return read(c->fd, buf, n);
}

static ssize_t sock_write(struct conn *c, const void *buf, size_t n)
{
	return write(c->fd, buf, n);
}

static void sock_close(struct conn *c)
{
	close(c->fd);
}

static const struct conn_io sock_io = {
	.read = sock_read,
	.write = sock_write,
	.close = sock_close,
};

/* A connection's events on its worker's event_base.  Context: owner worker. */
static struct event *ev_of(struct conn *c, int what)
{
	return what == CONN_EV_READ ? c->ev_read : c->ev_write;
}

static void ev_want(struct conn *c, int what, int on)
{
	if (on)
		event_add(ev_of(c, what), NULL);
	else
		event_del(ev_of(c, what));
}

static void ev_again(struct conn *c, int what)
{
	event_active(ev_of(c, what), what == CONN_EV_READ ? EV_READ : EV_WRITE, 1);
}

static void ev_release(struct conn *c)
{
	event_free(c->ev_read);
	event_free(c->ev_write);
}

static const struct conn_loop ev_loop = {
	.want = ev_want,
	.again = ev_again,
	.release = ev_release,
};

/* A connection closes: its transaction state, then the registry entry. */
static void srv_closing(struct conn *c)
{
	tracking_off(c);
	multi_release(c);
	client_unregister(c);
}

/* What the server does with a connection's commands (conn.h). */
static const struct conn_app srv_app = {
	.dispatch = cmd_dispatch,
	.may_write = cmd_may_write,
	.prefetch = db_prefetch,
	.opened = client_register,
	.closing = srv_closing,
};

/* The link to our master (repl.c): its stream runs through the same
 * dispatch, its registry entry and transaction state go as a client's. */
static void master_dispatch(struct conn *c)
{
	repl_dispatch(c, cmd_dispatch);
}

static void master_opened(struct conn *c)
{
	client_register(c);
	repl_link_opened(c);
}

static void master_closing(struct conn *c)
{
	srv_closing(c);
	repl_link_closing(c);
}

static const struct conn_app master_app = {
    .dispatch = master_dispatch,
    .may_write = cmd_may_write,
    .prefetch = db_prefetch,
    .opened = master_opened,
    .closing = master_closing,
};

/* kind: LISTEN_TCP, LISTEN_UNIX or LISTEN_TLS (the listener it came from),
 * or SRV_FD_MASTER (the replication thread's link, counted here) */
static void net_conn_new(struct worker *w, int fd, int kind)
{
	int is_unix = kind == LISTEN_UNIX;
	struct conn *c;

	if (kind == SRV_FD_MASTER)
		atomic_fetch_add_explicit(&g_srv.nclients, 1, memory_order_relaxed);
	c = conn_new(w, fd, is_unix ? CONN_UNIX : 0, kind == LISTEN_TLS ? &tls_conn_io : &sock_io,
		     &ev_loop, kind == SRV_FD_MASTER ? &master_app : &srv_app);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		fmt_addr(&ss, c->addr, sizeof(c->addr), is_unix);
	sl = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		fmt_addr(&ss, c->laddr, sizeof(c->laddr), is_unix);
	set_sock_opts(fd, is_unix);
	if (kind == LISTEN_TLS) {
		c->io_ctx = tls_conn_new(fd);
		if (!c->io_ctx)
			srv_die("SSL_new failed");
		c->flags |= CONN_TLS;
	}
	c->ev_read = event_new(w->base, fd, EV_READ | EV_PERSIST, on_read, c);
	c->ev_write = event_new(w->base, fd, EV_WRITE | EV_PERSIST, on_write, c);
	if (!c->ev_read || !c->ev_write)
		srv_die("event_new failed");
	conn_attach(c);
	srv_log(LL_VERBOSE, "Accepted %s", c->addr);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	conn_online(c->w);
	conn_on_read(c);
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	conn_online(c->w);
	conn_on_write(c);
}

/* --------------------------------------------------------------- workers */

static void worker_adopt(struct worker *w)
{
	int fds[64], uns[64], n;

	for (;;) {
		pthread_mutex_lock(&w->qlock);
		n = w->npending < 64 ? w->npending : 64;
		memcpy(fds, w->pending_fd, (size_t)n * sizeof(int));
		memcpy(uns, w->pending_unix, (size_t)n * sizeof(int));
		memmove(w->pending_fd, w->pending_fd + n, (size_t)(w->npending - n) * sizeof(int));
		memmove(w->pending_unix, w->pending_unix + n,
			(size_t)(w->npending - n) * sizeof(int));
		w->npending -= n;
		pthread_mutex_unlock(&w->qlock);
		if (n == 0)
			break;
		for (int i = 0; i < n; i++)
			net_conn_new(w, fds[i], uns[i]);
	}
}

/*
 * Pausing every worker, for a shutdown's final save (main.c): the save must
 * hold every write acknowledged before it, and if it fails the server goes on
 * as if nothing happened, as Redis does.  The main thread closes the gate and
 * pokes each worker; a worker parks in on_notify() (between commands, offline,
 * so grace periods go on) until the gate opens or it is told to stop.
 */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static _Atomic int gate_closed;
static int gate_parked; /* gate_lock */
static int gate_failed; /* gate_lock: the shutdown failed, answer its waiters */

void net_pause_workers(void)
{
	pthread_mutex_lock(&gate_lock);
	atomic_store_explicit(&gate_closed, 1, memory_order_relaxed);
	pthread_mutex_unlock(&gate_lock);
	for (int i = 0; i < g_srv.nworkers; i++)
		server_wake_worker(&g_srv.workers[i]);
	rcu_thread_offline();
	pthread_mutex_lock(&gate_lock);
	while (gate_parked < g_srv.nworkers)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	rcu_thread_online();
}

void net_resume_workers(int shutdown_failed)
{
	pthread_mutex_lock(&gate_lock);
	atomic_store_explicit(&gate_closed, 0, memory_order_relaxed);
	gate_failed = shutdown_failed;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
}

/* Park until the gate opens or stop is set; returns gate_failed. */
static int worker_park(struct worker *w)
{
	int failed;

	prop_turn_end();
	conn_flush_queued(w); /* replies already made leave before the pause */
	rcu_thread_offline();
	if (w->online)
		server_turn_end(w);
	w->online = 0;
	pthread_mutex_lock(&gate_lock);
	gate_parked++;
	pthread_cond_broadcast(&gate_cond);
	while (atomic_load_explicit(&gate_closed, memory_order_relaxed) &&
	       !atomic_load_explicit(&w->stop, memory_order_acquire))
		pthread_cond_wait(&gate_cond, &gate_lock);
	gate_parked--;
	failed = gate_failed;
	pthread_mutex_unlock(&gate_lock);
	conn_online(w);
	return failed;
}

/* The freeze (server.h): between commands, park until it is over. */
static void frz_park(struct worker *w)
{
	conn_flush_queued(w); /* replies already made leave before the stop */
	rcu_thread_offline();
	if (w->online)
		server_turn_end(w);
	w->online = 0;
	server_freeze_wait(w);
	conn_online(w);
}

/* The shutdown was called off: its clients get Redis's error and go on. */
static void worker_answer_shutdown(struct worker *w)
{
	for (struct conn *c = w->conns, *next; c; c = next) {
		next = c->wnext;
		if (!(c->flags & CONN_SHUTDOWN_WAIT))
			continue;
		c->flags &= ~CONN_SHUTDOWN_WAIT;
		reply_error(c, "Errors trying to SHUTDOWN. Check logs.");
		conn_run(c, 0); /* what it pipelined after SHUTDOWN, then flush */
	}
}

static void on_notify(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;
	uint64_t v;

	(void)what;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		srv_log(LL_WARNING, "eventfd read failed: %s", strerror(errno));
	conn_online(w);
	if (server_freeze_pending(w))
		frz_park(w);
	if (atomic_load_explicit(&gate_closed, memory_order_relaxed) && worker_park(w) &&
	    !atomic_load_explicit(&w->stop, memory_order_acquire))
		worker_answer_shutdown(w);
	if (atomic_load_explicit(&w->stop, memory_order_acquire)) {
		conn_close_all(w);
		event_base_loopbreak(w->base);
		return;
	}
	worker_adopt(w);
	pubsub_drain(w); /* messages other workers published for our clients */
	pause_release(w); /* CLIENT UNPAUSE on another worker */
	block_drain(w);	  /* blocked clients a write on any worker woke */
	/* CLIENT KILL from another worker: scan only when one was requested. */
	if (!atomic_exchange_explicit(&w->kill_pending, 0, memory_order_acquire))
		return;
	for (struct conn *c = w->conns, *next; c; c = next) {
		next = c->wnext;
		if (atomic_load_explicit(&c->kill, memory_order_relaxed))
			conn_close(c);
	}
}

/* A CLIENT PAUSE holding our clients may have ended (pause.c). */
static void on_pause_timer(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;
	uint64_t v;

	(void)what;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		srv_log(LL_WARNING, "timerfd read failed: %s", strerror(errno));
	conn_online(w);
	pause_release(w);
}

static void on_worker_cron(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;

	(void)fd;
	(void)what;
	conn_online(w);
	conn_cron(w);
	repl_cron(w);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct timeval one_sec = {1, 0};
	char name[16];

	/* "rcukv-w0", "rcukv-w1"...: what top -H, ps -L and the tests see. */
	snprintf(name, sizeof(name), "rcukv-w%d", (int)(w - g_srv.workers));
	pthread_setname_np(pthread_self(), name);
	atomic_store_explicit(&w->tid, (int)syscall(SYS_gettid), memory_order_relaxed);
	rcu_register_thread();
	server_freeze_self(w);
	server_turn_begin(w);
	w->online = 1;
	w->ev_notify = event_new(w->base, w->notify_fd, EV_READ | EV_PERSIST, on_notify, w);
	w->ev_cron = event_new(w->base, -1, EV_PERSIST, on_worker_cron, w);
	w->ev_pause = event_new(w->base, w->pause_fd, EV_READ | EV_PERSIST, on_pause_timer, w);
	event_add(w->ev_notify, NULL);
	event_add(w->ev_pause, NULL);
	event_add(w->ev_cron, &one_sec);
	for (;;) {
		int r;

		/* One loop turn: no command is running and no table reference is
		 * held here, so report a quiescent state, then block offline so grace
		 * periods never wait for an idle worker.  Callbacks come back online
		 * (conn_online()) before touching the table; a busy worker thus pays
		 * one offline/online pair (two fences) per epoll_wait. */
		rcu_quiescent_state();
		rcu_thread_offline();
		if (w->online)
			server_turn_end(w);
		w->online = 0;
		r = event_base_loop(w->base, EVLOOP_ONCE);
		conn_online(w);
		prop_turn_end(); /* a stream lock kept for a pipeline goes back */
		conn_flush_queued(w);
		/* Release: the closes of this turn (nclients) before the count. */
		atomic_store_explicit(&w->turn,
				      atomic_load_explicit(&w->turn, memory_order_relaxed) + 1,
				      memory_order_release);
		if (r < 0 || event_base_got_break(w->base))
			break;
	}
	conn_close_all(w);
	pubsub_drain(w); /* frees what was queued for the closed clients */
	script_worker_fini(w);
	event_free(w->ev_notify);
	event_free(w->ev_cron);
	event_free(w->ev_pause);
	rcu_quiescent_state();
	rcu_unregister_thread();
	return NULL;
}

void net_init(void)
{
	g_srv.nworkers = g_cfg.threads;
	g_srv.workers = xcalloc((size_t)g_srv.nworkers, sizeof(struct worker));
	for (int i = 0; i < g_srv.nworkers; i++) {
		struct worker *w = &g_srv.workers[i];
		struct event_config *ec = event_config_new();

		w->idx = i;
		event_config_set_flag(ec, EVENT_BASE_FLAG_NOLOCK);
		w->base = event_base_new_with_config(ec);
		event_config_free(ec);
		if (!w->base)
			srv_die("event_base_new failed");
		w->notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (w->notify_fd < 0)
			srv_die("eventfd failed");
		w->pause_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (w->pause_fd < 0)
			srv_die("timerfd_create failed");
		pthread_mutex_init(&w->qlock, NULL);
		stats_worker_init(w);
	}
	g_srv.notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g_srv.notify_fd < 0)
		srv_die("eventfd failed");
}

/*
 * worker-cpu-affinity: worker i runs only on the i-th CPU this process may
 * use, when it may use at least as many CPUs as there are workers (else
 * nothing is pinned: two workers held to one CPU could not move apart).  The
 * other threads (main, RCU callbacks, reclaim, BGSAVE) float.  Why: on
 * 2 cores with clients on the same machine, the scheduler often stacked both
 * busy workers on one CPU (one waited out the other's slice, up to 5 ms,
 * perf sched), most of all while a BGSAVE thread was runnable too.  Pinned,
 * bench_persistence.sh's 50-connection load (3 s runs, 3 each, 2M keys) went
 * from p99 1127-1359 to 767-1031 us without a save and from 1271-2111 to
 * 835-1087 us during saves.  Best effort: a failure is logged and the
 * worker floats.
 */
static void pin_workers(void)
{
	cpu_set_t allowed, one;
	int cpu[CPU_SETSIZE], n = 0;
	char list[256] = "";
	size_t len = 0;

	if (!atomic_load_explicit(&g_cfg.worker_cpu_affinity, memory_order_relaxed))
		return;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
		srv_log(LL_WARNING, "worker-cpu-affinity: sched_getaffinity: %s", strerror(errno));
		return;
	}
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed))
			cpu[n++] = c;
	if (n < g_srv.nworkers) {
		srv_log(LL_NOTICE,
			"worker-cpu-affinity: %d workers on %d usable CPUs, workers not pinned",
			g_srv.nworkers, n);
		return;
	}
	for (int i = 0; i < g_srv.nworkers; i++) {
		int e;

		CPU_ZERO(&one);
		CPU_SET(cpu[i], &one);
		e = pthread_setaffinity_np(g_srv.workers[i].thread, sizeof(one), &one);
		if (e) {
			srv_log(LL_WARNING, "worker-cpu-affinity: worker %d to CPU %d: %s", i, cpu[i],
				strerror(e));
			continue;
		}
		if (len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", i ? "," : "",
						cpu[i]);
	}
	srv_log(LL_NOTICE, "Workers pinned to CPUs %s", list);
}

void net_start_workers(void)
{
	for (int i = 0; i < g_srv.nworkers; i++) {
		struct worker *w = &g_srv.workers[i];
		int e = pthread_create(&w->thread, NULL, worker_main, w);

		if (e) {
			errno = e;
			srv_die("pthread_create failed");
		}
	}
	pin_workers();
}

/* -------------------------------------------------------------- acceptor */

/* Redis 7 lets in only 127.0.0.1 and ::1 in protected mode (string compare
 * of the peer address, so ::ffff:127.0.0.1 and 127.0.0.2 are remote). */
static int peer_is_loopback(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0)
		return 0;
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;

		return ntohl(s4->sin_addr.s_addr) == INADDR_LOOPBACK;
	}
	if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;

		return IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
	}
	return 0;
}

/* Redis 7.0's text, byte for byte (its typo "Setup a an" included). */
static const char protected_err[] =
    "-DENIED "
    "Redis is running in protected mode because protected mode is enabled and no pa"
    "ssword is set for the default user. In this mode connections are only accepted"
    " from the loopback interface. If you want to connect from external computers t"
    "o Redis you may adopt one of the following solutions: 1) Just disable protecte"
    "d mode sending the command 'CONFIG SET protected-mode no' from the loopback in"
    "terface by connecting to Redis from the same host the server is running, howev"
    "er MAKE SURE Redis is not publicly accessible from internet if you do so. Use "
    "CONFIG REWRITE to make this change permanent. 2) Alternatively you can just di"
    "sable the protected mode by editing the Redis configuration file, and setting "
    "the protected mode option to 'no', and then restarting the server. 3) If you s"
    "tarted the server manually just for testing, restart it with the '--protected-"
    "mode no' option. 4) Setup a an authentication password for the default user. N"
    "OTE: You only need to do one of the above things in order for the server to st"
    "art accepting connections from the outside."
    "\r\n";

/*
 * maxclients and the reaping lag.  nclients counts a connection from its
 * accept (here) until its worker closes it, so a peer that hung up stays
 * counted until its worker's next loop turn.  Under load thousands can wait
 * so (soak under a loaded machine: 1000 live clients, connected_clients up
 * to 3445, and once past maxclients 10000), and a healthy client would be
 * refused.  So at the limit the acceptor holds the new connection, stops
 * accepting, wakes every worker and waits until each has finished a whole
 * loop turn begun after that; then it decides as Redis does, on the count
 * left.  Clients that arrive meanwhile wait in the listen backlog; each
 * connection that finds the server at the limit is held so (a wait of about
 * two turns of each worker) before Redis's error.  Main thread only (w->turn
 * aside).
 */
static int held_fd = -1, held_kind;
/* Per worker: w->turn when the hold began, then when it ended. */
static unsigned long *held_turn;
/* Set while the held connection is dispatched: the count is fresh. */
static int limit_checked;
static struct event *ev_hold;

/* Has every worker finished a whole loop turn since held_turn[]? */
static int workers_turned(void)
{
	for (int i = 0; i < g_srv.nworkers; i++)
		/* Acquire: pairs with the worker's release of its turn count.
		 * +2: the turn running at the snapshot may have begun before. */
		if (atomic_load_explicit(&g_srv.workers[i].turn, memory_order_acquire) <
		    held_turn[i] + 2)
			return 0;
	return 1;
}

static void workers_turn_snapshot(void)
{
	for (int i = 0; i < g_srv.nworkers; i++)
		held_turn[i] = atomic_load_explicit(&g_srv.workers[i].turn, memory_order_relaxed);
}

static void dispatch_fd(int fd, int kind);

static void listeners_enable(int on)
{
	for (int i = 0; i < g_srv.nlisten; i++) {
		if (on)
			event_add(g_srv.listen_ev[i], NULL);
		else
			event_del(g_srv.listen_ev[i]);
	}
}

static void on_hold_check(evutil_socket_t fd, short what, void *arg)
{
	struct timeval ms = {0, 1000};

	(void)fd;
	(void)what;
	(void)arg;
	if (!workers_turned()) {
		evtimer_add(ev_hold, &ms);
		return;
	}
	fd = held_fd;
	held_fd = -1;
	listeners_enable(1);
	limit_checked = 1;
	dispatch_fd(fd, held_kind);
	limit_checked = 0;
}

static void hold_fd(int fd, int kind)
{
	struct timeval ms = {0, 1000};

	if (!held_turn)
		held_turn = xcalloc((size_t)g_srv.nworkers, sizeof(*held_turn));
	if (!ev_hold)
		ev_hold = evtimer_new(g_srv.base, on_hold_check, NULL);
	held_fd = fd;
	held_kind = kind;
	listeners_enable(0);
	workers_turn_snapshot();
	for (int i = 0; i < g_srv.nworkers; i++)
		server_wake_worker(&g_srv.workers[i]);
	evtimer_add(ev_hold, &ms);
}

static void dispatch_fd(int fd, int kind)
{
	static unsigned rr;
	struct worker *w;
	long long maxc = atomic_load_explicit(&g_cfg.maxclients, memory_order_relaxed);

	if (atomic_load_explicit(&g_srv.nclients, memory_order_relaxed) < maxc) {
		/* room */
	} else if (!limit_checked) {
		hold_fd(fd, kind);
		return;
	} else {
		static const char err[] = "-ERR max number of clients reached\r\n";

		if (write(fd, err, sizeof(err) - 1) < 0) {
			/* the client is going away anyway */
		}
		close(fd);
		atomic_fetch_add_explicit(&g_srv.rejected_conns, 1, memory_order_relaxed);
		srv_log(
		    LL_VERBOSE,
		    "Error registering fd event for the new client: max number of clients reached");
		return;
	}
	if (kind != LISTEN_UNIX && atomic_load_explicit(&g_cfg.protected_mode, memory_order_relaxed) &&
	    !cfg_password_required() && !peer_is_loopback(fd)) {
		if (write(fd, protected_err, sizeof(protected_err) - 1) < 0) {
			/* the client is going away anyway */
		}
		close(fd);
		atomic_fetch_add_explicit(&g_srv.rejected_conns, 1, memory_order_relaxed);
		srv_log(LL_VERBOSE, "Denied a connection in protected mode");
		return;
	}
	atomic_fetch_add_explicit(&g_srv.nclients, 1, memory_order_relaxed);
	/* least loaded worker, round-robin among equals */
	w = &g_srv.workers[rr++ % (unsigned)g_srv.nworkers];
	for (int i = 0; i < g_srv.nworkers; i++) {
		struct worker *x = &g_srv.workers[i];

		if (atomic_load_explicit(&x->nconns, memory_order_relaxed) + 1 <
		    atomic_load_explicit(&w->nconns, memory_order_relaxed))
			w = x;
	}
	server_hand_fd(w, fd, kind);
}

static void on_accept(evutil_socket_t lfd, short what, void *arg)
{
	int kind = (int)(intptr_t)arg;

	(void)what;
	for (int i = 0; i < 1000 && held_fd < 0; i++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				srv_log(LL_WARNING, "Accepting client connection: %s",
					strerror(errno));
			return;
		}
		dispatch_fd(fd, kind);
	}
}

static int listen_tcp(const char *addr, int port)
{
	struct addrinfo hints, *res, *ai;
	char portstr[16];
	int fd = -1, rc;
	const char *host = addr;

	if (addr[0] == '-')
		host = addr + 1;
	if (!strcmp(host, "*"))
		host = "0.0.0.0";
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
	snprintf(portstr, sizeof(portstr), "%d", port);
	rc = getaddrinfo(host, portstr, &hints, &res);
	if (rc) {
		srv_log(LL_WARNING, "Warning: Could not create server TCP listening socket %s:%d: %s", addr,
			port, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		int one = 1;

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
		    listen(fd, g_cfg.tcp_backlog) < 0) {
			srv_log(LL_WARNING,
				"Warning: Could not create server TCP listening socket %s:%d: bind: %s",
				addr, port, strerror(errno));
			close(fd);
			fd = -1;
			continue;
		}
		break;
	}
	freeaddrinfo(res);
	return fd;
}

static int listen_unix(const char *path, unsigned perm)
{
	struct sockaddr_un sa;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		srv_log(LL_WARNING, "Unix socket path too long (%zu bytes, max %zu): %s",
			strlen(path), sizeof(sa.sun_path) - 1, path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, g_cfg.tcp_backlog) < 0) {
		srv_log(LL_WARNING, "Failed opening Unix socket: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (perm)
		chmod(path, perm);
	return fd;
}

int net_listen(void)
{
	g_srv.nlisten = 0;
	if (g_cfg.port) {
		for (int i = 0; i < g_cfg.nbind; i++) {
			int fd = listen_tcp(g_cfg.bind[i], g_cfg.port);

			if (fd < 0) {
				if (g_cfg.bind[i][0] == '-')
					continue;
				srv_log(LL_WARNING, "Failed listening on port %d (TCP), aborting.",
					g_cfg.port);
				return -1;
			}
			g_srv.listen_fds[g_srv.nlisten] = fd;
			g_srv.listen_ev[g_srv.nlisten] =
			    event_new(g_srv.base, fd, EV_READ | EV_PERSIST, on_accept, (void *)LISTEN_TCP);
			event_add(g_srv.listen_ev[g_srv.nlisten], NULL);
			g_srv.nlisten++;
		}
	}
	if (g_tls.port) {
		if (tls_configure() < 0) {
			srv_log(LL_WARNING, "Failed to configure TLS. Check logs for more info.");
			return -1;
		}
		for (int i = 0; i < g_cfg.nbind; i++) {
			int fd = listen_tcp(g_cfg.bind[i], g_tls.port);

			if (fd < 0) {
				if (g_cfg.bind[i][0] == '-')
					continue;
				srv_log(LL_WARNING, "Failed listening on port %d (tls), aborting.",
					g_tls.port);
				return -1;
			}
			g_srv.listen_fds[g_srv.nlisten] = fd;
			g_srv.listen_ev[g_srv.nlisten] = event_new(
			    g_srv.base, fd, EV_READ | EV_PERSIST, on_accept, (void *)LISTEN_TLS);
			event_add(g_srv.listen_ev[g_srv.nlisten], NULL);
			g_srv.nlisten++;
		}
	}
	if (g_cfg.unixsocket) {
		int fd = listen_unix(g_cfg.unixsocket, g_cfg.unixsocketperm);

		if (fd < 0)
			return -1;
		g_srv.listen_fds[g_srv.nlisten] = fd;
		g_srv.listen_ev[g_srv.nlisten] =
		    event_new(g_srv.base, fd, EV_READ | EV_PERSIST, on_accept, (void *)LISTEN_UNIX);
		event_add(g_srv.listen_ev[g_srv.nlisten], NULL);
		g_srv.nlisten++;
		srv_log(LL_NOTICE, "The server is now ready to accept connections at %s",
			g_cfg.unixsocket);
	}
	if (g_srv.nlisten == 0) {
		srv_log(LL_WARNING, "Configured to not listen anywhere, exiting.");
		return -1;
	}
	return 0;
}

void net_stop(void)
{
	if (ev_hold) {
		event_free(ev_hold);
		ev_hold = NULL;
	}
	if (held_fd >= 0) {
		close(held_fd);
		held_fd = -1;
	}
	free(held_turn);
	held_turn = NULL;
	for (int i = 0; i < g_srv.nlisten; i++) {
		event_free(g_srv.listen_ev[i]);
		close(g_srv.listen_fds[i]);
	}
	g_srv.nlisten = 0;
	tls_fini(); /* each SSL keeps its own reference to the context */
	if (g_cfg.unixsocket)
		unlink(g_cfg.unixsocket);
	for (int i = 0; i < g_srv.nworkers; i++) {
		struct worker *w = &g_srv.workers[i];

		atomic_store_explicit(&w->stop, 1, memory_order_release);
		server_wake_worker(w);
	}
	/* Workers parked by net_pause_workers() see stop once woken. */
	pthread_mutex_lock(&gate_lock);
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
	/* The joining thread must not stall grace periods while it waits. */
	rcu_thread_offline();
	for (int i = 0; i < g_srv.nworkers; i++) {
		struct worker *w = &g_srv.workers[i];

		pthread_join(w->thread, NULL);
		/* sockets handed over but never adopted */
		for (int k = 0; k < w->npending; k++)
			close(w->pending_fd[k]);
		free(w->pending_fd);
		free(w->pending_unix);
		event_base_free(w->base);
		close(w->notify_fd);
		close(w->pause_fd);
		pthread_mutex_destroy(&w->qlock);
	}
	rcu_thread_online();
}
