/*
 * latency.c - the latency monitor (latency.h).
 *
 * A handful of named events, each a ring of LAT_TS_LEN one-second samples,
 * under lat_lock.  A sample in the same second as the previous one keeps
 * the worse of the two, as Redis's latencyAddSample().  Events are listed in
 * the order they were first seen (Redis lists them in its dict's order).
 * Tested by tests/server/cases_admin.txt.
 */
#include "server/config.h"
#include "server/latency.h"
#include "server/reply.h"
#include "server/util.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define LAT_TS_LEN 160
#define LAT_EVENTS 8
#define LAT_NAME_MAX 31

struct lat_sample {
	long long time; /* unix seconds, 0: empty */
	long long ms;
};

struct lat_event {
	char name[LAT_NAME_MAX + 1]; /* "" : free slot */
	int idx;		     /* next slot of samples to fill */
	long long max;
	struct lat_sample samples[LAT_TS_LEN];
};

_Atomic long long latency_threshold_ms;

static pthread_mutex_t lat_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lat_event lat_events[LAT_EVENTS]; /* lat_lock */

/* The event named (@name, @len), created if @create; lat_lock held. */
static struct lat_event *event_find(const char *name, size_t len, int create)
{
	struct lat_event *free_slot = NULL;

	for (int i = 0; i < LAT_EVENTS; i++) {
		struct lat_event *e = &lat_events[i];

		if (!e->name[0]) {
			if (!free_slot)
				free_slot = e;
		} else if (strlen(e->name) == len && !memcmp(e->name, name, len)) {
			return e;
		}
	}
	if (!create || !free_slot || len > LAT_NAME_MAX)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	memcpy(free_slot->name, name, len);
	return free_slot;
}

void latency_add_sample(const char *event, long long ms)
{
	long long now = (long long)time(NULL);
	struct lat_event *e;
	struct lat_sample *prev;

	pthread_mutex_lock(&lat_lock);
	e = event_find(event, strlen(event), 1);
	if (!e)
		goto out;
	if (ms > e->max)
		e->max = ms;
	prev = &e->samples[(e->idx + LAT_TS_LEN - 1) % LAT_TS_LEN];
	if (prev->time == now) {
		if (ms > prev->ms)
			prev->ms = ms;
		goto out;
	}
	e->samples[e->idx].time = now;
	e->samples[e->idx].ms = ms;
	e->idx = (e->idx + 1) % LAT_TS_LEN;
out:
	pthread_mutex_unlock(&lat_lock);
}

static int nevents(void)
{
	int n = 0;

	for (int i = 0; i < LAT_EVENTS; i++)
		n += lat_events[i].name[0] != '\0';
	return n;
}

void latency_reply_latest(struct conn *c)
{
	pthread_mutex_lock(&lat_lock);
	reply_array(c, nevents());
	for (int i = 0; i < LAT_EVENTS; i++) {
		const struct lat_event *e = &lat_events[i];
		const struct lat_sample *last;

		if (!e->name[0])
			continue;
		last = &e->samples[(e->idx + LAT_TS_LEN - 1) % LAT_TS_LEN];
		reply_array(c, 4);
		reply_bulk_str(c, e->name);
		reply_int(c, last->time);
		reply_int(c, last->ms);
		reply_int(c, e->max);
	}
	pthread_mutex_unlock(&lat_lock);
}

void latency_reply_history(struct conn *c, const char *event, size_t len)
{
	const struct lat_event *e;
	int n = 0;

	pthread_mutex_lock(&lat_lock);
	e = event_find(event, len, 0);
	if (e)
		for (int j = 0; j < LAT_TS_LEN; j++)
			n += e->samples[j].time != 0;
	reply_array(c, n);
	for (int j = 0; e && j < LAT_TS_LEN; j++) {
		const struct lat_sample *s = &e->samples[(e->idx + j) % LAT_TS_LEN];

		if (!s->time)
			continue;
		reply_array(c, 2);
		reply_int(c, s->time);
		reply_int(c, s->ms);
	}
	pthread_mutex_unlock(&lat_lock);
}

int latency_reset(const char *event, size_t len)
{
	int n = 0;

	pthread_mutex_lock(&lat_lock);
	for (int i = 0; i < LAT_EVENTS; i++) {
		struct lat_event *e = &lat_events[i];

		if (!e->name[0])
			continue;
		if (event && (strlen(e->name) != len || memcmp(e->name, event, len)))
			continue;
		e->name[0] = '\0';
		n++;
	}
	pthread_mutex_unlock(&lat_lock);
	return n;
}

/* ------------------------------------------------------------- DOCTOR */

/* Samples, average and mean deviation of @e's ring, as Redis's
 * analyzeLatencyForEvent(); lat_lock held. */
static void event_stats(const struct lat_event *e, int *samples, long long *avg,
			long long *mad, long long *period)
{
	long long sum = 0, first = 0, now = (long long)time(NULL);
	int n = 0;

	*mad = 0;
	for (int j = 0; j < LAT_TS_LEN; j++) {
		const struct lat_sample *s = &e->samples[j];

		if (!s->time)
			continue;
		n++;
		sum += s->ms;
		if (!first || s->time < first)
			first = s->time;
	}
	*samples = n;
	*avg = n ? sum / n : 0;
	*period = now - first;
	for (int j = 0; j < LAT_TS_LEN; j++) {
		long long d = e->samples[j].ms - *avg;

		if (e->samples[j].time)
			*mad += d < 0 ? -d : d;
	}
	if (n)
		*mad /= n;
}

static const char doctor_off[] =
    "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. "
    "You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable "
    "it. If we weren't in a deep space mission I'd suggest to take a look at "
    "https://redis.io/topics/latency-monitor.\n";
static const char doctor_calm[] =
    "Dave, no latency spike was observed during the lifetime of this Redis instance, not in "
    "the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, "
    "and think things over.\n";

/* The report's event lines.  Redis follows them with advice paragraphs
 * (slow log tuning, large objects, THP, the scheduler) that rcukv does not
 * write: only the no-advice closing line. */
static size_t doctor_events(char *buf, size_t cap)
{
	size_t o = 0;
	int k = 0;

	for (int i = 0; i < LAT_EVENTS && o < cap; i++) {
		const struct lat_event *e = &lat_events[i];
		long long avg, mad, period;
		int n;

		if (!e->name[0])
			continue;
		if (++k == 1)
			o += (size_t)snprintf(buf + o, cap - o,
					      "Dave, I have observed latency spikes in this Redis "
					      "instance. You don't mind talking about it, do you "
					      "Dave?\n\n");
		event_stats(e, &n, &avg, &mad, &period);
		if (o < cap)
			o += (size_t)snprintf(buf + o, cap - o,
					      "%d. %s: %d latency spikes (average %llums, mean "
					      "deviation %llums, period %.2f sec). Worst all time "
					      "event %llums.\n",
					      k, e->name, n, (unsigned long long)avg,
					      (unsigned long long)mad, (double)period / n,
					      (unsigned long long)e->max);
	}
	if (k && o < cap)
		o += (size_t)snprintf(buf + o, cap - o,
				      "\nWhile there are latency events logged, I'm not able to "
				      "suggest any easy fix. Please use the Redis community to get "
				      "some help, providing this report in your help request.\n");
	return o < cap ? o : cap - 1;
}

void latency_reply_doctor(struct conn *c)
{
	char buf[4096];
	size_t n;

	pthread_mutex_lock(&lat_lock);
	if (nevents() == 0) {
		int off = atomic_load_explicit(&latency_threshold_ms, memory_order_relaxed) == 0;

		pthread_mutex_unlock(&lat_lock);
		reply_verbatim(c, off ? doctor_off : doctor_calm,
			       off ? sizeof(doctor_off) - 1 : sizeof(doctor_calm) - 1);
		return;
	}
	n = doctor_events(buf, sizeof(buf));
	pthread_mutex_unlock(&lat_lock);
	reply_verbatim(c, buf, n);
}

/* ------------------------------------------------------------ options */

static const struct cfg_opt latency_rows[] = {
    {.name = "latency-monitor-threshold", .kind = CFG_INT, .mut = CFG_MUTABLE,
     .field = &latency_threshold_ms, .min = 0, .max = LLONG_MAX, .def = "0"},
};

static struct cfg_group latency_group = {
    "latency", latency_rows, (int)(sizeof(latency_rows) / sizeof(latency_rows[0])), NULL, NULL,
    NULL};
CFG_REGISTER(latency_group)
