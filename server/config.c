/*
 * config.c - rcukv-server options: the registry of option rows (config.h),
 * defaults, the config file (redis.conf syntax), "--name value" command-line
 * overrides, CONFIG GET and CONFIG SET, all over the rows; and the rows of
 * the server core's own options (g_cfg).
 *
 * Owns g_cfg.  It is written by the main thread before the workers start;
 * afterwards only the _Atomic fields change (CONFIG SET, from any worker,
 * one CONFIG SET at a time under set_lock) and every reader loads them with
 * relaxed atomics.  String options are immutable after start-up, so plain
 * reads of them are safe; requirepass, the one that changes, is under
 * str_lock.
 *
 * Errors at start-up print "*** FATAL CONFIG FILE ERROR ***" with the file,
 * line, the offending line and the reason, then exit 1 (as redis-server does).
 * Tested by tests/server/test_startup.sh (start-up errors against
 * redis-server's) and the CONFIG cases of tests/server/test_server.c.
 */
#include "resp/resp.h"
#include "server/config.h"
#include "server/util.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

struct cfg g_cfg;

static pthread_mutex_t str_lock = PTHREAD_MUTEX_INITIALIZER; /* requirepass, cobl_replica */
static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER; /* one CONFIG SET at a time */
static int threads_cfg;
static char *unixsocket_str;
static char *requirepass_str; /* under str_lock once workers run */

/* ------------------------------------------------------------ registry */

static struct cfg_group *groups;
static const struct cfg_opt **index_; /* every row, by name: CONFIG GET's order */
static int nindex;
static char **def_vals; /* index_[i]'s default as CONFIG GET prints it (CONFIG REWRITE) */

void cfg_register(struct cfg_group *g)
{
	g->next = groups;
	groups = g;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(const struct cfg_opt *const *)a)->name,
		      (*(const struct cfg_opt *const *)b)->name);
}

/* The sorted index of every registered row (main thread, at cfg_defaults()). */
static void build_index(void)
{
	int n = 0;

	for (struct cfg_group *g = groups; g; g = g->next)
		n += g->n;
	free(index_);
	index_ = xmalloc((size_t)n * sizeof(*index_));
	nindex = 0;
	for (struct cfg_group *g = groups; g; g = g->next)
		for (int i = 0; i < g->n; i++)
			index_[nindex++] = &g->rows[i];
	qsort(index_, (size_t)nindex, sizeof(*index_), by_name);
}

static const struct cfg_opt *find_opt(const char *name, size_t len)
{
	for (int i = 0; i < nindex; i++)
		if (util_strcaseeq(name, len, index_[i]->name))
			return index_[i];
	return NULL;
}

/* ------------------------------------------------------ numeric values */

static void store_num(const struct cfg_opt *o, long long v)
{
	if (o->clamp_hi > 0)
		v = v < o->clamp_lo ? o->clamp_lo : v > o->clamp_hi ? o->clamp_hi : v;
	switch (o->store) {
	case CFG_PLAIN_INT:
		*(int *)o->field = (int)v;
		break;
	case CFG_PLAIN_UINT:
		*(unsigned int *)o->field = (unsigned int)v;
		break;
	case CFG_ATOMIC_INT:
		atomic_store_explicit((_Atomic int *)o->field, (int)v, memory_order_relaxed);
		break;
	case CFG_ATOMIC_LL:
		atomic_store_explicit((_Atomic long long *)o->field, v, memory_order_relaxed);
		break;
	}
}

static long long load_num(const struct cfg_opt *o)
{
	switch (o->store) {
	case CFG_PLAIN_INT:
		return *(int *)o->field;
	case CFG_PLAIN_UINT:
		return *(unsigned int *)o->field;
	case CFG_ATOMIC_INT:
		return atomic_load_explicit((_Atomic int *)o->field, memory_order_relaxed);
	case CFG_ATOMIC_LL:
		break;
	}
	return atomic_load_explicit((_Atomic long long *)o->field, memory_order_relaxed);
}

const char *cfg_parse_bool(const char *arg, long long *v)
{
	if (!strcasecmp(arg, "yes"))
		*v = 1;
	else if (!strcasecmp(arg, "no"))
		*v = 0;
	else
		return "argument must be 'yes' or 'no'";
	return NULL;
}

/*
 * Parse one value of a numeric, boolean or enum option into *v.  Return NULL
 * or a message naming the reason (static, or formatted into errbuf).
 */
static const char *parse_value(const struct cfg_opt *o, const char *arg, long long *v, char *errbuf,
			       size_t errlen)
{
	switch (o->kind) {
	case CFG_BOOL:
		return cfg_parse_bool(arg, v);
	case CFG_INT:
		if (!resp_str2ll(arg, strlen(arg), v))
			return "argument couldn't be parsed into an integer";
		break;
	case CFG_OCTAL: {
		char *end;

		*v = strtoll(arg, &end, 8);
		if (!arg[0] || *end)
			return "argument couldn't be parsed into an integer";
		break;
	}
	case CFG_MEM: {
		unsigned long long u;

		if (!util_memtoull(arg, &u) || u > LLONG_MAX)
			return "argument must be a memory value";
		*v = (long long)u;
		break;
	}
	case CFG_ENUM:
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
static const char *apply(const struct cfg_opt *o, int argc, char **argv, const size_t *lens,
			 char *errbuf, size_t errlen)
{
	long long v;
	const char *err;

	if (o->kind == CFG_SPECIAL)
		return o->set(o, argc, argv, lens, 1, 1);
	if (argc != 1)
		return "wrong number of arguments";
	if (o->kind == CFG_STRING) {
		char **p = o->field;

		free(*p);
		*p = xstrdup(argv[0]);
		return NULL;
	}
	err = parse_value(o, argv[0], &v, errbuf, errlen);
	if (!err)
		store_num(o, v);
	return err;
}

/* -------------------------------------------- the core's special rows */

/* client-output-buffer-limit: "normal" and "pubsub" apply (conn.c); the
 * replica class is kept so CONFIG GET shows what was set. */
static long long cobl_replica[3];

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
	if (set[1])
		for (int k = 0; k < 3; k++)
			cobl_replica[k] = v[1][k]; /* read under str_lock */
	if (set[2]) {
		atomic_store(&g_cfg.cobl_ps_hard, v[2][0]);
		atomic_store(&g_cfg.cobl_ps_soft, v[2][1]);
		atomic_store(&g_cfg.cobl_ps_soft_secs, v[2][2]);
	}
	return NULL;
}

/* The file and the command line give one word per value; CONFIG SET gives
 * one value that is split into words. */
static const char *cobl_set(const struct cfg_opt *o, int argc, char **argv, const size_t *lens,
			    int startup, int apply_now)
{
	char **w = argv;
	size_t *wl;
	int n = argc;
	const char *err;

	(void)o;
	if (!startup && (n = util_splitargs(argv[0], lens[0], &w, &wl)) < 0)
		return "Wrong number of arguments in buffer limit configuration.";
	pthread_mutex_lock(&str_lock);
	err = cobl_apply(n, w, apply_now);
	pthread_mutex_unlock(&str_lock);
	if (w != argv)
		free(w);
	return err;
}

static void cobl_get(const struct cfg_opt *o, char *buf, size_t len)
{
	(void)o;
	pthread_mutex_lock(&str_lock);
	snprintf(buf, len, "normal %lld %lld %lld slave %lld %lld %lld pubsub %lld %lld %lld",
		 atomic_load(&g_cfg.cobl_hard), atomic_load(&g_cfg.cobl_soft),
		 atomic_load(&g_cfg.cobl_soft_secs), cobl_replica[0], cobl_replica[1],
		 cobl_replica[2], atomic_load(&g_cfg.cobl_ps_hard), atomic_load(&g_cfg.cobl_ps_soft),
		 atomic_load(&g_cfg.cobl_ps_soft_secs));
	pthread_mutex_unlock(&str_lock);
}

static const char *bind_set(const struct cfg_opt *o, int argc, char **argv, const size_t *lens,
			    int startup, int apply_now)
{
	(void)o, (void)lens, (void)startup;
	if (argc < 1 || argc > CFG_MAX_BIND)
		return "wrong number of arguments";
	if (!apply_now)
		return NULL;
	for (int i = 0; i < g_cfg.nbind; i++)
		free(g_cfg.bind[i]);
	g_cfg.nbind = 0;
	for (int i = 0; i < argc; i++)
		g_cfg.bind[g_cfg.nbind++] = xstrdup(argv[i]);
	return NULL;
}

static void bind_get(const struct cfg_opt *o, char *buf, size_t len)
{
	size_t n = 0;

	(void)o;
	buf[0] = '\0';
	for (int i = 0; i < g_cfg.nbind && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "", g_cfg.bind[i]);
}

/* rename-command: start-up only, applied by cmd_init(); CONFIG GET omits it. */
static const char *rename_set(const struct cfg_opt *o, int argc, char **argv, const size_t *lens,
			      int startup, int apply_now)
{
	(void)o, (void)lens, (void)startup;
	if (argc != 2)
		return "wrong number of arguments";
	if (g_cfg.nrename == CFG_MAX_RENAME)
		return "too many rename-command lines";
	if (!apply_now)
		return NULL;
	g_cfg.rename_from[g_cfg.nrename] = xstrdup(argv[0]);
	g_cfg.rename_to[g_cfg.nrename] = xstrdup(argv[1]);
	g_cfg.nrename++;
	return NULL;
}

static void empty_get(const struct cfg_opt *o, char *buf, size_t len)
{
	(void)o, (void)len;
	buf[0] = '\0';
}

/* requirepass: read by AUTH on every worker, so it changes under str_lock;
 * a new password affects new authentications only, as in Redis. */
static const char *requirepass_set(const struct cfg_opt *o, int argc, char **argv,
				   const size_t *lens, int startup, int apply_now)
{
	char *nv, *old;

	(void)o, (void)startup;
	if (argc != 1)
		return "wrong number of arguments";
	if (!apply_now)
		return NULL;
	nv = xmemdup(argv[0], lens[0]);
	pthread_mutex_lock(&str_lock);
	old = requirepass_str;
	requirepass_str = nv;
	atomic_store(&g_cfg.has_pass, nv[0] != '\0');
	pthread_mutex_unlock(&str_lock);
	free(old);
	return NULL;
}

static void requirepass_get(const struct cfg_opt *o, char *buf, size_t len)
{
	(void)o;
	pthread_mutex_lock(&str_lock);
	snprintf(buf, len, "%s", requirepass_str ? requirepass_str : "");
	pthread_mutex_unlock(&str_lock);
}

/* appendonly: accepted for compatibility; only "no". */
static const char *appendonly_set(const struct cfg_opt *o, int argc, char **argv,
				  const size_t *lens, int startup, int apply_now)
{
	long long v;

	(void)o, (void)lens, (void)startup, (void)apply_now;
	if (argc != 1)
		return "wrong number of arguments";
	if (!strcasecmp(argv[0], "yes"))
		return "rcukv has no append-only file (persistence comes with a later issue)";
	return cfg_parse_bool(argv[0], &v);
}

static void appendonly_get(const struct cfg_opt *o, char *buf, size_t len)
{
	(void)o;
	snprintf(buf, len, "no");
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

static const char *const loglevels[] = {"debug", "verbose", "notice", "warning", NULL};
static const char *const protected_modes[] = {"no", "yes", "local", NULL};

#define NUM(n, k, m, f, st, lo, hi, d)                                                             \
	{ .name = (n), .kind = (k), .mut = (m), .field = (f), .store = (st), .min = (lo),          \
	  .max = (hi), .def = (d) }
#define STR(n, f, d) { .name = (n), .kind = CFG_STRING, .mut = CFG_STARTUP, .field = (f), .def = (d) }
#define SPECIAL(n, m, fl, s, g, d)                                                                 \
	{ .name = (n), .kind = CFG_SPECIAL, .mut = (m), .flags = (fl), .set = (s), .get = (g),     \
	  .def = (d) }

static const struct cfg_opt core_rows[] = {
    SPECIAL("bind", CFG_STARTUP, 0, bind_set, bind_get, "127.0.0.1"),
    NUM("port", CFG_INT, CFG_STARTUP, &g_cfg.port, CFG_PLAIN_INT, 0, 65535, "6379"),
    STR("unixsocket", &unixsocket_str, NULL),
    NUM("unixsocketperm", CFG_OCTAL, CFG_STARTUP, &g_cfg.unixsocketperm, CFG_PLAIN_UINT, 0, 0777,
	"0"),
    NUM("threads", CFG_INT, CFG_STARTUP, &threads_cfg, CFG_PLAIN_INT, 0, 256, "0"),
    NUM("worker-cpu-affinity", CFG_BOOL, CFG_STARTUP, &g_cfg.worker_cpu_affinity, CFG_ATOMIC_LL,
	0, 1, "yes"),
    NUM("maxclients", CFG_INT, CFG_MUTABLE, &g_cfg.maxclients, CFG_ATOMIC_LL, 1, 4294967295LL,
	"10000"),
    NUM("timeout", CFG_INT, CFG_MUTABLE, &g_cfg.timeout, CFG_ATOMIC_LL, 0, INT_MAX, "0"),
    NUM("tcp-keepalive", CFG_INT, CFG_MUTABLE, &g_cfg.tcp_keepalive, CFG_ATOMIC_LL, 0, INT_MAX,
	"300"),
    {.name = "loglevel", .kind = CFG_ENUM, .mut = CFG_MUTABLE, .field = &g_cfg.loglevel,
     .store = CFG_ATOMIC_INT, .enums = loglevels, .def = "notice"},
    STR("logfile", &g_cfg.logfile, ""),
    STR("pidfile", &g_cfg.pidfile, ""),
    NUM("daemonize", CFG_BOOL, CFG_STARTUP, &g_cfg.daemonize, CFG_PLAIN_INT, 0, 1, "no"),
    NUM("proto-max-bulk-len", CFG_MEM, CFG_MUTABLE, &g_cfg.proto_max_bulk_len, CFG_ATOMIC_LL,
	1024 * 1024, LLONG_MAX, "536870912"),
    NUM("client-query-buffer-limit", CFG_MEM, CFG_MUTABLE, &g_cfg.client_query_buffer_limit,
	CFG_ATOMIC_LL, 1024 * 1024, LLONG_MAX, "1073741824"),
    /* stored clamped to 1..500, as Redis */
    {.name = "hz", .kind = CFG_INT, .mut = CFG_MUTABLE, .field = &g_cfg.hz, .min = 0,
     .max = INT_MAX, .clamp_lo = 1, .clamp_hi = 500, .def = "10"},
    NUM("databases", CFG_INT, CFG_STARTUP, &g_cfg.databases, CFG_PLAIN_INT, 1, CFG_MAX_DATABASES,
	"16"),
    NUM("tcp-backlog", CFG_INT, CFG_STARTUP, &g_cfg.tcp_backlog, CFG_PLAIN_INT, 0, INT_MAX,
	"511"),
    {.name = "enable-protected-configs", .kind = CFG_ENUM, .mut = CFG_STARTUP,
     .field = &g_cfg.enable_protected_configs, .enums = protected_modes, .def = "no"},
    {.name = "enable-debug-command", .kind = CFG_ENUM, .mut = CFG_STARTUP,
     .field = &g_cfg.enable_debug_command, .enums = protected_modes, .def = "no"},
    SPECIAL("appendonly", CFG_MUTABLE, 0, appendonly_set, appendonly_get, NULL),
    NUM("client-output-buffer-pause", CFG_MEM, CFG_MUTABLE, &g_cfg.client_output_buffer_soft,
	CFG_ATOMIC_LL, 16 * 1024, LLONG_MAX, "1048576"),
    SPECIAL("requirepass", CFG_MUTABLE, 0, requirepass_set, requirepass_get, ""),
    NUM("protected-mode", CFG_BOOL, CFG_MUTABLE, &g_cfg.protected_mode, CFG_ATOMIC_LL, 0, 1,
	"yes"),
    SPECIAL("rename-command", CFG_STARTUP, CFG_HIDDEN, rename_set, empty_get, NULL),
    SPECIAL("client-output-buffer-limit", CFG_MUTABLE, 0, cobl_set, cobl_get,
	    "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
};

static void core_fini(void)
{
	free(unixsocket_str);
	unixsocket_str = NULL;
	free(requirepass_str);
	requirepass_str = NULL;
	for (int i = 0; i < g_cfg.nrename; i++) {
		free(g_cfg.rename_from[i]);
		free(g_cfg.rename_to[i]);
	}
	g_cfg.nrename = 0;
	for (int i = 0; i < g_cfg.nbind; i++)
		free(g_cfg.bind[i]);
	g_cfg.nbind = 0;
}

static struct cfg_group core_group = {"config", core_rows,
				      (int)(sizeof(core_rows) / sizeof(core_rows[0])), NULL,
				      core_fini, NULL};
CFG_REGISTER(core_group)

/* ------------------------------------------------------------ defaults */

void cfg_defaults(void)
{
	char errbuf[256];

	memset(&g_cfg, 0, sizeof(g_cfg));
	build_index();
	for (int i = 0; i < nindex; i++) {
		const struct cfg_opt *o = index_[i];
		char *words[16];
		size_t lens[16];
		int n = 0;
		char *dup, *save, *w;
		const char *err;

		if (!o->def)
			continue;
		/* a default is written as a config line gives it: split at spaces */
		dup = xstrdup(o->def);
		for (w = strtok_r(dup, " ", &save); w && n < 16; w = strtok_r(NULL, " ", &save)) {
			words[n] = w;
			lens[n++] = strlen(w);
		}
		if (w)
			srv_die("default of %s has more than 16 words", o->name);
		if (n == 0) {
			words[n] = dup;
			lens[n++] = 0;
		}
		err = apply(o, n, words, lens, errbuf, sizeof(errbuf));
		if (err)
			srv_die("default of %s refused: %s", o->name, err);
		free(dup);
	}
	for (struct cfg_group *g = groups; g; g = g->next)
		if (g->defaults)
			g->defaults();
	for (int i = 0; def_vals && i < nindex; i++)
		free(def_vals[i]);
	free(def_vals);
	def_vals = xcalloc((size_t)nindex, sizeof(*def_vals));
	for (int i = 0; i < nindex; i++) {
		char buf[1024];

		cfg_opt_value(index_[i], buf, sizeof(buf));
		def_vals[i] = xstrdup(buf);
	}
}

const char *cfg_opt_default(int i)
{
	return def_vals ? def_vals[i] : "";
}

/* ----------------------------------------------- file and command line */

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
	err = apply(o, argc - 1, argv + 1, lens + 1, errbuf, sizeof(errbuf));
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

/* ----------------------------------- what CONFIG GET/SET read and write */

void cfg_opt_value(const struct cfg_opt *o, char *buf, size_t len)
{
	switch (o->kind) {
	case CFG_BOOL:
		snprintf(buf, len, "%s", load_num(o) ? "yes" : "no");
		break;
	case CFG_INT:
	case CFG_MEM:
		snprintf(buf, len, "%lld", load_num(o));
		break;
	case CFG_OCTAL:
		snprintf(buf, len, "%llo", load_num(o));
		break;
	case CFG_ENUM:
		snprintf(buf, len, "%s", o->enums[load_num(o)]);
		break;
	case CFG_STRING: {
		char *const *p = o->field;

		snprintf(buf, len, "%s", *p ? *p : "");
		break;
	}
	case CFG_SPECIAL:
		o->get(o, buf, len);
		break;
	}
}

int cfg_nopts(void)
{
	return nindex;
}

const struct cfg_opt *cfg_opt_at(int i)
{
	return index_[i];
}

const struct cfg_opt *cfg_find(const char *name, size_t len)
{
	return find_opt(name, len);
}

void cfg_set_lock(void)
{
	pthread_mutex_lock(&set_lock);
}

void cfg_set_unlock(void)
{
	pthread_mutex_unlock(&set_lock);
}

const char *cfg_set_value(const struct cfg_opt *o, const char *arg, size_t len, long long *val,
			  int apply_now, char *errbuf, size_t errlen)
{
	const char *err;

	if (o->kind == CFG_SPECIAL) {
		char *v = xmemdup(arg, len);

		err = o->set(o, 1, &v, &len, 0, apply_now);
		free(v);
	} else if (!apply_now) {
		err = parse_value(o, arg, val, errbuf, errlen);
	} else {
		store_num(o, *val);
		err = NULL;
	}
	if (!err && apply_now && o->apply)
		o->apply();
	return err;
}

void cfg_free_extra(void)
{
	for (int i = 0; def_vals && i < nindex; i++)
		free(def_vals[i]);
	free(def_vals);
	def_vals = NULL;
	for (struct cfg_group *g = groups; g; g = g->next)
		if (g->fini)
			g->fini();
	for (int i = 0; i < nindex; i++)
		if (index_[i]->kind == CFG_STRING) {
			char **p = index_[i]->field;

			free(*p);
			*p = NULL;
		}
	free(index_);
	index_ = NULL;
	nindex = 0;
}
