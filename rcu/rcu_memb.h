/*
 * rcu_memb.h - the memb flavor, rcukv's analog of preemptible (realtime) RCU.
 *
 * Readers mark their sections with rcu_memb_read_lock()/unlock(), which nest
 * and cost a few instructions: a load of the grace-period counter and a store
 * to a thread-local word, separated from the section by compiler barriers only.
 * The grace period pays for the missing fences with membarrier(2)
 * (MEMBARRIER_CMD_PRIVATE_EXPEDITED, registered when the library loads); on
 * kernels without it readers use real fences instead (rcu_light_mb()).
 * Readers may be preempted and may block on locks inside a section (that only
 * lengthens grace periods); they must not call synchronize_rcu() inside one.
 *
 * Reader word (rcu_memb_reader_tls.ctr): low half = nesting count, bit
 * RCU_MEMB_PHASE = the grace-period phase seen at the outermost lock.  Written
 * only by the owner; read by the grace-period code (acquire).  The grace
 * period flips the phase and waits twice (urcu's two-phase scheme) so that a
 * reader delayed between loading the counter and storing its word is waited
 * for by the next grace period.
 *
 * Tortured by tests/rcu/test_torture.c built with RCU_FLAVOR_MEMB.
 */
#ifndef RCU_MEMB_H
#define RCU_MEMB_H

#include "rcu/rcu_defs.h"

#define RCU_MEMB_COUNT 1UL
#define RCU_MEMB_PHASE (1UL << (sizeof(unsigned long) * 4))
#define RCU_MEMB_NEST_MASK (RCU_MEMB_PHASE - 1)

struct rcu_memb_reader {
	_Atomic unsigned long ctr;
	struct rcu_reader_link link;
};

struct rcu_memb_gp {
	_Atomic unsigned long ctr;      /* RCU_MEMB_COUNT | phase; flipped under the gp lock */
	_Atomic int futex;              /* -1 while the grace period sleeps for readers */
} __attribute__((aligned(64)));

extern struct rcu_memb_gp rcu_memb_gp;
extern _Thread_local struct rcu_memb_reader rcu_memb_reader_tls
	__attribute__((tls_model("initial-exec")));

__attribute__((noreturn)) void rcu_memb_die_unbalanced(void);
__attribute__((noreturn)) void rcu_memb_die_unregistered(void);
void rcu_memb_wake_up_gp(void);

/* Under TSan the reader's stores are seq_cst / release so that TSan sees the
 * ordering the membarrier() in the grace period really provides. */
#if defined(RCU_TSAN) && RCU_TSAN
#define RCU_MEMB_LOCK_ORDER memory_order_seq_cst
#else
#define RCU_MEMB_LOCK_ORDER memory_order_relaxed
#endif

/**
 * rcu_memb_read_lock() - enter a read-side critical section (nests).
 * Context: thread registered with rcu_memb_register_thread(); aborts otherwise.
 */
static inline void rcu_memb_read_lock(void)
{
	struct rcu_memb_reader *r = &rcu_memb_reader_tls;
	unsigned long tmp = atomic_load_explicit(&r->ctr, memory_order_relaxed);

	if (RCU_LIKELY(!(tmp & RCU_MEMB_NEST_MASK))) {
		if (RCU_UNLIKELY(!r->link.registered))
			rcu_memb_die_unregistered();
		atomic_store_explicit(&r->ctr,
				      atomic_load_explicit(&rcu_memb_gp.ctr, memory_order_relaxed),
				      RCU_MEMB_LOCK_ORDER);
		/* Orders the ctr store before the section's loads; pairs with
		 * rcu_heavy_mb() in memb_wait_for_readers(). */
		rcu_light_mb();
	} else {
		atomic_store_explicit(&r->ctr, tmp + RCU_MEMB_COUNT, memory_order_relaxed);
	}
}

/**
 * rcu_memb_read_unlock() - leave a read-side critical section.
 * Context: inside a section entered by this thread; aborts if there is none.
 */
static inline void rcu_memb_read_unlock(void)
{
	struct rcu_memb_reader *r = &rcu_memb_reader_tls;
	unsigned long tmp = atomic_load_explicit(&r->ctr, memory_order_relaxed);

	if (RCU_LIKELY((tmp & RCU_MEMB_NEST_MASK) == RCU_MEMB_COUNT)) {
		/* Orders the section's accesses before the ctr store; pairs with
		 * rcu_heavy_mb() in the grace period. */
		rcu_light_mb();
		atomic_store_explicit(&r->ctr, tmp - RCU_MEMB_COUNT, memory_order_release);
		/* Orders the ctr store before the futex check (store-load). */
		rcu_light_mb();
		if (RCU_UNLIKELY(atomic_load_explicit(&rcu_memb_gp.futex,
						      memory_order_relaxed) == -1))
			rcu_memb_wake_up_gp();
	} else if (RCU_LIKELY(tmp & RCU_MEMB_NEST_MASK)) {
		atomic_store_explicit(&r->ctr, tmp - RCU_MEMB_COUNT, memory_order_relaxed);
	} else {
		rcu_memb_die_unbalanced();
	}
}

/* rcu_memb_read_ongoing() - non-zero inside a read-side section. */
static inline int rcu_memb_read_ongoing(void)
{
	return (atomic_load_explicit(&rcu_memb_reader_tls.ctr, memory_order_relaxed) &
		RCU_MEMB_NEST_MASK) != 0;
}

/**
 * rcu_memb_register_thread() - make the calling thread a memb reader.
 * Context: any thread not yet registered with this flavor.  A thread that exits
 * while registered is unregistered for it.
 */
void rcu_memb_register_thread(void);
/* rcu_memb_unregister_thread() - Context: registered, outside any section. */
void rcu_memb_unregister_thread(void);

/**
 * rcu_memb_synchronize_rcu() - wait for every read-side section that began
 * before the call to end.  Context: any thread, outside any read-side section
 * (aborts if called inside one: it would wait for itself).  Blocks.
 * Concurrent callers share grace periods.
 */
void rcu_memb_synchronize_rcu(void);

/**
 * rcu_memb_call_rcu() - run func(head) after a grace period on the callback thread.
 * Context: registered thread, inside or outside a read-side section.  Never
 * allocates; no atomic read-modify-write on the fast path.  Outside a section
 * it waits when this thread's backlog is over its limit (the flood bound).
 */
void rcu_memb_call_rcu(struct rcu_head *head, rcu_callback_t func);

/* rcu_memb_rcu_barrier() - as rcu_qsbr_rcu_barrier(); outside any section. */
void rcu_memb_rcu_barrier(void);
/* rcu_memb_shutdown() - as rcu_qsbr_shutdown(); outside any section. */
void rcu_memb_shutdown(void);
/*
 * fork() without exec (liburcu's call_rcu_before_fork() and friends): call
 * rcu_memb_before_fork() just before fork(), rcu_memb_after_fork_parent() in
 * the parent and rcu_memb_after_fork_child() in the child just after (or
 * register them with pthread_atfork()).  Before: every callback queued so
 * far runs and the callback thread ends (it restarts on demand).  In the
 * child: only the forking thread stays registered; the other readers are
 * forgotten, even one caught inside a read-side section.
 * Context: the forking thread, outside any section (aborts otherwise); one
 * fork at a time.  Blocks for a grace period or two.
 */
void rcu_memb_before_fork(void);
void rcu_memb_after_fork_parent(void);
void rcu_memb_after_fork_child(void);
unsigned long rcu_memb_get_state_synchronize_rcu(void);
unsigned long rcu_memb_start_poll_synchronize_rcu(void);
int rcu_memb_poll_state_synchronize_rcu(unsigned long cookie);
void rcu_memb_set_callback_limit(unsigned long limit);
void rcu_memb_get_stats(struct rcu_stats *st);

/* Memb has no quiescent states or offline periods; these keep code written
 * against the QSBR API building.  They are no-ops. */
static inline void rcu_memb_quiescent_state(void) { }
static inline void rcu_memb_thread_offline(void) { }
static inline void rcu_memb_thread_online(void) { }

#endif /* RCU_MEMB_H */
