/*
 * pubsub.h - Pub/Sub (pubsub.c): channels, patterns and shard channels,
 * their subscribers, and the delivery of published messages to connections
 * on any worker.  The commands are cmd_pubsub.c's; the design is
 * docs/pubsub.md.
 *
 * Threads: subscribe and unsubscribe run on the subscriber's own worker and
 * take one mutex (ps_lock, pubsub.c); PUBLISH runs on any worker and walks
 * the subscriber lists without a lock, inside the worker's QSBR read-side
 * section.  A subscriber on the publisher's worker gets the message in its
 * reply buffer at once; one on another worker gets it through that worker's
 * inbox (struct worker's ps_inbox, a lock-free MPSC stack) and an eventfd
 * wakeup, drained by pubsub_drain() on the owner.  Subscriptions, channels
 * and a closed client's mailbox are freed after a grace period.
 */
#ifndef SERVER_PUBSUB_H
#define SERVER_PUBSUB_H

#include <stddef.h>
#include <stdint.h>

struct conn;
struct worker;

/* What a subscription is to: the three namespaces Redis 7.0 keeps apart. */
enum ps_kind { PS_CHANNEL, PS_PATTERN, PS_SHARD, PS_NKINDS };

/*
 * pubsub_subscribe() - subscribe @c to @name (@len bytes) of @kind, unless it
 * already is, and reply the confirmation (["subscribe", name, count] and its
 * psubscribe/ssubscribe forms; a push in RESP3).  Context: @c's worker,
 * inside its command.
 */
void pubsub_subscribe(struct conn *c, enum ps_kind kind, const char *name, size_t len);

/*
 * pubsub_unsubscribe() - unsubscribe @c from @name of @kind if it is
 * subscribed, and reply the confirmation either way.  Context: as above.
 */
void pubsub_unsubscribe(struct conn *c, enum ps_kind kind, const char *name, size_t len);

/*
 * pubsub_unsubscribe_all() - unsubscribe @c from every subscription of
 * @kind, one confirmation each in subscription order, or one confirmation
 * with a null name when there was none.  Context: as above.
 */
void pubsub_unsubscribe_all(struct conn *c, enum ps_kind kind);

/*
 * pubsub_publish() - deliver @msg (@mlen bytes) on channel @ch (@chlen) of
 * @kind (PS_CHANNEL: its subscribers and every matching pattern's; PS_SHARD:
 * the shard channel's subscribers only), from connection @c's command, or
 * from no command (@c NULL: keyspace notifications of expiry and eviction;
 * every delivery then goes through the inboxes).
 * Context: any worker, or the main thread, online (QSBR read side); takes
 * no lock, never waits for a subscriber.  Return: the receivers (a client subscribed to the
 * channel and to two matching patterns counts three times, as in Redis).
 */
long long pubsub_publish(struct conn *c, enum ps_kind kind, const char *ch, size_t chlen,
			 const char *msg, size_t mlen);

/*
 * pubsub_reset() - RESET: drop every subscription of @c without replies;
 * @c leaves subscribed mode.  Context: @c's worker, inside its command.
 */
void pubsub_reset(struct conn *c);

/*
 * pubsub_conn_closed() - @c is closing: drop its subscriptions without
 * replies; its mailbox is freed after a grace period and after the last
 * message already queued for it.  Context: @c's worker, from conn_close().
 */
void pubsub_conn_closed(struct conn *c);

/*
 * Mailboxes for other modules (client tracking's invalidations).
 * pubsub_conn_opened(): @c gets its mailbox; before it is in the client
 * registry (client_register()), so a registered connection always has one.
 * pubsub_mailbox_hold(): a reference on @x's mailbox (NULL if it has none):
 * @x's own worker, or any thread under g_clients_lock while @x is registered.
 * pubsub_mailbox_drop(): put it back (any thread; NULL is fine).
 * pubsub_invalidate(): queue an invalidation of @key (NULL: every key, after
 * a flush) for @mb's connection, delivered on its worker after the command
 * running now (write_invalidate() says in which form).  Any thread; @mb held.
 * pubsub_mailbox_closed(): whether @mb's connection has closed (NULL: yes).
 * Any thread; @mb held.
 * pubsub_redir_broken(): queue Redis's push ["tracking-redir-broken", @id]
 * for @mb's connection, sent only if it speaks RESP3 when it arrives (a
 * tracking client whose REDIRECT target @id has gone).  Any thread; @mb held.
 */
struct ps_client;
void pubsub_conn_opened(struct conn *c);
struct ps_client *pubsub_mailbox_hold(struct conn *x);
void pubsub_mailbox_drop(struct ps_client *mb);
void pubsub_invalidate(struct ps_client *mb, const char *key, size_t klen);
int pubsub_mailbox_closed(struct ps_client *mb);
void pubsub_redir_broken(struct ps_client *mb, uint64_t id);

/*
 * pubsub_drain() - write the messages other workers queued for @w's
 * connections into their reply buffers (they leave at the end of the loop
 * turn).  Context: @w's thread, online; or the main thread once every worker
 * has stopped (then it only frees).
 */
void pubsub_drain(struct worker *w);
/* pubsub_drain() if @w's inbox holds anything: before each command, so a
 * message whose PUBLISH has replied (anywhere) reaches a subscriber before
 * the reply to the subscriber's next command, as in Redis. */
void pubsub_drain_pending(struct worker *w);

/*
 * Raw delivery, for other feeds that reach connections on any worker through
 * the same mailboxes and inboxes (MONITOR, monitor.c): bytes sent as they
 * are, in RESP2 and RESP3 alike.
 * pubsub_mailbox(): @c's mailbox, made at first use; its owner, online.
 *   It lives until pubsub_conn_closed(): a feed must drop its own pointer to
 *   it before that (and readers of that pointer be covered by RCU).
 * pubsub_raw_new(): a message of up to @len bytes, one reference, for the
 *   caller to fill (*@buf), pubsub_raw_trim() to the @len it filled before
 *   sending, and pubsub_raw_put() when done.
 * pubsub_raw_send(): append @m to @mb's connection now if @from's worker
 *   owns it, else queue it on the owner's inbox (in send order per
 *   sender; @from NULL, the server: always queued).  Any thread, online,
 *   inside a read-side section covering @mb.
 */
struct ps_client;
struct ps_msg;
struct ps_client *pubsub_mailbox(struct conn *c);
struct ps_msg *pubsub_raw_new(size_t len, char **buf);
void pubsub_raw_trim(struct ps_msg *m, size_t len);
void pubsub_raw_send(struct conn *from, struct ps_client *mb, struct ps_msg *m);
void pubsub_raw_put(struct ps_msg *m);

/* Main thread at exit, every worker joined, after rcu_barrier(): frees what
 * is still queued in any worker's inbox. */
void pubsub_fini(void);

/*
 * Introspection (PUBSUB, INFO, CLIENT LIST).  Any worker, online.
 * pubsub_reply_channels(): PUBSUB CHANNELS/SHARDCHANNELS: an array of the
 * active channels of @kind matching @pat (NULL: all).
 * pubsub_numsub(): the subscribers of channel @ch of @kind.
 * pubsub_count(): the active channels (or patterns) of @kind.
 */
void pubsub_reply_channels(struct conn *c, enum ps_kind kind, const char *pat, size_t plen);
long long pubsub_numsub(enum ps_kind kind, const char *ch, size_t len);
long long pubsub_count(enum ps_kind kind);

#endif /* SERVER_PUBSUB_H */
