/*
 * script.h - Lua scripting (script.c): EVAL's engine.  Debian's Lua 5.1 (as
 * Redis embeds 5.1), one lua_State per worker thread, made at its first
 * script; the script cache (sha1 -> body) shared by every worker; the
 * conversions between RESP replies and Lua values; redis.call's bridge into
 * the command table.  The commands are cmd_script.c's.  docs/scripting.md
 * is the design.
 *
 * Concurrency: a worker's state is used by its own thread only.  The cache
 * has one mutex (cache_lock, nested inside nothing; held only to find, add
 * or flush a body, never while Lua runs).  SCRIPT KILL reads other workers'
 * run flags through atomics.  A script runs with the stripes of its KEYS
 * held (one ht_txn()), so lock-free readers on other workers see all of its
 * writes to those keys or none; a command on an undeclared key, on the whole
 * keyspace or on another db runs between two such atomic stretches.
 * Tested by tests/server/test_script.sh (cases_script.txt, a transfer
 * torture, test_script.py).
 */
#ifndef SERVER_SCRIPT_H
#define SERVER_SCRIPT_H

#include <stddef.h>

struct conn;
struct worker;

/* EVAL, EVALSHA, EVAL_RO, EVALSHA_RO: @sha for EVALSHA (argv[1]), @ro for
 * the _RO forms.  Replies once.  Context: the connection's worker, online;
 * not inside an ht_txn(). */
void script_eval(struct conn *c, int argc, int evalsha, int ro);
/* Whether the running command was called by a script (redis.call or
 * redis.pcall), as Redis's CLIENT_SCRIPT flag: SORT sorts a set then. */
int script_in_call(void);
/* SCRIPT LOAD: compile @body and cache it; replies the sha or the error. */
void script_load(struct conn *c, const char *body, size_t len);
/* SCRIPT EXISTS: whether sha @s (any case) is cached. */
int script_exists(const char *s, size_t len);
/* SCRIPT FLUSH: empty the cache; every worker drops its state at its next
 * script (its compiled functions with it).  Any thread. */
void script_flush(void);
/* SCRIPT KILL: 0 OK (a busy script that wrote nothing will stop), -1 none
 * busy (NOTBUSY), -2 the busy ones wrote (UNKILLABLE).  Any worker. */
int script_kill(void);
/* INFO memory: bytes the workers' Lua states use, the cache's count and bytes. */
void script_info(size_t *lua_bytes, size_t *nscripts, size_t *cache_bytes);
/* The worker stops: free its state.  Context: @w's own thread, last. */
void script_worker_fini(struct worker *w);
/* Shutdown, no worker left: free the cache. */
void script_fini(void);

#endif /* SERVER_SCRIPT_H */
