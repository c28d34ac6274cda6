/*
 * test_checker.c - one misuse per mode, run by tests/rcu/checker.sh in the
 * RCU_DEBUG build (each must abort with its message) and in the normal build
 * (the checker-only rules must cost nothing there: the same misuse runs to
 * the end).  Uses the qualified names, so rcu_dereference() is checked
 * against "any flavor".
 *
 * Usage: test_checker MODE   (exit 0 = the misuse went unnoticed)
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rcu/rcu.h"

static int *global_ptr;
static int value = 42;
static struct srcu_struct a, b;
static _Atomic int a_held, b_waiting;

static void *hold_b_sync_a(void *arg)
{
	(void)arg;
	int idx = srcu_read_lock(&b);

	while (!atomic_load(&a_held))
		usleep(1000);
	atomic_store(&b_waiting, 1);
	synchronize_srcu(&a); /* waits for the main thread, which holds a */
	srcu_read_unlock(&b, idx);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";
	int idx;

	rcu_assign_pointer(global_ptr, &value);
	init_srcu_struct(&a);
	init_srcu_struct(&b);
	a.name = "domain-a";
	b.name = "domain-b";
	pthread_setname_np(pthread_self(), "checker-main");

	if (!strcmp(m, "sync-in-memb-read")) {
		rcu_memb_register_thread();
		rcu_memb_read_lock();
		rcu_memb_synchronize_rcu();
	} else if (!strcmp(m, "barrier-in-memb-read")) {
		rcu_memb_register_thread();
		rcu_memb_read_lock();
		rcu_memb_rcu_barrier();
	} else if (!strcmp(m, "sync-in-qsbr-read")) {
		rcu_qsbr_register_thread();
		rcu_qsbr_read_lock();
		rcu_qsbr_synchronize_rcu();
	} else if (!strcmp(m, "srcu-self-deadlock")) {
		idx = srcu_read_lock(&a);
		synchronize_srcu(&a);
		srcu_read_unlock(&a, idx);
	} else if (!strcmp(m, "srcu-cross-deadlock")) {
		pthread_t t;

		idx = srcu_read_lock(&a);
		pthread_create(&t, NULL, hold_b_sync_a, NULL);
		atomic_store(&a_held, 1);
		while (!atomic_load(&b_waiting))
			usleep(1000);
		usleep(100000); /* let it enter synchronize_srcu(a) */
		synchronize_srcu(&b); /* deadlock: aborts in the debug build */
		srcu_read_unlock(&a, idx);
		pthread_join(t, NULL);
	} else if (!strcmp(m, "deref-outside")) {
		int *p = rcu_dereference(global_ptr);

		printf("read %d outside any read-side section\n", *p);
	} else if (!strcmp(m, "deref-qsbr-offline")) {
		rcu_qsbr_register_thread();
		rcu_qsbr_thread_offline();
		printf("read %d\n", *rcu_dereference(global_ptr));
	} else if (!strcmp(m, "deref-check-lock-held")) {
		/* The update side names its protection: allowed everywhere. */
		printf("read %d\n", *rcu_dereference_check(global_ptr, 1));
		printf("read %d\n", *rcu_dereference_protected(global_ptr, 1));
		rcu_memb_register_thread();
		rcu_memb_read_lock();
		printf("read %d\n", *rcu_dereference(global_ptr));
		rcu_memb_read_unlock();
		idx = srcu_read_lock(&a);
		printf("read %d\n", *srcu_dereference(global_ptr, &a));
		srcu_read_unlock(&a, idx);
	} else if (!strcmp(m, "deref-protected-unheld")) {
		printf("read %d\n", *rcu_dereference_protected(global_ptr, 0));
	} else if (!strcmp(m, "srcu-deref-wrong-domain")) {
		idx = srcu_read_lock(&b);
		printf("read %d\n", *srcu_dereference(global_ptr, &a));
		srcu_read_unlock(&b, idx);
	} else if (!strcmp(m, "srcu-unlock-other-domain")) {
		int j;

		idx = srcu_read_lock(&a);
		j = srcu_read_lock(&b);
		srcu_read_unlock(&b, j);
		srcu_read_unlock(&b, idx); /* meant a: b is no longer held */
	} else if (!strcmp(m, "srcu-unlock-stale-index")) {
		idx = srcu_read_lock(&a); /* 0: the other counter is drained */
		srcu_read_unlock(&a, idx ^ 1);
	} else if (!strcmp(m, "srcu-unlock-bad-index")) {
		idx = srcu_read_lock(&a);
		srcu_read_unlock(&a, 7);
	} else if (!strcmp(m, "memb-unregistered")) {
		rcu_memb_read_lock();
	} else if (!strcmp(m, "qsbr-unregistered")) {
		rcu_qsbr_quiescent_state();
	} else {
		fprintf(stderr, "unknown mode %s\n", m);
		return 2;
	}
	printf("mode %s ran to the end\n", m);
	return 0;
}
