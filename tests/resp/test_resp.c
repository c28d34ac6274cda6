/*
 * test_resp.c - resp/ (resp.h): strict numbers, the request header scanner,
 * the reply scanner resumed at every byte boundary and fed hostile input,
 * the limits, argument splitting as Redis's sdssplitargs() and encoding.
 * Expected values come from Redis's rules (string2ll, sdssplitargs, the
 * RESP3 specification), not from this implementation.
 */
#include "resp/resp.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ------------------------------------------------------------- numbers */

static int s2ll(const char *s, long long *v)
{
	return resp_str2ll(s, strlen(s), v);
}

static void test_str2ll(void **state)
{
	static const char *const bad[] = {"",	 "-",	"+1",  "01",  "-0", "00", " 1", "1 ",
					  "1x",	 "x1",	"--1", "1-",  "0x1",
					  "9223372036854775808", "-9223372036854775809",
					  "18446744073709551616", "99999999999999999999",
					  "123456789012345678901"};
	long long v = 42;
	char buf[RESP_LL_STR_MAX];

	(void)state;
	assert_true(s2ll("0", &v) && v == 0);
	assert_true(s2ll("7", &v) && v == 7);
	assert_true(s2ll("-7", &v) && v == -7);
	assert_true(s2ll("9223372036854775807", &v) && v == LLONG_MAX);
	assert_true(s2ll("-9223372036854775808", &v) && v == LLONG_MIN);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 42;
		if (s2ll(bad[i], &v))
			fail_msg("accepted \"%s\"", bad[i]);
		assert_int_equal(v, 42); /* untouched on failure */
	}
	/* the length bounds the digits: no NUL needed, none read past */
	assert_true(resp_str2ll("123456", 3, &v) && v == 123);

	assert_int_equal(resp_ll2str(buf, 0), 1);
	assert_string_equal(buf, "0");
	assert_int_equal(resp_ll2str(buf, LLONG_MIN), 20);
	assert_string_equal(buf, "-9223372036854775808");
	resp_ll2str(buf, LLONG_MAX);
	assert_string_equal(buf, "9223372036854775807");
}

/* ------------------------------------------------------ request header */

static void test_header(void **state)
{
	long long n = 0;
	size_t used = 0;
	char *big;

	(void)state;
	assert_int_equal(resp_scan_header("*3\r\n$3", 6, &n, &used), RESP_HDR_OK);
	assert_int_equal(n, 3);
	assert_int_equal(used, 4);
	assert_int_equal(resp_scan_header("*3\r", 3, &n, &used), RESP_HDR_MORE);
	assert_int_equal(resp_scan_header("*3", 2, &n, &used), RESP_HDR_MORE);
	assert_int_equal(resp_scan_header("$-1\r\n", 5, &n, &used), RESP_HDR_OK);
	assert_int_equal(n, -1);
	used = 0;
	assert_int_equal(resp_scan_header("*x\r\n", 4, &n, &used), RESP_HDR_BADNUM);
	assert_int_equal(used, 4);
	assert_int_equal(resp_scan_header("*01\r\n", 5, &n, &used), RESP_HDR_BADNUM);
	assert_int_equal(resp_scan_header("*\r\n", 3, &n, &used), RESP_HDR_BADNUM);
	/* a CR in the type byte's place: no number at all (the fuzzer's find) */
	assert_int_equal(resp_scan_header("\r\n", 2, &n, &used), RESP_HDR_BADNUM);
	assert_int_equal(used, 2);

	/* no CR: waiting up to the inline limit, then too long */
	big = malloc(RESP_INLINE_MAX + 2);
	assert_non_null(big);
	memset(big, '1', RESP_INLINE_MAX + 2);
	big[0] = '*';
	assert_int_equal(resp_scan_header(big, RESP_INLINE_MAX, &n, &used), RESP_HDR_MORE);
	assert_int_equal(resp_scan_header(big, RESP_INLINE_MAX + 1, &n, &used), RESP_HDR_LONG);
	free(big);
}

/* ------------------------------------------------------------- replies */

struct good {
	const char *bytes;
	size_t len; /* 0: strlen */
	char top;
	long long top_len;
};

static const struct good goods[] = {
    {"+OK\r\n", 0, '+', 0},
    {"-ERR x\r\n", 0, '-', 0},
    {":-12\r\n", 0, ':', 0},
    {"$5\r\nhello\r\n", 0, '$', 5},
    {"$0\r\n\r\n", 0, '$', 0},
    {"$-1\r\n", 0, '$', -1},
    {"$4\r\na\r\nb\r\n", 0, '$', 4}, /* CRLF inside a bulk is data */
    {"*-1\r\n", 0, '*', -1},
    {"*0\r\n", 0, '*', 0},
    {"*2\r\n$1\r\na\r\n:1\r\n", 0, '*', 2},
    {"*2\r\n*1\r\n+x\r\n*0\r\n", 0, '*', 2},
    {"%1\r\n+k\r\n*2\r\n:1\r\n:2\r\n", 0, '%', 1},
    {"~2\r\n+a\r\n+b\r\n", 0, '~', 2},
    {">2\r\n+message\r\n+x\r\n", 0, '>', 2},
    {"_\r\n", 0, '_', -1},
    {"#t\r\n", 0, '#', 0},
    {",3.14\r\n", 0, ',', 0},
    {"(12345678901234567890\r\n", 0, '(', 0},
    {"=8\r\ntxt:abcd\r\n", 0, '=', 8},
    {"!3\r\nerr\r\n", 0, '!', 3},
    /* attributes are skipped: the reply is what follows */
    {"|1\r\n+ttl\r\n:3\r\n:7\r\n", 0, ':', 0},
    {"|0\r\n+OK\r\n", 0, '+', 0},
    {"*2\r\n|1\r\n+a\r\n+b\r\n:1\r\n:2\r\n", 0, '*', 2},
    {"$3\r\na\0b\r\n", 9, '$', 3},
};

/* Every reply in one piece, then fed one byte more at a time through one
 * state: every prefix is AGAIN, the whole is DONE at the same end. */
static void test_scan_good(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		const struct good *g = &goods[i];
		size_t len = g->len ? g->len : strlen(g->bytes);
		struct resp_scan s;
		char buf[256];

		memcpy(buf, g->bytes, len);
		memcpy(buf + len, "+next\r\n", 7); /* a following reply is not read */
		resp_scan_init(&s);
		if (resp_scan(&s, buf, len + 7) != RESP_SCAN_DONE)
			fail_msg("reply %zu not done: %s", i, s.err);
		assert_int_equal(s.pos, len);
		assert_int_equal(s.top, g->top);
		assert_int_equal(s.top_len, g->top_len);
		assert_int_equal(resp_reply_len(buf, len), (long long)len);

		resp_scan_init(&s);
		for (size_t k = 0; k < len; k++)
			if (resp_scan(&s, buf, k) != RESP_SCAN_AGAIN)
				fail_msg("reply %zu: prefix %zu not AGAIN (%s)", i, k, s.err);
		assert_int_equal(resp_scan(&s, buf, len), RESP_SCAN_DONE);
		assert_int_equal(s.pos, len);
		for (size_t k = 0; k < len; k++)
			assert_int_equal(resp_reply_len(buf, k), 0);
	}
}

static void test_scan_bad(void **state)
{
	static const char *const bad[] = {
	    "?x\r\n",		 /* unknown type */
	    "+OK\rX",		 /* CR without LF */
	    ":1.5\r\n",		 /* not an integer */
	    ":01\r\n",		 /* leading zero */
	    "$-2\r\n",		 /* below null */
	    "$x\r\n",		 /* no length */
	    "$3\r\nabcde\r\n",	 /* bulk not followed by CRLF */
	    "*-2\r\n",		 /* below null */
	    "#x\r\n",		 /* not a boolean */
	    "#tt\r\n",		 /* not a boolean */
	    "=2\r\nab\r\n",	 /* verbatim shorter than its "xxx:" */
	    "*1\r\n$x\r\n",	 /* inside an aggregate */
	    "$536870913\r\n",	 /* over 512 MB */
	    "*4294967297\r\n", /* over 2^32 elements */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct resp_scan s;

		resp_scan_init(&s);
		if (resp_scan(&s, bad[i], strlen(bad[i])) != RESP_SCAN_ERROR)
			fail_msg("\"%s\" accepted", bad[i]);
		assert_true(strncmp(s.err, "Protocol error, ", 16) == 0);
		assert_int_equal(resp_reply_len(bad[i], strlen(bad[i])), -1);
	}
}

static void test_scan_limits(void **state)
{
	size_t n = RESP_INLINE_MAX + 8;
	char *buf = malloc(n + 4);
	struct resp_scan s;
	int depth = RESP_REPLY_MAX_DEPTH;

	(void)state;
	assert_non_null(buf);
	/* a line at the limit waits; one past it is an error */
	buf[0] = '+';
	memset(buf + 1, 'a', n);
	resp_scan_init(&s);
	assert_int_equal(resp_scan(&s, buf, RESP_INLINE_MAX + 1), RESP_SCAN_AGAIN);
	assert_int_equal(resp_scan(&s, buf, RESP_INLINE_MAX + 2), RESP_SCAN_ERROR);
	assert_non_null(strstr(s.err, "line too long"));

	/* RESP_REPLY_MAX_DEPTH nested arrays are fine, one more is not */
	for (int extra = 0; extra < 2; extra++) {
		size_t len = 0;

		for (int d = 0; d < depth + extra; d++)
			len += (size_t)sprintf(buf + len, "*1\r\n");
		len += (size_t)sprintf(buf + len, ":1\r\n");
		resp_scan_init(&s);
		assert_int_equal(resp_scan(&s, buf, len),
				 extra ? RESP_SCAN_ERROR : RESP_SCAN_DONE);
	}
	assert_non_null(strstr(s.err, "nesting too deep"));

	/* a lower bulk ceiling per state */
	resp_scan_init(&s);
	s.max_bulk = 10;
	assert_int_equal(resp_scan(&s, "$11\r\n", 5), RESP_SCAN_ERROR);
	free(buf);
}

/* Random byte soup never makes the scanner read past its length (ASan
 * checks the reads: each input is a separate allocation of its exact size)
 * and every verdict is stable when the same bytes come split. */
static void test_scan_soup(void **state)
{
	static const char alphabet[] = "*%~>|$=!+-:,#(_\r\n0123456789-tfx";
	unsigned seed = 12345;

	(void)state;
	for (int iter = 0; iter < 20000; iter++) {
		size_t len = 1 + (seed = seed * 1103515245 + 12345) % 40;
		char *buf = malloc(len);
		struct resp_scan one, split;
		int r1, r2 = RESP_SCAN_AGAIN;

		assert_non_null(buf);
		for (size_t k = 0; k < len; k++)
			buf[k] = alphabet[((seed = seed * 1103515245 + 12345) >> 16) %
					  (sizeof(alphabet) - 1)];
		resp_scan_init(&one);
		r1 = resp_scan(&one, buf, len);
		resp_scan_init(&split);
		for (size_t k = 1; k <= len && r2 == RESP_SCAN_AGAIN; k++)
			r2 = resp_scan(&split, buf, k);
		assert_int_equal(r1 == RESP_SCAN_ERROR, r2 == RESP_SCAN_ERROR);
		if (r1 == RESP_SCAN_DONE) {
			assert_int_equal(r2, RESP_SCAN_DONE);
			assert_int_equal(one.pos, split.pos);
			assert_true(one.pos <= len);
		}
		free(buf);
	}
}

/* ------------------------------------------------------------ splitting */

struct split_case {
	const char *line;
	int argc; /* or RESP_SPLIT_UNBALANCED */
	const char *args[4];
	size_t lens[4];
};

/* The rules of Redis's sdssplitargs() (src/sds.c), one case per rule. */
static const struct split_case splits[] = {
    {"", 0, {0}, {0}},
    {"   \t ", 0, {0}, {0}},
    {"set a b", 3, {"set", "a", "b"}, {3, 1, 1}},
    {"  set\t\ta  ", 2, {"set", "a"}, {3, 1}},
    {"\v\fx", 1, {"x"}, {1}},	     /* \v \f are skipped before an argument */
    {"a\vb", 1, {"a\vb"}, {3}},	     /* but do not end an unquoted one */
    {"a\nb\rc", 3, {"a", "b", "c"}, {1, 1, 1}},
    {"\"a b\" c", 2, {"a b", "c"}, {3, 1}},
    {"\"\\x41\\x4a\\n\\r\\t\\b\\a\\\\\\\"\\q\"", 1, {"AJ\n\r\t\b\a\\\"q"}, {10}},
    {"\"\\x4g\"", 1, {"x4g"}, {3}}, /* not hex: \x is x */
    {"\"\"", 1, {""}, {0}},
    {"''", 1, {""}, {0}},
    {"'it\\'s' x", 2, {"it's", "x"}, {4, 1}},
    {"'a\\nb'", 1, {"a\\nb"}, {4}}, /* single quotes take \' only */
    {"ab\"cd\"", 1, {"abcd"}, {4}},   /* a quote inside a word opens */
    {"\"a\"\tb", 2, {"a", "b"}, {1, 1}},
    {"\"a\"\vb", 2, {"a", "b"}, {1, 1}}, /* any blank may follow a quote */
    {"\"a\"b", RESP_SPLIT_UNBALANCED, {0}, {0}},
    {"'a'b", RESP_SPLIT_UNBALANCED, {0}, {0}},
    {"\"abc", RESP_SPLIT_UNBALANCED, {0}, {0}},
    {"'abc", RESP_SPLIT_UNBALANCED, {0}, {0}},
    {"\"abc\\", RESP_SPLIT_UNBALANCED, {0}, {0}},
    /* as rcukv-cli meets them */
    {"  set  \"a b\\x41\\n\" 'it\\'s' x\"y z\"", 4, {"set", "a bA\n", "it's", "xy z"}, {3, 5, 4, 4}},
    {"set k \"\\x00\"", 3, {"set", "k", "\0"}, {3, 1, 1}},
    {"set \"ends with backslash\\", RESP_SPLIT_UNBALANCED, {0}, {0}},
};

static void test_split(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(splits) / sizeof(splits[0]); i++) {
		const struct split_case *t = &splits[i];
		char **argv = NULL;
		size_t *lens = NULL;
		int argc = resp_splitargs(t->line, strlen(t->line), &argv, &lens);

		if (argc != t->argc)
			fail_msg("line %zu \"%s\": %d arguments, want %d", i, t->line, argc, t->argc);
		if (argc < 0) {
			assert_null(argv);
			continue;
		}
		for (int a = 0; a < argc; a++) {
			assert_int_equal(lens[a], t->lens[a]);
			assert_memory_equal(argv[a], t->args[a], t->lens[a]);
			assert_int_equal(argv[a][lens[a]], '\0');
		}
		assert_null(argv[argc]);
		free(argv);
	}
}

/* Bytes past @len are not read; a NUL ends the line as it ends a C string
 * for sdssplitargs() (and is an error inside quotes). */
static void test_split_bounds(void **state)
{
	char **argv;
	size_t *lens;

	(void)state;
	assert_int_equal(resp_splitargs("get key junk", 7, &argv, &lens), 2);
	assert_memory_equal(argv[1], "key", 3);
	free(argv);
	assert_int_equal(resp_splitargs("a\0b", 3, &argv, &lens), 1);
	free(argv);
	assert_int_equal(resp_splitargs("\"a\0b\"", 5, &argv, &lens), RESP_SPLIT_UNBALANCED);
	assert_int_equal(resp_splitargs("\"\\x4", 4, &argv, &lens), RESP_SPLIT_UNBALANCED);
}

/* ------------------------------------------------------------- encoding */

static void test_encode(void **state)
{
	const char *argv[] = {"SET", "key", "", "a\r\nb"};
	const size_t lens[] = {3, 3, 0, 4};
	const char want[] = "*4\r\n$3\r\nSET\r\n$3\r\nkey\r\n$0\r\n\r\n$4\r\na\r\nb\r\n";
	char out[128];
	size_t n = resp_encode_len(4, lens);
	struct resp_scan s;

	(void)state;
	assert_int_equal(n, sizeof(want) - 1);
	assert_int_equal(resp_encode(out, 4, argv, lens), n);
	assert_memory_equal(out, want, n);
	/* what is encoded scans back as one array of as many elements */
	resp_scan_init(&s);
	assert_int_equal(resp_scan(&s, out, n), RESP_SCAN_DONE);
	assert_int_equal(s.pos, n);
	assert_int_equal(s.top_len, 4);
	/* widths of the counts: 10 arguments, a 10-byte argument */
	{
		const char *a10[10] = {"a", "a", "a", "a", "a", "a", "a", "a", "a", "0123456789"};
		size_t l10[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 10};
		char buf[128];

		n = resp_encode_len(10, l10);
		assert_int_equal(resp_encode(buf, 10, a10, l10), n);
		assert_memory_equal(buf, "*10\r\n", 5);
		assert_memory_equal(buf + n - 17, "$10\r\n0123456789\r\n", 17);
	}
	assert_int_equal(resp_encode_len(0, NULL), 4);
	assert_int_equal(resp_encode(out, 0, NULL, NULL), 4);
	assert_memory_equal(out, "*0\r\n", 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_str2ll),	 cmocka_unit_test(test_header),
	    cmocka_unit_test(test_scan_good),	 cmocka_unit_test(test_scan_bad),
	    cmocka_unit_test(test_scan_limits), cmocka_unit_test(test_scan_soup),
	    cmocka_unit_test(test_split),	 cmocka_unit_test(test_split_bounds),
	    cmocka_unit_test(test_encode),
	};
	int n = (int)(sizeof(tests) / sizeof(tests[0])), failed;

	failed = cmocka_run_group_tests_name("resp", tests, NULL, NULL);
	printf("%d passed, %d failed\n", n - failed, failed);
	return failed ? 1 : 0;
}
