/*
 * resp.h - the RESP wire format, shared by rcukv-server, rcukv-cli and the
 * tests: strict numbers, the request header scanner, a resumable reply
 * scanner (RESP2 and RESP3), argument splitting with redis-cli's quoting,
 * and command encoding.
 *
 * No I/O anywhere, and no allocation in the scanners: they read a buffer the
 * caller owns and say how far a frame reaches.  Only resp_splitargs()
 * allocates (with malloc; a failure is reported, never fatal).
 * Every function is reentrant: state lives in the caller's structures, so
 * any thread may call any of them on its own buffers.
 *
 * The limits are Redis 7.0's; the server keeps its own run-time copy of the
 * one that is configurable (proto-max-bulk-len).
 */
#ifndef RESP_RESP_H
#define RESP_RESP_H

#include <stddef.h>
#include <string.h>

/* ---- limits -------------------------------------------------------------- */

#define RESP_INLINE_MAX (64 * 1024)	     /* PROTO_INLINE_MAX_SIZE: an inline
					      * request or a header line */
#define RESP_MBULK_BIG_ARG (32 * 1024)	     /* PROTO_MBULK_BIG_ARG */
#define RESP_BULK_MAX (512LL * 1024 * 1024) /* proto-max-bulk-len's default */
#define RESP_REPLY_MAX_DEPTH 64		     /* nested aggregates in a reply */
#define RESP_REPLY_MAX_ELEMS (1LL << 32)     /* elements of one aggregate */
#define RESP_LL_STR_MAX 21		     /* "-9223372036854775808" + NUL */

/* ---- numbers ------------------------------------------------------------- */

/**
 * resp_str2ll - Redis's string2ll(): a strictly formed decimal long long.
 * @s, @len: the digits (not NUL-terminated).
 * @out: the value, written on success only.
 *
 * Strict as Redis: an optional '-', then "0" alone or a non-zero digit
 * followed by digits; no '+', no spaces, no leading zeros, no "-0", nothing
 * after the digits, and the value must fit.
 * Return: 1 on success, 0 otherwise.
 */
int resp_str2ll(const char *s, size_t len, long long *out);

/**
 * resp_ll2str - the decimal form of @v into @buf (RESP_LL_STR_MAX bytes at
 * least), NUL-terminated.  Return: its length.
 */
size_t resp_ll2str(char *buf, long long v);

/* ---- requests ------------------------------------------------------------ */

enum resp_hdr {
	RESP_HDR_OK = 1,     /* a header: *num and *used are set */
	RESP_HDR_MORE = 0,   /* the line is not complete yet */
	RESP_HDR_LONG = -1,  /* no CR within RESP_INLINE_MAX bytes */
	RESP_HDR_BADNUM = -2 /* a complete line whose number is malformed
			      * (*used is set) */
};

/**
 * resp_scan_header - one request header line, "<type><number>\r\n", at @p.
 * @p, @avail: the bytes received; @p[0] is the type byte, which the caller
 *	checks (after RESP_HDR_OK or RESP_HDR_BADNUM, in the order Redis
 *	reports errors in).
 * @num: the number (resp_str2ll()).
 * @used: the length of the line with its CRLF.
 *
 * As Redis's processMultibulkBuffer(): the line ends at the first CR, which
 * must have one byte after it (the LF, not checked, as Redis).  Inlined: it
 * runs for every request on the server's hot path.
 * Return: an enum resp_hdr.
 */
static inline int resp_scan_header(const char *p, size_t avail, long long *num, size_t *used)
{
	const char *cr = memchr(p, '\r', avail);

	if (!cr)
		return avail > RESP_INLINE_MAX ? RESP_HDR_LONG : RESP_HDR_MORE;
	if ((size_t)(cr - p) + 2 > avail)
		return RESP_HDR_MORE;
	*used = (size_t)(cr - p) + 2;
	return resp_str2ll(p + 1, (size_t)(cr - p) - 1, num) ? RESP_HDR_OK : RESP_HDR_BADNUM;
}

/* ---- replies ------------------------------------------------------------- */

enum resp_scan_status {
	RESP_SCAN_DONE = 0,  /* one whole reply lies in buf[0, s->pos) */
	RESP_SCAN_AGAIN = 1, /* need more bytes: call again with the same state */
	RESP_SCAN_ERROR = -1 /* protocol error; s->err says what */
};

/*
 * A resumable reply scanner: it finds where one reply ends without building
 * it, and can stop at any element boundary and resume when more bytes
 * arrive, so a reply of n bytes costs O(n) however it is split.  State stays
 * valid across calls as long as the buffer keeps the same prefix (it may
 * grow or move).  Attributes ('|') are skipped and not counted.
 */
struct resp_scan {
	size_t pos;				/* offset of the next element */
	int depth;				/* open aggregates */
	long long left[RESP_REPLY_MAX_DEPTH];	/* elements still due, per level */
	char attr[RESP_REPLY_MAX_DEPTH];	/* level is an attribute map */
	char top;				/* type byte of the top-level reply */
	long long top_len;			/* its length/count (-1: null) */
	long long max_bulk;			/* longest bulk accepted */
	char err[64];
};

/* Ready @s for a new reply starting at buf[0]; bulks up to RESP_BULK_MAX. */
void resp_scan_init(struct resp_scan *s);

/**
 * resp_scan - find the end of one reply without building it.
 * @s: state from resp_scan_init(), kept across calls for the same reply.
 * @buf, @len: the bytes received so far; the reply starts at buf[0].
 *
 * Strict: CRLF after every line and bulk, integers by resp_str2ll(), bulk
 * and aggregate lengths -1 (null) or in range, booleans 't' or 'f',
 * verbatim strings at least "xxx:".  Lines longer than RESP_INLINE_MAX and
 * nesting past RESP_REPLY_MAX_DEPTH are errors.
 * Context: never allocates, never reads past @len.
 * Return: RESP_SCAN_DONE (the reply is buf[0, s->pos), s->top and s->top_len
 * describe it), RESP_SCAN_AGAIN (call again with more bytes), or
 * RESP_SCAN_ERROR (s->err names the violation; the stream is unusable).
 */
int resp_scan(struct resp_scan *s, const char *buf, size_t len);

/**
 * resp_reply_len - the length of the one complete reply at @buf.
 * Return: its length, 0 when @len bytes hold only part of it, -1 when the
 * bytes are not RESP.  A one-shot resp_scan() for callers that rescan.
 */
long long resp_reply_len(const char *buf, size_t len);

/* ---- argument splitting -------------------------------------------------- */

/* The value of hex digit @c, or -1 (the \xHH escapes; also URI %XX). */
int resp_hexval(int c);

#define RESP_SPLIT_UNBALANCED (-1) /* unbalanced quotes */
#define RESP_SPLIT_NOMEM (-2)

/**
 * resp_splitargs - split a line into arguments as Redis's sdssplitargs()
 * does (redis-cli, redis.conf and inline requests).
 * @line, @len: the line; a NUL in it ends an unquoted argument and is an
 *	error inside quotes, as it is for sdssplitargs()'s C string.
 * @argvp: set to the arguments, each NUL-terminated; one allocation holds
 *	the pointer array, @lensp's array and the bytes: free(*argvp) frees
 *	everything (also when the count is 0).
 * @lensp: set to the arguments' lengths (arguments are binary-safe).
 *
 * Blanks (isspace: space, \t \n \v \f \r) separate arguments, but only
 * space, \t, \n, \r end an unquoted one, as in Redis.  "Double quotes" take
 * \xHH, \n \r \t \b \a and \<any> for that character; 'single quotes' take
 * \' only.  A closing quote must be followed by a blank or the end.
 * Return: the number of arguments, RESP_SPLIT_UNBALANCED (unbalanced quotes,
 * or text right after a closing quote) or RESP_SPLIT_NOMEM; *argvp and
 * *lensp are set only on success.
 */
int resp_splitargs(const char *line, size_t len, char ***argvp, size_t **lensp);

/* ---- command encoding ---------------------------------------------------- */

/**
 * resp_encode_len - the bytes resp_encode() writes for @argc arguments of
 * lengths @lens: "*N\r\n" then "$len\r\n<bytes>\r\n" each.
 */
size_t resp_encode_len(int argc, const size_t *lens);

/**
 * resp_encode - the command @argv/@lens as a RESP multibulk into @out, which
 * has resp_encode_len() bytes.  Return: the bytes written.
 */
size_t resp_encode(char *out, int argc, const char *const *argv, const size_t *lens);

#endif /* RESP_RESP_H */
