/*
 * publish.c - the publish-subscribe example: a configuration record replaced
 * whole while readers use it, with the memb flavor.
 *
 * The writer builds a new record, fills it in, and publishes it with one
 * rcu_assign_pointer(); readers pick it up with rcu_dereference() inside
 * rcu_read_lock()/rcu_read_unlock() and never see a half-written record.  The
 * old record is freed after synchronize_rcu(), when no reader can hold it.
 * Built and run by `make test` (tests/tests.mk) so that it cannot rot; prints
 * "1 passed, 0 failed" when every reader saw only whole records.
 */
#define RCU_FLAVOR_MEMB
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "rcu/rcu.h"

struct config {
	int version;
	int twice_version;      /* always 2 * version: what readers check */
};

/* RCU-protected: written with rcu_assign_pointer() by the one writer (main),
 * read with rcu_dereference() by readers inside a read-side section. */
static struct config *current_config;

static atomic_int done;
static atomic_long torn;

static void *reader(void *arg)
{
	long reads = 0;

	(void)arg;
	rcu_register_thread();
	while (!atomic_load(&done) || reads < 1000) {
		rcu_read_lock();
		struct config *c = rcu_dereference(current_config);

		if (c->twice_version != 2 * c->version)
			atomic_fetch_add(&torn, 1);
		rcu_read_unlock();
		reads++;
	}
	rcu_unregister_thread();
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	struct config *c = malloc(sizeof(*c));

	if (!c)
		return 1;
	c->version = 0;
	c->twice_version = 0;
	/* No reader can see current_config yet: a relaxed store is enough
	 * (Quick Quiz 8), but rcu_assign_pointer() is never wrong. */
	rcu_assign_pointer(current_config, c);

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, reader, NULL);
	for (int v = 1; v <= 2000; v++) {
		struct config *n = malloc(sizeof(*n)), *old;

		if (!n)
			return 1;
		n->version = v;                 /* initialise ... */
		n->twice_version = 2 * v;
		old = current_config;           /* we are the only writer */
		rcu_assign_pointer(current_config, n); /* ... then publish */
		synchronize_rcu();              /* readers of old are gone */
		free(old);
	}
	atomic_store(&done, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	free(current_config);

	printf("publish: 2000 versions published, %ld torn reads\n", atomic_load(&torn));
	printf("%d passed, %d failed\n", torn == 0, torn != 0);
	return torn != 0;
}
