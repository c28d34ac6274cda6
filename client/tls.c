/*
 * client/tls.c: the TLS transport of rcukv-cli (OpenSSL).
 *
 * Debian 12's hiredis 0.14 has no hiredis_ssl, so hiredis still opens the TCP
 * (or unix) socket and we run OpenSSL over that descriptor ourselves: the
 * handshake here, then every byte of a TLS connection goes through
 * cli_tls_recv()/cli_tls_send() (conn.c picks plain or TLS per connection).
 * Replies are parsed by our own scanner, as on plain connections.
 *
 * What it owns: one SSL_CTX per set of options (cli_tls_setup(), freed by
 * cli_tls_teardown()) and one SSL per connection (c->ssl, freed by
 * cli_tls_close() before hiredis closes the descriptor).
 *
 * Verification, as redis-cli --tls: the server's chain must lead to --cacert,
 * --cacertdir, or (without either) the system's default CAs; --insecure turns
 * verification off.  Unlike redis-cli 7.0 (whose hiredis checks only the
 * chain) we also check the certificate's name: --sni NAME when given, else
 * the -h host; an IP address must appear as an IP subjectAltName, a host name
 * as a DNS subjectAltName (or the CN when there is none), OpenSSL's rules,
 * plus one of ours: an IP address may also be the CN when the certificate has
 * no IP subjectAltName (see verify_cb()).
 * Error texts and exit status follow redis-cli ("Could not negotiate a TLS
 * connection: Invalid CA Certificate File/Directory", "Could not connect to
 * Redis at H:P: SSL_connect failed: certificate verify failed", exit 1), with
 * the reason added in parentheses.
 *
 * Blocking and non-blocking: the handshake blocks up to the connect timeout;
 * afterwards the SSL follows the descriptor's mode.  On a non-blocking
 * descriptor cli_tls_recv()/cli_tls_send() report "want read" and "want
 * write" alike as EAGAIN: bench.c keeps EPOLLIN registered at all times and
 * adds EPOLLOUT while output waits, so either wakes it.  Partial writes are
 * on and the write buffer may move or grow between retries (bench.c appends
 * to it while a write is pending).  Data OpenSSL already decrypted is not
 * seen by epoll: callers ask cli_tls_pending() before they wait again.
 *
 * Concurrency: the SSL_CTX is set up by the main thread before any
 * connection and is read-only afterwards (OpenSSL lets threads create SSLs
 * from one context); each SSL belongs to the thread that owns its connection.
 *
 * Tested by tests/client/test_tls.sh (rcukv-server and redis-server 7 over
 * TLS: commands, interactive mode, pipelined bench, verification failures,
 * client certificates).
 */
#include "client/cli.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

/* The last OpenSSL error of this thread as text, and the queue emptied. */
static void ssl_errstr(char *buf, size_t n, const char *fallback)
{
	unsigned long e = ERR_peek_last_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;

	snprintf(buf, n, "%s", r ? r : fallback);
	ERR_clear_error();
}

/* Index of the SSL ex_data slot holding the IP address checked (set once, main thread). */
static int ex_index = -1;

/* Does @cert carry any IP address subjectAltName? */
static int has_ip_san(X509 *cert)
{
	GENERAL_NAMES *san = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
	int found = 0;

	for (int i = 0; san && i < sk_GENERAL_NAME_num(san); i++)
		if (sk_GENERAL_NAME_value(san, i)->type == GEN_IPADD)
			found = 1;
	GENERAL_NAMES_free(san);
	return found;
}

/*
 * OpenSSL matches an IP address against IP subjectAltNames only.  Many Redis
 * certificates name an address by their CN alone (CN=127.0.0.1, no SAN;
 * redis-cli 7.0 accepts them since it checks no name at all).  So, as
 * OpenSSL does for host names, fall back to the CN when the certificate has
 * no IP subjectAltName: an exact, whole-string match.  Everything else
 * (chain, expiry, other names) stays verified.
 */
static int verify_cb(int ok, X509_STORE_CTX *x)
{
	if (ok || X509_STORE_CTX_get_error(x) != X509_V_ERR_IP_ADDRESS_MISMATCH)
		return ok;
	SSL *ssl = X509_STORE_CTX_get_ex_data(x, SSL_get_ex_data_X509_STORE_CTX_idx());
	const char *ip = ssl ? SSL_get_ex_data(ssl, ex_index) : NULL;
	X509 *cert = X509_STORE_CTX_get_current_cert(x);
	if (!ip || !cert || has_ip_san(cert))
		return 0;
	X509_NAME *subj = X509_get_subject_name(cert);
	int at = X509_NAME_get_index_by_NID(subj, NID_commonName, -1);
	if (at < 0 || X509_NAME_get_index_by_NID(subj, NID_commonName, at) >= 0)
		return 0; /* no CN, or several */
	const ASN1_STRING *cn = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subj, at));
	size_t n = (size_t)ASN1_STRING_length(cn);
	if (n != strlen(ip) || memcmp(ASN1_STRING_get0_data(cn), ip, n) != 0)
		return 0;
	X509_STORE_CTX_set_error(x, X509_V_OK);
	return 1;
}

int cli_tls_setup(struct cli_conn_opts *o)
{
	const struct cli_tls_opts *t = &o->tls;
	SSL_CTX *ctx;

	if (!t->enabled || o->tls_ctx)
		return 0;
	if (ex_index < 0)
		ex_index = SSL_get_ex_new_index(0, "rcukv-cli checked IP", NULL, NULL, NULL);
	if (ex_index < 0) {
		fprintf(stderr, "Could not negotiate a TLS connection: out of memory\n");
		return -1;
	}
	if (!t->cert != !t->key) {
		fprintf(stderr, "rcukv-cli: --cert and --key go together (both or neither)\n");
		return -1;
	}
	ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx) {
		fprintf(stderr, "Could not negotiate a TLS connection: Failed to create SSL_CTX\n");
		return -1;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	/* A server that closes without close_notify (redis does, on QUIT or
	 * SHUTDOWN) is an end of stream, as on a plain socket. */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
				  SSL_MODE_AUTO_RETRY);
	SSL_CTX_set_verify(ctx, t->insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, verify_cb);
	if (t->cacert || t->cacertdir) {
		if (SSL_CTX_load_verify_locations(ctx, t->cacert, t->cacertdir) != 1) {
			fprintf(stderr, "Could not negotiate a TLS connection: Invalid CA "
					"Certificate File/Directory\n");
			goto fail;
		}
	} else if (!t->insecure && SSL_CTX_set_default_verify_paths(ctx) != 1) {
		fprintf(stderr, "Could not negotiate a TLS connection: Failed to load the "
				"system's default CA certificates (use --cacert)\n");
		goto fail;
	}
	if (t->cert) {
		if (SSL_CTX_use_certificate_chain_file(ctx, t->cert) != 1) {
			fprintf(
			    stderr,
			    "Could not negotiate a TLS connection: Invalid client certificate\n");
			goto fail;
		}
		if (SSL_CTX_use_PrivateKey_file(ctx, t->key, SSL_FILETYPE_PEM) != 1 ||
		    SSL_CTX_check_private_key(ctx) != 1) {
			fprintf(stderr,
				"Could not negotiate a TLS connection: Invalid private key\n");
			goto fail;
		}
	}
	ERR_clear_error();
	o->tls_ctx = ctx;
	return 0;
fail:
	ERR_clear_error();
	SSL_CTX_free(ctx);
	return -1;
}

void cli_tls_teardown(struct cli_conn_opts *o)
{
	SSL_CTX_free(o->tls_ctx);
	o->tls_ctx = NULL;
}

static int is_ip(const char *s)
{
	unsigned char a[16];

	return inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1;
}

static void set_io_timeout(int fd, int ms)
{
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int cli_tls_handshake(struct cli_conn *c, const struct cli_conn_opts *o, const char *where)
{
	const char *name = o->tls.sni ? o->tls.sni : o->socket ? NULL : o->host;
	SSL *ssl = SSL_new(o->tls_ctx);
	char why[240];
	int rc;

	if (!ssl) {
		snprintf(c->err, sizeof(c->err), "Could not connect to Redis at %s: out of memory",
			 where);
		return -1;
	}
	/* SNI carries host names only (RFC 6066: never an address). */
	if (name && !is_ip(name) && SSL_set_tlsext_host_name(ssl, name) != 1)
		goto fail_ssl;
	if (name && !o->tls.insecure) {
		X509_VERIFY_PARAM *vp = SSL_get0_param(ssl);
		X509_VERIFY_PARAM_set_hostflags(vp, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
		if ((is_ip(name) ? X509_VERIFY_PARAM_set1_ip_asc(vp, name)
				 : X509_VERIFY_PARAM_set1_host(vp, name, 0)) != 1)
			goto fail_ssl;
		/* verify_cb() reads the address; name outlives the handshake. */
		if (is_ip(name) && !SSL_set_ex_data(ssl, ex_index, (void *)name))
			goto fail_ssl;
	}
	if (SSL_set_fd(ssl, c->fd) != 1)
		goto fail_ssl;
	/* A plain server never answers a ClientHello: give up after the
	 * connect timeout (redis-cli waits forever). */
	set_io_timeout(c->fd, o->timeout_ms);
	errno = 0;
	rc = SSL_connect(ssl);
	if (rc == 1) {
		set_io_timeout(c->fd, 0);
		c->ssl = ssl;
		return 0;
	}
	long vr = SSL_get_verify_result(ssl);
	int se = SSL_get_error(ssl, rc);
	if (vr == X509_V_ERR_HOSTNAME_MISMATCH || vr == X509_V_ERR_IP_ADDRESS_MISMATCH) {
		/* redis-cli 7.0 checks no name: say how to get past it safely. */
		snprintf(why, sizeof(why),
			 "certificate verify failed (%s: the certificate does not name '%.100s'; "
			 "--sni NAME checks a name it carries)",
			 X509_verify_cert_error_string(vr), name ? name : "");
		ERR_clear_error();
	} else if (vr != X509_V_OK) {
		snprintf(why, sizeof(why), "certificate verify failed (%s)",
			 X509_verify_cert_error_string(vr));
		ERR_clear_error();
	} else if ((se == SSL_ERROR_WANT_READ || se == SSL_ERROR_WANT_WRITE ||
		    (se == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK)))) {
		snprintf(why, sizeof(why),
			 "no handshake reply within the timeout (is it a TLS port?)");
		ERR_clear_error();
	} else if (se == SSL_ERROR_SYSCALL && ERR_peek_last_error() == 0) {
		snprintf(why, sizeof(why), "%s",
			 errno ? strerror(errno) : "the server closed the connection");
	} else {
		ssl_errstr(why, sizeof(why), "handshake failed");
	}
	snprintf(c->err, sizeof(c->err),
		 "Could not connect to Redis at %.200s: SSL_connect failed: %s", where, why);
	SSL_set_quiet_shutdown(ssl, 1);
	SSL_free(ssl);
	return -1;
fail_ssl:
	ssl_errstr(why, sizeof(why), "bad name");
	snprintf(c->err, sizeof(c->err),
		 "Could not connect to Redis at %.200s: TLS setup for '%.100s': %s", where,
		 name ? name : "", why);
	SSL_free(ssl);
	return -1;
}

/*
 * Map a failed SSL_read/SSL_write to read(2)'s conventions.  Return 0 for a
 * closed stream, or -1 with errno EAGAIN (retry when the descriptor is ready)
 * or another errno with c->err set.
 */
static ssize_t io_fail(struct cli_conn *c, int rc)
{
	int se = SSL_get_error(c->ssl, rc);
	char why[160];

	switch (se) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	case SSL_ERROR_SYSCALL:
		if (ERR_peek_last_error() == 0) {
			if (errno == 0)
				return 0;
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return -1;
			snprintf(c->err, sizeof(c->err), "Error: %s", strerror(errno));
			break;
		}
		/* OpenSSL queued the reason */
		__attribute__((fallthrough));
	default:
		ssl_errstr(why, sizeof(why), "TLS error");
		snprintf(c->err, sizeof(c->err), "Error: TLS: %s", why);
		errno = EPROTO;
		break;
	}
	/* After a fatal error no close_notify may be sent. */
	SSL_set_quiet_shutdown(c->ssl, 1);
	return -1;
}

ssize_t cli_tls_recv(struct cli_conn *c, void *buf, size_t n)
{
	int rc;

	if (n > INT32_MAX)
		n = INT32_MAX;
	errno = 0;
	rc = SSL_read(c->ssl, buf, (int)n);
	return rc > 0 ? rc : io_fail(c, rc);
}

ssize_t cli_tls_send(struct cli_conn *c, const void *buf, size_t n)
{
	int rc;

	if (n == 0)
		return 0;
	if (n > INT32_MAX)
		n = INT32_MAX;
	errno = 0;
	rc = SSL_write(c->ssl, buf, (int)n);
	if (rc > 0)
		return rc;
	ssize_t r = io_fail(c, rc);
	if (r == 0) { /* the peer closed: writing is an error, as EPIPE on a socket */
		snprintf(c->err, sizeof(c->err), "Error: %s", strerror(EPIPE));
		errno = EPIPE;
		return -1;
	}
	return r;
}

int cli_tls_pending(const struct cli_conn *c)
{
	return c->ssl && SSL_has_pending(c->ssl);
}

void cli_tls_close(struct cli_conn *c)
{
	if (!c->ssl)
		return;
	/* One close_notify, best effort: never waits for the server's. */
	SSL_shutdown(c->ssl);
	ERR_clear_error();
	SSL_free(c->ssl);
	c->ssl = NULL;
}
