/*
 * main.c - rcukv-server's process: configuration, logging, daemonizing, the
 * pid file, signals, the main thread's event loop (listeners, cron) and the
 * shutdown sequence.
 *
 * Usage: rcukv-server [config-file] [--option value ...]
 *
 * The main thread is a registered QSBR reader, offline while it blocks in
 * epoll.  Its cron (hz times a second) runs the active expiry cycle and the
 * ops/sec sample after the loop turn, online, never inside a libevent callback.
 *
 * Start-up: configuration, the table, the listeners and the workers, then the
 * dump loads on a thread of persist.c while this loop already accepts (as Redis
 * 7.0: commands that need the data answer -LOADING meanwhile); "Ready to accept
 * connections" is logged once it is loaded.  The cron's expiry, eviction and
 * save points wait for the end of the load.
 *
 * Shutdown (SIGTERM, SIGINT, SHUTDOWN): close the listeners, let every worker
 * flush and close its clients and pass a last quiescent state, join them, free
 * the table (ht_free() waits with rcu_barrier()), rcu_barrier() for anything
 * else queued, free the rest, remove the pid file and exit 0.  A load still
 * running is stopped first (after the listeners close) and nothing is saved,
 * exit 0 as Redis; a failed load asks for the same shutdown and exits 1.
 */
#define RCU_FLAVOR_QSBR
#include "rcu/rcu.h"
#include "server/mem.h"
#include "server/cmd.h"
#include "server/config.h"
#include "server/db.h"
#include "server/evict.h"
#include "server/info.h"
#include "server/log.h"
#include "server/module.h"
#include "server/mem.h"
#include "server/net.h"
#include "server/persist.h"
#include "server/pubsub.h"
#include "server/repl.h"
#include "server/propagate.h"
#include "server/replm.h"
#include "server/script.h"
#include "server/server.h"
#include "server/tls.h"
#include "server/util.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(SRV_JEMALLOC) && SRV_JEMALLOC
#include <jemalloc/jemalloc.h>
#include <stdbool.h>
#endif

static struct event *ev_cron, *ev_sigterm, *ev_sigint, *ev_shutdown;
static volatile int cron_due;
static int got_signal;

static void on_cron(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	cron_due = 1;
}

static void arm_cron(void)
{
	long long hz = atomic_load_explicit(&g_cfg.hz, memory_order_relaxed);
	struct timeval tv = {0, (suseconds_t)(1000000 / (hz > 0 ? hz : 10))};

	event_add(ev_cron, &tv);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	(void)arg;
	got_signal = (int)sig;
	if (persist_loading())
		srv_log(LL_WARNING,
			"Received shutdown signal during loading, scheduling shutdown.");
	else
		srv_log(LL_WARNING, "Received %s scheduling shutdown...",
			sig == SIGINT ? "SIGINT" : "SIGTERM");
	event_base_loopbreak(g_srv.base);
}

static void on_shutdown_req(evutil_socket_t fd, short what, void *arg)
{
	uint64_t v;

	(void)what;
	(void)arg;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		srv_log(LL_WARNING, "eventfd read failed: %s", strerror(errno));
	if (atomic_load_explicit(&g_srv.shutdown_asap, memory_order_acquire))
		event_base_loopbreak(g_srv.base);
}

/*
 * A second SIGINT while a signal's shutdown is under way (the final save can
 * take long): "the user really wants out", as Redis 7.0 reads it.  Log "You
 * insist... exiting now.", remove the final save's temp file (the previous
 * dump stays), exit 1 at once.  A real handler, not libevent's: the main
 * thread is busy in shutdown_begin(), not in its event loop.
 */
static char insist_tmp[PATH_MAX + 64];

static void on_sigint_insist(int sig)
{
	(void)sig;
	srv_log_from_handler("You insist... exiting now.");
	unlink(insist_tmp);
	_exit(1);
}

/*
 * SIGTERM, SIGINT or SHUTDOWN.  With a final save to make (save points or
 * SHUTDOWN SAVE), every worker is paused between commands first, so the dump
 * holds every write acknowledged before it; only once it is on disk do the
 * workers stop and the clients close.  If it fails (disk full, ...) and
 * SHUTDOWN FORCE was not given, the workers go on and so does the server: the
 * SHUTDOWN callers get Redis's error, as Redis does.  Without a save, or
 * while loading, the workers stop at once.  Returns 1 to exit (with
 * *exit_status: 1 after a failed load), 0 to keep serving.
 */
static int shutdown_begin(int *exit_status)
{
	struct sigaction insist = {.sa_handler = on_sigint_insist}, libevent_sa;
	int by_signal = got_signal != 0;

	if (by_signal) {
		persist_temp_path(insist_tmp, sizeof(insist_tmp));
		sigemptyset(&insist.sa_mask);
		sigaction(SIGINT, &insist, &libevent_sa);
	}
	if (!persist_shutdown_saves()) {
		repl_stop(); /* before the workers go: it hands them sockets */
		net_stop();
		*exit_status = persist_shutdown() < 0;
		return 1;
	}
	replm_kill_replicas(); /* a full sync's snapshot ends before the save's */
	net_pause_workers();
	if (persist_shutdown() < 0) {
		srv_log(LL_WARNING,
			"Errors trying to shut down the server. Check the logs for more information.");
		got_signal = 0;
		atomic_store_explicit(&g_srv.shutdown_asap, 0, memory_order_relaxed);
		if (by_signal) /* a SIGINT is a first one again */
			sigaction(SIGINT, &libevent_sa, NULL);
		net_resume_workers(1);
		return 0;
	}
	/* the point of no return: the replication thread hands sockets to
	 * workers (server_hand_fd()), so it stops before net_stop() frees them */
	repl_stop();
	net_stop();
	*exit_status = 0;
	return 1;
}

/* 40 random hex digits and a NUL into out (run_id, master_replid) */
static void make_hexid(char *out)
{
	unsigned char r[20];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, r, sizeof(r)) : -1;

	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 20; i++) {
		unsigned v = n == (ssize_t)sizeof(r) ? r[i] : (unsigned)(rand() & 0xff);

		snprintf(out + i * 2, 3, "%02x", v);
	}
}

static void daemonize(void)
{
	int fd;

	if (fork() != 0)
		exit(0);
	setsid();
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
}

static void write_pidfile(void)
{
	FILE *f;

	if (!g_cfg.pidfile || !g_cfg.pidfile[0])
		return;
	f = fopen(g_cfg.pidfile, "w");
	if (!f) {
		srv_log(LL_WARNING, "Failed to write PID file: %s", strerror(errno));
		return;
	}
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
}

/* What cfg_free_extra() (every option's strings, the modules' fini) leaves. */
static void free_config(void)
{
	free(g_cfg.unixsocket);
	free(g_cfg.config_file);
	cfg_free_extra();
}

/*
 * As Redis: make room for maxclients plus 32 descriptors of our own (listeners,
 * log, eventfds, epoll).  If the hard limit forbids it, take what is allowed
 * and lower maxclients to fit, saying so.
 */
#define RESERVED_FDS 32
static void adjust_open_files_limit(void)
{
	long long maxc = atomic_load(&g_cfg.maxclients);
	rlim_t want = (rlim_t)maxc + RESERVED_FDS;
	struct rlimit rl;
	rlim_t old;
	int err;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		srv_log(LL_WARNING,
			"Unable to obtain the current NOFILE limit (%s), assuming 1024 and setting "
			"the max clients configuration accordingly.",
			strerror(errno));
		atomic_store(&g_cfg.maxclients, 1024 - RESERVED_FDS);
		return;
	}
	old = rl.rlim_cur;
	if (old >= want)
		return;
	rl.rlim_cur = want;
	if (rl.rlim_max < want)
		rl.rlim_max = want; /* allowed as root (CAP_SYS_RESOURCE) */
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0) {
		srv_log(LL_NOTICE,
			"Increased maximum number of open files to %llu (it was originally set "
			"to %llu).",
			(unsigned long long)want, (unsigned long long)old);
		return;
	}
	err = errno;
	/* not root: go as far as the hard limit */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max > old) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			old = rl.rlim_max;
	}
	if (old <= RESERVED_FDS) {
		srv_log(LL_WARNING,
			"Your current 'ulimit -n' of %llu is not enough for the server to start. "
			"Please increase your open file limit to at least %llu. Exiting.",
			(unsigned long long)old, (unsigned long long)want);
		exit(1);
	}
	atomic_store(&g_cfg.maxclients, (long long)old - RESERVED_FDS);
	srv_log(LL_WARNING,
		"You requested maxclients of %lld requiring at least %llu max file descriptors.",
		maxc, (unsigned long long)want);
	srv_log(LL_WARNING,
		"Server can't set maximum open files to %llu because of OS error: %s.",
		(unsigned long long)want, strerror(err));
	srv_log(LL_WARNING,
		"Current maximum open files is %llu. maxclients has been reduced to %lld to "
		"compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.",
		(unsigned long long)old, (long long)old - RESERVED_FDS);
}

static void log_ready(void)
{
	if (g_cfg.port)
		srv_log(LL_NOTICE, "Ready to accept connections tcp on port %d", g_cfg.port);
	if (g_tls.port)
		srv_log(LL_NOTICE, "Ready to accept connections tls on port %d", g_tls.port);
	if (g_cfg.unixsocket)
		srv_log(LL_NOTICE, "Ready to accept connections unix at %s", g_cfg.unixsocket);
}

int main(int argc, char **argv)
{
	int exit_status, ready = 0;
	ssize_t n;

	if (argc == 2 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version"))) {
		printf("rcukv-server v=%s (Redis protocol %s compatible)\n", RCUKV_VERSION,
		       REDIS_COMPAT_VERSION);
		return 0;
	}
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("Usage: rcukv-server [/path/to/rcukv.conf] [--option value ...]\n"
		       "       rcukv-server -v | --version\n"
		       "Options are those of conf/rcukv.conf, e.g. --port 7000 --threads 2\n");
		return 0;
	}
	cfg_defaults();
	cfg_load(argc, argv);
	if (g_cfg.daemonize)
		daemonize();
	srv_log_init(g_cfg.logfile, 0, 'M');
#if defined(SRV_JEMALLOC) && SRV_JEMALLOC
	{
		/* jemalloc's background threads purge freed pages on their own, so
		 * RSS falls back after a burst even when no allocation follows.
		 * Enabled after daemonize(): no allocator thread crosses fork(). */
		bool on = true;

		if (mallctl("background_thread", NULL, NULL, &on, sizeof(on)) != 0)
			srv_log(LL_VERBOSE, "jemalloc background threads unavailable");
	}
#endif
	signal(SIGPIPE, SIG_IGN);

	g_srv.pid = getpid();
	g_srv.start_ms = util_mstime();
	n = readlink("/proc/self/exe", g_srv.executable, sizeof(g_srv.executable) - 1);
	g_srv.executable[n > 0 ? n : 0] = '\0';
	make_hexid(g_srv.runid);
	make_hexid(g_srv.replid);
	srv_log(LL_NOTICE, "rcukv is starting");
	srv_log(LL_NOTICE, "rcukv version=%s (redis %s compatible), bits=%d, pid=%d, just started",
		RCUKV_VERSION, REDIS_COMPAT_VERSION, (int)(sizeof(long) * 8), (int)g_srv.pid);
	if (g_cfg.config_file)
		srv_log(LL_NOTICE, "Configuration loaded from %s", g_cfg.config_file);
	else
		srv_log(LL_WARNING, "Warning: no config file specified, using the default config.");

	adjust_open_files_limit();
	rcu_register_thread();
	db_init();
	replm_init();
	prop_init();
	evict_init();
	persist_init();
	cmd_init();
	module_init();
	g_srv.base = event_base_new();
	if (!g_srv.base)
		srv_die("event_base_new failed");
	net_init();
	if (net_listen() < 0)
		exit(1);
	write_pidfile();

	ev_cron = evtimer_new(g_srv.base, on_cron, NULL);
	ev_sigterm = evsignal_new(g_srv.base, SIGTERM, on_signal, NULL);
	ev_sigint = evsignal_new(g_srv.base, SIGINT, on_signal, NULL);
	ev_shutdown =
	    event_new(g_srv.base, g_srv.notify_fd, EV_READ | EV_PERSIST, on_shutdown_req, NULL);
	event_add(ev_sigterm, NULL);
	event_add(ev_sigint, NULL);
	event_add(ev_shutdown, NULL);
	arm_cron();
	net_start_workers();
	srv_log(LL_NOTICE, "Server initialized with %d worker threads (%s RCU)", g_srv.nworkers,
		RCU_FLAVOR_NAME);
	/* The listeners are open and the workers run, but nothing has been
	 * accepted yet (this thread accepts, in the loop below): the load starts
	 * before any command can run, and those that arrive while it runs get
	 * -LOADING unless flagged CMD_LOADING. */
	mem_startup_done();
	persist_load_start();
	repl_start();

serve:
	while (!got_signal && !atomic_load_explicit(&g_srv.shutdown_asap, memory_order_acquire)) {
		if (!ready && persist_load_poll()) {
			/* as Redis, once the data set is served */
			ready = 1;
			log_ready();
		}
		rcu_quiescent_state();
		rcu_thread_offline();
		event_base_loop(g_srv.base, EVLOOP_ONCE);
		rcu_thread_online();
		if (cron_due) {
			cron_due = 0;
			/* while loading, as Redis: no expiry, eviction or save */
			if (!persist_loading()) {
				/* a replica's keys expire when its master's DELs
				 * arrive (Redis runs activeExpireCycle() only if
				 * iAmMaster()) */
				if (!repl_is_replica())
					db_active_expire_cycle();
				else /* keys clients wrote on a writable replica */
					db_replica_expire_cycle();
				evict_cron();
				persist_cron();
			}
			info_sample_ops();
			arm_cron();
		}
	}

	if (!shutdown_begin(&exit_status))
		goto serve; /* the final save failed: go on serving, as Redis */
	repl_stop();
	replm_stop();
	srv_log(LL_NOTICE, "Closed all clients; freeing the keyspace");
	evict_fini();
	db_fini();
	rcu_barrier();
	pubsub_fini(); /* after the barrier: every closed mailbox's last ref */
	cmd_fini();
	module_fini(); /* after the table, which names the modules' rows */
	script_fini();
	event_free(ev_cron);
	event_free(ev_sigterm);
	event_free(ev_sigint);
	event_free(ev_shutdown);
	event_base_free(g_srv.base);
	close(g_srv.notify_fd);
	free(g_srv.workers);
	if (g_cfg.pidfile && g_cfg.pidfile[0])
		unlink(g_cfg.pidfile);
#if defined(SRV_JEMALLOC) && SRV_JEMALLOC
	{
		/* Stop the allocator's background threads too, so that leak
		 * checkers see every thread gone at exit. */
		bool off = false;

		mallctl("background_thread", NULL, NULL, &off, sizeof(off));
	}
#endif
	srv_log(LL_WARNING, "rcukv is now ready to exit, bye bye...");
	free_config();
	rcu_unregister_thread();
	/* Every callback has run (rcu_barrier() above): end and join the
	 * callback thread too, so valgrind sees no thread of ours at exit. */
	rcu_shutdown();
	return exit_status;
}
