/*
 * log.h - the server log (log.c), in Redis's line format.  Any thread may
 * log.
 */
#ifndef SERVER_LOG_H
#define SERVER_LOG_H

enum { LL_DEBUG = 0, LL_VERBOSE, LL_NOTICE, LL_WARNING, LL_NOTHING };
void srv_log_init(const char *file, int verbosity, char role);
__attribute__((format(printf, 2, 3))) void srv_log(int level, const char *fmt, ...);
void srv_log_raw(int level, const char *msg);
/* From a signal handler (async-signal-safe): "<pid>:signal-handler (<unix
 * time>) <msg>", Redis's format, whatever the log level. */
void srv_log_from_handler(const char *msg);

#endif /* SERVER_LOG_H */
