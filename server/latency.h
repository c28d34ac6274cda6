/*
 * latency.h - the latency monitor (latency.c): per event, the last 160
 * samples of one second each (the worst latency in ms seen that second) and
 * the all-time worst, as Redis 7.0's latency.c keeps them, for LATENCY
 * LATEST, HISTORY, RESET and DOCTOR (cmd_admin.c).
 *
 * Events recorded here: "command" and "fast-command" (cmd_run(), by the
 * command's CMD_FAST flag), when latency-monitor-threshold is not 0 and the
 * command took at least that many milliseconds.
 * Threads: any worker; one mutex, taken only for a sample over the
 * threshold and by LATENCY.
 */
#ifndef SERVER_LATENCY_H
#define SERVER_LATENCY_H

#include <stdatomic.h>

struct conn;

extern _Atomic long long latency_threshold_ms; /* latency-monitor-threshold */

void latency_add_sample(const char *event, long long ms);
/* Record @ms for @event if the monitor is on and @ms is over its threshold. */
static inline void latency_offer(const char *event, long long ms)
{
	long long t = atomic_load_explicit(&latency_threshold_ms, memory_order_relaxed);

	if (t && ms >= t)
		latency_add_sample(event, ms);
}

/* LATENCY LATEST: [event, time, latency, max] for every event. */
void latency_reply_latest(struct conn *c);
/* LATENCY HISTORY: [time, latency] for the samples of @event (none: empty). */
void latency_reply_history(struct conn *c, const char *event, size_t len);
/* LATENCY RESET: forget @event (NULL: every event); return how many went. */
int latency_reset(const char *event, size_t len);
/* LATENCY DOCTOR: the report, as a RESP3 verbatim / RESP2 bulk string. */
void latency_reply_doctor(struct conn *c);

#endif /* SERVER_LATENCY_H */
