/*
 * pause.c - CLIENT PAUSE (pause.h).
 *
 * The pause is two words under pause_lock: its type and its end (unix ms),
 * read lock-free (relaxed) by dispatch: a command is held while the type
 * covers it and now <= end.  A held connection stays on its worker's list
 * with CONN_HELD; pause_nheld counts them all so that pause_release() costs
 * nothing when nobody waits.  The worker that holds a connection arms its
 * own pause timer for the end; CLIENT UNPAUSE wakes every worker.  Released
 * connections run their held command again through dispatch, which holds it
 * again if a new pause covers it.
 * Tested by tests/server/test_admin.sh (a held write, a read passing under
 * WRITE, UNPAUSE) and tests/server/cases_admin.txt.
 */
#include "server/conn.h"
#include "server/pause.h"
#include "server/server.h"
#include "server/util.h"

#include <pthread.h>
#include <stdatomic.h>

static pthread_mutex_t pause_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int pause_type;	     /* written under pause_lock */
static _Atomic long long pause_end;  /* unix ms; written under pause_lock */
static _Atomic long pause_nheld;     /* connections held, every worker */

void pause_clients(int type, long long end_ms)
{
	pthread_mutex_lock(&pause_lock);
	if (atomic_load_explicit(&pause_end, memory_order_relaxed) < util_mstime())
		atomic_store_explicit(&pause_type, PAUSE_OFF, memory_order_relaxed);
	if (type > atomic_load_explicit(&pause_type, memory_order_relaxed))
		atomic_store_explicit(&pause_type, type, memory_order_relaxed);
	if (end_ms > atomic_load_explicit(&pause_end, memory_order_relaxed))
		atomic_store_explicit(&pause_end, end_ms, memory_order_relaxed);
	pthread_mutex_unlock(&pause_lock);
}

void pause_clients_end(void)
{
	pthread_mutex_lock(&pause_lock);
	atomic_store_explicit(&pause_type, PAUSE_OFF, memory_order_relaxed);
	atomic_store_explicit(&pause_end, 0, memory_order_relaxed);
	pthread_mutex_unlock(&pause_lock);
	if (atomic_load_explicit(&pause_nheld, memory_order_relaxed))
		for (int i = 0; i < g_srv.nworkers; i++)
			server_wake_worker(&g_srv.workers[i]);
}

/* The type in force at @now, PAUSE_OFF once it ended. */
static int pause_now(long long now)
{
	int type = atomic_load_explicit(&pause_type, memory_order_relaxed);

	if (type == PAUSE_OFF || now > atomic_load_explicit(&pause_end, memory_order_relaxed))
		return PAUSE_OFF;
	return type;
}

int pause_hold(struct conn *c, int writes)
{
	long long now;
	int type;

	if (SRV_LIKELY(atomic_load_explicit(&pause_type, memory_order_relaxed) == PAUSE_OFF) ||
	    (c->flags & CONN_MONITOR))
		return 0;
	now = util_mstime();
	type = pause_now(now);
	if (type == PAUSE_OFF || (type == PAUSE_WRITE && !writes))
		return 0;
	/* A blocked client's retry (block.c) held by the pause: the pause owns
	 * the hold now and runs it again at its end. */
	c->flags = (c->flags & ~CONN_BLOCKED) | CONN_HELD;
	atomic_fetch_or_explicit(&c->list_flags, CONN_HELD, memory_order_relaxed);
	atomic_fetch_add_explicit(&pause_nheld, 1, memory_order_relaxed);
	server_arm_pause_timer(c->w,
			       atomic_load_explicit(&pause_end, memory_order_relaxed) - now + 1);
	return 1;
}

void pause_hold_for(struct conn *c, long long ms)
{
	c->flags |= CONN_HELD;
	atomic_fetch_or_explicit(&c->list_flags, CONN_HELD, memory_order_relaxed);
	atomic_fetch_add_explicit(&pause_nheld, 1, memory_order_relaxed);
	server_arm_pause_timer(c->w, ms);
}

/* Forget @c's hold (it runs again, or closes). */
static void unhold(struct conn *c)
{
	atomic_fetch_sub_explicit(&pause_nheld, 1, memory_order_relaxed);
	atomic_fetch_and_explicit(&c->list_flags, ~CONN_HELD, memory_order_relaxed);
}

void pause_conn_closed(struct conn *c)
{
	if ((c->flags & (CONN_HELD | CONN_BLOCKED)) == CONN_HELD)
		unhold(c);
}

void pause_release(struct worker *w)
{
	long long now;

	if (SRV_LIKELY(atomic_load_explicit(&pause_nheld, memory_order_relaxed) == 0))
		return;
	now = util_mstime();
	if (pause_now(now) != PAUSE_OFF) { /* renewed: wait for the new end */
		for (struct conn *c = w->conns; c; c = c->wnext)
			if ((c->flags & (CONN_HELD | CONN_BLOCKED)) == CONN_HELD) {
				server_arm_pause_timer(
				    w, atomic_load_explicit(&pause_end, memory_order_relaxed) - now + 1);
				break;
			}
		return;
	}
	for (struct conn *c = w->conns, *next; c; c = next) {
		next = c->wnext;
		if ((c->flags & (CONN_HELD | CONN_BLOCKED)) != CONN_HELD) /* block.c's own */
			continue;
		unhold(c);
		conn_resume(c); /* may close @c; next was taken before */
	}
}
