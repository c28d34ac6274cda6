/*
 * util.h - small helpers every server file may use: allocation that dies on
 * failure, Redis's strict number parsers, glob matching, clocks, argument
 * splitting.  No shared state: callable from any thread.
 */
#ifndef SERVER_UTIL_H
#define SERVER_UTIL_H

#include <stddef.h>

#define RCUKV_VERSION "0.1.0"
#define REDIS_COMPAT_VERSION "7.0.15"

#define SRV_LIKELY(x) __builtin_expect(!!(x), 1)
#define SRV_UNLIKELY(x) __builtin_expect(!!(x), 0)

__attribute__((noreturn, format(printf, 4, 5))) void
srv_die_at(const char *file, int line, const char *func, const char *fmt, ...);
#define srv_die(...) srv_die_at(__FILE__, __LINE__, __func__, __VA_ARGS__)

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xmemdup(const void *p, size_t n);

/* Strict decimals (Redis's string2ll) and their printing are resp/resp.h's
 * resp_str2ll() and resp_ll2str(). */
int util_str2ull_strict(const char *s, size_t len, unsigned long long *out);
/* Parse a long double as Redis's string2ld (strtold, no spaces, no nan). */
int util_str2ld(const char *s, size_t len, long double *out);
/* Glob-style match (* ? [..] \), as Redis's pattern matching. */
int util_glob_match(const char *pat, size_t plen, const char *str, size_t slen, int nocase);
long long util_mstime(void);
long long util_ustime(void);
/* Memory size with k/kb/m/mb/g/gb suffix (1k = 1000, 1kb = 1024). */
int util_memtoull(const char *s, unsigned long long *out);
int util_strcaseeq(const char *a, size_t alen, const char *b);
/* Constant-time comparison (time depends on clen only); 1 if equal. */
int util_ct_equal(const char *secret, size_t slen, const char *cand, size_t clen);
/* resp_splitargs() (resp/resp.h: sdssplitargs' rules; free(*argvp) frees
 * all) where running out of memory is fatal, as xmalloc().  Return: the
 * argument count, or RESP_SPLIT_UNBALANCED. */
int util_splitargs(const char *line, size_t len, char ***argvp, size_t **lensp);
/* Write @p (@n bytes) at @d quoted as Redis's sdscatrepr() ("...", with
 * \\ \" \n \r \t \a \b and \xHH escapes); return the bytes written,
 * at most 4 * @n + 2.  No NUL is added. */
size_t util_repr(char *d, const char *p, size_t n);

#endif /* SERVER_UTIL_H */
