/*
 * tests/server/test_zset_torture.c - sorted set readers never see a
 * half-made or freed value (issue 17), with hiredis.  Runs against the
 * server at --port P (tests/server/test_zset.sh starts rcukv-server with
 * --threads 2 and RCUKV_POISON_FREES=1, so a value freed before its readers
 * are done reads as 0x6b bytes, then a redis-server, which proves the
 * checks):
 *
 *   writers  WRITERS clients, each owning ZSETS / WRITERS sorted sets and a
 *            model of them: every member is "<n>:<checksum of n>:" padded
 *            to 60 bytes, scores are integers and the scores of a set sum
 *            to 0 (a set of 1000 members passes the table's 64 KiB retire
 *            batch, so an old copy goes to call_rcu() at once).  Each step
 *            is one command that keeps that: ZADD of two members moving an
 *            amount between them (so both move in the order), ZADD of a new
 *            member at 0, or emptying a member into another (one ZADD) then
 *            ZREM of the emptied one; sets grow past
 *            zset-max-listpack-entries (128) into the skiplist encoding and
 *            shrink back, and at 2 members ZRANGESTORE z z 0 -1 rebuilds
 *            the set, listpack again; ZINCRBY cnt:<z> 1 c counts the steps.
 *   readers  READERS clients ZRANGE a random set WITHSCORES and check every
 *            member's checksum, that the reply is in strict (score, member)
 *            order and that the scores sum to 0; ZRANGEBYSCORE -inf +inf
 *            likewise; ZSCORE and ZRANK of a member just seen answer nil or
 *            an integer score and a rank in [0, 1000); ZCARD is 0 (not yet
 *            made) or 2 to 1000; the counter's score never goes back (per
 *            reader).
 * Bounded: TEST_ZSET_OPS steps per writer (default 10000).  At the end: no
 * reader saw a bad member, an unsorted reply, a bad sum or a counter going
 * back; the readers read often enough, and sets were skiplist-encoded and
 * listpack-encoded after it (it reports what it exercised).  Ends with "N
 * passed, M failed, K skipped".
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
#define ZSETS 4
#define MAXM 1000 /* members per set at most: past 128, skiplist-encoded */
#define MLEN 60	  /* member bytes: 1000 of them pass the 64 KiB retire batch */

static int port;
static long ops = 10000;
static atomic_int writers_left;
static atomic_long n_reads, n_elems_seen, n_points, bad_member, bad_order, bad_sum, bad_cnt,
    bad_reply, bad_point;
static atomic_long n_skiplist, n_listpack_again, n_rebuilds, n_steps, max_members;

#include "tests/server/torture_lib.h"

static uint32_t sum_of(long n)
{
	char buf[32];
	uint32_t h = 2166136261u;
	int k = snprintf(buf, sizeof(buf), "%ld", n);

	for (int i = 0; i < k; i++)
		h = (h ^ (unsigned char)buf[i]) * 16777619u;
	return h;
}

static void mname(char *out, size_t len, long n)
{
	int k = snprintf(out, len, "%ld:%08x:", n, sum_of(n));

	while (k < MLEN && (size_t)k + 1 < len)
		out[k++] = 'p';
	out[k] = 0;
}

/* 1 if member @m checks. */
static int check_member(const char *m, size_t ml)
{
	char buf[128], *colon, *end;
	unsigned long want;
	long n;

	if (ml != MLEN || ml >= sizeof(buf))
		return 0;
	memcpy(buf, m, ml);
	buf[ml] = 0;
	colon = strchr(buf, ':');
	if (!colon)
		return 0;
	*colon = 0;
	n = strtol(buf, &end, 10);
	if (*end)
		return 0;
	want = strtoul(colon + 1, &end, 16);
	if (*end != ':' || want != sum_of(n))
		return 0;
	for (end++; *end == 'p'; end++)
		;
	return !*end;
}

/* A score reply as an integer: 1 and *v if it is one. */
static int score_of(const redisReply *r, long long *v)
{
	char *end;

	if (!r || r->type != REDIS_REPLY_STRING)
		return 0;
	*v = strtoll(r->str, &end, 10);
	return *end == 0 && end != r->str;
}

struct zmodel {
	int id;
	int nm;
	int grow;  /* growing toward MAXM members, else shrinking toward 2 */
	long next; /* the next new member's number */
	long mid[MAXM];
	long long sc[MAXM];
};

static void cmd_ok(redisContext *c, redisReply *r)
{
	tl_cmd_ok(c, r, &bad_reply);
}

/* ZADD z sa ma sb mb for members at model slots @i and @j. */
static void zadd2(redisContext *c, struct zmodel *m, int i, int j)
{
	char a[96], b[96];

	mname(a, sizeof(a), m->mid[i]);
	mname(b, sizeof(b), m->mid[j]);
	cmd_ok(c, redisCommand(c, "ZADD z:%d %lld %s %lld %s", m->id, m->sc[i], a, m->sc[j], b));
}

static const char *encoding(redisContext *c, int id, char *buf, size_t len)
{
	redisReply *r = redisCommand(c, "OBJECT ENCODING z:%d", id);

	snprintf(buf, len, "%s", r && r->type == REDIS_REPLY_STRING ? r->str : "?");
	freeReplyObject(r);
	return buf;
}

static void step(redisContext *c, struct zmodel *m, uint64_t *s)
{
	int op = (int)(rnd(s) % 10), i = (int)(rnd(s) % (uint64_t)m->nm), j;
	char name[96], e[32];

	do
		j = (int)(rnd(s) % (uint64_t)m->nm);
	while (j == i);
	/* phases: grow to MAXM, then shrink to 2, and again */
	if (op < 6 && (m->grow ? m->nm < MAXM : m->nm > 2))
		op = m->grow ? 10 : 11;
	if (op == 10) { /* a new member at 0 */
		m->mid[m->nm] = m->next++;
		m->sc[m->nm] = 0;
		mname(name, sizeof(name), m->mid[m->nm]);
		m->nm++;
		cmd_ok(c, redisCommand(c, "ZADD z:%d 0 %s", m->id, name));
		if (m->nm == MAXM) {
			m->grow = 0;
			if (!strcmp(encoding(c, m->id, e, sizeof(e)), "skiplist"))
				n_skiplist++;
		}
	} else if (op == 11) { /* empty member j into i, then remove it */
		m->sc[i] += m->sc[j];
		m->sc[j] = 0;
		zadd2(c, m, i, j);
		mname(name, sizeof(name), m->mid[j]);
		cmd_ok(c, redisCommand(c, "ZREM z:%d %s", m->id, name));
		m->mid[j] = m->mid[m->nm - 1];
		m->sc[j] = m->sc[m->nm - 1];
		m->nm--;
		if (m->nm == 2) {
			m->grow = 1;
			/* rebuilt whole: listpack again (skiplist is sticky otherwise) */
			cmd_ok(c, redisCommand(c, "ZRANGESTORE z:%d z:%d 0 -1", m->id, m->id));
			n_rebuilds++;
			if (!strcmp(encoding(c, m->id, e, sizeof(e)), "listpack"))
				n_listpack_again++;
		}
	} else { /* move an amount */
		long long d = (long long)(rnd(s) % 1000) - 500;

		m->sc[i] += d;
		m->sc[j] -= d;
		zadd2(c, m, i, j);
	}
	if (m->nm > max_members)
		max_members = m->nm;
	cmd_ok(c, redisCommand(c, "ZINCRBY cnt:%d 1 c", m->id));
	n_steps++;
}

static void *writer(void *arg)
{
	int w = (int)(uintptr_t)arg;
	redisContext *c = conn();
	struct zmodel *m = calloc(ZSETS / WRITERS, sizeof(*m));
	uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(w + 1);

	for (int k = 0; k < ZSETS / WRITERS; k++) {
		m[k].id = w + k * WRITERS;
		m[k].nm = 2;
		m[k].mid[0] = 0;
		m[k].mid[1] = 1;
		m[k].next = 2;
		m[k].grow = 1;
		zadd2(c, &m[k], 0, 1);
	}
	for (long n = 0; n < ops; n++)
		step(c, &m[n % (ZSETS / WRITERS)], &s);
	free(m);
	redisFree(c);
	writers_left--;
	return NULL;
}

/* A flat member, score, member, score... reply of set @z: checked; a
 * member seen into @seen (its bytes). */
static void check_elems(const redisReply *r, int z, const char *what, char *seen, size_t seenlen)
{
	long long sum = 0, v, prev = 0;
	const redisReply *pm = NULL;

	if (!r || r->type != REDIS_REPLY_ARRAY || r->elements % 2) {
		bad_reply++;
		return;
	}
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		const redisReply *m = r->element[i], *sc = r->element[i + 1];

		if (m->type != REDIS_REPLY_STRING || !check_member(m->str, m->len)) {
			if (bad_member++ < 5)
				fprintf(stderr, "%s z:%d: bad member %.*s\n", what, z,
					(int)(m->len > 40 ? 40 : m->len), m->str ? m->str : "");
			continue;
		}
		if (!score_of(sc, &v)) {
			if (bad_member++ < 5)
				fprintf(stderr, "%s z:%d: bad score %.*s\n", what, z,
					(int)(sc->len > 40 ? 40 : sc->len), sc->str ? sc->str : "");
			continue;
		}
		if (pm && (v < prev || (v == prev && (memcmp(pm->str, m->str, MLEN) >= 0)))) {
			if (bad_order++ < 5)
				fprintf(stderr, "%s z:%d: unsorted at %zu\n", what, z, i / 2);
		}
		pm = m;
		prev = v;
		sum += v;
		if (seen && i == 2 * (size_t)(v & 7) % r->elements && m->len < seenlen) {
			memcpy(seen, m->str, m->len);
			seen[m->len] = 0;
		}
	}
	if (r->elements && sum != 0 && bad_sum++ < 5)
		fprintf(stderr, "%s z:%d: %zu members sum to %lld\n", what, z, r->elements / 2, sum);
	if (r->elements && r->elements < 4 && bad_sum++ < 5)
		fprintf(stderr, "%s z:%d: only %zu members\n", what, z, r->elements / 2);
	n_elems_seen += (long)r->elements / 2;
	n_reads++;
}

static void *reader(void *arg)
{
	redisContext *c = conn();
	uint64_t s = 0xdeadbeefULL * (uint64_t)((uintptr_t)arg + 7);
	long long last[ZSETS] = {0};

	while (writers_left > 0) {
		int z = (int)(rnd(&s) % ZSETS);
		char seen[96] = "";
		redisReply *r;
		long long n;

		r = redisCommand(c, "ZRANGE z:%d 0 -1 WITHSCORES", z);
		check_elems(r, z, "ZRANGE", seen, sizeof(seen));
		freeReplyObject(r);
		r = redisCommand(c, "ZRANGEBYSCORE z:%d -inf +inf WITHSCORES", z);
		check_elems(r, z, "ZRANGEBYSCORE", NULL, 0);
		freeReplyObject(r);
		if (seen[0]) {
			r = redisCommand(c, "ZSCORE z:%d %s", z, seen);
			if (!r || (r->type != REDIS_REPLY_NIL && !score_of(r, &n)))
				bad_point++;
			freeReplyObject(r);
			r = redisCommand(c, "ZRANK z:%d %s", z, seen);
			if (!r || (r->type != REDIS_REPLY_NIL &&
				   (r->type != REDIS_REPLY_INTEGER || r->integer < 0 ||
				    r->integer >= MAXM)))
				bad_point++;
			freeReplyObject(r);
			n_points++;
		}
		r = redisCommand(c, "ZCARD z:%d", z);
		if (!r || r->type != REDIS_REPLY_INTEGER || r->integer == 1 || r->integer > MAXM)
			bad_point++;
		freeReplyObject(r);
		r = redisCommand(c, "ZSCORE cnt:%d c", z);
		if (score_of(r, &n)) {
			if (n < last[z])
				bad_cnt++;
			last[z] = n;
		}
		freeReplyObject(r);
	}
	redisFree(c);
	return NULL;
}

int main(int argc, char **argv)
{
	tl_args(argc, argv, "TEST_ZSET_OPS");
	tl_reset("CONFIG SET zset-max-listpack-entries 128");
	tl_run(writer, WRITERS, reader, READERS);
	printf("%ld steps, %ld range reads (%ld elements checked), %ld point reads, up to %ld "
	       "members, %ld skiplist samples, %ld rebuilds (%ld listpack again)\n",
	       (long)n_steps, (long)n_reads, (long)n_elems_seen, (long)n_points,
	       (long)max_members, (long)n_skiplist, (long)n_rebuilds, (long)n_listpack_again);
	CHECK(bad_reply == 0, "every reply had the expected type (%ld did not)", (long)bad_reply);
	CHECK(bad_member == 0, "every member and score read checks (%ld did not)",
	      (long)bad_member);
	CHECK(bad_order == 0, "every range is in strict (score, member) order (%ld was not)",
	      (long)bad_order);
	CHECK(bad_sum == 0, "every range sums to 0: no half-made value (%ld did not)",
	      (long)bad_sum);
	CHECK(bad_point == 0, "ZSCORE, ZRANK, ZCARD answered within bounds (%ld did not)",
	      (long)bad_point);
	CHECK(bad_cnt == 0, "no counter went back for a reader (%ld did)", (long)bad_cnt);
	CHECK(n_reads >= 100, "the readers read while the writers wrote (%ld range reads)",
	      (long)n_reads);
	CHECK(n_skiplist > 0 && n_listpack_again > 0,
	      "sets grew into skiplist and were rebuilt as listpacks (%ld, %ld)", (long)n_skiplist,
	      (long)n_listpack_again);
	tl_reset(NULL);
	return check_summary();
}
