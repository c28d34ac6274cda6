/*
 * test_persist.c - RDB persistence of rcukv-server end to end (issue 8):
 * SAVE/BGSAVE/LASTSAVE, save points, shutdown saves, loading at start-up
 * (served while it runs: -LOADING, INFO loading fields, SIGTERM/SHUTDOWN
 * during it, a dump bad at its end, stale temp files), crash safety, disk
 * full and MISCONF, and the point-in-time property of BGSAVE under writers
 * (the sweep test and MSET pairs).
 *
 * Starts $(B)/rcukv-server (B from the environment, default build/release)
 * on free loopback ports in 7500-7599, each in a scratch directory under
 * /tmp, talks to it with hiredis, and reads the dumps it writes with
 * server/rdb.c's loader in this process.  The round trip through Redis starts
 * redis-server 7 (skipped, and said so, when it is not installed).
 *
 * Knobs: TEST_PERSIST_SECONDS (default 1) is the length of each load phase
 * (sweep, MSET pairs, 50 writers); TEST_PERSIST_KEYS (default 20000) the
 * sweep's N; TEST_LOADING_KEYS (default 500000) the size of the dump that
 * test_loading writes (with server/rdb.c) and watches the server load: it
 * probes within milliseconds of the listener opening, and says SKIP (not
 * FAIL) for the during-load checks if the load ended first.  The test
 * asserts no time: waits are bounded polls.
 *
 * Closing line: "N passed, M failed, K skipped"; exit status 1 on any
 * failure.  A check this machine cannot make (no redis-server, no tmpfs
 * mount, a load that ended before the probe) is printed as SKIP and counted
 * as skipped, never as passed.
 */
#include "server/rdb.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/check.h"

static const char *server_bin;
static char base_dir[128];
static double load_seconds = 1.0;
static long sweep_keys = 20000;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long long now_ms(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* --------------------------------------------------------------- servers */

struct srv {
	pid_t pid; /* 0 once reaped */
	/* the exit status once reaped (128+sig if killed), -1 before: whoever
	 * reaps it (start_bin(), spawn_connect(), wait_exit()) keeps it here, so
	 * a server that exited early still reports how */
	int status;
	int port;
	char dir[256];
	char log[300];
};

static int port_free(int p)
{
	struct sockaddr_in sa = {0};
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok, one = 1;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)p);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

static int next_port = 7500;

static int free_port(void)
{
	for (int i = 0; i < 100; i++) {
		int p = next_port++;

		if (next_port > 7599)
			next_port = 7500;
		if (port_free(p))
			return p;
	}
	return -1;
}

static redisContext *connect_port(int port)
{
	struct timeval tv = {20, 0};
	redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);

	if (!c || c->err) {
		if (c)
			redisFree(c);
		return NULL;
	}
	redisSetTimeout(c, tv);
	return c;
}

/* Fork and exec a server: @bin with "--port P --dir D --logfile L" and @extra
 * (NULL-terminated).  @fsize_limit > 0 sets RLIMIT_FSIZE in the child.
 * Returns at once (s->pid set); start_bin() waits for it to serve. */
static void spawn_bin(struct srv *s, const char *bin, int redis, long fsize_limit,
		      const char *const *extra)
{
	const char *args[64];
	char portbuf[16];
	int n = 0;

	s->port = free_port();
	snprintf(portbuf, sizeof(portbuf), "%d", s->port);
	snprintf(s->log, sizeof(s->log), "%s/%s.log", s->dir, redis ? "redis" : "rcukv");
	args[n++] = bin;
	args[n++] = "--port";
	args[n++] = portbuf;
	args[n++] = "--dir";
	args[n++] = s->dir;
	args[n++] = "--logfile";
	args[n++] = s->log;
	if (redis) {
		args[n++] = "--bind";
		args[n++] = "127.0.0.1";
		args[n++] = "--appendonly";
		args[n++] = "no";
	} else {
		args[n++] = "--threads";
		args[n++] = "2";
	}
	for (int i = 0; extra && extra[i] && n < 62; i++)
		args[n++] = extra[i];
	args[n] = NULL;
	s->status = -1;
	s->pid = fork();
	if (s->pid == 0) {
		char errpath[320];
		int fd = open("/dev/null", O_RDWR), efd;

		/* sanitizer reports land in <dir>/<name>.stderr */
		snprintf(errpath, sizeof(errpath), "%s/%s.stderr", s->dir,
			 redis ? "redis" : "rcukv");
		efd = open(errpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(efd >= 0 ? efd : fd, 2);
		if (fsize_limit > 0) {
			struct rlimit rl = {(rlim_t)fsize_limit, (rlim_t)fsize_limit};

			setrlimit(RLIMIT_FSIZE, &rl);
		}
		if (!getenv("TSAN_OPTIONS"))
			setenv("TSAN_OPTIONS", "detect_deadlocks=0", 1);
		execv(bin, (char *const *)args);
		_exit(127);
	}
}

/* @s's server was reaped with wait status @st: keep its exit status. */
static int reaped(struct srv *s, int st)
{
	s->pid = 0;
	s->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return s->status;
}

/* spawn_bin(), then wait until it answers PING (so, for rcukv and Redis, once
 * the dump is loaded: PING gets -LOADING before).  Return 0 when it does, -1
 * when it exited (s->pid = 0 and s->status its exit status then). */
static int start_bin(struct srv *s, const char *bin, int redis, long fsize_limit,
		     const char *const *extra)
{
	spawn_bin(s, bin, redis, fsize_limit, extra);
	for (int i = 0; i < 400; i++) {
		redisContext *c = connect_port(s->port);
		int st;

		if (c) {
			redisReply *r = redisCommand(c, "PING");
			int ok = r && r->type == REDIS_REPLY_STATUS;

			freeReplyObject(r);
			redisFree(c);
			if (ok)
				return 0;
		}
		if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
			reaped(s, st);
			return -1;
		}
		usleep(25000);
	}
	return -1;
}

static int start(struct srv *s, const char *const *extra)
{
	return start_bin(s, server_bin, 0, 0, extra);
}

/* Wait for the server to exit; return its exit status (128+sig if killed),
 * or -1 if it did not exit within ~60 s (then it is killed).  A server
 * already reaped returns the status it exited with (and s->pid 0 must never
 * reach waitpid() or kill(), which would take any child or the whole group). */
static int wait_exit(struct srv *s)
{
	int st;

	if (!s->pid)
		return s->status;
	for (int i = 0; i < 2400; i++) {
		pid_t r = waitpid(s->pid, &st, WNOHANG);

		if (r == s->pid)
			return reaped(s, st);
		usleep(25000);
	}
	kill(s->pid, SIGKILL);
	waitpid(s->pid, &st, 0);
	s->pid = 0;
	return -1;
}

static int stop_sig(struct srv *s, int sig)
{
	if (!s->pid)
		return -1;
	kill(s->pid, sig);
	return wait_exit(s);
}

/* SHUTDOWN <how> on a connection of its own; returns the exit status. */
static int shutdown_srv(struct srv *s, const char *how)
{
	redisContext *c = connect_port(s->port);

	if (c) {
		redisReply *r =
		    how ? redisCommand(c, "SHUTDOWN %s", how) : redisCommand(c, "SHUTDOWN");

		freeReplyObject(r);
		redisFree(c);
	}
	return wait_exit(s);
}

static void make_dir(struct srv *s, const char *name)
{
	snprintf(s->dir, sizeof(s->dir), "%s/%s", base_dir, name);
	mkdir(s->dir, 0755);
}

/* Lines of @path holding @needle. */
static int file_count(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

static int file_contains(const char *path, const char *needle)
{
	return file_count(path, needle) > 0;
}

static int file_exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0;
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;
	int ok = in >= 0 && out >= 0;

	while (ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, (size_t)n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ok ? 0 : -1;
}

/* ----------------------------------------------------------------- RESP */

static redisReply *cmd(redisContext *c, const char *fmt, ...)
{
	va_list ap;
	redisReply *r;

	va_start(ap, fmt);
	r = redisvCommand(c, fmt, ap);
	va_end(ap);
	return r;
}

static int reply_is(redisReply *r, int type, const char *str)
{
	return r && r->type == type && (!str || (r->str && !strcmp(r->str, str)));
}

/* one command, reply compared, reply freed */
static int cmd_ok(redisContext *c, const char *fmt, ...)
{
	va_list ap;
	redisReply *r;
	int ok;

	va_start(ap, fmt);
	r = redisvCommand(c, fmt, ap);
	va_end(ap);
	ok = r && r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "OK");
	freeReplyObject(r);
	return ok;
}

/* INFO persistence field as a number (-999 if missing) */
static long long info_field(redisContext *c, const char *name)
{
	redisReply *r = redisCommand(c, "INFO persistence");
	long long v = -999;
	char key[128];

	snprintf(key, sizeof(key), "\n%s:", name);
	if (r && r->type == REDIS_REPLY_STRING) {
		const char *p = strstr(r->str, key);

		if (p)
			v = strtoll(p + strlen(key), NULL, 10);
	}
	freeReplyObject(r);
	return v;
}

static int info_has(redisContext *c, const char *text)
{
	redisReply *r = redisCommand(c, "INFO persistence");
	int f = r && r->type == REDIS_REPLY_STRING && strstr(r->str, text) != NULL;

	freeReplyObject(r);
	return f;
}

/* Wait (bounded, 60 s) until INFO persistence shows @field:0; 0 then. */
static int wait_info_zero(redisContext *c, const char *field)
{
	for (int i = 0; i < 2400; i++) {
		if (info_field(c, field) == 0)
			return 0;
		usleep(25000);
	}
	return -1;
}

/* Wait for the running BGSAVE to end (bounded); 0 when none runs. */
static int wait_bgsave(redisContext *c)
{
	return wait_info_zero(c, "rdb_bgsave_in_progress");
}

/* ------------------------------------------------------------- the dump */

struct kv {
	char *key;
	size_t klen;
	char *val;
	size_t vlen;
	long long expire;
};

struct dump {
	struct kv *kv;
	size_t n, cap;
	unsigned long long expired;
};

static int dump_kv(void *arg, const struct rdb_kv *kv)
{
	struct dump *d = arg;

	if (kv->expired) {
		d->expired++;
		return 0;
	}
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 1024;
		d->kv = realloc(d->kv, d->cap * sizeof(*d->kv));
	}
	d->kv[d->n].key = malloc(kv->klen + 1);
	memcpy(d->kv[d->n].key, kv->key, kv->klen + 1);
	d->kv[d->n].klen = kv->klen;
	d->kv[d->n].val = malloc(kv->vlen + 1);
	memcpy(d->kv[d->n].val, kv->val, kv->vlen + 1);
	d->kv[d->n].vlen = kv->vlen;
	d->kv[d->n].expire = kv->expire_ms;
	d->n++;
	return 0;
}

static void dump_free(struct dump *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->kv[i].key);
		free(d->kv[i].val);
	}
	free(d->kv);
	memset(d, 0, sizeof(*d));
}

/* Load @path with the format layer; 0 or its error. */
static int dump_load(const char *path, struct dump *d, char *err, size_t errlen)
{
	struct rdb_load_cbs cb = {.string_kv = dump_kv, .arg = d};

	memset(d, 0, sizeof(*d));
	return rdb_load_file(path, &cb, NULL, NULL, err, errlen);
}

static const struct kv *dump_find(const struct dump *d, const char *key, size_t klen)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->kv[i].klen == klen && !memcmp(d->kv[i].key, key, klen))
			return &d->kv[i];
	return NULL;
}

/* ---------------------------------------------------- the reference set */

/* Binary keys, empty key and value, integer-looking strings, large values
 * (compressible and not), expiries. */
#define REF_N 12
static struct kv ref[REF_N];
static long long ref_expire_base;
/* The short-lived key: long enough to be in a SAVE that follows at once even
 * on a loaded machine, over before the restart (short_wait()). */
#define SHORT_PX 1500
static long long short_set_ms;

static void short_wait(void)
{
	while (now_ms() <= short_set_ms + SHORT_PX + 20)
		usleep(20 * 1000);
}

static void ref_build(void)
{
	static const char k_bin[] = {'b', 0, 'i', '\r', '\n', 'n', (char)0xff};
	static const char v_bin[] = {0, 1, 2, '\r', '\n', 0, (char)0x80};
	size_t big = 3 * 1024 * 1024 + 17, comp = 1024 * 1024;
	unsigned long long x = 88172645463325252ULL;

	ref_expire_base = now_ms() + 3600 * 1000;
#define SETREF(i, k, kl, v, vl, e)                                                                 \
	do {                                                                                       \
		ref[i].key = malloc((kl) + 1);                                                     \
		memcpy(ref[i].key, k, kl);                                                         \
		ref[i].klen = kl;                                                                  \
		ref[i].val = malloc((vl) + 1);                                                     \
		memcpy(ref[i].val, v, vl);                                                         \
		ref[i].vlen = vl;                                                                  \
		ref[i].expire = e;                                                                 \
	} while (0)
	SETREF(0, k_bin, sizeof(k_bin), v_bin, sizeof(v_bin), -1);
	SETREF(1, "", 0, "empty key", 9, -1);
	SETREF(2, "empty value", 11, "", 0, -1);
	SETREF(3, "int", 3, "12345", 5, -1);
	SETREF(4, "neg", 3, "-2147483648", 11, ref_expire_base + 1);
	SETREF(5, "notint", 6, "0123", 4, -1);
	SETREF(6, "big int", 7, "9223372036854775807", 19, -1);
	SETREF(7, "ttl", 3, "expires in an hour", 18, ref_expire_base);
	SETREF(8, "ttl2", 4, "expires later", 13, ref_expire_base + 86400000LL);
	ref[9].key = strdup("random 3 MiB");
	ref[9].klen = strlen(ref[9].key);
	ref[9].val = malloc(big);
	for (size_t i = 0; i < big; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ref[9].val[i] = (char)x;
	}
	ref[9].vlen = big;
	ref[9].expire = -1;
	ref[10].key = strdup("compressible 1 MiB");
	ref[10].klen = strlen(ref[10].key);
	ref[10].val = malloc(comp);
	for (size_t i = 0; i < comp; i++)
		ref[10].val[i] = "abcabcabd"[i % 9];
	ref[10].vlen = comp;
	ref[10].expire = ref_expire_base + 5;
	SETREF(11, "short lived", 11, "gone at load", 12, -2); /* PX SHORT_PX at write */
#undef SETREF
}

static void ref_write(redisContext *c)
{
	for (int i = 0; i < REF_N; i++) {
		redisReply *r;

		if (ref[i].expire == -2) {
			short_set_ms = now_ms();
			r = redisCommand(c, "SET %b %b PX %d", ref[i].key, ref[i].klen, ref[i].val,
					 ref[i].vlen, SHORT_PX);
		} else if (ref[i].expire > 0) {
			r = redisCommand(c, "SET %b %b PXAT %lld", ref[i].key, ref[i].klen,
					 ref[i].val, ref[i].vlen, ref[i].expire);
		} else {
			r = redisCommand(c, "SET %b %b", ref[i].key, ref[i].klen, ref[i].val,
					 ref[i].vlen);
		}
		CHECK(reply_is(r, REDIS_REPLY_STATUS, "OK"), "SET ref %d", i);
		freeReplyObject(r);
	}
}

/* Every ref key but the short-lived one is on @c with value and expiry;
 * the short-lived one is absent.  @what names the step. */
static void ref_check_server(redisContext *c, const char *what)
{
	int good = 0;

	for (int i = 0; i < REF_N; i++) {
		redisReply *r = redisCommand(c, "GET %b", ref[i].key, ref[i].klen);
		redisReply *t = redisCommand(c, "PEXPIRETIME %b", ref[i].key, ref[i].klen);

		if (ref[i].expire == -2) {
			good += r && r->type == REDIS_REPLY_NIL;
		} else {
			long long want = ref[i].expire > 0 ? ref[i].expire : -1;

			good += r && r->type == REDIS_REPLY_STRING &&
				(size_t)r->len == ref[i].vlen &&
				!memcmp(r->str, ref[i].val, ref[i].vlen) && t &&
				t->type == REDIS_REPLY_INTEGER && t->integer == want;
		}
		freeReplyObject(r);
		freeReplyObject(t);
	}
	CHECK(good == REF_N, "%s: %d of %d keys with value and expiry intact", what, good, REF_N);
}

/* ------------------------------------------------------------ the tests */

static void test_commands_and_config(void)
{
	struct srv s;
	redisContext *c;
	redisReply *r;
	long long d0, t0;

	make_dir(&s, "cmds");
	if (start(&s, NULL) < 0 || !(c = connect_port(s.port))) {
		CHECK(0, "server starts");
		return;
	}
	/* CONFIG, as Redis 7.0 answers */
	r = cmd(c, "CONFIG GET save");
	CHECK(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
		  !strcmp(r->element[1]->str, ""),
	      "default save is empty");
	freeReplyObject(r);
	CHECK(cmd_ok(c, "CONFIG SET save %s", "3600 1 300 100"), "CONFIG SET save");
	r = cmd(c, "CONFIG GET save");
	CHECK(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
		  !strcmp(r->element[1]->str, "3600 1 300 100"),
	      "CONFIG GET save after set");
	freeReplyObject(r);
	r = cmd(c, "CONFIG SET save %s", "100");
	CHECK(reply_is(r, REDIS_REPLY_ERROR,
		       "ERR CONFIG SET failed (possibly related to argument "
		       "'save') - Invalid save parameters"),
	      "odd save: %s", r && r->str ? r->str : "?");
	freeReplyObject(r);
	r = cmd(c, "CONFIG SET save %s", "0 1");
	CHECK(reply_is(r, REDIS_REPLY_ERROR, NULL), "save 0 seconds refused");
	freeReplyObject(r);
	CHECK(cmd_ok(c, "CONFIG SET save %s", ""), "CONFIG SET save \"\"");
	r = cmd(c, "CONFIG SET dbfilename x.rdb");
	CHECK(reply_is(r, REDIS_REPLY_ERROR,
		       "ERR CONFIG SET failed (possibly related to argument "
		       "'dbfilename') - can't set protected config"),
	      "dbfilename protected: %s", r && r->str ? r->str : "?");
	freeReplyObject(r);
	r = cmd(c, "CONFIG SET dir /tmp");
	CHECK(reply_is(r, REDIS_REPLY_ERROR,
		       "ERR CONFIG SET failed (possibly related to argument "
		       "'dir') - can't set protected config"),
	      "dir protected");
	freeReplyObject(r);
	r = cmd(c, "CONFIG SET rdbchecksum no");
	CHECK(reply_is(r, REDIS_REPLY_ERROR,
		       "ERR CONFIG SET failed (possibly related to argument "
		       "'rdbchecksum') - can't set immutable config"),
	      "rdbchecksum immutable");
	freeReplyObject(r);
	CHECK(cmd_ok(c, "CONFIG SET rdbcompression no"), "rdbcompression runtime");
	CHECK(cmd_ok(c, "CONFIG SET rdbcompression yes"), "rdbcompression runtime");
	r = cmd(c, "CONFIG GET dir");
	CHECK(r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
		  !strcmp(r->element[1]->str, s.dir),
	      "CONFIG GET dir is the absolute dir");
	freeReplyObject(r);

	/* commands */
	r = cmd(c, "BGSAVE foo");
	CHECK(reply_is(r, REDIS_REPLY_ERROR, "ERR syntax error"), "BGSAVE foo");
	freeReplyObject(r);
	r = cmd(c, "SAVE x");
	CHECK(reply_is(r, REDIS_REPLY_ERROR, "ERR wrong number of arguments for 'save' command"),
	      "SAVE x");
	freeReplyObject(r);
	r = cmd(c, "LASTSAVE");
	t0 = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
	CHECK(t0 > 0 && t0 <= now_ms() / 1000 + 1, "LASTSAVE at start");
	freeReplyObject(r);

	/* the dirty counter counts as Redis 7.0 does (checked against redis-server) */
	d0 = info_field(c, "rdb_changes_since_last_save");
	CHECK(d0 == 0, "no changes at start (%lld)", d0);
	freeReplyObject(cmd(c, "SET a 1"));		/* +1 */
	freeReplyObject(cmd(c, "SET a 1 NX"));		/* 0 */
	freeReplyObject(cmd(c, "MSET x 1 y 2 z 3"));	/* +3 */
	freeReplyObject(cmd(c, "MSETNX x 1 w 2"));	/* 0 */
	freeReplyObject(cmd(c, "DEL x y nope"));	/* +2 */
	freeReplyObject(cmd(c, "INCR i"));		/* +1 */
	freeReplyObject(cmd(c, "APPEND s abc"));	/* +1 */
	freeReplyObject(cmd(c, "SETRANGE s 0 %s", "")); /* 0 */
	freeReplyObject(cmd(c, "EXPIRE s 100"));	/* +1 */
	freeReplyObject(cmd(c, "EXPIRE nope 100"));	/* 0 */
	freeReplyObject(cmd(c, "PERSIST a"));		/* 0 */
	freeReplyObject(cmd(c, "GET a"));		/* 0 */
	freeReplyObject(cmd(c, "GETDEL i"));		/* +1 */
	freeReplyObject(cmd(c, "RENAME z z2"));		/* +1 */
	CHECK(info_field(c, "rdb_changes_since_last_save") == 11,
	      "changes counted as Redis: %lld, want 11",
	      info_field(c, "rdb_changes_since_last_save"));
	freeReplyObject(cmd(c, "FLUSHALL")); /* + keys removed (3: a s z2) */
	CHECK(info_field(c, "rdb_changes_since_last_save") == 14, "FLUSHALL adds its keys: %lld",
	      info_field(c, "rdb_changes_since_last_save"));

	/* SAVE of an empty data set, then LASTSAVE and INFO */
	CHECK(cmd_ok(c, "SAVE"), "SAVE empty");
	CHECK(info_field(c, "rdb_changes_since_last_save") == 0, "SAVE resets changes");
	CHECK(info_field(c, "rdb_saves") == 1, "rdb_saves 1");
	{
		char p[400], err[256];
		struct dump d;

		snprintf(p, sizeof(p), "%s/dump.rdb", s.dir);
		CHECK(dump_load(p, &d, err, sizeof(err)) == 0 && d.n == 0, "empty dump loads: %s",
		      err);
		dump_free(&d);
	}
	/* BGSAVE, INFO during and after */
	for (int i = 0; i < 2000; i++)
		freeReplyObject(cmd(c, "SET key:%d %0200d", i, i));
	r = cmd(c, "BGSAVE");
	CHECK(reply_is(r, REDIS_REPLY_STATUS, "Background saving started"), "BGSAVE started");
	freeReplyObject(r);
	CHECK(wait_bgsave(c) == 0, "BGSAVE ends");
	CHECK(info_has(c, "rdb_last_bgsave_status:ok\r\n"), "status ok");
	CHECK(info_field(c, "rdb_last_bgsave_time_sec") >= 0, "rdb_last_bgsave_time_sec set");
	CHECK(info_field(c, "rdb_current_bgsave_time_sec") == -1, "no current bgsave");
	CHECK(info_field(c, "rdb_changes_since_last_save") == 0, "BGSAVE resets changes");
	CHECK(info_field(c, "snapshot_held_bytes") >= 0, "snapshot_held_bytes shown");
	{
		redisReply *q = cmd(c, "INFO persistence");
		static const char *const order[] = {
		    "loading:",
		    "rdb_changes_since_last_save:",
		    "rdb_bgsave_in_progress:",
		    "rdb_last_save_time:",
		    "rdb_last_bgsave_status:",
		    "rdb_last_bgsave_time_sec:",
		    "rdb_current_bgsave_time_sec:",
		    "rdb_saves:",
		    "aof_enabled:",
		};
		const char *prev = q && q->str ? q->str : "";
		int inorder = 1;

		for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
			const char *p = strstr(prev, order[i]);

			if (!p)
				inorder = 0;
			else
				prev = p;
		}
		CHECK(inorder, "INFO persistence fields in Redis's order");
		freeReplyObject(q);
	}
	/* BGSAVE while one runs; BGSAVE SCHEDULE.  A save of 2000 keys may end
	 * before the second command arrives: then both start, which is also
	 * Redis's answer. */
	redisAppendCommand(c, "BGSAVE");
	redisAppendCommand(c, "BGSAVE");
	redisAppendCommand(c, "BGSAVE SCHEDULE");
	{
		redisReply *a = NULL, *b = NULL, *e = NULL;

		redisGetReply(c, (void **)&a);
		redisGetReply(c, (void **)&b);
		redisGetReply(c, (void **)&e);
		CHECK(reply_is(a, REDIS_REPLY_STATUS, "Background saving started"),
		      "first started");
		CHECK(reply_is(b, REDIS_REPLY_ERROR, "ERR Background save already in progress") ||
			  reply_is(b, REDIS_REPLY_STATUS, "Background saving started"),
		      "second: in progress or started");
		CHECK(reply_is(e, REDIS_REPLY_STATUS, "Background saving scheduled") ||
			  reply_is(e, REDIS_REPLY_STATUS, "Background saving started"),
		      "SCHEDULE: scheduled or started");
		freeReplyObject(a);
		freeReplyObject(b);
		freeReplyObject(e);
	}
	for (int i = 0; i < 400 && (info_field(c, "rdb_bgsave_in_progress") != 0 ||
				    info_field(c, "rdb_saves") < 3);
	     i++)
		usleep(25000);
	CHECK(info_field(c, "rdb_saves") >= 3, "scheduled save ran (rdb_saves %lld)",
	      info_field(c, "rdb_saves"));
	r = cmd(c, "LASTSAVE");
	CHECK(r && r->type == REDIS_REPLY_INTEGER && r->integer >= t0, "LASTSAVE moves");
	freeReplyObject(r);
	redisFree(c);
	CHECK(shutdown_srv(&s, "NOSAVE") == 0, "SHUTDOWN NOSAVE exits 0");
	CHECK(file_contains(s.log, "Background saving started"), "log: Background saving started");
	CHECK(file_contains(s.log, "DB saved on disk"), "log: DB saved on disk");
}

/* rcukv -> file -> rcukv, and SIGTERM/SHUTDOWN saves */
static void test_round_trip(void)
{
	struct srv s;
	redisContext *c;
	char dump[400], err[256];
	struct dump d;

	make_dir(&s, "rt");
	if (start(&s, NULL) < 0 || !(c = connect_port(s.port))) {
		CHECK(0, "server starts");
		return;
	}
	ref_write(c);
	CHECK(cmd_ok(c, "SAVE"), "SAVE");
	snprintf(dump, sizeof(dump), "%s/dump.rdb", s.dir);
	CHECK(dump_load(dump, &d, err, sizeof(err)) == 0, "our dump loads: %s", err);
	for (int i = 0; i < REF_N; i++) {
		const struct kv *k = dump_find(&d, ref[i].key, ref[i].klen);

		CHECK(k && k->vlen == ref[i].vlen && !memcmp(k->val, ref[i].val, k->vlen) &&
			  (ref[i].expire == -2 || k->expire == ref[i].expire),
		      "dump holds ref key %d", i);
	}
	dump_free(&d);
	redisFree(c);
	CHECK(shutdown_srv(&s, "NOSAVE") == 0, "SHUTDOWN NOSAVE");
	short_wait(); /* the short-lived key is past its expiry now */
	if (start(&s, NULL) < 0 || !(c = connect_port(s.port))) {
		CHECK(0, "server restarts on its dump");
		return;
	}
	ref_check_server(c, "rcukv -> file -> rcukv");
	CHECK(info_field(c, "rdb_last_load_keys_loaded") == REF_N - 1, "keys loaded %lld",
	      info_field(c, "rdb_last_load_keys_loaded"));
	CHECK(info_field(c, "rdb_last_load_keys_expired") == 1, "expired key not loaded");
	CHECK(file_contains(s.log, "DB loaded from disk: "), "log: DB loaded from disk");
	CHECK(file_contains(s.log, "keys loaded: 11, keys expired: 1"), "log: counts");

	/* SIGTERM with save points: the final save holds the last write */
	CHECK(cmd_ok(c, "CONFIG SET save %s", "3600 1"), "save points on");
	CHECK(cmd_ok(c, "SET after-sigterm yes"), "SET");
	redisFree(c);
	CHECK(stop_sig(&s, SIGTERM) == 0, "SIGTERM exits 0");
	CHECK(file_contains(s.log, "Saving the final RDB snapshot before exiting."),
	      "log: final snapshot");
	CHECK(dump_load(dump, &d, err, sizeof(err)) == 0 &&
		  dump_find(&d, "after-sigterm", 13) != NULL,
	      "SIGTERM saved the last write");
	dump_free(&d);

	/* SHUTDOWN NOSAVE with save points: no save */
	if (start(&s, NULL) < 0 || !(c = connect_port(s.port))) {
		CHECK(0, "restart");
		return;
	}
	CHECK(cmd_ok(c, "CONFIG SET save %s", "3600 1"), "save points on");
	CHECK(cmd_ok(c, "SET not-saved 1"), "SET");
	redisFree(c);
	CHECK(shutdown_srv(&s, "NOSAVE") == 0, "SHUTDOWN NOSAVE");
	CHECK(dump_load(dump, &d, err, sizeof(err)) == 0 && !dump_find(&d, "not-saved", 9) &&
		  dump_find(&d, "after-sigterm", 13),
	      "NOSAVE left the dump as it was");
	dump_free(&d);

	/* SHUTDOWN SAVE without save points: saves */
	if (start(&s, NULL) < 0 || !(c = connect_port(s.port))) {
		CHECK(0, "restart");
		return;
	}
	CHECK(cmd_ok(c, "SET saved-by-shutdown-save 1"), "SET");
	redisFree(c);
	CHECK(shutdown_srv(&s, "SAVE") == 0, "SHUTDOWN SAVE");
	CHECK(dump_load(dump, &d, err, sizeof(err)) == 0 &&
		  dump_find(&d, "saved-by-shutdown-save", 22),
	      "SHUTDOWN SAVE saved");
	dump_free(&d);

	/* save points in the cron */
	if (start(&s, NULL) < 0 || !(c = connect_port(s.port))) {
		CHECK(0, "restart");
		return;
	}
	CHECK(cmd_ok(c, "CONFIG SET save %s", "1 2"), "save 1 2");
	CHECK(cmd_ok(c, "SET p1 1"), "SET");
	CHECK(cmd_ok(c, "SET p2 1"), "SET");
	for (int i = 0; i < 400 && info_field(c, "rdb_saves") < 1; i++)
		usleep(25000);
	CHECK(info_field(c, "rdb_saves") >= 1, "a save point started a BGSAVE");
	wait_bgsave(c);
	CHECK(file_contains(s.log, "2 changes in 1 seconds. Saving..."), "log: save point");
	CHECK(dump_load(dump, &d, err, sizeof(err)) == 0 && dump_find(&d, "p2", 2),
	      "the cron's dump has the writes");
	dump_free(&d);

	/* FLUSHALL with save points saves the empty data set at once (Redis 7.0) */
	CHECK(cmd_ok(c, "CONFIG SET save %s", "3600 1000"), "save 3600 1000");
	CHECK(cmd_ok(c, "SET f 1"), "SET");
	CHECK(cmd_ok(c, "FLUSHALL"), "FLUSHALL");
	CHECK(dump_load(dump, &d, err, sizeof(err)) == 0 && d.n == 0,
	      "FLUSHALL with save points left an empty dump (%zu keys)", d.n);
	dump_free(&d);
	CHECK(info_field(c, "rdb_changes_since_last_save") == 0, "FLUSHALL's save reset changes");
	redisFree(c);
	CHECK(shutdown_srv(&s, "NOSAVE") == 0, "SHUTDOWN NOSAVE");
}

/* rcukv -> file -> redis-server -> file -> rcukv, and redis-check-rdb */
static void test_through_redis(void)
{
	struct srv s, r;
	redisContext *c;
	char dump[400], line[512], cmdline[800];
	FILE *p;
	int ok = 0;

	if (access("/usr/bin/redis-server", X_OK) != 0) {
		SKIP("round trip through Redis: redis-server not installed");
		return;
	}
	make_dir(&s, "viaredis");
	if (start(&s, NULL) < 0 || !(c = connect_port(s.port))) {
		CHECK(0, "server starts");
		return;
	}
	ref_write(c);
	CHECK(cmd_ok(c, "SAVE"), "SAVE");
	redisFree(c);
	CHECK(shutdown_srv(&s, "NOSAVE") == 0, "SHUTDOWN");
	snprintf(dump, sizeof(dump), "%s/dump.rdb", s.dir);
	snprintf(cmdline, sizeof(cmdline), "redis-check-rdb %s 2>&1", dump);
	p = popen(cmdline, "r");
	while (p && fgets(line, sizeof(line), p)) {
		printf("  | %s", line);
		if (strstr(line, "RDB looks OK"))
			ok = 1;
	}
	if (p)
		pclose(p);
	CHECK(ok, "redis-check-rdb accepts rcukv's dump");

	short_wait(); /* the short-lived key expired */
	r = s;
	if (start_bin(&r, "/usr/bin/redis-server", 1, 0,
		      (const char *const[]){"--save", "", NULL}) < 0 ||
	    !(c = connect_port(r.port))) {
		CHECK(0, "redis-server starts on rcukv's dump");
		return;
	}
	ref_check_server(c, "rcukv -> file -> redis-server");
	CHECK(cmd_ok(c, "SAVE"), "redis SAVE");
	redisFree(c);
	CHECK(shutdown_srv(&r, "NOSAVE") == 0, "redis-server exits");
	if (start(&s, NULL) < 0 || !(c = connect_port(s.port))) {
		CHECK(0, "rcukv starts on redis-server's dump");
		return;
	}
	ref_check_server(c, "rcukv -> file -> redis-server -> file -> rcukv");
	redisFree(c);
	CHECK(shutdown_srv(&s, "NOSAVE") == 0, "SHUTDOWN");
}

/* Bad dumps: corrupt, truncated, unsupported types, skipping them. */
static void test_bad_files(void)
{
	struct srv s;
	redisContext *c;
	char dump[400], good[400], corpus[600];
	struct stat sb;
	int fd;

	make_dir(&s, "bad");
	snprintf(dump, sizeof(dump), "%s/dump.rdb", s.dir);
	snprintf(good, sizeof(good), "%s/good.rdb", s.dir);
	if (start(&s, NULL) < 0 || !(c = connect_port(s.port))) {
		CHECK(0, "server starts");
		return;
	}
	for (int i = 0; i < 200; i++)
		freeReplyObject(cmd(c, "SET k%d value-%d", i, i));
	CHECK(cmd_ok(c, "SAVE"), "SAVE");
	redisFree(c);
	CHECK(shutdown_srv(&s, "NOSAVE") == 0, "exits 0");
	copy_file(dump, good);
	stat(good, &sb);

	/* a flipped byte in the middle: checksum error, exit 1 */
	fd = open(dump, O_RDWR);
	{
		unsigned char b;
		off_t off = sb.st_size / 2;

		if (pread(fd, &b, 1, off) == 1) {
			b ^= 0x20;
			if (pwrite(fd, &b, 1, off) != 1)
				CHECK(0, "flip");
		}
	}
	close(fd);
	CHECK(start(&s, NULL) < 0 && s.pid == 0 && s.status == 1,
	      "flipped byte: refuses to start, exit 1 (%d)", s.status);
	CHECK(file_contains(s.log, "Fatal error loading the DB"), "flipped byte: log names it");
	/* truncated */
	copy_file(good, dump);
	if (truncate(dump, sb.st_size - 20) != 0)
		CHECK(0, "truncate");
	CHECK(start(&s, NULL) < 0 && s.pid == 0 && s.status == 1,
	      "truncated: refuses to start, exit 1 (%d)", s.status);
	CHECK(file_contains(s.log, "Fatal error loading the DB"), "truncated: log names it");
	/* not an RDB at all */
	fd = open(dump, O_WRONLY | O_TRUNC);
	if (write(fd, "hello world\n", 12) != 12)
		CHECK(0, "write");
	close(fd);
	CHECK(start(&s, NULL) < 0 && s.pid == 0 && s.status == 1,
	      "garbage: refuses to start, exit 1 (%d)", s.status);

	/* a redis-server fixture with every type and keys in DB 2: refused */
	snprintf(corpus, sizeof(corpus), "tests/server/rdb-corpus/redis-7.0.15-types.rdb");
	if (copy_file(corpus, dump) == 0) {
		CHECK(start(&s, NULL) < 0 && s.pid == 0 && s.status == 1,
		      "fixture: refuses to start, exit 1 (%d)", s.status);
		CHECK(file_contains(s.log, "Fatal error loading the DB"), "log: fatal error");
	} else {
		CHECK(0, "corpus file %s (run from the repository root)", corpus);
	}

	/* redis-server's dump with a string, a list, a set, a hash, a zset and
	 * a stream: refused (the stream), then loaded with the stream skipped
	 * (every other type loads: issue 17) */
	if (access("/usr/bin/redis-server", X_OK) == 0) {
		struct srv r = s;

		unlink(dump);
		if (start_bin(&r, "/usr/bin/redis-server", 1, 0,
			      (const char *const[]){"--save", "", NULL}) == 0 &&
		    (c = connect_port(r.port))) {
			freeReplyObject(cmd(c, "SET s1 v1"));
			freeReplyObject(cmd(c, "RPUSH l a b"));
			freeReplyObject(cmd(c, "SADD st x y"));
			freeReplyObject(cmd(c, "HSET h f v"));
			freeReplyObject(cmd(c, "ZADD z 1 m"));
			freeReplyObject(cmd(c, "XADD x 1-1 f v"));
			CHECK(cmd_ok(c, "SAVE"), "redis SAVE");
			redisFree(c);
			CHECK(shutdown_srv(&r, "NOSAVE") == 0, "exits 0");
		} else {
			CHECK(0, "redis-server starts");
		}
		CHECK(start(&s, NULL) < 0 && s.pid == 0 && s.status == 1,
		      "unsupported types: refuses to start, exit 1 (%d)", s.status);
		CHECK(file_contains(s.log, "rdb-skip-unsupported-types"),
		      "log names the option that skips them");
		if (start(&s, (const char *const[]){"--rdb-skip-unsupported-types", "yes", NULL}) ==
			0 &&
		    (c = connect_port(s.port))) {
			redisReply *x = cmd(c, "DBSIZE"), *y = cmd(c, "GET s1"),
				   *z = cmd(c, "HGET h f"), *zs = cmd(c, "ZSCORE z m"),
				   *w = cmd(c, "LINDEX l 1");

			CHECK(x && x->type == REDIS_REPLY_INTEGER && x->integer == 5,
			      "the string, the list, the hash, the set and the zset loaded");
			CHECK(reply_is(zs, REDIS_REPLY_STRING, "1"), "the zset's score");
			CHECK(reply_is(w, REDIS_REPLY_STRING, "b"), "the list's element");
			freeReplyObject(zs);
			freeReplyObject(w);
			CHECK(reply_is(y, REDIS_REPLY_STRING, "v1"), "the string's value");
			CHECK(reply_is(z, REDIS_REPLY_STRING, "v"), "the hash's field");
			freeReplyObject(x);
			freeReplyObject(y);
			freeReplyObject(z);
			z = cmd(c, "SISMEMBER st y");
			CHECK(z && z->type == REDIS_REPLY_INTEGER && z->integer == 1, "the set's member");
			freeReplyObject(z);
			redisFree(c);
			CHECK(file_contains(s.log, "Skipped 1 keys"), "log: how many were skipped");
			CHECK(shutdown_srv(&s, "NOSAVE") == 0, "exits 0");
		} else {
			CHECK(0, "starts with rdb-skip-unsupported-types yes");
		}
	}
}

/* ------------------------------------------- writers while BGSAVE runs */

struct writer {
	int port;
	int id;
	_Atomic int *stop;
	long ops;
	int errors;
	int mode; /* 0 plain SETs, 1 sweep, 2 MSET pairs */
	_Atomic long sweeps;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	redisContext *c = connect_port(w->port);
	long i = 0;

	if (!c) {
		w->errors++;
		return NULL;
	}
	if (w->mode == 1) {
		/* sweep k1..kN to the sweep number, in order, pipelined by 500 */
		for (long n = 1; !atomic_load(w->stop) && n < 1000000; n++) {
			for (long k = 1; k <= sweep_keys; k += 500) {
				long e = k + 500 > sweep_keys + 1 ? sweep_keys + 1 : k + 500;

				for (long j = k; j < e; j++)
					redisAppendCommand(c, "SET k%ld %ld", j, n);
				for (long j = k; j < e; j++) {
					redisReply *r = NULL;

					if (redisGetReply(c, (void **)&r) != REDIS_OK ||
					    !reply_is(r, REDIS_REPLY_STATUS, "OK"))
						w->errors++;
					freeReplyObject(r);
				}
				w->ops += e - k;
			}
			w->sweeps = n;
		}
	} else if (w->mode == 2) {
		/* MSET a<id>:<p> v b<id>:<p> v for 20 pairs, v increasing */
		for (long v = 1; !atomic_load(w->stop) && v < 100000000; v++) {
			const char *argv[81];
			size_t lens[81];
			char buf[80][32];

			argv[0] = "MSET";
			lens[0] = 4;
			for (int p = 0; p < 20; p++) {
				snprintf(buf[4 * p], 32, "a%d:%d", w->id, p);
				snprintf(buf[4 * p + 1], 32, "%ld", v);
				snprintf(buf[4 * p + 2], 32, "b%d:%d", w->id, p);
				snprintf(buf[4 * p + 3], 32, "%ld", v);
				for (int q = 0; q < 4; q++) {
					argv[1 + 4 * p + q] = buf[4 * p + q];
					lens[1 + 4 * p + q] = strlen(buf[4 * p + q]);
				}
			}
			redisReply *r = redisCommandArgv(c, 81, argv, lens);

			if (!reply_is(r, REDIS_REPLY_STATUS, "OK"))
				w->errors++;
			freeReplyObject(r);
			w->ops++;
		}
	} else {
		while (!atomic_load(w->stop) && i < 10000000) {
			for (int j = 0; j < 50; j++, i++)
				redisAppendCommand(c, "SET w%d:%ld %ld", w->id, i % 2000, i);
			for (int j = 0; j < 50; j++) {
				redisReply *r = NULL;

				if (redisGetReply(c, (void **)&r) != REDIS_OK ||
				    !reply_is(r, REDIS_REPLY_STATUS, "OK"))
					w->errors++;
				freeReplyObject(r);
			}
			w->ops += 50;
		}
	}
	redisFree(c);
	return NULL;
}

static void start_writers(struct writer *w, pthread_t *t, int n, int port, int mode,
			  _Atomic int *stop)
{
	for (int i = 0; i < n; i++) {
		w[i] = (struct writer){.port = port, .id = i, .stop = stop, .mode = mode};
		pthread_create(&t[i], NULL, writer_main, &w[i]);
	}
}

static void join_writers(struct writer *w, pthread_t *t, int n, long *ops, int *errors)
{
	*ops = 0;
	*errors = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		*ops += w[i].ops;
		*errors += w[i].errors;
	}
}

static long parse_kidx(const struct kv *k)
{
	if (k->klen < 2 || k->key[0] != 'k')
		return -1;
	return strtol(k->key + 1, NULL, 10);
}

/* The sweep test through the server: one j, never a later value
 * after an earlier one. */
static void test_sweep(void)
{
	struct srv s;
	redisContext *c;
	char dump[400], err[256];
	_Atomic int stop = 0;
	struct writer w;
	pthread_t t;
	long *val, ops;
	int errors, rounds = 0, split_rounds = 0, bad_rounds = 0;
	double end;

	make_dir(&s, "sweep");
	snprintf(dump, sizeof(dump), "%s/dump.rdb", s.dir);
	if (start(&s, NULL) < 0 || !(c = connect_port(s.port))) {
		CHECK(0, "server starts");
		return;
	}
	val = calloc((size_t)sweep_keys + 2, sizeof(long));
	start_writers(&w, &t, 1, s.port, 1, &stop);
	/* let the first sweep fill every key */
	for (int i = 0; i < 2400 && w.sweeps < 1; i++)
		usleep(25000);
	end = now_s() + load_seconds;
	while (rounds < 3 || (now_s() < end && rounds < 50)) {
		redisReply *r = cmd(c, "BGSAVE");
		struct dump d;
		long hi = 0, lo = 0, j = 0, missing = 0, bad = 0;

		freeReplyObject(r);
		if (wait_bgsave(c) < 0)
			break;
		rounds++;
		if (dump_load(dump, &d, err, sizeof(err)) != 0) {
			CHECK(0, "sweep dump loads: %s", err);
			break;
		}
		memset(val, 0, ((size_t)sweep_keys + 2) * sizeof(long));
		for (size_t i = 0; i < d.n; i++) {
			long k = parse_kidx(&d.kv[i]);

			if (k >= 1 && k <= sweep_keys)
				val[k] = strtol(d.kv[i].val, NULL, 10);
		}
		dump_free(&d);
		/* values must be n+1 for k1..kj and n for kj+1..kN */
		hi = val[1];
		lo = val[sweep_keys];
		for (long k = 1; k <= sweep_keys; k++) {
			if (!val[k])
				missing++;
			else if (k > 1 && val[k] > val[k - 1])
				bad++; /* a later value after an earlier one */
			else if (val[k] != hi && val[k] != lo)
				bad++;
			if (val[k] == hi)
				j = k;
		}
		if (missing || bad || hi - lo > 1) {
			bad_rounds++;
			printf(
			    "sweep round %d: missing %ld, out of order %ld, first %ld last %ld\n",
			    rounds, missing, bad, hi, lo);
		} else if (hi != lo) {
			split_rounds++;
			printf("sweep round %d: k1..k%ld at sweep %ld, k%ld..k%ld at sweep %ld\n",
			       rounds, j, hi, j + 1, sweep_keys, lo);
		}
	}
	atomic_store(&stop, 1);
	join_writers(&w, &t, 1, &ops, &errors);
	printf("sweep: %d BGSAVEs, %d cut a sweep, %ld SETs in %ld sweeps of %ld keys\n", rounds,
	       split_rounds, ops, w.sweeps, sweep_keys);
	CHECK(rounds >= 3, "sweep: BGSAVEs ran (%d)", rounds);
	CHECK(bad_rounds == 0, "sweep: every dump is point-in-time (%d of %d were not)", bad_rounds,
	      rounds);
	CHECK(errors == 0, "sweep: writer errors %d", errors);
	/* exercised: a dump taken between two sweeps would prove nothing */
	CHECK(split_rounds > 0, "sweep: at least one dump cut a sweep (%d)", split_rounds);
	free(val);
	redisFree(c);
	CHECK(shutdown_srv(&s, "NOSAVE") == 0, "exits 0");
}

/* MSET pairs appear wholly or not at all; 50 writers during saves. */
static void test_writers(void)
{
	struct srv s;
	redisContext *c;
	char dump[400], err[256];
	_Atomic int stop = 0;
	struct writer mw[4], pw[50];
	pthread_t mt[4], pt[50];
	long ops, pops;
	int errors, perrors, rounds = 0, torn = 0, pairs_seen = 0;
	double end;

	make_dir(&s, "writers");
	snprintf(dump, sizeof(dump), "%s/dump.rdb", s.dir);
	if (start(&s, NULL) < 0 || !(c = connect_port(s.port))) {
		CHECK(0, "server starts");
		return;
	}
	/* MSET pairs from 4 clients */
	start_writers(mw, mt, 4, s.port, 2, &stop);
	end = now_s() + load_seconds;
	while (rounds < 3 || (now_s() < end && rounds < 50)) {
		struct dump d;

		freeReplyObject(cmd(c, "BGSAVE"));
		if (wait_bgsave(c) < 0)
			break;
		rounds++;
		if (dump_load(dump, &d, err, sizeof(err)) != 0) {
			CHECK(0, "MSET dump loads: %s", err);
			break;
		}
		for (size_t i = 0; i < d.n; i++) {
			const struct kv *a = &d.kv[i], *b;
			char bkey[64];

			if (a->key[0] != 'a')
				continue;
			snprintf(bkey, sizeof(bkey), "b%s", a->key + 1);
			b = dump_find(&d, bkey, strlen(bkey));
			pairs_seen++;
			if (!b || b->vlen != a->vlen || memcmp(a->val, b->val, a->vlen))
				torn++;
		}
		dump_free(&d);
	}
	atomic_store(&stop, 1);
	join_writers(mw, mt, 4, &ops, &errors);
	printf("MSET pairs: %d BGSAVEs, %d pairs checked, %ld MSETs of 20 pairs\n", rounds,
	       pairs_seen, ops);
	CHECK(torn == 0, "MSET pairs whole in every dump (%d torn)", torn);
	CHECK(pairs_seen > 0, "MSET pairs: some pairs were in the dumps");
	CHECK(errors == 0, "MSET writers: %d errors", errors);

	/* 50 clients writing while SAVE and BGSAVE run */
	atomic_store(&stop, 0);
	start_writers(pw, pt, 50, s.port, 0, &stop);
	end = now_s() + load_seconds;
	rounds = 0;
	while (rounds < 2 || (now_s() < end && rounds < 20)) {
		struct dump d;

		CHECK(cmd_ok(c, rounds % 2 ? "SAVE" : "BGSAVE") || rounds % 2 == 0,
		      "SAVE under 50 writers");
		if (wait_bgsave(c) < 0)
			break;
		rounds++;
		CHECK(dump_load(dump, &d, err, sizeof(err)) == 0, "dump under 50 writers: %s", err);
		dump_free(&d);
	}
	atomic_store(&stop, 1);
	join_writers(pw, pt, 50, &pops, &perrors);
	printf("50 writers: %ld SETs, %d saves\n", pops, rounds);
	CHECK(perrors == 0, "50 writers: %d errors", perrors);
	CHECK(info_has(c, "rdb_last_bgsave_status:ok\r\n"), "status ok after the load");
	redisFree(c);
	CHECK(shutdown_srv(&s, "NOSAVE") == 0, "SHUTDOWN");
}

/* kill -9 during BGSAVE leaves a loadable dump (the old one or the new one,
 * whole). */
static void test_kill9(void)
{
	struct srv s;
	redisContext *c;
	char dump[400], err[256];
	struct dump d;
	int r;
	size_t n;

	make_dir(&s, "kill9");
	snprintf(dump, sizeof(dump), "%s/dump.rdb", s.dir);
	if (start(&s, NULL) < 0 || !(c = connect_port(s.port))) {
		CHECK(0, "server starts");
		return;
	}
	for (int i = 0; i < 1000; i++)
		freeReplyObject(cmd(c, "SET old:%d %0100d", i, i));
	CHECK(cmd_ok(c, "SAVE"), "SAVE the old dump");
	for (int b = 0; b < 40; b++) {
		for (int i = 0; i < 1000; i++)
			redisAppendCommand(c, "SET new:%d:%d %01000d", b, i, i);
		for (int i = 0; i < 1000; i++) {
			redisReply *x = NULL;

			redisGetReply(c, (void **)&x);
			freeReplyObject(x);
		}
	}
	freeReplyObject(cmd(c, "BGSAVE"));
	usleep(20 * 1000);
	redisFree(c);
	r = stop_sig(&s, SIGKILL);
	CHECK(r == 128 + SIGKILL, "killed (%d)", r);
	r = dump_load(dump, &d, err, sizeof(err));
	n = d.n;
	dump_free(&d);
	CHECK(r == 0 && (n == 1000 || n == 41000), "dump after kill -9 loads whole (%d, %zu keys)",
	      r, n);
	if (start(&s, NULL) < 0 || !(c = connect_port(s.port))) {
		CHECK(0, "server restarts after kill -9");
		return;
	}
	redisFree(c);
	CHECK(shutdown_srv(&s, "NOSAVE") == 0, "exits 0");
}

/* A failed save: reported in the log and INFO, old dump kept, MISCONF. */
static void disk_full_case(struct srv *s, const char *what, long fsize_limit)
{
	redisContext *c;
	char dump[400], temp[400], err[256];
	struct dump d;
	redisReply *r;
	int n;

	snprintf(dump, sizeof(dump), "%s/dump.rdb", s->dir);
	unlink(dump);
	if (start_bin(s, server_bin, 0, fsize_limit, NULL) < 0 || !(c = connect_port(s->port))) {
		CHECK(0, "%s: server starts", what);
		return;
	}
	for (int i = 0; i < 10; i++)
		freeReplyObject(cmd(c, "SET small:%d %d", i, i));
	CHECK(cmd_ok(c, "SAVE"), "%s: a small dump fits", what);
	for (int i = 0; i < 300; i++)
		freeReplyObject(cmd(c, "SET big:%d %08192d", i, i)); /* ~2.4 MB, random-free */
	CHECK(cmd_ok(c, "CONFIG SET rdbcompression no"), "no compression");
	CHECK(cmd_ok(c, "CONFIG SET save %s", "3600 1"), "save points on");
	r = cmd(c, "SAVE");
	CHECK(reply_is(r, REDIS_REPLY_ERROR, "ERR"), "%s: SAVE fails with -ERR", what);
	freeReplyObject(r);
	r = cmd(c, "BGSAVE");
	CHECK(reply_is(r, REDIS_REPLY_STATUS, "Background saving started"), "%s: BGSAVE", what);
	freeReplyObject(r);
	wait_bgsave(c);
	CHECK(info_has(c, "rdb_last_bgsave_status:err\r\n"), "%s: INFO status err", what);
	r = cmd(c, "SET x 1");
	CHECK(reply_is(r, REDIS_REPLY_ERROR,
		       "MISCONF Redis is configured to save RDB snapshots, but it's currently "
		       "unable to persist to disk. Commands that may modify the data set are "
		       "disabled, because this instance is configured to report errors during "
		       "writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). "
		       "Please check the Redis logs for details about the RDB error."),
	      "%s: MISCONF on a write: %s", what, r && r->str ? r->str : "?");
	freeReplyObject(r);
	r = cmd(c, "PING");
	CHECK(reply_is(r, REDIS_REPLY_ERROR, NULL) && !strncmp(r->str, "MISCONF", 7),
	      "%s: MISCONF on PING", what);
	freeReplyObject(r);
	r = cmd(c, "GET small:1");
	CHECK(reply_is(r, REDIS_REPLY_STRING, "1"), "%s: reads still served", what);
	freeReplyObject(r);
	/* A shutdown whose final save fails does not happen, as Redis: SHUTDOWN
	 * answers an error and what the client sent after it runs; SIGTERM is
	 * logged and changes nothing. */
	r = cmd(c, "SHUTDOWN");
	CHECK(reply_is(r, REDIS_REPLY_ERROR, "ERR Errors trying to SHUTDOWN. Check logs."),
	      "%s: SHUTDOWN with a failing save answers Redis's error: %s", what,
	      r && r->str ? r->str : "?");
	freeReplyObject(r);
	r = cmd(c, "GET small:2");
	CHECK(reply_is(r, REDIS_REPLY_STRING, "2"), "%s: served after the failed SHUTDOWN", what);
	freeReplyObject(r);
	kill(s->pid, SIGTERM);
	for (int i = 0; i < 400 && file_count(s->log, "Errors trying to shut down the server") < 2;
	     i++)
		usleep(25000);
	CHECK(file_count(s->log, "Error trying to save the DB, can't exit.") == 2 &&
		  file_count(s->log, "Errors trying to shut down the server. Check the logs for "
				     "more information.") == 2,
	      "%s: log: the save failed, the server stays (SHUTDOWN, then SIGTERM)", what);
	r = cmd(c, "GET small:3");
	CHECK(reply_is(r, REDIS_REPLY_STRING, "3") && kill(s->pid, 0) == 0,
	      "%s: served after SIGTERM with a failing save", what);
	freeReplyObject(r);
	/* The failed shutdown is over: a SIGINT now is a first one again (not
	 * "You insist..."), so it too only fails to save. */
	kill(s->pid, SIGINT);
	for (int i = 0; i < 400 && file_count(s->log, "Errors trying to shut down the server") < 3;
	     i++)
		usleep(25000);
	r = cmd(c, "GET small:4");
	CHECK(reply_is(r, REDIS_REPLY_STRING, "4") && kill(s->pid, 0) == 0 &&
		  file_count(s->log, "Errors trying to shut down the server") == 3 &&
		  !file_contains(s->log, "You insist"),
	      "%s: a SIGINT after the failed shutdowns is a first one: served", what);
	freeReplyObject(r);
	CHECK(cmd_ok(c, "CONFIG SET stop-writes-on-bgsave-error no"), "switch off");
	CHECK(cmd_ok(c, "SET x 1"), "%s: writes again with stop-writes-on-bgsave-error no", what);
	CHECK(cmd_ok(c, "CONFIG SET stop-writes-on-bgsave-error yes"), "switch on");
	CHECK(cmd_ok(c, "CONFIG SET save %s", ""), "save points off");
	CHECK(cmd_ok(c, "SET y 1"), "%s: no MISCONF without save points", what);
	n = dump_load(dump, &d, err, sizeof(err));
	CHECK(n == 0 && d.n == 10, "%s: the old dump is intact (%d, %zu keys)", what, n, d.n);
	dump_free(&d);
	snprintf(temp, sizeof(temp), "%s/temp-%d.rdb", s->dir, (int)s->pid);
	CHECK(!file_exists(temp), "%s: no temp file left", what);
	CHECK(file_contains(s->log, "Write error saving DB on disk") ||
		  file_contains(s->log, "Failed opening"),
	      "%s: log says why", what);
	CHECK(file_contains(s->log, "Background saving error"), "%s: log: Background saving error",
	      what);
	/* free the room: the next save succeeds and clears the error */
	for (int i = 0; i < 300; i++)
		freeReplyObject(cmd(c, "DEL big:%d", i));
	freeReplyObject(cmd(c, "BGSAVE"));
	wait_bgsave(c);
	CHECK(info_has(c, "rdb_last_bgsave_status:ok\r\n"), "%s: status ok again", what);
	/* Full again: SHUTDOWN SAVE FORCE exits anyway (status 0, as Redis) and
	 * leaves the last good dump. */
	for (int i = 0; i < 300; i++)
		freeReplyObject(cmd(c, "SET big:%d %08192d", i, i));
	freeReplyObject(cmd(c, "SHUTDOWN SAVE FORCE"));
	redisFree(c);
	n = wait_exit(s);
	CHECK(n == 0 && file_contains(s->log, "Error trying to save the DB. Exit anyway."),
	      "%s: SHUTDOWN SAVE FORCE with a failing save exits 0 (%d)", what, n);
	n = dump_load(dump, &d, err, sizeof(err));
	CHECK(n == 0 && d.n == 12, "%s: the last good dump is intact (%d, %zu keys)", what, n, d.n);
	dump_free(&d);
}

/*
 * A second SIGINT while the final save of a signal's shutdown runs: exit 1 at
 * once, "You insist... exiting now.", the temp file removed, the previous
 * dump intact (Redis 7.0's sigShutdownHandler).  The save is held in open(2)
 * by a FIFO in the temp file's place, so the second signal always finds it
 * running.  Checked against redis-server too when it is installed.
 */
static void insist_case(const char *bin, int redis)
{
	const char *const extra[] = {"--save", "3600 1", NULL};
	const char *name = redis ? "redis-server" : "rcukv";
	char dump[400], temp[400], err[256];
	struct dump d;
	redisContext *c;
	struct srv s;
	int rc;

	make_dir(&s, redis ? "insist-redis" : "insist");
	snprintf(dump, sizeof(dump), "%s/dump.rdb", s.dir);
	if (start_bin(&s, bin, redis, 0, extra) < 0 || !(c = connect_port(s.port))) {
		CHECK(0, "%s: server starts", name);
		return;
	}
	CHECK(cmd_ok(c, "SET old 1") && cmd_ok(c, "SAVE") && cmd_ok(c, "SET new 2"),
	      "%s: old dump saved, then a change", name);
	redisFree(c);
	snprintf(temp, sizeof(temp), "%s/temp-%d.rdb", s.dir, (int)s.pid);
	CHECK(mkfifo(temp, 0644) == 0, "%s: mkfifo %s: %s", name, temp, strerror(errno));
	kill(s.pid, SIGINT);
	for (int i = 0; i < 400 && !file_contains(s.log, "Saving the final RDB snapshot"); i++)
		usleep(25000);
	usleep(100 * 1000); /* into open(2) of the FIFO */
	CHECK(file_contains(s.log, "Saving the final RDB snapshot") &&
		  waitpid(s.pid, NULL, WNOHANG) == 0,
	      "%s: first SIGINT: the final save runs (held by the FIFO)", name);
	kill(s.pid, SIGINT);
	rc = wait_exit(&s);
	CHECK(rc == 1, "%s: second SIGINT: exit status %d, want 1", name, rc);
	CHECK(file_contains(s.log, ":signal-handler (") &&
		  file_contains(s.log, ") You insist... exiting now."),
	      "%s: log: You insist... exiting now.", name);
	CHECK(!file_exists(temp), "%s: the temp file is removed", name);
	unlink(temp);
	rc = dump_load(dump, &d, err, sizeof(err));
	CHECK(rc == 0 && d.n == 1 && dump_find(&d, "old", 3), "%s: the old dump is intact (%d, %zu)",
	      name, rc, d.n);
	dump_free(&d);
}

static void test_insist(void)
{
	insist_case(server_bin, 0);
	if (access("/usr/bin/redis-server", X_OK) == 0)
		insist_case("/usr/bin/redis-server", 1);
	else
		SKIP("second SIGINT on Redis: redis-server not installed");
}

static void test_disk_full(void)
{
	struct srv s;

	/* RLIMIT_FSIZE of 1 MiB: EFBIG */
	make_dir(&s, "fsize");
	disk_full_case(&s, "RLIMIT_FSIZE", 1024 * 1024);
	/* a 1 MiB tmpfs: ENOSPC */
	make_dir(&s, "tmpfs");
	if (mount("rcukv-test", s.dir, "tmpfs", 0, "size=1m") == 0) {
		disk_full_case(&s, "tmpfs", 0);
		if (umount(s.dir) != 0)
			printf("umount %s: %s\n", s.dir, strerror(errno));
	} else {
		SKIP("tmpfs disk full (mount: %s)", strerror(errno));
	}
}

/* ------------------------------------------------------- serving while loading */

/* Keys of the big dump: "lk:<i>" = "val:<i>:" + (i % 48) 'x', every 1000th
 * with an expiry an hour ahead; and one key already expired ("lk:gone"). */
#define LOAD_USED_MEM 123456789LL
static long load_keys = 500000;
static long long load_expire_base;

static size_t load_val(long i, char *buf, size_t len)
{
	int n = snprintf(buf, len, "val:%ld:", i);

	for (long k = 0; k < i % 48 && (size_t)n + 1 < len; k++)
		buf[n++] = 'x';
	buf[n] = '\0';
	return (size_t)n;
}

/* Write the big dump with server/rdb.c's writer (the server's own). */
static int load_dump_write(const char *path)
{
	struct rdb_opts o = {.compress = true, .checksum = true, .used_mem = LOAD_USED_MEM};
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct rdb_writer *w;
	char key[64], val[128];
	int r;

	if (fd < 0)
		return -errno;
	w = rdb_writer_new(fd, &o);
	r = w ? rdb_write_db_header(w, 0, (uint64_t)load_keys + 1, (uint64_t)load_keys / 1000 + 1)
	      : -ENOMEM;
	for (long i = 0; r == 0 && i < load_keys; i++) {
		int kl = snprintf(key, sizeof(key), "lk:%ld", i);
		size_t vl = load_val(i, val, sizeof(val));

		r = rdb_write_string_kv(w, key, (size_t)kl, val, vl,
					i % 1000 == 0 ? load_expire_base + i : -1);
	}
	if (r == 0)
		r = rdb_write_string_kv(w, "lk:gone", 7, "v", 1, 1000);
	if (r == 0)
		r = rdb_writer_finish(w);
	rdb_writer_free(w);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

/* FNV-1a of a whole file (0 if unreadable): "the dump is as it was". */
static unsigned long long file_hash(const char *path)
{
	unsigned long long h = 1469598103934665603ULL;
	unsigned char buf[65536];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 1099511628211ULL;
	close(fd);
	return h;
}

/* temp-*.rdb files in @dir */
static int count_temp_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, "temp-", 5) && strstr(e->d_name, ".rdb") != NULL;
	if (d)
		closedir(d);
	return n;
}

/* Spawn rcukv on @s->dir's dump and connect as soon as it listens (2 ms
 * polls, bounded); NULL if it exited (s->pid 0, s->status its exit status,
 * which wait_exit() then returns) or never listened. */
static redisContext *spawn_connect(struct srv *s, const char *const *extra)
{
	spawn_bin(s, server_bin, 0, 0, extra);
	for (int i = 0; i < 5000; i++) {
		struct timeval tv = {20, 0};
		redisContext *c = redisConnectWithTimeout("127.0.0.1", s->port, tv);
		int st;

		if (c && !c->err) {
			redisSetTimeout(c, tv);
			return c;
		}
		redisFree(c);
		if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
			reaped(s, st);
			return NULL;
		}
		usleep(2000);
	}
	return NULL;
}

/* 1 if @r is exactly Redis 7.0's -LOADING error */
static int is_loading_err(redisReply *r)
{
	return reply_is(r, REDIS_REPLY_ERROR, "LOADING Redis is loading the dataset in memory");
}

/* GET on a key of the dump: 1 while the server is loading (-LOADING), 0 once
 * it is served, -1 on anything else (reported). */
static int probe_loading(redisContext *c, const char *what)
{
	redisReply *r = cmd(c, "GET lk:1");
	int st = is_loading_err(r) ? 1 : reply_is(r, REDIS_REPLY_STRING, NULL) ? 0 : -1;

	CHECK(st >= 0, "%s: GET answers a value or -LOADING (%s)", what,
	      r ? (r->str ? r->str : "?") : c->errstr);
	freeReplyObject(r);
	return st;
}

/* Line numbers of @needle's first occurrence in @path (0 if absent). */
static int line_of(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, needle)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}

/* The "during" phase, on @c while the load runs. */
static void loading_during(redisContext *c, const char *unixsock, long long dump_size)
{
	static const char *const refused[] = {
	    "GET lk:1", "SET a b",  "PING",   "DBSIZE", "EXISTS lk:1", "SAVE",
	    "BGSAVE",	"FLUSHALL", "KEYS *", "SCAN 0", "TTL lk:0",    "MEMORY USAGE lk:1"};
	static const char *const allowed[] = {"ECHO hi",   "TIME",	    "CONFIG GET port",
					      "CLIENT ID", "COMMAND COUNT", "LASTSAVE",
					      "SELECT 0",  "ACL WHOAMI",    "CLIENT GETNAME"};
	redisContext *u;
	redisReply *r;
	const char *p;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		r = redisCommand(c, refused[i]);
		CHECK(is_loading_err(r), "during the load, %s -> -LOADING (%s)", refused[i],
		      r && r->str ? r->str : "?");
		freeReplyObject(r);
	}
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		r = redisCommand(c, allowed[i]);
		CHECK(r && r->type != REDIS_REPLY_ERROR, "during the load, %s is served (%s)",
		      allowed[i], r && r->str ? r->str : "");
		freeReplyObject(r);
	}
	/* The loader sets loading_rdb_used_mem when it reads the dump's used-mem
	 * field, just after loading:1 appears (so does Redis): on a busy machine
	 * INFO can come first.  Ask again for up to 2 s while it is still 0. */
	for (int tries = 0;; tries++) {
		r = cmd(c, "INFO persistence");
		if (!r || r->type != REDIS_REPLY_STRING || tries == 200 ||
		    !strstr(r->str, "\nloading:1\r\n") ||
		    !strstr(r->str, "\r\nloading_rdb_used_mem:0\r\n"))
			break;
		freeReplyObject(r);
		usleep(10000);
	}
	CHECK(r && r->type == REDIS_REPLY_STRING, "INFO during the load");
	if (r && r->type == REDIS_REPLY_STRING) {
		static const char *const order[] = {
		    "\r\nmodule_fork_last_cow_size:0\r\nloading_start_time:",
		    "\r\nloading_total_bytes:",
		    "\r\nloading_rdb_used_mem:",
		    "\r\nloading_loaded_bytes:",
		    "\r\nloading_loaded_perc:",
		    "\r\nloading_eta_seconds:"};
		const char *at = r->str;
		long long t, total, used, done;

		CHECK(strstr(r->str, "\nloading:1\r\nasync_loading:0\r\n") != NULL,
		      "INFO: loading:1, async_loading:0");
		for (size_t i = 0; i < 6; i++) {
			const char *q = strstr(at, order[i]);

			CHECK(q != NULL, "INFO: %s in Redis's place", order[i] + 2);
			if (q)
				at = q + 1;
		}
		p = strstr(r->str, "loading_start_time:");
		t = p ? strtoll(p + 19, NULL, 10) : 0;
		CHECK(t > 0 && t <= (long long)time(NULL), "loading_start_time %lld", t);
		p = strstr(r->str, "loading_total_bytes:");
		total = p ? strtoll(p + 20, NULL, 10) : -1;
		CHECK(total == dump_size, "loading_total_bytes %lld = the file's %lld", total,
		      dump_size);
		p = strstr(r->str, "loading_rdb_used_mem:");
		used = p ? strtoll(p + 21, NULL, 10) : -1;
		CHECK(used == LOAD_USED_MEM, "loading_rdb_used_mem %lld (the dump's used-mem)",
		      used);
		p = strstr(r->str, "loading_loaded_bytes:");
		done = p ? strtoll(p + 21, NULL, 10) : -1;
		CHECK(done >= 0 && done <= total, "loading_loaded_bytes %lld of %lld", done, total);
		p = strstr(r->str, "loading_loaded_perc:");
		CHECK(p && strtod(p + 20, NULL) >= 0 && strtod(p + 20, NULL) <= 100,
		      "loading_loaded_perc");
		p = strstr(r->str, "loading_eta_seconds:");
		CHECK(p && strtoll(p + 20, NULL, 10) >= 0, "loading_eta_seconds");
	}
	freeReplyObject(r);
	/* the unix socket listens during the load too */
	u = redisConnectUnix(unixsock);
	CHECK(u && !u->err, "unix socket accepts during the load");
	if (u && !u->err) {
		r = redisCommand(u, "GET lk:1");
		CHECK(is_loading_err(r) || reply_is(r, REDIS_REPLY_STRING, NULL),
		      "unix socket: -LOADING (or the value if the load just ended)");
		freeReplyObject(r);
	}
	redisFree(u);
}

/* After the load: every key with its value and expiry, INFO and the log. */
static void loading_after(redisContext *c, const struct srv *s)
{
	long bad = 0, first_bad = -1;
	redisReply *r;
	char key[64], val[128];

	r = cmd(c, "DBSIZE");
	CHECK(r && r->type == REDIS_REPLY_INTEGER && r->integer == load_keys,
	      "after the load: DBSIZE %lld = %ld", r ? r->integer : -1, load_keys);
	freeReplyObject(r);
	for (long i = 0; i < load_keys; i += 500) {
		long n = load_keys - i < 500 ? load_keys - i : 500;
		const char *argv[501];
		size_t argl[501];
		char *keys = malloc((size_t)n * 32);

		argv[0] = "MGET";
		argl[0] = 4;
		for (long k = 0; k < n; k++) {
			argv[k + 1] = keys + k * 32;
			argl[k + 1] = (size_t)snprintf(keys + k * 32, 32, "lk:%ld", i + k);
		}
		r = redisCommandArgv(c, (int)n + 1, argv, argl);
		for (long k = 0; k < n; k++) {
			size_t vl = load_val(i + k, val, sizeof(val));
			int ok = r && r->type == REDIS_REPLY_ARRAY && (long)r->elements == n &&
				 r->element[k]->type == REDIS_REPLY_STRING &&
				 r->element[k]->len == vl && !memcmp(r->element[k]->str, val, vl);

			if (!ok && bad++ == 0)
				first_bad = i + k;
		}
		freeReplyObject(r);
		free(keys);
	}
	CHECK(bad == 0, "every key has its value (%ld wrong, first lk:%ld)", bad, first_bad);
	snprintf(key, sizeof(key), "lk:%ld", load_keys / 1000 * 1000 - 1000);
	r = cmd(c, "PEXPIRETIME %s", key);
	CHECK(r && r->type == REDIS_REPLY_INTEGER &&
		  r->integer == load_expire_base + load_keys / 1000 * 1000 - 1000,
	      "%s keeps its expiry", key);
	freeReplyObject(r);
	r = cmd(c, "EXISTS lk:gone");
	CHECK(r && r->type == REDIS_REPLY_INTEGER && r->integer == 0, "expired key not loaded");
	freeReplyObject(r);
	CHECK(cmd_ok(c, "SET after load"), "writes served after the load");
	CHECK(info_field(c, "rdb_last_load_keys_loaded") == load_keys &&
		  info_field(c, "rdb_last_load_keys_expired") == 1,
	      "INFO rdb_last_load_keys_loaded/expired");
	CHECK(!info_has(c, "loading_start_time"), "no loading_* fields once loaded");
	snprintf(val, sizeof(val), "Done loading RDB, keys loaded: %ld, keys expired: 1.",
		 load_keys);
	CHECK(file_contains(s->log, val), "log: %s", val);
	CHECK(line_of(s->log, "Server initialized") > 0 &&
		  line_of(s->log, "Server initialized") < line_of(s->log, "Loading RDB produced") &&
		  line_of(s->log, "DB loaded from disk") <
		      line_of(s->log, "Ready to accept connections tcp"),
	      "log: initialized, loading, loaded, then ready (as Redis)");
}

static void test_loading(void)
{
	struct srv s;
	redisContext *c;
	char dump[400], sock[400], stale[400];
	const char *save_pts[] = {"--save", "1 1", NULL};
	unsigned long long h;
	struct stat sb;
	int st, r;

	if (getenv("TEST_LOADING_KEYS"))
		load_keys = atol(getenv("TEST_LOADING_KEYS"));
	if (load_keys < 2000)
		load_keys = 2000;
	load_expire_base = now_ms() + 3600 * 1000LL;
	make_dir(&s, "loading");
	snprintf(dump, sizeof(dump), "%s/dump.rdb", s.dir);
	snprintf(sock, sizeof(sock), "%s/rcukv.sock", s.dir);
	r = load_dump_write(dump);
	CHECK(r == 0, "write a dump of %ld keys (%s)", load_keys, strerror(-r));
	if (r != 0 || stat(dump, &sb) != 0)
		return;
	h = file_hash(dump);

	/* 1. served while loading, then every key */
	c = spawn_connect(&s, (const char *const[]){"--unixsocket", sock, NULL});
	CHECK(c != NULL, "connects while the dump loads");
	if (!c)
		return;
	st = probe_loading(c, "first probe");
	if (st == 1)
		loading_during(c, sock, (long long)sb.st_size);
	else
		SKIP("during-load checks: the load of %ld keys ended before the first "
		     "probe (set TEST_LOADING_KEYS higher)",
		     load_keys);
	CHECK(wait_info_zero(c, "loading") == 0, "the load ends");
	loading_after(c, &s);
	redisFree(c);
	CHECK(shutdown_srv(&s, "NOSAVE") == 0, "exits 0");
	CHECK(file_hash(dump) == h, "dump untouched");

	/* 2. SIGTERM, 3. SHUTDOWN SAVE, during the load, with save points set:
	 * exit 0 and no save of the half-loaded set (Redis 7.0 does the same) */
	for (int how = 0; how < 2; how++) {
		const char *what = how ? "SHUTDOWN SAVE" : "SIGTERM";

		unlink(s.log);
		c = spawn_connect(&s, save_pts);
		st = c ? probe_loading(c, what) : -2;
		if (st != 1) {
			/* -1: probe_loading() failed it already */
			if (st != -1)
				SKIP("%s during the load: %s", what,
				     c ? "the load ended before the probe" : "no connection");
			redisFree(c);
			if (s.pid)
				CHECK(shutdown_srv(&s, "NOSAVE") == 0, "exits 0");
			continue;
		}
		if (how) {
			redisReply *x = cmd(c, "SHUTDOWN SAVE");

			freeReplyObject(x);
			r = wait_exit(&s);
		} else {
			r = stop_sig(&s, SIGTERM);
		}
		redisFree(c);
		if (file_contains(s.log, "DB loaded from disk")) {
			SKIP("%s during the load: the load ended first", what);
			continue;
		}
		CHECK(r == 0, "%s during the load: exit status %d (0 as Redis)", what, r);
		CHECK(!file_contains(s.log, "Saving the final RDB snapshot"),
		      "%s during the load: no save", what);
		CHECK(file_hash(dump) == h, "%s during the load: dump as it was", what);
		CHECK(how || file_contains(s.log, "Received shutdown signal during loading, "
						  "scheduling shutdown."),
		      "SIGTERM during the load: Redis's log line");
		CHECK(count_temp_files(s.dir) == 0, "%s during the load: no temp file", what);
		CHECK(!file_exists(sock), "%s: unix socket removed", what);
	}

	/* 4. a dump that turns out bad at its end: listeners first, then exit 1
	 * with the log line, listeners and socket closed, never "Ready" */
	if (truncate(dump, sb.st_size - 9) == 0) {
		unlink(s.log);
		c = spawn_connect(&s, (const char *const[]){"--unixsocket", sock, NULL});
		/* the probe's reply is the check: -LOADING (1) passes, a value (0)
		 * means a bad dump was served, -1 probe_loading() failed already;
		 * no connection (it exited before we got in) cannot be checked */
		st = c ? probe_loading(c, "bad dump") : -2;
		if (st == -2)
			SKIP("bad dump: not probed during its load (exited with %d first)",
			     s.status);
		else if (st >= 0)
			CHECK(st == 1, "bad dump: served -LOADING until the error, not a key");
		redisFree(c);
		/* wait_exit() returns the status spawn_connect() kept if it reaped
		 * the server first, so an early exit is checked as well */
		r = wait_exit(&s);
		CHECK(r == 1, "bad dump: exit status %d, want 1", r);
		CHECK(file_contains(s.log, "Fatal error loading the DB"), "bad dump: log line");
		CHECK(!file_contains(s.log, "Ready to accept"), "bad dump: never ready");
		CHECK(!file_exists(sock), "bad dump: unix socket removed");
		c = connect_port(s.port);
		CHECK(c == NULL, "bad dump: port closed");
		redisFree(c);
	} else {
		CHECK(0, "truncate");
	}

	/* 5. a stale temp-<pid>.rdb (a BGSAVE cut by kill -9) is never loaded,
	 * and, as Redis 7.0 does, left where it is */
	snprintf(stale, sizeof(stale), "%s/temp-999999.rdb", s.dir);
	r = rename(dump, stale);
	unlink(s.log);
	if (r == 0 && start(&s, NULL) == 0 && (c = connect_port(s.port))) {
		redisReply *x = cmd(c, "DBSIZE");

		CHECK(x && x->type == REDIS_REPLY_INTEGER && x->integer == 0,
		      "stale temp file not loaded");
		freeReplyObject(x);
		redisFree(c);
		CHECK(shutdown_srv(&s, "NOSAVE") == 0, "exits 0");
		CHECK(file_exists(stale), "stale temp file left as Redis leaves it");
	} else {
		CHECK(0, "server starts next to a stale temp file");
	}
}

static void rm_rf(const char *path)
{
	char cmdline[600];

	snprintf(cmdline, sizeof(cmdline), "rm -rf '%s'", path);
	if (system(cmdline) != 0)
		printf("could not remove %s\n", path);
}

int main(int argc, char **argv)
{
	static char bin[512];
	const char *b = getenv("B") ? getenv("B") : "build/release";
	const char *only = argc > 1 ? argv[1] : NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (getenv("TEST_PERSIST_SECONDS"))
		load_seconds = atof(getenv("TEST_PERSIST_SECONDS"));
	if (getenv("TEST_PERSIST_KEYS"))
		sweep_keys = atol(getenv("TEST_PERSIST_KEYS"));
	if (sweep_keys < 10)
		sweep_keys = 10;
	snprintf(bin, sizeof(bin), "%s/rcukv-server", b);
	server_bin = bin;
	if (access(server_bin, X_OK) != 0) {
		CHECK(false, "%s not built", server_bin);
		return check_summary();
	}
	snprintf(base_dir, sizeof(base_dir), "/tmp/rcukv-test-persist.%d", (int)getpid());
	mkdir(base_dir, 0755);
	ref_build();
#define RUN(f)                                                                                     \
	do {                                                                                       \
		if (!only || strstr(#f, only)) {                                                   \
			printf("-- %s\n", #f);                                                     \
			f();                                                                       \
		}                                                                                  \
	} while (0)
	RUN(test_commands_and_config);
	RUN(test_round_trip);
	RUN(test_through_redis);
	RUN(test_bad_files);
	RUN(test_sweep);
	RUN(test_writers);
	RUN(test_kill9);
	RUN(test_disk_full);
	RUN(test_insist);
	RUN(test_loading);
	rm_rf(base_dir);
	for (int i = 0; i < REF_N; i++) {
		free(ref[i].key);
		free(ref[i].val);
	}
	return check_summary();
}
