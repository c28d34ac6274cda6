/*
 * pause.h - CLIENT PAUSE (pause.c): while a pause is on, the commands it
 * covers (every command for ALL; for WRITE, the ones that may write:
 * CMD_WRITE, PUBLISH/SPUBLISH, EXEC of a queued write) are not run but
 * held, as Redis 7.0 postpones them: the connection keeps the parsed command
 * and stops being read (conn.c, CONN_HELD) until the pause ends, by its
 * timeout (each worker's pause timer) or CLIENT UNPAUSE (every worker is
 * woken).  The worker thread never waits.  Monitors are never held (Redis
 * exempts replicas).
 */
#ifndef SERVER_PAUSE_H
#define SERVER_PAUSE_H

struct conn;
struct worker;

enum { PAUSE_OFF, PAUSE_WRITE, PAUSE_ALL };

/* CLIENT PAUSE: pause @type until @end_ms (unix ms; 0 or past: no pause),
 * merged with a pause in force as Redis does (the stricter type, the later
 * end).  CLIENT UNPAUSE: pause_clients_end().  Any worker. */
void pause_clients(int type, long long end_ms);
void pause_clients_end(void);

/* Whether @c's command (@writes: it may write) must wait: if so it is
 * marked CONN_HELD (conn.c keeps it) and this returns 1.  @c's worker, from
 * dispatch, after every refusal check and before MULTI queueing. */
int pause_hold(struct conn *c, int writes);

/* Hold @c's running command (WAIT, replm.c) as a pause would, to run it
 * again once @ms pass or pause_release() runs on its worker (a wake-up):
 * the command decides again then.  @c's worker, in the command. */
void pause_hold_for(struct conn *c, long long ms);

/* @c closes: no longer counted as held.  Its worker. */
void pause_conn_closed(struct conn *c);

/* Run again the connections of @w a pause held, once it is over (one relaxed
 * load when none are held); re-arm @w's timer if it is not.  @w's thread,
 * online. */
void pause_release(struct worker *w);

#endif /* SERVER_PAUSE_H */
