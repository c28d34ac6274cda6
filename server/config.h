/*
 * config.h - options: the rows every module declares for its own options,
 * the registry config.c keeps of them, the redis.conf-style file, the
 * command line, and what CONFIG GET/SET (cmd_server.c) read and write.
 *
 * A module owns its options' fields and writes their rows (struct cfg_opt)
 * in its own .c file, registered with CFG_REGISTER() when the program is
 * loaded: config.c parses, validates, prints and applies every row the same
 * way, and calls the row's callbacks for what only the module knows.  A
 * program that links config.c without a module simply has fewer options
 * (the fuzz harnesses link neither tls.c nor, for fuzz_resp, evict.c).
 *
 * Context and locking: rows are registered by constructors before main();
 * defaults, the file and the command line are applied by the main thread
 * before the workers start (cfg_defaults(), cfg_load()).  Afterwards only
 * CONFIG SET writes (from any worker, one at a time: cmd_server.c holds
 * cfg_set_lock() across its passes), and only options that are CFG_MUTABLE
 * or CFG_PROTECTED.  Numeric fields that may change are _Atomic and read with
 * relaxed loads; start-up-only fields are plain.
 * g_cfg holds the options of the server core (network, clients, logging,
 * security); the modules' options live in the modules.
 */
#ifndef SERVER_CONFIG_H
#define SERVER_CONFIG_H

#include <stdatomic.h>
#include <stddef.h>

#define CFG_MAX_BIND 16
#define CFG_MAX_RENAME 64
/* `databases`: each table has a reclaimer thread of its own, and there are
 * SRCU_RECLAIM_MAX reclaimers in a process (rcu/srcu.h). */
#define CFG_MAX_DATABASES 240

struct cfg {
	char *bind[CFG_MAX_BIND];
	int nbind;
	int port;
	char *unixsocket;
	unsigned int unixsocketperm;
	int threads;
	_Atomic long long worker_cpu_affinity; /* pin worker i to the i-th allowed CPU */
	_Atomic long long maxclients;
	_Atomic long long timeout;	 /* seconds, 0 = never */
	_Atomic long long tcp_keepalive; /* seconds, 0 = off */
	_Atomic int loglevel;
	char *logfile;
	char *pidfile;
	int daemonize;
	_Atomic long long proto_max_bulk_len;
	_Atomic long long client_query_buffer_limit;
	_Atomic long long hz;
	int tcp_backlog;
	_Atomic long long client_output_buffer_soft; /* per-client pause threshold */
	char *config_file;			     /* absolute path or NULL */
	_Atomic long long protected_mode;	     /* bool */
	_Atomic int has_pass;			     /* requirepass is not empty */
	/* client-output-buffer-limit normal <hard> <soft> <soft secs>; 0 = off */
	_Atomic long long cobl_hard, cobl_soft, cobl_soft_secs;
	/* client-output-buffer-limit pubsub: subscribed clients (conn.c) */
	_Atomic long long cobl_ps_hard, cobl_ps_soft, cobl_ps_soft_secs;
	/* rename-command pairs from the config file, applied by cmd_init();
	 * an empty rename_to disables the command. */
	char *rename_from[CFG_MAX_RENAME], *rename_to[CFG_MAX_RENAME];
	int nrename;
	_Atomic long long enable_protected_configs; /* 0 no, 1 yes, 2 local */
	int databases; /* the number of databases (db.h); start-up only */
	_Atomic long long enable_debug_command;	    /* DEBUG: 0 no, 1 yes, 2 local */
};

extern struct cfg g_cfg;

/* What an option's values are; CFG_SPECIAL rows parse and print their own. */
enum cfg_kind { CFG_BOOL, CFG_INT, CFG_MEM, CFG_ENUM, CFG_OCTAL, CFG_STRING, CFG_SPECIAL };

/* How a numeric row's field is stored. */
enum cfg_store {
	CFG_ATOMIC_LL,	/* _Atomic long long (every option CONFIG SET may change) */
	CFG_ATOMIC_INT, /* _Atomic int */
	CFG_PLAIN_INT,	/* int, start-up only */
	CFG_PLAIN_UINT	/* unsigned int, start-up only */
};

/* cfg_opt.mut: when the option may change */
#define CFG_STARTUP 0	/* config file and command line only */
#define CFG_MUTABLE 1	/* and CONFIG SET */
#define CFG_PROTECTED 2 /* CONFIG SET only with enable-protected-configs yes (or local) */

/* cfg_opt.flags */
#define CFG_HIDDEN 0x1 /* not listed by CONFIG GET (rename-command) */

struct cfg_opt {
	const char *name;
	enum cfg_kind kind;
	int mut;
	unsigned flags;
	/* CFG_STRING: a char * (start-up only); numeric kinds: as @store */
	void *field;
	enum cfg_store store;
	long long min, max;	   /* accepted numeric range */
	long long clamp_lo, clamp_hi; /* when clamp_hi > 0: stored clamped to this */
	const char *const *enums;  /* CFG_ENUM: the names, NULL-terminated */
	/* The default, as a config line would give it; NULL for none (or a
	 * CFG_SPECIAL row whose group's defaults() sets it). */
	const char *def;
	/*
	 * CFG_SPECIAL: check @argc values (@lens their lengths) and, when
	 * @apply, store them.  @startup: from the config file or the command
	 * line (one word per value) rather than CONFIG SET (one value).
	 * Return: NULL, or the reason they are refused (static text).
	 */
	const char *(*set)(const struct cfg_opt *o, int argc, char **argv, const size_t *lens,
			   int startup, int apply);
	/* CFG_SPECIAL: the value as CONFIG GET prints it. */
	void (*get)(const struct cfg_opt *o, char *buf, size_t len);
	/* After CONFIG SET changed the option (not at start-up). */
	void (*apply)(void);
};

/* One module's rows, and what the module does beyond its rows' defaults. */
struct cfg_group {
	const char *module;
	const struct cfg_opt *rows;
	int n;
	void (*defaults)(void); /* after the rows' defaults; may be NULL */
	void (*fini)(void);	/* frees what the module's options hold; may be NULL */
	struct cfg_group *next;
};

/* Register @g (a constructor does it: CFG_REGISTER).  Not thread-safe. */
void cfg_register(struct cfg_group *g);
#define CFG_REGISTER(group)                                                                        \
	__attribute__((constructor)) static void group##_register(void)                            \
	{                                                                                          \
		cfg_register(&(group));                                                            \
	}

/* The value of @arg for a CFG_BOOL row ("yes"/"no"), for special rows. */
const char *cfg_parse_bool(const char *arg, long long *v);


void cfg_defaults(void);
/* Parse file then argv overrides.  On error prints a message and exits 1. */
void cfg_load(int argc, char **argv);
void cfg_free_extra(void);

/*
 * What CONFIG GET and SET (cmd_server.c) read and write.  The registry is
 * built by cfg_defaults() and never changes afterwards, so any thread may walk
 * it: cfg_nopts() rows, cfg_opt_at(0 .. n-1) in name order.
 */
int cfg_nopts(void);
const struct cfg_opt *cfg_opt_at(int i);
/* cfg_opt_at(@i)'s default, as CONFIG GET prints it ("" before cfg_defaults()). */
const char *cfg_opt_default(int i);
/* CONFIG REWRITE (config_rewrite.c): rewrite g_cfg.config_file as Redis's
 * rewriteConfig() does.  Return 0, or -1 with errno set.  One at a time
 * (the caller holds cfg_set_lock()). */
int cfg_rewrite(void);
/* The row named @name (@len bytes, any case), or NULL. */
const struct cfg_opt *cfg_find(const char *name, size_t len);
/* @o's value as CONFIG GET prints it, into @buf (truncated to @len). */
void cfg_opt_value(const struct cfg_opt *o, char *buf, size_t len);
/*
 * cfg_set_value() - CONFIG SET of one value, in two passes: @apply_now 0
 * checks @arg (@len bytes) and parses a numeric row's value into *@val;
 * @apply_now 1 stores it (*@val, or @arg again for a CFG_SPECIAL row) and
 * calls the row's apply().  Return: NULL, or why the value is refused (static
 * text or @errbuf).  Call both passes of one CONFIG SET between cfg_set_lock()
 * and cfg_set_unlock(): one CONFIG SET at a time, all or nothing.
 */
const char *cfg_set_value(const struct cfg_opt *o, const char *arg, size_t len, long long *val,
			  int apply_now, char *errbuf, size_t errlen);
void cfg_set_lock(void);
void cfg_set_unlock(void);
/* requirepass: 1 if a password is set (new clients start unauthenticated). */
int cfg_password_required(void);
/* 1 if pw equals requirepass (constant time; 0 when none is set). */
int cfg_check_password(const char *pw, size_t len);

#endif /* SERVER_CONFIG_H */
