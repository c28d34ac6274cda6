/*
 * monitor.c - MONITOR (monitor.h).
 *
 * The monitors are an RCU list (mon_list) of struct mon, one per monitoring
 * connection, holding its pub/sub mailbox: added and removed by the
 * monitor's own worker under mon_lock, walked lock-free by every worker
 * feeding a command, inside its QSBR read-side section.  An entry is freed
 * a grace period after its removal, which monitor_remove() does before
 * pubsub_conn_closed() retires the mailbox, so a feeder never holds a
 * mailbox past its grace period.  mon_count spares the walk (and formatting
 * the line) when nobody monitors.
 * Tested by tests/server/cases_admin.txt and tests/server/test_admin.sh
 * (monitors on both workers, per-client order).
 */
#define RCU_FLAVOR_QSBR
#include "rcu/rcu.h"
#include "rcu/rculist.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/monitor.h"
#include "server/pubsub.h"
#include "server/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

struct mon {
	struct list_head node; /* on mon_list (RCU) */
	struct conn *conn;     /* owner worker only */
	struct ps_client *mb;
	struct rcu_head rcu;
};

static pthread_mutex_t mon_lock = PTHREAD_MUTEX_INITIALIZER;
static LIST_HEAD(mon_list);
static _Atomic int mon_count; /* entries on mon_list; written under mon_lock */

void monitor_add(struct conn *c)
{
	struct mon *m;

	if (c->flags & CONN_MONITOR)
		return;
	m = xcalloc(1, sizeof(*m));
	m->conn = c;
	m->mb = pubsub_mailbox(c);
	c->flags |= CONN_MONITOR;
	atomic_fetch_or_explicit(&c->list_flags, CONN_MONITOR, memory_order_relaxed);
	pthread_mutex_lock(&mon_lock);
	list_add_tail_rcu(&m->node, &mon_list);
	atomic_fetch_add_explicit(&mon_count, 1, memory_order_relaxed);
	pthread_mutex_unlock(&mon_lock);
}

static void mon_free_rcu(struct rcu_head *h)
{
	free(container_of(h, struct mon, rcu));
}

void monitor_remove(struct conn *c)
{
	struct mon *m, *found = NULL;

	if (!(c->flags & CONN_MONITOR))
		return;
	pthread_mutex_lock(&mon_lock);
	list_for_each_entry(m, &mon_list, node) {
		if (m->conn == c) {
			found = m;
			break;
		}
	}
	if (found) {
		list_del_rcu(&found->node);
		atomic_fetch_sub_explicit(&mon_count, 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&mon_lock);
	c->flags &= ~CONN_MONITOR;
	atomic_fetch_and_explicit(&c->list_flags, ~CONN_MONITOR, memory_order_relaxed);
	if (found)
		call_rcu(&found->rcu, mon_free_rcu);
}

/* ------------------------------------------------------------ redaction */

static int hello_redacted(const struct conn *c, int j)
{
	long long ver;

	if (c->argc < 2 || !resp_str2ll(ARGV(c, 1), ARGL(c, 1), &ver) || ver < 2 || ver > 3)
		return 0;
	for (int i = 2; i < c->argc && i < j; i++) {
		int more = c->argc - 1 - i;

		if (util_strcaseeq(ARGV(c, i), ARGL(c, i), "auth") && more >= 2) {
			if (j == i + 1 || j == i + 2)
				return 1;
			i += 2;
		} else if (util_strcaseeq(ARGV(c, i), ARGL(c, i), "setname") && more >= 1) {
			i++;
		} else {
			return 0; /* HELLO stops at its syntax error */
		}
	}
	return 0;
}

int monitor_redacted(const struct conn *c, int j)
{
	if (j == 0)
		return 0;
	if (util_strcaseeq(ARGV(c, 0), ARGL(c, 0), "auth"))
		return c->argc <= 3;
	if (util_strcaseeq(ARGV(c, 0), ARGL(c, 0), "hello"))
		return hello_redacted(c, j);
	return 0;
}

/* ---------------------------------------------------------------- feed */

static const char redacted[] = "(redacted)";

/* The feed line of @c's running command, in a new raw message. */
static struct ps_msg *feed_line(struct conn *c)
{
	char head[160], *d;
	struct timeval tv;
	size_t cap, o;
	struct ps_msg *m;
	int hl;

	gettimeofday(&tv, NULL);
	if (c->flags & CONN_UNIX)
		hl = snprintf(head, sizeof(head), "+%ld.%06ld [0 unix:%s] ", (long)tv.tv_sec,
			      (long)tv.tv_usec, g_cfg.unixsocket ? g_cfg.unixsocket : "");
	else
		hl = snprintf(head, sizeof(head), "+%ld.%06ld [0 %s] ", (long)tv.tv_sec,
			      (long)tv.tv_usec, c->addr);
	if (hl < 0 || (size_t)hl >= sizeof(head))
		hl = (int)strlen(head);
	cap = (size_t)hl + 2;
	for (int j = 0; j < c->argc; j++)
		cap += 4 * (monitor_redacted(c, j) ? sizeof(redacted) : ARGL(c, j)) + 3;
	m = pubsub_raw_new(cap, &d);
	memcpy(d, head, (size_t)hl);
	o = (size_t)hl;
	for (int j = 0; j < c->argc; j++) {
		if (monitor_redacted(c, j))
			o += util_repr(d + o, redacted, sizeof(redacted) - 1);
		else
			o += util_repr(d + o, ARGV(c, j), ARGL(c, j));
		if (j != c->argc - 1)
			d[o++] = ' ';
	}
	d[o++] = '\r';
	d[o++] = '\n';
	pubsub_raw_trim(m, o);
	return m;
}

void monitor_feed(struct conn *c)
{
	struct ps_msg *msg;
	struct mon *m;

	if (SRV_LIKELY(atomic_load_explicit(&mon_count, memory_order_relaxed) == 0))
		return;
	msg = feed_line(c);
	rcu_read_lock(); /* QSBR: the command's own section; a marker */
	list_for_each_entry_rcu(m, &mon_list, node)
		pubsub_raw_send(c, m->mb, msg);
	rcu_read_unlock();
	pubsub_raw_put(msg);
}
