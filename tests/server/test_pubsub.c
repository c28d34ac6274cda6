/*
 * tests/server/test_pubsub.c - pub/sub across clients and workers (issue 16
 * item 3), with hiredis.  Starts $B/rcukv-server with --threads 2 on a free
 * loopback port (7780-7799), or tests the server at --port P (a
 * redis-server 7.0 passes too, which proves the expectations):
 *   1. fan-out: subscribers on both workers all receive; PUBLISH counts them
 *   2. order: 2000 pipelined messages from each of two publishers (on
 *      different workers) arrive at every subscriber in each one's order
 *   3. counts: one client on a channel and two matching patterns counts 3
 *   4. patterns: Redis's glob (stringmatchlen) over a table of cases
 *   5. UNSUBSCRIBE with no channel: one reply per channel, counts down to 0,
 *      then normal commands run again (RESP2)
 *   6. RESP3: the exact bytes of a message push, and a command between
 *   7. a subscriber that never reads is closed by client-output-buffer-limit
 *      pubsub (hard, then soft for its seconds) while another keeps receiving
 *      everything, and the publisher never waits
 *   8. CLIENT LIST/KILL TYPE pubsub, flags=P and the sub/psub/ssub counts
 *   9. churn: subscribe/unsubscribe/close on one thread while another
 *      publishes (run under TSan: make tsan)
 * Ends with "N passed, M failed".  Single-connection replies are
 * cases_pubsub.txt's (test_pubsub.sh).
 */
#include "tests/check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int port;
static pid_t server_pid;

/* ---------------------------------------------------------------- server */

static int port_in_use(int p)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)p)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), r;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return r;
}

static redisContext *conn(void)
{
	struct timeval tv = {10, 0};
	redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);

	if (!c || c->err) {
		fprintf(stderr, "connect to %d: %s\n", port, c ? c->errstr : "no memory");
		exit(2);
	}
	redisSetTimeout(c, tv);
	return c;
}

static void start_server(void)
{
	const char *b = getenv("B") ? getenv("B") : "build/release";
	char bin[256], ps[16];

	for (port = 7780; port < 7800 && port_in_use(port); port++)
		;
	snprintf(bin, sizeof(bin), "%s/rcukv-server", b);
	snprintf(ps, sizeof(ps), "%d", port);
	server_pid = fork();
	if (server_pid == 0) {
		execl(bin, bin, "--port", ps, "--threads", "2", "--save", "", "--bind", "127.0.0.1",
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200 && !port_in_use(port); i++)
		usleep(20000);
	printf("started %s on port %d (pid %d)\n", bin, port, (int)server_pid);
}

static void stop_server(void)
{
	int st;

	if (!server_pid)
		return;
	kill(server_pid, SIGTERM);
	waitpid(server_pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "server exits 0 on SIGTERM (status %d)", st);
}

/* ---------------------------------------------------------------- helpers */

static long long cmd_int(redisContext *c, const char *fmt, ...)
{
	va_list ap;
	redisReply *r;
	long long v = -1;

	va_start(ap, fmt);
	r = redisvCommand(c, fmt, ap);
	va_end(ap);
	if (r && r->type == REDIS_REPLY_INTEGER)
		v = r->integer;
	freeReplyObject(r);
	return v;
}

static void cmd_void(redisContext *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	freeReplyObject(redisvCommand(c, fmt, ap));
	va_end(ap);
}

/* The next reply is [e0, e1, ...] with these strings (NULL: any); integer
 * elements compare as their decimal text. */
static int reply_is(redisContext *c, int n, ...)
{
	redisReply *r = NULL;
	va_list ap;
	int ok;

	if (redisGetReply(c, (void **)&r) != REDIS_OK || !r)
		return 0;
	ok = r->type == REDIS_REPLY_ARRAY && (int)r->elements == n;
	va_start(ap, n);
	for (int i = 0; ok && i < n; i++) {
		const char *want = va_arg(ap, const char *);
		redisReply *e = r->element[i];
		char num[32];
		const char *got = e->str;

		if (e->type == REDIS_REPLY_INTEGER) {
			snprintf(num, sizeof(num), "%lld", e->integer);
			got = num;
		}
		ok = !want || (got && !strcmp(got, want));
	}
	va_end(ap);
	freeReplyObject(r);
	return ok;
}

/* SUBSCRIBE (or PSUBSCRIBE) @name, consuming the confirmation. */
static redisContext *subscriber(const char *cmd, const char *name)
{
	redisContext *c = conn();

	redisAppendCommand(c, "%s %s", cmd, name);
	if (!reply_is(c, 3, NULL, name, NULL))
		CHECK(0, "%s %s: confirmation", cmd, name);
	return c;
}

/* ------------------------------------------------------------------ tests */

static void test_fanout(void)
{
	redisContext *s[4], *p = conn();
	int got = 0;

	for (int i = 0; i < 4; i++)
		s[i] = subscriber("SUBSCRIBE", "fan");
	CHECK(cmd_int(p, "PUBLISH fan hello") == 4, "PUBLISH counts 4 subscribers");
	for (int i = 0; i < 4; i++)
		got += reply_is(s[i], 3, "message", "fan", "hello");
	CHECK(got == 4, "every subscriber (both workers) got the message: %d of 4", got);
	redisFree(s[3]);
	for (int i = 0; i < 50 && cmd_int(p, "PUBLISH fan again") != 3; i++)
		usleep(10000);
	CHECK(cmd_int(p, "PUBLISH fan last") == 3, "a closed subscriber is no longer counted");
	for (int i = 0; i < 3; i++)
		redisFree(s[i]);
	redisFree(p);
}

#define ORDER_N 2000

static void test_order(void)
{
	redisContext *s[3], *p[2] = {conn(), conn()};
	int bad = 0, total = 0;

	for (int i = 0; i < 3; i++)
		s[i] = subscriber("SUBSCRIBE", "ord");
	for (int i = 0; i < ORDER_N; i++)
		for (int k = 0; k < 2; k++)
			redisAppendCommand(p[k], "PUBLISH ord %d:%d", k, i);
	for (int k = 0; k < 2; k++) {
		int done = 0;

		while (!done)
			if (redisBufferWrite(p[k], &done) != REDIS_OK)
				break;
	}
	for (int i = 0; i < 3; i++) {
		int next[2] = {0, 0};

		for (int m = 0; m < 2 * ORDER_N; m++) {
			redisReply *r = NULL;
			int k, v;

			if (redisGetReply(s[i], (void **)&r) != REDIS_OK || !r) {
				bad++;
				break;
			}
			if (r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
			    sscanf(r->element[2]->str, "%d:%d", &k, &v) == 2 && k >= 0 && k < 2 &&
			    v == next[k]) {
				next[k]++;
				total++;
			} else {
				bad++;
			}
			freeReplyObject(r);
		}
	}
	for (int k = 0; k < 2; k++) {
		int counted = 0;

		for (int i = 0; i < ORDER_N; i++) {
			redisReply *r = NULL;

			if (redisGetReply(p[k], (void **)&r) == REDIS_OK && r &&
			    r->type == REDIS_REPLY_INTEGER && r->integer == 3)
				counted++;
			freeReplyObject(r);
		}
		CHECK(counted == ORDER_N, "publisher %d: every PUBLISH counted 3 (%d of %d)", k,
		      counted, ORDER_N);
	}
	CHECK(bad == 0 && total == 3 * 2 * ORDER_N,
	      "order per publisher kept at 3 subscribers: %d in order, %d out of order", total,
	      bad);
	for (int i = 0; i < 3; i++)
		redisFree(s[i]);
	redisFree(p[0]);
	redisFree(p[1]);
}

static void test_counts(void)
{
	redisContext *s = conn(), *p = conn();

	redisAppendCommand(s, "SUBSCRIBE news.1");
	redisAppendCommand(s, "PSUBSCRIBE news.* n*");
	CHECK(reply_is(s, 3, "subscribe", "news.1", "1") && reply_is(s, 3, "psubscribe", "news.*", "2") &&
		  reply_is(s, 3, "psubscribe", "n*", "3"),
	      "channel and patterns share the count");
	CHECK(cmd_int(p, "PUBLISH news.1 x") == 3, "one client, channel + 2 patterns: PUBLISH 3");
	CHECK(reply_is(s, 3, "message", "news.1", "x"), "the channel's message comes first");
	CHECK(reply_is(s, 4, "pmessage", NULL, "news.1", "x") &&
		  reply_is(s, 4, "pmessage", NULL, "news.1", "x"),
	      "then one pmessage per matching pattern");
	CHECK(cmd_int(p, "PUBLISH nope x") == 1, "one pattern matches 'nope'");
	CHECK(reply_is(s, 4, "pmessage", "n*", "nope", "x"), "pmessage names the pattern");
	CHECK(cmd_int(p, "PUBSUB NUMPAT") == 2, "PUBSUB NUMPAT 2");
	redisAppendCommand(s, "SSUBSCRIBE news.1");
	CHECK(reply_is(s, 3, "ssubscribe", "news.1", "1"), "shard channels count apart");
	CHECK(cmd_int(p, "SPUBLISH news.1 y") == 1, "SPUBLISH: shard subscribers only, no patterns");
	CHECK(reply_is(s, 3, "smessage", "news.1", "y"), "smessage");
	redisFree(s);
	redisFree(p);
}

static void test_patterns(void)
{
	static const struct {
		const char *pat, *ch;
		int match;
	} t[] = {
	    {"h?llo", "hello", 1},	{"h?llo", "hllo", 0},	    {"h*llo", "hllo", 1},
	    {"h*llo", "heeeello", 1},	{"h[ae]llo", "hallo", 1},   {"h[ae]llo", "hillo", 0},
	    {"h[^e]llo", "hallo", 1},	{"h[^e]llo", "hello", 0},   {"h[a-b]llo", "hbllo", 1},
	    {"h[b-a]llo", "hallo", 1},	{"\\*x", "*x", 1},	    {"\\*x", "ax", 0},
	    {"*", "", 0},		{"a*b*c", "abxbc", 1},	    {"a*b*c", "acb", 0},
	    {"[abc", "a", 1},		{"H?LLO", "hello", 0},	    {"x\\", "x\\", 1},
	};
	int n = (int)(sizeof(t) / sizeof(t[0])), bad = 0;
	redisContext *p = conn();

	for (int i = 0; i < n; i++) {
		redisContext *s = subscriber("PSUBSCRIBE", t[i].pat);
		long long got = cmd_int(p, "PUBLISH %s m", t[i].ch);

		if (got != t[i].match) {
			printf("  pattern '%s' channel '%s': PUBLISH %lld, want %d\n", t[i].pat,
			       t[i].ch, got, t[i].match);
			bad++;
		}
		redisFree(s);
		for (int j = 0; j < 100 && cmd_int(p, "PUBSUB NUMPAT") != 0; j++)
			usleep(5000);
	}
	CHECK(bad == 0, "glob patterns as Redis's stringmatchlen: %d of %d differ", bad, n);
	redisFree(p);
}

static void test_unsubscribe_all(void)
{
	redisContext *s = conn();
	int seen[3] = {0, 0, 0}, ok = 1;
	redisReply *r;

	redisAppendCommand(s, "SUBSCRIBE u0 u1 u2");
	for (int i = 0; i < 3; i++)
		ok &= reply_is(s, 3, "subscribe", NULL, NULL);
	redisAppendCommand(s, "UNSUBSCRIBE");
	for (int i = 0; i < 3; i++) {
		if (redisGetReply(s, (void **)&r) != REDIS_OK || !r)
			break;
		ok &= r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
		      !strcmp(r->element[0]->str, "unsubscribe") &&
		      r->element[1]->type == REDIS_REPLY_STRING && r->element[1]->len == 2 &&
		      r->element[1]->str[0] == 'u' && r->element[2]->integer == 2 - i;
		if (ok)
			seen[r->element[1]->str[1] - '0' < 3 ? r->element[1]->str[1] - '0' : 0]++;
		freeReplyObject(r);
	}
	CHECK(ok && seen[0] == 1 && seen[1] == 1 && seen[2] == 1,
	      "UNSUBSCRIBE: one reply per channel, counts 2 1 0");
	r = redisCommand(s, "UNSUBSCRIBE");
	CHECK(r && r->type == REDIS_REPLY_ARRAY && r->elements == 3 &&
		  r->element[1]->type == REDIS_REPLY_NIL && r->element[2]->integer == 0,
	      "again: [unsubscribe, nil, 0]");
	freeReplyObject(r);
	r = redisCommand(s, "SET k v");
	CHECK(r && r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "OK"),
	      "out of subscribed mode: SET runs");
	freeReplyObject(r);
	redisFree(s);
}

/* Read until @want has arrived whole (or 5 s). */
static int read_exact(int fd, const char *want)
{
	char buf[4096];
	size_t n = 0, len = strlen(want);

	while (n < len) {
		struct pollfd pfd = {fd, POLLIN, 0};
		ssize_t r;

		if (poll(&pfd, 1, 5000) <= 0)
			break;
		r = recv(fd, buf + n, len - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	if (n != len || memcmp(buf, want, len)) {
		printf("  got %zu bytes: %.*s\n", n, (int)n, buf);
		return 0;
	}
	return 1;
}

static void test_resp3(void)
{
	redisContext *s = conn(), *p = conn();
	const char *hello = "*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n";
	const char *sub = "*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nr3\r\n";
	const char *get = "*2\r\n$3\r\nGET\r\n$6\r\nnokey3\r\n";
	char buf[1024];
	struct pollfd pfd = {s->fd, POLLIN, 0};

	send(s->fd, hello, strlen(hello), 0);
	poll(&pfd, 1, 5000);
	usleep(50000);
	(void)!recv(s->fd, buf, sizeof(buf), 0); /* the HELLO map */
	send(s->fd, sub, strlen(sub), 0);
	CHECK(read_exact(s->fd, ">3\r\n$9\r\nsubscribe\r\n$2\r\nr3\r\n:1\r\n"),
	      "RESP3 subscribe confirmation is a push");
	CHECK(cmd_int(p, "PUBLISH r3 %s", "pushed") == 1, "PUBLISH to a RESP3 subscriber: 1");
	CHECK(read_exact(s->fd, ">3\r\n$7\r\nmessage\r\n$2\r\nr3\r\n$6\r\npushed\r\n"),
	      "RESP3 message push bytes");
	send(s->fd, get, strlen(get), 0);
	CHECK(read_exact(s->fd, "_\r\n"), "RESP3: GET runs while subscribed");
	redisFree(s);
	redisFree(p);
}

/* A subscriber that never reads: publish @mb 1 MB messages (pipelined, in
 * batches) while a fast subscriber reads.  Return the messages the fast one
 * got; *@slow_closed: the slow one's socket was closed by the server. */
static int flood(const char *limit, int mb, int wait_s, int *slow_closed, double *pub_s)
{
	redisContext *slow = subscriber("SUBSCRIBE", "flood"), *fast = subscriber("SUBSCRIBE", "flood");
	redisContext *p = conn();
	size_t sz = 1024 * 1024;
	char *payload = malloc(sz);
	int got = 0;
	struct timespec t0, t1;
	cmd_void(p, "CONFIG SET client-output-buffer-limit %s", limit);
	memset(payload, 'x', sz);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < mb; i++) {
		redisReply *r;

		r = redisCommand(p, "PUBLISH flood %b", payload, sz);
		freeReplyObject(r);
		if (reply_is(fast, 3, "message", "flood", NULL))
			got++;
		if (i == mb / 2 && wait_s)
			sleep((unsigned)wait_s); /* over the soft limit for its seconds */
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*pub_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	/* the slow one: drain what reached its socket; the server closed it */
	*slow_closed = 0;
	for (;;) {
		char buf[65536];
		struct pollfd pfd = {slow->fd, POLLIN, 0};
		ssize_t r;

		if (poll(&pfd, 1, 3000) <= 0)
			break;
		r = recv(slow->fd, buf, sizeof(buf), 0);
		if (r <= 0) {
			*slow_closed = r == 0 || errno == ECONNRESET;
			break;
		}
	}
	cmd_void(p, "CONFIG SET client-output-buffer-limit %s", "pubsub 32mb 8mb 60");
	free(payload);
	redisFree(slow);
	redisFree(fast);
	redisFree(p);
	return got;
}

static void test_slow_subscriber(void)
{
	int closed, got;
	double secs;

	got = flood("pubsub 32mb 8mb 60", 96, 0, &closed, &secs);
	CHECK(closed, "Redis's default pubsub 32mb hard limit closes a subscriber that never reads");
	CHECK(got == 96, "the other subscriber got all 96 x 1 MB messages (%d)", got);
	printf("  96 MB published in %.2f s past a stuck subscriber\n", secs);
	got = flood("pubsub 0 2mb 1", 40, 2, &closed, &secs);
	CHECK(closed, "over the soft limit (2mb) for its 1 s: closed");
	CHECK(got == 40, "the other subscriber got all 40 (%d)", got);
}

static void test_client_type(void)
{
	redisContext *s = conn(), *p = conn();
	redisReply *r;

	redisAppendCommand(s, "SUBSCRIBE ct.a ct.b");
	redisAppendCommand(s, "PSUBSCRIBE ct.*");
	redisAppendCommand(s, "CLIENT SETNAME ctsub"); /* refused: subscribed */
	for (int i = 0; i < 4; i++) {
		if (redisGetReply(s, (void **)&r) == REDIS_OK)
			freeReplyObject(r);
	}
	r = redisCommand(p, "CLIENT LIST TYPE pubsub");
	CHECK(r && r->type == REDIS_REPLY_STRING && strstr(r->str, "flags=P ") &&
		  strstr(r->str, " sub=2 psub=1 ssub=0 ") && !strchr(r->str, '\n')[1],
	      "CLIENT LIST TYPE pubsub: the one subscriber, flags=P sub=2 psub=1 ssub=0");
	freeReplyObject(r);
	r = redisCommand(p, "CLIENT LIST TYPE normal");
	CHECK(r && r->type == REDIS_REPLY_STRING && !strstr(r->str, "flags=P"),
	      "CLIENT LIST TYPE normal leaves it out");
	freeReplyObject(r);
	/* (other tests' closed clients may still be on their way out) */
	CHECK(cmd_int(p, "CLIENT KILL TYPE normal SKIPME yes") >= 0, "CLIENT KILL TYPE normal");
	CHECK(cmd_int(p, "CLIENT KILL TYPE pubsub") == 1,
	      "CLIENT KILL TYPE normal spared the subscriber, TYPE pubsub kills it");
	for (int i = 0; i < 100 && cmd_int(p, "PUBSUB NUMPAT") != 0; i++)
		usleep(10000);
	CHECK(cmd_int(p, "PUBLISH ct.a x") == 0, "its subscriptions went with it");
	redisFree(s);
	redisFree(p);
}

/* ------------------------------------------------------------------ churn */

static atomic_int churn_stop;

static void *publisher(void *arg)
{
	redisContext *p = conn();
	long long *sent = arg;

	while (!atomic_load(&churn_stop)) {
		cmd_void(p, "PUBLISH churn.%d m", (int)(*sent % 4));
		cmd_void(p, "PUBSUB NUMSUB churn.0 churn.1");
		(*sent)++;
	}
	redisFree(p);
	return NULL;
}

static void test_churn(void)
{
	pthread_t th;
	long long sent = 0;
	redisContext *p = conn();

	pthread_create(&th, NULL, publisher, &sent);
	for (int round = 0; round < 200; round++) {
		redisContext *s = conn();

		redisAppendCommand(s, "SUBSCRIBE churn.0 churn.1 churn.2");
		redisAppendCommand(s, "PSUBSCRIBE churn.* c*");
		redisAppendCommand(s, round % 2 ? "UNSUBSCRIBE churn.1" : "PUNSUBSCRIBE");
		redisAppendCommand(s, "PING");
		for (int i = 0; i < 4; i++) {
			redisReply *r = NULL;

			if (redisGetReply(s, (void **)&r) != REDIS_OK)
				break;
			freeReplyObject(r);
		}
		redisFree(s); /* closed while subscribed, messages in flight */
	}
	atomic_store(&churn_stop, 1);
	pthread_join(th, NULL);
	for (int i = 0; i < 100 && cmd_int(p, "PUBSUB NUMPAT") != 0; i++)
		usleep(10000);
	CHECK(cmd_int(p, "PUBSUB NUMPAT") == 0, "churn: every pattern gone with its clients");
	CHECK(cmd_int(p, "PUBLISH churn.0 m") == 0, "churn: nobody left on churn.0");
	CHECK(sent > 0, "churn: %lld publishes meanwhile", sent);
	redisFree(p);
}

int main(int argc, char **argv)
{
	redisContext *c;
	redisReply *r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	if (argc == 3 && !strcmp(argv[1], "--port"))
		port = atoi(argv[2]);
	else
		start_server();
	c = conn();
	r = redisCommand(c, "PING");
	CHECK(r && r->type == REDIS_REPLY_STATUS, "server answers PING on %d", port);
	freeReplyObject(r);
	redisFree(c);
	test_fanout();
	test_order();
	test_counts();
	test_patterns();
	test_unsubscribe_all();
	test_resp3();
	test_slow_subscriber();
	test_client_type();
	test_churn();
	c = conn();
	CHECK(cmd_int(c, "DBSIZE") >= 0, "server alive at the end");
	redisFree(c);
	stop_server();
	return check_summary();
}
