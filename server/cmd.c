/*
 * cmd.c - the command table, dispatch and COMMAND.  The commands themselves
 * live in files by group, as Redis's do: cmd_string.c, cmd_keys.c,
 * cmd_expire.c, cmd_conn.c, cmd_server.c, client.c (CLIENT), info.c,
 * persist.c (SAVE, BGSAVE, LASTSAVE), evict.c (MEMORY, OBJECT).
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
#include "resp/resp.h"
#include "server/cmd.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/evict.h"
#include "server/latency.h"
#include "server/log.h"
#include "server/monitor.h"
#include "server/multi.h"
#include "server/pause.h"
#include "server/tracking.h"
#include "server/persist.h"
#include "server/pubsub.h"
#include "server/repl.h"
#include "server/replm.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/slowlog.h"
#include "server/stats.h"
#include "server/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

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
	    (r->first_key > 0 && r->last_key > 0 && r->last_key < r->first_key) || r->last_key < -2)
		return "key positions: first >= 1 with step >= 1 and last >= first, -1 or -2 "
		       "(BLPOP: all but the last argument), or all 0";
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
/* The rows cmd_init_rows() built the table from; main thread at start-up,
 * then read by cmd_set_extra_rows() (serialized by its caller). */
static const struct cmd *base_rows;
static int nbase_rows, nbase_top;

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
		if (!k->module) /* Redis 7.0 gives module commands no categories */
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
	base_rows = rows;
	nbase_rows = n;
	nbase_top = t->ntop;
	table_publish(t);
}

int cmd_name_taken(const char *name, size_t len)
{
	return cmd_lookup(table_get(), name, len) >= 0;
}

int cmd_set_extra_rows(const struct cmd *extra, int n)
{
	const struct cmd_table *old = g_cmds; /* the caller serializes writers */
	struct cmd *rows = xmalloc((size_t)(nbase_rows + n + 1) * sizeof(*rows));
	struct cmd_table *t;

	memcpy(rows, base_rows, (size_t)nbase_rows * sizeof(*rows));
	if (n)
		memcpy(rows + nbase_rows, extra, (size_t)n * sizeof(*rows));
	t = table_build(rows, nbase_rows + n);
	free(rows); /* table_build() copied them */
	for (int i = 0; i < nbase_top; i++)
		t->tname[i] = old->tname[i]; /* rename-command, applied once */
	table_index(t);
	t->stat_slot = xmalloc((size_t)t->ntop * sizeof(*t->stat_slot));
	for (int i = 0; i < t->ntop; i++) /* extra rows: no commandstats slot */
		t->stat_slot[i] = i < nbase_top ? old->stat_slot[i] : -1;
	table_publish(t);
	return 0;
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

/*
 * Refuse the command about to run, as Redis's rejectCommand(): @err is the
 * reply ("-CODE text", or "text" for -ERR).  Inside MULTI a refusal dooms the
 * transaction (EXEC answers EXECABORT), and EXEC itself refused aborts it
 * with "EXECABORT ... because of: <err>".  @k (NULL: unknown command) counts
 * a rejected call at @slot.
 */
static void reject(struct conn *c, const struct cmd *k, int slot, const char *err)
{
	if (k && k->proc == cmd_exec && c->multi && c->multi->active) {
		multi_discard(c);
		reply_errorf(c, "-EXECABORT Transaction discarded because of: %s",
			     err[0] == '-' ? err + 1 : err);
	} else {
		multi_flag(c);
		reply_error(c, err);
	}
	if (k && slot >= 0)
		stats_cmd_rejected(c->w, slot);
}

static void unknown_command(struct conn *c, int argc)
{
	char args[300], msg[512];
	size_t n = 0;

	args[0] = '\0';
	for (int i = 1; i < argc && n < 128; i++) {
		int room = 128 - (int)n;
		int w = snprintf(args + n, sizeof(args) - n, "'%.*s' ",
				 (int)(ARGL(c, i) < (size_t)room ? ARGL(c, i) : (size_t)room),
				 ARGV(c, i));
		n += (size_t)w;
	}
	snprintf(msg, sizeof(msg), "unknown command '%.128s', with args beginning with: %s",
		 ARGV(c, 0), args);
	reject(c, NULL, 0, msg);
}

/* maxmemory: evict first, as Redis's processCommand; with nothing left to
 * evict, commands that may grow memory are refused: the -OOM error, else
 * NULL.  One relaxed load when maxmemory is 0. */
static const char *refuse_oom(uint32_t flags)
{
	if (!atomic_load_explicit(&g_evict_cfg.maxmemory, memory_order_relaxed))
		return NULL;
	if (evict_before_command() == 0 || !(flags & CMD_DENYOOM))
		return NULL;
	return ERR_OOM;
}

/*
 * RESP2 subscribed mode (Redis 7.0's processCommand(), after the MISCONF
 * check): a client subscribed to anything may run only these; RESP3 has no
 * such limit.  By row name, so rename-command does not change the rule.
 * Return the refusal's error (in @buf) or NULL.
 */
static const char *refuse_subscribed(struct conn *c, const struct cmd *k, char *buf, size_t len)
{
	static const char *const allowed[] = {"ping",	      "subscribe",    "ssubscribe",
					      "unsubscribe",  "sunsubscribe", "psubscribe",
					      "punsubscribe", "quit",	      "reset"};

	if (SRV_LIKELY(!(c->flags & CONN_PUBSUB) || c->resp != 2))
		return NULL;
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (!strcmp(k->fullname, allowed[i]))
			return NULL;
	snprintf(buf, len,
		 "Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
		 "RESET are allowed in this context",
		 k->fullname);
	return buf;
}

/*
 * The checks after the name and arity, in Redis's order: NOAUTH, a command
 * refused inside MULTI, -OOM, MISCONF (write commands and PING), RESP2
 * subscribed mode, and -LOADING for commands not flagged CMD_LOADING.  EXEC
 * is checked with the flags of the commands it queued.  Return the refusal's
 * error (maybe in @buf) or NULL.
 *
 * -LOADING is checked first here: Redis checks it after -OOM and MISCONF,
 * but neither can fire while loading (no eviction then, and no save has run
 * to fail), so this order spares the eviction check.  One acquire load
 * otherwise.
 */
int cmd_protected_allowed(const struct conn *c, long long mode)
{
	if (mode == 1)
		return 1;
	return mode == 2 && ((c->flags & CONN_UNIX) || !strncmp(c->addr, "127.", 4) ||
			     !strncmp(c->addr, "::1", 3));
}

static const char *refuse(struct conn *c, const struct cmd *k, char *buf, size_t len)
{
	uint32_t flags = k->flags;
	const char *why;

	/* our master's stream is obeyed, as Redis's mustObeyClient() */
	if (SRV_UNLIKELY(c->flags & CONN_MASTER))
		return NULL;
	/* protected commands come first, before authentication (Redis) */
	if (SRV_UNLIKELY(k->proc == cmd_debug) &&
	    !cmd_protected_allowed(
		c, atomic_load_explicit(&g_cfg.enable_debug_command, memory_order_relaxed)))
		return "DEBUG command not allowed. If the enable-debug-command option is set to "
		       "\"local\", you can run it from a local connection, otherwise you need to "
		       "set this option in the configuration file, and then restart the server.";
	if (SRV_UNLIKELY(!c->authenticated) && !(flags & CMD_NOAUTH) && cfg_password_required())
		return "-NOAUTH Authentication required.";
	if (SRV_UNLIKELY(c->multi != NULL)) {
		if (multi_queueing(c->multi) && (flags & CMD_NO_MULTI))
			return "Command not allowed inside a transaction";
		if (k->proc == cmd_exec && c->multi->active)
			flags |= c->multi->cmd_flags & (CMD_WRITE | CMD_DENYOOM);
	}
	if (SRV_UNLIKELY(persist_loading()))
		return (flags & CMD_LOADING) ? NULL : ERR_LOADING;
	if (SRV_UNLIKELY(refuse_oom(flags) != NULL))
		return ERR_OOM;
	/* stop-writes-on-bgsave-error: as Redis, PING is refused too */
	if (SRV_UNLIKELY((flags & CMD_WRITE) || k->proc == cmd_ping) && persist_writes_denied())
		return ERR_MISCONF;
	if (SRV_UNLIKELY(flags & CMD_WRITE) && replm_refuses_writes())
		return "-NOREPLICAS Not enough good replicas to write.";
	if (SRV_UNLIKELY(flags & CMD_WRITE) && repl_refuses_writes())
		return "-READONLY You can't write against a read only replica.";
	if ((why = refuse_subscribed(c, k, buf, len)) != NULL)
		return why;
	if (SRV_UNLIKELY(!(flags & CMD_STALE)) && repl_masterdown())
		return "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to "
		       "'no'.";
	/* a monitor is a replica to Redis: kept off the keyspace */
	if (SRV_UNLIKELY(c->flags & CONN_MONITOR) && (flags & (CMD_WRITE | CMD_READONLY)))
		return "Replica can't interact with the keyspace";
	return NULL;
}

/* Run a command that passed every check: it counts as processed and as a
 * call of @slot, timed around proc only (as Redis times call()), failed if it
 * replied an error.  A rejected command never gets here. */
int cmd_key_range(const struct cmd *k, int argc, int *first, int *last, int *step)
{
	if (k->first_key <= 0 || k->first_key >= argc)
		return 0;
	*first = k->first_key;
	*last = k->last_key < 0 ? argc + k->last_key : k->last_key;
	if (*last >= argc)
		*last = argc - 1;
	*step = k->key_step > 0 ? k->key_step : 1;
	return *last >= *first;
}

/* SORT's STORE key: the argument after its last STORE, 0 if none.  The
 * walk skips what sort_parse() (cmd_sort.c) skips and goes on past what it
 * would refuse, as Redis's sortGetKeys() does (holding a key too many is
 * harmless; missing the one written is not): it differs from
 * sortGetKeys() only in skipping STORE's argument, which Redis reads as an
 * option ("SORT k STORE by STORE d" writes d). */
static int sort_store_pos(int argc, const char *const *argv, const size_t *argl)
{
	int pos = 0;

	for (int j = 2; j < argc; j++) {
		if (util_strcaseeq(argv[j], argl[j], "limit"))
			j += 2;
		else if (util_strcaseeq(argv[j], argl[j], "by") ||
			 util_strcaseeq(argv[j], argl[j], "get"))
			j++;
		else if (util_strcaseeq(argv[j], argl[j], "store") && j + 1 < argc)
			pos = ++j;
	}
	return pos;
}

int cmd_numkeys_range(const struct cmd *k, int argc, const char *const *argv,
		      const size_t *argl, int *first, int *last)
{
	long long n;
	int at;

	if (k->proc == cmd_sort) { /* not numkeys: its STORE key */
		if ((at = sort_store_pos(argc, argv, argl)) == 0)
			return 0;
		*first = *last = at;
		return 1;
	}
	if (k->proc == cmd_zunionstore || k->proc == cmd_zinterstore || k->proc == cmd_zdiffstore ||
	    k->proc == cmd_bzmpop)
		at = 2;
	else if (k->proc == cmd_zunion || k->proc == cmd_zinter || k->proc == cmd_zdiff ||
		 k->proc == cmd_zintercard || k->proc == cmd_zmpop || k->proc == cmd_sintercard)
		at = 1;
	else
		return 0;
	if (at >= argc || !resp_str2ll(argv[at], argl[at], &n) || n < 1 || n > argc - at - 1)
		return -1;
	*first = at + 1;
	*last = at + (int)n;
	return 1;
}

/* A tracking client: remember what a read-only command reads (tracking.c). */
static void track_before(struct conn *c, const struct cmd *k, int argc)
{
	int first = 0, last = 0, step = 1;
	int reads = (k->flags & CMD_READONLY) && !(k->flags & CMD_PUBSUB);

	if (reads && !cmd_key_range(k, argc, &first, &last, &step)) {
		first = 0;
		/* ZUNION ZINTER ZDIFF ZINTERCARD: the keys after numkeys */
		if (cmd_numkeys_range(k, argc, c->argv, c->argl, &first, &last) > 0)
			step = 1;
		else
			first = 0;
	}
	tracking_before(c, reads, first, last, step);
}

static void track_after(struct conn *c, const char *parent)
{
	tracking_after(c, (parent && !strcmp(parent, "client")) || (c->multi && c->multi->active));
}

_Thread_local const struct cmd *cmd_running;

int (*cmd_prop_begin)(struct conn *c, const struct cmd *k, struct prop_call *pc);
void (*cmd_prop_end)(struct conn *c, int argc, struct prop_call *pc);

/* @k is not read once proc has run: a handler may go offline (MODULE
 * LOAD/UNLOAD wait for grace periods, DEBUG SLEEP), and a table published
 * meanwhile frees the row.  Its flags and parent (a string of the rows, not
 * of the table) are loaded before. */
static inline void cmd_run(struct conn *c, const struct cmd *k, int slot, int argc)
{
	struct worker *w = c->w;
	unsigned long long errs = STAT_GET(w->st.errors), t0, d;
	uint32_t flags = k->flags;
	const char *parent = k->parent;
	long long us;
	struct prop_call rc;
	/* a replica is fed: writes run under the stream lock (propagate.c) */
	int fed = SRV_UNLIKELY(replm_on()) && cmd_prop_begin(c, k, &rc);
	/* a client's write on a writable replica: its keys with a TTL are
	 * remembered (db_replica_key_written()); one relaxed load per write */
	int first = 0, last = -1, step = 1;
	int wkeys = SRV_UNLIKELY(flags & CMD_WRITE) && SRV_UNLIKELY(repl_takes_writes()) &&
		    !(c->flags & CONN_MASTER) && cmd_key_range(k, argc, &first, &last, &step);

	STAT_ADD(w->st.commands, 1);
	if (SRV_UNLIKELY(c->trk != NULL))
		track_before(c, k, argc);
	t0 = stats_clock();
	cmd_running = k;
	k->proc(c, argc);
	d = stats_clock() - t0;
	if (SRV_UNLIKELY(fed))
		cmd_prop_end(c, argc, &rc);
	if (SRV_UNLIKELY(wkeys))
		for (int i = first; i <= last && i < c->argc; i += step)
			db_replica_key_written(db_index_of(db_of(c)), ARGV(c, i), ARGL(c, i));
	if (SRV_LIKELY(slot >= 0)) /* module commands have no slot */
		stats_cmd_done(w, slot, d, STAT_GET(w->st.errors) != errs);
	if (SRV_UNLIKELY(c->trk != NULL))
		track_after(c, parent);
	/* what Redis's call() does with the duration next, in its order */
	us = (long long)(stats_clocks_ns(d) / 1000);
	latency_offer((flags & CMD_FAST) ? "fast-command" : "command", us / 1000);
	if (!(flags & CMD_SKIP_SLOWLOG))
		slowlog_offer(c, us);
	if (!(flags & CMD_ADMIN)) /* too dangerous to show, as Redis */
		monitor_feed(c);
}

/* Whether CLIENT PAUSE WRITE holds @k: Redis's is_may_replicate_command
 * (CMD_WRITE or CMD_MAY_REPLICATE, EXEC by what it queued). */
static int pause_writes(const struct conn *c, const struct cmd *k)
{
	if (k->flags & CMD_WRITE)
		return 1;
	if (k->proc == cmd_publish || k->proc == cmd_spublish)
		return 1;
	return k->proc == cmd_exec && c->multi && c->multi->active &&
	       (c->multi->cmd_flags & CMD_WRITE);
}

/* The commands MULTI does not queue (Redis's processCommand list). */
static int runs_in_multi(const struct cmd *k)
{
	return k->proc == cmd_exec || k->proc == cmd_discard || k->proc == cmd_multi ||
	       k->proc == cmd_watch || k->proc == cmd_quit || k->proc == cmd_reset;
}

/*
 * Look the running command (c->argc, argv) up: its row (the subcommand's
 * for a container) and its INFO commandstats slot.  Return 0, or -1 with
 * the error Redis gives (unknown command, unknown subcommand, arity) in
 * @err (@k set and the rejection counted at @slot when the command is
 * known).  Also sets the connection's last_cmd/last_sub (CLIENT LIST).
 */
static int resolve(struct conn *c, const struct cmd **kp, int *slotp, char *err, size_t errlen)
{
	const struct cmd_table *t = table_get();
	int argc = c->argc, idx, slot;
	const struct cmd *k;

	*kp = NULL;
	err[0] = '\0';
	idx = cmd_lookup(t, ARGV(c, 0), ARGL(c, 0));
	if (SRV_UNLIKELY(idx < 0))
		return -1;
	k = t->top[idx];
	slot = t->stat_slot[idx];
	if (atomic_load_explicit(&c->last_cmd, memory_order_relaxed) != idx ||
	    atomic_load_explicit(&c->last_sub, memory_order_relaxed) != -1) {
		atomic_store_explicit(&c->last_cmd, idx, memory_order_relaxed);
		atomic_store_explicit(&c->last_sub, -1, memory_order_relaxed);
	}
	*kp = k;
	*slotp = slot;
	if (SRV_UNLIKELY((k->arity > 0 && argc != k->arity) || argc < -k->arity)) {
		snprintf(err, errlen, "wrong number of arguments for '%s' command", k->name);
		return -1;
	}
	if (SRV_UNLIKELY(k->subs && argc >= 2)) {
		const struct cmd *s = NULL;
		int sub;

		for (sub = 0; sub < k->nsubs; sub++) {
			if (util_strcaseeq(ARGV(c, 1), ARGL(c, 1), k->subs[sub].name)) {
				s = &k->subs[sub];
				break;
			}
		}
		if (!s) {
			char up[32];

			upper(up, k->name, strlen(k->name));
			snprintf(err, errlen, "unknown subcommand '%.128s'. Try %s HELP.",
				 ARGV(c, 1), up);
			*kp = NULL; /* counts nowhere, as Redis */
			return -1;
		}
		atomic_store_explicit(&c->last_sub, sub, memory_order_relaxed);
		*kp = s;
		*slotp = slot + 1 + sub;
		if ((s->arity > 0 && argc != s->arity) || argc < -s->arity) {
			snprintf(err, errlen, "wrong number of arguments for '%s' command",
				 s->fullname);
			return -1;
		}
	}
	return 0;
}

/*
 * Run one parsed command.  What INFO commandstats counts, as Redis 7.0:
 * an unknown command or subcommand counts nowhere (but in errorstats); a
 * known one refused before running (arity, NOAUTH, LOADING, OOM, MISCONF) is a
 * rejected call of that command or subcommand; one that runs is a call
 * (and total_commands_processed), failed if it replied an error.  Between
 * MULTI and EXEC, a command that passes the checks is queued instead
 * (+QUEUED), and a refused one dooms the transaction.
 */
static void dispatch_one(struct conn *c)
{
	const struct cmd *k;
	const char *why;
	char err[512];
	int slot = 0;

	if (SRV_UNLIKELY(resolve(c, &k, &slot, err, sizeof(err)) != 0)) {
		if (!k && !err[0])
			unknown_command(c, c->argc);
		else
			reject(c, k, slot, err);
		return;
	}
	if (SRV_UNLIKELY((why = refuse(c, k, err, sizeof(err))) != NULL)) {
		reject(c, k, slot, why);
		return;
	}
	if (SRV_UNLIKELY(pause_hold(c, pause_writes(c, k))))
		return; /* conn_resume() dispatches it again */
	if (SRV_UNLIKELY(multi_queueing(c->multi)) && !runs_in_multi(k)) {
		multi_queue(c, k->flags);
		reply_simple(c, "QUEUED");
		return;
	}
	db_pin(c);
	cmd_run(c, k, slot, c->argc);
}

/* A command's replies, unless CLIENT REPLY OFF or SKIP drops them (Redis's
 * prepareClientToWrite()); then SKIP ends and SKIP next begins, as Redis's
 * resetClient() after every command but a held one. */
void cmd_dispatch(struct conn *c)
{
	size_t unsent;

	pubsub_drain_pending(c->w); /* deliveries first: they may be older */
	unsent = c->out.len - c->out.pos; /* pos moves if the buffer compacts */
	dispatch_one(c);
	if (SRV_LIKELY(!(c->flags & (CONN_REPLY_OFF | CONN_REPLY_SKIP | CONN_REPLY_SKIP_NEXT))) ||
	    (c->flags & CONN_HELD))
		return;
	if (c->flags & (CONN_REPLY_OFF | CONN_REPLY_SKIP))
		c->out.len = c->out.pos + unsent;
	c->flags &= ~CONN_REPLY_SKIP;
	if (c->flags & CONN_REPLY_SKIP_NEXT)
		c->flags = (c->flags & ~CONN_REPLY_SKIP_NEXT) | CONN_REPLY_SKIP;
}

void cmd_exec_one(struct conn *c)
{
	const struct cmd *k;
	char err[512];
	int slot = 0;

	if (resolve(c, &k, &slot, err, sizeof(err)) != 0) {
		/* The table changed since the command was queued (a rename). */
		if (!k && !err[0])
			snprintf(err, sizeof(err), "unknown command '%.128s'", ARGV(c, 0));
		reply_error(c, err);
		return;
	}
	cmd_run(c, k, slot, c->argc);
}

const struct cmd *cmd_script_row(struct conn *c, int *why)
{
	const struct cmd *k;
	char err[8];
	int slot;

	*why = 0;
	if (resolve(c, &k, &slot, err, sizeof(err)) == 0)
		return k;
	*why = k ? 2 : 1; /* a known row: its arity; else unknown (or its subcommand) */
	return NULL;
}

const struct cmd *cmd_row_of(struct conn *c)
{
	const struct cmd *k;
	char err[8];
	int slot;

	return resolve(c, &k, &slot, err, sizeof(err)) == 0 ? k : NULL;
}

/* COMMAND INFO entry: name arity flags first last step acl tips keyspecs subs */

/* The flags as COMMAND INFO prints them: in Redis's order (its CMD_* bits),
 * which is not the order of rcukv's bits. */
static const struct {
	uint32_t bit;
	const char *name;
} flag_names[CMD_NFLAGS] = {
    {CMD_WRITE, "write"},     {CMD_READONLY, "readonly"}, {CMD_DENYOOM, "denyoom"},
    {CMD_ADMIN, "admin"},     {CMD_PUBSUB, "pubsub"},	  {CMD_NOSCRIPT, "noscript"},
    {CMD_BLOCKING, "blocking"},
    {CMD_LOADING, "loading"}, {CMD_STALE, "stale"},	  {CMD_SKIP_SLOWLOG, "skip_slowlog"},
    {CMD_FAST, "fast"},	      {CMD_NOAUTH, "no_auth"},	  {CMD_SENTINEL, "sentinel"},
    {CMD_NO_ASYNC_LOADING, "no_async_loading"}, {CMD_NO_MULTI, "no_multi"},
    {CMD_ALLOW_BUSY, "allow_busy"}, {CMD_MOVABLEKEYS, "movablekeys"},
};

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
	reply_set(c, nflags + (k->module != NULL));
	for (int i = 0; i < CMD_NFLAGS; i++) {
		if (k->flags & flag_names[i].bit)
			reply_simple(c, flag_names[i].name);
		if (flag_names[i].bit == CMD_DENYOOM && k->module) /* Redis's place for it */
			reply_simple(c, "module");
	}
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
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
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
	if (k->module) { /* what Redis 7.0 knows of a module command without SetCommandInfo */
		reply_map(c, 2);
		reply_bulk_str(c, "group");
		reply_bulk_str(c, "module");
		reply_bulk_str(c, "module");
		reply_bulk_str(c, k->module);
		return;
	}
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

/* COMMAND LIST's FILTERBY: what is listed. */
enum list_filter { LIST_ALL, LIST_MODULE, LIST_ACLCAT, LIST_PATTERN };

static int list_keeps(const struct cmd *k, enum list_filter f, const char *arg, size_t len)
{
	switch (f) {
	case LIST_ALL:
		return 1;
	case LIST_MODULE: /* the module's name, any case */
		return k->module && util_strcaseeq(arg, len, k->module);
	case LIST_ACLCAT: /* the category's name without its '@', any case */
		for (int i = 0; i < ACL_NCATEGORIES; i++)
			if (util_strcaseeq(arg, len, acl_names[i] + 1))
				return (k->acl & (1u << i)) != 0;
		return 0;
	case LIST_PATTERN:
		return util_glob_match(arg, len, k->fullname, strlen(k->fullname), 1);
	}
	return 0;
}

/* The names kept, every command followed by its subcommands (as Redis
 * lists them, in its dict's order, rcukv in its rows'); counted when @c is
 * NULL. */
static long long list_walk(struct conn *c, const struct cmd_table *t, enum list_filter f,
			   const char *arg, size_t len)
{
	long long n = 0;

	for (int i = 0; i < t->ntop; i++) {
		const struct cmd *k = t->top[i];

		for (int s = -1; s < k->nsubs; s++) {
			const struct cmd *x = s < 0 ? k : &k->subs[s];

			if (!list_keeps(x, f, arg, len))
				continue;
			n++;
			if (c)
				reply_bulk_str(c, x->fullname);
		}
	}
	return n;
}

/* COMMAND LIST [FILTERBY MODULE|ACLCAT|PATTERN arg]: the last FILTERBY
 * wins; anything else is a syntax error, as Redis parses it. */
void cmd_command_list(struct conn *c, int argc)
{
	static const char *const kinds[] = {"module", "aclcat", "pattern"};
	const struct cmd_table *t = table_get();
	enum list_filter f = LIST_ALL;
	const char *arg = NULL;
	size_t len = 0;

	for (int j = 2; j < argc; j += 3) {
		int kind = -1;

		if (!util_strcaseeq(ARGV(c, j), ARGL(c, j), "filterby") || argc - 1 - j != 2) {
			reply_error(c, ERR_SYNTAX);
			return;
		}
		for (int i = 0; i < 3; i++)
			if (util_strcaseeq(ARGV(c, j + 1), ARGL(c, j + 1), kinds[i]))
				kind = i;
		if (kind < 0) {
			reply_error(c, ERR_SYNTAX);
			return;
		}
		f = (enum list_filter)(LIST_MODULE + kind);
		arg = ARGV(c, j + 2);
		len = ARGL(c, j + 2);
	}
	reply_array(c, list_walk(NULL, t, f, arg, len));
	list_walk(c, t, f, arg, len);
}

/* The row of the command in argv[@from..argc), its subcommand's for a
 * container given one (NULL if unknown), as Redis's lookupCommand(). */
static const struct cmd *row_of_argv(const struct cmd_table *t, struct conn *c, int from)
{
	int idx = cmd_lookup(t, ARGV(c, from), ARGL(c, from));
	const struct cmd *k;

	if (idx < 0)
		return NULL;
	k = t->top[idx];
	if (!k->subs || c->argc - from < 2)
		return k;
	for (int i = 0; i < k->nsubs; i++)
		if (util_strcaseeq(ARGV(c, from + 1), ARGL(c, from + 1), k->subs[i].name))
			return &k->subs[i];
	return NULL;
}

/* One key's flags for GETKEYSANDFLAGS: a set of simple strings. */
static void reply_key_flags(struct conn *c, const char *flags)
{
	char buf[64], *w, *sp;
	int n = 0;

	for (const char *p = flags; *p; p++)
		n += p == flags || p[-1] == ' ';
	reply_set(c, n);
	snprintf(buf, sizeof(buf), "%s", flags);
	for (w = strtok_r(buf, " ", &sp); w; w = strtok_r(NULL, " ", &sp))
		reply_simple(c, w);
}

/* One key of GETKEYS: the argument at @j (of the command at 2). */
static void getkeys_one(struct conn *c, const struct cmd *k, int j, int with_flags)
{
	if (with_flags)
		reply_array(c, 2);
	reply_bulk(c, ARGV(c, j + 2), ARGL(c, j + 2));
	if (with_flags)
		reply_key_flags(c, cmd_key_flags(k, c, 2, j));
}

/* Where a CMD_MOVABLEKEYS row's numkeys argument is (Redis's keynum key
 * spec: the keys follow it), or 0. */
static int numkeys_pos(const struct cmd *k)
{
	if (!(k->flags & CMD_MOVABLEKEYS))
		return 0;
	if (!strcmp(k->name, "lmpop"))
		return 1;
	if (!strcmp(k->name, "blmpop"))
		return 2;
	return 0;
}

static int getkeys_arity_ok(struct conn *c, const struct cmd *k, int n)
{
	if ((k->arity > 0 && k->arity != n) || n < -k->arity) {
		reply_error(c, "Invalid number of arguments specified for command");
		return 0;
	}
	return 1;
}

/* COMMAND GETKEYS / GETKEYSANDFLAGS command [arg...]: the keys by the row's
 * first, last and step, then those after a numkeys argument
 * (cmd_numkeys_range(); LMPOP and BLMPOP by numkeys_pos()), each with its
 * flags (keyspecs.c) when @with_flags. */
static void getkeys(struct conn *c, int argc, int with_flags)
{
	const struct cmd *k = row_of_argv(table_get(), c, 2);
	int n = argc - 2, last, nk, np, nfirst = 0, nlast = -1;

	if (!k) {
		reply_error(c, "Invalid command specified");
		return;
	}
	if ((np = numkeys_pos(k)) > 0) { /* LMPOP, BLMPOP: numkeys key... */
		long long nkeys;

		if (!getkeys_arity_ok(c, k, n))
			return;
		if (!resp_str2ll(ARGV(c, np + 2), ARGL(c, np + 2), &nkeys) || nkeys <= 0 ||
		    nkeys >= n - np) {
			reply_error(c, "Invalid arguments specified for command");
			return;
		}
		reply_array(c, nkeys);
		for (int j = np + 1; j <= np + (int)nkeys; j++)
			getkeys_one(c, k, j, with_flags);
		return;
	}
	nk = cmd_numkeys_range(k, n, c->argv + 2, c->argl + 2, &nfirst, &nlast);
	if (nk != 0) {
		int rows = k->first_key > 0 ? (k->last_key - k->first_key) / k->key_step + 1 : 0;

		if (!getkeys_arity_ok(c, k, n))
			return;
		if (nk < 0) {
			reply_error(c, "Invalid arguments specified for command");
			return;
		}
		/* the numkeys commands' rows name fixed keys only (last_key >= 0) */
		reply_array(c, rows + (nlast - nfirst + 1));
		for (int j = k->first_key; k->first_key > 0 && j <= k->last_key; j += k->key_step)
			getkeys_one(c, k, j, with_flags);
		for (int j = nfirst; j <= nlast; j++)
			getkeys_one(c, k, j, with_flags);
		return;
	}
	/* shard channels have key positions but are no keys (not_key) */
	if (k->first_key <= 0 || !strcmp(cmd_key_flags(k, c, 2, k->first_key), "not_key")) {
		reply_error(c, "The command has no key arguments");
		return;
	}
	if (!getkeys_arity_ok(c, k, n))
		return;
	last = k->last_key < 0 ? n + k->last_key : k->last_key;
	if (last >= n)
		last = n - 1;
	reply_array(c, last < k->first_key ? 0 : (last - k->first_key) / k->key_step + 1);
	for (int j = k->first_key; j <= last; j += k->key_step)
		getkeys_one(c, k, j, with_flags);
}

void cmd_command_getkeys(struct conn *c, int argc)
{
	getkeys(c, argc, 0);
}

void cmd_command_getkeysandflags(struct conn *c, int argc)
{
	getkeys(c, argc, 1);
}

void cmd_command_help(struct conn *c, int argc)
{
	(void)argc;
	reply_help(c, command_help);
}
