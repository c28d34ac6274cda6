/*
 * rcu_debug.c - the RCU checker's bookkeeping (active in RCU_DEBUG builds,
 * `make DEBUG_RCU=1`) and the read-side state queries every build has.
 *
 * Per thread: the SRCU domains it holds (a small stack of domain, index).
 * Global, under waiters_lock: the threads now inside synchronize_srcu(), each
 * with the domain it waits for and a copy of the domains it holds, so that a
 * thread about to wait can look for a cycle (Quick Quiz 6: A holds a and
 * syncs b while B holds b and syncs a) and abort instead of deadlocking.
 * Checked by tests/rcu/checker.sh (one death test per rule).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rcu/rcu.h"
#include "rcu/rcu_internal.h"

#define HELD_MAX 32

struct held {
	struct srcu_struct *ss;
	int idx;
};

static _Thread_local int nheld; /* stays 0 unless RCU_DEBUG tracks sections */
#if defined(RCU_DEBUG) && RCU_DEBUG
static _Thread_local struct held held[HELD_MAX];
#endif

int rcu_qsbr_read_held(void)
{
	return rcu_qsbr_reader_tls.link.registered &&
	       atomic_load_explicit(&rcu_qsbr_reader_tls.ctr, memory_order_relaxed) != 0;
}

int rcu_memb_read_held(void)
{
	return rcu_memb_read_ongoing();
}

int rcu_read_held_any(void)
{
	return rcu_qsbr_read_held() || rcu_memb_read_held() || nheld > 0;
}

#if defined(RCU_DEBUG) && RCU_DEBUG
static void thread_name(char *buf, size_t len)
{
	buf[0] = 0;
	pthread_getname_np(pthread_self(), buf, len);
}

void rcu_debug_check_at(int ok, const char *what, const char *expr, const char *flavor,
			const char *file, int line)
{
	char name[32];

	if (RCU_LIKELY(ok))
		return;
	thread_name(name, sizeof(name));
	rcu_die_at(file, line, what, "%s(%s) outside a %s read-side critical section "
		   "(thread %s)", what, expr, flavor, name);
}

int srcu_read_held(const struct srcu_struct *ss)
{
	for (int i = 0; i < nheld; i++)
		if (held[i].ss == ss)
			return 1;
	return 0;
}

int srcu_read_lock_debug(struct srcu_struct *ss)
{
	int idx = srcu_read_lock_inline(ss);

	if (nheld == HELD_MAX)
		rcu_die("srcu_read_lock(%s): more than %d nested SRCU sections", ss->name,
			HELD_MAX);
	held[nheld].ss = ss;
	held[nheld].idx = idx;
	nheld++;
	return idx;
}

void srcu_read_unlock_debug(struct srcu_struct *ss, int idx)
{
	int i;

	for (i = nheld - 1; i >= 0; i--)
		if (held[i].ss == ss && held[i].idx == idx)
			break;
	if (i < 0) {
		const char *why = "this thread holds no section of it";

		for (int j = 0; j < nheld; j++)
			if (held[j].ss == ss)
				why = "stale index: this thread's section of it has another index";
		rcu_die("srcu_read_unlock(%s, %d) mismatched: %s", ss->name, idx, why);
	}
	memmove(&held[i], &held[i + 1], (size_t)(nheld - i - 1) * sizeof(held[0]));
	nheld--;
	srcu_read_unlock_inline(ss, idx);
}

/* --- threads inside synchronize_srcu() ------------------------------------ */

struct waiter {
	struct waiter *next;
	int tid;
	char name[16];
	struct srcu_struct *waits;
	int nheld;
	struct srcu_struct *held[HELD_MAX];
};

static pthread_mutex_t waiters_lock = PTHREAD_MUTEX_INITIALIZER;
static struct waiter *waiters;
static _Thread_local struct waiter self_waiter;

static bool holds(const struct waiter *w, const struct srcu_struct *ss)
{
	for (int i = 0; i < w->nheld; i++)
		if (w->held[i] == ss)
			return true;
	return false;
}

void rcu_debug_srcu_sync_begin(struct srcu_struct *ss)
{
	struct waiter *me = &self_waiter, *w;
	struct srcu_struct *frontier[64];
	int nf = 1, visited_n = 0;
	struct waiter *visited[64];

	if (srcu_read_held(ss))
		rcu_die("synchronize_srcu(%s) inside a read-side critical section of the same "
			"domain: it would wait for itself (Quick Quiz 6)", ss->name);
	me->tid = (int)syscall(SYS_gettid);
	thread_name(me->name, sizeof(me->name));
	me->waits = ss;
	me->nheld = nheld;
	for (int i = 0; i < nheld; i++)
		me->held[i] = held[i].ss;

	pthread_mutex_lock(&waiters_lock);
	/* Follow "waits for a domain held by a waiting thread" from ss; reaching
	 * a thread that waits for a domain we hold closes a cycle. */
	frontier[0] = ss;
	for (int f = 0; f < nf; f++) {
		for (w = waiters; w; w = w->next) {
			bool seen = false;

			for (int v = 0; v < visited_n; v++)
				seen |= visited[v] == w;
			if (seen || !holds(w, frontier[f]))
				continue;
			if (holds(me, w->waits))
				rcu_die("synchronize_srcu(%s) would deadlock: thread %d (%s) holds "
					"%s and waits in synchronize_srcu(%s), which this thread "
					"holds (Quick Quiz 6)",
					ss->name, w->tid, w->name, frontier[f]->name, w->waits->name);
			if (visited_n < 64)
				visited[visited_n++] = w;
			if (nf < 64)
				frontier[nf++] = w->waits;
		}
	}
	if (me->nheld) {
		me->next = waiters;
		waiters = me;
	}
	pthread_mutex_unlock(&waiters_lock);
}

void rcu_debug_srcu_sync_end(struct srcu_struct *ss)
{
	struct waiter **pp, *me = &self_waiter;

	(void)ss;
	if (!me->nheld)
		return;
	pthread_mutex_lock(&waiters_lock);
	for (pp = &waiters; *pp; pp = &(*pp)->next) {
		if (*pp == me) {
			*pp = me->next;
			break;
		}
	}
	pthread_mutex_unlock(&waiters_lock);
	me->nheld = 0;
}
#endif /* RCU_DEBUG */
