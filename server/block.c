/*
 * block.c - clients blocked on keys: the key queues, the per-worker inboxes
 * of woken waiters, timeouts and CLIENT UNBLOCK.  block.h has the model, the
 * API and the locking rules; this file owns struct blk and every queue.
 *
 * Invariants (block_lock held): a waiter is in the queue of each of its keys
 * exactly once while it is registered (b->links[i] linked), and in its
 * worker's inbox at most once (b->ready); nblocked counts the registered
 * waiters.  A key's queue (struct bkey) is freed when its last waiter
 * leaves.
 */
#define RCU_FLAVOR_QSBR
#include "server/block.h"
#include "rcu/rcu.h"
#include "server/conn.h"
#include "server/multi.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/util.h"

#include <errno.h>
#include <limits.h>
#include <event2/event.h>
#include <sys/socket.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct bkey;
struct blk;

struct blink {
	struct blk *b;
	struct bkey *k;
	struct blink *prev, *next; /* the key's queue, oldest first */
};

struct bkey {
	struct bkey *hnext;
	struct ht *ht;
	uint64_t h;
	size_t klen;
	struct blink *head, *tail;
	char key[];
};

struct blk {
	struct conn *c;	   /* immutable; c->blk == this */
	struct worker *w;  /* c's worker, immutable */
	unsigned long long id;
	int n;		   /* keys */
	struct blink *links;
	int ready;	   /* block_lock: in the inbox of w */
	int woken;	   /* block_lock: signalled since its last wait (pass the turn on) */
	struct bkey *wkey; /* block_lock: the key whose signal woke it */
	int timeout;	   /* block_lock: 1 timed out or UNBLOCK TIMEOUT, 2 UNBLOCK ERROR */
	int retry;	   /* owner: this dispatch is a retry */
	struct blk *inext; /* block_lock: inbox link */
	struct blk *gnext, *gprev; /* block_lock: every waiter (CLIENT UNBLOCK) */
	struct event *timer;	   /* owner */
	struct event *peek;	   /* owner: a close while blocked (the socket is not read) */
	void *owner;		   /* owner: block_set_owner()'s (a module's blocked client) */
};

#define NBUCKETS 1024

static void (*close_hook)(struct conn *c, void *owner); /* set once at start-up */

static pthread_mutex_t block_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bkey *buckets[NBUCKETS];	/* block_lock */
static struct blk *all;			/* block_lock */
static struct blk **inbox;		/* block_lock: per worker index */
static _Atomic long long nblocked;	/* registered waiters; relaxed reads */
static _Atomic long long ntimed;	/* of those, with a timeout; relaxed */

static uint64_t key_hash(const struct ht *ht, const void *key, size_t klen)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)ht;

	for (size_t i = 0; i < klen; i++)
		h = (h ^ ((const unsigned char *)key)[i]) * 1099511628211ull;
	return h;
}

/* block_lock held. */
static struct bkey *key_find(struct ht *ht, const void *key, size_t klen, uint64_t h, int create)
{
	struct bkey **pp = &buckets[h % NBUCKETS], *k;

	for (k = *pp; k; k = k->hnext)
		if (k->h == h && k->ht == ht && k->klen == klen && !memcmp(k->key, key, klen))
			return k;
	if (!create)
		return NULL;
	k = xmalloc(sizeof(*k) + klen);
	k->ht = ht;
	k->h = h;
	k->klen = klen;
	k->head = k->tail = NULL;
	memcpy(k->key, key, klen);
	k->hnext = *pp;
	*pp = k;
	return k;
}

static void key_free(struct bkey *k)
{
	struct bkey **pp = &buckets[k->h % NBUCKETS];

	while (*pp != k)
		pp = &(*pp)->hnext;
	*pp = k->hnext;
	free(k);
}

/* Hand @b to its worker's inbox.  block_lock held; the caller wakes the
 * worker after unlocking. */
static void make_ready(struct blk *b, struct bkey *k)
{
	int i = b->w->idx;

	if (b->ready)
		return;
	b->ready = 1;
	b->woken = 1;
	b->wkey = k;
	b->inext = inbox[i];
	inbox[i] = b;
}

/* The first waiter of @k not yet woken, made ready; its worker or NULL. */
static struct worker *wake_first(struct bkey *k)
{
	for (struct blink *l = k->head; l; l = l->next)
		if (!l->b->ready) {
			make_ready(l->b, k);
			return l->b->w;
		}
	return NULL;
}

static void inbox_remove(struct blk *b)
{
	struct blk **pp = &inbox[b->w->idx];

	if (!b->ready)
		return;
	while (*pp && *pp != b)
		pp = &(*pp)->inext;
	if (*pp)
		*pp = b->inext;
	b->ready = 0;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct blk *b = arg;
	struct worker *w = b->w;

	(void)fd;
	(void)what;
	if (SRV_UNLIKELY(!w->online)) { /* as net.c's conn_online() */
		server_turn_begin(w);
		rcu_thread_online();
		w->online = 1;
	}
	pthread_mutex_lock(&block_lock);
	b->timeout = 1;
	inbox_remove(b);
	pthread_mutex_unlock(&block_lock);
	b->retry = 1;
	if (b->c->flags & CONN_BLOCKED) /* else a CLIENT PAUSE holds its retry */
		conn_resume(b->c);	/* may close b->c (and free b) */
}

/* The held connection's socket became readable: if the peer closed it,
 * close the connection now (Redis notices a blocked client's close too);
 * pipelined input waits for the unblock (conn.c reads it then). */
static void on_peek(evutil_socket_t fd, short what, void *arg)
{
	struct blk *b = arg;
	struct worker *w = b->w;
	char ch;
	ssize_t r;

	(void)what;
	r = recv(fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT);
	if (r > 0 || (r < 0 && (errno == EAGAIN || errno == EINTR)))
		return; /* input, not a close: not watched again while blocked */
	if (SRV_UNLIKELY(!w->online)) { /* as net.c's conn_online() */
		server_turn_begin(w);
		rcu_thread_online();
		w->online = 1;
	}
	conn_close(b->c); /* frees b (block_conn_closed()) */
}

void block_wait(struct conn *c, struct ht *ht, int n, const int *kidx, long long timeout_ms)
{
	const void *small[16] = {0}, **keys = small;
	size_t smalll[16] = {0}, *klens = smalll;

	if (c->blk) {
		block_wait_keys(c, ht, 0, NULL, NULL, timeout_ms);
		return;
	}
	if (n > 16) {
		keys = xmalloc((size_t)n * sizeof(*keys));
		klens = xmalloc((size_t)n * sizeof(*klens));
	}
	for (int i = 0; i < n; i++)
		keys[i] = ARGV(c, kidx[i]), klens[i] = ARGL(c, kidx[i]);
	block_wait_keys(c, ht, n, keys, klens, timeout_ms);
	if (keys != small) {
		free(keys);
		free(klens);
	}
}

void block_wait_keys(struct conn *c, struct ht *ht, int n, const void *const *keys,
		     const size_t *klens, long long timeout_ms)
{
	struct blk *b = c->blk;

	if (!b) {
		b = xcalloc(1, sizeof(*b));
		b->c = c;
		b->w = c->w;
		b->id = c->id;
		b->n = n;
		b->links = xcalloc((size_t)n, sizeof(*b->links));
		pthread_mutex_lock(&block_lock);
		if (!inbox)
			inbox = xcalloc((size_t)g_srv.nworkers, sizeof(*inbox));
		for (int i = 0; i < n; i++) {
			const void *key = keys[i];
			size_t klen = klens[i];
			struct bkey *k = key_find(ht, key, klen, key_hash(ht, key, klen), 1);
			struct blink *l = &b->links[i];

			l->b = b;
			l->k = k;
			l->next = NULL;
			l->prev = k->tail;
			if (k->tail)
				k->tail->next = l;
			else
				k->head = l;
			k->tail = l;
		}
		b->gnext = all;
		if (all)
			all->gprev = b;
		all = b;
		atomic_fetch_add_explicit(&nblocked, 1, memory_order_relaxed);
		pthread_mutex_unlock(&block_lock);
		c->blk = b;
		if (timeout_ms > 0 && c->w->base) { /* no base: the fuzz harness's worker */
			struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};

			b->timer = evtimer_new(c->w->base, on_timer, b);
			evtimer_add(b->timer, &tv);
			atomic_fetch_add_explicit(&ntimed, 1, memory_order_relaxed);
		}
		if (c->fd >= 0 && c->w->base && !(c->flags & CONN_TLS)) {
			b->peek = event_new(c->w->base, c->fd, EV_READ, on_peek, b);
			event_add(b->peek, NULL);
		}
	} else {
		pthread_mutex_lock(&block_lock);
		b->woken = 0; /* it ran and found nothing: no turn to pass on */
		pthread_mutex_unlock(&block_lock);
	}
	b->retry = 0;
	c->flags |= CONN_HELD | CONN_BLOCKED;
	atomic_fetch_or_explicit(&c->list_flags, CONN_HELD, memory_order_relaxed);
}

int block_retry(const struct conn *c)
{
	return c->blk && c->blk->retry;
}

int block_timed_out(const struct conn *c)
{
	int t;

	if (!c->blk)
		return 0;
	pthread_mutex_lock(&block_lock);
	t = c->blk->timeout;
	pthread_mutex_unlock(&block_lock);
	return t;
}

int block_allowed(const struct conn *c)
{
	return !(c->multi && c->multi->in_exec) && !(c->flags & CONN_MASTER);
}

void block_done(struct conn *c)
{
	struct blk *b = c->blk;
	struct worker *wake[8];
	int nw = 0;

	if (!b)
		return;
	pthread_mutex_lock(&block_lock);
	inbox_remove(b);
	for (int i = 0; i < b->n; i++) {
		struct blink *l = &b->links[i];
		struct bkey *k = l->k;

		if (l->prev)
			l->prev->next = l->next;
		else
			k->head = l->next;
		if (l->next)
			l->next->prev = l->prev;
		else
			k->tail = l->prev;
		if (!k->head) {
			key_free(k);
			continue;
		}
		if (b->woken && k == b->wkey) { /* pass the turn to the next in line */
			struct worker *w = wake_first(k);

			if (w && nw < 8)
				wake[nw++] = w;
		}
	}
	if (b->gprev)
		b->gprev->gnext = b->gnext;
	else
		all = b->gnext;
	if (b->gnext)
		b->gnext->gprev = b->gprev;
	atomic_fetch_sub_explicit(&nblocked, 1, memory_order_relaxed);
	pthread_mutex_unlock(&block_lock);
	for (int i = 0; i < nw; i++)
		server_wake_worker(wake[i]);
	if (b->timer) {
		event_free(b->timer);
		atomic_fetch_sub_explicit(&ntimed, 1, memory_order_relaxed);
	}
	if (b->peek)
		event_free(b->peek);
	c->flags &= ~CONN_BLOCKED;
	atomic_fetch_and_explicit(&c->list_flags, ~CONN_HELD, memory_order_relaxed);
	free(b->links);
	free(b);
	c->blk = NULL;
}

void block_signal_key(struct ht *ht, const void *key, size_t klen)
{
	struct bkey *k;
	struct worker *w = NULL;

	/* Relaxed: a waiter registers (under block_lock) after its own failed
	 * try; a push published before that try is seen by the try itself. */
	if (SRV_LIKELY(atomic_load_explicit(&nblocked, memory_order_relaxed) == 0))
		return;
	pthread_mutex_lock(&block_lock);
	k = key_find(ht, key, klen, key_hash(ht, key, klen), 0);
	if (k)
		w = wake_first(k);
	pthread_mutex_unlock(&block_lock);
	if (w)
		server_wake_worker(w);
}

void block_drain(struct worker *w)
{
	if (!inbox)
		return;
	for (;;) {
		struct blk *b;

		pthread_mutex_lock(&block_lock);
		b = inbox[w->idx];
		if (b) {
			inbox[w->idx] = b->inext;
			b->ready = 0;
		}
		pthread_mutex_unlock(&block_lock);
		if (!b)
			return;
		b->retry = 1;
		if (!(b->c->flags & CONN_BLOCKED))
			continue; /* a CLIENT PAUSE holds its retry: it runs at the pause's end */
		conn_resume(b->c); /* may close b->c (and free b) */
	}
}

void block_conn_closed(struct conn *c)
{
	if (!c->blk)
		return;
	if (c->blk->owner && close_hook)
		close_hook(c, c->blk->owner);
	if (c->blk)
		block_done(c); /* a woken waiter passes its turn on */
}

void block_set_owner(struct conn *c, void *owner)
{
	if (c->blk)
		c->blk->owner = owner;
}

void *block_owner(const struct conn *c)
{
	return c->blk ? c->blk->owner : NULL;
}

void block_set_close_hook(void (*hook)(struct conn *c, void *owner))
{
	close_hook = hook;
}

const void *block_woken_key(const struct conn *c, size_t *klen)
{
	const struct bkey *k;

	if (!c->blk)
		return NULL;
	pthread_mutex_lock(&block_lock);
	k = c->blk->wkey; /* a queue c is in: kept while c waits */
	pthread_mutex_unlock(&block_lock);
	if (!k)
		return NULL;
	*klen = k->klen;
	return k->key;
}

int block_unblock(unsigned long long id, int err)
{
	struct worker *w = NULL;

	if (!atomic_load_explicit(&nblocked, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&block_lock);
	for (struct blk *b = all; b; b = b->gnext)
		if (b->id == id) {
			if (!b->timeout && err >= 0)
				b->timeout = err ? 2 : 1;
			if (!b->ready) {
				b->ready = 1;
				b->inext = inbox[b->w->idx];
				inbox[b->w->idx] = b;
			}
			w = b->w;
			break;
		}
	pthread_mutex_unlock(&block_lock);
	if (w)
		server_wake_worker(w);
	return w != NULL;
}

long long block_count(void)
{
	return atomic_load_explicit(&nblocked, memory_order_relaxed);
}

long long block_count_timed(void)
{
	return atomic_load_explicit(&ntimed, memory_order_relaxed);
}

/* ------------------------------------- the blocking commands' shared parts */

/* Redis's getTimeoutFromObjectOrReply() in seconds: *@ms relative (0
 * forever); -1 after an error reply. */
int block_get_timeout(struct conn *c, int j, long long *ms)
{
	long double ft;
	long long t;

	if (!util_str2ld(ARGV(c, j), ARGL(c, j), &ft)) {
		reply_error(c, "timeout is not a float or out of range");
		return -1;
	}
	ft *= 1000.0L;
	/* Redis casts to long long; out of range (inf, 1e100) that is x86's
	 * LLONG_MIN, so those are "negative" there too. */
	t = (ft >= 9223372036854775807.0L || ft < -9223372036854775807.0L || ft != ft)
		? LLONG_MIN
		: (long long)ft;
	if (t < 0) {
		reply_error(c, "timeout is negative");
		return -1;
	}
	if (t > 0 && t > LLONG_MAX - util_mstime()) {
		reply_error(c, "timeout is out of range");
		return -1;
	}
	*ms = t;
	return 0;
}

/* After a retry that did not block again: forget the waiter. */
void block_end(struct conn *c)
{
	if (c->blk)
		block_done(c);
}

/* The common tail of the blocking pops when nothing could be served: nil
 * (@bulk: a null bulk, else a null array) in EXEC or on timeout, else
 * block.  1 if the command is over. */
int block_wait_or_nil(struct conn *c, struct ht *ht, int n, const int *kidx, long long ms, int bulk)
{
	if (!block_allowed(c) || block_timed_out(c)) {
		if (bulk && !block_retry(c))
			reply_null(c);
		else
			reply_null_array(c);
		block_end(c);
		return 1;
	}
	block_wait(c, ht, n, kidx, ms);
	return 0;
}

/* A retry after the timeout (or CLIENT UNBLOCK) answers nil (or the
 * UNBLOCKED error) without looking at the keys, as Redis does: 1 after the
 * reply. */
int block_unblocked_err(struct conn *c)
{
	int t = block_timed_out(c);

	if (!t)
		return 0;
	if (t == 2)
		reply_error(c, "-UNBLOCKED client unblocked via CLIENT UNBLOCK");
	else
		reply_null_array(c);
	block_end(c);
	return 1;
}


int block_start(struct conn *c, int tj, long long *ms)
{
	if (block_get_timeout(c, tj, ms) < 0) {
		block_end(c);
		return -1;
	}
	return block_unblocked_err(c) ? -1 : 0;
}

void block_on_range(struct conn *c, struct ht *ht, int first, long long n, long long ms)
{
	int kidx[BLOCK_MAX_KEYS], m = n > BLOCK_MAX_KEYS ? BLOCK_MAX_KEYS : (int)n;

	for (int i = 0; i < m; i++)
		kidx[i] = first + i;
	block_wait_or_nil(c, ht, m, kidx, ms, 0);
}
