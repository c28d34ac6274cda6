/*
 * module.c - the module loader: MODULE LOAD/LIST/UNLOAD/HELP, loadmodule
 * and enable-module-command, the command rows of the loaded modules, and
 * unload the RCU way (module.h, docs/modules.md).
 *
 * Owns: the list of modules and the array of their command rows, both under
 * mod_lock.  mod_lock is taken offline (rcu_thread_offline() first): its
 * holder waits for grace periods, so no thread may wait for it while online.
 * Workers never take it: they find module commands in the command table
 * (cmd.c's RCU-protected pointer) and call them through module_cmd_proc().
 *
 * Unload, in four phases (the first of Rusty Russell's two answers):
 *   1. deactivate: publish a table without the module's rows; a command
 *      that looks its name up from now on gets "unknown command";
 *   2. synchronize: synchronize_rcu() of the workers' QSBR flavor: every
 *      command that found a row in the old table has finished, or went
 *      offline inside the module (a RedisModule_Call of a command that
 *      waits offline) with in_calls still counting it;
 *   3. drain: wait for in_calls to reach 0, then rcu_barrier(): the old
 *      table, which points at our struct mod_cmd rows, is freed;
 *   4. RedisModule_OnUnload() (which may refuse: the rows come back), then
 *      dlclose() and free the rows.
 * Tortured by tests/server/test_modules.sh (load/unload under callers).
 */
#define RCU_FLAVOR_QSBR
#include "rcu/rcu.h"
#include "server/module.h"

#include "server/block.h"
#include "server/cmd.h"
#include "server/config.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/log.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/util.h"

#include <dlfcn.h>
#include <event2/event.h>
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MOD_OK 0
#define MOD_ERR 1
#define MOD_MAX_LOADLINES 64

typedef int (*onload_fn)(struct RedisModuleCtx *, struct RedisModuleString **, int);

static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;
static struct module *modules; /* mod_lock */
static struct module *loading; /* mod_lock: the module inside OnLoad */

/* module-unload-scheme: 0 rcu (deactivate, synchronize, drain), 1 freeze
 * (stop every worker, check, clean up, resume); module-freeze-timeout: how
 * long a freeze waits for the workers to stop, in ms. */
static _Atomic long long unload_scheme, freeze_timeout_ms = 1000;

/* enable-module-command: 0 no, 1 yes, 2 local (start-up only, as Redis). */
static _Atomic long long enable_module_cmd;
/* loadmodule lines: start-up only, read by module_init() */
static char *load_lines[MOD_MAX_LOADLINES];
static int nload_lines;

/* ------------------------------------------------------------ the rows */

/* Publish the rows of every loaded module.  mod_lock held, online. */
static void publish_rows(void)
{
	int n = 0, i = 0;
	struct cmd *rows;

	for (struct module *m = modules; m; m = m->next)
		n += m->ncmds;
	rows = xcalloc((size_t)(n ? n : 1), sizeof(*rows));
	for (struct module *m = modules; m; m = m->next) {
		for (int j = 0; j < m->ncmds; j++, i++) {
			struct mod_cmd *mc = m->cmds[j];

			rows[i] = (struct cmd){.kind = CMD_ROW_CMD,
					       .name = mc->name,
					       .proc = cmd_module_proc,
					       .arity = -1, /* modules check their own */
					       .flags = mc->flags,
					       .first_key = mc->first,
					       .last_key = mc->last,
					       .key_step = mc->step,
					       .group = "module",
					       .since = "0.0.0",
					       .summary = "",
					       .priv = mc,
					       .module = m->name};
		}
	}
	cmd_set_extra_rows(rows, n);
	free(rows); /* copied into the table */
}

/* A ctx for a call into @m (for @c's command, or NULL), on this thread's
 * stack of them; an unimplemented API call longjmps to @jb (the caller's
 * setjmp, which cannot be in here).  ctx_close() undoes it. */
static void ctx_open(struct RedisModuleCtx *ctx, struct module *m, struct conn *c, jmp_buf *jb,
		     struct RedisModuleCtx **saved)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->getapifuncptr = (void *)module_api_get;
	ctx->m = m;
	ctx->c = c;
	ctx->unimpl_jmp = jb;
	module_ctx_enter(ctx, saved);
}

static void ctx_close(struct RedisModuleCtx *ctx, struct RedisModuleCtx *saved)
{
	ctx->unimpl_jmp = NULL;
	module_ctx_release(ctx);
	module_ctx_leave(saved);
}

/* ---------------------------------------------------- calling a module */

/*
 * Every module command's row names this handler; the row's priv is the
 * module's command.  The row is read once, inside this read-side section;
 * in_calls counts the call before anything can go offline.
 */
/*
 * The module lock, Redis's GIL: Redis runs every module callback on its one
 * thread, and modules keep global state on that promise (hellodict's dict,
 * counters, caches), so rcukv runs at most one module callback at a time,
 * whatever worker it is on: a command's or a timer's.  Recursive per thread
 * (a module command's RedisModule_Call of another module command).  Waited
 * for offline: its holder may wait for a grace period (a RedisModule_Call of
 * FLUSHALL), and a worker waiting online would hold that up.  Module
 * commands from different workers serialize on it; what is not module code
 * (every other command) never takes it.
 */
static _Thread_local int gil_depth;

/*
 * A ticket lock, so that it is fair: with a mutex, a worker whose clients
 * keep it busy with module commands let go and took it again before the
 * woken waiter of the other worker ran, for seconds under load (a test's
 * clients on that worker made 3 calls in 5 s while two others made 40,000).
 * The holder's ticket is gil_serving; it is free when gil_next equals it.
 * A waiter spins a while, then sleeps offline on gil_cv; a leave that sees a
 * sleeper wakes them all (a handful of threads: the workers, module threads,
 * a saver) and the one whose turn it is goes on.  seq_cst on gil_serving
 * and gil_sleepers: a leave either sees the sleeper or the sleeper sees the
 * new ticket before it waits.
 */
static _Atomic unsigned gil_next, gil_serving;
static _Atomic int gil_sleepers;
static pthread_mutex_t gil_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gil_cv = PTHREAD_COND_INITIALIZER;

static int gil_trylock(void)
{
	unsigned s = atomic_load(&gil_serving), n = s;

	return atomic_compare_exchange_strong(&gil_next, &n, s + 1);
}

/* Wait for ticket @t: a while spinning, then (unless @online) offline. */
static void gil_wait(unsigned t, int online)
{
	for (int i = 0; i < 200 || online; i++) {
		if (atomic_load(&gil_serving) == t)
			return;
		sched_yield();
	}
	rcu_thread_offline();
	pthread_mutex_lock(&gil_m);
	atomic_fetch_add(&gil_sleepers, 1);
	while (atomic_load(&gil_serving) != t)
		pthread_cond_wait(&gil_cv, &gil_m);
	atomic_fetch_sub(&gil_sleepers, 1);
	pthread_mutex_unlock(&gil_m);
	rcu_thread_online();
}

static void gil_unlock(void)
{
	atomic_fetch_add(&gil_serving, 1);
	if (atomic_load(&gil_sleepers)) {
		pthread_mutex_lock(&gil_m);
		pthread_cond_broadcast(&gil_cv);
		pthread_mutex_unlock(&gil_m);
	}
}

static void gil_enter(void)
{
	if (gil_depth++)
		return;
	/* a module callback is short: the wait spins a while before sleeping
	 * (a handoff through the condition, offline and back, costs more than
	 * most calls) */
	gil_wait(atomic_fetch_add(&gil_next, 1), 0);
}

/* At the outermost leave, the module values whose frees found the lock
 * taken are freed (module_type.c); then, unlocked, a free queued meanwhile
 * by a thread that could not take it is run by whoever takes it next: the
 * queuer tries after queueing, we try after unlocking, so one of us does. */
static void gil_leave(void)
{
	if (--gil_depth)
		return;
	module_values_reap();
	module_block_reap();
	gil_unlock();
	while (module_values_pending() && gil_trylock()) {
		module_values_reap();
		gil_unlock();
	}
}

int module_gil_try(void)
{
	if (gil_depth || !gil_trylock())
		return 0;
	gil_depth = 1;
	return 1;
}

void module_gil_spin(void)
{
	if (gil_depth++)
		return;
	gil_wait(atomic_fetch_add(&gil_next, 1), 1);
}

void module_gil_enter(void)
{
	gil_enter();
}

void module_gil_leave(void)
{
	gil_leave();
}

int module_gil_held(void)
{
	return gil_depth > 0;
}

/*
 * The lock of thread-safe contexts is this lock.  A module's own thread is
 * no QSBR reader: on its first Lock it registers (rcu_register_thread(),
 * unregistered at its exit by the flavor's thread-exit hook), and it is
 * online from taking the lock to letting it go, so what it runs meanwhile
 * (a RedisModule_Call, a key) is a read-side section like a worker's.
 * Between Unlock and the next Lock it is offline: it holds up no grace
 * period.  tsc_online: the outermost Lock of this thread brought it online.
 */
static _Thread_local int tsc_registered, tsc_online;

static void tsc_rcu_in(void)
{
	if (rcu_qsbr_read_held())
		return; /* an online reader already (a worker, a saver) */
	if (!tsc_registered) {
		rcu_register_thread(); /* online */
		tsc_registered = 1;
	} else {
		rcu_thread_online();
	}
	tsc_online = 1;
}

static void tsc_rcu_out(void)
{
	if (tsc_online) {
		tsc_online = 0;
		rcu_thread_offline();
	}
}

void module_tsc_lock(void)
{
	if (gil_depth) { /* Redis's mutex would deadlock here: nest */
		gil_depth++;
		return;
	}
	tsc_rcu_in();
	gil_enter(); /* waits offline, as a command's */
}

int module_tsc_trylock(void)
{
	if (gil_depth) {
		errno = EBUSY; /* as pthread_mutex_trylock() on Redis's own */
		return -1;
	}
	tsc_rcu_in();
	if (!gil_trylock()) {
		tsc_rcu_out();
		errno = EBUSY;
		return -1;
	}
	gil_depth = 1;
	return 0;
}

int module_tsc_unlock(void)
{
	if (!gil_depth)
		return -1;
	gil_leave(); /* reaps while still online */
	if (!gil_depth)
		tsc_rcu_out();
	return 0;
}

void cmd_module_proc(struct conn *c, int argc)
{
	const struct cmd *k = cmd_running; /* the row dispatch found */
	struct RedisModuleString **argv;
	struct RedisModuleCtx ctx, *saved;
	struct mod_cmd *mc;
	jmp_buf jb;

	if (!k || !k->priv) /* only module rows name this handler */
		srv_die("cmd_module_proc() called for a row that is no module's");
	mc = k->priv;
	/* seq_cst: ordered before this worker can next go offline, so unload's
	 * grace period either waits for this command or sees the count */
	atomic_fetch_add(&mc->m->in_calls, 1);
	argv = xmalloc((size_t)argc * sizeof(*argv));
	for (int j = 0; j < argc; j++)
		argv[j] = module_string_new(NULL, ARGV(c, j), ARGL(c, j));
	gil_enter();
	ctx_open(&ctx, mc->m, c, &jb, &saved);
	ctx.cmdname = mc->name;
	if (setjmp(jb) == 0) {
		if (!block_retry(c) || !module_block_retry(&ctx, argv, argc))
			mc->func(&ctx, argv, argc);
	} else {
		reply_errorf(c, "-ERR rcukv: module '%s' called %s, which rcukv does not implement",
			     mc->m->name ? mc->m->name : "?", ctx.unimpl_name);
	}
	module_block_after();
	ctx_close(&ctx, saved);
	for (int j = 0; j < argc; j++) /* one the module retained is on its list */
		module_string_free(NULL, argv[j]);
	gil_leave();
	free(argv);
	atomic_fetch_sub(&mc->m->in_calls, 1); /* seq_cst: after the module's last instruction */
}

void module_callback(struct module *m, struct conn *c,
		     void (*fn)(struct RedisModuleCtx *ctx, void *arg), void *arg)
{
	struct RedisModuleCtx ctx, *saved;
	jmp_buf jb;

	atomic_fetch_add(&m->in_calls, 1); /* seq_cst: as cmd_module_proc() */
	gil_enter();
	ctx_open(&ctx, m, c, &jb, &saved);
	if (setjmp(jb) == 0)
		fn(&ctx, arg);
	ctx_close(&ctx, saved);
	gil_leave();
	atomic_fetch_sub(&m->in_calls, 1);
}

/* Called by RedisModule_CreateCommand (module_api.c) through this. */
int module_create_command(struct RedisModuleCtx *ctx, const char *name, void *func,
			  unsigned flags, int first, int last, int step);
int module_create_command(struct RedisModuleCtx *ctx, const char *name, void *func,
			  unsigned flags, int first, int last, int step)
{
	struct module *m = ctx->m;
	struct mod_cmd *mc;

	if (!m || m != loading || !name || !*name || strlen(name) > 200)
		return MOD_ERR;
	if (cmd_name_taken(name, strlen(name)))
		return MOD_ERR;
	for (int i = 0; i < m->ncmds; i++)
		if (util_strcaseeq(name, strlen(name), m->cmds[i]->name))
			return MOD_ERR;
	mc = xcalloc(1, sizeof(*mc));
	mc->m = m;
	mc->name = xstrdup(name);
	for (char *p = mc->name; *p; p++) /* the table matches any case */
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
	mc->func = (int (*)(struct RedisModuleCtx *, struct RedisModuleString **, int))func;
	mc->flags = flags;
	mc->first = first;
	mc->last = last;
	mc->step = step;
	m->cmds = xrealloc(m->cmds, (size_t)(m->ncmds + 1) * sizeof(*m->cmds));
	m->cmds[m->ncmds++] = mc;
	return MOD_OK;
}

/* SetModuleAttribs / IsModuleNameBusy (module_api.c). */
void module_set_attribs(struct RedisModuleCtx *ctx, const char *name, int ver);
void module_set_attribs(struct RedisModuleCtx *ctx, const char *name, int ver)
{
	if (!ctx->m || ctx->m->name)
		return;
	ctx->m->name = xstrdup(name);
	ctx->m->ver = ver;
}

int module_name_busy(const char *name);
int module_name_busy(const char *name)
{
	for (struct module *m = modules; m; m = m->next)
		if (m->name && !strcmp(m->name, name))
			return 1;
	return 0;
}


/* ------------------------------------------------------------- timers */

/*
 * A module timer: one event on the event loop of the worker whose client
 * created it (that worker's base has no lock: only its owner adds, and the
 * event fires there).  tm_lock protects every timer's fields below, the
 * list of live timers and each module's ntimers; it nests inside mod_lock
 * and is never held across a call into a module.  A stopped timer stays on
 * its loop (another worker may not touch that base) and frees itself when
 * it fires, without touching its module, which may be gone by then.
 */
struct mod_timer {
	struct mod_timer *next; /* live timers, tm_lock */
	unsigned long long id;
	struct module *m; /* NULL once stopped */
	void (*cb)(struct RedisModuleCtx *, void *);
	void *data;
	_Alignas(max_align_t) unsigned char ev[]; /* a struct event: event_get_struct_event_size() */
};

static pthread_mutex_t tm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mod_timer *timers;      /* tm_lock */
static unsigned long long next_timer; /* tm_lock */

static void timer_fire(evutil_socket_t fd, short what, void *arg)
{
	struct mod_timer *t = arg, **pp;
	struct RedisModuleCtx ctx, *saved;
	struct module *m;
	jmp_buf jb;

	(void)fd, (void)what;
	pthread_mutex_lock(&tm_lock);
	for (pp = &timers; *pp != t; pp = &(*pp)->next)
		;
	*pp = t->next;
	m = t->m;
	if (m) {
		m->ntimers--;
		/* under tm_lock: unload's last check sees the count or no timer */
		atomic_fetch_add(&m->in_calls, 1);
	}
	pthread_mutex_unlock(&tm_lock);
	if (m) {
		gil_enter();
		ctx_open(&ctx, m, NULL, &jb, &saved);
		if (setjmp(jb) == 0)
			t->cb(&ctx, t->data);
		ctx_close(&ctx, saved);
		gil_leave();
		atomic_fetch_sub(&m->in_calls, 1);
	}
	free(t); /* the event has fired: libevent holds it no more */
}

unsigned long long module_timer_create(struct RedisModuleCtx *ctx, long long ms, void *cb,
				       void *data)
{
	struct mod_timer *t;
	struct timeval tv;

	if (!ctx || !ctx->c || !ctx->m || !cb)
		return 0; /* rcukv: a timer needs a client's worker */
	if (ms < 0)
		ms = 0;
	t = xcalloc(1, sizeof(*t) + event_get_struct_event_size());
	t->m = ctx->m;
	t->cb = (void (*)(struct RedisModuleCtx *, void *))cb;
	t->data = data;
	event_assign((struct event *)(void *)t->ev, ctx->c->w->base, -1, 0, timer_fire, t);
	pthread_mutex_lock(&tm_lock);
	t->id = ++next_timer;
	t->next = timers;
	timers = t;
	ctx->m->ntimers++;
	pthread_mutex_unlock(&tm_lock);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	event_add((struct event *)(void *)t->ev, &tv); /* this worker's base: we are its owner */
	return t->id;
}

int module_timer_stop(struct RedisModuleCtx *ctx, unsigned long long id, void **data)
{
	int rc = MOD_ERR;

	pthread_mutex_lock(&tm_lock);
	for (struct mod_timer *t = timers; t; t = t->next) {
		if (t->id != id)
			continue;
		if (t->m && ctx && t->m == ctx->m) {
			if (data)
				*data = t->data;
			t->m->ntimers--;
			t->m = NULL;
			rc = MOD_OK;
		}
		break;
	}
	pthread_mutex_unlock(&tm_lock);
	return rc;
}

/* Main thread at exit: the workers' bases are freed; free what is left. */
static void timers_fini(void)
{
	while (timers) {
		struct mod_timer *t = timers;

		timers = t->next;
		free(t); /* its data is its module's, as in Redis */
	}
}

/* --------------------------------------------------------- load, unload */

static void module_free(struct module *m)
{
	module_tsc_forget(m);
	module_types_free(m);
	module_dict_free_all(m);
	for (int i = 0; i < m->ncmds; i++) {
		free(m->cmds[i]->name);
		free(m->cmds[i]);
	}
	free(m->cmds);
	for (int i = 0; i < m->nargs; i++)
		module_string_free(NULL, m->args[i]);
	free(m->args);
	module_strings_free_all(m); /* after its arguments: they go through the list */
	free(m->name);
	free(m->path);
	free(m);
}

/* Load @path with @argc arguments.  mod_lock held, online (a worker inside
 * MODULE LOAD, or main at start-up).  Return 0, or -1 (logged). */
static int module_load(const char *path, int argc, const char *const *args, size_t *lens)
{
	struct RedisModuleString **argv;
	struct RedisModuleCtx ctx, *saved;
	struct module *m;
	onload_fn onload;
	void *h;
	int rc;
	jmp_buf jb;

	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		srv_log(LL_WARNING, "Module %s failed to load: %s", path, dlerror());
		return -1;
	}
	onload = (onload_fn)(unsigned long)dlsym(h, "RedisModule_OnLoad");
	if (!onload) {
		dlclose(h);
		srv_log(LL_WARNING,
			"Module %s does not export RedisModule_OnLoad() symbol. Module not loaded.",
			path);
		return -1;
	}
	m = xcalloc(1, sizeof(*m));
	m->path = xstrdup(path);
	m->handle = h;
	argv = xmalloc((size_t)(argc ? argc : 1) * sizeof(*argv));
	for (int j = 0; j < argc; j++)
		argv[j] = module_string_new(NULL, args[j], lens[j]);
	loading = m;
	ctx_open(&ctx, m, NULL, &jb, &saved);
	if (setjmp(jb) == 0) {
		rc = onload(&ctx, argv, argc);
	} else {
		srv_log(LL_WARNING, "Module %s called %s, which rcukv does not implement", path,
			ctx.unimpl_name);
		rc = MOD_ERR;
	}
	loading = NULL;
	ctx_close(&ctx, saved);
	m->args = argv; /* MODULE LIST shows them; a module may keep them too */
	m->nargs = argc;
	if (rc != MOD_OK || !m->name) {
		if (rc == MOD_OK) /* OnLoad without RedisModule_Init */
			srv_log(LL_WARNING, "Module %s did not call RedisModule_Init", path);
		else
			srv_log(LL_WARNING, "Module %s initialization failed. Module not loaded", path);
		dlclose(h);
		module_free(m);
		return -1;
	}
	m->next = modules;
	modules = m;
	publish_rows();
	srv_log(LL_NOTICE, "Module '%s' loaded from %s", m->name, path);
	return 0;
}

/* Wait (offline) until no worker is inside @m's functions any more. */
static void drain_calls(struct module *m)
{
	struct timespec ts = {0, 100000};

#ifndef RCUKV_BROKEN_MODULE_DRAIN /* the sleepy torture's own test */
	while (atomic_load(&m->in_calls) != 0) /* seq_cst: pairs with cmd_module_proc() */
		nanosleep(&ts, NULL);
#else
	(void)m, (void)ts;
#endif
}

/* Call @m's RedisModule_OnUnload (if any): MOD_OK or its refusal. */
static int call_onunload(struct module *m)
{
	int (*onunload_ctx)(struct RedisModuleCtx *);
	struct RedisModuleCtx ctx, *saved;
	int rc = MOD_OK;
	jmp_buf jb;

	onunload_ctx = (int (*)(struct RedisModuleCtx *))(unsigned long)dlsym(
	    m->handle, "RedisModule_OnUnload");
	if (onunload_ctx) {
		ctx_open(&ctx, m, NULL, &jb, &saved);
		if (setjmp(jb) == 0)
			rc = onunload_ctx(&ctx);
		else
			rc = MOD_OK; /* it asked for something we lack: unload anyway */
		ctx_close(&ctx, saved);
	}
	return rc;
}

#define ERR_TIMERS                                                                                 \
	"Error unloading module: the module holds timer that is not fired. "                       \
	"Please stop the timer or wait until it fires."
#define ERR_REFUSED "Error unloading module: operation not possible."
#define ERR_BLOCKED                                                                                \
	"Error unloading module: the module has blocked clients. Please wait them unblocked and "  \
	"try again"

/*
 * Unload @m (at *@pp in the list) the second mail's way: every other worker
 * stops between commands (server_freeze()), so none is inside the module or
 * holds the old command table; with the world still, check (timers, calls
 * in flight: a worker offline inside a module command does not stop, so the
 * freeze waits for it or times out), take the rows out, OnUnload, dlclose,
 * and let the workers go.  No grace period and no barrier: the old table's
 * free (call_rcu) reads no row.  The readers pay the whole freeze.
 * mod_lock held, online, on worker @w.
 */
static const char *unload_frozen(struct module **pp, struct module *m, struct worker *w)
{
	const char *err = NULL;

	if (!w)
		return "Error unloading module: the freeze scheme needs a worker";
#ifndef RCUKV_BROKEN_MODULE_UNLOAD /* the torture's own test: it must fail without */
	if (server_freeze(w, (long)atomic_load_explicit(&freeze_timeout_ms, memory_order_relaxed)))
		return "Error unloading module: the workers did not stop within "
		       "module-freeze-timeout";
#endif
	pthread_mutex_lock(&tm_lock);
	if (atomic_load(&m->nblocked))
		err = ERR_BLOCKED;
	else if (m->ntimers)
		err = ERR_TIMERS;
#ifndef RCUKV_BROKEN_MODULE_UNLOAD
	else if (atomic_load(&m->in_calls) != 0)
		err = "Error unloading module: a call of the module is in flight";
#endif
	pthread_mutex_unlock(&tm_lock);
	if (!err) {
		*pp = m->next;
		publish_rows();
		if (call_onunload(m) != MOD_OK) {
			m->next = modules;
			modules = m;
			publish_rows();
			err = ERR_REFUSED;
		}
	}
	if (!err)
		dlclose(m->handle);
#ifndef RCUKV_BROKEN_MODULE_UNLOAD
	server_thaw();
#endif
	if (err)
		return err;
	srv_log(LL_NOTICE, "Module %s unloaded (freeze)", m->name);
	module_free(m);
	return NULL;
}

/* Unload @name.  mod_lock held, online, on worker @w (NULL: not a worker).
 * Return NULL or the error. */
static const char *module_unload(const char *name, struct worker *w)
{
	struct module **pp, *m;

	for (pp = &modules; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->name, name))
			break;
	if (!*pp)
		return "Error unloading module: no such module with that name";
	m = *pp;
	if (m->types) /* as Redis 7.0, whether or not a key holds one */
		return "Error unloading module: the module exports one or more module-side data "
		       "types, can't unload";
	/* From here a call in flight may not block a client (module_block.c:
	 * its retry could find no row).  seq_cst, as BlockClient's count and
	 * test of the flag: either it sees the flag or we see its handle. */
	atomic_store(&m->unloading, 1);
	/* handles whose clients went: theirs is the last reference to the
	 * module's private data (module_block.c) */
	gil_enter();
	module_block_reap();
	gil_leave();
	if (atomic_load(&m->nblocked)) { /* as Redis: wait for them */
		atomic_store(&m->unloading, 0);
		return ERR_BLOCKED;
	}
	if (atomic_load_explicit(&unload_scheme, memory_order_relaxed) == 1) {
		const char *err = unload_frozen(pp, m, w);

		if (err)
			atomic_store(&m->unloading, 0);
		return err;
	}
	/* 1. deactivate */
	*pp = m->next;
	publish_rows();
	/* 2. synchronize, 3. drain: offline, since we wait for the others */
	rcu_thread_offline();
#ifndef RCUKV_BROKEN_MODULE_UNLOAD /* the torture's own test: it must fail without */
	synchronize_rcu();
	drain_calls(m);
	rcu_barrier();
#else
	(void)drain_calls;
#endif
	rcu_thread_online();
	/* Redis refuses while a timer has not fired: no command of the module
	 * can run now, so only a firing timer could add one, and it counts in
	 * in_calls (under tm_lock) before its callback runs */
	for (;;) {
		int busy, pending;

		pthread_mutex_lock(&tm_lock);
		pending = m->ntimers;
		if (atomic_load(&m->nblocked)) /* a call in flight blocked a client */
			pending = -1;
#ifndef RCUKV_BROKEN_MODULE_DRAIN
		busy = atomic_load(&m->in_calls) != 0;
#else
		busy = 0;
#endif
		pthread_mutex_unlock(&tm_lock);
		if (pending) {
			m->next = modules;
			modules = m;
			publish_rows();
			atomic_store(&m->unloading, 0);
			return pending < 0 ? ERR_BLOCKED : ERR_TIMERS;
		}
		if (!busy)
			break;
		rcu_thread_offline();
		drain_calls(m);
		rcu_thread_online();
	}
	/* 4. the module's own clean-up, then unmap it */
	if (call_onunload(m) != MOD_OK) { /* refused: the rows come back */
		m->next = modules;
		modules = m;
		publish_rows();
		atomic_store(&m->unloading, 0);
		return ERR_REFUSED;
	}
	dlclose(m->handle);
	srv_log(LL_NOTICE, "Module %s unloaded", m->name);
	module_free(m);
	return NULL;
}

/* mod_lock, taken offline.  A holder may be freezing the workers
 * (module-unload-scheme freeze): while we wait, we are one of them. */
static void lock_offline(void)
{
	rcu_thread_offline(); /* the holder may wait for a grace period */
	while (pthread_mutex_trylock(&mod_lock)) {
		struct timespec ts = {0, 100000};

		server_freeze_point();
		nanosleep(&ts, NULL);
	}
	rcu_thread_online();
}

/* ------------------------------------------------------------- MODULE */

static const char *const module_help[] = {
    "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LIST",
    "    Return a list of loaded modules.",
    "LOAD <path> [<arg> ...]",
    "    Load a module library from <path>, passing to it any optional arguments.",
    "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
    "    Load a module library from <path>, while passing it module configurations and "
    "optional arguments.",
    "UNLOAD <name>",
    "    Unload a module.",
    "HELP",
    "    Prints this help.",
    NULL,
};

void cmd_module_help(struct conn *c, int argc)
{
	(void)argc;
	reply_help(c, module_help);
}

/* enable-module-command, as Redis's allowProtectedAction(); NULL if allowed */
static int refused(struct conn *c)
{
	if (cmd_protected_allowed(c, atomic_load_explicit(&enable_module_cmd,
							  memory_order_relaxed)))
		return 0;
	reply_error(c, "MODULE command not allowed. If the enable-module-command option is set "
		       "to \"local\", you can run it from a local connection, otherwise you need "
		       "to set this option in the configuration file, and then restart the "
		       "server.");
	return 1;
}

void cmd_module_list(struct conn *c, int argc)
{
	long long n = 0;

	(void)argc;
	lock_offline();
	for (struct module *m = modules; m; m = m->next)
		n++;
	reply_array(c, n);
	for (struct module *m = modules; m; m = m->next) {
		reply_map(c, 4);
		reply_bulk_str(c, "name");
		reply_bulk_str(c, m->name);
		reply_bulk_str(c, "ver");
		reply_int(c, m->ver);
		reply_bulk_str(c, "path");
		reply_bulk_str(c, m->path);
		reply_bulk_str(c, "args");
		reply_array(c, m->nargs);
		for (int i = 0; i < m->nargs; i++)
			reply_bulk(c, m->args[i]->ptr, m->args[i]->len);
	}
	pthread_mutex_unlock(&mod_lock);
}

void module_info(void (*emit)(void *arg, const char *line), void *arg)
{
	char line[512];

	lock_offline();
	for (struct module *m = modules; m; m = m->next) {
		snprintf(line, sizeof(line),
			 "module:name=%s,ver=%d,api=1,filters=0,usedby=[],using=[],options=[]",
			 m->name, m->ver);
		emit(arg, line);
	}
	pthread_mutex_unlock(&mod_lock);
}

void cmd_module_load(struct conn *c, int argc)
{
	int rc;

	if (refused(c))
		return;
	lock_offline();
	rc = module_load(ARGV(c, 2), argc - 3, c->argv + 3, c->argl + 3);
	pthread_mutex_unlock(&mod_lock);
	if (rc)
		reply_error(c, "Error loading the extension. Please check the server logs.");
	else
		reply_ok(c);
}

void cmd_module_unload(struct conn *c, int argc)
{
	const char *err;

	(void)argc;
	if (refused(c))
		return;
	lock_offline();
	err = module_unload(ARGV(c, 2), c->w);
	pthread_mutex_unlock(&mod_lock);
	if (err)
		reply_error(c, err);
	else
		reply_ok(c);
}

/* ----------------------------------------------------- start-up, exit */

void module_init(void)
{
	module_type_init();
	module_block_init();
	for (int i = 0; i < nload_lines; i++) {
		char *line = load_lines[i], *words[64], *sp;
		size_t lens[64];
		int n = 0;

		for (char *w = strtok_r(line, " \t", &sp); w && n < 64; w = strtok_r(NULL, " \t", &sp)) {
			words[n] = w;
			lens[n++] = strlen(w);
		}
		if (!n)
			continue;
		pthread_mutex_lock(&mod_lock);
		if (module_load(words[0], n - 1, (const char *const *)words + 1, lens + 1) != 0) {
			srv_log(LL_WARNING, "Module %s failed to load. Exiting.", words[0]);
			exit(1);
		}
		pthread_mutex_unlock(&mod_lock);
	}
}

void module_fini(void)
{
	/* workers are joined and the old tables freed: nothing runs module
	 * code or points at its rows */
	while (modules) {
		struct module *m = modules;

		modules = m->next;
		dlclose(m->handle);
		module_free(m);
	}
	timers_fini();
}

/* ---------------------------------------------------------- options */

static const char *loadmodule_set(const struct cfg_opt *o, int argc, char **argv,
				  const size_t *lens, int startup, int apply_now)
{
	char buf[4096];
	size_t n = 0;

	(void)o, (void)lens, (void)startup;
	if (argc < 1)
		return "wrong number of arguments";
	if (nload_lines == MOD_MAX_LOADLINES)
		return "too many loadmodule lines";
	if (!apply_now)
		return NULL;
	buf[0] = '\0';
	for (int i = 0; i < argc && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "", argv[i]);
	load_lines[nload_lines++] = xstrdup(buf);
	return NULL;
}

static void loadmodule_get(const struct cfg_opt *o, char *buf, size_t len)
{
	(void)o, (void)len;
	buf[0] = '\0';
}

static void module_cfg_fini(void)
{
	for (int i = 0; i < nload_lines; i++)
		free(load_lines[i]);
	nload_lines = 0;
}

static const char *const protected_modes[] = {"no", "yes", "local", NULL};
static const char *const unload_schemes[] = {"rcu", "freeze", NULL};
static const struct cfg_opt module_rows[] = {
    {.name = "module-unload-scheme", .kind = CFG_ENUM, .mut = CFG_MUTABLE,
     .field = &unload_scheme, .enums = unload_schemes, .def = "rcu"},
    {.name = "module-freeze-timeout", .kind = CFG_INT, .mut = CFG_MUTABLE,
     .field = &freeze_timeout_ms, .min = 1, .max = 3600000, .def = "1000"},
    {.name = "enable-module-command", .kind = CFG_ENUM, .mut = CFG_STARTUP,
     .field = &enable_module_cmd, .enums = protected_modes, .def = "no"},
    {.name = "loadmodule", .kind = CFG_SPECIAL, .mut = CFG_STARTUP, .flags = CFG_HIDDEN,
     .set = loadmodule_set, .get = loadmodule_get},
};

static struct cfg_group module_group = {
    "module", module_rows, (int)(sizeof(module_rows) / sizeof(module_rows[0])), NULL,
    module_cfg_fini, NULL};
CFG_REGISTER(module_group)
