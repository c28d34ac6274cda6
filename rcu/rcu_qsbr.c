/*
 * rcu_qsbr.c - the QSBR flavor's update side: registration, quiescent-state
 * slow path, offline/online, the grace period proper, and the public wrappers
 * around rcu_core.c.  Read side and fast path: rcu/rcu_qsbr.h.
 *
 * Grace period (qsbr_gp, registry lock held):
 *   1. fence: the updater's removals are visible before the counter moves;
 *   2. rcu_qsbr_gp.ctr += 2 (never 0, which means offline);
 *   3. fence: the new counter is visible before the scan (store-load);
 *   4. wait until every registered reader's ctr is 0 (offline) or equal to
 *      the new counter (it reported a quiescent state after step 2); the
 *      scan's loads are acquire, pairing with the readers' release stores,
 *      so the caller's frees stay after the readers' sections.
 * A reader's report is: release store of the counter it read, then a fence
 * (its next section's loads stay after the report), then the futex check.
 *
 * Tortured by tests/rcu/test_torture.c (RCU_FLAVOR_QSBR).
 */
#include <stdbool.h>

#include "rcu/rcu.h"
#include "rcu/rcu_internal.h"

#define QSBR_GP_STEP 2UL

struct rcu_qsbr_gp rcu_qsbr_gp = { .ctr = 1 };
_Thread_local struct rcu_qsbr_reader rcu_qsbr_reader_tls
	__attribute__((tls_model("initial-exec")));

static bool qsbr_active(struct rcu_flavor *fl, struct rcu_reader_link *l)
{
	struct rcu_qsbr_reader *r = container_of(l, struct rcu_qsbr_reader, link);
	/* Acquire: pairs with the release store in the reader's report, so the
	 * reader's section happens before whatever follows the grace period. */
	unsigned long v = atomic_load_explicit(&r->ctr, memory_order_acquire);

	(void)fl;
	return v && v != atomic_load_explicit(&rcu_qsbr_gp.ctr, memory_order_relaxed);
}

static void qsbr_gp(struct rcu_flavor *fl)
{
	unsigned long c = atomic_load_explicit(&rcu_qsbr_gp.ctr, memory_order_relaxed);

	rcu_smp_mb();
	atomic_store_explicit(&rcu_qsbr_gp.ctr, c + QSBR_GP_STEP, memory_order_relaxed);
	rcu_smp_mb();
	rcu_core_wait_for_readers(fl, qsbr_active);
	/* No fence here: the scan's acquire loads keep what follows after them. */
}

static struct rcu_cbq *qsbr_self_cbq(void)
{
	return rcu_qsbr_reader_tls.link.cbq;
}

static void qsbr_quiescent(void)
{
	rcu_qsbr_quiescent_state();
}

static const struct rcu_flavor_ops qsbr_ops = {
	.gp = qsbr_gp,
	.register_thread = rcu_qsbr_register_thread,
	.offline = rcu_qsbr_thread_offline,
	.online = rcu_qsbr_thread_online,
	.quiescent = qsbr_quiescent,
	.self_cbq = qsbr_self_cbq,
};

struct rcu_flavor rcu_qsbr_flavor = {
	.name = "qsbr",
	.ops = &qsbr_ops,
	.gp_futex = &rcu_qsbr_gp.futex,
	.readers_fence = true,
};

__attribute__((constructor)) static void qsbr_init(void)
{
	rcu_core_init_flavor(&rcu_qsbr_flavor);
}

static struct rcu_qsbr_reader *registered_self(const char *fn)
{
	struct rcu_qsbr_reader *r = &rcu_qsbr_reader_tls;

	if (RCU_UNLIKELY(!r->link.registered))
		rcu_die("%s() from a thread not registered with the qsbr flavor "
			"(call rcu_qsbr_register_thread() first)", fn);
	return r;
}

void rcu_qsbr_register_thread(void)
{
	struct rcu_qsbr_reader *r = &rcu_qsbr_reader_tls;

	if (r->link.registered)
		rcu_die("thread registered twice with the qsbr flavor");
	rcu_core_register(&rcu_qsbr_flavor, &r->link);
	rcu_qsbr_thread_online();
}

void rcu_qsbr_unregister_thread(void)
{
	struct rcu_qsbr_reader *r = registered_self(__func__);

	if (atomic_load_explicit(&r->ctr, memory_order_relaxed))
		rcu_qsbr_thread_offline();
	rcu_core_unregister(&rcu_qsbr_flavor, &r->link);
}

void rcu_qsbr_exit_unregister(void)
{
	if (rcu_qsbr_reader_tls.link.registered)
		rcu_qsbr_unregister_thread();
}

void rcu_qsbr_quiescent_state_slow(unsigned long gp)
{
	struct rcu_qsbr_reader *r = registered_self("rcu_qsbr_quiescent_state");
	struct rcu_cbq *q = r->link.cbq;
	unsigned long limit;

	if (RCU_UNLIKELY(atomic_load_explicit(&r->ctr, memory_order_relaxed) == 0))
		rcu_die("rcu_qsbr_quiescent_state() while offline (call rcu_qsbr_thread_online())");
	/* Release: this thread's past sections happen before the grace period
	 * sees the report (pairs with the acquire in qsbr_active()). */
	atomic_store_explicit(&r->ctr, gp, memory_order_release);
	/* The report is visible before the next section's loads and before the
	 * futex check (store-load); pairs with the fences in qsbr_gp() and
	 * rcu_core_wait_for_readers(). */
	rcu_smp_mb();
	rcu_wake_up_gp(&rcu_qsbr_gp.futex);

	/* Flood bound: a quiescent state is a safe place to wait. */
	limit = atomic_load_explicit(&rcu_qsbr_flavor.cb_limit, memory_order_relaxed);
	if (limit && atomic_load_explicit(&q->queued, memory_order_relaxed) -
				 atomic_load_explicit(&q->invoked, memory_order_relaxed) > limit) {
		rcu_qsbr_thread_offline();
		rcu_core_throttle(&rcu_qsbr_flavor, q);
		rcu_qsbr_thread_online();
	}
}

void rcu_qsbr_thread_offline(void)
{
	struct rcu_qsbr_reader *r = registered_self(__func__);

	if (RCU_UNLIKELY(atomic_load_explicit(&r->ctr, memory_order_relaxed) == 0))
		rcu_die("rcu_qsbr_thread_offline() on a thread already offline");
	atomic_store_explicit(&r->ctr, 0, memory_order_release);
	rcu_smp_mb();
	rcu_wake_up_gp(&rcu_qsbr_gp.futex);
}

void rcu_qsbr_thread_online(void)
{
	struct rcu_qsbr_reader *r = registered_self(__func__);

	if (RCU_UNLIKELY(atomic_load_explicit(&r->ctr, memory_order_relaxed) != 0))
		rcu_die("rcu_qsbr_thread_online() on a thread already online");
	atomic_store_explicit(&r->ctr, atomic_load_explicit(&rcu_qsbr_gp.ctr, memory_order_relaxed),
			      memory_order_relaxed);
	/* Online before the first section's loads (store-load). */
	rcu_smp_mb();
}

#if defined(RCU_DEBUG) && RCU_DEBUG
void rcu_qsbr_read_lock(void)
{
	rcu_qsbr_reader_tls.nest++;
}

void rcu_qsbr_read_unlock(void)
{
	if (rcu_qsbr_reader_tls.nest == 0)
		rcu_die("rcu_qsbr_read_unlock() without rcu_qsbr_read_lock()");
	rcu_qsbr_reader_tls.nest--;
}
#endif

/* Runs f with this thread offline if it is an online QSBR reader. */
static bool go_offline_for_wait(void)
{
	struct rcu_qsbr_reader *r = &rcu_qsbr_reader_tls;

	if (r->link.registered && atomic_load_explicit(&r->ctr, memory_order_relaxed)) {
		rcu_qsbr_thread_offline();
		return true;
	}
	return false;
}

/* QSBR's read-side markers are free, so only the checker sees them. */
static void qsbr_check_not_reading(const char *fn)
{
#if defined(RCU_DEBUG) && RCU_DEBUG
	if (rcu_qsbr_reader_tls.nest)
		rcu_die("%s() inside a qsbr read-side critical section: it would wait for itself",
			fn);
#else
	(void)fn;
#endif
}

/* Run one of the core's blocking waits offline (an online thread waiting
 * for a grace period would wait for itself), then come back as we were. */
static void qsbr_wait_offline(void (*wait)(struct rcu_flavor *), const char *fn)
{
	bool was_online;

	qsbr_check_not_reading(fn);
	was_online = go_offline_for_wait();
	wait(&rcu_qsbr_flavor);
	if (was_online)
		rcu_qsbr_thread_online();
}

void rcu_qsbr_synchronize_rcu(void)
{
	qsbr_wait_offline(rcu_core_synchronize, __func__);
}

void rcu_qsbr_call_rcu(struct rcu_head *head, rcu_callback_t func)
{
	struct rcu_qsbr_reader *r = &rcu_qsbr_reader_tls;
	struct rcu_cbq *q = r->link.cbq;
	bool offline, over;

	if (RCU_UNLIKELY(!q))
		rcu_die("call_rcu() from a thread not registered with the qsbr flavor");
	if (RCU_GP_BROKEN) { /* BROKEN_GP=1: the grace period "ends" at once */
		rcu_core_call_broken(&rcu_qsbr_flavor, head, func);
		return;
	}
	offline = atomic_load_explicit(&r->ctr, memory_order_relaxed) == 0;
	if (RCU_UNLIKELY(offline))
		rcu_qsbr_thread_online();
	over = rcu_cbq_enqueue(&rcu_qsbr_flavor, q, head, func);
	if (RCU_UNLIKELY(offline)) {
		rcu_qsbr_thread_offline();
		if (over)
			rcu_core_throttle(&rcu_qsbr_flavor, q);
	} else if (RCU_UNLIKELY(over)) {
		/* An online thread may hold references: wait at the next
		 * quiescent state instead.  An older counter value sends that
		 * report down the slow path (rcu_qsbr_quiescent_state_slow);
		 * it can only make a grace period wait for the report, which
		 * is safe. */
		atomic_store_explicit(&r->ctr,
				      atomic_load_explicit(&r->ctr, memory_order_relaxed) -
					      QSBR_GP_STEP,
				      memory_order_relaxed);
	}
}

void rcu_qsbr_rcu_barrier(void)
{
	qsbr_wait_offline(rcu_core_barrier, __func__);
}

void rcu_qsbr_shutdown(void)
{
	qsbr_wait_offline(rcu_core_stop, __func__);
}

unsigned long rcu_qsbr_get_state_synchronize_rcu(void)
{
	return rcu_core_get_state(&rcu_qsbr_flavor);
}

unsigned long rcu_qsbr_start_poll_synchronize_rcu(void)
{
	return rcu_core_start_poll(&rcu_qsbr_flavor);
}

int rcu_qsbr_poll_state_synchronize_rcu(unsigned long cookie)
{
	return rcu_core_poll_state(&rcu_qsbr_flavor, cookie);
}

void rcu_qsbr_set_callback_limit(unsigned long limit)
{
	atomic_store(&rcu_qsbr_flavor.cb_limit, limit);
}

void rcu_qsbr_get_stats(struct rcu_stats *st)
{
	rcu_core_get_stats(&rcu_qsbr_flavor, st);
}
