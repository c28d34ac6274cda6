/*
 * rcu_core.c - what both flavors share: the grace-period driver, the reader
 * registry, stall warnings, the call_rcu callback thread, rcu_barrier(),
 * polled grace periods and statistics.  The flavor files (rcu_qsbr.c,
 * rcu_memb.c) supply the read side and the grace period proper through
 * struct rcu_flavor_ops, which is never consulted on a read path.
 *
 * Ordering guarantees (numbered for the tests):
 *  G1. rcu_core_synchronize() returns only after a grace period that began
 *      after the call did: every read-side section running when it was called
 *      has ended (tests/rcu/test_rcu.c "sync waits for pre-existing reader").
 *  G2. The sequence gp_seq is odd while a grace period runs; a cookie from
 *      rcu_core_get_state() is the first even value whose grace period began
 *      after the cookie was taken, so poll_state() is one acquire load.
 *  G3. Concurrent synchronize callers share: one thread runs the grace period,
 *      the others sleep on gp_cond until gp_seq passes their cookie; N callers
 *      cost at most two grace periods.
 *  G4. A callback runs after at most two grace periods following its
 *      call_rcu() (see struct rcu_cbq), never before one full grace period.
 *  G5. rcu_barrier() returns after every callback queued before it, and those
 *      they queue in turn, has run.
 * Progress: a grace period waits only for online/in-section registered
 * readers; offline QSBR threads and idle memb threads never delay it.  The
 * callback thread sleeps when there is nothing queued and is woken by the
 * first call_rcu() after that.  Updaters whose backlog passes the limit wait
 * (rcu_core_throttle) at a point where waiting is safe.
 * Pacing: under a steady stream of callbacks or polls, the callback thread
 * starts a grace period at most once per cb_gp_interval_ns (default 1 ms,
 * RCU_CB_GP_INTERVAL_US), so that each grace period serves a larger batch and
 * readers are not asked to wake it thousands of times a second.  Only new
 * work is paced (cb_fresh()): the second grace period of callbacks already
 * taken follows at once, so an isolated call_rcu() is not delayed.
 * rcu_barrier(), a throttled updater or a backlog over an eighth of the limit
 * end the pause at once; synchronize_rcu() callers never wait for it (they
 * run their own grace period, G3).  G4 still holds: two grace periods, each
 * at most one interval later.
 *
 * Tortured by tests/rcu/test_torture.c and checked by tests/rcu/test_rcu.c.
 */
#include <errno.h>
#include <sched.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rcu/rcu.h"
#include "rcu/rcu_internal.h"

int rcu_has_membarrier;
#if defined(RCU_TSAN) && RCU_TSAN
_Atomic unsigned long rcu_tsan_fence_word;
#endif

static _Atomic unsigned long stall_timeout_ms = 10000;
/* Pacing of the callback thread's grace periods (see the top comment). */
static _Atomic unsigned long long cb_gp_interval_ns = 1000000ULL;

#define SPIN_ATTEMPTS 100
#define DEFAULT_CB_LIMIT 100000UL

void rcu_die_at(const char *file, int line, const char *func, const char *fmt, ...)
{
	va_list ap;
	char buf[512];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rcu: %s:%d %s: %s (thread %ld)\n", file, line, func, buf,
		(long)syscall(SYS_gettid));
	fflush(stderr);
	abort();
}

unsigned long long rcu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/*
 * Grace-period durations are taken with the time-stamp counter where there
 * is one (a few cycles, against tens of nanoseconds for clock_gettime(),
 * which the fastest grace periods would feel) and turned into nanoseconds
 * when statistics are read, using the counter's rate since start-up.
 */
static unsigned long long start_ns, start_ticks;

static unsigned long long ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return rcu_now_ns();
#endif
}

static unsigned long long ticks_to_ns(unsigned long long t)
{
	unsigned long long dn = rcu_now_ns() - start_ns, dt = ticks() - start_ticks;

	if (!dt || !dn)
		return t;
	return (unsigned long long)((double)t * (double)dn / (double)dt);
}

/* --- membarrier and futex ------------------------------------------------ */

static int sys_membarrier(int cmd)
{
	return (int)syscall(__NR_membarrier, cmd, 0, 0);
}

__attribute__((constructor)) static void rcu_lib_init(void)
{
	const char *env = getenv("RCU_NO_MEMBARRIER");
	const char *stall = getenv("RCU_STALL_TIMEOUT_MS");
	int mask;

	start_ns = rcu_now_ns();
	start_ticks = ticks();
	const char *pace = getenv("RCU_CB_GP_INTERVAL_US");

	if (stall && *stall)
		atomic_store(&stall_timeout_ms, strtoul(stall, NULL, 10));
	if (pace && *pace)
		atomic_store(&cb_gp_interval_ns, strtoull(pace, NULL, 10) * 1000ULL);
	if (env && *env && strcmp(env, "0") != 0)
		return;
	mask = sys_membarrier(MEMBARRIER_CMD_QUERY);
	if (mask < 0 || !(mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		return;
	if (sys_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0)
		rcu_has_membarrier = 1;
}

/*
 * The updater's half of the asymmetric fence: a full barrier on every running
 * thread of the process (membarrier), or our own fence when readers fence
 * themselves.  Pairs with rcu_light_mb() in readers and call_rcu().
 */
void rcu_heavy_mb(void)
{
	if (rcu_has_membarrier) {
		if (sys_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED))
			rcu_die("membarrier: %s", strerror(errno));
	} else {
		rcu_smp_mb();
	}
}

static int futex_wait(_Atomic int *uaddr, int val, unsigned long long timeout_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / 1000000000ULL),
		.tv_nsec = (long)(timeout_ns % 1000000000ULL),
	};

	return (int)syscall(SYS_futex, (int *)uaddr, FUTEX_WAIT_PRIVATE, val,
			    timeout_ns ? &ts : NULL, NULL, 0);
}

void rcu_futex_wake(_Atomic int *uaddr, int n)
{
	syscall(SYS_futex, (int *)uaddr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* Reader side: the grace period announced it sleeps (futex == -1). */
void rcu_wake_up_gp(_Atomic int *futex)
{
	if (atomic_load_explicit(futex, memory_order_relaxed) == -1) {
		atomic_store_explicit(futex, 0, memory_order_relaxed);
		rcu_futex_wake(futex, 1);
	}
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	rcu_barrier_compiler();
#endif
}

static void xlock(pthread_mutex_t *m)
{
	int err = pthread_mutex_lock(m);

	if (err)
		rcu_die("pthread_mutex_lock: %s", strerror(err));
}

static void xunlock(pthread_mutex_t *m)
{
	int err = pthread_mutex_unlock(m);

	if (err)
		rcu_die("pthread_mutex_unlock: %s", strerror(err));
}

static void cond_init(pthread_cond_t *c)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
}

/* Waits on c for at most ms milliseconds (spurious and timed-out wakes are fine:
 * every caller re-checks its condition). */
static void cond_wait_ms(pthread_cond_t *c, pthread_mutex_t *m, unsigned long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(c, m, &ts);
}

void rcu_set_stall_timeout_ms(unsigned long ms)
{
	atomic_store(&stall_timeout_ms, ms);
}

/* --- flavor state, registry ------------------------------------------------ */

static void exit_unregister(void *arg);

void rcu_core_init_flavor(struct rcu_flavor *fl)
{
	pthread_mutex_init(&fl->gp_lock, NULL);
	cond_init(&fl->gp_cond);
	pthread_mutex_init(&fl->registry_lock, NULL);
	pthread_mutex_init(&fl->cb_lock, NULL);
	cond_init(&fl->cb_cond);
	fl->registry.next = fl->registry.prev = &fl->registry;
	atomic_store(&fl->cb_limit, DEFAULT_CB_LIMIT);
	if (pthread_key_create(&fl->exit_key, exit_unregister))
		rcu_die("pthread_key_create failed");
}

static void *cb_thread_main(void *arg);

/* Start fl's callback thread unless one runs.  Called with cb_lock held, so
 * cb_thread is written before anyone reads it under the lock. */
static void cb_start_locked(struct rcu_flavor *fl)
{
	int err;

	if (fl->cb_started)
		return;
	atomic_store_explicit(&fl->cb_stop, false, memory_order_relaxed);
	atomic_store_explicit(&fl->cb_stopped, false, memory_order_relaxed);
	err = pthread_create(&fl->cb_thread, NULL, cb_thread_main, fl);
	if (err)
		rcu_die("cannot start the %s callback thread: %s", fl->name, strerror(err));
	fl->cb_started = true;
}

static struct rcu_cbq *cbq_new(void)
{
	struct rcu_cbq *q = calloc(1, sizeof(*q));

	if (!q)
		rcu_die("out of memory for a call_rcu queue");
	q->list[0].tailp = &q->list[0].head;
	q->list[1].tailp = &q->list[1].head;
	q->waiting.tailp = &q->waiting.head;
	return q;
}

/*
 * rcu_core_register() - add link to fl's registry and give it a callback queue.
 * Context: the owner thread, not registered with fl.  Starts fl's callback
 * thread on first use.
 */
void rcu_core_register(struct rcu_flavor *fl, struct rcu_reader_link *link)
{
	struct rcu_cbq *q = cbq_new();

	link->thread = (unsigned long)pthread_self();
	link->tid = (int)syscall(SYS_gettid);
	link->cbq = q;
	xlock(&fl->registry_lock);
	link->next = fl->registry.next;
	link->prev = &fl->registry;
	fl->registry.next->prev = link;
	fl->registry.next = link;
	fl->nreaders++;
	xunlock(&fl->registry_lock);
	link->registered = 1;
	pthread_setspecific(fl->exit_key, fl);

	xlock(&fl->cb_lock);
	q->next = fl->cbqs;
	fl->cbqs = q;
	cb_start_locked(fl);
	xunlock(&fl->cb_lock);
}

/*
 * rcu_core_unregister() - remove link from the registry; its callback queue
 * is handed to the callback thread, which frees it once drained.
 * Context: the owner thread, outside any read-side section / offline.
 */
void rcu_core_unregister(struct rcu_flavor *fl, struct rcu_reader_link *link)
{
	struct rcu_cbq *q = link->cbq;

	xlock(&fl->registry_lock);
	link->prev->next = link->next;
	link->next->prev = link->prev;
	link->next = link->prev = NULL;
	fl->nreaders--;
	xunlock(&fl->registry_lock);
	link->registered = 0;
	link->cbq = NULL;
	pthread_setspecific(fl->exit_key, NULL);

	xlock(&fl->cb_lock);
	q->dead = true;
	xunlock(&fl->cb_lock);
	/* The callback thread reaps the queue; after rcu_core_stop() an
	 * unregistration alone does not start one (its queue is empty: any
	 * callback it queued restarted the thread), the next stop reaps it. */
	if (!atomic_load_explicit(&fl->cb_stopped, memory_order_acquire))
		rcu_core_cb_wake(fl);
}

static void exit_unregister(void *arg)
{
	if (arg == &rcu_qsbr_flavor)
		rcu_qsbr_exit_unregister();
	else
		rcu_memb_exit_unregister();
}

/* --- waiting for readers, stall warnings ------------------------------------ */

static void report_stall(struct rcu_flavor *fl,
			 bool (*active)(struct rcu_flavor *, struct rcu_reader_link *),
			 unsigned long long waited_ns)
{
	struct rcu_reader_link *l;
	char name[32];

	for (l = fl->registry.next; l != &fl->registry; l = l->next) {
		if (!active(fl, l))
			continue;
		name[0] = 0;
		pthread_getname_np((pthread_t)l->thread, name, sizeof(name));
		fprintf(stderr,
			"rcu: %s grace period stalled for %.1f s: thread %d (%s) has not %s\n",
			fl->name, (double)waited_ns / 1e9, l->tid, name[0] ? name : "?",
			fl == &rcu_qsbr_flavor ? "reported a quiescent state (online, not quiescent)"
					       : "left its read-side critical section");
	}
	atomic_fetch_add_explicit(&fl->st_stalls, 1, memory_order_relaxed);
}

/*
 * rcu_core_wait_for_readers() - return once active() is false for every
 * registered reader.  Spins briefly, then sleeps on the flavor's gp futex,
 * which readers reset and wake when they leave (rcu_wake_up_gp()).
 * Context: called by the thread running the grace period, registry_lock held;
 * drops it while sleeping (readers may register and unregister meanwhile).
 */
void rcu_core_wait_for_readers(struct rcu_flavor *fl,
			       bool (*active)(struct rcu_flavor *, struct rcu_reader_link *))
{
	unsigned long long start = 0, next_warn = 0;
	int spins = 0;
	bool sleeping = false;

	for (;;) {
		struct rcu_reader_link *l;
		bool any = false;

		if (sleeping) {
			atomic_store_explicit(fl->gp_futex, -1, memory_order_relaxed);
			/* Orders the futex store before the reader scan; pairs with
			 * the fence between a reader's ctr store and its futex
			 * check (rcu_qsbr_quiescent_state_slow), or stands in for
			 * it (rcu_memb_read_unlock's light fence). */
			if (fl->readers_fence)
				rcu_smp_mb();
			else
				rcu_heavy_mb();
		}
		for (l = fl->registry.next; l != &fl->registry; l = l->next) {
			if (active(fl, l)) {
				any = true;
				break;
			}
		}
		if (!any) {
			if (sleeping)
				atomic_store_explicit(fl->gp_futex, 0, memory_order_relaxed);
			return;
		}
		if (!sleeping) {
			if (++spins < SPIN_ATTEMPTS) {
				cpu_relax();
				continue;
			}
			sleeping = true;
			continue;
		}
		{
			unsigned long long now = rcu_now_ns();
			unsigned long st = atomic_load_explicit(&stall_timeout_ms,
								 memory_order_relaxed);
			unsigned long long wait_ns = 0;

			if (!start) {
				start = now;
				next_warn = now + (unsigned long long)st * 1000000ULL;
			}
			if (st) {
				if (now >= next_warn) {
					report_stall(fl, active, now - start);
					next_warn = now + (next_warn - start) * 2;
				}
				wait_ns = next_warn > now ? next_warn - now : 1;
			}
			xunlock(&fl->registry_lock);
			futex_wait(fl->gp_futex, -1, wait_ns);
			xlock(&fl->registry_lock);
		}
	}
}

/* --- the grace-period driver ------------------------------------------------- */

static inline unsigned long seq_snap(unsigned long s)
{
	return (s + 3) & ~1UL;
}

static inline bool seq_done(unsigned long cur, unsigned long s)
{
	return (long)(cur - s) >= 0;
}

static void run_gp(struct rcu_flavor *fl)
{
	unsigned long long t0 = ticks(), dt;
	unsigned long seq = atomic_load_explicit(&fl->gp_seq, memory_order_relaxed);
	unsigned long long max;

	atomic_store_explicit(&fl->gp_seq, seq + 1, memory_order_relaxed);
	xlock(&fl->registry_lock);
	fl->ops->gp(fl);
	xunlock(&fl->registry_lock);
	/* Release: everything the grace period observed (readers' releases)
	 * happens before a poller's acquire of the new value (G2). */
	atomic_store_explicit(&fl->gp_seq, seq + 2, memory_order_release);

	dt = ticks() - t0; /* in ticks: rcu_core_get_stats() converts */
	/* Only the grace-period runner (one at a time: gp_running) writes. */
	atomic_store_explicit(&fl->st_gp_completed,
			      atomic_load_explicit(&fl->st_gp_completed, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&fl->st_gp_last_ns, dt, memory_order_relaxed);
	max = atomic_load_explicit(&fl->st_gp_max_ns, memory_order_relaxed);
	if (dt > max)
		atomic_store_explicit(&fl->st_gp_max_ns, dt, memory_order_relaxed);
}

/*
 * BROKEN_GP=1 builds (RCU_GP_BROKEN, rcu_internal.h): synchronize_rcu() and
 * polled cookies do not wait, and call_rcu() runs its callback at once
 * (rcu_core_call_broken()), so no callback ever reaches the callback thread's
 * queues.  The callback thread still runs real grace periods for polled
 * requests (start_poll), which nobody waits for.
 */
#define BROKEN_GP RCU_GP_BROKEN

void rcu_core_call_broken(struct rcu_flavor *fl, struct rcu_head *head, rcu_callback_t func)
{
	func(head);
	/* rcu_barrier() has nothing to wait for; the statistics still count
	 * the callback (test_torture compares them with its call_rcu count). */
	atomic_fetch_add_explicit(&fl->st_cb_invoked, 1, memory_order_relaxed);
}

static void core_synchronize(struct rcu_flavor *fl);

void rcu_core_synchronize(struct rcu_flavor *fl)
{
	if (BROKEN_GP)
		return;
	core_synchronize(fl);
}

/*
 * G3: one caller runs the grace period, the others sleep until gp_seq passes
 * their snapshot.  Becoming the runner is one compare-and-swap on gp_running
 * (no mutex on the uncontended path); only callers that must wait take
 * gp_lock.  The runner's "gp_running = false, then read gp_waiters" and a
 * waiter's "gp_waiters++, then read gp_running" are seq_cst, so either the
 * runner sees the waiter and broadcasts (under gp_lock, hence after the
 * waiter sleeps) or the waiter sees the runner gone and does not sleep.
 */
static void core_synchronize(struct rcu_flavor *fl)
{
	unsigned long s;

	/* Orders the caller's removals before reading gp_seq: a grace period
	 * that starts after this load starts after them (G1). */
	rcu_smp_mb();
	s = seq_snap(atomic_load_explicit(&fl->gp_seq, memory_order_relaxed));
	/* The done checks are acquire loads of the release store that ended the
	 * grace period (run_gp), whose reader scans were acquire loads too: the
	 * caller's frees stay after every section it waited for, with no
	 * trailing fence. */
	while (!seq_done(atomic_load_explicit(&fl->gp_seq, memory_order_acquire), s)) {
		bool idle = false;

		if (atomic_compare_exchange_strong(&fl->gp_running, &idle, true)) {
			if (!seq_done(atomic_load_explicit(&fl->gp_seq, memory_order_acquire), s))
				run_gp(fl);
			atomic_store(&fl->gp_running, false);
			if (atomic_load(&fl->gp_waiters)) {
				xlock(&fl->gp_lock);
				pthread_cond_broadcast(&fl->gp_cond);
				xunlock(&fl->gp_lock);
			}
			continue;
		}
		xlock(&fl->gp_lock);
		atomic_fetch_add(&fl->gp_waiters, 1);
		while (atomic_load(&fl->gp_running) &&
		       !seq_done(atomic_load_explicit(&fl->gp_seq, memory_order_acquire), s))
			pthread_cond_wait(&fl->gp_cond, &fl->gp_lock);
		atomic_fetch_sub(&fl->gp_waiters, 1);
		xunlock(&fl->gp_lock);
	}
}

unsigned long rcu_core_get_state(struct rcu_flavor *fl)
{
	rcu_smp_mb();
	return seq_snap(atomic_load_explicit(&fl->gp_seq, memory_order_relaxed));
}

int rcu_core_poll_state(struct rcu_flavor *fl, unsigned long cookie)
{
	if (BROKEN_GP)
		return 1;
	/* Acquire: pairs with the release in run_gp(). */
	return seq_done(atomic_load_explicit(&fl->gp_seq, memory_order_acquire), cookie);
}

unsigned long rcu_core_start_poll(struct rcu_flavor *fl)
{
	unsigned long c = rcu_core_get_state(fl);
	unsigned long r = atomic_load(&fl->gp_requested);

	while (!seq_done(r, c) && !atomic_compare_exchange_weak(&fl->gp_requested, &r, c))
		;
	rcu_core_cb_wake(fl);
	return c;
}

/* --- the callback thread ------------------------------------------------------ */

void rcu_core_cb_wake(struct rcu_flavor *fl)
{
	if (atomic_exchange_explicit(&fl->cb_sleeping, 0, memory_order_relaxed)) {
		if (RCU_UNLIKELY(atomic_load_explicit(&fl->cb_stopped, memory_order_acquire))) {
			xlock(&fl->cb_lock);
			cb_start_locked(fl); /* work after rcu_core_stop() */
			xunlock(&fl->cb_lock);
		}
		rcu_futex_wake(&fl->cb_sleeping, 1);
	}
}

/* End the callback thread's pacing pause now (rcu_barrier(), throttle).  A
 * kick that races with the start of a pause is lost; the pause then ends on
 * its own, one interval at most after the previous grace period began. */
static void rcu_core_cb_kick(struct rcu_flavor *fl)
{
	rcu_core_cb_wake(fl);
	if (atomic_load_explicit(&fl->cb_pacing, memory_order_relaxed) &&
	    atomic_exchange_explicit(&fl->cb_pacing, 0, memory_order_relaxed))
		rcu_futex_wake(&fl->cb_pacing, 1);
}

/* Is there anything for the callback thread to do?  Callback thread only. */
static bool cb_work(struct rcu_flavor *fl, struct rcu_cbq *head)
{
	for (struct rcu_cbq *q = head; q; q = q->next) {
		if (q->waiting.head ||
		    atomic_load_explicit(&q->queued, memory_order_relaxed) != q->taken)
			return true;
	}
	return !seq_done(atomic_load_explicit(&fl->gp_seq, memory_order_relaxed),
			 atomic_load_explicit(&fl->gp_requested, memory_order_relaxed));
}

/* Callbacks queued and not yet invoked, or a polled grace period requested
 * and not done: cb_work() for threads other than the callback thread. */
static bool cb_pending_any(struct rcu_flavor *fl)
{
	bool any = false;

	xlock(&fl->cb_lock);
	for (struct rcu_cbq *q = fl->cbqs; q && !any; q = q->next)
		any = atomic_load_explicit(&q->queued, memory_order_relaxed) !=
		      atomic_load_explicit(&q->invoked, memory_order_relaxed);
	xunlock(&fl->cb_lock);
	return any || !seq_done(atomic_load_explicit(&fl->gp_seq, memory_order_relaxed),
				atomic_load_explicit(&fl->gp_requested, memory_order_relaxed));
}

static struct rcu_cbq *cbq_head(struct rcu_flavor *fl)
{
	struct rcu_cbq *h;

	xlock(&fl->cb_lock);
	h = fl->cbqs;
	xunlock(&fl->cb_lock);
	return h;
}

/* Sleep until call_rcu(), rcu_barrier(), start_poll or unregister wakes us. */
static void cb_sleep(struct rcu_flavor *fl)
{
	atomic_store_explicit(&fl->cb_sleeping, 1, memory_order_relaxed);
	/* Pairs with rcu_light_mb() in rcu_cbq_enqueue(): either the producer
	 * sees cb_sleeping, or we see its queued count below. */
	rcu_heavy_mb();
	if (cb_work(fl, cbq_head(fl)) || atomic_load(&fl->cb_stop)) {
		atomic_store_explicit(&fl->cb_sleeping, 0, memory_order_relaxed);
		return;
	}
	futex_wait(&fl->cb_sleeping, 1, 1000000000ULL);
	atomic_store_explicit(&fl->cb_sleeping, 0, memory_order_relaxed);
}

/*
 * New work since the last flip: callbacks not yet taken, or a polled grace
 * period requested.  Callbacks that only wait for their second grace period
 * (q->waiting) are not: a lone call_rcu() on an idle system still runs after
 * two back-to-back grace periods.  Callback thread only.
 */
static bool cb_fresh(struct rcu_flavor *fl, struct rcu_cbq *head)
{
	for (struct rcu_cbq *q = head; q; q = q->next) {
		if (atomic_load_explicit(&q->queued, memory_order_relaxed) != q->taken)
			return true;
	}
	return !seq_done(atomic_load_explicit(&fl->gp_seq, memory_order_relaxed),
			 atomic_load_explicit(&fl->gp_requested, memory_order_relaxed));
}

/*
 * Pace: with new work waiting, start the next grace period no sooner than one
 * interval after the previous one began (@last_ns), unless a barrier or a
 * throttled updater waits (they kick) or the backlog is large.  Callback
 * thread only, offline (QSBR) / outside any section.
 */
static void cb_pace(struct rcu_flavor *fl, unsigned long long last_ns, unsigned long pending)
{
	unsigned long long iv = atomic_load_explicit(&cb_gp_interval_ns, memory_order_relaxed);
	unsigned long limit = atomic_load_explicit(&fl->cb_limit, memory_order_relaxed);
	unsigned long long now;

	if (!iv || !last_ns || (limit && pending > limit / 8))
		return;
	now = rcu_now_ns();
	if (now >= last_ns + iv)
		return;
	xlock(&fl->cb_lock);
	if (fl->barrier_active) {
		xunlock(&fl->cb_lock);
		return;
	}
	atomic_store_explicit(&fl->cb_pacing, 1, memory_order_relaxed);
	xunlock(&fl->cb_lock);
	futex_wait(&fl->cb_pacing, 1, last_ns + iv - now);
	atomic_store_explicit(&fl->cb_pacing, 0, memory_order_relaxed);
}

static void invoke_list(struct rcu_flavor *fl, struct rcu_cbq *q)
{
	struct rcu_head *h = q->waiting.head;
	unsigned long n = q->waiting.n, done = 0;

	q->waiting.head = NULL;
	q->waiting.tailp = &q->waiting.head;
	q->waiting.n = 0;
	while (h) {
		struct rcu_head *next = h->next;

		h->func(h);
		h = next;
		if ((++done & 1023) == 0)
			fl->ops->quiescent();
	}
	/* Release: the callbacks ran before rcu_barrier() sees the count. */
	atomic_store_explicit(&q->invoked,
			      atomic_load_explicit(&q->invoked, memory_order_relaxed) + n,
			      memory_order_release);
	atomic_fetch_add_explicit(&fl->st_cb_invoked, n, memory_order_relaxed);
}

/* Free drained queues of unregistered threads.  Callback thread only. */
static void reap_dead(struct rcu_flavor *fl)
{
	struct rcu_cbq **pp, *q;

	xlock(&fl->cb_lock);
	if (fl->barrier_active == 0) {
		for (pp = &fl->cbqs; (q = *pp);) {
			if (q->dead && !q->waiting.head &&
			    atomic_load_explicit(&q->queued, memory_order_relaxed) == q->taken &&
			    !q->list[0].head && !q->list[1].head) {
				*pp = q->next;
				free(q);
			} else {
				pp = &q->next;
			}
		}
	}
	xunlock(&fl->cb_lock);
}

static void *cb_thread_main(void *arg)
{
	struct rcu_flavor *fl = arg;
	char name[16];

	snprintf(name, sizeof(name), "rcu-cb-%s", fl->name);
	pthread_setname_np(pthread_self(), name);
	fl->ops->register_thread();
	fl->ops->offline();
	xlock(&fl->cb_lock);
	fl->cb_self = fl->ops->self_cbq();
	xunlock(&fl->cb_lock);
	unsigned long long last_gp_ns = 0;
	unsigned long last_pending = 0;

	for (;;) {
		struct rcu_cbq *head = cbq_head(fl), *q;
		unsigned long pending = 0, hwm;

		/* rcu_core_stop(): its barrier has passed.  End even if more
		 * work came meanwhile: the stopper restarts a thread for it. */
		if (atomic_load(&fl->cb_stop))
			break;
		if (!cb_work(fl, head)) {
			reap_dead(fl);
			cb_sleep(fl);
			last_gp_ns = 0; /* work after a sleep starts at once */
			continue;
		}
		if (cb_fresh(fl, head)) {
			cb_pace(fl, last_gp_ns, last_pending);
			head = cbq_head(fl); /* queues registered during the pause */
		}
		last_gp_ns = rcu_now_ns();
		/* Flip every queue with new callbacks: after the next grace
		 * period the old list is complete (struct rcu_cbq). */
		for (q = head; q; q = q->next) {
			if (atomic_load_explicit(&q->queued, memory_order_relaxed) != q->taken) {
				unsigned int c = atomic_load_explicit(&q->cur, memory_order_relaxed);

				atomic_store_explicit(&q->cur, c ^ 1u, memory_order_release);
			}
		}
		core_synchronize(fl);

		fl->ops->online();
		for (q = head; q; q = q->next) {
			unsigned int old = atomic_load_explicit(&q->cur, memory_order_relaxed) ^ 1u;
			struct rcu_cblist *l = &q->list[old];

			/* waiting was stolen before the previous grace period
			 * ended: this one makes it safe (G4). */
			if (q->waiting.head)
				invoke_list(fl, q);
			if (l->head) {
				q->waiting = *l;
				if (q->waiting.tailp == &l->head)
					q->waiting.tailp = &q->waiting.head;
				q->taken += l->n;
				l->head = NULL;
				l->tailp = &l->head;
				l->n = 0;
			}
			pending += atomic_load_explicit(&q->queued, memory_order_relaxed) -
				   atomic_load_explicit(&q->invoked, memory_order_relaxed);
		}

		last_pending = pending;
		fl->ops->quiescent();
		fl->ops->offline();
		atomic_fetch_add_explicit(&fl->st_cb_batches, 1, memory_order_relaxed);
		hwm = atomic_load_explicit(&fl->st_cb_pending_hwm, memory_order_relaxed);
		if (pending > hwm)
			atomic_store_explicit(&fl->st_cb_pending_hwm, pending, memory_order_relaxed);

		xlock(&fl->cb_lock);
		pthread_cond_broadcast(&fl->cb_cond);
		xunlock(&fl->cb_lock);
	}
	/* Returning runs the exit_key destructor: the thread unregisters and
	 * its (empty) queue is marked dead; rcu_core_stop() reaps it. */
	return NULL;
}

/*
 * rcu_core_stop() - rcu_barrier(), then end fl's callback thread and join it.
 * Every callback queued before the call has run when it returns.  Work that
 * arrives later (call_rcu(), a polled grace period, a new registration)
 * starts a new thread, at once if it came while the thread was ending.  Meant for the end of a program: with the thread
 * joined, nothing of the flavor's is left running, so leak checkers see a
 * quiet process.
 * Context: not a callback; caller holds no RCU reference.  Blocks.  One
 * caller at a time.
 */
void rcu_core_stop(struct rcu_flavor *fl)
{
	pthread_t t;

	rcu_core_barrier(fl);
	xlock(&fl->cb_lock);
	if (!fl->cb_started) {
		xunlock(&fl->cb_lock);
		return;
	}
	t = fl->cb_thread;
	atomic_store(&fl->cb_stop, true);
	xunlock(&fl->cb_lock);
	rcu_core_cb_kick(fl);
	/* cb_sleep() rechecks cb_stop after publishing cb_sleeping (seq_cst on
	 * both sides), so the wake above is not lost; at worst the 1 s sleep
	 * ends on its own. */
	int err = pthread_join(t, NULL);
	if (err)
		rcu_die("cannot join the %s callback thread: %s", fl->name, strerror(err));
	/* No thread walks the queues now and none can start (cb_started is
	 * still set): free the dead ones, the exited thread's among them. */
	xlock(&fl->cb_lock);
	fl->cb_self = NULL;
	xunlock(&fl->cb_lock);
	reap_dead(fl);
	xlock(&fl->cb_lock);
	fl->cb_started = false;
	atomic_store_explicit(&fl->cb_sleeping, 1, memory_order_relaxed);
	atomic_store_explicit(&fl->cb_stopped, true, memory_order_release);
	xunlock(&fl->cb_lock);
	/* Work queued after the barrier (the thread ends without waiting for
	 * it), or a call_rcu() or poll that raced with the thread's end and
	 * woke no one: start a thread for it.  Only atomics are read here (a
	 * restarted thread may already run). */
	rcu_heavy_mb();
	if (cb_pending_any(fl))
		rcu_core_cb_wake(fl);
}

/*
 * fork() support, liburcu's call_rcu_before_fork() / _after_fork_parent() /
 * _after_fork_child() in our terms.  The child has one thread, the one that
 * called fork(); every lock another thread held and every thread of ours is
 * gone there.  So before the fork:
 *  1. rcu_core_stop(): every callback queued so far has run and the
 *     callback thread is joined (nothing of it is copied half-done);
 *  2. cb_lock held with cb_started false: no thread can start it again
 *     (starting takes cb_lock; if one did between 1 and 2, stop again);
 *  3. gp_running owned by us (no grace period half-run in the copy), then
 *     registry_lock held (no registration half-linked).
 * Lock order as everywhere: gp_running, then registry_lock; cb_lock nests
 * inside neither elsewhere, and nothing waits for a grace period under it.
 * After the fork, the parent releases all three.  The child reinitialises
 * the flavor's mutexes and condition variables (threads that no longer
 * exist may have been waiting on them), and removes from the registry every
 * reader but itself: a dead reader caught inside a read-side section would
 * otherwise hold every grace period forever.  Their callback queues are
 * marked dead; a restarted callback thread drains and frees them.
 * Context: the forking thread, holding no RCU reference; one at a time.
 */
void rcu_core_fork_prepare(struct rcu_flavor *fl)
{
	for (;;) {
		rcu_core_stop(fl);
		xlock(&fl->cb_lock);
		if (!fl->cb_started)
			break;
		xunlock(&fl->cb_lock);
	}
	for (;;) {
		bool idle = false;

		if (atomic_compare_exchange_strong(&fl->gp_running, &idle, true))
			break;
		sched_yield();
	}
	xlock(&fl->registry_lock);
}

void rcu_core_fork_parent(struct rcu_flavor *fl)
{
	xunlock(&fl->registry_lock);
	atomic_store(&fl->gp_running, false);
	if (atomic_load(&fl->gp_waiters)) { /* as core_synchronize()'s runner */
		xlock(&fl->gp_lock);
		pthread_cond_broadcast(&fl->gp_cond);
		xunlock(&fl->gp_lock);
	}
	xunlock(&fl->cb_lock);
	/* Work queued meanwhile found the thread stopped and waits for cb_lock
	 * to start it; this covers work that raced with the stop itself. */
	rcu_heavy_mb();
	if (cb_pending_any(fl))
		rcu_core_cb_wake(fl);
}

void rcu_core_fork_child(struct rcu_flavor *fl, struct rcu_reader_link *self)
{
	struct rcu_reader_link *l, *next;

	pthread_mutex_init(&fl->gp_lock, NULL);
	cond_init(&fl->gp_cond);
	pthread_mutex_init(&fl->registry_lock, NULL);
	pthread_mutex_init(&fl->cb_lock, NULL);
	cond_init(&fl->cb_cond);
	fl->barrier_active = 0; /* a barrier's caller did not come along */
	atomic_store(&fl->gp_waiters, 0);
	atomic_store(&fl->gp_running, false);
	for (l = fl->registry.next; l != &fl->registry; l = next) {
		next = l->next;
		if (l == self) {
			l->tid = (int)syscall(SYS_gettid);
			continue;
		}
		l->prev->next = l->next;
		l->next->prev = l->prev;
		l->next = l->prev = NULL;
		l->cbq->dead = true;
		fl->nreaders--;
	}
	rcu_heavy_mb();
	if (cb_pending_any(fl))
		rcu_core_cb_wake(fl);
}

/*
 * rcu_core_throttle() - wait until q's backlog is at most half the limit.
 * Context: q's owner, at a point where it holds no RCU reference (QSBR:
 * offline; memb: outside any section).  Blocks.
 */
void rcu_core_throttle(struct rcu_flavor *fl, struct rcu_cbq *q)
{
	unsigned long limit = atomic_load_explicit(&fl->cb_limit, memory_order_relaxed);

	xlock(&fl->cb_lock);
	/* Callbacks that queue callbacks must not wait for themselves. */
	if (q != fl->cb_self)
		atomic_fetch_add_explicit(&fl->st_cb_throttled, 1, memory_order_relaxed);
	while (limit && q != fl->cb_self &&
	       atomic_load_explicit(&q->queued, memory_order_relaxed) -
			       atomic_load_explicit(&q->invoked, memory_order_acquire) >
		       limit / 2) {
		rcu_core_cb_kick(fl);
		cond_wait_ms(&fl->cb_cond, &fl->cb_lock, 10);
	}
	xunlock(&fl->cb_lock);
}

struct barrier_target {
	struct rcu_cbq *q;
	unsigned long target;
};

static bool targets_done(struct barrier_target *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!seq_done(atomic_load_explicit(&t[i].q->invoked, memory_order_acquire),
			      t[i].target))
			return false;
	}
	return true;
}

/*
 * rcu_core_barrier() - G5.  Snapshots every queue's count, waits for the
 * callback thread to pass it, then repeats for the callback thread's own
 * queue (callbacks queued by callbacks) until it stops growing.
 * Context: not the callback thread; caller holds no RCU reference.  Blocks.
 */
void rcu_core_barrier(struct rcu_flavor *fl)
{
	struct barrier_target *t = NULL;
	size_t n = 0, cap = 0;
	struct rcu_cbq *q, *self;

	xlock(&fl->cb_lock);
	if (fl->cb_started && pthread_equal(pthread_self(), fl->cb_thread))
		rcu_die("rcu_barrier() called from a %s callback: it would wait for itself",
			fl->name);
	fl->barrier_active++;
	for (q = fl->cbqs; q; q = q->next) {
		unsigned long queued = atomic_load_explicit(&q->queued, memory_order_acquire);

		if (seq_done(atomic_load_explicit(&q->invoked, memory_order_acquire), queued))
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct barrier_target *nt = realloc(t, ncap * sizeof(*t));

			if (!nt)
				rcu_die("out of memory in rcu_barrier");
			t = nt;
			cap = ncap;
		}
		t[n].q = q;
		t[n].target = queued;
		n++;
	}
	if (n) {
		rcu_core_cb_kick(fl);
		while (!targets_done(t, n)) {
			rcu_core_cb_kick(fl);
			cond_wait_ms(&fl->cb_cond, &fl->cb_lock, 10);
		}
	}
	/* Callbacks queued by callbacks land on the callback thread's queue.
	 * Read it only now: a thread started (or restarted after
	 * rcu_core_stop()) sets it before it invokes anything, so once the
	 * targets above ran, it is set. */
	self = fl->cb_self;
	while (self) {
		struct barrier_target st = {
			self, atomic_load_explicit(&self->queued, memory_order_acquire)
		};

		if (targets_done(&st, 1))
			break;
		rcu_core_cb_kick(fl);
		cond_wait_ms(&fl->cb_cond, &fl->cb_lock, 10);
	}
	fl->barrier_active--;
	xunlock(&fl->cb_lock);
	free(t);
}

void rcu_core_get_stats(struct rcu_flavor *fl, struct rcu_stats *st)
{
	struct rcu_cbq *q;
	unsigned long queued = 0, invoked = 0;

	memset(st, 0, sizeof(*st));
	xlock(&fl->cb_lock);
	for (q = fl->cbqs; q; q = q->next) {
		queued += atomic_load_explicit(&q->queued, memory_order_relaxed);
		invoked += atomic_load_explicit(&q->invoked, memory_order_relaxed);
	}
	xunlock(&fl->cb_lock);
	st->gp_completed = atomic_load_explicit(&fl->st_gp_completed, memory_order_relaxed);
	st->gp_last_ns = ticks_to_ns(atomic_load_explicit(&fl->st_gp_last_ns, memory_order_relaxed));
	st->gp_max_ns = ticks_to_ns(atomic_load_explicit(&fl->st_gp_max_ns, memory_order_relaxed));
	st->cb_invoked = atomic_load_explicit(&fl->st_cb_invoked, memory_order_relaxed);
	/* Queues of exited threads are freed once drained, so the live sum
	 * understates queued: derive it from invoked + pending. */
	st->cb_pending = queued >= invoked ? queued - invoked : 0;
	st->cb_queued = st->cb_invoked + st->cb_pending;
	st->cb_pending_hwm = atomic_load_explicit(&fl->st_cb_pending_hwm, memory_order_relaxed);
	if (st->cb_pending > st->cb_pending_hwm)
		st->cb_pending_hwm = st->cb_pending;
	st->cb_throttled = atomic_load_explicit(&fl->st_cb_throttled, memory_order_relaxed);
	st->cb_batches = atomic_load_explicit(&fl->st_cb_batches, memory_order_relaxed);
	st->stalls = atomic_load_explicit(&fl->st_stalls, memory_order_relaxed);
	xlock(&fl->registry_lock);
	st->readers = fl->nreaders;
	xunlock(&fl->registry_lock);
}
