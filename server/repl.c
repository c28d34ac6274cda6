/*
 * repl.c - rcukv as a replica of a Redis master.  docs/replication.md.
 *
 * REPLICAOF host port starts one replication thread.  It does what Redis's
 * replica does before the stream, with blocking I/O and a timeout
 * (repl-timeout) on each step:
 *   connect; PING; AUTH [masteruser] masterauth; REPLCONF listening-port;
 *   REPLCONF capa psync2; PSYNC <replid> <offset+1> (PSYNC ? -1 the first
 *   time), then
 *   +FULLRESYNC replid offset: read the RDB ($<len> and exactly len bytes:
 *     we announce no "capa eof", so the master sends a disk-based dump with
 *     its length) into a file in `dir`, then persist_load_replica()
 *     replaces the data set with it (-LOADING meanwhile);
 *   +CONTINUE [replid]: a partial resync; our data and offset stand.
 * Up to there the old data set is served (replica-serve-stale-data yes).
 * Then the socket is handed to a worker (server_hand_fd(), SRV_FD_MASTER)
 * and becomes a connection like any other, but flagged CONN_MASTER: its
 * commands run through the normal dispatch with every refusal skipped and
 * every reply dropped (cmd.c), so the stream is applied by the same code as
 * a client's commands, on a worker, while every other worker serves reads.
 * Only REPLCONF GETACK is answered (repl_dispatch()), and the owner worker
 * sends REPLCONF ACK <offset> once a second (repl_cron()).
 *
 * The offset: a command's bytes count once it has run.  The stream's bytes
 * after the PSYNC reply are the connection's qread_total; the ones not yet
 * parsed are qlen - qpos; so after each command the offset is
 * base + qread_total - (qlen - qpos), as Redis's replica computes reploff.
 *
 * When the link closes (the master went away, CLIENT KILL, a protocol
 * error), repl_link_closing() wakes the thread, which reconnects after a
 * second and asks for PSYNC <replid> <offset+1>.
 *
 * Locking: r_lock guards R (the master's address, the state, the link
 * pointer); the link's fields are its worker's.  The thread is registered
 * with RCU and offline except while it loads.
 */
/* the workers' flavor: this thread loads into their tables */
#define RCU_FLAVOR_QSBR
#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/log.h"
#include "server/persist.h"
#include "server/repl.h"
#include "server/replm.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* REPL_*: what ROLE and INFO say of the link */
enum { REPL_NONE, REPL_CONNECT, REPL_CONNECTING, REPL_HANDSHAKE, REPL_TRANSFER, REPL_CONNECTED };

static pthread_mutex_t r_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t r_cond = PTHREAD_COND_INITIALIZER;
static struct {
	char host[256]; /* empty: not a replica */
	int port;
	unsigned gen;	      /* bumped by each REPLICAOF */
	int state;	      /* REPL_* */
	int thread_running;   /* r_thread exists (joined by repl_stop()/REPLICAOF) */
	int stop;	      /* the thread must end */
	int hs_fd;	      /* the socket of a handshake in progress, or -1 */
	char replid[41];      /* the master's replication id, "" before a first sync */
	struct conn *link;    /* the master link, while a worker serves it */
	long long down_since; /* ms the link went down, 0 while up or never up */
	long long sync_total, sync_read; /* the RDB transfer in progress */
	long long full_syncs, partial_syncs;
} R = {.hs_fd = -1};
static pthread_t r_thread;
/* The offset of the last command applied, -1 before any sync; written by
 * the link's worker (or the thread at a sync), read by INFO and ROLE. */
static _Atomic long long r_offset = -1;
/* The offset the link's first byte follows (set before the socket goes to
 * its worker) and the time of the link's last input: atomics, so the
 * stream's hot path takes no lock (relaxed: each is one figure alone). */
static _Atomic long long r_base, r_last_io_ms;
static _Atomic int r_replica;	  /* R.host[0] != 0, for the dispatch's read-only check */
static _Atomic int r_link_up;	  /* R.state == REPL_CONNECTED, for -MASTERDOWN */
static _Atomic long long r_read_only = 1; /* replica-read-only */
static _Atomic long long r_stale = 1;	  /* replica-serve-stale-data */
static _Atomic long long r_timeout = 60;  /* repl-timeout, seconds */
static _Atomic long long r_priority = 100;
static char *r_masterauth, *r_masteruser; /* r_lock */
static char r_cfg_host[256];		  /* `replicaof` of the configuration */
static int r_cfg_port;

/* --------------------------------------------------------------- options */

static const char *opt_replicaof_set(const struct cfg_opt *o, int argc, char **argv,
				     const size_t *lens, int startup, int apply)
{
	char *end;
	long p;

	(void)o;
	(void)lens;
	if (!startup)
		return "can't set immutable config";
	if (argc != 2)
		return "wrong number of arguments";
	if (!strcasecmp(argv[0], "no") && !strcasecmp(argv[1], "one")) {
		if (apply)
			r_cfg_host[0] = '\0';
		return NULL;
	}
	errno = 0;
	p = strtol(argv[1], &end, 10);
	if (errno || *end || end == argv[1] || p < 0 || p > 65535)
		return "Invalid master port";
	if (strlen(argv[0]) >= sizeof(r_cfg_host))
		return "Invalid master host";
	if (apply) {
		snprintf(r_cfg_host, sizeof(r_cfg_host), "%s", argv[0]);
		r_cfg_port = (int)p;
	}
	return NULL;
}

static void opt_replicaof_get(const struct cfg_opt *o, char *buf, size_t len)
{
	(void)o;
	pthread_mutex_lock(&r_lock);
	if (R.host[0])
		snprintf(buf, len, "%s %d", R.host, R.port);
	else if (r_cfg_host[0])
		snprintf(buf, len, "%s %d", r_cfg_host, r_cfg_port);
	else
		buf[0] = '\0';
	pthread_mutex_unlock(&r_lock);
}

/* masterauth, masteruser: strings CONFIG SET may change */
static const char *opt_secret_set(const struct cfg_opt *o, int argc, char **argv,
				  const size_t *lens, int startup, int apply)
{
	char **field = o->field;

	(void)startup;
	if (argc != 1)
		return "wrong number of arguments";
	if (apply) {
		pthread_mutex_lock(&r_lock);
		free(*field);
		*field = lens[0] ? xstrdup(argv[0]) : NULL;
		pthread_mutex_unlock(&r_lock);
	}
	return NULL;
}

static void opt_secret_get(const struct cfg_opt *o, char *buf, size_t len)
{
	char **field = o->field;

	pthread_mutex_lock(&r_lock);
	snprintf(buf, len, "%s", *field ? *field : "");
	pthread_mutex_unlock(&r_lock);
}

static void repl_fini(void)
{
	free(r_masterauth);
	free(r_masteruser);
	r_masterauth = r_masteruser = NULL;
}

static const struct cfg_opt repl_rows[] = {
    {.name = "replicaof", .kind = CFG_SPECIAL, .mut = CFG_STARTUP, .set = opt_replicaof_set,
     .get = opt_replicaof_get},
    {.name = "slaveof", .kind = CFG_SPECIAL, .mut = CFG_STARTUP, .set = opt_replicaof_set,
     .get = opt_replicaof_get},
    {.name = "masterauth", .kind = CFG_SPECIAL, .mut = CFG_MUTABLE, .field = &r_masterauth,
     .set = opt_secret_set, .get = opt_secret_get},
    {.name = "masteruser", .kind = CFG_SPECIAL, .mut = CFG_MUTABLE, .field = &r_masteruser,
     .set = opt_secret_set, .get = opt_secret_get},
    {.name = "replica-read-only", .kind = CFG_BOOL, .mut = CFG_MUTABLE, .field = &r_read_only,
     .def = "yes"},
    {.name = "replica-serve-stale-data", .kind = CFG_BOOL, .mut = CFG_MUTABLE,
     .field = &r_stale, .def = "yes"},
    {.name = "repl-timeout", .kind = CFG_INT, .mut = CFG_MUTABLE, .field = &r_timeout,
     .min = 1, .max = INT32_MAX, .def = "60"},
    {.name = "replica-priority", .kind = CFG_INT, .mut = CFG_MUTABLE, .field = &r_priority,
     .min = 0, .max = INT32_MAX, .def = "100"},
    /* Redis 7.0's old names, listed by CONFIG GET * as well */
    {.name = "slave-read-only", .kind = CFG_BOOL, .mut = CFG_MUTABLE, .field = &r_read_only,
     .def = "yes"},
    {.name = "slave-serve-stale-data", .kind = CFG_BOOL, .mut = CFG_MUTABLE, .field = &r_stale,
     .def = "yes"},
    {.name = "slave-priority", .kind = CFG_INT, .mut = CFG_MUTABLE, .field = &r_priority,
     .min = 0, .max = INT32_MAX, .def = "100"},
};
static struct cfg_group repl_group = {
    "repl", repl_rows, (int)(sizeof(repl_rows) / sizeof(repl_rows[0])), NULL, repl_fini, NULL};
CFG_REGISTER(repl_group)

int repl_refuses_writes(void)
{
	return atomic_load_explicit(&r_replica, memory_order_relaxed) &&
	       atomic_load_explicit(&r_read_only, memory_order_relaxed);
}

int repl_masterdown(void)
{
	return atomic_load_explicit(&r_replica, memory_order_relaxed) &&
	       !atomic_load_explicit(&r_stale, memory_order_relaxed) &&
	       !atomic_load_explicit(&r_link_up, memory_order_relaxed);
}

int repl_takes_writes(void)
{
	return atomic_load_explicit(&r_replica, memory_order_relaxed) &&
	       !atomic_load_explicit(&r_read_only, memory_order_relaxed);
}

int repl_is_replica(void)
{
	return atomic_load_explicit(&r_replica, memory_order_relaxed);
}

/* ------------------------------------------------------------- blocking I/O */

static int stopping(void)
{
	int r;

	pthread_mutex_lock(&r_lock);
	r = R.stop;
	pthread_mutex_unlock(&r_lock);
	return r;
}

/* Wait until @fd is readable (POLLIN) or writable, repl-timeout at most, or
 * the thread is told to stop.  0, or -1 (timed out, stopped, error). */
static int wait_fd(int fd, short ev)
{
	long long deadline = util_mstime() + atomic_load(&r_timeout) * 1000;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = ev};
		int r = poll(&p, 1, 200);

		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		if (stopping() || util_mstime() > deadline)
			return -1;
	}
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w;

		if (wait_fd(fd, POLLOUT) < 0)
			return -1;
		w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Read exactly @n bytes.  0 or -1. */
static int recv_all(int fd, char *p, size_t n)
{
	while (n) {
		ssize_t r;

		if (wait_fd(fd, POLLIN) < 0)
			return -1;
		r = recv(fd, p, n, 0);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* One CRLF-terminated line without it (byte by byte: nothing after it may
 * be read, the stream follows).  0 or -1. */
static int recv_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	for (;;) {
		char ch;

		if (recv_all(fd, &ch, 1) < 0)
			return -1;
		if (ch == '\n')
			break;
		if (n + 1 < len)
			buf[n++] = ch;
	}
	if (n && buf[n - 1] == '\r')
		n--;
	buf[n] = '\0';
	return 0;
}

/* Send a command (words as a RESP array) and read its one-line reply. */
static int command(int fd, char *reply, size_t rlen, int argc, const char **argv)
{
	char buf[2048];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "*%d\r\n", argc);

	for (int i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]);

		if (n + l + 32 > sizeof(buf))
			return -1;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "$%zu\r\n%s\r\n", l, argv[i]);
	}
	if (send_all(fd, buf, n) < 0)
		return -1;
	return recv_line(fd, reply, rlen);
}

static int dial(const char *host, int port)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *a;
	char ps[16];
	int fd = -1;

	snprintf(ps, sizeof(ps), "%d", port);
	if (getaddrinfo(host, ps, &hints, &res) != 0)
		return -1;
	for (a = res; a; a = a->ai_next) {
		int one = 1, err = 0;
		socklen_t el = sizeof(err);

		fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    a->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 ||
		    (errno == EINPROGRESS && wait_fd(fd, POLLOUT) == 0 &&
		     getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0))
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* ------------------------------------------------------------ the thread */

static void set_state(int st)
{
	pthread_mutex_lock(&r_lock);
	R.state = st;
	atomic_store(&r_link_up, st == REPL_CONNECTED);
	pthread_mutex_unlock(&r_lock);
}

/* The RDB of a full resync, @len bytes, into @path.  0 or -1. */
static int transfer(int fd, long long len, const char *path)
{
	char buf[64 * 1024];
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	long long left = len;

	if (out < 0) {
		srv_log(LL_WARNING, "Opening the temp file needed for MASTER <-> REPLICA "
				    "synchronization: %s", strerror(errno));
		return -1;
	}
	pthread_mutex_lock(&r_lock);
	R.sync_total = len;
	R.sync_read = 0;
	pthread_mutex_unlock(&r_lock);
	while (left > 0) {
		size_t want = left < (long long)sizeof(buf) ? (size_t)left : sizeof(buf);
		ssize_t r;

		if (wait_fd(fd, POLLIN) < 0)
			goto fail;
		r = recv(fd, buf, want, 0);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0)
			goto fail;
		if (write(out, buf, (size_t)r) != r)
			goto fail;
		left -= r;
		pthread_mutex_lock(&r_lock);
		R.sync_read += r;
		atomic_store_explicit(&r_last_io_ms, util_mstime(), memory_order_relaxed);
		pthread_mutex_unlock(&r_lock);
	}
	if (fsync(out) < 0 || close(out) < 0) {
		out = -1;
		goto fail;
	}
	return 0;
fail:
	srv_log(LL_WARNING, "I/O error trying to sync with MASTER: %s",
		left > 0 ? "connection lost" : strerror(errno));
	if (out >= 0)
		close(out);
	unlink(path);
	return -1;
}

/*
 * One attempt: handshake, PSYNC, maybe a full resync, then the socket goes
 * to a worker.  Return: 0 (the link is up, a worker has it), -1 (failed:
 * try again later).
 */
static int sync_once(const char *host, int port, unsigned gen)
{
	char line[1024], ps[16], offs[32], path[PATH_MAX + 32];
	const char *av[4];
	char *auth = NULL, *user = NULL;
	long long off;
	int fd, full = 0;

	set_state(REPL_CONNECTING);
	srv_log(LL_NOTICE, "Connecting to MASTER %s:%d", host, port);
	fd = dial(host, port);
	if (fd < 0) {
		srv_log(LL_WARNING, "Error condition on socket for SYNC: Connection refused");
		return -1;
	}
	pthread_mutex_lock(&r_lock);
	if (R.gen != gen || R.stop) {
		pthread_mutex_unlock(&r_lock);
		close(fd);
		return -1;
	}
	R.hs_fd = fd;
	R.state = REPL_HANDSHAKE;
	atomic_store(&r_link_up, 0);
	if (r_masterauth)
		auth = xstrdup(r_masterauth);
	if (r_masteruser)
		user = xstrdup(r_masteruser);
	pthread_mutex_unlock(&r_lock);
	srv_log(LL_NOTICE, "MASTER <-> REPLICA sync started");

	av[0] = "PING";
	if (command(fd, line, sizeof(line), 1, av) < 0)
		goto fail;
	if (line[0] == '-' && strncmp(line, "-NOAUTH", 7) && strncmp(line, "-NOPERM", 7) &&
	    strncmp(line, "-ERR operation not permitted", 28)) {
		srv_log(LL_WARNING, "Error reply to PING from master: '%s'", line);
		goto fail;
	}
	if (auth) {
		int n = 0;

		av[n++] = "AUTH";
		if (user)
			av[n++] = user;
		av[n++] = auth;
		if (command(fd, line, sizeof(line), n, av) < 0)
			goto fail;
		if (line[0] == '-') {
			srv_log(LL_WARNING, "Unable to AUTH to MASTER: %s", line);
			goto fail;
		}
	}
	snprintf(ps, sizeof(ps), "%d", g_cfg.port);
	av[0] = "REPLCONF";
	av[1] = "listening-port";
	av[2] = ps;
	if (command(fd, line, sizeof(line), 3, av) < 0)
		goto fail;
	if (line[0] == '-')
		srv_log(LL_NOTICE, "(Non critical) Master does not understand REPLCONF "
				   "listening-port: %s", line);
	av[1] = "capa";
	av[2] = "psync2";
	if (command(fd, line, sizeof(line), 3, av) < 0)
		goto fail;

	/* PSYNC <replid> <offset+1>, or ? -1 */
	pthread_mutex_lock(&r_lock);
	off = atomic_load(&r_offset);
	snprintf(line, sizeof(line), "%s", R.replid[0] && off >= 0 ? R.replid : "?");
	pthread_mutex_unlock(&r_lock);
	snprintf(offs, sizeof(offs), "%lld", line[0] == '?' ? -1LL : off + 1);
	{
		char id[41];

		memcpy(id, line, sizeof(id) - 1);
		id[sizeof(id) - 1] = '\0';
		av[0] = "PSYNC";
		av[1] = id;
		av[2] = offs;
		if (id[0] == '?')
			srv_log(LL_NOTICE, "Partial resynchronization not possible (no cached master)");
		else
			srv_log(LL_NOTICE, "Trying a partial resynchronization (request %s:%s).", id,
				offs);
		if (command(fd, line, sizeof(line), 3, av) < 0)
			goto fail;
	}
	if (!strncmp(line, "+FULLRESYNC ", 12)) {
		char id[64];
		long long moff;

		if (sscanf(line + 12, "%40s %lld", id, &moff) != 2 || strlen(id) != 40) {
			srv_log(LL_WARNING, "Master replied with wrong +FULLRESYNC syntax.");
			goto fail;
		}
		srv_log(LL_NOTICE, "Full resync from master: %s:%lld", id, moff);
		full = 1;
		pthread_mutex_lock(&r_lock);
		snprintf(R.replid, sizeof(R.replid), "%s", id);
		R.state = REPL_TRANSFER;
		atomic_store(&r_link_up, 0);
		pthread_mutex_unlock(&r_lock);
		/* newlines while the master saves, then $<len> */
		do {
			if (recv_line(fd, line, sizeof(line)) < 0)
				goto fail;
		} while (line[0] == '\0');
		if (line[0] == '-') {
			srv_log(LL_WARNING, "MASTER aborted replication with an error: %s", line + 1);
			goto fail;
		}
		if (line[0] != '$' || !strncmp(line, "$EOF:", 5)) {
			srv_log(LL_WARNING, "Bad protocol from MASTER, the first byte is not '$' "
					    "(we received '%s'), are you sure the host and port are "
					    "right?", line);
			goto fail;
		}
		long long len = strtoll(line + 1, NULL, 10);

		srv_log(LL_NOTICE, "MASTER <-> REPLICA sync: receiving %lld bytes from master "
				   "to disk", len);
		persist_temp_path(path, sizeof(path) - 8);
		strcat(path, ".repl");
		if (len < 0 || transfer(fd, len, path) < 0)
			goto fail;
		srv_log(LL_NOTICE, "MASTER <-> REPLICA sync: Flushing old data");
		srv_log(LL_NOTICE, "MASTER <-> REPLICA sync: Loading DB in memory");
		rcu_thread_online();
		int lr = persist_load_replica(path);

		rcu_quiescent_state();
		rcu_thread_offline();
		unlink(path);
		if (lr < 0) {
			srv_log(LL_WARNING, "Failed trying to load the MASTER synchronization DB "
					    "from disk");
			goto fail;
		}
		atomic_store(&r_offset, moff);
		pthread_mutex_lock(&r_lock);
		atomic_store_explicit(&r_base, moff, memory_order_relaxed);
		R.full_syncs++;
		pthread_mutex_unlock(&r_lock);
		srv_log(LL_NOTICE, "MASTER <-> REPLICA sync: Finished with success");
	} else if (!strncmp(line, "+CONTINUE", 9)) {
		char id[64];

		pthread_mutex_lock(&r_lock);
		if (sscanf(line + 9, " %40s", id) == 1 && strlen(id) == 40)
			snprintf(R.replid, sizeof(R.replid), "%s", id);
		atomic_store_explicit(&r_base, atomic_load(&r_offset), memory_order_relaxed);
		R.partial_syncs++;
		pthread_mutex_unlock(&r_lock);
		srv_log(LL_NOTICE, "Successful partial resynchronization with master.");
	} else {
		srv_log(LL_WARNING, "Unexpected reply to PSYNC from master: %s", line);
		goto fail;
	}
	(void)full;
	free(auth);
	free(user);
	pthread_mutex_lock(&r_lock);
	R.hs_fd = -1;
	if (R.gen != gen || R.stop) {
		pthread_mutex_unlock(&r_lock);
		close(fd);
		return -1;
	}
	R.state = REPL_CONNECTED;
	atomic_store(&r_link_up, 1);
	R.down_since = 0;
	atomic_store_explicit(&r_last_io_ms, util_mstime(), memory_order_relaxed);
	pthread_mutex_unlock(&r_lock);
	/* the link lives on the first worker from now on */
	server_hand_fd(&g_srv.workers[0], fd, SRV_FD_MASTER);
	return 0;
fail:
	free(auth);
	free(user);
	pthread_mutex_lock(&r_lock);
	R.hs_fd = -1;
	pthread_mutex_unlock(&r_lock);
	close(fd);
	return -1;
}

static void *repl_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "rcukv-repl");
	rcu_register_thread();
	rcu_thread_offline();
	pthread_mutex_lock(&r_lock);
	while (!R.stop) {
		char host[256];
		int port, r;
		unsigned gen;

		if (!R.host[0] || R.state == REPL_CONNECTED) {
			/* wait for a REPLICAOF or for the link to go down */
			pthread_cond_wait(&r_cond, &r_lock);
			continue;
		}
		snprintf(host, sizeof(host), "%s", R.host);
		port = R.port;
		gen = R.gen;
		pthread_mutex_unlock(&r_lock);
		/* no sync while a start-up load runs */
		while (persist_loading() && !stopping())
			usleep(100 * 1000);
		r = sync_once(host, port, gen);
		pthread_mutex_lock(&r_lock);
		if (r < 0 && R.gen == gen && !R.stop) {
			struct timespec ts;

			R.state = REPL_CONNECT;
			atomic_store(&r_link_up, 0);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&r_cond, &r_lock, &ts);
		}
	}
	pthread_mutex_unlock(&r_lock);
	rcu_thread_online();
	rcu_unregister_thread();
	return NULL;
}

/* r_lock held.  Ask the link's worker to close it (as CLIENT KILL does). */
static void kill_link(void)
{
	struct conn *x = R.link;

	if (!x)
		return;
	atomic_store_explicit(&x->kill, 1, memory_order_relaxed);
	atomic_store_explicit(&x->w->kill_pending, 1, memory_order_release);
	server_wake_worker(x->w);
}

static void thread_start(void)
{
	sigset_t all, old;
	int r;

	if (R.thread_running)
		return;
#if defined(SRV_FUZZ)
	/* the fuzz harness connects nowhere: REPLICAOF only changes the state */
	return;
#endif
	R.stop = 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&r_thread, NULL, repl_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		errno = r;
		srv_die("pthread_create (replication) failed");
	}
	R.thread_running = 1;
}

int repl_set_master(const char *host, int port)
{
	pthread_mutex_lock(&r_lock);
	if (host && R.host[0] && !strcasecmp(R.host, host) && R.port == port) {
		pthread_mutex_unlock(&r_lock);
		srv_log(LL_NOTICE, "REPLICAOF would result into synchronization with the master we "
				   "are already connected with. No operation performed.");
		return 1;
	}
	R.gen++;
	kill_link();
	if (R.hs_fd >= 0)
		shutdown(R.hs_fd, SHUT_RDWR);
	if (!host) {
		if (R.host[0]) {
			srv_log(LL_NOTICE, "MASTER MODE enabled (user request)");
			/* Our history starts anew (Redis's shiftReplicationId()):
			 * writes taken from now on are not the master's, so
			 * following it again is a full resync. */
			R.host[0] = '\0';
			R.replid[0] = '\0';
		}
		R.state = REPL_NONE;
		atomic_store(&r_link_up, 0);
		atomic_store(&r_replica, 0);
	} else {
		snprintf(R.host, sizeof(R.host), "%s", host);
		R.port = port;
		R.state = REPL_CONNECT;
		atomic_store(&r_link_up, 0);
		R.down_since = util_mstime();
		atomic_store(&r_replica, 1);
		srv_log(LL_NOTICE, "REPLICAOF %s:%d enabled", host, port);
		thread_start();
	}
	pthread_cond_broadcast(&r_cond);
	pthread_mutex_unlock(&r_lock);
	/* our replicas cannot follow a replica (no chained replication): a
	 * full resync from the new master would not reach them.  Outside
	 * r_lock: inside EXEC this thread holds m_lock, taken before r_lock. */
	if (host)
		replm_kill_replicas();
	return 0;
}

void repl_start(void)
{
	replm_set_timeout(&r_timeout); /* a master's replicas time out too */
	if (r_cfg_host[0])
		repl_set_master(r_cfg_host, r_cfg_port);
}

void repl_stop(void)
{
	pthread_mutex_lock(&r_lock);
	if (!R.thread_running) {
		pthread_mutex_unlock(&r_lock);
		return;
	}
	R.stop = 1;
	if (R.hs_fd >= 0)
		shutdown(R.hs_fd, SHUT_RDWR);
	pthread_cond_broadcast(&r_cond);
	pthread_mutex_unlock(&r_lock);
	rcu_thread_offline();
	pthread_join(r_thread, NULL);
	rcu_thread_online();
	R.thread_running = 0;
}

/* ---------------------------------------------------------------- the link */

void repl_link_opened(struct conn *c)
{
	c->flags |= CONN_MASTER | CONN_REPLY_OFF;
	atomic_fetch_or_explicit(&c->list_flags, CONN_MASTER, memory_order_relaxed);
	c->authenticated = 1;
	pthread_mutex_lock(&r_lock);
	if (R.link || R.state != REPL_CONNECTED) {
		/* a REPLICAOF came between the handshake and here */
		atomic_store_explicit(&c->kill, 1, memory_order_relaxed);
		atomic_store_explicit(&c->w->kill_pending, 1, memory_order_release);
		server_wake_worker(c->w);
	} else {
		R.link = c;
	}
	pthread_mutex_unlock(&r_lock);
}

void repl_link_closing(struct conn *c)
{
	pthread_mutex_lock(&r_lock);
	if (R.link == c) {
		R.link = NULL;
		if (R.host[0]) {
			srv_log(LL_NOTICE, "Connection with master lost.");
			R.state = REPL_CONNECT;
			atomic_store(&r_link_up, 0);
			R.down_since = util_mstime();
		}
		pthread_cond_broadcast(&r_cond);
	}
	pthread_mutex_unlock(&r_lock);
}

static void send_ack(struct conn *c, long long off)
{
	char buf[96];
	char num[24];
	int nl = snprintf(num, sizeof(num), "%lld", off);
	int n = snprintf(buf, sizeof(buf), "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$%d\r\n%s\r\n", nl,
			 num);
	/* written directly: the dispatch's CONN_REPLY_OFF drops only what a
	 * command replies */
	reply_raw(c, buf, (size_t)n);
}

void repl_dispatch(struct conn *c, void (*run)(struct conn *c))
{
	long long base = atomic_load_explicit(&r_base, memory_order_relaxed);

	/* the read that brought this command stamped it: no clock call here */
	atomic_store_explicit(&r_last_io_ms, atomic_load_explicit(&c->last_ms, memory_order_relaxed),
			      memory_order_relaxed);
	if (c->argc == 3 && util_strcaseeq(ARGV(c, 0), ARGL(c, 0), "replconf") &&
	    util_strcaseeq(ARGV(c, 1), ARGL(c, 1), "getack")) {
		send_ack(c, atomic_load_explicit(&r_offset, memory_order_relaxed));
	} else {
		/* The master's commands see its keys as it saw them: a key whose
		 * TTL passed on our clock is still there until its DEL arrives
		 * (Redis 7.0's expireIfNeeded() for server.master).  A per-thread
		 * flag, so other connections' readers pay nothing for it. */
		int was = ht_expiry_hold(1);

		run(c);
		ht_expiry_hold(was);
	}
	atomic_store_explicit(&r_offset,
			      base + (long long)(c->qread_total - (c->qlen - c->qpos)),
			      memory_order_relaxed);
}

void repl_cron(struct worker *w)
{
	struct conn *c;

	pthread_mutex_lock(&r_lock);
	c = R.link && R.link->w == w ? R.link : NULL;
	pthread_mutex_unlock(&r_lock);
	/* only this worker frees its link, so @c stays valid here */
	if (c) {
		send_ack(c, atomic_load_explicit(&r_offset, memory_order_relaxed));
		conn_output_added(c);
	}
}

/* ------------------------------------------------------------ ROLE, INFO */

static const char *state_name(int st)
{
	switch (st) {
	case REPL_CONNECT:
		return "connect";
	case REPL_CONNECTING:
		return "connecting";
	case REPL_HANDSHAKE:
		return "handshake";
	case REPL_TRANSFER:
		return "sync";
	case REPL_CONNECTED:
		return "connected";
	default:
		return "none";
	}
}

void repl_role_reply(struct conn *c)
{
	char host[256];
	int port, st;

	pthread_mutex_lock(&r_lock);
	snprintf(host, sizeof(host), "%s", R.host);
	port = R.port;
	st = R.state;
	pthread_mutex_unlock(&r_lock);
	if (!host[0]) {
		replm_role_reply(c);
		return;
	}
	reply_array(c, 5);
	reply_bulk_str(c, "slave");
	reply_bulk_str(c, host);
	reply_int(c, port);
	reply_bulk_str(c, state_name(st));
	reply_int(c, st == REPL_CONNECTED ? atomic_load(&r_offset) : -1);
}

void repl_replconf(struct conn *c, int argc)
{
	if (argc % 2 == 0) {
		reply_error(c, ERR_SYNTAX);
		return;
	}
	for (int i = 1; i < argc; i += 2) {
		if (util_strcaseeq(ARGV(c, i), ARGL(c, i), "listening-port")) {
			long long v;

			if (!resp_str2ll(ARGV(c, i + 1), ARGL(c, i + 1), &v)) {
				reply_error(c, ERR_NOT_INT);
				return;
			}
			c->repl_lport = (int)v; /* replm.c: INFO's slave0:port */
		} else if (util_strcaseeq(ARGV(c, i), ARGL(c, i), "capa")) {
			if (util_strcaseeq(ARGV(c, i + 1), ARGL(c, i + 1), "eof"))
				c->repl_capa |= 1; /* replm.c may send a diskless dump */
		} else if (util_strcaseeq(ARGV(c, i), ARGL(c, i), "ip-address") ||
			   util_strcaseeq(ARGV(c, i), ARGL(c, i), "rdb-only")) {
			/* accepted, as by a Redis master (rcukv feeds no replica) */
		} else if (util_strcaseeq(ARGV(c, i), ARGL(c, i), "ack") ||
			   util_strcaseeq(ARGV(c, i), ARGL(c, i), "getack")) {
#if defined(SRV_FUZZ)
			/* the harness wants one reply per command */
			reply_ok(c);
#endif
			return; /* Redis answers neither from a client that is no replica */
		} else {
			char msg[160];

			snprintf(msg, sizeof(msg), "Unrecognized REPLCONF option: %.100s",
				 ARGV(c, i));
			reply_error(c, msg);
			return;
		}
	}
	reply_ok(c);
}

void repl_info(char *buf, size_t len)
{
	long long now = util_mstime(), off = atomic_load(&r_offset);
	size_t n = 0;

	pthread_mutex_lock(&r_lock);
	if (R.host[0]) {
		int up = R.state == REPL_CONNECTED;

		n += (size_t)snprintf(
		    buf + n, len - n,
		    "role:slave\r\nmaster_host:%s\r\nmaster_port:%d\r\n"
		    "master_link_status:%s\r\nmaster_last_io_seconds_ago:%lld\r\n"
		    "master_sync_in_progress:%d\r\n"
		    "slave_read_repl_offset:%lld\r\nslave_repl_offset:%lld\r\n",
		    R.host, R.port, up ? "up" : "down",
		    up ? (now - atomic_load_explicit(&r_last_io_ms, memory_order_relaxed)) / 1000 : -1LL, R.state == REPL_TRANSFER,
		    off < 0 ? 0 : off, off < 0 ? 0 : off);
		if (R.state == REPL_TRANSFER && n < len)
			n += (size_t)snprintf(buf + n, len - n,
					      "master_sync_total_bytes:%lld\r\n"
					      "master_sync_read_bytes:%lld\r\n"
					      "master_sync_left_bytes:%lld\r\n",
					      R.sync_total, R.sync_read, R.sync_total - R.sync_read);
		if (!up && R.down_since && n < len)
			n += (size_t)snprintf(buf + n, len - n,
					      "master_link_down_since_seconds:%lld\r\n",
					      (now - R.down_since) / 1000);
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n,
					      "slave_priority:%lld\r\nslave_read_only:%d\r\n"
					      "replica_announced:1\r\n",
					      atomic_load(&r_priority),
					      (int)(atomic_load(&r_read_only) != 0));
	} else {
		n += (size_t)snprintf(buf + n, len - n, "role:master\r\n");
		/* r_lock released first: EXEC holds m_lock around REPLICAOF,
		 * which takes r_lock (m_lock before r_lock) */
		pthread_mutex_unlock(&r_lock);
		if (n < len)
			replm_info(buf + n, len - n); /* replm.c: replicas, backlog */
		return;
	}
	if (n < len)
		snprintf(buf + n, len - n,
			 "connected_slaves:0\r\nmaster_failover_state:no-failover\r\n"
			 "master_replid:%s\r\n"
			 "master_replid2:0000000000000000000000000000000000000000\r\n"
			 "master_repl_offset:%lld\r\nsecond_repl_offset:-1\r\n"
			 "repl_backlog_active:0\r\nrepl_backlog_size:1048576\r\n"
			 "repl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n",
			 R.host[0] && R.replid[0] ? R.replid : g_srv.replid, off < 0 ? 0 : off);
	pthread_mutex_unlock(&r_lock);
}
