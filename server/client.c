/*
 * client.c - the client registry: every open connection, its name and the
 * memory its buffers hold (client.h says who takes g_clients_lock).  The
 * CLIENT command that reads it is cmd_client.c's.
 */
#include "server/client.h"
#include "server/conn.h"
#include "server/monitor.h"
#include "server/pause.h"
#include "server/block.h"
#include "server/pubsub.h"
#include "server/reply.h"
#include "server/util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

pthread_mutex_t g_clients_lock = PTHREAD_MUTEX_INITIALIZER;
struct conn *g_clients;

void client_register(struct conn *c)
{
	pubsub_conn_opened(c); /* registered connections have a mailbox */
	pthread_mutex_lock(&g_clients_lock);
	c->gnext = g_clients;
	if (g_clients)
		g_clients->gprev = c;
	g_clients = c;
	pthread_mutex_unlock(&g_clients_lock);
}

void client_unregister(struct conn *c)
{
	monitor_remove(c); /* before its mailbox goes (pubsub_conn_closed() below) */
	pause_conn_closed(c);
	block_conn_closed(c);
	pthread_mutex_lock(&g_clients_lock);
	if (c->gprev)
		c->gprev->gnext = c->gnext;
	else
		g_clients = c->gnext;
	if (c->gnext)
		c->gnext->gprev = c->gprev;
	free(c->name);
	c->name = NULL;
	pthread_mutex_unlock(&g_clients_lock);
	/* Out of the registry first: nobody can take its mailbox any more
	 * (pubsub_mailbox_hold()); its subscriptions go with it. */
	pubsub_conn_closed(c);
}

static int valid_client_name(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < '!' || p[i] > '~')
			return 0;
	return 1;
}

int client_set_name(struct conn *c, const char *p, size_t n)
{
	char *old;

	if (!valid_client_name(p, n)) {
		reply_error(c,
			    "Client names cannot contain spaces, newlines or special characters.");
		return -1;
	}
	pthread_mutex_lock(&g_clients_lock);
	old = c->name;
	c->name = n ? xmemdup(p, n) : NULL;
	pthread_mutex_unlock(&g_clients_lock);
	free(old);
	return 0;
}

/* tot-mem of CLIENT LIST: the unparsed query bytes, the unsent reply bytes
 * and the connection itself (as the figures CLIENT LIST prints). */
static size_t client_mem(struct conn *x)
{
	return atomic_load_explicit(&x->qbuf_used, memory_order_relaxed) +
	       atomic_load_explicit(&x->obuf_used, memory_order_relaxed) + sizeof(*x);
}

size_t client_mem_total(void)
{
	size_t sum = 0;

	pthread_mutex_lock(&g_clients_lock);
	for (struct conn *x = g_clients; x; x = x->gnext)
		sum += client_mem(x);
	pthread_mutex_unlock(&g_clients_lock);
	return sum;
}
