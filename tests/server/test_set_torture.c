/*
 * tests/server/test_set_torture.c - set readers never see a half-made or
 * freed value (issue 17, sets), with hiredis.  Runs against the server at
 * --port P (tests/server/test_set.sh starts rcukv-server with --threads 2
 * and RCUKV_POISON_FREES=1, so a value freed before its readers are done
 * reads as 0x6b bytes, then a redis-server, which proves the checks):
 *
 *   members  come in twins that are always added and removed together, in
 *            one command: the integers 2iP and (2i+1)P (P = 1000003), and
 *            the strings "a<j>:<checksum>:" and "b<j>:<checksum>:" padded
 *            to 60 bytes (a set of 1100 of them passes the table's 64 KiB
 *            retire batch, so an old copy goes to call_rcu() at once).
 *   writers  WRITERS clients, each owning SETS / WRITERS sets s:<k> and a
 *            model of them, churn across the intset/hashtable threshold:
 *            integer twins past set-max-intset-entries (512: hashtable)
 *            and back down, then SDIFFSTORE s:<k> s:<k> (rebuilt: an
 *            intset again); string twins up to 1100 members (hashtable,
 *            about 70 KB) and away, SDIFFSTORE again.  Every few steps
 *            SUNIONSTORE u:<k> s:<k> copies the set (ht_txn()), and a
 *            MULTI/EXEC moves a twin from s:<k> to t:<k> with two SMOVEs
 *            and back.
 *   readers  READERS clients SMEMBERS a random s:, u: or t: set and check
 *            every member (an integer a multiple of P, a string well formed
 *            with its checksum) and that its twin is there; SCARD and
 *            SINTERCARD of s: and u: are even; SRANDMEMBER -5 checks too.
 * Bounded: TEST_SET_OPS steps per writer (default 5000).  At the end: no
 * reader saw a bad member, a lone twin or an odd count; the readers read
 * often enough, and the sets were seen both intset- and hashtable-encoded
 * (it reports what it exercised).  Ends with "N passed, M failed, K skipped".
 */
#include "tests/check.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WRITERS 2
#define READERS 2
#define SETS 4
#define P 1000003LL
#define MAXID 4096	/* twin ids per kind */
#define VLEN 60
#define INT_HIGH 300	/* integer twins: up to 600 members (past 512) */
#define INT_LOW 100
#define STR_HIGH 550	/* string twins: up to 1100 members */

static int port;
static long ops = 5000;
static atomic_int writers_left;
static atomic_long n_reads, n_members, bad_mem, bad_twin, bad_count, bad_reply;
static atomic_long n_intset, n_hashtable, n_steps, n_rebuilds, n_moves;

#include "tests/server/torture_lib.h"

static uint32_t chk(char side, long j)
{
	uint32_t h = 2166136261u ^ (unsigned char)side;

	for (int i = 0; i < 4; i++)
		h = (h ^ (uint32_t)((j >> (8 * i)) & 0xff)) * 16777619u;
	return h;
}

static void smem(char *out, size_t len, char side, long j)
{
	int k = snprintf(out, len, "%c%ld:%08x:", side, j, chk(side, j));

	while (k < VLEN && (size_t)k + 1 < len)
		out[k++] = 'p';
	out[k] = 0;
}

/* Member @m (@l bytes): 1 if well formed, with its twin's text in @twin. */
static int check_mem(const char *m, size_t l, char *twin, size_t tlen)
{
	char buf[128], *end;
	long long n;

	if (l == 0 || l >= sizeof(buf))
		return 0;
	memcpy(buf, m, l);
	buf[l] = 0;
	if (buf[0] == 'a' || buf[0] == 'b') {
		long j = strtol(buf + 1, &end, 10);
		char want[128];

		if (*end != ':' || j < 0 || j >= MAXID)
			return 0;
		smem(want, sizeof(want), buf[0], j);
		if (strcmp(want, buf))
			return 0;
		smem(twin, tlen, buf[0] == 'a' ? 'b' : 'a', j);
		return 1;
	}
	n = strtoll(buf, &end, 10);
	if (*end || n < 0 || n % P || n / P >= 2 * MAXID)
		return 0;
	snprintf(twin, tlen, "%lld", (n / P) % 2 ? n - P : n + P);
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Check one SMEMBERS/SRANDMEMBER reply: every member well formed and, when
 * @twins, each twin there too. */
static void check_members(redisReply *r, int twins, const char *what)
{
	char **v, twin[128];
	size_t n;

	if (!r || r->type != REDIS_REPLY_ARRAY) {
		bad_reply++;
		return;
	}
	n = r->elements;
	v = malloc((n ? n : 1) * sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		if (r->element[i]->type != REDIS_REPLY_STRING) {
			bad_reply++;
			free(v);
			return;
		}
		v[i] = r->element[i]->str;
	}
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++) {
		const char *key = twin;

		if (!check_mem(v[i], strlen(v[i]), twin, sizeof(twin))) {
			if (bad_mem++ < 5)
				fprintf(stderr, "bad member in %s: %.40s\n", what, v[i]);
			continue;
		}
		if (twins && !bsearch(&key, v, n, sizeof(*v), cmp_str) && bad_twin++ < 5)
			fprintf(stderr, "%s: %.40s without its twin (%zu members)\n", what, v[i], n);
	}
	n_members += (long)n;
	free(v);
}

struct smodel {
	int id;
	int phase;	/* 0 integers up, 1 integers down, 2 strings up, 3 strings down */
	char have_i[MAXID], have_s[MAXID];
	int ni, ns;	/* twins present */
};

static void cmd_ok(redisContext *c, redisReply *r)
{
	tl_cmd_ok(c, r, &bad_reply);
}

static int pick(const char *have, int want, uint64_t *s)
{
	for (;;) {
		int j = (int)(rnd(s) % MAXID);

		if (have[j] == want)
			return j;
	}
}

static void twin_cmd(redisContext *c, const char *cmd, const char *key, int isint, int j)
{
	if (isint) {
		cmd_ok(c, redisCommand(c, "%s %s %lld %lld", cmd, key, 2 * j * P, (2 * j + 1) * P));
	} else {
		char a[128], b[128];

		smem(a, sizeof(a), 'a', j);
		smem(b, sizeof(b), 'b', j);
		cmd_ok(c, redisCommand(c, "%s %s %s %s", cmd, key, a, b));
	}
}

static void rebuild(redisContext *c, struct smodel *m)
{
	char key[32];

	snprintf(key, sizeof(key), "s:%d", m->id);
	cmd_ok(c, redisCommand(c, "SDIFFSTORE %s %s nokey:%d", key, key, m->id));
	n_rebuilds++;
}

static void step(redisContext *c, struct smodel *m, uint64_t *s)
{
	char key[32];
	int j;

	snprintf(key, sizeof(key), "s:%d", m->id);
	switch (m->phase) {
	case 0:
		j = pick(m->have_i, 0, s);
		twin_cmd(c, "SADD", key, 1, j);
		m->have_i[j] = 1;
		if (++m->ni >= INT_HIGH)
			m->phase = 1;
		break;
	case 1:
		j = pick(m->have_i, 1, s);
		twin_cmd(c, "SREM", key, 1, j);
		m->have_i[j] = 0;
		if (--m->ni <= INT_LOW) {
			rebuild(c, m); /* 200 integers: an intset again */
			m->phase = 2;
		}
		break;
	case 2:
		j = pick(m->have_s, 0, s);
		twin_cmd(c, "SADD", key, 0, j);
		m->have_s[j] = 1;
		if (++m->ns >= STR_HIGH)
			m->phase = 3;
		break;
	default:
		j = pick(m->have_s, 1, s);
		twin_cmd(c, "SREM", key, 0, j);
		m->have_s[j] = 0;
		if (--m->ns == 0) {
			rebuild(c, m);
			m->phase = 0;
		}
		break;
	}
	if (rnd(s) % 16 == 0)
		cmd_ok(c, redisCommand(c, "SUNIONSTORE u:%d %s", m->id, key));
	if (rnd(s) % 32 == 0 && m->ni > 0) { /* a twin to t: and back, each as one EXEC */
		char dst[32];

		snprintf(dst, sizeof(dst), "t:%d", m->id);
		j = pick(m->have_i, 1, s);
		for (int back = 0; back < 2; back++) {
			const char *from = back ? dst : key, *to = back ? key : dst;

			cmd_ok(c, redisCommand(c, "MULTI"));
			freeReplyObject(redisCommand(c, "SMOVE %s %s %lld", from, to, 2 * j * P));
			freeReplyObject(redisCommand(c, "SMOVE %s %s %lld", from, to, (2 * j + 1) * P));
			cmd_ok(c, redisCommand(c, "EXEC"));
		}
		n_moves++;
	}
	n_steps++;
}

static void *writer(void *arg)
{
	int w = (int)(uintptr_t)arg;
	redisContext *c = conn();
	struct smodel *m = calloc(SETS / WRITERS, sizeof(*m));
	uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(w + 1);

	for (int k = 0; k < SETS / WRITERS; k++) {
		m[k].id = w + k * WRITERS;
		m[k].phase = k % 2 ? 2 : 0; /* one set starts with strings */
	}
	for (long n = 0; n < ops; n++) {
		struct smodel *x = &m[n % (SETS / WRITERS)];

		step(c, x, &s);
		if (n % 53 == 0) {
			redisReply *r = redisCommand(c, "OBJECT ENCODING s:%d", x->id);

			if (r && r->type == REDIS_REPLY_STRING) {
				if (!strcmp(r->str, "intset"))
					n_intset++;
				else if (!strcmp(r->str, "hashtable"))
					n_hashtable++;
			}
			freeReplyObject(r);
		}
	}
	free(m);
	redisFree(c);
	writers_left--;
	return NULL;
}

static void *reader(void *arg)
{
	redisContext *c = conn();
	uint64_t s = 0xdeadbeefULL * (uint64_t)((uintptr_t)arg + 7);
	static const char *const kinds[] = {"s", "u", "t"};

	while (writers_left > 0) {
		int k = (int)(rnd(&s) % SETS), kind = (int)(rnd(&s) % 3);
		char what[32];
		redisReply *r;

		snprintf(what, sizeof(what), "%s:%d", kinds[kind], k);
		r = redisCommand(c, "SMEMBERS %s", what);
		check_members(r, 1, what);
		freeReplyObject(r);
		n_reads++;
		r = redisCommand(c, "SRANDMEMBER s:%d -5", k);
		check_members(r, 0, "SRANDMEMBER");
		freeReplyObject(r);
		r = redisCommand(c, "SCARD s:%d", k);
		if (!r || r->type != REDIS_REPLY_INTEGER)
			bad_reply++;
		else if (r->integer % 2)
			bad_count++;
		freeReplyObject(r);
		r = redisCommand(c, "SINTERCARD 2 s:%d u:%d", k, k);
		if (!r || r->type != REDIS_REPLY_INTEGER)
			bad_reply++;
		else if (r->integer % 2 && bad_count++ < 5)
			fprintf(stderr, "SINTERCARD of s:%d u:%d is odd: %lld\n", k, k, r->integer);
		freeReplyObject(r);
	}
	redisFree(c);
	return NULL;
}

int main(int argc, char **argv)
{
	tl_args(argc, argv, "TEST_SET_OPS");
	tl_reset("CONFIG SET set-max-intset-entries 512");
	tl_run(writer, WRITERS, reader, READERS);
	printf("%ld steps (%ld rebuilds, %ld MULTI moves), %ld SMEMBERS (%ld members checked), "
	       "%ld intset and %ld hashtable samples\n",
	       (long)n_steps, (long)n_rebuilds, (long)n_moves, (long)n_reads, (long)n_members,
	       (long)n_intset, (long)n_hashtable);
	CHECK(bad_reply == 0, "every reply had the expected type (%ld did not)", (long)bad_reply);
	CHECK(bad_mem == 0, "every member read is well formed (%ld were not)", (long)bad_mem);
	CHECK(bad_twin == 0, "every member came with its twin: no half-made value (%ld alone)",
	      (long)bad_twin);
	CHECK(bad_count == 0, "every SCARD and SINTERCARD was even (%ld were not)",
	      (long)bad_count);
	CHECK(n_reads >= 100, "the readers read while the writers wrote (%ld SMEMBERS)",
	      (long)n_reads);
	CHECK(n_intset > 0 && n_hashtable > 0 && n_rebuilds > 0,
	      "the sets crossed the threshold (%ld intset, %ld hashtable samples, %ld rebuilds)",
	      (long)n_intset, (long)n_hashtable, (long)n_rebuilds);
	tl_reset(NULL);
	return check_summary();
}
