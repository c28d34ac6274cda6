/*
 * bench_srcu_urcu.c - the liburcu side of bench_srcu: liburcu memb's
 * synchronize_rcu() with no reader inside a section (one registered reader
 * thread, idle), the reference the issue names for synchronize_srcu()'s fast
 * path.  A separate object because liburcu's and rcukv's headers both define
 * rcu_dereference() and friends.  Benchmark only; never in the product.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <urcu/urcu-memb.h>

#include "bench/bench_srcu.h"

static _Atomic int stop, ready;

static void *idle_reader(void *arg)
{
	(void)arg;
	urcu_memb_register_thread();
	atomic_store(&ready, 1);
	while (!atomic_load(&stop)) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL); /* registered, never inside a section */
	}
	urcu_memb_unregister_thread();
	return NULL;
}

void bench_urcu_memb_sync(double *samples, int n, int with_idle_reader, int batch)
{
	pthread_t t;

	atomic_store(&stop, 0);
	atomic_store(&ready, 0);
	if (with_idle_reader) {
		pthread_create(&t, NULL, idle_reader, NULL);
		while (!atomic_load(&ready))
			;
	}
	for (int i = 0; i < n / batch; i++) {
		double t0 = bench_now_ns();

		for (int j = 0; j < batch; j++)
			urcu_memb_synchronize_rcu();
		samples[i] = (bench_now_ns() - t0) / batch;
	}
	if (with_idle_reader) {
		atomic_store(&stop, 1);
		pthread_join(t, NULL);
	}
}
