/*
 * multi.c - the transaction state of a connection (multi.h): the queue
 * between MULTI and EXEC, and WATCH with its registry.
 *
 * The registry maps each watched key to the connections watching it.  It is
 * a chained hash table of its own under one mutex (watch_lock): it changes
 * only on WATCH, UNWATCH/EXEC/DISCARD and close, and is read only by writers
 * of keys whose stripe has watchers (ht_watch_hook()), so the mutex is never
 * on the path of a table without WATCHes.  A connection's watch_ref nodes
 * are freed by its own worker after it unlinked them under the mutex; the
 * hook reads them only under the mutex, so no grace period is needed.
 */
#include "server/multi.h"
#include "server/conn.h"
#include "server/util.h"

#include "hashtable/ht.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* One watched key of the registry, with its watchers. */
struct watch_key {
	struct watch_key *next; /* bucket chain */
	struct watch_ref *refs; /* the connections watching it */
	uint64_t hash;
	int db; /* the database index: a watch is on (db, key), as Redis's */
	size_t klen;
	char key[];
};

/* One connection watching one key. */
struct watch_ref {
	struct watch_ref *next; /* the key's watchers */
	struct watch_key *wk;
	struct multi *m;
	struct ht *ht; /* the table ht_watch() counted us in (db's at WATCH) */
	int present;   /* the key existed when WATCH ran */
};

#define WATCH_SEED 0x6d756c7469ull /* any constant: the registry's own hash */

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static struct watch_key **wbuckets; /* watch_lock */
static size_t wnb, wcount;	    /* buckets (a power of two), keys; watch_lock */
/* wcount, for writers that see no watcher (ht_watch_all(): every change
 * calls the hook): a WATCH counts here before its stripe's count, so a writer
 * that must find it sees this non-zero (the stripe mutex orders the two). */
static _Atomic size_t wkeys;
/* db.c's db_at(): the table of a database now (SWAPDB moves tables between
 * indexes); set by multi_init(), immutable after. */
static struct ht *(*table_of)(int db);

void multi_init(struct ht *(*db_table_of)(int db))
{
	table_of = db_table_of;
}

static uint64_t whash(int db, const void *key, size_t klen)
{
	return ht_hash(key, klen, WATCH_SEED) ^ ((uint64_t)(unsigned)db * 0x9e3779b97f4a7c15ull);
}

struct multi *multi_of(struct conn *c)
{
	if (!c->multi) {
		c->multi = xmalloc(sizeof(*c->multi));
		memset(c->multi, 0, sizeof(*c->multi));
	}
	return c->multi;
}

/* ------------------------------------------------------------------ queue */

void multi_queue(struct conn *c, uint32_t flags)
{
	struct multi *m = multi_of(c);
	struct multi_cmd *q;
	size_t bytes = 0;
	char *p;
	int argc = c->argc;

	if (m->nq == m->capq) {
		m->capq = m->capq ? m->capq * 2 : 4;
		m->q = realloc(m->q, (size_t)m->capq * sizeof(*m->q));
		if (!m->q)
			srv_die("out of memory queueing a command");
	}
	for (int i = 0; i < argc; i++)
		bytes += ARGL(c, i) + 1;
	/* One block: argl[argc], argv[argc], then the bytes, each NUL-ended. */
	q = &m->q[m->nq++];
	q->argc = argc;
	q->argl = xmalloc((size_t)argc * (sizeof(size_t) + sizeof(char *)) + bytes);
	q->argv = (const char **)(void *)(q->argl + argc);
	p = (char *)(q->argv + argc);
	for (int i = 0; i < argc; i++) {
		q->argl[i] = ARGL(c, i);
		q->argv[i] = p;
		memcpy(p, ARGV(c, i), ARGL(c, i));
		p[ARGL(c, i)] = '\0';
		p += ARGL(c, i) + 1;
	}
	m->qbytes += bytes;
	m->cmd_flags |= flags;
	atomic_store_explicit(&c->multi_count, m->nq, memory_order_relaxed);
}

void multi_flag(struct conn *c)
{
	if (c->multi && c->multi->active)
		c->multi->dirty_exec = 1;
}

static void queue_free(struct multi *m)
{
	for (int i = 0; i < m->nq; i++)
		free(m->q[i].argl);
	free(m->q);
	m->q = NULL;
	m->nq = m->capq = 0;
	m->qbytes = 0;
}

void multi_discard(struct conn *c)
{
	struct multi *m = c->multi;

	if (!m)
		return;
	queue_free(m);
	m->active = 0;
	m->dirty_exec = 0;
	m->cmd_flags = 0;
	atomic_store_explicit(&c->multi_count, -1, memory_order_relaxed);
	multi_unwatch_all(c);
}

/* --------------------------------------------------------------- registry */

static struct watch_key **wbucket(uint64_t h)
{
	return &wbuckets[h & (wnb - 1)];
}

static struct watch_key *wfind(uint64_t h, int db, const void *key, size_t klen)
{
	struct watch_key *wk;

	if (!wnb)
		return NULL;
	for (wk = *wbucket(h); wk; wk = wk->next)
		if (wk->hash == h && wk->db == db && wk->klen == klen &&
		    !memcmp(wk->key, key, klen))
			return wk;
	return NULL;
}

/* Double the buckets when keys outnumber them.  watch_lock held. */
static void wgrow(void)
{
	size_t nnb = wnb ? wnb * 2 : 64;
	struct watch_key **nb = calloc(nnb, sizeof(*nb));

	if (!nb)
		return; /* longer chains, still correct */
	for (size_t i = 0; i < wnb; i++) {
		struct watch_key *wk, *nx;

		for (wk = wbuckets[i]; wk; wk = nx) {
			nx = wk->next;
			wk->next = nb[wk->hash & (nnb - 1)];
			nb[wk->hash & (nnb - 1)] = wk;
		}
	}
	free(wbuckets);
	wbuckets = nb;
	wnb = nnb;
}

void multi_watch(struct conn *c, const void *key, size_t klen)
{
	struct multi *m = multi_of(c);
	int db = atomic_load_explicit(&c->db, memory_order_relaxed);
	uint64_t h = whash(db, key, klen);
	struct watch_key *wk;
	struct watch_ref *r;
	int present;

	for (int i = 0; i < m->nw; i++)
		if (m->w[i]->wk->db == db && m->w[i]->wk->klen == klen &&
		    !memcmp(m->w[i]->wk->key, key, klen))
			return; /* watched already */
	if (m->nw == m->capw) {
		m->capw = m->capw ? m->capw * 2 : 4;
		m->w = realloc(m->w, (size_t)m->capw * sizeof(*m->w));
		if (!m->w)
			srv_die("out of memory watching a key");
	}
	r = xmalloc(sizeof(*r));
	r->m = m;
	r->ht = c->ht;
	r->present = 0;
	pthread_mutex_lock(&watch_lock);
	wk = wfind(h, db, key, klen);
	if (!wk) {
		if (wcount >= wnb)
			wgrow();
		wk = xmalloc(sizeof(*wk) + klen);
		wk->hash = h;
		wk->db = db;
		wk->klen = klen;
		memcpy(wk->key, key, klen);
		wk->refs = NULL;
		wk->next = *wbucket(h);
		*wbucket(h) = wk;
		wcount++;
		atomic_store_explicit(&wkeys, wcount, memory_order_relaxed);
	}
	r->wk = wk;
	r->next = wk->refs;
	wk->refs = r;
	pthread_mutex_unlock(&watch_lock);
	/* In the registry first: a write after ht_watch()'s count finds us. */
	present = ht_watch(r->ht, key, klen, 1);
	r->present = present > 0;
	m->w[m->nw++] = r;
}

/* Unlink @r from its key, and the key from the registry when it was the
 * last watcher.  watch_lock held. */
static void wunlink(struct watch_ref *r)
{
	struct watch_key *wk = r->wk, **pp;
	struct watch_ref **rp;

	for (rp = &wk->refs; *rp != r; rp = &(*rp)->next)
		;
	*rp = r->next;
	if (wk->refs)
		return;
	for (pp = wbucket(wk->hash); *pp != wk; pp = &(*pp)->next)
		;
	*pp = wk->next;
	wcount--;
	atomic_store_explicit(&wkeys, wcount, memory_order_relaxed);
	free(wk);
}

void multi_unwatch_all(struct conn *c)
{
	struct multi *m = c->multi;

	if (!m)
		return;
	/* The stripes' counts first, with the keys still known (wk). */
	for (int i = 0; i < m->nw; i++)
		(void)ht_watch(m->w[i]->ht, m->w[i]->wk->key, m->w[i]->wk->klen, -1);
	pthread_mutex_lock(&watch_lock);
	for (int i = 0; i < m->nw; i++) {
		wunlink(m->w[i]);
		free(m->w[i]);
	}
	pthread_mutex_unlock(&watch_lock);
	m->nw = 0;
	/* After the unlinks: no hook can mark us any more. */
	atomic_store_explicit(&m->dirty_cas, 0, memory_order_relaxed);
}

int multi_watch_broken(struct conn *c)
{
	struct multi *m = c->multi;

	if (!m || !m->nw)
		return 0;
	if (atomic_load_explicit(&m->dirty_cas, memory_order_acquire))
		return 1;
	for (int i = 0; i < m->nw; i++) {
		struct watch_ref *r = m->w[i];
		int now = ht_peek_rcu(table_of(r->wk->db), r->wk->key, r->wk->klen) != NULL;

		/* Expired or flushed since WATCH; or created in a table whose
		 * stripe did not count us (SWAPDB moved it, multi_touch_dbs()). */
		if (now != r->present)
			return 1;
	}
	return 0;
}

void multi_watch_key(struct conn *c, int i, int *db, const void **key, size_t *klen)
{
	*db = c->multi->w[i]->wk->db;
	*key = c->multi->w[i]->wk->key;
	*klen = c->multi->w[i]->wk->klen;
}

/* Mark every watcher of @wk dirty.  watch_lock held. */
static void wtouch(struct watch_key *wk)
{
	for (struct watch_ref *r = wk ? wk->refs : NULL; r; r = r->next)
		atomic_store_explicit(&r->m->dirty_cas, 1, memory_order_release);
}

void multi_touched(int db, const void *key, size_t klen, int kind)
{
	/* An expired key's removal breaks only a WATCH that saw the key: the
	 * presence check at EXEC finds that one (as Redis: a key already
	 * expired when WATCH ran is no change). */
	if (kind == HT_WATCH_EXPIRED || !atomic_load_explicit(&wkeys, memory_order_relaxed))
		return;
	pthread_mutex_lock(&watch_lock);
	wtouch(wfind(whash(db, key, klen), db, key, klen));
	pthread_mutex_unlock(&watch_lock);
}

/*
 * Redis's touchAllWatchedKeysInDb(): every key watched in db @a or @b (-1:
 * none) that exists in either of them breaks its watchers.  FLUSHDB and
 * FLUSHALL call it before the flush (with @b -1), SWAPDB after the swap and
 * its wait.  A watched key absent from both stays watched; its count stays
 * in the table WATCH saw (watch_ref.ht), and EXEC's presence check
 * (multi_watch_broken()) catches a later creation wherever it lands.
 * Context: worker, online (lock-free lookups); no stripe held.
 */
void multi_touch_dbs(int a, int b)
{
	pthread_mutex_lock(&watch_lock);
	for (size_t i = 0; i < wnb; i++) {
		for (struct watch_key *wk = wbuckets[i]; wk; wk = wk->next) {
			if (wk->db != a && wk->db != b)
				continue;
			if (ht_peek_rcu(table_of(a), wk->key, wk->klen) ||
			    (b >= 0 && ht_peek_rcu(table_of(b), wk->key, wk->klen)))
				wtouch(wk);
		}
	}
	pthread_mutex_unlock(&watch_lock);
}

void multi_release(struct conn *c)
{
	if (!c->multi)
		return;
	multi_discard(c);
	free(c->multi->w);
	free(c->multi);
	c->multi = NULL;
}
