/*
 * srcu_scan.c - the SRCU example: a slow scan that sleeps inside its
 * read-side section while fast memb readers and a writer carry on.
 *
 * The list `items` is reachable two ways: fast readers walk it inside
 * rcu_read_lock() (memb flavor), and a scanner walks it inside
 * srcu_read_lock(&scan_domain), sleeping between elements as a KEYS or SCAN
 * over a large table would.  Because both kinds of reader can hold an
 * element, the writer frees through a flavor-safe reclaimer
 * (srcu_reclaim_defer(): a memb grace period, then an SRCU grace period of
 * scan_domain) rather than call_rcu() alone, which would free under the
 * sleeping scanner (DESIGN.md hazard 1).  Callbacks mark the element dead
 * before freeing it; neither kind of reader may ever see a dead element.
 * Built and run by `make test`; prints "1 passed, 0 failed" on success.
 */
#define RCU_FLAVOR_MEMB
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rcu/rcu.h"
#include "rcu/rculist.h"
#include "rcu/srcu.h"

#define SCANS 20

struct item {
	int value;
	struct list_head node;   /* on `items`; main is the only updater */
	struct rcu_head rcu;     /* owned by the reclaimer after srcu_reclaim_defer() */
	atomic_int alive;        /* 1 until the reclaimer frees it; last, where
				  * free() is least likely to overwrite it */
};

static LIST_HEAD(items);
static struct srcu_struct scan_domain;
static atomic_int scans_done, stop;
static atomic_long bad, freed;

static void item_free(struct rcu_head *head)
{
	struct item *it = container_of(head, struct item, rcu);

	atomic_store(&it->alive, 0);
	atomic_fetch_add(&freed, 1);
	free(it);
}

/* The slow scan: may sleep inside its section; needs no RCU registration. */
static void *scanner(void *arg)
{
	struct item *it;

	(void)arg;
	for (int s = 0; s < SCANS; s++) {
		int idx = srcu_read_lock(&scan_domain);

		list_for_each_entry_srcu(it, &items, node, &scan_domain) {
			if (!atomic_load(&it->alive))
				atomic_fetch_add(&bad, 1);
			usleep(20);      /* a long scan sleeps; SRCU allows it */
		}
		srcu_read_unlock(&scan_domain, idx);
		atomic_fetch_add(&scans_done, 1);
	}
	return NULL;
}

/* A fast reader: short memb sections, never sleeps inside one. */
static void *fast_reader(void *arg)
{
	struct item *it;

	(void)arg;
	rcu_register_thread();
	while (!atomic_load(&stop)) {
		rcu_read_lock();
		list_for_each_entry_rcu(it, &items, node)
			if (!atomic_load(&it->alive))
				atomic_fetch_add(&bad, 1);
		rcu_read_unlock();
	}
	rcu_unregister_thread();
	return NULL;
}

static struct item *item_new(int v)
{
	struct item *it = malloc(sizeof(*it));

	if (!it)
		abort();
	atomic_init(&it->alive, 1);
	it->value = v;
	return it;
}

int main(void)
{
	pthread_t sc, fr;
	struct item *it, *tmp;
	struct srcu_reclaim *rec;
	long deleted = 0;
	int ok;

	if (init_srcu_struct(&scan_domain) != 0)
		return 1;
	rec = srcu_reclaim_new_memb(&scan_domain, item_free, "example");
	if (!rec)
		return 1;
	rcu_register_thread();   /* srcu_reclaim_defer() calls memb's call_rcu() */
	for (int v = 0; v < 16; v++)
		list_add_tail_rcu(&item_new(v)->node, &items);
	pthread_create(&sc, NULL, scanner, NULL);
	pthread_create(&fr, NULL, fast_reader, NULL);

	/* The writer appends more slowly than the scanner walks, or the scan
	 * would chase the tail for ever; the round bound keeps the run short
	 * however the threads are scheduled. */
	for (int round = 0; atomic_load(&scans_done) < SCANS && round < 10000; round++) {
		/* Delete the first element and add a fresh one at the tail. */
		it = list_first_entry(&items, struct item, node);
		list_del_rcu(&it->node);
		srcu_reclaim_defer(rec, &it->rcu);   /* after memb, then SRCU */
		deleted++;
		list_add_tail_rcu(&item_new(round)->node, &items);
		usleep(200);
	}
	pthread_join(sc, NULL);
	atomic_store(&stop, 1);
	pthread_join(fr, NULL);

	list_for_each_entry_safe(it, tmp, &items, node) {
		list_del_rcu(&it->node);
		srcu_reclaim_defer(rec, &it->rcu);
		deleted++;
	}
	srcu_reclaim_free(rec);              /* waits for every deferred free */
	rcu_unregister_thread();
	cleanup_srcu_struct(&scan_domain);

	ok = atomic_load(&bad) == 0 && atomic_load(&freed) == deleted;
	printf("srcu_scan: %d sleeping scans, %ld deleted, %ld freed, %ld dead elements seen\n",
	       SCANS, deleted, atomic_load(&freed), atomic_load(&bad));
	printf("%d passed, %d failed\n", ok, !ok);
	return !ok;
}
