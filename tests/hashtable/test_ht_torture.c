/*
 * test_ht_torture.c - concurrent torture of hashtable/ht.c, once per flavor.
 *
 * At once: readers (lookups of every kind), writers (set with options, rmw,
 * multi-key txn), deleters, an expirer (keys with past and near expiries plus
 * ht_expire_cycle()), a resizer (grow and shrink, one doubling at a time,
 * continuously) and a scanner (full reverse-binary cursor scans).  Entries
 * are poisoned (0x6b) before they are freed.
 *
 * Checks:
 *  - every value a reader sees was written for that key (self-describing
 *    values with a checksum; a poisoned or foreign value fails);
 *  - "stable" keys, present from before the threads start to the end and only
 *    ever replaced, are found by every lookup (ht.h guarantee 3: no reader
 *    misses a key during resize) and by every complete scan (guarantee 4);
 *  - ht_validate() and the counters agree at the end;
 *  - enough was exercised: grows, shrinks, unzip passes, updates, deletes,
 *    expiries, scans and grace periods (fails if too little);
 *  - then a 0.5 s phase of ht_flush() every 2 ms under a reader and a writer:
 *    values stay well-formed and the table validates.
 * Duration: TORTURE_SECONDS (default 2) per flavor.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "tests/check.h"

/* The key of the dead sentinel (below); no key the torture writes. */
#define DEAD_KEY "freed"

#if defined(RCU_BROKEN_GP) && RCU_BROKEN_GP
/*
 * BROKEN_GP=1 builds only (tests/hashtable/broken_gp.sh): a quarantine in
 * front of free(), so that a reader that still walks a freed entry reports
 * it instead of crashing.  The table poisons an entry (0x6b) before it frees
 * it, next link included, and a reader that steps from a poisoned entry
 * follows 0x6b6b6b6b6b6b6b6b; under glibc malloc the allocator's own list
 * pointer sits in that word instead.  Either way the reader crashes, often
 * before it can say what it saw.  So free() keeps each block for QUARANTINE
 * more frees (nothing is reused at once, tables and batches stay readable),
 * and points a poisoned entry's next link at a dead sentinel entry (key
 * DEAD_KEY, hash never looked up, end of chain): lookups then miss (counted
 * as missed keys), and scans report the freed entries they reach.  A reader
 * can still load the poisoned link between the table's rcu_poison() and this
 * free() and crash; broken_gp.sh counts that only after freed-entry messages.
 * Not in the normal build: there nothing may reach freed memory, and
 * sanitizers interpose free() themselves.
 */
#include <dlfcn.h>
#include <malloc.h>

#define QUARANTINE 65536
static struct {
	struct ht_entry e;
	char key[8];
} dead_entry = {.e = {.klen = sizeof(DEAD_KEY) - 1}, .key = DEAD_KEY};
static void (*real_free)(void *);
/* frees seen, and how many were of entries the table had poisoned */
static _Atomic unsigned long q_frees, q_poisoned;
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static void *quarantine[QUARANTINE];
static unsigned int q_next;

__attribute__((constructor)) static void quarantine_init(void)
{
	real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
}

void free(void *p)
{
	void *old;

	if (!p)
		return;
	if (!real_free) /* before the constructor ran (dlsym's own frees): keep it */
		return;
	if (malloc_usable_size(p) >= sizeof(struct ht_entry)) {
		struct ht_entry *e = p;
		uint64_t w;

		memcpy(&w, p, sizeof(w));
		if (w == 0x6b6b6b6b6b6b6b6bULL)
			q_poisoned++;
		if (w == 0x6b6b6b6b6b6b6b6bULL && e->hash == 0x6b6b6b6bU)
			atomic_store_explicit((struct hlist_node *_Atomic *)&e->node.next,
					      &dead_entry.e.node, memory_order_release);
	}
	q_frees++;
	pthread_mutex_lock(&q_lock);
	old = quarantine[q_next];
	quarantine[q_next] = p;
	q_next = (q_next + 1) % QUARANTINE;
	pthread_mutex_unlock(&q_lock);
	if (old)
		real_free(old);
}
#endif

#define N_STABLE 1024
#define N_VOLATILE 3072
#define N_KEYS (N_STABLE + N_VOLATILE)
#define N_READERS 2
#define N_WRITERS 2

static struct ht *ht;
static _Atomic int stop;
static _Atomic int stable_valid = 1; /* 0 in the flush phase: nothing is stable */
static _Atomic unsigned long n_flushes;
static _Atomic unsigned long errors;
static _Atomic unsigned long n_lookups, n_found, n_updates, n_deletes, n_rmw, n_txn, n_scans,
    n_exp_set, n_scan_steps;

/* Errors by kind, for the closing "readers saw" line that
 * tests/hashtable/broken_gp.sh reads: an entry whose key or value is not
 * what was written for it (freed and poisoned, or freed and reused), a stable
 * key not found, anything else. */
enum { K_FREED, K_MISSED, K_OTHER, K_N };
static _Atomic unsigned long err_kind[K_N];

#define FAIL_KIND(kind, ...)                                                                       \
	do {                                                                                       \
		atomic_fetch_add_explicit(&err_kind[kind], 1, memory_order_relaxed);               \
		if (atomic_fetch_add(&errors, 1) < 20)                                             \
			fprintf(stderr, "torture: " __VA_ARGS__);                                  \
	} while (0)
#define FAIL(...) FAIL_KIND(K_OTHER, __VA_ARGS__)
#define FAIL_FREED(...) FAIL_KIND(K_FREED, __VA_ARGS__)
#define FAIL_MISSED(...) FAIL_KIND(K_MISSED, __VA_ARGS__)

struct val_hdr {
	uint32_t key;
	uint32_t tag;
	uint64_t seq;
	uint64_t chk;
};

static uint64_t mix3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h =
	    a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL) * 0xc2b2ae3d27d4eb4fULL;

	h ^= c * 0x165667b19e3779f9ULL;
	h ^= h >> 31;
	return h * 0xd6e8feb86659fd93ULL;
}

static size_t keyname(char *buf, uint32_t k)
{
	return (size_t)sprintf(buf, "%s:%u", k < N_STABLE ? "stable" : "vol", k);
}

/* Build the value written for key @k: header + (seq % 61) pattern bytes. */
static size_t mkval(unsigned char *buf, uint32_t k, uint32_t tag, uint64_t seq)
{
	struct val_hdr h = {k, tag, seq, mix3(k, tag, seq)};
	size_t pad = seq % 61, i;

	memcpy(buf, &h, sizeof(h));
	for (i = 0; i < pad; i++)
		buf[sizeof(h) + i] = (unsigned char)(h.chk + i);
	return sizeof(h) + pad;
}

/* Is this a value written for key @k?  Returns 1 if so. */
static int checkval(const void *v, size_t len, uint32_t k)
{
	const unsigned char *p = v;
	struct val_hdr h;
	size_t i;

	if (len < sizeof(h))
		return 0;
	memcpy(&h, p, sizeof(h));
	if (h.key != k || h.chk != mix3(h.key, h.tag, h.seq) || len != sizeof(h) + h.seq % 61)
		return 0;
	for (i = sizeof(h); i < len; i++)
		if (p[i] != (unsigned char)(h.chk + (i - sizeof(h))))
			return 0;
	return 1;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void quiesce(void)
{
	rcu_quiescent_state();
}

/* --- readers ------------------------------------------------------------------- */

static void check_entry(const struct ht_entry *e, uint32_t k, const char *what)
{
	char name[32];
	size_t kl = keyname(name, k);

	if (ht_entry_klen(e) != kl || memcmp(ht_entry_key(e), name, kl))
		FAIL_FREED("%s: entry for key %u has a foreign key\n", what, k);
	else if (!checkval(ht_entry_val(e), ht_entry_vlen(e), k))
		FAIL_FREED("%s: key %u: value not written for it (len %zu)\n", what, k, ht_entry_vlen(e));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Hold @e (found for key @k, already checked) inside the caller's read-side
 * section, checking again and again that it is the same, intact entry: same
 * key, same value header, value still written for @k.  Writers replace every
 * key all the time, so the held entry is usually unlinked meanwhile (a fresh
 * lookup finds another); the hold then goes on 20 ms more (50 ms at most in
 * all), long enough for the entry's retirement batch to fill and be freed.
 * A free before the section ends (a grace period that did not wait) poisons
 * it (rcu/poison.h) and this sees it.  A lookup alone is over too soon.
 */
static _Atomic unsigned long n_holds, n_held_replaced;
static void hold_entry(const struct ht_entry *e, uint32_t k)
{
	struct val_hdr h0, h;
	double end = now_s() + 50e-3;
	char name[32];
	size_t kl = keyname(name, k);
	int replaced = 0;

	if (ht_entry_vlen(e) < sizeof(h0))
		return;
	memcpy(&h0, ht_entry_val(e), sizeof(h0));
	n_holds++;
	do {
		if (ht_entry_klen(e) != kl || memcmp(ht_entry_key(e), name, kl) ||
		    ht_entry_vlen(e) < sizeof(h) ||
		    (memcpy(&h, ht_entry_val(e), sizeof(h)), memcmp(&h, &h0, sizeof(h))) ||
		    !checkval(ht_entry_val(e), ht_entry_vlen(e), k)) {
			FAIL_FREED("find_rcu: key %u: the entry changed while a reader held it "
				   "(freed)\n",
				   k);
			return;
		}
		if (!replaced && ht_find_rcu(ht, name, kl) != e) {
			double t = now_s() + 20e-3;

			replaced = 1;
			n_held_replaced++;
			if (t < end)
				end = t;
		}
	} while (now_s() < end);
}

static void *reader(void *arg)
{
	uint64_t s = (uintptr_t)arg * 7919 + 1;
	unsigned char buf[256];
	char name[32];
	unsigned long lk = 0, fd = 0;

	rcu_register_thread();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int i = 0; i < 64; i++) {
			uint32_t k = (uint32_t)(rnd(&s) % N_KEYS);
			size_t kl = keyname(name, k);
			const struct ht_entry *e;
			long long r;

			lk++;
			switch (rnd(&s) & 3) {
			case 0:
			case 1:
				rcu_read_lock();
				e = ht_find_rcu(ht, name, kl);
				if (e) {
					unsigned long e0 = atomic_load(&errors);

					fd++;
					check_entry(e, k, "find_rcu");
					if ((rnd(&s) & 1023) == 0 && atomic_load(&errors) == e0)
						hold_entry(e, k);
				} else if (k < N_STABLE && atomic_load(&stable_valid)) {
					FAIL_MISSED("find_rcu missed stable key %u\n", k);
				}
				rcu_read_unlock();
				break;
			case 2:
				r = ht_get(ht, name, kl, buf, sizeof(buf), NULL);
				if (r >= 0) {
					fd++;
					if (r > (long long)sizeof(buf) ||
					    !checkval(buf, (size_t)r, k))
						FAIL_FREED("get: key %u: bad value\n", k);
				} else if (k < N_STABLE && atomic_load(&stable_valid)) {
					FAIL_MISSED("get missed stable key %u\n", k);
				}
				break;
			default:
				if (ht_exists(ht, name, kl))
					fd++;
				else if (k < N_STABLE && atomic_load(&stable_valid))
					FAIL_MISSED("exists missed stable key %u\n", k);
				break;
			}
		}
		/* random and sample see only well-formed entries */
		rcu_read_lock();
		const struct ht_entry *re = ht_random_rcu(ht, &s);
		if (re) {
			char kb[32];
			size_t kl = ht_entry_klen(re);

			if (kl >= sizeof(kb)) {
				FAIL_FREED("random: key too long\n");
			} else {
				memcpy(kb, ht_entry_key(re), kl);
				kb[kl] = 0;
				check_entry(
				    re,
				    (uint32_t)strtoul(strchr(kb, ':') ? strchr(kb, ':') + 1 : kb,
						      NULL, 10),
				    "random");
			}
		}
		rcu_read_unlock();
		quiesce();
	}
	atomic_fetch_add(&n_lookups, lk);
	atomic_fetch_add(&n_found, fd);
	rcu_unregister_thread();
	return NULL;
}

/* --- writers -------------------------------------------------------------------- */

struct rmw_arg {
	uint32_t k;
	uint32_t tag;
	uint64_t seq;
};

static int rmw_fn(struct ht_rmw *r, void *arg)
{
	struct rmw_arg *a = arg;
	unsigned char tmp[256];
	size_t n;
	void *p;

	if (r->old && !checkval(ht_entry_val(r->old), ht_entry_vlen(r->old), a->k))
		FAIL_FREED("rmw: old value of key %u not written for it\n", a->k);
	n = mkval(tmp, a->k, a->tag, a->seq);
	p = ht_rmw_alloc(r, n);
	if (!p)
		return -ENOMEM;
	memcpy(p, tmp, n);
	return HT_RMW_STORE;
}

struct txn_arg {
	uint32_t k[3];
	uint32_t tag;
	uint64_t seq;
};

static int txn_fn(struct ht_txn *tx, void *arg)
{
	struct txn_arg *a = arg;
	unsigned char tmp[256];

	for (size_t i = 0; i < 3; i++) {
		const struct ht_entry *e = ht_txn_get(tx, i);

		if (e)
			check_entry(e, a->k[i], "txn_get");
		/* only-if-present for stable keys keeps them present */
		size_t n = mkval(tmp, a->k[i], a->tag, a->seq + i);
		if (ht_txn_set(tx, i, tmp, n, HT_NO_EXPIRE))
			return -ENOMEM;
	}
	return 0;
}

static void *writer(void *arg)
{
	uint32_t tag = (uint32_t)(uintptr_t)arg;
	uint64_t s = tag * 104729 + 3, seq = 1;
	unsigned char buf[256];
	char name[32], n1[32], n2[32], n3[32];
	unsigned long up = 0, rm = 0, tx = 0;

	rcu_register_thread();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int i = 0; i < 32; i++) {
			uint32_t k = (uint32_t)(rnd(&s) % N_KEYS);
			size_t kl = keyname(name, k), vl;
			const struct ht_entry *old;
			unsigned int fl = 0;
			int rc;

			switch (rnd(&s) % 6) {
			case 0:
			case 1:
				vl = mkval(buf, k, tag, seq++);
				if (k >= N_STABLE && (rnd(&s) & 1))
					fl = (rnd(&s) & 1) ? HT_SET_NX : HT_SET_XX;
				rcu_read_lock();
				rc = ht_set(ht, name, kl, buf, vl, HT_NO_EXPIRE, fl, &old);
				if (old)
					check_entry(old, k, "set old");
				rcu_read_unlock();
				if (rc && rc != -EEXIST && rc != -ENOENT)
					FAIL("set: %d\n", rc);
				if (k < N_STABLE && rc)
					FAIL("set of stable key %u: %d\n", k, rc);
				up++;
				break;
			case 2: {
				struct rmw_arg a = {k, tag, seq++};

				rc = ht_rmw(ht, name, kl, rmw_fn, &a);
				if (rc != HT_RMW_STORE)
					FAIL("rmw: %d\n", rc);
				atomic_fetch_add_explicit(&n_rmw, 1, memory_order_relaxed);
				break;
			}
			case 3: {
				struct txn_arg a = {
				    {k, (uint32_t)(rnd(&s) % N_KEYS), (uint32_t)(rnd(&s) % N_KEYS)},
				    tag,
				    seq};
				const void *keys[3] = {n1, n2, n3};
				size_t kls[3] = {keyname(n1, a.k[0]), keyname(n2, a.k[1]),
						 keyname(n3, a.k[2])};

				seq += 3;
				rc = ht_txn(ht, 3, keys, kls, txn_fn, &a);
				if (rc)
					FAIL("txn: %d\n", rc);
				tx++;
				break;
			}
			default:
				if (k < N_STABLE)
					break;
				/* deleter */
				rc = ht_del(ht, name, kl);
				if (rc && rc != -ENOENT)
					FAIL("del: %d\n", rc);
				rm++;
				break;
			}
		}
		quiesce();
	}
	atomic_fetch_add(&n_updates, up);
	atomic_fetch_add(&n_deletes, rm);
	atomic_fetch_add(&n_txn, tx);
	rcu_unregister_thread();
	return NULL;
}

/* --- expirer, resizer, scanner -------------------------------------------------- */

static void *expirer(void *arg)
{
	uint64_t s = 99991, seq = 1;
	unsigned char buf[256];
	char name[32];
	unsigned long ex = 0;

	(void)arg;
	rcu_register_thread();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int i = 0; i < 16; i++) {
			uint32_t k = N_STABLE + (uint32_t)(rnd(&s) % N_VOLATILE);
			size_t kl = keyname(name, k), vl = mkval(buf, k, 1000, seq++);
			int64_t now = ht_now_ms();
			int64_t x = (rnd(&s) & 1) ? now - 1 : now + (int64_t)(rnd(&s) % 20);

			if (rnd(&s) & 1) {
				if (ht_set(ht, name, kl, buf, vl, x, 0, NULL))
					FAIL("expirer set\n");
			} else {
				int rc = ht_expire_set(ht, name, kl, x, 0);

				if (rc < 0 && rc != -ENOENT)
					FAIL("expire_set: %d\n", rc);
			}
			ex++;
			/* stable keys may get (and lose) an expiry far away */
			if ((rnd(&s) & 7) == 0) {
				k = (uint32_t)(rnd(&s) % N_STABLE);
				kl = keyname(name, k);
				if (rnd(&s) & 1) {
					if (ht_expire_set(ht, name, kl, now + 3600000, 0) != 1)
						FAIL("expire_set stable %u\n", k);
				} else if (ht_expire_clear(ht, name, kl) < 0) {
					FAIL("expire_clear stable %u\n", k);
				}
			}
		}
		ht_expire_cycle(ht, 20, 0, NULL, NULL);
		quiesce();
	}
	atomic_fetch_add(&n_exp_set, ex);
	rcu_unregister_thread();
	return NULL;
}

static void *resizer(void *arg)
{
	static const size_t sizes[] = {2048, 512, 4096, 1024, 8192, 256};
	unsigned int i = 0;

	(void)arg;
	rcu_register_thread();
	rcu_thread_offline(); /* holds no references; ht_resize() blocks */
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		rcu_thread_online();
		if (ht_resize(ht, sizes[i++ % (sizeof(sizes) / sizeof(sizes[0]))]))
			FAIL("resize failed\n");
		rcu_thread_offline();
		usleep(1000);
	}
	rcu_thread_online();
	rcu_unregister_thread();
	return NULL;
}

struct scan_state {
	unsigned char seen[N_STABLE];
};

static int scan_fn(const struct ht_entry *e, void *arg)
{
	struct scan_state *ss = arg;
	char kb[32];
	size_t kl = ht_entry_klen(e);
	uint32_t k;

	if (kl >= sizeof(kb)) {
		FAIL_FREED("scan: key too long\n");
		return 0;
	}
	memcpy(kb, ht_entry_key(e), kl);
	kb[kl] = 0;
	if (strncmp(kb, "stable:", 7) == 0) {
		k = (uint32_t)strtoul(kb + 7, NULL, 10);
		check_entry(e, k, "scan");
		if (k < N_STABLE)
			ss->seen[k] = 1;
	} else if (strncmp(kb, "vol:", 4) == 0) {
		check_entry(e, (uint32_t)strtoul(kb + 4, NULL, 10), "scan");
	} else if (kl == sizeof(DEAD_KEY) - 1 && memcmp(kb, DEAD_KEY, kl) == 0) {
		FAIL_FREED("scan: reached a freed entry (its link leads to the dead sentinel)\n");
	} else {
		FAIL_FREED("scan: unknown key\n");
	}
	return 0;
}

static void *scanner(void *arg)
{
	struct scan_state *ss = malloc(sizeof(*ss));
	unsigned long scans = 0, steps = 0;

	(void)arg;
	rcu_register_thread();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		uint64_t cur = 0;

		memset(ss, 0, sizeof(*ss));
		do {
			rcu_read_lock();
			cur = ht_scan_rcu(ht, cur, 16, scan_fn, ss);
			rcu_read_unlock();
			quiesce();
			steps++;
		} while (cur);
		for (uint32_t k = 0; k < N_STABLE; k++)
			if (!ss->seen[k]) {
				FAIL_MISSED("cursor scan missed stable key %u\n", k);
				break;
			}
		scans++;
		/* and the full scan */
		memset(ss, 0, sizeof(*ss));
		ht_scan_all(ht, scan_fn, ss);
		for (uint32_t k = 0; k < N_STABLE; k++)
			if (!ss->seen[k]) {
				FAIL_MISSED("ht_scan_all missed stable key %u\n", k);
				break;
			}
		scans++;
	}
	atomic_fetch_add(&n_scans, scans);
	atomic_fetch_add(&n_scan_steps, steps);
	free(ss);
	rcu_unregister_thread();
	return NULL;
}

/* Flush phase: FLUSHDB again and again under readers and writers. */
static void *flusher(void *arg)
{
	(void)arg;
	rcu_register_thread();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (ht_flush(ht))
			FAIL("flush failed\n");
		atomic_fetch_add(&n_flushes, 1);
		rcu_thread_offline();
		usleep(2000);
		rcu_thread_online();
	}
	rcu_unregister_thread();
	return NULL;
}

int main(void)
{
	struct ht_options o = {
	    .initial_buckets = 1024, .stripes = 16, .poison_frees = 1, .no_auto_resize = 1};
	pthread_t th[N_READERS + N_WRITERS + 3];
	unsigned char buf[256];
	char name[32];
	double secs = 2;
	const char *env = getenv("TORTURE_SECONDS");
	struct rcu_stats rs0, rs1;
	struct ht_stats hs;
	int nt = 0, i;

	if (env && atof(env) > 0)
		secs = atof(env);
	setvbuf(stdout, NULL, _IOLBF, 0);
	rcu_register_thread();
	ht = ht_new(&o);
	for (uint32_t k = 0; k < N_KEYS; k++) {
		size_t kl = keyname(name, k), vl = mkval(buf, k, 0, k);

		if (ht_set(ht, name, kl, buf, vl, HT_NO_EXPIRE, 0, NULL))
			FAIL("initial set\n");
	}
	rcu_get_stats(&rs0);
	for (i = 0; i < N_READERS; i++)
		pthread_create(&th[nt++], NULL, reader, (void *)(uintptr_t)(i + 1));
	for (i = 0; i < N_WRITERS; i++)
		pthread_create(&th[nt++], NULL, writer, (void *)(uintptr_t)(i + 1));
	pthread_create(&th[nt++], NULL, expirer, NULL);
	pthread_create(&th[nt++], NULL, resizer, NULL);
	pthread_create(&th[nt++], NULL, scanner, NULL);
	rcu_thread_offline();
	{
		struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};

		nanosleep(&ts, NULL);
		/* Slow builds (sanitizers): run on until the resizer has done
		 * two grows and two shrinks, for at most 5 times as long. */
		for (i = 0; i < (int)(secs * 40); i++) {
			struct timespec t100 = {0, 100 * 1000 * 1000};

			ht_stats(ht, &hs);
			if (hs.grows >= 2 && hs.shrinks >= 2)
				break;
			nanosleep(&t100, NULL);
		}
	}
	atomic_store(&stop, 1);
	for (i = 0; i < nt; i++)
		pthread_join(th[i], NULL);
	rcu_thread_online();
	rcu_get_stats(&rs1);
	ht_stats(ht, &hs);

	printf(
	    "flavor %s, %.1f s: lookups %lu (found %lu), sets %lu, rmw %lu, txn %lu, deletes %lu, "
	    "expiry ops %lu, scans %lu (%lu steps), grows %lu, shrinks %lu, unzip passes %lu, "
	    "expired %lu, grace periods %lu, callbacks %lu, callback backlog hwm %lu\n",
	    RCU_FLAVOR_NAME, secs, n_lookups, n_found, n_updates, n_rmw, n_txn, n_deletes,
	    n_exp_set, n_scans, n_scan_steps, hs.grows, hs.shrinks, hs.unzip_passes, hs.expired,
	    rs1.gp_completed - rs0.gp_completed, rs1.cb_invoked - rs0.cb_invoked,
	    rs1.cb_pending_hwm);
	CHECK(atomic_load(&errors) == 0,
	      "every value seen was written for its key; no stable key missed");
	/* every stable key still there and well-formed */
	{
		int bad = 0;

		for (uint32_t k = 0; k < N_STABLE; k++) {
			size_t kl = keyname(name, k);
			long long r = ht_get(ht, name, kl, buf, sizeof(buf), NULL);

			if (r < 0 || !checkval(buf, (size_t)r, k))
				bad++;
		}
		CHECK(bad == 0, "all stable keys present at the end");
	}
	CHECK(ht_validate(ht) == 0, "ht_validate after the run");
	CHECK(hs.grows >= 2 && hs.shrinks >= 2 && hs.unzip_passes >= 2,
	      "resizes exercised (>= 2 grows, 2 shrinks)");
	CHECK(n_updates >= 1000 && n_deletes >= 100 && n_rmw >= 100 && n_txn >= 100,
	      "updates, deletes, rmw and txn exercised");
	CHECK(n_lookups >= 10000 && n_scans >= 2, "lookups and scans exercised");
	CHECK(hs.expired >= 10, "lazy/active expiry exercised");
	CHECK(rs1.gp_completed - rs0.gp_completed >= 10, "grace periods exercised (>= 10)");
	/* Phase 2: flushes under traffic; values must stay well-formed. */
	{
		unsigned long e0 = atomic_load(&errors);
		struct timespec half = {0, 500 * 1000 * 1000};

		atomic_store(&stable_valid, 0);
		atomic_store(&stop, 0);
		nt = 0;
		pthread_create(&th[nt++], NULL, reader, (void *)(uintptr_t)7);
		pthread_create(&th[nt++], NULL, writer, (void *)(uintptr_t)9);
		pthread_create(&th[nt++], NULL, flusher, NULL);
		rcu_thread_offline();
		nanosleep(&half, NULL);
		atomic_store(&stop, 1);
		for (i = 0; i < nt; i++)
			pthread_join(th[i], NULL);
		rcu_thread_online();
		printf("flush phase: %lu flushes\n", n_flushes);
		CHECK(atomic_load(&errors) == e0 && n_flushes >= 5,
		      "flushes under readers and writers: values well-formed (>= 5 flushes)");
		CHECK(ht_validate(ht) == 0, "ht_validate after the flush phase");
	}
	ht_free(ht);
	rcu_unregister_thread();
	/* Both phases. */
#if defined(RCU_BROKEN_GP) && RCU_BROKEN_GP
	printf("quarantine: %lu frees, %lu of them poisoned entries\n", atomic_load(&q_frees),
	       atomic_load(&q_poisoned));
#endif
	printf("held entries: %lu, %lu of them replaced while held\n", atomic_load(&n_holds),
	       atomic_load(&n_held_replaced));
	/* The hold proves something only if writers retired held entries. */
	CHECK(atomic_load(&n_held_replaced) > 0,
	      "readers held entries that writers replaced meanwhile");
	printf("readers saw: %lu freed or foreign entries, %lu missed stable keys, %lu other "
	       "errors\n",
	       atomic_load(&err_kind[K_FREED]), atomic_load(&err_kind[K_MISSED]),
	       atomic_load(&err_kind[K_OTHER]));
	return check_summary();
}
