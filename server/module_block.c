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
 * Not here: thread-safe contexts (GetThreadSafeContext and its lock:
 * helloblock.c's HELLO.KEYS), BlockedClientMeasureTime*, and replies from a
 * thread, which Redis keeps in the handle until the unblock.
 */
#include "server/module.h"

#include "server/block.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/multi.h"
#include "server/reply.h"
#include "server/script.h"
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
};

static pthread_mutex_t mbc_lock = PTHREAD_MUTEX_INITIALIZER;
/* unblocked after their client went: written under mbc_lock, read without
 * it (relaxed) by module_block_reap()'s quick test */
static _Atomic(Bc *) orphans;
/* On-keys handles this thread's command made but could not block (EXEC,
 * a script): no module unblocks those, so they go when the command ends
 * (module_block_after(); Redis leaks them, and the module's count) */
static _Thread_local Bc *aborted;

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

	if (!ctx || !ctx->m)
		return NULL;
	bc = xcalloc(1, sizeof(*bc));
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
};

void *module_block_api(const char *name)
{
	return module_api_find(api, sizeof(api) / sizeof(api[0]), name);
}
