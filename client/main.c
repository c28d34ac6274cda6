/*
 * client/main.c: rcukv-cli entry point: options, command mode, line mode
 * (commands read from a pipe), interactive mode (libedit), and the "bench"
 * subcommand (client/bench.c).
 *
 * Output follows redis-cli 7.0: the raw form when stdout is not a terminal,
 * the terminal form when it is (or with --no-raw).  One deliberate
 * difference: an error reply makes the exit status 1 (redis-cli needs -e for
 * that; -e is accepted here and changes nothing).
 *
 * TLS (--tls and redis-cli's other TLS options, or rediss://) works in every
 * mode: the SSL_CTX is made once here (or by bench) and the connections run
 * over it (conn.c, tls.c).
 *
 * Single-threaded.  Tested by tests/client/test_cli.sh and test_tls.sh.
 */
#include "resp/resp.h"
#include "client/cli.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <editline/readline.h>

#define CLI_VERSION "0.1.0"

struct cli_opts {
	struct cli_conn_opts c;
	long long repeat; /* -r; -1 forever */
	double interval;  /* -i seconds */
	int stdin_last;	  /* -x */
	int output;	  /* -1 auto, else enum cli_output */
	int no_auth_warning;
};

static void usage(FILE *f)
{
	fprintf(f,
		"rcukv-cli " CLI_VERSION ": a Redis client and load generator\n"
		"\n"
		"Usage: rcukv-cli [OPTIONS] [cmd [arg [arg ...]]]\n"
		"       rcukv-cli [OPTIONS] bench [BENCH OPTIONS]   (rcukv-cli bench --help)\n"
		"\n"
		"  -h <hostname>      Server hostname (default: 127.0.0.1).\n"
		"  -p <port>          Server port (default: 6379).\n"
		"  -s <socket>        Server socket (overrides hostname and port).\n"
		"  -u <uri>           Server URI: redis://[[user]:password@]host[:port][/db]\n"
		"                     (rediss:// for TLS).\n"
		"  -a <password>      Password to use when connecting to the server.\n"
		"  --pass <password>  Alias of -a.\n"
		"  --user <username>  Username to send with AUTH (needs -a).\n"
		"  --no-auth-warning  Don't warn about a password given on the command line.\n"
		"  -n <db>            Database number.\n"
		"  -2, --resp2        Start the session in RESP2 protocol mode (default).\n"
		"  -3, --resp3        Start the session in RESP3 protocol mode (HELLO 3).\n"
		"  -r <repeat>        Execute the command N times (-1: until interrupted).\n"
		"  -i <interval>      With -r, wait <interval> seconds between commands;\n"
		"                     fractions such as 0.1 are allowed.\n"
		"  -x                 Read the last argument from standard input.\n"
		"  -t <timeout>       Connect timeout in seconds (default: 5); bounds the TLS\n"
		"                     handshake too.\n"
		"  --tls              Establish a secure TLS connection.\n"
		"  --sni <host>       Server name indication for TLS; also the name the\n"
		"                     server's certificate must carry (default: -h).\n"
		"  --cacert <file>    CA Certificate file to verify with.\n"
		"  --cacertdir <dir>  Directory where trusted CA certificates are stored.\n"
		"                     Without --cacert and --cacertdir: the system's CAs.\n"
		"  --insecure         Allow insecure TLS connection by skipping cert validation.\n"
		"  --cert <file>      Client certificate to authenticate with.\n"
		"  --key <file>       Private key file to authenticate with.\n"
		"  --raw              Print raw replies even on a terminal.\n"
		"  --no-raw           Print formatted replies even when stdout is not a terminal.\n"
		"  -e                 Accepted for redis-cli compatibility: rcukv-cli always\n"
		"                     exits with status 1 when a command gets an error reply.\n"
		"  --help             Print this help and exit.\n"
		"  -v, --version      Print the version and exit.\n"
		"\n"
		"Without a command: reads commands line by line from standard input when it is\n"
		"not a terminal; otherwise starts an interactive session (line editing, history\n"
		"in ~/.rcukvcli_history or $RCUKVCLI_HISTFILE, redis-cli quoting, automatic\n"
		"reconnection).  'connect HOST [PORT]' switches server; 'quit' or 'exit' leaves.\n"
		"\n"
		"Output: like redis-cli, the formatted form on a terminal and the raw form\n"
		"otherwise.  Exit status: 0 on success, 1 if a connection failed, an option was\n"
		"invalid or a command returned an error reply.\n"
		"\n"
		"Examples:\n"
		"  rcukv-cli -p 6379 set key value\n"
		"  echo -n hello | rcukv-cli -x set greeting\n"
		"  rcukv-cli -r 5 -i 1 info stats\n"
		"  rcukv-cli bench --threads 2 --clients 4 --pipeline 16 --duration 10\n");
}

static enum cli_output out_mode(const struct cli_opts *o)
{
	if (o->output >= 0)
		return (enum cli_output)o->output;
	return isatty(STDOUT_FILENO) ? CLI_OUT_TTY : CLI_OUT_RAW;
}

static int bad_value(const char *opt, const char *val)
{
	fprintf(stderr, "rcukv-cli: invalid value '%s' for %s (see rcukv-cli --help)\n",
		val ? val : "", opt);
	return -1;
}

static int parse_int(const char *opt, const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	long long v;

	if (!s)
		return bad_value(opt, s);
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return bad_value(opt, s);
	*out = v;
	return 0;
}

/* %XX decoding of a URI part into a new string; NULL on a bad escape. */
static char *uri_decode(const char *p, size_t n)
{
	char *out = malloc(n + 1), *q = out;

	if (!out)
		cli_die("out of memory");
	for (size_t i = 0; i < n; i++) {
		if (p[i] != '%') {
			*q++ = p[i];
			continue;
		}
		if (i + 2 >= n || resp_hexval(p[i + 1]) < 0 || resp_hexval(p[i + 2]) < 0) {
			free(out);
			return NULL;
		}
		*q++ = (char)(resp_hexval(p[i + 1]) * 16 + resp_hexval(p[i + 2]));
		i += 2;
	}
	*q = '\0';
	return out;
}

/*
 * -u redis://[[user]:password@]host[:port][/db], as redis-cli reads it.  The
 * strings it sets live until exit.  Return: 0, or -1 with a message.
 */
static char *uri_parts[3]; /* user, password, host of the last -u, freed at exit */

static void free_uri_parts(void)
{
	for (int i = 0; i < 3; i++) {
		free(uri_parts[i]);
		uri_parts[i] = NULL;
	}
}

static int parse_uri(const char *uri, struct cli_conn_opts *c)
{
	static int registered;

	if (!registered && atexit(free_uri_parts) == 0)
		registered = 1;
	/* A later -u replaces an earlier one. */
	if (c->user == uri_parts[0])
		c->user = NULL;
	if (c->password == uri_parts[1])
		c->password = NULL;
	if (c->host == uri_parts[2])
		c->host = "127.0.0.1";
	free_uri_parts();
	const char *p, *at, *end, *colon, *slash;
	long long v;

	if (strncmp(uri, "redis://", 8) == 0) {
		p = uri + 8;
	} else if (strncmp(uri, "rediss://", 9) == 0) {
		p = uri + 9;
		c->tls.enabled = 1;
	} else {
		fprintf(stderr,
			"rcukv-cli: invalid URI '%s': it must start with redis:// or rediss://\n",
			uri);
		return -1;
	}
	end = p + strlen(p);
	slash = strchr(p, '/');
	at = memchr(p, '@', (size_t)((slash ? slash : end) - p));
	if (at) {
		colon = memchr(p, ':', (size_t)(at - p));
		if (colon && colon > p &&
		    !(c->user = uri_parts[0] = uri_decode(p, (size_t)(colon - p))))
			goto bad;
		if (!(c->password = uri_parts[1] = uri_decode(
			  colon ? colon + 1 : p, (size_t)(at - (colon ? colon + 1 : p)))))
			goto bad;
		p = at + 1;
	}
	colon = memchr(p, ':', (size_t)((slash ? slash : end) - p));
	const char *hend = colon ? colon : slash ? slash : end;
	if (hend > p) {
		char *h = strndup(p, (size_t)(hend - p));
		if (!h)
			cli_die("out of memory");
		c->host = uri_parts[2] = h;
	}
	if (colon) {
		char port[16];
		size_t n = (size_t)((slash ? slash : end) - colon - 1);
		if (n == 0 || n >= sizeof(port))
			goto bad;
		memcpy(port, colon + 1, n);
		port[n] = '\0';
		if (parse_int("-u port", port, 1, 65535, &v) != 0)
			return -1;
		c->port = (int)v;
	}
	if (slash && slash[1]) {
		if (parse_int("-u database", slash + 1, 0, 1 << 30, &v) != 0)
			return -1;
		c->db = (int)v;
	}
	return 0;
bad:
	fprintf(stderr, "rcukv-cli: invalid URI '%s' (see rcukv-cli --help)\n", uri);
	return -1;
}

/*
 * Parse the options in front of the command.  Return: index of the first
 * command word, argc if none, -1 on a bad option (message printed), -2 when
 * the program should exit 0 (--help, --version).
 */
static int parse_opts(int argc, char **argv, struct cli_opts *o)
{
	int i;
	long long v;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		int has_next = next != NULL;

#define NEED_ARG()                                                                                 \
	do {                                                                                       \
		if (!has_next) {                                                                   \
			fprintf(stderr,                                                            \
				"rcukv-cli: option %s needs a value (see rcukv-cli --help)\n", a); \
			return -1;                                                                 \
		}                                                                                  \
		i++;                                                                               \
	} while (0)

		if (!strcmp(a, "-h")) {
			NEED_ARG();
			o->c.host = next;
		} else if (!strcmp(a, "-p")) {
			NEED_ARG();
			if (parse_int(a, next, 1, 65535, &v))
				return -1;
			o->c.port = (int)v;
		} else if (!strcmp(a, "-u")) {
			NEED_ARG();
			if (parse_uri(next, &o->c) != 0)
				return -1;
		} else if (!strcmp(a, "-s")) {
			NEED_ARG();
			o->c.socket = next;
		} else if (!strcmp(a, "-a") || !strcmp(a, "--pass")) {
			NEED_ARG();
			o->c.password = next;
		} else if (!strcmp(a, "--user")) {
			NEED_ARG();
			o->c.user = next;
		} else if (!strcmp(a, "--no-auth-warning")) {
			o->no_auth_warning = 1;
		} else if (!strcmp(a, "-n")) {
			NEED_ARG();
			if (parse_int(a, next, 0, 1 << 30, &v))
				return -1;
			o->c.db = (int)v;
		} else if (!strcmp(a, "-2") || !strcmp(a, "--resp2")) {
			o->c.resp3 = 0;
		} else if (!strcmp(a, "-3") || !strcmp(a, "--resp3")) {
			o->c.resp3 = 1;
		} else if (!strcmp(a, "-r")) {
			NEED_ARG();
			if (parse_int(a, next, -1, LLONG_MAX, &v))
				return -1;
			o->repeat = v;
		} else if (!strcmp(a, "-i")) {
			char *end;
			NEED_ARG();
			o->interval = strtod(next, &end);
			if (end == next || *end || o->interval < 0 || o->interval > 86400)
				return bad_value(a, next);
		} else if (!strcmp(a, "-t")) {
			char *end;
			double t;
			NEED_ARG();
			t = strtod(next, &end);
			if (end == next || *end || t <= 0 || t > 3600)
				return bad_value(a, next);
			o->c.timeout_ms = (int)(t * 1000);
		} else if (!strcmp(a, "--tls")) {
			o->c.tls.enabled = 1;
		} else if (!strcmp(a, "--insecure")) {
			o->c.tls.insecure = 1;
		} else if (!strcmp(a, "--sni")) {
			NEED_ARG();
			o->c.tls.sni = next;
		} else if (!strcmp(a, "--cacert")) {
			NEED_ARG();
			o->c.tls.cacert = next;
		} else if (!strcmp(a, "--cacertdir")) {
			NEED_ARG();
			o->c.tls.cacertdir = next;
		} else if (!strcmp(a, "--cert")) {
			NEED_ARG();
			o->c.tls.cert = next;
		} else if (!strcmp(a, "--key")) {
			NEED_ARG();
			o->c.tls.key = next;
		} else if (!strcmp(a, "-x")) {
			o->stdin_last = 1;
		} else if (!strcmp(a, "--raw")) {
			o->output = CLI_OUT_RAW;
		} else if (!strcmp(a, "--no-raw")) {
			o->output = CLI_OUT_TTY;
		} else if (!strcmp(a, "-e")) {
			/* always on */
		} else if (!strcmp(a, "--help") || !strcmp(a, "-?")) {
			usage(stdout);
			return -2;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--version")) {
			printf("rcukv-cli " CLI_VERSION "\n");
			return -2;
		} else if (a[0] == '-' && a[1] != '\0' && strcmp(a, "bench") != 0) {
			fprintf(stderr, "Unrecognized option or bad number of args for: '%s'\n\n",
				a);
			usage(stderr);
			return -1;
		} else {
			break;
		}
#undef NEED_ARG
	}
	return i;
}

static int read_all_stdin(struct cli_buf *b)
{
	char tmp[65536];
	ssize_t n;

	cli_buf_add(b, "", 0);
	while ((n = read(STDIN_FILENO, tmp, sizeof(tmp))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		cli_buf_add(b, tmp, (size_t)n);
	}
	return 0;
}

static void sleep_seconds(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * Send one command and print its reply.  Push messages that arrive first are
 * printed on a terminal and dropped otherwise, as redis-cli does.
 * Return: 0 ok, 1 error reply, -1 connection failure (c->err says why),
 * -2 the server closed the connection after SHUTDOWN (success).
 */
static int run_command(struct cli_conn *c, const struct cli_opts *o, int argc, char **argv,
		       const size_t *lens)
{
	enum cli_output mode = out_mode(o);
	struct cli_reply *r;
	struct cli_buf out = {0};
	int rc;

	if (cli_conn_send(c, argc, argv, lens) != 0)
		return -1;
	for (;;) {
		r = cli_conn_read(c);
		if (!r) {
			free(out.p);
			/* SHUTDOWN succeeds by closing the connection (redis-cli is silent too). */
			if (c->eof && !strcasecmp(argv[0], "shutdown"))
				return -2;
			return -1;
		}
		if (r->type != CLI_R_PUSH)
			break;
		if (isatty(STDOUT_FILENO) && o->output != CLI_OUT_RAW) {
			cli_format_reply(&out, r, mode);
			fwrite(out.p, 1, out.len, stdout);
			out.len = 0;
		}
		cli_reply_free(r);
	}
	cli_format_reply(&out, r, mode);
	fwrite(out.p, 1, out.len, stdout);
	fflush(stdout);
	free(out.p);
	rc = r->type == CLI_R_ERROR ? 1 : 0;
	cli_reply_free(r);
	return rc;
}

/* Commands after which the server keeps sending: (p/s)subscribe, monitor. */
static int is_streaming(const char *cmd)
{
	return !strcasecmp(cmd, "subscribe") || !strcasecmp(cmd, "psubscribe") ||
	       !strcasecmp(cmd, "ssubscribe") || !strcasecmp(cmd, "monitor");
}

/*
 * Print every message until the connection ends or the user interrupts, as
 * redis-cli does after SUBSCRIBE or MONITOR.  Return: the exit status.
 */
static int stream_mode(struct cli_conn *c, const struct cli_opts *o, int argc, char **argv,
		       const size_t *lens)
{
	enum cli_output mode = out_mode(o);
	struct cli_buf out = {0};
	struct cli_reply *r;
	int rc = 0;

	if (mode == CLI_OUT_TTY && strcasecmp(argv[0], "monitor") != 0) {
		printf("Reading messages... (press Ctrl-C to quit)\n");
		fflush(stdout);
	}
	if (cli_conn_send(c, argc, argv, lens) != 0) {
		fprintf(stderr, "%s\n", c->err);
		return 1;
	}
	while ((r = cli_conn_read(c)) != NULL) {
		out.len = 0;
		cli_format_reply(&out, r, mode);
		fwrite(out.p, 1, out.len, stdout);
		fflush(stdout);
		if (r->type == CLI_R_ERROR)
			rc = 1;
		cli_reply_free(r);
	}
	fprintf(stderr, "%s\n", c->err);
	free(out.p);
	return rc ? rc : 1;
}

static int connect_and_greet(struct cli_conn *c, const struct cli_opts *o)
{
	if (cli_conn_open(c, &o->c) != 0)
		return -1;
	if (cli_conn_handshake(c, &o->c) != 0) {
		cli_conn_close(c);
		return -1;
	}
	return 0;
}

static int command_mode(struct cli_opts *o, int argc, char **argv)
{
	struct cli_conn c;
	struct cli_buf in = {0};
	char **av = argv;
	size_t *lens;
	int rc = 0;

	if (connect_and_greet(&c, o) != 0) {
		fprintf(stderr, "%s\n", c.err);
		return 1;
	}
	lens = calloc((size_t)argc + 1, sizeof(*lens));
	av = calloc((size_t)argc + 1, sizeof(*av));
	if (!lens || !av) {
		fprintf(stderr, "rcukv-cli: out of memory\n");
		return 1;
	}
	for (int i = 0; i < argc; i++) {
		av[i] = argv[i];
		lens[i] = strlen(argv[i]);
	}
	if (o->stdin_last) {
		if (read_all_stdin(&in) != 0) {
			fprintf(stderr, "rcukv-cli: reading standard input: %s\n", strerror(errno));
			return 1;
		}
		av[argc] = in.p;
		lens[argc] = in.len;
		argc++;
	}
	if (is_streaming(av[0])) {
		rc = stream_mode(&c, o, argc, av, lens);
		goto out;
	}
	for (long long n = 0; o->repeat < 0 || n < o->repeat; n++) {
		int r = run_command(&c, o, argc, av, lens);

		if (r == -2)
			break;
		if (r < 0) {
			fprintf(stderr, "%s\n", c.err);
			rc = 1;
			break;
		}
		if (r > 0)
			rc = 1;
		if (o->repeat < 0 || n + 1 < o->repeat)
			sleep_seconds(o->interval);
	}
out:
	cli_conn_close(&c);
	free(in.p);
	free(av);
	free(lens);
	return rc;
}

/* ---- line and interactive modes ---- */

/* "host:port> ", "host:port[db]> ", "redis /path.sock> ", or "not connected> ". */
static void make_prompt(char *p, size_t n, const struct cli_opts *o, int connected)
{
	char db[24] = "";

	if (!connected) {
		snprintf(p, n, "not connected> ");
		return;
	}
	if (o->c.db)
		snprintf(db, sizeof(db), "[%d]", o->c.db);
	if (o->c.socket)
		snprintf(p, n, "redis %s%s> ", o->c.socket, db);
	else
		snprintf(p, n, "%s:%d%s> ", o->c.host, o->c.port, db);
}

/*
 * "connect HOST [PORT]" in line and interactive modes, as in redis-cli: drop
 * the current connection and open one to the new server.
 * Return: 0 when connected, 1 otherwise (message printed).
 */
static int switch_server(struct cli_conn *c, int *connected, struct cli_opts *o, const char *host,
			 const char *port)
{
	static char *host_copy; /* o->c.host points here after the first switch */
	long long p = o->c.port;

	if (port && parse_int("connect", port, 1, 65535, &p) != 0)
		return 1;
	if (*connected)
		cli_conn_close(c);
	*connected = 0;
	free(host_copy);
	host_copy = strdup(host);
	if (!host_copy)
		cli_die("out of memory");
	o->c.host = host_copy;
	o->c.port = (int)p;
	o->c.socket = NULL;
	o->c.db = 0;
	if (connect_and_greet(c, o) != 0) {
		fprintf(stderr, "%s\n", c->err);
		return 1;
	}
	*connected = 1;
	return 0;
}

/*
 * Run one line.  A dead connection is reopened, and a command that failed on
 * a connection that had died under it is retried once on the new one.
 * Return: 0 ok, 1 error reply or failure, 2 quit.
 */
static int run_line(struct cli_conn *c, int *connected, struct cli_opts *o, const char *line)
{
	char **av;
	size_t *lens;
	int argc = resp_splitargs(line, strlen(line), &av, &lens);
	int rc = 0;

	if (argc < 0) {
		printf("Invalid argument(s)\n");
		fflush(stdout);
		return 1;
	}
	if (argc == 0) {
		free(av);
		return 0;
	}
	if (!strcasecmp(av[0], "quit") || !strcasecmp(av[0], "exit")) {
		free(av);
		return 2;
	}
	if (!strcasecmp(av[0], "connect") && (argc == 2 || argc == 3)) {
		rc = switch_server(c, connected, o, av[1], argc == 3 ? av[2] : NULL);
		free(av);
		return rc;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		int was = *connected;

		if (!*connected) {
			if (connect_and_greet(c, o) != 0) {
				fprintf(stderr, "%s\n", c->err);
				rc = 1;
				break;
			}
			*connected = 1;
		}
		int r = run_command(c, o, argc, av, lens);
		if (r == -2) {
			cli_conn_close(c);
			*connected = 0;
			break;
		}
		if (r >= 0) {
			rc = r;
			if (r == 0 && argc == 2 && !strcasecmp(av[0], "select"))
				o->c.db = atoi(av[1]);
			break;
		}
		cli_conn_close(c);
		*connected = 0;
		if (!was || attempt == 1) {
			fprintf(stderr, "%s\n", c->err);
			rc = 1;
			break;
		}
	}
	free(av);
	return rc;
}

static int line_mode(struct cli_opts *o)
{
	struct cli_conn c;
	int connected = 0, rc = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (connect_and_greet(&c, o) != 0) {
		fprintf(stderr, "%s\n", c.err);
		return 1;
	}
	connected = 1;
	while ((n = getline(&line, &cap, stdin)) >= 0) {
		int r = run_line(&c, &connected, o, line);
		if (r == 2)
			break;
		if (r)
			rc = 1;
	}
	free(line);
	if (connected)
		cli_conn_close(&c);
	return rc;
}

static int interactive_mode(struct cli_opts *o)
{
	struct cli_conn c;
	int connected = 0;
	char prompt[512], hist[4096];
	const char *h = getenv("RCUKVCLI_HISTFILE");
	const char *home = getenv("HOME");
	char *line;

	hist[0] = '\0';
	if (h)
		snprintf(hist, sizeof(hist), "%s", h);
	else if (home)
		snprintf(hist, sizeof(hist), "%s/.rcukvcli_history", home);
	if (hist[0] && strcmp(hist, "/dev/null") != 0) {
		using_history();
		read_history(hist);
	}
	if (connect_and_greet(&c, o) == 0)
		connected = 1;
	else
		fprintf(stderr, "%s\n", c.err);
	for (;;) {
		make_prompt(prompt, sizeof(prompt), o, connected);
		line = readline(prompt);
		if (!line)
			break;
		if (line[0]) {
			add_history(line);
			if (hist[0] && strcmp(hist, "/dev/null") != 0)
				write_history(hist);
		}
		int r = run_line(&c, &connected, o, line);
		free(line);
		if (r == 2)
			break;
	}
	if (connected)
		cli_conn_close(&c);
	return 0;
}

int main(int argc, char **argv)
{
	struct cli_opts o = {
	    .c = {.host = "127.0.0.1", .port = 6379, .timeout_ms = 5000},
	    .repeat = 1,
	    .output = -1,
	};
	int first;

	/* A server that went away must give EPIPE on write, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	first = parse_opts(argc, argv, &o);

	if (first == -2)
		return 0;
	if (first < 0)
		return 1;
	if (o.c.password && !o.no_auth_warning)
		fprintf(stderr, "Warning: Using a password with '-a' or '-u' option on the "
				"command line interface may not be safe.\n");
	if (first < argc && !strcmp(argv[first], "bench"))
		return cli_bench_main(argc - first, argv + first, &o.c);
	if (first == argc && o.stdin_last) {
		fprintf(stderr, "rcukv-cli: -x needs a command\n");
		return 1;
	}
	if (cli_tls_setup(&o.c) != 0)
		return 1;
	int rc;
	if (first < argc)
		rc = command_mode(&o, argc - first, argv + first);
	else if (isatty(STDIN_FILENO))
		rc = interactive_mode(&o);
	else
		rc = line_mode(&o);
	cli_tls_teardown(&o.c);
	return rc;
}
