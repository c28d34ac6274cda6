/*
 * rcu_memb.c - the memb flavor's update side: registration, the two-phase
 * grace period driven by membarrier(2), and the public wrappers around
 * rcu_core.c.  Read side: rcu/rcu_memb.h.
 *
 * Grace period (memb_gp, registry lock held):
 *   1. heavy fence (membarrier): every reader's earlier ctr store is visible
 *      and its section's accesses are ordered as if it had fenced;
 *   2. wait for readers still in the phase before the current one (they
 *      loaded the counter before the previous flip);
 *   3. flip the phase bit of rcu_memb_gp.ctr;
 *   4. wait for readers in the old phase (they began before the flip);
 *      each left with a release store that the scan reads with acquire, so
 *      their sections happen before the caller's frees.
 * Two waits because a reader may load the counter, be delayed, and store it
 * after a flip; the next grace period's first wait catches it.
 *
 * Tortured by tests/rcu/test_torture.c (RCU_FLAVOR_MEMB), with and without
 * membarrier (RCU_NO_MEMBARRIER=1).
 */
#include <stdbool.h>

#include "rcu/rcu.h"
#include "rcu/rcu_internal.h"

struct rcu_memb_gp rcu_memb_gp = { .ctr = RCU_MEMB_COUNT };
_Thread_local struct rcu_memb_reader rcu_memb_reader_tls
	__attribute__((tls_model("initial-exec")));

static bool memb_active_old(struct rcu_flavor *fl, struct rcu_reader_link *l)
{
	struct rcu_memb_reader *r = container_of(l, struct rcu_memb_reader, link);
	/* Acquire: pairs with the release store in rcu_memb_read_unlock(). */
	unsigned long v = atomic_load_explicit(&r->ctr, memory_order_acquire);

	(void)fl;
	return (v & RCU_MEMB_NEST_MASK) &&
	       ((v ^ atomic_load_explicit(&rcu_memb_gp.ctr, memory_order_relaxed)) &
		RCU_MEMB_PHASE);
}

static void memb_gp(struct rcu_flavor *fl)
{
	unsigned long c;

	rcu_heavy_mb();
	rcu_core_wait_for_readers(fl, memb_active_old);
	rcu_smp_mb();
	c = atomic_load_explicit(&rcu_memb_gp.ctr, memory_order_relaxed);
	atomic_store_explicit(&rcu_memb_gp.ctr, c ^ RCU_MEMB_PHASE, memory_order_relaxed);
	rcu_smp_mb();
	rcu_core_wait_for_readers(fl, memb_active_old);
	/* No second membarrier: a reader leaves with a release store
	 * (rcu_memb_read_unlock) and the scan reads it with acquire, so its
	 * section happens before the caller's frees.  (urcu's readers store
	 * relaxed and need the membarrier here; ours pay nothing for release
	 * on x86.) */
}

static void nop(void)
{
}

static struct rcu_cbq *memb_self_cbq(void)
{
	return rcu_memb_reader_tls.link.cbq;
}

static const struct rcu_flavor_ops memb_ops = {
	.gp = memb_gp,
	.register_thread = rcu_memb_register_thread,
	.offline = nop,
	.online = nop,
	.quiescent = nop,
	.self_cbq = memb_self_cbq,
};

struct rcu_flavor rcu_memb_flavor = {
	.name = "memb",
	.ops = &memb_ops,
	.gp_futex = &rcu_memb_gp.futex,
	.readers_fence = false,
};

__attribute__((constructor)) static void memb_init(void)
{
	rcu_core_init_flavor(&rcu_memb_flavor);
}

void rcu_memb_die_unbalanced(void)
{
	rcu_die("rcu_memb_read_unlock() without a matching rcu_memb_read_lock()");
}

void rcu_memb_die_unregistered(void)
{
	rcu_die("rcu_memb_read_lock() from a thread not registered with the memb flavor "
		"(call rcu_memb_register_thread() first)");
}

void rcu_memb_wake_up_gp(void)
{
	rcu_wake_up_gp(&rcu_memb_gp.futex);
}

static void not_in_section(const char *fn)
{
	if (RCU_UNLIKELY(rcu_memb_read_ongoing()))
		rcu_die("%s() inside a memb read-side critical section: it would wait for itself",
			fn);
}

void rcu_memb_register_thread(void)
{
	struct rcu_memb_reader *r = &rcu_memb_reader_tls;

	if (r->link.registered)
		rcu_die("thread registered twice with the memb flavor");
	atomic_store_explicit(&r->ctr, 0, memory_order_relaxed);
	rcu_core_register(&rcu_memb_flavor, &r->link);
}

void rcu_memb_unregister_thread(void)
{
	struct rcu_memb_reader *r = &rcu_memb_reader_tls;

	if (!r->link.registered)
		rcu_die("rcu_memb_unregister_thread() from a thread not registered");
	not_in_section(__func__);
	rcu_core_unregister(&rcu_memb_flavor, &r->link);
}

void rcu_memb_exit_unregister(void)
{
	struct rcu_memb_reader *r = &rcu_memb_reader_tls;

	if (r->link.registered) {
		atomic_store_explicit(&r->ctr, 0, memory_order_release);
		rcu_core_unregister(&rcu_memb_flavor, &r->link);
	}
}

void rcu_memb_synchronize_rcu(void)
{
	not_in_section(__func__);
	rcu_core_synchronize(&rcu_memb_flavor);
}

void rcu_memb_call_rcu(struct rcu_head *head, rcu_callback_t func)
{
	struct rcu_memb_reader *r = &rcu_memb_reader_tls;
	struct rcu_cbq *q = r->link.cbq;
	bool nested, over;

	if (RCU_UNLIKELY(!q))
		rcu_die("call_rcu() from a thread not registered with the memb flavor");
	if (RCU_GP_BROKEN) { /* BROKEN_GP=1: the grace period "ends" at once */
		rcu_core_call_broken(&rcu_memb_flavor, head, func);
		return;
	}
	nested = rcu_memb_read_ongoing();
	/* The append is a read-side section: the callback thread's grace period
	 * after its flip waits for it (struct rcu_cbq). */
	rcu_memb_read_lock();
	over = rcu_cbq_enqueue(&rcu_memb_flavor, q, head, func);
	rcu_memb_read_unlock();
	if (RCU_UNLIKELY(over) && !nested)
		rcu_core_throttle(&rcu_memb_flavor, q);
}

void rcu_memb_rcu_barrier(void)
{
	not_in_section(__func__);
	rcu_core_barrier(&rcu_memb_flavor);
}

void rcu_memb_shutdown(void)
{
	not_in_section(__func__);
	rcu_core_stop(&rcu_memb_flavor);
}

void rcu_memb_before_fork(void)
{
	not_in_section(__func__);
	rcu_core_fork_prepare(&rcu_memb_flavor);
}

void rcu_memb_after_fork_parent(void)
{
	rcu_core_fork_parent(&rcu_memb_flavor);
}

void rcu_memb_after_fork_child(void)
{
	struct rcu_reader_link *self =
	    rcu_memb_reader_tls.link.registered ? &rcu_memb_reader_tls.link : NULL;

	rcu_core_fork_child(&rcu_memb_flavor, self);
}

unsigned long rcu_memb_get_state_synchronize_rcu(void)
{
	return rcu_core_get_state(&rcu_memb_flavor);
}

unsigned long rcu_memb_start_poll_synchronize_rcu(void)
{
	return rcu_core_start_poll(&rcu_memb_flavor);
}

int rcu_memb_poll_state_synchronize_rcu(unsigned long cookie)
{
	return rcu_core_poll_state(&rcu_memb_flavor, cookie);
}

void rcu_memb_set_callback_limit(unsigned long limit)
{
	atomic_store(&rcu_memb_flavor.cb_limit, limit);
}

void rcu_memb_get_stats(struct rcu_stats *st)
{
	rcu_core_get_stats(&rcu_memb_flavor, st);
}
