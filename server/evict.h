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
extern const char *const evict_policy_names[]; /* by EVICT_*, NULL-terminated (config.c) */
struct ht;
void evict_init(void);		 /* after db_init() */
void evict_fini(void);		 /* before db_fini() */
/* CONFIG SET hooks; weak so that programs linking config.c without evict.c
 * (fuzz_resp) need not carry the keyspace.  Callers check for NULL. */
__attribute__((weak)) void evict_config_changed(void); /* policy, lfu-* changed */
__attribute__((weak)) void evict_maxmemory_set(void);  /* maxmemory: evict at once if over */
__attribute__((weak)) void evict_rcu_limit_set(void);  /* rcu-callback-limit changed */
/* Before a command (maxmemory set): evict what is over the limit.  Return 0,
 * or -1 when over the limit with nothing to evict (CMD_DENYOOM: -OOM). */
int evict_before_command(void);
void evict_cron(void); /* main thread, hz times a second */
unsigned long long evict_evicted_keys(void);
void evict_reset_stats(void);
void evict_exceeded_time(unsigned long long *total_ms, unsigned long long *current_ms);

#endif /* SERVER_EVICT_H */
