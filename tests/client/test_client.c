/*
 * tests/client/test_client.c: unit tests of rcukv-cli's pure parts: the
 * latency histogram (percentiles on known inputs, bucket layout, merge,
 * HdrHistogram text output), the RESP scanner (every split point, hostile
 * input) as the client drives resp_scan(), and the reply tree; argument
 * splitting is tests/resp/test_resp.c's.
 *
 * cmocka; ends with 'N passed, M failed'.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "resp/resp.h"
#include "client/cli.h"

static struct cli_hist *hist_new(void)
{
	struct cli_hist *h = malloc(sizeof(*h));

	assert_non_null(h);
	cli_hist_init(h);
	return h;
}

/* |got - want| <= want / 128: the histogram's documented precision. */
static void assert_close(uint64_t got, uint64_t want)
{
	uint64_t d = got > want ? got - want : want - got;

	if (d * 128 > want) {
		fail_msg("got %llu, want %llu within 1/128", (unsigned long long)got,
			 (unsigned long long)want);
	}
}

static void test_hist_small_exact(void **state)
{
	struct cli_hist *h = hist_new();

	(void)state;
	for (uint64_t v = 1; v <= 100; v++)
		cli_hist_record(h, v);
	assert_int_equal(h->count, 100);
	assert_int_equal(cli_hist_percentile(h, 0), 1);
	assert_int_equal(cli_hist_percentile(h, 50), 50);
	assert_int_equal(cli_hist_percentile(h, 90), 90);
	assert_int_equal(cli_hist_percentile(h, 99), 99);
	assert_int_equal(cli_hist_percentile(h, 99.9), 100);
	assert_int_equal(cli_hist_percentile(h, 100), 100);
	assert_true(cli_hist_mean(h) > 50.49 && cli_hist_mean(h) < 50.51);
	free(h);
}

static void test_hist_uniform_million(void **state)
{
	struct cli_hist *h = hist_new();

	(void)state;
	for (uint64_t v = 1; v <= 1000000; v++)
		cli_hist_record(h, v);
	assert_close(cli_hist_percentile(h, 50), 500000);
	assert_close(cli_hist_percentile(h, 90), 900000);
	assert_close(cli_hist_percentile(h, 99), 990000);
	assert_close(cli_hist_percentile(h, 99.9), 999000);
	assert_close(cli_hist_percentile(h, 99.99), 999900);
	assert_int_equal(cli_hist_percentile(h, 100), 1000000);
	assert_int_equal(h->min, 1);
	assert_int_equal(h->max, 1000000);
	/* A percentile never reports less than the true value (highest equivalent). */
	assert_true(cli_hist_percentile(h, 50) >= 500000);
	free(h);
}

static void test_hist_bimodal(void **state)
{
	struct cli_hist *h = hist_new();

	(void)state;
	for (int i = 0; i < 990; i++)
		cli_hist_record(h, 100);
	for (int i = 0; i < 10; i++)
		cli_hist_record(h, 100000);
	assert_int_equal(cli_hist_percentile(h, 50), 100);
	assert_int_equal(cli_hist_percentile(h, 99), 100);
	assert_close(cli_hist_percentile(h, 99.1), 100000);
	assert_int_equal(cli_hist_percentile(h, 99.9), 100000); /* clamped to max */
	free(h);
}

static void test_hist_sixty_seconds(void **state)
{
	struct cli_hist *h = hist_new();

	(void)state;
	cli_hist_record(h, 1);
	cli_hist_record(h, 60000000);	   /* 60 s */
	cli_hist_record(h, 3600000000ull); /* 1 h: still inside the range */
	assert_true(cli_hist_index(3600000000ull) < CLI_HIST_NBUCKETS - 1);
	assert_close(cli_hist_percentile(h, 66), 60000000);
	assert_int_equal(cli_hist_percentile(h, 100), 3600000000ull);
	/* Past the range: last bucket, exact max. */
	cli_hist_record(h, UINT64_MAX / 2);
	assert_int_equal(cli_hist_index(UINT64_MAX / 2), CLI_HIST_NBUCKETS - 1);
	assert_int_equal(h->max, UINT64_MAX / 2);
	free(h);
}

static void test_hist_buckets_tile(void **state)
{
	(void)state;
	assert_int_equal(cli_hist_lowest(0), 0);
	for (unsigned i = 0; i + 1 < CLI_HIST_NBUCKETS; i++) {
		uint64_t lo = cli_hist_lowest(i), hi = cli_hist_highest(i);
		assert_true(lo <= hi);
		assert_int_equal(cli_hist_lowest(i + 1), hi + 1);
		assert_int_equal(cli_hist_index(lo), i);
		assert_int_equal(cli_hist_index(hi), i);
		/* Relative width at most 1/128 above the linear range. */
		if (lo >= 256)
			assert_true((hi - lo + 1) * 128 <= lo);
	}
	assert_int_equal(cli_hist_index(1000), 506); /* the worked example in hist.c */
	assert_int_equal(cli_hist_lowest(506), 1000);
	assert_int_equal(cli_hist_highest(506), 1003);
}

static void test_hist_merge_empty(void **state)
{
	struct cli_hist *a = hist_new(), *b = hist_new(), *all = hist_new();

	(void)state;
	assert_int_equal(cli_hist_percentile(a, 50), 0);
	for (uint64_t v = 0; v < 5000; v++) {
		cli_hist_record(v % 2 ? a : b, v * 7);
		cli_hist_record(all, v * 7);
	}
	cli_hist_merge(a, b);
	assert_int_equal(a->count, all->count);
	assert_int_equal(a->min, all->min);
	assert_int_equal(a->max, all->max);
	assert_memory_equal(a->b, all->b, sizeof(a->b));
	for (double p = 0; p <= 100; p += 0.5)
		assert_int_equal(cli_hist_percentile(a, p), cli_hist_percentile(all, p));
	free(a);
	free(b);
	free(all);
}

static void test_hist_hdr_format(void **state)
{
	struct cli_hist *h = hist_new();
	char line[256];
	double last_v = -1, last_p = -1, v, p;
	unsigned long long cnt, last_cnt = 0;
	int rows = 0, footer = 0;
	FILE *f = tmpfile();

	(void)state;
	assert_non_null(f);
	for (uint64_t i = 1; i <= 10000; i++)
		cli_hist_record(h, i);
	cli_hist_write_hdr(h, f);
	rewind(f);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_non_null(strstr(line, "Value"));
	assert_non_null(strstr(line, "1/(1-Percentile)"));
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#') {
			footer++;
			if (!strncmp(line, "#[Max", 5)) {
				assert_non_null(strstr(line, "10.000"));
				assert_non_null(strstr(line, "10000]"));
			}
			continue;
		}
		if (sscanf(line, "%lf %lf %llu", &v, &p, &cnt) != 3)
			continue;
		assert_true(v >= last_v);
		assert_true(p > last_p);
		assert_true(cnt >= last_cnt);
		last_v = v;
		last_p = p;
		last_cnt = cnt;
		rows++;
	}
	assert_true(rows > 20);
	assert_int_equal(footer, 3);
	assert_true(last_p == 1.0);
	assert_int_equal(last_cnt, 10000);
	assert_true(last_v == 10.0);
	fclose(f);
	free(h);
}

/* ---- scanner ---- */

static const char *replies[] = {
    "+OK\r\n",
    "-ERR bad\r\n",
    ":-42\r\n",
    "$5\r\nhello\r\n",
    "$0\r\n\r\n",
    "$-1\r\n",
    "*-1\r\n",
    "*0\r\n",
    "*3\r\n:1\r\n*2\r\n$1\r\na\r\n+b\r\n$-1\r\n",
    "%2\r\n+k1\r\n:1\r\n+k2\r\n*1\r\n#t\r\n",
    "~2\r\n,3.14\r\n(12345678901234567890\r\n",
    "_\r\n",
    "=8\r\ntxt:abcd\r\n",
    "!3\r\nERR\r\n",
    "|1\r\n+key\r\n+val\r\n$3\r\nabc\r\n",
    "*2\r\n|1\r\n+a\r\n+b\r\n:1\r\n:2\r\n",
    ">2\r\n+message\r\n+x\r\n",
};

static void test_scan_every_split(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
		const char *r = replies[i];
		size_t n = strlen(r);
		for (size_t cut = 0; cut <= n; cut++) {
			struct resp_scan s;
			resp_scan_init(&s);
			int st = resp_scan(&s, r, cut);
			if (cut < n) {
				assert_int_equal(st, RESP_SCAN_AGAIN);
				/* Resume with the whole reply. */
				st = resp_scan(&s, r, n);
			}
			assert_int_equal(st, RESP_SCAN_DONE);
			assert_int_equal(s.pos, n);
		}
		struct cli_reply *t = cli_reply_parse(r, n);
		assert_non_null(t);
		cli_reply_free(t);
	}
}

static void test_scan_top(void **state)
{
	struct resp_scan s;
	struct cli_reply *r;

	(void)state;
	r = cli_reply_parse(":-9223372036854775808\r\n", 23);
	assert_non_null(r);
	assert_true(r->integer == LLONG_MIN);
	cli_reply_free(r);
	r = cli_reply_parse(":9223372036854775807\r\n", 22);
	assert_non_null(r);
	assert_true(r->integer == LLONG_MAX);
	cli_reply_free(r);
	resp_scan_init(&s);
	assert_int_equal(resp_scan(&s, "$-1\r\n", 5), RESP_SCAN_DONE);
	assert_int_equal(s.top, '$');
	assert_int_equal(s.top_len, -1);
	resp_scan_init(&s);
	assert_int_equal(resp_scan(&s, "|1\r\n+a\r\n+b\r\n$2\r\nhi\r\n", 20), RESP_SCAN_DONE);
	assert_int_equal(s.top, '$');
	assert_int_equal(s.top_len, 2);
}

static void test_scan_hostile(void **state)
{
	static const char *bad[] = {
	    "?\r\n",
	    "$-2\r\n",
	    "*abc\r\n",
	    "$3\r\nabcXY",
	    ":12a\r\n",
	    "#x\r\n",
	    "+ok\rX",
	    "$99999999999999999999\r\n",
	    "=2\r\nab\r\n",
	    "*-5\r\n",
	    ":9999999999999999999\r\n",
	    ":-9999999999999999999\r\n",
	    ":-\r\n",
	    ":\r\n",
	    "*4294967297\r\n",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct resp_scan s;
		resp_scan_init(&s);
		assert_int_equal(resp_scan(&s, bad[i], strlen(bad[i])), RESP_SCAN_ERROR);
		assert_true(s.err[0] != '\0');
	}
	/* Nesting past the limit. */
	char deep[4 * (RESP_REPLY_MAX_DEPTH + 2) + 8];
	size_t n = 0;
	struct resp_scan s;
	for (int i = 0; i < RESP_REPLY_MAX_DEPTH + 1; i++)
		n += (size_t)sprintf(deep + n, "*1\r\n");
	resp_scan_init(&s);
	assert_int_equal(resp_scan(&s, deep, n), RESP_SCAN_ERROR);
	/* A header line that never ends. */
	size_t big = RESP_INLINE_MAX + 16;
	char *line = malloc(big);
	assert_non_null(line);
	line[0] = '+';
	memset(line + 1, 'a', big - 1);
	resp_scan_init(&s);
	assert_int_equal(resp_scan(&s, line, big), RESP_SCAN_ERROR);
	free(line);
}

static void test_reply_tree(void **state)
{
	const char *r = "*4\r\n:7\r\n%1\r\n+k\r\n~1\r\n,1.5\r\n$-1\r\n=7\r\nmkd:x y\r\n";
	struct cli_reply *t = cli_reply_parse(r, strlen(r));
	struct cli_buf b = {0};

	(void)state;
	assert_non_null(t);
	assert_int_equal(t->type, CLI_R_ARRAY);
	assert_int_equal(t->elements, 4);
	assert_int_equal(t->element[0]->integer, 7);
	assert_int_equal(t->element[1]->type, CLI_R_MAP);
	assert_int_equal(t->element[1]->elements, 2);
	assert_int_equal(t->element[2]->type, CLI_R_NIL);
	assert_int_equal(t->element[3]->type, CLI_R_VERB);
	assert_string_equal(t->element[3]->vtype, "mkd");
	assert_string_equal(t->element[3]->str, "x y");
	cli_format_reply(&b, t, CLI_OUT_TTY);
	assert_string_equal(b.p, "1) (integer) 7\n2) 1# k => 1~ (double) 1.5\n3) (nil)\n4) x y\n");
	b.len = 0;
	cli_format_reply(&b, t, CLI_OUT_RAW);
	assert_string_equal(b.p, "7\nk 1.5\n\nx y\n");
	free(b.p);
	cli_reply_free(t);
}

/*
 * Mutated replies: flip, insert and cut bytes of valid replies, then scan,
 * parse and format whatever comes out.  Nothing may crash or leak (run under
 * make asan); a reply the scanner accepts must parse.
 */
static void test_scan_mutations(void **state)
{
	uint64_t x = 0x2545f4914f6cdd1dull;
	const char alphabet[] = "*%~>|$=!+-:,#(_\r\n0123456789-tfx";
	int accepted = 0;

	(void)state;
	for (int iter = 0; iter < 20000; iter++) {
		char buf[256];
		const char *src = replies[iter % (sizeof(replies) / sizeof(replies[0]))];
		size_t n = strlen(src);
		memcpy(buf, src, n);
		for (int m = 0; m < 1 + iter % 4; m++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			size_t at = (size_t)(x % (n + 1));
			char c = alphabet[(x >> 32) % (sizeof(alphabet) - 1)];
			switch ((x >> 40) % 3) {
			case 0: /* replace */
				if (at < n)
					buf[at] = c;
				break;
			case 1: /* insert */
				if (n + 1 < sizeof(buf)) {
					memmove(buf + at + 1, buf + at, n - at);
					buf[at] = c;
					n++;
				}
				break;
			default: /* cut */
				n = at;
				break;
			}
		}
		struct resp_scan sc;
		resp_scan_init(&sc);
		if (resp_scan(&sc, buf, n) != RESP_SCAN_DONE)
			continue;
		accepted++;
		struct cli_reply *r = cli_reply_parse(buf, sc.pos);
		assert_non_null(r);
		struct cli_buf out = {0};
		cli_format_reply(&out, r, CLI_OUT_TTY);
		cli_format_reply(&out, r, CLI_OUT_RAW);
		free(out.p);
		cli_reply_free(r);
	}
	assert_true(accepted > 100); /* the mutations did exercise the parser */
}

/* ---- hostile server: the client must fail cleanly, never crash ---- */

static const char *hostile[] = {
    "+OK",			    /* no CRLF, then EOF */
    "$5\r\nab",			    /* short bulk, then EOF */
    "?garbage\r\n", "*2\r\n:1\r\n", /* missing element, then EOF */
    "$-5\r\n",	    "*99999999999\r\n", "%-3\r\n", ":12x\r\n", "\x01\x02\x03\xff\r\n",
};
#define NHOSTILE (sizeof(hostile) / sizeof(hostile[0]))

struct fake {
	int lfd;
	int rounds; /* connections to serve */
	int deep;   /* also serve one over-deep reply first */
};

static void *fake_server(void *arg)
{
	struct fake *f = arg;
	char buf[4096];

	for (int i = 0; i < f->rounds; i++) {
		int fd = accept(f->lfd, NULL, NULL);
		if (fd < 0)
			break;
		if (read(fd, buf, sizeof(buf)) > 0) {
			if (f->deep && i == 0) {
				for (int d = 0; d < 100; d++)
					(void)!write(fd, "*1\r\n", 4);
			} else {
				const char *p = hostile[i % NHOSTILE];
				(void)!write(fd, p, strlen(p));
			}
		}
		close(fd);
	}
	return NULL;
}

static int fake_listen(int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t n = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 16) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &n) != 0)
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

static void test_hostile_server(void **state)
{
	struct fake f = {.rounds = (int)NHOSTILE + 1, .deep = 1};
	struct cli_conn_opts o = {.host = "127.0.0.1", .timeout_ms = 2000};
	pthread_t th;

	(void)state;
	f.lfd = fake_listen(&o.port);
	assert_true(f.lfd >= 0);
	assert_int_equal(pthread_create(&th, NULL, fake_server, &f), 0);
	for (int i = 0; i < f.rounds; i++) {
		struct cli_conn c;
		char *argv[1] = {"PING"};
		assert_int_equal(cli_conn_open(&c, &o), 0);
		assert_int_equal(cli_conn_send(&c, 1, argv, NULL), 0);
		struct cli_reply *r = cli_conn_read(&c);
		assert_null(r);
		assert_true(c.err[0] != '\0');
		cli_conn_close(&c);
	}
	pthread_join(th, NULL);
	close(f.lfd);
}

static void test_hostile_bench(void **state)
{
	struct fake f = {.rounds = 200};
	struct cli_conn_opts o = {.host = "127.0.0.1", .timeout_ms = 2000};
	char *argv[] = {"bench", "-q", "-c", "2", "-r", "20", "--timeout", "0.3"};
	pthread_t th;
	int rc;

	(void)state;
	f.lfd = fake_listen(&o.port);
	assert_true(f.lfd >= 0);
	assert_int_equal(pthread_create(&th, NULL, fake_server, &f), 0);
	/* Garbage on every connection: counted errors, a clean end, no crash. */
	rc = cli_bench_main(8, argv, &o);
	assert_true(rc == 0 || rc == 1);
	shutdown(f.lfd, SHUT_RDWR);
	close(f.lfd);
	pthread_join(th, NULL);
}

int main(void)
{
	/* One test a line. */
	/* clang-format off */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_small_exact),
		cmocka_unit_test(test_hist_uniform_million),
		cmocka_unit_test(test_hist_bimodal),
		cmocka_unit_test(test_hist_sixty_seconds),
		cmocka_unit_test(test_hist_buckets_tile),
		cmocka_unit_test(test_hist_merge_empty),
		cmocka_unit_test(test_hist_hdr_format),
		cmocka_unit_test(test_scan_every_split),
		cmocka_unit_test(test_scan_top),
		cmocka_unit_test(test_scan_hostile),
		cmocka_unit_test(test_scan_mutations),
		cmocka_unit_test(test_reply_tree),
		cmocka_unit_test(test_hostile_server),
		cmocka_unit_test(test_hostile_bench),
	};
	/* clang-format on */
	int total = (int)(sizeof(tests) / sizeof(tests[0]));

	/* The fake server writes to clients that may have hung up on it already. */
	signal(SIGPIPE, SIG_IGN);
	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	printf("%d passed, %d failed\n", total - failed, failed);
	return failed ? 1 : 0;
}
