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
 * The format layer alone: no hash table, no server.
 *
 * For scale, when redis-server is installed, the same file through
 * redis-server 7 (loopback port 7300-7349, --dir a temp dir, stopped by its
 * PID): its start-up load time from its log ("DB loaded from disk") and the
 * round trip of SAVE (rdbcompression and rdbchecksum on, as save_lzf):
 *   BENCH rdb.load.redis        keys/s   includes building its dict
 *   BENCH rdb.save.redis        keys/s   includes walking its dict
 * Not side by side work (Redis builds and walks a table, this layer does
 * not), so no RATIO line: the server's end-to-end ratio belongs to
 * `make bench-persistence`.  Not a test: asserts nothing about time.
 */
#include "server/rdb.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* ------------------------------------------------ redis-server reference */

static int redis_connect(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Sends an inline command, reads the first reply line into out. */
static int redis_cmd(int port, const char *cmd, char *out, size_t outlen)
{
	int fd = redis_connect(port);
	size_t o = 0;

	if (fd < 0)
		return -1;
	if (write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd)) {
		close(fd);
		return -1;
	}
	while (o + 1 < outlen) {
		ssize_t r = read(fd, out + o, 1);

		if (r <= 0 || out[o] == '\n')
			break;
		o++;
	}
	out[o] = '\0';
	close(fd);
	return 0;
}

/* Starts redis-server loading dir/dump.rdb; returns its pid, port in *port. */
static pid_t redis_start(const char *dir, int *port)
{
	char line[256], log[600];

	for (int p = 7300; p < 7350; p++) {
		pid_t pid;
		int fd = redis_connect(p);

		if (fd >= 0) { /* taken */
			close(fd);
			continue;
		}
		snprintf(log, sizeof(log), "%s/redis.log", dir);
		unlink(log);
		pid = fork();
		if (pid == 0) {
			char ps[16];

			snprintf(ps, sizeof(ps), "%d", p);
			execlp("redis-server", "redis-server", "--port", ps, "--bind", "127.0.0.1",
			       "--dir", dir, "--dbfilename", "dump.rdb", "--save", "",
			       "--appendonly", "no", "--logfile", log, (char *)NULL);
			_exit(127);
		}
		if (pid < 0)
			return -1;
		for (int i = 0; i < 600; i++) { /* up to 60 s to load */
			int st;

			if (waitpid(pid, &st, WNOHANG) == pid)
				break;
			if (redis_cmd(p, "PING\r\n", line, sizeof(line)) == 0 &&
			    strncmp(line, "+PONG", 5) == 0) {
				*port = p;
				return pid;
			}
			usleep(100 * 1000);
		}
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return -1;
}

static void redis_stop(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* Seconds from the "DB loaded from disk: X seconds" log line, or -1. */
static double redis_load_secs(const char *dir)
{
	char log[600], line[1024];
	double secs = -1;
	FILE *f;

	snprintf(log, sizeof(log), "%s/redis.log", dir);
	f = fopen(log, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "DB loaded from disk: ");

		if (p)
			secs = atof(p + strlen("DB loaded from disk: "));
	}
	fclose(f);
	return secs;
}

static void bench_redis(const char *file, size_t n)
{
	char dir[] = "/tmp/bench_rdb_redis.XXXXXX", dst[600], cmd[1300], line[256];
	double load[RUNS], save[RUNS];
	int port = 0;

	if (system("command -v redis-server >/dev/null 2>&1") != 0) {
		printf("bench_rdb: redis-server not installed, no reference figures\n");
		return;
	}
	if (!mkdtemp(dir))
		return;
	snprintf(dst, sizeof(dst), "%s/dump.rdb", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", file, dst);
	if (system(cmd) != 0)
		goto out;
	for (int r = 0; r < RUNS; r++) {
		pid_t pid = redis_start(dir, &port);
		double secs = redis_load_secs(dir), t;

		if (pid < 0 || secs <= 0) {
			printf("bench_rdb: redis-server did not load the file (see %s)\n", dir);
			if (pid > 0)
				redis_stop(pid);
			return;
		}
		load[r] = (double)n / secs;
		t = now_s();
		redis_cmd(port, "SAVE\r\n", line, sizeof(line));
		t = now_s() - t;
		save[r] = strncmp(line, "+OK", 3) == 0 ? (double)n / t : 0;
		redis_stop(pid);
	}
	printf("BENCH rdb.load.redis %.0f keys/s\n", median(load));
	printf("BENCH rdb.save.redis %.0f keys/s\n", median(save));
out:
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
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
			struct gen g = {.n = n};
			struct rdb_source src = {gen_next, gen_size, &g};
			struct rdb_opts o = {
			    .checksum = true, .compress = mode == 1, .used_mem = -1};
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
			struct sink s = {.bytes = 0};
			struct rdb_load_cbs cb = {.string_kv = sink_kv, .arg = &s};
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
	printf("BENCH rdb.save.rcukv %.0f keys/s\n", median(save));
	printf("BENCH rdb.save_lzf.rcukv %.0f keys/s\n", median(lzf));
	printf("BENCH rdb.load.rcukv %.0f keys/s\n", median(load));
	printf("BENCH rdb.file_size.rcukv %lld bytes\n", (long long)sb.st_size);
	fflush(stdout);
	bench_redis(path, n);
	unlink(path);
	return 0;
}
