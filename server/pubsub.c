/*
 * pubsub.c - Pub/Sub state and delivery (pubsub.h; design: docs/pubsub.md).
 *
 * Three namespaces (enum ps_kind): channels, patterns, shard channels.  Each
 * has a fixed hash of struct ps_chan (one per name with at least one
 * subscriber), and each ps_chan an RCU list of struct ps_sub, one per
 * subscribed client, in subscription order.  Patterns are also on one RCU
 * list (ps_patterns) that PUBLISH walks.  A client's mailbox (struct
 * ps_client) lists its subscriptions in subscription order.
 *
 * Locking: ps_lock serialises every change (subscribe, unsubscribe, close);
 * it nests inside nothing and nothing is taken under it.  PUBLISH and the
 * introspection read the hashes and lists lock-free inside the worker's QSBR
 * read-side section; a removed ps_sub or ps_chan is freed by call_rcu().
 *
 * Delivery: a message is encoded once per channel (and once per matching
 * pattern) into a refcounted struct ps_msg in its RESP2 form; RESP3 differs
 * only in the first byte ('>' for '*').  A subscriber owned by the
 * publisher's worker gets it appended at once (so a client that publishes to
 * itself sees the message before PUBLISH's reply, as in Redis).  Any other
 * gets a struct ps_delivery pushed onto its worker's inbox, and the worker is
 * woken when the inbox was empty; the owner drains the inbox in push order,
 * so messages from one publisher keep their order.  Nothing ever waits for a
 * subscriber: a slow one fills its own reply buffer until the pubsub output
 * limit closes it (conn.c).
 *
 * Mailbox lifetime: a mailbox is referenced by its connection (one ref, held
 * until a grace period after the close) and by each delivery in flight.  A
 * publisher takes a delivery's ref inside its read-side section, so the
 * mailbox cannot be freed under it; the owner drops the ref when it drains
 * the delivery.  mb->conn is NULL once the connection closed; only the
 * owner worker reads or writes it.
 */
#define RCU_FLAVOR_QSBR
#include "rcu/rcu.h"
#include "rcu/rculist.h"
#include "resp/resp.h"
#include "server/conn.h"
#include "server/pubsub.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PS_BUCKETS 4096 /* per kind; chains grow past that, see docs/pubsub.md */

struct ps_chan {
	struct hlist_node hnode; /* in its kind's bucket (RCU) */
	struct list_head pnode;	 /* PS_PATTERN: on ps_patterns (RCU) */
	struct list_head subs;	 /* struct ps_sub.node (RCU), subscription order */
	_Atomic long nsubs;	 /* written under ps_lock */
	enum ps_kind kind;
	struct rcu_head rcu;
	size_t len;
	char name[];
};

struct ps_client;

struct ps_sub {
	struct list_head node; /* on chan->subs (RCU) */
	struct ps_chan *chan;
	struct ps_client *mb;
	struct rcu_head rcu;
};

struct ps_client {
	struct conn *conn;  /* owner worker only; NULL once closed */
	struct worker *w;   /* the owner, fixed */
	_Atomic long refs;  /* the connection's + one per delivery in flight */
	_Atomic int closed; /* its connection has closed (any thread may look) */
	struct ps_sub **subs; /* every kind, subscription order; ps_lock */
	int nsubs, cap;
	int count[PS_NKINDS]; /* ps_lock; mirrored in conn->ps_count */
	struct rcu_head rcu;
};

struct ps_msg {
	_Atomic long refs;
	int invalidate; /* client tracking: buf is the keys' array (len 0: all keys) */
	int push3;	/* a RESP3 push, sent as it is to RESP3 connections only */
	size_t len;
	int raw;    /* pubsub_raw_new(): the same bytes in RESP3 */
	char buf[]; /* the RESP2 array; RESP3 sends '>' for buf[0] */
};

struct ps_delivery {
	struct ps_delivery *next;
	struct ps_msg *msg;
	struct ps_client *mb;
};

static pthread_mutex_t ps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hlist_head ps_hash[PS_NKINDS][PS_BUCKETS];
static LIST_HEAD(ps_patterns);
static _Atomic long ps_nchans[PS_NKINDS]; /* written under ps_lock */

/* The confirmation and message names of each kind. */
static const char *const sub_word[PS_NKINDS] = {"subscribe", "psubscribe", "ssubscribe"};
static const char *const unsub_word[PS_NKINDS] = {"unsubscribe", "punsubscribe",
						   "sunsubscribe"};

/* ------------------------------------------------------------- lookup */

/* Redis's stringmatchlen(): util_glob_match() but for the empty string,
 * which Redis matches with the empty pattern only ("*" does not). */
static int ps_glob(const char *pat, size_t plen, const char *s, size_t slen)
{
	return slen ? util_glob_match(pat, plen, s, slen, 0) : plen == 0;
}

static struct hlist_head *bucket(enum ps_kind kind, const char *name, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
	return &ps_hash[kind][h & (PS_BUCKETS - 1)];
}

/* The channel @name of @kind, or NULL.  Read side or ps_lock. */
static struct ps_chan *chan_find(enum ps_kind kind, const char *name, size_t len)
{
	struct ps_chan *ch;

	hlist_for_each_entry_rcu(ch, bucket(kind, name, len), hnode)
		if (ch->len == len && !memcmp(ch->name, name, len))
			return ch;
	return NULL;
}

/* The index in mb->subs of @mb's subscription to @ch (*@out), or -1.  A
 * channel with fewer subscribers than @mb has subscriptions is searched
 * first, so a miss costs the shorter list.  ps_lock. */
static int sub_index(struct ps_client *mb, struct ps_chan *ch, struct ps_sub **out)
{
	if (atomic_load_explicit(&ch->nsubs, memory_order_relaxed) < mb->nsubs) {
		struct ps_sub *s;
		int found = 0;

		list_for_each_entry(s, &ch->subs, node)
			found |= s->mb == mb;
		if (!found)
			return -1;
	}
	for (int i = 0; i < mb->nsubs; i++)
		if (mb->subs[i]->chan == ch) {
			*out = mb->subs[i];
			return i;
		}
	return -1;
}

/* ------------------------------------------------------------ changes */

static void free_rcu_sub(struct rcu_head *h)
{
	free(container_of(h, struct ps_sub, rcu));
}

static void free_rcu_chan(struct rcu_head *h)
{
	free(container_of(h, struct ps_chan, rcu));
}

struct ps_client *pubsub_mailbox(struct conn *c)
{
	if (!c->ps) {
		struct ps_client *mb = xcalloc(1, sizeof(*mb));

		mb->conn = c;
		mb->w = c->w;
		atomic_init(&mb->refs, 1);
		c->ps = mb;
	}
	return c->ps;
}

/* Mirror @mb's counts into its connection (CLIENT LIST, CONN_PUBSUB). */
static void publish_counts(struct conn *c, struct ps_client *mb)
{
	int total = 0;

	for (int k = 0; k < PS_NKINDS; k++) {
		atomic_store_explicit(&c->ps_count[k], mb->count[k], memory_order_relaxed);
		total += mb->count[k];
	}
	if (total)
		c->flags |= CONN_PUBSUB;
	else
		c->flags &= ~CONN_PUBSUB;
}

/* Add @mb to channel @name of @kind.  ps_lock.  Return 0 if it already was. */
static int sub_add(struct ps_client *mb, enum ps_kind kind, const char *name, size_t len)
{
	struct ps_chan *ch = chan_find(kind, name, len);
	struct ps_sub *s;

	if (ch && sub_index(mb, ch, &s) >= 0)
		return 0;
	if (!ch) {
		ch = xmalloc(sizeof(*ch) + len + 1);
		INIT_LIST_HEAD(&ch->subs);
		atomic_init(&ch->nsubs, 0);
		ch->kind = kind;
		ch->len = len;
		memcpy(ch->name, name, len);
		ch->name[len] = '\0';
		hlist_add_head_rcu(&ch->hnode, bucket(kind, name, len));
		if (kind == PS_PATTERN)
			list_add_tail_rcu(&ch->pnode, &ps_patterns);
		atomic_store_explicit(&ps_nchans[kind], ps_nchans[kind] + 1, memory_order_relaxed);
	}
	s = xmalloc(sizeof(*s));
	s->chan = ch;
	s->mb = mb;
	list_add_tail_rcu(&s->node, &ch->subs);
	atomic_store_explicit(&ch->nsubs, ch->nsubs + 1, memory_order_relaxed);
	if (mb->nsubs == mb->cap) {
		mb->cap = mb->cap ? mb->cap * 2 : 8;
		mb->subs = xrealloc(mb->subs, (size_t)mb->cap * sizeof(*mb->subs));
	}
	mb->subs[mb->nsubs++] = s;
	mb->count[kind]++;
	return 1;
}

/* Take @s off its channel (and the channel off its hash when it was the
 * last), both freed after a grace period.  The caller drops it from
 * mb->subs.  ps_lock. */
static void sub_remove(struct ps_sub *s)
{
	struct ps_chan *ch = s->chan;

	list_del_rcu(&s->node);
	s->mb->count[ch->kind]--;
	atomic_store_explicit(&ch->nsubs, ch->nsubs - 1, memory_order_relaxed);
	if (ch->nsubs == 0) {
		hlist_del_rcu(&ch->hnode);
		if (ch->kind == PS_PATTERN)
			list_del_rcu(&ch->pnode);
		atomic_store_explicit(&ps_nchans[ch->kind], ps_nchans[ch->kind] - 1,
				      memory_order_relaxed);
		call_rcu(&ch->rcu, free_rcu_chan);
	}
	call_rcu(&s->rcu, free_rcu_sub);
}

/* The count a confirmation of @kind carries: shard channels are counted
 * apart, channels and patterns together (Redis's clientSubscriptionsCount). */
static int confirm_count(const struct ps_client *mb, enum ps_kind kind)
{
	if (!mb)
		return 0;
	if (kind == PS_SHARD)
		return mb->count[PS_SHARD];
	return mb->count[PS_CHANNEL] + mb->count[PS_PATTERN];
}

/* [word, name or null, count], a push in RESP3. */
static void confirm(struct conn *c, const char *word, const char *name, size_t len, int count)
{
	reply_push(c, 3);
	reply_bulk_str(c, word);
	if (name)
		reply_bulk(c, name, len);
	else
		reply_null(c);
	reply_int(c, count);
}

void pubsub_subscribe(struct conn *c, enum ps_kind kind, const char *name, size_t len)
{
	struct ps_client *mb = pubsub_mailbox(c);

	pthread_mutex_lock(&ps_lock);
	sub_add(mb, kind, name, len);
	pthread_mutex_unlock(&ps_lock);
	publish_counts(c, mb);
	confirm(c, sub_word[kind], name, len, confirm_count(mb, kind));
}

void pubsub_unsubscribe(struct conn *c, enum ps_kind kind, const char *name, size_t len)
{
	struct ps_client *mb = c->ps;

	if (mb) {
		struct ps_chan *ch;
		struct ps_sub *s;
		int i;

		pthread_mutex_lock(&ps_lock);
		ch = chan_find(kind, name, len);
		if (ch && (i = sub_index(mb, ch, &s)) >= 0) {
			sub_remove(s);
			memmove(mb->subs + i, mb->subs + i + 1,
				(size_t)(mb->nsubs - i - 1) * sizeof(*mb->subs));
			mb->nsubs--;
		}
		pthread_mutex_unlock(&ps_lock);
		publish_counts(c, mb);
	}
	confirm(c, unsub_word[kind], name, len, confirm_count(mb, kind));
}

/* Remove every subscription of @kind (PS_NKINDS: all), keeping the others
 * in order; confirm each when @c is given.  ps_lock.  Return how many. */
static int remove_kind(struct ps_client *mb, enum ps_kind kind, struct conn *c)
{
	int kept = 0, n = 0;

	for (int i = 0; i < mb->nsubs; i++) {
		struct ps_sub *s = mb->subs[i];
		struct ps_chan *ch = s->chan;

		if (kind != PS_NKINDS && ch->kind != kind) {
			mb->subs[kept++] = s;
			continue;
		}
		sub_remove(s); /* ch lives until a grace period: read it now */
		n++;
		if (c)
			confirm(c, unsub_word[kind], ch->name, ch->len, confirm_count(mb, kind));
	}
	mb->nsubs = kept;
	return n;
}

void pubsub_unsubscribe_all(struct conn *c, enum ps_kind kind)
{
	struct ps_client *mb = c->ps;
	int n = 0;

	if (mb) {
		pthread_mutex_lock(&ps_lock);
		n = remove_kind(mb, kind, c);
		pthread_mutex_unlock(&ps_lock);
		publish_counts(c, mb);
	}
	if (n == 0)
		confirm(c, unsub_word[kind], NULL, 0, confirm_count(mb, kind));
}

static void mb_put(struct ps_client *mb)
{
	if (atomic_fetch_sub_explicit(&mb->refs, 1, memory_order_acq_rel) == 1) {
		free(mb->subs);
		free(mb);
	}
}

static void mb_put_rcu(struct rcu_head *h)
{
	mb_put(container_of(h, struct ps_client, rcu));
}

void pubsub_conn_opened(struct conn *c)
{
	(void)pubsub_mailbox(c);
}

struct ps_client *pubsub_mailbox_hold(struct conn *x)
{
	struct ps_client *mb = x->ps;

	if (mb)
		atomic_fetch_add_explicit(&mb->refs, 1, memory_order_relaxed);
	return mb;
}

void pubsub_mailbox_drop(struct ps_client *mb)
{
	if (mb)
		mb_put(mb);
}

void pubsub_reset(struct conn *c)
{
	struct ps_client *mb = c->ps;

	if (!mb)
		return;
	pthread_mutex_lock(&ps_lock);
	remove_kind(mb, PS_NKINDS, NULL);
	pthread_mutex_unlock(&ps_lock);
	publish_counts(c, mb);
}

void pubsub_conn_closed(struct conn *c)
{
	struct ps_client *mb = c->ps;

	if (!mb)
		return;
	pubsub_reset(c);
	mb->conn = NULL;
	atomic_store_explicit(&mb->closed, 1, memory_order_relaxed);
	c->ps = NULL;
	/* publishers may still hold @mb from a list walk: drop the
	 * connection's ref only after they all left their read sides */
	call_rcu(&mb->rcu, mb_put_rcu);
}

/* ----------------------------------------------------------- delivery */

static void msg_put(struct ps_msg *m)
{
	if (m && atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) == 1)
		free(m);
}

/* Append "$<n>\r\n<p>\r\n" at @d; return the bytes written. */
static size_t put_bulk(char *d, const char *p, size_t n)
{
	size_t o = 0;

	d[o++] = '$';
	o += resp_ll2str(d + o, (long long)n);
	d[o++] = '\r';
	d[o++] = '\n';
	memcpy(d + o, p, n);
	o += n;
	d[o++] = '\r';
	d[o++] = '\n';
	return o;
}

/* One message as Redis sends it: [kind, (pattern,) channel, payload]. */
static struct ps_msg *msg_new(const char *word, const struct ps_chan *pat, const char *ch,
			      size_t chlen, const char *msg, size_t mlen)
{
	size_t cap = 4 + 4 * 26 + strlen(word) + chlen + mlen + (pat ? pat->len : 0);
	struct ps_msg *m = xmalloc(sizeof(*m) + cap);
	char *d = m->buf;

	atomic_init(&m->refs, 1);
	m->raw = 0;
	m->invalidate = 0;
	m->push3 = 0;
	memcpy(d, pat ? "*4\r\n" : "*3\r\n", 4);
	d += 4;
	d += put_bulk(d, word, strlen(word));
	if (pat)
		d += put_bulk(d, pat->name, pat->len);
	d += put_bulk(d, ch, chlen);
	d += put_bulk(d, msg, mlen);
	m->len = (size_t)(d - m->buf);
	return m;
}

/*
 * A client-tracking invalidation, as Redis's sendTrackingMessage(): a RESP3
 * push ["invalidate", keys], or for a RESP2 connection in subscribed mode
 * (a REDIRECT target) a message on __redis__:invalidate; nothing for any
 * other RESP2 connection.  keys is null after a flush.
 */
static void write_invalidate(struct conn *c, const struct ps_msg *m)
{
	static const char push[] = ">2\r\n$10\r\ninvalidate\r\n";
	static const char msg[] = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n";

	if (c->resp == 3)
		reply_raw(c, push, sizeof(push) - 1);
	else if (c->flags & CONN_PUBSUB)
		reply_raw(c, msg, sizeof(msg) - 1);
	else
		return;
	if (m->len)
		reply_raw(c, m->buf, m->len);
	else
		reply_null(c);
	conn_output_added(c);
}

/* Append @m to the open connection @c.  Owner worker. */
static void write_msg(struct conn *c, const struct ps_msg *m)
{
	if (c->flags & (CONN_CLOSE_AFTER_REPLY | CONN_CLOSE_ASAP))
		return;
	/* CLIENT REPLY OFF/SKIP drop MONITOR's lines; pub/sub messages and
	 * invalidations go out anyway (Redis's CLIENT_PUSHING) */
	if (m->raw && (c->flags & (CONN_REPLY_OFF | CONN_REPLY_SKIP)))
		return;
	if (m->invalidate) {
		write_invalidate(c, m);
		return;
	}
	if (m->push3) {
		if (c->resp == 3) {
			reply_raw(c, m->buf, m->len);
			conn_output_added(c);
		}
		return;
	}
	if (c->resp == 3 && !m->raw) {
		reply_raw(c, ">", 1);
		reply_raw(c, m->buf + 1, m->len - 1);
	} else {
		reply_raw(c, m->buf, m->len);
	}
	conn_output_added(c);
}

/* Queue @m for @mb on its worker; wake the worker if its inbox was empty
 * (otherwise a wakeup is already on its way and the drain takes this one
 * too).  Read side: @mb is alive until a grace period after its close. */
static void push_remote(struct ps_client *mb, struct ps_msg *m)
{
	struct ps_delivery *d = xmalloc(sizeof(*d));
	struct worker *w = mb->w;
	struct ps_delivery *old;

	atomic_fetch_add_explicit(&mb->refs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
	d->msg = m;
	d->mb = mb;
	old = atomic_load_explicit(&w->ps_inbox, memory_order_relaxed);
	do
		d->next = old;
	while (!atomic_compare_exchange_weak_explicit(&w->ps_inbox, &old, d, memory_order_release,
						      memory_order_relaxed));
	if (!old)
		server_wake_worker(w);
}

/* @m to @mb: appended now when @from's worker owns it, else queued. */
void pubsub_raw_send(struct conn *from, struct ps_client *mb, struct ps_msg *m)
{
	if (!from || mb->w != from->w) /* @from NULL: the server (expiry, eviction) */
		push_remote(mb, m);
	else if (mb->conn) /* ours: mb->conn is ours to read */
		write_msg(mb->conn, m);
}

/* Deliver to every subscriber of @ch; @m is made on first need and put by
 * the caller.  Return the receivers. */
static long long fan_out(struct conn *pub, struct ps_chan *ch, struct ps_msg **m,
			 const char *word, const struct ps_chan *pat, const char *name,
			 size_t len, const char *msg, size_t mlen)
{
	struct ps_sub *s;
	long long n = 0;

	list_for_each_entry_rcu(s, &ch->subs, node) {
		if (!*m)
			*m = msg_new(word, pat, name, len, msg, mlen);
		pubsub_raw_send(pub, s->mb, *m);
		n++;
	}
	return n;
}

struct ps_msg *pubsub_raw_new(size_t len, char **buf)
{
	struct ps_msg *m = xmalloc(sizeof(*m) + len);

	atomic_init(&m->refs, 1);
	m->raw = 1;
	m->invalidate = 0;
	m->push3 = 0;
	m->len = len;
	*buf = m->buf;
	return m;
}

void pubsub_raw_trim(struct ps_msg *m, size_t len)
{
	m->len = len;
}

void pubsub_raw_put(struct ps_msg *m)
{
	msg_put(m);
}


long long pubsub_publish(struct conn *c, enum ps_kind kind, const char *ch, size_t chlen,
			 const char *msg, size_t mlen)
{
	struct ps_chan *chan, *pat;
	struct ps_msg *m = NULL;
	long long n = 0;

	rcu_read_lock(); /* QSBR: the command's own section; a marker */
	chan = chan_find(kind, ch, chlen);
	if (chan)
		n += fan_out(c, chan, &m, kind == PS_SHARD ? "smessage" : "message", NULL, ch,
			     chlen, msg, mlen);
	msg_put(m);
	if (kind == PS_CHANNEL) {
		list_for_each_entry_rcu(pat, &ps_patterns, pnode) {
			if (!ps_glob(pat->name, pat->len, ch, chlen))
				continue;
			m = NULL;
			n += fan_out(c, pat, &m, "pmessage", pat, ch, chlen, msg, mlen);
			msg_put(m);
		}
	}
	rcu_read_unlock();
	return n;
}

void pubsub_invalidate(struct ps_client *mb, const char *key, size_t klen)
{
	struct ps_msg *m;

	if (!mb) /* the REDIRECT target had gone when tracking was turned on */
		return;
	m = xmalloc(sizeof(*m) + (key ? 4 + 26 + klen : 0));

	atomic_init(&m->refs, 1);
	m->invalidate = 1;
	m->push3 = 0;
	m->raw = 0;
	m->len = 0;
	if (key) {
		memcpy(m->buf, "*1\r\n", 4);
		m->len = 4 + put_bulk(m->buf + 4, key, klen);
	}
	push_remote(mb, m);
	msg_put(m);
}

int pubsub_mailbox_closed(struct ps_client *mb)
{
	return !mb || atomic_load_explicit(&mb->closed, memory_order_relaxed);
}

void pubsub_redir_broken(struct ps_client *mb, uint64_t id)
{
	static const char head[] = ">2\r\n$21\r\ntracking-redir-broken\r\n";
	struct ps_msg *m;

	if (!mb)
		return;
	m = xmalloc(sizeof(*m) + sizeof(head) + 24);
	atomic_init(&m->refs, 1);
	m->invalidate = 0;
	m->raw = 0;
	m->push3 = 1;
	memcpy(m->buf, head, sizeof(head) - 1);
	m->len = sizeof(head) - 1;
	m->len += (size_t)snprintf(m->buf + m->len, 24, ":%llu\r\n", (unsigned long long)id);
	push_remote(mb, m);
	msg_put(m);
}

void pubsub_drain(struct worker *w)
{
	struct ps_delivery *d = atomic_exchange_explicit(&w->ps_inbox, NULL, memory_order_acquire);
	struct ps_delivery *fifo = NULL;

	while (d) { /* the stack is newest first: reverse into push order */
		struct ps_delivery *next = d->next;

		d->next = fifo;
		fifo = d;
		d = next;
	}
	while (fifo) {
		d = fifo;
		fifo = d->next;
		if (d->mb->conn)
			write_msg(d->mb->conn, d->msg);
		msg_put(d->msg);
		mb_put(d->mb);
		free(d);
	}
}

void pubsub_drain_pending(struct worker *w)
{
	if (atomic_load_explicit(&w->ps_inbox, memory_order_relaxed))
		pubsub_drain(w);
}

void pubsub_fini(void)
{
	for (int i = 0; i < g_srv.nworkers; i++)
		pubsub_drain(&g_srv.workers[i]);
}

/* ------------------------------------------------------ introspection */

void pubsub_reply_channels(struct conn *c, enum ps_kind kind, const char *pat, size_t plen)
{
	struct ps_chan *ch;
	long long n = 0;
	/* The count must come first and channels come and go while we walk:
	 * collect the names seen, then send exactly those. */
	struct {
		const char *p;
		size_t l;
	} *v = NULL;
	size_t cap = 0;

	rcu_read_lock();
	for (int b = 0; b < PS_BUCKETS; b++) {
		hlist_for_each_entry_rcu(ch, &ps_hash[kind][b], hnode) {
			if (pat && !ps_glob(pat, plen, ch->name, ch->len))
				continue;
			if ((size_t)n == cap) {
				cap = cap ? cap * 2 : 16;
				v = xrealloc(v, cap * sizeof(*v));
			}
			v[n].p = ch->name;
			v[n].l = ch->len;
			n++;
		}
	}
	reply_array(c, n);
	for (long long i = 0; i < n; i++)
		reply_bulk(c, v[i].p, v[i].l); /* alive until our command ends */
	rcu_read_unlock();
	free(v);
}

long long pubsub_numsub(enum ps_kind kind, const char *ch, size_t len)
{
	struct ps_chan *chan;
	long long n = 0;

	rcu_read_lock();
	chan = chan_find(kind, ch, len);
	if (chan)
		n = atomic_load_explicit(&chan->nsubs, memory_order_relaxed);
	rcu_read_unlock();
	return n;
}

long long pubsub_count(enum ps_kind kind)
{
	return atomic_load_explicit(&ps_nchans[kind], memory_order_relaxed);
}
