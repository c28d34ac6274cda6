/*
 * module_type.c - module data types: RedisModule_CreateDataType, the values
 * of those types in the keyspace, their RDB items (the Save and Load calls), and the
 * db hooks through which the rest of the server handles such a value
 * without knowing what it is (module.h, docs/modules.md "Data types").
 *
 * Owns: the registry of every type (types_lock), and each value's box,
 * struct mod_value: the type, the module's pointer, a reference count.  A
 * key of a module type is a tagged entry whose 24-byte value points at its
 * box (db.h, OBJ_MODULE); a copy of the entry the table makes (an expiry
 * change), RENAME and MOVE take a reference (db_entry_dup()), each entry
 * freed by the table drops one (db_entry_free(), after the entry's grace
 * periods: no lookup, scan or snapshot still reaches it).
 *
 * The module's value is reached only under the module lock (module.c's
 * gil): module commands (GetValue, then changing it in place, as Redis's
 * modules do), the RDB writer's rdb_save, mem_usage, and the type's free.
 * A free that finds the lock taken (the table's reclaimer while a module
 * command runs, or the command's own writes) queues the box on `reap`
 * (reap_lock, a leaf lock); the lock's holder frees the queue before it
 * lets go (module_values_reap()), so a module's free never runs beside one
 * of its commands, and never while a command holds a pointer it got from
 * GetValue: the entry it read cannot be freed before the command's
 * quiescent state, and the free then waits for the lock the command holds.
 *
 * Tested by tests/server/test_modules.sh (Redis's hellotype.c).
 */
#include "server/module.h"

#include "hashtable/ht.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/log.h"
#include "server/rdb.h"
#include "server/server.h"
#include "server/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK 0
#define ERR 1
#define M_WRITE 2

typedef struct RedisModuleCtx Ctx;
typedef struct RedisModuleType Type;
typedef struct RedisModuleKey Key;
typedef struct RedisModuleString Str;

/* RedisModuleIO: one value being saved (@w) or loaded (@in). */
struct RedisModuleIO {
	Type *mt;
	struct rdb_writer *w;
	struct rdb_module_in *in;
	int error;
};

/* The box of one value (see above). */
struct mod_value {
	_Atomic long refs; /* entries holding it: dup and free hooks, seq_cst */
	Type *mt;
	void *value;		/* the module's; under the module lock only */
	struct mod_value *next; /* on `reap` (reap_lock) */
};

static pthread_mutex_t types_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf */
static Type *types;						/* types_lock */

static pthread_mutex_t reap_lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf */
static struct mod_value *reap;				      /* reap_lock */
static _Atomic int nreap; /* relaxed hint for module_values_pending() */

/* ------------------------------------------------------------ the types */

static const char cset[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Redis's moduleTypeEncodeId(): 0 for a bad name or version. */
static uint64_t encode_id(const char *name, int encver)
{
	uint64_t id = 0;

	if (strlen(name) != 9 || encver < 0 || encver > 1023)
		return 0;
	for (int j = 0; j < 9; j++) {
		const char *p = strchr(cset, name[j]);

		if (!p || !name[j])
			return 0;
		id = (id << 6) | (uint64_t)(p - cset);
	}
	return (id << 10) | (uint64_t)encver;
}

static void decode_name(uint64_t id, char out[10])
{
	id >>= 10;
	for (int j = 8; j >= 0; j--, id >>= 6)
		out[j] = cset[id & 63];
	out[9] = '\0';
}

/* The type whose name part of the id is @id's (the version may differ). */
static Type *type_by_id(uint64_t id)
{
	Type *t;

	pthread_mutex_lock(&types_lock);
	for (t = types; t && t->id >> 10 != id >> 10; t = t->gnext)
		;
	pthread_mutex_unlock(&types_lock);
	return t;
}

/* RedisModuleTypeMethods as redismodule.h 7.0 lays it out (version 1..4). */
struct methods {
	uint64_t version;
	void *rdb_load, *rdb_save, *aof_rewrite, *mem_usage, *digest, *free;
};

static Type *api_create_data_type(Ctx *ctx, const char *name, int encver, void *tmp)
{
	const struct methods *tm = tmp;
	uint64_t id = encode_id(name, encver);
	Type *t;

	if (!id || !ctx || !ctx->m)
		return NULL;
	if (!tm || tm->version == 0)
		return NULL;
	pthread_mutex_lock(&types_lock);
	for (t = types; t && strcmp(t->name, name); t = t->gnext)
		;
	if (t) {
		pthread_mutex_unlock(&types_lock);
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	t->id = id;
	t->m = ctx->m;
	memcpy(t->name, name, 10);
	t->rdb_load = (void *(*)(struct RedisModuleIO *, int))(uintptr_t)tm->rdb_load;
	t->rdb_save = (void (*)(struct RedisModuleIO *, void *))(uintptr_t)tm->rdb_save;
	t->aof_rewrite = (void (*)(struct RedisModuleIO *, Str *, void *))(uintptr_t)tm->aof_rewrite;
	t->mem_usage = (size_t(*)(const void *))(uintptr_t)tm->mem_usage;
	t->digest = (void (*)(struct RedisModuleDigest *, void *))(uintptr_t)tm->digest;
	t->free = (void (*)(void *))(uintptr_t)tm->free;
	t->gnext = types;
	types = t;
	pthread_mutex_unlock(&types_lock);
	t->next = ctx->m->types;
	ctx->m->types = t;
	return t;
}

void module_types_free(struct module *m)
{
	while (m->types) {
		Type *t = m->types, **pp;

		m->types = t->next;
		pthread_mutex_lock(&types_lock);
		for (pp = &types; *pp && *pp != t; pp = &(*pp)->gnext)
			;
		if (*pp)
			*pp = t->gnext;
		pthread_mutex_unlock(&types_lock);
		free(t);
	}
}

/* ----------------------------------------------------------- the values */

static struct mod_value *box_of(const void *val)
{
	struct mod_value *mv;

	memcpy(&mv, (const char *)val + 8, sizeof(mv));
	return mv;
}

static void write_hdr(void *hdr, struct mod_value *mv)
{
	uint64_t bytes = sizeof(*mv); /* the module's own memory is not counted */

	memset(hdr, 0, DB_MODULE_HDR);
	((unsigned char *)hdr)[0] = OBJ_MODULE;
	memcpy((char *)hdr + 8, &mv, sizeof(mv));
	memcpy((char *)hdr + 16, &bytes, 8);
}

/* Module lock held. */
static void box_release(struct mod_value *mv)
{
	if (mv->mt->free && mv->value)
		mv->mt->free(mv->value);
	free(mv);
}

void module_values_reap(void)
{
	for (;;) {
		struct mod_value *q;

		pthread_mutex_lock(&reap_lock);
		q = reap;
		reap = NULL;
		atomic_store_explicit(&nreap, 0, memory_order_relaxed);
		pthread_mutex_unlock(&reap_lock);
		if (!q)
			return;
		while (q) {
			struct mod_value *n = q->next;

			box_release(q);
			q = n;
		}
	}
}

int module_values_pending(void)
{
	return atomic_load_explicit(&nreap, memory_order_relaxed) != 0;
}

static void hook_dup(const void *val)
{
	atomic_fetch_add(&box_of(val)->refs, 1);
}

/* Drop a reference to @mv; the last queues it for the type's free. */
static void box_put(struct mod_value *mv)
{
	if (atomic_fetch_sub(&mv->refs, 1) != 1)
		return;
	pthread_mutex_lock(&reap_lock);
	mv->next = reap;
	reap = mv;
	atomic_store_explicit(&nreap, 1, memory_order_relaxed);
	pthread_mutex_unlock(&reap_lock);
	/* the holder, if any, looks at the queue after it unlocks (module.c) */
	if (module_gil_try())
		module_gil_leave(); /* reaps */
}

static void hook_free(const void *val)
{
	box_put(box_of(val));
}

static const char *hook_type_name(const void *val)
{
	return box_of(val)->mt->name;
}

static int save_body(void *arg, struct rdb_writer *w)
{
	struct mod_value *mv = arg;
	struct RedisModuleIO io = {.mt = mv->mt, .w = w};

	if (!mv->mt->rdb_save)
		return 0;
	module_gil_spin(); /* online, inside ht_snapshot(): see docs/modules.md */
	mv->mt->rdb_save(&io, mv->value);
	module_gil_leave();
	return io.error ? -EIO : 0;
}

static int hook_save(struct rdb_writer *w, const void *key, size_t klen, const void *val,
		     int64_t expire_ms)
{
	struct mod_value *mv = box_of(val);

	return rdb_write_module_kv(w, key, klen, mv->mt->id, save_body, mv, expire_ms);
}

/* DUMP, on a worker holding the entry: as hook_mem(); save_body() then
 * finds the lock taken by this thread. */
static int hook_dump(const void *val, int compress, void **out, size_t *outlen)
{
	struct mod_value *mv = box_of(val);
	int r;

	atomic_fetch_add(&mv->refs, 1);
	module_gil_enter();
	r = rdb_dump_module(mv->mt->id, save_body, mv, compress != 0, out, outlen);
	module_gil_leave();
	box_put(mv);
	return r;
}

/* MEMORY USAGE, on a worker holding the entry: a reference of our own
 * keeps the box while we wait for the lock offline. */
static size_t hook_mem(const void *val)
{
	struct mod_value *mv = box_of(val);
	size_t n = 0;

	if (!mv->mt->mem_usage)
		return 0;
	atomic_fetch_add(&mv->refs, 1);
	module_gil_enter();
	n = mv->mt->mem_usage(mv->value);
	module_gil_leave();
	box_put(mv); /* our reference (the entry may be gone by now) */
	return n;
}

static int hook_load(uint64_t id, struct rdb_module_in *in, void *hdr, char *err, size_t errlen)
{
	Type *t = type_by_id(id);
	struct RedisModuleIO io = {.in = in};
	struct mod_value *mv;
	char name[10];
	void *v;

	decode_name(id, name);
	if (!t) {
		snprintf(err, errlen,
			 "The RDB file contains module data I can't load: no matching module type '%s'",
			 name);
		return -ENOENT;
	}
	io.mt = t;
	module_gil_enter(); /* the loader thread or a worker (RESTORE), online */
	v = t->rdb_load ? t->rdb_load(&io, (int)(id & 1023)) : NULL;
	if (v && io.error && t->free) {
		t->free(v);
		v = NULL;
	}
	module_gil_leave();
	if (!v) {
		snprintf(err, errlen,
			 "The RDB file contains module data for the module type '%s', that the "
			 "responsible module is not able to load. Check for modules log above for "
			 "additional clues.",
			 name);
		return -EBADMSG;
	}
	mv = xcalloc(1, sizeof(*mv));
	atomic_init(&mv->refs, 1);
	mv->mt = t;
	mv->value = v;
	write_hdr(hdr, mv);
	return 0;
}

void module_type_init(void)
{
	static const struct db_module_hooks h = {
	    .dup = hook_dup,
	    .free = hook_free,
	    .type_name = hook_type_name,
	    .save = hook_save,
	    .dump = hook_dump,
	    .mem = hook_mem,
	    .load = hook_load,
	};

	db_set_module_hooks(&h);
}

/* ------------------------------------------------------- key functions */

/* The entry of @k's key in its client's db, if it holds a module value. */
static const struct ht_entry *module_entry(Key *k)
{
	const struct ht_entry *e;

	if (!k || !k->ctx || !k->ctx->c)
		return NULL;
	e = ht_find_rcu(db_of(k->ctx->c), k->name->ptr, k->name->len);
	return e && db_type(e) == OBJ_MODULE ? e : NULL;
}

/* Online, inside the command's read-side section: the entry found is
 * valid until the reference is taken, with no quiescent state between. */
struct mod_value *module_key_box(Key *k)
{
	const struct ht_entry *e;

	if (!k)
		return NULL;
	if (k->mv)
		return k->mv;
	if (!(e = module_entry(k)))
		return NULL;
	k->mv = box_of(ht_entry_val(e));
	atomic_fetch_add(&k->mv->refs, 1);
	return k->mv;
}

void module_key_release(Key *k)
{
	if (k && k->mv) {
		box_put(k->mv);
		k->mv = NULL;
	}
}

static Type *api_type_get_type(Key *k)
{
	struct mod_value *mv = module_key_box(k);

	return mv ? mv->mt : NULL;
}

static void *api_type_get_value(Key *k)
{
	struct mod_value *mv = module_key_box(k);

	return mv ? mv->value : NULL;
}

/* Redis's RM_ModuleTypeSetValue(): the key's old value and TTL go, @value
 * is stored (and owned by the key from now on). */
static int api_type_set_value(Key *k, Type *t, void *value)
{
	unsigned char hdr[DB_MODULE_HDR];
	struct mod_value *mv;
	int rc;

	if (!k || !(k->mode & M_WRITE) || !k->ctx->c || !t)
		return ERR;
	free(k->dma); /* a StringDMA copy must not be written back over it */
	k->dma = NULL;
	k->dirty = 0;
	mv = xcalloc(1, sizeof(*mv));
	atomic_init(&mv->refs, 1);
	mv->mt = t;
	mv->value = value;
	write_hdr(hdr, mv);
	rc = ht_set(db_of(k->ctx->c), k->name->ptr, k->name->len, hdr, DB_MODULE_VLEN,
		    HT_NO_EXPIRE, 0, NULL);
	if (rc < 0) {
		free(mv); /* the value stays the module's */
		return ERR;
	}
	module_key_release(k);
	atomic_fetch_add(&mv->refs, 1); /* the key's own, as module_key_box() */
	k->mv = mv;
	SRV_DIRTY(k->ctx->c, 1);
	return OK;
}

/* ------------------------------------------------------------ RDB items */

static void api_save_unsigned(struct RedisModuleIO *io, uint64_t v)
{
	if (io->w)
		rdb_module_put_uint(io->w, v);
}

static void api_save_signed(struct RedisModuleIO *io, int64_t v)
{
	if (io->w)
		rdb_module_put_sint(io->w, v);
}

static void api_save_string_buffer(struct RedisModuleIO *io, const char *p, size_t n)
{
	if (io->w)
		rdb_module_put_string(io->w, p, n);
}

static void api_save_string(struct RedisModuleIO *io, Str *s)
{
	api_save_string_buffer(io, s->ptr, s->len);
}

static void api_save_double(struct RedisModuleIO *io, double d)
{
	if (io->w)
		rdb_module_put_double(io->w, d);
}

static void api_save_float(struct RedisModuleIO *io, float f)
{
	if (io->w)
		rdb_module_put_float(io->w, f);
}

/* A read that fails marks the IO: later reads answer 0 and the load fails
 * (Redis's modules without REDISMODULE_OPTIONS_HANDLE_IO_ERRORS panic). */
static int io_ok(struct RedisModuleIO *io, int rc)
{
	if (rc != 0)
		io->error = 1;
	return !io->error;
}

static uint64_t api_load_unsigned(struct RedisModuleIO *io)
{
	uint64_t v = 0;

	if (!io->in || io->error || !io_ok(io, rdb_module_get_uint(io->in, &v)))
		return 0;
	return v;
}

static int64_t api_load_signed(struct RedisModuleIO *io)
{
	int64_t v = 0;

	if (!io->in || io->error || !io_ok(io, rdb_module_get_sint(io->in, &v)))
		return 0;
	return v;
}

static char *api_load_string_buffer(struct RedisModuleIO *io, size_t *lenp)
{
	char *p = NULL;
	size_t n = 0;

	if (!io->in || io->error || !io_ok(io, rdb_module_get_string(io->in, &p, &n)))
		return NULL;
	if (lenp)
		*lenp = n;
	return p; /* malloc()ed: RedisModule_Free frees it */
}

static Str *api_load_string(struct RedisModuleIO *io)
{
	size_t n;
	char *p = api_load_string_buffer(io, &n);
	Str *s;

	if (!p)
		return NULL;
	s = module_string_made(NULL, p, n);
	free(p);
	return s;
}

static double api_load_double(struct RedisModuleIO *io)
{
	double d = 0;

	if (!io->in || io->error || !io_ok(io, rdb_module_get_double(io->in, &d)))
		return 0;
	return d;
}

static float api_load_float(struct RedisModuleIO *io)
{
	float f = 0;

	if (!io->in || io->error || !io_ok(io, rdb_module_get_float(io->in, &f)))
		return 0;
	return f;
}

static int api_is_io_error(struct RedisModuleIO *io)
{
	return io->error;
}

/* --------------------------------------------- accepted, with nothing to do */

/* rcukv has no AOF (so aof_rewrite is never called), no DEBUG DIGEST (so
 * digest is never called) and no module blocking API (no client waits on
 * a key for a module): these answer as the calls they are, doing nothing. */
static void api_emit_aof(struct RedisModuleIO *io, const char *cmd, const char *fmt, ...)
{
	(void)io, (void)cmd, (void)fmt;
}

static void api_digest_add_ll(struct RedisModuleDigest *md, long long v)
{
	(void)md, (void)v;
}

static void api_digest_add_buffer(struct RedisModuleDigest *md, const char *p, size_t n)
{
	(void)md, (void)p, (void)n;
}

static void api_digest_end(struct RedisModuleDigest *md)
{
	(void)md;
}


/* ---------------------------------------------------------- the registry */

static const struct mod_api_fn api[] = {
    MOD_API(CreateDataType, api_create_data_type),
    MOD_API(ModuleTypeSetValue, api_type_set_value),
    MOD_API(ModuleTypeGetType, api_type_get_type),
    MOD_API(ModuleTypeGetValue, api_type_get_value),
    MOD_API(SaveUnsigned, api_save_unsigned),
    MOD_API(LoadUnsigned, api_load_unsigned),
    MOD_API(SaveSigned, api_save_signed),
    MOD_API(LoadSigned, api_load_signed),
    MOD_API(SaveString, api_save_string),
    MOD_API(SaveStringBuffer, api_save_string_buffer),
    MOD_API(LoadString, api_load_string),
    MOD_API(LoadStringBuffer, api_load_string_buffer),
    MOD_API(SaveDouble, api_save_double),
    MOD_API(LoadDouble, api_load_double),
    MOD_API(SaveFloat, api_save_float),
    MOD_API(LoadFloat, api_load_float),
    MOD_API(IsIOError, api_is_io_error),
    MOD_API(EmitAOF, api_emit_aof),
    MOD_API(DigestAddLongLong, api_digest_add_ll),
    MOD_API(DigestAddStringBuffer, api_digest_add_buffer),
    MOD_API(DigestEndSequence, api_digest_end),
};

void *module_type_api(const char *name)
{
	return module_api_find(api, sizeof(api) / sizeof(api[0]), name);
}
