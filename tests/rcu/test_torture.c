/*
 * test_torture.c - rcutorture-style torture of one flavor (built once with
 * RCU_FLAVOR_QSBR, once with RCU_FLAVOR_MEMB).
 *
 * Slots hold RCU-protected elements.  Readers, inside read-side sections,
 * check that each element they see is live (magic), internally consistent,
 * and has not yet completed a grace period since its removal (pipe < 2); they
 * dawdle, then check again, and check it is still the same element (same
 * seq: a freed block handed out again is live but another).  Two updaters replace elements: one waits with
 * synchronize_rcu() and frees, one frees through call_rcu(); a third uses
 * polled cookies.  Before freeing, elements are marked pipe = 2 and poisoned
 * (0x6b), so a reader still holding one fails loudly.  The run fails on any
 * error and also when it exercised too little (updates, grace periods,
 * callbacks).  Built with BROKEN_GP=1 (grace periods that do not wait), it
 * must fail: tests/rcu/broken_gp.sh checks that.
 *
 * TORTURE_SECONDS sets the duration (default 3).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rcu/poison.h"
#include "rcu/rcu.h"
#include "tests/check.h"

#define NSLOTS 16
#define NREADERS 3
#define LIVE 0x11fe11feUL

struct elem {
	unsigned long magic;
	_Atomic int pipe;       /* 0 live, 1 removed, 2 a grace period has passed */
	unsigned long seq;
	unsigned long check;    /* seq * 2654435761 */
	struct rcu_head rh;
	char payload[64];
};

static struct elem *slots[NSLOTS];
static _Atomic int stop;
static _Atomic unsigned long errors, reads, updates_sync, updates_cb, updates_poll;
static _Atomic unsigned long seqgen;

static struct elem *elem_new(void)
{
	struct elem *e = malloc(sizeof(*e));
	unsigned long s = atomic_fetch_add(&seqgen, 1);

	e->magic = LIVE;
	atomic_init(&e->pipe, 0);
	e->seq = s;
	e->check = s * 2654435761UL;
	memset(e->payload, (int)(s & 0x7f), sizeof(e->payload));
	return e;
}

static void elem_poison_free(struct elem *e)
{
	atomic_store_explicit(&e->pipe, 2, memory_order_relaxed);
	rcu_poison(e->payload, sizeof(e->payload));
	rcu_poison(&e->magic, sizeof(e->magic));
	free(e);
}

static void elem_cb(struct rcu_head *h)
{
	elem_poison_free(container_of(h, struct elem, rh));
}

static int check_elem(struct elem *e)
{
	if (e->magic != LIVE)
		return 1;
	if (atomic_load_explicit(&e->pipe, memory_order_relaxed) >= 2)
		return 2;
	if (e->check != e->seq * 2654435761UL)
		return 3;
	if (e->payload[0] != (char)(e->seq & 0x7f) || e->payload[63] != (char)(e->seq & 0x7f))
		return 4;
	return 0;
}

static void *reader(void *arg)
{
	unsigned long n = 0, err = 0;
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	rcu_register_thread();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		rcu_read_lock();
		for (int i = 0; i < NSLOTS; i++) {
			struct elem *e = rcu_dereference(slots[i]);
			int spin = rand_r(&seed) % 256, r;
			unsigned long seq;

			if (!e)
				continue;
			if ((r = check_elem(e))) {
				err++;
				if (err < 5)
					fprintf(stderr, "reader: slot %d seq %lu check %d at first look\n",
						i, e->seq, r);
				continue;
			}
			seq = e->seq;
			for (volatile int k = 0; k < spin; k++)
				;
			/* 5: the block was freed and handed out again meanwhile
			 * (jemalloc reuses a freed block at once, so the new
			 * element is live and consistent, only another one). */
			if ((r = check_elem(e)) || (e->seq != seq && (r = 5))) {
				err++;
				if (err < 5)
					fprintf(stderr, "reader: slot %d check %d after dawdling "
						"(element outlived its grace period)\n", i, r);
			}
			n++;
		}
		rcu_read_unlock();
		rcu_quiescent_state();
	}
	rcu_unregister_thread();
	atomic_fetch_add(&reads, n);
	atomic_fetch_add(&errors, err);
	return NULL;
}

/* Slots 0..5: synchronize_rcu(); 6..11: call_rcu(); 12..15: polled cookies. */
static void *updater_sync(void *arg)
{
	unsigned int seed = 1;

	(void)arg;
	rcu_register_thread();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int i = rand_r(&seed) % 6;
		struct elem *old = slots[i];

		rcu_assign_pointer(slots[i], elem_new());
		atomic_store(&old->pipe, 1);
		synchronize_rcu();
		elem_poison_free(old);
		atomic_fetch_add(&updates_sync, 1);
		rcu_quiescent_state();
	}
	rcu_unregister_thread();
	return NULL;
}

static void *updater_cb(void *arg)
{
	unsigned int seed = 2;

	(void)arg;
	rcu_register_thread();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int i = 6 + rand_r(&seed) % 6;
		struct elem *old = slots[i];

		rcu_assign_pointer(slots[i], elem_new());
		atomic_store(&old->pipe, 1);
		call_rcu(&old->rh, elem_cb);
		atomic_fetch_add(&updates_cb, 1);
		rcu_quiescent_state();
	}
	rcu_unregister_thread();
	return NULL;
}

struct pending {
	struct elem *e;
	unsigned long cookie;
};

static void *updater_poll(void *arg)
{
	unsigned int seed = 3;
	struct pending q[64];
	int nq = 0;

	(void)arg;
	rcu_register_thread();
	while (!atomic_load_explicit(&stop, memory_order_relaxed) || nq) {
		if (!atomic_load_explicit(&stop, memory_order_relaxed) && nq < 64) {
			int i = 12 + rand_r(&seed) % 4;
			struct elem *old = slots[i];

			rcu_assign_pointer(slots[i], elem_new());
			atomic_store(&old->pipe, 1);
			q[nq].e = old;
			q[nq].cookie = start_poll_synchronize_rcu();
			nq++;
		}
		for (int j = 0; j < nq;) {
			if (poll_state_synchronize_rcu(q[j].cookie)) {
				elem_poison_free(q[j].e);
				q[j] = q[--nq];
				atomic_fetch_add(&updates_poll, 1);
			} else {
				j++;
			}
		}
		rcu_quiescent_state();
		if (nq == 64 || atomic_load_explicit(&stop, memory_order_relaxed)) {
			rcu_thread_offline();
			usleep(100);
			rcu_thread_online();
		}
	}
	rcu_unregister_thread();
	return NULL;
}

int main(void)
{
	const char *env = getenv("TORTURE_SECONDS");
	double secs = env ? atof(env) : 3.0;
	pthread_t r[NREADERS], u[3];
	struct rcu_stats st;

	for (int i = 0; i < NSLOTS; i++)
		slots[i] = elem_new();
	for (int i = 0; i < NREADERS; i++)
		pthread_create(&r[i], NULL, reader, (void *)(uintptr_t)(i + 7));
	pthread_create(&u[0], NULL, updater_sync, NULL);
	pthread_create(&u[1], NULL, updater_cb, NULL);
	pthread_create(&u[2], NULL, updater_poll, NULL);
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(u[i], NULL);
	for (int i = 0; i < NREADERS; i++)
		pthread_join(r[i], NULL);

	rcu_register_thread();
	rcu_barrier();
	rcu_get_stats(&st);
	rcu_unregister_thread();
	for (int i = 0; i < NSLOTS; i++)
		free(slots[i]);

	printf("torture %s (membarrier %s): %.1f s, reads %lu, updates sync %lu cb %lu poll %lu, "
	       "grace periods %lu, callbacks %lu, max backlog %lu, errors %lu\n",
	       RCU_FLAVOR_NAME, rcu_has_membarrier ? "on" : "off", secs, atomic_load(&reads),
	       atomic_load(&updates_sync), atomic_load(&updates_cb), atomic_load(&updates_poll),
	       st.gp_completed, st.cb_invoked, st.cb_pending_hwm, atomic_load(&errors));
	CHECK(atomic_load(&errors) == 0, "readers saw no freed or stale element");
	CHECK(atomic_load(&updates_sync) >= 20, "enough synchronize_rcu() updates");
	CHECK(atomic_load(&updates_cb) >= 1000, "enough call_rcu() updates");
	CHECK(atomic_load(&updates_poll) >= 20, "enough polled updates");
	CHECK(st.gp_completed >= 20, "enough grace periods");
	CHECK(st.cb_invoked == atomic_load(&updates_cb), "every callback ran after rcu_barrier()");
	CHECK(atomic_load(&reads) >= 1000, "enough reads");
	return check_summary();
}
