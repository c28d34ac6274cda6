/*
 * tests/server/test_list_torture.c - list readers never see a half-made or
 * freed version (issue 17, lists), with hiredis.  Runs against the server at
 * --port P (tests/server/test_list.sh starts rcukv-server with --threads 2
 * and RCUKV_POISON_FREES=1, so a root or chunk freed before its readers are
 * done reads as 0x6b bytes; then a redis-server, which proves the checks):
 *
 *   writers  WRITERS clients, each owning LISTS / WRITERS lists whose
 *            elements encode their own value: the list always holds the
 *            consecutive integers lo..hi, each element "<n>:<checksum>"
 *            padded to ELEN bytes.  Steps (pipelined PIPE at a time on
 *            one list, so its replaced versions are retired fast): RPUSH hi+1..hi+k, LPUSH
 *            lo-1..lo-k, LPOP k, RPOP k, LTRIM of a few from both ends,
 *            LSET of an element to itself; lists grow to MAXLEN and shrink
 *            to empty (the key goes and comes back).
 *   readers  READERS clients LRANGE a whole list or a random range, LINDEX
 *            a random index and LLEN: every element checks, and the elements
 *            of one LRANGE are consecutive integers (one command sees one
 *            version), whatever the writers do.
 * Bounded: TEST_LIST_OPS steps per writer (default 60000).  Ends with
 * "N passed, M failed, K skipped" and reports what it exercised.
 */
#include "tests/check.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WRITERS 2
#define READERS 2
#define LISTS 4
#define MAXLEN 6000
#define ELEN 300 /* 26 a chunk: up to 230 chunks, 4 segments */
#define PIPE 64

static int port;
static long ops = 60000;
static atomic_int writers_left;
static atomic_long n_reads, n_elems, bad_elem, bad_seq, bad_reply, n_steps, max_seen;

#include "tests/server/torture_lib.h"

static uint32_t sum_of(long long n)
{
	uint64_t h = (uint64_t)n * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 29);
}

static void enc(char *out, long long n)
{
	int k = snprintf(out, ELEN + 1, "%lld:%08x:", n, sum_of(n));

	memset(out + k, 'p', (size_t)(ELEN - k));
	out[ELEN] = 0;
}

/* 0 and *n, or -1 for a bad element. */
static int check_elem(const char *v, size_t vl, long long *n)
{
	char want[ELEN + 1];

	if (vl != ELEN || sscanf(v, "%lld:", n) != 1)
		return -1;
	enc(want, *n);
	return memcmp(want, v, ELEN) ? -1 : 0;
}

struct lmodel {
	long long lo, hi; /* holds lo..hi; empty when lo > hi */
	int grow;	  /* growing to MAXLEN, or shrinking to empty */
};

static void append(redisContext *c, int argc, const char **argv, const size_t *lens)
{
	redisAppendCommandArgv(c, argc, argv, lens);
}

/* One step on list @l (model @m), appended to the pipeline. */
static void step(redisContext *c, int l, struct lmodel *m, uint64_t *s)
{
	static __thread char bufs[16][ELEN + 1];
	const char *argv[20];
	size_t lens[20];
	char key[16], a1[24], a2[24];
	long long len = m->hi - m->lo + 1;
	int op = (int)(rnd(s) % 6), k = 1 + (int)(rnd(s) % 12);

	snprintf(key, sizeof(key), "tl:%d", l);
	argv[1] = key;
	lens[1] = strlen(key);
	if (len + k > MAXLEN)
		m->grow = 0;
	else if (len == 0)
		m->grow = 1;
	if (op < 4 && rnd(s) % 8) /* mostly the phase's way */
		op = (m->grow ? 0 : 2) + op % 2;
	switch (op) {
	case 0: /* RPUSH hi+1.. */
	case 1: /* LPUSH lo-1.. */
		argv[0] = op == 0 ? "RPUSH" : "LPUSH";
		for (int i = 0; i < k; i++) {
			long long n = op == 0 ? m->hi + 1 + i : m->lo - 1 - i;

			if (len == 0 && i == 0) /* empty: restart anywhere */
				n = op == 0 ? m->hi + 1 : m->lo - 1;
			enc(bufs[i], n);
			argv[2 + i] = bufs[i];
			lens[2 + i] = ELEN;
		}
		if (len == 0) {
			if (op == 0)
				m->lo = m->hi + 1;
			else
				m->hi = m->lo - 1;
		}
		if (op == 0)
			m->hi += k;
		else
			m->lo -= k;
		for (int i = 0; i < 2; i++)
			lens[i] = strlen(argv[i]);
		append(c, 2 + k, argv, lens);
		return;
	case 2: /* LPOP k */
	case 3: /* RPOP k */
		if (len < k)
			k = (int)len;
		if (k == 0)
			k = 1;
		argv[0] = op == 2 ? "LPOP" : "RPOP";
		snprintf(a1, sizeof(a1), "%d", k);
		argv[2] = a1;
		lens[0] = 4;
		lens[2] = strlen(a1);
		append(c, 3, argv, lens);
		if (len <= k) {
			m->lo = m->hi + 1;
		} else if (op == 2) {
			m->lo += k;
		} else {
			m->hi -= k;
		}
		return;
	case 4: { /* LTRIM a few from both ends */
		int a = (int)(rnd(s) % 4), b = (int)(rnd(s) % 4);

		argv[0] = "LTRIM";
		snprintf(a1, sizeof(a1), "%d", a);
		snprintf(a2, sizeof(a2), "%d", -1 - b);
		argv[2] = a1;
		argv[3] = a2;
		lens[0] = 5;
		lens[2] = strlen(a1);
		lens[3] = strlen(a2);
		append(c, 4, argv, lens);
		if (len - a - b <= 0)
			m->lo = m->hi + 1;
		else {
			m->lo += a;
			m->hi -= b;
		}
		return;
	}
	default: { /* LSET an element to itself (a new version, same content) */
		long long i;

		if (len == 0) {
			argv[0] = "LLEN";
			lens[0] = 4;
			append(c, 2, argv, lens);
			return;
		}
		i = (long long)(rnd(s) % (uint64_t)len);
		enc(bufs[0], m->lo + i);
		snprintf(a1, sizeof(a1), "%lld", i);
		argv[0] = "LSET";
		argv[2] = a1;
		argv[3] = bufs[0];
		lens[0] = 4;
		lens[2] = strlen(a1);
		lens[3] = ELEN;
		append(c, 4, argv, lens);
		return;
	}
	}
}

static void *writer(void *arg)
{
	long id = (long)arg;
	redisContext *c = conn();
	struct lmodel m[LISTS];
	uint64_t s = 0x1234567ull + (uint64_t)id * 7919;
	redisReply *r;

	for (int l = 0; l < LISTS; l++) {
		m[l].lo = 1000000;
		m[l].hi = m[l].lo - 1;
		m[l].grow = 1;
		if (l % WRITERS == id) {
			char key[16];

			snprintf(key, sizeof(key), "tl:%d", l);
			r = redisCommand(c, "DEL %s", key);
			freeReplyObject(r);
		}
	}
	for (long i = 0; i < ops; i += PIPE) {
		/* One list per burst: its stripe retires PIPE versions in a row,
		 * so a version parked for company is freed soon after (ht.h). */
		int l = (int)(rnd(&s) % (LISTS / WRITERS)) * WRITERS + (int)id;

		for (int j = 0; j < PIPE; j++)
			step(c, l, &m[l], &s);
		for (int j = 0; j < PIPE; j++) {
			if (redisGetReply(c, (void **)&r) != REDIS_OK || !r) {
				fprintf(stderr, "writer %ld: connection lost\n", id);
				atomic_fetch_add(&bad_reply, 1);
				goto out;
			}
			if (r->type == REDIS_REPLY_ERROR) {
				fprintf(stderr, "writer %ld: error %s\n", id, r->str);
				atomic_fetch_add(&bad_reply, 1);
			}
			freeReplyObject(r);
		}
		atomic_fetch_add(&n_steps, PIPE);
	}
out:
	atomic_fetch_sub(&writers_left, 1);
	redisFree(c);
	return NULL;
}

/* One LRANGE: every element checks and they are consecutive. */
static void read_range(redisContext *c, int l, uint64_t *s)
{
	redisReply *r;
	long long prev = 0, n;
	int whole = rnd(s) % 2;
	long a = (long)(rnd(s) % 3000), b = a + (long)(rnd(s) % 3000);

	r = whole ? redisCommand(c, "LRANGE tl:%d 0 -1", l)
		  : redisCommand(c, "LRANGE tl:%d %ld %ld", l, a, b);
	if (!r || r->type != REDIS_REPLY_ARRAY) {
		atomic_fetch_add(&bad_reply, 1);
		if (r)
			freeReplyObject(r);
		return;
	}
	for (size_t i = 0; i < r->elements; i++) {
		redisReply *e = r->element[i];

		if (e->type != REDIS_REPLY_STRING || check_elem(e->str, e->len, &n) < 0) {
			if (atomic_fetch_add(&bad_elem, 1) < 5)
				printf("bad element tl:%d[%zu]: %.*s\n", l, i,
				       e->type == REDIS_REPLY_STRING ? (int)e->len : 0,
				       e->type == REDIS_REPLY_STRING ? e->str : "");
			break;
		}
		if (i && n != prev + 1) {
			if (atomic_fetch_add(&bad_seq, 1) < 5)
				printf("tl:%d: element %zu is %lld after %lld\n", l, i, n, prev);
			break;
		}
		prev = n;
	}
	atomic_fetch_add(&n_elems, (long)r->elements);
	if ((long)r->elements > atomic_load(&max_seen))
		atomic_store(&max_seen, (long)r->elements);
	freeReplyObject(r);
}

static void *reader(void *arg)
{
	redisContext *c = conn();
	uint64_t s = 0xabcdefull + (uint64_t)(long)arg * 104729;
	redisReply *r;
	long long n;

	while (atomic_load(&writers_left) > 0) {
		int l = (int)(rnd(&s) % LISTS);

		read_range(c, l, &s);
		r = redisCommand(c, "LINDEX tl:%d %d", l, (int)(rnd(&s) % 3000) - 1500);
		if (!r || (r->type != REDIS_REPLY_NIL &&
			   (r->type != REDIS_REPLY_STRING || check_elem(r->str, r->len, &n) < 0))) {
			if (atomic_fetch_add(&bad_elem, 1) < 5)
				printf("bad LINDEX reply on tl:%d\n", l);
		}
		if (r)
			freeReplyObject(r);
		r = redisCommand(c, "LLEN tl:%d", l);
		if (!r || r->type != REDIS_REPLY_INTEGER || r->integer < 0 || r->integer > MAXLEN + 20)
			atomic_fetch_add(&bad_reply, 1);
		if (r)
			freeReplyObject(r);
		atomic_fetch_add(&n_reads, 1);
	}
	redisFree(c);
	return NULL;
}

int main(int argc, char **argv)
{
	tl_args(argc, argv, "TEST_LIST_OPS");
	tl_run(writer, WRITERS, reader, READERS);
	printf("# %ld steps, %ld reads, %ld elements checked, longest list read %ld\n",
	       atomic_load(&n_steps), atomic_load(&n_reads), atomic_load(&n_elems),
	       atomic_load(&max_seen));
	CHECK(atomic_load(&bad_elem) == 0, "bad elements read: %ld", atomic_load(&bad_elem));
	CHECK(atomic_load(&bad_seq) == 0, "LRANGEs not consecutive: %ld", atomic_load(&bad_seq));
	CHECK(atomic_load(&bad_reply) == 0, "bad replies: %ld", atomic_load(&bad_reply));
	CHECK(atomic_load(&n_reads) >= 100, "readers read (%ld rounds)", atomic_load(&n_reads));
	CHECK(atomic_load(&max_seen) >= 1000, "lists grew past one chunk (longest read %ld)",
	      atomic_load(&max_seen));
	return check_summary();
}
