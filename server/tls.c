/*
 * tls.c - TLS for rcukv-server with OpenSSL (issue 9): the server context
 * (tls-cert-file, tls-key-file, tls-ca-cert-file, tls-auth-clients,
 * tls-protocols) and non-blocking per-connection reads and writes.
 *
 * The transport (tls_conn_io, conn.h) is what net.c's TLS listeners give
 * their connections; the connection engine (conn.c) never sees OpenSSL.
 * A connection's SSL object is touched only by the worker owning it; the
 * context is built once by the main thread before the workers start.
 * Tested by tests/server/test_tls.sh.
 */
#include "server/config.h"
#include "server/conn.h"
#include "server/log.h"
#include "server/tls.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static SSL_CTX *ctx;

static void log_ssl_errors(const char *what)
{
	unsigned long e;
	char buf[256];

	while ((e = ERR_get_error()) != 0) {
		ERR_error_string_n(e, buf, sizeof(buf));
		srv_log(LL_WARNING, "%s: %s", what, buf);
	}
}

/* tls-protocols "TLSv1.2 TLSv1.3" -> min and max versions; 0 on error. */
static int parse_protocols(const char *s, int *minv, int *maxv)
{
	static const struct {
		const char *name;
		int v;
	} names[] = {{"TLSv1", TLS1_VERSION},
		     {"TLSv1.1", TLS1_1_VERSION},
		     {"TLSv1.2", TLS1_2_VERSION},
		     {"TLSv1.3", TLS1_3_VERSION}};
	char tmp[256], *save = NULL;

	*minv = 0;
	*maxv = 0;
	if (!s || !s[0]) { /* default, as Redis: TLSv1.2 and TLSv1.3 */
		*minv = TLS1_2_VERSION;
		*maxv = TLS1_3_VERSION;
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s", s);
	for (char *t = strtok_r(tmp, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		int v = 0;

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcasecmp(t, names[i].name))
				v = names[i].v;
		if (!v) {
			srv_log(LL_WARNING, "Invalid tls-protocols specified. Use a combination of "
					    "'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.");
			return 0;
		}
		if (!*minv || v < *minv)
			*minv = v;
		if (v > *maxv)
			*maxv = v;
	}
	return *minv != 0;
}

int tls_configure(void)
{
	int minv, maxv, verify;
	const char *auth = g_tls.auth_clients ? g_tls.auth_clients : "yes";

	if (!g_tls.cert_file || !g_tls.cert_file[0] || !g_tls.key_file ||
	    !g_tls.key_file[0]) {
		srv_log(LL_WARNING, "Failed to configure TLS: tls-cert-file and tls-key-file "
				    "are required with tls-port.");
		return -1;
	}
	if (!parse_protocols(g_tls.protocols, &minv, &maxv))
		return -1;
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx) {
		log_ssl_errors("SSL_CTX_new");
		return -1;
	}
	SSL_CTX_set_min_proto_version(ctx, minv);
	SSL_CTX_set_max_proto_version(ctx, maxv);
	SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
				  SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
	if (SSL_CTX_use_certificate_chain_file(ctx, g_tls.cert_file) <= 0) {
		log_ssl_errors("Failed to load certificate");
		srv_log(LL_WARNING, "Failed to load certificate: %s", g_tls.cert_file);
		return -1;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, g_tls.key_file, SSL_FILETYPE_PEM) <= 0 ||
	    !SSL_CTX_check_private_key(ctx)) {
		log_ssl_errors("Failed to load private key");
		srv_log(LL_WARNING, "Failed to load private key: %s", g_tls.key_file);
		return -1;
	}
	if (!strcasecmp(auth, "no")) {
		verify = SSL_VERIFY_NONE;
	} else if (!strcasecmp(auth, "optional")) {
		verify = SSL_VERIFY_PEER;
	} else if (!strcasecmp(auth, "yes")) {
		verify = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
	} else {
		srv_log(LL_WARNING, "Invalid tls-auth-clients '%s': yes, no or optional", auth);
		return -1;
	}
	if (verify != SSL_VERIFY_NONE) {
		if (!g_tls.ca_cert_file || !g_tls.ca_cert_file[0]) {
			srv_log(LL_WARNING,
				"Failed to configure TLS: tls-auth-clients needs tls-ca-cert-file "
				"(or set tls-auth-clients no).");
			return -1;
		}
	}
	if (g_tls.ca_cert_file && g_tls.ca_cert_file[0] &&
	    SSL_CTX_load_verify_locations(ctx, g_tls.ca_cert_file, NULL) <= 0) {
		log_ssl_errors("Failed to load CA certificate");
		srv_log(LL_WARNING, "Failed to load CA certificate: %s", g_tls.ca_cert_file);
		return -1;
	}
	SSL_CTX_set_verify(ctx, verify, NULL);
	return 0;
}

void tls_fini(void)
{
	if (ctx)
		SSL_CTX_free(ctx);
	ctx = NULL;
}

void *tls_conn_new(int fd)
{
	SSL *ssl = SSL_new(ctx);

	if (!ssl)
		return NULL;
	SSL_set_fd(ssl, fd);
	SSL_set_accept_state(ssl);
	return ssl;
}

static void tls_close(struct conn *c)
{
	SSL *ssl = c->io_ctx;

	if (ssl) {
		if (SSL_is_init_finished(ssl))
			SSL_shutdown(ssl); /* one close_notify, no waiting for the peer's */
		SSL_free(ssl);
	}
	close(c->fd);
}

/* Map an SSL_read/SSL_write result: -1 + EAGAIN to wait, -1 + EIO on error. */
static ssize_t io_result(SSL *ssl, int r)
{
	int e = SSL_get_error(ssl, r);

	switch (e) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	case SSL_ERROR_SYSCALL:
		ERR_clear_error();
		if (errno == 0 || errno == EAGAIN)
			errno = ECONNRESET;
		return r == 0 ? 0 : -1;
	default:
		if (atomic_load_explicit(&g_cfg.loglevel, memory_order_relaxed) <= LL_VERBOSE)
			log_ssl_errors("TLS error");
		ERR_clear_error();
		errno = EIO;
		return -1;
	}
}

static ssize_t tls_read(struct conn *c, void *buf, size_t n)
{
	SSL *ssl = c->io_ctx;
	int r;

	ERR_clear_error();
	errno = 0;
	r = SSL_read(ssl, buf, n > INT32_MAX ? INT32_MAX : (int)n);
	return r > 0 ? r : io_result(ssl, r);
}

static ssize_t tls_write(struct conn *c, const void *buf, size_t n)
{
	SSL *ssl = c->io_ctx;
	int r;

	ERR_clear_error();
	errno = 0;
	r = SSL_write(ssl, buf, n > INT32_MAX ? INT32_MAX : (int)n);
	if (r > 0)
		return r;
	r = (int)io_result(ssl, r);
	return r == 0 ? (errno = EPIPE, -1) : r;
}

/* Decrypted bytes buffered: they raise no socket event. */
static int tls_pending(struct conn *c)
{
	return SSL_pending((SSL *)c->io_ctx) > 0;
}

const struct conn_io tls_conn_io = {
	.read = tls_read,
	.write = tls_write,
	.pending = tls_pending,
	.close = tls_close,
	.write_at_once = 1,
};

/* ------------------------------------------------------------ options */

struct tls_opts g_tls;

#define TLS_STR(n, f, d) { .name = (n), .kind = CFG_STRING, .mut = CFG_STARTUP, .field = &g_tls.f, .def = (d) }

static const struct cfg_opt tls_rows[] = {
    {.name = "tls-port", .kind = CFG_INT, .mut = CFG_STARTUP, .field = &g_tls.port,
     .store = CFG_PLAIN_INT, .max = 65535, .def = "0"},
    TLS_STR("tls-cert-file", cert_file, NULL),
    TLS_STR("tls-key-file", key_file, NULL),
    TLS_STR("tls-ca-cert-file", ca_cert_file, NULL),
    TLS_STR("tls-auth-clients", auth_clients, "yes"),
    TLS_STR("tls-protocols", protocols, ""),
};

static struct cfg_group tls_group = {"tls", tls_rows, (int)(sizeof(tls_rows) / sizeof(tls_rows[0])),
				     NULL, NULL, NULL};
CFG_REGISTER(tls_group)
