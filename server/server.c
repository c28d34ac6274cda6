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
