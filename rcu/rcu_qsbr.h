/*
 * rcu_qsbr.h - the QSBR flavor (quiescent-state-based reclamation), rcukv's
 * analog of RCU Classic / RCU Sched.
 *
 * Readers pay nothing: rcu_qsbr_read_lock()/unlock() compile to nothing.
 * Instead each registered thread says, now and then, "I hold no RCU reference"
 * by calling rcu_qsbr_quiescent_state(), and goes offline around anything that
 * blocks (epoll_wait, a lock, sleep).  A grace period ends once every online
 * registered thread has reported a quiescent state after it began.
 *
 * State per thread: rcu_qsbr_reader_tls.ctr, 0 while offline, otherwise the
 * value of rcu_qsbr_gp.ctr when the thread last reported (or an older value,
 * which only makes grace periods wait for its next report: call_rcu() sets
 * one to route that report through the slow path, where an updater over its
 * callback limit waits).  Written only by the
 * owner (release), read by the grace-period code (acquire).
 *
 * Contract: between two quiescent states a thread may hold RCU references; it
 * must not hold one across rcu_qsbr_quiescent_state(), rcu_qsbr_thread_offline()
 * or rcu_qsbr_synchronize_rcu().  A thread that stays online without reporting
 * stalls every grace period (and is named by the stall warning).
 *
 * Tortured by tests/rcu/test_torture.c built with RCU_FLAVOR_QSBR.
 */
#ifndef RCU_QSBR_H
#define RCU_QSBR_H

#include "rcu/rcu_defs.h"

struct rcu_qsbr_reader {
	_Atomic unsigned long ctr;      /* see above */
	unsigned int nest;              /* read_lock nesting, checked by RCU_DEBUG */
	struct rcu_reader_link link;
};

struct rcu_qsbr_gp {
	_Atomic unsigned long ctr;      /* grace-period counter, +2 per grace period; gp lock */
	_Atomic int futex;              /* -1 while the grace period sleeps for readers */
} __attribute__((aligned(64)));

extern struct rcu_qsbr_gp rcu_qsbr_gp;
extern _Thread_local struct rcu_qsbr_reader rcu_qsbr_reader_tls
	__attribute__((tls_model("initial-exec")));

void rcu_qsbr_quiescent_state_slow(unsigned long gp_ctr);

/**
 * rcu_qsbr_register_thread() - make the calling thread a QSBR reader, online.
 * Context: any thread not yet registered with this flavor.  May block briefly on
 * the registry lock.  A thread that exits while registered is unregistered for it.
 */
void rcu_qsbr_register_thread(void);

/**
 * rcu_qsbr_unregister_thread() - leave the registry; pending call_rcu()
 * callbacks of this thread still run.
 * Context: registered thread, holding no RCU reference.
 */
void rcu_qsbr_unregister_thread(void);

/**
 * rcu_qsbr_quiescent_state() - report that this thread holds no RCU reference.
 * Context: registered, online thread.  Costs a load and a compare unless a
 * grace period is waiting for this thread (then a fence and perhaps a wake-up)
 * or its call_rcu() backlog is over its limit (then it waits, offline, until
 * the backlog halves).
 */
static inline void rcu_qsbr_quiescent_state(void)
{
	struct rcu_qsbr_reader *r = &rcu_qsbr_reader_tls;
	unsigned long gp = atomic_load_explicit(&rcu_qsbr_gp.ctr, memory_order_relaxed);

	if (RCU_LIKELY(gp == atomic_load_explicit(&r->ctr, memory_order_relaxed)))
		return;
	rcu_qsbr_quiescent_state_slow(gp);
}

/**
 * rcu_qsbr_thread_offline() - extended quiescent state: grace periods stop
 * waiting for this thread until rcu_qsbr_thread_online().
 * Context: registered, online thread, holding no RCU reference; call it before
 * blocking.
 */
void rcu_qsbr_thread_offline(void);

/**
 * rcu_qsbr_thread_online() - end the extended quiescent state.
 * Context: registered, offline thread.
 */
void rcu_qsbr_thread_online(void);

/* Read-side markers cost nothing under QSBR; they document the section and
 * let the RCU_DEBUG build check nesting. */
#if defined(RCU_DEBUG) && RCU_DEBUG
void rcu_qsbr_read_lock(void);
void rcu_qsbr_read_unlock(void);
#else
static inline void rcu_qsbr_read_lock(void) { }
static inline void rcu_qsbr_read_unlock(void) { }
#endif

/**
 * rcu_qsbr_synchronize_rcu() - wait for a full grace period.
 * Context: any thread; if it is a registered online QSBR thread it goes offline
 * for the wait (so it must hold no RCU reference).  Blocks.  Concurrent callers
 * share grace periods.
 */
void rcu_qsbr_synchronize_rcu(void);

/**
 * rcu_qsbr_call_rcu() - run func(head) after a grace period, on the callback thread.
 * @head: embedded in the object to reclaim; owned by RCU until func runs.
 * @func: callback; runs on the flavor's callback thread, which is an online
 *        QSBR reader while it runs callbacks (so callbacks may call_rcu()).
 * Context: registered thread (online, or offline: it is brought online for the
 * enqueue).  Never blocks, never allocates; the fast path uses no atomic
 * read-modify-write.
 */
void rcu_qsbr_call_rcu(struct rcu_head *head, rcu_callback_t func);

/**
 * rcu_qsbr_rcu_barrier() - wait until every callback queued (by any thread)
 * before this call has run, and every callback those callbacks queued.
 * Context: any thread but the callback thread; goes offline like
 * synchronize_rcu().  Blocks.
 */
void rcu_qsbr_rcu_barrier(void);

/**
 * rcu_qsbr_shutdown() - rcu_qsbr_rcu_barrier(), then end the flavor's
 * callback thread and join it, for a clean end of program (leak checkers
 * then see no thread of the library running).  Work queued afterwards
 * (call_rcu(), a polled grace period, a new registration) starts a new
 * callback thread, so a late call is slower, never lost.
 * Context: as rcu_qsbr_rcu_barrier(); one caller at a time.  Blocks.
 */
void rcu_qsbr_shutdown(void);

/**
 * rcu_qsbr_get_state_synchronize_rcu() - cookie for polled grace periods.
 * Return: a value that rcu_qsbr_poll_state_synchronize_rcu() reports complete
 * once a full grace period has elapsed after this call.  Does not start one.
 * Context: any thread.
 */
unsigned long rcu_qsbr_get_state_synchronize_rcu(void);

/**
 * rcu_qsbr_start_poll_synchronize_rcu() - as get_state, and ask the callback
 * thread to run the grace period the cookie needs.
 */
unsigned long rcu_qsbr_start_poll_synchronize_rcu(void);

/**
 * rcu_qsbr_poll_state_synchronize_rcu() - has the cookie's grace period ended?
 * One acquire load.  Return: non-zero once it has.
 */
int rcu_qsbr_poll_state_synchronize_rcu(unsigned long cookie);

/* Pending-callback bound per thread (default 100000): past it the thread waits
 * (offline) at its next quiescent state until the backlog halves. 0 = unbounded. */
void rcu_qsbr_set_callback_limit(unsigned long limit);
void rcu_qsbr_get_stats(struct rcu_stats *st);

#endif /* RCU_QSBR_H */
