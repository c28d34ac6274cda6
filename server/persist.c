/*
 * persist.c - RDB snapshots of the keyspace (issue 8): SAVE, BGSAVE,
 * LASTSAVE, `save <seconds> <changes>` points run by the cron, save on
 * shutdown, loading the dump at start-up, stop-writes-on-bgsave-error and the
 * INFO persistence fields.  The file format is server/rdb.c's; the
 * point-in-time walk is ht_snapshot() (hashtable/ht.h).
 *
 * No fork.  A save is one ht_snapshot() per database, in index order (each
 * db its own point in time; docs/databases.md), with a SELECTDB before the
 * keys of each non-empty one; loading puts each key in the db its SELECTDB
 * names (a db past `databases` stops the load, as Redis).  BGSAVE runs it on a
 * thread of its own (registered QSBR reader, offline except inside
 * ht_snapshot(), which keeps the flavor's grace periods going while the
 * callback sleeps on write(2)) at nice +10, so that on a busy machine the
 * workers get the CPU first; SAVE and the shutdown save run it on the
 * calling thread.  At most one save runs at a time (P.saving); SAVE and
 * BGSAVE refuse while one runs, BGSAVE SCHEDULE queues one for the cron.
 *
 * Crash safety: the dump is written to "<dir>/temp-<pid>.rdb", fsynced,
 * renamed over "<dir>/<dbfilename>", and the directory is fsynced.  Any error
 * (ENOSPC, EFBIG, EACCES, EIO) unlinks the temporary file: the old dump stays.
 * SIGXFSZ is ignored so a file size limit gives EFBIG, not death.
 *
 * The dirty counter ("rdb_changes_since_last_save") is the sum of the
 * per-worker counters wstats.dirty (SRV_DIRTY() in db.c, counted as Redis
 * 7.0 counts: one per key written) minus the sum read at the moment of the
 * last successful snapshot (the `begun` callback of ht_snapshot()).
 *
 * Loading at start-up runs on a loader thread while the server already
 * serves (see "loading" below): g_srv.loading is 1 until every key is in the
 * table, and cmd_dispatch() answers -LOADING meanwhile to the commands Redis
 * does not flag `loading`, so no write meets the load.  Shutdown during the
 * load stops it and saves nothing; a bad dump makes it exit 1.
 *
 * Locking: p_lock protects struct pstate (P) and the save-point list; it is
 * taken for short sections only, never across disk I/O or a table walk (the
 * longest: joining a BGSAVE thread that has already passed its last use of
 * the lock), and nests inside nothing (config.c's str_lock is never held
 * when calling in).
 * bg_done, bg_abort, keys_processed and keys_total are atomics read without
 * the lock (see each).
 *
 * Tested by tests/server/test_persist.c (round trips through rcukv and
 * redis-server, the sweep test, MSET atomicity, kill -9, corruption, disk
 * full, MISCONF, save points, shutdown saves, serving while loading).
 */
#define RCU_FLAVOR_QSBR
#include "hashtable/ht.h"
#include "rcu/rcu.h"
#include "server/config.h"
#include "server/db.h"
#include "server/lval.h"
#include "server/db_set.h"
#include "server/hval.h"
#include "server/log.h"
#include "server/persist.h"
#include "server/rdb.h"
#include "server/server.h"
#include "server/stats.h"
#include "server/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Redis's CONFIG_BGSAVE_RETRY_DELAY: after a failed BGSAVE the save points
 * start another only this many seconds later. */
#define BGSAVE_RETRY_DELAY 5

struct save_point {
	long long seconds;
	long long changes;
};

/* persist.c's boolean options (rows at the end of the file): CONFIG SET may
 * change them from any worker; read with relaxed loads. */
static struct {
	_Atomic long long rdbcompression, rdbchecksum, stop_writes_on_bgsave_error;
	_Atomic long long rdb_skip_unsupported; /* rdb-skip-unsupported-types */
} popt;

/* Everything under p_lock. */
static pthread_mutex_t p_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pstate {
	struct save_point *pts; /* save points, in the order given */
	int npts;
	int file_points_seen; /* a `save` line of the config file reset the list */
	char *dir;	      /* absolute path */
	char *dbfilename;     /* no '/' */
	int saving;	      /* a SAVE, BGSAVE or shutdown save is running */
	int bg_running;	      /* the BGSAVE thread exists and is not joined */
	int bg_scheduled;     /* BGSAVE SCHEDULE: start one when none runs */
	pthread_t bg_thread;
	long long bg_start_ms;	  /* start of the running BGSAVE */
	long long bg_last_try;	  /* Unix s of the last BGSAVE start */
	int bg_last_ok;		  /* rdb_last_bgsave_status */
	long long bg_last_secs;	  /* rdb_last_bgsave_time_sec, -1 none yet */
	long long last_save;	  /* LASTSAVE: Unix s of the last successful save */
	long long dirty_saved;	  /* dirty_total() at the last saved snapshot */
	unsigned long long saves; /* rdb_saves */
	int shutdown_mode;	  /* -1 NOSAVE, 0 as configured, 1 SAVE */
	int shutdown_force;	  /* SHUTDOWN FORCE: exit even if the save fails */
} P = {.bg_last_ok = 1, .bg_last_secs = -1};

/* Set by the BGSAVE thread as its last action (release; the cron's acquire
 * load pairs with it before pthread_join()). */
static _Atomic int bg_done;
/* Set by the shutdown path: a running walk stops at its next key. */
static _Atomic int bg_abort;
/* INFO current_save_keys_processed / _total: written by the saving thread,
 * read by INFO, relaxed (statistics). */
static _Atomic unsigned long long keys_processed, keys_total;
/* MISCONF state, recomputed under p_lock and read lock-free by every write
 * command (relaxed: a command racing a change may see either answer). */
static _Atomic int writes_denied;

/*
 * The dump is loaded by a thread of its own while the server already
 * listens, as Redis 7.0 serves clients during its load: commands flagged
 * CMD_LOADING run, the others answer ERR_LOADING (cmd_dispatch()), so no
 * write can interleave with the load and no read sees half a data set.
 *
 * Loader state.  The loader thread (load_main) writes the progress atomics
 * below (relaxed: statistics for INFO) and, last, load_state (release); the
 * main thread reads load_state (acquire) before it joins the thread.  Only
 * the main thread touches load_thread and load_running.
 */
enum { LOAD_RUNNING, LOAD_OK, LOAD_FAILED, LOAD_STOPPED };
static pthread_t load_thread;
static int load_running;		  /* main thread: the loader exists, not joined */
static _Atomic int load_state;		  /* LOAD_*, see above */
static _Atomic int load_abort;		  /* shutdown asks the loader to stop at its next key */
static _Atomic long long load_start_time; /* Unix s: loading_start_time */
static _Atomic long long load_total_bytes, load_loaded_bytes, load_used_mem;
/* rdb_last_load_keys_loaded / _expired: counted as keys arrive (Redis's INFO
 * shows the count growing during the load too) */
static _Atomic unsigned long long load_keys_loaded, load_keys_expired;

static long long dirty_total(void)
{
	return (long long)STATS_TOTAL(dirty);
}

static long long unix_now(void)
{
	return (long long)time(NULL);
}

/* p_lock held. */
static void update_writes_denied(void)
{
	int deny = !P.bg_last_ok && P.npts > 0 &&
		   atomic_load_explicit(&popt.stop_writes_on_bgsave_error, memory_order_relaxed);

	atomic_store_explicit(&writes_denied, deny, memory_order_relaxed);
}

int persist_writes_denied(void)
{
	if (SRV_LIKELY(!atomic_load_explicit(&writes_denied, memory_order_relaxed)))
		return 0;
	/* stop-writes-on-bgsave-error may have been switched off since */
	return (int)atomic_load_explicit(&popt.stop_writes_on_bgsave_error, memory_order_relaxed);
}

/* ------------------------------------------------------------- config */

/* Split @s on single spaces as Redis splits a multi-argument CONFIG SET
 * value.  Returns the word count; *words is one allocation to free. */
static int split_spaces(const char *s, char ***words)
{
	size_t n = strlen(s);
	int cnt = n ? 1 : 0;
	char **w, *copy;
	int i = 0;

	for (size_t k = 0; k < n; k++)
		cnt += s[k] == ' ';
	w = xmalloc(sizeof(*w) * (size_t)(cnt + 1) + n + 1);
	copy = (char *)(w + cnt + 1);
	memcpy(copy, s, n + 1);
	if (n) {
		w[i++] = copy;
		for (char *p = copy; *p; p++) {
			if (*p == ' ') {
				*p = '\0';
				w[i++] = p + 1;
			}
		}
	}
	w[i] = NULL;
	*words = w;
	return cnt;
}

/* Redis 7.0's rules: "" alone clears; pairs of seconds >= 1, changes >= 0,
 * strtoll syntax.  In the config file the first `save` line replaces the
 * default and later ones append; CONFIG SET replaces. */
static const char *save_points_set(int argc, char **argv, int from_file, int apply)
{
	struct save_point *pts;
	int clear = 0;

	if (argc == 1 && argv[0][0] == '\0') {
		clear = 1;
		argc = 0;
	}
	if (argc & 1)
		return "Invalid save parameters";
	for (int j = 0; j < argc; j++) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(argv[j], &end, 10);
		if (*end != '\0' || ((j & 1) == 0 && v < 1) || ((j & 1) == 1 && v < 0))
			return "Invalid save parameters";
	}
	if (!apply)
		return NULL;
	pthread_mutex_lock(&p_lock);
	if (!from_file || !P.file_points_seen || clear) {
		P.npts = 0;
		P.file_points_seen = from_file;
	}
	pts = xrealloc(P.pts, sizeof(*pts) * (size_t)(P.npts + argc / 2 + 1));
	for (int j = 0; j < argc; j += 2) {
		pts[P.npts].seconds = strtoll(argv[j], NULL, 10);
		pts[P.npts].changes = strtoll(argv[j + 1], NULL, 10);
		P.npts++;
	}
	P.pts = pts;
	update_writes_denied();
	pthread_mutex_unlock(&p_lock);
	return NULL;
}

static const char *dir_set(const char *path, int apply)
{
	struct stat sb;
	char *abs;

	if (stat(path, &sb) < 0)
		return strerror(errno);
	if (!S_ISDIR(sb.st_mode))
		return strerror(ENOTDIR);
	if (!apply)
		return NULL;
	abs = realpath(path, NULL);
	if (!abs)
		return strerror(errno);
	pthread_mutex_lock(&p_lock);
	free(P.dir);
	P.dir = abs;
	pthread_mutex_unlock(&p_lock);
	return NULL;
}

static const char *dbfilename_set(const char *name, int apply)
{
	if (strchr(name, '/'))
		return "dbfilename can't be a path, just a filename";
	if (!name[0])
		return "dbfilename can't be empty";
	if (!apply)
		return NULL;
	pthread_mutex_lock(&p_lock);
	free(P.dbfilename);
	P.dbfilename = xstrdup(name);
	pthread_mutex_unlock(&p_lock);
	return NULL;
}

static const char *persist_cfg_set(const char *name, int argc, char **argv, int from_file,
				   int apply)
{
	if (!strcmp(name, "save")) {
		/* CONFIG SET gives one value to split; so may --save "900 1" */
		if (argc == 1 && (!from_file || strchr(argv[0], ' '))) {
			char **w;
			int n = split_spaces(argv[0], &w);
			const char *err;

			err = save_points_set(n == 0 ? 1 : n, n == 0 ? (char *[]){""} : w,
					      from_file, apply);
			free(w);
			return err;
		}
		return save_points_set(argc, argv, from_file, apply);
	}
	if (argc != 1)
		return "wrong number of arguments";
	if (!strcmp(name, "dir"))
		return dir_set(argv[0], apply);
	if (!strcmp(name, "dbfilename"))
		return dbfilename_set(argv[0], apply);
	return "unknown option";
}

static void persist_cfg_get(const char *name, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	pthread_mutex_lock(&p_lock);
	if (!strcmp(name, "save")) {
		for (int i = 0; i < P.npts && n < len; i++)
			n += (size_t)snprintf(buf + n, len - n, "%s%lld %lld", i ? " " : "",
					      P.pts[i].seconds, P.pts[i].changes);
	} else if (!strcmp(name, "dir")) {
		snprintf(buf, len, "%s", P.dir ? P.dir : "");
	} else if (!strcmp(name, "dbfilename")) {
		snprintf(buf, len, "%s", P.dbfilename ? P.dbfilename : "");
	}
	pthread_mutex_unlock(&p_lock);
}

static void persist_cfg_defaults(void)
{
	char cwd[PATH_MAX];

	pthread_mutex_lock(&p_lock);
	free(P.pts);
	P.pts = NULL;
	P.npts = 0;
	P.file_points_seen = 0;
	free(P.dir);
	P.dir = xstrdup(getcwd(cwd, sizeof(cwd)) ? cwd : ".");
	free(P.dbfilename);
	P.dbfilename = xstrdup("dump.rdb");
	P.last_save = unix_now();
	pthread_mutex_unlock(&p_lock);
}

/* ------------------------------------------------------------- saving */

struct save_ctx {
	struct ht *ht; /* the table being saved, db @dbnum */
	int dbnum;
	struct rdb_writer *w;
	long long dirty_at; /* dirty_total() at the snapshot's moment */
	uint64_t keys;
	int header_done;
	int err;		  /* first error of the writer, as -errno */
	unsigned int yield_every; /* keys between sched_yield() calls, 0: never */
	int ndbs;		  /* databases walked: 0..ndbs-1 (persist_write_rdb()) */
	int busy_wait;		  /* a table's snapshot taken by another: wait (saves) */
	void (*moment)(void *arg); /* at the moment of db ndbs-1, or NULL */
	void *moment_arg;
};

/* ht_snapshot()'s linearization point: writers are held off.  Reads the
 * per-worker counters only (no lock, no table access). */
static void save_begun(void *arg)
{
	struct save_ctx *s = arg;

	if (s->dirty_at < 0) /* the first db's moment: later writes count unsaved */
		s->dirty_at = dirty_total();
	if (s->moment && s->dbnum == s->ndbs - 1)
		s->moment(s->moment_arg);
}

int persist_dump(const struct ht_entry *e, void **out, size_t *outlen)
{
	size_t n;
	struct rdb_pair *p;
	int r;
	if (db_type(e) == OBJ_MODULE)
		return db_mod_hooks.dump(ht_entry_val(e), persist_rdbcompression(), out, outlen);
	if (db_type(e) == OBJ_LIST) {
		p = db_list_elems(e, &n);
		r = rdb_dump_list(p, n, persist_rdbcompression(), out, outlen);
		free(p);
		return r;
	}

	if (db_type(e) == OBJ_SET) {
		char *arena;

		p = db_set_members(e, &n, &arena);
		r = rdb_dump_set(p, n, persist_rdbcompression(), out, outlen);
		free(p);
		free(arena);
		return r;
	}
	if (db_type(e) == OBJ_ZSET) {
		struct rdb_zel *z = db_zset_elems(e, &n);

		r = rdb_dump_zset(z, n, persist_rdbcompression(), out, outlen);
		free(z);
		return r;
	}
	if (db_type(e) != OBJ_HASH)
		return rdb_dump_string(ht_entry_val(e), ht_entry_vlen(e), persist_rdbcompression(),
				       out, outlen);
	p = db_hash_pairs(e, &n);
	r = rdb_dump_hash(p, n, persist_rdbcompression(), out, outlen);
	free(p);
	return r;
}

/* Hash @e as RDB_TYPE_HASH, in its fields' order. */
static int save_hash(struct rdb_writer *w, const struct ht_entry *e, int64_t expire_ms)
{
	size_t n;
	struct rdb_pair *p = db_hash_pairs(e, &n);
	int r = rdb_write_hash_kv(w, ht_entry_key(e), ht_entry_klen(e), p, n, expire_ms);

	free(p);
	return r;
}

/* Set @e as RDB_TYPE_SET, in its members' order. */
static int save_set(struct rdb_writer *w, const struct ht_entry *e, int64_t expire_ms)
{
	size_t n;
	char *arena;
	struct rdb_pair *m = db_set_members(e, &n, &arena);
	int r = rdb_write_set_kv(w, ht_entry_key(e), ht_entry_klen(e), m, n, expire_ms);

	free(m);
	free(arena);
	return r;
}

/* Sorted set @e as RDB_TYPE_ZSET_2, in (score, member) order. */
static int save_zset(struct rdb_writer *w, const struct ht_entry *e, int64_t expire_ms)
{
	size_t n;
	struct rdb_zel *z = db_zset_elems(e, &n);
	int r = rdb_write_zset_kv(w, ht_entry_key(e), ht_entry_klen(e), z, n, expire_ms);

	free(z);
	return r;
}

/* List @e as Redis 7.0's quicklist of listpacks (type 18).  The snapshot
 * holds @e, so its root and chunks stay valid (lval.h). */
static int save_list(struct rdb_writer *w, const struct ht_entry *e, int64_t expire_ms)
{
	size_t n;
	struct rdb_pair *p = db_list_elems(e, &n);
	int r = rdb_write_list_kv(w, ht_entry_key(e), ht_entry_klen(e), p, n, expire_ms);

	free(p);
	return r;
}

static int save_one(const struct ht_entry *e, void *arg)
{
	struct save_ctx *s = arg;
	int64_t x = ht_entry_expire(e);
	int r;

	if (atomic_load_explicit(&bg_abort, memory_order_relaxed))
		return -ECANCELED;
	if (!s->header_done) {
		/* RESIZEDB is a hint; Redis writes no SELECTDB for an empty db */
		r = rdb_write_db_header(s->w, (uint32_t)s->dbnum, ht_count(s->ht),
					ht_count_expires(s->ht));
		if (r < 0)
			return s->err = r;
		s->header_done = 1;
	}
	if (db_type(e) == OBJ_HASH)
		r = save_hash(s->w, e, x == HT_NO_EXPIRE ? -1 : x);
	else if (db_type(e) == OBJ_LIST)
		r = save_list(s->w, e, x == HT_NO_EXPIRE ? -1 : x);
	else if (db_type(e) == OBJ_SET)
		r = save_set(s->w, e, x == HT_NO_EXPIRE ? -1 : x);
	else if (db_type(e) == OBJ_ZSET)
		r = save_zset(s->w, e, x == HT_NO_EXPIRE ? -1 : x);
	else if (db_type(e) == OBJ_MODULE)
		r = db_mod_hooks.save(s->w, ht_entry_key(e), ht_entry_klen(e), ht_entry_val(e),
				      x == HT_NO_EXPIRE ? -1 : x);
	else
		r = rdb_write_string_kv(s->w, ht_entry_key(e), ht_entry_klen(e), ht_entry_val(e),
					ht_entry_vlen(e), x == HT_NO_EXPIRE ? -1 : x);
	if (r < 0)
		return s->err = r;
	s->keys++;
	atomic_store_explicit(&keys_processed, s->keys, memory_order_relaxed);
	/* Nice +10 is not enough on its own: the scheduler (EEVDF) lets the
	 * running thread finish its slice before a woken worker preempts it, so
	 * on 2 cores a worker with a request waited up to 2.2 ms behind this
	 * thread (perf sched timehist).  Yield about every 50 us of work: a
	 * worker then waits that long at most; with nothing else runnable
	 * sched_yield() returns at once (one syscall per 128 keys). */
	if (s->yield_every && s->keys % s->yield_every == 0)
		sched_yield();
	return 0;
}

/* Every database in index order, each under its own ht_snapshot() (a
 * point in time per db), a SELECTDB before the first key of each non-empty
 * one.  The tables are taken from one db_tables() mapping, so a SWAPDB
 * during the save neither saves a table twice nor skips one.
 * Return: 0, or ht_snapshot()'s error. */
static int save_dbs(struct save_ctx *s)
{
	struct ht **tables = xmalloc((size_t)g_ndbs * sizeof(*tables));
	int r = 0;

	db_tables(tables);
	for (int i = 0; i < s->ndbs && r == 0; i++) {
		s->ht = tables[i];
		s->dbnum = i;
		s->header_done = 0;
		r = ht_snapshot(s->ht, save_one, save_begun, s, NULL);
		/* a replica's full sync (replm.c) walks this table: wait for it,
		 * up to 60 s (it ends its own walk on -EBUSY instead) */
		for (int t = 0; r == -EBUSY && s->busy_wait && t < 600; t++) {
			usleep(100 * 1000);
			r = ht_snapshot(s->ht, save_one, save_begun, s, NULL);
		}
	}
	free(tables);
	if (s->dirty_at < 0)
		s->dirty_at = dirty_total();
	return r;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0 && errno != EINVAL)
		r = -errno;
	close(fd);
	return r;
}

/*
 * One whole save: snapshot -> temp file -> fsync -> rename -> fsync dir.
 * Context: a registered QSBR thread, offline (so that blocking in write,
 * fsync and rename delays no grace period; ht_snapshot() manages its own
 * read-side needs).  Blocks for the whole save.
 * Return: 0 (with *dirty_at and *nkeys filled) or -errno; logged either way.
 */
static void temp_path_in(const char *dir, char *buf, size_t len)
{
	snprintf(buf, len, "%s/temp-%d.rdb", dir, (int)getpid());
}

void persist_temp_path(char *buf, size_t len)
{
	pthread_mutex_lock(&p_lock);
	temp_path_in(P.dir, buf, len);
	pthread_mutex_unlock(&p_lock);
}

static int save_now(long long *dirty_at, uint64_t *nkeys)
{
	char dir[PATH_MAX], final[PATH_MAX + 256], tmp[PATH_MAX + 64];
	struct rdb_opts o = {0};
	struct save_ctx s = {0};
	int fd, r;

	pthread_mutex_lock(&p_lock);
	snprintf(dir, sizeof(dir), "%s", P.dir);
	snprintf(final, sizeof(final), "%s/%s", P.dir, P.dbfilename);
	pthread_mutex_unlock(&p_lock);
	temp_path_in(dir, tmp, sizeof(tmp));
	o.compress = atomic_load_explicit(&popt.rdbcompression, memory_order_relaxed);
	o.checksum = atomic_load_explicit(&popt.rdbchecksum, memory_order_relaxed);
	o.used_mem = (int64_t)db_entry_bytes();
	s.dirty_at = -1;
	s.yield_every = 128;
	s.ndbs = g_ndbs;
	s.busy_wait = 1;
	atomic_store_explicit(&keys_processed, 0, memory_order_relaxed);
	atomic_store_explicit(&keys_total, db_size(), memory_order_relaxed);

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		r = -errno;
		srv_log(LL_WARNING,
			"Failed opening the temp RDB file %s (in server root dir %s) for saving: "
			"%s",
			tmp, dir, strerror(-r));
		return r;
	}
	s.w = rdb_writer_new(fd, &o);
	if (!s.w) {
		r = -errno;
		goto fail;
	}
	r = save_dbs(&s);
	if (r == 0)
		r = rdb_writer_finish(s.w);
	else if (r > 0) /* our callback returns only negatives */
		r = -EIO;
	rdb_writer_free(s.w);
	s.w = NULL;
	if (r < 0)
		goto fail;
	if (fsync(fd) < 0) {
		r = -errno;
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		r = -errno;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, final) < 0) {
		r = -errno;
		srv_log(LL_WARNING,
			"Error moving temp DB file %s on the final destination %s (in server root "
			"dir %s): %s",
			tmp, final, dir, strerror(-r));
		unlink(tmp);
		goto out;
	}
	r = fsync_dir(dir);
	if (r < 0) /* the file is in place; only its durability is in doubt */
		srv_log(LL_WARNING, "Failed to fsync directory %s: %s", dir, strerror(-r));
	r = 0;
	srv_log(LL_NOTICE, "DB saved on disk");
	*dirty_at = s.dirty_at;
	*nkeys = s.keys;
	goto out;
fail:
	if (r == -ECANCELED)
		srv_log(LL_WARNING, "Save of %s aborted (shutdown)", final);
	else
		srv_log(LL_WARNING, "Write error saving DB on disk: %s", strerror(-r));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
out:
	return r;
}

int persist_write_rdb(int fd, int ndbs, void (*moment)(void *arg), void *arg)
{
	struct rdb_opts o = {0};
	struct save_ctx s = {0};
	int r;

	o.compress = atomic_load_explicit(&popt.rdbcompression, memory_order_relaxed);
	o.checksum = atomic_load_explicit(&popt.rdbchecksum, memory_order_relaxed);
	o.used_mem = (int64_t)db_entry_bytes();
	s.dirty_at = -1;
	s.yield_every = 128;
	s.ndbs = ndbs < 0 ? 0 : ndbs > g_ndbs ? g_ndbs : ndbs;
	s.moment = moment;
	s.moment_arg = arg;
	if (s.ndbs == 0 && moment)
		moment(arg);
	s.w = rdb_writer_new(fd, &o);
	if (!s.w)
		return -errno;
	r = save_dbs(&s);
	if (r == 0)
		r = rdb_writer_finish(s.w);
	else if (r > 0)
		r = -EIO;
	rdb_writer_free(s.w);
	return r;
}

/* Bookkeeping after a save of any kind; takes p_lock. */
static void save_done(int r, long long dirty_at, int background, long long start_ms)
{
	pthread_mutex_lock(&p_lock);
	if (r == 0) {
		P.dirty_saved = dirty_at;
		P.last_save = unix_now();
		P.bg_last_ok = 1;
		P.saves++;
	} else if (background && r != -ECANCELED) {
		/* stopped on purpose (FLUSHALL, shutdown) is no failure, as a
		 * Redis child killed by its parent */
		P.bg_last_ok = 0;
	}
	if (background)
		P.bg_last_secs = (util_mstime() - start_ms) / 1000;
	P.saving = 0;
	update_writes_denied();
	pthread_mutex_unlock(&p_lock);
}

static void *bgsave_main(void *arg)
{
	long long start = util_mstime(), dirty_at = 0;
	uint64_t nkeys = 0;
	int r;

	(void)arg;
	/* Background work yields the CPU to the workers: nice +10 for this
	 * thread only (Linux applies PRIO_PROCESS to a thread id).  Best effort. */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10) != 0)
		srv_log(LL_VERBOSE, "BGSAVE thread: setpriority: %s", strerror(errno));
	rcu_register_thread();
	rcu_thread_offline(); /* online only inside ht_snapshot() */
	r = save_now(&dirty_at, &nkeys);
	rcu_thread_online();
	rcu_unregister_thread();
	save_done(r, dirty_at, 1, start);
	if (r == 0)
		srv_log(LL_NOTICE, "Background saving terminated with success");
	else if (r == -ECANCELED)
		srv_log(LL_WARNING, "Background saving stopped before its end");
	else
		srv_log(LL_WARNING, "Background saving error");
	/* Release: our last writes happen-before the cron's join. */
	atomic_store_explicit(&bg_done, 1, memory_order_release);
	return NULL;
}

/* p_lock held, P.saving == 0.  Return 0 or -errno. */
static int bgsave_start_locked(void)
{
	sigset_t all, old;
	int r;

	if (P.bg_running) {
		/* the last BGSAVE thread is past save_done() (P.saving is 0) and
		 * takes p_lock no more: join it here rather than in the cron */
		pthread_t t = P.bg_thread;

		P.bg_running = 0;
		pthread_join(t, NULL);
	}
	P.saving = 1;
	P.bg_running = 1;
	P.bg_scheduled = 0;
	P.bg_start_ms = util_mstime();
	P.bg_last_try = unix_now();
	atomic_store_explicit(&bg_done, 0, memory_order_relaxed);
	atomic_store_explicit(&bg_abort, 0, memory_order_relaxed);
	/* the thread takes no signal: SIGTERM stays with the main thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&P.bg_thread, NULL, bgsave_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		P.saving = 0;
		P.bg_running = 0;
		P.bg_last_ok = 0;
		update_writes_denied();
		srv_log(LL_WARNING, "Can't save in background: thread: %s", strerror(r));
		return -r;
	}
	srv_log(LL_NOTICE, "Background saving started by pid %d", (int)getpid());
	return 0;
}

/* Join a finished BGSAVE thread (@wait: or wait for it).  Main thread (cron,
 * shutdown).  Whoever clears P.bg_running under p_lock joins. */
static void bgsave_reap(int wait)
{
	pthread_t t;

	pthread_mutex_lock(&p_lock);
	if (!P.bg_running || (!wait && !atomic_load_explicit(&bg_done, memory_order_acquire))) {
		pthread_mutex_unlock(&p_lock);
		return;
	}
	t = P.bg_thread;
	P.bg_running = 0;
	pthread_mutex_unlock(&p_lock);
	pthread_join(t, NULL);
}

/* ----------------------------------- what SAVE, BGSAVE and LASTSAVE ask */

enum persist_result persist_save_now(void)
{
	long long dirty_at = 0, start = util_mstime();
	uint64_t nkeys = 0;
	int r;

	pthread_mutex_lock(&p_lock);
	if (P.saving) {
		pthread_mutex_unlock(&p_lock);
		return PERSIST_BUSY;
	}
	P.saving = 1;
	pthread_mutex_unlock(&p_lock);
	/* This worker holds no table reference between commands: offline while
	 * it blocks, as KEYS's scan does. */
	rcu_thread_offline();
	r = save_now(&dirty_at, &nkeys);
	rcu_thread_online();
	save_done(r, dirty_at, 0, start);
	return r == 0 ? PERSIST_DONE : PERSIST_FAILED;
}

enum persist_result persist_bgsave(int schedule)
{
	enum persist_result res;

	pthread_mutex_lock(&p_lock);
	if (P.saving) {
		if (schedule)
			P.bg_scheduled = 1;
		res = schedule ? PERSIST_SCHEDULED : PERSIST_BUSY;
	} else {
		res = bgsave_start_locked() == 0 ? PERSIST_STARTED : PERSIST_FAILED;
	}
	pthread_mutex_unlock(&p_lock);
	return res;
}

long long persist_lastsave(void)
{
	long long t;

	pthread_mutex_lock(&p_lock);
	t = P.last_save;
	pthread_mutex_unlock(&p_lock);
	return t;
}

int persist_rdbcompression(void)
{
	return (int)atomic_load_explicit(&popt.rdbcompression, memory_order_relaxed);
}

/*
 * FLUSHALL with save points, as Redis 7.0: a running save is stopped (its
 * temporary file removed, no error recorded) and the emptied data set is saved
 * at once, so a restart does not bring the flushed keys back.
 * Context: worker thread, after the flush, holding no table reference.
 */
void persist_flushall(void)
{
	long long dirty_at = 0, start = util_mstime();
	uint64_t nkeys = 0;
	int r;

	pthread_mutex_lock(&p_lock);
	r = P.npts;
	pthread_mutex_unlock(&p_lock);
	if (!r)
		return;
	rcu_thread_offline();
	for (;;) {
		atomic_store_explicit(&bg_abort, 1, memory_order_relaxed);
		pthread_mutex_lock(&p_lock);
		if (!P.saving) {
			P.saving = 1;
			pthread_mutex_unlock(&p_lock);
			break;
		}
		pthread_mutex_unlock(&p_lock);
		usleep(1000);
	}
	atomic_store_explicit(&bg_abort, 0, memory_order_relaxed);
	r = save_now(&dirty_at, &nkeys);
	save_done(r, dirty_at, 0, start);
	rcu_thread_online();
}

/* ---------------------------------------------------------------- cron */

void persist_cron(void)
{
	long long now = unix_now(), dirty;

	bgsave_reap(0);
	dirty = dirty_total();
	pthread_mutex_lock(&p_lock);
	if (P.saving || P.bg_running) {
		pthread_mutex_unlock(&p_lock);
		return;
	}
	if (P.bg_scheduled) {
		bgsave_start_locked();
		pthread_mutex_unlock(&p_lock);
		return;
	}
	for (int i = 0; i < P.npts; i++) {
		const struct save_point *sp = &P.pts[i];

		if (dirty - P.dirty_saved >= sp->changes && now - P.last_save > sp->seconds &&
		    (now - P.bg_last_try > BGSAVE_RETRY_DELAY || P.bg_last_ok)) {
			srv_log(LL_NOTICE, "%lld changes in %lld seconds. Saving...", sp->changes,
				sp->seconds);
			bgsave_start_locked();
			break;
		}
	}
	pthread_mutex_unlock(&p_lock);
}

/* ---------------------------------------------------------------- INFO */

void persist_info(char *buf, size_t len)
{
	long long dirty = dirty_total(), now = util_mstime();
	struct ht_stats hs;
	int loading = persist_loading();
	unsigned long long ld_loaded =
	    atomic_load_explicit(&load_keys_loaded, memory_order_relaxed);
	unsigned long long ld_expired =
	    atomic_load_explicit(&load_keys_expired, memory_order_relaxed);
	size_t n;

	db_stats_total(&hs);
	pthread_mutex_lock(&p_lock);
	snprintf(buf, len,
		 "loading:%d\r\n"
		 "async_loading:0\r\n"
		 "current_cow_peak:0\r\n"
		 "current_cow_size:0\r\n"
		 "current_cow_size_age:0\r\n"
		 "current_fork_perc:0.00\r\n"
		 "current_save_keys_processed:%llu\r\n"
		 "current_save_keys_total:%llu\r\n"
		 "rdb_changes_since_last_save:%lld\r\n"
		 "rdb_bgsave_in_progress:%d\r\n"
		 "rdb_last_save_time:%lld\r\n"
		 "rdb_last_bgsave_status:%s\r\n"
		 "rdb_last_bgsave_time_sec:%lld\r\n"
		 "rdb_current_bgsave_time_sec:%lld\r\n"
		 "rdb_saves:%llu\r\n"
		 "rdb_last_cow_size:0\r\n"
		 "rdb_last_load_keys_expired:%llu\r\n"
		 "rdb_last_load_keys_loaded:%llu\r\n"
		 "snapshot_held_bytes:%zu\r\n"
		 "aof_enabled:0\r\n"
		 "aof_rewrite_in_progress:0\r\n"
		 "aof_rewrite_scheduled:0\r\n"
		 "aof_last_rewrite_time_sec:-1\r\n"
		 "aof_current_rewrite_time_sec:-1\r\n"
		 "aof_last_bgrewrite_status:ok\r\n"
		 "aof_rewrites:0\r\n"
		 "aof_rewrites_consecutive_failures:0\r\n"
		 "aof_last_write_status:ok\r\n"
		 "aof_last_cow_size:0\r\n"
		 "module_fork_in_progress:0\r\n"
		 "module_fork_last_cow_size:0\r\n",
		 loading,
		 P.saving ? atomic_load_explicit(&keys_processed, memory_order_relaxed) : 0ULL,
		 P.saving ? atomic_load_explicit(&keys_total, memory_order_relaxed) : 0ULL,
		 dirty - P.dirty_saved, P.bg_running && !atomic_load(&bg_done), P.last_save,
		 P.bg_last_ok ? "ok" : "err", P.bg_last_secs,
		 P.bg_running && !atomic_load(&bg_done) ? (now - P.bg_start_ms) / 1000 : -1LL,
		 P.saves, ld_expired, ld_loaded, hs.snapshot_held_bytes);
	n = strlen(buf);
	pthread_mutex_unlock(&p_lock);
	if (loading && n < len) {
		/* Redis 7.0's loading fields and their arithmetic: a percentage of
		 * the file's bytes, and an ETA of elapsed * remaining / (done + 1)
		 * (1 in the first second) */
		long long total = atomic_load_explicit(&load_total_bytes, memory_order_relaxed);
		long long done = atomic_load_explicit(&load_loaded_bytes, memory_order_relaxed);
		long long t0 = atomic_load_explicit(&load_start_time, memory_order_relaxed);
		long long elapsed = unix_now() - t0, remaining = total > 0 ? total - done : 1;
		double perc = total > 0 ? (double)done / (double)total * 100 : 0;

		snprintf(buf + n, len - n,
			 "loading_start_time:%lld\r\n"
			 "loading_total_bytes:%lld\r\n"
			 "loading_rdb_used_mem:%lld\r\n"
			 "loading_loaded_bytes:%lld\r\n"
			 "loading_loaded_perc:%.2f\r\n"
			 "loading_eta_seconds:%lld\r\n",
			 t0, total, atomic_load_explicit(&load_used_mem, memory_order_relaxed),
			 done, perc, elapsed == 0 ? 1 : elapsed * remaining / (done + 1));
	}
}

/* ------------------------------------------------------------- loading */

struct load_ctx {
	struct ht *ht; /* db @dbnum's table */
	uint32_t dbnum;
	uint64_t loaded, expired;
	int replace; /* a replica's load: a key a client wrote meanwhile is replaced */
	char err[256];
};

/* Keys of db @dbnum follow: load them into its table.  -1 (with the error
 * Redis gives) when the file has more databases than `databases`. */
static int load_db(struct load_ctx *l, uint32_t dbnum)
{
	if (dbnum >= (uint32_t)g_ndbs) {
		snprintf(l->err, sizeof(l->err),
			 "Data file was created with a Redis server configured to handle more "
			 "than %d databases (a key in DB %u)",
			 g_ndbs, dbnum);
		return -1;
	}
	l->dbnum = dbnum;
	l->ht = db_at((int)dbnum);
	return 0;
}

static int load_key_begin(struct load_ctx *l, const struct rdb_kv *kv);
static int load_key_stored(struct load_ctx *l, const struct rdb_kv *kv, int r);

static int load_kv(void *arg, const struct rdb_kv *kv)
{
	struct load_ctx *l = arg;
	int r;

	if ((r = load_key_begin(l, kv)) != 0)
		return r < 0 ? r : 0;
	r = ht_set(l->ht, kv->key, kv->klen, kv->val, kv->vlen,
		   kv->expire_ms < 0 ? HT_NO_EXPIRE : kv->expire_ms, l->replace ? 0 : HT_SET_NX,
		   NULL);
	return load_key_stored(l, kv, r);
}

/* Before storing key @kv: 0 to store it, 1 to drop it (expired), or the
 * error that stops the load. */
static int load_key_begin(struct load_ctx *l, const struct rdb_kv *kv)
{
	if (atomic_load_explicit(&load_abort, memory_order_relaxed))
		return -ECANCELED;
	if (kv->dbnum != l->dbnum && load_db(l, kv->dbnum) < 0)
		return -ERANGE;
	/* This thread holds no table reference between two keys: a quiescent
	 * state per key (a load and a compare unless a grace period waits). */
	rcu_quiescent_state();
	atomic_store_explicit(&load_loaded_bytes, (long long)kv->end, memory_order_relaxed);
	/* A replica's load keeps expired keys, as Redis loads them when it is
	 * not a master: they go when the master's DELs arrive. */
	if (kv->expired && !l->replace) {
		l->expired++;
		atomic_store_explicit(&load_keys_expired, l->expired, memory_order_relaxed);
		return 1;
	}
	return 0;
}

/* After ht_set() of key @kv returned @r: 0, or the error. */
static int load_key_stored(struct load_ctx *l, const struct rdb_kv *kv, int r)
{
	if (r == -EEXIST) {
		snprintf(l->err, sizeof(l->err), "RDB has duplicated key '%.*s' in DB %u",
			 (int)(kv->klen > 128 ? 128 : kv->klen), (const char *)kv->key, l->dbnum);
		return -EEXIST;
	}
	if (r < 0) {
		snprintf(l->err, sizeof(l->err), "cannot store key of %zu bytes: %s", kv->klen,
			 strerror(-r));
		return r;
	}
	l->loaded++;
	atomic_store_explicit(&load_keys_loaded, l->loaded, memory_order_relaxed);
	return 0;
}

/* A built tagged value @v (@sz bytes, freed here) stored NX as key @kv. */
static int load_store_tagged(struct load_ctx *l, const struct rdb_kv *kv, void *v, size_t sz)
{
	int r = ht_set(l->ht, kv->key, kv->klen, v, sz | HT_VAL_TAGGED,
		       kv->expire_ms < 0 ? HT_NO_EXPIRE : kv->expire_ms,
		       l->replace ? 0 : HT_SET_NX, NULL);

	free(v);
	return load_key_stored(l, kv, r);
}

/* A key of a collection type: its value built by @build from @p[@n] and
 * stored NX (unless the load replaces); @dup names Redis's complaint when
 * @build finds two equal fields or members. */
static int load_tagged_kv(struct load_ctx *l, const struct rdb_kv *kv, const struct rdb_pair *p,
			  size_t n, int (*build)(const struct rdb_pair *, size_t, void **, size_t *),
			  const char *dup)
{
	size_t sz;
	void *v;
	int r;

	if ((r = load_key_begin(l, kv)) != 0)
		return r < 0 ? r : 0;
	if (build(p, n, &v, &sz) < 0) {
		snprintf(l->err, sizeof(l->err), "%s (key '%.*s' in DB %u)", dup,
			 (int)(kv->klen > 128 ? 128 : kv->klen), (const char *)kv->key, l->dbnum);
		return -EBADMSG;
	}
	return load_store_tagged(l, kv, v, sz);
}

/* A sorted set key: its value built as zval.h's encoding and stored NX. */
static int load_zset_kv(void *arg, const struct rdb_kv *kv, const struct rdb_zel *z, size_t n,
			int lp)
{
	struct load_ctx *l = arg;
	size_t sz;
	void *v;
	int r;

	if ((r = load_key_begin(l, kv)) != 0)
		return r < 0 ? r : 0;
	if (db_zset_build(z, n, lp, &v, &sz) < 0) {
		snprintf(l->err, sizeof(l->err), "Zset with dup elements (key '%.*s' in DB %u)",
			 (int)(kv->klen > 128 ? 128 : kv->klen), (const char *)kv->key, l->dbnum);
		return -EBADMSG;
	}
	return load_store_tagged(l, kv, v, sz);
}

/* A hash key: its value built as hval.h's encoding (listpack-encoded up to
 * db_hash_lp_entries() fields that all fit) and stored NX. */
static int load_hash_kv(void *arg, const struct rdb_kv *kv, const struct rdb_pair *p, size_t n)
{
	return load_tagged_kv(arg, kv, p, n, db_hash_build, "Hash with dup elements");
}

/* A set key: its value built as sval.h's encoding (an intset when every
 * member is an integer and they are at most set-max-intset-entries) and
 * stored NX. */
static int load_set_kv(void *arg, const struct rdb_kv *kv, const struct rdb_pair *m, size_t n)
{
	return load_tagged_kv(arg, kv, m, n, db_set_build, "Duplicate set members detected");
}

/* A list key (RDB types 1, 14, 18): its value built (lval.h) and stored NX;
 * the entry owns the new version, or it is dropped. */
static int load_list_kv(void *arg, const struct rdb_kv *kv, const struct rdb_pair *p, size_t n)
{
	struct load_ctx *l = arg;
	unsigned char hdr[LV_HDR];
	int r;

	if ((r = load_key_begin(l, kv)) != 0)
		return r < 0 ? r : 0;
	db_list_build(p, n, hdr);
	r = ht_set(l->ht, kv->key, kv->klen, hdr, LV_VLEN,
		   kv->expire_ms < 0 ? HT_NO_EXPIRE : kv->expire_ms, l->replace ? 0 : HT_SET_NX,
		   NULL);
	if (r != 0)
		db_list_drop(hdr);
	return load_key_stored(l, kv, r);
}

/* A module value key (RDB_TYPE_MODULE_2): its type's rdb_load reads it
 * (module_type.c), the entry stored NX owns it, or it is dropped. */
static int load_module_kv(void *arg, const struct rdb_kv *kv, uint64_t id,
			  struct rdb_module_in *in)
{
	struct load_ctx *l = arg;
	unsigned char hdr[DB_MODULE_HDR];
	int r;

	if ((r = load_key_begin(l, kv)) != 0)
		return r < 0 ? r : 1; /* skipped: the reader parses past it */
	if ((r = db_mod_hooks.load(id, in, hdr, l->err, sizeof(l->err))) != 0) {
		rdb_module_fail(in, l->err);
		return r;
	}
	r = ht_set(l->ht, kv->key, kv->klen, hdr, DB_MODULE_VLEN,
		   kv->expire_ms < 0 ? HT_NO_EXPIRE : kv->expire_ms, l->replace ? 0 : HT_SET_NX,
		   NULL);
	if (r != 0)
		db_mod_hooks.free(hdr);
	return load_key_stored(l, kv, r);
}

/* RESIZEDB: size the table once for the keys to come rather than grow it
 * doubling by doubling under the load (each step waits for grace periods).
 * The loader holds no table reference here: offline while it waits. */
static int load_resize(void *arg, uint32_t dbnum, uint64_t keys, uint64_t expires)
{
	(void)arg;
	(void)expires;
	if (dbnum >= (uint32_t)g_ndbs || keys < 4096 || keys > ((uint64_t)1 << 31))
		return 0;
	rcu_thread_offline();
	if (ht_resize(db_at((int)dbnum), (size_t)keys) != 0)
		srv_log(LL_VERBOSE, "could not size the table for %llu keys",
			(unsigned long long)keys);
	rcu_thread_online();
	return 0;
}

static int load_aux(void *arg, const void *name, size_t nlen, const void *val, size_t vlen)
{
	(void)arg;
	(void)nlen;
	(void)vlen;
	if (!strcmp(name, "redis-ver")) {
		srv_log(LL_NOTICE, "Loading RDB produced by version %s", (const char *)val);
	} else if (!strcmp(name, "ctime")) {
		long long age = unix_now() - strtoll(val, NULL, 10);

		srv_log(LL_NOTICE, "RDB age %lld seconds", age < 0 ? 0 : age);
	} else if (!strcmp(name, "used-mem")) {
		long long used = strtoll(val, NULL, 10);

		atomic_store_explicit(&load_used_mem, used, memory_order_relaxed);
		srv_log(LL_NOTICE, "RDB memory usage when created %.2f Mb",
			(double)used / (1024 * 1024));
	}
	return 0;
}

/*
 * The whole load of @path; logs as Redis does.
 * Context: the loader thread, registered and online.
 * Return: LOAD_OK, LOAD_FAILED (logged) or LOAD_STOPPED (load_abort).
 */
static int load_file(const char *path, int replace)
{
	char err[512];
	struct rdb_load_cbs cb = {.string_kv = load_kv,
				  .hash_kv = load_hash_kv,
				  .list_kv = load_list_kv,
				  .module_kv = load_module_kv,
				  .set_kv = load_set_kv,
				  .zset_kv = load_zset_kv,
				  .aux = load_aux,
				  .resize_db = load_resize};
	struct rdb_load_opts lo = {0};
	struct rdb_load_stats st;
	struct load_ctx l = {0};
	long long start = util_ustime();
	int r;

	l.ht = db_at(0);
	l.replace = replace;
	cb.arg = &l;
	lo.skip_unsupported =
	    atomic_load_explicit(&popt.rdb_skip_unsupported, memory_order_relaxed);
	err[0] = '\0';
	r = rdb_load_file(path, &cb, &lo, &st, err, sizeof(err));
	if (r == -ECANCELED && atomic_load_explicit(&load_abort, memory_order_relaxed)) {
		srv_log(LL_NOTICE,
			"Loading stopped by the shutdown after %llu keys; %s is left as it was",
			(unsigned long long)l.loaded, path);
		return LOAD_STOPPED;
	}
	if (r != 0) {
		if (l.err[0])
			srv_log(LL_WARNING, "Fatal error loading the DB %s: %s. Exiting.", path,
				l.err);
		else if (r == -ENOTSUP)
			srv_log(LL_WARNING,
				"Fatal error loading the DB %s: %s (set rdb-skip-unsupported-types "
				"yes to load the string keys and skip the others). Exiting.",
				path, err[0] ? err : strerror(-r));
		else
			srv_log(LL_WARNING, "Fatal error loading the DB %s: %s. Exiting.", path,
				err[0] ? err : strerror(-r));
		return LOAD_FAILED;
	}
	if (st.skipped_total) {
		char kinds[256];
		size_t n = 0;

		kinds[0] = '\0';
		for (int k = 0; k < RDB_KIND_MAX && n < sizeof(kinds); k++)
			if (st.skipped[k])
				n += (size_t)snprintf(kinds + n, sizeof(kinds) - n, "%s%s=%llu",
						      n ? " " : "", rdb_kind_name((enum rdb_kind)k),
						      (unsigned long long)st.skipped[k]);
		srv_log(LL_WARNING,
			"Skipped %llu keys of types rcukv does not hold (%s), as "
			"rdb-skip-unsupported-types says",
			(unsigned long long)st.skipped_total, kinds);
	}
	srv_log(LL_NOTICE, "Done loading RDB, keys loaded: %llu, keys expired: %llu.",
		(unsigned long long)l.loaded, (unsigned long long)l.expired);
	srv_log(LL_NOTICE, "DB loaded from disk: %.3f seconds",
		(double)(util_ustime() - start) / 1e6);
	return LOAD_OK;
}

static void *load_main(void *arg)
{
	char *path = arg;
	int r;

	rcu_register_thread();
	r = load_file(path, 0);
	if (r == LOAD_OK) {
		/* Release: every insert above happens-before a command that
		 * reads 0 here (persist_loading()'s acquire). */
		atomic_store_explicit(&g_srv.loading, 0, memory_order_release);
	}
	rcu_unregister_thread();
	free(path);
	/* Release: our last writes happen-before the main thread's join. */
	atomic_store_explicit(&load_state, r, memory_order_release);
	if (r == LOAD_FAILED)
		server_request_shutdown(); /* persist_shutdown() makes it exit 1 */
	else
		server_wake_main(); /* the main loop says "Ready to accept connections" */
	return NULL;
}

int persist_load_replica(const char *path)
{
	struct stat sb;
	int r;

	if (stat(path, &sb) == 0)
		atomic_store_explicit(&load_total_bytes, (long long)sb.st_size,
				      memory_order_relaxed);
	atomic_store_explicit(&load_start_time, unix_now(), memory_order_relaxed);
	atomic_store_explicit(&load_loaded_bytes, 0, memory_order_relaxed);
	atomic_store_explicit(&g_srv.loading, 1, memory_order_release);
	for (int i = 0; i < g_ndbs; i++) {
		if (ht_flush(db_at(i)) != 0)
			srv_log(LL_WARNING, "could not empty db %d before loading", i);
		db_avg_ttl_reset(i);
	}
	db_replica_keys_forget();
	r = load_file(path, 1);
	/* Release: every insert above happens-before a command that reads 0. */
	atomic_store_explicit(&g_srv.loading, 0, memory_order_release);
	return r == LOAD_OK ? 0 : -1;
}

void persist_load_start(void)
{
	char path[PATH_MAX + 256];
	sigset_t all, old;
	struct stat sb;
	int r;

	pthread_mutex_lock(&p_lock);
	snprintf(path, sizeof(path), "%s/%s", P.dir, P.dbfilename);
	pthread_mutex_unlock(&p_lock);
	if (stat(path, &sb) < 0 && errno == ENOENT)
		return;
	atomic_store_explicit(&load_start_time, unix_now(), memory_order_relaxed);
	atomic_store_explicit(&load_total_bytes, (long long)sb.st_size, memory_order_relaxed);
	atomic_store_explicit(&load_state, LOAD_RUNNING, memory_order_relaxed);
	/* No command has run yet: the main loop, which accepts, has not turned. */
	atomic_store_explicit(&g_srv.loading, 1, memory_order_relaxed);
	/* the thread takes no signal: SIGTERM stays with the main thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&load_thread, NULL, load_main, xstrdup(path));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		errno = r;
		srv_die("pthread_create (loader) failed");
	}
	load_running = 1;
}

/* Main thread.  Join the loader if it is done (@wait: wait for it, offline).
 * Return: its LOAD_* result, LOAD_OK when no load ran. */
static int load_reap(int wait)
{
	static int result = LOAD_OK;

	if (!load_running)
		return result;
	if (!wait && atomic_load_explicit(&load_state, memory_order_acquire) == LOAD_RUNNING)
		return LOAD_RUNNING;
	rcu_thread_offline();
	pthread_join(load_thread, NULL);
	rcu_thread_online();
	load_running = 0;
	result = atomic_load_explicit(&load_state, memory_order_acquire);
	return result;
}

int persist_load_poll(void)
{
	return load_reap(0) == LOAD_OK && !persist_loading();
}

/* ------------------------------------------------------------ shutdown */

void persist_init(void)
{
	/* a file size limit must give EFBIG to the writer, not kill us */
	signal(SIGXFSZ, SIG_IGN);
}

void persist_set_shutdown_mode(int mode, int force)
{
	pthread_mutex_lock(&p_lock);
	P.shutdown_mode = mode;
	P.shutdown_force = force;
	pthread_mutex_unlock(&p_lock);
}

int persist_shutdown_saves(void)
{
	int save;

	if (load_running || persist_loading())
		return 0;
	pthread_mutex_lock(&p_lock);
	save = P.shutdown_mode > 0 || (P.shutdown_mode == 0 && P.npts > 0);
	pthread_mutex_unlock(&p_lock);
	return save;
}

int persist_shutdown(void)
{
	long long dirty_at = 0, start = util_mstime();
	uint64_t nkeys = 0;
	int mode, force, save, busy, r = 0;

	/* A load still running is stopped first.  A data set not wholly loaded
	 * is never saved (Redis turns SHUTDOWN SAVE into NOSAVE while loading):
	 * the dump on disk stays as it was. */
	if (load_running) {
		atomic_store_explicit(&load_abort, 1, memory_order_relaxed);
		load_reap(1);
	}
	if (persist_loading())
		return load_reap(0) == LOAD_FAILED ? -1 : 0;
	/* main thread, holding no table reference: offline while it waits for
	 * the BGSAVE thread and while it saves */
	rcu_thread_offline();
	pthread_mutex_lock(&p_lock);
	mode = P.shutdown_mode;
	force = P.shutdown_force;
	save = mode > 0 || (mode == 0 && P.npts > 0);
	busy = P.bg_running;
	/* as Redis's cancelShutdown(): a later SIGTERM starts from the config */
	P.shutdown_mode = 0;
	P.shutdown_force = 0;
	pthread_mutex_unlock(&p_lock);
	if (busy) {
		srv_log(LL_WARNING, "There is a background save in progress. Stopping it!");
		atomic_store_explicit(&bg_abort, 1, memory_order_relaxed);
		bgsave_reap(1);
		atomic_store_explicit(&bg_abort, 0, memory_order_relaxed);
	}
	if (save) {
		srv_log(LL_NOTICE, "Saving the final RDB snapshot before exiting.");
		pthread_mutex_lock(&p_lock);
		P.saving = 1;
		pthread_mutex_unlock(&p_lock);
		r = save_now(&dirty_at, &nkeys);
		save_done(r, dirty_at, 0, start);
		if (r < 0 && force) {
			srv_log(LL_WARNING, "Error trying to save the DB. Exit anyway.");
			r = 0;
		} else if (r < 0) {
			srv_log(LL_WARNING, "Error trying to save the DB, can't exit.");
		}
	}
	rcu_thread_online();
	return r;
}

static void persist_fini(void)
{
	pthread_mutex_lock(&p_lock);
	free(P.pts);
	P.pts = NULL;
	P.npts = 0;
	free(P.dir);
	P.dir = NULL;
	free(P.dbfilename);
	P.dbfilename = NULL;
	pthread_mutex_unlock(&p_lock);
}

/* ------------------------------------------------------------ options */

static const char *persist_opt_set(const struct cfg_opt *o, int argc, char **argv,
				   const size_t *lens, int startup, int apply)
{
	(void)lens;
	return persist_cfg_set(o->name, argc, argv, startup, apply);
}

static void persist_opt_get(const struct cfg_opt *o, char *buf, size_t len)
{
	persist_cfg_get(o->name, buf, len);
}

#define P_SPECIAL(n, m) { .name = (n), .kind = CFG_SPECIAL, .mut = (m), .set = persist_opt_set, .get = persist_opt_get }
#define P_BOOL(n, m, f, d) { .name = (n), .kind = CFG_BOOL, .mut = (m), .field = &popt.f, .max = 1, .def = (d) }

/* save, dir and dbfilename get their defaults from persist_cfg_defaults() */
static const struct cfg_opt persist_rows[] = {
    P_SPECIAL("save", CFG_MUTABLE),
    P_SPECIAL("dir", CFG_PROTECTED),
    P_SPECIAL("dbfilename", CFG_PROTECTED),
    P_BOOL("rdbcompression", CFG_MUTABLE, rdbcompression, "yes"),
    P_BOOL("rdbchecksum", CFG_STARTUP, rdbchecksum, "yes"),
    P_BOOL("stop-writes-on-bgsave-error", CFG_MUTABLE, stop_writes_on_bgsave_error, "yes"),
    P_BOOL("rdb-skip-unsupported-types", CFG_MUTABLE, rdb_skip_unsupported, "no"),
};

static struct cfg_group persist_group = {"persist", persist_rows,
					 (int)(sizeof(persist_rows) / sizeof(persist_rows[0])),
					 persist_cfg_defaults, persist_fini, NULL};
CFG_REGISTER(persist_group)
