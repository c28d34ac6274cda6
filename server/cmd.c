/*
 * cmd.c - the command table, dispatch, and the commands that touch no key:
 * PING ECHO QUIT HELLO AUTH SELECT TIME COMMAND CLIENT CONFIG SHUTDOWN.
 *
 * The table is built once at start-up (cmd_init) from this file's commands and
 * the keyspace commands of db.c, into a read-only hash index by lower-case
 * name; after that it is never written, so every worker reads it without
 * synchronisation.  Client-visible errors use Redis 7.0's exact text.
 *
 * Tested by tests/server/test_server.c (cases in tests/server/cases.txt).
 */
#include "server/server_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

/* ------------------------------------------------------------ commands */

static void cmd_ping(struct conn *c, int argc)
{
	if (argc > 2) {
		reply_error(c, "wrong number of arguments for 'ping' command");
		return;
	}
	if (argc == 2)
		reply_bulk(c, ARGV(c, 1), ARGL(c, 1));
	else
		reply_raw(c, "+PONG\r\n", 7);
}

static void cmd_echo(struct conn *c, int argc)
{
	(void)argc;
	reply_bulk(c, ARGV(c, 1), ARGL(c, 1));
}

static void cmd_quit(struct conn *c, int argc)
{
	(void)argc;
	reply_ok(c);
	c->flags |= CONN_CLOSE_AFTER_REPLY;
}

static void cmd_select(struct conn *c, int argc)
{
	long long id;

	(void)argc;
	if (!util_str2ll(ARGV(c, 1), ARGL(c, 1), &id)) {
		reply_error(c, ERR_NOT_INT);
		return;
	}
	if (id < INT32_MIN || id > INT32_MAX) {
		reply_error(c,
			    "value is out of range, value must between -2147483648 and 2147483647");
		return;
	}
	if (id != 0) {
		reply_error(c, ERR_DB_RANGE);
		return;
	}
	reply_ok(c);
}

static void cmd_time(struct conn *c, int argc)
{
	struct timeval tv;

	(void)argc;
	gettimeofday(&tv, NULL);
	reply_array(c, 2);
	reply_bulk_ll(c, tv.tv_sec);
	reply_bulk_ll(c, tv.tv_usec);
}

#define ERR_AUTH_NOPASS                                                                            \
	"AUTH <password> called without any password configured for the default user. Are you "    \
	"sure your configuration is correct?"
#define ERR_WRONGPASS "-WRONGPASS invalid username-password pair or user is disabled."

/*
 * One user, "default": without requirepass it takes any password (nopass);
 * with one, only that password (compared in constant time).  Any other user
 * name fails, as Redis answers with no ACL users defined.
 */
static int auth_check(const char *user, size_t ulen, const char *pw, size_t pwlen)
{
	int is_default = ulen == 7 && !memcmp(user, "default", 7);
	int ok = cfg_check_password(pw, pwlen); /* always run: same time for any user */

	if (!is_default)
		return 0;
	return cfg_password_required() ? ok : 1;
}

static void cmd_auth(struct conn *c, int argc)
{
	int ok;

	if (argc > 3) {
		reply_error(c, ERR_SYNTAX);
		return;
	}
	if (argc == 2) {
		if (!cfg_password_required()) {
			reply_error(c, ERR_AUTH_NOPASS);
			return;
		}
		ok = auth_check("default", 7, ARGV(c, 1), ARGL(c, 1));
	} else {
		ok = auth_check(ARGV(c, 1), ARGL(c, 1), ARGV(c, 2), ARGL(c, 2));
	}
	if (ok) {
		c->authenticated = 1;
		reply_ok(c);
	} else {
		srv_log(LL_VERBOSE, "failed AUTH from %s", c->addr);
		reply_error(c, ERR_WRONGPASS);
	}
}

static void acl_whoami(struct conn *c, int argc)
{
	(void)argc;
	reply_bulk_str(c, "default");
}

static int valid_client_name(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < '!' || p[i] > '~')
			return 0;
	return 1;
}

static int set_name(struct conn *c, const char *p, size_t n)
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

static void cmd_hello(struct conn *c, int argc)
{
	long long ver = 0;
	const char *name = NULL;
	size_t namelen = 0;
	int have_auth = 0, auth_ok = 1;

	if (argc >= 2) {
		if (!util_str2ll(ARGV(c, 1), ARGL(c, 1), &ver)) {
			reply_error(c, "Protocol version is not an integer or out of range");
			return;
		}
		if (ver < 2 || ver > 3) {
			reply_error(c, "-NOPROTO unsupported protocol version");
			return;
		}
	}
	for (int j = 2; j < argc; j++) {
		int more = argc - 1 - j;

		if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "auth") && more >= 2) {
			have_auth = 1;
			auth_ok = auth_check(ARGV(c, j + 1), ARGL(c, j + 1), ARGV(c, j + 2),
					     ARGL(c, j + 2));
			j += 2;
		} else if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "setname") && more) {
			name = ARGV(c, j + 1);
			namelen = ARGL(c, j + 1);
			j++;
		} else {
			reply_errorf(c, "Syntax error in HELLO option '%s'", ARGV(c, j));
			return;
		}
	}
	if (have_auth && !auth_ok) {
		reply_error(c, ERR_WRONGPASS);
		return;
	}
	if (have_auth)
		c->authenticated = 1;
	if (!c->authenticated && cfg_password_required()) {
		reply_error(c, "-NOAUTH HELLO must be called with the client already authenticated, "
			       "otherwise the HELLO AUTH <user> <pass> option can be used to "
			       "authenticate the client and select the RESP protocol version at "
			       "the same time");
		return;
	}
	if (name && set_name(c, name, namelen) < 0)
		return;
	if (ver) {
		c->resp = (int)ver;
		atomic_store_explicit(&c->resp_pub, c->resp, memory_order_relaxed);
	}
	reply_map(c, 7);
	reply_bulk_str(c, "server");
	reply_bulk_str(c, "redis");
	reply_bulk_str(c, "version");
	reply_bulk_str(c, REDIS_COMPAT_VERSION);
	reply_bulk_str(c, "proto");
	reply_int(c, c->resp);
	reply_bulk_str(c, "id");
	reply_int(c, (long long)c->id);
	reply_bulk_str(c, "mode");
	reply_bulk_str(c, "standalone");
	reply_bulk_str(c, "role");
	reply_bulk_str(c, "master");
	reply_bulk_str(c, "modules");
	reply_array(c, 0);
}

static void cmd_shutdown(struct conn *c, int argc)
{
	int nosave = 0, save = 0, force = 0, abort_ = 0;

	for (int j = 1; j < argc; j++) {
		if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "nosave"))
			nosave = 1;
		else if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "save"))
			save = 1;
		else if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "now"))
			; /* no replicas to wait for */
		else if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "force"))
			force = 1;
		else if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "abort"))
			abort_ = 1;
		else {
			reply_error(c, ERR_SYNTAX);
			return;
		}
	}
	if ((abort_ && argc != 2) || (nosave && save)) {
		reply_error(c, ERR_SYNTAX);
		return;
	}
	if (abort_) {
		reply_error(c, "No shutdown in progress.");
		return;
	}
	srv_log(LL_WARNING, "User requested shutdown...");
	/* The save (persist_shutdown()) runs on the main thread with every
	 * worker paused between commands, so that no write lands after it.  As
	 * Redis: if the server exits, the client that asked gets no reply (its
	 * connection closes); if the save fails, it gets an error and the
	 * server goes on (net.c, worker_answer_shutdown()). */
	persist_set_shutdown_mode(nosave ? -1 : save ? 1 : 0, force);
	c->flags |= CONN_SHUTDOWN_WAIT;
	net_request_shutdown();
}

/* ---------------------------------------------------------------- CLIENT */

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

/* One CLIENT LIST line for x, '\n'-terminated, in a new buffer of *lenp bytes
 * (names have no length limit: measured first, then formatted).  The caller
 * frees it.  g_clients_lock held. */
static char *client_line(struct conn *x, long long now, size_t *lenp)
{
	static const char fmt[] =
	    "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=N db=0 sub=0 "
	    "psub=0 ssub=0 multi=-1 qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=0 rbs=%zu "
	    "rbp=0 obl=%zu oll=0 omem=0 tot-mem=%zu events=r cmd=%s user=default redir=-1 "
	    "resp=%d";
	char cmdname[64], *buf = NULL;
	size_t qb = atomic_load_explicit(&x->qbuf_used, memory_order_relaxed);
	size_t ob = atomic_load_explicit(&x->obuf_used, memory_order_relaxed);
	long long idle = (now - atomic_load_explicit(&x->last_ms, memory_order_relaxed)) / 1000;
	int resp = atomic_load_explicit(&x->resp_pub, memory_order_relaxed);
	size_t len = 0;
	int n = 0;

	cmd_name_of(atomic_load_explicit(&x->last_cmd, memory_order_relaxed),
		    atomic_load_explicit(&x->last_sub, memory_order_relaxed), cmdname,
		    sizeof(cmdname));
	for (int pass = 0; pass < 2; pass++) {
		n = snprintf(buf, len, fmt, (unsigned long long)x->id, x->addr, x->laddr, x->fd,
			     x->name ? x->name : "", (now - x->ctime_ms) / 1000, idle, qb,
			     qb < PROTO_IOBUF_LEN ? PROTO_IOBUF_LEN - qb : 0,
			     (size_t)PROTO_IOBUF_LEN, ob, qb + ob + sizeof(*x), cmdname, resp);
		if (pass == 0) {
			len = (size_t)n + 2;
			buf = xmalloc(len);
		}
	}
	buf[n] = '\n';
	buf[n + 1] = '\0';
	*lenp = (size_t)n + 1;
	return buf;
}

static void client_list(struct conn *c, int argc)
{
	long long now = util_mstime();
	size_t cap = 4096, len = 0;
	char *out = xmalloc(cap);
	unsigned long long *ids = NULL;
	int nids = 0, type_ok = 1;

	if (argc > 2) {
		if (argc == 4 && util_strcaseeq(ARGV(c, 2), ARGL(c, 2), "type")) {
			const char *t = ARGV(c, 3);
			size_t tl = ARGL(c, 3);

			if (util_strcaseeq(t, tl, "normal"))
				type_ok = 1;
			else if (util_strcaseeq(t, tl, "master") ||
				 util_strcaseeq(t, tl, "replica") ||
				 util_strcaseeq(t, tl, "slave") || util_strcaseeq(t, tl, "pubsub"))
				type_ok = 0;
			else {
				reply_errorf(c, "Unknown client type '%s'", t);
				free(out);
				return;
			}
		} else if (argc >= 4 && util_strcaseeq(ARGV(c, 2), ARGL(c, 2), "id")) {
			ids = xmalloc((size_t)(argc - 3) * sizeof(*ids));
			for (int j = 3; j < argc; j++) {
				long long v;

				if (!util_str2ll(ARGV(c, j), ARGL(c, j), &v) || v <= 0) {
					reply_error(c, "Invalid client ID");
					free(ids);
					free(out);
					return;
				}
				ids[nids++] = (unsigned long long)v;
			}
		} else {
			reply_error(c, ERR_SYNTAX);
			free(out);
			return;
		}
	}
	pthread_mutex_lock(&g_clients_lock);
	for (struct conn *x = g_clients; x && type_ok; x = x->gnext) {
		size_t n;
		char *line;

		if (ids) {
			int hit = 0;

			for (int k = 0; k < nids; k++)
				hit |= ids[k] == x->id;
			if (!hit)
				continue;
		}
		if (x == c)
			atomic_store_explicit(&c->obuf_used, c->out.len - c->out.pos,
					      memory_order_relaxed);
		line = client_line(x, now, &n);
		while (len + n + 1 > cap) {
			cap *= 2;
			out = xrealloc(out, cap);
		}
		memcpy(out + len, line, n);
		len += n;
		free(line);
	}
	pthread_mutex_unlock(&g_clients_lock);
	reply_verbatim(c, out, len);
	free(out);
	free(ids);
}

/* Mark x killed; it is closed by its own worker.  g_clients_lock held. */
static void client_kill_one(struct conn *c, struct conn *x)
{
	if (x == c) {
		c->flags |= CONN_CLOSE_AFTER_REPLY;
		return;
	}
	atomic_store_explicit(&x->kill, 1, memory_order_relaxed);
	/* Release: the kill flag above is visible to the worker that clears
	 * kill_pending (acquire exchange in on_notify()). */
	atomic_store_explicit(&x->w->kill_pending, 1, memory_order_release);
	conn_wake_worker(x->w);
}

static void client_kill(struct conn *c, int argc)
{
	const char *addr = NULL, *laddr = NULL;
	long long id = 0, maxage = -1;
	int skipme = 1, type_normal = 1, user_ok = 1, killed = 0;

	if (argc == 3) {
		/* old form: CLIENT KILL addr:port */
		addr = ARGV(c, 2);
		pthread_mutex_lock(&g_clients_lock);
		for (struct conn *x = g_clients; x; x = x->gnext) {
			if (!strcmp(x->addr, addr)) {
				client_kill_one(c, x);
				killed++;
				break;
			}
		}
		pthread_mutex_unlock(&g_clients_lock);
		if (killed)
			reply_ok(c);
		else
			reply_error(c, "No such client");
		return;
	}
	if (argc % 2 != 0) {
		reply_error(c, ERR_SYNTAX);
		return;
	}
	for (int j = 2; j < argc; j += 2) {
		const char *o = ARGV(c, j), *v = ARGV(c, j + 1);
		size_t ol = ARGL(c, j), vl = ARGL(c, j + 1);

		if (util_strcaseeq(o, ol, "id")) {
			if (!util_str2ll(v, vl, &id) || id <= 0) {
				reply_error(c, "client-id should be greater than 0");
				return;
			}
		} else if (util_strcaseeq(o, ol, "addr")) {
			addr = v;
		} else if (util_strcaseeq(o, ol, "laddr")) {
			laddr = v;
		} else if (util_strcaseeq(o, ol, "type")) {
			if (util_strcaseeq(v, vl, "normal"))
				type_normal = 1;
			else if (util_strcaseeq(v, vl, "master") ||
				 util_strcaseeq(v, vl, "replica") ||
				 util_strcaseeq(v, vl, "slave") || util_strcaseeq(v, vl, "pubsub"))
				type_normal = 0;
			else {
				reply_errorf(c, "Unknown client type '%s'", v);
				return;
			}
		} else if (util_strcaseeq(o, ol, "user")) {
			if (!util_strcaseeq(v, vl, "default") || strcmp(v, "default")) {
				reply_errorf(c, "No such user '%s'", v);
				return;
			}
		} else if (util_strcaseeq(o, ol, "skipme")) {
			if (util_strcaseeq(v, vl, "yes"))
				skipme = 1;
			else if (util_strcaseeq(v, vl, "no"))
				skipme = 0;
			else {
				reply_error(c, ERR_SYNTAX);
				return;
			}
		} else if (util_strcaseeq(o, ol, "maxage")) {
			if (!util_str2ll(v, vl, &maxage) || maxage < 0) {
				reply_error(c, ERR_SYNTAX);
				return;
			}
		} else {
			reply_error(c, ERR_SYNTAX);
			return;
		}
	}
	if (type_normal && user_ok) {
		long long now = util_mstime();

		pthread_mutex_lock(&g_clients_lock);
		for (struct conn *x = g_clients; x; x = x->gnext) {
			if (id && x->id != (unsigned long long)id)
				continue;
			if (addr && strcmp(x->addr, addr))
				continue;
			if (laddr && strcmp(x->laddr, laddr))
				continue;
			if (skipme && x == c)
				continue;
			if (maxage >= 0 && (now - x->ctime_ms) / 1000 < maxage)
				continue;
			client_kill_one(c, x);
			killed++;
		}
		pthread_mutex_unlock(&g_clients_lock);
	}
	reply_int(c, killed);
}

static const char *const client_help[] = {
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "    * ID <client-id>",
    "      Kill connections by client id.",
    "    * MAXAGE <maxage>",
    "      Kill connections older than the specified age.",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "    * ID <client-id> [<client-id> ...]",
    "      Return clients with specified IDs only.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "HELP",
    "    Print this help.",
    NULL,
};

static void reply_help(struct conn *c, const char *const *lines)
{
	long long n = 0;

	while (lines[n])
		n++;
	reply_array(c, n);
	for (long long i = 0; i < n; i++)
		reply_simple(c, lines[i]);
}

static void client_sub(struct conn *c, int argc)
{
	const char *s = ARGV(c, 1);
	size_t sl = ARGL(c, 1);

	if (util_strcaseeq(s, sl, "id")) {
		reply_int(c, (long long)c->id);
	} else if (util_strcaseeq(s, sl, "setname")) {
		if (set_name(c, ARGV(c, 2), ARGL(c, 2)) == 0)
			reply_ok(c);
	} else if (util_strcaseeq(s, sl, "getname")) {
		if (c->name)
			reply_bulk_str(c, c->name);
		else
			reply_null(c);
	} else if (util_strcaseeq(s, sl, "list")) {
		client_list(c, argc);
	} else if (util_strcaseeq(s, sl, "info")) {
		char *line;
		size_t n;

		atomic_store_explicit(&c->obuf_used, c->out.len - c->out.pos, memory_order_relaxed);
		pthread_mutex_lock(&g_clients_lock);
		line = client_line(c, util_mstime(), &n);
		pthread_mutex_unlock(&g_clients_lock);
		reply_verbatim(c, line, n);
		free(line);
	} else if (util_strcaseeq(s, sl, "kill")) {
		client_kill(c, argc);
	} else if (util_strcaseeq(s, sl, "help")) {
		reply_help(c, client_help);
	}
}

/* --------------------------------------------------------------- CONFIG */

static const char *const config_help[] = {
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "HELP",
    "    Print this help.",
    NULL,
};

static void config_sub(struct conn *c, int argc)
{
	const char *s = ARGV(c, 1);
	size_t sl = ARGL(c, 1);

	if (util_strcaseeq(s, sl, "get"))
		cfg_cmd_get(c, argc);
	else if (util_strcaseeq(s, sl, "set"))
		cfg_cmd_set(c, argc);
	else if (util_strcaseeq(s, sl, "resetstat")) {
		info_reset_stats();
		reply_ok(c);
	} else if (util_strcaseeq(s, sl, "help"))
		reply_help(c, config_help);
}

/* -------------------------------------------------------------- COMMAND */

static void command_sub(struct conn *c, int argc);
static void command_all(struct conn *c, int argc);

static const struct cmd client_subs[] = {
    {"id", client_sub, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", "5.0.0",
     "Returns the unique client ID of the connection.", NULL, 0, "@slow @connection", "client|id"},
    {"setname", client_sub, 3, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection",
     "2.6.9", "Sets the connection name.", NULL, 0, "@slow @connection", "client|setname"},
    {"getname", client_sub, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection",
     "2.6.9", "Returns the name of the connection.", NULL, 0, "@slow @connection",
     "client|getname"},
    {"list", client_sub, -2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "connection", "2.4.0", "Lists open connections.", NULL, 0,
     "@admin @slow @dangerous @connection", "client|list"},
    {"info", client_sub, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", "6.2.0",
     "Returns information about the connection.", NULL, 0, "@slow @connection", "client|info"},
    {"kill", client_sub, -3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "connection", "2.4.0", "Terminates open connections.", NULL, 0,
     "@admin @slow @dangerous @connection", "client|kill"},
    {"help", client_sub, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", "5.0.0",
     "Returns helpful text about the different subcommands.", NULL, 0, "@slow @connection",
     "client|help"},
};

static const struct cmd config_subs[] = {
    {"get", config_sub, -3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server",
     "2.0.0", "Returns the effective values of configuration parameters.", NULL, 0,
     "@admin @slow @dangerous", "config|get"},
    {"set", config_sub, -4, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server",
     "2.0.0", "Sets configuration parameters in-flight.", NULL, 0, "@admin @slow @dangerous",
     "config|set"},
    {"resetstat", config_sub, 2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "server", "2.0.0", "Resets the server's statistics.", NULL, 0, "@admin @slow @dangerous",
     "config|resetstat"},
    {"help", config_sub, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "5.0.0",
     "Returns helpful text about the different subcommands.", NULL, 0, "@slow", "config|help"},
};

static const struct cmd acl_subs[] = {
    {"whoami", acl_whoami, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "6.0.0",
     "Returns the authenticated username of the current connection.", NULL, 0,
     "@slow", "acl|whoami"},
};

static const struct cmd command_subs[] = {
    {"count", command_sub, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "2.8.13",
     "Returns a count of commands.", NULL, 0, "@slow @connection", "command|count"},
    {"info", command_sub, -2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "2.8.13",
     "Returns information about one, multiple or all commands.", NULL, 0, "@slow @connection",
     "command|info"},
    {"docs", command_sub, -2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "7.0.0",
     "Returns documentary information about one, multiple or all commands.", NULL, 0,
     "@slow @connection", "command|docs"},
    {"list", command_sub, -2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "7.0.0",
     "Returns a list of command names.", NULL, 0, "@slow @connection", "command|list"},
    {"help", command_sub, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "5.0.0",
     "Returns helpful text about the different subcommands.", NULL, 0, "@slow @connection",
     "command|help"},
};

#define NSUB(a) ((int)(sizeof(a) / sizeof(a[0])))

static const struct cmd base_cmds[] = {
    {"ping", cmd_ping, -1, CMD_FAST | CMD_STALE, 0, 0, 0, "connection", "1.0.0",
     "Returns the server's liveliness response.", NULL, 0, "@fast @connection", NULL},
    {"echo", cmd_echo, 2, CMD_FAST | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", "1.0.0",
     "Returns the given string.", NULL, 0, "@fast @connection", NULL},
    {"quit", cmd_quit, -1, CMD_LOADING | CMD_STALE | CMD_NOAUTH | CMD_FAST, 0, 0, 0, "connection",
     "1.0.0", "Closes the connection.", NULL, 0, "@fast @connection", NULL},
    {"hello", cmd_hello, -1, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_NOAUTH | CMD_FAST, 0, 0,
     0, "connection", "6.0.0", "Handshakes with the Redis server.", NULL, 0, "@fast @connection",
     NULL},
    {"auth", cmd_auth, -2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_NOAUTH | CMD_FAST, 0, 0, 0,
     "connection", "1.0.0", "Authenticates the connection.", NULL, 0, "@fast @connection", NULL},
    {"select", cmd_select, 2, CMD_LOADING | CMD_STALE | CMD_FAST, 0, 0, 0, "connection", "1.0.0",
     "Changes the selected database.", NULL, 0, "@fast @connection", NULL},
    {"time", cmd_time, 1, CMD_LOADING | CMD_STALE | CMD_FAST, 0, 0, 0, "server", "2.6.0",
     "Returns the server time.", NULL, 0, "@fast", NULL},
    {"info", cmd_info, -1, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "1.0.0",
     "Returns information and statistics about the server.", NULL, 0, "@slow @dangerous", NULL},
    {"shutdown", cmd_shutdown, -1, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "server", "1.0.0", "Synchronously saves the database(s) to disk and shuts down the server.",
     NULL, 0, "@admin @slow @dangerous", NULL},
    {"save", persist_cmd_save, 1, CMD_ADMIN | CMD_NOSCRIPT, 0, 0, 0, "server", "1.0.0",
     "Synchronously saves the database(s) to disk.", NULL, 0, "@admin @slow @dangerous", NULL},
    {"bgsave", persist_cmd_bgsave, -1, CMD_ADMIN | CMD_NOSCRIPT, 0, 0, 0, "server", "1.0.0",
     "Asynchronously saves the database(s) to disk.", NULL, 0, "@admin @slow @dangerous", NULL},
    {"lastsave", persist_cmd_lastsave, 1, CMD_LOADING | CMD_STALE | CMD_FAST, 0, 0, 0, "server",
     "1.0.0", "Returns the Unix timestamp of the last successful save to disk.", NULL, 0,
     "@admin @fast @dangerous", NULL},
    {"client", NULL, -2, CMD_SENTINEL, 0, 0, 0, "connection", "2.4.0",
     "A container for client connection commands.", client_subs, NSUB(client_subs), "@slow", NULL},
    {"config", NULL, -2, 0, 0, 0, 0, "server", "2.0.0",
     "A container for server configuration commands.", config_subs, NSUB(config_subs), "@slow",
     NULL},
    {"acl", NULL, -2, CMD_SENTINEL, 0, 0, 0, "server", "6.0.0",
     "A container for Access List Control commands.", acl_subs, NSUB(acl_subs), "@slow", NULL},
    {"command", command_all, -1, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "2.8.13",
     "Returns detailed information about all commands.", command_subs, NSUB(command_subs),
     "@slow @connection", NULL},
};

/* ------------------------------------------------------------ the table */

static const struct cmd **table; /* every top-level command */
static const char **tname;	 /* its name as clients type it (rename-command), NULL = disabled */
static int ntable;
/* table index -> its INFO commandstats slot (stats.c); the slots of its
 * subcommands follow it.  Slots are in name order, subcommands after their
 * container, which is the order INFO lists them in. */
static int *stat_slot;
#define IDX_SLOTS 1024
static int idx_slot[IDX_SLOTS]; /* index into table + 1, 0 = empty */

static unsigned name_hash(const char *s, size_t n)
{
	unsigned h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)tolower((unsigned char)s[i])) * 16777619u;
	return h;
}

static int cmd_lookup(const char *s, size_t n)
{
	unsigned h = name_hash(s, n) & (IDX_SLOTS - 1);

	while (idx_slot[h]) {
		if (util_strcaseeq(s, n, tname[idx_slot[h] - 1]))
			return idx_slot[h] - 1;
		h = (h + 1) & (IDX_SLOTS - 1);
	}
	return -1;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(table[*(const int *)a]->name, table[*(const int *)b]->name);
}

static void stat_slots_init(void)
{
	int *order = xmalloc((size_t)ntable * sizeof(*order)), n = 0;
	const char **names;

	for (int i = 0; i < ntable; i++) {
		order[i] = i;
		n += 1 + (table[i]->subs ? table[i]->nsubs : 0);
	}
	qsort(order, (size_t)ntable, sizeof(*order), by_name);
	names = xmalloc((size_t)n * sizeof(*names));
	stat_slot = xmalloc((size_t)ntable * sizeof(*stat_slot));
	n = 0;
	for (int o = 0; o < ntable; o++) {
		const struct cmd *k = table[order[o]];

		stat_slot[order[o]] = n;
		names[n++] = k->name;
		for (int j = 0; k->subs && j < k->nsubs; j++)
			names[n++] = k->subs[j].fullname;
	}
	stats_init(n, names);
	free(names);
	free(order);
}

void cmd_init(void)
{
	int nb = (int)(sizeof(base_cmds) / sizeof(base_cmds[0]));

	ntable = nb + g_nkey_cmds + g_ncache_cmds;
	table = xmalloc((size_t)ntable * sizeof(*table));
	for (int i = 0; i < nb; i++)
		table[i] = &base_cmds[i];
	for (int i = 0; i < g_nkey_cmds; i++)
		table[nb + i] = &g_key_cmds[i];
	for (int i = 0; i < g_ncache_cmds; i++)
		table[nb + g_nkey_cmds + i] = &g_cache_cmds[i];
	tname = xmalloc((size_t)ntable * sizeof(*tname));
	for (int i = 0; i < ntable; i++)
		tname[i] = table[i]->name;
	/* rename-command: applied in file order, as Redis does */
	for (int r = 0; r < g_cfg.nrename; r++) {
		const char *from = g_cfg.rename_from[r], *to = g_cfg.rename_to[r];
		int found = -1;

		for (int i = 0; i < ntable; i++)
			if (tname[i] && util_strcaseeq(from, strlen(from), tname[i]))
				found = i;
		if (found < 0) {
			fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (rcukv %s) ***\n"
					">>> 'rename-command %s %s'\nNo such command in rename-command\n",
				RCUKV_VERSION, from, to);
			exit(1);
		}
		for (int i = 0; i < ntable && to[0]; i++) {
			if (tname[i] && i != found && util_strcaseeq(to, strlen(to), tname[i])) {
				fprintf(stderr,
					"\n*** FATAL CONFIG FILE ERROR (rcukv %s) ***\n"
					">>> 'rename-command %s %s'\nTarget command name already "
					"exists\n",
					RCUKV_VERSION, from, to);
				exit(1);
			}
		}
		tname[found] = to[0] ? to : NULL;
		srv_log(LL_NOTICE, "rename-command: %s %s%s", table[found]->name,
			to[0] ? "renamed to " : "disabled", to);
	}
	memset(idx_slot, 0, sizeof(idx_slot));
	for (int i = 0; i < ntable; i++) {
		unsigned h;

		if (!tname[i])
			continue;
		h = name_hash(tname[i], strlen(tname[i])) & (IDX_SLOTS - 1);

		while (idx_slot[h])
			h = (h + 1) & (IDX_SLOTS - 1);
		idx_slot[h] = i + 1;
	}
	stat_slots_init();
}

void cmd_fini(void)
{
	free(table);
	table = NULL;
	free(tname);
	tname = NULL;
	free(stat_slot);
	stat_slot = NULL;
	stats_fini(); /* the workers are joined (net_stop()) */
}

void cmd_name_of(int idx, int sub, char *buf, size_t len)
{
	if (idx < 0 || idx >= ntable) {
		snprintf(buf, len, "NULL");
		return;
	}
	if (sub >= 0 && table[idx]->subs && sub < table[idx]->nsubs)
		snprintf(buf, len, "%s|%s", table[idx]->name, table[idx]->subs[sub].name);
	else
		snprintf(buf, len, "%s", table[idx]->name);
}

static void upper(char *d, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = (char)toupper((unsigned char)s[i]);
	d[n] = '\0';
}

static void unknown_command(struct conn *c, int argc)
{
	char args[300];
	size_t n = 0;

	args[0] = '\0';
	for (int i = 1; i < argc && n < 128; i++) {
		int room = 128 - (int)n;
		int w = snprintf(args + n, sizeof(args) - n, "'%.*s' ",
				 (int)(ARGL(c, i) < (size_t)room ? ARGL(c, i) : (size_t)room),
				 ARGV(c, i));
		n += (size_t)w;
	}
	reply_errorf(c, "unknown command '%.128s', with args beginning with: %s", ARGV(c, 0), args);
}

/* maxmemory: evict first, as Redis's processCommand; with nothing left to
 * evict, commands that may grow memory get -OOM (return 1, reply queued).
 * One relaxed load when maxmemory is 0. */
static int refuse_oom(struct conn *c, int flags)
{
	if (!atomic_load_explicit(&g_cfg.maxmemory, memory_order_relaxed))
		return 0;
	if (evict_before_command() == 0 || !(flags & CMD_DENYOOM))
		return 0;
	reply_error(c, ERR_OOM);
	return 1;
}

/* While the dump loads: commands not flagged CMD_LOADING get -LOADING (return
 * 1, reply queued).  Redis checks it after -OOM and MISCONF, but neither can
 * fire while loading (no eviction then, and no save has run to fail), so it
 * is checked first here and spares the eviction check.  One acquire load
 * otherwise. */
static int refuse_loading_or_oom(struct conn *c, int flags)
{
	if (SRV_UNLIKELY(persist_loading())) {
		if (flags & CMD_LOADING)
			return 0;
		reply_err_code(c, ERR_LOADING);
		return 1;
	}
	return refuse_oom(c, flags);
}

/* Run a command that passed every check: it counts as processed and as a
 * call of @slot, timed around proc only (as Redis times call()), failed if it
 * replied an error.  A rejected command never gets here. */
static inline void cmd_run(struct conn *c, const struct cmd *k, int slot, int argc)
{
	struct worker *w = c->w;
	unsigned long long errs = STAT_GET(w->st.errors), t0;

	STAT_ADD(w->st.commands, 1);
	t0 = stats_clock();
	k->proc(c, argc);
	stats_cmd_done(w, slot, stats_clock() - t0, STAT_GET(w->st.errors) != errs);
}

/*
 * Run one parsed command.  What INFO commandstats counts, as Redis 7.0:
 * an unknown command or subcommand counts nowhere (but in errorstats); a
 * known one refused before running (arity, NOAUTH, LOADING, OOM, MISCONF) is a
 * rejected call of that command or subcommand; one that runs is a call
 * (and total_commands_processed), failed if it replied an error.
 */
void cmd_dispatch(struct conn *c)
{
	int argc = c->argc, idx, sub = -1, slot;
	const struct cmd *k;

	idx = cmd_lookup(ARGV(c, 0), ARGL(c, 0));
	if (SRV_UNLIKELY(idx < 0)) {
		unknown_command(c, argc);
		return;
	}
	k = table[idx];
	slot = stat_slot[idx];
	if (SRV_UNLIKELY(k->subs != NULL)) {
		atomic_store_explicit(&c->last_cmd, idx, memory_order_relaxed);
		atomic_store_explicit(&c->last_sub, -1, memory_order_relaxed);
	} else if (atomic_load_explicit(&c->last_cmd, memory_order_relaxed) != idx ||
		   atomic_load_explicit(&c->last_sub, memory_order_relaxed) != -1) {
		atomic_store_explicit(&c->last_cmd, idx, memory_order_relaxed);
		atomic_store_explicit(&c->last_sub, -1, memory_order_relaxed);
	}
	if (SRV_UNLIKELY((k->arity > 0 && argc != k->arity) || argc < -k->arity)) {
		reply_errorf(c, "wrong number of arguments for '%s' command", k->name);
		goto rejected;
	}
	if (k->subs && argc >= 2) {
		for (int i = 0; i < k->nsubs; i++) {
			if (util_strcaseeq(ARGV(c, 1), ARGL(c, 1), k->subs[i].name)) {
				sub = i;
				break;
			}
		}
		if (sub < 0) {
			char up[32];

			upper(up, k->name, strlen(k->name));
			reply_errorf(c, "unknown subcommand '%.128s'. Try %s HELP.", ARGV(c, 1),
				     up);
			return;
		} else {
			const struct cmd *s = &k->subs[sub];

			atomic_store_explicit(&c->last_cmd, idx, memory_order_relaxed);
			atomic_store_explicit(&c->last_sub, sub, memory_order_relaxed);
			slot += 1 + sub;
			if ((s->arity > 0 && argc != s->arity) || argc < -s->arity) {
				reply_errorf(c, "wrong number of arguments for '%s' command",
					     s->fullname);
				goto rejected;
			}
			if (SRV_UNLIKELY(!c->authenticated) && !(s->flags & CMD_NOAUTH) &&
			    cfg_password_required()) {
				reply_error(c, "-NOAUTH Authentication required.");
				goto rejected;
			}
			if (SRV_UNLIKELY(refuse_loading_or_oom(c, s->flags)))
				goto rejected;
			cmd_run(c, s, slot, argc);
			return;
		}
	}
	if (SRV_UNLIKELY(!c->authenticated) && !(k->flags & CMD_NOAUTH) &&
	    cfg_password_required()) {
		reply_error(c, "-NOAUTH Authentication required.");
		goto rejected;
	}
	if (SRV_UNLIKELY(refuse_loading_or_oom(c, k->flags)))
		goto rejected;
	/* stop-writes-on-bgsave-error: as Redis, PING is refused too */
	if (SRV_UNLIKELY((k->flags & CMD_WRITE) || k->proc == cmd_ping) &&
	    persist_writes_denied()) {
		reply_err_code(c, ERR_MISCONF);
		goto rejected;
	}
	cmd_run(c, k, slot, argc);
	return;
rejected:
	stats_cmd_rejected(c->w, slot);
}

/* COMMAND INFO entry: name arity flags first last step acl tips keyspecs subs */
static const char *const flag_names[] = {"write",    "readonly", "fast",  "admin",
					 "noscript", "loading",	 "stale", "no_auth",
					 "sentinel", "denyoom",	 "pubsub"};

static void command_info_one(struct conn *c, const struct cmd *k, const char *name)
{
	int nflags = 0, nacl = 0;
	const char *p;

	reply_array(c, 10);
	reply_bulk_str(c, name);
	reply_int(c, k->arity);
	for (int i = 0; i < 11; i++)
		nflags += !!(k->flags & (1 << i));
	reply_set(c, nflags);
	for (int i = 0; i < 11; i++)
		if (k->flags & (1 << i))
			reply_simple(c, flag_names[i]);
	reply_int(c, k->first_key);
	reply_int(c, k->last_key);
	reply_int(c, k->key_step);
	for (p = k->acl; p && *p; p++)
		if (*p == '@')
			nacl++;
	reply_set(c, nacl);
	for (p = k->acl; p && *p;) {
		const char *e = strchr(p, ' ');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char tmp[64];

		snprintf(tmp, sizeof(tmp), "%.*s", (int)n, p);
		reply_simple(c, tmp);
		p += n;
		while (*p == ' ')
			p++;
	}
	reply_array(c, 0); /* tips */
	reply_array(c, 0); /* key specs */
	reply_array(c, k->subs ? k->nsubs : 0);
	for (int i = 0; k->subs && i < k->nsubs; i++)
		command_info_one(c, &k->subs[i], k->subs[i].fullname);
}

static void command_all(struct conn *c, int argc)
{
	(void)argc;
	reply_array(c, ntable);
	for (int i = 0; i < ntable; i++)
		command_info_one(c, table[i], table[i]->name);
}

static const char *const command_help[] = {
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all commands.",
    "COUNT",
    "    Return the total number of commands in this server.",
    "LIST",
    "    Return a list of all commands in this server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "HELP",
    "    Print this help.",
    NULL,
};

static const struct cmd *find_full(const char *s, size_t n)
{
	const char *bar = memchr(s, '|', n);
	int idx;

	if (!bar) {
		idx = cmd_lookup(s, n);
		return idx < 0 ? NULL : table[idx];
	}
	idx = cmd_lookup(s, (size_t)(bar - s));
	if (idx < 0 || !table[idx]->subs)
		return NULL;
	for (int i = 0; i < table[idx]->nsubs; i++)
		if (util_strcaseeq(bar + 1, n - (size_t)(bar - s) - 1, table[idx]->subs[i].name))
			return &table[idx]->subs[i];
	return NULL;
}

/* ------------------------------------------------------ COMMAND DOCS */

/*
 * The "arguments" of COMMAND DOCS, from which redis-cli builds its
 * command-line hints and "help <command>" text.  Each command's syntax is
 * written once below in a compact notation of our own and turned into the
 * argument maps COMMAND DOCS returns:
 *   name[:type]      an argument (type key, string, integer, double, pattern,
 *                    unix-time; "key" defaults to key, others to string)
 *   TOKEN            a pure token (all capitals)
 *   TOKEN name:type  a token followed by its value (one argument)
 *   [ ... ]          optional: several items make a block, '|' a choice
 *   { ... }          required group: a block, or a choice with '|'
 *   item...          the item may repeat
 * Read-only tables, parsed on each request (COMMAND DOCS is rare).
 */
struct docspec {
	const char *cmd;
	const char *args;
};

static const struct docspec specs[] = {
    {"ping", "[message]"},
    {"echo", "message"},
    {"hello", "[protover:integer [AUTH username password] [SETNAME clientname]]"},
    {"auth", "[username] password"},
    {"acl|whoami", ""},
    {"select", "index:integer"},
    {"info", "[section...]"},
    {"shutdown", "[NOSAVE|SAVE] [NOW] [FORCE] [ABORT]"},
    {"bgsave", "[SCHEDULE]"},
    {"client|setname", "connection-name"},
    {"client|kill", "{ip:port|[ID client-id:integer] [TYPE type] [USER username] [ADDR ip:port] "
		    "[LADDR ip:port] [SKIPME yes/no] [MAXAGE maxage:integer]}"},
    {"client|list", "[TYPE type] [ID client-id:integer...]"},
    {"config|get", "parameter..."},
    {"config|set", "{parameter value}..."},
    {"command|info", "[command-name...]"},
    {"command|docs", "[command-name...]"},
    {"get", "key"},
    {"set", "key value [NX|XX] [GET] [EX seconds:integer|PX milliseconds:integer|"
	    "EXAT unix-time-seconds:unix-time|PXAT unix-time-milliseconds:unix-time|KEEPTTL]"},
    {"setnx", "key value"},
    {"setex", "key seconds:integer value"},
    {"psetex", "key milliseconds:integer value"},
    {"getset", "key value"},
    {"getdel", "key"},
    {"getex", "key [EX seconds:integer|PX milliseconds:integer|EXAT unix-time-seconds:unix-time|"
	      "PXAT unix-time-milliseconds:unix-time|PERSIST]"},
    {"mget", "key..."},
    {"mset", "{key value}..."},
    {"msetnx", "{key value}..."},
    {"del", "key..."},
    {"unlink", "key..."},
    {"exists", "key..."},
    {"incr", "key"},
    {"decr", "key"},
    {"incrby", "key increment:integer"},
    {"decrby", "key decrement:integer"},
    {"incrbyfloat", "key increment:double"},
    {"append", "key value"},
    {"strlen", "key"},
    {"getrange", "key start:integer end:integer"},
    {"setrange", "key offset:integer value"},
    {"expire", "key seconds:integer [NX|XX|GT|LT]"},
    {"pexpire", "key milliseconds:integer [NX|XX|GT|LT]"},
    {"expireat", "key unix-time-seconds:unix-time [NX|XX|GT|LT]"},
    {"pexpireat", "key unix-time-milliseconds:unix-time [NX|XX|GT|LT]"},
    {"ttl", "key"},
    {"pttl", "key"},
    {"expiretime", "key"},
    {"pexpiretime", "key"},
    {"persist", "key"},
    {"type", "key"},
    {"rename", "key newkey:key"},
    {"renamenx", "key newkey:key"},
    {"copy", "source:key destination:key [DB destination-db:integer] [REPLACE]"},
    {"keys", "pattern:pattern"},
    {"scan", "cursor:integer [MATCH pattern:pattern] [COUNT count:integer] [TYPE type]"},
    {"flushdb", "[ASYNC|SYNC]"},
    {"flushall", "[ASYNC|SYNC]"},
};

#define MAXNODES 64

struct node {
	const char *name, *type, *token;
	size_t namelen, tokenlen, typelen;
	int optional, multiple;
	int kind; /* 0 plain, 1 pure-token, 2 block, 3 oneof */
	int child[16];
	int nchild;
};

struct parser {
	const char *p;
	struct node n[MAXNODES];
	int nn;
};

static int is_upper_word(const char *p, size_t n)
{
	int letters = 0;

	for (size_t i = 0; i < n; i++) {
		if (islower((unsigned char)p[i]))
			return 0;
		letters += isupper((unsigned char)p[i]) != 0;
	}
	return letters > 0;
}

static int new_node(struct parser *ps)
{
	if (ps->nn == MAXNODES)
		srv_die("command docs spec too large");
	memset(&ps->n[ps->nn], 0, sizeof(ps->n[0]));
	return ps->nn++;
}

static void skip_ws(struct parser *ps)
{
	while (*ps->p == ' ')
		ps->p++;
}

static int word_len(const char *p)
{
	int n = 0;

	while (p[n] && p[n] != ' ' && p[n] != '|' && p[n] != ']' && p[n] != '}' && p[n] != '[' &&
	       p[n] != '{' && strncmp(p + n, "...", 3))
		n++;
	return n;
}

static int parse_seq(struct parser *ps, char close);

/* One item: a group, a token (maybe with its value) or an argument. */
static int parse_item(struct parser *ps)
{
	int id;

	skip_ws(ps);
	if (*ps->p == '[' || *ps->p == '{') {
		char close = *ps->p == '[' ? ']' : '}';
		int opt = *ps->p == '[';

		ps->p++;
		id = parse_seq(ps, close);
		if (*ps->p == close)
			ps->p++;
		ps->n[id].optional |= opt;
	} else {
		int n = word_len(ps->p);

		id = new_node(ps);
		if (is_upper_word(ps->p, (size_t)n)) {
			const char *tok = ps->p;
			const char *q = ps->p + n;

			ps->n[id].token = tok;
			ps->n[id].tokenlen = (size_t)n;
			ps->p = q;
			/* TOKEN value: a lower-case word right after, same alternative */
			if (q[0] == ' ' && islower((unsigned char)q[1])) {
				ps->p = q + 1;
				n = word_len(ps->p);
			} else {
				ps->n[id].kind = 1;
				ps->n[id].name = tok;
				ps->n[id].namelen = (size_t)n;
				goto suffix;
			}
		}
		{
			const char *w = ps->p, *colon = memchr(w, ':', (size_t)n);

			/* "ip:port" keeps its colon: only known types follow one */
			if (colon &&
			    (strncmp(colon + 1, "integer", 7) && strncmp(colon + 1, "key", 3) &&
			     strncmp(colon + 1, "double", 6) && strncmp(colon + 1, "pattern", 7) &&
			     strncmp(colon + 1, "unix-time", 9) && strncmp(colon + 1, "string", 6)))
				colon = NULL;
			ps->n[id].name = w;
			ps->n[id].namelen = colon ? (size_t)(colon - w) : (size_t)n;
			if (colon) {
				ps->n[id].type = colon + 1;
				ps->n[id].typelen = (size_t)(w + n - colon - 1);
			} else if (ps->n[id].namelen == 3 && !memcmp(w, "key", 3)) {
				ps->n[id].type = "key";
				ps->n[id].typelen = 3;
			} else {
				ps->n[id].type = "string";
				ps->n[id].typelen = 6;
			}
			ps->p = w + n;
		}
	}
suffix:
	if (!strncmp(ps->p, "...", 3)) {
		ps->n[id].multiple = 1;
		ps->p += 3;
	}
	return id;
}

/* Items up to `close` (or the end): one item stays itself, several make a
 * block, alternatives separated by '|' make a oneof. */
static int parse_seq(struct parser *ps, char close)
{
	int alts[16], nalt = 0;

	for (;;) {
		int items[16], nitems = 0;

		for (;;) {
			skip_ws(ps);
			if (!*ps->p || *ps->p == close || *ps->p == '|')
				break;
			if (nitems < 16)
				items[nitems++] = parse_item(ps);
		}
		if (nitems == 1) {
			alts[nalt] = items[0];
		} else {
			int b = new_node(ps);

			ps->n[b].kind = 2;
			ps->n[b].name = "block";
			ps->n[b].namelen = 5;
			memcpy(ps->n[b].child, items, (size_t)nitems * sizeof(int));
			ps->n[b].nchild = nitems;
			alts[nalt] = b;
		}
		if (nalt < 15)
			nalt++;
		if (*ps->p != '|')
			break;
		ps->p++;
	}
	if (nalt == 1)
		return alts[0];
	{
		int o = new_node(ps);

		ps->n[o].kind = 3;
		ps->n[o].name = "choice";
		ps->n[o].namelen = 6;
		memcpy(ps->n[o].child, alts, (size_t)nalt * sizeof(int));
		ps->n[o].nchild = nalt;
		return o;
	}
}

static void emit(struct conn *c, struct parser *ps, int id)
{
	const struct node *n = &ps->n[id];
	int nflags = n->optional + n->multiple;
	int fields = 2 + (n->token && n->kind != 2 && n->kind != 3) + (nflags > 0) + (n->kind >= 2);
	static const char *const kinds[] = {NULL, "pure-token", "block", "oneof"};

	reply_map(c, fields);
	reply_bulk_str(c, "name");
	if (n->kind == 1) {
		char low[64];
		size_t l = n->namelen < sizeof(low) ? n->namelen : sizeof(low) - 1;

		for (size_t i = 0; i < l; i++)
			low[i] = (char)tolower((unsigned char)n->name[i]);
		reply_bulk(c, low, l);
	} else {
		reply_bulk(c, n->name, n->namelen);
	}
	reply_bulk_str(c, "type");
	if (n->kind)
		reply_bulk_str(c, kinds[n->kind]);
	else
		reply_bulk(c, n->type, n->typelen);
	if (n->token && n->kind != 2 && n->kind != 3) {
		reply_bulk_str(c, "token");
		reply_bulk(c, n->token, n->tokenlen);
	}
	if (nflags) {
		reply_bulk_str(c, "flags");
		reply_set(c, nflags);
		if (n->optional)
			reply_simple(c, "optional");
		if (n->multiple)
			reply_simple(c, "multiple");
	}
	if (n->kind >= 2) {
		reply_bulk_str(c, "arguments");
		reply_array(c, n->nchild);
		for (int i = 0; i < n->nchild; i++)
			emit(c, ps, n->child[i]);
	}
}

static const char *spec_of(const char *fullname)
{
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		if (!strcmp(specs[i].cmd, fullname))
			return specs[i].args;
	return NULL;
}

static int cmd_docs_has_args(const char *fullname)
{
	return spec_of(fullname) != NULL;
}

static void cmd_docs_reply_args(struct conn *c, const char *fullname)
{
	const char *spec = spec_of(fullname);
	struct parser ps;
	int top[16], ntop = 0;

	memset(&ps, 0, sizeof(ps));
	ps.p = spec ? spec : "";
	for (;;) {
		skip_ws(&ps);
		if (!*ps.p)
			break;
		if (ntop < 16)
			top[ntop++] = parse_item(&ps);
		if (*ps.p == '|' || *ps.p == ']' || *ps.p == '}')
			ps.p++; /* stray separators in a spec: skip */
	}
	reply_array(c, ntop);
	for (int i = 0; i < ntop; i++)
		emit(c, &ps, top[i]);
}

static void command_docs_one(struct conn *c, const struct cmd *k)
{
	const char *full = k->fullname ? k->fullname : k->name;
	int has_args = cmd_docs_has_args(full);

	reply_map(c, 4 + (k->subs != NULL) + has_args);
	reply_bulk_str(c, "summary");
	reply_bulk_str(c, k->summary ? k->summary : "");
	reply_bulk_str(c, "since");
	reply_bulk_str(c, k->since ? k->since : "1.0.0");
	reply_bulk_str(c, "group");
	reply_bulk_str(c, k->group ? k->group : "generic");
	reply_bulk_str(c, "complexity");
	reply_bulk_str(c, "O(1)");
	if (has_args) {
		reply_bulk_str(c, "arguments");
		cmd_docs_reply_args(c, full);
	}
	if (k->subs) {
		reply_bulk_str(c, "subcommands");
		reply_map(c, k->nsubs);
		for (int i = 0; i < k->nsubs; i++) {
			reply_bulk_str(c, k->subs[i].fullname);
			command_docs_one(c, &k->subs[i]);
		}
	}
}

static void command_sub(struct conn *c, int argc)
{
	const char *s = ARGV(c, 1);
	size_t sl = ARGL(c, 1);

	if (util_strcaseeq(s, sl, "count")) {
		reply_int(c, ntable);
	} else if (util_strcaseeq(s, sl, "info")) {
		if (argc == 2) {
			command_all(c, argc);
			return;
		}
		reply_array(c, argc - 2);
		for (int j = 2; j < argc; j++) {
			const struct cmd *k = find_full(ARGV(c, j), ARGL(c, j));

			if (!k)
				reply_null(c);
			else
				command_info_one(c, k, k->fullname ? k->fullname : k->name);
		}
	} else if (util_strcaseeq(s, sl, "docs")) {
		if (argc == 2) {
			reply_map(c, ntable);
			for (int i = 0; i < ntable; i++) {
				reply_bulk_str(c, table[i]->name);
				command_docs_one(c, table[i]);
			}
			return;
		}
		int found = 0;

		for (int j = 2; j < argc; j++)
			found += find_full(ARGV(c, j), ARGL(c, j)) != NULL;
		reply_map(c, found);
		for (int j = 2; j < argc; j++) {
			const struct cmd *k = find_full(ARGV(c, j), ARGL(c, j));

			if (!k)
				continue;
			reply_bulk_str(c, k->fullname ? k->fullname : k->name);
			command_docs_one(c, k);
		}
	} else if (util_strcaseeq(s, sl, "list")) {
		if (argc > 2) {
			reply_error(c, ERR_SYNTAX);
			return;
		}
		reply_array(c, ntable);
		for (int i = 0; i < ntable; i++)
			reply_bulk_str(c, table[i]->name);
	} else if (util_strcaseeq(s, sl, "help")) {
		reply_help(c, command_help);
	}
}
