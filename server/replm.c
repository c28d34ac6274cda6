/*
 * replm.c - rcukv as a replication master for Redis replicas (replm.h).
 *
 * What it owns:
 *  - the stream lock m_lock and, under it, the backlog B (a ring of the
 *    stream's last bytes, master_repl_offset, the stream's selected db) and
 *    the list of replicas;
 *  - the feeder thread, which writes the backlog to every online replica,
 *    reads their REPLCONF ACKs, sends PING every repl-ping-replica-period
 *    and REPLCONF GETACK for WAIT;
 *  - one sync thread per full resync: a point-in-time RDB through
 *    persist_write_rdb() (the fork-free ht_snapshot()), sent as $<len> from
 *    a temp file, or EOF-marked straight to the socket for a replica that
 *    said capa eof.
 *
 * The order (docs/replication.md, "rcukv as a master"): while a backlog
 * exists every write command runs from before its first change to after its
 * append holding m_lock, so the stream is the order in which writers held
 * the lock; that order contains every key's order of changes (the changes
 * of one command all happen inside its hold) and real time (a write
 * acknowledged before another began released the lock before the other took
 * it).  The snapshot's moment is taken holding m_lock too, so it falls
 * between two writes: at master_repl_offset O, sent as +FULLRESYNC O.
 *
 * Locks: m_lock nests outside every stripe mutex and resize_lock (writers
 * take it before their command touches the table; the sync thread before
 * ht_snapshot()); QSBR threads take it offline when it is contended.
 * sync_lock (one full sync at a time) nests outside m_lock.
 * Tested by tests/cluster/test_master.sh.
 */
#define RCU_FLAVOR_QSBR
#include "rcu/rcu.h"
#include "hashtable/ht.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/log.h"
#include "server/multi.h"
#include "server/pause.h"
#include "server/persist.h"
#include "server/replm.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

_Atomic int g_replm_on;

/* ------------------------------------------------------------ options */

static _Atomic long long o_backlog_size = 1024 * 1024; /* repl-backlog-size */
static _Atomic long long o_backlog_ttl = 3600;	       /* repl-backlog-ttl, s */
static _Atomic long long o_ping_period = 10;	       /* repl-ping-replica-period, s */
static _Atomic long long o_min_write;		       /* min-replicas-to-write */
static _Atomic long long o_max_lag = 10;	       /* min-replicas-max-lag, s */
static _Atomic long long o_diskless = 1;	       /* repl-diskless-sync */
static _Atomic long long o_diskless_delay = 5;	       /* accepted, not used */
static _Atomic long long o_timeout_def = 60;
/* repl-timeout (repl.c's option, handed over by replm_set_timeout()), s */
static _Atomic long long *o_timeout = &o_timeout_def;

static const struct cfg_opt replm_rows[] = {
    {.name = "repl-backlog-size", .kind = CFG_MEM, .mut = CFG_MUTABLE, .field = &o_backlog_size,
     .min = 1, .max = LLONG_MAX, .def = "1mb"},
    {.name = "repl-backlog-ttl", .kind = CFG_INT, .mut = CFG_MUTABLE, .field = &o_backlog_ttl,
     .min = 0, .max = INT32_MAX, .def = "3600"},
    {.name = "repl-ping-replica-period", .kind = CFG_INT, .mut = CFG_MUTABLE,
     .field = &o_ping_period, .min = 1, .max = INT32_MAX, .def = "10"},
    {.name = "repl-ping-slave-period", .kind = CFG_INT, .mut = CFG_MUTABLE,
     .field = &o_ping_period, .min = 1, .max = INT32_MAX, .def = "10"},
    {.name = "min-replicas-to-write", .kind = CFG_INT, .mut = CFG_MUTABLE, .field = &o_min_write,
     .min = 0, .max = INT32_MAX, .def = "0"},
    {.name = "min-slaves-to-write", .kind = CFG_INT, .mut = CFG_MUTABLE, .field = &o_min_write,
     .min = 0, .max = INT32_MAX, .def = "0"},
    {.name = "min-replicas-max-lag", .kind = CFG_INT, .mut = CFG_MUTABLE, .field = &o_max_lag,
     .min = 0, .max = INT32_MAX, .def = "10"},
    {.name = "min-slaves-max-lag", .kind = CFG_INT, .mut = CFG_MUTABLE, .field = &o_max_lag,
     .min = 0, .max = INT32_MAX, .def = "10"},
    {.name = "repl-diskless-sync", .kind = CFG_BOOL, .mut = CFG_MUTABLE, .field = &o_diskless,
     .def = "yes"},
    {.name = "repl-diskless-sync-delay", .kind = CFG_INT, .mut = CFG_MUTABLE,
     .field = &o_diskless_delay, .min = 0, .max = INT32_MAX, .def = "5"},
};
static struct cfg_group replm_group = {
    "replm", replm_rows, (int)(sizeof(replm_rows) / sizeof(replm_rows[0])), NULL, NULL, NULL};
CFG_REGISTER(replm_group)

#define LDLL(x) atomic_load_explicit(&(x), memory_order_relaxed)

/* ----------------------------------------------------- state, m_lock */

enum { R_WAIT_BGSAVE, R_SEND_BULK, R_ONLINE };

struct replica {
	struct replica *next_r; /* m_lock */
	int fd;
	uint64_t id;
	char addr[64], laddr[64], ip[48];
	int port;	 /* REPLCONF listening-port */
	int capa_eof;	 /* REPLCONF capa eof */
	int old_sync;	 /* SYNC: no +FULLRESYNC line */
	_Atomic int state; /* R_*; written under m_lock */
	/* First stream byte not yet taken into sbuf: the backlog keeps it
	 * (LLONG_MAX: nothing pinned yet).  Written under m_lock. */
	_Atomic long long want;
	_Atomic long long ack_off, ack_ms;
	_Atomic int drop;  /* close it: any thread sets, the feeder closes */
	_Atomic int syncing; /* a sync thread owns fd */
	long long ctime_ms;
	/* the feeder's */
	char *sbuf;
	size_t slen, spos;
	char rbuf[1024];
	size_t rlen;
};

static pthread_mutex_t m_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char *buf;	 /* NULL: no backlog */
	size_t cap;	 /* the ring's size (>= repl-backlog-size while replicas need more) */
	size_t widx;	 /* where the next byte goes */
	size_t histlen;	 /* bytes held, the last of them at offset `off` */
	long long off;	 /* master_repl_offset */
	int db;		 /* the db the stream has selected, -1 unknown */
	struct replica *reps;
	int nreps;
	long long empty_since; /* ms: no replica since, 0 while there are */
} B = {.db = -1};
static _Atomic long long m_off_pub; /* B.off, for INFO without the lock */

/* One full resync at a time (two snapshots of a table cannot run). */
static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int m_syncs; /* sync threads running */

static pthread_t m_feeder;
static int m_feeder_up;		/* m_lock */
static int m_efd = -1;		/* eventfd: the feeder's wake-up */
static _Atomic int m_sleeping;	/* the feeder is (about to be) in poll() */
static _Atomic int m_stop;
static _Atomic int m_getack;	/* WAIT asks for acks */
static _Atomic int m_good;	/* replicas with lag <= min-replicas-max-lag */
static _Atomic long m_waiters;	/* WAIT callers blocked (approximate) */
static _Atomic unsigned long long m_unordered; /* expired-key DELs seen outside m_lock */
static _Atomic unsigned long long m_stats[3]; /* sync_full, partial_ok, partial_err */

static _Thread_local struct {
	int held; /* this thread holds m_lock for the stream */
} tl;

void replm_init(void)
{
	static const struct db_repl_hooks h = {
	    .expired = replm_key_expired,
	    .cycle_lock = replm_cron_lock,
	    .cycle_unlock = replm_cron_unlock,
	};

	db_set_repl_hooks(&h);
}

/* Take m_lock from an online QSBR thread (a worker, the main thread): offline
 * while it waits, since the holder may wait for a grace period (a grow, a
 * contended stripe, ht_snapshot() waiting out a resize).  Every worker-side
 * entry point takes it so; the feeder (not a QSBR thread) and the sync
 * threads (offline) take it plainly. */
static void lock_online(void)
{
	if (pthread_mutex_trylock(&m_lock) == 0)
		return;
	rcu_thread_offline();
	pthread_mutex_lock(&m_lock);
	rcu_thread_online();
}

/* m_lock for a worker's INFO, ROLE, CLIENT LIST/KILL, REPLICAOF, WAIT: not
 * taken again by the thread that holds it for the stream (EXEC and scripts
 * hold it around all their commands; taking it again deadlocked a Sentinel's
 * MULTI; SLAVEOF host port; ...; EXEC on a master with a backlog).  Returns
 * whether it took the lock, for entry_unlock(). */
static int entry_lock(void)
{
	if (tl.held)
		return 0;
	lock_online();
	return 1;
}

static void entry_unlock(int took)
{
	if (took)
		pthread_mutex_unlock(&m_lock);
}

static void wake_feeder(void)
{
	uint64_t one = 1;

	if (atomic_load_explicit(&m_sleeping, memory_order_relaxed)) {
		atomic_store_explicit(&m_sleeping, 0, memory_order_relaxed);
		if (m_efd >= 0 && write(m_efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			srv_log(LL_WARNING, "replication eventfd: %s", strerror(errno));
	}
}

/* ------------------------------------------------------------ backlog */

static long long first_off(void)
{
	return B.off - (long long)B.histlen + 1;
}

/* Copy stream bytes [from, from + n) out of the ring.  m_lock held; the
 * bytes are held (first_off() <= from, from + n - 1 <= B.off). */
static void ring_copy(long long from, char *dst, size_t n)
{
	size_t back = (size_t)(B.off - from) + 1; /* byte `from` is this far behind widx */
	size_t idx = (B.widx + B.cap - back % B.cap) % B.cap;
	size_t a = n < B.cap - idx ? n : B.cap - idx;

	memcpy(dst, B.buf + idx, a);
	memcpy(dst + a, B.buf, n - a);
}

/* Resize the ring to @ncap (>= histlen kept bytes, the newest ones). */
static void ring_resize(size_t ncap)
{
	size_t keep = B.histlen < ncap ? B.histlen : ncap;
	char *nb = xmalloc(ncap);

	if (keep)
		ring_copy(B.off - (long long)keep + 1, nb, keep);
	free(B.buf);
	B.buf = nb;
	B.cap = ncap;
	B.histlen = keep;
	B.widx = keep % ncap;
}

/* The lowest offset a replica still needs, LLONG_MAX for none. */
static long long min_want(void)
{
	long long m = LLONG_MAX;

	for (struct replica *r = B.reps; r; r = r->next_r) {
		long long w = atomic_load_explicit(&r->want, memory_order_relaxed);

		if (!atomic_load_explicit(&r->drop, memory_order_relaxed) && w < m)
			m = w;
	}
	return m;
}

/* A replica's output limit, as Redis's client-output-buffer-limit replica
 * hard limit (256 MB): the ring grows for a replica behind up to this. */
#define REPLM_MAX_RING (256LL * 1024 * 1024)

/* Room for @n more bytes without overwriting one a replica still needs:
 * grow the ring, or drop the replicas too far behind. */
static void ring_room(size_t n)
{
	long long need = min_want(), after_first;
	size_t ncap = B.cap;

	if (B.histlen + n <= B.cap || need == LLONG_MAX)
		return;
	after_first = B.off + (long long)n - (long long)B.cap + 1;
	if (need >= after_first)
		return;
	while ((long long)ncap < B.off + (long long)n - need + 1 && (long long)ncap < REPLM_MAX_RING)
		ncap *= 2;
	if ((long long)ncap > REPLM_MAX_RING)
		ncap = REPLM_MAX_RING;
	if (ncap != B.cap)
		ring_resize(ncap);
	after_first = B.off + (long long)n - (long long)B.cap + 1;
	for (struct replica *r = B.reps; r; r = r->next_r)
		if (atomic_load_explicit(&r->want, memory_order_relaxed) < after_first &&
		    !atomic_load_explicit(&r->drop, memory_order_relaxed)) {
			srv_log(LL_WARNING,
				"Client id=%llu addr=%s scheduled to be closed ASAP for overcoming of "
				"output buffer limits.",
				(unsigned long long)r->id, r->addr);
			atomic_store_explicit(&r->drop, 1, memory_order_relaxed);
			shutdown(r->fd, SHUT_RDWR);
		}
}

static void ring_put(const void *p, size_t n)
{
	const char *s = p;

	if (!B.buf || n == 0)
		return;
	ring_room(n);
	B.off += (long long)n;
	if (n >= B.cap) { /* only the last cap bytes stay */
		memcpy(B.buf, s + n - B.cap, B.cap);
		B.widx = 0;
		B.histlen = B.cap;
	} else {
		size_t a = n < B.cap - B.widx ? n : B.cap - B.widx;

		memcpy(B.buf + B.widx, s, a);
		memcpy(B.buf, s + a, n - a);
		B.widx = (B.widx + n) % B.cap;
		B.histlen = B.histlen + n < B.cap ? B.histlen + n : B.cap;
	}
	atomic_store_explicit(&m_off_pub, B.off, memory_order_relaxed);
}

/* Append one command (RESP multibulk). m_lock held. */
static void emit_argv(int argc, const char *const *argv, const size_t *argl)
{
	char h[32];
	int n = snprintf(h, sizeof(h), "*%d\r\n", argc);

	ring_put(h, (size_t)n);
	for (int i = 0; i < argc; i++) {
		n = snprintf(h, sizeof(h), "$%zu\r\n", argl[i]);
		ring_put(h, (size_t)n);
		ring_put(argv[i], argl[i]);
		ring_put("\r\n", 2);
	}
}

static void emit_strs(int argc, const char *const *argv)
{
	size_t l[8];

	for (int i = 0; i < argc; i++)
		l[i] = strlen(argv[i]);
	emit_argv(argc, argv, l);
}

static void emit_del(const void *key, size_t klen)
{
	const char *a[2] = {"DEL", key};
	size_t l[2] = {3, klen};

	emit_argv(2, a, l);
}

static void emit_select(int db)
{
	char n[16];
	const char *a[2] = {"SELECT", n};

	if (B.db == db)
		return;
	snprintf(n, sizeof(n), "%d", db);
	emit_strs(2, a);
	B.db = db;
}

/* ------------------------------------------------ the stream, for propagate.c */

void replm_lock(void)
{
	lock_online();
	tl.held = 1;
}

void replm_unlock(int wrote)
{
	if (wrote)
		wake_feeder();
	tl.held = 0;
	pthread_mutex_unlock(&m_lock);
}

int replm_emitting(void)
{
	return B.buf != NULL;
}

long long replm_offset_locked(void)
{
	return B.off;
}

void replm_emit(int argc, const char *const *argv, const size_t *argl)
{
	emit_argv(argc, argv, argl);
}

void replm_emit_select(int db)
{
	emit_select(db);
}

void replm_key_expired(int db, const void *key, size_t klen)
{
	if (!replm_on())
		return;
	if (!tl.held) {
		atomic_fetch_add_explicit(&m_unordered, 1, memory_order_relaxed);
		return;
	}
	if (!B.buf)
		return;
	emit_select(db);
	emit_del(key, klen);
}

void replm_cron_lock(void)
{
	lock_online();
	tl.held = 1;
}

void replm_cron_unlock(void)
{
	tl.held = 0;
	wake_feeder();
	pthread_mutex_unlock(&m_lock);
}

/* ----------------------------------------------------------- refusals */

int replm_refuses_writes(void)
{
	long long min = LDLL(o_min_write);

	if (SRV_LIKELY(min == 0) || LDLL(o_max_lag) == 0)
		return 0;
	return atomic_load_explicit(&m_good, memory_order_relaxed) < min;
}

/* -------------------------------------------------------------- feeder */

static void replica_free(struct replica *r)
{
	if (r->fd >= 0)
		close(r->fd);
	free(r->sbuf);
	free(r);
}

static void set_blocking(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, on ? (fl & ~O_NONBLOCK) : (fl | O_NONBLOCK));
}

static int send_all(int fd, const void *p, size_t n)
{
	const char *s = p;

	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The replica's REPLCONF ACK <offset>: parse what it sent (arrays of bulk
 * strings; anything else is skipped line by line). */
static void parse_acks(struct replica *r)
{
	size_t pos = 0;

	while (pos < r->rlen) {
		char *s = r->rbuf + pos, *end = r->rbuf + r->rlen, *p, *nl;
		const char *av[4];
		size_t al[4];
		long n;
		int i, ok = 1;

		if (*s != '*') {
			nl = memchr(s, '\n', (size_t)(end - s));
			if (!nl)
				break;
			pos = (size_t)(nl + 1 - r->rbuf);
			continue;
		}
		nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			break;
		n = strtol(s + 1, NULL, 10);
		p = nl + 1;
		for (i = 0; i < n && ok; i++) {
			long bl;

			if (p >= end || *p != '$' || !(nl = memchr(p, '\n', (size_t)(end - p)))) {
				ok = 0;
				break;
			}
			bl = strtol(p + 1, NULL, 10);
			p = nl + 1;
			if (bl < 0 || end - p < bl + 2) {
				ok = 0;
				break;
			}
			if (i < 4) {
				av[i] = p;
				al[i] = (size_t)bl;
			}
			p += bl + 2;
		}
		if (!ok)
			break;
		if (n >= 3 && util_strcaseeq(av[0], al[0], "replconf") &&
		    util_strcaseeq(av[1], al[1], "ack")) {
			char num[32];

			snprintf(num, sizeof(num), "%.*s", (int)(al[2] < 31 ? al[2] : 31), av[2]);
			atomic_store_explicit(&r->ack_off, strtoll(num, NULL, 10),
					      memory_order_relaxed);
			atomic_store_explicit(&r->ack_ms, util_mstime(), memory_order_relaxed);
		}
		pos = (size_t)(p - r->rbuf);
	}
	memmove(r->rbuf, r->rbuf + pos, r->rlen - pos);
	r->rlen -= pos;
	if (r->rlen == sizeof(r->rbuf))
		atomic_store_explicit(&r->drop, 1, memory_order_relaxed);
}

static void wake_waiters(void)
{
	if (atomic_load_explicit(&m_waiters, memory_order_relaxed) > 0)
		for (int i = 0; i < g_srv.nworkers; i++)
			server_wake_worker(&g_srv.workers[i]);
}

#define SBUF_LEN (64 * 1024)
#define MAXPOLL 64

static void *feeder_main(void *arg)
{
	long long last_ping = util_mstime();

	(void)arg;
	while (!atomic_load_explicit(&m_stop, memory_order_relaxed)) {
		struct pollfd pf[MAXPOLL + 1];
		struct replica *pr[MAXPOLL + 1], *dead = NULL;
		long long now = util_mstime(), lag = LDLL(o_max_lag);
		int np = 1, good = 0;
		uint64_t v;

		pthread_mutex_lock(&m_lock);
		if (B.buf && B.nreps && (now - last_ping >= LDLL(o_ping_period) * 1000)) {
			const char *a[1] = {"PING"};

			emit_strs(1, a);
			last_ping = now;
		}
		if (B.buf && B.nreps && atomic_exchange(&m_getack, 0)) {
			const char *a[3] = {"REPLCONF", "GETACK", "*"};

			emit_strs(3, a);
		}
		for (struct replica **pp = &B.reps, *r; (r = *pp) != NULL;) {
			int st = atomic_load_explicit(&r->state, memory_order_relaxed);

			if (atomic_load_explicit(&r->drop, memory_order_relaxed) &&
			    !atomic_load_explicit(&r->syncing, memory_order_relaxed)) {
				*pp = r->next_r;
				B.nreps--;
				r->next_r = dead;
				dead = r;
				continue;
			}
			pp = &r->next_r;
			if (st != R_ONLINE)
				continue;
			if (now - atomic_load_explicit(&r->ack_ms, memory_order_relaxed) >
			    LDLL(*o_timeout) * 1000) {
				srv_log(LL_WARNING, "Disconnecting timedout replica (streaming sync): %s",
					r->addr);
				atomic_store_explicit(&r->drop, 1, memory_order_relaxed);
				continue;
			}
			if (lag && (now - atomic_load_explicit(&r->ack_ms, memory_order_relaxed)) <=
				       lag * 1000)
				good++;
			if (r->spos == r->slen) {
				long long w = atomic_load_explicit(&r->want, memory_order_relaxed);

				r->spos = r->slen = 0;
				if (w < first_off() && w <= B.off) {
					atomic_store_explicit(&r->drop, 1, memory_order_relaxed);
					continue;
				}
				if (w <= B.off) {
					size_t n = (size_t)(B.off - w + 1);

					if (n > SBUF_LEN)
						n = SBUF_LEN;
					ring_copy(w, r->sbuf, n);
					r->slen = n;
					atomic_store_explicit(&r->want, w + (long long)n,
							      memory_order_relaxed);
				}
			}
			if (np <= MAXPOLL) {
				pf[np].fd = r->fd;
				pf[np].events = POLLIN | (r->slen > r->spos ? POLLOUT : 0);
				pf[np].revents = 0;
				pr[np++] = r;
			}
		}
		atomic_store_explicit(&m_good, good, memory_order_relaxed);
		if (B.nreps == 0 && B.buf) {
			if (!B.empty_since)
				B.empty_since = now;
			else if (LDLL(o_backlog_ttl) > 0 &&
				 now - B.empty_since > LDLL(o_backlog_ttl) * 1000) {
				/* repl-backlog-ttl: the backlog goes; writes stop locking */
				atomic_store_explicit(&g_replm_on, 0, memory_order_relaxed);
				free(B.buf);
				B.buf = NULL;
				B.cap = B.histlen = B.widx = 0;
				srv_log(LL_NOTICE,
					"Replication backlog freed after %lld seconds without connected "
					"replicas.",
					LDLL(o_backlog_ttl));
			}
		} else if (B.nreps) {
			B.empty_since = 0;
			/* back to repl-backlog-size once no replica needs more */
			if (B.buf && B.cap > (size_t)LDLL(o_backlog_size) * 2 &&
			    min_want() > B.off - LDLL(o_backlog_size))
				ring_resize((size_t)LDLL(o_backlog_size));
		}
		/* Set even with bytes pending: the sends below can empty every
		 * sbuf, and poll() then sleeps up to 100 ms.  An append after
		 * this unlock sees the flag and writes the eventfd, so poll()
		 * returns at once (a flag left at 0 here lost that wake-up, and
		 * a replica lagged up to 100 ms behind a stream of writes). */
		atomic_store_explicit(&m_sleeping, 1, memory_order_relaxed);
		pthread_mutex_unlock(&m_lock);

		while (dead) {
			struct replica *r = dead;

			dead = r->next_r;
			srv_log(LL_NOTICE, "Connection with replica %s lost.", r->addr);
			replica_free(r);
		}
		/* write first: most writes take what they are given */
		for (int i = 1; i < np; i++) {
			struct replica *r = pr[i];

			if (r->slen > r->spos) {
				ssize_t w = send(r->fd, r->sbuf + r->spos, r->slen - r->spos,
						 MSG_NOSIGNAL | MSG_DONTWAIT);

				if (w > 0)
					r->spos += (size_t)w;
				else if (w < 0 && errno != EAGAIN && errno != EINTR)
					atomic_store_explicit(&r->drop, 1, memory_order_relaxed);
			}
			pf[i].events = POLLIN | (r->slen > r->spos ? POLLOUT : 0);
		}
		pf[0].fd = m_efd;
		pf[0].events = POLLIN;
		pf[0].revents = 0;
		{
			int more = 0;

			for (int i = 1; i < np; i++)
				more |= pr[i]->slen == pr[i]->spos &&
					atomic_load_explicit(&pr[i]->want, memory_order_relaxed) <=
					    atomic_load_explicit(&m_off_pub, memory_order_relaxed);
			if (poll(pf, (nfds_t)np, more ? 0 : 100) < 0 && errno != EINTR)
				srv_log(LL_WARNING, "replication poll: %s", strerror(errno));
		}
		atomic_store_explicit(&m_sleeping, 0, memory_order_relaxed);
		if (pf[0].revents & POLLIN)
			if (read(m_efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				srv_log(LL_WARNING, "replication eventfd: %s", strerror(errno));
		for (int i = 1; i < np; i++) {
			struct replica *r = pr[i];

			if (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) {
				ssize_t n = recv(r->fd, r->rbuf + r->rlen, sizeof(r->rbuf) - r->rlen,
						 MSG_DONTWAIT);

				if (n > 0) {
					long long before = atomic_load(&r->ack_off);

					r->rlen += (size_t)n;
					parse_acks(r);
					if (atomic_load(&r->ack_off) != before)
						wake_waiters();
				} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
					atomic_store_explicit(&r->drop, 1, memory_order_relaxed);
					wake_waiters();
				}
			}
		}
	}
	return NULL;
}

/* m_lock held. */
static void feeder_start_locked(void)
{
	if (m_feeder_up)
		return;
	m_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (m_efd < 0)
		srv_die("replication: eventfd: %s", strerror(errno));
	if (pthread_create(&m_feeder, NULL, feeder_main, NULL) != 0)
		srv_die("replication: cannot start the feeder thread");
	m_feeder_up = 1;
}

/* ----------------------------------------------------------- full sync */

/* Every worker has ended the turn it was in (server_wait_turns() for a
 * thread that is not a worker). */
static void wait_turns_all(void)
{
	for (int i = 0; i < g_srv.nworkers; i++) {
		struct worker *w = &g_srv.workers[i];
		unsigned long b = atomic_load_explicit(&w->busy, memory_order_seq_cst);

		if (!(b & 1))
			continue;
		while (atomic_load_explicit(&w->busy, memory_order_acquire) == b)
			usleep(20);
	}
}

/*
 * Create the backlog if there is none.  Writers decide on g_replm_on with a
 * relaxed load when their command starts, so one that started before the
 * store runs without m_lock: synchronize_rcu() makes every worker pass a
 * quiescent state (a full barrier) after the store, so every command after
 * that sees it, and wait_turns_all() waits out the commands begun before
 * it, even those waiting offline for a stripe.  From then on every write
 * takes m_lock.  Context: a registered QSBR thread, offline, no lock held.
 */
static void backlog_activate(void)
{
	int was;

	pthread_mutex_lock(&m_lock);
	was = B.buf != NULL;
	if (!was) {
		B.cap = (size_t)LDLL(o_backlog_size);
		B.buf = xmalloc(B.cap);
		B.histlen = B.widx = 0;
		B.db = -1;
		atomic_store_explicit(&g_replm_on, 1, memory_order_seq_cst);
	}
	pthread_mutex_unlock(&m_lock);
	if (!was) {
		synchronize_rcu(); /* offline: never waits for ourselves */
		wait_turns_all();
	}
}

struct sync_ctx {
	struct replica *r;
	long long at; /* master_repl_offset at the moment */
	int done;     /* the moment passed (m_lock released there) */
	int diskless;
	char mark[41];
};

static const char *replid(void)
{
	return g_srv.replid;
}

/* persist_write_rdb()'s moment, under the last table's stripe mutexes: the
 * stream and the dump meet at B.off.  Releases m_lock. */
static void sync_moment(void *arg)
{
	struct sync_ctx *x = arg;
	struct replica *r = x->r;

	x->at = B.off;
	B.db = -1; /* the replica starts with no db selected: SELECT first */
	atomic_store_explicit(&r->want, B.off + 1, memory_order_relaxed);
	atomic_store_explicit(&r->state, R_SEND_BULK, memory_order_relaxed);
	x->done = 1;
	pthread_mutex_unlock(&m_lock);
	if (x->diskless) {
		char line[128];
		int n = snprintf(line, sizeof(line), "+FULLRESYNC %s %lld\r\n$EOF:%s\r\n", replid(),
				 x->at, x->mark);

		if (send_all(r->fd, line, (size_t)n) != 0)
			atomic_store_explicit(&r->drop, 1, memory_order_relaxed);
	}
}

static int last_nonempty_db(void)
{
	int last = -1;

	for (int i = 0; i < g_ndbs; i++)
		if (ht_count(db_at(i)) > 0)
			last = i;
	return last;
}

static int send_file(int sfd, int fd, off_t len)
{
	char buf[64 * 1024];

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	while (len > 0) {
		ssize_t n = read(fd, buf, sizeof(buf) < (size_t)len ? sizeof(buf) : (size_t)len);

		if (n <= 0)
			return -1;
		if (send_all(sfd, buf, (size_t)n) != 0)
			return -1;
		len -= n;
	}
	return 0;
}

static void *sync_main(void *arg)
{
	struct replica *r = arg;
	struct sync_ctx x = {.r = r};
	struct timeval tv = {.tv_sec = (time_t)LDLL(*o_timeout)};
	char tmp[PATH_MAX + 64] = "";
	int fd = -1, res = -1, tries = 0;
	long long t0 = util_mstime();

	rcu_register_thread();
	rcu_thread_offline();
	pthread_mutex_lock(&sync_lock);
	set_blocking(r->fd, 1);
	setsockopt(r->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	backlog_activate();
	for (;;) {
		int ndbs;

		if (atomic_load(&r->drop) || atomic_load(&m_stop))
			break;
		pthread_mutex_lock(&m_lock);
		ndbs = last_nonempty_db() + 1;
		x.diskless = r->capa_eof && !r->old_sync && LDLL(o_diskless) && ndbs <= 1;
		x.done = 0;
		if (x.diskless) {
			fd = r->fd;
			for (int i = 0; i < 40; i++)
				x.mark[i] = "0123456789abcdef"[rand() & 15];
			x.mark[40] = '\0';
		} else {
			persist_temp_path(tmp, sizeof(tmp));
			snprintf(tmp + strlen(tmp), sizeof(tmp) - strlen(tmp), ".repl-%llu",
				 (unsigned long long)r->id);
			fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
			if (fd < 0) {
				pthread_mutex_unlock(&m_lock);
				srv_log(LL_WARNING, "Replication: cannot open %s: %s", tmp,
					strerror(errno));
				break;
			}
			unlink(tmp); /* ours alone; gone when closed */
		}
		srv_log(LL_NOTICE, "Starting BGSAVE for SYNC with target: %s",
			x.diskless ? "replicas sockets" : "disk");
		res = persist_write_rdb(fd, ndbs, sync_moment, &x);
		if (!x.done)
			pthread_mutex_unlock(&m_lock);
		if (res == -EBUSY && !x.done && ++tries < 600) { /* a BGSAVE runs: wait for it */
			if (!x.diskless)
				close(fd);
			fd = -1;
			usleep(100 * 1000);
			continue;
		}
		break;
	}
	if (res == 0 && x.diskless) {
		if (send_all(r->fd, x.mark, 40) != 0)
			res = -EIO;
	} else if (res == 0) {
		struct stat st;
		char line[128];
		int n = 0;

		if (fstat(fd, &st) != 0)
			res = -errno;
		if (res == 0 && !r->old_sync)
			n = snprintf(line, sizeof(line), "+FULLRESYNC %s %lld\r\n", replid(), x.at);
		if (res == 0)
			n += snprintf(line + n, sizeof(line) - (size_t)n, "$%lld\r\n",
				      (long long)st.st_size);
		if (res == 0 && (send_all(r->fd, line, (size_t)n) != 0 ||
				 send_file(r->fd, fd, st.st_size) != 0))
			res = -EIO;
	}
	if (!x.diskless && fd >= 0)
		close(fd);
	if (res == 0) {
		srv_log(LL_NOTICE, "Synchronization with replica %s succeeded (%lld ms)", r->addr,
			util_mstime() - t0);
		pthread_mutex_lock(&m_lock);
		set_blocking(r->fd, 0);
		atomic_store_explicit(&r->ack_ms, util_mstime(), memory_order_relaxed);
		atomic_store_explicit(&r->state, R_ONLINE, memory_order_relaxed);
		atomic_store_explicit(&r->syncing, 0, memory_order_relaxed);
		atomic_store_explicit(&m_sleeping, 1, memory_order_relaxed);
		wake_feeder();
		pthread_mutex_unlock(&m_lock);
	} else {
		srv_log(LL_WARNING, "Full resync of replica %s failed: %s", r->addr,
			strerror(res < 0 ? -res : EIO));
		pthread_mutex_lock(&m_lock);
		atomic_store_explicit(&r->drop, 1, memory_order_relaxed);
		atomic_store_explicit(&r->syncing, 0, memory_order_relaxed);
		pthread_mutex_unlock(&m_lock);
	}
	pthread_mutex_unlock(&sync_lock);
	rcu_thread_online();
	rcu_unregister_thread();
	atomic_fetch_sub(&m_syncs, 1);
	return NULL;
}

/* ------------------------------------------------------- SYNC, PSYNC */

static struct replica *replica_new(struct conn *c, int fd)
{
	struct replica *r = xcalloc(1, sizeof(*r));
	const char *colon;

	r->fd = fd;
	r->id = c->id;
	snprintf(r->addr, sizeof(r->addr), "%s", c->addr);
	snprintf(r->laddr, sizeof(r->laddr), "%s", c->laddr);
	colon = strrchr(c->addr, ':');
	snprintf(r->ip, sizeof(r->ip), "%.*s", colon ? (int)(colon - c->addr) : 47, c->addr);
	r->port = c->repl_lport;
	r->capa_eof = c->repl_capa & 1;
	r->ctime_ms = util_mstime();
	r->sbuf = xmalloc(SBUF_LEN);
	atomic_init(&r->want, LLONG_MAX);
	atomic_init(&r->ack_ms, r->ctime_ms);
	return r;
}

/* A partial resync from @off, if the backlog holds it.  m_lock held. */
static int try_partial(struct replica *r, const char *id, size_t idlen, long long off)
{
	char line[96];
	int n;

	if (!B.buf || idlen != 40 || memcmp(id, replid(), 40) != 0 || off < first_off() ||
	    off > B.off + 1)
		return 0;
	n = snprintf(line, sizeof(line), "+CONTINUE %s\r\n", replid());
	if (send(r->fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n)
		return 0;
	atomic_store_explicit(&r->want, off, memory_order_relaxed);
	atomic_store_explicit(&r->state, R_ONLINE, memory_order_relaxed);
	return 1;
}

static void sync_command(struct conn *c, int argc, int psync)
{
	struct replica *r;
	pthread_t t;
	int fd;

	(void)argc;
	if (c->out.len != c->out.pos) {
		reply_error(c, "SYNC and PSYNC are invalid with pending output");
		return;
	}
	if (c->flags & (CONN_TLS | CONN_MASTER)) {
		reply_error(c, "rcukv serves replicas over plain TCP only");
		return;
	}
	if (psync) {
		long long v;

		if (!resp_str2ll(ARGV(c, 2), ARGL(c, 2), &v)) {
			reply_error(c, ERR_NOT_INT);
			return;
		}
	}
	fd = dup(c->fd);
	if (fd < 0) {
		reply_error(c, "cannot serve the replica: dup failed");
		return;
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	r = replica_new(c, fd);
	r->old_sync = !psync;
	/* the connection goes away; the socket lives on in @fd (close() of
	 * the connection's descriptor sends nothing while ours is open) */
	c->flags |= CONN_CLOSE_AFTER_REPLY;
	lock_online(); /* a worker: offline while it waits */
	feeder_start_locked();
	r->next_r = B.reps;
	B.reps = r;
	B.nreps++;
	B.empty_since = 0;
	if (psync && try_partial(r, ARGV(c, 1), ARGL(c, 1), strtoll(ARGV(c, 2), NULL, 10))) {
		atomic_fetch_add(&m_stats[1], 1);
		srv_log(LL_NOTICE,
			"Partial resynchronization request from %s accepted. Sending %lld bytes of "
			"backlog starting from offset %lld.",
			r->addr, B.off + 1 - atomic_load(&r->want), atomic_load(&r->want));
		atomic_store_explicit(&m_sleeping, 1, memory_order_relaxed);
		wake_feeder();
		pthread_mutex_unlock(&m_lock);
		return;
	}
	atomic_store_explicit(&r->syncing, 1, memory_order_relaxed);
	atomic_fetch_add(&m_stats[0], 1);
	if (psync && strcmp(ARGV(c, 1), "?") != 0)
		atomic_fetch_add(&m_stats[2], 1); /* asked for a partial one */
	pthread_mutex_unlock(&m_lock);
	srv_log(LL_NOTICE, "Replica %s asks for synchronization", r->addr);
	atomic_fetch_add(&m_syncs, 1);
	if (pthread_create(&t, NULL, sync_main, r) != 0) {
		atomic_fetch_sub(&m_syncs, 1);
		atomic_store(&r->syncing, 0);
		atomic_store(&r->drop, 1);
		return;
	}
	pthread_detach(t);
}

void replm_sync(struct conn *c, int argc, int psync)
{
	sync_command(c, argc, psync);
}

/* ------------------------------------------------------ WAIT, ROLE, INFO */

static int count_acks(long long off)
{
	int n = 0;

	int took = entry_lock(); /* a worker: offline while it waits */
	for (struct replica *r = B.reps; r; r = r->next_r)
		if (atomic_load_explicit(&r->state, memory_order_relaxed) == R_ONLINE &&
		    !atomic_load_explicit(&r->drop, memory_order_relaxed) &&
		    atomic_load_explicit(&r->ack_off, memory_order_relaxed) >= off)
			n++;
	entry_unlock(took);
	return n;
}

void replm_wait(struct conn *c, long long n, long long timeout_ms)
{
	int acks = count_acks(c->repl_woff);
	long long now;

	if (acks >= n || (c->multi && c->multi->active) || tl.held) {
		if (c->wait_until)
			atomic_fetch_sub(&m_waiters, 1);
		c->wait_until = 0;
		reply_int(c, acks);
		return;
	}
	now = util_mstime();
	if (!c->wait_until) {
		c->wait_until = timeout_ms ? now + timeout_ms : LLONG_MAX;
		atomic_fetch_add(&m_waiters, 1);
		atomic_store(&m_getack, 1);
		lock_online(); /* a worker: offline while it waits */
		atomic_store_explicit(&m_sleeping, 1, memory_order_relaxed);
		wake_feeder();
		pthread_mutex_unlock(&m_lock);
	} else if (now >= c->wait_until) {
		atomic_fetch_sub(&m_waiters, 1);
		c->wait_until = 0;
		reply_int(c, acks);
		return;
	}
	pause_hold_for(c, c->wait_until - now < 100 ? c->wait_until - now + 1 : 100);
}

void replm_role_reply(struct conn *c)
{
	int n = 0;

	int took = entry_lock(); /* a worker: offline while it waits */
	for (struct replica *r = B.reps; r; r = r->next_r)
		n += atomic_load_explicit(&r->state, memory_order_relaxed) == R_ONLINE;
	reply_array(c, 3);
	reply_bulk_str(c, "master");
	reply_int(c, B.off);
	reply_array(c, n);
	for (struct replica *r = B.reps; r; r = r->next_r) {
		char port[16], off[32];

		if (atomic_load_explicit(&r->state, memory_order_relaxed) != R_ONLINE)
			continue;
		snprintf(port, sizeof(port), "%d", r->port);
		snprintf(off, sizeof(off), "%lld", atomic_load(&r->ack_off));
		reply_array(c, 3);
		reply_bulk_str(c, r->ip);
		reply_bulk_str(c, port);
		reply_bulk_str(c, off);
	}
	entry_unlock(took);
}

static const char *state_name(int st)
{
	return st == R_ONLINE ? "online" : st == R_SEND_BULK ? "send_bulk" : "wait_bgsave";
}

size_t replm_info(char *buf, size_t len)
{
	long long now = util_mstime();
	size_t n = 0;
	int i = 0;

#define PUT(...)                                                                                   \
	do {                                                                                       \
		if (n < len)                                                                       \
			n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__);                      \
	} while (0)
	int took = entry_lock(); /* a worker: offline while it waits */
	PUT("connected_slaves:%d\r\n", B.nreps);
	if (LDLL(o_min_write) && LDLL(o_max_lag))
		PUT("min_slaves_good_slaves:%d\r\n", atomic_load(&m_good));
	for (struct replica *r = B.reps; r; r = r->next_r) {
		int st = atomic_load_explicit(&r->state, memory_order_relaxed);

		PUT("slave%d:ip=%s,port=%d,state=%s,offset=%lld,lag=%lld\r\n", i++, r->ip, r->port,
		    state_name(st), atomic_load(&r->ack_off),
		    (now - atomic_load(&r->ack_ms)) / 1000);
	}
	PUT("master_failover_state:no-failover\r\n"
	    "master_replid:%s\r\n"
	    "master_replid2:0000000000000000000000000000000000000000\r\n"
	    "master_repl_offset:%lld\r\nsecond_repl_offset:-1\r\n"
	    "repl_backlog_active:%d\r\nrepl_backlog_size:%lld\r\n"
	    "repl_backlog_first_byte_offset:%lld\r\nrepl_backlog_histlen:%zu\r\n",
	    replid(), B.off, B.buf != NULL, LDLL(o_backlog_size), B.buf ? first_off() : 0,
	    B.buf ? B.histlen : 0);
	entry_unlock(took);
#undef PUT
	return n < len ? n : len;
}

char *replm_client_lines(size_t *lenp)
{
	long long now = util_mstime();
	size_t cap = 256, len = 0;
	char *out = xmalloc(cap);

	int took = entry_lock(); /* a worker: offline while it waits */
	for (struct replica *r = B.reps; r; r = r->next_r) {
		char line[512];
		int n = snprintf(
		    line, sizeof(line),
		    "id=%llu addr=%s laddr=%s fd=%d name= age=%lld idle=%lld flags=S db=0 sub=0 "
		    "psub=0 ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=1024 "
		    "rbp=0 obl=0 oll=0 omem=0 tot-mem=%zu events=r cmd=replconf user=default "
		    "redir=-1 resp=2\n",
		    (unsigned long long)r->id, r->addr, r->laddr, r->fd,
		    (now - r->ctime_ms) / 1000, (now - atomic_load(&r->ack_ms)) / 1000,
		    sizeof(*r) + SBUF_LEN);

		if (n < 0)
			continue;
		while (len + (size_t)n + 1 > cap) {
			cap *= 2;
			out = xrealloc(out, cap);
		}
		memcpy(out + len, line, (size_t)n);
		len += (size_t)n;
	}
	entry_unlock(took);
	out[len] = '\0';
	*lenp = len;
	return out;
}

int replm_kill_replicas(void)
{
	int n = 0;

	int took = entry_lock(); /* a worker: offline while it waits */
	for (struct replica *r = B.reps; r; r = r->next_r)
		if (!atomic_exchange(&r->drop, 1)) {
			shutdown(r->fd, SHUT_RDWR);
			n++;
		}
	atomic_store_explicit(&m_sleeping, 1, memory_order_relaxed);
	wake_feeder();
	entry_unlock(took);
	return n;
}

void replm_set_timeout(_Atomic long long *seconds)
{
	o_timeout = seconds;
}

unsigned long long replm_stat(int which)
{
	return atomic_load_explicit(&m_stats[which], memory_order_relaxed);
}

void replm_stop(void)
{
	replm_kill_replicas();
	atomic_store(&m_stop, 1);
	for (int i = 0; i < 3000 && atomic_load(&m_syncs) > 0; i++)
		usleep(10 * 1000);
	if (m_feeder_up) {
		uint64_t one = 1;

		if (write(m_efd, &one, sizeof(one)) < 0)
			srv_log(LL_WARNING, "replication eventfd: %s", strerror(errno));
		pthread_join(m_feeder, NULL);
		m_feeder_up = 0;
		close(m_efd);
		m_efd = -1;
	}
	pthread_mutex_lock(&m_lock);
	while (B.reps) {
		struct replica *r = B.reps;

		B.reps = r->next_r;
		replica_free(r);
	}
	B.nreps = 0;
	free(B.buf);
	B.buf = NULL;
	pthread_mutex_unlock(&m_lock);
}
