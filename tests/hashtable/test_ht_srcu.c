/*
 * test_ht_srcu.c - ht_scan_all() runs under the table's SRCU domain (issue 3,
 * flavor-safe reclamation), built once per flavor:
 *   - the scan callback sleeps, holding on to entries it was given, while
 *     writers overwrite and delete every key (entries are poisoned on free)
 *     and the table grows: every held entry stays intact until the scan ends;
 *   - meanwhile the flavor's grace periods keep completing (the sleeping scan
 *     does not hold them up), but the replaced entries wait for the scan;
 *   - after the scan, they are freed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "tests/check.h"

#define NKEYS 20000
#define HELD 64

static struct ht *ht;
static _Atomic int stop, scan_started;
static const struct ht_entry *held[HELD];
static char held_key[HELD][32];
static int nheld, corrupt, seen;
static unsigned long gp_during_scan;
static _Atomic unsigned long rounds, rounds_at_end;
static unsigned long freed_at_start, max_waiting;
static int freed_during_scan;

static int check_held(void)
{
	int bad = 0;

	for (int i = 0; i < nheld; i++) {
		size_t kl = ht_entry_klen(held[i]);

		if (kl != strlen(held_key[i]) || memcmp(ht_entry_key(held[i]), held_key[i], kl))
			bad++;
	}
	return bad;
}

static int scan_fn(const struct ht_entry *e, void *arg)
{
	(void)arg;
	atomic_store(&scan_started, 1);
	if (nheld < HELD && ht_entry_klen(e) < sizeof(held_key[0])) {
		held[nheld] = e;
		memcpy(held_key[nheld], ht_entry_key(e), ht_entry_klen(e));
		held_key[nheld][ht_entry_klen(e)] = 0;
		nheld++;
	}
	if (++seen % 500 == 0) {
		struct ht_stats st;

		usleep(20000); /* sleeps inside the scan */
		corrupt += check_held();
		/* Half way, hold the scan until the writer has overwritten every
		 * key once (bounded: 60 s), so the check below does not depend on
		 * how fast a loaded machine or a sanitizer lets the writer run. */
		for (int w = 0; seen == NKEYS / 2 && atomic_load(&rounds) < 1 && w < 3000; w++) {
			usleep(20000);
			corrupt += check_held();
		}
		ht_stats(ht, &st);
		if (st.retire_batches_freed != freed_at_start)
			freed_during_scan = 1;
		if (st.retire_batches_waiting_scan > max_waiting)
			max_waiting = st.retire_batches_waiting_scan;
	}
	return seen >= 3 * NKEYS / 2; /* stop after about 1.5 s of sleeps */
}

static void *writer(void *arg)
{
	char k[32], v[64];
	unsigned long round = 0;

	(void)arg;
	rcu_register_thread();
	while (!atomic_load(&scan_started))
		usleep(100);
	while (!atomic_load(&stop)) {
		for (int i = 0; i < NKEYS && !atomic_load(&stop); i++) {
			int kl = snprintf(k, sizeof(k), "key:%d", i);
			int vl = snprintf(v, sizeof(v), "value-%lu-%d", round, i);

			if (i % 7 == 0)
				ht_del(ht, k, (size_t)kl);
			ht_set(ht, k, (size_t)kl, v, (size_t)vl, HT_NO_EXPIRE, 0, NULL);
			/* new keys too: the table grows during the scan */
			kl = snprintf(k, sizeof(k), "new:%lu:%d", round, i);
			if (i % 4 == 0)
				ht_set(ht, k, (size_t)kl, v, (size_t)vl, HT_NO_EXPIRE, 0, NULL);
			rcu_quiescent_state();
		}
		round++;
		atomic_store(&rounds, round);
	}
	rcu_unregister_thread();
	return NULL;
}

int main(void)
{
	struct ht_options o = { .poison_frees = 1, .initial_buckets = 1 << 15, .no_auto_resize = 1 };
	struct rcu_stats a, b;
	struct ht_stats hs0, hs1;
	pthread_t w;
	char k[32];

	rcu_register_thread();
	ht = ht_new(&o);
	for (int i = 0; i < NKEYS; i++) {
		int kl = snprintf(k, sizeof(k), "key:%d", i);

		ht_set(ht, k, (size_t)kl, "v0", 2, HT_NO_EXPIRE, 0, NULL);
	}
	ht_stats(ht, &hs0);
	freed_at_start = hs0.retire_batches_freed;
	pthread_create(&w, NULL, writer, NULL);
	rcu_get_stats(&a);
	ht_scan_all(ht, scan_fn, NULL);
	rcu_get_stats(&b);
	atomic_store(&rounds_at_end, atomic_load(&rounds));
	ht_stats(ht, &hs1);
	atomic_store(&stop, 1);
	rcu_thread_offline();
	pthread_join(w, NULL);
	rcu_thread_online();
	gp_during_scan = b.gp_completed - a.gp_completed;
	printf("scan: %d entries seen, %d held across sleeps, %lu flavor grace periods during "
	       "the scan, %lu writer rounds over every key, buckets %zu -> %zu (resizing %d), "
	       "corrupt %d\n",
	       seen, nheld, gp_during_scan, atomic_load(&rounds_at_end), hs0.buckets, hs1.buckets,
	       hs1.resizing, corrupt);
	CHECK(corrupt == 0, "entries held by a sleeping scan were never freed under it");
	CHECK(nheld == HELD && seen >= NKEYS, "the scan saw and held entries");
	CHECK(gp_during_scan >= 5, "the flavor's grace periods went on during the scan");
	CHECK(atomic_load(&rounds_at_end) >= 1, "every key was overwritten during the scan");
	printf("retired batches waiting for the scan: up to %lu; freed during the scan: %s\n",
	       max_waiting, freed_during_scan ? "some" : "none");
	CHECK(max_waiting > 0 && !freed_during_scan,
	      "replaced entries waited for the sleeping scan (none freed under it)");
	ht_free(ht);
	rcu_unregister_thread();
	return check_summary();
}
