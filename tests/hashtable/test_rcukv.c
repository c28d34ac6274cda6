/*
 * test_rcukv.c - librcukv through its public header only (hashtable/rcukv.h),
 * linked against librcukv.a as an application would be: expiry that frees
 * (issue 21), eviction order, what an error return means, count.
 * Prints "N passed, M failed, K skipped" (tests/check.h); exits non-zero on failure.  No timing
 * assertions: waits are bounded polls with generous limits.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hashtable/rcukv.h"
#include "tests/check.h"

static int base_threads; /* threads before any cache (a sanitizer may run one) */


/* A check this build cannot make: ThreadSanitizer runs a thread of its own
 * (started lazily, so thread counts move) and forbids threads in a child
 * forked from a multi-threaded parent. */
#if defined(__SANITIZE_THREAD__)
#define TSAN_BUILD 1
#else
#define TSAN_BUILD 0
#endif

static void check_threads(int ok, const char *what)
{
	if (TSAN_BUILD)
		SKIP("%s (ThreadSanitizer build)", what);
	else
		CHECK(ok, "%s", what);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static size_t key(char *buf, size_t n, const char *prefix, int i)
{
	return (size_t)snprintf(buf, n, "%s%d", prefix, i);
}

/*
 * The scenario: 64 KiB limit, 2000 keys with a 20 ms TTL, sleep
 * 100 ms; then every set succeeds and stores, the limit holds, every key
 * reported live is readable, and the cache fills with live keys again
 * (before: count=440 memory=65519 live=0, false -ENOMEM, one live key after
 * 200 more sets).
 */
static void test_ttl_fill(void)
{
	struct rcukv_options opt = {.max_memory = 64 * 1024};
	rcukv *kv = rcukv_open(&opt);
	char k[32], v[100], out[128];
	int bad_set = 0, not_stored = 0, over = 0, unreadable = 0;
	size_t live = 0;

	memset(v, 'v', sizeof(v));
	CHECK(kv != NULL, "ttl fill: open with a 64 KiB limit");
	if (!kv)
		return;
	for (int i = 0; i < 2000; i++) {
		size_t kl = key(k, sizeof(k), "t", i);

		bad_set += rcukv_set(kv, k, kl, v, sizeof(v), 20) != 0;
		over += rcukv_memory(kv) > opt.max_memory;
	}
	CHECK(bad_set == 0 && over == 0,
	      "ttl fill: 2000 sets with a 20 ms TTL succeed under the limit");
	sleep_ms(100);
	CHECK(rcukv_count(kv) == 0, "ttl fill: count excludes expired entries");
	for (int i = 0; i < 2000; i++) {
		size_t kl = key(k, sizeof(k), "n", i);
		int rc = rcukv_set(kv, k, kl, v, sizeof(v), 0);

		bad_set += rc != 0;
		not_stored += rc == 0 && rcukv_exists(kv, k, kl) != 1;
		over += rcukv_memory(kv) > opt.max_memory;
	}
	printf("after refill: count=%zu memory=%zu\n", rcukv_count(kv), rcukv_memory(kv));
	CHECK(bad_set == 0, "ttl fill: every later set returns 0 (no false -ENOMEM)");
	CHECK(not_stored == 0, "ttl fill: a set that returned 0 stored its key");
	CHECK(over == 0, "ttl fill: memory never above the limit");
	for (int i = 0; i < 2000; i++) {
		size_t kl = key(k, sizeof(k), "n", i);

		if (rcukv_exists(kv, k, kl) == 1) {
			live++;
			unreadable +=
			    rcukv_get_buf(kv, k, kl, out, sizeof(out)) != (long long)sizeof(v);
		}
	}
	CHECK(unreadable == 0 && live == rcukv_count(kv), "ttl fill: every live key is readable");
	/* ~140 bytes an entry: a full cache holds ~460; expired ones must not
	 * crowd live ones out. */
	CHECK(live * 2 > opt.max_memory / (sizeof(v) + 48),
	      "ttl fill: the cache fills with live keys");
	rcukv_close(kv);
}

/* Without a limit, expired entries nobody touches still leave (the expiry
 * thread); rcukv_memory() counts entries still in the table. */
static void test_background_expiry(void)
{
	rcukv *kv = rcukv_open(NULL);
	char k[32];
	int i;

	if (!kv) {
		CHECK(0, "background expiry: open");
		return;
	}
	for (i = 0; i < 5000; i++)
		rcukv_set(kv, k, key(k, sizeof(k), "e", i), "x", 1, 10);
	rcukv_set(kv, "keep", 4, "y", 1, 0);
	CHECK(rcukv_memory(kv) > 5000 * 40, "background expiry: 5000 entries with a TTL stored");
	for (i = 0; i < 500 && rcukv_memory(kv) > 100; i++)
		sleep_ms(10);
	printf("memory after %d ms: %zu\n", i * 10, rcukv_memory(kv));
	CHECK(rcukv_memory(kv) < 100, "background expiry: untouched expired entries are removed");
	CHECK(rcukv_exists(kv, "keep", 4) == 1 && rcukv_count(kv) == 1,
	      "background expiry: the entry without a TTL stays");
	rcukv_close(kv);
}

/* Expired entries are evicted before live ones. */
static void test_evict_expired_first(void)
{
	struct rcukv_options opt = {.max_memory = 64 * 1024};
	rcukv *kv = rcukv_open(&opt);
	char k[32], v[100];
	int i, survivors = 0;

	memset(v, 'v', sizeof(v));
	if (!kv) {
		CHECK(0, "expired first: open");
		return;
	}
	for (i = 0; i < 150; i++)
		rcukv_set(kv, k, key(k, sizeof(k), "old", i), v, sizeof(v), 0);
	for (i = 0; rcukv_memory(kv) + 200 < opt.max_memory; i++)
		rcukv_set(kv, k, key(k, sizeof(k), "ttl", i), v, sizeof(v), 1);
	sleep_ms(5);
	/* 150 new entries fit in the room the expired ones hold. */
	for (i = 0; i < 150; i++)
		rcukv_set(kv, k, key(k, sizeof(k), "new", i), v, sizeof(v), 0);
	for (i = 0; i < 150; i++)
		survivors += rcukv_exists(kv, k, key(k, sizeof(k), "old", i));
	printf("old live entries surviving: %d of 150\n", survivors);
	CHECK(survivors >= 145, "expired first: live entries survive while expired ones can go");
	rcukv_close(kv);
}

/* A set that returns an error stored nothing, and left the old value. */
static void test_error_means_not_stored(void)
{
	struct rcukv_options opt = {.max_memory = 4096};
	rcukv *kv = rcukv_open(&opt);
	char big[5000], out[16];

	memset(big, 'b', sizeof(big));
	if (!kv) {
		CHECK(0, "error: open");
		return;
	}
	CHECK(rcukv_set(kv, "a", 1, "old", 3, 0) == 0, "error: a small set fits");
	CHECK(rcukv_set(kv, "a", 1, big, sizeof(big), 0) == -ENOMEM,
	      "error: a value larger than the limit is refused");
	CHECK(rcukv_get_buf(kv, "a", 1, out, sizeof(out)) == 3 && memcmp(out, "old", 3) == 0,
	      "error: the refused overwrite left the old value");
	CHECK(rcukv_set(kv, "b", 1, big, sizeof(big), 0) == -ENOMEM && !rcukv_exists(kv, "b", 1),
	      "error: a refused new key is absent");
	CHECK(rcukv_add(kv, "a", 1, "x", 1, 0) == -EEXIST, "error: add of a present key");
	rcukv_close(kv);
}

/* The limit changes at run time; a lower one is met at once. */
static void test_runtime_limit(void)
{
	struct rcukv_options opt = {.max_memory = 256 * 1024};
	rcukv *kv = rcukv_open(&opt);
	char k[32], v[100];
	int i, bad = 0;

	memset(v, 'v', sizeof(v));
	if (!kv) {
		CHECK(0, "limit: open");
		return;
	}
	for (i = 0; i < 3000; i++)
		bad += rcukv_set(kv, k, key(k, sizeof(k), "r", i), v, sizeof(v),
				 i % 2 ? 0 : 60000) != 0;
	CHECK(bad == 0 && rcukv_memory(kv) > 200 * 1024, "limit: filled to a 256 KiB limit");
	CHECK(rcukv_set_max_memory(kv, 32 * 1024) == 0 && rcukv_max_memory(kv) == 32 * 1024,
	      "limit: lowered to 32 KiB");
	printf("after lowering: memory=%zu count=%zu\n", rcukv_memory(kv), rcukv_count(kv));
	CHECK(rcukv_memory(kv) <= 32 * 1024 && rcukv_count(kv) > 100,
	      "limit: a lower limit is met at once");
	for (i = 0; i < 1000; i++)
		bad += rcukv_set(kv, k, key(k, sizeof(k), "s", i), v, sizeof(v), 0) != 0;
	CHECK(bad == 0 && rcukv_memory(kv) <= 32 * 1024, "limit: later writes keep the new limit");
	rcukv_set_max_memory(kv, 0);
	for (i = 0; i < 3000; i++)
		rcukv_set(kv, k, key(k, sizeof(k), "u", i), v, sizeof(v), 0);
	CHECK(rcukv_memory(kv) > 3000 * sizeof(v), "limit: 0 removes the limit");
	rcukv_close(kv);
}

/* TTLs are relative and count() follows them. */
static void test_ttl_and_count(void)
{
	rcukv *kv = rcukv_open(NULL);
	long long t;

	if (!kv) {
		CHECK(0, "ttl: open");
		return;
	}
	rcukv_set(kv, "a", 1, "1", 1, 0);
	rcukv_set(kv, "b", 1, "2", 1, 60000);
	rcukv_set(kv, "c", 1, "3", 1, 1);
	sleep_ms(5);
	t = rcukv_ttl(kv, "b", 1);
	CHECK(t > 50000 && t <= 60000, "ttl: remaining time of a 60 s TTL");
	CHECK(rcukv_ttl(kv, "a", 1) == -1, "ttl: -1 without a TTL");
	CHECK(rcukv_ttl(kv, "c", 1) == -ENOENT, "ttl: an expired key is absent");
	CHECK(rcukv_count(kv) == 2, "count: 2 live of 3 stored");
	rcukv_close(kv);
}

/* Threads of this process (/proc/self/task), or -1. */
static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Closing the last cache leaves no library thread behind; reopening works. */
static void test_close_joins_threads(void)
{
	rcukv *a = rcukv_open(NULL), *b = rcukv_open(NULL);

	CHECK(a && b && threads() > 1, "close: open caches run background threads");
	rcukv_set(a, "k", 1, "v", 1, 0);
	rcukv_set(b, "k", 1, "v", 1, 0);
	rcukv_del(a, "k", 1); /* a free after a grace period: the callback thread */
	rcukv_close(a);
	CHECK(rcukv_shutdown() == -EBUSY, "shutdown: -EBUSY while a cache is open");
	rcukv_close(b);
	check_threads(threads() == base_threads,
		      "close: after the last close no library thread is left");
	a = rcukv_open(NULL);
	CHECK(a && rcukv_set(a, "x", 1, "y", 1, 0) == 0 && rcukv_exists(a, "x", 1) == 1,
	      "close: a cache opened after the last close works");
	rcukv_close(a);
	CHECK(rcukv_shutdown() == 0, "shutdown: 0 with no cache open");
	check_threads(threads() == base_threads, "shutdown: still no library thread");
}

/* Run @fn in a child; check it died of SIGABRT with @want on stderr. */
static void expect_abort(void (*fn)(void), const char *want, const char *what)
{
	char msg[512] = "";
	int fd[2], st = 0;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(fd)) {
		CHECK(0, "%s", what);
		return;
	}
	fflush(stdout); /* the child must not print our buffer again */
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 2);
		close(fd[0]);
		fn();
		_exit(0);
	}
	close(fd[1]);
	while (got < (ssize_t)sizeof(msg) - 1 &&
	       (n = read(fd[0], msg + got, sizeof(msg) - 1 - (size_t)got)) > 0)
		got += n;
	msg[got] = 0;
	close(fd[0]);
	waitpid(pid, &st, 0);
	printf("child said: %s", got ? msg : "(nothing)\n");
	CHECK(pid > 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && strstr(msg, want), "%s", what);
}

static void use_after_close(void)
{
	rcukv *kv = rcukv_open(NULL);
	char buf[4];

	rcukv_close(kv);
	rcukv_get_buf(kv, "k", 1, buf, sizeof(buf));
}

static int close_cb(const void *k, size_t kl, const void *v, size_t vl, void *arg)
{
	(void)k, (void)kl, (void)v, (void)vl;
	rcukv_close(arg);
	return 0;
}

static void close_in_iterate(void)
{
	rcukv *kv = rcukv_open(NULL);

	rcukv_set(kv, "k", 1, "v", 1, 0);
	rcukv_iterate(kv, close_cb, kv);
}

static int iterate_cb(const void *k, size_t kl, const void *v, size_t vl, void *arg)
{
	(void)k, (void)kl, (void)v, (void)vl;
	return rcukv_iterate(arg, iterate_cb, arg);
}

static void iterate_in_iterate(void)
{
	rcukv *kv = rcukv_open(NULL);

	rcukv_set(kv, "k", 1, "v", 1, 0);
	rcukv_iterate(kv, iterate_cb, kv);
}

static void test_misuse(void)
{
	expect_abort(use_after_close, "rcukv_get_buf: cache used after rcukv_close()",
		     "misuse: a call after close aborts, naming it");
	expect_abort(close_in_iterate, "rcukv_close: called from inside an rcukv_iterate()",
		     "misuse: close inside an iterate callback aborts, naming it");
	expect_abort(iterate_in_iterate, "rcukv_iterate: called from inside",
		     "misuse: iterate of the same cache inside its callback aborts");
}

/*
 * fork() without exec while other threads write, delete, expire and iterate:
 * the child uses, clears and closes both caches and ends with no thread of
 * the library left (before: rcukv_clear() or rcukv_close() in the child hung).
 * A child that hangs is killed by its alarm and counts as a failure.
 */
#define FORKS 20
static atomic_int fork_stop;

struct fork_arg {
	rcukv *kv;
	int iterate;
};

static int slow_cb(const void *k, size_t kl, const void *v, size_t vl, void *arg)
{
	(void)k, (void)kl, (void)v, (void)vl, (void)arg;
	return atomic_load(&fork_stop);
}

static void *fork_churn(void *p)
{
	struct fork_arg *a = p;
	char k[32];
	unsigned int i = 0;

	while (!atomic_load(&fork_stop)) {
		size_t kl = key(k, sizeof(k), "c", (int)(i++ % 5000));

		if (a->iterate) {
			rcukv_iterate(a->kv, slow_cb, NULL);
			continue;
		}
		rcukv_set(a->kv, k, kl, "value", 5, i % 3 ? 0 : 1 + i % 7);
		if (i % 4 == 0)
			rcukv_del(a->kv, k, kl);
	}
	return NULL;
}

/* The child's part: exit status 0 if all went well, else the step that failed. */
static int fork_child(rcukv *a, rcukv *b)
{
	char k[32], out[16];
	int i;

	alarm(10);
	if (rcukv_get_buf(a, "fixed", 5, out, sizeof(out)) != 4)
		return 2;
	for (i = 0; i < 3000; i++)
		if (rcukv_set(a, k, key(k, sizeof(k), "child", i), "x", 1, i % 2) ||
		    rcukv_set(b, k, key(k, sizeof(k), "child", i), "y", 1, 0))
			return 3;
	if (rcukv_exists(b, "child2999", 9) != 1)
		return 4;
	if (rcukv_clear(a) || rcukv_count(a) != 0)
		return 5;
	rcukv_close(a);
	rcukv_close(b);
	if (threads() != 1)
		return 6;
	return 0;
}

static void test_fork(void)
{
	struct rcukv_options lim = {.max_memory = 256 * 1024};
	rcukv *a = rcukv_open(NULL), *b = rcukv_open(&lim);
	struct fork_arg args[3] = {{a, 0}, {b, 0}, {a, 1}};
	pthread_t th[3];
	int ok = 0, st;
	char why[64] = "";

	if (TSAN_BUILD) {
		SKIP("fork: children use, clear and close caches forked under load (ThreadSanitizer build)");
		rcukv_close(a);
		rcukv_close(b);
		return;
	}
	if (!a || !b) {
		CHECK(0, "fork: open");
		return;
	}
	rcukv_set(a, "fixed", 5, "here", 4, 0);
	atomic_store(&fork_stop, 0);
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, fork_churn, &args[i]);
	for (int n = 0; n < FORKS; n++) {
		pid_t pid;

		sleep_ms(5);
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			_exit(fork_child(a, b));
		if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
		else {
			snprintf(why, sizeof(why), "(child %d: %s %d)", n,
				 WIFEXITED(st) ? "exit" : "signal",
				 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			break; /* one hang costs its alarm; do not wait for more */
		}
	}
	atomic_store(&fork_stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	printf("fork: %d of %d children used, cleared and closed the caches %s\n", ok, FORKS, why);
	CHECK(ok == FORKS, "fork: children use, clear and close caches forked under load");
	CHECK(rcukv_get_buf(a, "fixed", 5, NULL, 0) == 4 && rcukv_set(b, "p", 1, "q", 1, 0) == 0,
	      "fork: the parent's caches still work");
	rcukv_close(a);
	rcukv_close(b);
	CHECK(threads() == base_threads, "fork: the parent's last close leaves no thread");
}

int main(void)
{
	base_threads = threads();
	test_ttl_fill();
	test_background_expiry();
	test_evict_expired_first();
	test_error_means_not_stored();
	test_ttl_and_count();
	test_runtime_limit();
	test_close_joins_threads();
	test_misuse();
	test_fork();
	return check_summary();
}
