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
struct rdb_pair;

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

/* Replication (replm.c, set once at start-up before any worker runs):
 * @expired for every key removed because its time passed (under its stripe
 * mutex), @cycle_lock/@cycle_unlock around each batch of the active expiry
 * cycle (the main thread, online). */
struct db_repl_hooks {
	void (*expired)(int db, const void *key, size_t klen);
	void (*cycle_lock)(void);
	void (*cycle_unlock)(void);
};
void db_set_repl_hooks(const struct db_repl_hooks *h);
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
/* db_avg_ttl_reset() - db @i's avg_ttl back to 0, as Redis's emptying of a
 * db does (a flush, a replica's full sync: a replica runs no expiry cycle to
 * refresh it, so it then reports 0 as Redis's does).  Context: any thread. */
void db_avg_ttl_reset(int i);
unsigned long long db_expired_total(void);
size_t db_entry_bytes(void);
/* ht_stats() summed over every database (the counts and byte sizes). */
void db_stats_total(struct ht_stats *sum);
/* ht_reclaim_progress() summed over every database. */
void db_reclaim_progress(size_t *retired, size_t *freed);
/* Main thread's cron: Redis's active expiry cycle (fast and slow). */
void db_active_expire_cycle(void);
/* DEBUG SET-ACTIVE-EXPIRE: 0 stops db_active_expire_cycle() (relaxed). */
extern _Atomic int db_active_expire_enabled;
/*
 * Keys a client (not the master) wrote with a TTL on a writable replica
 * (replica-read-only no), Redis 7.0's slaveKeysWithExpire: the replica runs
 * no expiry cycle, and no master will send their DEL.
 * db_replica_key_written() - remember key @key of db @db if it now has a TTL.
 *   Context: a worker, after the write (no stripe mutex held).
 * db_replica_expire_cycle() - the main thread's cron on a replica: remove the
 *   remembered keys whose time passed (counted in expired_keys), forget those
 *   gone or without a TTL.
 * db_replica_keys_forget() - forget them all (a full sync, FLUSHALL).
 */
void db_replica_key_written(int db, const void *key, size_t klen);
void db_replica_expire_cycle(void);
void db_replica_keys_forget(void);
/* Redis's encoding of the string in @e: "int" (then *@ival, if not NULL,
 * is its value), "embstr" (up to 44 bytes) or "raw".  Any thread holding @e. */
const char *db_str_encoding(const struct ht_entry *e, long long *ival);
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

/* Count a keyspace hit or miss of argument @kidx's key for INFO stats (as
 * Redis's lookupKeyRead()); a miss is announced as "keymiss" (class m). */
void db_hit(struct conn *c, int kidx, int found);
/* The same for a key that is no argument (SORT's BY and GET patterns). */
void db_hit_key(struct conn *c, const void *key, size_t klen, int found);
/* Announce @event of class @type (notify.h) on argument @kidx's key in the
 * connection's database: call after the change is made. */
void db_notify(struct conn *c, int type, const char *event, int kidx);
/* Reply for a negative errno from the table that no command expects:
 * -E2BIG (proto-max-bulk-len), -ENOMEM (-OOM), anything else. */
void db_reply_ht_err(struct conn *c, int rc);
/* Argument i as a strict 64-bit integer; else replies ERR_NOT_INT and
 * returns -1. */
int db_get_ll(struct conn *c, int i, long long *v);
/* Argument i as a SCAN cursor (Redis's parseScanCursorOrReply()); else
 * replies "invalid cursor" and returns -1. */
int db_scan_cursor(struct conn *c, int i, unsigned long long *cursor);
/* SCAN's options COUNT n and MATCH pattern at argument @j (of @argc),
 * as Redis's scanGenericCommand(): 1 consumed (two arguments; a MATCH of
 * "*" sets *@pat NULL), 0 not one of them, -1 after an error reply. */
int db_scan_opt(struct conn *c, int j, int argc, long long *count, const char **pat,
		size_t *plen);
/* HSCAN's and SSCAN's options from argument @j on: db_scan_opt() for each,
 * ERR_SYNTAX for anything else; 0, or -1 after an error reply. */
int db_scan_opts(struct conn *c, int j, int argc, long long *count, const char **pat,
		 size_t *plen);
/* HSCAN's and SSCAN's reply: cursor @next, then the elements of @it[@n]
 * (a field and its value, or a member when b is NULL) that match @pat
 * (NULL: all). */
struct hv_scan_item;
void db_scan_reply(struct conn *c, uint64_t next, const struct hv_scan_item *it, size_t n,
		   const char *pat, size_t plen);

/* Run @fn under ht_txn() on the keys at argument indexes argidx[0..n-1]:
 * every key's stripe locked, the writes published as one (ht.h). */
int db_run_txn(struct conn *c, size_t n, const int *argidx, ht_txn_fn fn, void *arg);

/*
 * Value types (docs/types.md).  A string is an untagged entry (its value is
 * the bytes); any other type is tagged (HT_VAL_TAGGED) and its value starts
 * with the type byte: Redis's OBJ_* numbers.
 */
#define OBJ_STRING 0
#define OBJ_LIST 1
#define OBJ_SET 2
#define OBJ_ZSET 3
#define OBJ_HASH 4
/* A module data type's value (docs/modules.md, "Data types"): a 24-byte
 * header stored with HT_VAL_TAGGED | HT_VAL_EXTERN, [u8 OBJ_MODULE][7 bytes
 * 0][pointer to the module layer's value][u64 external bytes].  The db layer
 * never looks behind the pointer: it calls the hooks below. */
#define OBJ_MODULE 5
#define DB_MODULE_HDR 24
#define DB_MODULE_VLEN ((size_t)DB_MODULE_HDR | HT_VAL_TAGGED | HT_VAL_EXTERN)

struct rdb_writer;
struct rdb_module_in;
/* What the module layer (module_type.c, layer 7) does for a module value,
 * registered once at start-up before any worker runs (db_set_module_hooks()):
 * @dup takes one more reference for a copy of the entry, @free drops one
 * (the last frees the value through its type's free callback, under the
 * module lock; the table calls it after the entry's grace periods), both
 * any thread, no lock held that the module lock nests inside, never
 * blocking; @type_name is TYPE's answer (the type's 9-char name; any
 * thread holding the entry); @save writes the whole RDB record (@expire_ms
 * -1: none); @dump makes the DUMP payload (0 or -errno; -ENOTSUP: the type
 * cannot be saved); @mem is MEMORY USAGE's part for the value. */
struct db_module_hooks {
	void (*dup)(const void *val);
	void (*free)(const void *val);
	const char *(*type_name)(const void *val);
	int (*save)(struct rdb_writer *w, const void *key, size_t klen, const void *val,
		    int64_t expire_ms);
	int (*dump)(const void *val, int compress, void **out, size_t *outlen);
	size_t (*mem)(const void *val);
	/* Loading (RDB, RESTORE): the value of type @id read from @in into the
	 * DB_MODULE_HDR bytes at @hdr (the entry that stores it owns the
	 * reference; else db_mod_hooks.free(@hdr)); 0, or -errno with @err
	 * set to Redis's message. */
	int (*load)(uint64_t id, struct rdb_module_in *in, void *hdr, char *err, size_t errlen);
};
void db_set_module_hooks(const struct db_module_hooks *h);
extern struct db_module_hooks db_mod_hooks;
/* The table's extern hooks for every external value (lists, module values),
 * and what RENAME/COPY/MOVE call around storing a copy of @e. */
void db_entry_dup(void *arg, const struct ht_entry *e);
void db_entry_free(void *arg, const struct ht_entry *e);
/* TYPE's answer for entry @e: db_type_name(), or a module type's name. */
const char *db_entry_type_name(const struct ht_entry *e);

static inline int db_type(const struct ht_entry *e)
{
	return ht_entry_tagged(e) ? *(const unsigned char *)ht_entry_val(e) : OBJ_STRING;
}

/* hash-max-listpack-entries, and whether a field or value of @n bytes fits
 * hash-max-listpack-value: past either a hash is hashtable-encoded. */
long long db_hash_lp_entries(void);
int db_hash_lp_fits(size_t n);
/* Hash @e's fields and values in order, pointing into @e (valid while @e
 * is); *@n of them.  The caller frees the array. */
struct rdb_pair *db_hash_pairs(const struct ht_entry *e, size_t *n);
/* A hash value (hval.h) holding @p[@n] in order, encoded as the thresholds
 * say, malloc()ed into *@out (*@outlen bytes; store it with HT_VAL_TAGGED):
 * 0, or -1 when @n is 0 or two fields are equal. */
int db_hash_build(const struct rdb_pair *p, size_t n, void **out, size_t *outlen);
/* zset-max-listpack-entries, and whether a member of @n bytes fits
 * zset-max-listpack-value: past either a sorted set is skiplist-encoded. */
long long db_zset_lp_entries(void);
int db_zset_lp_fits(size_t n);
/* Sorted set @e's elements in order, pointing into @e (valid while @e
 * is); *@n of them.  The caller frees the array. */
struct rdb_zel;
struct rdb_zel *db_zset_elems(const struct ht_entry *e, size_t *n);
/* A sorted set value (zval.h) holding @z[@n] (any order), encoded as the
 * thresholds say (@lp: it came as a listpack or ziplist, and only the
 * entries threshold counts, as Redis loads those), malloc()ed into *@out
 * (*@outlen bytes; store it with HT_VAL_TAGGED): 0, or -1 when @n is 0, two
 * members are equal or the value would pass HT_MAX_VAL_LEN. */
int db_zset_build(const struct rdb_zel *z, size_t n, int lp, void **out, size_t *outlen);
/* HRANDFIELD/ZRANDMEMBER key count [@with]: count (argument 2) and the
 * option (argument 3) checked as Redis 7.0 checks them: 0 with *@l and
 * *@withp, or -1 after an error reply. */
int db_rand_count_args(struct conn *c, int argc, const char *with, long long *l, int *withp);
/* A random number (xorshift, per thread, seeded from the clock). */
uint64_t db_rand64(void);
/* List @e's elements in order as p[i].f/fl, pointing into its chunks (valid
 * while @e is); *@n of them.  The caller frees the array. */
struct rdb_pair *db_list_elems(const struct ht_entry *e, size_t *n);
/* A list value holding @p[@n].f/fl in order (@n >= 1), written into @hdr
 * (LV_HDR bytes: store it with LV_VLEN, lval.h); the entry that stores it
 * owns the reference.  If it is not stored, db_list_drop(@hdr). */
void db_list_build(const struct rdb_pair *p, size_t n, void *hdr);
void db_list_drop(const void *hdr);
/* A key written whole (RENAME, COPY, MOVE, RESTORE, a ZSET STORE): if it
 * now holds a list or a sorted set, wake a client blocked on it (block.h).
 * Worker, online. */
void db_signal_if_list(struct ht *ht, const void *key, size_t klen);
/* TYPE's name of type @t ("string", "hash", ...). */
const char *db_type_name(int t);
/* OBJECT ENCODING's name of @e's value. */
const char *db_encoding(const struct ht_entry *e);
/* 1 if @e is NULL or a string; else reply WRONGTYPE and return 0. */
int db_is_str(struct conn *c, const struct ht_entry *e);
/* A read-modify-write callback's "wrong type" (db_reply_ht_err() answers
 * WRONGTYPE for it). */
#define DB_EWRONGTYPE 1100
/* COPY of a module value whose type has no copy callback (Redis's
 * moduleTypeDupOrReply()): the error, and an rmw callback's code for it. */
#define ERR_MODULE_NOCOPY "-ERR not supported for this module key"
#define DB_ENOCOPY 1101

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
