/*
 * server_internal.h - private types shared by the files of rcukv-server.
 *
 * The server is a set of worker threads, each owning one libevent event_base
 * and the connections handed to it, plus the main thread, which owns the
 * listening sockets, signals, the once-per-tick cron (active expiry, ops/sec
 * sampling) and shutdown.  A connection is touched only by its worker, except
 * for the fields marked "atomic" which CLIENT LIST/INFO/KILL read from other
 * workers under the client registry lock (g_clients_lock).
 *
 * Every worker thread and the main thread are registered QSBR readers: they
 * report a quiescent state once per event-loop turn and are offline while they
 * block in epoll (see worker_main() in net.c).  Commands therefore run inside
 * an implicit QSBR read-side section and may hold table references until they
 * return.
 *
 * Tested by tests/server/test_server.c (integration) and the tests/server scripts.
 */
#ifndef SERVER_INTERNAL_H
#define SERVER_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define RCUKV_VERSION "0.1.0"
#define REDIS_COMPAT_VERSION "7.0.15"

/* ------------------------------------------------------------------ util */

#define SRV_LIKELY(x) __builtin_expect(!!(x), 1)
#define SRV_UNLIKELY(x) __builtin_expect(!!(x), 0)

__attribute__((noreturn, format(printf, 4, 5))) void
srv_die_at(const char *file, int line, const char *func, const char *fmt, ...);
#define srv_die(...) srv_die_at(__FILE__, __LINE__, __func__, __VA_ARGS__)

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xmemdup(const void *p, size_t n);

/* Strict decimal parse of a 64-bit signed integer, as Redis's string2ll:
 * no spaces, no '+', no leading zeros.  Return 1 on success. */
int util_str2ll(const char *s, size_t len, long long *out);
int util_str2ull_strict(const char *s, size_t len, unsigned long long *out);
/* Parse a long double as Redis's string2ld (strtold, no spaces, no nan). */
int util_str2ld(const char *s, size_t len, long double *out);
int util_ll2str(char *buf, long long v); /* returns length */
/* Glob-style match (* ? [..] \), as Redis's pattern matching. */
int util_glob_match(const char *pat, size_t plen, const char *str, size_t slen, int nocase);
long long util_mstime(void);
long long util_ustime(void);
/* Memory size with k/kb/m/mb/g/gb suffix (1k = 1000, 1kb = 1024). */
int util_memtoull(const char *s, unsigned long long *out);
int util_strcaseeq(const char *a, size_t alen, const char *b);
/* Constant-time comparison (time depends on clen only); 1 if equal. */
int util_ct_equal(const char *secret, size_t slen, const char *cand, size_t clen);
int util_splitargs(const char *line, size_t len, char **storep, char ***argvp, size_t **lensp,
		   int *argcp);

/* ------------------------------------------------------------------ log */

enum { LL_DEBUG = 0, LL_VERBOSE, LL_NOTICE, LL_WARNING, LL_NOTHING };
void srv_log_init(const char *file, int verbosity, char role);
__attribute__((format(printf, 2, 3))) void srv_log(int level, const char *fmt, ...);
void srv_log_raw(int level, const char *msg);
/* From a signal handler (async-signal-safe): "<pid>:signal-handler (<unix
 * time>) <msg>", Redis's format, whatever the log level. */
void srv_log_from_handler(const char *msg);

/* --------------------------------------------------------------- config */

#define CFG_MAX_BIND 16
#define CFG_MAX_RENAME 64

struct cfg {
	char *bind[CFG_MAX_BIND];
	int nbind;
	int port;
	char *unixsocket;
	unsigned int unixsocketperm;
	int threads;
	_Atomic long long worker_cpu_affinity; /* pin worker i to the i-th allowed CPU */
	_Atomic long long maxclients;
	_Atomic long long timeout;	 /* seconds, 0 = never */
	_Atomic long long tcp_keepalive; /* seconds, 0 = off */
	_Atomic int loglevel;
	char *logfile;
	char *pidfile;
	int daemonize;
	_Atomic long long proto_max_bulk_len;
	_Atomic long long client_query_buffer_limit;
	_Atomic long long hz;
	int tcp_backlog;
	_Atomic long long client_output_buffer_soft; /* per-client pause threshold */
	char *config_file;			     /* absolute path or NULL */
	_Atomic long long protected_mode;	     /* bool */
	_Atomic int has_pass;			     /* requirepass is not empty */
	/* client-output-buffer-limit normal <hard> <soft> <soft secs>; 0 = off */
	_Atomic long long cobl_hard, cobl_soft, cobl_soft_secs;
	/* rename-command pairs from the config file, applied by cmd_init();
	 * an empty rename_to disables the command. */
	char *rename_from[CFG_MAX_RENAME], *rename_to[CFG_MAX_RENAME];
	int nrename;
	/* TLS (start-up only) */
	int tls_port;
	char *tls_cert_file, *tls_key_file, *tls_ca_cert_file;
	char *tls_auth_clients; /* yes | no | optional */
	char *tls_protocols;	/* e.g. "TLSv1.2 TLSv1.3"; empty = those two */
	/* cache tier (evict.c); CONFIG SET calls evict_config_changed() or
	 * evict_maxmemory_set() after changing them */
	_Atomic long long maxmemory;	      /* bytes, 0 = no limit */
	_Atomic long long maxmemory_policy;   /* EVICT_* */
	_Atomic long long maxmemory_samples;  /* keys sampled per eviction */
	_Atomic long long lfu_log_factor;     /* LFU counter's logarithm factor */
	_Atomic long long lfu_decay_time;     /* minutes per counter decrement, 0 = never */
	_Atomic long long rcu_callback_limit; /* pending call_rcu() per thread, 0 = unbounded */
	/* persistence (persist.c owns save points, dir and dbfilename) */
	_Atomic long long rdbcompression, rdbchecksum, stop_writes_on_bgsave_error;
	_Atomic long long rdb_skip_unsupported; /* rdb-skip-unsupported-types */
	_Atomic long long enable_protected_configs; /* 0 no, 1 yes, 2 local */
	_Atomic long long latency_tracking;	    /* bool: INFO latencystats histograms */
};

/* tls.c: linked into rcukv-server only; weak here so that other programs
 * linking net.c (fuzz harnesses) need neither tls.c nor libssl.  Callers
 * check tls_configure != NULL. */
__attribute__((weak)) int tls_configure(void);
__attribute__((weak)) void tls_fini(void);
__attribute__((weak)) void *tls_conn_new(int fd);
__attribute__((weak)) void tls_conn_free(void *ssl);
/* read/write: >0 bytes, 0 EOF, -1 with errno (EAGAIN = wait for the socket) */
__attribute__((weak)) ssize_t tls_read(void *ssl, void *buf, size_t n);
__attribute__((weak)) ssize_t tls_write(void *ssl, const void *buf, size_t n);
__attribute__((weak)) int tls_pending(void *ssl); /* decrypted bytes buffered */
extern struct cfg g_cfg;

void cfg_defaults(void);
/* Parse file then argv overrides.  On error prints a message and exits 1. */
void cfg_load(int argc, char **argv);
void cfg_free_extra(void);
struct conn;
void cfg_cmd_get(struct conn *c, int argc);
void cfg_cmd_set(struct conn *c, int argc);
/* requirepass: 1 if a password is set (new clients start unauthenticated). */
int cfg_password_required(void);
/* 1 if pw equals requirepass (constant time; 0 when none is set). */
int cfg_check_password(const char *pw, size_t len);

/* -------------------------------------------------------------- output */

struct obuf {
	char *buf;
	size_t len; /* bytes filled */
	size_t pos; /* bytes already written to the socket */
	size_t cap;
};

/* --------------------------------------------------------- connections */

struct worker;

#define CONN_CLOSE_AFTER_REPLY 0x1
#define CONN_CLOSE_ASAP 0x2
#define CONN_UNIX 0x4
#define CONN_WRITE_PENDING 0x8
/* conn_process_input() stopped with complete commands left because the
 * output passed client-output-buffer-pause; cleared when it runs again. */
#define CONN_INPUT_PAUSED 0x10
#define CONN_TLS 0x20
/* Sent SHUTDOWN: no more of its input runs until the shutdown is decided;
 * it is closed if the server exits, answered with an error if the final
 * save failed (net.c, worker_answer_shutdown()). */
#define CONN_SHUTDOWN_WAIT 0x40

#define PROTO_INLINE_MAX_SIZE (64 * 1024)
#define PROTO_IOBUF_LEN (16 * 1024)
#define PROTO_MBULK_BIG_ARG (32 * 1024)
#define CONN_ARGV_INIT 16

struct conn {
	uint64_t id;
	int fd;
	int flags; /* CONN_* ; owner thread */
	int resp;  /* 2 or 3; owner thread */
	struct worker *w;
	struct event *ev_read;
	struct event *ev_write;
	int reading; /* ev_read is added */

	/* Query buffer: bytes [qpos, qlen) are unparsed.  owner thread */
	char *qbuf;
	size_t qlen, qcap, qpos;
	/* Parser state for a multibulk in progress; argv holds offsets into qbuf. */
	long long mb_left; /* elements still expected, 0 = none */
	long long bulklen; /* -1 = reading the $ header */
	int reqtype;	   /* 0 none, 1 multibulk, 2 inline */
	int argc, argv_cap;
	size_t *argv_off;
	size_t *argv_len;
	/* Decoded argv for the command being run. */
	const char **argv;
	size_t *argl;
	char *inline_store; /* inline: split args storage */

	struct obuf out;

	/* Visible to other threads (CLIENT LIST/INFO/KILL, INFO clients). */
	char *name; /* g_clients_lock */
	char addr[64], laddr[64];
	long long ctime_ms;
	_Atomic long long last_ms; /* last interaction */
	_Atomic int last_cmd;	   /* index in the command table, -1 none */
	_Atomic int last_sub;	   /* subcommand index, -1 none */
	_Atomic size_t qbuf_used, obuf_used;
	_Atomic int kill; /* set by CLIENT KILL from any thread */
	_Atomic int resp_pub;
	int authenticated; /* owner thread; AUTH/HELLO AUTH, or no password at accept */
	long long obuf_soft_since; /* ms when output passed the soft limit, 0 = under */
	void *ssl;		   /* SSL * of a TLS connection, else NULL */

	/* Links: worker's list (owner) and global registry (g_clients_lock). */
	struct conn *wnext, *wprev;
	struct conn *gnext, *gprev;
	/* On the worker's flush queue (replies written after the loop turn,
	 * net.c worker_flush_queued()); owner thread. */
	struct conn *fqnext;
	int fqueued;
};

/* Per-worker counters: written by the owner with relaxed load+store (single
 * writer, no RMW), read by INFO from any thread with relaxed loads. */
struct wstats {
	_Atomic unsigned long long commands;
	_Atomic unsigned long long conns_received;
	_Atomic unsigned long long keyspace_hits;
	_Atomic unsigned long long keyspace_misses;
	_Atomic unsigned long long expired_keys;
	_Atomic unsigned long long net_in, net_out;
	_Atomic unsigned long long errors;
	_Atomic unsigned long long dirty; /* keys written (Redis's dirty counter), persist.c */
	/* total_reads_processed: read events handled (on_read(), one per call,
	 * EOF included, as Redis's readQueryFromClient()); total_writes_processed:
	 * flushes of a connection with replies to send (conn_flush(), as Redis's
	 * writeToClient()) */
	_Atomic unsigned long long reads, writes;
	/* reply_buffer_expands: a connection's reply buffer grown (resp.c, not its
	 * first allocation); reply_buffer_shrinks: a big one given back once
	 * drained (conn_flush()).  Redis resizes its reply buffer in a cron
	 * instead; these count the same events of rcukv's buffer. */
	_Atomic unsigned long long reply_expands, reply_shrinks;
};
#define STAT_ADD(field, n)                                                                         \
	atomic_store_explicit(&(field),                                                            \
			      atomic_load_explicit(&(field), memory_order_relaxed) + (n),          \
			      memory_order_relaxed)
#define STAT_GET(field) atomic_load_explicit(&(field), memory_order_relaxed)

struct worker {
	int idx;
	pthread_t thread;
	struct event_base *base;
	int notify_fd; /* eventfd: new fds, kill, stop */
	struct event *ev_notify;
	struct event *ev_cron;
	pthread_mutex_t qlock; /* protects pending fds */
	int *pending_fd;
	int *pending_unix;
	int npending, cap_pending;
	_Atomic int stop;
	_Atomic int kill_pending; /* CLIENT KILL marked one of our conns */
	int online;		  /* QSBR online; owner thread */
	struct conn *conns;	  /* owner thread */
	struct conn *flushq;	  /* connections with replies to write at the end of
				   * this loop turn (owner thread) */
	_Atomic int nconns;
	/* Loop turns finished (the owner stores with release; the acceptor
	 * loads with acquire, see hold_fd() in net.c). */
	_Atomic unsigned long turn;
	/* the thread's kernel id (INFO cpu reads its /proc stat): written once by
	 * the worker as it starts, read relaxed by INFO, 0 until then */
	_Atomic int tid;
	struct wstats st;
	struct wcstats *cs; /* per-command stats (stats.c); set before the thread starts */
	char pad[64];
};

struct server {
	struct worker *workers;
	int nworkers;
	struct event_base *base; /* main thread */
	int notify_fd;		 /* eventfd: shutdown requests */
	_Atomic int shutdown_asap;
	/* 1 while the dump at start-up is not yet wholly in the table: commands
	 * without CMD_LOADING answer ERR_LOADING.  Set by the main thread before
	 * any command can run (persist_load_start()), cleared by the loader
	 * thread once, after its last insert; never set again.  Stays 1 after a
	 * failed or stopped load (the server is on its way out).  Read with
	 * acquire (persist_loading()). */
	_Atomic int loading;
	_Atomic int nclients;
	_Atomic unsigned long long next_client_id;
	_Atomic unsigned long long rejected_conns;
	long long start_ms;
	char executable[4096];
	pid_t pid;
	int listen_fds[2 * CFG_MAX_BIND + 1];
	int nlisten;
	struct event *listen_ev[2 * CFG_MAX_BIND + 1];
	char runid[41];
	char replid[41]; /* master_replid: random, chosen at start like runid */
};
extern struct server g_srv;

extern pthread_mutex_t g_clients_lock;
extern struct conn *g_clients;

void net_init(void);
int net_listen(void);
void net_start_workers(void);
void net_stop(void);
void net_request_shutdown(void);
/* Main thread: park every worker between commands (a shutdown's final save),
 * and let them go on; shutdown_failed: answer the SHUTDOWN callers' waits. */
void net_pause_workers(void);
void net_resume_workers(int shutdown_failed);
void net_wake_main(void); /* any thread: one more turn of the main loop */
void conn_close(struct conn *c);
void conn_wake_worker(struct worker *w);
unsigned long long stats_total(size_t off);
#define STATS_TOTAL(field) stats_total(offsetof(struct wstats, field))

/* -------------------------------------------------------------- replies */

void reply_raw(struct conn *c, const char *p, size_t n);
void reply_simple(struct conn *c, const char *s); /* +s */
void reply_ok(struct conn *c);
void reply_error(struct conn *c,
		 const char *msg); /* msg without leading '-' gets "-ERR " if no code */
__attribute__((format(printf, 2, 3))) void reply_errorf(struct conn *c, const char *fmt, ...);
void reply_err_code(struct conn *c, const char *full); /* full = "-WRONGTYPE ..." w/o CRLF */
void reply_int(struct conn *c, long long v);
void reply_bulk(struct conn *c, const void *p, size_t n);
void reply_bulk_str(struct conn *c, const char *s);
void reply_bulk_ll(struct conn *c, long long v);
void reply_null(struct conn *c);
void reply_null_array(struct conn *c);
void reply_array(struct conn *c, long long n);
void reply_map(struct conn *c, long long n);
void reply_set(struct conn *c, long long n);
void reply_double(struct conn *c, double d);
void reply_long_double_bulk(struct conn *c, long double d);
void reply_verbatim(struct conn *c, const char *p, size_t n);
void reply_bool(struct conn *c, int v);
char *reply_reserve(struct conn *c, size_t n); /* n bytes at end, then commit */
void reply_commit(struct conn *c, size_t n);
int ld2string(char *buf, size_t len, long double value, int humanfriendly);

/* -------------------------------------------------------------- parser */

/* Parse as many complete commands as available, running each.  Return -1 if
 * the connection must close now (protocol error reply is queued). */
int conn_process_input(struct conn *c);
size_t conn_read_hint(struct conn *c);

/* ------------------------------------------------------------- commands */

#include "server/cmd.h"

size_t client_mem_total(void);

/* Arguments of the running command. */
#define ARGV(c, i) ((c)->argv[i])
#define ARGL(c, i) ((c)->argl[i])

#include "server/db.h"

/* Count @n keys written by the running command (Redis's server.dirty). */
#define SRV_DIRTY(c, n) STAT_ADD((c)->w->st.dirty, (unsigned long long)(n))

/* persistence (persist.c): RDB snapshots, see the comment at its top.
 * The config hooks are weak, as tls.c's: programs that link config.c without
 * the keyspace (tests/fuzz fuzz_resp) need neither persist.c nor rdb.c;
 * config.c checks them against NULL. */
void persist_init(void);
__attribute__((weak)) void persist_cfg_defaults(void);
/* CONFIG/config file: "save", "dir", "dbfilename".  Return NULL or the
 * reason; @apply 0 only validates. */
__attribute__((weak)) const char *persist_cfg_set(const char *name, int argc, char **argv,
						  int from_file, int apply);
__attribute__((weak)) void persist_cfg_get(const char *name, char *buf, size_t len);
__attribute__((weak)) void persist_fini(void);
/* Start-up, main thread, after the listeners and workers, before the main
 * loop: starts the loader thread when <dir>/<dbfilename> exists (g_srv.loading
 * 1 until it is done).  A bad dump makes the loader log the reason and ask for
 * shutdown; persist_shutdown() then returns -1 (exit status 1). */
void persist_load_start(void);
/* Main thread: join a loader that has finished; 1 once the data set is served
 * (no dump, or a load that succeeded), else 0. */
int persist_load_poll(void);
/* Acquire: pairs with the loader's release store after its last insert, so a
 * command that sees 0 sees every loaded key. */
static inline int persist_loading(void)
{
	return atomic_load_explicit(&g_srv.loading, memory_order_acquire);
}
void persist_cron(void); /* main thread */
void persist_info(char *buf, size_t len);
/* SHUTDOWN [NOSAVE|SAVE] [FORCE]: mode -1 never save, 0 save if save points
 * are set, 1 always; force: a failed save does not keep the server up. */
void persist_set_shutdown_mode(int mode, int force);
/* Main thread: would persist_shutdown() save?  (Not while loading.) */
int persist_shutdown_saves(void);
/* Main thread, with no command running (workers paused or stopped): stops a
 * running load (no save then, as Redis while loading), or saves as
 * SHUTDOWN/save points say.  0 (also a failed save under FORCE), -errno
 * (the save failed: Redis stays up), or -1 after a failed load.  Resets the
 * SHUTDOWN mode. */
int persist_shutdown(void);
/* The path a save started now would write first ("<dir>/temp-<pid>.rdb"). */
void persist_temp_path(char *buf, size_t len);
/* 1 if write commands (and PING) must answer MISCONF */
int persist_writes_denied(void);
void persist_flushall(void); /* FLUSHALL: save now if save points are set */
#define ERR_MISCONF                                                                                \
	"-MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "      \
	"persist to disk. Commands that may modify the data set are disabled, because this "     \
	"instance is configured to report errors during writes if RDB snapshotting fails "       \
	"(stop-writes-on-bgsave-error option). Please check the Redis logs for details about "   \
	"the RDB error."

/* INFO */
void info_reset_stats(void);
void info_sample_ops(void);

/* per-command statistics (stats.c): INFO commandstats, errorstats,
 * latencystats.  Counters per worker, written by the owner only. */
#define STATS_ERR_NAME_MAX 31 /* an error prefix is found within 32 bytes */
#define STATS_ERR_TYPES 64    /* distinct prefixes counted per worker */
struct wcstats;
struct stats_cmd_sum {
	unsigned long long calls, usec, rejected, failed;
	unsigned long long samples; /* latency histogram total */
};
struct stats_err_sum {
	char name[STATS_ERR_NAME_MAX + 1];
	unsigned long long count;
};
/* Slots: every command and subcommand, in the order INFO lists them;
 * @names must outlive the server (cmd.c's static names). */
void stats_init(int nslots, const char *const *names);
/* Nanoseconds per TSC tick, calibrated against CLOCK_MONOTONIC by the first
 * stats_worker_init() (before any worker starts, never written after), when
 * the kernel's own clocksource is the TSC; 0: stats_clock() reads
 * CLOCK_MONOTONIC.  rdtsc costs ~12 ns here, clock_gettime() ~28 ns. */
extern double stats_tsc_ns;
/* A command's start or end: TSC ticks, or ns; stats_cmd_done() converts. */
static inline unsigned long long stats_clock(void)
{
	struct timespec ts;

#if defined(__x86_64__)
	if (SRV_LIKELY(stats_tsc_ns > 0))
		return __rdtsc();
#endif
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}
void stats_worker_init(struct worker *w); /* net_init(), before the thread starts */
void stats_fini(void);			  /* cmd_fini(), after the workers are joined */
/* Owner thread of @w (NULL or a worker without stats: nothing counted).
 * @clocks: stats_clock() after - before. */
void stats_cmd_done(struct worker *w, int slot, unsigned long long clocks, int failed);
void stats_cmd_rejected(struct worker *w, int slot);
void stats_error(struct worker *w, const char *msg, size_t len); /* reply_error() */
void stats_reset(void); /* CONFIG RESETSTAT, any thread */
/* INFO, any thread */
int stats_nslots(void);
const char *stats_slot_name(int slot);
/* @hist: NULL or LATHIST_LEN counters, filled with the merged histogram */
void stats_cmd_sum(int slot, struct stats_cmd_sum *out, unsigned long long *hist);
int stats_errors(struct stats_err_sum *out, int max); /* sorted by name */
/* latency-tracking-info-percentiles: NULL or the reason; @apply 0 checks only */
const char *stats_pctl_set(int argc, char **argv, int apply);
const char *stats_pctl_set_str(const char *val, size_t len, int apply); /* CONFIG SET */
void stats_pctl_get(char *buf, size_t len);
int stats_pctl_copy(double **out); /* count; *out malloc'd */

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

/* Shared error texts, Redis 7 wording, one table. */
#define ERR_SYNTAX "-ERR syntax error"
#define ERR_NOT_INT "-ERR value is not an integer or out of range"
#define ERR_NOT_FLOAT "-ERR value is not a valid float"
#define ERR_WRONGTYPE "-WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERR_NO_KEY "-ERR no such key"
#define ERR_OVERFLOW "-ERR increment or decrement would overflow"
#define ERR_DB_RANGE "-ERR DB index is out of range"
#define ERR_OOM "-OOM command not allowed when used memory > 'maxmemory'."
#define ERR_LOADING "-LOADING Redis is loading the dataset in memory"

#endif /* SERVER_INTERNAL_H */
