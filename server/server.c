/*
 * server.c - the process's state (g_srv, server.h) and the eventfd wakeups
 * any thread may send to a worker or to the main thread.  Linked by the
 * server and by the fuzz harnesses alike, so both run the same code.
 */
#include "server/log.h"
#include "server/server.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
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
