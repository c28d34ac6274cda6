/*
 * evict.h - the cache tier (evict.c): maxmemory, the eviction policies, the
 * access clock, OBJECT and MEMORY's policy parts.  The memory figures are
 * mem.c's (mem.h).
 */
#ifndef SERVER_EVICT_H
#define SERVER_EVICT_H

/* cache tier (evict.c): maxmemory, eviction, access clock, MEMORY, OBJECT */
enum {
	EVICT_VOLATILE_LRU,
	EVICT_VOLATILE_LFU,
	EVICT_VOLATILE_RANDOM,
	EVICT_VOLATILE_TTL,
	EVICT_ALLKEYS_LRU,
	EVICT_ALLKEYS_LFU,
	EVICT_ALLKEYS_RANDOM,
	EVICT_NOEVICTION
};
extern const char *const evict_policy_names[]; /* by EVICT_*, NULL-terminated */

/*
 * The cache tier's options (evict.c's rows): CONFIG SET may change any of
 * them from any worker; readers load them with relaxed atomics, and a change
 * runs evict.c's apply callback (evicting at once for maxmemory, switching
 * the access words for the policy and lfu-*, the RCU callback bound).
 */
struct evict_cfg {
	_Atomic long long maxmemory;	      /* bytes, 0 = no limit */
	_Atomic long long maxmemory_policy;   /* EVICT_* */
	_Atomic long long maxmemory_samples;  /* keys sampled per eviction */
	_Atomic long long lfu_log_factor;     /* LFU counter's logarithm factor */
	_Atomic long long lfu_decay_time;     /* minutes per counter decrement, 0 = never */
	_Atomic long long rcu_callback_limit; /* pending call_rcu() per thread, 0 = unbounded */
};
extern struct evict_cfg g_evict_cfg;
struct ht;
void evict_init(void);		 /* after db_init() */
void evict_fini(void);		 /* before db_fini() */
/* Before a command (maxmemory set): evict what is over the limit.  Return 0,
 * or -1 when over the limit with nothing to evict (CMD_DENYOOM: -OOM). */
int evict_before_command(void);
void evict_cron(void); /* main thread, hz times a second */
unsigned long long evict_evicted_keys(void);
void evict_reset_stats(void);
void evict_exceeded_time(unsigned long long *total_ms, unsigned long long *current_ms);

/* What OBJECT reads (cmd_object.c); any worker, online, @e from the table. */
struct ht_entry;
/* 1 while the table's access words are LFU words (an LFU policy is set). */
int evict_lfu_mode(void);
/* 1 when Redis would share the integers 0..9999 (no LRU/LFU limit on). */
int evict_shares_integers(void);
/* OBJECT FREQ: @e's LFU counter, decayed to now (LFU mode only). */
long long evict_entry_freq(const struct ht_entry *e);
/* OBJECT IDLETIME: seconds since @e was last touched (LRU mode only). */
long long evict_entry_idle_s(const struct ht_entry *e);
/* RESTORE: give the new entry @e a fresh access word, as a new Redis object
 * has, then the FREQ @lfu_freq (0..255; LFU mode) or IDLETIME @lru_idle_s
 * (seconds; LRU mode) when >= 0, as Redis's objectSetLRUOrLFU(). */
void evict_entry_restore(const struct ht_entry *e, long long lfu_freq, long long lru_idle_s);

#endif /* SERVER_EVICT_H */
