/*
 * tls.h - TLS connections (tls.c, OpenSSL).
 *
 * Context: tls_configure()/tls_fini() on the main thread at start-up and
 * exit; the per-connection calls on the connection's worker only.
 */
#ifndef SERVER_TLS_H
#define SERVER_TLS_H

#include <stddef.h>
#include <sys/types.h>

/* tls.c: linked into rcukv-server only; weak here so that other programs
 * linking net.c (fuzz harnesses) need neither tls.c nor libssl.  Callers
 * check tls_configure != NULL. */
__attribute__((weak)) int tls_configure(void);
__attribute__((weak)) void tls_fini(void);
__attribute__((weak)) void *tls_conn_new(int fd);
__attribute__((weak)) void tls_conn_free(void *ssl);
/* read/write: >0 bytes, 0 EOF, -1 with errno (EAGAIN = wait for the socket) */
__attribute__((weak)) ssize_t tls_read(void *ssl, void *buf, size_t n);
__attribute__((weak)) ssize_t tls_write(void *ssl, const void *buf, size_t n);
__attribute__((weak)) int tls_pending(void *ssl); /* decrypted bytes buffered */

#endif /* SERVER_TLS_H */
