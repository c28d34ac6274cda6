/*
 * scan.c - strict numbers and the resumable reply scanner (resp.h).
 *
 * The scanner walks a reply element by element and keeps a stack of the
 * elements still due per open aggregate; it stops at any element boundary
 * when bytes are missing and resumes there, so it never rescans.
 */
#include "resp/resp.h"

#include <limits.h>
#include <stdio.h>

int resp_str2ll(const char *s, size_t len, long long *out)
{
	const char *p = s, *end;
	unsigned long long v;
	int neg = 0;

	if (len == 0 || len > 20)
		return 0;
	end = s + len;
	if (len == 1 && p[0] == '0') {
		*out = 0;
		return 1;
	}
	if (*p == '-') {
		neg = 1;
		if (++p == end)
			return 0;
	}
	if (*p < '1' || *p > '9')
		return 0;
	v = (unsigned long long)(*p++ - '0');
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (ULLONG_MAX - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	if (p < end)
		return 0;
	if (v > (unsigned long long)LLONG_MAX + (unsigned long long)neg)
		return 0;
	*out = neg ? (long long)(0ULL - v) : (long long)v;
	return 1;
}

size_t resp_ll2str(char *buf, long long v)
{
	char tmp[RESP_LL_STR_MAX];
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	size_t n = 0, len = 0;

	if (v < 0)
		buf[len++] = '-';
	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	while (n)
		buf[len++] = tmp[--n];
	buf[len] = '\0';
	return len;
}

void resp_scan_init(struct resp_scan *s)
{
	/* left[] and attr[] are written before they are read. */
	s->pos = 0;
	s->depth = 0;
	s->top = 0;
	s->top_len = 0;
	s->max_bulk = RESP_BULK_MAX;
	s->err[0] = '\0';
}

static int scan_fail(struct resp_scan *s, const char *what, char t)
{
	if (t >= 32 && t < 127)
		snprintf(s->err, sizeof(s->err), "Protocol error, %s (type '%c')", what, t);
	else
		snprintf(s->err, sizeof(s->err), "Protocol error, %s", what);
	return RESP_SCAN_ERROR;
}

/* scan_element()'s verdicts besides the RESP_SCAN_* statuses */
enum { EL_ENDED = 2, EL_OPENED = 3 };

/*
 * The element at s->pos, whose header line is buf[p, nl) with its CRLF
 * ending at @end.  Return: EL_ENDED one element ended (s->pos is past it),
 * EL_OPENED an aggregate opened or an empty attribute was skipped (scan on),
 * or a RESP_SCAN_* status to return.
 */
static int scan_element(struct resp_scan *s, const char *buf, size_t len, size_t p,
			const char *nl, size_t end, long long *n)
{
	char t = buf[p];
	const char *body = buf + p + 1;

	switch (t) {
	case '+':
	case '-':
	case ':':
	case ',':
	case '#':
	case '(':
	case '_':
		if (t == ':' && !resp_str2ll(body, (size_t)(nl - body), n))
			return scan_fail(s, "bad integer", t);
		if (t == '#' && (nl - body != 1 || (*body != 't' && *body != 'f')))
			return scan_fail(s, "bad boolean", t);
		*n = t == '_' ? -1 : 0;
		s->pos = end;
		return EL_ENDED;
	case '$':
	case '!':
	case '=':
		if (!resp_str2ll(body, (size_t)(nl - body), n) || *n < -1 || *n > s->max_bulk)
			return scan_fail(s, "bad bulk length", t);
		if (*n < 0) {
			s->pos = end;
			return EL_ENDED;
		}
		if (len < end + (size_t)*n + 2)
			return RESP_SCAN_AGAIN;
		if (buf[end + (size_t)*n] != '\r' || buf[end + (size_t)*n + 1] != '\n')
			return scan_fail(s, "bulk not terminated by CRLF", t);
		if (t == '=' && *n < 4)
			return scan_fail(s, "verbatim string too short", t);
		s->pos = end + (size_t)*n + 2;
		return EL_ENDED;
	case '*':
	case '~':
	case '%':
	case '>':
	case '|':
		if (!resp_str2ll(body, (size_t)(nl - body), n) || *n < -1 ||
		    *n > RESP_REPLY_MAX_ELEMS)
			return scan_fail(s, "bad aggregate length", t);
		s->pos = end;
		if (*n <= 0)
			return t == '|' ? EL_OPENED : EL_ENDED; /* an empty attribute: nothing to skip */
		if (s->depth >= RESP_REPLY_MAX_DEPTH)
			return scan_fail(s, "nesting too deep", t);
		if (s->depth == 0 && t != '|') {
			s->top = t;
			s->top_len = *n;
		}
		s->attr[s->depth] = t == '|';
		s->left[s->depth++] = (t == '%' || t == '|') ? 2 * *n : *n;
		return EL_OPENED;
	default:
		return scan_fail(s, "unknown reply type", t);
	}
}

int resp_scan(struct resp_scan *s, const char *buf, size_t len)
{
	for (;;) {
		size_t p = s->pos, lim;
		const char *nl;
		long long n = 0;
		int r;

		if (p >= len)
			return RESP_SCAN_AGAIN;
		lim = len - p - 1;
		if (lim > RESP_INLINE_MAX)
			lim = RESP_INLINE_MAX;
		nl = memchr(buf + p + 1, '\r', lim);
		if (!nl) {
			if (len - p - 1 > RESP_INLINE_MAX)
				return scan_fail(s, "line too long", buf[p]);
			return RESP_SCAN_AGAIN;
		}
		if ((size_t)(nl - buf) + 1 >= len)
			return RESP_SCAN_AGAIN;
		if (nl[1] != '\n')
			return scan_fail(s, "missing LF after CR", buf[p]);
		r = scan_element(s, buf, len, p, nl, (size_t)(nl - buf) + 2, &n);
		if (r == EL_OPENED)
			continue;
		if (r != EL_ENDED)
			return r;
		if (s->depth == 0) {
			s->top = buf[p];
			s->top_len = n;
		}
		/* One element ended: close every aggregate it completes. */
		for (;;) {
			if (s->depth == 0)
				return RESP_SCAN_DONE;
			if (--s->left[s->depth - 1] > 0)
				break;
			s->depth--;
			if (s->attr[s->depth])
				break; /* an attribute is not an element of its parent */
		}
	}
}

long long resp_reply_len(const char *buf, size_t len)
{
	struct resp_scan s;

	resp_scan_init(&s);
	switch (resp_scan(&s, buf, len)) {
	case RESP_SCAN_DONE:
		return (long long)s.pos;
	case RESP_SCAN_AGAIN:
		return 0;
	default:
		return -1;
	}
}
