/*
 * reply.h - the RESP2/RESP3 reply encoders (reply.c) and the shared error
 * texts.  Called by a connection's owner thread only, while it runs one of
 * the connection's commands: a reply is appended to the connection's reply
 * buffer (conn.h) and written after the event-loop turn.
 *
 * reply and dispatch depend on each other in one place only: an error reply
 * counts in errorstats by the running command (stats_error()).
 */
#ifndef SERVER_REPLY_H
#define SERVER_REPLY_H

#include <stddef.h>

struct conn;

void reply_raw(struct conn *c, const char *p, size_t n);
void reply_simple(struct conn *c, const char *s); /* +s */
void reply_ok(struct conn *c);
void reply_error(struct conn *c,
		 const char *msg); /* msg without leading '-' gets "-ERR " if no code */
__attribute__((format(printf, 2, 3))) void reply_errorf(struct conn *c, const char *fmt, ...);
void reply_err_code(struct conn *c, const char *full); /* full = "-WRONGTYPE ..." w/o CRLF */
void reply_int(struct conn *c, long long v);
void reply_bulk(struct conn *c, const void *p, size_t n);
void reply_bulk_str(struct conn *c, const char *s);
void reply_bulk_ll(struct conn *c, long long v);
void reply_null(struct conn *c);
void reply_null_array(struct conn *c);
void reply_array(struct conn *c, long long n);
void reply_map(struct conn *c, long long n);
void reply_set(struct conn *c, long long n);
/* An out-of-band message of n elements (pub/sub): '>' in RESP3, an array in RESP2. */
void reply_push(struct conn *c, long long n);
void reply_double(struct conn *c, double d);
void reply_long_double_bulk(struct conn *c, long double d);
void reply_verbatim(struct conn *c, const char *p, size_t n);
void reply_bool(struct conn *c, int v);
char *reply_reserve(struct conn *c, size_t n); /* n bytes at end, then commit */
void reply_commit(struct conn *c, size_t n);
int ld2string(char *buf, size_t len, long double value, int humanfriendly);

/* Shared error texts, Redis 7 wording, one table. */
#define ERR_SYNTAX "-ERR syntax error"
#define ERR_NOT_INT "-ERR value is not an integer or out of range"
#define ERR_NOT_FLOAT "-ERR value is not a valid float"
#define ERR_WRONGTYPE "-WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERR_NO_KEY "-ERR no such key"
#define ERR_OVERFLOW "-ERR increment or decrement would overflow"
#define ERR_DB_RANGE "-ERR DB index is out of range"
#define ERR_OOM "-OOM command not allowed when used memory > 'maxmemory'."
#define ERR_LOADING "-LOADING Redis is loading the dataset in memory"

/* Reply the HELP lines (a NULL-terminated array) of a container command, as
 * Redis prints them: an array of simple strings. */
void reply_help(struct conn *c, const char *const *lines);

#endif /* SERVER_REPLY_H */
