/*
 * tls.h - TLS connections (tls.c, OpenSSL).
 *
 * Context: tls_configure()/tls_fini() on the main thread at start-up and
 * exit; the per-connection calls on the connection's worker only.
 */
#ifndef SERVER_TLS_H
#define SERVER_TLS_H

#include "server/conn.h"

/* The tls-* options (tls.c's rows): start-up only, read once the workers run
 * without a lock.  port 0: no TLS listener. */
struct tls_opts {
	int port;
	char *cert_file, *key_file, *ca_cert_file;
	char *auth_clients; /* yes | no | optional */
	char *protocols;    /* e.g. "TLSv1.2 TLSv1.3"; empty = those two */
};
extern struct tls_opts g_tls;

/**
 * tls_configure() - build the server context from the tls-* options.
 * Context: main thread, before the workers start.  Return: 0, or -1 with
 * the reason logged.
 */
int tls_configure(void);
/* tls_fini() - drop the context (each SSL keeps its own reference). */
void tls_fini(void);

/**
 * tls_conn_new() - a server-side SSL object on socket @fd, or NULL.
 * Context: the worker that will own the connection.  The caller stores it
 * in c->io_ctx of a connection whose transport is tls_conn_io.
 */
void *tls_conn_new(int fd);

/* The TLS transport (conn.h): reads and writes through c->io_ctx, buffered
 * decrypted bytes reported as pending, replies written at once; its close
 * sends one close_notify, frees the SSL object and closes c->fd. */
extern const struct conn_io tls_conn_io;

#endif /* SERVER_TLS_H */
