/*
 * module.h - Redis 7.0 modules: MODULE LOAD/LIST/UNLOAD, loadmodule, and the
 * server side of redismodule.h's ABI (docs/modules.md).
 *
 * A module is a shared object compiled against Redis 7.0's unmodified
 * redismodule.h.  Its RedisModule_OnLoad() calls RedisModule_Init(), which
 * takes the first word of the RedisModuleCtx we pass (getapifuncptr) and
 * resolves every API function through it by name (module_api_get()).  The
 * structs below are rcukv's own: the header only ever sees pointers to them.
 *
 * Owns: the list of loaded modules and the extra rows of the command table
 * (both under mod_lock, module.c).  A module's commands are rows published
 * with cmd_set_extra_rows(); workers find them there without a lock.  Unload
 * is deactivate (publish a table without them), synchronize (a QSBR grace
 * period: no worker is still inside a command that found them), wait for the
 * module's in-flight count to drain (a command that went offline inside the
 * module), rcu_barrier(), then RedisModule_OnUnload() and dlclose().
 * Tortured by tests/server/test_modules.sh.
 *
 * Files: module.c (the loader, MODULE, the command rows, unload),
 * module_api.c (the API functions and the name registry).  The structs are
 * shared by those two files only.
 */
#ifndef SERVER_MODULE_H
#define SERVER_MODULE_H

#include <setjmp.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct conn;
struct module;
struct mod_value;
struct mod_zrange;

/* RedisModuleString: an immutable byte string (modules may only read it,
 * except through the *String*Set calls we do not implement). */
struct RedisModuleString {
	size_t len;
	int refcount;
	char *ptr; /* len bytes and a NUL */
	/* A string the module made (CreateString*, DictNext...) or retained is
	 * on its module's list until its last reference goes: the ones left at
	 * unload are freed then (module_api.c), where Redis leaks them. */
	struct module *owner;
	struct RedisModuleString *hnext, *hprev;
};

/* One reply of RedisModule_Call(): parsed from the RESP2 bytes the command
 * answered; @raw keeps them for ReplyWithCallReply. */
struct RedisModuleCallReply {
	int type; /* REDISMODULE_REPLY_* */
	long long integer;
	const char *str; /* into raw */
	size_t len;	 /* string length, or number of elements */
	struct RedisModuleCallReply *elems;
	char *raw; /* the whole reply (top level owns it), else NULL */
	const char *rawp;
	size_t rawlen;
	int top;
};

/* RedisModuleKey: a key opened by a command; reads and writes run the
 * matching rcukv commands through the table (module_api.c). */
struct RedisModuleKey {
	struct RedisModuleCtx *ctx;
	struct RedisModuleString *name;
	int mode;
	char *dma; /* StringDMA's copy of the value, written back on close if dirty */
	size_t dmalen;
	int dirty;
	/* The box of the module value the key held when first asked (a
	 * reference of ours, module_type.c): KeyType, GetType and GetValue see
	 * one value for the key's life, whatever other workers do to the key
	 * meanwhile (DEL, RENAME, expiry are not module code and do not wait
	 * for the module lock). */
	struct mod_value *mv;
	/* module_keys.c: the sorted-set range being iterated (ZsetFirstIn*), or NULL */
	struct mod_zrange *zr;
};

/* What AutoMemory frees when the command returns. */
struct mod_auto {
	int kind; /* 1 string, 2 call reply, 3 key, 4 pool block */
	void *p;
};

/* A postponed array length (ReplyWithArray(ctx, REDISMODULE_POSTPONED_LEN)). */
struct mod_postponed {
	size_t at; /* bytes of the connection's unsent output before it */
	long long n;
};

/* RedisModuleCtx: the first member is what RedisModule_Init() reads. */
struct RedisModuleCtx {
	void *getapifuncptr;
	struct module *m;
	struct conn *c; /* the client of the command; NULL in OnLoad/OnUnload */
	const char *cmdname; /* the running command's name, lower case */
	int automem;
	struct mod_auto *autos;
	int nautos, cautos;
	struct mod_postponed post[32];
	int npost;
	jmp_buf *unimpl_jmp; /* where an unimplemented API call lands, or NULL */
	const char *unimpl_name;
	/* A blocked client's callback (module_block.c): MOD_CTX_BLOCKED_*,
	 * its handle, its private data, the key whose signal woke it. */
	int bflags;
	struct RedisModuleBlockedClient *bc;
	void *bprivdata;
	struct RedisModuleString *bready;
	/* A thread-safe context (module_block.c): MOD_TSC_LIVE from Get*ThreadSafeContext
	 * to FreeThreadSafeContext, MOD_TSC_FREED after (its memory is kept on
	 * a pool: a late call on it is refused, not a use after free); the
	 * blocked client it replies to (NULL: replies are dropped); the pool's
	 * or the live list's link (tsc_lock). */
	int tsc;
	struct RedisModuleBlockedClient *tsc_bc;
	struct RedisModuleCtx *tsc_next;
};
enum { MOD_TSC_LIVE = 1, MOD_TSC_FREED = 2 };
enum { MOD_CTX_BLOCKED_REPLY = 1, MOD_CTX_BLOCKED_TIMEOUT = 2, MOD_CTX_BLOCKED_DISCONNECTED = 4 };

/* One command a module created. */
struct mod_cmd {
	struct module *m;
	char *name; /* as given; the row's name */
	int (*func)(struct RedisModuleCtx *ctx, struct RedisModuleString **argv, int argc);
	unsigned flags; /* CMD_* */
	int first, last, step;
};

/* A module data type (RedisModule_CreateDataType; module_type.c).  Made in
 * the module's OnLoad, immutable after it, freed with its module (a module
 * that has one cannot unload, as in Redis). */
struct RedisModuleIO;
struct RedisModuleDigest;
struct RedisModuleType {
	uint64_t id; /* the 9 name characters, 6 bits each, then the encver's 10 */
	struct module *m;
	struct RedisModuleType *next; /* its module's list */
	struct RedisModuleType *gnext; /* every type (types_lock, module_type.c) */
	char name[10];
	void *(*rdb_load)(struct RedisModuleIO *io, int encver);
	void (*rdb_save)(struct RedisModuleIO *io, void *value);
	void (*aof_rewrite)(struct RedisModuleIO *io, struct RedisModuleString *key, void *value);
	size_t (*mem_usage)(const void *value);
	void (*digest)(struct RedisModuleDigest *md, void *value);
	void (*free)(void *value);
};

struct module {
	struct module *next; /* mod_lock */
	char *name;	     /* SetModuleAttribs; NULL until then */
	int ver;
	char *path;
	struct RedisModuleString **args; /* MODULE LIST's, as loaded */
	int nargs;
	void *handle;
	struct mod_cmd **cmds;
	int ncmds;
	/* Workers inside one of the module's functions now (seq_cst: the
	 * increment is ordered before the worker can go offline, which
	 * unload's grace period relies on; module.c). */
	_Atomic long in_calls;
	int ntimers; /* created and neither fired nor stopped (tm_lock, module.c) */
	struct RedisModuleDict *dicts; /* its dicts not freed (module_dict.c; under the
				      * module lock, as every module callback) */
	struct RedisModuleString *strings; /* the strings it holds (module_api.c; ditto) */
	struct RedisModuleType *types;	   /* its data types (set in OnLoad) */
	/* Blocked-client handles not yet freed (module_block.c): unload is
	 * refused while there is one, as Redis's. */
	_Atomic long nblocked;
	/* An RCU-scheme unload has taken its rows away: BlockClient refuses
	 * (a call in flight; its retry would find no row). */
	_Atomic int unloading;
};

/* The API tables (module_api.c, module_dict.c, module_type.c,
 * module_keys.c, module_block.c): a function by its full name. */
struct mod_api_fn {
	const char *name;
	void *fn;
};
#define MOD_API(n, f) {"RedisModule_" #n, (void *)(uintptr_t)(f)}
void *module_api_find(const struct mod_api_fn *t, size_t n, const char *name);

/* module_api.c */
/* RedisModule_GetApi: the function named @name ("RedisModule_X") into
 * *@out; REDISMODULE_ERR (1) for one rcukv does not implement, *@out then
 * set to a stub that fails the running command cleanly (docs/modules.md). */
int module_api_get(const char *name, void *out);
/* Make @ctx this thread's innermost (where an unimplemented call lands);
 * leave restores the one saved. */
void module_ctx_enter(struct RedisModuleCtx *ctx, struct RedisModuleCtx **saved);
void module_ctx_leave(struct RedisModuleCtx *saved);
/* Free what AutoMemory tracked, and the ctx's postponed state. */
void module_ctx_release(struct RedisModuleCtx *ctx);
struct RedisModuleString *module_string_new(struct RedisModuleCtx *ctx, const char *p, size_t n);
void module_string_free(struct RedisModuleCtx *ctx, struct RedisModuleString *s);
/* A string made for the running module (on its list, see above); and the
 * free, at @m's unload, of every string still on @m's list. */
struct RedisModuleString *module_string_made(struct RedisModuleCtx *ctx, const char *p, size_t n);
void module_strings_free_all(struct module *m);
/* What AutoMemory frees when the callback returns (module_api.c): add @p
 * of @kind (MOD_AUTO_*), or forget it (freed by the module itself). */
enum { MOD_AUTO_STRING = 1, MOD_AUTO_REPLY = 2, MOD_AUTO_KEY = 3, MOD_AUTO_POOL = 4,
       MOD_AUTO_DICT = 5 };
void module_auto_add(struct RedisModuleCtx *ctx, int kind, void *p);
void module_auto_forget(struct RedisModuleCtx *ctx, void *p);
/* module_dict.c: the Dict* API functions by full name (NULL: not one of
 * them), a dict's free, and the free of every dict @m made and kept (at
 * unload, once nothing runs the module: Redis leaves them leaked). */
struct RedisModuleDict;
void *module_dict_api(const char *name);
void module_dict_free(struct RedisModuleDict *d);
void module_dict_free_all(struct module *m);
/* module_api.c: this thread's innermost module context, or NULL. */
struct RedisModuleCtx *module_current_ctx(void);

/* module_type.c: the data type API functions by full name (NULL: not one
 * of them); the db hooks, registered by module_init(); the free of @m's
 * types (a failed load, exit); the frees the module lock held off, run by
 * its holder before it lets go (module.c's gil_leave()). */
void *module_type_api(const char *name);
void module_type_init(void);
void module_types_free(struct module *m);
/* The box of @k's module value (see RedisModuleKey.mv), or NULL; and the
 * release of the reference the key holds (CloseKey, DeleteKey). */
struct mod_value *module_key_box(struct RedisModuleKey *k);
void module_key_release(struct RedisModuleKey *k);
void module_values_reap(void);
int module_values_pending(void);

/* module_api.c: run "<cmd> <key> a[0..n)" for @k through the table (as
 * RedisModule_Call does); the reply is the caller's, freed with
 * module_reply_free().  The key's type as REDISMODULE_KEYTYPE_* (TYPE). */
struct RedisModuleCallReply *module_key_callv(struct RedisModuleKey *k, const char *cmd, int n,
					      const char *const *a, const size_t *al);
void module_reply_free(struct RedisModuleCallReply *r);
int module_key_type(struct RedisModuleKey *k);
/* module_keys.c: the list, hash and sorted-set calls on an open key by
 * full name (NULL: not one of them); the end of @k's range iteration
 * (CloseKey). */
void *module_keys_api(const char *name);
void module_zrange_stop(struct RedisModuleKey *k);

/* module_block.c: the blocked-client API functions by full name (NULL: not
 * one of them); the retry of a command a module blocked (1: it was one,
 * handled; 0: run the command); the close hook's registration; the free of
 * handles whose client went before the module unblocked them (under the
 * module lock). */
void *module_block_api(const char *name);
int module_block_retry(struct RedisModuleCtx *ctx, struct RedisModuleString **argv, int argc);
void module_block_init(void);
void module_block_reap(void);
/* The end of a module command on this thread: free the on-keys handles it
 * made but could not block (in EXEC, in a script).  Under the module lock. */
void module_block_after(void);
/* Where @ctx's replies go: its client, the reply buffer of a thread-safe
 * context's blocked client, or NULL (no client; a thread-safe context
 * without one drops them). */
struct conn *module_reply_conn(struct RedisModuleCtx *ctx);
/* MODULE UNLOAD frees @m: the thread-safe contexts still live that name it
 * forget it (their ctx->m becomes NULL).  Any thread (tsc_lock). */
void module_tsc_forget(struct module *m);

/* module.c */
/* Run @fn(ctx, @arg) for @m on this thread, under the module lock, in a
 * ctx of client @c (NULL: none) counted in @m's in_calls; an unimplemented
 * API call ends it. */
void module_callback(struct module *m, struct conn *c,
		     void (*fn)(struct RedisModuleCtx *ctx, void *arg), void *arg);
/* The module lock (Redis's GIL, see module.c): try it (1: taken, only when
 * this thread does not hold it), take it spinning online (a thread inside
 * ht_snapshot()), let it go. */
int module_gil_try(void);
void module_gil_spin(void);
/* Take it as a module command does (offline while it waits: a registered
 * thread, online, that holds no pointer the wait could free). */
void module_gil_enter(void);
void module_gil_leave(void);
/* Does this thread hold it (a module callback, or a locked thread-safe
 * context)? */
int module_gil_held(void);
/* ThreadSafeContextLock/TryLock/Unlock (any thread): take it, nested if
 * this thread holds it already; a thread that is not an online QSBR reader
 * (a module's own thread) is registered with the QSBR flavor once and is
 * online exactly while it holds the lock.  Trylock: 0, or -1 with errno
 * EBUSY (held by anyone, this thread too, as Redis's mutex).  Unlock: 0,
 * or -1 if this thread does not hold it (ignored). */
void module_tsc_lock(void);
int module_tsc_trylock(void);
int module_tsc_unlock(void);
/* RedisModule_CreateTimer/StopTimer: a timer on the event loop of the
 * calling client's worker.  Return its id, 0 without a client. */
unsigned long long module_timer_create(struct RedisModuleCtx *ctx, long long ms, void *cb,
				       void *data);
/* 0 and *@data (if @data) when @id is @ctx's module's and had not fired;
 * else 1. */
int module_timer_stop(struct RedisModuleCtx *ctx, unsigned long long id, void **data);
/* The handler every module command's row names (its priv: struct mod_cmd). */
void cmd_module_proc(struct conn *c, int argc);
/* INFO modules: @emit(@arg, line) for each loaded module, Redis's line
 * ("module:name=...,ver=...,api=1,filters=0,usedby=[],using=[],options=[]").
 * Worker (takes mod_lock the offline way) or main. */
void module_info(void (*emit)(void *arg, const char *line), void *arg);
/* Main thread at start-up, after cmd_init(): load the loadmodule lines.
 * A module that fails to load is fatal (exit 1), as in Redis. */
void module_init(void);
/* Main thread at exit, workers gone and the table's callbacks run: free
 * every module and dlclose() it (no OnUnload, as Redis at shutdown). */
void module_fini(void);

#endif /* SERVER_MODULE_H */
