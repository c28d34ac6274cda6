/*
 * test_rcukv.c - librcukv through its public header only (hashtable/rcukv.h),
 * linked against librcukv.a as an application would be: expiry that frees
 * (issue 21), eviction order, what an error return means, count; and what
 * cache users expect (issue 21 item 4): exact stats (one thread, 4 threads,
 * more threads than counter slots), bytes pinned by an iteration, each
 * eviction policy, every removal reason, get_or_load single flight, loader
 * errors, and the misuse the callbacks can commit; a wall-clock step a day
 * forward and back moves no TTL (clock_gettime() interposed).
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
#include <sys/syscall.h>
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
/* GCC 12's AddressSanitizer runtime (libasan.so.8) has no fork()
 * interceptor: it takes none of its allocator's locks around fork(), so a
 * thread inside malloc() or free() at that moment leaves a size-class mutex
 * held in the child, whose first allocation of that class then blocks for
 * ever.  glibc's malloc and jemalloc lock themselves around fork(). */
#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#else
#define ASAN_BUILD 0
#endif

static void check_threads(int ok, const char *what)
{
	if (TSAN_BUILD)
		SKIP("%s (ThreadSanitizer build)", what);
	else
		CHECK(ok, "%s", what);
}

/*
 * A wall-clock step.  Every clock_gettime() of this program goes through this
 * one, including the library's, which is linked in statically.  It adds
 * realtime_shift_ms to CLOCK_REALTIME.  Only test_wall_clock_step() sets it.
 */
static _Atomic long long realtime_shift_ms;

int clock_gettime(clockid_t id, struct timespec *ts)
{
	long r = syscall(SYS_clock_gettime, id, ts);
	long long add = atomic_load(&realtime_shift_ms);

	if (r == 0 && id == CLOCK_REALTIME && add) {
		long long ns = ts->tv_nsec + (add % 1000) * 1000000LL;

		ts->tv_sec += add / 1000 + (ns >= 1000000000LL) - (ns < 0);
		ts->tv_nsec = ns >= 1000000000LL ? ns - 1000000000LL : ns < 0 ? ns + 1000000000LL : ns;
	}
	return (int)r;
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

	/* Under ASan the children hang in the allocator (ASAN_BUILD above):
	 * seen in a CI rehearsal, 2 to 11 of 20 children stuck in
	 * SizeClassAllocator64::GetFromAllocator behind a mutex that the
	 * table's reclaimer or worker held in free() at the fork.  The check
	 * runs in every other build (make test). */
	if (TSAN_BUILD || ASAN_BUILD) {
		SKIP("fork: children use, clear and close caches forked under load (%s)",
		     TSAN_BUILD ? "ThreadSanitizer build"
				: "AddressSanitizer build: its allocator takes no lock around fork()");
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

/* --- issue 21 item 4: stats, policies, removal callback, get_or_load ------ */

/* What the removal callback saw: per reason, and the last key and value. */
struct removals {
	atomic_int n[4];
	char last_key[32], last_val[32];
	enum rcukv_reason last;
	int bad_value; /* a value that did not start with "val" */
};

static void on_removal(const void *k, size_t kl, const void *v, size_t vl, enum rcukv_reason why,
		       void *arg)
{
	struct removals *r = arg;

	atomic_fetch_add(&r->n[why], 1);
	if (kl < sizeof(r->last_key) && vl < sizeof(r->last_val)) {
		memcpy(r->last_key, k, kl);
		r->last_key[kl] = 0;
		memcpy(r->last_val, v, vl);
		r->last_val[vl] = 0;
	}
	if (vl < 3 || memcmp(v, "val", 3) != 0)
		r->bad_value = 1;
	r->last = why;
}

static struct rcukv_stats stats_of(rcukv *kv)
{
	struct rcukv_stats st;

	if (rcukv_stats(kv, &st))
		memset(&st, 0xff, sizeof(st));
	return st;
}

/* Exact counts after a known single-threaded sequence, and each reason. */
static void test_stats_exact(void)
{
	struct removals r = {0};
	struct rcukv_options opt = {.on_removal = on_removal, .removal_arg = &r};
	rcukv *kv = rcukv_open(&opt);
	struct rcukv_stats st;
	char out[16];
	void *v;
	long long n;
	int i;

	if (!kv) {
		CHECK(0, "stats: open");
		return;
	}
	for (i = 0; i < 3; i++) {
		char k1[2] = {(char)('a' + i), 0}, v1[6] = {'v', 'a', 'l', '-', (char)('a' + i), 0};

		rcukv_set(kv, k1, 1, v1, 5, 0);
	}
	CHECK(rcukv_get(kv, "a", 1, &v, NULL) == 0, "stats: get a");
	rcukv_free(v);
	rcukv_get_buf(kv, "b", 1, out, sizeof(out));
	rcukv_get(kv, "x", 1, &v, NULL);
	rcukv_get_buf(kv, "y", 1, out, sizeof(out));
	rcukv_exists(kv, "a", 1); /* counts nothing */
	rcukv_set(kv, "a", 1, "val-A", 5, 0);
	CHECK(r.n[RCUKV_REPLACED] == 1 && strcmp(r.last_key, "a") == 0 &&
		  strcmp(r.last_val, "val-a") == 0,
	      "callback: an overwrite reports the old value (REPLACED)");
	rcukv_del(kv, "b", 1);
	CHECK(r.n[RCUKV_DELETED] == 1 && strcmp(r.last_key, "b") == 0 &&
		  strcmp(r.last_val, "val-b") == 0,
	      "callback: a delete reports key and value (DELETED)");
	rcukv_del(kv, "nope", 4);
	rcukv_expire(kv, "c", 1, 60000);
	CHECK(r.n[RCUKV_REPLACED] == 1, "callback: a TTL change is not a removal");
	rcukv_set(kv, "t", 1, "val-t", 5, 1);
	sleep_ms(5);
	/* Expired: the expiry thread removes it, or this set does first. */
	rcukv_set(kv, "t", 1, "val-u", 5, 0);
	for (i = 0; i < 500 && r.n[RCUKV_EXPIRED] == 0; i++)
		sleep_ms(10);
	CHECK(r.n[RCUKV_EXPIRED] == 1, "callback: an expired entry is reported once (EXPIRED)");
	rcukv_incr(kv, "n", 1, 1, &n);
	rcukv_incr(kv, "n", 1, 1, &n); /* replaces "1": the callback sees no "val" */
	st = stats_of(kv);
	printf("stats: hits=%llu misses=%llu sets=%llu deletes=%llu replacements=%llu "
	       "expirations=%llu evictions=%llu entries=%llu bytes=%llu pinned=%llu\n",
	       (unsigned long long)st.hits, (unsigned long long)st.misses,
	       (unsigned long long)st.sets, (unsigned long long)st.deletes,
	       (unsigned long long)st.replacements, (unsigned long long)st.expirations,
	       (unsigned long long)st.evictions, (unsigned long long)st.entries,
	       (unsigned long long)st.bytes_in_use, (unsigned long long)st.bytes_pinned);
	CHECK(st.hits == 2 && st.misses == 2, "stats: 2 hits, 2 misses (exists counts neither)");
	CHECK(st.sets == 8, "stats: 8 stores (6 sets, 2 incrs)");
	CHECK(st.deletes == 1 && st.replacements == 2 && st.expirations == 1 && st.evictions == 0,
	      "stats: 1 delete, 2 replacements, 1 expiration, no eviction");
	CHECK(st.entries == 4 && st.bytes_in_use == rcukv_memory(kv) && st.max_memory == 0,
	      "stats: entries a, c, t, n; bytes as rcukv_memory()");
	CHECK(r.n[RCUKV_REPLACED] == 2 && r.n[RCUKV_DELETED] == 1 && r.n[RCUKV_EVICTED] == 0,
	      "callback: counts match the stats");
	CHECK(rcukv_stats(kv, NULL) == -EINVAL, "stats: NULL out is -EINVAL");
	rcukv_close(kv);
}

static int slow_iter_cb(const void *k, size_t kl, const void *v, size_t vl, void *arg)
{
	atomic_int *gate = arg;

	(void)k, (void)kl, (void)v, (void)vl;
	if (atomic_load(gate) == 0)
		atomic_store(gate, 1);
	while (atomic_load(gate) == 1)
		sleep_ms(1);
	return 1;
}

static void *iter_thread(void *p)
{
	void **a = p;

	rcukv_iterate(a[0], slow_iter_cb, a[1]);
	return NULL;
}

/* bytes_pinned: entries overwritten while an iteration holds them. */
static void test_stats_pinned(void)
{
	rcukv *kv = rcukv_open(NULL);
	char k[32], v[1024];
	atomic_int gate = 0;
	void *a[2] = {kv, &gate};
	pthread_t th;
	uint64_t held, after = 0;
	int i;

	memset(v, 'p', sizeof(v));
	if (!kv) {
		CHECK(0, "pinned: open");
		return;
	}
	for (i = 0; i < 100; i++)
		rcukv_set(kv, k, key(k, sizeof(k), "p", i), v, sizeof(v), 0);
	pthread_create(&th, NULL, iter_thread, a);
	while (atomic_load(&gate) == 0)
		sleep_ms(1);
	for (i = 0; i < 100; i++)
		rcukv_set(kv, k, key(k, sizeof(k), "p", i), v, sizeof(v), 0);
	held = stats_of(kv).bytes_pinned;
	atomic_store(&gate, 2);
	pthread_join(th, NULL);
	for (i = 0; i < 500; i++) {
		after = stats_of(kv).bytes_pinned;
		if (after < 100 * sizeof(v))
			break;
		sleep_ms(10);
	}
	printf("pinned: %llu bytes while iterating, %llu after\n", (unsigned long long)held,
	       (unsigned long long)after);
	CHECK(held >= 100 * sizeof(v), "pinned: 100 overwritten 1 KiB values pinned by an iteration");
	CHECK(after < 100 * sizeof(v), "pinned: freed once the iteration returned");
	rcukv_close(kv);
}

/* Fill a cache of @policy (16 KiB): @vol keys with long TTLs ("ttl<i>", TTL
 * rising with i), @fixed without ("fix<i>"), then "new<i>" keys without TTL
 * until a set fails or @more were stored.  Return: the new keys stored. */
static int fill_policy(rcukv *kv, int vol, int fixed, int more)
{
	char k[32], v[100] = "val";
	int i;

	memset(v + 3, 'v', sizeof(v) - 3);
	for (i = 0; i < vol; i++)
		rcukv_set(kv, k, key(k, sizeof(k), "ttl", i), v, sizeof(v),
			  3600000 + (uint64_t)i * 1000);
	for (i = 0; i < fixed; i++)
		rcukv_set(kv, k, key(k, sizeof(k), "fix", i), v, sizeof(v), 0);
	for (i = 0; i < more; i++)
		if (rcukv_set(kv, k, key(k, sizeof(k), "new", i), v, sizeof(v), 0))
			break;
	return i;
}

static int present(rcukv *kv, const char *prefix, int from, int to)
{
	char k[32];
	int n = 0;

	for (int i = from; i < to; i++)
		n += rcukv_exists(kv, k, key(k, sizeof(k), prefix, i));
	return n;
}

static const char *policy_name(enum rcukv_policy p)
{
	static const char *names[] = {"allkeys-lru",  "allkeys-lfu",	"volatile-lru",
				      "volatile-lfu", "volatile-ttl",	"allkeys-random",
				      "volatile-random", "noeviction"};
	return names[p];
}

/* volatile-*: keys without a TTL are never evicted; once no TTL is left,
 * writes are refused and store nothing. */
static void test_policy_volatile(void)
{
	static const enum rcukv_policy vols[] = {RCUKV_VOLATILE_LRU, RCUKV_VOLATILE_LFU,
						 RCUKV_VOLATILE_TTL, RCUKV_VOLATILE_RANDOM};

	for (size_t p = 0; p < sizeof(vols) / sizeof(vols[0]); p++) {
		struct removals r = {0};
		struct rcukv_options opt = {.max_memory = 16 * 1024,
					    .policy = vols[p],
					    .on_removal = on_removal,
					    .removal_arg = &r};
		rcukv *kv = rcukv_open(&opt);
		struct rcukv_stats st;
		char k[32];
		int stored;

		if (!kv) {
			CHECK(0, "%s: open", policy_name(vols[p]));
			continue;
		}
		stored = fill_policy(kv, 40, 40, 1000);
		st = stats_of(kv);
		printf("%s: %d new keys stored, %llu evictions\n", policy_name(vols[p]), stored,
		       (unsigned long long)st.evictions);
		CHECK(stored < 1000 && present(kv, "fix", 0, 40) == 40 &&
			  present(kv, "new", 0, stored) == stored,
		      "%s: keys without a TTL are never evicted", policy_name(vols[p]));
		CHECK(present(kv, "ttl", 0, 40) == 0 && st.evictions == 40 &&
			  r.n[RCUKV_EVICTED] == 40 && !r.bad_value,
		      "%s: every TTL key was evicted (callback: EVICTED, with its value)",
		      policy_name(vols[p]));
		CHECK(!rcukv_exists(kv, k, key(k, sizeof(k), "new", stored)) &&
			  rcukv_memory(kv) <= opt.max_memory,
		      "%s: the refused key is absent, the limit holds", policy_name(vols[p]));
		rcukv_close(kv);
	}
}

/* noeviction refuses and stores nothing; what was stored stays. */
static void test_policy_noeviction(void)
{
	struct rcukv_options opt = {.max_memory = 16 * 1024, .policy = RCUKV_NOEVICTION};
	rcukv *kv = rcukv_open(&opt);
	char k[32], v[100] = "val";
	int stored;

	memset(v + 3, 'v', sizeof(v) - 3);
	if (!kv) {
		CHECK(0, "noeviction: open");
		return;
	}
	stored = fill_policy(kv, 0, 0, 1000);
	CHECK(stored > 0 && stored < 1000 && present(kv, "new", 0, stored) == stored,
	      "noeviction: fills, then refuses; every stored key is still there");
	CHECK(rcukv_set(kv, k, key(k, sizeof(k), "new", stored), v, sizeof(v), 0) == -ENOMEM &&
		  !rcukv_exists(kv, k, key(k, sizeof(k), "new", stored)),
	      "noeviction: -ENOMEM and nothing stored");
	CHECK(stats_of(kv).evictions == 0 && stats_of(kv).sets == (uint64_t)stored,
	      "noeviction: no eviction counted, sets as stored");
	rcukv_close(kv);
}

/* volatile-ttl evicts the soonest-expiring first: of 40 TTL keys (TTL rising
 * with the index), evicting 20 takes low indexes; the latest quarter stays. */
static void test_policy_volatile_ttl_order(void)
{
	struct rcukv_options opt = {.max_memory = 16 * 1024,
				    .policy = RCUKV_VOLATILE_TTL,
				    .samples = 16,
				    .initial_size = 64};
	rcukv *kv = rcukv_open(&opt);
	char k[32], v[100] = "val";
	int i, sum = 0, gone = 0, stored;

	memset(v + 3, 'v', sizeof(v) - 3);
	if (!kv) {
		CHECK(0, "volatile-ttl: open");
		return;
	}
	fill_policy(kv, 40, 40, 0);
	for (stored = 0; stats_of(kv).evictions < 20 && stored < 1000; stored++)
		rcukv_set(kv, k, key(k, sizeof(k), "new", stored), v, sizeof(v), 0);
	for (i = 0; i < 40; i++)
		if (!rcukv_exists(kv, k, key(k, sizeof(k), "ttl", i))) {
			sum += i;
			gone++;
		}
	printf("volatile-ttl: %d TTL keys evicted, mean index %.1f (random: 19.5)\n", gone,
	       gone ? (double)sum / gone : 0.0);
	CHECK(gone == 20 && sum < 15 * 20, "volatile-ttl: the evicted are the soonest-expiring");
	CHECK(present(kv, "ttl", 30, 40) == 10 && present(kv, "fix", 0, 40) == 40,
	      "volatile-ttl: the latest-expiring and the TTL-less keys stay");
	rcukv_close(kv);
}

/* allkeys-lru and allkeys-lfu keep the keys that were read; allkeys-random
 * evicts something and holds the limit. */
static void test_policy_allkeys(void)
{
	static const enum rcukv_policy all[] = {RCUKV_ALLKEYS_LRU, RCUKV_ALLKEYS_LFU,
						RCUKV_ALLKEYS_RANDOM};

	for (size_t p = 0; p < sizeof(all) / sizeof(all[0]); p++) {
		struct rcukv_options opt = {.max_memory = 16 * 1024,
					    .policy = all[p],
					    .samples = 16,
					    .initial_size = 64};
		rcukv *kv = rcukv_open(&opt);
		char k[32], out[8];
		int stored, hot;

		if (!kv) {
			CHECK(0, "%s: open", policy_name(all[p]));
			continue;
		}
		fill_policy(kv, 0, 100, 0); /* about 115 fit */
		sleep_ms(30); /* LRU: three clock ticks between the fill and the reads */
		rcukv_set(kv, "tick", 4, "val", 3, 0);
		for (int rep = 0; rep < 50; rep++)
			for (int i = 0; i < 20; i++)
				rcukv_get_buf(kv, k, key(k, sizeof(k), "fix", i), out, sizeof(out));
		stored = fill_policy(kv, 0, 0, 60);
		hot = present(kv, "fix", 0, 20);
		printf("%s: %d new keys stored, %d of 20 read keys kept, %llu evictions\n",
		       policy_name(all[p]), stored, hot,
		       (unsigned long long)stats_of(kv).evictions);
		CHECK(stored == 60 && stats_of(kv).evictions >= 30 &&
			  rcukv_memory(kv) <= opt.max_memory,
		      "%s: every write stored, by evicting; the limit holds", policy_name(all[p]));
		if (all[p] != RCUKV_ALLKEYS_RANDOM)
			CHECK(hot == 20, "%s: the keys read are kept", policy_name(all[p]));
		rcukv_close(kv);
	}
	CHECK(rcukv_open(&(struct rcukv_options){.policy = (enum rcukv_policy)99}) == NULL &&
		  errno == EINVAL,
	      "options: an unknown policy is EINVAL");
	CHECK(rcukv_open(&(struct rcukv_options){.reserved = {1}}) == NULL && errno == EINVAL,
	      "options: non-zero reserved space is EINVAL");
}

/* Single flight: 8 threads miss one key while the loader sleeps 50 ms. */
#define LOADERS 8
struct load_arg {
	rcukv *kv;
	pthread_barrier_t *bar;
	atomic_int *calls;
	int fail; /* the loader returns -EIO */
	int rc;
	char got[32];
};

static int loader(const void *k, size_t kl, void **val, size_t *vlen, void *arg)
{
	struct load_arg *a = arg;
	char *p;

	atomic_fetch_add(a->calls, 1);
	sleep_ms(50);
	if (a->fail)
		return -EIO;
	p = malloc(kl + 8);
	if (!p)
		return -ENOMEM;
	memcpy(p, "loaded:", 7);
	memcpy(p + 7, k, kl);
	*val = p;
	*vlen = kl + 7;
	return 0;
}

static void *load_thread(void *p)
{
	struct load_arg *a = p;
	void *v = NULL;
	size_t vl = 0;

	pthread_barrier_wait(a->bar);
	a->rc = rcukv_get_or_load(a->kv, "lk", 2, loader, a, &v, &vl, 0);
	if (a->rc == 0 && vl < sizeof(a->got))
		memcpy(a->got, v, vl + 1);
	rcukv_free(v);
	return NULL;
}

static void run_loaders(rcukv *kv, int fail, atomic_int *calls, struct load_arg *a)
{
	pthread_barrier_t bar;
	pthread_t th[LOADERS];

	pthread_barrier_init(&bar, NULL, LOADERS);
	for (int i = 0; i < LOADERS; i++) {
		a[i] = (struct load_arg){.kv = kv, .bar = &bar, .calls = calls, .fail = fail};
		pthread_create(&th[i], NULL, load_thread, &a[i]);
	}
	for (int i = 0; i < LOADERS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&bar);
}

static void test_get_or_load(void)
{
	rcukv *kv = rcukv_open(NULL);
	struct load_arg a[LOADERS];
	struct rcukv_stats st;
	atomic_int calls = 0;
	int ok = 0, eio = 0;
	char out[32];

	if (!kv) {
		CHECK(0, "get_or_load: open");
		return;
	}
	run_loaders(kv, 1, &calls, a);
	for (int i = 0; i < LOADERS; i++)
		eio += a[i].rc == -EIO;
	st = stats_of(kv);
	printf("get_or_load, failing loader: %d calls, %d of %d callers got -EIO, %llu waited\n",
	       calls, eio, LOADERS, (unsigned long long)st.load_waits);
	CHECK(eio == LOADERS && !rcukv_exists(kv, "lk", 2),
	      "get_or_load: a loader error reaches every caller, nothing stored");
	CHECK(st.load_errors == (uint64_t)calls && st.loads == (uint64_t)calls &&
		  st.loads + st.load_waits == LOADERS,
	      "get_or_load: each caller either loaded (and failed) or waited");

	atomic_store(&calls, 0);
	run_loaders(kv, 0, &calls, a);
	for (int i = 0; i < LOADERS; i++)
		ok += a[i].rc == 0 && strcmp(a[i].got, "loaded:lk") == 0;
	printf("get_or_load: loader ran %d times, %d of %d callers got the value\n", calls, ok,
	       LOADERS);
	CHECK(calls == 1, "get_or_load: 8 concurrent misses ran the loader once");
	CHECK(ok == LOADERS, "get_or_load: all 8 callers got the loaded value");
	CHECK(rcukv_get_buf(kv, "lk", 2, out, sizeof(out)) == 9 && memcmp(out, "loaded:lk", 9) == 0,
	      "get_or_load: the value is stored");
	atomic_store(&calls, 0);
	run_loaders(kv, 0, &calls, a);
	CHECK(calls == 0 && a[0].rc == 0, "get_or_load: a hit runs no loader");
	rcukv_close(kv);
}

/* Many keys, many loads, deletes meanwhile: every caller gets its key's
 * value, and every call is a hit, a load or a wait (refcounts under ASan
 * and TSan). */
struct churn_arg {
	rcukv *kv;
	int id, wrong;
	atomic_int *stop;
};

static int key_loader(const void *k, size_t kl, void **val, size_t *vlen, void *arg)
{
	char *p = malloc(kl + 1);

	(void)arg;
	if (!p)
		return -ENOMEM;
	memcpy(p, k, kl);
	p[kl] = '!';
	*val = p;
	*vlen = kl + 1;
	return 0;
}

static void *churn_loader(void *p)
{
	struct churn_arg *a = p;
	char k[32];

	for (int i = 0; i < 3000; i++) {
		size_t kl = key(k, sizeof(k), "g", (i * 13 + a->id) % 64), vl = 0;
		void *v = NULL;

		if (rcukv_get_or_load(a->kv, k, kl, key_loader, NULL, &v, &vl, 0) != 0 ||
		    vl != kl + 1 || memcmp(v, k, kl) != 0)
			a->wrong++;
		rcukv_free(v);
	}
	return NULL;
}

static void *churn_deleter(void *p)
{
	struct churn_arg *a = p;
	char k[32];

	for (int i = 0; !atomic_load(a->stop); i++)
		rcukv_del(a->kv, k, key(k, sizeof(k), "g", i % 64));
	return NULL;
}

static void test_get_or_load_churn(void)
{
	rcukv *kv = rcukv_open(NULL);
	struct churn_arg a[4];
	pthread_t th[4];
	atomic_int stop = 0;
	struct rcukv_stats st;
	int wrong = 0;

	if (!kv) {
		CHECK(0, "load churn: open");
		return;
	}
	for (int i = 0; i < 4; i++) {
		a[i] = (struct churn_arg){.kv = kv, .id = i, .stop = &stop};
		pthread_create(&th[i], NULL, i == 3 ? churn_deleter : churn_loader, &a[i]);
	}
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		wrong += a[i].wrong;
	}
	atomic_store(&stop, 1);
	pthread_join(th[3], NULL);
	st = stats_of(kv);
	printf("load churn: %llu hits, %llu loads, %llu waits, %d wrong\n",
	       (unsigned long long)st.hits, (unsigned long long)st.loads,
	       (unsigned long long)st.load_waits, wrong);
	CHECK(wrong == 0, "load churn: every caller got its key's value");
	CHECK(st.hits + st.misses == 9000 && st.loads + st.load_waits <= st.misses &&
		  st.load_errors == 0,
	      "load churn: every call a hit or a miss; each miss loaded, waited or found it");
	rcukv_close(kv);
}

/* Counters stay exact under concurrency once the threads are joined. */
#define STAT_THREADS 4
#define STAT_OPS 20000
struct stat_arg {
	rcukv *kv;
	int id;
	long hits, misses, sets;
};

static void *stat_thread(void *p)
{
	struct stat_arg *a = p;
	char k[32], out[16];

	for (int i = 0; i < STAT_OPS; i++) {
		size_t kl = key(k, sizeof(k), "s", (i * 7 + a->id) % 2000);

		if (i % 10 == 0) {
			a->sets += rcukv_set(a->kv, k, kl, "val", 3, 0) == 0;
		} else if (i % 10 == 5) {
			rcukv_del(a->kv, k, kl);
		} else if (rcukv_get_buf(a->kv, k, kl, out, sizeof(out)) >= 0) {
			a->hits++;
		} else {
			a->misses++;
		}
	}
	return NULL;
}

/* More threads alive at once than the library has counter slots (64): the
 * rest share its overflow stripe, and no count is lost either way. */
#define MANY_THREADS 72
struct many_arg {
	rcukv *kv;
	atomic_int counted, release;
};

static void *many_thread(void *p)
{
	struct many_arg *a = p;
	char out[8];

	for (int i = 0; i < 500; i++)
		rcukv_get_buf(a->kv, i % 2 ? "hit" : "miss", i % 2 ? 3 : 4, out, sizeof(out));
	atomic_fetch_add(&a->counted, 1); /* all alive until all have counted */
	while (!atomic_load(&a->release))
		sleep_ms(1);
	return NULL;
}

static void stats_many_threads(rcukv *kv)
{
	pthread_t th[MANY_THREADS];
	struct many_arg a = {.kv = kv};
	struct rcukv_stats before, after;
	int n = 0;

	rcukv_set(kv, "hit", 3, "val", 3, 0);
	before = stats_of(kv);
	for (; n < MANY_THREADS; n++)
		if (pthread_create(&th[n], NULL, many_thread, &a))
			break;
	while (atomic_load(&a.counted) < n)
		sleep_ms(1);
	atomic_store(&a.release, 1);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	if (n < MANY_THREADS)
		SKIP("stats: only %d of %d threads could start", n, MANY_THREADS);
	after = stats_of(kv);
	printf("stats: %d threads at once: +%llu hits, +%llu misses\n", n,
	       (unsigned long long)(after.hits - before.hits),
	       (unsigned long long)(after.misses - before.misses));
	CHECK(after.hits - before.hits == (uint64_t)n * 250 &&
		  after.misses - before.misses == (uint64_t)n * 250,
	      "stats: exact with more threads alive than counter slots");
}

static void test_stats_concurrent(void)
{
	rcukv *kv = rcukv_open(NULL);
	struct stat_arg a[STAT_THREADS];
	pthread_t th[STAT_THREADS];
	struct rcukv_stats st;
	long hits = 0, misses = 0, sets = 0;

	if (!kv) {
		CHECK(0, "stats mt: open");
		return;
	}
	for (int i = 0; i < STAT_THREADS; i++) {
		a[i] = (struct stat_arg){.kv = kv, .id = i};
		pthread_create(&th[i], NULL, stat_thread, &a[i]);
	}
	for (int i = 0; i < STAT_THREADS; i++) {
		pthread_join(th[i], NULL);
		hits += a[i].hits;
		misses += a[i].misses;
		sets += a[i].sets;
	}
	st = stats_of(kv);
	printf("stats mt: %ld hits, %ld misses, %ld sets seen by %d threads; counters %llu, %llu, "
	       "%llu\n",
	       hits, misses, sets, STAT_THREADS, (unsigned long long)st.hits,
	       (unsigned long long)st.misses, (unsigned long long)st.sets);
	CHECK(st.hits == (uint64_t)hits && st.misses == (uint64_t)misses &&
		  st.hits + st.misses == (uint64_t)STAT_THREADS * STAT_OPS * 8 / 10,
	      "stats mt: hits + misses == gets done, each as the callers saw it");
	CHECK(st.sets == (uint64_t)sets && st.entries == rcukv_count(kv),
	      "stats mt: sets as done; entries as counted");
	stats_many_threads(kv);
	rcukv_close(kv);
}

static rcukv *cb_kv;

static void get_in_callback(const void *k, size_t kl, const void *v, size_t vl,
			    enum rcukv_reason why, void *arg)
{
	char out[4];

	(void)k, (void)kl, (void)v, (void)vl, (void)why, (void)arg;
	rcukv_get_buf(cb_kv, "a", 1, out, sizeof(out));
}

static void call_in_callback(void)
{
	struct rcukv_options opt = {.on_removal = get_in_callback};

	cb_kv = rcukv_open(&opt);
	rcukv_set(cb_kv, "a", 1, "1", 1, 0);
	rcukv_del(cb_kv, "a", 1);
}

static int self_loader(const void *k, size_t kl, void **val, size_t *vlen, void *arg)
{
	void *v;

	(void)arg;
	return rcukv_get_or_load(cb_kv, k, kl, self_loader, NULL, &v, vlen, 0) ? -EIO : (*val = v, 0);
}

static void load_in_loader(void)
{
	void *v;

	cb_kv = rcukv_open(NULL);
	rcukv_get_or_load(cb_kv, "k", 1, self_loader, NULL, &v, NULL, 0);
}

static void test_misuse_callbacks(void)
{
	expect_abort(call_in_callback,
		     "rcukv_get_buf: called from inside the removal callback of the same cache",
		     "misuse: a call on the cache from its removal callback aborts, naming it");
	expect_abort(load_in_loader, "rcukv_get_or_load: called from inside its own loader",
		     "misuse: get_or_load of the same key from its loader aborts");
}

/* A key with a 3 s TTL lives through wall-clock steps of a day forward and
 * back (TTLs are on CLOCK_MONOTONIC), and still expires (a bounded poll). */
static void test_wall_clock_step(void)
{
	struct timespec before, after;
	rcukv *kv = rcukv_open(NULL);
	long long t1, t2;
	void *v;
	size_t vl;

	clock_gettime(CLOCK_REALTIME, &before);
	CHECK(rcukv_set(kv, "k", 1, "v", 1, 3000) == 0, "clock step: set with a 3 s TTL");
	atomic_store(&realtime_shift_ms, 86400000LL);
	clock_gettime(CLOCK_REALTIME, &after);
	CHECK(after.tv_sec - before.tv_sec >= 86399, "clock step: the wall clock moved a day ahead");
	sleep_ms(150); /* the expiry thread samples ten times a second */
	t1 = rcukv_ttl(kv, "k", 1);
	CHECK(rcukv_exists(kv, "k", 1) == 1 && t1 > 0 && t1 <= 3000,
	      "clock step: a day ahead, the key is live, TTL %lld ms", t1);
	atomic_store(&realtime_shift_ms, -86400000LL);
	sleep_ms(150);
	t2 = rcukv_ttl(kv, "k", 1);
	CHECK(rcukv_get(kv, "k", 1, &v, &vl) == 0 && t2 > 0 && t2 <= t1,
	      "clock step: a day back, the key is live, TTL %lld ms", t2);
	if (v)
		rcukv_free(v);
	atomic_store(&realtime_shift_ms, 0);
	for (int i = 0; i < 100 && rcukv_exists(kv, "k", 1) == 1; i++)
		sleep_ms(100);
	CHECK(rcukv_exists(kv, "k", 1) == 0, "clock step: the key expires all the same");
	rcukv_close(kv);
}

int main(void)
{
	base_threads = threads();
	test_ttl_fill();
	test_background_expiry();
	test_evict_expired_first();
	test_error_means_not_stored();
	test_ttl_and_count();
	test_wall_clock_step();
	test_runtime_limit();
	test_close_joins_threads();
	test_misuse();
	test_stats_exact();
	test_stats_pinned();
	test_stats_concurrent();
	test_policy_volatile();
	test_policy_noeviction();
	test_policy_volatile_ttl_order();
	test_policy_allkeys();
	test_get_or_load();
	test_get_or_load_churn();
	test_misuse_callbacks();
	test_fork();
	return check_summary();
}
