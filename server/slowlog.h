/*
 * slowlog.h - the slow log (slowlog.c): commands that ran at least
 * slowlog-log-slower-than microseconds, newest first, at most
 * slowlog-max-len of them, as Redis 7.0's slowlog.c keeps them.  SLOWLOG's
 * handlers are cmd_admin.c's.
 *
 * Threads: cmd.c's cmd_run() offers every command it ran (but those flagged
 * CMD_SKIP_SLOWLOG) on the connection's worker; the log is one list under a
 * mutex, taken only for a command over the threshold and by SLOWLOG itself.
 */
#ifndef SERVER_SLOWLOG_H
#define SERVER_SLOWLOG_H

#include <stdatomic.h>

struct conn;

/* slowlog-log-slower-than (us, -1: off) and slowlog-max-len; relaxed loads */
extern _Atomic long long slowlog_slower_than, slowlog_max_len;

/* Log @c's running command (c->argc/argv) if it took @usec or more.  Its
 * worker, inside the command's read-side section; cheap when it is not slow. */
void slowlog_push_slow(struct conn *c, long long usec);
static inline void slowlog_offer(struct conn *c, long long usec)
{
	long long t = atomic_load_explicit(&slowlog_slower_than, memory_order_relaxed);

	if (t >= 0 && usec >= t)
		slowlog_push_slow(c, usec);
}

/* SLOWLOG GET (@count entries, -1 all), LEN and RESET.  Any worker. */
void slowlog_reply(struct conn *c, long long count);
long long slowlog_len(void);
void slowlog_reset(void);
/* Main thread at exit: frees the entries. */
void slowlog_fini(void);

#endif /* SERVER_SLOWLOG_H */
