/*
 * rcu_internal.h - private to rcu/: the per-flavor state shared by the
 * grace-period driver, the registry and the callback machinery in rcu_core.c,
 * and the flavor files rcu_qsbr.c and rcu_memb.c.  Never included from another
 * folder.
 *
 * Locks, outermost first (a lock may be taken while holding those above it):
 *   fl->gp_lock        sleeping until a grace period ends (gp_cond); never held
 *                      while a grace period waits for readers
 *   fl->registry_lock  the reader registry; held by the grace period while it
 *                      scans, dropped while it sleeps
 *   fl->cb_lock        the list of call_rcu queues, barrier and throttle waits
 * No lock is held while callbacks run.
 */
#ifndef RCU_INTERNAL_H
#define RCU_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "rcu/rcu_defs.h"
#include "rcu/srcu.h"

/* A singly linked list of callbacks with a tail pointer. */
struct rcu_cblist {
	struct rcu_head *head;
	struct rcu_head **tailp;
	unsigned long n;
};

/*
 * One registered thread's call_rcu queue (per flavor).  Two lists: the
 * producer (the owner thread) appends to list[cur]; the callback thread flips
 * cur, waits one grace period, after which every append to list[!cur] is
 * complete and visible (each append happens inside the producer's read-side
 * section, or before its next quiescent state), steals list[!cur] into
 * `waiting`, and runs `waiting` after the next grace period.  So the fast
 * path needs no atomic read-modify-write and no fence; a callback runs after
 * at most two grace periods, one batch per grace period under load.
 */
struct rcu_cbq {
	/* Written by the callback thread (release) after it reset list[!new cur];
	 * read by the producer (acquire) before each append. */
	_Atomic unsigned int cur;
	/* list[cur]: producer only.  list[!cur]: callback thread only, after a
	 * grace period following the flip. */
	struct rcu_cblist list[2];
	/* Producer only writes (relaxed store, no RMW); anyone reads. */
	_Atomic unsigned long queued;
	char pad0[64];
	/* Callback thread only writes (release, after the callbacks ran);
	 * rcu_barrier() and the throttle read it (acquire). */
	_Atomic unsigned long invoked;
	/* Callback thread only. */
	unsigned long taken;                 /* callbacks stolen so far */
	struct rcu_cblist waiting;           /* stolen, run after the next grace period */
	/* fl->cb_lock. */
	struct rcu_cbq *next;
	bool dead;                           /* owner unregistered */
};

struct rcu_flavor;

struct rcu_flavor_ops {
	/* Run the flavor's grace period proper (counter flips and reader waits).
	 * Called with registry_lock held. */
	void (*gp)(struct rcu_flavor *fl);
	/* For the callback thread: become a reader, go offline/online. */
	void (*register_thread)(void);
	void (*offline)(void);
	void (*online)(void);
	void (*quiescent)(void);
	struct rcu_cbq *(*self_cbq)(void);
};

struct rcu_flavor {
	const char *name;
	const struct rcu_flavor_ops *ops;
	_Atomic int *gp_futex;          /* the flavor's gp.futex word */
	/* true when readers fence between their ctr store and their futex check
	 * (QSBR); false when they rely on membarrier from the grace period (memb). */
	bool readers_fence;

	pthread_mutex_t gp_lock;
	pthread_cond_t gp_cond;         /* broadcast when a grace period ends */
	_Atomic bool gp_running;        /* CAS to become the runner (core_synchronize) */
	_Atomic int gp_waiters;         /* callers about to sleep or sleeping on gp_cond */
	/* Grace-period sequence: odd while one runs.  Written only by the thread
	 * running the grace period (release at the end); read by anyone. */
	_Atomic unsigned long gp_seq;

	pthread_mutex_t registry_lock;
	struct rcu_reader_link registry;    /* circular list head; registry_lock */
	unsigned long nreaders;             /* registry_lock */
	pthread_key_t exit_key;             /* unregisters threads that exit registered */

	pthread_mutex_t cb_lock;
	pthread_cond_t cb_cond;             /* broadcast after each callback batch */
	struct rcu_cbq *cbqs;               /* head insertions under cb_lock; only the
					     * callback thread unlinks */
	bool cb_started;                    /* cb_lock: a thread runs (or is starting) */
	/* rcu_core_stop(): cb_stop asks the thread to end once idle; cb_stopped
	 * says it has been joined (and cb_sleeping is left at 1, so the next
	 * enqueue or poll goes through rcu_core_cb_wake(), which restarts it). */
	_Atomic bool cb_stop;
	_Atomic bool cb_stopped;
	pthread_t cb_thread;
	struct rcu_cbq *cb_self;            /* cb_lock: the callback thread's own queue */
	int barrier_active;                 /* cb_lock: keeps dead queues alive */
	_Atomic int cb_sleeping;            /* 1 while the callback thread sleeps (futex word) */
	/* 1 while the callback thread paces itself between two grace periods
	 * (futex word): rcu_barrier() and throttled updaters cut it short
	 * (rcu_core_cb_kick()); call_rcu() and start_poll do not. */
	_Atomic int cb_pacing;
	_Atomic unsigned long gp_requested; /* cookie wanted by start_poll */
	_Atomic unsigned long cb_limit;     /* per-thread backlog bound, 0 = none */

	/* Statistics: relaxed atomics, written by whoever does the work. */
	_Atomic unsigned long st_gp_completed;
	_Atomic unsigned long long st_gp_last_ns, st_gp_max_ns; /* in ticks (rcu_core.c) */
	_Atomic unsigned long st_cb_invoked, st_cb_pending_hwm, st_cb_throttled, st_cb_batches;
	_Atomic unsigned long st_stalls;
};

extern struct rcu_flavor rcu_qsbr_flavor, rcu_memb_flavor;

/* rcu_core.c */
void rcu_core_init_flavor(struct rcu_flavor *fl);
void rcu_core_register(struct rcu_flavor *fl, struct rcu_reader_link *link);
void rcu_core_unregister(struct rcu_flavor *fl, struct rcu_reader_link *link);
void rcu_core_synchronize(struct rcu_flavor *fl);
void rcu_core_wait_for_readers(struct rcu_flavor *fl,
			       bool (*active)(struct rcu_flavor *, struct rcu_reader_link *));
void rcu_core_barrier(struct rcu_flavor *fl);
unsigned long rcu_core_get_state(struct rcu_flavor *fl);
unsigned long rcu_core_start_poll(struct rcu_flavor *fl);
int rcu_core_poll_state(struct rcu_flavor *fl, unsigned long cookie);
void rcu_core_get_stats(struct rcu_flavor *fl, struct rcu_stats *st);
void rcu_core_cb_wake(struct rcu_flavor *fl);
void rcu_core_stop(struct rcu_flavor *fl);
void rcu_core_fork_prepare(struct rcu_flavor *fl);
void rcu_core_fork_parent(struct rcu_flavor *fl);
void rcu_core_fork_child(struct rcu_flavor *fl, struct rcu_reader_link *self);
void rcu_core_throttle(struct rcu_flavor *fl, struct rcu_cbq *q);
void rcu_heavy_mb(void);
void rcu_debug_srcu_sync_begin(struct srcu_struct *ss);
void rcu_debug_srcu_sync_end(struct srcu_struct *ss);
void rcu_qsbr_exit_unregister(void);
void rcu_memb_exit_unregister(void);
void rcu_futex_wake(_Atomic int *uaddr, int n);
void rcu_wake_up_gp(_Atomic int *futex);
unsigned long long rcu_now_ns(void);

/*
 * BROKEN_GP=1 builds (`make BROKEN_GP=1`, build/<variant>-brokengp/; run by
 * tests/rcu/broken_gp.sh and tests/hashtable/broken_gp.sh): every grace
 * period a user can wait for ends at once, the way the kernel's
 * rcutorture "busted" flavor does it.  synchronize_rcu() and
 * synchronize_srcu() return at once, a polled cookie is done as soon as it
 * is taken, and call_rcu() invokes its callback before it returns
 * (rcu_core_call_broken()), so the srcu_reclaim chain (call_rcu, then
 * synchronize_srcu) frees at once too.  Every reclamation path the tortures
 * exercise then frees while readers may still hold the object, and the
 * tortures must say so.  Never set in a real build.
 */
#if defined(RCU_BROKEN_GP) && RCU_BROKEN_GP
#define RCU_GP_BROKEN 1
#else
#define RCU_GP_BROKEN 0
#endif
/* BROKEN_GP builds only: run @func(@head) now and count it as invoked. */
void rcu_core_call_broken(struct rcu_flavor *fl, struct rcu_head *head, rcu_callback_t func);

/*
 * rcu_cbq_enqueue() - the call_rcu fast path shared by both flavors.
 * Context: the owner thread of q, inside a read-side section of fl's flavor
 * (QSBR: online).  No atomic read-modify-write, no fence when membarrier is
 * available.  Return: true when the owner's backlog is over its limit.
 */
static inline bool rcu_cbq_enqueue(struct rcu_flavor *fl, struct rcu_cbq *q,
				   struct rcu_head *head, rcu_callback_t func)
{
	/* Acquire: the callback thread reset list[cur] before publishing cur. */
	unsigned int c = atomic_load_explicit(&q->cur, memory_order_acquire);
	struct rcu_cblist *l = &q->list[c];
	unsigned long n = atomic_load_explicit(&q->queued, memory_order_relaxed) + 1;
	unsigned long limit;

	head->func = func;
	head->next = NULL;
	*l->tailp = head;
	l->tailp = &head->next;
	l->n++;
	atomic_store_explicit(&q->queued, n, memory_order_relaxed);
	/* Asymmetric Dekker with the sleeping callback thread: our append vs its
	 * cb_sleeping store; its half is rcu_heavy_mb() in cb_sleep(). */
	rcu_light_mb();
	if (RCU_UNLIKELY(atomic_load_explicit(&fl->cb_sleeping, memory_order_relaxed)))
		rcu_core_cb_wake(fl);
	limit = atomic_load_explicit(&fl->cb_limit, memory_order_relaxed);
	return limit && n - atomic_load_explicit(&q->invoked, memory_order_relaxed) > limit;
}

#endif /* RCU_INTERNAL_H */
