/*
 * client/bench.c: "rcukv-cli bench", a closed- and open-loop load generator.
 *
 * Shape: --threads worker threads, each with --clients non-blocking
 * connections driven by its own epoll set.  Each connection keeps at most
 * --pipeline requests in flight, in a FIFO of (start time, kind, measured).
 *
 * Closed loop (default): a connection refills its pipeline as soon as
 * replies come back; latency runs from the moment the request was written.
 * Open loop (--rate R): every connection owns a fixed schedule, one request
 * every threads*clients/R seconds; a request whose slot has come but cannot
 * go out (pipeline full, server stalled) waits, and its latency still runs
 * from its slot, the intended send time.  So a server stall shows up in
 * every request scheduled during it (no coordinated omission).
 *
 * Ownership and concurrency: all connection state and histograms belong to
 * their worker thread.  Shared fields: b->stop (atomic, main thread writes,
 * workers read, relaxed: it only ends loops); t->done_live and
 * t->errors_live (atomic counters, worker writes, main thread samples each
 * 100 ms, relaxed: they are statistics); t->lock protects t->hist while the
 * main thread reads them for the progress line; the main thread reads
 * everything else after pthread_join.  b->seq_key (atomic, relaxed) hands
 * out sequential key numbers.
 *
 * TLS (--tls): every connection runs OpenSSL over its non-blocking socket
 * (client/tls.c): EPOLLIN stays registered, so a TLS read or write that waits
 * for the other direction is woken either way, and before waiting again a
 * connection drains what OpenSSL already decrypted (cli_conn_pending()).
 * The SSL_CTX is made before the workers start and only read by them.
 *
 * Tested by tests/client/test_bench.sh against a real redis-server (request
 * counts, ratio and key space checked with INFO; stall under open and closed
 * loop; JSON, HDR and SVG outputs).
 */
#include "resp/resp.h"
#include "client/bench_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum { K_GET = 0, K_SET = 1, K_CMD = 0 };
#define CLI_BENCH_MAX_PREFIX 200
enum { PAT_UNIFORM, PAT_ZIPF, PAT_SEQ };

struct bench_cfg {
	struct cli_conn_opts conn;
	int threads, clients, pipeline;
	long long requests; /* 0: use duration */
	double duration, warmup, rate;
	unsigned ratio_get, ratio_set;
	long long keys;
	int pattern;
	double zipf_s;
	size_t dmin, dmax;
	const char *prefix;
	size_t prefix_len;   /* <= CLI_BENCH_MAX_PREFIX */
	const char *command; /* template text */
	int targc;	     /* template split */
	char **targv;
	size_t *tlens;
	const char *json, *hdr, *svg, *label;
	int quiet;
	double timeout; /* drain wait after the end, seconds */
};

struct pend {
	uint64_t start; /* ns, CLOCK_MONOTONIC: write time or slot */
	uint8_t kind;
	uint8_t measured;
};

struct bconn {
	struct cli_conn c; /* hiredis-opened socket (+ SSL), our buffers unused */
	int alive;
	char *w; /* bytes still to write */
	size_t wlen, woff, wcap;
	int want_out; /* EPOLLOUT registered */
	char *r;
	size_t rlen, roff, rcap;
	struct resp_scan sc;
	struct pend *q; /* ring of pipeline entries */
	unsigned qhead, qn;
	uint64_t next_slot; /* open loop: next intended send time */
	uint64_t interval;  /* open loop: ns between slots */
	uint64_t last_reconnect;
};

struct bench;

struct bthread {
	struct bench *b;
	int idx;
	pthread_t tid;
	struct bconn *conns;
	int nconns;
	int epfd;
	long long quota; /* measured requests left to issue; -1: no limit */
	uint64_t seq;	 /* request counter for the GET:SET ratio */
	uint64_t rng;
	pthread_mutex_t lock; /* protects hist[] against the progress reader */
	struct cli_hist hist[BENCH_MAX_KINDS];
	uint64_t kdone[BENCH_MAX_KINDS], khits[BENCH_MAX_KINDS], kmiss[BENCH_MAX_KINDS];
	uint64_t errors;
	struct bench_errtype err[BENCH_MAX_ERRTYPES];
	int nerr;
	uint64_t last_reply;	    /* ns of the last measured reply */
	_Atomic uint64_t done_live; /* measured replies so far (relaxed) */
	_Atomic uint64_t errors_live;
	_Atomic int finished;
	int lock_ok; /* lock initialised */
	int lost;    /* every connection is gone */
};

struct bench {
	struct bench_cfg cfg;
	struct bthread *t;
	uint64_t t0, measure_start, end; /* ns; end = 0 in requests mode */
	_Atomic int stop;
	_Atomic uint64_t seq_key;
	double *zipf_cdf;
	char *payload;
	int nkinds;
	char kind_name[BENCH_MAX_KINDS][32];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static double rand01(uint64_t *s)
{
	return (double)(xorshift(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* ---- options ---- */

static void bench_usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: rcukv-cli [-h host] [-p port] [-s socket] [-u uri] [-a password] [-n db]\n"
	    "                 [-t connect-timeout] bench [OPTIONS]\n"
	    "\n"
	    "Load generator.  Closed loop by default: each connection keeps --pipeline\n"
	    "requests in flight.  With --rate, open loop: requests leave on a fixed\n"
	    "schedule and latency counts from the intended send time, so server stalls\n"
	    "are not hidden (no coordinated omission).\n"
	    "\n"
	    "Connection:\n"
	    "  -h, --host HOST        server host (default 127.0.0.1)\n"
	    "  -p, --port PORT        server port (default 6379)\n"
	    "  -s, --socket PATH      unix socket\n"
	    "  -a, --password PASS    AUTH password;  --user USER  AUTH user\n"
	    "  -n, --db N             SELECT database N\n"
	    "  -3, --resp3            talk RESP3 (HELLO 3)\n"
	    "      --tls              TLS, as rcukv-cli --tls; with --sni HOST, --cacert FILE,\n"
	    "                         --cacertdir DIR, --insecure, --cert FILE, --key FILE\n"
	    "                         (see rcukv-cli --help)\n"
	    "Load:\n"
	    "  -t, --threads N        worker threads (default 1)\n"
	    "  -c, --clients N        connections per thread (default 4)\n"
	    "  -P, --pipeline N       requests in flight per connection (default 1)\n"
	    "  -r, --requests N       total measured requests (default 100000 unless --duration)\n"
	    "  -d, --duration SECS    measured run time instead of a request count\n"
	    "  -w, --warmup SECS      unmeasured load before measuring (default 0)\n"
	    "  -R, --rate OPS         open loop at OPS requests/s in total (default: closed loop)\n"
	    "      --ratio GET:SET    mix of GET and SET requests (default 1:1)\n"
	    "  -k, --keys N           key space size (default 100000)\n"
	    "      --key-pattern P    uniform (default), zipf, sequential\n"
	    "      --zipf-s S         zipf exponent (default 0.99); zipf allows --keys <= "
	    "10000000\n"
	    "      --data-size N|A-B  SET value size in bytes, fixed or uniform in A..B (default "
	    "32)\n"
	    "      --key-prefix STR   key name prefix (default \"key:\")\n"
	    "      --command TEMPLATE one command for every request, such as\n"
	    "                         \"HSET h __key__ __data__\"; __key__ and __data__ are\n"
	    "                         replaced per request (--ratio is then ignored)\n"
	    "      --timeout SECS     wait for replies after the end, or for a lost server to\n"
	    "                         come back, at most this long (default 5)\n"
	    "Output:\n"
	    "      --json FILE        every figure, as JSON (input of --svg-compare)\n"
	    "      --hdr FILE         latency percentile distribution, HdrHistogram text format\n"
	    "      --svg FILE         latency by percentile and throughput over time\n"
	    "      --svg-compare A.json B.json\n"
	    "                         draw two --json runs on one chart into --svg FILE\n"
	    "                         (stdout if --svg is not given), without running\n"
	    "      --label TEXT       name of this run in JSON and charts\n"
	    "  -q, --quiet            no progress line (it is off anyway when stderr is not a "
	    "terminal)\n"
	    "      --help             this help\n"
	    "\n"
	    "The report gives throughput, hits and misses, errors by type, and latency\n"
	    "min/p50/p90/p99/p99.9/p99.99/max per command from a log-linear histogram\n"
	    "(1 us resolution, 0.8 %% relative precision, up to 71 minutes).\n"
	    "Exit status: 0 when the run completed (error replies are counted), 1 when it\n"
	    "could not run (bad option, unreachable server, refused AUTH, all connections "
	    "lost).\n");
}

static int bench_bad(const char *opt, const char *val, const char *why)
{
	fprintf(stderr,
		"rcukv-cli bench: invalid value '%s' for --%s: %s (see rcukv-cli bench --help)\n",
		val, opt, why);
	return -1;
}

static int opt_ll(const char *opt, const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return bench_bad(opt, s, "not an integer");
	if (v < lo || v > hi) {
		char why[96];
		snprintf(why, sizeof(why), "must be between %lld and %lld", lo, hi);
		return bench_bad(opt, s, why);
	}
	*out = v;
	return 0;
}

static int opt_d(const char *opt, const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi)) {
		char why[96];
		snprintf(why, sizeof(why), "must be a number between %g and %g", lo, hi);
		return bench_bad(opt, s, why);
	}
	*out = v;
	return 0;
}

enum {
	O_RATIO = 1000,
	O_PATTERN,
	O_ZIPF,
	O_DSIZE,
	O_PREFIX,
	O_COMMAND,
	O_JSON,
	O_HDR,
	O_SVG,
	O_CMP,
	O_LABEL,
	O_HELP,
	O_USER,
	O_TIMEOUT,
	O_TLS,
	O_SNI,
	O_CACERT,
	O_CACERTDIR,
	O_INSECURE,
	O_CERT,
	O_KEY
};

static const struct option bench_longopts[] = {{"host", required_argument, NULL, 'h'},
					       {"port", required_argument, NULL, 'p'},
					       {"socket", required_argument, NULL, 's'},
					       {"password", required_argument, NULL, 'a'},
					       {"user", required_argument, NULL, O_USER},
					       {"db", required_argument, NULL, 'n'},
					       {"resp3", no_argument, NULL, '3'},
					       {"tls", no_argument, NULL, O_TLS},
					       {"sni", required_argument, NULL, O_SNI},
					       {"cacert", required_argument, NULL, O_CACERT},
					       {"cacertdir", required_argument, NULL, O_CACERTDIR},
					       {"insecure", no_argument, NULL, O_INSECURE},
					       {"cert", required_argument, NULL, O_CERT},
					       {"key", required_argument, NULL, O_KEY},
					       {"threads", required_argument, NULL, 't'},
					       {"clients", required_argument, NULL, 'c'},
					       {"pipeline", required_argument, NULL, 'P'},
					       {"requests", required_argument, NULL, 'r'},
					       {"duration", required_argument, NULL, 'd'},
					       {"warmup", required_argument, NULL, 'w'},
					       {"rate", required_argument, NULL, 'R'},
					       {"ratio", required_argument, NULL, O_RATIO},
					       {"keys", required_argument, NULL, 'k'},
					       {"key-pattern", required_argument, NULL, O_PATTERN},
					       {"zipf-s", required_argument, NULL, O_ZIPF},
					       {"data-size", required_argument, NULL, O_DSIZE},
					       {"key-prefix", required_argument, NULL, O_PREFIX},
					       {"command", required_argument, NULL, O_COMMAND},
					       {"timeout", required_argument, NULL, O_TIMEOUT},
					       {"json", required_argument, NULL, O_JSON},
					       {"hdr", required_argument, NULL, O_HDR},
					       {"svg", required_argument, NULL, O_SVG},
					       {"svg-compare", required_argument, NULL, O_CMP},
					       {"label", required_argument, NULL, O_LABEL},
					       {"quiet", no_argument, NULL, 'q'},
					       {"help", no_argument, NULL, O_HELP},
					       {NULL, 0, NULL, 0}};

/* What one option's parser did: it took the option (OPT_TAKEN), it is not
 * one of its options (OPT_NOT_MINE), or the run should exit 0 (OPT_EXIT:
 * --help); -1 on a bad value, with the message printed. */
enum { OPT_TAKEN = 0, OPT_NOT_MINE = 2, OPT_EXIT = 3 };

/* Where and how to connect: -h -p -s -a --user, the TLS options, -n, -3. */
static int parse_conn_opt(int ch, struct cli_conn_opts *o)
{
	long long v;

	switch (ch) {
	case 'h':
		o->host = optarg;
		break;
	case 'p':
		if (opt_ll("port", optarg, 1, 65535, &v))
			return -1;
		o->port = (int)v;
		break;
	case 's':
		o->socket = optarg;
		break;
	case 'a':
		o->password = optarg;
		break;
	case O_USER:
		o->user = optarg;
		break;
	case O_TLS:
		o->tls.enabled = 1;
		break;
	case O_INSECURE:
		o->tls.insecure = 1;
		break;
	case O_SNI:
		o->tls.sni = optarg;
		break;
	case O_CACERT:
		o->tls.cacert = optarg;
		break;
	case O_CACERTDIR:
		o->tls.cacertdir = optarg;
		break;
	case O_CERT:
		o->tls.cert = optarg;
		break;
	case O_KEY:
		o->tls.key = optarg;
		break;
	case 'n':
		if (opt_ll("db", optarg, 0, 1 << 30, &v))
			return -1;
		o->db = (int)v;
		break;
	case '3':
		o->resp3 = 1;
		break;
	default:
		return OPT_NOT_MINE;
	}
	return OPT_TAKEN;
}

/* --ratio GET:SET */
static int parse_ratio(const char *arg, struct bench_cfg *c)
{
	unsigned g, s;
	char tail;

	if (sscanf(arg, "%u:%u%c", &g, &s, &tail) != 2 || g + s == 0 || g > 1000000 ||
	    s > 1000000)
		return bench_bad("ratio", arg, "expected GET:SET such as 1:10");
	c->ratio_get = g;
	c->ratio_set = s;
	return OPT_TAKEN;
}

/* --key-pattern uniform|zipf|sequential */
static int parse_pattern(const char *arg, struct bench_cfg *c)
{
	if (!strcmp(arg, "uniform"))
		c->pattern = PAT_UNIFORM;
	else if (!strcmp(arg, "zipf"))
		c->pattern = PAT_ZIPF;
	else if (!strcmp(arg, "sequential"))
		c->pattern = PAT_SEQ;
	else
		return bench_bad("key-pattern", arg, "expected uniform, zipf or sequential");
	return OPT_TAKEN;
}

/* --data-size N or A-B */
static int parse_data_size(const char *arg, struct bench_cfg *c)
{
	unsigned long a, b2;
	char tail;
	int n = sscanf(arg, "%lu-%lu%c", &a, &b2, &tail);

	if (n == 1 && strchr(arg, '-') == NULL)
		b2 = a;
	else if (n != 2)
		return bench_bad("data-size", arg, "expected N or A-B");
	if (a > b2 || b2 > 64UL * 1024 * 1024)
		return bench_bad("data-size", arg, "need A <= B <= 67108864");
	c->dmin = a;
	c->dmax = b2;
	return OPT_TAKEN;
}

/* The load: threads, connections, pipeline, how long, how fast, which keys,
 * which values, which command. */
static int parse_load_opt(int ch, struct bench_cfg *c)
{
	long long v;

	switch (ch) {
	case 't':
		if (opt_ll("threads", optarg, 1, 256, &v))
			return -1;
		c->threads = (int)v;
		break;
	case 'c':
		if (opt_ll("clients", optarg, 1, 10000, &v))
			return -1;
		c->clients = (int)v;
		break;
	case 'P':
		if (opt_ll("pipeline", optarg, 1, 100000, &v))
			return -1;
		c->pipeline = (int)v;
		break;
	case 'r':
		if (opt_ll("requests", optarg, 1, LLONG_MAX / 2, &v))
			return -1;
		c->requests = v;
		break;
	case 'd':
		return opt_d("duration", optarg, 0.001, 1e7, &c->duration) ? -1 : OPT_TAKEN;
	case 'w':
		return opt_d("warmup", optarg, 0, 1e6, &c->warmup) ? -1 : OPT_TAKEN;
	case 'R':
		return opt_d("rate", optarg, 0.001, 1e9, &c->rate) ? -1 : OPT_TAKEN;
	case O_RATIO:
		return parse_ratio(optarg, c);
	case 'k':
		if (opt_ll("keys", optarg, 1, 1LL << 40, &v))
			return -1;
		c->keys = v;
		break;
	case O_PATTERN:
		return parse_pattern(optarg, c);
	case O_ZIPF:
		return opt_d("zipf-s", optarg, 0.01, 10, &c->zipf_s) ? -1 : OPT_TAKEN;
	case O_DSIZE:
		return parse_data_size(optarg, c);
	case O_PREFIX:
		c->prefix = optarg;
		break;
	case O_COMMAND:
		c->command = optarg;
		break;
	case O_TIMEOUT:
		return opt_d("timeout", optarg, 0.01, 3600, &c->timeout) ? -1 : OPT_TAKEN;
	default:
		return OPT_NOT_MINE;
	}
	return OPT_TAKEN;
}

/* The reports (--json, --hdr, --svg, --svg-compare A B, --label), -q, --help,
 * and getopt's complaints. */
static int parse_output_opt(int ch, int argc, char **argv, struct bench_cfg *c,
			    const char **cmp_a, const char **cmp_b)
{
	switch (ch) {
	case O_JSON:
		c->json = optarg;
		break;
	case O_HDR:
		c->hdr = optarg;
		break;
	case O_SVG:
		c->svg = optarg;
		break;
	case O_CMP:
		*cmp_a = optarg;
		if (optind >= argc || argv[optind][0] == '-') {
			fprintf(stderr, "rcukv-cli bench: --svg-compare needs two JSON files\n");
			return -1;
		}
		*cmp_b = argv[optind++];
		break;
	case O_LABEL:
		c->label = optarg;
		break;
	case 'q':
		c->quiet = 1;
		break;
	case O_HELP:
		bench_usage(stdout);
		return OPT_EXIT;
	case ':':
		fprintf(stderr, "rcukv-cli bench: option '%s' needs a value\n\n", argv[optind - 1]);
		bench_usage(stderr);
		return -1;
	default:
		fprintf(stderr, "rcukv-cli bench: unknown option '%s'\n\n", argv[optind - 1]);
		bench_usage(stderr);
		return -1;
	}
	return OPT_TAKEN;
}

/* After the options: the checks between them, the defaults that depend on
 * them, and the --command split into arguments.  Return: 0, or -1. */
static int bench_finish_cfg(struct bench_cfg *c)
{
	if (c->requests && c->duration > 0) {
		fprintf(stderr, "rcukv-cli bench: give --requests or --duration, not both\n");
		return -1;
	}
	if (!c->requests && c->duration <= 0)
		c->requests = 100000;
	if (c->pattern == PAT_ZIPF && c->keys > 10000000) {
		fprintf(stderr,
			"rcukv-cli bench: --key-pattern zipf supports --keys up to 10000000 "
			"(its table takes 8 bytes a key); got %lld\n",
			c->keys);
		return -1;
	}
	c->prefix_len = strlen(c->prefix);
	if (c->prefix_len > CLI_BENCH_MAX_PREFIX)
		return bench_bad("key-prefix", c->prefix, "longer than 200 bytes");
	if (c->command) {
		c->targc = resp_splitargs(c->command, strlen(c->command), &c->targv, &c->tlens);
		if (c->targc <= 0)
			return bench_bad("command", c->command, "empty or unbalanced quotes");
	}
	return 0;
}

/* Return 0 to run, 1 to exit 0 (help), -1 on a bad option; *cmp_a set for --svg-compare. */
static int bench_parse(int argc, char **argv, struct bench_cfg *c, const char **cmp_a,
		       const char **cmp_b)
{
	int ch;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h:p:s:a:n:3t:c:P:r:d:w:R:k:q", bench_longopts,
				 NULL)) != -1) {
		int r = parse_conn_opt(ch, &c->conn);

		if (r == OPT_NOT_MINE)
			r = parse_load_opt(ch, c);
		if (r == OPT_NOT_MINE)
			r = parse_output_opt(ch, argc, argv, c, cmp_a, cmp_b);
		if (r < 0)
			return -1;
		if (r == OPT_EXIT)
			return 1;
	}
	if (optind < argc) {
		fprintf(stderr, "rcukv-cli bench: unexpected argument '%s'\n\n", argv[optind]);
		bench_usage(stderr);
		return -1;
	}
	return bench_finish_cfg(c);
}

/* ---- request generation ---- */

static uint64_t next_key(struct bench *b, struct bthread *t)
{
	const struct bench_cfg *c = &b->cfg;

	switch (c->pattern) {
	case PAT_SEQ:
		return atomic_fetch_add_explicit(&b->seq_key, 1, memory_order_relaxed) %
		       (uint64_t)c->keys;
	case PAT_ZIPF: {
		double u = rand01(&t->rng);
		size_t lo = 0, hi = (size_t)c->keys - 1;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (b->zipf_cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo;
	}
	default:
		return xorshift(&t->rng) % (uint64_t)c->keys;
	}
}

static void wbuf_reserve(struct bconn *k, size_t n)
{
	if (k->wlen + n <= k->wcap)
		return;
	if (k->woff > 0) {
		memmove(k->w, k->w + k->woff, k->wlen - k->woff);
		k->wlen -= k->woff;
		k->woff = 0;
		if (k->wlen + n <= k->wcap)
			return;
	}
	size_t cap = k->wcap ? k->wcap : 16384;
	while (cap < k->wlen + n)
		cap *= 2;
	char *p = realloc(k->w, cap);
	if (!p)
		cli_die("out of memory");
	k->w = p;
	k->wcap = cap;
}

/* Decimal digits of v at p; returns the end.  (snprintf costs more than the rest of a request.) */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_bulk(char *p, const char *s, size_t n)
{
	*p++ = '$';
	p = put_u64(p, n);
	*p++ = '\r';
	*p++ = '\n';
	memcpy(p, s, n);
	p += n;
	*p++ = '\r';
	*p++ = '\n';
	return p;
}

/* Append one template argument with __key__ and __data__ replaced. */
static char *put_tmpl_arg(char *p, const char *a, size_t n, const char *key, size_t klen,
			  const char *data, size_t dlen)
{
	size_t out = 0;

	for (size_t i = 0; i < n;) {
		if (n - i >= 7 && !memcmp(a + i, "__key__", 7)) {
			out += klen;
			i += 7;
		} else if (n - i >= 8 && !memcmp(a + i, "__data__", 8)) {
			out += dlen;
			i += 8;
		} else {
			out++;
			i++;
		}
	}
	*p++ = '$';
	p = put_u64(p, out);
	*p++ = '\r';
	*p++ = '\n';
	for (size_t i = 0; i < n;) {
		if (n - i >= 7 && !memcmp(a + i, "__key__", 7)) {
			memcpy(p, key, klen);
			p += klen;
			i += 7;
		} else if (n - i >= 8 && !memcmp(a + i, "__data__", 8)) {
			memcpy(p, data, dlen);
			p += dlen;
			i += 8;
		} else {
			*p++ = a[i++];
		}
	}
	*p++ = '\r';
	*p++ = '\n';
	return p;
}

/* Encode one request into k's write buffer and return its kind. */
static int encode_request(struct bench *b, struct bthread *t, struct bconn *k)
{
	const struct bench_cfg *c = &b->cfg;
	char key[CLI_BENCH_MAX_PREFIX + 24];
	size_t klen, dlen = c->dmin;
	int kind;

	memcpy(key, c->prefix, c->prefix_len);
	klen = (size_t)(put_u64(key + c->prefix_len, next_key(b, t)) - key);
	if (c->dmax > c->dmin)
		dlen = c->dmin + xorshift(&t->rng) % (c->dmax - c->dmin + 1);
	if (c->targc > 0) {
		size_t need = 32;
		for (int i = 0; i < c->targc; i++)
			need += 32 + c->tlens[i] * (1 + klen + dlen);
		wbuf_reserve(k, need);
		char *p = k->w + k->wlen;
		*p++ = '*';
		p = put_u64(p, (uint64_t)c->targc);
		*p++ = '\r';
		*p++ = '\n';
		for (int i = 0; i < c->targc; i++)
			p = put_tmpl_arg(p, c->targv[i], c->tlens[i], key, klen, b->payload, dlen);
		k->wlen = (size_t)(p - k->w);
		return K_CMD;
	}
	kind = (t->seq++ % (c->ratio_get + c->ratio_set)) < c->ratio_get ? K_GET : K_SET;
	wbuf_reserve(k, 96 + klen + dlen);
	char *p = k->w + k->wlen;
	if (kind == K_GET) {
		memcpy(p, "*2\r\n$3\r\nGET\r\n", 13);
		p = put_bulk(p + 13, key, klen);
	} else {
		memcpy(p, "*3\r\n$3\r\nSET\r\n", 13);
		p = put_bulk(p + 13, key, klen);
		p = put_bulk(p, b->payload, dlen);
	}
	k->wlen = (size_t)(p - k->w);
	return kind;
}

/* ---- connections ---- */

static void count_error(struct bthread *t, const char *name, size_t n)
{
	int i;

	if (n >= sizeof(t->err[0].name))
		n = sizeof(t->err[0].name) - 1;
	for (i = 0; i < t->nerr; i++)
		if (strlen(t->err[i].name) == n && !memcmp(t->err[i].name, name, n))
			break;
	if (i == t->nerr) {
		if (t->nerr == BENCH_MAX_ERRTYPES) {
			i = BENCH_MAX_ERRTYPES - 1; /* the last slot gathers the rest */
			snprintf(t->err[i].name, sizeof(t->err[i].name), "other");
		} else {
			memcpy(t->err[i].name, name, n);
			t->err[i].name[n] = '\0';
			t->nerr++;
		}
	}
	t->err[i].n++;
	t->errors++;
	atomic_fetch_add_explicit(&t->errors_live, 1, memory_order_relaxed);
}

/*
 * Blocking connect plus AUTH/SELECT/HELLO; every failure is fatal here
 * (refused auth must stop the run, not count errors).  Return 0 or -1 with
 * a message in err.
 */
static int bench_connect(struct bconn *k, const struct cli_conn_opts *o, char *err, size_t errn)
{
	char dbs[16];
	char *argv[3][3] = {
	    {"AUTH", (char *)(o->user ? o->user : o->password), (char *)o->password},
	    {"SELECT", dbs, NULL},
	    {"HELLO", "3", NULL},
	};
	int argc[3] = {o->user ? 3 : 2, 2, 2};
	int use[3] = {o->password != NULL, o->db != 0, o->resp3};
	const char *what[3] = {"AUTH", "SELECT", "HELLO 3"};

	snprintf(dbs, sizeof(dbs), "%d", o->db);
	if (cli_conn_open(&k->c, o) != 0) {
		snprintf(err, errn, "%s", k->c.err);
		return -1;
	}
	/* A stopped server must not hang the handshake (reconnects run in workers). */
	struct timeval tv = {o->timeout_ms / 1000, (o->timeout_ms % 1000) * 1000};
	setsockopt(k->c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (int i = 0; i < 3; i++) {
		struct cli_reply *r;
		if (!use[i])
			continue;
		if (cli_conn_send(&k->c, argc[i], argv[i], NULL) != 0 ||
		    !(r = cli_conn_read(&k->c))) {
			snprintf(err, errn, "%s: %s", what[i], k->c.err);
			cli_conn_close(&k->c);
			return -1;
		}
		if (r->type == CLI_R_ERROR) {
			snprintf(err, errn, "%s failed: %s", what[i], r->str);
			cli_reply_free(r);
			cli_conn_close(&k->c);
			return -1;
		}
		cli_reply_free(r);
	}
	fcntl(k->c.fd, F_SETFL, fcntl(k->c.fd, F_GETFL) | O_NONBLOCK);
	k->alive = 1;
	k->wlen = k->woff = 0;
	k->rlen = k->roff = 0;
	k->qhead = k->qn = 0;
	k->want_out = 0;
	resp_scan_init(&k->sc);
	return 0;
}

static void conn_lost(struct bthread *t, struct bconn *k, const char *why)
{
	/* Every request still in flight on it is an error. */
	for (unsigned i = 0; i < k->qn; i++) {
		struct pend *p = &k->q[(k->qhead + i) % (unsigned)t->b->cfg.pipeline];
		if (p->measured)
			count_error(t, why, strlen(why));
	}
	k->qn = 0;
	epoll_ctl(t->epfd, EPOLL_CTL_DEL, k->c.fd, NULL);
	cli_conn_close(&k->c);
	k->alive = 0;
}

static void try_reconnect(struct bthread *t, struct bconn *k, uint64_t now)
{
	char err[600];
	struct epoll_event ev = {.events = EPOLLIN};

	if (now - k->last_reconnect < 200000000ull)
		return;
	k->last_reconnect = now;
	if (bench_connect(k, &t->b->cfg.conn, err, sizeof(err)) != 0)
		return;
	ev.data.ptr = k;
	epoll_ctl(t->epfd, EPOLL_CTL_ADD, k->c.fd, &ev);
}

static void flush_conn(struct bthread *t, struct bconn *k)
{
	while (k->woff < k->wlen) {
		ssize_t n = cli_conn_xmit(&k->c, k->w + k->woff, k->wlen - k->woff);
		if (n > 0) {
			k->woff += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!k->want_out) {
				struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT,
							 .data.ptr = k};
				epoll_ctl(t->epfd, EPOLL_CTL_MOD, k->c.fd, &ev);
				k->want_out = 1;
			}
			return;
		}
		conn_lost(t, k, "connection");
		return;
	}
	k->wlen = k->woff = 0;
	if (k->want_out) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = k};
		epoll_ctl(t->epfd, EPOLL_CTL_MOD, k->c.fd, &ev);
		k->want_out = 0;
	}
}

/*
 * May this thread issue a request due at @when?  Closed loop asks for "now";
 * open loop asks for the request's slot, so that every slot scheduled inside
 * the run is sent even if it goes out after the end (a stall near the end
 * must still show).
 */
static int may_issue(struct bench *b, struct bthread *t, uint64_t when)
{
	if (atomic_load_explicit(&b->stop, memory_order_relaxed))
		return 0;
	if (when < b->measure_start)
		return 1; /* warmup: time-bounded only */
	if (b->end)
		return when < b->end;
	return t->quota > 0;
}

static void issue(struct bench *b, struct bthread *t, struct bconn *k, uint64_t start)
{
	unsigned pl = (unsigned)b->cfg.pipeline;
	struct pend *p = &k->q[(k->qhead + k->qn) % pl];

	p->kind = (uint8_t)encode_request(b, t, k);
	p->start = start;
	p->measured = start >= b->measure_start;
	if (p->measured && !b->end)
		t->quota--;
	k->qn++;
}

/* Fill k's pipeline as the loop discipline allows, then write. */
static void fill(struct bench *b, struct bthread *t, struct bconn *k, uint64_t now)
{
	unsigned pl = (unsigned)b->cfg.pipeline;

	if (!k->alive)
		return;
	if (b->cfg.rate > 0) {
		while (k->qn < pl && k->next_slot <= now && may_issue(b, t, k->next_slot)) {
			issue(b, t, k, k->next_slot);
			k->next_slot += k->interval;
		}
	} else {
		while (k->qn < pl && may_issue(b, t, now))
			issue(b, t, k, now);
	}
	if (k->wlen > k->woff)
		flush_conn(t, k);
}

/* Consume every complete reply in k's read buffer. */
static void on_replies(struct bench *b, struct bthread *t, struct bconn *k, uint64_t now)
{
	unsigned pl = (unsigned)b->cfg.pipeline;
	uint64_t ndone = 0;

	for (;;) {
		int st = resp_scan(&k->sc, k->r + k->roff, k->rlen - k->roff);

		if (st == RESP_SCAN_AGAIN)
			break;
		if (st == RESP_SCAN_ERROR || k->qn == 0) {
			atomic_fetch_add_explicit(&t->done_live, ndone, memory_order_relaxed);
			conn_lost(t, k, "protocol");
			return;
		}
		struct pend *p = &k->q[k->qhead];
		const char *rep = k->r + k->roff;
		char top = k->sc.top;

		if (p->measured) {
			unsigned kind = p->kind;
			uint64_t us = now > p->start ? (now - p->start + 500) / 1000 : 0;

			cli_hist_record(&t->hist[kind], us);
			t->kdone[kind]++;
			if (top == '-' || top == '!') {
				size_t n = 0, lim = k->sc.pos;
				size_t s = 1;
				if (top == '!') {
					const char *nl = memchr(rep, '\n', lim);
					s = nl ? (size_t)(nl - rep) + 1 : lim;
				}
				while (s + n < lim && rep[s + n] != ' ' && rep[s + n] != '\r')
					n++;
				count_error(t, rep + s, n);
			} else if ((top == '$' && k->sc.top_len >= 0) || top == '=') {
				t->khits[kind]++;
			} else if (top == '_' ||
				   ((top == '$' || top == '*') && k->sc.top_len < 0)) {
				t->kmiss[kind]++;
			}
			t->last_reply = now;
			ndone++;
		}
		k->qhead = (k->qhead + 1) % pl;
		k->qn--;
		k->roff += k->sc.pos;
		resp_scan_init(&k->sc);
	}
	atomic_fetch_add_explicit(&t->done_live, ndone, memory_order_relaxed);
	if (k->roff == k->rlen) {
		k->roff = k->rlen = 0;
	} else if (k->roff > k->rcap / 2) {
		/* The scanner's state is relative to roff, so moving is safe. */
		memmove(k->r, k->r + k->roff, k->rlen - k->roff);
		k->rlen -= k->roff;
		k->roff = 0;
	}
}

static void on_readable(struct bench *b, struct bthread *t, struct bconn *k)
{
	for (;;) {
		if (k->rcap - k->rlen < 4096) {
			size_t cap = k->rcap ? k->rcap * 2 : 65536;
			char *p = realloc(k->r, cap);
			if (!p)
				cli_die("out of memory");
			k->r = p;
			k->rcap = cap;
		}
		ssize_t n = cli_conn_recv(&k->c, k->r + k->rlen, k->rcap - k->rlen);
		if (n > 0) {
			k->rlen += (size_t)n;
			uint64_t now = now_ns();
			if (pthread_mutex_lock(&t->lock) != 0)
				cli_die("pthread_mutex_lock");
			on_replies(b, t, k, now);
			if (pthread_mutex_unlock(&t->lock) != 0)
				cli_die("pthread_mutex_unlock");
			if (!k->alive)
				return;
			if (k->rlen < k->rcap && !cli_conn_pending(&k->c))
				return; /* the socket had less than we could take: drained */
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		conn_lost(t, k, "connection");
		return;
	}
}

static void *worker(void *arg)
{
	struct bthread *t = arg;
	struct bench *b = t->b;
	struct epoll_event evs[64];
	uint64_t drain_deadline = 0, dead_since = 0;

	for (int i = 0; i < t->nconns; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &t->conns[i]};
		epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->conns[i].c.fd, &ev);
	}
	/* Everyone starts at t0, so that nothing leaves before the schedule begins. */
	struct timespec start = {(time_t)(b->t0 / 1000000000ull), (long)(b->t0 % 1000000000ull)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &start, NULL) == EINTR)
		;
	for (;;) {
		uint64_t now = now_ns();
		uint64_t wake = UINT64_MAX;
		int pending = 0, alive = 0, backlog = 0;

		for (int i = 0; i < t->nconns; i++) {
			struct bconn *k = &t->conns[i];
			uint64_t due = b->cfg.rate > 0 ? k->next_slot : now;
			if (!k->alive && may_issue(b, t, due))
				try_reconnect(t, k, now);
			if (!k->alive) {
				if (b->cfg.rate > 0 && may_issue(b, t, k->next_slot))
					backlog = 1;
				continue;
			}
			alive++;
			fill(b, t, k, now);
			pending += (int)k->qn;
			if (b->cfg.rate > 0 && may_issue(b, t, k->next_slot)) {
				backlog = 1; /* slots of the run still to send */
				if (k->qn < (unsigned)b->cfg.pipeline && k->next_slot < wake)
					wake = k->next_slot;
			}
		}
		int more = b->cfg.rate > 0 ? backlog : may_issue(b, t, now);
		if (!more && pending == 0)
			break;
		if (!more) {
			if (!drain_deadline)
				drain_deadline = now + (uint64_t)(b->cfg.timeout * 1e9);
			else if (now > drain_deadline) {
				for (int i = 0; i < t->nconns; i++)
					if (t->conns[i].alive && t->conns[i].qn)
						conn_lost(t, &t->conns[i], "timeout");
				break;
			}
		}
		if (alive == 0) {
			if (!more)
				break;
			/* Retry connecting every 200 ms, give up after --timeout. */
			if (!dead_since)
				dead_since = now;
			else if (now - dead_since > (uint64_t)(b->cfg.timeout * 1e9))
				break;
			wake = now + 200000000ull;
		} else {
			dead_since = 0;
		}
		/* Wake for the next slot, the end of the run, or at least every 100 ms. */
		uint64_t cap = now + 100000000ull;
		if (b->end && b->end > now && b->end < cap && more)
			cap = b->end;
		if (wake > cap)
			wake = cap;
		struct timespec ts = {0, 0};
		if (wake > now) {
			ts.tv_sec = (time_t)((wake - now) / 1000000000ull);
			ts.tv_nsec = (long)((wake - now) % 1000000000ull);
		}
		int n = epoll_pwait2(t->epfd, evs, 64, &ts, NULL);
		for (int i = 0; i < n; i++) {
			struct bconn *k = evs[i].data.ptr;
			if (!k->alive)
				continue;
			if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				on_readable(b, t, k);
			if (k->alive && (evs[i].events & EPOLLOUT))
				flush_conn(t, k);
		}
		if (alive == 0 && !more)
			break;
	}
	t->lost = 1;
	for (int i = 0; i < t->nconns; i++)
		if (t->conns[i].alive)
			t->lost = 0;
	/* Release: publishes t->lost and the final counters; pairs with the acquire
	 * load in run_bench()'s sampling loop (pthread_join orders them again). */
	atomic_store_explicit(&t->finished, 1, memory_order_release);
	return NULL;
}

/* ---- main thread ---- */

static int build_zipf(struct bench *b)
{
	long long n = b->cfg.keys;
	double sum = 0;

	b->zipf_cdf = malloc(sizeof(double) * (size_t)n);
	if (!b->zipf_cdf)
		return -1;
	for (long long i = 0; i < n; i++) {
		sum += 1.0 / pow((double)(i + 1), b->cfg.zipf_s);
		b->zipf_cdf[i] = sum;
	}
	for (long long i = 0; i < n; i++)
		b->zipf_cdf[i] /= sum;
	b->zipf_cdf[n - 1] = 1.0;
	return 0;
}

static const char *pattern_name(int p)
{
	return p == PAT_ZIPF ? "zipf" : p == PAT_SEQ ? "sequential" : "uniform";
}

static void progress_line(struct bench *b, double t_s, double ops, uint64_t errs)
{
	struct cli_hist *h = malloc(sizeof(*h));

	if (!h)
		return;
	cli_hist_init(h);
	for (int i = 0; i < b->cfg.threads; i++) {
		struct bthread *t = &b->t[i];
		if (pthread_mutex_lock(&t->lock) != 0)
			cli_die("pthread_mutex_lock");
		for (int k = 0; k < b->nkinds; k++)
			cli_hist_merge(h, &t->hist[k]);
		if (pthread_mutex_unlock(&t->lock) != 0)
			cli_die("pthread_mutex_unlock");
	}
	fprintf(stderr, "\r[%6.1fs] %10.0f ops/s  p50 %8.3f ms  p99 %8.3f ms  errors %llu   ", t_s,
		ops, (double)cli_hist_percentile(h, 50) / 1000.0,
		(double)cli_hist_percentile(h, 99) / 1000.0, (unsigned long long)errs);
	fflush(stderr);
	free(h);
}

/* Release everything run_bench() allocated; threads must not be running. */
static void bench_free(struct bench *b, struct bench_result *res)
{
	if (b && b->t) {
		for (int i = 0; i < b->cfg.threads; i++) {
			struct bthread *t = &b->t[i];
			for (int j = 0; t->conns && j < t->nconns; j++) {
				if (t->conns[j].alive)
					cli_conn_close(&t->conns[j].c);
				free(t->conns[j].q);
				free(t->conns[j].w);
				free(t->conns[j].r);
			}
			free(t->conns);
			if (t->epfd > 0)
				close(t->epfd);
			if (t->lock_ok)
				pthread_mutex_destroy(&t->lock);
		}
		free(b->t);
	}
	if (b) {
		free(b->zipf_cdf);
		free(b->payload);
		free(b);
	}
	if (res) {
		free(res->series);
		free(res);
	}
}

/* The payload and the kinds of request counted apart (GET and SET, or the
 * --command's name in capitals). */
static void bench_prepare(struct bench *b, const struct bench_cfg *c)
{
	if (c->pattern == PAT_ZIPF && build_zipf(b) != 0)
		cli_die("out of memory for the zipf table");
	b->payload = malloc(c->dmax + 1);
	if (!b->payload)
		cli_die("out of memory");
	for (size_t i = 0; i < c->dmax; i++)
		b->payload[i] = (char)('a' + i % 26);
	if (c->targc > 0) {
		b->nkinds = 1;
		snprintf(b->kind_name[0], sizeof(b->kind_name[0]), "%s", c->targv[0]);
		for (char *p = b->kind_name[0]; *p; p++)
			if (*p >= 'a' && *p <= 'z')
				*p = (char)(*p - 'a' + 'A');
	} else {
		b->nkinds = 2;
		strcpy(b->kind_name[K_GET], "GET");
		strcpy(b->kind_name[K_SET], "SET");
	}
}

/* Thread @i's state before it starts: its generator, lock, histograms and
 * request quota. */
static void bench_thread_init(struct bench *b, int i)
{
	const struct bench_cfg *c = &b->cfg;
	struct bthread *t = &b->t[i];

	t->b = b;
	t->idx = i;
	t->rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1) ^ (uint64_t)now_ns();
	if (!t->rng)
		t->rng = 1;
	if (pthread_mutex_init(&t->lock, NULL) != 0)
		cli_die("pthread_mutex_init");
	t->lock_ok = 1;
	for (int k = 0; k < BENCH_MAX_KINDS; k++)
		cli_hist_init(&t->hist[k]);
	t->quota = c->requests ? c->requests / c->threads + (i < c->requests % c->threads) : -1;
}

/* Connect everything first: an unreachable server or refused AUTH stops here.
 * Return: 0, or -1 with the reason in @err. */
static int bench_connect_all(struct bench *b, char *err, size_t errlen)
{
	const struct bench_cfg *c = &b->cfg;

	b->t = calloc((size_t)c->threads, sizeof(*b->t));
	if (!b->t)
		cli_die("out of memory");
	for (int i = 0; i < c->threads; i++) {
		struct bthread *t = &b->t[i];

		bench_thread_init(b, i);
		t->nconns = c->clients;
		t->conns = calloc((size_t)c->clients, sizeof(*t->conns));
		t->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (!t->conns || t->epfd < 0)
			cli_die("out of memory or epoll_create1");
		for (int j = 0; j < c->clients; j++) {
			struct bconn *k = &t->conns[j];
			k->q = calloc((size_t)c->pipeline, sizeof(*k->q));
			if (!k->q)
				cli_die("out of memory");
			if (bench_connect(k, &c->conn, err, errlen) != 0)
				return -1;
		}
	}
	return 0;
}

/* The run's clock: start, end of warmup, end; with --rate, each
 * connection's interval and first slot. */
static void bench_schedule(struct bench *b)
{
	const struct bench_cfg *c = &b->cfg;
	int nconn = c->threads * c->clients;

	b->t0 = now_ns() + 1000000; /* 1 ms for the threads to start */
	b->measure_start = b->t0 + (uint64_t)(c->warmup * 1e9);
	b->end = c->requests ? 0 : b->measure_start + (uint64_t)(c->duration * 1e9);
	if (c->rate <= 0)
		return;
	for (int i = 0; i < c->threads; i++)
		for (int j = 0; j < c->clients; j++) {
			struct bconn *k = &b->t[i].conns[j];

			k->interval = (uint64_t)(1e9 * nconn / c->rate);
			if (!k->interval)
				k->interval = 1;
			/* Stagger the connections across one interval. */
			k->next_slot =
			    b->t0 + k->interval * (uint64_t)(i * c->clients + j) / (uint64_t)nconn;
		}
}

/* 1 when every worker has finished. */
static int bench_all_finished(const struct bench *b)
{
	int fin = 1;

	for (int i = 0; i < b->cfg.threads; i++)
		/* Acquire: pairs with the release store at the end of worker(). */
		if (!atomic_load_explicit(&b->t[i].finished, memory_order_acquire))
			fin = 0;
	return fin;
}

/* Append one throughput sample to @res's series, growing it when full (a
 * failed growth drops the sample). */
static void series_add(struct bench_result *res, size_t *cap, double v)
{
	if (res->nseries == *cap) {
		double *p = realloc(res->series, sizeof(double) * *cap * 2);
		if (p) {
			res->series = p;
			*cap *= 2;
		}
	}
	if (res->series && res->nseries < *cap)
		res->series[res->nseries++] = v;
}

/* Sample throughput every 100 ms while the workers run (and print the
 * progress line each second when @progress), until every worker finished. */
static void bench_sample(struct bench *b, struct bench_result *res, int progress)
{
	const struct bench_cfg *c = &b->cfg;
	size_t series_cap = 1024;
	uint64_t last_done = 0, tick = b->measure_start, last_progress = b->t0;

	res->series_interval = 0.1;
	res->series = malloc(sizeof(double) * series_cap);
	for (;;) {
		int fin = bench_all_finished(b);
		uint64_t now = now_ns();
		if ((now >= tick + 100000000ull || fin) && now > tick) {
			uint64_t done = 0, errs = 0;
			double dt = (double)(now - tick) / 1e9;
			for (int i = 0; i < c->threads; i++) {
				done +=
				    atomic_load_explicit(&b->t[i].done_live, memory_order_relaxed);
				errs += atomic_load_explicit(&b->t[i].errors_live,
							     memory_order_relaxed);
			}
			if (!fin || dt >= 0.05)
				series_add(res, &series_cap, (double)(done - last_done) / dt);
			last_done = done;
			tick = now;
			if (progress && now >= last_progress + 1000000000ull) {
				progress_line(b, (double)(now - b->t0) / 1e9,
					      res->nseries ? res->series[res->nseries - 1] : 0,
					      errs);
				last_progress = now;
			}
		}
		if (fin)
			break;
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
	if (progress)
		fprintf(stderr, "\n");
}

/* Join the workers.  @last: the latest reply of any (at least the start of
 * the measurement).  Return: 1 when every connection was lost. */
static int bench_join(struct bench *b, uint64_t *last)
{
	int lost = 1;

	*last = b->measure_start;
	for (int i = 0; i < b->cfg.threads; i++) {
		if (pthread_join(b->t[i].tid, NULL) != 0)
			cli_die("pthread_join");
		if (!b->t[i].lost)
			lost = 0;
		if (b->t[i].last_reply > *last)
			*last = b->t[i].last_reply;
	}
	return lost;
}

/* What the run was asked to do, for the reports. */
static void result_describe(struct bench_result *res, const struct bench *b)
{
	const struct bench_cfg *c = &b->cfg;

	if (c->conn.socket)
		snprintf(res->target, sizeof(res->target), "%s", c->conn.socket);
	else
		snprintf(res->target, sizeof(res->target), "%s:%d", c->conn.host, c->conn.port);
	res->threads = c->threads;
	res->clients = c->clients;
	res->pipeline = c->pipeline;
	res->rate = c->rate;
	res->requests_asked = c->requests;
	res->duration_asked = c->duration;
	res->warmup = c->warmup;
	res->keys = c->keys;
	res->pattern = pattern_name(c->pattern);
	res->zipf_s = c->zipf_s;
	res->dmin = c->dmin;
	res->dmax = c->dmax;
	res->prefix = c->prefix;
	res->command = c->command;
	res->label = c->label;
	res->ratio_get = c->ratio_get;
	res->ratio_set = c->ratio_set;
	res->nkinds = b->nkinds;
	cli_hist_init(&res->all);
	for (int k = 0; k < b->nkinds; k++) {
		snprintf(res->kind_name[k], sizeof(res->kind_name[k]), "%s", b->kind_name[k]);
		cli_hist_init(&res->kind_hist[k]);
	}
}

/* Add thread @t's error counts to @res's, by error name; past
 * BENCH_MAX_ERRTYPES names the last slot takes the rest. */
static void result_merge_errors(struct bench_result *res, const struct bthread *t)
{
	for (int e = 0; e < t->nerr; e++) {
		int j;
		for (j = 0; j < res->nerr; j++)
			if (!strcmp(res->err[j].name, t->err[e].name))
				break;
		if (j == res->nerr) {
			if (res->nerr == BENCH_MAX_ERRTYPES)
				j = BENCH_MAX_ERRTYPES - 1;
			else
				res->err[res->nerr++] = (struct bench_errtype){.n = 0};
			if (!res->err[j].name[0])
				snprintf(res->err[j].name, sizeof(res->err[j].name), "%s",
					 t->err[e].name);
		}
		res->err[j].n += t->err[e].n;
	}
}

/* Sum the threads' histograms and counts into @res; @last: the latest reply,
 * which ends the measured time (at least the asked duration). */
static void result_merge(struct bench_result *res, const struct bench *b, uint64_t last)
{
	for (int i = 0; i < b->cfg.threads; i++) {
		const struct bthread *t = &b->t[i];
		for (int k = 0; k < b->nkinds; k++) {
			cli_hist_merge(&res->kind_hist[k], &t->hist[k]);
			cli_hist_merge(&res->all, &t->hist[k]);
			res->kind_done[k] += t->kdone[k];
			res->kind_hits[k] += t->khits[k];
			res->kind_misses[k] += t->kmiss[k];
			res->done += t->kdone[k];
			res->hits += t->khits[k];
			res->misses += t->kmiss[k];
		}
		result_merge_errors(res, t);
		res->errors += t->errors;
	}
	res->elapsed = last > b->measure_start ? (double)(last - b->measure_start) / 1e9 : 0;
	if (b->end && res->elapsed < (double)(b->end - b->measure_start) / 1e9)
		res->elapsed = (double)(b->end - b->measure_start) / 1e9;
}

/* The text report on stdout, then the files asked for.  Return: 0, or 1
 * when a file could not be written or every connection was lost. */
static int bench_report(const struct bench_result *res, const struct bench_cfg *c, int lost)
{
	int rc = 0;

	bench_report_text(res, stdout);
	fflush(stdout);
	if (c->json && bench_report_json(res, c->json) != 0)
		rc = 1;
	if (c->hdr && bench_report_hdr(res, c->hdr) != 0)
		rc = 1;
	if (c->svg && bench_report_svg(res, c->svg) != 0)
		rc = 1;
	if (lost) {
		fprintf(stderr,
			"rcukv-cli bench: every connection to %s was lost; the run stopped early\n",
			res->target);
		rc = 1;
	}
	return rc;
}

/* One run: prepare, connect, schedule, run the workers while sampling, then
 * gather and report.  Return: the exit status. */
static int run_bench(struct bench_cfg *c)
{
	struct bench *b = calloc(1, sizeof(*b));
	struct bench_result *res = calloc(1, sizeof(*res));
	uint64_t last;
	int rc, lost;
	char err[600];

	if (!b || !res)
		cli_die("out of memory");
	b->cfg = *c;
	bench_prepare(b, c);
	if (bench_connect_all(b, err, sizeof(err)) != 0) {
		fprintf(stderr, "rcukv-cli bench: %s\n", err);
		bench_free(b, res);
		return 1;
	}
	bench_schedule(b);
	for (int i = 0; i < c->threads; i++)
		if (pthread_create(&b->t[i].tid, NULL, worker, &b->t[i]) != 0)
			cli_die("pthread_create");
	bench_sample(b, res, !c->quiet && isatty(STDERR_FILENO));
	lost = bench_join(b, &last);
	result_describe(res, b);
	result_merge(res, b, last);
	rc = bench_report(res, c, lost);
	bench_free(b, res);
	return rc;
}

int cli_bench_main(int argc, char **argv, const struct cli_conn_opts *base)
{
	struct bench_cfg c = {
	    .conn = *base,
	    .threads = 1,
	    .clients = 4,
	    .pipeline = 1,
	    .ratio_get = 1,
	    .ratio_set = 1,
	    .keys = 100000,
	    .pattern = PAT_UNIFORM,
	    .zipf_s = 0.99,
	    .dmin = 32,
	    .dmax = 32,
	    .prefix = "key:",
	    .timeout = 5,
	};
	const char *cmp_a = NULL, *cmp_b = NULL;
	int r;

	signal(SIGPIPE, SIG_IGN);
	r = bench_parse(argc, argv, &c, &cmp_a, &cmp_b);
	if (r != 0)
		return r > 0 ? 0 : 1;
	if (cmp_a)
		return cli_svg_compare(cmp_a, cmp_b, c.svg);
	if (cli_tls_setup(&c.conn) != 0)
		return 1;
	r = run_bench(&c);
	cli_tls_teardown(&c.conn);
	if (c.targc > 0)
		free(c.targv);
	return r;
}
