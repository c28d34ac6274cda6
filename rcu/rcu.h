/*
 * rcu.h - the public door of the RCU library (librcu.a).
 *
 * Both flavors are always available under their qualified names
 * (rcu_qsbr_*, rcu_memb_*).  A unit that uses one flavor defines
 * RCU_FLAVOR_QSBR or RCU_FLAVOR_MEMB before including this header and gets the
 * kernel's plain names (rcu_read_lock(), synchronize_rcu(), call_rcu(),
 * rcu_barrier(), ...) mapped onto that flavor, as urcu's map headers do.  Code
 * that touches two flavors uses the qualified names only.
 *
 * SRCU (rcu/srcu.h) is included too.  The list and hlist primitives live in
 * rcu/rculist.h.
 */
#ifndef RCU_H
#define RCU_H

#include "rcu/rcu_defs.h"
#include "rcu/rcu_qsbr.h"
#include "rcu/rcu_memb.h"
#include "rcu/srcu.h"

/* Stall warnings: a grace period that has waited this long names the threads
 * it waits for on stderr, then again at doubling intervals.  Default 10000 ms,
 * or the RCU_STALL_TIMEOUT_MS environment variable.  0 disables. */
void rcu_set_stall_timeout_ms(unsigned long ms);
/* Callback pacing has no function: the callback thread starts at most one
 * grace period per interval while callbacks or polls keep coming, the interval
 * read once at start from the RCU_CB_GP_INTERVAL_US environment variable
 * (default 1000 us; 0: no pacing; rcu/rcu_core.c).  rcu_barrier() and
 * throttled updaters never wait for it; synchronize_rcu() is not paced. */

#if defined(RCU_FLAVOR_QSBR) && defined(RCU_FLAVOR_MEMB)
#error "define at most one of RCU_FLAVOR_QSBR and RCU_FLAVOR_MEMB"
#endif

#if defined(RCU_FLAVOR_QSBR)
#define RCU_FLAVOR_NAME "qsbr"
#define rcu_register_thread rcu_qsbr_register_thread
#define rcu_unregister_thread rcu_qsbr_unregister_thread
#define rcu_read_lock rcu_qsbr_read_lock
#define rcu_read_unlock rcu_qsbr_read_unlock
#define rcu_quiescent_state rcu_qsbr_quiescent_state
#define rcu_thread_offline rcu_qsbr_thread_offline
#define rcu_thread_online rcu_qsbr_thread_online
#define synchronize_rcu rcu_qsbr_synchronize_rcu
#define call_rcu rcu_qsbr_call_rcu
#define rcu_barrier rcu_qsbr_rcu_barrier
#define rcu_shutdown rcu_qsbr_shutdown
#define get_state_synchronize_rcu rcu_qsbr_get_state_synchronize_rcu
#define start_poll_synchronize_rcu rcu_qsbr_start_poll_synchronize_rcu
#define poll_state_synchronize_rcu rcu_qsbr_poll_state_synchronize_rcu
#define rcu_set_callback_limit rcu_qsbr_set_callback_limit
#define rcu_get_stats rcu_qsbr_get_stats
#define srcu_reclaim_new_flavor srcu_reclaim_new_qsbr
#elif defined(RCU_FLAVOR_MEMB)
#define RCU_FLAVOR_NAME "memb"
#define rcu_register_thread rcu_memb_register_thread
#define rcu_unregister_thread rcu_memb_unregister_thread
#define rcu_read_lock rcu_memb_read_lock
#define rcu_read_unlock rcu_memb_read_unlock
#define rcu_quiescent_state rcu_memb_quiescent_state
#define rcu_thread_offline rcu_memb_thread_offline
#define rcu_thread_online rcu_memb_thread_online
#define synchronize_rcu rcu_memb_synchronize_rcu
#define call_rcu rcu_memb_call_rcu
#define rcu_barrier rcu_memb_rcu_barrier
#define rcu_shutdown rcu_memb_shutdown
#define get_state_synchronize_rcu rcu_memb_get_state_synchronize_rcu
#define start_poll_synchronize_rcu rcu_memb_start_poll_synchronize_rcu
#define poll_state_synchronize_rcu rcu_memb_poll_state_synchronize_rcu
#define rcu_set_callback_limit rcu_memb_set_callback_limit
#define rcu_get_stats rcu_memb_get_stats
#define srcu_reclaim_new_flavor srcu_reclaim_new_memb
#endif

#endif /* RCU_H */
