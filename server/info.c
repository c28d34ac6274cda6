/*
 * info.c - the INFO command: server, clients, memory, persistence, stats,
 * replication, cpu, rcu and keyspace sections, with the field names Redis
 * clients and dashboards read.
 *
 * Counters live per worker (struct wstats, single writer) and are summed here;
 * CONFIG RESETSTAT records baselines instead of writing other threads'
 * counters.  The instantaneous rings (ops/sec, input and output bytes/sec) are
 * written by the main thread's cron only and read with relaxed atomics.
 *
 * Every field Redis 7.0 prints is printed, in Redis's order (rcukv's own,
 * rcukv_version, threads, rcu_flavor, snapshot_held_bytes and the RCU
 * section, sit among them).  Features rcukv does not have (replication,
 * scripts and functions, cluster, modules, forks, defragmentation, client
 * tracking, pub/sub, io-threads, RESTORE) print what Redis prints without
 * them: 0, an empty section, master_replid2 of zeros.  tests/server/
 * test_stats.sh checks the layout against Redis's, and a redis-server 7.0
 * passes the same check.
 */
#define RCU_FLAVOR_QSBR
#include "rcu/rcu.h"
#include "server/cmd.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/evict.h"
#include "server/info.h"
#include "server/block.h"
#include "server/lathist.h"
#include "server/mem.h"
#include "server/module.h"
#include "server/persist.h"
#include "server/pubsub.h"
#include "server/repl.h"
#include "server/replm.h"
#include "server/reply.h"
#include "server/tracking.h"
#include "server/script.h"
#include "server/server.h"
#include "server/stats.h"
#include "server/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#define NSTATS (sizeof(struct wstats) / sizeof(_Atomic unsigned long long))
static _Atomic unsigned long long baseline[NSTATS];
static _Atomic unsigned long long base_rejected, base_expired;

/* Instantaneous metrics, as Redis's trackInstantaneousMetric(): each cron
 * tick stores (counter delta) * 1000 / (ms since the last tick) in a ring of
 * INST_SAMPLES; INFO prints the ring's mean.  The counters are the raw sums
 * (no RESETSTAT baseline), so a reset never makes a delta negative. */
#define INST_SAMPLES 16
enum { INST_OPS, INST_NET_IN, INST_NET_OUT, INST_METRICS };
static _Atomic long long inst_ring[INST_METRICS][INST_SAMPLES]; /* cron writes */
static int inst_idx;						/* cron only */
static unsigned long long inst_last[INST_METRICS];		/* cron only */
static long long inst_last_ms;					/* cron only */

static unsigned long long stat_of(size_t off)
{
	return stats_total(off) -
	       atomic_load_explicit(&baseline[off / sizeof(_Atomic unsigned long long)],
				    memory_order_relaxed);
}
#define STAT(field) stat_of(offsetof(struct wstats, field))

void info_reset_stats(void)
{
	for (size_t i = 0; i < NSTATS; i++)
		atomic_store(&baseline[i], stats_total(i * sizeof(_Atomic unsigned long long)));
	atomic_store(&base_rejected, atomic_load(&g_srv.rejected_conns));
	atomic_store(&base_expired, db_expired_total());
	mem_peak_reset();
	evict_reset_stats();
	stats_reset();
}

/* Main thread cron, hz times a second: the memory peak, and every 100 ms (as
 * Redis's run_with_period(100): every hz/10-th tick, each tick when hz <= 10,
 * so the ring spans 1.6 s at any hz) one sample of each instantaneous
 * metric. */
void info_sample_ops(void)
{
	static unsigned long long loops; /* cron only */
	long long hz = atomic_load_explicit(&g_cfg.hz, memory_order_relaxed);
	long long now = util_mstime();
	unsigned long long cur[INST_METRICS];

	mem_peak_sample();
	if (loops++ % (unsigned long long)(hz > 10 ? hz / 10 : 1))
		return;
	cur[INST_OPS] = STATS_TOTAL(commands);
	cur[INST_NET_IN] = STATS_TOTAL(net_in);
	cur[INST_NET_OUT] = STATS_TOTAL(net_out);
	if (inst_last_ms && now > inst_last_ms) {
		for (int m = 0; m < INST_METRICS; m++) {
			long long v = (long long)((cur[m] - inst_last[m]) * 1000ULL /
						  (unsigned long long)(now - inst_last_ms));

			atomic_store_explicit(&inst_ring[m][inst_idx], v, memory_order_relaxed);
		}
		inst_idx = (inst_idx + 1) % INST_SAMPLES;
	}
	inst_last_ms = now;
	memcpy(inst_last, cur, sizeof(inst_last));
}

/* the mean of a metric's ring: per second (ops, bytes) */
static long long inst_metric(int m)
{
	long long sum = 0;

	for (int i = 0; i < INST_SAMPLES; i++)
		sum += atomic_load_explicit(&inst_ring[m][i], memory_order_relaxed);
	return sum / INST_SAMPLES;
}

/* Redis's bytesToHuman(): B below 1024, then K, M, G, T, P with two decimals */
static void human(char *buf, size_t len, double n)
{
	static const char unit[] = "KMGTP";
	double d = n;
	int u = -1;

	if (n < 1024) {
		snprintf(buf, len, "%.0fB", n);
		return;
	}
	while (u < 4 && d >= 1024) {
		d /= 1024;
		u++;
	}
	if (d >= 1024) /* past 1024P: bytes, as Redis */
		snprintf(buf, len, "%.0fB", n);
	else
		snprintf(buf, len, "%.2f%c", d, unit[u]);
}

/* The CPU time of thread tid of this process from /proc (clock ticks, so
 * 10 ms steps), added to *user / *sys in us.  No such thread: nothing. */
static void thread_cpu(int tid, long long *user, long long *sys)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the name (2nd field) may hold spaces and ')': fields 14 and 15,
	 * utime and stime, are the 12th and 13th after its last ')' */
	p = strrchr(buf, ')');
	if (!p || hz <= 0 ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return;
	*user += (long long)(ut * 1000000ULL / (unsigned long long)hz);
	*sys += (long long)(st * 1000000ULL / (unsigned long long)hz);
}

/* Server's monotonic_clock: the clock commands are timed with (stats.c) */
static void monotonic_name(char *buf, size_t len)
{
	if (stats_tsc_ns > 0)
		snprintf(buf, len, "X86 TSC @ %ld ticks/us", (long)(1000.0 / stats_tsc_ns));
	else
		snprintf(buf, len, "POSIX clock_gettime");
}

struct sbuf {
	char *p;
	size_t len, cap;
};

__attribute__((format(printf, 2, 3))) static void sb_printf(struct sbuf *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(s->p + s->len, s->cap - s->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < s->cap - s->len) {
			s->len += (size_t)n;
			return;
		}
		s->cap = s->cap * 2 + (size_t)n;
		s->p = xrealloc(s->p, s->cap);
	}
}

/* cmdstat_<name>:calls=..., for each command called or rejected since the
 * last RESETSTAT (Redis 7.0's fields and float formatting) */
static void info_commandstats(struct sbuf *s, long long now)
{
	(void)now;
	for (int i = 0; i < stats_nslots(); i++) {
		struct stats_cmd_sum t;

		stats_cmd_sum(i, &t, NULL);
		if (!t.calls && !t.rejected && !t.failed)
			continue;
		sb_printf(s,
			  "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,"
			  "failed_calls=%llu\r\n",
			  stats_slot_name(i), t.calls, t.usec,
			  t.calls ? (double)((float)t.usec / (float)t.calls) : 0.0, t.rejected,
			  t.failed);
	}
}

static void info_errorstats(struct sbuf *s, long long now)
{
	struct stats_err_sum e[STATS_ERR_TYPES];
	int n = stats_errors(e, STATS_ERR_TYPES);

	(void)now;
	for (int i = 0; i < n; i++)
		sb_printf(s, "errorstat_%s:count=%llu\r\n", e[i].name, e[i].count);
}

/* latency_percentiles_usec_<name>:p50=...,p99=...: each command with a
 * latency sample; the values are ns / 1000 with 3 decimals, as Redis. */
static void info_latencystats(struct sbuf *s)
{
	unsigned long long *h = xmalloc(LATHIST_LEN * sizeof(*h));
	double *pct;
	int np = stats_pctl_copy(&pct);

	for (int i = 0; i < stats_nslots(); i++) {
		struct stats_cmd_sum t;

		stats_cmd_sum(i, &t, h);
		if (!t.samples)
			continue;
		sb_printf(s, "latency_percentiles_usec_%s:", stats_slot_name(i));
		for (int j = 0; j < np; j++) {
			char pb[64];

			lathist_fmt_pct(pb, sizeof(pb), pct[j]);
			sb_printf(s, "%sp%s=%.3f", j ? "," : "", pb,
				  (double)lathist_percentile(h, t.samples, pct[j]) / 1000.0);
		}
		sb_printf(s, "\r\n");
	}
	free(pct);
	free(h);
}

/* The sections INFO knows, in the order it prints them.  @in_default: part
 * of INFO, INFO default (and so of all and everything); commandstats and
 * latencystats are printed only when asked for, or by all / everything.
 * @print: the fields (NULL: a header only, as Modules with none loaded). */
struct info_section {
	const char *name, *title;
	int in_default;
	void (*print)(struct sbuf *s, long long now);
};

static void info_server(struct sbuf *s, long long now)
{
	struct utsname un;
	char mono[64];

	uname(&un);
	monotonic_name(mono, sizeof(mono));
	sb_printf(
	    s,
	    "redis_version:%s\r\nrcukv_version:%s\r\nredis_git_sha1:00000000\r\n"
	    "redis_git_dirty:0\r\nredis_build_id:0\r\nredis_mode:standalone\r\n"
	    "os:%s %s %s\r\narch_bits:%d\r\nmonotonic_clock:%s\r\n"
	    "multiplexing_api:epoll\r\n"
	    "atomicvar_api:c11-builtin\r\ngcc_version:%d.%d.%d\r\nprocess_id:%d\r\n"
	    "process_supervised:no\r\nrun_id:%s\r\ntcp_port:%d\r\nserver_time_usec:%lld\r\n"
	    "uptime_in_seconds:%lld\r\nuptime_in_days:%lld\r\nhz:%lld\r\nconfigured_hz:%"
	    "lld\r\nlru_clock:%lld\r\n"
	    "executable:%s\r\nconfig_file:%s\r\nio_threads_active:0\r\nthreads:%d\r\n"
	    "rcu_flavor:%s\r\n",
	    REDIS_COMPAT_VERSION, RCUKV_VERSION, un.sysname, un.release, un.machine,
	    (int)(sizeof(long) * 8), mono, __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__,
	    (int)g_srv.pid, g_srv.runid, g_cfg.port, util_ustime(),
	    (now - g_srv.start_ms) / 1000, (now - g_srv.start_ms) / 86400000,
	    atomic_load(&g_cfg.hz), atomic_load(&g_cfg.hz),
	    /* Redis's LRU clock: seconds, 24 bits (rcukv's own counts 10 ms) */
	    (now / 1000) & 0xffffff, g_srv.executable,
	    g_cfg.config_file ? g_cfg.config_file : "", g_srv.nworkers, RCU_FLAVOR_NAME);
}

static void info_clients(struct sbuf *s, long long now)
{
	long long tc, tk, ti, tp;

	(void)now;
	tracking_stats(&tc, &tk, &ti, &tp);
	sb_printf(
	    s,
	    "connected_clients:%d\r\ncluster_connections:0\r\nmaxclients:%"
	    "lld\r\n"
	    "client_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\n"
	    "blocked_clients:%lld\r\ntracking_clients:%lld\r\nclients_in_timeout_table:%lld\r\n",
	    atomic_load(&g_srv.nclients),
	    atomic_load(&g_cfg.maxclients), block_count(), tc, block_count_timed());
}

static void info_memory(struct sbuf *s, long long now)
{
	(void)now;
	struct mem_figures m;
	unsigned long long sysmem = mem_system_total();
	char h_used[32], h_rss[32], h_peak[32], h_sys[32], h_max[32], h_zero[32];
	char h_lua[32], h_scripts[32];
	size_t lua_mem, nscripts, scripts_mem;
	long long maxmem = atomic_load(&g_evict_cfg.maxmemory);

	mem_figures(&m);
	human(h_used, sizeof(h_used), (double)m.used);
	human(h_rss, sizeof(h_rss), (double)m.rss);
	human(h_peak, sizeof(h_peak), (double)m.peak);
	human(h_sys, sizeof(h_sys), (double)sysmem);
	human(h_max, sizeof(h_max), (double)maxmem);
	human(h_zero, sizeof(h_zero), 0);
	sb_printf(s,
		  "used_memory:%zu\r\nused_memory_human:%s\r\n"
		  "used_memory_rss:%zu\r\nused_memory_rss_human:%s\r\n"
		  "used_memory_peak:%zu\r\nused_memory_peak_human:%s\r\n"
		  "used_memory_peak_perc:%.2f%%\r\nused_memory_overhead:%zu\r\n"
		  "used_memory_startup:%zu\r\nused_memory_dataset:%zu\r\n"
		  "used_memory_dataset_perc:%.2f%%\r\nallocator_allocated:%zu\r\n"
		  "allocator_active:%zu\r\nallocator_resident:%zu\r\n"
		  "total_system_memory:%llu\r\ntotal_system_memory_human:%s\r\n",
		  m.used, h_used, m.rss, h_rss, m.peak, h_peak,
		  m.peak_perc, m.overhead, m.startup, m.dataset, m.dataset_perc,
		  m.allocated, m.active, m.resident, sysmem, h_sys);
	/* Lua: the workers' states summed (script.c); no functions */
	script_info(&lua_mem, &nscripts, &scripts_mem);
	human(h_lua, sizeof(h_lua), (double)lua_mem);
	human(h_scripts, sizeof(h_scripts), (double)scripts_mem);
	sb_printf(s,
		  "used_memory_lua:%zu\r\nused_memory_vm_eval:%zu\r\n"
		  "used_memory_lua_human:%s\r\nused_memory_scripts_eval:%zu\r\n"
		  "number_of_cached_scripts:%zu\r\nnumber_of_functions:0\r\n"
		  "number_of_libraries:0\r\nused_memory_vm_functions:0\r\n"
		  "used_memory_vm_total:%zu\r\nused_memory_vm_total_human:%s\r\n"
		  "used_memory_functions:0\r\nused_memory_scripts:%zu\r\n"
		  "used_memory_scripts_human:%s\r\n",
		  lua_mem, lua_mem, h_lua, scripts_mem, nscripts, lua_mem, h_lua, scripts_mem,
		  h_scripts);
	/* lazyfree_*: rcukv frees every deleted entry after a grace period
	 * on the RCU callback thread; those frees are the RCU section's
	 * rcu_callbacks_*, not Redis's lazy free of big values, so 0 */
	sb_printf(s,
		  "maxmemory:%lld\r\nmaxmemory_human:%s\r\nmaxmemory_policy:%s\r\n"
		  "allocator_frag_ratio:%.2f\r\nallocator_frag_bytes:%lld\r\n"
		  "allocator_rss_ratio:%.2f\r\nallocator_rss_bytes:%lld\r\n"
		  "rss_overhead_ratio:%.2f\r\nrss_overhead_bytes:%lld\r\n"
		  "mem_fragmentation_ratio:%.2f\r\nmem_fragmentation_bytes:%lld\r\n"
		  "mem_not_counted_for_evict:%zu\r\nmem_replication_backlog:0\r\n"
		  "mem_total_replication_buffers:0\r\nmem_clients_slaves:0\r\n"
		  "mem_clients_normal:%zu\r\nmem_cluster_links:0\r\nmem_aof_buffer:0\r\n"
		  "mem_allocator:%s\r\nactive_defrag_running:0\r\n"
		  "lazyfree_pending_objects:0\r\nlazyfreed_objects:0\r\n",
		  maxmem, h_max, evict_policy_names[atomic_load(&g_evict_cfg.maxmemory_policy)],
		  m.alloc_frag, m.alloc_frag_bytes, m.alloc_rss, m.alloc_rss_bytes,
		  m.rss_overhead, m.rss_overhead_bytes, m.frag, m.frag_bytes,
		  mem_not_counted(), m.clients_normal, mem_allocator_name());
}

static void info_persistence(struct sbuf *s, long long now)
{
	(void)now;
	char pbuf[2048];

	persist_info(pbuf, sizeof(pbuf));
	sb_printf(s, "%s", pbuf);
}

static void info_stats(struct sbuf *s, long long now)
{
	(void)now;
	double stale;
	unsigned long long cap, cpu_ms, ex_total, ex_cur;
	long long tc, tk, ti, tp;

	tracking_stats(&tc, &tk, &ti, &tp);
	db_expire_stats(&stale, &cap, &cpu_ms);
	evict_exceeded_time(&ex_total, &ex_cur);
	sb_printf(
	    s,
	    "total_connections_received:%llu\r\ntotal_commands_processed:%llu\r\n"
	    "instantaneous_ops_per_sec:%lld\r\ntotal_net_input_bytes:%llu\r\n"
	    "total_net_output_bytes:%llu\r\ntotal_net_repl_input_bytes:0\r\n"
	    "total_net_repl_output_bytes:0\r\ninstantaneous_input_kbps:%.2f\r\n"
	    "instantaneous_output_kbps:%.2f\r\ninstantaneous_input_repl_kbps:0.00\r\n"
	    "instantaneous_output_repl_kbps:0.00\r\nrejected_connections:%llu\r\n"
	    "sync_full:%llu\r\nsync_partial_ok:%llu\r\nsync_partial_err:%llu\r\n"
	    "expired_keys:%llu\r\nexpired_stale_perc:%.2f\r\n"
	    "expired_time_cap_reached_count:%llu\r\nexpire_cycle_cpu_milliseconds:%llu\r\n"
	    "evicted_keys:%llu\r\nevicted_clients:0\r\n"
	    "total_eviction_exceeded_time:%llu\r\n"
	    "current_eviction_exceeded_time:%llu\r\nkeyspace_hits:%llu\r\n"
	    "keyspace_misses:%llu\r\npubsub_channels:%lld\r\npubsub_patterns:%lld\r\n",
	    STAT(conns_received), STAT(commands),
	    inst_metric(INST_OPS), STAT(net_in), STAT(net_out),
	    (double)inst_metric(INST_NET_IN) / 1024,
	    (double)inst_metric(INST_NET_OUT) / 1024,
	    atomic_load(&g_srv.rejected_conns) - atomic_load(&base_rejected),
	    replm_stat(0), replm_stat(1), replm_stat(2), /* replm.c */
	    db_expired_total() - atomic_load(&base_expired), stale, cap, cpu_ms,
	    evict_evicted_keys(), ex_total, ex_cur, STAT(keyspace_hits),
	    STAT(keyspace_misses), pubsub_count(PS_CHANNEL), pubsub_count(PS_PATTERN));
	/* saves run in a thread (persist.c), never a fork: no fork fields;
	 * io_threaded_*: the workers are not Redis's io-threads (which
	 * only read and write for the main thread; io_threads_active:0) */
	sb_printf(s,
		  "pubsubshard_channels:%lld\r\nlatest_fork_usec:0\r\ntotal_forks:0\r\n"
		  "migrate_cached_sockets:0\r\nslave_expires_tracked_keys:0\r\n"
		  "active_defrag_hits:0\r\nactive_defrag_misses:0\r\n"
		  "active_defrag_key_hits:0\r\nactive_defrag_key_misses:0\r\n"
		  "total_active_defrag_time:0\r\ncurrent_active_defrag_time:0\r\n"
		  "tracking_total_keys:%lld\r\ntracking_total_items:%lld\r\n"
		  "tracking_total_prefixes:%lld\r\nunexpected_error_replies:0\r\n"
		  "total_error_replies:%llu\r\ndump_payload_sanitizations:0\r\n"
		  "total_reads_processed:%llu\r\ntotal_writes_processed:%llu\r\n"
		  "io_threaded_reads_processed:0\r\nio_threaded_writes_processed:0\r\n"
		  "reply_buffer_shrinks:%llu\r\nreply_buffer_expands:%llu\r\n",
		  pubsub_count(PS_SHARD), tk, ti, tp, STAT(errors), STAT(reads), STAT(writes),
		  STAT(reply_shrinks), STAT(reply_expands));
}

static void info_replication(struct sbuf *s, long long now)
{
	char buf[2048];

	(void)now;
	/* repl_backlog_size: Redis's default repl-backlog-size (no backlog is
	 * ever created: rcukv feeds no replica) */
	repl_info(buf, sizeof(buf));
	sb_printf(s, "%s", buf);
}

static void info_cpu(struct sbuf *s, long long now)
{
	(void)now;
	struct rusage ru, ch;
	long long mu = 0, ms = 0;

	getrusage(RUSAGE_SELF, &ru);
	getrusage(RUSAGE_CHILDREN, &ch);
	/*
	 * *_main_thread: Redis's main thread is its event loop, where
	 * every command runs and connections are accepted, so
	 * used_cpu_* minus it is the work of its other threads.  rcukv's
	 * event loops are the main thread (accept, cron) and the
	 * workers (commands): their sum keeps that meaning (the rest is
	 * the RCU callback, save and allocator threads).  The main
	 * thread alone would stay near 0 under any load.  Read from
	 * /proc (RUSAGE_THREAD sees only the caller), in clock ticks.
	 */
	thread_cpu((int)g_srv.pid, &mu, &ms);
	for (int i = 0; i < g_srv.nworkers; i++) {
		int tid = atomic_load_explicit(&g_srv.workers[i].tid, memory_order_relaxed);

		if (tid)
			thread_cpu(tid, &mu, &ms);
	}
	sb_printf(
	    s,
	    "used_cpu_sys:%ld.%06ld\r\nused_cpu_user:%ld.%06ld\r\n"
	    "used_cpu_sys_children:%ld.%06ld\r\nused_cpu_user_children:%ld.%06ld\r\n"
	    "used_cpu_sys_main_thread:%lld.%06lld\r\n"
	    "used_cpu_user_main_thread:%lld.%06lld\r\n",
	    (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec,
	    (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec, (long)ch.ru_stime.tv_sec,
	    (long)ch.ru_stime.tv_usec, (long)ch.ru_utime.tv_sec, (long)ch.ru_utime.tv_usec,
	    ms / 1000000, ms % 1000000, mu / 1000000, mu % 1000000);
}

static void info_rcu(struct sbuf *s, long long now)
{
	(void)now;
	struct rcu_stats st;

	rcu_get_stats(&st);
	sb_printf(s,
		  "rcu_flavor:%s\r\nrcu_grace_periods:%lu\r\n"
		  "rcu_gp_last_latency_usec:%llu\r\nrcu_gp_max_latency_usec:%llu\r\n"
		  "rcu_callbacks_queued:%lu\r\nrcu_callbacks_invoked:%lu\r\n"
		  "rcu_callbacks_pending:%lu\r\nrcu_callbacks_pending_hwm:%lu\r\n"
		  "rcu_callbacks_throttled:%lu\r\nrcu_callback_batches:%lu\r\n"
		  "rcu_readers:%lu\r\nrcu_stalls:%lu\r\nrcu_callback_limit:%lld\r\n",
		  RCU_FLAVOR_NAME, st.gp_completed,
		  st.gp_last_ns / 1000, st.gp_max_ns / 1000, st.cb_queued, st.cb_invoked,
		  st.cb_pending, st.cb_pending_hwm, st.cb_throttled, st.cb_batches,
		  st.readers, st.stalls, atomic_load(&g_evict_cfg.rcu_callback_limit));
}

static void info_latency_section(struct sbuf *s, long long now)
{
	(void)now;
	if (atomic_load_explicit(&stats_latency_tracking, memory_order_relaxed))
		info_latencystats(s);
}

static void info_cluster(struct sbuf *s, long long now)
{
	(void)now;
	sb_printf(s, "cluster_enabled:0\r\n");
}

static void info_keyspace(struct sbuf *s, long long now)
{
	(void)now;
	for (int i = 0; i < g_ndbs; i++) {
		unsigned long long keys = db_keys_of(i);

		if (keys) /* only the non-empty ones, as Redis */
			sb_printf(s, "db%d:keys=%llu,expires=%llu,avg_ttl=%lld\r\n", i, keys,
				  db_expires_of(i), db_avg_ttl_of(i));
	}
}

static void info_module_line(void *arg, const char *line)
{
	sb_printf(arg, "%s\r\n", line);
}

static void info_modules(struct sbuf *s, long long now)
{
	(void)now;
	module_info(info_module_line, s);
}

static const struct info_section sections[] = {
	{"server", "Server", 1, info_server},
	{"clients", "Clients", 1, info_clients},
	{"memory", "Memory", 1, info_memory},
	{"persistence", "Persistence", 1, info_persistence},
	{"stats", "Stats", 1, info_stats},
	{"replication", "Replication", 1, info_replication},
	{"cpu", "CPU", 1, info_cpu},
	{"rcu", "RCU", 1, info_rcu},
	{"modules", "Modules", 1, info_modules},
	{"commandstats", "Commandstats", 0, info_commandstats},
	{"errorstats", "Errorstats", 1, info_errorstats},
	{"latencystats", "Latencystats", 0, info_latency_section},
	{"cluster", "Cluster", 1, info_cluster},
	{"keyspace", "Keyspace", 1, info_keyspace},
};

/* Is @sec asked for by the arguments of INFO?  No argument is "default";
 * "all" and "everything" take every section (rcukv has no module sections
 * for "everything" to add); names are case-insensitive and may repeat. */
static int want(const struct info_section *sec, int argc, struct conn *c)
{
	if (argc <= 1)
		return sec->in_default;
	for (int j = 1; j < argc; j++) {
		if (util_strcaseeq(ARGV(c, j), ARGL(c, j), sec->name))
			return 1;
		if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "all") ||
		    util_strcaseeq(ARGV(c, j), ARGL(c, j), "everything") ||
		    (util_strcaseeq(ARGV(c, j), ARGL(c, j), "default") && sec->in_default))
			return 1;
	}
	return 0;
}

/* INFO [section ...]: the sections asked for, each "# Title" and its fields,
 * separated by an empty line; unknown names add nothing (as Redis). */
void cmd_info(struct conn *c, int argc)
{
	struct sbuf s = {xmalloc(4096), 0, 4096};
	long long now = util_mstime();
	int n = 0;

	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		const struct info_section *sec = &sections[i];

		if (!want(sec, argc, c))
			continue;
		sb_printf(&s, "%s# %s\r\n", n++ ? "\r\n" : "", sec->title);
		if (sec->print)
			sec->print(&s, now);
	}
	reply_verbatim(c, s.p, s.len);
	free(s.p);
}
