/*
 * persist.h - RDB snapshots, save points, loading at start-up and SHUTDOWN's
 * save (persist.c; the format is rdb.c's).  See the comment at the top of
 * persist.c and docs/snapshots.md.
 */
#ifndef SERVER_PERSIST_H
#define SERVER_PERSIST_H

#include <stdatomic.h>
#include <stddef.h>

#include "server/server.h"

/* persistence (persist.c): RDB snapshots, see the comment at its top.  Its
 * options (save, dir, dbfilename, rdb*, stop-writes-on-bgsave-error) are
 * persist.c's own rows (config.h), registered when persist.c is linked. */
void persist_init(void);
/* Start-up, main thread, after the listeners and workers, before the main
 * loop: starts the loader thread when <dir>/<dbfilename> exists (g_srv.loading
 * 1 until it is done).  A bad dump makes the loader log the reason and ask for
 * shutdown; persist_shutdown() then returns -1 (exit status 1). */
void persist_load_start(void);
/* Main thread: join a loader that has finished; 1 once the data set is served
 * (no dump, or a load that succeeded), else 0. */
int persist_load_poll(void);
/* A replica's full resync (repl.c): the RDB its master sent, at @path,
 * replaces the whole data set; clients get -LOADING meanwhile, as from a
 * Redis replica loading its master's dump.  A key a command wrote meanwhile
 * is replaced, not a duplicate.  Context: a registered thread, online.
 * Return: 0, or -1 (the reason is logged). */
int persist_load_replica(const char *path);
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

/* What a save asked for by a command did (SAVE, BGSAVE: cmd_server.c). */
enum persist_result {
	PERSIST_DONE,	   /* saved */
	PERSIST_STARTED,   /* a background save started */
	PERSIST_SCHEDULED, /* one runs: another follows it (BGSAVE SCHEDULE) */
	PERSIST_BUSY,	   /* one runs: nothing done */
	PERSIST_FAILED	   /* the save, or starting its thread, failed (logged) */
};
/* SAVE: save in the calling worker, offline while it writes (it must hold no
 * table reference).  PERSIST_DONE, _BUSY or _FAILED. */
enum persist_result persist_save_now(void);
/* BGSAVE [SCHEDULE]: start the snapshot thread.  Any worker. */
enum persist_result persist_bgsave(int schedule);
/* LASTSAVE: the unix time of the last successful save (or of start-up). */
long long persist_lastsave(void);
/* rdbcompression (DUMP compresses as a save does).  Any thread. */
int persist_rdbcompression(void);
/* The DUMP payload of @e's value (a string, or a hash as RDB_TYPE_HASH),
 * malloc()ed.  Context: holding @e.  Return: 0 or -ENOMEM. */
struct ht_entry;
/* An RDB of databases 0..@ndbs-1 to @fd (each under its own ht_snapshot()),
 * calling @moment(@arg) at the point in time of db @ndbs-1 (under that
 * table's stripe mutexes), or at once when @ndbs is 0.  replm.c's full sync.
 * Context: as save_now(): a registered QSBR thread, offline.
 * Return: 0 or -errno (-EBUSY: another snapshot of a table runs). */
int persist_write_rdb(int fd, int ndbs, void (*moment)(void *arg), void *arg);
int persist_dump(const struct ht_entry *e, void **out, size_t *outlen);
#define ERR_MISCONF                                                                                \
	"-MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "      \
	"persist to disk. Commands that may modify the data set are disabled, because this "     \
	"instance is configured to report errors during writes if RDB snapshotting fails "       \
	"(stop-writes-on-bgsave-error option). Please check the Redis logs for details about "   \
	"the RDB error."

#endif /* SERVER_PERSIST_H */
