/*
 * notify.h - keyspace notifications (notify.c), as Redis 7.0's notify.c:
 * notify-keyspace-events selects the classes, and each event is published on
 * __keyspace@<db>__:<key> (the event as message) and/or
 * __keyevent@<db>__:<event> (the key as message) through pub/sub.
 *
 * Context: notify_event() from any thread that changed a key: a worker
 * inside its command, or the main thread's active expiry and eviction
 * (the table's watch hook, under the key's stripe mutex: the publish takes
 * no lock and never waits for a subscriber).
 */
#ifndef SERVER_NOTIFY_H
#define SERVER_NOTIFY_H

#include <stdatomic.h>
#include <stddef.h>

struct ht;

/* The classes, Redis's NOTIFY_* bits and letters. */
#define NOTIFY_KEYSPACE (1 << 0) /* K */
#define NOTIFY_KEYEVENT (1 << 1) /* E */
#define NOTIFY_GENERIC (1 << 2)	 /* g */
#define NOTIFY_STRING (1 << 3)	 /* $ */
#define NOTIFY_LIST (1 << 4)	 /* l */
#define NOTIFY_SET (1 << 5)	 /* s */
#define NOTIFY_HASH (1 << 6)	 /* h */
#define NOTIFY_ZSET (1 << 7)	 /* z */
#define NOTIFY_EXPIRED (1 << 8)	 /* x */
#define NOTIFY_EVICTED (1 << 9)	 /* e */
#define NOTIFY_STREAM (1 << 10)	 /* t */
#define NOTIFY_KEY_MISS (1 << 11) /* m (not in A) */
#define NOTIFY_MODULE (1 << 13)	 /* d */
#define NOTIFY_NEW (1 << 14)	 /* n (not in A) */
#define NOTIFY_ALL                                                                                 \
	(NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH | NOTIFY_ZSET |   \
	 NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM | NOTIFY_MODULE)

/* notify-keyspace-events as flags; relaxed loads. */
extern _Atomic int g_notify_flags;

/* At db_init(): @watch_all(+1/-1) switches ht_watch_all() on every
 * database's table, whose expired keys are announced. */
void notify_init(void (*watch_all)(int delta));

/* Whether events of class @type are published now (a relaxed load). */
static inline int notify_wanted(int type)
{
	int f = atomic_load_explicit(&g_notify_flags, memory_order_relaxed);

	return (f & type) && (f & (NOTIFY_KEYSPACE | NOTIFY_KEYEVENT));
}

/* Publish @event of class @type for @key of database @dbid. */
void notify_event(int type, const char *event, const void *key, size_t klen, int dbid);

/* Redis's keyspaceEventsStringToFlags() (-1: a letter it does not know) and
 * keyspaceEventsFlagsToString() (into @buf, at least 16 bytes). */
int notify_parse(const char *s, size_t len);
void notify_format(int flags, char *buf);

#endif /* SERVER_NOTIFY_H */
