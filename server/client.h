/*
 * client.h - the client registry (client.c): every open connection, for
 * CLIENT LIST/INFO/KILL and INFO clients.
 *
 * g_clients_lock guards the list links (gnext/gprev) and each connection's
 * name; it is taken on connect and close (client_register(),
 * client_unregister(), by the connection's worker), by CLIENT SETNAME / HELLO
 * SETNAME, and by the commands that walk the list.  Lock order:
 * g_clients_lock, then nothing.  A connection in the list is freed only by
 * its own worker after client_unregister(), so a walker under the lock may
 * read any connection's atomic fields (conn.h) but never writes them, except
 * the kill flag (CLIENT KILL; the owner closes it).
 */
#ifndef SERVER_CLIENT_H
#define SERVER_CLIENT_H

#include <pthread.h>
#include <stddef.h>

struct conn;

extern pthread_mutex_t g_clients_lock;
extern struct conn *g_clients;

/* The connection's worker, once at accept / once at close (which frees the
 * name). */
void client_register(struct conn *c);
void client_unregister(struct conn *c);
/* CLIENT SETNAME / HELLO SETNAME on @c's worker: 0, or -1 with the error
 * replied (Redis's text for a name with spaces or special characters). */
int client_set_name(struct conn *c, const char *p, size_t n);
/* Bytes held by every connection's buffers (INFO mem_clients_normal); any
 * thread (takes g_clients_lock). */
size_t client_mem_total(void);

#endif /* SERVER_CLIENT_H */
