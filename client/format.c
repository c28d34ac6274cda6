/*
 * client/format.c: print replies as redis-cli 7.0 prints them, and split
 * command lines as redis-cli splits them.
 *
 * Two forms, chosen like redis-cli: the terminal form ("(integer) 1",
 * quoted strings, numbered nested lists) when stdout is a terminal or with
 * --no-raw, and the raw form (bare values, one per line) otherwise or with
 * --raw.  Deliberate difference: RESP3 big numbers print as "(big number) N"
 * where redis-cli 7.0 stops with "Unknown reply type", and attributes are
 * skipped where redis-cli 7.0 reports a protocol error.
 *
 * Pure functions, no shared state.  Tested by tests/client/test_cli.sh, which
 * compares byte for byte with the real redis-cli, and test_hist.c (quoting).
 */
#include "client/cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void cli_die_at(const char *file, const char *func, int line, const char *msg)
{
	int e = errno;

	fprintf(stderr, "rcukv-cli: %s at %s:%d (%s): %s\n", msg, file, line, func,
		e ? strerror(e) : "no errno");
	abort();
}

static void buf_grow(struct cli_buf *b, size_t need)
{
	if (b->len + need + 1 <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + need + 1)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p)
		cli_die("out of memory");
	b->p = p;
	b->cap = cap;
}

void cli_buf_add(struct cli_buf *b, const void *p, size_t n)
{
	buf_grow(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void cli_buf_addstr(struct cli_buf *b, const char *s)
{
	cli_buf_add(b, s, strlen(s));
}

void cli_buf_printf(struct cli_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	buf_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void cli_buf_repr(struct cli_buf *b, const char *p, size_t n)
{
	cli_buf_add(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		switch (c) {
		case '\\':
			cli_buf_add(b, "\\\\", 2);
			break;
		case '"':
			cli_buf_add(b, "\\\"", 2);
			break;
		case '\n':
			cli_buf_add(b, "\\n", 2);
			break;
		case '\r':
			cli_buf_add(b, "\\r", 2);
			break;
		case '\t':
			cli_buf_add(b, "\\t", 2);
			break;
		case '\a':
			cli_buf_add(b, "\\a", 2);
			break;
		case '\b':
			cli_buf_add(b, "\\b", 2);
			break;
		default:
			if (isprint(c))
				cli_buf_add(b, &p[i], 1);
			else
				cli_buf_printf(b, "\\x%02x", c);
		}
	}
	cli_buf_add(b, "\"", 1);
}

/*
 * Terminal form.  An aggregate numbers its entries "1) ", sets "1~ ", maps
 * "1# key => value"; the numbers are right-aligned to the widest index, and
 * a nested aggregate starts on its parent's line and indents its later
 * lines by the parent's prefix plus the index width plus two.  Exception: a
 * map value whose form takes several lines starts on the next line, at that
 * indentation.
 */
static void format_tty(struct cli_buf *b, const struct cli_reply *r, const char *prefix)
{
	switch (r->type) {
	case CLI_R_ERROR:
		cli_buf_addstr(b, "(error) ");
		cli_buf_add(b, r->str, r->len);
		cli_buf_addstr(b, "\n");
		return;
	case CLI_R_STATUS:
	case CLI_R_VERB:
		cli_buf_add(b, r->str, r->len);
		cli_buf_addstr(b, "\n");
		return;
	case CLI_R_INTEGER:
		cli_buf_printf(b, "(integer) %lld\n", r->integer);
		return;
	case CLI_R_DOUBLE:
		cli_buf_printf(b, "(double) %s\n", r->str);
		return;
	case CLI_R_BIGNUM:
		cli_buf_printf(b, "(big number) %s\n", r->str);
		return;
	case CLI_R_STRING:
		cli_buf_repr(b, r->str, r->len);
		cli_buf_addstr(b, "\n");
		return;
	case CLI_R_NIL:
		cli_buf_addstr(b, "(nil)\n");
		return;
	case CLI_R_BOOL:
		cli_buf_addstr(b, r->integer ? "(true)\n" : "(false)\n");
		return;
	case CLI_R_ARRAY:
	case CLI_R_MAP:
	case CLI_R_SET:
	case CLI_R_PUSH:
		break;
	}
	if (r->elements == 0) {
		cli_buf_addstr(b, r->type == CLI_R_ARRAY ? "(empty array)\n"
				  : r->type == CLI_R_MAP ? "(empty hash)\n"
				  : r->type == CLI_R_SET ? "(empty set)\n"
							 : "(empty push)\n");
		return;
	}
	size_t shown = r->type == CLI_R_MAP ? r->elements / 2 : r->elements;
	unsigned width = 0;
	size_t i = shown;
	do {
		width++;
		i /= 10;
	} while (i);
	char sep = r->type == CLI_R_SET ? '~' : r->type == CLI_R_MAP ? '#' : ')';
	size_t plen = strlen(prefix);
	char *sub = malloc(plen + width + 3);
	if (!sub)
		return;
	memcpy(sub, prefix, plen);
	memset(sub + plen, ' ', width + 2);
	sub[plen + width + 2] = '\0';

	size_t step = r->type == CLI_R_MAP ? 2 : 1;
	for (i = 0; i < r->elements; i += step) {
		cli_buf_printf(b, "%s%*zu%c ", i == 0 ? "" : prefix, (int)width, i / step + 1, sep);
		format_tty(b, r->element[i], sub);
		if (step == 2) {
			b->len--; /* drop the key's newline */
			cli_buf_addstr(b, " => ");
			/* A value that takes several lines starts on the next one, indented. */
			struct cli_buf v = {0};
			format_tty(&v, r->element[i + 1], sub);
			if (v.len && memchr(v.p, '\n', v.len - 1)) {
				cli_buf_addstr(b, "\n");
				cli_buf_addstr(b, sub);
			}
			if (v.len)
				cli_buf_add(b, v.p, v.len);
			free(v.p);
		}
	}
	free(sub);
}

static void format_raw(struct cli_buf *b, const struct cli_reply *r)
{
	switch (r->type) {
	case CLI_R_NIL:
		return;
	case CLI_R_ERROR:
		cli_buf_add(b, r->str, r->len);
		cli_buf_addstr(b, "\n");
		return;
	case CLI_R_STATUS:
	case CLI_R_STRING:
	case CLI_R_VERB:
	case CLI_R_DOUBLE:
	case CLI_R_BIGNUM:
		cli_buf_add(b, r->str, r->len);
		return;
	case CLI_R_BOOL:
		cli_buf_addstr(b, r->integer ? "(true)" : "(false)");
		return;
	case CLI_R_INTEGER:
		cli_buf_printf(b, "%lld", r->integer);
		return;
	case CLI_R_MAP:
		for (size_t i = 0; i + 1 < r->elements; i += 2) {
			if (i > 0)
				cli_buf_addstr(b, "\n");
			format_raw(b, r->element[i]);
			cli_buf_addstr(b, " ");
			format_raw(b, r->element[i + 1]);
		}
		return;
	case CLI_R_ARRAY:
	case CLI_R_SET:
	case CLI_R_PUSH:
		for (size_t i = 0; i < r->elements; i++) {
			if (i > 0)
				cli_buf_addstr(b, "\n");
			format_raw(b, r->element[i]);
		}
		return;
	}
}

void cli_format_reply(struct cli_buf *b, const struct cli_reply *r, enum cli_output mode)
{
	if (mode == CLI_OUT_TTY) {
		format_tty(b, r, "");
	} else {
		format_raw(b, r);
		cli_buf_addstr(b, "\n");
	}
}
