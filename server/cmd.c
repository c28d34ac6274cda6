/*
 * cmd.c - the command table, dispatch, and the commands that touch no key:
 * PING ECHO QUIT HELLO AUTH SELECT TIME COMMAND CLIENT CONFIG SHUTDOWN.
 *
 * The table is built at start-up (cmd_init) from the rows of
 * server/commands.def, checked first by cmd_rows_check(), into a hash index
 * by lower-case name, and published through an RCU-protected pointer (see
 * cmd.h).  Client-visible errors use Redis 7.0's exact text.
 *
 * Tested by tests/server/test_server.c (cases in tests/server/cases.txt) and
 * tests/server/test_cmdrows.c (the self-check).
 */
#define RCU_FLAVOR_QSBR
#include "rcu/rcu.h"
#include "server/cmd.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/evict.h"
#include "server/info.h"
#include "server/log.h"
#include "server/net.h"
#include "server/persist.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/stats.h"
#include "server/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

/* ------------------------------------------------------------ commands */

void cmd_ping(struct conn *c, int argc)
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

void cmd_echo(struct conn *c, int argc)
{
	(void)argc;
	reply_bulk(c, ARGV(c, 1), ARGL(c, 1));
}

void cmd_quit(struct conn *c, int argc)
{
	(void)argc;
	reply_ok(c);
	c->flags |= CONN_CLOSE_AFTER_REPLY;
}

void cmd_select(struct conn *c, int argc)
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

void cmd_time(struct conn *c, int argc)
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

void cmd_auth(struct conn *c, int argc)
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

void acl_whoami(struct conn *c, int argc)
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

void cmd_hello(struct conn *c, int argc)
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
		reply_error(c,
			    "-NOAUTH HELLO must be called with the client already authenticated, "
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

void cmd_shutdown(struct conn *c, int argc)
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

void reply_help(struct conn *c, const char *const *lines)
{
	long long n = 0;

	while (lines[n])
		n++;
	reply_array(c, n);
	for (long long i = 0; i < n; i++)
		reply_simple(c, lines[i]);
}

void client_sub(struct conn *c, int argc)
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

void config_sub(struct conn *c, int argc)
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

#define STR_(x) #x
#define STR(x) STR_(x)
#define CMD_NAME_MAX 31 /* "unknown subcommand" upper-cases it in 32 bytes */
#define CMD_ARITY_MAX 1024

/* ------------------------------------------------------------ the rows */

/* clang-format off */
#define ROW(kd, pa, nm, pr, ar, fl, ac, fk, lk, ks, gr, si, su, ag)                              \
	{.kind = kd, .parent = pa, .name = nm, .proc = pr, .arity = ar, .flags = fl, .acl = ac,  \
	 .first_key = fk, .last_key = lk, .key_step = ks, .group = gr, .since = si,               \
	 .summary = su, .args = ag},
#define CMD(nm, pr, ar, fl, ac, fk, lk, ks, gr, si, su, ag)                                      \
	ROW(CMD_ROW_CMD, NULL, nm, pr, ar, fl, ac, fk, lk, ks, gr, si, su, ag)
#define CONTAINER(nm, pr, ar, fl, ac, gr, si, su)                                                \
	ROW(CMD_ROW_CONTAINER, NULL, nm, pr, ar, fl, ac, 0, 0, 0, gr, si, su, NULL)
#define SUB(pa, nm, pr, ar, fl, ac, fk, lk, ks, gr, si, su, ag)                                  \
	ROW(CMD_ROW_SUB, pa, nm, pr, ar, fl, ac, fk, lk, ks, gr, si, su, ag)
/* clang-format on */
const struct cmd cmd_rows[] = {
#include "server/commands.def"
};
#undef ROW
#undef CMD
#undef CONTAINER
#undef SUB
const int cmd_nrows = (int)(sizeof(cmd_rows) / sizeof(cmd_rows[0]));

/* The categories Redis 7.0 adds from a command's flags
 * (setImplicitACLCategories); a row lists only the others. */
static uint32_t acl_implied(uint32_t flags, uint32_t acl)
{
	if (flags & CMD_WRITE)
		acl |= ACL_WRITE;
	if ((flags & CMD_READONLY) && !(acl & ACL_SCRIPTING))
		acl |= ACL_READ;
	if (flags & CMD_ADMIN)
		acl |= ACL_ADMIN | ACL_DANGEROUS;
	if (flags & CMD_PUBSUB)
		acl |= ACL_PUBSUB;
	if (flags & CMD_FAST)
		acl |= ACL_FAST;
	if (!(acl & ACL_FAST))
		acl |= ACL_SLOW;
	return acl;
}

static int valid_name(const char *s)
{
	if (!s || !*s || strlen(s) > CMD_NAME_MAX)
		return 0;
	for (; *s; s++)
		if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '-' ||
		      *s == '_'))
			return 0;
	return 1;
}

static int valid_version(const char *s)
{
	int dots = 0, digits = 0;

	for (; s && *s; s++) {
		if (*s == '.') {
			if (!digits)
				return 0;
			dots++;
			digits = 0;
		} else if (isdigit((unsigned char)*s)) {
			digits++;
		} else {
			return 0;
		}
	}
	return dots == 2 && digits;
}

static const char *const groups[] = {
    "generic", "string",       "list",	     "set",    "sorted-set", "hash",
    "pubsub",  "transactions", "connection", "server", "scripting",  "hyperloglog",
    "cluster", "sentinel",     "geo",	     "stream", "bitmap",     "module"};

static int valid_group(const char *g)
{
	for (size_t i = 0; g && i < sizeof(groups) / sizeof(groups[0]); i++)
		if (!strcmp(g, groups[i]))
			return 1;
	return 0;
}

/* One row's own fields (not its place among the others). */
static const char *row_check(const struct cmd *r)
{
	const char *why;

	if (!valid_name(r->name))
		return "name: lower-case letters, digits, '-' or '_', at most " STR(CMD_NAME_MAX);
	if (r->kind != CMD_ROW_CONTAINER && !r->proc)
		return "no handler";
	if (r->arity == 0 || r->arity > CMD_ARITY_MAX || r->arity < -CMD_ARITY_MAX)
		return "arity 0 or out of range (N: exactly N arguments, -N: at least N)";
	if (r->kind == CMD_ROW_CONTAINER && r->arity != -2 && !(r->proc && r->arity == -1))
		return "a container's arity is -2 (-1 if the bare command has a handler)";
	if (r->kind == CMD_ROW_SUB && r->arity > 0 && r->arity < 2)
		return "a subcommand's arity counts the container and itself (at least 2)";
	if (r->flags & ~((1u << CMD_NFLAGS) - 1))
		return "unknown CMD_ flag";
	if ((r->flags & CMD_WRITE) && (r->flags & CMD_READONLY))
		return "both CMD_WRITE and CMD_READONLY";
	if ((r->flags & CMD_DENYOOM) && !(r->flags & CMD_WRITE))
		return "CMD_DENYOOM without CMD_WRITE";
	if (r->acl & ~((1u << ACL_NCATEGORIES) - 1))
		return "unknown ACL_ category";
	if (r->acl & (ACL_WRITE | ACL_READ | ACL_PUBSUB | ACL_FAST | ACL_SLOW))
		return "acl lists a category the flags imply (ACL_WRITE, ACL_READ, ACL_PUBSUB, "
		       "ACL_FAST, ACL_SLOW come from CMD_ flags)";
	if ((r->flags & CMD_ADMIN) && (r->acl & (ACL_ADMIN | ACL_DANGEROUS)))
		return "acl lists ACL_ADMIN or ACL_DANGEROUS, which CMD_ADMIN implies";
	if (r->first_key < 0 || r->key_step < 0 || (r->first_key == 0) != (r->key_step == 0) ||
	    (r->first_key == 0 && r->last_key != 0) ||
	    (r->first_key > 0 && r->last_key > 0 && r->last_key < r->first_key) || r->last_key < -1)
		return "key positions: first >= 1 with step >= 1 and last >= first or -1, or "
		       "all 0";
	if (r->arity > 0 && r->last_key >= r->arity)
		return "last key beyond the arity";
	if (!valid_group(r->group))
		return "group is not one of Redis's command groups";
	if (!valid_version(r->since))
		return "since is not a version X.Y.Z";
	if (!r->summary || !*r->summary || r->summary[strlen(r->summary) - 1] != '.')
		return "summary: one sentence ending with '.'";
	if (r->kind == CMD_ROW_CONTAINER && r->args)
		return "a container has no arguments (its subcommands do)";
	if (r->args && (why = cmd_docs_check(r->args)) != NULL)
		return why;
	return NULL;
}

const char *cmd_rows_check(const struct cmd *rows, int n, char *buf, size_t len)
{
	const struct cmd *container = NULL;
	const char *why = NULL;
	int bad = -1;

	for (int i = 0; i < n && !why; i++) {
		const struct cmd *r = &rows[i];

		bad = i;
		why = row_check(r);
		if (why)
			break;
		if (r->kind == CMD_ROW_SUB) {
			if (!container || !r->parent || strcmp(r->parent, container->name))
				why = "a SUB row must follow its CONTAINER (or a sibling SUB)";
			for (int j = i - 1; !why && rows[j].kind == CMD_ROW_SUB; j--)
				if (!strcmp(rows[j].name, r->name))
					why = "subcommand defined twice";
			continue;
		}
		if (i > 0 && rows[i - 1].kind == CMD_ROW_CONTAINER) {
			bad = i - 1;
			why = "a CONTAINER without SUB rows";
			break;
		}
		if (r->parent)
			why = "only SUB rows name a container";
		container = r->kind == CMD_ROW_CONTAINER ? r : NULL;
		for (int j = 0; !why && j < i; j++)
			if (rows[j].kind != CMD_ROW_SUB && !strcmp(rows[j].name, r->name))
				why = "command defined twice";
	}
	if (!why && n > 0 && rows[n - 1].kind == CMD_ROW_CONTAINER) {
		bad = n - 1;
		why = "a CONTAINER without SUB rows";
	}
	if (!why)
		return NULL;
	if (rows[bad].kind == CMD_ROW_SUB)
		snprintf(buf, len, "commands.def row \"%s|%s\": %s",
			 rows[bad].parent ? rows[bad].parent : "?",
			 rows[bad].name ? rows[bad].name : "?", why);
	else
		snprintf(buf, len, "commands.def row \"%s\": %s",
			 rows[bad].name ? rows[bad].name : "?", why);
	return buf;
}

/* ------------------------------------------------------------ the table */

/*
 * What workers read: built from the rows by cmd_init() and never written
 * after it is published (rcu_assign_pointer); a replacement is published the
 * same way and the old table freed by call_rcu, after every worker that
 * could hold it has passed a quiescent state.
 */
#define IDX_SLOTS 1024
struct cmd_table {
	int ntop;		 /* top-level commands */
	struct cmd *all;	 /* copies of every row, derived fields filled in */
	const struct cmd **top;	 /* the ntop top-level commands, in row order */
	const char **tname;	 /* the name clients type (rename-command); NULL: disabled */
	int *stat_slot;		 /* top index -> INFO commandstats slot; subs follow */
	int idx_slot[IDX_SLOTS]; /* name hash -> top index + 1, 0 = empty */
	char *fullnames;	 /* storage of the subcommands' "container|sub" */
	struct rcu_head rh;
};

static struct cmd_table *g_cmds;

static struct cmd_table *table_get(void)
{
	return rcu_dereference(g_cmds);
}

static unsigned name_hash(const char *s, size_t n)
{
	unsigned h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)tolower((unsigned char)s[i])) * 16777619u;
	return h;
}

static int cmd_lookup(const struct cmd_table *t, const char *s, size_t n)
{
	unsigned h = name_hash(s, n) & (IDX_SLOTS - 1);

	while (t->idx_slot[h]) {
		if (util_strcaseeq(s, n, t->tname[t->idx_slot[h] - 1]))
			return t->idx_slot[h] - 1;
		h = (h + 1) & (IDX_SLOTS - 1);
	}
	return -1;
}

static void table_free(struct cmd_table *t)
{
	if (!t)
		return;
	free(t->all);
	free(t->top);
	free(t->tname);
	free(t->stat_slot);
	free(t->fullnames);
	free(t);
}

static void table_free_rcu(struct rcu_head *rh)
{
	table_free(container_of(rh, struct cmd_table, rh));
}

/* Copy checked rows into a table: containers point at their subcommands,
 * subcommands get their full names, ACL categories their implied ones. */
static struct cmd_table *table_build(const struct cmd *rows, int n)
{
	struct cmd_table *t = xcalloc(1, sizeof(*t));
	struct cmd *cont = NULL;
	size_t names = 0;
	char *p;

	t->all = xmalloc((size_t)n * sizeof(*t->all));
	memcpy(t->all, rows, (size_t)n * sizeof(*t->all));
	for (int i = 0; i < n; i++)
		if (rows[i].kind == CMD_ROW_SUB)
			names += strlen(rows[i].parent) + strlen(rows[i].name) + 2;
	p = t->fullnames = xmalloc(names + 1);
	t->top = xmalloc((size_t)n * sizeof(*t->top));
	for (int i = 0; i < n; i++) {
		struct cmd *k = &t->all[i];

		if (k->kind == CMD_ROW_CONTAINER)
			cont = k; /* checked: its SUB rows follow it */
		k->acl = acl_implied(k->flags, k->acl);
		k->fullname = k->name;
		if (k->kind != CMD_ROW_SUB) {
			t->top[t->ntop++] = k;
			continue;
		}
		k->fullname = p;
		p += sprintf(p, "%s|%s", k->parent, k->name) + 1;
		if (!cont->subs)
			cont->subs = k;
		cont->nsubs++;
	}
	t->tname = xmalloc((size_t)t->ntop * sizeof(*t->tname));
	for (int i = 0; i < t->ntop; i++)
		t->tname[i] = t->top[i]->name;
	return t;
}

/* rename-command: applied in file order, as Redis does; a bad pair is fatal */
static void table_rename(struct cmd_table *t)
{
	for (int r = 0; r < g_cfg.nrename; r++) {
		const char *from = g_cfg.rename_from[r], *to = g_cfg.rename_to[r];
		int found = -1;

		for (int i = 0; i < t->ntop; i++)
			if (t->tname[i] && util_strcaseeq(from, strlen(from), t->tname[i]))
				found = i;
		if (found < 0) {
			fprintf(stderr,
				"\n*** FATAL CONFIG FILE ERROR (rcukv %s) ***\n"
				">>> 'rename-command %s %s'\nNo such command in rename-command\n",
				RCUKV_VERSION, from, to);
			exit(1);
		}
		for (int i = 0; i < t->ntop && to[0]; i++) {
			if (t->tname[i] && i != found &&
			    util_strcaseeq(to, strlen(to), t->tname[i])) {
				fprintf(stderr,
					"\n*** FATAL CONFIG FILE ERROR (rcukv %s) ***\n"
					">>> 'rename-command %s %s'\nTarget command name already "
					"exists\n",
					RCUKV_VERSION, from, to);
				exit(1);
			}
		}
		t->tname[found] = to[0] ? to : NULL;
		srv_log(LL_NOTICE, "rename-command: %s %s%s", t->top[found]->name,
			to[0] ? "renamed to " : "disabled", to);
	}
}

static void table_index(struct cmd_table *t)
{
	memset(t->idx_slot, 0, sizeof(t->idx_slot));
	for (int i = 0; i < t->ntop; i++) {
		unsigned h;

		if (!t->tname[i])
			continue;
		h = name_hash(t->tname[i], strlen(t->tname[i])) & (IDX_SLOTS - 1);
		while (t->idx_slot[h])
			h = (h + 1) & (IDX_SLOTS - 1);
		t->idx_slot[h] = i + 1;
	}
}

static const struct cmd_table *sort_table; /* for by_name: qsort has no argument */

static int by_name(const void *a, const void *b)
{
	return strcmp(sort_table->top[*(const int *)a]->name,
		      sort_table->top[*(const int *)b]->name);
}

/* INFO commandstats slots: in name order, subcommands after their container,
 * which is the order INFO lists them in. */
static void table_stat_slots(struct cmd_table *t)
{
	int *order = xmalloc((size_t)t->ntop * sizeof(*order)), n = 0;
	const char **names;

	for (int i = 0; i < t->ntop; i++) {
		order[i] = i;
		n += 1 + t->top[i]->nsubs;
	}
	sort_table = t;
	qsort(order, (size_t)t->ntop, sizeof(*order), by_name);
	names = xmalloc((size_t)n * sizeof(*names));
	t->stat_slot = xmalloc((size_t)t->ntop * sizeof(*t->stat_slot));
	n = 0;
	for (int o = 0; o < t->ntop; o++) {
		const struct cmd *k = t->top[order[o]];

		t->stat_slot[order[o]] = n;
		names[n++] = k->name;
		for (int j = 0; j < k->nsubs; j++)
			names[n++] = k->subs[j].fullname;
	}
	stats_init(n, names);
	free(names);
	free(order);
}

/* Publish @t; the table it replaces is freed after a grace period. */
static void table_publish(struct cmd_table *t)
{
	struct cmd_table *old = g_cmds;

	rcu_assign_pointer(g_cmds, t);
	if (old)
		call_rcu(&old->rh, table_free_rcu);
}

void cmd_init(void)
{
	cmd_init_rows(cmd_rows, cmd_nrows);
}

void cmd_init_rows(const struct cmd *rows, int n)
{
	char why[256];
	struct cmd_table *t;

	if (cmd_rows_check(rows, n, why, sizeof(why))) {
		fprintf(stderr, "\n*** FATAL: malformed command table (rcukv %s) ***\n%s\n",
			RCUKV_VERSION, why);
		exit(1);
	}
	t = table_build(rows, n);
	table_rename(t);
	table_index(t);
	table_stat_slots(t);
	table_publish(t);
}

void cmd_fini(void)
{
	/* the workers are joined (net_stop()): nobody reads the table */
	table_free(g_cmds);
	g_cmds = NULL;
	stats_fini();
}

void cmd_name_of(int idx, int sub, char *buf, size_t len)
{
	const struct cmd_table *t = table_get();

	if (!t || idx < 0 || idx >= t->ntop) {
		snprintf(buf, len, "NULL");
		return;
	}
	if (sub >= 0 && sub < t->top[idx]->nsubs)
		snprintf(buf, len, "%s", t->top[idx]->subs[sub].fullname);
	else
		snprintf(buf, len, "%s", t->top[idx]->name);
}

int cmd_may_write(const char *name, size_t len)
{
	const struct cmd_table *t = table_get();
	int idx = cmd_lookup(t, name, len);

	return idx < 0 || !(t->top[idx]->flags & CMD_READONLY);
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
	const struct cmd_table *t = table_get();
	int argc = c->argc, idx, sub = -1, slot;
	const struct cmd *k;

	idx = cmd_lookup(t, ARGV(c, 0), ARGL(c, 0));
	if (SRV_UNLIKELY(idx < 0)) {
		unknown_command(c, argc);
		return;
	}
	k = t->top[idx];
	slot = t->stat_slot[idx];
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

static const char *const acl_names[ACL_NCATEGORIES] = {
    "@keyspace",   "@read",	   "@write",	"@set",		"@sortedset", "@list",
    "@hash",	   "@string",	   "@bitmap",	"@hyperloglog", "@geo",	      "@stream",
    "@pubsub",	   "@admin",	   "@fast",	"@slow",	"@blocking",  "@dangerous",
    "@connection", "@transaction", "@scripting"};

static void command_info_one(struct conn *c, const struct cmd *k, const char *name)
{
	int nflags = 0, nacl;

	reply_array(c, 10);
	reply_bulk_str(c, name);
	reply_int(c, k->arity);
	for (int i = 0; i < CMD_NFLAGS; i++)
		nflags += !!(k->flags & (1u << i));
	reply_set(c, nflags);
	for (int i = 0; i < CMD_NFLAGS; i++)
		if (k->flags & (1 << i))
			reply_simple(c, flag_names[i]);
	reply_int(c, k->first_key);
	reply_int(c, k->last_key);
	reply_int(c, k->key_step);
	nacl = __builtin_popcount(k->acl);
	reply_set(c, nacl);
	for (int i = 0; i < ACL_NCATEGORIES; i++)
		if (k->acl & (1u << i))
			reply_simple(c, acl_names[i]);
	reply_array(c, 0); /* tips */
	reply_array(c, 0); /* key specs */
	reply_array(c, k->nsubs);
	for (int i = 0; i < k->nsubs; i++)
		command_info_one(c, &k->subs[i], k->subs[i].fullname);
}

void cmd_command(struct conn *c, int argc)
{
	const struct cmd_table *t = table_get();

	(void)argc;
	reply_array(c, t->ntop);
	for (int i = 0; i < t->ntop; i++)
		command_info_one(c, t->top[i], t->top[i]->name);
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

static const struct cmd *find_full(const struct cmd_table *t, const char *s, size_t n)
{
	const char *bar = memchr(s, '|', n);
	int idx;

	if (!bar) {
		idx = cmd_lookup(t, s, n);
		return idx < 0 ? NULL : t->top[idx];
	}
	idx = cmd_lookup(t, s, (size_t)(bar - s));
	if (idx < 0)
		return NULL;
	for (int i = 0; i < t->top[idx]->nsubs; i++)
		if (util_strcaseeq(bar + 1, n - (size_t)(bar - s) - 1, t->top[idx]->subs[i].name))
			return &t->top[idx]->subs[i];
	return NULL;
}

static void command_docs_one(struct conn *c, const struct cmd *k)
{
	reply_map(c, 4 + (k->subs != NULL) + (k->args != NULL));
	reply_bulk_str(c, "summary");
	reply_bulk_str(c, k->summary);
	reply_bulk_str(c, "since");
	reply_bulk_str(c, k->since);
	reply_bulk_str(c, "group");
	reply_bulk_str(c, k->group);
	reply_bulk_str(c, "complexity");
	reply_bulk_str(c, "O(1)");
	if (k->args) {
		reply_bulk_str(c, "arguments");
		cmd_docs_reply(c, k->args);
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

void cmd_command_count(struct conn *c, int argc)
{
	(void)argc;
	reply_int(c, table_get()->ntop);
}

void cmd_command_info(struct conn *c, int argc)
{
	const struct cmd_table *t = table_get();

	if (argc == 2) {
		cmd_command(c, argc);
		return;
	}
	reply_array(c, argc - 2);
	for (int j = 2; j < argc; j++) {
		const struct cmd *k = find_full(t, ARGV(c, j), ARGL(c, j));

		if (!k)
			reply_null(c);
		else
			command_info_one(c, k, k->fullname);
	}
}

void cmd_command_docs(struct conn *c, int argc)
{
	const struct cmd_table *t = table_get();
	int found = 0;

	if (argc == 2) {
		reply_map(c, t->ntop);
		for (int i = 0; i < t->ntop; i++) {
			reply_bulk_str(c, t->top[i]->name);
			command_docs_one(c, t->top[i]);
		}
		return;
	}
	for (int j = 2; j < argc; j++)
		found += find_full(t, ARGV(c, j), ARGL(c, j)) != NULL;
	reply_map(c, found);
	for (int j = 2; j < argc; j++) {
		const struct cmd *k = find_full(t, ARGV(c, j), ARGL(c, j));

		if (!k)
			continue;
		reply_bulk_str(c, k->fullname);
		command_docs_one(c, k);
	}
}

void cmd_command_list(struct conn *c, int argc)
{
	const struct cmd_table *t = table_get();

	if (argc > 2) {
		reply_error(c, ERR_SYNTAX);
		return;
	}
	reply_array(c, t->ntop);
	for (int i = 0; i < t->ntop; i++)
		reply_bulk_str(c, t->top[i]->name);
}

void cmd_command_help(struct conn *c, int argc)
{
	(void)argc;
	reply_help(c, command_help);
}
