/*
 * cmd.h - the command table: rows, dispatch, COMMAND.
 *
 * Every command is one row of server/commands.def.  cmd_init() turns the rows
 * into a table (name lookup, subcommands, INFO commandstats slots, ACL
 * categories) and publishes it through an RCU-protected pointer; workers read
 * it inside their implicit QSBR read-side section (a command runs between two
 * quiescent states, see worker_main() in net.c), so a table published later
 * (rename, modules) is picked up by the next command while the old one is
 * freed after a grace period.
 *
 * Layering: handlers reply through reply.c's encoders; cmd.c is the only
 * file that knows the rows.  reply.c and cmd.c depend on each other in one
 * place only: a reply error counts in errorstats by the running command.
 */
#ifndef SERVER_CMD_H
#define SERVER_CMD_H

#include <stddef.h>
#include <stdint.h>

struct conn;

/* Command flags, as Redis's CMD_*; COMMAND INFO prints them in bit order. */
#define CMD_WRITE 0x1
#define CMD_READONLY 0x2
#define CMD_FAST 0x4
#define CMD_ADMIN 0x8
#define CMD_NOSCRIPT 0x10
#define CMD_LOADING 0x20
#define CMD_STALE 0x40
#define CMD_NOAUTH 0x80
#define CMD_SENTINEL 0x100
#define CMD_DENYOOM 0x200
#define CMD_PUBSUB 0x400
#define CMD_SKIP_SLOWLOG 0x800
#define CMD_NO_MULTI 0x1000 /* refused between MULTI and EXEC */
#define CMD_ALLOW_BUSY 0x2000
#define CMD_NO_ASYNC_LOADING 0x4000
#define CMD_BLOCKING 0x8000	/* may block the client (BLPOP...) */
#define CMD_MOVABLEKEYS 0x10000 /* keys found by parsing (LMPOP's numkeys) */
#define CMD_NFLAGS 17

/* ACL categories, in the order Redis 7.0 lists them (COMMAND INFO, ACL CAT). */
enum {
	ACL_KEYSPACE = 1u << 0,
	ACL_READ = 1u << 1,
	ACL_WRITE = 1u << 2,
	ACL_SET = 1u << 3,
	ACL_SORTEDSET = 1u << 4,
	ACL_LIST = 1u << 5,
	ACL_HASH = 1u << 6,
	ACL_STRING = 1u << 7,
	ACL_BITMAP = 1u << 8,
	ACL_HYPERLOGLOG = 1u << 9,
	ACL_GEO = 1u << 10,
	ACL_STREAM = 1u << 11,
	ACL_PUBSUB = 1u << 12,
	ACL_ADMIN = 1u << 13,
	ACL_FAST = 1u << 14,
	ACL_SLOW = 1u << 15,
	ACL_BLOCKING = 1u << 16,
	ACL_DANGEROUS = 1u << 17,
	ACL_CONNECTION = 1u << 18,
	ACL_TRANSACTION = 1u << 19,
	ACL_SCRIPTING = 1u << 20,
};
#define ACL_NCATEGORIES 21

/* A command handler: runs on the connection's worker, inside its QSBR
 * read-side section, with argc arguments in ARGV/ARGL; it queues exactly one
 * reply (or a closing reply for QUIT). */
typedef void cmd_proc(struct conn *c, int argc);

/* Every handler named in commands.def. */
#define CMD(name, proc, ...) cmd_proc proc;
#define SUB(parent, name, proc, ...) cmd_proc proc;
#define CONTAINER(...)
#include "server/commands.def"
#undef CMD
#undef SUB
#undef CONTAINER
/* Containers mostly have no handler of their own (NULL in their row): the
 * bare COMMAND is the one that does. */
cmd_proc cmd_command;

enum cmd_kind { CMD_ROW_CMD, CMD_ROW_CONTAINER, CMD_ROW_SUB };

/* One row of commands.def, as written, plus what cmd_init() derives. */
struct cmd {
	enum cmd_kind kind;
	const char *parent; /* SUB rows: the container's name, else NULL */
	const char *name;
	cmd_proc *proc;
	int arity;
	uint32_t flags;
	uint32_t acl; /* the row's own; cmd_init() adds the implied ones */
	int first_key, last_key, key_step;
	const char *group;
	const char *since;
	const char *summary;
	const char *args; /* COMMAND DOCS arguments spec, NULL: no arguments field */
	/* derived by cmd_init() */
	const char *fullname;	/* "client|kill" for a subcommand, else name */
	const struct cmd *subs; /* a container's subcommands, NULL otherwise */
	int nsubs;
	/* rows added by cmd_set_extra_rows() (modules): their owner's data
	 * (module.c's struct mod_cmd) and the module's name (COMMAND INFO's
	 * "module" flag, DOCS, LIST FILTERBY MODULE); NULL for commands.def's */
	void *priv;
	const char *module;
};

/* The rows of commands.def, in file order (cmd.c). */
extern const struct cmd cmd_rows[];
extern const int cmd_nrows;

/*
 * cmd_rows_check - validate a row set: names, arities, flags against ACL
 * categories, key positions, docs specs, subcommands under their container,
 * no duplicates.  Return NULL if sound, else a message naming the row and
 * the reason, in @buf.  Any thread; touches nothing shared.
 */
const char *cmd_rows_check(const struct cmd *rows, int n, char *buf, size_t len);

/* Main thread, once at start-up (after the config, before the workers):
 * checks the rows (a malformed one is fatal: exit 1 with the reason), builds
 * the table with rename-command applied, and publishes it. */
void cmd_init(void);
/* cmd_init() on another row set (tests: a malformed one must be refused). */
void cmd_init_rows(const struct cmd *rows, int n);
/*
 * cmd_set_extra_rows - publish a table of commands.def's rows plus @n rows
 * of @extra (module commands: CMD_ROW_CMD, unchecked, no commandstats slot,
 * @priv their owner's), replacing any extra rows published before.  The old
 * table is freed after a grace period: a reader that found a row in it may
 * use the row until its next quiescent state, never later.  The names and
 * strings of @extra must outlive the table (free them after rcu_barrier()).
 * Context: one caller at a time (module.c's lock); any registered thread,
 * main at start-up.  The caller checked the names are free (cmd_name_taken()).
 * Return: 0.
 */
int cmd_set_extra_rows(const struct cmd *extra, int n);
/* The row whose handler this thread is running: set by dispatch just
 * before it calls the handler, so valid at the handler's entry (read-side
 * section) and overwritten by any command it runs itself.  Module commands
 * read their row here rather than looking their name up again, which could
 * find a newer table. */
extern _Thread_local const struct cmd *cmd_running;
/* 1 if a command named @name (@len bytes, any case) is in the table.
 * Read-side section of the server's flavor (or main at start-up). */
int cmd_name_taken(const char *name, size_t len);
/* Main thread at exit, with no worker left: frees the table. */
void cmd_fini(void);
/* Worker: look the command up and run it, with every check Redis makes
 * first (arity, auth, loading, OOM, MISCONF). */
void cmd_dispatch(struct conn *c);
/* The key arguments of row @k in a command of @argc words: @first..@last by
 * @step (commands.def's positions, -1 the last argument).  Return 0 when it
 * has none. */
int cmd_key_range(const struct cmd *k, int argc, int *first, int *last, int *step);
/* The keys a command names after a numkeys argument, beyond its row's
 * positions (Redis's movablekeys: ZUNIONSTORE ZINTERSTORE ZDIFFSTORE take
 * numkeys at 2, ZUNION ZINTER ZDIFF ZINTERCARD ZMPOP SINTERCARD at 1): @first..@last,
 * step 1; and SORT's STORE key (@first == @last).  Return 1 with them; 0 for
 * other commands (and SORT without STORE); -1 when numkeys does
 * not parse or is out of range (the command then fails before it touches a
 * key).  For EXEC and scripts, which must hold every key a command writes,
 * client-side caching and COMMAND GETKEYS. */
int cmd_numkeys_range(const struct cmd *k, int argc, const char *const *argv,
		      const size_t *argl, int *first, int *last);
/* EXEC: run the command in c->argc/argv (queued by MULTI) with no check
 * but its name and arity; it replies once, an error if the table lost it. */
void cmd_exec_one(struct conn *c);
/* Scripts (script.c): the row of the command in c->argv as cmd_row_of(),
 * and when NULL, @why: 1 unknown command or subcommand, 2 wrong arity. */
const struct cmd *cmd_script_row(struct conn *c, int *why);
/* The row (the subcommand's for a container) of the command in c->argv, or
 * NULL if unknown or of a wrong arity.  Worker, read-side section. */
const struct cmd *cmd_row_of(struct conn *c);
/* The name INFO/CLIENT LIST give the command at table index idx (and
 * subcommand sub, or -1), "NULL" if none.  Any thread in a read-side
 * section of the server's RCU flavor. */
void cmd_name_of(int idx, int sub, char *buf, size_t len);
/* Redis's allowProtectedAction(): @mode (enable-protected-configs,
 * enable-debug-command: 0 no, 1 yes, 2 local) allows @c (local: a unix
 * socket or a loopback address).  Any thread. */
int cmd_protected_allowed(const struct conn *c, long long mode);
/* 0 if the named command (argv[0]) only reads keys (CMD_READONLY), 1 if it
 * may write or is unknown.  Worker, read-side section.  For the prefetch. */
int cmd_may_write(const char *name, size_t len);


/* keyspecs.c: the key-spec flags (Redis's names, space separated, "" if
 * none known) of the key at argument @pos of the command in @c's arguments
 * from @from on, whose row is @k (COMMAND GETKEYSANDFLAGS). */
const char *cmd_key_flags(const struct cmd *k, const struct conn *c, int from, int pos);

/* cmd_docs.c: COMMAND DOCS "arguments" from a row's args spec. */
/* Return NULL if @spec parses, else the reason. */
const char *cmd_docs_check(const char *spec);
void cmd_docs_reply(struct conn *c, const char *spec);

/* What propagate.c's begin saw, for its end (the row may be gone by then). */
struct prop_call {
	unsigned long long dirty0; /* the worker's dirty counter before */
	int kind;		   /* RW_* of propagate.c */
	int outer;		   /* EXEC or a script: wraps what it writes */
	int locked;		   /* took the stream lock */
	int after;		   /* SWAPDB: lock and append after it ran */
};
/* Set once by prop_init() (main.c, before the workers): called by cmd_run()
 * around the handler while replm_on() (a replica is fed).  @begin returns 1
 * when @end must follow. */
extern int (*cmd_prop_begin)(struct conn *c, const struct cmd *k, struct prop_call *pc);
extern void (*cmd_prop_end)(struct conn *c, int argc, struct prop_call *pc);

#endif
