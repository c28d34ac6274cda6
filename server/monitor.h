/*
 * monitor.h - MONITOR (monitor.c): every command run on any worker, fed to
 * every monitoring connection as one status line, as Redis 7.0.15's
 * replicationFeedMonitors() writes it:
 *   +1339518083.107412 [0 127.0.0.1:60866] "keys" "*"
 * The lines travel as pub/sub's raw messages (pubsub.h): appended at once to
 * a monitor on the running command's worker, queued on the owner's inbox for
 * one on another worker, so each monitor gets one client's commands in the
 * order they ran.
 */
#ifndef SERVER_MONITOR_H
#define SERVER_MONITOR_H

struct conn;

/* Make @c a monitor (MONITOR; again: nothing).  @c's worker, in its command. */
void monitor_add(struct conn *c);
/* Feed @c's running command (c->argc/argv) to the monitors, if any.  @c's
 * worker, online, after the command ran; one relaxed load when none. */
void monitor_feed(struct conn *c);
/* @c is closing or RESET: no longer a monitor.  Before its mailbox goes
 * (pubsub_conn_closed()). */
void monitor_remove(struct conn *c);

/* The argument Redis shows as "(redacted)" in MONITOR and the slow log:
 * AUTH's, HELLO's AUTH username and password.  1 if argument @j of @c's
 * running command is one. */
int monitor_redacted(const struct conn *c, int j);

#endif /* SERVER_MONITOR_H */
