/*
 * srcu.c - SRCU domains (the QRCU-style counter pair described in
 * rcu/srcu.h) and the flavor-safe reclaimer.
 *
 * Ordering guarantees:
 *  S1. synchronize_srcu(ss) returns only after every ss section that began
 *      before the call has ended (fast path: no such section existed when
 *      it read the counters; slow path: the old counter drained).
 *  S2. The fast path reads the active counter before the inactive one: a
 *      concurrent flip increments the inactive counter before it drops the
 *      base from the active one, so a reader that is still inside is seen in
 *      one of the two reads (sum >= 2) whichever way the flip interleaves.
 *  S3. srcu_reclaim: func(obj) runs after a grace period of the flavor
 *      (call_rcu) and then of ss (synchronize_srcu on the reclaimer thread).
 * Tortured by tests/rcu/test_srcu.c.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rcu/rcu.h"
#include "rcu/rcu_internal.h"

#define SRCU_SPINS 200

int init_srcu_struct(struct srcu_struct *ss)
{
	int err;

	memset(ss, 0, sizeof(*ss));
	atomic_init(&ss->ctr[0], 1);
	atomic_init(&ss->ctr[1], 0);
	atomic_init(&ss->completed, 0);
	atomic_init(&ss->gp_seq, 0);
	ss->name = "srcu";
	if ((err = pthread_mutex_init(&ss->lock, NULL)))
		return -err;
	if ((err = pthread_cond_init(&ss->gp_cond, NULL))) {
		pthread_mutex_destroy(&ss->lock);
		return -err;
	}
	return 0;
}

void cleanup_srcu_struct(struct srcu_struct *ss)
{
	int idx = (int)(atomic_load(&ss->completed) & 1);

	if (atomic_load(&ss->ctr[idx]) != 1 || atomic_load(&ss->ctr[idx ^ 1]) != 0)
		rcu_die("cleanup_srcu_struct(%s) while a reader is inside", ss->name);
	pthread_mutex_destroy(&ss->lock);
	pthread_cond_destroy(&ss->gp_cond);
}

void srcu_die_bad_unlock(struct srcu_struct *ss, int idx)
{
	rcu_die("srcu_read_unlock(%s, %d): index not from srcu_read_lock() on this domain, "
		"or unlocked twice", ss->name, idx);
}

void srcu_wake_drained(struct srcu_struct *ss, int idx)
{
	rcu_futex_wake(&ss->ctr[idx], INT_MAX);
}

/* S2: no reader inside that began before now (caller fenced first). */
static bool srcu_no_readers(struct srcu_struct *ss)
{
	int idx = (int)(atomic_load(&ss->completed) & 1);
	int active = atomic_load(&ss->ctr[idx]);

	return active + atomic_load(&ss->ctr[idx ^ 1]) <= 1;
}

int srcu_readers_active(struct srcu_struct *ss)
{
	rcu_smp_mb();
	return !srcu_no_readers(ss);
}

/* Moves the base to the other counter and waits for the old one to drain.
 * Only the thread that set gp_running runs this. */
static void srcu_flip_and_drain(struct srcu_struct *ss)
{
	unsigned long seq = atomic_load_explicit(&ss->gp_seq, memory_order_relaxed);
	unsigned long c = atomic_load(&ss->completed);
	int idx = (int)(c & 1);

	atomic_store_explicit(&ss->gp_seq, seq + 1, memory_order_relaxed);
	if (atomic_load(&ss->ctr[idx]) != 1) {
		atomic_fetch_add(&ss->ctr[idx ^ 1], 1);
		atomic_store(&ss->completed, c + 1);
		atomic_fetch_sub(&ss->ctr[idx], 1);
		for (int spins = 0;; spins++) {
			int v = atomic_load(&ss->ctr[idx]);

			if (v == 0)
				break;
			if (spins < SRCU_SPINS)
				continue;
			/* The reader that drains the counter wakes us
			 * (srcu_wake_drained); a changed value returns at once. */
			syscall(SYS_futex, (int *)&ss->ctr[idx], FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
		}
	}
	/* Release: pairs with the acquire in synchronize_srcu()'s done check. */
	atomic_store_explicit(&ss->gp_seq, seq + 2, memory_order_release);
}

void synchronize_srcu(struct srcu_struct *ss)
{
	unsigned long s;

#if defined(RCU_BROKEN_GP) && RCU_BROKEN_GP
	/* BROKEN_GP=1 (RCU_GP_BROKEN in rcu_internal.h): no wait, so the SRCU
	 * tortures and the srcu_reclaim chain free early and must say so. */
	(void)s;
	return;
#endif
#if defined(RCU_DEBUG) && RCU_DEBUG
	rcu_debug_srcu_sync_begin(ss);
#endif
	/* The caller's removals are visible before the counters are read. */
	rcu_smp_mb();
	if (srcu_no_readers(ss)) {
		/* Statistics only: a racy increment may lose a count, and costs
		 * no locked instruction on the fast path. */
		atomic_store_explicit(&ss->st_fast,
				      atomic_load_explicit(&ss->st_fast, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		/* No trailing fence: the counter loads are seq_cst (acquire),
		 * so the caller's frees cannot move above them, and a reader's
		 * section happens before the decrement they read. */
#if defined(RCU_DEBUG) && RCU_DEBUG
		rcu_debug_srcu_sync_end(ss);
#endif
		return;
	}
	atomic_fetch_add_explicit(&ss->st_slow, 1, memory_order_relaxed);
	pthread_mutex_lock(&ss->lock);
	s = (atomic_load_explicit(&ss->gp_seq, memory_order_relaxed) + 3) & ~1UL;
	while ((long)(atomic_load_explicit(&ss->gp_seq, memory_order_acquire) - s) < 0) {
		if (!ss->gp_running) {
			ss->gp_running = true;
			pthread_mutex_unlock(&ss->lock);
			srcu_flip_and_drain(ss);
			pthread_mutex_lock(&ss->lock);
			ss->gp_running = false;
			pthread_cond_broadcast(&ss->gp_cond);
		} else {
			pthread_cond_wait(&ss->gp_cond, &ss->lock);
		}
	}
	pthread_mutex_unlock(&ss->lock);
	rcu_smp_mb();
#if defined(RCU_DEBUG) && RCU_DEBUG
	rcu_debug_srcu_sync_end(ss);
#endif
}

/* --- flavor-safe reclamation ------------------------------------------------- */

struct srcu_reclaim {
	struct srcu_struct *ss;
	rcu_callback_t func;
	void (*call)(struct rcu_head *, rcu_callback_t);
	void (*barrier)(void);
	int slot;
	/* Objects past the flavor's grace period: a Treiber stack pushed by the
	 * flavor's callback thread (stage1), taken whole by our thread. */
	_Atomic(struct rcu_head *) pending;
	_Atomic unsigned long deferred, pushed, freed, batches;
	pthread_mutex_t lock;           /* sleeping, stop; cond */
	pthread_cond_t cond;            /* pending non-empty, stop, progress */
	bool sleeping, stop;
	/* The thread starts with the first object pushed (ensure_thread()), so
	 * a reclaimer that never reclaims costs no thread. */
	_Atomic bool started;
	char tname[16];
	pthread_t thread;
};

static void *reclaim_main(void *arg);

/* Start @r's thread if it has not started.  r->lock held.  Return 0 or the
 * pthread_create() error (retried at the next push or barrier). */
static int ensure_thread(struct srcu_reclaim *r)
{
	int err;

	if (atomic_load_explicit(&r->started, memory_order_relaxed) || r->stop)
		return 0;
	err = pthread_create(&r->thread, NULL, reclaim_main, r);
	if (err)
		return err;
	pthread_setname_np(r->thread, r->tname);
	atomic_store_explicit(&r->started, true, memory_order_relaxed);
	return 0;
}

static struct srcu_reclaim *_Atomic reclaim_slots[SRCU_RECLAIM_MAX];

/* Stage 1 runs on the flavor's callback thread after its grace period.  The
 * rcu_head carries only a function pointer, so each reclaimer slot has its
 * own trampoline to find its reclaimer. */
static void stage1(struct srcu_reclaim *r, struct rcu_head *h)
{
	struct rcu_head *old = atomic_load_explicit(&r->pending, memory_order_relaxed);

	do {
		h->next = old;
	} while (!atomic_compare_exchange_weak_explicit(&r->pending, &old, h,
							memory_order_release,
							memory_order_relaxed));
	atomic_fetch_add_explicit(&r->pushed, 1, memory_order_relaxed);
	if (!old || !atomic_load_explicit(&r->started, memory_order_relaxed)) {
		pthread_mutex_lock(&r->lock);
		(void)ensure_thread(r);
		if (r->sleeping)
			pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
	}
	/* Back-pressure (a write flood on a busy machine): when our thread is
	 * starved of CPU, objects past the flavor's grace period would pile up
	 * here unbounded.  Past SRCU_RECLAIM_BACKLOG of them the flavor's
	 * callback thread waits until we are down to half, so the flavor's own
	 * callback bound (rcu_set_callback_limit) then slows the writers.  Only
	 * while no ss reader is inside: a backlog that a sleeping scan holds is
	 * the documented price of the scan, and waiting for it here would stall
	 * rcu_barrier() (and every writer) until the scan ends.  No cycle: our
	 * thread needs only SRCU grace periods, never the flavor's callback
	 * thread. */
	if (atomic_load_explicit(&r->pushed, memory_order_relaxed) -
		    atomic_load_explicit(&r->freed, memory_order_relaxed) >
		SRCU_RECLAIM_BACKLOG &&
	    !srcu_readers_active(r->ss)) {
		pthread_mutex_lock(&r->lock);
		while (!r->stop && !srcu_readers_active(r->ss) &&
		       atomic_load_explicit(&r->pushed, memory_order_relaxed) -
			       atomic_load_explicit(&r->freed, memory_order_acquire) >
			   SRCU_RECLAIM_BACKLOG / 2) {
			struct timespec ts;

			if (r->sleeping)
				pthread_cond_broadcast(&r->cond);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 10 * 1000 * 1000;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&r->cond, &r->lock, &ts);
		}
		pthread_mutex_unlock(&r->lock);
	}
}

#define STAGE1(n)                                                            \
	static void stage1_##n(struct rcu_head *h)                           \
	{                                                                    \
		stage1(atomic_load_explicit(&reclaim_slots[n], memory_order_acquire), h); \
	}
/* Ten trampolines (and their table entries) per decimal prefix: S10() is
 * 0-9, S10(1) 10-19, ... up to SRCU_RECLAIM_MAX - 1. */
#define S10(p)                                                                                     \
	STAGE1(p##0) STAGE1(p##1) STAGE1(p##2) STAGE1(p##3) STAGE1(p##4) STAGE1(p##5)            \
	STAGE1(p##6) STAGE1(p##7) STAGE1(p##8) STAGE1(p##9)
#define F10(p)                                                                                     \
	stage1_##p##0, stage1_##p##1, stage1_##p##2, stage1_##p##3, stage1_##p##4, stage1_##p##5,  \
	    stage1_##p##6, stage1_##p##7, stage1_##p##8, stage1_##p##9,
S10()
S10(1) S10(2) S10(3) S10(4) S10(5) S10(6) S10(7) S10(8)
S10(9) S10(10) S10(11) S10(12) S10(13) S10(14) S10(15) S10(16)
S10(17) S10(18) S10(19) S10(20) S10(21) S10(22) S10(23) S10(24)
static const rcu_callback_t stage1_fns[SRCU_RECLAIM_MAX] = {
	F10() F10(1) F10(2) F10(3) F10(4) F10(5) F10(6) F10(7) F10(8)
	F10(9) F10(10) F10(11) F10(12) F10(13) F10(14) F10(15) F10(16)
	F10(17) F10(18) F10(19) F10(20) F10(21) F10(22) F10(23) F10(24)
};
_Static_assert(SRCU_RECLAIM_MAX == 250, "one trampoline per reclaimer slot: extend S10/F10");


static void *reclaim_main(void *arg)
{
	struct srcu_reclaim *r = arg;

	for (;;) {
		struct rcu_head *h;
		unsigned long n = 0;

		pthread_mutex_lock(&r->lock);
		while (!atomic_load(&r->pending) && !r->stop) {
			r->sleeping = true;
			pthread_cond_wait(&r->cond, &r->lock);
			r->sleeping = false;
		}
		if (!atomic_load(&r->pending) && r->stop) {
			pthread_mutex_unlock(&r->lock);
			break;
		}
		pthread_mutex_unlock(&r->lock);

		/* Acquire: pairs with stage1's release push. */
		h = atomic_exchange_explicit(&r->pending, NULL, memory_order_acquire);
		/* One SRCU grace period for the whole batch (S3). */
		synchronize_srcu(r->ss);
		while (h) {
			struct rcu_head *next = h->next;

			r->func(h);
			h = next;
			n++;
		}
		atomic_fetch_add_explicit(&r->freed, n, memory_order_release);
		atomic_fetch_add_explicit(&r->batches, 1, memory_order_relaxed);
		pthread_mutex_lock(&r->lock);
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
	}
	return NULL;
}

struct srcu_reclaim *srcu_reclaim_new(struct srcu_struct *ss, rcu_callback_t func,
				      void (*flavor_call_rcu)(struct rcu_head *, rcu_callback_t),
				      void (*flavor_barrier)(void), const char *name)
{
	struct srcu_reclaim *r = calloc(1, sizeof(*r));
	int slot = -1;

	if (!r)
		return NULL;
	r->ss = ss;
	r->func = func;
	r->call = flavor_call_rcu;
	r->barrier = flavor_barrier;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	for (int i = 0; i < SRCU_RECLAIM_MAX && slot < 0; i++) {
		struct srcu_reclaim *expect = NULL;

		if (atomic_compare_exchange_strong(&reclaim_slots[i], &expect, r))
			slot = i;
	}
	if (slot < 0)
		goto fail;
	r->slot = slot;
	snprintf(r->tname, sizeof(r->tname), "reclaim-%s", name ? name : ss->name);
	return r;
fail:
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r);
	return NULL;
}

void srcu_reclaim_defer(struct srcu_reclaim *r, struct rcu_head *head)
{
	atomic_fetch_add_explicit(&r->deferred, 1, memory_order_relaxed);
	r->call(head, stage1_fns[r->slot]);
}

void srcu_reclaim_barrier(struct srcu_reclaim *r)
{
	unsigned long target;

	r->barrier(); /* every stage1 queued before now has run (pushed) */
	target = atomic_load(&r->pushed);
	pthread_mutex_lock(&r->lock);
	while ((long)(atomic_load_explicit(&r->freed, memory_order_acquire) - target) < 0) {
		(void)ensure_thread(r); /* a start that failed at the push */
		pthread_cond_wait(&r->cond, &r->lock);
	}
	pthread_mutex_unlock(&r->lock);
}

void srcu_reclaim_free(struct srcu_reclaim *r)
{
	if (!r)
		return;
	srcu_reclaim_barrier(r);
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	if (atomic_load(&r->started))
		pthread_join(r->thread, NULL);
	atomic_store(&reclaim_slots[r->slot], NULL);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r);
}

/*
 * fork() without exec.  Before: the flavor's callback thread is stopped
 * (rcu_memb_before_fork(), so no stage1 push is half-done); holding r->lock
 * then keeps our thread out of its bookkeeping.  In the child our thread is
 * gone: a batch it had taken (between the exchange of @pending and the
 * count of @freed) is lost to the child and leaks there; what is still on
 * @pending goes to a new thread.  @freed is set so that barriers wait only
 * for that.  Return (child): 0 or -errno (no thread: deferred objects pile up).
 */
void srcu_reclaim_fork_prepare(struct srcu_reclaim *r)
{
	pthread_mutex_lock(&r->lock);
}

void srcu_reclaim_fork_parent(struct srcu_reclaim *r)
{
	pthread_mutex_unlock(&r->lock);
}

int srcu_reclaim_fork_child(struct srcu_reclaim *r)
{
	unsigned long n = 0;
	int err;

	for (struct rcu_head *h = atomic_load(&r->pending); h; h = h->next)
		n++;
	atomic_store(&r->freed, atomic_load(&r->pushed) - n);
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->sleeping = false;
	r->stop = false;
	if (!atomic_load(&r->started) && !n)
		return 0; /* none in the parent, none needed yet: starts at a push */
	atomic_store(&r->started, false);
	err = ensure_thread(r);
	return -err;
}

void srcu_fork_child_reset(struct srcu_struct *ss)
{
	unsigned long c = atomic_load(&ss->completed), g = atomic_load(&ss->gp_seq);

	atomic_store(&ss->ctr[c & 1], 1);
	atomic_store(&ss->ctr[(c & 1) ^ 1], 0);
	atomic_store(&ss->gp_seq, (g + 1) & ~1UL);
	ss->gp_running = false;
	pthread_mutex_init(&ss->lock, NULL);
	pthread_cond_init(&ss->gp_cond, NULL);
}

void srcu_reclaim_get_stats(struct srcu_reclaim *r, struct srcu_reclaim_stats *st)
{
	unsigned long pushed = atomic_load(&r->pushed);

	st->deferred = atomic_load(&r->deferred);
	st->freed = atomic_load(&r->freed);
	st->waiting = pushed - st->freed;
	st->batches = atomic_load(&r->batches);
}
