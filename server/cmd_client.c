/*
 * cmd_client.c - CLIENT ID, SETNAME, GETNAME, LIST, INFO, KILL and HELP, over
 * the client registry (client.h: they walk g_clients under g_clients_lock).
 *
 * Tested by tests/server/test_server.c (cases in tests/server/cases.txt) and
 * tests/server/test_security.sh (CLIENT KILL, names).
 */
#include "resp/resp.h"
#include "server/client.h"
#include "server/cmd.h"
#include "server/conn.h"
#include "server/replm.h"
#include "server/reply.h"
#include "server/tracking.h"
#include "server/server.h"
#include "server/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One CLIENT LIST line for x, '\n'-terminated, in a new buffer of *lenp bytes
 * (names have no length limit: measured first, then formatted).  The caller
 * frees it.  g_clients_lock held. */
static char *client_line(struct conn *x, long long now, size_t *lenp)
{
	static const char fmt[] =
	    "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d sub=%d "
	    "psub=%d ssub=%d multi=%d qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=0 rbs=%zu "
	    "rbp=0 obl=%zu oll=0 omem=0 tot-mem=%zu events=r cmd=%s user=default redir=%lld "
	    "resp=%d";
	char cmdname[64], *buf = NULL;
	size_t qb = atomic_load_explicit(&x->qbuf_used, memory_order_relaxed);
	size_t ob = atomic_load_explicit(&x->obuf_used, memory_order_relaxed);
	long long idle = (now - atomic_load_explicit(&x->last_ms, memory_order_relaxed)) / 1000;
	int resp = atomic_load_explicit(&x->resp_pub, memory_order_relaxed);
	int multi = atomic_load_explicit(&x->multi_count, memory_order_relaxed);
	int lf = atomic_load_explicit(&x->list_flags, memory_order_relaxed);
	unsigned trk = atomic_load_explicit(&x->trk_flags, memory_order_relaxed);
	long long redir = trk ? atomic_load_explicit(&x->trk_redir, memory_order_relaxed) : -1;
	int ps[3];
	char flags[8], *f = flags;
	size_t len = 0;
	int n = 0;

	cmd_name_of(atomic_load_explicit(&x->last_cmd, memory_order_relaxed),
		    atomic_load_explicit(&x->last_sub, memory_order_relaxed), cmdname,
		    sizeof(cmdname));
	for (int k = 0; k < 3; k++)
		ps[k] = atomic_load_explicit(&x->ps_count[k], memory_order_relaxed);
	/* Redis's letters, in its order: O monitor, P subscribed, x in MULTI,
	 * b blocked (held by CLIENT PAUSE), t tracking, B broadcast tracking,
	 * e no-evict, N none. */
	if (lf & CONN_MONITOR)
		*f++ = 'O';
	if (lf & CONN_MASTER)
		*f++ = 'M';
	if (ps[0] + ps[1] + ps[2])
		*f++ = 'P';
	if (multi >= 0)
		*f++ = 'x';
	if (lf & CONN_HELD)
		*f++ = 'b';
	if (trk & TRK_ON)
		*f++ = 't';
	if (trk & TRK_BCAST)
		*f++ = 'B';
	if (lf & CONN_NO_EVICT)
		*f++ = 'e';
	if (f == flags)
		*f++ = 'N';
	*f = '\0';
	for (int pass = 0; pass < 2; pass++) {
		n = snprintf(buf, len, fmt, (unsigned long long)x->id, x->addr, x->laddr, x->fd,
			     x->name ? x->name : "", (now - x->ctime_ms) / 1000, idle,
			     flags, atomic_load_explicit(&x->db, memory_order_relaxed), ps[0],
			     ps[1], ps[2], multi, qb,
			     qb < PROTO_IOBUF_LEN ? PROTO_IOBUF_LEN - qb : 0,
			     (size_t)PROTO_IOBUF_LEN, ob, qb + ob + sizeof(*x), cmdname, redir, resp);
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

/* CLIENT LIST/KILL TYPE: the class named (@t, @tl) as Redis's
 * getClientTypeByName(): CT_NORMAL, CT_PUBSUB, CT_NONE (a class rcukv has no
 * client of: master, replica), or -1 for an unknown name. */
enum { CT_NORMAL, CT_PUBSUB, CT_NONE, CT_REPLICA /* replm.c's, not in the registry */ };

static int client_type_named(const char *t, size_t tl)
{
	if (util_strcaseeq(t, tl, "normal"))
		return CT_NORMAL;
	if (util_strcaseeq(t, tl, "pubsub"))
		return CT_PUBSUB;
	if (util_strcaseeq(t, tl, "replica") || util_strcaseeq(t, tl, "slave"))
		return CT_REPLICA;
	if (util_strcaseeq(t, tl, "master"))
		return CT_NONE;
	return -1;
}

/* @x's class: pubsub while subscribed to anything (getClientType()). */
static int client_type_of(struct conn *x)
{
	for (int k = 0; k < 3; k++)
		if (atomic_load_explicit(&x->ps_count[k], memory_order_relaxed))
			return CT_PUBSUB;
	return CT_NORMAL;
}

/* Append @n bytes of @line to *@out (*@len used of *@cap), freeing @line. */
static void append_line(char **out, size_t *len, size_t *cap, char *line, size_t n)
{
	while (*len + n + 1 > *cap) {
		*cap *= 2;
		*out = xrealloc(*out, *cap);
	}
	memcpy(*out + *len, line, n);
	*len += n;
	free(line);
}

void cmd_client_list(struct conn *c, int argc)
{
	long long now = util_mstime();
	size_t cap = 4096, len = 0;
	char *out = xmalloc(cap);
	unsigned long long *ids = NULL;
	int nids = 0, type = -1; /* -1: any */

	if (argc > 2) {
		if (argc == 4 && util_strcaseeq(ARGV(c, 2), ARGL(c, 2), "type")) {
			type = client_type_named(ARGV(c, 3), ARGL(c, 3));
			if (type < 0) {
				reply_errorf(c, "Unknown client type '%s'", ARGV(c, 3));
				free(out);
				return;
			}
		} else if (argc >= 4 && util_strcaseeq(ARGV(c, 2), ARGL(c, 2), "id")) {
			ids = xmalloc((size_t)(argc - 3) * sizeof(*ids));
			for (int j = 3; j < argc; j++) {
				long long v;

				if (!resp_str2ll(ARGV(c, j), ARGL(c, j), &v) || v <= 0) {
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
	for (struct conn *x = g_clients; x; x = x->gnext) {
		size_t n;
		char *line;

		if (type >= 0 && client_type_of(x) != type)
			continue;

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
		append_line(&out, &len, &cap, line, n);
	}
	pthread_mutex_unlock(&g_clients_lock);
	if (!ids && (type < 0 || type == CT_REPLICA)) { /* replicas: replm.c owns them */
		size_t n;
		char *lines = replm_client_lines(&n);

		append_line(&out, &len, &cap, lines, n);
	}
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
	server_wake_worker(x->w);
}

void cmd_client_kill(struct conn *c, int argc)
{
	const char *addr = NULL, *laddr = NULL;
	long long id = 0, maxage = -1;
	int skipme = 1, type = -1, user_ok = 1, killed = 0;

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
			if (!resp_str2ll(v, vl, &id) || id <= 0) {
				reply_error(c, "client-id should be greater than 0");
				return;
			}
		} else if (util_strcaseeq(o, ol, "addr")) {
			addr = v;
		} else if (util_strcaseeq(o, ol, "laddr")) {
			laddr = v;
		} else if (util_strcaseeq(o, ol, "type")) {
			type = client_type_named(v, vl);
			if (type < 0) {
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
			if (!resp_str2ll(v, vl, &maxage) || maxage < 0) {
				reply_error(c, ERR_SYNTAX);
				return;
			}
		} else {
			reply_error(c, ERR_SYNTAX);
			return;
		}
	}
	if (user_ok) {
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
			if (type >= 0 && client_type_of(x) != type)
				continue;
			if (maxage >= 0 && (now - x->ctime_ms) / 1000 < maxage)
				continue;
			client_kill_one(c, x);
			killed++;
		}
		pthread_mutex_unlock(&g_clients_lock);
		if (type == CT_REPLICA && !id && !addr && !laddr && maxage < 0)
			killed += replm_kill_replicas();
	}
	reply_int(c, killed);
}

static const char *const client_help[] = {
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
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
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "HELP",
    "    Print this help.",
    NULL,
};

void cmd_client_id(struct conn *c, int argc)
{
	(void)argc;
	reply_int(c, (long long)c->id);
}

void cmd_client_setname(struct conn *c, int argc)
{
	(void)argc;
	if (client_set_name(c, ARGV(c, 2), ARGL(c, 2)) == 0)
		reply_ok(c);
}

void cmd_client_getname(struct conn *c, int argc)
{
	(void)argc;
	if (c->name)
		reply_bulk_str(c, c->name);
	else
		reply_null(c);
}

void cmd_client_info(struct conn *c, int argc)
{
	char *line;
	size_t n;

	(void)argc;
	atomic_store_explicit(&c->obuf_used, c->out.len - c->out.pos, memory_order_relaxed);
	pthread_mutex_lock(&g_clients_lock);
	line = client_line(c, util_mstime(), &n);
	pthread_mutex_unlock(&g_clients_lock);
	reply_verbatim(c, line, n);
	free(line);
}

void cmd_client_help(struct conn *c, int argc)
{
	(void)argc;
	reply_help(c, client_help);
}
