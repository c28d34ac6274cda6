/*
 * module_block.c - the Redis 7.0 module API's blocked clients
 * (docs/modules.md, "Blocked clients"): BlockClient, BlockClientOnKeys,
 * UnblockClient, AbortBlock, SetDisconnectCallback, SignalKeyAsReady and
 * the calls a blocked client's callbacks make (GetBlockedClientPrivateData,
 * GetBlockedClientReadyKey, GetBlockedClientHandle, IsBlockedReplyRequest,
 * IsBlockedTimeoutRequest, BlockedClientDisconnected).
 *
 * The model is block.c's, the one BLPOP uses: BlockClient holds the
 * connection (block_wait(), no key; BlockClientOnKeys: block_wait_keys() on
 * the keys of the client's db) and hangs the handle on its waiter
 * (block_set_owner()).  Whatever ends the wait, a signalled key, the
 * timeout, CLIENT UNBLOCK, or UnblockClient from any thread
 * (block_unblock(id, -1)), dispatches the held command again on the
 * client's worker, and cmd_module_proc() hands that retry to
 * module_block_retry(), which runs the module's reply or timeout callback
 * in place of the command, under the module lock, with the real client, so
 * the callbacks reply straight to it.
 *
 * Who frees a handle (exactly one of them, decided under mbc_lock):
 * - the client's worker, after the reply callback (UnblockClient was
 *   called, or a key served an on-keys client) or after the timeout of an
 *   on-keys client;
 * - the close hook (the client went) if UnblockClient came first, or for an
 *   on-keys client, as Redis frees those itself;
 * - otherwise the client went (or timed out) before the module unblocked a
 *   plain BlockClient handle: the module still owns it, as in Redis, and its
 *   UnblockClient puts it on the orphan list, freed with its private data
 *   (free_privdata, "disconnected") by the next holder of the module lock
 *   (module_block_reap(), from gil_leave(), and before an unload).
 * A module with a handle not yet freed cannot unload (m->nblocked).
 *
 * Thread-safe contexts (GetThreadSafeContext, GetDetachedThreadSafeContext,
 * FreeThreadSafeContext, ThreadSafeContextLock/TryLock/Unlock; helloblock.c's
 * HELLO.KEYS) are at the end: a context made from a handle replies into the
 * handle's reply buffer (a private connection, bc->rc), delivered to the
 * client after the reply callback when the module unblocks it, as Redis's
 * reply_client; one without a handle drops its replies.  Each context runs
 * its RedisModule_Call on a private connection of its own (Redis's
 * thread_safe_ctx_client), only while its thread holds the module lock.
 * A handle a context still names is freed by the last context's free
 * (bc->ntsc).  Tested by tests/server/test_modules_block.py.
 *
 * Not here: BlockedClientMeasureTime*.
 */
#include "server/module.h"

#include "server/block.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/multi.h"
#include "server/reply.h"
#include "server/script.h"
#include "server/log.h"
#include "server/server.h"
#include "server/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OK 0
#define ERR 1

typedef struct RedisModuleCtx Ctx;
typedef struct RedisModuleString Str;
typedef struct RedisModuleBlockedClient Bc;
typedef int (*cmd_cb)(Ctx *ctx, Str **argv, int argc);

struct RedisModuleBlockedClient {
	struct module *m;
	unsigned long long id; /* the client's (CLIENT ID) */
	cmd_cb reply_cb, timeout_cb;
	void (*free_privdata)(Ctx *ctx, void *privdata);
	void (*disconnect_cb)(Ctx *ctx, Bc *bc);
	int on_keys;
	/* mbc_lock: */
	struct conn *c; /* NULL once the client went, timed out or was never held */
	void *privdata;
	int unblocked;	/* UnblockClient (or AbortBlock) was called */
	Bc *onext;	/* the orphan list */
	/* Thread-safe contexts (mbc_lock): the client's db and protocol when
	 * it blocked (set before the handle is returned, then read only); the
	 * reply buffer, made by the first GetThreadSafeContext; how many
	 * contexts name the handle; freed already but for them. */
	int db, resp;
	struct conn *rc;
	int ntsc, dead;
};

static pthread_mutex_t mbc_lock = PTHREAD_MUTEX_INITIALIZER;
/* unblocked after their client went: written under mbc_lock, read without
 * it (relaxed) by module_block_reap()'s quick test */
static _Atomic(Bc *) orphans;
/* On-keys handles this thread's command made but could not block (EXEC,
 * a script): no module unblocks those, so they go when the command ends
 * (module_block_after(); Redis leaks them, and the module's count) */
static _Thread_local Bc *aborted;

static void fake_conn_free(struct conn *c);

/* Free @bc and its private data (the module's free_privdata, in a ctx with
 * @flags).  Under the module lock. */
static void bc_free(Bc *bc, struct conn *c, int flags)
{
	if (bc->privdata && bc->free_privdata) {
		struct RedisModuleCtx *cur = module_current_ctx();
		struct RedisModuleCtx ctx;

		/* the calling callback's ctx if there is one (its client), else
		 * a bare one: free_privdata only frees */
		memset(&ctx, 0, sizeof(ctx));
		ctx.getapifuncptr = cur ? cur->getapifuncptr : NULL;
		ctx.m = bc->m;
		ctx.c = c;
		ctx.bflags = flags;
		ctx.bprivdata = bc->privdata;
		bc->free_privdata(cur ? cur : &ctx, bc->privdata);
	}
	atomic_fetch_sub(&bc->m->nblocked, 1);
	pthread_mutex_lock(&mbc_lock);
	if (bc->ntsc) { /* a thread-safe context still names it: its free frees */
		bc->dead = 1;
		pthread_mutex_unlock(&mbc_lock);
		return;
	}
	pthread_mutex_unlock(&mbc_lock);
	fake_conn_free(bc->rc);
	free(bc);
}

void module_block_after(void)
{
	while (aborted) {
		Bc *bc = aborted;

		aborted = bc->onext;
		bc_free(bc, NULL, 0);
	}
}

void module_block_reap(void)
{
	Bc *list;

	if (!atomic_load_explicit(&orphans, memory_order_relaxed))
		return;
	pthread_mutex_lock(&mbc_lock);
	list = atomic_load_explicit(&orphans, memory_order_relaxed);
	atomic_store_explicit(&orphans, NULL, memory_order_relaxed);
	pthread_mutex_unlock(&mbc_lock);
	while (list) {
		Bc *next = list->onext;

		bc_free(list, NULL, MOD_CTX_BLOCKED_DISCONNECTED);
		list = next;
	}
}

/* -------------------------------------------------------------- blocking */

static Bc *block_common(Ctx *ctx, cmd_cb reply, cmd_cb timeout, void (*free_pd)(Ctx *, void *),
			long long ms, Str **keys, int nkeys, void *privdata)
{
	struct conn *c = ctx ? ctx->c : NULL;
	Bc *bc;

	if (!ctx || !ctx->m || ctx->tsc)
		return NULL; /* a thread-safe context's client is no client */
	bc = xcalloc(1, sizeof(*bc));
	bc->resp = 2;
	bc->m = ctx->m;
	bc->reply_cb = reply;
	bc->timeout_cb = timeout;
	bc->free_privdata = free_pd;
	bc->on_keys = keys != NULL;
	bc->privdata = privdata;
	atomic_fetch_add(&bc->m->nblocked, 1);
	if (!c)
		return bc; /* a timer's: never held, the module unblocks it */
	bc->id = c->id;
	bc->db = atomic_load_explicit(&c->db, memory_order_relaxed);
	bc->resp = c->resp;
	if (script_in_call() || (c->multi && c->multi->in_exec) || !block_allowed(c) ||
	    block_owner(c) || atomic_load(&bc->m->unloading)) {
		/* as Redis: an aborted handle (no client) and an error */
		if (atomic_load(&bc->m->unloading))
			reply_errorf(c, "-ERR rcukv: module '%s' is unloading: it cannot block a client now",
				     bc->m->name ? bc->m->name : "?");
		else
			reply_error(c, script_in_call()
					   ? "Blocking module command called from Lua script"
					   : "Blocking module command called from transaction");
		if (keys) {
			bc->unblocked = 1; /* a late UnblockClient: a no-op */
			bc->onext = aborted;
			aborted = bc;
		}
		return bc;
	}
	if (ms < 0)
		ms = 0;
	if (keys) {
		const void *small[16], **kp = small;
		size_t smalll[16], *kl = smalll;

		if (nkeys > BLOCK_MAX_KEYS)
			nkeys = BLOCK_MAX_KEYS;
		if (nkeys > 16) {
			kp = xmalloc((size_t)nkeys * sizeof(*kp));
			kl = xmalloc((size_t)nkeys * sizeof(*kl));
		}
		for (int i = 0; i < nkeys; i++)
			kp[i] = keys[i]->ptr, kl[i] = keys[i]->len;
		block_wait_keys(c, db_of(c), nkeys, kp, kl, ms);
		if (kp != small) {
			free(kp);
			free(kl);
		}
	} else {
		block_wait_keys(c, NULL, 0, NULL, NULL, ms);
	}
	block_set_owner(c, bc);
	pthread_mutex_lock(&mbc_lock);
	bc->c = c;
	pthread_mutex_unlock(&mbc_lock);
	return bc;
}

static Bc *api_block_client(Ctx *ctx, cmd_cb reply, cmd_cb timeout,
			    void (*free_pd)(Ctx *, void *), long long ms)
{
	return block_common(ctx, reply, timeout, free_pd, ms, NULL, 0, NULL);
}

static Bc *api_block_client_on_keys(Ctx *ctx, cmd_cb reply, cmd_cb timeout,
				    void (*free_pd)(Ctx *, void *), long long ms, Str **keys,
				    int nkeys, void *privdata)
{
	if (!keys || nkeys <= 0) /* Redis blocks on no key: forever */
		return block_common(ctx, reply, timeout, free_pd, ms, NULL, 0, privdata);
	return block_common(ctx, reply, timeout, free_pd, ms, keys, nkeys, privdata);
}

/* Any thread. */
static int api_unblock_client(Bc *bc, void *privdata)
{
	unsigned long long id;
	struct conn *c;

	if (!bc)
		return ERR;
	pthread_mutex_lock(&mbc_lock);
	if (bc->on_keys && (!bc->timeout_cb || bc->unblocked)) {
		int rc = bc->timeout_cb ? OK : ERR; /* as Redis */

		pthread_mutex_unlock(&mbc_lock);
		return rc;
	}
	if (!bc->on_keys)
		bc->privdata = privdata;
	bc->unblocked = 1;
	c = bc->c;
	id = bc->id;
	if (!c) { /* its client is gone: nobody else will free it */
		bc->onext = atomic_load_explicit(&orphans, memory_order_relaxed);
		atomic_store_explicit(&orphans, bc, memory_order_relaxed);
	}
	pthread_mutex_unlock(&mbc_lock);
	if (c)
		block_unblock(id, -1); /* a retry on its worker; if the client
					* closes first, the close hook frees */
	return OK;
}

static int api_abort_block(Bc *bc)
{
	if (!bc)
		return ERR;
	pthread_mutex_lock(&mbc_lock);
	bc->reply_cb = NULL;
	bc->disconnect_cb = NULL;
	pthread_mutex_unlock(&mbc_lock);
	return api_unblock_client(bc, NULL);
}

static void api_set_disconnect_callback(Bc *bc, void (*cb)(Ctx *, Bc *))
{
	if (bc)
		bc->disconnect_cb = cb;
}

static void api_signal_key_as_ready(Ctx *ctx, Str *key)
{
	if (ctx && ctx->c && key)
		block_signal_key(db_of(ctx->c), key->ptr, key->len);
}

/* ----------------------------------------------- the retry, the close */

/* Run @cb (a reply or timeout callback) for @bc's client in @ctx. */
static int run_cb(Ctx *ctx, cmd_cb cb, Bc *bc, int flags, Str **argv, int argc)
{
	int rc;

	ctx->bflags = flags;
	ctx->bc = bc;
	ctx->bprivdata = bc->privdata;
	rc = cb(ctx, argv, argc);
	ctx->bflags = 0;
	ctx->bc = NULL;
	ctx->bprivdata = NULL;
	return rc;
}

/* The retry's end: the client is done with @bc (freed) and unblocked. */
static void retry_end(Ctx *ctx, Bc *bc)
{
	struct conn *rc;

	pthread_mutex_lock(&mbc_lock); /* orders the replies of a thread before */
	rc = bc->rc;
	pthread_mutex_unlock(&mbc_lock);
	if (rc && rc->out.len > rc->out.pos) /* after the reply callback's, as Redis */
		reply_raw(ctx->c, rc->out.buf + rc->out.pos, rc->out.len - rc->out.pos);
	block_set_owner(ctx->c, NULL);
	block_done(ctx->c);
	bc_free(bc, ctx->c, 0);
}

int module_block_retry(Ctx *ctx, Str **argv, int argc)
{
	struct conn *c = ctx->c;
	Bc *bc = c ? block_owner(c) : NULL;
	int unblocked, timed_out;

	if (!bc)
		return 0;
	pthread_mutex_lock(&mbc_lock);
	unblocked = bc->unblocked;
	pthread_mutex_unlock(&mbc_lock);
	timed_out = block_timed_out(c);
	if (unblocked) {
		/* UnblockClient: the reply callback; on keys it means "time
		 * out now" in Redis */
		if (bc->on_keys)
			run_cb(ctx, bc->timeout_cb, bc, MOD_CTX_BLOCKED_TIMEOUT, argv, argc);
		else if (bc->reply_cb)
			run_cb(ctx, bc->reply_cb, bc, MOD_CTX_BLOCKED_REPLY, argv, argc);
		retry_end(ctx, bc);
		return 1;
	}
	if (timed_out) {
		if (timed_out == 2)
			reply_error(ctx->c, "-UNBLOCKED client unblocked via CLIENT UNBLOCK");
		else if (bc->timeout_cb)
			run_cb(ctx, bc->timeout_cb, bc, MOD_CTX_BLOCKED_TIMEOUT, argv, argc);
		else
			reply_null(ctx->c);
		if (bc->on_keys) {
			retry_end(ctx, bc);
		} else { /* the module still owns it: its UnblockClient frees */
			pthread_mutex_lock(&mbc_lock);
			bc->c = NULL;
			pthread_mutex_unlock(&mbc_lock);
			block_set_owner(c, NULL);
			block_done(c);
		}
		return 1;
	}
	if (bc->on_keys && bc->reply_cb) { /* a key was signalled */
		size_t klen = 0;
		const void *k = block_woken_key(c, &klen);
		int rc;

		ctx->bready = k ? module_string_new(NULL, k, klen) : NULL;
		rc = run_cb(ctx, bc->reply_cb, bc, MOD_CTX_BLOCKED_REPLY, argv, argc);
		module_string_free(NULL, ctx->bready);
		ctx->bready = NULL;
		if (rc == OK) {
			retry_end(ctx, bc);
			return 1;
		}
	}
	block_wait_keys(c, NULL, 0, NULL, NULL, 0); /* not served: keep the place */
	return 1;
}

static void closed_cb(Ctx *ctx, void *arg)
{
	Bc *bc = arg;

	ctx->bflags = MOD_CTX_BLOCKED_DISCONNECTED;
	ctx->bc = bc;
	ctx->bprivdata = bc->privdata;
	ctx->c = NULL;
	bc->disconnect_cb(ctx, bc);
}

static void free_cb(Ctx *ctx, void *arg)
{
	(void)ctx;
	bc_free(arg, NULL, MOD_CTX_BLOCKED_DISCONNECTED);
}

/* block.c's close hook: @c closes while a module holds it.  Its worker. */
static void block_closed(struct conn *c, void *owner)
{
	Bc *bc = owner;
	int unblocked, mine;

	block_set_owner(c, NULL);
	pthread_mutex_lock(&mbc_lock);
	bc->c = NULL;
	unblocked = bc->unblocked;
	pthread_mutex_unlock(&mbc_lock);
	if (!unblocked && bc->disconnect_cb)
		module_callback(bc->m, NULL, closed_cb, bc);
	/* UnblockClient came first (its retry will not run now), or Redis
	 * frees an on-keys handle itself; else the module's UnblockClient,
	 * maybe the disconnect callback's own, puts it on the orphan list */
	pthread_mutex_lock(&mbc_lock);
	mine = unblocked || (bc->on_keys && !bc->unblocked);
	if (mine)
		bc->unblocked = 1; /* a late UnblockClient of the module: a no-op */
	pthread_mutex_unlock(&mbc_lock);
	if (mine)
		module_callback(bc->m, NULL, free_cb, bc);
}

void module_block_init(void)
{
	block_set_close_hook(block_closed);
}

/* ---------------------------------------------- inside the callbacks */

static void *api_get_blocked_client_private_data(Ctx *ctx)
{
	return ctx ? ctx->bprivdata : NULL;
}

static Str *api_get_blocked_client_ready_key(Ctx *ctx)
{
	return ctx ? ctx->bready : NULL;
}

static Bc *api_get_blocked_client_handle(Ctx *ctx)
{
	return ctx ? ctx->bc : NULL;
}

static int api_is_blocked_reply_request(Ctx *ctx)
{
	return ctx && (ctx->bflags & MOD_CTX_BLOCKED_REPLY) != 0;
}

static int api_is_blocked_timeout_request(Ctx *ctx)
{
	return ctx && (ctx->bflags & MOD_CTX_BLOCKED_TIMEOUT) != 0;
}

static int api_blocked_client_disconnected(Ctx *ctx)
{
	return ctx && (ctx->bflags & MOD_CTX_BLOCKED_DISCONNECTED) != 0;
}

/* ------------------------------------------------- thread-safe contexts */

/*
 * The contexts live on the heap; a freed one goes to a pool (its memory
 * stays ours, its state MOD_TSC_FREED), so a module that uses a context
 * after freeing it gets refusals (NULL replies, ignored calls), not a use
 * after free, until a new context takes the memory again (after
 * TSC_QUARANTINE later frees).  tsc_lock
 * protects both lists and nests inside nothing.
 */
static pthread_mutex_t tsc_lock = PTHREAD_MUTEX_INITIALIZER;
/* The pool is first in, first out, and a context leaves it only once
 * TSC_QUARANTINE newer ones are behind it: a late call on a freed context
 * finds it freed unless that many contexts were freed since. */
#define TSC_QUARANTINE 1024
static Ctx *tsc_live, *tsc_pool, *tsc_pool_tail; /* tsc_lock */
static int tsc_npool;				/* tsc_lock */
/* The worker the private connections name (stats, a Lua state): touched
 * only under the module lock, but for reply_reserve()'s atomic counter.
 * Not one of g_srv.workers: no event base (nothing blocks on it). */
static struct worker tsc_worker = {.idx = 1023};

/* A private connection for a thread-safe context: no socket, no loop, in
 * the client registry nowhere; in an EXEC as far as block.c can tell, so a
 * blocking command answers at once, as Redis's RM_Call. */
static struct conn *fake_conn_new(int db, unsigned long long id, int resp)
{
	struct conn *c = conn_new(&tsc_worker, -1, 0, NULL, NULL, NULL);

	c->multi = xcalloc(1, sizeof(*c->multi));
	c->multi->in_exec = 1;
	c->authenticated = 1;
	if (id)
		c->id = id;
	c->resp = resp;
	atomic_store_explicit(&c->db, db, memory_order_relaxed);
	db_pin(c);
	return c;
}

static void fake_conn_free(struct conn *c)
{
	if (!c)
		return;
	free(c->multi->w);
	free(c->multi);
	free(c->out.buf);
	free(c->argv_off);
	free(c->argv_len);
	free(c);
}

static Ctx *tsc_new(struct module *m, Bc *bc)
{
	Ctx *ctx = NULL;

	pthread_mutex_lock(&tsc_lock);
	if (tsc_npool > TSC_QUARANTINE && (ctx = tsc_pool)) {
		tsc_pool = ctx->tsc_next;
		tsc_npool--;
	}
	pthread_mutex_unlock(&tsc_lock);
	if (!ctx)
		ctx = xmalloc(sizeof(*ctx));
	memset(ctx, 0, sizeof(*ctx));
	ctx->getapifuncptr = (void *)module_api_get;
	ctx->m = m;
	ctx->tsc = MOD_TSC_LIVE;
	ctx->tsc_bc = bc;
	ctx->c = fake_conn_new(bc ? bc->db : 0, bc ? bc->id : 0, bc ? bc->resp : 2);
	pthread_mutex_lock(&tsc_lock);
	ctx->tsc_next = tsc_live;
	tsc_live = ctx;
	pthread_mutex_unlock(&tsc_lock);
	return ctx;
}

/* Any thread. */
static Ctx *api_get_thread_safe_context(Bc *bc)
{
	if (bc) {
		pthread_mutex_lock(&mbc_lock);
		bc->ntsc++;
		if (!bc->rc)
			bc->rc = fake_conn_new(bc->db, bc->id, bc->resp);
		pthread_mutex_unlock(&mbc_lock);
	}
	return tsc_new(bc ? bc->m : NULL, bc); /* no handle: no module, as Redis */
}

static Ctx *api_get_detached_thread_safe_context(Ctx *ctx)
{
	return tsc_new(ctx ? ctx->m : NULL, NULL);
}

/* Any thread, locked or not: what AutoMemory kept (keys run commands) is
 * released under the module lock. */
static void api_free_thread_safe_context(Ctx *ctx)
{
	Bc *bc;
	int last = 0;

	if (!ctx || ctx->tsc != MOD_TSC_LIVE)
		return; /* freed already, or no thread-safe context */
	module_tsc_lock();
	module_ctx_release(ctx);
	fake_conn_free(ctx->c);
	ctx->c = NULL;
	module_tsc_unlock();
	bc = ctx->tsc_bc;
	pthread_mutex_lock(&tsc_lock);
	ctx->tsc = MOD_TSC_FREED;
	for (Ctx **pp = &tsc_live; *pp; pp = &(*pp)->tsc_next)
		if (*pp == ctx) {
			*pp = ctx->tsc_next;
			break;
		}
	ctx->tsc_next = NULL;
	if (tsc_pool)
		tsc_pool_tail->tsc_next = ctx;
	else
		tsc_pool = ctx;
	tsc_pool_tail = ctx;
	tsc_npool++;
	pthread_mutex_unlock(&tsc_lock);
	if (bc) {
		pthread_mutex_lock(&mbc_lock);
		last = --bc->ntsc == 0 && bc->dead;
		pthread_mutex_unlock(&mbc_lock);
		if (last) {
			fake_conn_free(bc->rc);
			free(bc);
		}
	}
}

void module_tsc_forget(struct module *m)
{
	pthread_mutex_lock(&tsc_lock);
	for (Ctx *ctx = tsc_live; ctx; ctx = ctx->tsc_next)
		if (ctx->m == m)
			ctx->m = NULL;
	pthread_mutex_unlock(&tsc_lock);
}

struct conn *module_reply_conn(Ctx *ctx)
{
	struct conn *rc = NULL;
	Bc *bc;

	if (!ctx->tsc)
		return ctx->c;
	if (ctx->tsc != MOD_TSC_LIVE || !(bc = ctx->tsc_bc))
		return NULL;
	pthread_mutex_lock(&mbc_lock);
	if (!bc->dead && !bc->unblocked)
		rc = bc->rc;
	pthread_mutex_unlock(&mbc_lock);
	return rc;
}

/* The lock is the module lock (module.c); the context is not looked at,
 * as in Redis: the lock is the thread's. */
static void api_thread_safe_context_lock(Ctx *ctx)
{
	(void)ctx;
	module_tsc_lock();
}

static int api_thread_safe_context_try_lock(Ctx *ctx)
{
	(void)ctx;
	return module_tsc_trylock() ? ERR : OK; /* errno EBUSY */
}

static void api_thread_safe_context_unlock(Ctx *ctx)
{
	(void)ctx;
	if (module_tsc_unlock())
		srv_log(LL_WARNING, "module called ThreadSafeContextUnlock without holding the lock: ignored");
}

/* ---------------------------------------------------------- the registry */

static const struct mod_api_fn api[] = {
    MOD_API(BlockClient, api_block_client),
    MOD_API(BlockClientOnKeys, api_block_client_on_keys),
    MOD_API(UnblockClient, api_unblock_client),
    MOD_API(AbortBlock, api_abort_block),
    MOD_API(SetDisconnectCallback, api_set_disconnect_callback),
    MOD_API(SignalKeyAsReady, api_signal_key_as_ready),
    MOD_API(GetBlockedClientPrivateData, api_get_blocked_client_private_data),
    MOD_API(GetBlockedClientReadyKey, api_get_blocked_client_ready_key),
    MOD_API(GetBlockedClientHandle, api_get_blocked_client_handle),
    MOD_API(IsBlockedReplyRequest, api_is_blocked_reply_request),
    MOD_API(IsBlockedTimeoutRequest, api_is_blocked_timeout_request),
    MOD_API(BlockedClientDisconnected, api_blocked_client_disconnected),
    MOD_API(GetThreadSafeContext, api_get_thread_safe_context),
    MOD_API(GetDetachedThreadSafeContext, api_get_detached_thread_safe_context),
    MOD_API(FreeThreadSafeContext, api_free_thread_safe_context),
    MOD_API(ThreadSafeContextLock, api_thread_safe_context_lock),
    MOD_API(ThreadSafeContextTryLock, api_thread_safe_context_try_lock),
    MOD_API(ThreadSafeContextUnlock, api_thread_safe_context_unlock),
};

void *module_block_api(const char *name)
{
	return module_api_find(api, sizeof(api) / sizeof(api[0]), name);
}
