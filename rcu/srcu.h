/*
 * srcu.h - sleepable RCU: per-domain read-side sections that may block and
 * sleep for seconds, with QRCU's fast grace period when nobody reads.
 *
 * A domain (struct srcu_struct) has two reader counters.  The active one,
 * ctr[completed & 1], carries a base of 1; a reader increments the active
 * counter unless it is zero (a drained counter) and remembers which one it
 * took; srcu_read_unlock() decrements it.  synchronize_srcu():
 *   fast path: if ctr[active] + ctr[other] <= 1 (read in that order, after a
 *     full fence) no reader that began before the call is still inside, and
 *     it returns: one fence and three loads, no sleeping, no other thread;
 *   slow path: move the base to the other counter (increment it, advance
 *     `completed`, decrement the old one), then sleep until the old counter
 *     drains to zero; the reader that drains it wakes the waiter (futex).
 * Concurrent synchronize_srcu() callers on one domain share grace periods
 * (one flips and waits, the others wait for the sequence to pass their
 * snapshot); domains are independent.  Readers need not be registered with
 * any RCU flavor.  The reader counters are shared atomics: SRCU readers are
 * the slow scans (KEYS, SCAN, snapshots), not the per-request path.
 *
 * Flavor-safe reclamation (struct srcu_reclaim): objects reachable both by a
 * flavor's fast readers and by a domain's sleeping readers are freed only
 * after a grace period of each: call_rcu() of the flavor first, then the
 * callback pushes the object to the reclaimer, whose thread waits one SRCU
 * grace period for the whole batch it collected and then frees it.  A long
 * scan delays only that thread, never the flavor's callback thread (so
 * writers are not throttled by a scan).
 *
 * Debug build (RCU_DEBUG=1, `make DEBUG_RCU=1`): srcu_read_lock()/unlock()
 * track the domains each thread holds, and synchronize_srcu() aborts on
 * Quick Quiz 6's self-deadlock and on a cycle of threads each syncing a
 * domain another holds.  All builds abort on an index that is neither 0 nor
 * 1 and on a counter driven below zero.
 *
 * Tortured by tests/rcu/test_srcu.c.
 */
#ifndef RCU_SRCU_H
#define RCU_SRCU_H

#include <pthread.h>
#include <stdbool.h>

#include "rcu/rcu_defs.h"

struct srcu_struct {
	/* Reader counters; the active one carries a base of 1 (see above).
	 * Readers: CAS increment (seq_cst), fetch_sub (seq_cst).  The grace
	 * period moves the base under gp_running. */
	_Atomic int ctr[2];
	/* Low bit: the active counter.  Advanced only by the grace period. */
	_Atomic unsigned long completed;
	pthread_mutex_t lock;           /* gp_running, gp_cond */
	pthread_cond_t gp_cond;
	bool gp_running;
	/* Even when idle, odd while a flip-and-drain runs; written by its runner. */
	_Atomic unsigned long gp_seq;
	/* synchronize_srcu() paths taken; st_fast is a racy count (no RMW). */
	_Atomic unsigned long st_fast, st_slow;
	const char *name;
};

/**
 * init_srcu_struct() - initialise a domain.  Return: 0, or -errno.
 * Context: any thread; the domain must not be in use.
 */
int init_srcu_struct(struct srcu_struct *ss);

/**
 * cleanup_srcu_struct() - destroy a domain.
 * Context: no reader inside and no synchronize_srcu() running; aborts if a
 * reader is still inside (a use-after-free in waiting).
 */
void cleanup_srcu_struct(struct srcu_struct *ss);

__attribute__((noreturn)) void srcu_die_bad_unlock(struct srcu_struct *ss, int idx);
void srcu_wake_drained(struct srcu_struct *ss, int idx);

static inline int srcu_read_lock_inline(struct srcu_struct *ss)
{
	for (;;) {
		int idx = (int)(atomic_load_explicit(&ss->completed, memory_order_acquire) & 1);
		int v = atomic_load_explicit(&ss->ctr[idx], memory_order_relaxed);

		/* Increment unless zero: a zero counter was drained by a grace
		 * period that has moved on; reread `completed`.  Seq_cst: the
		 * increment is ordered before the section's loads; pairs with
		 * the fences in synchronize_srcu(). */
		while (v != 0) {
			if (atomic_compare_exchange_weak_explicit(&ss->ctr[idx], &v, v + 1,
								  memory_order_seq_cst,
								  memory_order_relaxed))
				return idx;
		}
	}
}

static inline void srcu_read_unlock_inline(struct srcu_struct *ss, int idx)
{
	int old;

	if (RCU_UNLIKELY((unsigned int)idx > 1))
		srcu_die_bad_unlock(ss, idx);
	/* Seq_cst: the section's accesses happen before the decrement. */
	old = atomic_fetch_sub_explicit(&ss->ctr[idx], 1, memory_order_seq_cst);
	if (RCU_UNLIKELY(old <= 1)) {
		if (old <= 0)
			srcu_die_bad_unlock(ss, idx);
		srcu_wake_drained(ss, idx);
	}
}

#if defined(RCU_DEBUG) && RCU_DEBUG
/* Checked forms: track the domains this thread holds (rcu_debug.c). */
int srcu_read_lock_debug(struct srcu_struct *ss);
void srcu_read_unlock_debug(struct srcu_struct *ss, int idx);
int srcu_read_held(const struct srcu_struct *ss);
#define srcu_read_lock(ss) srcu_read_lock_debug(ss)
#define srcu_read_unlock(ss, idx) srcu_read_unlock_debug((ss), (idx))
/* The raw load: an SRCU reader need hold no section of the unit's flavor. */
#define srcu_dereference(p, ss) \
	(rcu_debug_check(srcu_read_held(ss), "srcu_dereference", #p, (ss)->name), \
	 __atomic_load_n(&(p), __ATOMIC_CONSUME))
#else
/**
 * srcu_read_lock() - enter a read-side section of ss; may be held across
 * sleeps.  Return: the index to give back to srcu_read_unlock().
 * Context: any thread, registered with an RCU flavor or not.
 */
#define srcu_read_lock(ss) srcu_read_lock_inline(ss)
/**
 * srcu_read_unlock() - leave the section entered with index idx.
 * Context: the thread that called srcu_read_lock(ss) (a different thread
 * works too, as in the kernel, but the debug build checks ownership).
 */
#define srcu_read_unlock(ss, idx) srcu_read_unlock_inline((ss), (idx))
#define srcu_dereference(p, ss) ((void)(ss), rcu_dereference(p))
#endif

/**
 * synchronize_srcu() - wait until every ss reader section that began before
 * the call has ended.  No reader: returns after one fence and three loads.
 * Context: any thread, not inside a read-side section of ss (self-deadlock,
 * Quick Quiz 6; the debug build aborts).  May sleep.
 */
void synchronize_srcu(struct srcu_struct *ss);

/**
 * srcu_readers_active() - may a reader of ss be inside a section right now?
 * Return: 0 when no section that began before the call is still open (then a
 * grace period of ss has, in effect, already passed for earlier removals);
 * non-zero otherwise.  The fast path of synchronize_srcu(), without waiting.
 * Context: any thread.
 */
int srcu_readers_active(struct srcu_struct *ss);

/* --- flavor-safe reclamation --------------------------------------------- */

/* Reclaimers per process: rcukv-server's tables have one each (its
 * `databases`, up to 240) and tests add a few. */
#define SRCU_RECLAIM_MAX 250
/* Objects past the flavor's grace period that may wait for a reclaimer's
 * thread before the flavor's callback thread waits for it (bounded memory
 * under a write flood). */
#define SRCU_RECLAIM_BACKLOG 1024

struct srcu_reclaim;

/**
 * srcu_reclaim_new() - a reclaimer that runs func(head) for each deferred
 * object after a grace period of the flavor (given by its call_rcu and
 * rcu_barrier) and then of ss.  Its one thread starts with the first object
 * that has passed the flavor's grace period (a reclaimer never used costs
 * no thread).
 * @name: thread name suffix, for ps/top and stall messages.
 * Return: the reclaimer, or NULL when SRCU_RECLAIM_MAX exist or memory is short.
 * Context: any thread.  Use srcu_reclaim_new_qsbr()/_memb() for the flavor.
 */
struct srcu_reclaim *srcu_reclaim_new(struct srcu_struct *ss, rcu_callback_t func,
				      void (*flavor_call_rcu)(struct rcu_head *, rcu_callback_t),
				      void (*flavor_barrier)(void), const char *name);
#define srcu_reclaim_new_qsbr(ss, func, name) \
	srcu_reclaim_new((ss), (func), rcu_qsbr_call_rcu, rcu_qsbr_rcu_barrier, (name))
#define srcu_reclaim_new_memb(ss, func, name) \
	srcu_reclaim_new((ss), (func), rcu_memb_call_rcu, rcu_memb_rcu_barrier, (name))

/**
 * srcu_reclaim_defer() - free head's object (through func) once no fast
 * reader and no ss reader can still see it.
 * Context: a thread registered with the reclaimer's flavor (it calls its
 * call_rcu()); never blocks, never allocates.
 */
void srcu_reclaim_defer(struct srcu_reclaim *r, struct rcu_head *head);

/**
 * srcu_reclaim_barrier() - wait until every object deferred before the call
 * has been freed.  Context: as the flavor's rcu_barrier(), and not inside an
 * ss read-side section.  Blocks.
 */
void srcu_reclaim_barrier(struct srcu_reclaim *r);

/* srcu_reclaim_free() - barrier, stop the thread, free r. */
void srcu_reclaim_free(struct srcu_reclaim *r);

/*
 * fork() without exec (srcu.c): srcu_reclaim_fork_prepare() after the
 * flavor's before-fork hook (its callback thread stopped), _parent() or
 * _child() after the fork; the child gets a new reclaimer thread (objects
 * the old one was freeing at the fork leak in the child).  Return (child):
 * 0 or -errno.
 */
void srcu_reclaim_fork_prepare(struct srcu_reclaim *r);
void srcu_reclaim_fork_parent(struct srcu_reclaim *r);
int srcu_reclaim_fork_child(struct srcu_reclaim *r);
/* srcu_fork_child_reset() - in a fork child whose only thread is in no ss
 * section: forget the readers the parent's other threads had (they do not
 * exist here), so grace periods of ss end. */
void srcu_fork_child_reset(struct srcu_struct *ss);

struct srcu_reclaim_stats {
	unsigned long deferred;         /* srcu_reclaim_defer() calls */
	unsigned long waiting;          /* past the flavor grace period, waiting for SRCU */
	unsigned long freed;
	unsigned long batches;          /* SRCU grace periods the reclaimer waited for */
};
void srcu_reclaim_get_stats(struct srcu_reclaim *r, struct srcu_reclaim_stats *st);

#endif /* RCU_SRCU_H */
