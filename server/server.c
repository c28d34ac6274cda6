/*
 * server.c - the process's state (g_srv, server.h) and the eventfd wakeups
 * any thread may send to a worker or to the main thread.  Linked by the
 * server and by the fuzz harnesses alike, so both run the same code.
 */
#define RCU_FLAVOR_QSBR
#include "rcu/rcu.h"
#include "server/log.h"
#include "server/util.h"
#include "server/server.h"

#include <errno.h>
#include <stdatomic.h>
#include <time.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

struct server g_srv;

static void notify(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		srv_log(LL_WARNING, "eventfd write failed: %s", strerror(errno));
}

void server_wake_worker(struct worker *w)
{
	notify(w->notify_fd);
}

void server_hand_fd(struct worker *w, int fd, int kind)
{
	pthread_mutex_lock(&w->qlock);
	if (w->npending == w->cap_pending) {
		w->cap_pending = w->cap_pending ? w->cap_pending * 2 : 64;
		w->pending_fd = xrealloc(w->pending_fd, (size_t)w->cap_pending * sizeof(int));
		w->pending_unix = xrealloc(w->pending_unix, (size_t)w->cap_pending * sizeof(int));
	}
	w->pending_fd[w->npending] = fd;
	w->pending_unix[w->npending] = kind;
	w->npending++;
	pthread_mutex_unlock(&w->qlock);
	server_wake_worker(w);
}

void server_arm_pause_timer(struct worker *w, long long ms)
{
	struct itimerspec its = {{0, 0}, {0, 0}};

	if (ms < 1)
		ms = 1; /* 0 would disarm it */
	its.it_value.tv_sec = ms / 1000;
	its.it_value.tv_nsec = (ms % 1000) * 1000000;
	if (w->pause_fd > 0 && timerfd_settime(w->pause_fd, 0, &its, NULL) < 0)
		srv_log(LL_WARNING, "timerfd_settime failed: %s", strerror(errno));
}

void server_request_shutdown(void)
{
	atomic_store_explicit(&g_srv.shutdown_asap, 1, memory_order_release);
	notify(g_srv.notify_fd);
}

void server_wake_main(void)
{
	notify(g_srv.notify_fd);
}

/* Seq_cst load of each busy count after the caller's seq_cst stores (SWAPDB's
 * slots): a worker whose turn began after the load sees those stores (its
 * seq_cst increment is ordered after our load), one whose turn had begun is
 * odd here and is waited for. */
void server_wait_turns(struct worker *self)
{
	server_turn_end(self);
	for (int i = 0; i < g_srv.nworkers; i++) {
		struct worker *w = &g_srv.workers[i];
		unsigned long b = atomic_load_explicit(&w->busy, memory_order_seq_cst);

		if (w == self || !(b & 1))
			continue;
		while (atomic_load_explicit(&w->busy, memory_order_acquire) == b)
			usleep(20);
	}
	server_turn_begin(self);
}

/* ----------------------------------------------------------- the freeze */
/* frz_lock guards frz_parked; workers read frz_on without it first. */
static pthread_mutex_t frz_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t frz_cond = PTHREAD_COND_INITIALIZER;
static _Atomic int frz_on;
static struct worker *_Atomic frz_owner;
static int frz_parked; /* frz_lock */
static _Thread_local struct worker *frz_self; /* this thread's worker, if one */

void server_freeze_self(struct worker *w)
{
	frz_self = w;
}

int server_freeze_pending(const struct worker *w)
{
	return atomic_load_explicit(&frz_on, memory_order_acquire) &&
	       atomic_load_explicit(&frz_owner, memory_order_relaxed) != w;
}

void server_freeze_wait(struct worker *w)
{
	pthread_mutex_lock(&frz_lock);
	frz_parked++;
	pthread_cond_broadcast(&frz_cond);
	while (atomic_load_explicit(&frz_on, memory_order_acquire) &&
	       !atomic_load_explicit(&w->stop, memory_order_acquire))
		pthread_cond_wait(&frz_cond, &frz_lock);
	frz_parked--;
	pthread_mutex_unlock(&frz_lock);
}

void server_freeze_point(void)
{
	struct worker *w = frz_self;

	if (w && server_freeze_pending(w))
		server_freeze_wait(w);
}

int server_freeze(struct worker *self, long timeout_ms)
{
	struct timespec dl;
	int others = g_srv.nworkers - 1, rc = 0;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += timeout_ms / 1000;
	dl.tv_nsec += (timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	atomic_store_explicit(&frz_owner, self, memory_order_relaxed);
	atomic_store_explicit(&frz_on, 1, memory_order_release);
	for (int i = 0; i < g_srv.nworkers; i++)
		if (&g_srv.workers[i] != self)
			server_wake_worker(&g_srv.workers[i]);
	rcu_thread_offline(); /* the parked ones are offline: grace periods go on */
	pthread_mutex_lock(&frz_lock);
	while (frz_parked < others && rc == 0)
		rc = pthread_cond_timedwait(&frz_cond, &frz_lock, &dl);
	if (frz_parked < others) { /* timed out: the parked ones go on */
		atomic_store_explicit(&frz_on, 0, memory_order_release);
		pthread_cond_broadcast(&frz_cond);
		rc = -1;
	} else {
		rc = 0;
	}
	pthread_mutex_unlock(&frz_lock);
	rcu_thread_online();
	return rc;
}

void server_thaw(void)
{
	pthread_mutex_lock(&frz_lock);
	atomic_store_explicit(&frz_on, 0, memory_order_release);
	atomic_store_explicit(&frz_owner, NULL, memory_order_relaxed);
	pthread_cond_broadcast(&frz_cond);
	pthread_mutex_unlock(&frz_lock);
}
