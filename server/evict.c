/*
 * evict.c - the cache tier: maxmemory enforcement, eviction under the eight
 * maxmemory-policy values, and the LRU/LFU access clock of the table (what
 * OBJECT FREQ/IDLETIME read: cmd_object.c).
 *
 * Used memory.  server/mem.c measures it (mem.h): the allocator's figure
 * less the evicted bytes still waiting for their grace period, cached and
 * refreshed every millisecond; this file asks mem_used_estimate() before a
 * command, refreshes it (mem_used_refresh()) when a pass starts from the cron
 * or CONFIG SET, lowers it by what a pass frees (mem_used_sub()) and hands
 * mem.c what a pass evicted (mem_evicted_add()).
 *
 * Eviction.  As Redis's processCommand: before every command, when maxmemory
 * is set and the figure is over it, the worker evicts until it has freed the
 * excess, for at most EVICT_CMD_BUDGET_US (the cron goes on where it stopped).
 * If nothing can be evicted (noeviction, no candidate keys), commands flagged
 * CMD_DENYOOM get Redis's -OOM error; reads and deletes go on.  The
 * approximated LRU/LFU/TTL policies keep a pool of the best EVPOOL_SIZE
 * candidates seen so far (key copies, sorted by score), refilled with
 * maxmemory-samples random entries from ht_sample_rcu() per eviction; the
 * random policies delete one random entry.  A candidate is deleted with
 * ht_rmw() so that a volatile policy never deletes a key that lost its TTL
 * since it was sampled.  With maxmemory 0 the cost is one relaxed load a
 * command.
 *
 * The access word (ht.h).  LRU policies (and noeviction/random/ttl): the
 * table clock is the time in 10 ms units (LRU_UNIT_MS), set by the cron, so
 * idle time = clock - word.  LFU policies: ht_lfu_set() switches the table to
 * (minutes << 8 | log counter) words and the clock to minutes.
 *
 * Concurrency.  ev_lock serializes evictors (workers, cron) and owns the
 * pool and the sampling seed; it nests outside the table's stripe mutexes
 * (ht_rmw) and mem.c's mem_lock, and inside nothing.  Callers are registered
 * QSBR threads, online: sampled entries stay valid until their next quiescent
 * state.  Counters are
 * relaxed atomics.
 *
 * Tested by tests/server/test_cache.sh (policies, OOM, limits under a write
 * flood, RCU backlog) and tests/server/cases_cache.txt (replies recorded from
 * redis-server 7.0.15).
 */
#define RCU_FLAVOR_QSBR
#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "resp/resp.h"
#include "server/notify.h"
#include "server/mem.h"
#include "server/config.h"
#include "server/db.h"
#include "server/evict.h"
#include "server/log.h"
#include "server/mem.h"
#include "server/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EVPOOL_SIZE 16
#define EVPOOL_KEY_CACHE 255	/* longer keys are copied into a fresh buffer */
#define EVICT_CMD_BUDGET_US 500 /* eviction work per command (Redis: tenacity 10) */
#define LRU_UNIT_MS 10		/* LRU clock resolution */

struct pool_ent {
	uint64_t score; /* higher = evict first */
	int db;		/* the key's database, as Redis's evictionPoolEntry.dbid */
	size_t klen;
	size_t cap;
	char *key; /* NULL = empty slot */
};

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pool_ent pool[EVPOOL_SIZE];	 /* ev_lock; sorted by score ascending */
static int npool;				 /* ev_lock */
static uint64_t ev_seed = 0x9e3779b97f4a7c15ULL; /* ev_lock */
static long long exceeded_since_ms;		 /* ev_lock; 0 = under the limit */

static _Atomic unsigned long long evicted_keys, evicted_base;
static _Atomic unsigned long long exceeded_total_ms;
static _Atomic long long exceeded_since_pub; /* copy of exceeded_since_ms for INFO */
static _Atomic int lfu_mode;		     /* the table's words are LFU words */

/* ------------------------------------------------------------ clock */

static int policy_now(void)
{
	return (int)atomic_load_explicit(&g_evict_cfg.maxmemory_policy, memory_order_relaxed);
}

static int policy_is_lfu(int p)
{
	return p == EVICT_VOLATILE_LFU || p == EVICT_ALLKEYS_LFU;
}

static int policy_is_volatile(int p)
{
	return p <= EVICT_VOLATILE_TTL;
}

static uint32_t lru_clock_now(void)
{
	return (uint32_t)((unsigned long long)util_mstime() / LRU_UNIT_MS);
}

static uint32_t lfu_minutes_now(void)
{
	return (uint32_t)((unsigned long long)util_mstime() / 60000) & 0xffffffu;
}

static void clock_tick(void)
{
	uint32_t now = atomic_load_explicit(&lfu_mode, memory_order_relaxed) ? lfu_minutes_now()
									     : lru_clock_now();

	for (int i = 0; i < g_ndbs; i++)
		ht_clock_set(db_at(i), now);
}

static void pool_clear(void)
{
	for (int i = 0; i < npool; i++)
		pool[i].klen = 0;
	npool = 0;
}

static void evict_config_changed(void)
{
	int lfu = policy_is_lfu(policy_now());

	pthread_mutex_lock(&ev_lock);
	atomic_store_explicit(&lfu_mode, lfu, memory_order_relaxed);
	for (int i = 0; i < g_ndbs; i++)
		ht_lfu_set(db_at(i), lfu,
			   (uint32_t)atomic_load_explicit(&g_evict_cfg.lfu_log_factor,
							  memory_order_relaxed),
			   (uint32_t)atomic_load_explicit(&g_evict_cfg.lfu_decay_time,
							  memory_order_relaxed));
	clock_tick();
	pool_clear(); /* scores of another policy do not compare */
	pthread_mutex_unlock(&ev_lock);
	mem_used_refresh();
}

static void evict_rcu_limit_set(void)
{
	rcu_set_callback_limit(
	    (unsigned long)atomic_load_explicit(&g_evict_cfg.rcu_callback_limit, memory_order_relaxed));
}

void evict_init(void)
{
	evict_rcu_limit_set();
	evict_config_changed();
}

void evict_fini(void)
{
	pthread_mutex_lock(&ev_lock);
	for (int i = 0; i < EVPOOL_SIZE; i++) {
		free(pool[i].key);
		pool[i].key = NULL;
		pool[i].cap = 0;
	}
	npool = 0;
	pthread_mutex_unlock(&ev_lock);
}

/* ------------------------------------------------------------ eviction */

/* Eviction score of a sampled entry: higher goes first. */
static uint64_t entry_score(const struct ht_entry *e, int policy)
{
	uint32_t w = ht_entry_access(e);

	switch (policy) {
	case EVICT_VOLATILE_LFU:
	case EVICT_ALLKEYS_LFU:
		return 255 - ht_lfu_decayed(w, lfu_minutes_now(),
					    (uint32_t)atomic_load_explicit(&g_evict_cfg.lfu_decay_time,
									   memory_order_relaxed));
	case EVICT_VOLATILE_TTL:
		return UINT64_MAX - (uint64_t)ht_entry_expire(e);
	default:
		return (uint32_t)(lru_clock_now() - w);
	}
}

/* Insert a candidate into the pool (ev_lock), as Redis's eviction pool:
 * ascending scores, the worst candidate dropped when full. */
static void pool_insert(int db, const struct ht_entry *e, uint64_t score)
{
	int k = 0;
	struct pool_ent tmp;
	const char *key = ht_entry_key(e);
	size_t klen = ht_entry_klen(e);

	while (k < npool && pool[k].score < score)
		k++;
	for (int i = k; i < npool && pool[i].score == score; i++)
		if (pool[i].db == db && pool[i].klen == klen && !memcmp(pool[i].key, key, klen))
			return; /* already there */
	if (k == 0 && npool == EVPOOL_SIZE)
		return; /* worse than everything in a full pool */
	if (npool < EVPOOL_SIZE) {
		/* shift right, reusing the buffer of the slot past the end */
		tmp = pool[npool];
		memmove(&pool[k + 1], &pool[k], sizeof(pool[0]) * (size_t)(npool - k));
		npool++;
	} else {
		/* drop the lowest score (slot 0) and shift left */
		k--;
		tmp = pool[0];
		memmove(&pool[0], &pool[1], sizeof(pool[0]) * (size_t)k);
	}
	if (tmp.cap < klen + 1) {
		size_t cap = klen + 1 > EVPOOL_KEY_CACHE ? klen + 1 : EVPOOL_KEY_CACHE;

		free(tmp.key);
		tmp.key = xmalloc(cap);
		tmp.cap = cap;
	} else if (tmp.cap > EVPOOL_KEY_CACHE && klen + 1 <= EVPOOL_KEY_CACHE) {
		free(tmp.key); /* do not keep a huge buffer for a short key */
		tmp.key = xmalloc(EVPOOL_KEY_CACHE);
		tmp.cap = EVPOOL_KEY_CACHE;
	}
	memcpy(tmp.key, key, klen);
	tmp.db = db;
	tmp.klen = klen;
	tmp.score = score;
	pool[k] = tmp;
}

struct evdel {
	int volatile_only;
	size_t bytes; /* footprint: allocation size class + bucket share */
};
static size_t evicted_req_bytes; /* ev_lock: ht_entry_size() of this pass's evictions */

/* Under the key's stripe mutex: delete the key if it still qualifies. */
static int evdel_fn(struct ht_rmw *r, void *arg)
{
	struct evdel *d = arg;

	if (!r->old)
		return HT_RMW_KEEP;
	if (d->volatile_only && ht_entry_expire(r->old) == HT_NO_EXPIRE)
		return HT_RMW_KEEP;
	d->bytes = mem_entry_footprint(r->old);
	evicted_req_bytes += ht_entry_size(r->old);
	return HT_RMW_DELETE;
}

static size_t evict_key(int db, const void *key, size_t klen, int volatile_only)
{
	struct evdel d = {volatile_only, 0};

	if (ht_rmw(db_at(db), key, klen, evdel_fn, &d) != HT_RMW_DELETE)
		return 0;
	atomic_fetch_add_explicit(&evicted_keys, 1, memory_order_relaxed);
	if (notify_wanted(NOTIFY_EVICTED))
		notify_event(NOTIFY_EVICTED, "evicted", key, klen, db);
	return d.bytes;
}

/* The keys a policy may evict in table @ht (volatile: those with a TTL). */
static size_t evictable(struct ht *ht, int vol)
{
	return vol ? ht_count_expires(ht) : ht_count(ht);
}

/* Evict a random key (the *-random policies): from the databases in turn,
 * the first one with a candidate, as Redis's next_db.  ev_lock held. */
static size_t evict_random(int vol)
{
	static int next_db;
	const struct ht_entry *s[1];

	for (int k = 0; k < g_ndbs; k++) {
		int db = (next_db++ & INT_MAX) % g_ndbs;
		struct ht *ht = db_at(db);
		size_t n, b = 0;

		if (!evictable(ht, vol))
			continue;
		rcu_read_lock();
		n = ht_sample_rcu(ht, s, 1, vol, &ev_seed);
		if (n)
			b = evict_key(db, ht_entry_key(s[0]), ht_entry_klen(s[0]), vol);
		rcu_read_unlock();
		if (b)
			return b;
	}
	return 0;
}

/* Sample every database with candidates into the pool (Redis's
 * evictionPoolPopulate() per db).  Return the keys sampled.  ev_lock held. */
static size_t pool_fill(int policy, int vol, size_t samples)
{
	const struct ht_entry *s[64];
	size_t total = 0;

	for (int db = 0; db < g_ndbs; db++) {
		struct ht *ht = db_at(db);
		size_t n;

		if (!evictable(ht, vol))
			continue;
		rcu_read_lock();
		n = ht_sample_rcu(ht, s, samples, vol, &ev_seed);
		for (size_t i = 0; i < n; i++)
			pool_insert(db, s[i], entry_score(s[i], policy));
		rcu_read_unlock();
		total += n;
	}
	return total;
}

/* Evict one key under @policy (ev_lock held).  Return the bytes freed, or 0
 * if no key could be evicted. */
static size_t evict_one(int policy)
{
	int vol = policy_is_volatile(policy);
	long long samples = atomic_load_explicit(&g_evict_cfg.maxmemory_samples, memory_order_relaxed);

	if (samples < 1)
		samples = 1;
	if (samples > 64)
		samples = 64;
	if (policy == EVICT_VOLATILE_RANDOM || policy == EVICT_ALLKEYS_RANDOM) {
		for (int tries = 0; tries < 4; tries++) {
			size_t b = evict_random(vol);

			if (b)
				return b;
		}
		return 0;
	}
	for (int round = 0; round < 4; round++) {
		size_t n = pool_fill(policy, vol, (size_t)samples);

		if (!n && !npool)
			return 0;
		while (npool > 0) {
			struct pool_ent *pe = &pool[npool - 1];
			size_t b;

			npool--;
			b = evict_key(pe->db, pe->key, pe->klen, vol);
			if (b)
				return b;
		}
	}
	return 0;
}

/* Track how long used memory stays over the limit (ev_lock). */
static void exceeded_note(int over)
{
	long long now = util_mstime();

	if (over && !exceeded_since_ms) {
		exceeded_since_ms = now;
	} else if (!over && exceeded_since_ms) {
		atomic_fetch_add_explicit(&exceeded_total_ms,
					  (unsigned long long)(now - exceeded_since_ms),
					  memory_order_relaxed);
		exceeded_since_ms = 0;
	}
	atomic_store_explicit(&exceeded_since_pub, exceeded_since_ms, memory_order_relaxed);
}

static size_t headroom(size_t mm)
{
	size_t h = mm / 256;

	return h < 4096 ? 4096 : h > (256u << 10) ? (256u << 10) : h;
}

/*
 * Evict until used memory is back under maxmemory or @budget_us has passed.
 * Return 0 when under the limit or still working on it, -1 when over it
 * with nothing left to evict (Redis's EVICT_FAIL).
 */
static int evict_perform(long long mm, long long budget_us, int fresh)
{
	size_t used, tofree, freed = 0;
	long long start;
	int policy, ret = 0;
	unsigned long keys = 0;

	pthread_mutex_lock(&ev_lock);
	used = fresh ? mem_used_refresh() : mem_used_cached();
	if (used <= (size_t)mm) {
		exceeded_note(0);
		pthread_mutex_unlock(&ev_lock);
		return 0;
	}
	exceeded_note(1);
	policy = policy_now();
	if (policy == EVICT_NOEVICTION) {
		pthread_mutex_unlock(&ev_lock);
		return -1;
	}
	/* Evict a little past the limit so that passes (and their flush of
	 * the stripes' retired lists) come once per many writes, not per write. */
	tofree = used - (size_t)mm + headroom((size_t)mm);
	start = util_ustime();
	while (freed < tofree) {
		size_t b = evict_one(policy);

		if (!b) {
			ret = -1;
			break;
		}
		freed += b;
		if ((++keys & 15) == 0 && util_ustime() - start > budget_us)
			break;
	}
	mem_used_sub(freed);
	if (freed >= tofree)
		exceeded_note(0);
	if (keys)
		mem_evicted_add(evicted_req_bytes);
	evicted_req_bytes = 0;
	pthread_mutex_unlock(&ev_lock);
	return ret;
}

int evict_before_command(void)
{
	long long mm = atomic_load_explicit(&g_evict_cfg.maxmemory, memory_order_relaxed);

	if (!mm || mem_used_estimate() <= (size_t)mm)
		return 0;
	return evict_perform(mm, EVICT_CMD_BUDGET_US, 0);
}

void evict_cron(void)
{
	long long mm = atomic_load_explicit(&g_evict_cfg.maxmemory, memory_order_relaxed);
	long long hz = atomic_load_explicit(&g_cfg.hz, memory_order_relaxed);

	/* Under ev_lock: a policy switch (evict_config_changed()) between our
	 * read of lfu_mode and the clock store would leave the other mode's
	 * clock in the table for a tick. */
	pthread_mutex_lock(&ev_lock);
	clock_tick();
	pthread_mutex_unlock(&ev_lock);
	/* Batches of retired entries wait on their stripes for company (or for
	 * the stripe's next batch, when parked): when writes stop, nothing else
	 * sends them on, and their memory would wait with them.  Without
	 * maxmemory, only stripes idle since the last tick: busy ones send their
	 * own batches, and their writers free parked batches themselves. */
	for (int i = 0; i < g_ndbs; i++) {
		struct ht *ht = db_at(i);
		size_t retired, freed;

		/* A table whose unlinked entries were all freed has nothing
		 * waiting (the idle dbs: O(stripes) loads, no stripe lock). */
		ht_reclaim_progress(ht, &retired, &freed);
		if (retired != freed)
			ht_retire_flush(ht, !mm);
	}
	if (!mm) {
		pthread_mutex_lock(&ev_lock);
		exceeded_note(0);
		pthread_mutex_unlock(&ev_lock);
		return;
	}
	evict_perform(mm, 1000000 / (hz > 0 ? hz : 10) / 4, 1);
}

static void evict_maxmemory_set(void)
{
	long long mm = atomic_load_explicit(&g_evict_cfg.maxmemory, memory_order_relaxed);
	size_t used = mem_used_refresh();

	if (!mm || used <= (size_t)mm) {
		pthread_mutex_lock(&ev_lock);
		exceeded_note(0);
		pthread_mutex_unlock(&ev_lock);
	} else {
		srv_log(
		    LL_WARNING,
		    "WARNING: the new maxmemory value set via CONFIG SET (%lld) is smaller than "
		    "the current memory usage (%zu). This will result in key eviction and/or the "
		    "inability to accept new write commands depending on the maxmemory-policy.",
		    mm, used);
		evict_perform(mm, EVICT_CMD_BUDGET_US * 20, 1);
	}
}

unsigned long long evict_evicted_keys(void)
{
	return atomic_load_explicit(&evicted_keys, memory_order_relaxed) -
	       atomic_load_explicit(&evicted_base, memory_order_relaxed);
}

void evict_reset_stats(void)
{
	atomic_store(&evicted_base, atomic_load(&evicted_keys));
	atomic_store(&exceeded_total_ms, 0);
}

void evict_exceeded_time(unsigned long long *total_ms, unsigned long long *current_ms)
{
	long long since = atomic_load_explicit(&exceeded_since_pub, memory_order_relaxed);
	unsigned long long cur = since ? (unsigned long long)(util_mstime() - since) : 0;

	*current_ms = cur;
	*total_ms = atomic_load_explicit(&exceeded_total_ms, memory_order_relaxed) + cur;
}

/* -------------------------------------- what OBJECT asks of an entry */

int evict_lfu_mode(void)
{
	return atomic_load_explicit(&lfu_mode, memory_order_relaxed);
}

int evict_shares_integers(void)
{
	int p = policy_now();

	return atomic_load_explicit(&g_evict_cfg.maxmemory, memory_order_relaxed) == 0 ||
	       !(policy_is_lfu(p) || p == EVICT_VOLATILE_LRU || p == EVICT_ALLKEYS_LRU);
}

long long evict_entry_freq(const struct ht_entry *e)
{
	return ht_lfu_decayed(
	    ht_entry_access(e), lfu_minutes_now(),
	    (uint32_t)atomic_load_explicit(&g_evict_cfg.lfu_decay_time, memory_order_relaxed));
}

long long evict_entry_idle_s(const struct ht_entry *e)
{
	return (long long)(uint32_t)(lru_clock_now() - ht_entry_access(e)) * LRU_UNIT_MS / 1000;
}

/* Redis keeps an LRU time in seconds in 24 bits: an IDLETIME subtracted from
 * its clock wraps once by LRU_CLOCK_MAX and is then cut to 24 bits, and
 * OBJECT IDLETIME unwraps it against the clock.  The idle time Redis would
 * report afterwards, in seconds (at most 2^24), so that ours matches. */
static long long redis_lru_idle_s(long long idle)
{
	const long long max = (1 << 24) - 1;
	long long now = (util_mstime() / 1000) & max;
	long long lru = now - idle;

	if (lru < 0)
		lru += max;
	lru = (long long)((unsigned long long)lru & (unsigned long long)max);
	return now >= lru ? now - lru : now + (max - lru);
}

void evict_entry_restore(const struct ht_entry *e, long long lfu_freq, long long lru_idle_s)
{
	uint32_t w;

	if (evict_lfu_mode())
		w = lfu_minutes_now() << 8 | (uint32_t)(lfu_freq >= 0 ? lfu_freq : HT_LFU_INIT);
	else
		w = lru_clock_now() -
		    (uint32_t)(lru_idle_s >= 0 ? redis_lru_idle_s(lru_idle_s) : 0) *
			(1000 / LRU_UNIT_MS);
	ht_entry_access_store(e, w);
}

/* ------------------------------------------------------------ options */

struct evict_cfg g_evict_cfg;

/* maxmemory-policy values, in Redis's order (the error text lists them so) */
const char *const evict_policy_names[] = {"volatile-lru",   "volatile-lfu", "volatile-random",
					  "volatile-ttl",   "allkeys-lru",  "allkeys-lfu",
					  "allkeys-random", "noeviction",   NULL};

#define EV_NUM(n, k, f, lo, hi, d, ap)                                                             \
	{ .name = (n), .kind = (k), .mut = CFG_MUTABLE, .field = &g_evict_cfg.f, .min = (lo),      \
	  .max = (hi), .def = (d), .apply = (ap) }

static const struct cfg_opt evict_rows[] = {
    EV_NUM("maxmemory", CFG_MEM, maxmemory, 0, LLONG_MAX, "0", evict_maxmemory_set),
    {.name = "maxmemory-policy", .kind = CFG_ENUM, .mut = CFG_MUTABLE,
     .field = &g_evict_cfg.maxmemory_policy, .enums = evict_policy_names, .def = "noeviction",
     .apply = evict_config_changed},
    EV_NUM("maxmemory-samples", CFG_INT, maxmemory_samples, 1, INT_MAX, "5", NULL),
    EV_NUM("lfu-log-factor", CFG_INT, lfu_log_factor, 0, INT_MAX, "10", evict_config_changed),
    EV_NUM("lfu-decay-time", CFG_INT, lfu_decay_time, 0, INT_MAX, "1", evict_config_changed),
    EV_NUM("rcu-callback-limit", CFG_INT, rcu_callback_limit, 0, LLONG_MAX, "100000",
	   evict_rcu_limit_set),
};

static struct cfg_group evict_group = {"evict", evict_rows,
				       (int)(sizeof(evict_rows) / sizeof(evict_rows[0])), NULL,
				       NULL, NULL};
CFG_REGISTER(evict_group)
