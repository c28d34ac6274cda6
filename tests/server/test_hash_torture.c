/*
 * tests/server/test_hash_torture.c - hash readers never see a half-made or
 * freed value (issue 17), with hiredis.  Runs against the server at --port P
 * (tests/server/test_hash.sh starts rcukv-server with --threads 2 and
 * RCUKV_POISON_FREES=1, so a value freed before its readers are done reads
 * as 0x6b bytes, then a redis-server, which proves the checks):
 *
 *   writers  WRITERS clients, each owning HASHES / WRITERS hashes and a model
 *            of them: every value is "<n>:<checksum of field and n>" and the
 *            values of a hash sum to 0 (values padded to 60 bytes: a hash
 *            of 1000 fields passes the table's 64 KiB retire batch, so an
 *            old copy goes to call_rcu() at once).  Each step is one command that keeps
 *            that: HSET of two fields moving an amount between them, HSET
 *            of a new field at 0, or emptying a field into another (one
 *            HSET) then HDEL of the emptied field; hashes grow past
 *            hash-max-listpack-entries (512) into the hashtable encoding
 *            and shrink back; HINCRBY cnt:<h> c 1 counts the steps.
 *   readers  READERS clients HGETALL a random hash and check every value's
 *            checksum and the sum; HGET a random field (a present one must
 *            check); HGET cnt:<h> c never goes back (per reader).
 * Bounded: TEST_HASH_OPS steps per writer (default 6000).  At the end: no
 * reader saw a bad value, a bad sum or a counter going back; the readers
 * read often enough, and some hash was hashtable-encoded at some point (it
 * reports what it exercised).  Ends with "N passed, M failed, K skipped".
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
#define HASHES 4
#define MAXF 1000 /* fields per hash at most: past 512, hashtable-encoded */
/* Values are padded to VLEN bytes: a hash of MAXF fields is then over the
 * table's HT_RETIRE_BYTES (64 KiB), so each write sends the old copy to
 * call_rcu() at once rather than parking it for 31 more writes, and a
 * broken grace period frees it under its readers. */
#define VLEN 60

static int port;
static long ops = 6000;
static atomic_int writers_left;
static atomic_long n_reads, n_fields_seen, n_gets, bad_val, bad_sum, bad_cnt, bad_reply;
static atomic_long n_hashtable, n_steps, max_fields;

#include "tests/server/torture_lib.h"

static uint32_t sum_of(const char *f, size_t fl, long long n)
{
	char buf[32];
	uint32_t h = 2166136261u;
	int k = snprintf(buf, sizeof(buf), ":%lld", n);

	for (size_t i = 0; i < fl; i++)
		h = (h ^ (unsigned char)f[i]) * 16777619u;
	for (int i = 0; i < k; i++)
		h = (h ^ (unsigned char)buf[i]) * 16777619u;
	return h;
}

static void enc(char *out, size_t len, const char *f, long long n)
{
	int k = snprintf(out, len, "%lld:%08x:", n, sum_of(f, strlen(f), n));

	while (k < VLEN && (size_t)k + 1 < len)
		out[k++] = 'p';
	out[k] = 0;
}

/* Value @v of field @f: 1 and *n if it checks. */
static int check_val(const char *f, size_t fl, const char *v, size_t vl, long long *n)
{
	char buf[128], *colon, *end;
	unsigned long want;

	if (vl == 0 || vl >= sizeof(buf))
		return 0;
	memcpy(buf, v, vl);
	buf[vl] = 0;
	colon = strchr(buf, ':');
	if (!colon)
		return 0;
	*colon = 0;
	*n = strtoll(buf, &end, 10);
	if (*end)
		return 0;
	want = strtoul(colon + 1, &end, 16);
	if (*end != ':' || want != sum_of(f, fl, *n))
		return 0;
	for (end++; *end == 'p'; end++)
		;
	return !*end && vl >= VLEN;
}

struct hmodel {
	int id;
	int nf;
	int grow;  /* growing toward MAXF fields, else shrinking toward 2 */
	long next; /* the next new field's number */
	long fid[MAXF];
	long long val[MAXF];
};

static void cmd_ok(redisContext *c, redisReply *r)
{
	tl_cmd_ok(c, r, &bad_reply);
}

static void fname(char *out, size_t len, long id)
{
	snprintf(out, len, "field:%ld", id);
}

/* HSET h fa va fb vb for fields at model slots @i and @j. */
static void hset2(redisContext *c, struct hmodel *m, int i, int j)
{
	char fa[32], fb[32], va[128], vb[128];

	fname(fa, sizeof(fa), m->fid[i]);
	fname(fb, sizeof(fb), m->fid[j]);
	enc(va, sizeof(va), fa, m->val[i]);
	enc(vb, sizeof(vb), fb, m->val[j]);
	cmd_ok(c, redisCommand(c, "HSET h:%d %s %s %s %s", m->id, fa, va, fb, vb));
}

static void step(redisContext *c, struct hmodel *m, uint64_t *s)
{
	int op = (int)(rnd(s) % 10), i = (int)(rnd(s) % (uint64_t)m->nf), j;
	char f[32], v[128];

	do
		j = (int)(rnd(s) % (uint64_t)m->nf);
	while (j == i);
	/* phases: grow to MAXF, then shrink to 2, and again */
	if (op < 6 && (m->grow ? m->nf < MAXF : m->nf > 2))
		op = m->grow ? 10 : 11;
	if (op == 10) { /* a new field at 0 */
		m->fid[m->nf] = m->next++;
		m->val[m->nf] = 0;
		fname(f, sizeof(f), m->fid[m->nf]);
		enc(v, sizeof(v), f, 0);
		m->nf++;
		cmd_ok(c, redisCommand(c, "HSET h:%d %s %s", m->id, f, v));
		if (m->nf == MAXF)
			m->grow = 0;
	} else if (op == 11) { /* empty field j into i, then delete it */
		m->val[i] += m->val[j];
		m->val[j] = 0;
		hset2(c, m, i, j);
		fname(f, sizeof(f), m->fid[j]);
		cmd_ok(c, redisCommand(c, "HDEL h:%d %s", m->id, f));
		m->fid[j] = m->fid[m->nf - 1];
		m->val[j] = m->val[m->nf - 1];
		m->nf--;
		if (m->nf == 2)
			m->grow = 1;
	} else { /* move an amount */
		long long d = (long long)(rnd(s) % 1000) - 500;

		m->val[i] += d;
		m->val[j] -= d;
		hset2(c, m, i, j);
	}
	if (m->nf > max_fields)
		max_fields = m->nf;
	cmd_ok(c, redisCommand(c, "HINCRBY cnt:%d c 1", m->id));
	n_steps++;
}

static void *writer(void *arg)
{
	int w = (int)(uintptr_t)arg;
	redisContext *c = conn();
	struct hmodel *m = calloc(HASHES / WRITERS, sizeof(*m));
	uint64_t s = 0x9e3779b97f4a7c15ULL * (uint64_t)(w + 1);

	for (int k = 0; k < HASHES / WRITERS; k++) {
		char fa[32], fb[32], va[128], vb[128];

		m[k].id = w + k * WRITERS;
		m[k].nf = 2;
		m[k].fid[0] = 0;
		m[k].fid[1] = 1;
		m[k].next = 2;
		m[k].grow = 1;
		fname(fa, sizeof(fa), 0);
		fname(fb, sizeof(fb), 1);
		enc(va, sizeof(va), fa, 0);
		enc(vb, sizeof(vb), fb, 0);
		cmd_ok(c, redisCommand(c, "HSET h:%d %s %s %s %s", m[k].id, fa, va, fb, vb));
	}
	for (long n = 0; n < ops; n++) {
		struct hmodel *h = &m[n % (HASHES / WRITERS)];
		redisReply *r;

		step(c, h, &s);
		if (n % 97 == 0) {
			r = redisCommand(c, "OBJECT ENCODING h:%d", h->id);
			if (r && r->type == REDIS_REPLY_STRING && !strcmp(r->str, "hashtable"))
				n_hashtable++;
			freeReplyObject(r);
		}
	}
	free(m);
	redisFree(c);
	writers_left--;
	return NULL;
}

static void read_all(redisContext *c, int h)
{
	redisReply *r = redisCommand(c, "HGETALL h:%d", h);
	long long sum = 0, n;

	if (!r || r->type != REDIS_REPLY_ARRAY || r->elements % 2) {
		bad_reply++;
		freeReplyObject(r);
		return;
	}
	for (size_t i = 0; i + 1 < r->elements; i += 2) {
		redisReply *f = r->element[i], *v = r->element[i + 1];

		if (!check_val(f->str, f->len, v->str, v->len, &n)) {
			if (bad_val++ < 5)
				fprintf(stderr, "bad value of %.*s: %.*s\n", (int)f->len, f->str,
					(int)(v->len > 40 ? 40 : v->len), v->str);
		}
		sum += n;
	}
	if (r->elements && sum != 0 && bad_sum++ < 5)
		fprintf(stderr, "h:%d: %zu fields sum to %lld\n", h, r->elements / 2, sum);
	n_fields_seen += (long)r->elements / 2;
	n_reads++;
	freeReplyObject(r);
}

static void *reader(void *arg)
{
	redisContext *c = conn();
	uint64_t s = 0xdeadbeefULL * (uint64_t)((uintptr_t)arg + 7);
	long long last[HASHES] = {0};

	while (writers_left > 0) {
		int h = (int)(rnd(&s) % HASHES);
		redisReply *r;
		long long n;
		char f[32];

		read_all(c, h);
		fname(f, sizeof(f), (long)(rnd(&s) % 64));
		r = redisCommand(c, "HGET h:%d %s", h, f);
		if (!r || (r->type != REDIS_REPLY_NIL && r->type != REDIS_REPLY_STRING))
			bad_reply++;
		else if (r->type == REDIS_REPLY_STRING && !check_val(f, strlen(f), r->str, r->len, &n))
			bad_val++;
		n_gets++;
		freeReplyObject(r);
		r = redisCommand(c, "HGET cnt:%d c", h);
		if (r && r->type == REDIS_REPLY_STRING) {
			n = atoll(r->str);
			if (n < last[h])
				bad_cnt++;
			last[h] = n;
		}
		freeReplyObject(r);
	}
	redisFree(c);
	return NULL;
}

int main(int argc, char **argv)
{
	tl_args(argc, argv, "TEST_HASH_OPS");
	tl_reset("CONFIG SET hash-max-listpack-entries 512");
	tl_run(writer, WRITERS, reader, READERS);
	printf("%ld steps, %ld HGETALLs (%ld fields checked), %ld HGETs, up to %ld fields, "
	       "%ld hashtable-encoded samples\n",
	       (long)n_steps, (long)n_reads, (long)n_fields_seen, (long)n_gets, (long)max_fields,
	       (long)n_hashtable);
	CHECK(bad_reply == 0, "every reply had the expected type (%ld did not)", (long)bad_reply);
	CHECK(bad_val == 0, "every value read checks against its field (%ld did not)",
	      (long)bad_val);
	CHECK(bad_sum == 0, "every HGETALL sums to 0: no half-made value (%ld did not)",
	      (long)bad_sum);
	CHECK(bad_cnt == 0, "no counter went back for a reader (%ld did)", (long)bad_cnt);
	CHECK(n_reads >= 100, "the readers read while the writers wrote (%ld HGETALLs)",
	      (long)n_reads);
	CHECK(n_hashtable > 0, "hashes grew into the hashtable encoding (%ld samples)",
	      (long)n_hashtable);
	tl_reset(NULL);
	return check_summary();
}
