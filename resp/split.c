/*
 * split.c - resp_splitargs(): redis-cli's and redis.conf's quoting, as
 * Redis's sdssplitargs() applies it (resp.h has the rules).
 *
 * Two passes over the line: the first validates and counts (arguments and
 * output bytes), the second writes into one allocation sized by the first,
 * so a caller frees one block and a failure allocates nothing.
 */
#include "resp/resp.h"

#include <stdint.h>
#include <stdlib.h>

int resp_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* isspace() in the C locale, which sdssplitargs() skips between arguments. */
static int blank(char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f';
}

/*
 * One argument at *pp (not a blank).  Writes its bytes at @o when @o is not
 * NULL; always advances *pp past it and returns its length, or -1 on
 * unbalanced quotes.  @end bounds the line; a NUL acts as sdssplitargs()'s
 * end of string.
 */
static long long one_arg(const char **pp, const char *end, char *o)
{
	const char *p = *pp;
	long long n = 0;
	int inq = 0, insq = 0;

#define PUT(ch)                                                                                    \
	do {                                                                                       \
		if (o)                                                                             \
			o[n] = (char)(ch);                                                         \
		n++;                                                                               \
	} while (0)
	for (;;) {
		int at_end = p >= end || *p == '\0';

		if (inq) {
			if (at_end)
				return -1;
			if (*p == '\\' && end - p > 3 && p[1] == 'x' &&
			    resp_hexval((unsigned char)p[2]) >= 0 && resp_hexval((unsigned char)p[3]) >= 0) {
				PUT(resp_hexval((unsigned char)p[2]) * 16 + resp_hexval((unsigned char)p[3]));
				p += 3;
			} else if (*p == '\\' && end - p > 1 && p[1] != '\0') {
				p++;
				PUT(*p == 'n'	? '\n'
				    : *p == 'r' ? '\r'
				    : *p == 't' ? '\t'
				    : *p == 'b' ? '\b'
				    : *p == 'a' ? '\a'
						: *p);
			} else if (*p == '"') {
				break;
			} else {
				PUT(*p);
			}
		} else if (insq) {
			if (at_end)
				return -1;
			if (*p == '\\' && end - p > 1 && p[1] == '\'') {
				p++;
				PUT('\'');
			} else if (*p == '\'') {
				break;
			} else {
				PUT(*p);
			}
		} else {
			if (at_end || *p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
				break;
			if (*p == '"')
				inq = 1;
			else if (*p == '\'')
				insq = 1;
			else
				PUT(*p);
		}
		p++;
	}
#undef PUT
	if (inq || insq) {
		/* at the closing quote: it must be followed by a blank or the end */
		if (end - p > 1 && p[1] != '\0' && !blank(p[1]))
			return -1;
		p++;
	}
	*pp = p;
	return n;
}

int resp_splitargs(const char *line, size_t len, char ***argvp, size_t **lensp)
{
	const char *end = line + len, *p;
	size_t bytes = 0, argc = 0, head;
	char **argv, *o;
	size_t *lens;

	/* pass 1: validate, count */
	for (p = line;;) {
		long long n;

		while (p < end && *p != '\0' && blank(*p))
			p++;
		if (p >= end || *p == '\0')
			break;
		if ((n = one_arg(&p, end, NULL)) < 0)
			return RESP_SPLIT_UNBALANCED;
		bytes += (size_t)n + 1;
		argc++;
	}
	if (argc > INT32_MAX)
		return RESP_SPLIT_NOMEM;
	head = (argc + 1) * sizeof(char *) + argc * sizeof(size_t);
	if (!(argv = malloc(head + bytes + 1)))
		return RESP_SPLIT_NOMEM;
	lens = (size_t *)(void *)(argv + argc + 1);
	o = (char *)(lens + argc);
	/* pass 2: write */
	argc = 0;
	for (p = line;;) {
		long long n;

		while (p < end && *p != '\0' && blank(*p))
			p++;
		if (p >= end || *p == '\0')
			break;
		n = one_arg(&p, end, o);
		argv[argc] = o;
		lens[argc++] = (size_t)n;
		o += n;
		*o++ = '\0';
	}
	argv[argc] = NULL;
	*argvp = argv;
	*lensp = lens;
	return (int)argc;
}
