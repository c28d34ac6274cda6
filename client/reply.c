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

/* One reply's first line: its type byte, where its text starts (body), where
 * its "\r" is (cr), the offset after its "\r\n" (end), and for bulks,
 * aggregates and attributes the length or count it gives (n). */
struct hdr {
	char t;
	size_t body, cr, end;
	long long n;
};

/* A reply that is its line: status, error, double, big number, integer,
 * boolean, null.  Return: the reply, or NULL (out of memory, bad integer). */
static struct cli_reply *build_line(const char *buf, const struct hdr *h, size_t *pos)
{
	struct cli_reply *r = NULL;
	char t = h->t;

	switch (t) {
	case '+':
	case '-':
	case ',':
	case '(':
		r = new_reply(t == '+'	 ? CLI_R_STATUS
			      : t == '-' ? CLI_R_ERROR
			      : t == ',' ? CLI_R_DOUBLE
					 : CLI_R_BIGNUM);
		if (!r || set_str(r, buf + h->body, h->cr - h->body) != 0)
			goto fail;
		break;
	case ':':
		r = new_reply(CLI_R_INTEGER);
		if (!r || !resp_str2ll(buf + h->body, h->cr - h->body, &r->integer))
			goto fail;
		break;
	case '#':
		r = new_reply(CLI_R_BOOL);
		if (!r)
			goto fail;
		r->integer = buf[h->body] == 't';
		break;
	default: /* '_' */
		r = new_reply(CLI_R_NIL);
		break;
	}
	*pos = h->end;
	return r;
fail:
	cli_reply_free(r);
	return NULL;
}

/* A negative length or count: the null reply, *@pos past its line. */
static struct cli_reply *null_reply(const struct hdr *h, size_t *pos)
{
	*pos = h->end;
	return new_reply(CLI_R_NIL);
}

/* A bulk reply ($ string, ! error, = verbatim with its 3-byte type), or the
 * null bulk.  Return: the reply, or NULL. */
static struct cli_reply *build_bulk(const char *buf, size_t len, const struct hdr *h,
				    size_t *pos)
{
	struct cli_reply *r;
	long long n = h->n;
	char t = h->t;

	if (n < 0)
		return null_reply(h, pos);
	if (h->end + (size_t)n + 2 > len)
		return NULL;
	r = new_reply(t == '$' ? CLI_R_STRING : t == '!' ? CLI_R_ERROR : CLI_R_VERB);
	if (!r)
		goto fail;
	if (t == '=') {
		memcpy(r->vtype, buf + h->end, 3);
		r->vtype[3] = '\0';
		if (set_str(r, buf + h->end + 4, (size_t)n - 4) != 0)
			goto fail;
	} else if (set_str(r, buf + h->end, (size_t)n) != 0) {
		goto fail;
	}
	*pos = h->end + (size_t)n + 2;
	return r;
fail:
	cli_reply_free(r);
	return NULL;
}

/* An attribute: skipped, the real reply follows it.  Return: that reply, or
 * NULL. */
static struct cli_reply *build_after_attribute(const char *buf, size_t len, const struct hdr *h,
					       size_t *pos, int depth)
{
	struct resp_scan s;
	size_t skip = h->end;

	for (long long i = 0; i < 2 * h->n; i++) {
		resp_scan_init(&s);
		if (resp_scan(&s, buf + skip, len - skip) != RESP_SCAN_DONE)
			return NULL;
		skip += s.pos;
	}
	*pos = skip;
	return build(buf, len, pos, depth + 1);
}

/* An aggregate (* array, ~ set, % map: two elements a pair, > push) and its
 * elements, or the null array.  Return: the reply, or NULL. */
static struct cli_reply *build_aggregate(const char *buf, size_t len, const struct hdr *h,
					 size_t *pos, int depth)
{
	struct cli_reply *r;
	long long n = h->n;
	char t = h->t;

	if (n < 0)
		return null_reply(h, pos);
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
	*pos = h->end;
	for (long long i = 0; i < n; i++) {
		r->element[i] = build(buf, len, pos, depth + 1);
		r->elements = (size_t)i + 1;
		if (!r->element[i])
			goto fail;
	}
	return r;
fail:
	cli_reply_free(r);
	return NULL;
}

/* The reply at *@pos of @buf (complete and valid: resp_scan() said so),
 * nested @depth deep; *@pos moves past it.  Return: the tree, or NULL. */
static struct cli_reply *build(const char *buf, size_t len, size_t *pos, int depth)
{
	size_t p = *pos;
	const char *nl;
	struct hdr h;

	if (p >= len || depth > RESP_REPLY_MAX_DEPTH)
		return NULL;
	nl = memchr(buf + p, '\r', len - p);
	if (!nl)
		return NULL;
	h.t = buf[p];
	h.body = p + 1;
	h.cr = (size_t)(nl - buf);
	h.end = h.cr + 2;
	h.n = 0;
	if (h.t && strchr("$!=|*~%>", h.t) && !resp_str2ll(buf + h.body, h.cr - h.body, &h.n))
		return NULL;
	switch (h.t) {
	case '+':
	case '-':
	case ',':
	case '(':
	case ':':
	case '#':
	case '_':
		return build_line(buf, &h, pos);
	case '$':
	case '!':
	case '=':
		return build_bulk(buf, len, &h, pos);
	case '|':
		return build_after_attribute(buf, len, &h, pos, depth);
	case '*':
	case '~':
	case '%':
	case '>':
		return build_aggregate(buf, len, &h, pos, depth);
	default:
		return NULL;
	}
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
