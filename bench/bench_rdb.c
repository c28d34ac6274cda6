/*
 * bench_rdb.c - save and load throughput of the RDB format layer
 * (server/rdb.c, issue 8): 1,000,000 keys of 16 bytes with 32-byte values
 * (BENCH_QUICK=1: 200,000), written with rdb_save_file() (temporary file,
 * fsync, rename, directory fsync) and read back with rdb_load_file(), whose
 * callback copies each key and value as a loader would.  Each figure is the
 * median of 3 runs.  The file lives in $TMPDIR (default /tmp).
 *
 * Prints BENCH lines (../shared/BENCHMARKS.md):
 *   BENCH rdb.save.rcukv        keys/s   checksum on, compression off
 *   BENCH rdb.save_lzf.rcukv    keys/s   checksum on, compression on
 *   BENCH rdb.load.rcukv        keys/s   CRC64 verified
 *   BENCH rdb.file_size.rcukv   bytes
 * The format layer alone: no hash table, no server.  Not a test: asserts
 * nothing about time.
 */
#include "server/rdb.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RUNS 3

struct gen {
	size_t n, i;
	char key[17];
	char val[33];
};

static int gen_next(void *arg, struct rdb_item *it)
{
	struct gen *g = arg;
	static const char al[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	uint64_t x;

	if (g->i == g->n)
		return 0;
	snprintf(g->key, sizeof(g->key), "key:%012zu", g->i);
	x = g->i * 0x9e3779b97f4a7c15ULL + 1;
	for (int k = 0; k < 32; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		g->val[k] = al[x % 62];
	}
	it->dbnum = 0;
	it->key = g->key;
	it->klen = 16;
	it->val = g->val;
	it->vlen = 32;
	it->expire_ms = (g->i % 4 == 0) ? 4000000000000LL + (int64_t)g->i : -1;
	g->i++;
	return 1;
}

static void gen_size(void *arg, uint32_t db, uint64_t *keys, uint64_t *exp)
{
	struct gen *g = arg;

	(void)db;
	*keys = g->n;
	*exp = (g->n + 3) / 4;
}

struct sink {
	char buf[64];
	uint64_t bytes;
};

static int sink_kv(void *arg, const struct rdb_kv *kv)
{
	struct sink *s = arg;

	memcpy(s->buf, kv->key, kv->klen < 32 ? kv->klen : 32);
	memcpy(s->buf + 32, kv->val, kv->vlen < 32 ? kv->vlen : 32);
	s->bytes += kv->klen + kv->vlen;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v)
{
	qsort(v, RUNS, sizeof(*v), cmp_d);
	return v[RUNS / 2];
}

int main(void)
{
	const char *q = getenv("BENCH_QUICK"), *td = getenv("TMPDIR");
	size_t n = q && *q && strcmp(q, "0") ? 200000 : 1000000;
	char path[512], err[256];
	double save[RUNS], lzf[RUNS], load[RUNS];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/bench_rdb.%ld.rdb", td ? td : "/tmp", (long)getpid());
	printf("bench_rdb: %zu keys, 16-byte keys, 32-byte values, file %s\n", n, path);
	for (int r = 0; r < RUNS; r++) {
		for (int mode = 0; mode < 2; mode++) {
			struct gen g = { .n = n };
			struct rdb_source src = { gen_next, gen_size, &g };
			struct rdb_opts o = { .checksum = true, .compress = mode == 1, .used_mem = -1 };
			double t = now_s();
			int rc = rdb_save_file(NULL, path, &o, &src, NULL);

			t = now_s() - t;
			if (rc) {
				fprintf(stderr, "save: %s\n", strerror(-rc));
				return 1;
			}
			(mode ? lzf : save)[r] = (double)n / t;
		}
		{
			struct sink s = { .bytes = 0 };
			struct rdb_load_cbs cb = { .string_kv = sink_kv, .arg = &s };
			struct rdb_load_stats st;
			double t = now_s();
			int rc = rdb_load_file(path, &cb, NULL, &st, err, sizeof(err));

			t = now_s() - t;
			if (rc || st.keys != n || !st.checksum_verified) {
				fprintf(stderr, "load: %s\n", err);
				return 1;
			}
			load[r] = (double)n / t;
		}
	}
	if (stat(path, &sb) != 0)
		sb.st_size = 0;
	unlink(path);
	printf("BENCH rdb.save.rcukv %.0f keys/s\n", median(save));
	printf("BENCH rdb.save_lzf.rcukv %.0f keys/s\n", median(lzf));
	printf("BENCH rdb.load.rcukv %.0f keys/s\n", median(load));
	printf("BENCH rdb.file_size.rcukv %lld bytes\n", (long long)sb.st_size);
	return 0;
}
