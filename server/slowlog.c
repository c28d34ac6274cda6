/*
 * slowlog.c - the slow log (slowlog.h).
 *
 * One list, newest first, under slow_lock; an entry is a copy of what Redis
 * keeps: id, unix time, duration in microseconds, the arguments (at most
 * SLOW_MAX_ARGC, the last one then saying how many more there were; each at
 * most SLOW_MAX_STRING bytes, followed by how many more bytes there were),
 * the client's address and name.  As in Redis, the list is trimmed to
 * slowlog-max-len when an entry is added, not when the option changes.
 * Tested by tests/server/cases_admin.txt.
 */
#include "server/config.h"
#include "server/conn.h"
#include "server/monitor.h"
#include "server/reply.h"
#include "server/slowlog.h"
#include "server/util.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOW_MAX_ARGC 32
#define SLOW_MAX_STRING 128

struct slow_entry {
	struct slow_entry *next, *prev;
	long long id, time, usec;
	int argc;
	char *peer, *name;
	size_t *argl;
	char **argv;
};

_Atomic long long slowlog_slower_than, slowlog_max_len;

static pthread_mutex_t slow_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slow_entry *slow_head, *slow_tail; /* slow_lock */
static long long slow_len, slow_next_id;	  /* slow_lock */

static char *dup_bytes(const char *p, size_t n, size_t extra)
{
	char *d = xmalloc(n + extra + 1);

	memcpy(d, p, n);
	d[n] = '\0';
	return d;
}

/* Argument @j of the entry: trimmed as Redis's slowlogCreateEntry(). */
static void copy_arg(struct slow_entry *e, struct conn *c, int j)
{
	size_t n = ARGL(c, j);

	if (e->argc != c->argc && j == e->argc - 1) {
		char buf[64];

		e->argl[j] = (size_t)snprintf(buf, sizeof(buf), "... (%d more arguments)",
					      c->argc - e->argc + 1);
		e->argv[j] = dup_bytes(buf, e->argl[j], 0);
	} else if (monitor_redacted(c, j)) {
		e->argl[j] = strlen("(redacted)");
		e->argv[j] = dup_bytes("(redacted)", e->argl[j], 0);
	} else if (n > SLOW_MAX_STRING) {
		e->argv[j] = dup_bytes(ARGV(c, j), SLOW_MAX_STRING, 32);
		e->argl[j] = SLOW_MAX_STRING + (size_t)sprintf(e->argv[j] + SLOW_MAX_STRING,
							       "... (%zu more bytes)",
							       n - SLOW_MAX_STRING);
	} else {
		e->argv[j] = dup_bytes(ARGV(c, j), n, 0);
		e->argl[j] = n;
	}
}

static struct slow_entry *entry_new(struct conn *c, long long usec)
{
	struct slow_entry *e = xcalloc(1, sizeof(*e));

	e->argc = c->argc > SLOW_MAX_ARGC ? SLOW_MAX_ARGC : c->argc;
	e->argv = xmalloc((size_t)e->argc * sizeof(*e->argv));
	e->argl = xmalloc((size_t)e->argc * sizeof(*e->argl));
	for (int j = 0; j < e->argc; j++)
		copy_arg(e, c, j);
	e->time = (long long)time(NULL);
	e->usec = usec;
	e->peer = dup_bytes(c->addr, strlen(c->addr), 0);
	/* the owner writes its own name: no lock needed to read it here */
	e->name = c->name ? dup_bytes(c->name, strlen(c->name), 0) : dup_bytes("", 0, 0);
	return e;
}

static void entry_free(struct slow_entry *e)
{
	for (int j = 0; j < e->argc; j++)
		free(e->argv[j]);
	free(e->argv);
	free(e->argl);
	free(e->peer);
	free(e->name);
	free(e);
}

/* Unlink the oldest entry; slow_lock held, the list not empty. */
static struct slow_entry *pop_tail(void)
{
	struct slow_entry *e = slow_tail;

	slow_tail = e->prev;
	if (slow_tail)
		slow_tail->next = NULL;
	else
		slow_head = NULL;
	slow_len--;
	return e;
}

void slowlog_push_slow(struct conn *c, long long usec)
{
	struct slow_entry *e = entry_new(c, usec), *drop = NULL;
	long long max = atomic_load_explicit(&slowlog_max_len, memory_order_relaxed);

	pthread_mutex_lock(&slow_lock);
	e->id = slow_next_id++;
	e->next = slow_head;
	if (slow_head)
		slow_head->prev = e;
	else
		slow_tail = e;
	slow_head = e;
	slow_len++;
	while (slow_len > max) {
		struct slow_entry *old = pop_tail();

		old->next = drop;
		drop = old;
	}
	pthread_mutex_unlock(&slow_lock);
	while (drop) { /* freed outside the lock */
		e = drop->next;
		entry_free(drop);
		drop = e;
	}
}

void slowlog_reply(struct conn *c, long long count)
{
	long long n = 0;

	pthread_mutex_lock(&slow_lock);
	if (count < 0 || count > slow_len)
		count = slow_len;
	reply_array(c, count);
	for (struct slow_entry *e = slow_head; e && n < count; e = e->next, n++) {
		reply_array(c, 6);
		reply_int(c, e->id);
		reply_int(c, e->time);
		reply_int(c, e->usec);
		reply_array(c, e->argc);
		for (int j = 0; j < e->argc; j++)
			reply_bulk(c, e->argv[j], e->argl[j]);
		reply_bulk_str(c, e->peer);
		reply_bulk_str(c, e->name);
	}
	pthread_mutex_unlock(&slow_lock);
}

long long slowlog_len(void)
{
	long long n;

	pthread_mutex_lock(&slow_lock);
	n = slow_len;
	pthread_mutex_unlock(&slow_lock);
	return n;
}

void slowlog_reset(void)
{
	struct slow_entry *e;

	pthread_mutex_lock(&slow_lock);
	e = slow_head;
	slow_head = slow_tail = NULL;
	slow_len = 0;
	pthread_mutex_unlock(&slow_lock);
	while (e) {
		struct slow_entry *next = e->next;

		entry_free(e);
		e = next;
	}
}

void slowlog_fini(void)
{
	slowlog_reset();
}

/* ------------------------------------------------------------ options */

static const struct cfg_opt slowlog_rows[] = {
    {.name = "slowlog-log-slower-than", .kind = CFG_INT, .mut = CFG_MUTABLE,
     .field = &slowlog_slower_than, .min = -1, .max = LLONG_MAX, .def = "10000"},
    {.name = "slowlog-max-len", .kind = CFG_INT, .mut = CFG_MUTABLE, .field = &slowlog_max_len,
     .min = 0, .max = LONG_MAX, .def = "128"},
};

static struct cfg_group slowlog_group = {
    "slowlog", slowlog_rows, (int)(sizeof(slowlog_rows) / sizeof(slowlog_rows[0])), NULL,
    slowlog_fini, NULL};
CFG_REGISTER(slowlog_group)
