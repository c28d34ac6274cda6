/*
 * db.h - the keyspace (db.c) and what the command files that work on it
 * (cmd_string.c, cmd_keys.c, cmd_expire.c) share.
 *
 * Context and RCU rules: the table is created and freed by the main thread
 * (db_init() before the workers start, db_fini() after they are joined).
 * In between, commands run on workers that are online QSBR readers: an
 * entry found by an *_rcu lookup stays valid until the worker's next
 * quiescent state, so a handler copies what it needs into the reply before
 * it returns and never keeps an entry pointer across commands.  Writers
 * serialize per stripe inside the table (ht.h); nothing here takes a lock.
 */
#ifndef SERVER_DB_H
#define SERVER_DB_H

#include "hashtable/ht.h"
#include "server/server.h"

#include <stddef.h>
#include <stdint.h>

struct conn;

/* The one table (db0).  Written only by db_init()/db_fini(). */
extern struct ht *g_db;

void db_init(void);
void db_fini(void);
struct ht *db_table(void);
size_t db_buckets(void);
unsigned long long db_size(void);
unsigned long long db_expires(void);
long long db_avg_ttl(void);
unsigned long long db_expired_total(void);
size_t db_entry_bytes(void);
/* Main thread's cron: Redis's active expiry cycle (fast and slow). */
void db_active_expire_cycle(void);
void db_expire_stats(double *stale_perc, unsigned long long *cap_reached,
		     unsigned long long *cpu_ms);
/* Warm the table for the keys of the commands a worker is about to run (bit
 * i of @for_write: key i is written): the server's conn_app prefetch (net.c,
 * called from conn.c's conn_prefetch_keys()).  Worker, online. */
void db_prefetch(size_t n, const char *const keys[], const size_t klens[], uint32_t for_write);

/* ---------------------------------------------- for the command handlers */

/* Argument i of the running command as (pointer, length). */
#define K(i) ARGV(c, i), ARGL(c, i)
#define ERR_EXPIRE_FMT "invalid expire time in '%s' command"
#define ERR_MAXSIZE "string exceeds maximum allowed size (proto-max-bulk-len)"

/* Count a keyspace hit or miss for INFO stats. */
void db_hit(struct conn *c, int found);
/* Reply for a negative errno from the table that no command expects:
 * -E2BIG (proto-max-bulk-len), -ENOMEM (-OOM), anything else. */
void db_reply_ht_err(struct conn *c, int rc);
/* Argument i as a strict 64-bit integer; else replies ERR_NOT_INT and
 * returns -1. */
int db_get_ll(struct conn *c, int i, long long *v);
/* Run @fn under ht_txn() on the keys at argument indexes argidx[0..n-1]:
 * every key's stripe locked, the writes published as one (ht.h). */
int db_run_txn(struct conn *c, size_t n, const int *argidx, ht_txn_fn fn, void *arg);

/* Reply an entry's value as a bulk string. */
void reply_entry_val(struct conn *c, const struct ht_entry *e);

/* Wrapping add, as Redis's int64 arithmetic on expiry times. */
static inline long long wrap_add(long long a, long long b)
{
	return (long long)((unsigned long long)a + (unsigned long long)b);
}

/* Count @n keys written by the running command (Redis's server.dirty); the
 * command's worker only. */
#define SRV_DIRTY(c, n) STAT_ADD((c)->w->st.dirty, (unsigned long long)(n))

#endif /* SERVER_DB_H */
