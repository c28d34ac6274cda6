/*
 * client/resp.c: RESP2/RESP3 reply scanner and reply tree of rcukv-cli.
 *
 * The scanner (cli_scan) walks a reply element by element, keeps a stack of
 * the elements still due per open aggregate, and can stop at any element
 * boundary and resume when more bytes arrive, so a reply of n bytes costs
 * O(n) however it is split.  The tree builder (cli_reply_parse) runs only on
 * a reply the scanner found complete and valid, so it needs no resumption.
 *
 * Single-threaded; each state belongs to one connection.  Tested by
 * tests/client/test_client.c (split replies, hostile input) and test_cli.sh.
 */
#include "client/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

void cli_scan_init(struct cli_scan *s)
{
	/* left[] and attr[] are written before they are read: no need to clear them. */
	s->pos = 0;
	s->depth = 0;
	s->top = 0;
	s->top_len = 0;
	s->err[0] = '\0';
}

static int scan_fail(struct cli_scan *s, const char *what, char t)
{
	if (t >= 32 && t < 127)
		snprintf(s->err, sizeof(s->err), "Protocol error, %s (type '%c')", what, t);
	else
		snprintf(s->err, sizeof(s->err), "Protocol error, %s", what);
	return CLI_SCAN_ERROR;
}

/* Parse a signed decimal in [p, e) that fits a long long; 0 on success. */
static int parse_ll(const char *p, const char *e, long long *out)
{
	int neg = 0;
	unsigned long long v = 0, lim;

	if (p < e && *p == '-') {
		neg = 1;
		p++;
	}
	if (p == e || e - p > 19)
		return -1;
	lim = neg ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX;
	for (; p < e; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (unsigned long long)(*p - '0'); /* 19 digits cannot wrap */
	}
	if (v > lim)
		return -1;
	*out = neg ? (long long)(0 - v) : (long long)v;
	return 0;
}

int cli_scan(struct cli_scan *s, const char *buf, size_t len)
{
	for (;;) {
		size_t p = s->pos, lim;
		const char *nl;
		long long n;
		char t;
		int complete = 0;

		if (p >= len)
			return CLI_SCAN_AGAIN;
		t = buf[p];
		lim = len - p - 1;
		if (lim > CLI_RESP_MAX_LINE)
			lim = CLI_RESP_MAX_LINE;
		nl = memchr(buf + p + 1, '\r', lim);
		if (!nl) {
			if (len - p - 1 > CLI_RESP_MAX_LINE)
				return scan_fail(s, "line too long", t);
			return CLI_SCAN_AGAIN;
		}
		if ((size_t)(nl - buf) + 1 >= len)
			return CLI_SCAN_AGAIN;
		if (nl[1] != '\n')
			return scan_fail(s, "missing LF after CR", t);
		size_t body = p + 1, end = (size_t)(nl - buf) + 2;

		switch (t) {
		case '+':
		case '-':
		case ':':
		case ',':
		case '#':
		case '(':
		case '_':
			if (t == ':' && parse_ll(buf + body, nl, &n) != 0)
				return scan_fail(s, "bad integer", t);
			if (t == '#' &&
			    (nl - (buf + body) != 1 || (buf[body] != 't' && buf[body] != 'f')))
				return scan_fail(s, "bad boolean", t);
			n = t == '_' ? -1 : 0;
			s->pos = end;
			complete = 1;
			break;
		case '$':
		case '!':
		case '=':
			if (parse_ll(buf + body, nl, &n) != 0 || n < -1 || n > CLI_RESP_MAX_BULK)
				return scan_fail(s, "bad bulk length", t);
			if (n >= 0) {
				if (len < end + (size_t)n + 2)
					return CLI_SCAN_AGAIN;
				if (buf[end + n] != '\r' || buf[end + n + 1] != '\n')
					return scan_fail(s, "bulk not terminated by CRLF", t);
				if (t == '=' && n < 4)
					return scan_fail(s, "verbatim string too short", t);
				s->pos = end + (size_t)n + 2;
			} else {
				s->pos = end;
			}
			complete = 1;
			break;
		case '*':
		case '~':
		case '%':
		case '>':
		case '|':
			if (parse_ll(buf + body, nl, &n) != 0 || n < -1 || n > CLI_RESP_MAX_ELEMS)
				return scan_fail(s, "bad aggregate length", t);
			s->pos = end;
			if (n <= 0) {
				if (t == '|')
					continue; /* empty attribute: nothing to skip */
				complete = 1;
				break;
			}
			if (s->depth >= CLI_RESP_MAX_DEPTH)
				return scan_fail(s, "nesting too deep", t);
			if (s->depth == 0 && t != '|') {
				s->top = t;
				s->top_len = n;
			}
			s->attr[s->depth] = t == '|';
			s->left[s->depth++] = (t == '%' || t == '|') ? 2 * n : n;
			continue;
		default:
			return scan_fail(s, "unknown reply type", t);
		}
		if (complete && s->depth == 0) {
			s->top = t;
			s->top_len = n;
		}
		/* One element ended: close every aggregate it completes. */
		while (complete) {
			if (s->depth == 0)
				return CLI_SCAN_DONE;
			if (--s->left[s->depth - 1] > 0)
				break;
			s->depth--;
			if (s->attr[s->depth])
				break; /* an attribute is not an element of its parent */
		}
	}
}

/* ---- tree ---- */

void cli_reply_free(struct cli_reply *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->elements; i++)
		cli_reply_free(r->element[i]);
	free(r->element);
	free(r->str);
	free(r);
}

static struct cli_reply *build(const char *buf, size_t len, size_t *pos, int depth);

static struct cli_reply *new_reply(enum cli_rtype t)
{
	struct cli_reply *r = calloc(1, sizeof(*r));

	if (r)
		r->type = t;
	return r;
}

static int set_str(struct cli_reply *r, const char *p, size_t n)
{
	r->str = malloc(n + 1);
	if (!r->str)
		return -1;
	memcpy(r->str, p, n);
	r->str[n] = '\0';
	r->len = n;
	return 0;
}

static struct cli_reply *build(const char *buf, size_t len, size_t *pos, int depth)
{
	size_t p = *pos;
	const char *nl;
	struct cli_reply *r = NULL;
	long long n = 0;
	char t;

	if (p >= len || depth > CLI_RESP_MAX_DEPTH)
		return NULL;
	t = buf[p];
	nl = memchr(buf + p, '\r', len - p);
	if (!nl)
		return NULL;
	size_t body = p + 1, end = (size_t)(nl - buf) + 2;

	switch (t) {
	case '+':
	case '-':
	case ',':
	case '(':
		r = new_reply(t == '+'	 ? CLI_R_STATUS
			      : t == '-' ? CLI_R_ERROR
			      : t == ',' ? CLI_R_DOUBLE
					 : CLI_R_BIGNUM);
		if (!r || set_str(r, buf + body, (size_t)(nl - buf) - body) != 0)
			goto fail;
		*pos = end;
		return r;
	case ':':
		r = new_reply(CLI_R_INTEGER);
		if (!r || parse_ll(buf + body, nl, &r->integer) != 0)
			goto fail;
		*pos = end;
		return r;
	case '#':
		r = new_reply(CLI_R_BOOL);
		if (!r)
			goto fail;
		r->integer = buf[body] == 't';
		*pos = end;
		return r;
	case '_':
		r = new_reply(CLI_R_NIL);
		*pos = end;
		return r;
	case '$':
	case '!':
	case '=':
		if (parse_ll(buf + body, nl, &n) != 0)
			return NULL;
		if (n < 0) {
			r = new_reply(CLI_R_NIL);
			*pos = end;
			return r;
		}
		if (end + (size_t)n + 2 > len)
			return NULL;
		r = new_reply(t == '$' ? CLI_R_STRING : t == '!' ? CLI_R_ERROR : CLI_R_VERB);
		if (!r)
			goto fail;
		if (t == '=') {
			memcpy(r->vtype, buf + end, 3);
			r->vtype[3] = '\0';
			if (set_str(r, buf + end + 4, (size_t)n - 4) != 0)
				goto fail;
		} else if (set_str(r, buf + end, (size_t)n) != 0) {
			goto fail;
		}
		*pos = end + (size_t)n + 2;
		return r;
	case '|': {
		/* Attribute: skip it, the real reply follows. */
		struct cli_scan s;
		size_t skip;

		if (parse_ll(buf + body, nl, &n) != 0)
			return NULL;
		skip = end;
		for (long long i = 0; i < 2 * n; i++) {
			cli_scan_init(&s);
			if (cli_scan(&s, buf + skip, len - skip) != CLI_SCAN_DONE)
				return NULL;
			skip += s.pos;
		}
		*pos = skip;
		return build(buf, len, pos, depth + 1);
	}
	case '*':
	case '~':
	case '%':
	case '>':
		if (parse_ll(buf + body, nl, &n) != 0)
			return NULL;
		if (n < 0) {
			r = new_reply(CLI_R_NIL);
			*pos = end;
			return r;
		}
		r = new_reply(t == '*'	 ? CLI_R_ARRAY
			      : t == '~' ? CLI_R_SET
			      : t == '%' ? CLI_R_MAP
					 : CLI_R_PUSH);
		if (!r)
			goto fail;
		if (t == '%')
			n *= 2;
		if ((size_t)n > len) /* each element takes at least one byte */
			goto fail;
		if (n > 0) {
			r->element = calloc((size_t)n, sizeof(*r->element));
			if (!r->element)
				goto fail;
		}
		*pos = end;
		for (long long i = 0; i < n; i++) {
			r->element[i] = build(buf, len, pos, depth + 1);
			r->elements = (size_t)i + 1;
			if (!r->element[i])
				goto fail;
		}
		return r;
	default:
		return NULL;
	}
fail:
	cli_reply_free(r);
	return NULL;
}

struct cli_reply *cli_reply_parse(const char *buf, size_t len)
{
	size_t pos = 0;
	struct cli_reply *r = build(buf, len, &pos, 0);

	if (r && pos != len) {
		cli_reply_free(r);
		return NULL;
	}
	return r;
}
