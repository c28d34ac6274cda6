/*
 * test_rcu.c - behaviour of one flavor's update side (built once per flavor):
 * grace periods wait for pre-existing readers and only those, rcu_barrier()
 * waits for every earlier callback (from several threads, and callbacks
 * queued by callbacks), rcu_shutdown() drains and joins the callback thread
 * and a later call starts it again, idle threads do not stall grace periods, the callback
 * backlog stays bounded under a flood, polled cookies complete only after a
 * full grace period, concurrent synchronize_rcu() callers share grace
 * periods, and misuse aborts with a message (death tests run this binary
 * again with --death NAME).  No test asserts a time: waits that must not end
 * are observed as orderings, and waits that must end are bounded by generous
 * timeouts that only turn a hang into a failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rcu/rcu.h"
#include "rcu/rcu_internal.h"

#ifdef RCU_FLAVOR_QSBR
#define FLAVOR (&rcu_qsbr_flavor)
#else
#define FLAVOR (&rcu_memb_flavor)
#endif

static const char *self_exe;

static void sleep_ms(int ms)
{
	usleep((useconds_t)ms * 1000);
}

/* Waits up to 10 s for *flag to become non-zero; returns its value. */
static int wait_flag(_Atomic int *flag)
{
	for (int i = 0; i < 10000 && !atomic_load(flag); i++)
		sleep_ms(1);
	return atomic_load(flag);
}

/* --- a reader holding a section --------------------------------------------- */

struct holder {
	_Atomic int entered, release, leaving, done;
};

static void *hold_section(void *arg)
{
	struct holder *h = arg;

	rcu_register_thread();
	rcu_read_lock();
	atomic_store(&h->entered, 1);
	wait_flag(&h->release);
	atomic_store(&h->leaving, 1);
	rcu_read_unlock();
	rcu_quiescent_state();
	rcu_unregister_thread();
	atomic_store(&h->done, 1);
	return NULL;
}

static void *sync_thread(void *arg)
{
	_Atomic int *returned = arg;

	synchronize_rcu();
	atomic_store(returned, 1);
	return NULL;
}

/* G1: synchronize_rcu() waits for a reader that was in its section first. */
static void test_sync_waits_for_preexisting_reader(void **state)
{
	struct holder h = { 0 };
	_Atomic int returned = 0;
	pthread_t r, s;

	(void)state;
	pthread_create(&r, NULL, hold_section, &h);
	assert_true(wait_flag(&h.entered));
	pthread_create(&s, NULL, sync_thread, (void *)&returned);
	sleep_ms(100);
	/* Ordering, not time: the reader has not left, so sync cannot be done. */
	assert_int_equal(atomic_load(&returned), 0);
	atomic_store(&h.release, 1);
	pthread_join(s, NULL);
	assert_int_equal(atomic_load(&h.leaving), 1);
	pthread_join(r, NULL);
}

struct late_reader {
	_Atomic int go, entered, sync_returned, ok;
};

static void *late_reader_fn(void *arg)
{
	struct late_reader *l = arg;

	rcu_register_thread();
	rcu_thread_offline();
	wait_flag(&l->go);
	rcu_thread_online();
	rcu_read_lock();
	atomic_store(&l->entered, 1);
	/* Stay inside until synchronize_rcu() returns (bounded). */
	atomic_store(&l->ok, wait_flag(&l->sync_returned));
	rcu_read_unlock();
	rcu_unregister_thread();
	return NULL;
}

/* G1, other half: a reader that begins while the grace period runs is not waited for. */
static void test_sync_ignores_new_reader(void **state)
{
	struct late_reader l = { 0 };
	struct holder h = { 0 };
	pthread_t r, lr, s;
	_Atomic int returned = 0;

	(void)state;
	/* An old reader keeps the grace period open while the new one enters. */
	pthread_create(&r, NULL, hold_section, &h);
	assert_true(wait_flag(&h.entered));
	pthread_create(&lr, NULL, late_reader_fn, &l);
	pthread_create(&s, NULL, sync_thread, (void *)&returned);
	/* Wait until the grace period is running (gp_seq odd). */
	for (int i = 0; i < 10000 && !(atomic_load(&FLAVOR->gp_seq) & 1); i++)
		sleep_ms(1);
	assert_true(atomic_load(&FLAVOR->gp_seq) & 1);
	atomic_store(&l.go, 1);
	assert_true(wait_flag(&l.entered));
	atomic_store(&h.release, 1);
	pthread_join(s, NULL); /* returns although the late reader is still inside */
	atomic_store(&l.sync_returned, 1);
	pthread_join(lr, NULL);
	pthread_join(r, NULL);
	assert_int_equal(atomic_load(&l.ok), 1);
}

/* --- callbacks and rcu_barrier ------------------------------------------------ */

static _Atomic unsigned long cb_count;

struct counted {
	struct rcu_head rh;
	int depth;
};

static void counted_cb(struct rcu_head *h)
{
	struct counted *c = container_of(h, struct counted, rh);

	atomic_fetch_add(&cb_count, 1);
	if (c->depth > 0) {
		/* A callback queueing a callback: rcu_barrier() must wait for it too. */
		c->depth--;
		call_rcu(&c->rh, counted_cb);
		return;
	}
	free(c);
}

#define PER_THREAD 20000
#define NTHREADS 4

static void *queue_callbacks(void *arg)
{
	(void)arg;
	rcu_register_thread();
	for (int i = 0; i < PER_THREAD; i++) {
		struct counted *c = malloc(sizeof(*c));

		c->depth = (i % 1000 == 0) ? 5 : 0;
		call_rcu(&c->rh, counted_cb);
		if (i % 64 == 0)
			rcu_quiescent_state();
	}
	rcu_unregister_thread(); /* exits with callbacks still queued */
	return NULL;
}

static void test_barrier_waits_for_all_callbacks(void **state)
{
	pthread_t t[NTHREADS];
	unsigned long expect = NTHREADS * (PER_THREAD + (PER_THREAD / 1000) * 5);

	(void)state;
	atomic_store(&cb_count, 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, queue_callbacks, NULL);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	rcu_barrier();
	assert_int_equal(atomic_load(&cb_count), expect);
}

/* --- rcu_shutdown(): drain, join, restart on demand --------------------------------- */

static bool cb_thread_running(void)
{
	bool on;

	pthread_mutex_lock(&FLAVOR->cb_lock);
	on = FLAVOR->cb_started;
	pthread_mutex_unlock(&FLAVOR->cb_lock);
	return on;
}

static void *queue_one(void *arg)
{
	struct counted *c = malloc(sizeof(*c));

	(void)arg;
	rcu_register_thread();
	c->depth = 3;
	call_rcu(&c->rh, counted_cb);
	rcu_unregister_thread();
	return NULL;
}

struct churn {
	_Atomic int stop;
	_Atomic unsigned long queued;
};

static void *churn_callbacks(void *arg)
{
	struct churn *ch = arg;

	rcu_register_thread();
	while (!atomic_load(&ch->stop)) {
		struct counted *c = malloc(sizeof(*c));

		c->depth = 0;
		call_rcu(&c->rh, counted_cb);
		atomic_fetch_add(&ch->queued, 1);
		rcu_quiescent_state();
		if (atomic_load(&ch->queued) % 256 == 0)
			sleep_ms(1);
	}
	rcu_unregister_thread();
	return NULL;
}

/*
 * rcu_shutdown() invokes every earlier callback (those queued by callbacks
 * too), then joins the callback thread; whatever comes later (a registration,
 * a call_rcu() from a thread registered before, a polled grace period)
 * starts a new one and is served; shutdowns racing with a thread queueing
 * callbacks lose none.
 */
static void test_shutdown_and_restart(void **state)
{
	pthread_t t[NTHREADS];
	unsigned long expect = NTHREADS * (PER_THREAD + (PER_THREAD / 1000) * 5);
	struct churn ch = { 0 };
	unsigned long c;

	(void)state;
	rcu_barrier();
	atomic_store(&cb_count, 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, queue_callbacks, NULL);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	rcu_shutdown();
	assert_int_equal(atomic_load(&cb_count), expect); /* drained first */
	assert_false(cb_thread_running());
	rcu_shutdown(); /* idle: returns */
	assert_false(cb_thread_running());

	/* A registration starts a thread again; its callbacks run. */
	atomic_store(&cb_count, 0);
	pthread_create(&t[0], NULL, queue_one, NULL);
	pthread_join(t[0], NULL);
	rcu_barrier();
	assert_int_equal(atomic_load(&cb_count), 4);
	rcu_shutdown();
	assert_false(cb_thread_running());

	/* A thread registered before the shutdown (this one) queues again. */
	rcu_register_thread(); /* starts a callback thread ... */
	rcu_shutdown();	       /* ... which ends here */
	assert_false(cb_thread_running());
	atomic_store(&cb_count, 0);
	struct counted *one = malloc(sizeof(*one));

	one->depth = 0;
	call_rcu(&one->rh, counted_cb);
	for (int i = 0; i < 10000 && atomic_load(&cb_count) == 0; i++) {
		rcu_quiescent_state();
		sleep_ms(1);
	}
	assert_int_equal(atomic_load(&cb_count), 1);
	rcu_shutdown();

	/* A polled grace period after the shutdown completes. */
	c = start_poll_synchronize_rcu();
	for (int i = 0; i < 10000 && !poll_state_synchronize_rcu(c); i++) {
		rcu_quiescent_state();
		sleep_ms(1);
	}
	assert_true(poll_state_synchronize_rcu(c));
	rcu_unregister_thread();

	/* Shutdowns racing with a thread that keeps queueing: none lost. */
	atomic_store(&cb_count, 0);
	pthread_create(&t[0], NULL, churn_callbacks, &ch);
	for (int i = 0; i < 40; i++) {
		rcu_shutdown();
		sleep_ms(2);
	}
	atomic_store(&ch.stop, 1);
	pthread_join(t[0], NULL);
	rcu_barrier();
	printf("shutdown race: %lu callbacks queued, %lu invoked, 40 shutdowns\n",
	       atomic_load(&ch.queued), atomic_load(&cb_count));
	assert_true(atomic_load(&ch.queued) > 0);
	assert_int_equal(atomic_load(&cb_count), atomic_load(&ch.queued));
	rcu_shutdown();
	assert_false(cb_thread_running());
}

static void test_barrier_idle_returns(void **state)
{
	(void)state;
	rcu_barrier();
	rcu_barrier();
}

/* --- idle threads --------------------------------------------------------------- */

struct idler {
	_Atomic int ready, wake, still_blocked;
};

static void *idle_thread(void *arg)
{
	struct idler *d = arg;

	rcu_register_thread();
	rcu_thread_offline(); /* QSBR: what a worker does before epoll_wait */
	atomic_store(&d->ready, 1);
	wait_flag(&d->wake);
	rcu_thread_online();
	rcu_unregister_thread();
	return NULL;
}

/* Hazard 2: a registered thread blocked (offline / outside a section) does
 * not hold up grace periods. */
static void test_idle_thread_does_not_stall(void **state)
{
	struct idler d = { 0 };
	pthread_t t;
	struct rcu_stats before, after;

	(void)state;
	pthread_create(&t, NULL, idle_thread, &d);
	assert_true(wait_flag(&d.ready));
	rcu_get_stats(&before);
	for (int i = 0; i < 200; i++)
		synchronize_rcu();
	rcu_get_stats(&after);
	assert_true(after.gp_completed - before.gp_completed >= 200);
	assert_int_equal(atomic_load(&d.wake), 0); /* it was blocked throughout */
	atomic_store(&d.wake, 1);
	pthread_join(t, NULL);
}

/* --- flood bound ----------------------------------------------------------------- */

#define FLOOD_LIMIT 20000UL
static _Atomic int flood_stop;
static _Atomic unsigned long flood_done;

static void free_cb(struct rcu_head *h)
{
	free(h);
}

static void *flooder(void *arg)
{
	unsigned long n = 0;

	(void)arg;
	rcu_register_thread();
	while (!atomic_load_explicit(&flood_stop, memory_order_relaxed) && n < 4000000) {
		struct rcu_head *h = malloc(sizeof(*h) + 32);

		call_rcu(h, free_cb);
		n++;
		rcu_quiescent_state();
	}
	rcu_unregister_thread();
	atomic_fetch_add(&flood_done, n);
	return NULL;
}

/* Hazard 4: every core floods call_rcu(); the backlog stays bounded. */
static void test_flood_backlog_bounded(void **state)
{
	pthread_t t[2];
	struct rcu_stats st;

	(void)state;
	rcu_barrier();
	atomic_store(&FLAVOR->st_cb_pending_hwm, 0);
	rcu_set_callback_limit(FLOOD_LIMIT);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, flooder, NULL);
	sleep_ms(1500);
	atomic_store(&flood_stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	rcu_barrier();
	rcu_get_stats(&st);
	rcu_set_callback_limit(100000);
	printf("flood: %lu callbacks queued by 2 threads, backlog high-water %lu (limit %lu per "
	       "thread), throttled %lu times\n",
	       atomic_load(&flood_done), st.cb_pending_hwm, FLOOD_LIMIT, st.cb_throttled);
	assert_true(atomic_load(&flood_done) > 4 * FLOOD_LIMIT); /* it was a flood */
	/* Per thread: the limit, plus what one thread queues between two of its
	 * quiescent states (QSBR checks there) or one call (memb). */
	assert_true(st.cb_pending_hwm <= 2 * (FLOOD_LIMIT + FLOOD_LIMIT / 2) + 1000);
}

/* --- polled grace periods --------------------------------------------------------- */

static void test_poll_cookie(void **state)
{
	struct holder h = { 0 };
	pthread_t r;
	unsigned long c;

	(void)state;
	rcu_barrier();
	c = get_state_synchronize_rcu();
	synchronize_rcu();
	assert_true(poll_state_synchronize_rcu(c));

	/* With a reader inside its section, the cookie cannot complete. */
	pthread_create(&r, NULL, hold_section, &h);
	assert_true(wait_flag(&h.entered));
	c = start_poll_synchronize_rcu();
	for (int i = 0; i < 50; i++) {
		assert_false(poll_state_synchronize_rcu(c));
		sleep_ms(2);
	}
	atomic_store(&h.release, 1);
	for (int i = 0; i < 10000 && !poll_state_synchronize_rcu(c); i++)
		sleep_ms(1);
	assert_true(poll_state_synchronize_rcu(c));
	assert_int_equal(atomic_load(&h.leaving), 1);
	pthread_join(r, NULL);
}

/* G3: many concurrent synchronize_rcu() callers share grace periods. */
static void *many_sync(void *arg)
{
	(void)arg;
	for (int i = 0; i < 50; i++)
		synchronize_rcu();
	return NULL;
}

static void test_concurrent_sync_shares(void **state)
{
	pthread_t t[8];
	struct holder h = { 0 };
	pthread_t r;
	struct rcu_stats a, b;
	_Atomic int returned[8];

	(void)state;
	/* Eight callers arrive while one reader holds the grace period open:
	 * they must all be served by at most two grace periods. */
	pthread_create(&r, NULL, hold_section, &h);
	assert_true(wait_flag(&h.entered));
	rcu_get_stats(&a);
	for (int i = 0; i < 8; i++) {
		atomic_init(&returned[i], 0);
		pthread_create(&t[i], NULL, sync_thread, (void *)&returned[i]);
	}
	sleep_ms(100);
	atomic_store(&h.release, 1);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	rcu_get_stats(&b);
	pthread_join(r, NULL);
	printf("8 concurrent synchronize_rcu(): %lu grace periods\n",
	       b.gp_completed - a.gp_completed);
	assert_true(b.gp_completed - a.gp_completed <= 3); /* +1: the callback thread's */

	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, many_sync, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
}

/* --- misuse aborts with a message -------------------------------------------------- */

static void *unregistered_thread(void *arg)
{
	const char *what = arg;

	if (!strcmp(what, "unregistered-call_rcu")) {
		static struct rcu_head h;

		call_rcu(&h, free_cb);
	} else if (!strcmp(what, "unregistered-read")) {
#ifdef RCU_FLAVOR_QSBR
		rcu_quiescent_state();
#else
		rcu_read_lock();
#endif
	}
	return NULL;
}

static void *stuck_reader(void *arg)
{
	_Atomic int *entered = arg;

	pthread_setname_np(pthread_self(), "stuck-reader");
	rcu_register_thread();
	rcu_read_lock();
	atomic_store(entered, 1);
	sleep_ms(700); /* online / inside, reporting nothing */
	rcu_read_unlock();
	rcu_quiescent_state();
	rcu_unregister_thread();
	return NULL;
}

static int run_death(const char *what)
{
	if (!strcmp(what, "stall")) {
		_Atomic int entered = 0;
		pthread_t t;

		pthread_create(&t, NULL, stuck_reader, (void *)&entered);
		wait_flag(&entered);
		synchronize_rcu();
		pthread_join(t, NULL);
		return 0;
	}
	if (!strcmp(what, "unbalanced-unlock")) {
		rcu_register_thread();
#ifdef RCU_FLAVOR_QSBR
		rcu_thread_offline();
		rcu_thread_offline(); /* QSBR's detectable imbalance */
#else
		rcu_read_unlock();
#endif
	} else if (!strcmp(what, "sync-in-section")) {
#ifdef RCU_FLAVOR_MEMB
		rcu_register_thread();
		rcu_read_lock();
		synchronize_rcu();
#else
		rcu_die("rcu_qsbr_synchronize_rcu() inside a read-side section (n/a)");
#endif
	} else {
		pthread_t t;

		pthread_create(&t, NULL, unregistered_thread, (void *)what);
		pthread_join(t, NULL);
	}
	return 0; /* not reached when the check works */
}

/* Runs this binary with --death what; returns its stderr and exit status. */
static int run_child(const char *what, char *buf, size_t len)
{
	int fds[2], status;
	ssize_t n;
	size_t off = 0;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		execl(self_exe, self_exe, "--death", what, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (off < len - 1 && (n = read(fds[0], buf + off, len - 1 - off)) > 0)
		off += (size_t)n;
	buf[off] = 0;
	close(fds[0]);
	waitpid(pid, &status, 0);
	return status;
}

/* The stall warning names the thread that holds up the grace period. */
static void test_stall_warning(void **state)
{
	char buf[8192];
	int status;

	(void)state;
	setenv("RCU_STALL_TIMEOUT_MS", "100", 1);
	status = run_child("stall", buf, sizeof(buf));
	unsetenv("RCU_STALL_TIMEOUT_MS");
	printf("%s", buf);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(strstr(buf, "grace period stalled"));
	assert_non_null(strstr(buf, "(stuck-reader)"));
#ifdef RCU_FLAVOR_QSBR
	assert_non_null(strstr(buf, "has not reported a quiescent state"));
#else
	assert_non_null(strstr(buf, "has not left its read-side critical section"));
#endif
}

static void expect_death(const char *what, const char *message)
{
	int fds[2], status;
	char buf[4096] = { 0 };
	ssize_t n, off = 0;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		execl(self_exe, self_exe, "--death", what, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while ((n = read(fds[0], buf + off, sizeof(buf) - 1 - (size_t)off)) > 0)
		off += n;
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (!strstr(buf, message))
		fprintf(stderr, "death test %s printed: %s\n", what, buf);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	assert_non_null(strstr(buf, message));
}

static void test_misuse_aborts(void **state)
{
	(void)state;
	expect_death("unregistered-call_rcu", "not registered");
	expect_death("unregistered-read", "not registered");
#ifdef RCU_FLAVOR_QSBR
	expect_death("unbalanced-unlock", "already offline");
#else
	expect_death("unbalanced-unlock", "without a matching rcu_memb_read_lock");
	expect_death("sync-in-section", "inside a memb read-side critical section");
#endif
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sync_waits_for_preexisting_reader),
		cmocka_unit_test(test_sync_ignores_new_reader),
		cmocka_unit_test(test_barrier_idle_returns),
		cmocka_unit_test(test_barrier_waits_for_all_callbacks),
		cmocka_unit_test(test_shutdown_and_restart),
		cmocka_unit_test(test_idle_thread_does_not_stall),
		cmocka_unit_test(test_flood_backlog_bounded),
		cmocka_unit_test(test_poll_cookie),
		cmocka_unit_test(test_concurrent_sync_shares),
		cmocka_unit_test(test_misuse_aborts),
		cmocka_unit_test(test_stall_warning),
	};
	int failed;
	size_t n = sizeof(tests) / sizeof(tests[0]);

	self_exe = argv[0];
	if (argc == 3 && !strcmp(argv[1], "--death"))
		return run_death(argv[2]);
	printf("flavor %s, membarrier %s\n", RCU_FLAVOR_NAME, rcu_has_membarrier ? "on" : "off");
	failed = cmocka_run_group_tests_name("rcu_" RCU_FLAVOR_NAME, tests, NULL, NULL);
	printf("%zu passed, %d failed\n", n - (size_t)failed, failed);
	return failed ? 1 : 0;
}
