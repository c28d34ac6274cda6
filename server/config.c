/*
 * config.c - rcukv-server options: defaults, the config file (redis.conf
 * syntax), "--name value" command-line overrides, CONFIG GET and CONFIG SET.
 *
 * Owns g_cfg.  It is written by the main thread before the workers start;
 * afterwards only the _Atomic fields change (CONFIG SET, from any worker) and
 * every reader loads them with relaxed atomics.  String options are immutable
 * after start-up, so plain reads of them are safe.
 *
 * Errors at start-up print "*** FATAL CONFIG FILE ERROR ***" with the file,
 * line, the offending line and the reason, then exit 1 (as redis-server does).
 * Tested by tests/server/test_startup.sh (start-up errors against
 * redis-server's) and the CONFIG cases of tests/server/test_server.c.
 */
#include "resp/resp.h"
#include "server/cmd.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/evict.h"
#include "server/log.h"
#include "server/net.h"
#include "server/persist.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/stats.h"
#include "server/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

struct cfg g_cfg;

enum cfg_type {
	T_BOOL,
	T_INT,
	T_MEM,
	T_STR,
	T_ENUM,
	T_BIND,
	T_OCTAL,
	T_RENAME,
	T_COBL,
	T_PERSIST, /* save, dir, dbfilename: kept and checked by persist.c */
	T_PCTL	   /* latency-tracking-info-percentiles: kept and checked by stats.c */
};

/* cfg_opt.mutable_: 0 start-up only, 1 CONFIG SET, 2 protected (CONFIG SET
 * only with enable-protected-configs yes, or local from a local client) */
#define CFG_PROTECTED 2

struct cfg_opt {
	const char *name;
	enum cfg_type type;
	int mutable_;
	void *ptr; /* int, _Atomic long long, _Atomic int, char * */
	long long min, max;
	const char *const *enums;
};

static const char *const loglevels[] = {"debug", "verbose", "notice", "warning", NULL};
/* maxmemory-policy values, in Redis's order (the error text lists them so) */
const char *const evict_policy_names[] = {"volatile-lru",   "volatile-lfu", "volatile-random",
					  "volatile-ttl",   "allkeys-lru",  "allkeys-lfu",
					  "allkeys-random", "noeviction",   NULL};
static const char *const protected_modes[] = {"no", "yes", "local", NULL};

static pthread_mutex_t str_lock = PTHREAD_MUTEX_INITIALIZER; /* mutable string options */
static int threads_cfg;
static int appendonly_cfg; /* accepted for compatibility; only "no" */
static char *unixsocket_str;
static char *requirepass_str; /* under str_lock once workers run */

#define OPT(n, t, m, p, lo, hi, e)                                                                 \
	{                                                                                          \
		n, t, m, (void *)(p), lo, hi, e                                                    \
	}
static const struct cfg_opt opts[] = {
    OPT("bind", T_BIND, 0, NULL, 0, 0, NULL),
    OPT("port", T_INT, 0, &g_cfg.port, 0, 65535, NULL),
    OPT("unixsocket", T_STR, 0, &unixsocket_str, 0, 0, NULL),
    OPT("unixsocketperm", T_OCTAL, 0, &g_cfg.unixsocketperm, 0, 0777, NULL),
    OPT("threads", T_INT, 0, &threads_cfg, 0, 256, NULL),
    OPT("worker-cpu-affinity", T_BOOL, 0, &g_cfg.worker_cpu_affinity, 0, 1, NULL),
    OPT("maxclients", T_INT, 1, &g_cfg.maxclients, 1, 4294967295LL, NULL),
    OPT("timeout", T_INT, 1, &g_cfg.timeout, 0, INT_MAX, NULL),
    OPT("tcp-keepalive", T_INT, 1, &g_cfg.tcp_keepalive, 0, INT_MAX, NULL),
    OPT("loglevel", T_ENUM, 1, &g_cfg.loglevel, 0, 0, loglevels),
    OPT("logfile", T_STR, 0, &g_cfg.logfile, 0, 0, NULL),
    OPT("pidfile", T_STR, 0, &g_cfg.pidfile, 0, 0, NULL),
    OPT("daemonize", T_BOOL, 0, &g_cfg.daemonize, 0, 1, NULL),
    OPT("proto-max-bulk-len", T_MEM, 1, &g_cfg.proto_max_bulk_len, 1024 * 1024, LLONG_MAX, NULL),
    OPT("client-query-buffer-limit", T_MEM, 1, &g_cfg.client_query_buffer_limit, 1024 * 1024,
	LLONG_MAX, NULL),
    OPT("hz", T_INT, 1, &g_cfg.hz, 0, INT_MAX, NULL), /* clamped to 1..500, as Redis */
    OPT("tcp-backlog", T_INT, 0, &g_cfg.tcp_backlog, 0, INT_MAX, NULL),
    OPT("save", T_PERSIST, 1, NULL, 0, 0, NULL),
    OPT("dir", T_PERSIST, CFG_PROTECTED, NULL, 0, 0, NULL),
    OPT("dbfilename", T_PERSIST, CFG_PROTECTED, NULL, 0, 0, NULL),
    OPT("rdbcompression", T_BOOL, 1, &g_cfg.rdbcompression, 0, 1, NULL),
    OPT("rdbchecksum", T_BOOL, 0, &g_cfg.rdbchecksum, 0, 1, NULL),
    OPT("stop-writes-on-bgsave-error", T_BOOL, 1, &g_cfg.stop_writes_on_bgsave_error, 0, 1,
	NULL),
    OPT("rdb-skip-unsupported-types", T_BOOL, 1, &g_cfg.rdb_skip_unsupported, 0, 1, NULL),
    OPT("enable-protected-configs", T_ENUM, 0, &g_cfg.enable_protected_configs, 0, 0,
	protected_modes),
    OPT("appendonly", T_BOOL, 1, &appendonly_cfg, 0, 1, NULL),
    OPT("client-output-buffer-pause", T_MEM, 1, &g_cfg.client_output_buffer_soft, 16 * 1024,
	LLONG_MAX, NULL),
    OPT("requirepass", T_STR, 1, &requirepass_str, 0, 0, NULL),
    OPT("protected-mode", T_BOOL, 1, &g_cfg.protected_mode, 0, 1, NULL),
    OPT("rename-command", T_RENAME, 0, NULL, 0, 0, NULL),
    OPT("client-output-buffer-limit", T_COBL, 1, NULL, 0, 0, NULL),
    OPT("tls-port", T_INT, 0, &g_cfg.tls_port, 0, 65535, NULL),
    OPT("tls-cert-file", T_STR, 0, &g_cfg.tls_cert_file, 0, 0, NULL),
    OPT("tls-key-file", T_STR, 0, &g_cfg.tls_key_file, 0, 0, NULL),
    OPT("tls-ca-cert-file", T_STR, 0, &g_cfg.tls_ca_cert_file, 0, 0, NULL),
    OPT("tls-auth-clients", T_STR, 0, &g_cfg.tls_auth_clients, 0, 0, NULL),
    OPT("tls-protocols", T_STR, 0, &g_cfg.tls_protocols, 0, 0, NULL),
    OPT("maxmemory", T_MEM, 1, &g_cfg.maxmemory, 0, LLONG_MAX, NULL),
    OPT("maxmemory-policy", T_ENUM, 1, &g_cfg.maxmemory_policy, 0, 0, evict_policy_names),
    OPT("maxmemory-samples", T_INT, 1, &g_cfg.maxmemory_samples, 1, INT_MAX, NULL),
    OPT("lfu-log-factor", T_INT, 1, &g_cfg.lfu_log_factor, 0, INT_MAX, NULL),
    OPT("lfu-decay-time", T_INT, 1, &g_cfg.lfu_decay_time, 0, INT_MAX, NULL),
    OPT("rcu-callback-limit", T_INT, 1, &g_cfg.rcu_callback_limit, 0, LLONG_MAX, NULL),
    OPT("latency-tracking", T_BOOL, 1, &g_cfg.latency_tracking, 0, 1, NULL),
    OPT("latency-tracking-info-percentiles", T_PCTL, 1, NULL, 0, 0, NULL),
};

/* client-output-buffer-limit: only "normal" applies (no replicas or pub/sub
 * yet); the other classes are kept so CONFIG GET shows what was set. */
static long long cobl_other[2][3] = {{256LL << 20, 64LL << 20, 60}, {32LL << 20, 8LL << 20, 60}};

/* Parse "class hard soft secs ..." (argv, argc words).  Validate everything
 * before applying anything; return NULL or the reason. */
static const char *cobl_apply(int argc, char **argv, int apply_now)
{
	long long v[3][3];
	int set[3] = {0, 0, 0};

	if (argc == 0 || argc % 4 != 0)
		return "Wrong number of arguments in buffer limit configuration.";
	for (int i = 0; i < argc; i += 4) {
		int cls;

		if (!strcasecmp(argv[i], "normal"))
			cls = 0;
		else if (!strcasecmp(argv[i], "replica") || !strcasecmp(argv[i], "slave"))
			cls = 1;
		else if (!strcasecmp(argv[i], "pubsub"))
			cls = 2;
		else
			return "Invalid client class specified in buffer limit configuration.";
		for (int k = 0; k < 3; k++) {
			unsigned long long u;
			long long sec;

			if (k < 2) {
				if (!util_memtoull(argv[i + 1 + k], &u) || u > LLONG_MAX)
					return "Error in hard, soft or soft_seconds setting in "
					       "buffer limit configuration.";
				v[cls][k] = (long long)u;
			} else {
				if (!resp_str2ll(argv[i + 3], strlen(argv[i + 3]), &sec) ||
				    sec < 0)
					return "Error in hard, soft or soft_seconds setting in "
					       "buffer limit configuration.";
				v[cls][k] = sec;
			}
		}
		set[cls] = 1;
	}
	if (!apply_now)
		return NULL;
	if (set[0]) {
		atomic_store(&g_cfg.cobl_hard, v[0][0]);
		atomic_store(&g_cfg.cobl_soft, v[0][1]);
		atomic_store(&g_cfg.cobl_soft_secs, v[0][2]);
	}
	for (int cls = 1; cls < 3; cls++)
		if (set[cls])
			for (int k = 0; k < 3; k++)
				cobl_other[cls - 1][k] = v[cls][k]; /* read under str_lock */
	return NULL;
}

/* Split a CONFIG SET value into words and apply it (under str_lock). */
static const char *cobl_set(const char *val, int apply_now)
{
	char **argv;
	size_t *lens;
	int argc;
	const char *err;

	if ((argc = util_splitargs(val, strlen(val), &argv, &lens)) < 0)
		return "Wrong number of arguments in buffer limit configuration.";
	pthread_mutex_lock(&str_lock);
	err = cobl_apply(argc, argv, apply_now);
	pthread_mutex_unlock(&str_lock);
	free(argv);
	return err;
}
#define NOPTS ((int)(sizeof(opts) / sizeof(opts[0])))

void cfg_defaults(void)
{
	memset(&g_cfg, 0, sizeof(g_cfg));
	g_cfg.bind[0] = xstrdup("127.0.0.1");
	g_cfg.nbind = 1;
	g_cfg.port = 6379;
	g_cfg.unixsocket = NULL;
	g_cfg.unixsocketperm = 0;
	threads_cfg = 0;
	atomic_store(&g_cfg.worker_cpu_affinity, 1);
	atomic_store(&g_cfg.maxclients, 10000);
	atomic_store(&g_cfg.timeout, 0);
	atomic_store(&g_cfg.tcp_keepalive, 300);
	atomic_store(&g_cfg.loglevel, LL_NOTICE);
	g_cfg.logfile = xstrdup("");
	g_cfg.pidfile = xstrdup("");
	g_cfg.daemonize = 0;
	atomic_store(&g_cfg.proto_max_bulk_len, 512LL * 1024 * 1024);
	atomic_store(&g_cfg.client_query_buffer_limit, 1024LL * 1024 * 1024);
	atomic_store(&g_cfg.hz, 10);
	g_cfg.tcp_backlog = 511;
	atomic_store(&g_cfg.client_output_buffer_soft, 1024LL * 1024);
	atomic_store(&g_cfg.protected_mode, 1);
	atomic_store(&g_cfg.cobl_hard, 0);
	atomic_store(&g_cfg.cobl_soft, 0);
	atomic_store(&g_cfg.cobl_soft_secs, 0);
	g_cfg.tls_auth_clients = xstrdup("yes");
	g_cfg.tls_protocols = xstrdup("");
	atomic_store(&g_cfg.has_pass, 0);
	atomic_store(&g_cfg.maxmemory, 0);
	atomic_store(&g_cfg.maxmemory_policy, EVICT_NOEVICTION);
	atomic_store(&g_cfg.maxmemory_samples, 5);
	atomic_store(&g_cfg.lfu_log_factor, 10);
	atomic_store(&g_cfg.lfu_decay_time, 1);
	atomic_store(&g_cfg.rcu_callback_limit, 100000);
	atomic_store(&g_cfg.rdbcompression, 1);
	atomic_store(&g_cfg.rdbchecksum, 1);
	atomic_store(&g_cfg.stop_writes_on_bgsave_error, 1);
	atomic_store(&g_cfg.rdb_skip_unsupported, 0);
	atomic_store(&g_cfg.enable_protected_configs, 0);
	atomic_store(&g_cfg.latency_tracking, 1);
	if (persist_cfg_defaults)
		persist_cfg_defaults();
}

int cfg_password_required(void)
{
	return atomic_load_explicit(&g_cfg.has_pass, memory_order_acquire);
}

int cfg_check_password(const char *pw, size_t len)
{
	int ok;

	pthread_mutex_lock(&str_lock);
	ok = requirepass_str && requirepass_str[0] &&
	     util_ct_equal(requirepass_str, strlen(requirepass_str), pw, len);
	pthread_mutex_unlock(&str_lock);
	return ok;
}

static const struct cfg_opt *find_opt(const char *name, size_t len)
{
	for (int i = 0; i < NOPTS; i++)
		if (util_strcaseeq(name, len, opts[i].name))
			return &opts[i];
	return NULL;
}

static void store_int(const struct cfg_opt *o, long long v)
{
	if (o->ptr == &g_cfg.port || o->ptr == &threads_cfg || o->ptr == &g_cfg.tcp_backlog ||
	    o->ptr == &g_cfg.daemonize || o->ptr == &appendonly_cfg || o->ptr == &g_cfg.tls_port)
		*(int *)o->ptr = (int)v;
	else if (o->ptr == &g_cfg.unixsocketperm)
		*(unsigned int *)o->ptr = (unsigned int)v;
	else if (o->ptr == &g_cfg.loglevel)
		atomic_store_explicit((_Atomic int *)o->ptr, (int)v, memory_order_relaxed);
	else if (o->ptr == &g_cfg.hz)
		atomic_store_explicit(&g_cfg.hz, v < 1 ? 1 : v > 500 ? 500 : v,
				      memory_order_relaxed);
	else
		atomic_store_explicit((_Atomic long long *)o->ptr, v, memory_order_relaxed);
}

static long long load_int(const struct cfg_opt *o)
{
	if (o->ptr == &g_cfg.port || o->ptr == &threads_cfg || o->ptr == &g_cfg.tcp_backlog ||
	    o->ptr == &g_cfg.daemonize || o->ptr == &appendonly_cfg || o->ptr == &g_cfg.tls_port)
		return *(int *)o->ptr;
	if (o->ptr == &g_cfg.unixsocketperm)
		return *(unsigned int *)o->ptr;
	if (o->ptr == &g_cfg.loglevel)
		return atomic_load_explicit((_Atomic int *)o->ptr, memory_order_relaxed);
	return atomic_load_explicit((_Atomic long long *)o->ptr, memory_order_relaxed);
}

/*
 * Parse one value of a numeric, boolean or enum option into *v.  Return NULL
 * or a message naming the reason (static, or formatted into errbuf).
 */
static const char *parse_value(const struct cfg_opt *o, const char *arg, long long *v, char *errbuf,
			       size_t errlen)
{
	switch (o->type) {
	case T_BOOL:
		if (o->ptr == &appendonly_cfg && !strcasecmp(arg, "yes"))
			return "rcukv has no append-only file (persistence comes with a later "
			       "issue)";
		if (!strcasecmp(arg, "yes"))
			*v = 1;
		else if (!strcasecmp(arg, "no"))
			*v = 0;
		else
			return "argument must be 'yes' or 'no'";
		return NULL;
	case T_INT:
		if (!resp_str2ll(arg, strlen(arg), v))
			return "argument couldn't be parsed into an integer";
		break;
	case T_OCTAL: {
		char *end;

		*v = strtoll(arg, &end, 8);
		if (!arg[0] || *end)
			return "argument couldn't be parsed into an integer";
		break;
	}
	case T_MEM: {
		unsigned long long u;

		if (!util_memtoull(arg, &u) || u > LLONG_MAX)
			return "argument must be a memory value";
		*v = (long long)u;
		break;
	}
	case T_ENUM:
		for (int i = 0; o->enums[i]; i++) {
			if (!strcasecmp(arg, o->enums[i])) {
				*v = i;
				return NULL;
			}
		}
		{
			size_t n = (size_t)snprintf(errbuf, errlen,
						    "argument(s) must be one of the following: ");

			for (int i = 0; o->enums[i] && n < errlen; i++)
				n += (size_t)snprintf(errbuf + n, errlen - n, "%s%s",
						      i ? ", " : "", o->enums[i]);
			return errbuf;
		}
	default:
		return "not a numeric option";
	}
	if (*v < o->min || *v > o->max) {
		snprintf(errbuf, errlen, "argument must be between %lld and %lld inclusive", o->min,
			 o->max);
		return errbuf;
	}
	return NULL;
}

/* Check and apply one option at start-up; argv[0..argc) are the values. */
static const char *apply(const struct cfg_opt *o, int argc, char **argv, char *errbuf,
			 size_t errlen)
{
	long long v;
	const char *err;

	if (o->type == T_RENAME) {
		if (argc != 2)
			return "wrong number of arguments";
		if (g_cfg.nrename == CFG_MAX_RENAME)
			return "too many rename-command lines";
		g_cfg.rename_from[g_cfg.nrename] = xstrdup(argv[0]);
		g_cfg.rename_to[g_cfg.nrename] = xstrdup(argv[1]);
		g_cfg.nrename++;
		return NULL;
	}
	if (o->type == T_COBL)
		return cobl_apply(argc, argv, 1);
	if (o->type == T_PERSIST)
		return persist_cfg_set ? persist_cfg_set(o->name, argc, argv, 1, 1)
				       : "persistence is not linked into this program";
	if (o->type == T_PCTL) /* --opt "50 99" arrives as one word: split it */
		return argc == 1 && strchr(argv[0], ' ')
			   ? stats_pctl_set_str(argv[0], strlen(argv[0]), 1)
			   : stats_pctl_set(argc, argv, 1);
	if (o->type != T_BIND && argc != 1)
		return "wrong number of arguments";
	switch (o->type) {
	case T_STR: {
		char **p = o->ptr;

		free(*p);
		*p = xstrdup(argv[0]);
		if (p == &requirepass_str)
			atomic_store(&g_cfg.has_pass, argv[0][0] != '\0');
		return NULL;
	}
	case T_BIND:
		if (argc < 1 || argc > CFG_MAX_BIND)
			return "wrong number of arguments";
		for (int i = 0; i < g_cfg.nbind; i++)
			free(g_cfg.bind[i]);
		g_cfg.nbind = 0;
		for (int i = 0; i < argc; i++)
			g_cfg.bind[g_cfg.nbind++] = xstrdup(argv[i]);
		return NULL;
	default:
		err = parse_value(o, argv[0], &v, errbuf, errlen);
		if (!err)
			store_int(o, v);
		return err;
	}
}

__attribute__((noreturn)) static void fatal_line(const char *file, int lineno, const char *line,
						 const char *reason)
{
	fprintf(stderr, "\n*** FATAL CONFIG FILE ERROR (rcukv %s) ***\n", RCUKV_VERSION);
	if (file)
		fprintf(stderr, "Reading the configuration file %s, at line %d\n", file, lineno);
	else
		fprintf(stderr, "Reading the command line options, option %d\n", lineno);
	fprintf(stderr, ">>> '%s'\n", line);
	fprintf(stderr, "%s\n", reason);
	exit(1);
}

static void load_line(const char *file, int lineno, const char *line)
{
	char **argv, errbuf[256];
	size_t *lens;
	int argc;
	const struct cfg_opt *o;
	const char *err, *t = line;

	while (*t == ' ' || *t == '\t')
		t++;
	if (*t == '#' || *t == '\0')
		return;
	if ((argc = util_splitargs(line, strlen(line), &argv, &lens)) < 0)
		fatal_line(file, lineno, line, "Unbalanced quotes in configuration line");
	if (argc == 0 || argv[0][0] == '#') {
		free(argv);
		return;
	}
	o = find_opt(argv[0], lens[0]);
	if (!o) {
		char msg[200];

		snprintf(msg, sizeof(msg),
			 "Bad directive or wrong number of arguments: unknown option '%s'",
			 argv[0]);
		fatal_line(file, lineno, line, msg);
	}
	err = apply(o, argc - 1, argv + 1, errbuf, sizeof(errbuf));
	if (err) {
		char msg[300];

		snprintf(msg, sizeof(msg), "Invalid value for '%s': %s", o->name, err);
		fatal_line(file, lineno, line, msg);
	}
	free(argv);
}

void cfg_load(int argc, char **argv)
{
	int i = 1;

	if (argc >= 2 && argv[1][0] != '-') {
		FILE *f;
		char line[4096];
		int lineno = 0;
		char *abs;

		f = fopen(argv[1], "r");
		if (!f) {
			fprintf(stderr, "Fatal error, can't open config file '%s': %s\n", argv[1],
				strerror(errno));
			exit(1);
		}
		abs = realpath(argv[1], NULL);
		g_cfg.config_file = abs ? abs : xstrdup(argv[1]);
		while (fgets(line, sizeof(line), f)) {
			size_t n = strlen(line);

			lineno++;
			if (n == sizeof(line) - 1 && line[n - 1] != '\n')
				fatal_line(g_cfg.config_file, lineno, "...",
					   "line too long (max 4095 bytes)");
			while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
				line[--n] = '\0';
			load_line(g_cfg.config_file, lineno, line);
		}
		fclose(f);
		i = 2;
	}
	/* "--name v1 v2 --other v" overrides, as redis-server accepts. */
	while (i < argc) {
		char buf[8192];
		size_t n;
		int start = i;

		if (strncmp(argv[i], "--", 2) != 0 || argv[i][2] == '\0') {
			char msg[300];

			snprintf(msg, sizeof(msg),
				 "expected an option starting with '--', got '%s'", argv[i]);
			fatal_line(NULL, i, argv[i], msg);
		}
		n = (size_t)snprintf(buf, sizeof(buf), "%s", argv[i] + 2);
		i++;
		while (i < argc && strncmp(argv[i], "--", 2) != 0) {
			/* quote each value so spaces and empty strings survive */
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, " \"");
			for (const char *p = argv[i]; *p && n < sizeof(buf) - 4; p++) {
				if (*p == '"' || *p == '\\')
					buf[n++] = '\\';
				buf[n++] = *p;
			}
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\"");
			i++;
			if (n >= sizeof(buf) - 8)
				fatal_line(NULL, start, argv[start], "option too long");
		}
		load_line(NULL, start, buf);
	}
	g_cfg.threads = threads_cfg > 0 ? threads_cfg : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (g_cfg.threads < 1)
		g_cfg.threads = 1;
	if (unixsocket_str && unixsocket_str[0])
		g_cfg.unixsocket = xstrdup(unixsocket_str);
}

/* ------------------------------------------------------------ CONFIG */

static void opt_value(const struct cfg_opt *o, char *buf, size_t len)
{
	switch (o->type) {
	case T_BOOL:
		snprintf(buf, len, "%s", load_int(o) ? "yes" : "no");
		break;
	case T_INT:
	case T_MEM:
		snprintf(buf, len, "%lld", load_int(o));
		break;
	case T_OCTAL:
		snprintf(buf, len, "%llo", load_int(o));
		break;
	case T_ENUM:
		snprintf(buf, len, "%s", o->enums[load_int(o)]);
		break;
	case T_STR: {
		char *const *p = o->ptr;

		pthread_mutex_lock(&str_lock);
		snprintf(buf, len, "%s", *p ? *p : "");
		pthread_mutex_unlock(&str_lock);
		break;
	}
	case T_RENAME:
		buf[0] = '\0';
		break;
	case T_PERSIST:
		buf[0] = '\0';
		if (persist_cfg_get)
			persist_cfg_get(o->name, buf, len);
		break;
	case T_PCTL:
		stats_pctl_get(buf, len);
		break;
	case T_COBL:
		pthread_mutex_lock(&str_lock);
		snprintf(buf, len, "normal %lld %lld %lld slave %lld %lld %lld pubsub %lld %lld %lld",
			 atomic_load(&g_cfg.cobl_hard), atomic_load(&g_cfg.cobl_soft),
			 atomic_load(&g_cfg.cobl_soft_secs), cobl_other[0][0], cobl_other[0][1],
			 cobl_other[0][2], cobl_other[1][0], cobl_other[1][1], cobl_other[1][2]);
		pthread_mutex_unlock(&str_lock);
		break;
	case T_BIND: {
		size_t n = 0;

		buf[0] = '\0';
		for (int i = 0; i < g_cfg.nbind && n < len; i++)
			n +=
			    (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "", g_cfg.bind[i]);
		break;
	}
	}
}

void cfg_cmd_get(struct conn *c, int argc)
{
	char match[NOPTS];
	int n = 0;

	memset(match, 0, sizeof(match));
	for (int a = 2; a < argc; a++) {
		for (int i = 0; i < NOPTS; i++) {
			if (opts[i].type == T_RENAME)
				continue;
			if (!match[i] && util_glob_match(ARGV(c, a), ARGL(c, a), opts[i].name,
							 strlen(opts[i].name), 1)) {
				match[i] = 1;
				n++;
			}
		}
	}
	reply_map(c, n);
	for (int i = 0; i < NOPTS; i++) {
		char val[1024];

		if (!match[i])
			continue;
		opt_value(&opts[i], val, sizeof(val));
		reply_bulk_str(c, opts[i].name);
		reply_bulk_str(c, val);
	}
}

/* Run-time effects of a numeric option just set by CONFIG SET. */
static void cfg_applied(const struct cfg_opt *o)
{
	if (o->ptr == &g_cfg.maxmemory && evict_maxmemory_set)
		evict_maxmemory_set();
	else if ((o->ptr == &g_cfg.maxmemory_policy || o->ptr == &g_cfg.lfu_log_factor ||
		  o->ptr == &g_cfg.lfu_decay_time) &&
		 evict_config_changed)
		evict_config_changed();
	else if (o->ptr == &g_cfg.rcu_callback_limit && evict_rcu_limit_set)
		evict_rcu_limit_set();
}

/* enable-protected-configs: yes, or local and the client is on this host. */
static int protected_allowed(const struct conn *c)
{
	long long mode = atomic_load_explicit(&g_cfg.enable_protected_configs, memory_order_relaxed);

	if (mode == 1)
		return 1;
	return mode == 2 && ((c->flags & CONN_UNIX) || !strncmp(c->addr, "127.", 4) ||
			     !strncmp(c->addr, "::1", 3));
}

void cfg_cmd_set(struct conn *c, int argc)
{
	const struct cfg_opt *found[64];
	int nfound = 0;
	char errbuf[200];

	if ((argc - 2) % 2 != 0 || argc - 2 > 128) {
		reply_errorf(c, "Unknown option or number of arguments for CONFIG SET - '%.*s'",
			     (int)ARGL(c, 2), ARGV(c, 2));
		return;
	}
	/* Validate every pair first, then apply: all or nothing, as Redis 7. */
	for (int a = 2; a < argc; a += 2) {
		const struct cfg_opt *o = find_opt(ARGV(c, a), ARGL(c, a));

		if (!o) {
			reply_errorf(
			    c, "Unknown option or number of arguments for CONFIG SET - '%.*s'",
			    (int)ARGL(c, a), ARGV(c, a));
			return;
		}
		for (int k = 0; k < nfound; k++) {
			if (found[k] == o) {
				reply_errorf(c,
					     "CONFIG SET failed (possibly related to argument "
					     "'%s') - duplicate parameter",
					     o->name);
				return;
			}
		}
		if (!o->mutable_) {
			reply_errorf(c,
				     "CONFIG SET failed (possibly related to argument '%s') - "
				     "can't set immutable config",
				     o->name);
			return;
		}
		if (o->mutable_ == CFG_PROTECTED && !protected_allowed(c)) {
			reply_errorf(c,
				     "CONFIG SET failed (possibly related to argument '%s') - "
				     "can't set protected config",
				     o->name);
			return;
		}
		found[nfound++] = o;
	}
	/* Parse every value first: all or nothing, as Redis 7. */
	long long vals[64];

	for (int k = 0; k < nfound; k++) {
		const struct cfg_opt *o = found[k];
		const char *err = NULL;

		if (o->type == T_COBL) {
			err = cobl_set(ARGV(c, 2 + 2 * k + 1), 0);
		} else if (o->type == T_PERSIST) {
			char *v = xmemdup(ARGV(c, 2 + 2 * k + 1), ARGL(c, 2 + 2 * k + 1));

			err = persist_cfg_set ? persist_cfg_set(o->name, 1, &v, 0, 0)
					      : "persistence is not linked into this program";
			free(v);
		} else if (o->type == T_PCTL) {
			err = stats_pctl_set_str(ARGV(c, 2 + 2 * k + 1), ARGL(c, 2 + 2 * k + 1), 0);
		} else if (o->type != T_STR)
			err = parse_value(o, ARGV(c, 2 + 2 * k + 1), &vals[k], errbuf,
					  sizeof(errbuf));
		if (err) {
			reply_errorf(c,
				     "CONFIG SET failed (possibly related to argument '%s') - %s",
				     o->name, err);
			return;
		}
	}
	for (int k = 0; k < nfound; k++) {
		const struct cfg_opt *o = found[k];

		if (o->type == T_COBL) {
			cobl_set(ARGV(c, 2 + 2 * k + 1), 1);
		} else if (o->type == T_PERSIST) {
			char *v = xmemdup(ARGV(c, 2 + 2 * k + 1), ARGL(c, 2 + 2 * k + 1));

			persist_cfg_set(o->name, 1, &v, 0, 1);
			free(v);
		} else if (o->type == T_PCTL) {
			stats_pctl_set_str(ARGV(c, 2 + 2 * k + 1), ARGL(c, 2 + 2 * k + 1), 1);
		} else if (o->type == T_STR) {
			/* string options are read by CONFIG GET and AUTH on other
			 * threads, so they change under str_lock.  requirepass
			 * affects new authentications only (and clients accepted
			 * from now on), as in Redis. */
			char *nv = xmemdup(ARGV(c, 2 + 2 * k + 1), ARGL(c, 2 + 2 * k + 1)), *old;

			pthread_mutex_lock(&str_lock);
			old = *(char **)o->ptr;
			*(char **)o->ptr = nv;
			if (o->ptr == &requirepass_str)
				atomic_store(&g_cfg.has_pass, nv[0] != '\0');
			pthread_mutex_unlock(&str_lock);
			free(old);
		} else if (o->ptr != &appendonly_cfg) {
			store_int(o, vals[k]);
			cfg_applied(o);
		}
	}
	reply_ok(c);
}

void cfg_free_extra(void)
{
	if (persist_fini)
		persist_fini();
	free(unixsocket_str);
	unixsocket_str = NULL;
	free(requirepass_str);
	requirepass_str = NULL;
	for (int i = 0; i < g_cfg.nrename; i++) {
		free(g_cfg.rename_from[i]);
		free(g_cfg.rename_to[i]);
	}
	g_cfg.nrename = 0;
	free(g_cfg.tls_cert_file);
	free(g_cfg.tls_key_file);
	free(g_cfg.tls_ca_cert_file);
	free(g_cfg.tls_auth_clients);
	free(g_cfg.tls_protocols);
	g_cfg.tls_cert_file = g_cfg.tls_key_file = g_cfg.tls_ca_cert_file = NULL;
	g_cfg.tls_auth_clients = g_cfg.tls_protocols = NULL;
}
