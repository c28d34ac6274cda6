/*
 * info.c - the INFO command: server, clients, memory, persistence, stats,
 * replication, cpu, rcu and keyspace sections, with the field names Redis
 * clients and dashboards read.
 *
 * Counters live per worker (struct wstats, single writer) and are summed here;
 * CONFIG RESETSTAT records baselines instead of writing other threads'
 * counters.  The ops/sec ring is written by the main thread's cron only and
 * read with relaxed atomics.
 */
#define RCU_FLAVOR_QSBR
#include "rcu/rcu.h"
#include "server/server_internal.h"
#include "server/lathist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(SRV_JEMALLOC) && SRV_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#define NSTATS (sizeof(struct wstats) / sizeof(_Atomic unsigned long long))
static _Atomic unsigned long long baseline[NSTATS];
static _Atomic unsigned long long base_rejected, base_expired;

#define OPS_SAMPLES 16
static _Atomic long long ops_ring[OPS_SAMPLES];
static int ops_idx;
static unsigned long long ops_last_cmds;
static long long ops_last_ms;
static _Atomic size_t mem_peak;

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
	atomic_store(&mem_peak, 0);
	evict_reset_stats();
	stats_reset();
}

static size_t mem_used(void)
{
	return evict_mem_allocated();
}

size_t info_rss(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, res = 0;

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

/* Main thread cron: one ops/sec sample and the memory peak. */
void info_sample_ops(void)
{
	long long now = util_mstime();
	unsigned long long cmds = STATS_TOTAL(commands);
	size_t used = mem_used();

	if (ops_last_ms && now > ops_last_ms) {
		long long ops = (long long)((cmds - ops_last_cmds) * 1000ULL /
					    (unsigned long long)(now - ops_last_ms));

		atomic_store_explicit(&ops_ring[ops_idx], ops, memory_order_relaxed);
		ops_idx = (ops_idx + 1) % OPS_SAMPLES;
	}
	ops_last_ms = now;
	ops_last_cmds = cmds;
	if (used > atomic_load_explicit(&mem_peak, memory_order_relaxed))
		atomic_store_explicit(&mem_peak, used, memory_order_relaxed);
}

size_t info_mem_peak(size_t used)
{
	if (used > atomic_load_explicit(&mem_peak, memory_order_relaxed))
		atomic_store_explicit(&mem_peak, used, memory_order_relaxed);
	return atomic_load_explicit(&mem_peak, memory_order_relaxed);
}

static long long ops_per_sec(void)
{
	long long sum = 0;

	for (int i = 0; i < OPS_SAMPLES; i++)
		sum += atomic_load_explicit(&ops_ring[i], memory_order_relaxed);
	return sum / OPS_SAMPLES;
}

static void human(char *buf, size_t len, double n)
{
	if (n < 1024)
		snprintf(buf, len, "%.0fB", n);
	else if (n < 1024.0 * 1024)
		snprintf(buf, len, "%.2fK", n / 1024);
	else if (n < 1024.0 * 1024 * 1024)
		snprintf(buf, len, "%.2fM", n / (1024 * 1024));
	else
		snprintf(buf, len, "%.2fG", n / (1024.0 * 1024 * 1024));
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
static void info_commandstats(struct sbuf *s)
{
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

static void info_errorstats(struct sbuf *s)
{
	struct stats_err_sum e[STATS_ERR_TYPES];
	int n = stats_errors(e, STATS_ERR_TYPES);

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

static int want(const char *sec, int argc, struct conn *c, int is_default)
{
	if (argc <= 1)
		return is_default;
	for (int j = 1; j < argc; j++) {
		if (util_strcaseeq(ARGV(c, j), ARGL(c, j), sec))
			return 1;
		if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "all") ||
		    util_strcaseeq(ARGV(c, j), ARGL(c, j), "everything") ||
		    (util_strcaseeq(ARGV(c, j), ARGL(c, j), "default") && is_default))
			return 1;
	}
	return 0;
}

void cmd_info(struct conn *c, int argc)
{
	struct sbuf s = {xmalloc(4096), 0, 4096};
	long long now = util_mstime();
	int sections = 0;

	if (want("server", argc, c, 1)) {
		struct utsname un;

		uname(&un);
		sb_printf(
		    &s,
		    "# "
		    "Server\r\nredis_version:%s\r\nrcukv_version:%s\r\nredis_git_sha1:00000000\r\n"
		    "redis_git_dirty:0\r\nredis_build_id:0\r\nredis_mode:standalone\r\n"
		    "os:%s %s %s\r\narch_bits:%d\r\nmultiplexing_api:epoll\r\n"
		    "atomicvar_api:c11-builtin\r\ngcc_version:%d.%d.%d\r\nprocess_id:%d\r\n"
		    "process_supervised:no\r\nrun_id:%s\r\ntcp_port:%d\r\nserver_time_usec:%lld\r\n"
		    "uptime_in_seconds:%lld\r\nuptime_in_days:%lld\r\nhz:%lld\r\nconfigured_hz:%"
		    "lld\r\n"
		    "executable:%s\r\nconfig_file:%s\r\nio_threads_active:0\r\nthreads:%d\r\n"
		    "rcu_flavor:%s\r\n",
		    REDIS_COMPAT_VERSION, RCUKV_VERSION, un.sysname, un.release, un.machine,
		    (int)(sizeof(long) * 8), __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__,
		    (int)g_srv.pid, g_srv.runid, g_cfg.port, util_ustime(),
		    (now - g_srv.start_ms) / 1000, (now - g_srv.start_ms) / 86400000,
		    atomic_load(&g_cfg.hz), atomic_load(&g_cfg.hz), g_srv.executable,
		    g_cfg.config_file ? g_cfg.config_file : "", g_srv.nworkers, RCU_FLAVOR_NAME);
		sections++;
	}
	if (want("clients", argc, c, 1)) {
		sb_printf(
		    &s,
		    "%s# "
		    "Clients\r\nconnected_clients:%d\r\ncluster_connections:0\r\nmaxclients:%"
		    "lld\r\n"
		    "client_recent_max_input_buffer:0\r\nclient_recent_max_output_buffer:0\r\n"
		    "blocked_clients:0\r\ntracking_clients:0\r\nclients_in_timeout_table:0\r\n",
		    sections ? "\r\n" : "", atomic_load(&g_srv.nclients),
		    atomic_load(&g_cfg.maxclients));
		sections++;
	}
	if (want("memory", argc, c, 1)) {
		size_t used = mem_used(), rss = info_rss(), peak = atomic_load(&mem_peak);
		char h1[32], h2[32], h3[32], h4[32];
		long long maxmem = atomic_load(&g_cfg.maxmemory);

		if (used > peak) {
			peak = used;
			atomic_store(&mem_peak, peak);
		}
		human(h1, sizeof(h1), (double)used);
		human(h2, sizeof(h2), (double)rss);
		human(h3, sizeof(h3), (double)peak);
		human(h4, sizeof(h4), (double)maxmem);
		sb_printf(
		    &s,
		    "%s# "
		    "Memory\r\nused_memory:%zu\r\nused_memory_human:%s\r\nused_memory_rss:%zu\r\n"
		    "used_memory_rss_human:%s\r\nused_memory_peak:%zu\r\nused_memory_peak_human:%"
		    "s\r\n"
		    "used_memory_dataset:%zu\r\nmaxmemory:%lld\r\nmaxmemory_human:%s\r\n"
		    "maxmemory_policy:%s\r\nmem_fragmentation_ratio:%.2f\r\n"
		    "mem_not_counted_for_evict:%zu\r\n"
		    "mem_allocator:%s\r\nlazyfree_pending_objects:0\r\n",
		    sections ? "\r\n" : "", used, h1, rss, h2, peak, h3, db_entry_bytes(), maxmem,
		    h4, evict_policy_names[atomic_load(&g_cfg.maxmemory_policy)],
		    used ? (double)rss / (double)used : 0.0, evict_not_counted(),
#if defined(SRV_JEMALLOC) && SRV_JEMALLOC
		    "jemalloc"
#else
		    "libc"
#endif
		);
		sections++;
	}
	if (want("persistence", argc, c, 1)) {
		char pbuf[2048];

		persist_info(pbuf, sizeof(pbuf));
		sb_printf(&s, "%s# Persistence\r\n%s", sections ? "\r\n" : "", pbuf);
		sections++;
	}
	if (want("stats", argc, c, 1)) {
		double stale;
		unsigned long long cap, cpu_ms, ex_total, ex_cur;

		db_expire_stats(&stale, &cap, &cpu_ms);
		evict_exceeded_time(&ex_total, &ex_cur);
		sb_printf(
		    &s,
		    "%s# "
		    "Stats\r\ntotal_connections_received:%llu\r\ntotal_commands_processed:%llu\r\n"
		    "instantaneous_ops_per_sec:%lld\r\ntotal_net_input_bytes:%llu\r\n"
		    "total_net_output_bytes:%llu\r\nrejected_connections:%llu\r\n"
		    "expired_keys:%llu\r\nexpired_stale_perc:%.2f\r\n"
		    "expired_time_cap_reached_count:%llu\r\nexpire_cycle_cpu_milliseconds:%llu\r\n"
		    "evicted_keys:%llu\r\nevicted_clients:0\r\ntotal_eviction_exceeded_time:%llu\r\n"
		    "current_eviction_exceeded_time:%llu\r\nkeyspace_hits:%llu\r\n"
		    "keyspace_misses:%llu\r\npubsub_channels:0\r\npubsub_patterns:0\r\n"
		    "unexpected_error_replies:0\r\ntotal_error_replies:%llu\r\n",
		    sections ? "\r\n" : "", STAT(conns_received), STAT(commands), ops_per_sec(),
		    STAT(net_in), STAT(net_out),
		    atomic_load(&g_srv.rejected_conns) - atomic_load(&base_rejected),
		    db_expired_total() - atomic_load(&base_expired), stale, cap, cpu_ms,
		    evict_evicted_keys(), ex_total, ex_cur, STAT(keyspace_hits),
		    STAT(keyspace_misses), STAT(errors));
		sections++;
	}
	if (want("replication", argc, c, 1)) {
		sb_printf(&s,
			  "%s# "
			  "Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_failover_"
			  "state:no-failover\r\n"
			  "master_repl_offset:0\r\nrepl_backlog_active:0\r\n",
			  sections ? "\r\n" : "");
		sections++;
	}
	if (want("cpu", argc, c, 1)) {
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		sb_printf(&s, "%s# CPU\r\nused_cpu_sys:%ld.%06ld\r\nused_cpu_user:%ld.%06ld\r\n",
			  sections ? "\r\n" : "", (long)ru.ru_stime.tv_sec,
			  (long)ru.ru_stime.tv_usec, (long)ru.ru_utime.tv_sec,
			  (long)ru.ru_utime.tv_usec);
		sections++;
	}
	if (want("rcu", argc, c, 1)) {
		struct rcu_stats st;

		rcu_get_stats(&st);
		sb_printf(&s,
			  "%s# RCU\r\nrcu_flavor:%s\r\nrcu_grace_periods:%lu\r\n"
			  "rcu_gp_last_latency_usec:%llu\r\nrcu_gp_max_latency_usec:%llu\r\n"
			  "rcu_callbacks_queued:%lu\r\nrcu_callbacks_invoked:%lu\r\n"
			  "rcu_callbacks_pending:%lu\r\nrcu_callbacks_pending_hwm:%lu\r\n"
			  "rcu_callbacks_throttled:%lu\r\nrcu_callback_batches:%lu\r\n"
			  "rcu_readers:%lu\r\nrcu_stalls:%lu\r\nrcu_callback_limit:%lld\r\n",
			  sections ? "\r\n" : "", RCU_FLAVOR_NAME, st.gp_completed,
			  st.gp_last_ns / 1000, st.gp_max_ns / 1000, st.cb_queued, st.cb_invoked,
			  st.cb_pending, st.cb_pending_hwm, st.cb_throttled, st.cb_batches,
			  st.readers, st.stalls, atomic_load(&g_cfg.rcu_callback_limit));
		sections++;
	}
	if (want("commandstats", argc, c, 0)) {
		sb_printf(&s, "%s# Commandstats\r\n", sections ? "\r\n" : "");
		info_commandstats(&s);
		sections++;
	}
	if (want("errorstats", argc, c, 1)) {
		sb_printf(&s, "%s# Errorstats\r\n", sections ? "\r\n" : "");
		info_errorstats(&s);
		sections++;
	}
	if (want("latencystats", argc, c, 0)) {
		sb_printf(&s, "%s# Latencystats\r\n", sections ? "\r\n" : "");
		if (atomic_load_explicit(&g_cfg.latency_tracking, memory_order_relaxed))
			info_latencystats(&s);
		sections++;
	}
	if (want("keyspace", argc, c, 1)) {
		unsigned long long keys = db_size();

		sb_printf(&s, "%s# Keyspace\r\n", sections ? "\r\n" : "");
		if (keys)
			sb_printf(&s, "db0:keys=%llu,expires=%llu,avg_ttl=%lld\r\n", keys,
				  db_expires(), db_avg_ttl());
		sections++;
	}
	reply_verbatim(c, s.p, s.len);
	free(s.p);
}
