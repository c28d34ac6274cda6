/*
 * cache.c - librcukv example: several threads share one in-process cache in
 * front of a slow "backend" (cache-aside: get, on a miss compute and add).
 * Also shows TTLs, counters, iteration and a memory limit.  Built and run by
 * `make test`; tests/hashtable/test_install.sh also builds it against an
 * installed librcukv with nothing but `pkg-config --cflags --libs rcukv`.
 * Prints 'N passed, M failed' and exits non-zero on failure.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rcukv.h>

#define THREADS 4
#define KEYS 2000
#define LOOKUPS 50000

static rcukv *cache;
static int passed, failed;

static void check(int ok, const char *what)
{
	if (ok)
		passed++;
	else
		failed++;
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
}

/* The "backend": deterministic, so any cached value can be verified. */
static size_t backend(unsigned int id, char *out, size_t n)
{
	return (size_t)snprintf(out, n, "user-%u:score=%u", id, id * 2654435761u % 1000);
}

struct worker {
	unsigned int seed;
	unsigned long hits, misses, wrong;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	char key[32], want[64], got[64];

	for (int i = 0; i < LOOKUPS; i++) {
		unsigned int id = (unsigned int)rand_r(&w->seed) % KEYS;
		size_t kl = (size_t)snprintf(key, sizeof(key), "user:%u", id);
		size_t wl = backend(id, want, sizeof(want));
		long long r = rcukv_get_buf(cache, key, kl, got, sizeof(got));

		if (r < 0) {
			w->misses++;
			rcukv_add(cache, key, kl, want, wl, 0); /* another thread may win */
		} else {
			w->hits++;
			if ((size_t)r != wl || memcmp(got, want, wl))
				w->wrong++;
		}
		if (i % 1000 == 0) {
			long long n;

			rcukv_incr(cache, "requests", 8, 1000, &n);
		}
	}
	return NULL;
}

static int count_users(const void *k, size_t kl, const void *v, size_t vl, void *arg)
{
	(void)v;
	(void)vl;
	if (kl > 5 && memcmp(k, "user:", 5) == 0)
		++*(size_t *)arg;
	return 0;
}

int main(void)
{
	pthread_t th[THREADS];
	struct worker w[THREADS];
	unsigned long hits = 0, misses = 0, wrong = 0;
	struct rcukv_options opt = {.initial_size = 1024};
	void *val;
	size_t vl, users = 0;
	long long n;

	cache = rcukv_open(&opt);
	check(cache != NULL, "open");
	if (!cache)
		return 1;
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){.seed = (unsigned int)i * 7 + 1};
		pthread_create(&th[i], NULL, work, &w[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		hits += w[i].hits;
		misses += w[i].misses;
		wrong += w[i].wrong;
	}
	printf("%d threads: %lu hits, %lu misses, %lu wrong values\n", THREADS, hits, misses,
	       wrong);
	check(wrong == 0, "every cached value is the backend's");
	check(misses >= KEYS && hits > misses, "cache-aside: one miss per key or a few more");
	check(rcukv_iterate(cache, count_users, &users) == 0 && users == KEYS,
	      "iterate sees every key");
	if (rcukv_get(cache, "requests", 8, &val, &vl) == 0) {
		check(atoll(val) == (long long)THREADS * (LOOKUPS / 1000) * 1000 &&
			  vl == strlen(val),
		      "counter via rcukv_incr, no update lost");
		rcukv_free(val);
	} else {
		check(0, "counter via rcukv_incr");
	}
	check(rcukv_incr(cache, "user:1", 6, 1, &n) == -EINVAL, "incr refuses a non-integer");

	/* TTLs */
	check(rcukv_set(cache, "session", 7, "token", 5, 50) == 0, "set with a 50 ms TTL");
	n = rcukv_ttl(cache, "session", 7);
	check(n >= 0 && n <= 50, "ttl reports what is left");
	usleep(120 * 1000);
	check(rcukv_exists(cache, "session", 7) == 0, "gone after its TTL");
	check(rcukv_expire(cache, "user:2", 6, 100000) == 0 && rcukv_ttl(cache, "user:2", 6) > 0,
	      "expire on an existing key");
	check(rcukv_expire(cache, "user:2", 6, 0) == 0 && rcukv_ttl(cache, "user:2", 6) == -1,
	      "expire 0 removes the TTL");
	check(rcukv_del(cache, "user:3", 6) == 0 && rcukv_del(cache, "user:3", 6) == -ENOENT,
	      "del");
	check(rcukv_clear(cache) == 0 && rcukv_count(cache) == 0, "clear");
	rcukv_close(cache);

	/* A memory limit: writes evict older entries to stay under it. */
	opt.max_memory = 64 * 1024;
	cache = rcukv_open(&opt);
	for (int i = 0; i < 20000; i++) {
		char key[32], v[100];

		memset(v, 'x', sizeof(v));
		if (rcukv_set(cache, key, (size_t)snprintf(key, sizeof(key), "k%d", i), v,
			      sizeof(v), 0))
			break;
	}
	printf("max_memory 65536: %zu entries, %zu bytes\n", rcukv_count(cache),
	       rcukv_memory(cache));
	check(rcukv_memory(cache) <= opt.max_memory && rcukv_count(cache) > 100,
	      "stays under max_memory");
	check(rcukv_exists(cache, "k19999", 6) == 1, "the newest entry survives eviction");
	{
		char *big = calloc(1, 100000);

		check(big && rcukv_set(cache, "big", 3, big, 100000, 0) == -ENOMEM &&
			  !rcukv_exists(cache, "big", 3),
		      "a value larger than max_memory is refused");
		free(big);
	}
	rcukv_close(cache);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
