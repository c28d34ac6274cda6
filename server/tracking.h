/*
 * tracking.h - client-side caching (tracking.c): CLIENT TRACKING's state,
 * the table of keys each tracking client may hold in its cache, and the
 * invalidations sent when those keys change.  The CLIENT subcommands are
 * cmd_tracking.c's; the design is docs/tracking.md.
 *
 * Context: every function but tracking_touched() runs on the connection's
 * own worker, online as a QSBR reader.  tracking_touched() is the table's
 * watch hook (via db.c): any thread that writes a key, under the key's
 * stripe mutex.  tracking.c's mutex (trk_lock) nests inside stripe mutexes
 * and g_clients_lock is never taken under it.
 */
#ifndef SERVER_TRACKING_H
#define SERVER_TRACKING_H

#include <stddef.h>
#include <stdint.h>

struct conn;
struct ht;

/* CLIENT TRACKING options (Redis's CLIENT_TRACKING_* flags). */
#define TRK_ON 0x1
#define TRK_BCAST 0x2
#define TRK_OPTIN 0x4
#define TRK_OPTOUT 0x8
#define TRK_NOLOOP 0x10

/* At db_init(): @watch_all(+1/-1) switches ht_watch_all() on every
 * database's table, whose changes invalidate. */
void tracking_init(void (*watch_all)(int delta));

/*
 * tracking_on() - CLIENT TRACKING ON with @opts (TRK_*), invalidations to
 * client @redir (0: to @c itself) and, with TRK_BCAST, the @np prefixes
 * @pfx/@plen.  Checks what Redis checks, in its order; returns NULL, or the
 * error to reply (in @err, @errlen bytes).  The first client to turn it on
 * waits for a grace period (ht_watch_all()).
 */
const char *tracking_on(struct conn *c, unsigned opts, uint64_t redir, const char *const *pfx,
			const size_t *plen, int np, char *err, size_t errlen);
/* CLIENT TRACKING OFF, RESET, and the close. */
void tracking_off(struct conn *c);

/* TRK_* of @c, 0 when it does not track; the connection's worker. */
unsigned tracking_flags(const struct conn *c);
/* CLIENT TRACKINGINFO's broken_redirect: an invalidation found @c's
 * REDIRECT target gone since tracking was last turned on.  @c's worker. */
int tracking_broken(const struct conn *c);
/* CLIENT GETREDIR: -1 when not tracking, else the redirect (0: none). */
long long tracking_redirect(const struct conn *c);
/* CLIENT TRACKINGINFO's prefixes: @c's @i-th of tracking_nprefixes(c). */
int tracking_nprefixes(const struct conn *c);
const char *tracking_prefix(const struct conn *c, int i, size_t *len);

/* Before a command runs for @c: if it only reads (@reads), remember its keys
 * (arguments @first..@last by @step; @first 0: none), in default mode and
 * as CLIENT CACHING says in OPTIN/OPTOUT; and set the client NOLOOP
 * compares with.  After it: CLIENT CACHING lasts one command (or one
 * transaction) unless @keep_caching (a CLIENT subcommand, inside MULTI), as
 * Redis's resetClient(). */
void tracking_before(struct conn *c, int reads, int first, int last, int step);
void tracking_after(struct conn *c, int keep_caching);
/* Whether a client with this id is connected (CLIENT TRACKING REDIRECT). */
int tracking_client_exists(uint64_t id);

/* The watch hook's half (db.c): @key changed. */
void tracking_touched(const void *key, size_t klen);
/* FLUSHDB/FLUSHALL: every tracking client is told that all keys changed. */
void tracking_flushed(void);

/* INFO: tracking_clients, tracking_total_keys / _items / _prefixes. */
void tracking_stats(long long *clients, long long *keys, long long *items, long long *prefixes);

#endif /* SERVER_TRACKING_H */
