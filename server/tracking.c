/*
 * tracking.c - client-side caching (tracking.h; docs/tracking.md), as Redis
 * 7.0's tracking.c: a client that turned CLIENT TRACKING on is told when a
 * key it read may have changed, so it can keep hot keys in its own memory.
 *
 * State, all under trk_lock:
 *  - one struct trk_client per tracking connection (refcounted: the
 *    connection holds one reference, each table entry naming it another);
 *    its options, its prefixes (BCAST), and where its invalidations go (its
 *    own mailbox, or the REDIRECT target's: pubsub.c's mailboxes, which
 *    deliver on the target's worker from any thread);
 *  - the key table: key -> the clients that read it (default mode), each
 *    named once; an invalidation sends to each and forgets the key, as
 *    Redis does (the client must read it again to be told again).
 *
 * Ordering, the one subtle point: a key's reader is remembered *before* its
 * command reads (tracking_before()), and a writer calls tracking_touched()
 * *after* its change is visible (the table's watch hook), both under
 * trk_lock.  So either the writer's hook finds the reader (and invalidates),
 * or the hook ran before the reader was remembered, and then the reader's
 * read, which follows, sees the write.  Writers call the hook only while
 * ht_watch_all() is on: the first client to turn tracking on switches it on
 * and waits for a grace period, after which every writer checks it (a
 * command in flight that skipped the check has finished).
 *
 * Cost: while anyone tracks, every write takes trk_lock once.  Readers of
 * tracking clients take it once per read-only command.
 */
#define RCU_FLAVOR_QSBR
#include "server/tracking.h"
#include "server/client.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/pubsub.h"
#include "server/util.h"

#include "hashtable/ht.h"
#include "rcu/rcu.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct trk_client {
	long refs;    /* trk_lock */
	unsigned flags; /* TRK_*; 0 once off (entries naming it are skipped); trk_lock */
	uint64_t id;
	struct ps_client *dest; /* its mailbox or its REDIRECT target's (held) */
	struct ps_client *self; /* with REDIRECT: its own mailbox (held), for
				 * tracking-redir-broken */
	uint64_t redir;		/* the REDIRECT target, 0 for none */
	_Atomic int broken;	/* an invalidation found the target gone (Redis's
				 * CLIENT_TRACKING_BROKEN_REDIR); until ON again */
	char **pfx;		/* BCAST prefixes */
	size_t *plen;
	int npfx;
	struct trk_client *next, *prev; /* trk_all */
};

/* One key of the table with the clients that may cache it. */
struct trk_key {
	struct trk_key *next;
	uint64_t hash;
	struct trk_client **who;
	int n, cap;
	size_t klen;
	char key[];
};

#define TRK_SEED 0x747261636bull

static pthread_mutex_t trk_lock = PTHREAD_MUTEX_INITIALIZER;
static struct trk_client *trk_all; /* every tracking client */
static long long trk_nclients, trk_nbcast, trk_nprefixes, trk_nitems;
/* trk_nclients for the hook's first look, without the lock (a writer that
 * reads 0 while the first client turns tracking on is one the grace period
 * in first_tracker() waits for). */
static _Atomic long long trk_active;
static struct trk_key **tbuckets;
static size_t tnb, tcount;
static void (*trk_watch_all)(int delta); /* tracking_init() */
static _Atomic long long trk_max_keys = 1000000; /* tracking-table-max-keys */
/* The client whose command runs on this thread (NOLOOP), 0: none. */
static _Thread_local uint64_t trk_current;

void tracking_init(void (*watch_all)(int delta))
{
	trk_watch_all = watch_all;
}

/* ------------------------------------------------------------ the table */

static struct trk_key *tfind(uint64_t h, const void *key, size_t klen, struct trk_key ***pp)
{
	struct trk_key **p, *k;

	if (!tnb)
		return NULL;
	for (p = &tbuckets[h & (tnb - 1)]; (k = *p); p = &k->next)
		if (k->hash == h && k->klen == klen && !memcmp(k->key, key, klen)) {
			if (pp)
				*pp = p;
			return k;
		}
	return NULL;
}

static void tgrow(void)
{
	size_t nnb = tnb ? tnb * 2 : 256;
	struct trk_key **nb = calloc(nnb, sizeof(*nb));

	if (!nb)
		return;
	for (size_t i = 0; i < tnb; i++) {
		struct trk_key *k, *nx;

		for (k = tbuckets[i]; k; k = nx) {
			nx = k->next;
			k->next = nb[k->hash & (nnb - 1)];
			nb[k->hash & (nnb - 1)] = k;
		}
	}
	free(tbuckets);
	tbuckets = nb;
	tnb = nnb;
}

static void tc_put(struct trk_client *t)
{
	if (--t->refs)
		return;
	pubsub_mailbox_drop(t->dest);
	pubsub_mailbox_drop(t->self);
	for (int i = 0; i < t->npfx; i++)
		free(t->pfx[i]);
	free(t->pfx);
	free(t->plen);
	free(t);
}

/* Send @t the invalidation of @key (NULL: every key), as Redis's
 * sendTrackingMessage(): if its REDIRECT target has gone, @t is told so
 * instead (tracking-redir-broken, RESP3 only) each time, and its
 * TRACKINGINFO says broken_redirect.  trk_lock held. */
static void send_inv(struct trk_client *t, const char *key, size_t klen)
{
	if (t->redir && pubsub_mailbox_closed(t->dest)) {
		atomic_store_explicit(&t->broken, 1, memory_order_relaxed);
		pubsub_redir_broken(t->self, t->redir);
		return;
	}
	pubsub_invalidate(t->dest, key, klen);
}

/* Send @k's invalidation to its clients and drop it.  trk_lock held. */
static void tkill(struct trk_key **pp, struct trk_key *k)
{
	for (int i = 0; i < k->n; i++) {
		struct trk_client *t = k->who[i];

		if ((t->flags & TRK_ON) && !(t->flags & TRK_BCAST) &&
		    !((t->flags & TRK_NOLOOP) && t->id == trk_current))
			send_inv(t, k->key, k->klen);
		tc_put(t);
	}
	trk_nitems -= k->n;
	*pp = k->next;
	tcount--;
	free(k->who);
	free(k);
}

/* Over tracking-table-max-keys: invalidate keys until under it, as Redis's
 * trackingLimitUsedSlots() (it picks at random; any key will do).  trk_lock. */
static void tlimit(void)
{
	long long max = atomic_load_explicit(&trk_max_keys, memory_order_relaxed);
	static size_t cursor;

	if (!max || (long long)tcount <= max)
		return;
	for (size_t n = 0; n < tnb && (long long)tcount > max; n++) {
		size_t b = cursor++ & (tnb - 1);

		while (tbuckets[b] && (long long)tcount > max)
			tkill(&tbuckets[b], tbuckets[b]);
	}
}

/* Remember that @t may cache @key.  trk_lock held. */
static void tremember(struct trk_client *t, const void *key, size_t klen)
{
	uint64_t h = ht_hash(key, klen, TRK_SEED);
	struct trk_key *k = tfind(h, key, klen, NULL);

	if (!k) {
		if (tcount >= tnb)
			tgrow();
		k = xmalloc(sizeof(*k) + klen);
		k->hash = h;
		k->klen = klen;
		memcpy(k->key, key, klen);
		k->who = NULL;
		k->n = k->cap = 0;
		k->next = tbuckets[h & (tnb - 1)];
		tbuckets[h & (tnb - 1)] = k;
		tcount++;
	}
	for (int i = 0; i < k->n; i++)
		if (k->who[i] == t)
			return;
	if (k->n == k->cap) {
		k->cap = k->cap ? k->cap * 2 : 2;
		k->who = realloc(k->who, (size_t)k->cap * sizeof(*k->who));
		if (!k->who)
			srv_die("out of memory in the tracking table");
	}
	k->who[k->n++] = t;
	t->refs++;
	trk_nitems++;
	tlimit();
}

/* Drop the whole table (the last tracking client left, or a flush). */
static void tclear(void)
{
	for (size_t i = 0; i < tnb; i++) {
		while (tbuckets[i]) {
			struct trk_key *k = tbuckets[i];

			tbuckets[i] = k->next;
			for (int j = 0; j < k->n; j++)
				tc_put(k->who[j]);
			free(k->who);
			free(k);
		}
	}
	tcount = 0;
	trk_nitems = 0;
}

/* ------------------------------------------------------------ the hook */

static int has_prefix(const char *key, size_t klen, const char *p, size_t plen)
{
	return plen <= klen && memcmp(key, p, plen) == 0;
}

void tracking_touched(const void *key, size_t klen)
{
	uint64_t h;
	struct trk_key *k, **pp;

	if (!atomic_load_explicit(&trk_active, memory_order_relaxed))
		return;
	h = ht_hash(key, klen, TRK_SEED);
	pthread_mutex_lock(&trk_lock);
	if ((k = tfind(h, key, klen, &pp)))
		tkill(pp, k);
	if (trk_nbcast) {
		for (struct trk_client *t = trk_all; t; t = t->next) {
			if (!(t->flags & TRK_BCAST) || ((t->flags & TRK_NOLOOP) && t->id == trk_current))
				continue;
			for (int i = 0; i < t->npfx; i++)
				if (has_prefix(key, klen, t->pfx[i], t->plen[i])) {
					send_inv(t, key, klen);
					break; /* prefixes of one client never overlap */
				}
		}
	}
	pthread_mutex_unlock(&trk_lock);
}

void tracking_flushed(void)
{
	pthread_mutex_lock(&trk_lock);
	for (struct trk_client *t = trk_all; t; t = t->next)
		send_inv(t, NULL, 0);
	tclear();
	pthread_mutex_unlock(&trk_lock);
}

/* ------------------------------------------------------------ clients */

/* The mailbox of client @id (held), or NULL if no such client. */
static struct ps_client *mailbox_of(uint64_t id)
{
	struct ps_client *mb = NULL;

	pthread_mutex_lock(&g_clients_lock);
	for (struct conn *x = g_clients; x; x = x->gnext)
		if (x->id == id) {
			mb = pubsub_mailbox_hold(x);
			break;
		}
	pthread_mutex_unlock(&g_clients_lock);
	return mb;
}

/* Redis's checkPrefixCollisionsOrReply(): no two prefixes of one client may
 * both match a key. */
static const char *prefix_clash(const struct trk_client *t, const char *const *pfx,
				const size_t *plen, int np, char *err, size_t errlen)
{
	for (int i = 0; i < np; i++) {
		for (int j = 0; t && j < t->npfx; j++) {
			size_t m = plen[i] < t->plen[j] ? plen[i] : t->plen[j];

			if (!memcmp(pfx[i], t->pfx[j], m)) {
				snprintf(err, errlen,
					 "Prefix '%.*s' overlaps with an existing prefix '%.*s'. "
					 "Prefixes for a single client must not overlap.",
					 (int)plen[i], pfx[i], (int)t->plen[j], t->pfx[j]);
				return err;
			}
		}
		for (int j = i + 1; j < np; j++) {
			size_t m = plen[i] < plen[j] ? plen[i] : plen[j];

			if (!memcmp(pfx[i], pfx[j], m)) {
				snprintf(err, errlen,
					 "Prefix '%.*s' overlaps with another provided prefix '%.*s'. "
					 "Prefixes for a single client must not overlap.",
					 (int)plen[i], pfx[i], (int)plen[j], pfx[j]);
				return err;
			}
		}
	}
	return NULL;
}

/* Byte order, a prefix before its extensions: how Redis's rax lists them
 * (CLIENT TRACKINGINFO). */
static int pfx_cmp(const char *a, size_t al, const char *b, size_t bl)
{
	int r = memcmp(a, b, al < bl ? al : bl);

	return r ? r : (al > bl) - (al < bl);
}

/* Add prefix @p to @t's sorted prefixes, once.  trk_lock held. */
static void add_prefix(struct trk_client *t, const char *p, size_t n)
{
	int at = 0;

	while (at < t->npfx && pfx_cmp(t->pfx[at], t->plen[at], p, n) < 0)
		at++;
	if (at < t->npfx && !pfx_cmp(t->pfx[at], t->plen[at], p, n))
		return;
	t->pfx = realloc(t->pfx, (size_t)(t->npfx + 1) * sizeof(*t->pfx));
	t->plen = realloc(t->plen, (size_t)(t->npfx + 1) * sizeof(*t->plen));
	if (!t->pfx || !t->plen)
		srv_die("out of memory for a tracking prefix");
	memmove(t->pfx + at + 1, t->pfx + at, (size_t)(t->npfx - at) * sizeof(*t->pfx));
	memmove(t->plen + at + 1, t->plen + at, (size_t)(t->npfx - at) * sizeof(*t->plen));
	t->pfx[at] = xmalloc(n + 1);
	memcpy(t->pfx[at], p, n);
	t->pfx[at][n] = '\0';
	t->plen[at] = n;
	t->npfx++;
	trk_nprefixes++;
}

/* Publish @c's state for CLIENT LIST (other threads read it). */
static void publish(struct conn *c, unsigned flags, uint64_t redir)
{
	atomic_store_explicit(&c->trk_flags, flags, memory_order_relaxed);
	atomic_store_explicit(&c->trk_redir, (long long)redir, memory_order_relaxed);
}

/* The first tracking client: writers call the hook from now on.  A writer
 * that checked before the switch is inside a command (a QSBR read-side
 * section) or the main thread's cron; a grace period waits for the former. */
static void first_tracker(void)
{
	trk_watch_all(1);
	rcu_thread_offline();
	synchronize_rcu();
	rcu_thread_online();
}

const char *tracking_on(struct conn *c, unsigned opts, uint64_t redir, const char *const *pfx,
			const size_t *plen, int np, char *err, size_t errlen)
{
	struct trk_client *t = c->trk;
	struct ps_client *dest, *self = NULL;
	int first = 0;

	if (!(opts & TRK_BCAST) && np)
		return "PREFIX option requires BCAST mode to be enabled";
	if (t && !!(t->flags & TRK_BCAST) != !!(opts & TRK_BCAST))
		return "You can't switch BCAST mode on/off before disabling tracking for this "
		       "client, and then re-enabling it with a different mode.";
	if ((opts & TRK_BCAST) && (opts & (TRK_OPTIN | TRK_OPTOUT)))
		return "OPTIN and OPTOUT are not compatible with BCAST";
	if ((opts & TRK_OPTIN) && (opts & TRK_OPTOUT))
		return "You can't specify both OPTIN mode and OPTOUT mode";
	if (t && (((opts & TRK_OPTIN) && (t->flags & TRK_OPTOUT)) ||
		  ((opts & TRK_OPTOUT) && (t->flags & TRK_OPTIN))))
		return "You can't switch OPTIN/OPTOUT mode before disabling tracking for this "
		       "client, and then re-enabling it with a different mode.";
	if ((opts & TRK_BCAST) && prefix_clash(t, pfx, plen, np, err, errlen))
		return err;
	dest = redir ? mailbox_of(redir) : pubsub_mailbox_hold(c);
	if (redir)
		self = pubsub_mailbox_hold(c);
	pthread_mutex_lock(&trk_lock);
	if (!t) {
		t = xmalloc(sizeof(*t));
		memset(t, 0, sizeof(*t));
		t->refs = 1;
		t->id = c->id;
		t->next = trk_all;
		if (trk_all)
			trk_all->prev = t;
		trk_all = t;
		first = trk_nclients++ == 0;
		atomic_store_explicit(&trk_active, trk_nclients, memory_order_relaxed);
		c->trk = t;
	}
	pubsub_mailbox_drop(t->dest);
	pubsub_mailbox_drop(t->self);
	t->dest = dest;
	t->self = self;
	t->redir = redir;
	atomic_store_explicit(&t->broken, 0, memory_order_relaxed);
	if ((opts & TRK_BCAST) && !(t->flags & TRK_BCAST))
		trk_nbcast++;
	t->flags = TRK_ON | (opts & (TRK_BCAST | TRK_OPTIN | TRK_OPTOUT | TRK_NOLOOP));
	if (opts & TRK_BCAST) {
		if (np == 0)
			add_prefix(t, "", 0);
		for (int i = 0; i < np; i++)
			add_prefix(t, pfx[i], plen[i]);
	}
	pthread_mutex_unlock(&trk_lock);
	publish(c, t->flags, redir);
	if (first)
		first_tracker();
	return NULL;
}

void tracking_off(struct conn *c)
{
	struct trk_client *t = c->trk;
	int last;

	if (!t)
		return;
	c->trk = NULL;
	c->trk_caching = 0;
	publish(c, 0, 0);
	pthread_mutex_lock(&trk_lock);
	if (t->flags & TRK_BCAST)
		trk_nbcast--;
	trk_nprefixes -= t->npfx;
	t->flags = 0;
	if (t->prev)
		t->prev->next = t->next;
	else
		trk_all = t->next;
	if (t->next)
		t->next->prev = t->prev;
	last = --trk_nclients == 0;
	atomic_store_explicit(&trk_active, trk_nclients, memory_order_relaxed);
	if (last)
		tclear(); /* nobody left to tell: forget every key */
	tc_put(t);
	pthread_mutex_unlock(&trk_lock);
	if (last)
		trk_watch_all(-1);
}

unsigned tracking_flags(const struct conn *c)
{
	return c->trk ? c->trk->flags : 0;
}

int tracking_broken(const struct conn *c)
{
	return c->trk && (c->trk->flags & TRK_ON) &&
	       atomic_load_explicit(&c->trk->broken, memory_order_relaxed);
}

long long tracking_redirect(const struct conn *c)
{
	return c->trk ? atomic_load_explicit(&c->trk_redir, memory_order_relaxed) : -1;
}

int tracking_nprefixes(const struct conn *c)
{
	return c->trk ? c->trk->npfx : 0;
}

const char *tracking_prefix(const struct conn *c, int i, size_t *len)
{
	*len = c->trk->plen[i];
	return c->trk->pfx[i];
}

void tracking_before(struct conn *c, int reads, int first, int last, int step)
{
	struct trk_client *t = c->trk;

	trk_current = c->id;
	if (!t || (t->flags & TRK_BCAST) || !reads || first <= 0)
		return;
	/* OPTIN: only after CLIENT CACHING YES; OPTOUT: unless CLIENT CACHING NO */
	if (((t->flags & TRK_OPTIN) && !c->trk_caching) || ((t->flags & TRK_OPTOUT) && c->trk_caching))
		return;
	pthread_mutex_lock(&trk_lock);
	for (int i = first; i <= last; i += step)
		tremember(t, ARGV(c, i), ARGL(c, i));
	pthread_mutex_unlock(&trk_lock);
}

void tracking_after(struct conn *c, int keep_caching)
{
	trk_current = 0;
	if (c->trk_caching && !keep_caching)
		c->trk_caching = 0;
}

int tracking_client_exists(uint64_t id)
{
	struct ps_client *mb = mailbox_of(id);

	pubsub_mailbox_drop(mb);
	return mb != NULL;
}

void tracking_stats(long long *clients, long long *keys, long long *items, long long *prefixes)
{
	pthread_mutex_lock(&trk_lock);
	*clients = trk_nclients;
	*keys = (long long)tcount;
	*items = trk_nitems;
	*prefixes = trk_nprefixes;
	pthread_mutex_unlock(&trk_lock);
}

/* ------------------------------------------------------------ option */

static const struct cfg_opt trk_rows[] = {
    {.name = "tracking-table-max-keys", .kind = CFG_INT, .mut = CFG_MUTABLE,
     .field = &trk_max_keys, .min = 0, .max = LONG_MAX, .def = "1000000"},
};

static struct cfg_group trk_group = {"tracking", trk_rows, 1, NULL, NULL, NULL};
CFG_REGISTER(trk_group)
