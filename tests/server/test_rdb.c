/*
 * test_rdb.c - tests of the RDB format layer (server/rdb.c, issue 8).
 *
 * With no arguments: unit tests.  CRC64 vectors; exact bytes of every length
 * and string encoding; round trips through rdb_save_file()/rdb_load_file()
 * with binary keys, empty keys and values, several-MiB values, integers,
 * compressible values and expiries (already expired keys flagged), under all
 * four compression/checksum settings; hand-made files with every opcode and
 * value type the reader must parse or skip; a flip-each-byte and
 * truncate-at-each-offset sweep plus random corruption and absurd lengths;
 * a save under RLIMIT_FSIZE (disk full, EFBIG), without write permission
 * (EACCES), into a missing directory, with a failing iterator, and one
 * killed by SIGKILL part way, each of which must keep the old file; a file
 * written by redis-server 7.0.15 (tests/server/rdb-corpus/, every type and
 * encoding it writes) loaded, skipped, and swept with flipped bytes and
 * truncations; DUMP payloads (exact bytes, round trips, a flip and cut
 * sweep).  Run from the repository root (or set RDB_CORPUS to the
 * corpus folder).  Ends with "N passed, M failed, K skipped" (tests/check.h).
 *
 * Tool modes, used by tests/server/rdb_redis.sh:
 *   test_rdb write FILE BASE_MS [compress] [checksum] [small]
 *        write the fixed data set D(BASE_MS) with rdb_save_file() (small:
 *        its first 20 keys only)
 *   test_rdb verify-lines FILE BASE_MS
 *        FILE holds "hexkey hexval-or-summary pttl" lines from redis-cli;
 *        check they are exactly D(BASE_MS) without its expired keys
 *   test_rdb verify-rdb FILE BASE_MS
 *        load FILE with the reader and check it holds exactly D(BASE_MS)
 *        without its expired keys
 *   test_rdb records FILE     "hexkey hexrecord" per string key, for
 *                             byte-for-byte comparison with redis-server
 *   test_rdb load FILE [skip] print stats (and the error) of a load
 *   test_rdb print FILE       "hexkey hexval expire_ms expired" per key
 */
#include "server/rdb.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/check.h"


static char tmpdir[256];

static void path_in(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", tmpdir, name);
}

/* ------------------------------------------------------------ data sets */

struct kv {
	unsigned char *key;
	size_t klen;
	unsigned char *val;
	size_t vlen;
	int64_t expire;
	int seen;
};

struct set {
	struct kv *v;
	size_t n, cap, pos;
};

static void set_add(struct set *s, const void *k, size_t kl, const void *v, size_t vl, int64_t exp)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			abort();
	}
	struct kv *e = &s->v[s->n++];

	e->key = malloc(kl + 1);
	e->val = malloc(vl + 1);
	if (!e->key || !e->val)
		abort();
	memcpy(e->key, k, kl);
	memcpy(e->val, v, vl);
	e->klen = kl;
	e->vlen = vl;
	e->expire = exp;
	e->seen = 0;
}

static void set_adds(struct set *s, const char *k, const char *v, int64_t exp)
{
	set_add(s, k, strlen(k), v, strlen(v), exp);
}

static void set_free(struct set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].key);
		free(s->v[i].val);
	}
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

#define BIG_LEN (3u * 1024 * 1024 + 7)

/* D(base): the fixed data set shared with the scripts. */
static void make_dataset(struct set *s, int64_t base)
{
	unsigned char bin[256], *big;
	char k[32], v[32];

	set_adds(s, "plain", "hello", -1);
	set_add(s, "", 0, "value of the empty key", 22, -1);
	set_adds(s, "empty", "", -1);
	for (int i = 0; i < 256; i++)
		bin[i] = (unsigned char)i;
	set_add(s, "\0\xff\r\n bin\0", 10, bin, 256, base + 3600 * 1000);
	set_adds(s, "i8", "-128", -1);
	set_adds(s, "i8b", "127", -1);
	set_adds(s, "i16", "32767", -1);
	set_adds(s, "i16n", "-32768", -1);
	set_adds(s, "i32", "-2147483648", -1);
	set_adds(s, "i32b", "2147483647", -1);
	set_adds(s, "i32over", "2147483648", -1);
	set_adds(s, "i64", "9223372036854775807", -1);
	set_adds(s, "i64n", "-9223372036854775808", -1);
	set_adds(s, "zero", "0", -1);
	set_adds(s, "lead0", "007", -1);
	set_adds(s, "neg0", "-0", -1);
	set_adds(s, "plus", "+5", -1);
	set_adds(s, "space", " 5", -1);
	set_adds(s, "12345", "integer key", -1);
	set_adds(s, "-7", "negative integer key", base + 7200 * 1000);
	set_adds(s, "len20", "aaaaaaaaaaaaaaaaaaaa", -1);
	set_adds(s, "len21", "aaaaaaaaaaaaaaaaaaaaa", -1);
	set_adds(s, "len63", "abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc", -1);
	{
		char *c = malloc(16384 + 1);

		for (int i = 0; i < 16384; i++)
			c[i] = "abcd"[i % 4];
		set_add(s, "compressible", 12, c, 16384, base + 86400 * 1000);
		set_add(s, "c16383", 6, c, 16383, -1);
		free(c);
	}
	big = malloc(BIG_LEN);
	for (size_t i = 0; i < BIG_LEN; i++)
		big[i] = (unsigned char)(rnd() >> 32);
	set_add(s, "big-random", 10, big, BIG_LEN, -1);
	for (size_t i = 0; i < BIG_LEN; i++)
		big[i] = (unsigned char)"0123456789"[(i / 7) % 10];
	set_add(s, "big-compressible", 16, big, BIG_LEN, base + 600 * 1000);
	free(big);
	set_adds(s, "ttl-past", "gone", base - 10 * 1000);
	set_adds(s, "ttl-far", "later", base + 10LL * 86400 * 1000);
	for (int i = 0; i < 1000; i++) {
		snprintf(k, sizeof(k), "k:%d", i);
		snprintf(v, sizeof(v), "%d", i * 37 - 5000);
		set_adds(s, k, v, i % 3 == 0 ? base + 1000000 + i : -1);
	}
}

static int set_next(void *arg, struct rdb_item *it)
{
	struct set *s = arg;
	struct kv *e;

	if (s->pos == s->n)
		return 0;
	e = &s->v[s->pos++];
	it->dbnum = 0;
	it->key = e->key;
	it->klen = e->klen;
	it->val = e->val;
	it->vlen = e->vlen;
	it->expire_ms = e->expire;
	return 1;
}

static void set_db_size(void *arg, uint32_t db, uint64_t *keys, uint64_t *exp)
{
	struct set *s = arg;

	(void)db;
	*keys = s->n;
	*exp = 0;
	for (size_t i = 0; i < s->n; i++)
		*exp += s->v[i].expire != -1;
}

static int save_set(const char *path, struct set *s, const struct rdb_opts *o)
{
	struct rdb_source src = {set_next, set_db_size, s};

	s->pos = 0;
	return rdb_save_file(NULL, path, o, &src, NULL);
}

static struct kv *set_find(struct set *s, const void *k, size_t kl)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].klen == kl && memcmp(s->v[i].key, k, kl) == 0)
			return &s->v[i];
	return NULL;
}

/* Loader callback comparing against a set. */
struct cmp {
	struct set *s;
	int64_t now;
	long mismatches;
	long unknown;
	long dup;
	bool drop_expired; /* the file comes from Redis: expired keys absent */
};

static int cmp_kv(void *arg, const struct rdb_kv *kv)
{
	struct cmp *c = arg;
	struct kv *e = set_find(c->s, kv->key, kv->klen);

	if (!e) {
		c->unknown++;
		return 0;
	}
	if (e->seen++)
		c->dup++;
	if (e->vlen != kv->vlen || memcmp(e->val, kv->val, kv->vlen) != 0 ||
	    e->expire != kv->expire_ms || kv->expired != (e->expire != -1 && e->expire < c->now)) {
		if (c->mismatches++ < 5)
			fprintf(
			    stderr,
			    "mismatch on key of %zu bytes (vlen %zu vs %zu, expire %lld vs %lld)\n",
			    kv->klen, e->vlen, kv->vlen, (long long)e->expire,
			    (long long)kv->expire_ms);
	}
	return 0;
}

/* 0 when the file holds exactly s (less expired keys when drop_expired). */
static int verify_file(const char *path, struct set *s, int64_t now, bool drop_expired,
		       struct rdb_load_stats *st)
{
	struct cmp c = {s, now, 0, 0, 0, drop_expired};
	struct rdb_load_cbs cb = {.string_kv = cmp_kv, .arg = &c};
	struct rdb_load_opts o = {.now_ms = now};
	char err[256];
	long missing = 0;
	int r;

	for (size_t i = 0; i < s->n; i++)
		s->v[i].seen = 0;
	r = rdb_load_file(path, &cb, &o, st, err, sizeof(err));
	if (r) {
		fprintf(stderr, "load %s: %d %s\n", path, r, err);
		return r;
	}
	for (size_t i = 0; i < s->n; i++) {
		bool exp = s->v[i].expire != -1 && s->v[i].expire < now;

		if (!s->v[i].seen && !(drop_expired && exp))
			missing++;
	}
	if (c.mismatches || c.unknown || c.dup || missing) {
		fprintf(stderr, "%s: %ld mismatched, %ld unknown, %ld duplicate, %ld missing\n",
			path, c.mismatches, c.unknown, c.dup, missing);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- helpers */

static unsigned char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *p = NULL;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n + 1);
	if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return p;
}

static int write_all(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int r;

	if (!f)
		return -1;
	r = fwrite(p, 1, n, f) == n ? 0 : -1;
	if (fclose(f))
		r = -1;
	return r;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Record bytes of each string key, captured by the loader. */
struct rec {
	const char *path;
	unsigned char *file;
	unsigned char key[64];
	size_t klen;
	unsigned char bytes[64];
	size_t n;
	int found;
};

static int rec_kv(void *arg, const struct rdb_kv *kv)
{
	struct rec *r = arg;

	if (kv->klen == r->klen && memcmp(kv->key, r->key, r->klen) == 0) {
		r->n = (size_t)(kv->end - kv->offset);
		if (r->n > sizeof(r->bytes))
			r->n = sizeof(r->bytes);
		memcpy(r->bytes, r->file + kv->offset, r->n);
		r->found++;
	}
	return 0;
}

/* Write one key with rdb_writer and return its record bytes. */
static size_t one_record(const char *key, const void *val, size_t vlen, int64_t exp, bool compress,
			 unsigned char *out)
{
	char path[300];
	struct rdb_opts o = {.compress = compress, .checksum = true, .used_mem = -1};
	struct rdb_writer *w;
	struct rec r = {0};
	struct rdb_load_cbs cb = {.string_kv = rec_kv, .arg = &r};
	size_t flen;
	int fd;

	path_in(path, sizeof(path), "one.rdb");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	w = rdb_writer_new(fd, &o);
	rdb_write_db_header(w, 0, 1, exp != -1);
	rdb_write_string_kv(w, key, strlen(key), val, vlen, exp);
	if (rdb_writer_finish(w))
		abort();
	rdb_writer_free(w);
	close(fd);
	r.file = read_all(path, &flen);
	r.klen = strlen(key);
	memcpy(r.key, key, r.klen);
	if (rdb_load_file(path, &cb, NULL, NULL, NULL, 0) || r.found != 1)
		r.n = 0;
	memcpy(out, r.bytes, r.n);
	free(r.file);
	return r.n;
}

/* ---------------------------------------------------------------- tests */

static void test_crc64(void)
{
	unsigned char buf[1000];
	uint64_t whole, parts = 0;

	CHECK(rdb_crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9caULL, "crc64(123456789) = %016llx",
	      (unsigned long long)rdb_crc64(0, "123456789", 9));
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(rnd() >> 40);
	whole = rdb_crc64(0, buf, sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i += 7)
		parts = rdb_crc64(parts, buf + i, sizeof(buf) - i < 7 ? sizeof(buf) - i : 7);
	CHECK(whole == parts, "crc64 in pieces %016llx vs %016llx", (unsigned long long)parts,
	      (unsigned long long)whole);
	CHECK(rdb_crc64(0, "", 0) == 0, "crc64 of nothing");
}

static void expect_rec(const char *key, const char *val, size_t vlen, int64_t exp, bool compress,
		       const unsigned char *want, size_t wlen, const char *what)
{
	unsigned char got[64];
	size_t n = one_record(key, val, vlen, exp, compress, got);

	CHECK(n == wlen && memcmp(got, want, n) == 0, "%s: record of %zu bytes differs", what, n);
}

static void test_encodings(void)
{
	static const unsigned char r_small[] = {0, 1, 'a', 0xC0, 0x7B};
	static const unsigned char r_i8n[] = {0, 1, 'a', 0xC0, 0x80};
	static const unsigned char r_i16[] = {0, 1, 'a', 0xC1, 0x7F, 0xFF};
	static const unsigned char r_i16n[] = {0, 1, 'a', 0xC1, 0x7F, 0xFF - 0};
	static const unsigned char r_i32[] = {0, 1, 'a', 0xC2, 0x00, 0x00, 0x01, 0x00};
	static const unsigned char r_i32min[] = {0, 1, 'a', 0xC2, 0, 0, 0, 0x80};
	static const unsigned char r_big[] = {0,   1,	'a', 10,  '2', '1', '4',
					      '7', '4', '8', '3', '6', '4', '8'};
	static const unsigned char r_lead0[] = {0, 1, 'a', 4, '0', '1', '2', '3'};
	static const unsigned char r_neg0[] = {0, 1, 'a', 2, '-', '0'};
	static const unsigned char r_ikey[] = {0, 0xC1, 0x39, 0x30, 1, 'v'};
	static const unsigned char r_exp[] = {
	    0xFC, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0, 1, 'a', 0,
	};
	unsigned char got[64];
	char *s;
	size_t n;

	expect_rec("a", "123", 3, -1, false, r_small, sizeof(r_small), "int8 123");
	expect_rec("a", "-128", 4, -1, false, r_i8n, sizeof(r_i8n), "int8 -128");
	expect_rec("a", "-129", 4, -1, false, r_i16n, sizeof(r_i16n), "int16 -129");
	(void)r_i16;
	expect_rec("a", "65536", 5, -1, false, r_i32, sizeof(r_i32), "int32 65536");
	expect_rec("a", "-2147483648", 11, -1, false, r_i32min, sizeof(r_i32min), "int32 min");
	expect_rec("a", "2147483648", 10, -1, false, r_big, sizeof(r_big),
		   "above int32 stays text");
	expect_rec("a", "0123", 4, -1, false, r_lead0, sizeof(r_lead0), "leading zero stays text");
	expect_rec("a", "-0", 2, -1, false, r_neg0, sizeof(r_neg0), "-0 stays text");
	expect_rec("12345", "v", 1, -1, false, r_ikey, sizeof(r_ikey), "integer key");
	expect_rec("a", "", 0, 0x1122334455667788LL, false, r_exp, sizeof(r_exp), "expiry ms LE");

	/* Length encodings: 63 -> 1 byte, 64 -> 2 bytes, 16384 -> 5 bytes. */
	s = malloc(20000);
	for (int i = 0; i < 20000; i++)
		s[i] = (char)('a' + (rnd() % 26));
	n = one_record("a", s, 63, -1, false, got);
	CHECK(n >= 4 && got[3] == 63, "len 63 one byte");
	n = one_record("a", s, 64, -1, false, got);
	CHECK(n >= 5 && got[3] == 0x40 && got[4] == 64, "len 64 two bytes");
	n = one_record("a", s, 16383, -1, false, got);
	CHECK(n >= 5 && got[3] == 0x7F && got[4] == 0xFF, "len 16383 two bytes");
	n = one_record("a", s, 16384, -1, false, got);
	CHECK(n >= 8 && got[3] == 0x80 && got[4] == 0 && got[5] == 0 && got[6] == 0x40 &&
		  got[7] == 0,
	      "len 16384 five bytes");
	/* LZF only above 20 bytes and only when it saves 4 bytes. */
	memset(s, 'x', 100);
	n = one_record("a", s, 20, -1, true, got);
	CHECK(n >= 4 && got[3] == 20, "20 bytes never compressed");
	n = one_record("a", s, 21, -1, true, got);
	CHECK(n >= 4 && got[3] == 0xC3, "21 compressible bytes compressed");
	n = one_record("a", s, 21, -1, false, got);
	CHECK(n >= 4 && got[3] == 21, "compression off");
	for (int i = 0; i < 100; i++)
		s[i] = (char)(rnd() >> 24);
	n = one_record("a", s, 40, -1, true, got);
	CHECK(n >= 4 && got[3] == 40, "incompressible stays plain");
	free(s);
}

struct auxc {
	int n;
	bool ver_ok, bits_ok;
};

static int aux_cb(void *arg, const void *name, size_t nlen, const void *val, size_t vlen)
{
	struct auxc *a = arg;

	a->n++;
	if (nlen == 9 && !strcmp(name, "redis-ver"))
		a->ver_ok = vlen == 6 && !strcmp(val, "7.0.15");
	if (!strcmp(name, "redis-bits"))
		a->bits_ok = !strcmp(val, "64");
	return 0;
}

static void test_header(void)
{
	char path[300];
	struct rdb_opts o = {.ctime = 1700000000, .used_mem = 123456, .checksum = true};
	struct rdb_writer *w;
	unsigned char *p;
	size_t n;
	int fd;
	/* REDIS0010, AUX redis-ver 7.0.15, redis-bits 64 (int8), ctime
	 * (int32 LE), used-mem (int32 LE), aof-base 0 (int8), EOF. */
	static const unsigned char want[] = "REDIS0010"
					    "\xfa\x09redis-ver\x06"
					    "7.0.15"
					    "\xfa\x0aredis-bits\xc0\x40"
					    "\xfa\x05"
					    "ctime\xc2\x00\xf1\x53\x65"
					    "\xfa\x08used-mem\xc2\x40\xe2\x01\x00"
					    "\xfa\x08"
					    "aof-base\xc0\x00"
					    "\xff";

	path_in(path, sizeof(path), "hdr.rdb");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	w = rdb_writer_new(fd, &o);
	CHECK(w != NULL, "writer");
	CHECK(rdb_writer_finish(w) == 0, "finish");
	CHECK(rdb_writer_bytes(w) == sizeof(want) - 1 + 8, "size %llu",
	      (unsigned long long)rdb_writer_bytes(w));
	rdb_writer_free(w);
	close(fd);
	p = read_all(path, &n);
	CHECK(p && n == sizeof(want) - 1 + 8 && memcmp(p, want, sizeof(want) - 1) == 0,
	      "header bytes");
	if (p && n >= 8) {
		uint64_t crc = rdb_crc64(0, p, n - 8), stored = 0;

		for (int i = 7; i >= 0; i--)
			stored = stored << 8 | p[n - 8 + i];
		CHECK(crc == stored, "trailer is the CRC64 of the rest, little-endian");
	}
	free(p);
	{
		struct auxc a = {0};
		struct rdb_load_cbs cb = {.aux = aux_cb, .arg = &a};

		CHECK(rdb_load_file(path, &cb, NULL, NULL, NULL, 0) == 0 && a.n == 5 && a.ver_ok &&
			  a.bits_ok,
		      "AUX fields read back as NUL-terminated text (%d)", a.n);
	}
	o.redis_ver = "x-very-long-version-string-that-is-more-than-sixty-four-bytes-long-.....";
	errno = 0;
	CHECK(rdb_writer_new(1, &o) == NULL && errno == EINVAL, "long redis_ver refused");
}

static void test_round_trips(void)
{
	struct set s = {0};
	int64_t base = 1700000000000LL;
	char path[300];

	make_dataset(&s, base);
	path_in(path, sizeof(path), "rt.rdb");
	for (int mode = 0; mode < 4; mode++) {
		struct rdb_opts o = {.compress = mode & 1, .checksum = mode & 2, .used_mem = -1};
		struct rdb_load_stats st;
		struct stat sb;
		size_t expired = 0;

		CHECK(save_set(path, &s, &o) == 0, "save mode %d", mode);
		CHECK(verify_file(path, &s, base, false, &st) == 0, "round trip mode %d", mode);
		for (size_t i = 0; i < s.n; i++)
			expired += s.v[i].expire != -1 && s.v[i].expire < base;
		CHECK(st.keys == s.n && st.expired == expired && expired == 1,
		      "stats mode %d: %llu keys, %llu expired", mode, (unsigned long long)st.keys,
		      (unsigned long long)st.expired);
		CHECK(st.checksum_verified == !!(mode & 2), "checksum verified mode %d", mode);
		CHECK(st.version == 10 && st.aux_fields == 4, "version %d aux %llu", st.version,
		      (unsigned long long)st.aux_fields);
		CHECK(stat(path, &sb) == 0 && (uint64_t)sb.st_size == st.bytes,
		      "whole file consumed");
		if (mode & 1)
			CHECK(sb.st_size < (off_t)(2 * BIG_LEN),
			      "compression shrank the file (%lld)", (long long)sb.st_size);
	}
	/* An empty data set is a valid file too. */
	{
		struct set e = {0};
		struct rdb_load_stats st;

		CHECK(save_set(path, &e, NULL) == 0, "save empty");
		CHECK(verify_file(path, &e, base, false, &st) == 0 && st.keys == 0, "empty load");
	}
	set_free(&s);
}

/* Several databases through rdb_save_file(). */
static int multi_next(void *arg, struct rdb_item *it)
{
	int *i = arg;
	static char k[16];

	if (*i == 6)
		return 0;
	snprintf(k, sizeof(k), "db%d", *i / 2 * 3);
	it->dbnum = (uint32_t)(*i / 2 * 3);
	it->key = k;
	it->klen = strlen(k);
	it->val = (*i & 1) ? "odd" : "even";
	it->vlen = strlen(it->val);
	it->expire_ms = -1;
	++*i;
	return 1;
}

static int multi_kv(void *arg, const struct rdb_kv *kv)
{
	int *bad = arg;
	char k[16];

	snprintf(k, sizeof(k), "db%u", kv->dbnum);
	if (kv->klen != strlen(k) || memcmp(kv->key, k, kv->klen))
		++*bad;
	return 0;
}

static int refuse_kv(void *arg, const struct rdb_kv *kv)
{
	(void)arg;
	(void)kv;
	return -ECANCELED;
}

static void test_multi_db(void)
{
	char path[300], err[256];
	int i = 0, bad = 0, r;
	struct rdb_source src = {multi_next, NULL, &i};
	struct rdb_load_cbs cb = {.string_kv = multi_kv, .arg = &bad};
	struct rdb_load_stats st;

	path_in(path, sizeof(path), "multi.rdb");
	CHECK(rdb_save_file(NULL, path, NULL, &src, NULL) == 0, "save multi-db");
	CHECK(rdb_load_file(path, &cb, NULL, &st, err, sizeof(err)) == 0 && bad == 0 &&
		  st.keys == 6,
	      "keys land in their databases (%d bad, %s)", bad, err);
	cb.string_kv = refuse_kv;
	r = rdb_load_file(path, &cb, NULL, &st, err, sizeof(err));
	CHECK(r == -ECANCELED && strstr(err, "callback"), "callback error stops the load: %d %s", r,
	      err);
}

/* -------------------------------------------------- hand-made RDB files */

struct buf {
	unsigned char p[4096];
	size_t n;
};

static void b_raw(struct buf *b, const void *p, size_t n)
{
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void b_byte(struct buf *b, unsigned c)
{
	b->p[b->n++] = (unsigned char)c;
}

static void b_str(struct buf *b, const char *s)
{
	if (strlen(s) > 63)
		abort(); /* one length byte only */
	b_byte(b, (unsigned)strlen(s));
	b_raw(b, s, strlen(s));
}

static void b_begin(struct buf *b, const char *magic)
{
	b->n = 0;
	b_raw(b, magic, 9);
}

/* EOF and CRC (version >= 5). */
static void b_end(struct buf *b, bool crc)
{
	uint64_t c;

	b_byte(b, 0xFF);
	if (memcmp(b->p, "REDIS000", 8) == 0 && b->p[8] < '5')
		return;
	c = crc ? rdb_crc64(0, b->p, b->n) : 0;
	for (int i = 0; i < 8; i++)
		b_byte(b, (unsigned)(c >> (8 * i)) & 0xff);
}

struct collect {
	int keys;
	char last_key[64];
	char last_val[64];
	int64_t last_exp;
	int64_t idle;
	int freq;
	uint32_t db;
};

static int collect_kv(void *arg, const struct rdb_kv *kv)
{
	struct collect *c = arg;

	c->keys++;
	snprintf(c->last_key, sizeof(c->last_key), "%.*s", (int)kv->klen, (const char *)kv->key);
	snprintf(c->last_val, sizeof(c->last_val), "%.*s", (int)kv->vlen, (const char *)kv->val);
	c->last_exp = kv->expire_ms;
	c->idle = kv->lru_idle;
	c->freq = kv->lfu_freq;
	c->db = kv->dbnum;
	return 0;
}

static int load_buf(const struct buf *b, bool skip, struct collect *c, struct rdb_load_stats *st,
		    char *err, size_t errlen)
{
	char path[300];
	struct rdb_load_cbs cb = {.string_kv = collect_kv, .arg = c};
	struct rdb_load_opts o = {.skip_unsupported = skip, .now_ms = 1000};

	memset(c, 0, sizeof(*c));
	path_in(path, sizeof(path), "hand.rdb");
	if (write_all(path, b->p, b->n))
		return -EIO;
	return rdb_load_file(path, &cb, &o, st, err, errlen);
}

/* One key of each non-string type, then the string key "after". */
static void b_type(struct buf *b, unsigned type)
{
	b_byte(b, type);
	b_str(b, "thekey");
	switch (type) {
	case 1:
	case 2:
		b_byte(b, 2);
		b_str(b, "a");
		b_byte(b, 0xC0);
		b_byte(b, 5);
		break;
	case 14:
		b_byte(b, 1);
		b_str(b, "ziplist-bytes");
		break;
	case 3:
		b_byte(b, 3);
		b_str(b, "m1");
		b_byte(b, 3);
		b_raw(b, "1.5", 3);
		b_str(b, "m2");
		b_byte(b, 253);
		b_str(b, "m3");
		b_byte(b, 254);
		break;
	case 5:
		b_byte(b, 1);
		b_str(b, "m");
		b_raw(b, "\0\0\0\0\0\0\xf0\x3f", 8);
		break;
	case 4:
		b_byte(b, 1);
		b_str(b, "f");
		b_str(b, "v");
		break;
	case 9:
	case 10:
	case 11:
	case 12:
	case 13:
	case 16:
	case 17:
	case 20:
		b_str(b, "encoded-blob");
		break;
	case 18:
		b_byte(b, 2);
		b_byte(b, 2);
		b_str(b, "listpack");
		b_byte(b, 1);
		b_str(b, "plain-node");
		break;
	case 7:
		b_byte(b, 0x81);
		b_raw(b, "\x12\x34\x56\x78\x9a\xbc\xde\x00", 8);
		b_byte(b, 2);
		b_byte(b, 7); /* uint */
		b_byte(b, 1);
		b_byte(b, 0x40);
		b_byte(b, 0x80); /* sint 128 */
		b_byte(b, 3);
		b_raw(b, "\0\0\0\0", 4);
		b_byte(b, 4);
		b_raw(b, "\0\0\0\0\0\0\0\0", 8);
		b_byte(b, 5);
		b_str(b, "modstr");
		b_byte(b, 0);
		break;
	case 15:
	case 19:
	case 21:
		b_byte(b, 1);
		b_raw(b,
		      "\x10"
		      "0123456789abcdef",
		      17);
		b_str(b, "lp");
		b_byte(b, 3);
		b_byte(b, 5);
		b_byte(b, 0); /* length, last id */
		if (type >= 19)
			for (int i = 0; i < 5; i++)
				b_byte(b, 1);
		b_byte(b, 1); /* one group */
		b_str(b, "grp");
		b_byte(b, 5);
		b_byte(b, 0);
		if (type >= 19)
			b_byte(b, 3);
		b_byte(b, 1); /* PEL of one */
		b_raw(b, "0123456789abcdef", 16);
		b_raw(b, "\1\2\3\4\5\6\7\0", 8);
		b_byte(b, 1);
		b_byte(b, 1); /* one consumer */
		b_str(b, "alice");
		b_raw(b, "\1\2\3\4\5\6\7\0", 8);
		if (type >= 21)
			b_raw(b, "\1\2\3\4\5\6\7\0", 8);
		b_byte(b, 1);
		b_raw(b, "0123456789abcdef", 16);
		break;
	}
}

static void test_opcodes_and_types(void)
{
	struct buf *b = malloc(sizeof(*b));
	struct collect c;
	struct rdb_load_stats st;
	char err[512];
	int r;
	static const unsigned types[] = {1,  2,	 3,  4,	 5,  7,	 9,  10, 11, 12,
					 13, 14, 15, 16, 17, 18, 19, 20, 21};
	static const enum rdb_kind kinds[] = {
	    RDB_KIND_LIST,   RDB_KIND_SET,    RDB_KIND_ZSET,   RDB_KIND_HASH,  RDB_KIND_ZSET,
	    RDB_KIND_MODULE, RDB_KIND_HASH,   RDB_KIND_LIST,   RDB_KIND_SET,   RDB_KIND_ZSET,
	    RDB_KIND_HASH,   RDB_KIND_LIST,   RDB_KIND_STREAM, RDB_KIND_HASH,  RDB_KIND_ZSET,
	    RDB_KIND_LIST,   RDB_KIND_STREAM, RDB_KIND_SET,    RDB_KIND_STREAM};

	/* Every opcode in one file, version 10. */
	b_begin(b, "REDIS0010");
	b_byte(b, 0xFA);
	b_str(b, "redis-ver");
	b_str(b, "7.0.15");
	b_byte(b, 0xF5);
	b_str(b, "#!lua name=lib\nredis.register_function('f', g)");
	b_byte(b, 0xF7);
	b_byte(b, 0x81);
	b_raw(b, "\0\0\0\0\0\0\1\0", 8);
	b_byte(b, 2);
	b_byte(b, 2); /* when: uint 2 */
	b_byte(b, 2);
	b_byte(b, 42);
	b_byte(b, 5);
	b_str(b, "aux");
	b_byte(b, 0);
	b_byte(b, 0xFE);
	b_byte(b, 3);
	b_byte(b, 0xFB);
	b_byte(b, 2);
	b_byte(b, 1);
	b_byte(b, 0xF8);
	b_byte(b, 0x40);
	b_byte(b, 100); /* IDLE 100 s */
	b_byte(b, 0xFD);
	b_raw(b, "\x10\x00\x00\x00", 4); /* EXPIRETIME 16 s */
	b_byte(b, 0);
	b_str(b, "k1");
	b_str(b, "v1");
	b_byte(b, 0xF9);
	b_byte(b, 7); /* FREQ 7 */
	b_byte(b, 0);
	b_str(b, "k2");
	b_byte(b, 0xC1);
	b_raw(b, "\x39\x30", 2);
	b_end(b, true);
	r = load_buf(b, false, &c, &st, err, sizeof(err));
	CHECK(r == 0, "all opcodes: %d %s", r, err);
	CHECK(c.keys == 2 && strcmp(c.last_key, "k2") == 0 && strcmp(c.last_val, "12345") == 0 &&
		  c.last_exp == -1 && c.freq == 7 && c.idle == -1 && c.db == 3,
	      "opcodes: keys %d %s=%s exp %lld freq %d idle %lld db %u", c.keys, c.last_key,
	      c.last_val, (long long)c.last_exp, c.freq, (long long)c.idle, c.db);
	CHECK(st.functions == 1 && st.module_aux == 1 && st.aux_fields == 1 && st.checksum_verified,
	      "opcode stats");

	/* Expiry in seconds and IDLE are handed over with their key. */
	b_begin(b, "REDIS0010");
	b_byte(b, 0xF8);
	b_byte(b, 0x40);
	b_byte(b, 100);
	b_byte(b, 0xFD);
	b_raw(b, "\x10\x00\x00\x00", 4);
	b_byte(b, 0);
	b_str(b, "k1");
	b_str(b, "v1");
	b_end(b, false);
	r = load_buf(b, false, &c, &st, err, sizeof(err));
	CHECK(r == 0 && c.last_exp == 16000 && c.idle == 100, "EXPIRETIME s and IDLE");

	/* Old versions: 3 has no checksum trailer; 6 has one. */
	b_begin(b, "REDIS0003");
	b_byte(b, 0xFE);
	b_byte(b, 0);
	b_byte(b, 0);
	b_str(b, "old");
	b_str(b, "v");
	b_end(b, false);
	r = load_buf(b, false, &c, &st, err, sizeof(err));
	CHECK(r == 0 && c.keys == 1 && st.version == 3, "version 3: %d %s", r, err);
	b_begin(b, "REDIS0006");
	b_byte(b, 0);
	b_str(b, "old");
	b_str(b, "v");
	b_end(b, true);
	r = load_buf(b, false, &c, &st, err, sizeof(err));
	CHECK(r == 0 && st.checksum_verified, "version 6 with CRC: %d %s", r, err);
	b_begin(b, "REDIS0011");
	b_byte(b, 0);
	b_str(b, "new");
	b_str(b, "v");
	b_end(b, true);
	r = load_buf(b, false, &c, &st, err, sizeof(err));
	CHECK(r == 0, "version 11: %d %s", r, err);
	b_begin(b, "REDIS0012");
	b_end(b, true);
	r = load_buf(b, false, &c, &st, err, sizeof(err));
	CHECK(r == -ENOTSUP && strstr(err, "version 12"), "version 12 refused: %s", err);
	b_begin(b, "REDIX0010");
	b_end(b, true);
	r = load_buf(b, false, &c, &st, err, sizeof(err));
	CHECK(r == -EBADMSG && strstr(err, "offset 0"), "bad magic: %s", err);

	/* Each non-string type: an error naming type and key, or skipped. */
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		b_begin(b, "REDIS0010");
		b_type(b, types[i]);
		b_byte(b, 0);
		b_str(b, "after");
		b_str(b, "x");
		b_end(b, true);
		r = load_buf(b, false, &c, &st, err, sizeof(err));
		CHECK(r == -ENOTSUP && strstr(err, "\"thekey\"") &&
			  strstr(err, rdb_kind_name(kinds[i])) && strstr(err, "offset 9"),
		      "type %u refused: %d %s", types[i], r, err);
		r = load_buf(b, true, &c, &st, err, sizeof(err));
		CHECK(r == 0 && c.keys == 1 && strcmp(c.last_key, "after") == 0 &&
			  st.skipped[kinds[i]] == 1 && st.skipped_total == 1,
		      "type %u skipped: %d %s", types[i], r, err);
	}
	/* Pre-GA modules and functions cannot be skipped. */
	b_begin(b, "REDIS0010");
	b_byte(b, 6);
	b_str(b, "mod");
	b_byte(b, 1);
	b_end(b, true);
	r = load_buf(b, true, &c, &st, err, sizeof(err));
	CHECK(r == -ENOTSUP && strstr(err, "module"), "pre-GA module: %s", err);
	b_begin(b, "REDIS0010");
	b_byte(b, 0xF6);
	b_str(b, "f");
	b_end(b, true);
	r = load_buf(b, true, &c, &st, err, sizeof(err));
	CHECK(r == -ENOTSUP && strstr(err, "FUNCTION"), "pre-GA function: %s", err);
	/* Unknown type byte. */
	b_begin(b, "REDIS0010");
	b_byte(b, 8);
	b_str(b, "k");
	b_str(b, "v");
	b_end(b, true);
	r = load_buf(b, true, &c, &st, err, sizeof(err));
	CHECK(r == -EBADMSG && strstr(err, "offset 9") && strstr(err, "type"), "type 8: %s", err);
	/* Binary key shown escaped in the message. */
	b_begin(b, "REDIS0010");
	b_byte(b, 4);
	b_byte(b, 3);
	b_raw(b, "a\0\n", 3);
	b_byte(b, 0);
	b_end(b, true);
	r = load_buf(b, false, &c, &st, err, sizeof(err));
	CHECK(r == -ENOTSUP && strstr(err, "a\\x00\\x0a"), "escaped key: %s", err);

	/* Absurd lengths: errors with offsets, nothing huge allocated. */
	b_begin(b, "REDIS0010");
	b_byte(b, 0);
	b_str(b, "k");
	b_byte(b, 0x81);
	b_raw(b, "\x10\0\0\0\0\0\0\0", 8);
	b_end(b, false);
	r = load_buf(b, false, &c, &st, err, sizeof(err));
	CHECK(r == -EBADMSG && strstr(err, "offset 12") && strstr(err, "left"), "huge string: %s",
	      err);
	b_begin(b, "REDIS0010");
	b_byte(b, 0);
	b_str(b, "k");
	b_byte(b, 0xC3);
	b_byte(b, 2);
	b_byte(b, 0x80);
	b_raw(b, "\x10\0\0\0", 4);
	b_raw(b, "ab", 2);
	b_end(b, false);
	r = load_buf(b, false, &c, &st, err, sizeof(err));
	CHECK(r == -EBADMSG && strstr(err, "LZF"), "huge LZF: %s", err);
	b_begin(b, "REDIS0010");
	b_byte(b, 0);
	b_str(b, "k");
	b_byte(b, 0xC3);
	b_byte(b, 2);
	b_byte(b, 10);
	b_raw(b,
	      "\x01"
	      "ab",
	      3);
	b_end(b, false);
	r = load_buf(b, false, &c, &st, err, sizeof(err));
	CHECK(r == -EBADMSG && strstr(err, "LZF"), "bad LZF: %s", err);
	b_begin(b, "REDIS0010");
	b_byte(b, 1);
	b_str(b, "k");
	b_byte(b, 0x80);
	b_raw(b, "\xff\xff\xff\xff", 4);
	b_end(b, false);
	r = load_buf(b, true, &c, &st, err, sizeof(err));
	CHECK(r == -EBADMSG && strstr(err, "element count"), "huge count: %s", err);
	b_begin(b, "REDIS0010");
	b_byte(b, 0);
	b_str(b, "k");
	b_byte(b, 0xC7);
	b_end(b, false);
	r = load_buf(b, false, &c, &st, err, sizeof(err));
	CHECK(r == -EBADMSG && strstr(err, "encoding"), "bad encoding: %s", err);
	/* Limit on a single string. */
	{
		char path[300];
		struct rdb_load_opts o = {.max_string = 4};

		b_begin(b, "REDIS0010");
		b_byte(b, 0);
		b_str(b, "k");
		b_str(b, "12345678");
		b_end(b, false);
		path_in(path, sizeof(path), "hand.rdb");
		write_all(path, b->p, b->n);
		r = rdb_load_file(path, NULL, &o, NULL, err, sizeof(err));
		CHECK(r == -EBADMSG && strstr(err, "limit"), "max_string: %s", err);
	}
	/* Checksum mismatch. */
	b_begin(b, "REDIS0010");
	b_byte(b, 0);
	b_str(b, "k");
	b_str(b, "v");
	b_end(b, true);
	b->p[b->n - 1] ^= 1;
	r = load_buf(b, false, &c, &st, err, sizeof(err));
	CHECK(r == -EBADMSG && strstr(err, "checksum"), "checksum mismatch: %s", err);
	free(b);
}

/* ------------------------------------------------------- corruption */

static int load_bytes_fd(int fd, const unsigned char *p, size_t n, bool skip, char *err,
			 size_t errlen)
{
	struct rdb_load_opts o = {.skip_unsupported = skip};

	if (ftruncate(fd, 0) || pwrite(fd, p, n, 0) != (ssize_t)n || lseek(fd, 0, SEEK_SET))
		return -EIO;
	return rdb_load_fd(fd, NULL, &o, NULL, err, errlen);
}

/*
 * An outcome rdb_load_fd() does not document for damaged input: anything but
 * success, or -EBADMSG / -ENOTSUP with a message.
 */
static bool load_refused_oddly(int r, const char *err)
{
	return r != 0 && ((r != -EBADMSG && r != -ENOTSUP) || !err[0]);
}

static void test_corruption(void)
{
	struct set s = {0};
	char path[300], mpath[300], err[512];
	unsigned char *orig, *m;
	size_t n;
	int fd;

	for (int mode = 0; mode < 2; mode++) {
		struct rdb_opts o = {.compress = true, .checksum = mode == 1, .used_mem = 1};
		long accepted = 0, no_offset = 0, trunc_ok = 0, odd = 0;
		char lz[200];

		memset(&s, 0, sizeof(s));
		for (int i = 0; i < 200; i++)
			lz[i] = "xyz"[i % 3];
		set_add(&s, "lzf", 3, lz, sizeof(lz), -1);
		set_adds(&s, "int", "-300", 1700000000000LL);
		set_adds(&s, "str", "hello world", -1);
		set_adds(&s, "1000000", "70000", -1);
		path_in(path, sizeof(path), "small.rdb");
		CHECK(save_set(path, &s, &o) == 0, "save small");
		orig = read_all(path, &n);
		m = malloc(n);
		path_in(mpath, sizeof(mpath), "mut.rdb");
		fd = open(mpath, O_RDWR | O_CREAT | O_TRUNC, 0644);
		/* Flip each byte (every bit at once). */
		for (size_t i = 0; i < n; i++) {
			int r;

			memcpy(m, orig, n);
			m[i] ^= 0xFF;
			r = load_bytes_fd(fd, m, n, false, err, sizeof(err));
			if (r == 0)
				accepted++;
			else if (!strstr(err, "offset "))
				no_offset++;
		}
		if (mode == 1)
			CHECK(accepted == 0,
			      "with CRC every flipped byte is rejected (%ld accepted)", accepted);
		CHECK(no_offset == 0, "every rejection names an offset (%ld do not)", no_offset);
		/* Truncate at each offset. */
		for (size_t i = 0; i < n; i++)
			if (load_bytes_fd(fd, orig, i, false, err, sizeof(err)) == 0)
				trunc_ok++;
		CHECK(trunc_ok == 0, "every truncation rejected (%ld accepted)", trunc_ok);
		CHECK(load_bytes_fd(fd, orig, n, false, err, sizeof(err)) == 0,
		      "intact file loads");
		/* Random multi-byte damage, with skip on so more paths run. */
		for (int it = 0; it < 3000; it++) {
			memcpy(m, orig, n);
			for (int k = 1 + (int)(rnd() % 4); k > 0; k--)
				m[9 + rnd() % (n - 9)] = (unsigned char)rnd();
			err[0] = 0;
			odd += load_refused_oddly(load_bytes_fd(fd, m, n, true, err, sizeof(err)), err);
		}
		CHECK(odd == 0,
		      "3000 damaged files: each loaded, or refused with -EBADMSG/-ENOTSUP and a "
		      "message (%ld otherwise)",
		      odd);
		close(fd);
		free(m);
		free(orig);
		set_free(&s);
	}

	/* Random files of random opcodes and type bytes, skip on. */
	{
		unsigned char rb[300];
		long odd = 0;

		path_in(mpath, sizeof(mpath), "mut.rdb");
		fd = open(mpath, O_RDWR | O_CREAT | O_TRUNC, 0644);
		for (int it = 0; it < 5000; it++) {
			size_t len = 9 + rnd() % 200;

			memcpy(rb, "REDIS0010", 9);
			for (size_t i = 9; i < len; i++) {
				uint64_t x = rnd();

				rb[i] = (x & 3) == 0   ? (unsigned char)(0xF5 + (x >> 8) % 11)
					: (x & 3) == 1 ? (unsigned char)((x >> 8) % 22)
						       : (unsigned char)(x >> 16);
			}
			err[0] = 0;
			odd += load_refused_oddly(load_bytes_fd(fd, rb, len, true, err, sizeof(err)),
						  err);
		}
		close(fd);
		CHECK(odd == 0,
		      "5000 files of random opcodes: each loaded, or refused with -EBADMSG/-ENOTSUP "
		      "and a message (%ld otherwise)",
		      odd);
	}
}

/* The checked-in file from redis-server 7.0.15 (tests/server/rdb_corpus_gen.sh). */
static void test_redis_corpus(void)
{
	const char *dir = getenv("RDB_CORPUS") ? getenv("RDB_CORPUS") : "tests/server/rdb-corpus";
	char path[400], mpath[300], err[512];
	struct collect c;
	struct rdb_load_cbs cb = {.string_kv = collect_kv, .arg = &c};
	struct rdb_load_opts o = {.skip_unsupported = true};
	struct rdb_load_stats st;
	unsigned char *orig, *m;
	size_t n;
	long accepted = 0, no_offset = 0, trunc_ok = 0;
	int r, fd;

	snprintf(path, sizeof(path), "%s/redis-7.0.15-types.rdb", dir);
	orig = read_all(path, &n);
	CHECK(orig != NULL, "fixture %s present (run from the repository root)", path);
	if (!orig)
		return;
	r = rdb_load_file(path, NULL, NULL, &st, err, sizeof(err));
	CHECK(r == -ENOTSUP && strstr(err, "is a "), "redis file without skip: %s", err);
	memset(&c, 0, sizeof(c));
	r = rdb_load_file(path, &cb, &o, &st, err, sizeof(err));
	CHECK(r == 0 && st.keys == 5 && st.skipped[RDB_KIND_LIST] == 2 &&
		  st.skipped[RDB_KIND_SET] == 3 && st.skipped[RDB_KIND_ZSET] == 2 &&
		  st.skipped[RDB_KIND_HASH] == 2 && st.skipped[RDB_KIND_STREAM] == 1 &&
		  st.functions == 1 && st.checksum_verified,
	      "redis file with skip: %d %s (%llu keys)", r, err, (unsigned long long)st.keys);
	CHECK(c.db == 2 && strcmp(c.last_key, "db2:key") == 0 && strcmp(c.last_val, "in-db-2") == 0,
	      "last key in db 2: %s", c.last_key);

	m = malloc(n);
	path_in(mpath, sizeof(mpath), "mut.rdb");
	fd = open(mpath, O_RDWR | O_CREAT | O_TRUNC, 0644);
	for (size_t i = 0; i < n; i++) {
		memcpy(m, orig, n);
		m[i] ^= 0xFF;
		r = load_bytes_fd(fd, m, n, true, err, sizeof(err));
		if (r == 0)
			accepted++;
		else if (!strstr(err, "offset "))
			no_offset++;
		/* Without the checksum the parser meets the damage itself. */
		{
			struct rdb_load_opts oi = {.skip_unsupported = true,
						   .ignore_checksum = true};

			lseek(fd, 0, SEEK_SET);
			rdb_load_fd(fd, NULL, &oi, NULL, err, sizeof(err));
		}
	}
	CHECK(accepted == 0 && no_offset == 0,
	      "redis file: every flipped byte rejected with an offset (%ld accepted, %ld without "
	      "offset)",
	      accepted, no_offset);
	for (size_t i = 0; i < n; i++)
		if (load_bytes_fd(fd, orig, i, true, err, sizeof(err)) == 0)
			trunc_ok++;
	CHECK(trunc_ok == 0, "redis file: every truncation rejected (%ld accepted)", trunc_ok);
	close(fd);
	free(m);
	free(orig);
}

/* ------------------------------------------------------------ disk full */

static int fail_next(void *arg, struct rdb_item *it)
{
	int *n = arg;

	if (++*n > 100)
		return -EIO;
	it->key = "k";
	it->klen = 1;
	it->val = "v";
	it->vlen = 1;
	it->expire_ms = -1;
	return 1;
}

/* Dies by SIGKILL after 1000 keys (more than one 64 KiB buffer flushed). */
static int crash_next(void *arg, struct rdb_item *it)
{
	struct set *s = arg;

	if (s->pos == 1000)
		raise(SIGKILL);
	return set_next(arg, it);
}

static bool old_file_intact(const char *path, struct set *old)
{
	struct rdb_load_stats st;

	return verify_file(path, old, 1, false, &st) == 0 && st.keys == old->n;
}

static bool no_temp_files(void)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "ls %s | grep -q tmp-", tmpdir);
	return system(cmd) != 0;
}

static void test_disk_full(void)
{
	struct set old = {0}, big = {0};
	char path[300];
	int status, n = 0, r;
	pid_t pid;

	path_in(path, sizeof(path), "dump.rdb");
	set_adds(&old, "old-key", "old value", -1);
	set_adds(&old, "old-2", "12", 1900000000000LL);
	CHECK(save_set(path, &old, NULL) == 0, "save the old dump");
	for (int i = 0; i < 2000; i++) {
		char k[32], v[600];

		snprintf(k, sizeof(k), "key-%d", i);
		for (size_t j = 0; j < sizeof(v); j++)
			v[j] = (char)(rnd() >> 33);
		set_add(&big, k, strlen(k), v, sizeof(v), -1);
	}
	/* A file size limit of 256 KiB: write(2) fails with EFBIG. */
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = {256 * 1024, 256 * 1024};

		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		r = save_set(path, &big, NULL);
		_exit(r == -EFBIG ? 0 : 1 + (r < 0 ? -r : r) % 200);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		  WEXITSTATUS(status) == 0,
	      "save under RLIMIT_FSIZE returns -EFBIG (exit %d)",
	      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CHECK(old_file_intact(path, &old), "old dump intact after EFBIG");
	CHECK(no_temp_files(), "temporary file removed after EFBIG");
	/* A crash (SIGKILL) part way through a save, after several flushes. */
	pid = fork();
	if (pid == 0) {
		struct rdb_source src = {crash_next, NULL, &big};

		big.pos = 0;
		rdb_save_file(NULL, path, NULL, &src, NULL);
		_exit(3);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
		  WTERMSIG(status) == SIGKILL,
	      "child killed mid-save");
	CHECK(old_file_intact(path, &old), "old dump intact after kill -9 mid-save");
	{
		char tmpf[400];
		struct stat sb;

		snprintf(tmpf, sizeof(tmpf), "%s.tmp-%ld", path, (long)pid);
		CHECK(stat(tmpf, &sb) == 0 && sb.st_size > 64 * 1024,
		      "the killed save had written part of its temporary file");
		unlink(tmpf);
	}
	/* The iterator gives up part way. */
	{
		struct rdb_source src = {fail_next, NULL, &n};

		r = rdb_save_file(NULL, path, NULL, &src, NULL);
		CHECK(r == -EIO, "iterator error returned (%d)", r);
		CHECK(old_file_intact(path, &old), "old dump intact after iterator error");
		CHECK(no_temp_files(), "temporary file removed after iterator error");
	}
	/* The temporary file cannot be created. */
	{
		char bad[400];

		snprintf(bad, sizeof(bad), "%s/no-such-dir/dump.rdb.tmp", tmpdir);
		r = rdb_save_file(bad, path, NULL, &(struct rdb_source){set_next, NULL, &big},
				  NULL);
		CHECK(r == -ENOENT, "missing directory: %d", r);
		CHECK(old_file_intact(path, &old), "old dump intact after ENOENT");
	}
	/* No permission to write in the directory: EACCES.  Root passes
	 * permission checks, so the child drops to nobody first; others make
	 * the directory read-only. */
	pid = fork();
	if (pid == 0) {
		if (geteuid() == 0) {
			if (setgid(65534) != 0 || setuid(65534) != 0)
				_exit(100);
		} else if (chmod(tmpdir, 0500) != 0) {
			_exit(101);
		}
		r = rdb_save_file(NULL, path, NULL, &(struct rdb_source){set_next, NULL, &big},
				  NULL);
		_exit(r == -EACCES ? 0 : 1 + (r < 0 ? -r : r) % 200);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		  WEXITSTATUS(status) == 0,
	      "save without write permission returns -EACCES (exit %d)",
	      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	chmod(tmpdir, 0700);
	CHECK(old_file_intact(path, &old), "old dump intact after EACCES");
	/* And a save that works replaces it. */
	CHECK(save_set(path, &big, NULL) == 0, "save after failures");
	CHECK(verify_file(path, &big, 1, false, NULL) == 0, "new dump in place");
	set_free(&old);
	set_free(&big);
}

/* ------------------------------------------------------------- tool modes */

static void hex(FILE *f, const unsigned char *p, size_t n)
{
	if (!n)
		fputc('-', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}

/* What the Lua script in rdb_redis.sh prints for a value: hex when at most
 * 4096 bytes, else "len:N:" and hex of the first and last 64 bytes. */
static void value_summary(FILE *f, const unsigned char *p, size_t n)
{
	if (n <= 4096) {
		hex(f, p, n);
		return;
	}
	fprintf(f, "len:%zu:", n);
	hex(f, p, 64);
	fputc(':', f);
	hex(f, p + n - 64, 64);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lines "hexkey summary expire" for D(base) without expired keys, sorted. */
static int tool_verify_lines(const char *file, int64_t base)
{
	struct set s = {0};
	FILE *f = fopen(file, "r");
	char *line = NULL, **got = NULL, **want = NULL;
	size_t cap = 0, ng = 0, nw = 0;
	int64_t now = now_ms();
	int bad = 0;

	if (!f) {
		perror(file);
		return 2;
	}
	make_dataset(&s, base);
	got = calloc(s.n + 10000, sizeof(*got));
	want = calloc(s.n, sizeof(*want));
	while (getline(&line, &cap, f) > 0 && ng < s.n + 10000) {
		char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
		long long pttl;

		if (!sp2) {
			bad++;
			continue;
		}
		pttl = atoll(sp2 + 1);
		/* PTTL is relative: turn it into "ttl" or "none" after
		 * checking it against the absolute expiry below. */
		*sp2 = '\0';
		got[ng] = malloc(strlen(line) + 40);
		snprintf(got[ng], strlen(line) + 40, "%s %lld", line,
			 pttl < 0 ? -1LL : (long long)(now + pttl) / 10000);
		ng++;
	}
	free(line);
	fclose(f);
	for (size_t i = 0; i < s.n; i++) {
		struct kv *e = &s.v[i];
		char *buf;
		size_t len;
		FILE *m;

		if (e->expire != -1 && e->expire < now)
			continue;
		m = open_memstream(&buf, &len);
		hex(m, e->key, e->klen);
		fputc(' ', m);
		value_summary(m, e->val, e->vlen);
		fprintf(m, " %lld", e->expire < 0 ? -1LL : (long long)e->expire / 10000);
		fclose(m);
		want[nw++] = buf;
	}
	qsort(got, ng, sizeof(*got), cmp_line);
	qsort(want, nw, sizeof(*want), cmp_line);
	if (ng != nw)
		fprintf(stderr, "verify-lines: %zu keys from redis, %zu expected\n", ng, nw);
	for (size_t i = 0, j = 0; i < ng || j < nw;) {
		int c = i == ng ? 1 : j == nw ? -1 : strcmp(got[i], want[j]);

		if (c == 0) {
			i++;
			j++;
			continue;
		}
		/* Expiry buckets of 10 s: a boundary may split them by one. */
		if (i < ng && j < nw) {
			char *a = strrchr(got[i], ' '), *b = strrchr(want[j], ' ');

			if (a - got[i] == b - want[j] &&
			    !strncmp(got[i], want[j], (size_t)(a - got[i])) &&
			    llabs(atoll(a) - atoll(b)) <= 1) {
				i++;
				j++;
				continue;
			}
		}
		if (bad++ < 10)
			fprintf(stderr, "verify-lines: %s %.120s\n",
				c < 0 ? "unexpected" : "missing", c < 0 ? got[i] : want[j]);
		if (c < 0)
			i++;
		else
			j++;
	}
	printf("verify-lines: %zu keys from redis-cli, %zu expected, %d problems\n", ng, nw, bad);
	for (size_t i = 0; i < ng; i++)
		free(got[i]);
	for (size_t i = 0; i < nw; i++)
		free(want[i]);
	free(got);
	free(want);
	set_free(&s);
	return bad ? 1 : 0;
}

static int print_kv(void *arg, const struct rdb_kv *kv)
{
	FILE *f = arg;

	hex(f, kv->key, kv->klen);
	fputc(' ', f);
	value_summary(f, kv->val, kv->vlen);
	fprintf(f, " %lld %d\n", (long long)kv->expire_ms, kv->expired);
	return 0;
}

struct records {
	unsigned char *file;
};

static int records_kv(void *arg, const struct rdb_kv *kv)
{
	struct records *r = arg;

	hex(stdout, kv->key, kv->klen);
	fputc(' ', stdout);
	hex(stdout, r->file + kv->offset, (size_t)(kv->end - kv->offset));
	fputc('\n', stdout);
	return 0;
}

static int tool(int argc, char **argv)
{
	const char *mode = argv[1];
	char err[512];
	struct rdb_load_stats st;
	int r;

	if (!strcmp(mode, "write") && argc >= 4) {
		struct set s = {0};
		struct rdb_opts o = {.used_mem = 1000000};

		bool small = false;

		for (int i = 4; i < argc; i++) {
			o.compress |= !strcmp(argv[i], "compress");
			o.checksum |= !strcmp(argv[i], "checksum");
			small |= !strcmp(argv[i], "small");
		}
		make_dataset(&s, atoll(argv[3]));
		if (small) { /* the first 20 keys only: a few KiB */
			for (size_t i = 20; i < s.n; i++) {
				free(s.v[i].key);
				free(s.v[i].val);
			}
			s.n = 20;
		}
		r = save_set(argv[2], &s, &o);
		set_free(&s);
		if (r)
			fprintf(stderr, "write %s: %s\n", argv[2], strerror(-r));
		return r ? 1 : 0;
	}
	if (!strcmp(mode, "verify-lines") && argc == 4)
		return tool_verify_lines(argv[2], atoll(argv[3]));
	if (!strcmp(mode, "verify-rdb") && argc == 4) {
		struct set s = {0};

		make_dataset(&s, atoll(argv[3]));
		r = verify_file(argv[2], &s, now_ms(), true, &st);
		set_free(&s);
		printf("verify-rdb: %s: %s (%llu string keys)\n", argv[2], r ? "DIFFERS" : "same",
		       (unsigned long long)st.keys);
		return r ? 1 : 0;
	}
	if (!strcmp(mode, "records") && argc == 3) {
		struct records rs;
		struct rdb_load_cbs cb = {.string_kv = records_kv, .arg = &rs};
		size_t n;

		rs.file = read_all(argv[2], &n);
		if (!rs.file)
			return 2;
		r = rdb_load_file(argv[2], &cb, &(struct rdb_load_opts){.skip_unsupported = 1},
				  NULL, err, sizeof(err));
		free(rs.file);
		if (r)
			fprintf(stderr, "records: %s\n", err);
		return r ? 1 : 0;
	}
	if ((!strcmp(mode, "load") || !strcmp(mode, "print")) && argc >= 3) {
		struct rdb_load_opts o = {.skip_unsupported = argc > 3 && !strcmp(argv[3], "skip")};
		struct rdb_load_cbs cb = {.string_kv = print_kv, .arg = stdout};

		r = rdb_load_file(argv[2], !strcmp(mode, "print") ? &cb : NULL, &o, &st, err,
				  sizeof(err));
		printf("load: version %d, %llu string keys (%llu expired), skipped %llu:",
		       st.version, (unsigned long long)st.keys, (unsigned long long)st.expired,
		       (unsigned long long)st.skipped_total);
		for (int k = 1; k < RDB_KIND_MAX; k++)
			printf(" %s=%llu", rdb_kind_name((enum rdb_kind)k),
			       (unsigned long long)st.skipped[k]);
		printf(", functions %llu, checksum %s\n", (unsigned long long)st.functions,
		       st.checksum_verified ? "verified" : "not verified");
		if (r)
			printf("load error: %s (%s)\n", err, strerror(-r));
		return r ? 1 : 0;
	}
	fprintf(stderr, "usage: see the comment at the top of tests/server/test_rdb.c\n");
	return 2;
}

/* DUMP payloads: exact bytes (redis-server 7.0.15's DUMP of "12" and of 100
 * x's), round trips of every shape, and a flip-each-byte and truncate sweep
 * that must give an error or a value, never a crash. */
static void test_dump_payloads(void)
{
	static const unsigned char p12[] = {0x00, 0xc0, 0x0c, 0x0a, 0x00, 0x3c, 0x2a,
					    0xf8, 0x51, 0x5c, 0x04, 0xbc, 0xd5};
	static const unsigned char x100[] = {0x00, 0xc3, 0x09, 0x40, 0x64, 0x01, 0x78, 0x78,
					     0xe0, 0x57, 0x00, 0x01, 0x78, 0x78, 0x0a, 0x00,
					     0x5d, 0xb7, 0xf6, 0x63, 0xbb, 0x08, 0x62, 0x5f};
	/* redis-server's DUMP of a set {a, b} (hash table encoding) */
	static const unsigned char set2[] = {0x02, 0x02, 0x01, 'b',  0x01, 'a',  0x0a, 0x00,
					     0x75, 0xd9, 0x9d, 0x83, 0x5e, 0xf8, 0x5f, 0x65};
	static const size_t sizes[] = {0, 1, 11, 12, 20, 21, 64, 16384, 1 << 20};
	enum rdb_kind kind = RDB_KIND_STRING;
	char big[1 << 20];
	void *p, *v;
	size_t n, vn;
	int bad = 0;

	CHECK(rdb_dump_string("12", 2, true, &p, &n) == 0 && n == sizeof(p12) &&
		  memcmp(p, p12, n) == 0,
	      "DUMP payload of \"12\" is redis-server's");
	free(p);
	memset(big, 'x', 100);
	CHECK(rdb_dump_string(big, 100, true, &p, &n) == 0 && n == sizeof(x100) &&
		  memcmp(p, x100, n) == 0,
	      "DUMP payload of 100 x's is redis-server's (LZF)");
	free(p);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i % 7 == 0 ? rnd() >> 40 : 'a' + i % 3);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		for (int z = 0; z < 2; z++) {
			int ok = rdb_dump_string(big, sizes[k], z, &p, &n) == 0 &&
				 rdb_restore_string(p, n, &v, &vn, &kind) == 0 && vn == sizes[k] &&
				 memcmp(v, big, vn) == 0 && ((char *)v)[vn] == '\0';

			CHECK(ok, "payload round trip, %zu bytes, compress %d", sizes[k], z);
			if (ok)
				free(v);
			free(p);
		}
	}
	CHECK(rdb_restore_string(x100, 9, &v, &vn, &kind) == -EPROTO, "short payload: -EPROTO");
	CHECK(rdb_restore_string(set2, sizeof(set2), &v, &vn, &kind) == -ENOTSUP &&
		  kind == RDB_KIND_SET,
	      "redis-server's DUMP of a set: -ENOTSUP, a set");
	/* Every byte flipped, every length cut: an error, or (a flip inside
	 * the value that keeps the CRC cannot happen) never a wrong success. */
	rdb_dump_string(big, 300, true, &p, &n);
	for (size_t i = 0; i < n; i++) {
		unsigned char *b = p;
		int r;

		b[i] ^= 0x20;
		r = rdb_restore_string(p, n, &v, &vn, &kind);
		bad += r != -EPROTO;
		if (r == 0)
			free(v);
		b[i] ^= 0x20;
		r = rdb_restore_string(p, i, &v, &vn, &kind);
		bad += r != -EPROTO;
		if (r == 0)
			free(v);
	}
	CHECK(bad == 0, "payload of %zu bytes: %d flips or cuts not refused as -EPROTO", n, bad);
	free(p);
}

int main(int argc, char **argv)
{
	char cmd[300];

	if (argc > 1)
		return tool(argc, argv);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_rdb.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_crc64();
	test_encodings();
	test_header();
	test_round_trips();
	test_multi_db();
	test_opcodes_and_types();
	test_corruption();
	test_redis_corpus();
	test_disk_full();
	test_dump_payloads();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return check_summary();
}
