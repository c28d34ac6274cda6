/*
 * reclaim.c - the delete-then-reclaim example: remove an element from an
 * RCU-protected list with list_del_rcu() and free it with call_rcu(), under
 * the QSBR flavor.
 *
 * Readers walk the list with list_for_each_entry_rcu() and report a
 * quiescent state between walks (QSBR readers have no lock/unlock cost;
 * instead they promise to hold no reference across rcu_quiescent_state()).
 * The writer deletes elements and hands them to call_rcu(); the callback
 * marks the memory dead before freeing it, so a reader that ever saw a dead
 * element would prove reclamation came too early.  rcu_barrier() at the end
 * waits for every callback.  Built and run by `make test`; prints
 * "1 passed, 0 failed" on success.
 */
#define RCU_FLAVOR_QSBR
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "rcu/rcu.h"
#include "rcu/rculist.h"

struct item {
	int value;
	struct list_head node;   /* on `items`; writer is the only updater */
	struct rcu_head rcu;     /* owned by RCU after call_rcu() */
	int alive;               /* 1 until the callback runs; last, where free()
				  * is least likely to overwrite it */
};

static LIST_HEAD(items);
static atomic_int done;
static atomic_long bad;
static atomic_long freed;

static void item_free(struct rcu_head *head)
{
	struct item *it = container_of(head, struct item, rcu);

	it->alive = 0;
	atomic_fetch_add(&freed, 1);
	free(it);
}

static void *reader(void *arg)
{
	struct item *it;

	(void)arg;
	rcu_register_thread();
	while (!atomic_load(&done)) {
		rcu_read_lock();                 /* costs nothing under QSBR */
		list_for_each_entry_rcu(it, &items, node)
			if (!it->alive)
				atomic_fetch_add(&bad, 1);
		rcu_read_unlock();
		rcu_quiescent_state();           /* no reference held past here */
	}
	rcu_unregister_thread();
	return NULL;
}

static struct item *item_new(int v)
{
	struct item *it = malloc(sizeof(*it));

	if (!it)
		abort();
	it->alive = 1;
	it->value = v;
	return it;
}

int main(void)
{
	pthread_t t[2];
	struct item *it, *tmp;
	long deleted = 0;

	rcu_register_thread();           /* call_rcu() needs a registered thread */
	for (int v = 0; v < 16; v++)
		list_add_tail_rcu(&item_new(v)->node, &items);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, reader, NULL);

	for (int round = 0; round < 20000; round++) {
		/* Delete the first element and add a fresh one at the tail. */
		it = list_first_entry(&items, struct item, node);
		list_del_rcu(&it->node);         /* readers may still be on it */
		call_rcu(&it->rcu, item_free);   /* freed after a grace period */
		deleted++;
		list_add_tail_rcu(&item_new(round)->node, &items);
		rcu_quiescent_state();           /* the writer is a reader too */
	}
	atomic_store(&done, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);

	list_for_each_entry_safe(it, tmp, &items, node) {
		list_del_rcu(&it->node);
		call_rcu(&it->rcu, item_free);
		deleted++;
	}
	rcu_barrier();                   /* every callback above has run */
	rcu_unregister_thread();

	int ok = atomic_load(&bad) == 0 && atomic_load(&freed) == deleted;

	printf("reclaim: %ld deleted, %ld freed by callbacks, %ld dead elements seen\n",
	       deleted, atomic_load(&freed), atomic_load(&bad));
	printf("%d passed, %d failed\n", ok, !ok);
	return !ok;
}
