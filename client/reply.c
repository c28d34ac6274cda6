/*
 * client/reply.c: the reply tree of rcukv-cli.
 *
 * resp_scan() (resp/resp.h) finds where a reply ends, resuming as bytes
 * arrive; the tree builder (cli_reply_parse) runs only on a reply the
 * scanner found complete and valid, so it needs no resumption and may trust
 * the framing.
 *
 * Single-threaded; each tree belongs to one connection.  Tested by
 * tests/client/test_client.c (split replies, hostile input) and test_cli.sh.
 */
#include "resp/resp.h"
#include "client/cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

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

	if (p >= len || depth > RESP_REPLY_MAX_DEPTH)
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
		if (!r || !resp_str2ll(buf + body, (size_t)(nl - (buf + body)), &r->integer))
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
		if (!resp_str2ll(buf + body, (size_t)(nl - (buf + body)), &n))
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
		struct resp_scan s;
		size_t skip;

		if (!resp_str2ll(buf + body, (size_t)(nl - (buf + body)), &n))
			return NULL;
		skip = end;
		for (long long i = 0; i < 2 * n; i++) {
			resp_scan_init(&s);
			if (resp_scan(&s, buf + skip, len - skip) != RESP_SCAN_DONE)
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
		if (!resp_str2ll(buf + body, (size_t)(nl - (buf + body)), &n))
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
