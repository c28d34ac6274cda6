/*
 * db.h - the keyspace (db.c) and what the command files that work on it
 * (cmd_string.c, cmd_keys.c, cmd_expire.c) share.
 *
 * Context and RCU rules: the tables are created and freed by the main thread
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

/*
 * The databases (`databases`, 16 by default, fixed at start-up): slot i is
 * the table of db i.  Each slot is an RCU-protected pointer: SWAPDB
 * exchanges two of them (db_swap()), everything else only reads them.  A
 * command reads its connection's slot once, when dispatch starts it
 * (c->ht = db_at(c->db)), and works on that table to its end, so a command
 * never sees two tables for one db (docs/databases.md).  Tables are created
 * by db_init() and freed by db_fini(), never in between.
 */
extern struct ht *_Atomic *g_dbs;
extern int g_ndbs;

/* The table now in slot @i (0 <= i < g_ndbs).  Any thread. */
static inline struct ht *db_at(int i)
{
	return atomic_load_explicit(&g_dbs[i], memory_order_seq_cst); /* pairs with SWAPDB, db_swap() */
}

/* The running command's table: the one its connection's db had when
 * dispatch started it (or EXEC started the current atomic run). */
#define db_of(c) ((c)->ht)
/* Dispatch, before it runs a command (and EXEC before each atomic run):
 * read the connection's slot. */
#define db_pin(c) ((c)->ht = db_at(atomic_load_explicit(&(c)->db, memory_order_relaxed)))

void db_init(void);
void db_fini(void);
/* Argument @i as Redis's getIntFromObjectOrReply(): 0 and *id, or -1 with
 * @msg replied (NULL: Redis's own not-an-integer and int range errors). */
int db_get_int(struct conn *c, int i, const char *msg, int *id);
/* The same, then checked to be a database index (ERR_DB_RANGE). */
int db_get_index(struct conn *c, int i, int *id);
/* COPY ... DB: copy key 1 of the running command into key 2 of @dst
 * (another table than db_of(c)), and reply (cmd_db.c). */
void db_copy_to(struct conn *c, struct ht *dst, int replace);
/* SELECT: make db @id the connection's. */
void db_select(struct conn *c, int id);
/* SWAPDB: exchange slots @a and @b, then wait until every command that read
 * either slot before the swap has finished (server_wait_turns()).  Worker
 * @self, online, holding no entry and no stripe. */
void db_swap(struct worker *self, int a, int b);
/* Every slot's table at one moment (no SWAPDB half-seen): @out[g_ndbs]. */
void db_tables(struct ht **out);
/* The slot that holds table @ht now, or -1. */
int db_index_of(const struct ht *ht);
/* Sums over every database. */
unsigned long long db_size(void);
/* The keyspace of db @i for INFO: keys, keys with a TTL, average TTL. */
unsigned long long db_keys_of(int i);
unsigned long long db_expires_of(int i);
long long db_avg_ttl_of(int i);
unsigned long long db_expired_total(void);
size_t db_entry_bytes(void);
/* ht_stats() summed over every database (the counts and byte sizes). */
void db_stats_total(struct ht_stats *sum);
/* ht_reclaim_progress() summed over every database. */
void db_reclaim_progress(size_t *retired, size_t *freed);
/* Main thread's cron: Redis's active expiry cycle (fast and slow). */
void db_active_expire_cycle(void);
void db_expire_stats(double *stale_perc, unsigned long long *cap_reached,
		     unsigned long long *cpu_ms);
/* Warm the table for the keys of the commands a worker is about to run (bit
 * i of @for_write: key i is written): the server's conn_app prefetch (net.c,
 * called from conn.c's conn_prefetch_keys()).  Worker, online. */
void db_prefetch(struct conn *c, size_t n, const char *const keys[], const size_t klens[], uint32_t for_write);

/* ---------------------------------------------- for the command handlers */

/* Argument i of the running command as (pointer, length). */
#define K(i) ARGV(c, i), ARGL(c, i)
#define ERR_EXPIRE_FMT "invalid expire time in '%s' command"
#define ERR_INT_RANGE "value is out of range, value must between -2147483648 and 2147483647"
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
