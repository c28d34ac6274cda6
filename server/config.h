/*
 * config.h - the configuration (config.c): the redis.conf-style file, the
 * command line, CONFIG GET/SET.
 *
 * g_cfg is written by the main thread before the workers start
 * (cfg_defaults(), cfg_load()); afterwards only CONFIG SET writes it, and
 * only the _Atomic fields may change then (other threads read them with
 * relaxed loads).  The plain fields are start-up only.
 */
#ifndef SERVER_CONFIG_H
#define SERVER_CONFIG_H

#include <stddef.h>

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

#endif /* SERVER_CONFIG_H */
