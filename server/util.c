/*
 * util.c - small helpers of rcukv-server: allocation that dies on failure,
 * strict number parsing with Redis's rules, glob matching, clocks.
 *
 * Pure functions, thread-safe.  Exercised by tests/server/test_server.c
 * through the commands that parse numbers and patterns.
 */
#include "resp/resp.h"
#include "server/util.h"

#include <stdarg.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

void srv_die_at(const char *file, int line, const char *func, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int e = errno;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rcukv-server: %s:%d %s: %s (errno: %s)\n", file, line, func, msg,
		strerror(e));
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		srv_die("out of memory allocating %zu bytes", n);
	return p;
}

void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);

	if (!p)
		srv_die("out of memory allocating %zu x %zu bytes", n, m);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		srv_die("out of memory reallocating %zu bytes", n);
	return q;
}

char *xstrdup(const char *s)
{
	return xmemdup(s, strlen(s));
}

char *xmemdup(const void *p, size_t n)
{
	char *q = xmalloc(n + 1);

	memcpy(q, p, n);
	q[n] = '\0';
	return q;
}

int util_str2ull_strict(const char *s, size_t len, unsigned long long *out)
{
	unsigned long long v = 0;

	if (len == 0 || len > 20)
		return 0;
	if (len > 1 && s[0] == '0')
		return 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		if (v > ULLONG_MAX / 10)
			return 0;
		v *= 10;
		if (v > ULLONG_MAX - (unsigned long long)(s[i] - '0'))
			return 0;
		v += (unsigned long long)(s[i] - '0');
	}
	*out = v;
	return 1;
}

int util_str2ld(const char *s, size_t slen, long double *out)
{
	char buf[5120];
	char *eptr;
	long double v;

	if (slen == 0 || slen >= sizeof(buf))
		return 0;
	memcpy(buf, s, slen);
	buf[slen] = '\0';
	if (isspace((unsigned char)buf[0]))
		return 0;
	errno = 0;
	v = strtold(buf, &eptr);
	if (eptr[0] != '\0' ||
	    (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || fpclassify(v) == FP_ZERO)) ||
	    isnan(v))
		return 0;
	*out = v;
	return 1;
}

static int lowc(int c, int nocase)
{
	return nocase ? tolower(c) : c;
}

/*
 * Match one pattern token at pat[*pi] (not '*') against byte ch; on success
 * advance *pi past the token.  Tokens: '?', '[...]' (ranges, '^' negation,
 * '\' escapes), '\x', or a literal byte.
 */
static int glob_one(const char *pat, size_t plen, size_t *pi, unsigned char ch, int nocase)
{
	size_t p = *pi;
	int c = lowc(ch, nocase);

	if (pat[p] == '?') {
		*pi = p + 1;
		return 1;
	}
	if (pat[p] == '[') {
		int neg, match = 0;

		p++;
		neg = p < plen && pat[p] == '^';
		if (neg)
			p++;
		while (p < plen && pat[p] != ']') {
			if (pat[p] == '\\' && p + 1 < plen) {
				p++;
				if (lowc((unsigned char)pat[p], nocase) == c)
					match = 1;
				p++;
			} else if (p + 2 < plen && pat[p + 1] == '-') {
				int lo = lowc((unsigned char)pat[p], nocase);
				int hi = lowc((unsigned char)pat[p + 2], nocase);

				if (lo > hi) {
					int t = lo;

					lo = hi;
					hi = t;
				}
				if (c >= lo && c <= hi)
					match = 1;
				p += 3;
			} else {
				if (lowc((unsigned char)pat[p], nocase) == c)
					match = 1;
				p++;
			}
		}
		if (p < plen)
			p++; /* the ']' (an unterminated class ends the pattern) */
		if (neg)
			match = !match;
		if (match)
			*pi = p;
		return match;
	}
	if (pat[p] == '\\' && p + 1 < plen)
		p++;
	if (lowc((unsigned char)pat[p], nocase) != c)
		return 0;
	*pi = p + 1;
	return 1;
}

/*
 * Glob match (* ? [..] \) in O(len(pat) * len(str)) time: on a mismatch only
 * the most recent '*' is retried one byte further, which is enough because an
 * earlier '*' could only absorb what the later one absorbs.  No recursion, so
 * hostile KEYS/SCAN patterns such as "*a*a*a*a*b" cannot stall a worker.
 */
int util_glob_match(const char *pat, size_t plen, const char *str, size_t slen, int nocase)
{
	size_t p = 0, s = 0, star_p = (size_t)-1, star_s = 0;

	while (s < slen) {
		if (p < plen && pat[p] == '*') {
			while (p < plen && pat[p] == '*')
				p++;
			if (p == plen)
				return 1;
			star_p = p;
			star_s = s;
			continue;
		}
		if (p < plen && glob_one(pat, plen, &p, (unsigned char)str[s], nocase)) {
			s++;
			continue;
		}
		if (star_p == (size_t)-1)
			return 0;
		p = star_p;
		s = ++star_s;
	}
	while (p < plen && pat[p] == '*')
		p++;
	return p == plen;
}

long long util_ustime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

long long util_mstime(void)
{
	return util_ustime() / 1000;
}

int util_memtoull(const char *s, unsigned long long *out)
{
	const char *u = s;
	unsigned long long mul = 1, v;
	size_t n;

	while (*u && ((*u >= '0' && *u <= '9')))
		u++;
	if (u == s)
		return 0;
	if (!strcasecmp(u, "") || !strcasecmp(u, "b"))
		mul = 1;
	else if (!strcasecmp(u, "k"))
		mul = 1000;
	else if (!strcasecmp(u, "kb"))
		mul = 1024;
	else if (!strcasecmp(u, "m"))
		mul = 1000ULL * 1000;
	else if (!strcasecmp(u, "mb"))
		mul = 1024ULL * 1024;
	else if (!strcasecmp(u, "g"))
		mul = 1000ULL * 1000 * 1000;
	else if (!strcasecmp(u, "gb"))
		mul = 1024ULL * 1024 * 1024;
	else
		return 0;
	n = (size_t)(u - s);
	if (n > 19)
		return 0;
	v = 0;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (unsigned long long)(s[i] - '0');
	if (mul > 1 && v > ULLONG_MAX / mul)
		return 0;
	*out = v * mul;
	return 1;
}

int util_strcaseeq(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);

	return alen == blen && strncasecmp(a, b, alen) == 0;
}

int util_splitargs(const char *line, size_t len, char ***argvp, size_t **lensp)
{
	int argc = resp_splitargs(line, len, argvp, lensp);

	if (argc == RESP_SPLIT_NOMEM)
		srv_die("out of memory splitting %zu bytes", len);
	return argc;
}

/*
 * Compare a secret with a candidate in time that depends only on the
 * candidate's length (which the client already knows), never on where the
 * first difference lies nor on the secret's length.  Return 1 if equal.
 */
int util_ct_equal(const char *secret, size_t slen, const char *cand, size_t clen)
{
	volatile unsigned char diff = (unsigned char)(slen != clen);
	size_t j = 0;

	for (size_t i = 0; i < clen; i++) {
		unsigned char s = slen ? (unsigned char)secret[j] : 0;

		diff |= (unsigned char)(s ^ (unsigned char)cand[i]);
		/* j wraps over the secret without a data-dependent branch */
		j++;
		j &= (size_t)0 - (size_t)(j < slen);
	}
	return diff == 0;
}

size_t util_repr(char *d, const char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	d[o++] = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];
		const char *esc = NULL;

		switch (ch) {
		case '\\': esc = "\\\\"; break;
		case '"': esc = "\\\""; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		case '\a': esc = "\\a"; break;
		case '\b': esc = "\\b"; break;
		default: break;
		}
		if (esc) {
			d[o++] = esc[0];
			d[o++] = esc[1];
		} else if (ch >= 0x20 && ch <= 0x7e) {
			d[o++] = (char)ch;
		} else {
			d[o++] = '\\';
			d[o++] = 'x';
			d[o++] = hex[ch >> 4];
			d[o++] = hex[ch & 15];
		}
	}
	d[o++] = '"';
	return o;
}
