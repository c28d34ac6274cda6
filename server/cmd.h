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
#define CMD_NFLAGS 14

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
/* Main thread at exit, with no worker left: frees the table. */
void cmd_fini(void);
/* Worker: look the command up and run it, with every check Redis makes
 * first (arity, auth, loading, OOM, MISCONF). */
void cmd_dispatch(struct conn *c);
/* The key arguments of row @k in a command of @argc words: @first..@last by
 * @step (commands.def's positions, -1 the last argument).  Return 0 when it
 * has none. */
int cmd_key_range(const struct cmd *k, int argc, int *first, int *last, int *step);
/* EXEC: run the command in c->argc/argv (queued by MULTI) with no check
 * but its name and arity; it replies once, an error if the table lost it. */
void cmd_exec_one(struct conn *c);
/* The row (the subcommand's for a container) of the command in c->argv, or
 * NULL if unknown or of a wrong arity.  Worker, read-side section. */
const struct cmd *cmd_row_of(struct conn *c);
/* The name INFO/CLIENT LIST give the command at table index idx (and
 * subcommand sub, or -1), "NULL" if none.  Any thread in a read-side
 * section of the server's RCU flavor. */
void cmd_name_of(int idx, int sub, char *buf, size_t len);
/* 0 if the named command (argv[0]) only reads keys (CMD_READONLY), 1 if it
 * may write or is unknown.  Worker, read-side section.  For the prefetch. */
int cmd_may_write(const char *name, size_t len);


/* cmd_docs.c: COMMAND DOCS "arguments" from a row's args spec. */
/* Return NULL if @spec parses, else the reason. */
const char *cmd_docs_check(const char *spec);
void cmd_docs_reply(struct conn *c, const char *spec);

#endif
