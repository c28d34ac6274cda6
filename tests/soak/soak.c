/*
 * soak.c - soak and fault test for a Redis-protocol server (issue 9, point 6).
 *
 * Holds many connections on one libevent loop for a fixed time and mixes:
 *   writers   pipelined SET / INCR / APPEND on keys each writer owns, with a
 *             model of every acknowledged value;
 *   readers   GET / MGET / EXISTS / STRLEN on anyone's keys, checking reply types;
 *   slow      readers of a 256 KiB value that stop reading for a while;
 *   killers   connections closed mid-command (half a frame, or mid-pipeline);
 *   garblers  malformed frames (bad lengths, binary junk), which the server
 *             answers with a protocol error and closes.
 * Killed and closed connections reconnect.  Afterwards a fresh connection
 * reads every modelled key: its value must be the last acknowledged one, or
 * (when the writer died with commands in flight) one that was in flight.
 * The check must read back every modelled key, and at least 9 in 10 of the
 * keys the writers meant to write must have been acknowledged and judged, so
 * a server that refuses writes, or a check cut short, fails rather than
 * passing with "0 lost" out of nothing checked.
 * Then the server must answer PING promptly, report its RSS near the
 * baseline, and have no thread in uninterruptible sleep.
 *
 * Usage: soak --port P [--host H] [--pid SERVER_PID] [--seconds S]
 *             [--conns N]
 * Prints figures and ends with `N passed, M failed, K skipped` (the RSS and
 * thread-state checks are skipped without --pid).  Loopback only; every
 * loop is bounded by --seconds.
 */
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <hiredis/hiredis.h>
#include <hiredis/read.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include "tests/check.h"

#define KEYS_PER_WRITER 4
#define MAX_INFLIGHT 64
#define BIG_SIZE (256 * 1024)

enum role { WRITER, READER, SLOW, KILLER, GARBLER, NROLES };

/* In-flight values kept per key from killed connections.  A long soak on a
 * fast machine kills a writer's connection many times (48 were reached on
 * one key in 60 s on 2 cores); past this a key cannot be judged, and the
 * soak fails if more than 1 in 10 cannot.  A value is "v<writer>.<seq>", so
 * only its sequence number is kept. */
#define MAX_ZOMBIE 1024
struct keymodel {
	char acked[48];          /* last acknowledged value */
	bool ever_acked;
	int n_unsure;            /* sent on the live connection after its last ack */
	char unsure[MAX_INFLIGHT][48];
	int n_zombie;            /* sent on a connection that died before the ack: the
				  * server may apply them, even after later writes */
	unsigned long zombie[MAX_ZOMBIE]; /* their sequence numbers */
	bool uncertain;          /* too many zombies to track: not checked */
};

struct pending {
	int key;                 /* writer key index, -1 for reads */
	char val[48];
	int kind;                /* 0 SET, 1 GET-like, 2 other */
};

struct conn {
	int id;
	enum role role;
	struct bufferevent *bev;
	redisReader *reader;
	struct pending q[MAX_INFLIGHT];
	int qhead, qlen;
	bool reading_paused;
	unsigned long seq;
	struct keymodel *keys;   /* writers: KEYS_PER_WRITER models, kept across reconnects */
	struct event *timer;
};

static struct event_base *base;
static const char *host = "127.0.0.1";
static int port, nconns = 1000, server_pid;
static double seconds = 20;
static double t_end;
static bool stopping;
static struct conn *conns;

static unsigned long st_ops, st_acked_writes, st_errors_expected, st_kills, st_garbles,
	st_reconnects, st_slow_pauses, st_bad_replies, st_connect_fail;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void conn_start(struct conn *c);

static void send_cmd(struct conn *c, int key, const char *val, int kind, const char *fmt, ...)
{
	char *cmd;
	int len;
	va_list ap;
	struct pending *p;

	va_start(ap, fmt);
	len = redisvFormatCommand(&cmd, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	bufferevent_write(c->bev, cmd, (size_t)len);
	redisFreeCommand(cmd);
	p = &c->q[(c->qhead + c->qlen) % MAX_INFLIGHT];
	p->key = key;
	p->kind = kind;
	snprintf(p->val, sizeof(p->val), "%s", val ? val : "");
	c->qlen++;
	if (key >= 0 && kind == 0) {
		struct keymodel *m = &c->keys[key];

		if (m->n_unsure < MAX_INFLIGHT)
			snprintf(m->unsure[m->n_unsure++], sizeof(m->unsure[0]), "%s", val);
	}
}

static void writer_batch(struct conn *c)
{
	int n = 1 + (int)(random() % 16);

	for (int i = 0; i < n && c->qlen < MAX_INFLIGHT - 1; i++) {
		int k = (int)(random() % KEYS_PER_WRITER);
		char key[48], val[48];

		snprintf(key, sizeof(key), "soak:w%d:%d", c->id, k);
		snprintf(val, sizeof(val), "v%d.%lu", c->id, c->seq++);
		send_cmd(c, k, val, 0, "SET %s %s", key, val);
	}
	if (random() % 4 == 0)
		send_cmd(c, -1, NULL, 2, "INCR soak:counter:%d", c->id);
}

static void reader_batch(struct conn *c)
{
	int n = 1 + (int)(random() % 8);

	for (int i = 0; i < n && c->qlen < MAX_INFLIGHT - 1; i++) {
		int w = (int)(random() % nconns), k = (int)(random() % KEYS_PER_WRITER);

		switch (random() % 4) {
		case 0:
			send_cmd(c, -1, NULL, 1, "GET soak:w%d:%d", w, k);
			break;
		case 1:
			send_cmd(c, -1, NULL, 2, "MGET soak:w%d:0 soak:w%d:1 soak:w%d:2", w, w, w);
			break;
		case 2:
			send_cmd(c, -1, NULL, 2, "EXISTS soak:w%d:%d", w, k);
			break;
		default:
			send_cmd(c, -1, NULL, 2, "STRLEN soak:w%d:%d", w, k);
		}
	}
}

static void conn_drop(struct conn *c, bool reconnect)
{
	if (c->role == WRITER) {
		/* In-flight SETs may still be applied, in any order relative to
		 * the next connection's writes. */
		for (int k = 0; k < KEYS_PER_WRITER; k++) {
			struct keymodel *m = &c->keys[k];

			for (int u = 0; u < m->n_unsure; u++) {
				if (m->n_zombie < MAX_ZOMBIE)
					m->zombie[m->n_zombie++] =
						strtoul(strchr(m->unsure[u], '.') + 1, NULL, 10);
				else
					m->uncertain = true;
			}
			m->n_unsure = 0;
		}
	}
	if (c->bev) {
		bufferevent_free(c->bev);
		c->bev = NULL;
	}
	if (c->reader) {
		redisReaderFree(c->reader);
		c->reader = NULL;
	}
	c->qlen = 0;
	c->qhead = 0;
	if (reconnect && !stopping) {
		st_reconnects++;
		conn_start(c);
	}
}

static void act(struct conn *c);

static bool reply_ok_for(struct conn *c, struct pending *p, redisReply *r)
{
	if (p->kind == 0) {
		if (r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "OK")) {
			struct keymodel *m = &c->keys[p->key];
			int i;

			snprintf(m->acked, sizeof(m->acked), "%s", p->val);
			m->ever_acked = true;
			/* Values sent before this one are overwritten for good. */
			for (i = 0; i < m->n_unsure && strcmp(m->unsure[i], p->val); i++)
				;
			if (i < m->n_unsure) {
				memmove(m->unsure, m->unsure + i + 1,
					(size_t)(m->n_unsure - i - 1) * sizeof(m->unsure[0]));
				m->n_unsure -= i + 1;
			}
			st_acked_writes++;
			return true;
		}
		/* Refused (an error reply): never applied, so not in flight either;
		 * kept, it would make the key uncertain after a few kills. */
		if (r->type == REDIS_REPLY_ERROR) {
			struct keymodel *m = &c->keys[p->key];
			int i;

			for (i = 0; i < m->n_unsure && strcmp(m->unsure[i], p->val); i++)
				;
			if (i < m->n_unsure) {
				memmove(m->unsure + i, m->unsure + i + 1,
					(size_t)(m->n_unsure - i - 1) * sizeof(m->unsure[0]));
				m->n_unsure--;
			}
		}
		return false;
	}
	if (p->kind == 1)
		return r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_NIL;
	return r->type == REDIS_REPLY_INTEGER || r->type == REDIS_REPLY_ARRAY ||
	       r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS;
}

static void on_read(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len;
	void *r;

	while ((len = evbuffer_get_length(in)) > 0) {
		char buf[16384];
		int n = evbuffer_remove(in, buf, len < sizeof(buf) ? len : sizeof(buf));

		if (n <= 0)
			break;
		redisReaderFeed(c->reader, buf, (size_t)n);
	}
	while (redisReaderGetReply(c->reader, &r) == REDIS_OK && r) {
		redisReply *rep = r;

		if (c->role == GARBLER) {
			/* Protocol errors (then a close) or unknown-command errors. */
			if (rep->type != REDIS_REPLY_ERROR)
				st_bad_replies++;
		} else if (c->qlen == 0) {
			st_bad_replies++; /* a reply nobody asked for */
		} else {
			struct pending *p = &c->q[c->qhead];

			if (!reply_ok_for(c, p, rep)) {
				if (st_bad_replies < 5)
					fprintf(stderr, "conn %d role %d: unexpected reply type %d %s\n",
						c->id, c->role, rep->type,
						rep->type == REDIS_REPLY_ERROR ? rep->str : "");
				st_bad_replies++;
			}
			c->qhead = (c->qhead + 1) % MAX_INFLIGHT;
			c->qlen--;
			st_ops++;
		}
		freeReplyObject(rep);
	}
	if (c->qlen == 0 && !stopping)
		act(c);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		act(c);
		return;
	}
	if (what & (BEV_EVENT_ERROR | BEV_EVENT_EOF)) {
		if (c->role == GARBLER)
			st_errors_expected++;
		else if (!stopping && c->role != KILLER) {
			st_connect_fail++;
			if (st_connect_fail < 5)
				fprintf(stderr, "conn %d (role %d) lost: %s\n", c->id, c->role,
					what & BEV_EVENT_EOF ? "EOF" : strerror(errno));
		}
		conn_drop(c, true);
	}
}

static void resume_cb(evutil_socket_t fd, short ev, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)ev;
	if (c->bev && c->reading_paused) {
		bufferevent_enable(c->bev, EV_READ);
		c->reading_paused = false;
	}
}

static void act(struct conn *c)
{
	if (stopping || !c->bev)
		return;
	switch (c->role) {
	case WRITER:
		if (random() % 200 == 0) { /* die with a pipeline in flight */
			writer_batch(c);
			st_kills++;
			conn_drop(c, true);
			return;
		}
		writer_batch(c);
		break;
	case READER:
		reader_batch(c);
		break;
	case SLOW:
		send_cmd(c, -1, NULL, 1, "GET soak:big");
		send_cmd(c, -1, NULL, 1, "GET soak:big");
		if (random() % 3 == 0) {
			struct timeval tv = { 0, 200000 + (random() % 300000) };

			bufferevent_disable(c->bev, EV_READ);
			c->reading_paused = true;
			st_slow_pauses++;
			event_add(c->timer, &tv);
		}
		break;
	case KILLER: {
		static const char half[] = "*3\r\n$3\r\nSET\r\n$10\r\nsoak:k";

		if (random() % 2)
			bufferevent_write(c->bev, half, sizeof(half) - 1);
		else
			send_cmd(c, -1, NULL, 2, "INCR soak:killer:%d", c->id);
		st_kills++;
		conn_drop(c, true);
		return;
	}
	case GARBLER: {
		static const struct {
			const char *s;
			size_t n;
		} bad[] = {
#define B(x) { x, sizeof(x) - 1 }
			B("*abc\r\n"), B("*2\r\n$-5\r\nxx\r\n"), B("*1\r\n$999999999999\r\n"),
			B("*1\r\n+PING\r\n"), B("\x01\x02\xff\xfe garbage \x00\r\n"),
#undef B
		};
		int which = (int)(random() % 5);

		bufferevent_write(c->bev, bad[which].s, bad[which].n);
		st_garbles++;
		/* The server answers -ERR Protocol error and closes: on_event. */
		break;
	}
	default:
		break;
	}
}

static void conn_start(struct conn *c)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	inet_pton(AF_INET, host, &sa.sin_addr);
	c->bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	c->reader = redisReaderCreate();
	c->qhead = c->qlen = 0;
	bufferevent_setcb(c->bev, on_read, NULL, on_event, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(c->bev, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		st_connect_fail++;
		bufferevent_free(c->bev);
		c->bev = NULL;
		redisReaderFree(c->reader);
		c->reader = NULL;
	}
}

static void tick(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	if (now() >= t_end) {
		stopping = true;
		event_base_loopbreak(base);
	}
}

static long rss_kb(int pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = atol(line + 6);
	fclose(f);
	return kb;
}

static int threads_in_state(int pid, char state)
{
	char cmd[128];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "cat /proc/%d/task/*/stat 2>/dev/null | awk '{print $3}'", pid);
	if (!(p = popen(cmd, "r")))
		return -1;
	for (int ch; (ch = fgetc(p)) != EOF;)
		n += ch == state;
	pclose(p);
	return n;
}

int main(int argc, char **argv)
{
	struct rlimit rl;
	redisContext *ctl;
	struct event *tk;
	struct timeval one = { 0, 100000 };
	long rss0 = -1, rss1 = -1;
	int counts[NROLES] = { 0 };
	unsigned long lost = 0, checked = 0, checked_acked = 0, uncertain = 0, acked_keys = 0,
		      total_keys;
	int max_zombie = 0;
	char *big;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--host") && i + 1 < argc)
			host = argv[++i];
		else if (!strcmp(argv[i], "--port") && i + 1 < argc)
			port = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pid") && i + 1 < argc)
			server_pid = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--conns") && i + 1 < argc)
			nconns = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: soak --port P [--host H] [--pid PID] [--seconds S] "
					"[--conns N]\n");
			return 2;
		}
	}
	if (!port) {
		fprintf(stderr, "soak: --port is required\n");
		return 2;
	}
	srandom(12345);
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < (rlim_t)nconns + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	ctl = redisConnect(host, port);
	if (!ctl || ctl->err) {
		printf("cannot connect to %s:%d\n0 passed, 1 failed, 0 skipped\n", host, port);
		return 1;
	}
	big = malloc(BIG_SIZE);
	memset(big, 'b', BIG_SIZE);
	freeReplyObject(redisCommand(ctl, "SET soak:big %b", big, (size_t)BIG_SIZE));
	free(big);
	if (server_pid)
		rss0 = rss_kb(server_pid);

	base = event_base_new();
	conns = calloc((size_t)nconns, sizeof(*conns));
	for (int i = 0; i < nconns; i++) {
		struct conn *c = &conns[i];
		int r = i % 20;

		c->id = i;
		/* 12 writers, 4 readers, 2 slow, 1 killer, 1 garbler in 20 */
		c->role = r < 12 ? WRITER : r < 16 ? READER : r < 18 ? SLOW : r < 19 ? KILLER : GARBLER;
		counts[c->role]++;
		c->keys = calloc(KEYS_PER_WRITER, sizeof(struct keymodel));
		c->timer = evtimer_new(base, resume_cb, c);
		conn_start(c);
	}
	t_end = now() + seconds;
	tk = event_new(base, -1, EV_PERSIST, tick, NULL);
	event_add(tk, &one);
	event_base_dispatch(base);

	/* Let every connection go, then check the model from a fresh one. */
	for (int i = 0; i < nconns; i++) {
		if (conns[i].bev) {
			/* Commands in flight now: their fate is unknown, as for a kill. */
			conn_drop(&conns[i], false);
		}
		event_free(conns[i].timer);
	}
	/* libevent closes freed bufferevents' sockets from inside the loop. */
	for (int i = 0; i < 10; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
	sleep(1);
	redisFree(ctl);
	ctl = redisConnect(host, port);
	CHECK(ctl && !ctl->err, "a fresh connection after the soak");
	for (int i = 0; i < nconns && ctl && !ctl->err; i++) {
		if (conns[i].role != WRITER)
			continue;
		for (int k = 0; k < KEYS_PER_WRITER; k++) {
			struct keymodel *m = &conns[i].keys[k];
			redisReply *r = redisCommand(ctl, "GET soak:w%d:%d", i, k);
			bool ok = false;

			if (!r)
				break;
			acked_keys += m->ever_acked;
			if (m->n_zombie > max_zombie)
				max_zombie = m->n_zombie;
			if (m->uncertain) {
				uncertain++;
				freeReplyObject(r);
				continue;
			}
			if (r->type == REDIS_REPLY_NIL) {
				ok = !m->ever_acked; /* never acknowledged: may be absent */
			} else if (r->type == REDIS_REPLY_STRING) {
				ok = m->ever_acked && !strcmp(r->str, m->acked);
				for (int u = 0; !ok && u < m->n_zombie; u++) {
					char v[48];

					snprintf(v, sizeof(v), "v%d.%lu", i, m->zombie[u]);
					ok = !strcmp(r->str, v);
				}
			}
			if (!ok) {
				lost++;
				if (lost < 5)
					printf("key soak:w%d:%d: server has %s, model acked %s (+%d in "
					       "flight)\n",
					       i, k, r->type == REDIS_REPLY_STRING ? r->str : "(nil)",
					       m->ever_acked ? m->acked : "(nothing)", m->n_zombie);
			}
			checked++;
			checked_acked += m->ever_acked;
			freeReplyObject(r);
		}
	}
	{
		double t0 = now();
		redisReply *r = ctl ? redisCommand(ctl, "PING") : NULL;

		CHECK(r && r->type == REDIS_REPLY_STATUS && !strcmp(r->str, "PONG"),
		      "PING answered after the soak (%.3f s)", now() - t0);
		if (r)
			freeReplyObject(r);
	}
	if (server_pid) {
		/* The allocator returns freed pages over seconds (jemalloc's decay,
		 * run by its background thread): wait up to 30 s for it. */
		for (int i = 0; i < 60; i++) {
			rss1 = rss_kb(server_pid);
			if (rss1 > 0 && rss1 < rss0 + 32 * 1024 + rss0 / 2)
				break;
			usleep(500000);
		}
		CHECK(threads_in_state(server_pid, 'D') == 0,
		      "no server thread in uninterruptible sleep");
		/* Near the baseline: the key space is bounded, so what remains is
		 * allocator slack, not connections or buffers that leaked. */
		CHECK(rss1 > 0 && rss1 < rss0 + 32 * 1024 + rss0 / 2,
		      "server RSS back near its baseline: %ld kB before, %ld kB after", rss0, rss1);
	} else {
		SKIP("server threads and RSS: no --pid given");
	}
	printf("soak: %d connections (%d writers, %d readers, %d slow, %d killers, %d garblers) "
	       "for %.0f s: %lu replies, %lu acknowledged writes, %lu kills, %lu malformed frames, "
	       "%lu slow-reader pauses, %lu reconnects, %lu keys checked, %lu lost\n",
	       nconns, counts[WRITER], counts[READER], counts[SLOW], counts[KILLER],
	       counts[GARBLER], seconds, st_ops, st_acked_writes, st_kills, st_garbles,
	       st_slow_pauses, st_reconnects, checked, lost);
	/* What the check meant to cover is every writer's KEYS_PER_WRITER keys;
	 * "none lost" means something only if it covered them, so three checks:
	 * every key was read back (a GET without a reply ends the pass early);
	 * 9 in 10 of them were acknowledged at least once (a server that refuses
	 * or never answers writes leaves them unacknowledged: writers pick their
	 * keys at random, so a few may be missed in a very short run); and 9 in
	 * 10 were judged, acknowledged and not too uncertain (a key with more
	 * in-flight values from killed connections than MAX_ZOMBIE is skipped by
	 * the model, and a check of few keys proves little). */
	total_keys = (unsigned long)counts[WRITER] * KEYS_PER_WRITER;
	printf("soak: %lu of %lu modelled keys read back: %lu acknowledged at least once, %lu "
	       "judged, %lu too uncertain (at most %d in-flight values on one key, the model keeps "
	       "%d)\n",
	       checked + uncertain, total_keys, acked_keys, checked_acked, uncertain, max_zombie,
	       MAX_ZOMBIE);
	CHECK(total_keys > 0 && checked + uncertain == total_keys,
	      "the check read back every modelled key (%lu of %lu)", checked + uncertain, total_keys);
	CHECK(acked_keys * 10 >= total_keys * 9 && acked_keys > 0,
	      "at least 9 in 10 of the keys meant to be written were acknowledged (%lu of %lu)",
	      acked_keys, total_keys);
	CHECK(checked_acked * 10 >= total_keys * 9 && checked_acked > 0,
	      "at least 9 in 10 of the keys meant to be written were judged (%lu of %lu)",
	      checked_acked, total_keys);
	CHECK(lost == 0 && checked_acked > 0,
	      "no acknowledged write lost (%lu lost, %lu acknowledged keys judged)", lost,
	      checked_acked);
	CHECK(st_bad_replies == 0, "every reply had the expected type (%lu unexpected)",
	      st_bad_replies);
	CHECK(st_connect_fail == 0, "no healthy connection was dropped by the server (%lu)",
	      st_connect_fail);
	CHECK(st_acked_writes > 1000 && st_kills > 10 && st_garbles > 10,
	      "the soak exercised enough (writes, kills, malformed frames)");
	if (ctl)
		redisFree(ctl);
	return check_summary();
}
