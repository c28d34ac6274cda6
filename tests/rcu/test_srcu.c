/*
 * test_srcu.c - SRCU and the flavor-safe reclaimer (built once per flavor,
 * which matters for the reclaimer and the fast readers).
 *
 *  - synchronize_srcu() takes the fast path (no flip, no sleep) when nobody
 *    reads, and waits for a reader that sleeps inside its section;
 *  - a sleeping reader of domain A does not delay synchronize_srcu(B);
 *  - readers need not be registered with any flavor;
 *  - concurrent synchronize_srcu() callers share grace periods;
 *  - torture: readers sleep inside sections while writers replace and free
 *    poisoned elements;
 *  - the reclaimer never frees what a sleeping SRCU reader still sees while
 *    fast readers churn, and frees it once the reader leaves.
 * No assertion is on time: orderings are observed with flags.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rcu/poison.h"
#include "rcu/rcu.h"

static void sleep_ms(int ms)
{
	usleep((useconds_t)ms * 1000);
}

static int wait_flag(_Atomic int *flag)
{
	for (int i = 0; i < 10000 && !atomic_load(flag); i++)
		sleep_ms(1);
	return atomic_load(flag);
}

struct sleeper {
	struct srcu_struct *ss;
	_Atomic int entered, release, leaving;
};

static void *sleep_in_section(void *arg)
{
	struct sleeper *s = arg;
	int idx = srcu_read_lock(s->ss); /* not registered with any flavor */

	atomic_store(&s->entered, 1);
	while (!atomic_load(&s->release))
		sleep_ms(5); /* sleeps inside the section */
	atomic_store(&s->leaving, 1);
	srcu_read_unlock(s->ss, idx);
	return NULL;
}

struct syncer {
	struct srcu_struct *ss;
	_Atomic int returned;
};

static void *sync_fn(void *arg)
{
	struct syncer *y = arg;

	synchronize_srcu(y->ss);
	atomic_store(&y->returned, 1);
	return NULL;
}

static void test_fast_path_and_wait(void **state)
{
	struct srcu_struct ss;
	struct sleeper s = { .ss = &ss };
	struct syncer y = { .ss = &ss };
	pthread_t t, u;

	(void)state;
	assert_int_equal(init_srcu_struct(&ss), 0);
	for (int i = 0; i < 1000; i++)
		synchronize_srcu(&ss);
	assert_int_equal(atomic_load(&ss.st_fast), 1000);
	assert_int_equal(atomic_load(&ss.st_slow), 0);

	{ /* nested sections of one domain on one thread */
		int a = srcu_read_lock(&ss), b = srcu_read_lock(&ss);

		srcu_read_unlock(&ss, b);
		srcu_read_unlock(&ss, a);
	}

	pthread_create(&t, NULL, sleep_in_section, &s);
	assert_true(wait_flag(&s.entered));
	pthread_create(&u, NULL, sync_fn, &y);
	sleep_ms(100);
	assert_int_equal(atomic_load(&y.returned), 0); /* the reader still sleeps inside */
	atomic_store(&s.release, 1);
	pthread_join(u, NULL);
	assert_int_equal(atomic_load(&s.leaving), 1);
	pthread_join(t, NULL);
	assert_true(atomic_load(&ss.st_slow) >= 1);
	synchronize_srcu(&ss); /* fast again */
	cleanup_srcu_struct(&ss);
}

static void test_domains_independent(void **state)
{
	struct srcu_struct a, b;
	struct sleeper s = { .ss = &a };
	pthread_t t;

	(void)state;
	init_srcu_struct(&a);
	init_srcu_struct(&b);
	a.name = "A";
	b.name = "B";
	pthread_create(&t, NULL, sleep_in_section, &s);
	assert_true(wait_flag(&s.entered));
	for (int i = 0; i < 100; i++)
		synchronize_srcu(&b);
	/* B's grace periods all ended while A's reader slept inside. */
	assert_int_equal(atomic_load(&s.leaving), 0);
	{ /* a reader of B, too, does not matter to A's fast path once gone */
		int i = srcu_read_lock(&b);

		srcu_read_unlock(&b, i);
	}
	atomic_store(&s.release, 1);
	pthread_join(t, NULL);
	synchronize_srcu(&a);
	cleanup_srcu_struct(&a);
	cleanup_srcu_struct(&b);
}

static void test_concurrent_sync_shares(void **state)
{
	struct srcu_struct ss;
	struct sleeper s = { .ss = &ss };
	struct syncer y[8];
	pthread_t t, u[8];
	unsigned long seq0;

	(void)state;
	init_srcu_struct(&ss);
	pthread_create(&t, NULL, sleep_in_section, &s);
	assert_true(wait_flag(&s.entered));
	seq0 = atomic_load(&ss.gp_seq);
	for (int i = 0; i < 8; i++) {
		y[i].ss = &ss;
		atomic_init(&y[i].returned, 0);
		pthread_create(&u[i], NULL, sync_fn, &y[i]);
	}
	sleep_ms(100);
	atomic_store(&s.release, 1);
	for (int i = 0; i < 8; i++)
		pthread_join(u[i], NULL);
	pthread_join(t, NULL);
	printf("8 concurrent synchronize_srcu(): %lu flips\n",
	       (atomic_load(&ss.gp_seq) - seq0) / 2);
	assert_true(atomic_load(&ss.gp_seq) - seq0 <= 4); /* at most two grace periods */
	cleanup_srcu_struct(&ss);
}

/* --- torture: sleeping readers, freeing writers ------------------------------ */

#define LIVE 0x5eed5eedUL
struct obj {
	unsigned long magic;
	unsigned long seq, check;
	struct rcu_head rh;
};

static struct obj *slots[8];
static struct srcu_struct tss;
static _Atomic int tstop;
static _Atomic unsigned long terrors, treads, tupdates;

static struct obj *obj_new(unsigned long seq)
{
	struct obj *o = malloc(sizeof(*o));

	o->magic = LIVE;
	o->seq = seq;
	o->check = ~seq;
	return o;
}

static void obj_poison_free(struct obj *o)
{
	rcu_poison(o, sizeof(*o));
	free(o);
}

static void *torture_reader(void *arg)
{
	unsigned long n = 0, err = 0;

	(void)arg;
	while (!atomic_load(&tstop)) {
		int idx = srcu_read_lock(&tss);
		struct obj *seen[8];

		unsigned long seq[8];

		for (int i = 0; i < 8; i++) {
			seen[i] = srcu_dereference(slots[i], &tss);
			seq[i] = seen[i]->seq;
		}
		usleep(200); /* sleep holding references */
		/* Still live, consistent, and the same element: a freed block
		 * that malloc() handed out again (jemalloc does at once) is
		 * live and consistent, only with another seq. */
		for (int i = 0; i < 8; i++) {
			if (seen[i]->magic != LIVE || seen[i]->check != ~seen[i]->seq ||
			    seen[i]->seq != seq[i])
				err++;
			n++;
		}
		srcu_read_unlock(&tss, idx);
	}
	atomic_fetch_add(&treads, n);
	atomic_fetch_add(&terrors, err);
	return NULL;
}

static void *torture_writer(void *arg)
{
	unsigned long seq = 1000;

	(void)arg;
	while (!atomic_load(&tstop)) {
		int i = (int)(seq % 8);
		struct obj *old = slots[i];

		rcu_assign_pointer(slots[i], obj_new(seq++));
		synchronize_srcu(&tss);
		obj_poison_free(old);
		atomic_fetch_add(&tupdates, 1);
	}
	return NULL;
}

static void test_srcu_torture(void **state)
{
	pthread_t r[3], w;
	const char *env = getenv("TORTURE_SECONDS");
	double secs = env ? atof(env) : 2.0;

	(void)state;
	init_srcu_struct(&tss);
	for (int i = 0; i < 8; i++)
		slots[i] = obj_new((unsigned long)i);
	for (int i = 0; i < 3; i++)
		pthread_create(&r[i], NULL, torture_reader, NULL);
	pthread_create(&w, NULL, torture_writer, NULL);
	sleep_ms((int)(secs * 1000));
	atomic_store(&tstop, 1);
	pthread_join(w, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(r[i], NULL);
	printf("srcu torture: %lu reads, %lu updates, fast %lu slow %lu, errors %lu\n",
	       atomic_load(&treads), atomic_load(&tupdates), atomic_load(&tss.st_fast),
	       atomic_load(&tss.st_slow), atomic_load(&terrors));
	/* tests/rcu/broken_gp.sh looks for this line (not for the test's
	 * name, which the work floors below also fail). */
	if (atomic_load(&terrors))
		printf("srcu torture error: readers saw %lu freed or reused elements\n",
		       atomic_load(&terrors));
	assert_int_equal(atomic_load(&terrors), 0);
	assert_true(atomic_load(&tupdates) >= 50);
	assert_true(atomic_load(&tss.st_slow) >= 10); /* readers were really inside */
	for (int i = 0; i < 8; i++)
		free(slots[i]);
	cleanup_srcu_struct(&tss);
}

/* --- the flavor-safe reclaimer ------------------------------------------------- */

static struct obj *shared;      /* reachable by fast readers and SRCU scanners */
static struct srcu_struct rss;
static _Atomic unsigned long freed_count, fast_errors;
static _Atomic int fast_stop;

static void obj_reclaim(struct rcu_head *h)
{
	obj_poison_free(container_of(h, struct obj, rh));
	atomic_fetch_add(&freed_count, 1);
}

static void *fast_reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
	while (!atomic_load(&fast_stop)) {
		rcu_read_lock();
		struct obj *o = rcu_dereference(shared);

		if (o->magic != LIVE)
			atomic_fetch_add(&fast_errors, 1);
		rcu_read_unlock();
		rcu_quiescent_state();
	}
	rcu_unregister_thread();
	return NULL;
}

struct scanner {
	_Atomic int holding, release;
	struct obj *seen;
	_Atomic int intact_after_sleep;
};

static void *srcu_scanner(void *arg)
{
	struct scanner *s = arg;
	int idx = srcu_read_lock(&rss);

	s->seen = srcu_dereference(shared, &rss);
	atomic_store(&s->holding, 1);
	while (!atomic_load(&s->release))
		sleep_ms(5);
	atomic_store(&s->intact_after_sleep, s->seen->magic == LIVE);
	srcu_read_unlock(&rss, idx);
	return NULL;
}

static void test_reclaim_waits_for_sleeping_scanner(void **state)
{
	struct srcu_reclaim *r;
	struct scanner sc = { 0 };
	pthread_t fr[2], st;
	struct srcu_reclaim_stats rs;
	struct rcu_stats before, after;
	unsigned long seq = 1;

	(void)state;
	init_srcu_struct(&rss);
	rss.name = "scan";
	r = srcu_reclaim_new_flavor(&rss, obj_reclaim, "test");
	assert_non_null(r);
	rcu_register_thread();
	shared = obj_new(0);
	for (int i = 0; i < 2; i++)
		pthread_create(&fr[i], NULL, fast_reader, NULL);

	pthread_create(&st, NULL, srcu_scanner, &sc);
	assert_true(wait_flag(&sc.holding));
	/* Replace the object the scanner holds, and keep replacing while fast
	 * readers churn through many flavor grace periods. */
	rcu_get_stats(&before);
	for (int i = 0; i < 2000; i++) {
		struct obj *old = shared;

		rcu_assign_pointer(shared, obj_new(seq++));
		srcu_reclaim_defer(r, &old->rh);
		rcu_quiescent_state();
		if (i % 100 == 0) {
			rcu_thread_offline();
			sleep_ms(2);
			rcu_thread_online();
		}
	}
	rcu_thread_offline();
	rcu_barrier(); /* every flavor grace period has passed for all of them */
	rcu_thread_online();
	rcu_get_stats(&after);
	srcu_reclaim_get_stats(r, &rs);
	printf("reclaim: %lu deferred, %lu freed, %lu waiting for the scanner; %lu flavor grace "
	       "periods meanwhile\n",
	       rs.deferred, rs.freed, rs.waiting, after.gp_completed - before.gp_completed);
	/* The flavor's grace periods passed; the scanner still sleeps: the
	 * object it saw, and every object removed while it reads, is unfreed. */
	assert_true(after.gp_completed - before.gp_completed >= 2);
	assert_int_equal(atomic_load(&freed_count), 0);
	assert_true(rs.waiting >= 1);
	atomic_store(&sc.release, 1);
	pthread_join(st, NULL);
	assert_int_equal(atomic_load(&sc.intact_after_sleep), 1);
	rcu_thread_offline();
	srcu_reclaim_barrier(r);
	rcu_thread_online();
	assert_int_equal(atomic_load(&freed_count), 2000);

	atomic_store(&fast_stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(fr[i], NULL);
	assert_int_equal(atomic_load(&fast_errors), 0);
	free(shared);
	rcu_unregister_thread();
	srcu_reclaim_free(r);
	cleanup_srcu_struct(&rss);
}

/* Arguments: test names (e.g. test_srcu_torture) run only those tests, so that
 * tests/rcu/broken_gp.sh runs the torture alone in a BROKEN_GP=1 build. */
int main(int argc, char **argv)
{
	const struct CMUnitTest all[] = {
		cmocka_unit_test(test_fast_path_and_wait),
		cmocka_unit_test(test_domains_independent),
		cmocka_unit_test(test_concurrent_sync_shares),
		cmocka_unit_test(test_srcu_torture),
		cmocka_unit_test(test_reclaim_waits_for_sleeping_scanner),
	};
	struct CMUnitTest tests[sizeof(all) / sizeof(all[0])];
	size_t n = 0;
	int failed, unknown = 0;

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		int want = argc < 2;

		for (int a = 1; a < argc; a++)
			want |= strcmp(argv[a], all[i].name) == 0;
		if (want)
			tests[n++] = all[i];
	}
	for (int a = 1; a < argc; a++) {
		int found = 0;

		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			found |= strcmp(argv[a], all[i].name) == 0;
		if (!found) {
			printf("FAIL no test named %s\n", argv[a]);
			unknown++;
		}
	}
	/* _cmocka_run_group_tests() is what the macro expands to, with a
	 * count we choose. */
	failed = n ? _cmocka_run_group_tests("srcu_" RCU_FLAVOR_NAME, tests, n, NULL, NULL) : 0;
	printf("%zu passed, %d failed\n", n - (size_t)failed, failed + unknown);
	return failed + unknown ? 1 : 0;
}
