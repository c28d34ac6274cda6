/*
 * module_api.c - the functions a Redis 7.0 module resolves through
 * RedisModule_GetApi(), by name (module.h, docs/modules.md).
 *
 * Owns: the stubs handed out for functions rcukv does not implement, and
 * their names (stub_lock).  Everything else is per call: a RedisModuleCtx
 * lives on the stack of the command (module.c's cmd_module_proc()), and what
 * AutoMemory tracks is freed when the command returns.
 *
 * Contract: every function here runs on the thread of the ctx it is given
 * (a worker inside the command's QSBR read-side section, or the thread
 * loading/unloading the module).  Keys are read and written by running
 * rcukv's own commands (TYPE, STRLEN, GET, SET ... KEEPTTL, PTTL, PEXPIRE,
 * PERSIST, DEL) through the table, exactly as RedisModule_Call does (the
 * bridge script.c's redis.call uses: swap the client's argv, cmd_exec_one(),
 * take the reply bytes back out of its output buffer).  So a module writes
 * keys with the table's own writers, never around them.
 *
 * Replication: rcukv has none yet; Replicate and ReplicateVerbatim are
 * accepted no-ops (REDISMODULE_OK).
 *
 * Tested by tests/server/test_modules.sh (Redis's helloworld.c).
 */
#include "server/module.h"

#include "resp/resp.h"
#include "server/cmd.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/log.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK 0
#define ERR 1
#define M_READ 1
#define M_WRITE 2
#define POSTPONED (-1)
#define NO_EXPIRE (-1)
#define RT_STRING 0
#define RT_ERROR 1
#define RT_INTEGER 2
#define RT_ARRAY 3
#define RT_NULL 4
#define KT_EMPTY 0
#define KT_STRING 1
#define KT_LIST 2
#define KT_HASH 3
#define KT_SET 4
#define KT_ZSET 5
#define KT_MODULE 6

typedef struct RedisModuleCtx Ctx;
typedef struct RedisModuleString Str;
typedef struct RedisModuleKey Key;
typedef struct RedisModuleCallReply Reply;

/* The innermost ctx of this thread (a module command may call another one
 * through RedisModule_Call): where an unimplemented function lands. */
static _Thread_local Ctx *cur_ctx;

void module_ctx_enter(Ctx *ctx, Ctx **saved)
{
	*saved = cur_ctx;
	cur_ctx = ctx;
}

void module_ctx_leave(Ctx *saved)
{
	cur_ctx = saved;
}

/* module.c */
int module_create_command(Ctx *ctx, const char *name, void *func, unsigned flags, int first,
			  int last, int step);
void module_set_attribs(Ctx *ctx, const char *name, int ver);
int module_name_busy(const char *name);

/* ---------------------------------------------------------------- memory */

static void auto_add(Ctx *ctx, int kind, void *p)
{
	if (!ctx || (kind == MOD_AUTO_DICT && !ctx->automem))
		return;
	if (ctx->nautos == ctx->cautos) {
		ctx->cautos = ctx->cautos ? ctx->cautos * 2 : 16;
		ctx->autos = xrealloc(ctx->autos, (size_t)ctx->cautos * sizeof(*ctx->autos));
	}
	ctx->autos[ctx->nautos++] = (struct mod_auto){kind, p};
}

static void auto_forget(Ctx *ctx, void *p)
{
	for (int i = 0; ctx && i < ctx->nautos; i++)
		if (ctx->autos[i].p == p)
			ctx->autos[i].p = NULL;
}

Ctx *module_current_ctx(void)
{
	return cur_ctx;
}

void module_auto_add(Ctx *ctx, int kind, void *p)
{
	auto_add(ctx, kind, p);
}

void module_auto_forget(Ctx *ctx, void *p)
{
	auto_forget(ctx, p);
}

static void *api_alloc(size_t n)
{
	return xmalloc(n ? n : 1);
}

static void *api_tryalloc(size_t n)
{
	return malloc(n ? n : 1);
}

static void *api_calloc(size_t n, size_t m)
{
	return xcalloc(n ? n : 1, m ? m : 1);
}

static void *api_realloc(void *p, size_t n)
{
	return xrealloc(p, n ? n : 1);
}

static void api_free(void *p)
{
	free(p);
}

static char *api_strdup(const char *s)
{
	return xstrdup(s);
}

static void *api_pool_alloc(Ctx *ctx, size_t n)
{
	void *p = xcalloc(1, n ? n : 1);

	auto_add(ctx, 4, p); /* freed when the command returns, AutoMemory or not */
	return p;
}

static void api_auto_memory(Ctx *ctx)
{
	ctx->automem = 1;
}

/* --------------------------------------------------------------- strings */

/* Put @s on the running module's list of held strings (once). */
static void hold(Str *s)
{
	struct module *m = cur_ctx ? cur_ctx->m : NULL;

	if (s->owner || !m)
		return;
	s->owner = m;
	s->hprev = NULL;
	s->hnext = m->strings;
	if (s->hnext)
		s->hnext->hprev = s;
	m->strings = s;
}

static void unhold(Str *s)
{
	if (!s->owner)
		return;
	if (s->hprev)
		s->hprev->hnext = s->hnext;
	else
		s->owner->strings = s->hnext;
	if (s->hnext)
		s->hnext->hprev = s->hprev;
	s->owner = NULL;
}

void module_strings_free_all(struct module *m)
{
	while (m->strings) {
		Str *s = m->strings;

		unhold(s);
		free(s->ptr);
		free(s);
	}
}

Str *module_string_made(Ctx *ctx, const char *p, size_t n)
{
	Str *s = module_string_new(ctx, p, n);

	hold(s);
	return s;
}

Str *module_string_new(Ctx *ctx, const char *p, size_t n)
{
	Str *s = xmalloc(sizeof(*s));

	s->len = n;
	s->refcount = 1;
	s->owner = NULL;
	s->ptr = xmalloc(n + 1);
	if (n)
		memcpy(s->ptr, p, n);
	s->ptr[n] = '\0';
	if (ctx && ctx->automem)
		auto_add(ctx, 1, s);
	return s;
}

void module_string_free(Ctx *ctx, Str *s)
{
	if (!s || --s->refcount > 0)
		return;
	auto_forget(ctx, s);
	unhold(s);
	free(s->ptr);
	free(s);
}

static Str *api_create_string(Ctx *ctx, const char *p, size_t n)
{
	return module_string_made(ctx, p, n);
}

static Str *api_create_string_ll(Ctx *ctx, long long v)
{
	char buf[32];

	return module_string_made(ctx, buf, (size_t)snprintf(buf, sizeof(buf), "%lld", v));
}

static Str *api_create_string_double(Ctx *ctx, double d)
{
	char buf[64];

	return module_string_made(ctx, buf, (size_t)snprintf(buf, sizeof(buf), "%.17g", d));
}

static Str *api_create_string_from_string(Ctx *ctx, const Str *s)
{
	return module_string_made(ctx, s->ptr, s->len);
}

__attribute__((format(printf, 2, 3))) static Str *api_create_string_printf(Ctx *ctx,
									  const char *fmt, ...)
{
	va_list ap;
	char small[256], *buf = small;
	int n;
	Str *s;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(small)) {
		buf = xmalloc((size_t)n + 1);
		va_start(ap, fmt);
		vsnprintf(buf, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	s = module_string_made(ctx, buf, (size_t)n);
	if (buf != small)
		free(buf);
	return s;
}

static void api_free_string(Ctx *ctx, Str *s)
{
	module_string_free(ctx, s);
}

static void api_retain_string(Ctx *ctx, Str *s)
{
	(void)ctx;
	s->refcount++;
	hold(s);
}

static const char *api_string_ptr_len(const Str *s, size_t *len)
{
	if (!s) {
		if (len)
			*len = 6;
		return "(NULL)"; /* as Redis */
	}
	if (len)
		*len = s->len;
	return s->ptr;
}

static int api_string_to_ll(const Str *s, long long *v)
{
	return s && resp_str2ll(s->ptr, s->len, v) ? OK : ERR;
}

/* Redis's string2d(): strtod of the whole string, no spaces, no nan */
static int api_string_to_double(const Str *s, double *d)
{
	char *end;
	double v;

	if (!s || !s->len || s->len > 300 || (s->ptr[0] == ' ' || s->ptr[0] == '\t'))
		return ERR;
	errno = 0;
	v = strtod(s->ptr, &end);
	if ((size_t)(end - s->ptr) != s->len || (errno == ERANGE && (v == HUGE_VAL ||
								      v == -HUGE_VAL || v == 0)) ||
	    isnan(v))
		return ERR;
	*d = v;
	return OK;
}

static int api_string_compare(const Str *a, const Str *b)
{
	size_t n = a->len < b->len ? a->len : b->len;
	int r = memcmp(a->ptr, b->ptr, n);

	return r ? r : (a->len > b->len) - (a->len < b->len);
}

/* --------------------------------------------------------------- replies */

/* Where the reply goes (module_reply_conn()): none is ERR, but for a
 * thread-safe context without a blocked client, whose replies Redis drops
 * with REDISMODULE_OK. */
#define NEED_CLIENT(ctx)                                                                         \
	struct conn *rc;                                                                         \
	do {                                                                                     \
		if (!(ctx))                                                                      \
			return ERR;                                                              \
		if (!(rc = module_reply_conn(ctx)))                                              \
			return (ctx)->tsc ? OK : ERR;                                            \
	} while (0)

static int api_wrong_arity(Ctx *ctx)
{
	NEED_CLIENT(ctx);
	reply_errorf(rc, "-ERR wrong number of arguments for '%s' command",
		     ctx->cmdname ? ctx->cmdname : "?");
	return OK;
}

static int api_reply_ll(Ctx *ctx, long long v)
{
	NEED_CLIENT(ctx);
	reply_int(rc, v);
	return OK;
}

static int api_reply_error(Ctx *ctx, const char *err)
{
	NEED_CLIENT(ctx);
	reply_errorf(rc, "-%s", err); /* the module gives the code */
	return OK;
}

static int api_reply_simple(Ctx *ctx, const char *s)
{
	NEED_CLIENT(ctx);
	reply_simple(rc, s);
	return OK;
}

static int api_reply_array(Ctx *ctx, long len)
{
	NEED_CLIENT(ctx);
	if (len == POSTPONED) {
		if (ctx->npost == (int)(sizeof(ctx->post) / sizeof(ctx->post[0])))
			return ERR;
		ctx->post[ctx->npost++].at = rc->out.len - rc->out.pos;
		return OK;
	}
	reply_array(rc, len);
	return OK;
}

static int api_reply_null_array(Ctx *ctx)
{
	NEED_CLIENT(ctx);
	reply_null_array(rc);
	return OK;
}

static int api_reply_empty_array(Ctx *ctx)
{
	NEED_CLIENT(ctx);
	reply_array(rc, 0);
	return OK;
}

/* The newest postponed array gets its header, inserted where it began. */
static void api_reply_set_array_length(Ctx *ctx, long len)
{
	struct conn *c;
	char hdr[32];
	size_t n, at, tail;
	char *base;

	if (!ctx || !ctx->npost || !(c = module_reply_conn(ctx)))
		return;
	at = ctx->post[--ctx->npost].at;
	n = (size_t)snprintf(hdr, sizeof(hdr), "*%ld\r\n", len);
	reply_reserve(c, n); /* room; may compact, so offsets are from pos */
	base = c->out.buf + c->out.pos;
	tail = c->out.len - c->out.pos - at;
	memmove(base + at + n, base + at, tail);
	memcpy(base + at, hdr, n);
	reply_commit(c, n);
}

static int api_reply_string_buffer(Ctx *ctx, const char *p, size_t n)
{
	NEED_CLIENT(ctx);
	reply_bulk(rc, p, n);
	return OK;
}

static int api_reply_cstring(Ctx *ctx, const char *s)
{
	NEED_CLIENT(ctx);
	reply_bulk(rc, s, strlen(s));
	return OK;
}

static int api_reply_string(Ctx *ctx, Str *s)
{
	NEED_CLIENT(ctx);
	reply_bulk(rc, s->ptr, s->len);
	return OK;
}

static int api_reply_empty_string(Ctx *ctx)
{
	NEED_CLIENT(ctx);
	reply_bulk(rc, "", 0);
	return OK;
}

static int api_reply_null(Ctx *ctx)
{
	NEED_CLIENT(ctx);
	reply_null(rc);
	return OK;
}

static int api_reply_bool(Ctx *ctx, int b)
{
	NEED_CLIENT(ctx);
	reply_bool(rc, b);
	return OK;
}

static int api_reply_double(Ctx *ctx, double d)
{
	NEED_CLIENT(ctx);
	reply_double(rc, d);
	return OK;
}

static int api_reply_long_double(Ctx *ctx, long double d)
{
	NEED_CLIENT(ctx);
	reply_long_double_bulk(rc, d);
	return OK;
}

static int api_reply_call_reply(Ctx *ctx, Reply *r)
{
	NEED_CLIENT(ctx);
	reply_raw(rc, r->rawp, r->rawlen); /* RESP2: what the command answered */
	return OK;
}

/* ------------------------------------------------------------ call */

/* One RESP2 reply at *p (the bytes are complete: our own command wrote
 * them).  Return 0, or -1 if malformed. */
static int parse_reply(Reply *r, const char **p, const char *end, int depth)
{
	const char *s = *p, *cr;
	long long n;

	memset(r, 0, sizeof(*r));
	r->rawp = s;
	if (s >= end || depth > 64 || !(cr = memchr(s, '\r', (size_t)(end - s))) || cr + 2 > end)
		return -1;
	switch (s[0]) {
	case '+':
	case '-':
		r->type = s[0] == '+' ? RT_STRING : RT_ERROR;
		r->str = s + 1;
		r->len = (size_t)(cr - s - 1);
		*p = cr + 2;
		break;
	case ':':
		if (!resp_str2ll(s + 1, (size_t)(cr - s - 1), &r->integer))
			return -1;
		r->type = RT_INTEGER;
		*p = cr + 2;
		break;
	case '$':
		if (!resp_str2ll(s + 1, (size_t)(cr - s - 1), &n))
			return -1;
		if (n < 0) {
			r->type = RT_NULL;
			*p = cr + 2;
			break;
		}
		if (cr + 2 + n + 2 > end)
			return -1;
		r->type = RT_STRING;
		r->str = cr + 2;
		r->len = (size_t)n;
		*p = cr + 2 + n + 2;
		break;
	case '*':
		if (!resp_str2ll(s + 1, (size_t)(cr - s - 1), &n))
			return -1;
		*p = cr + 2;
		if (n < 0) {
			r->type = RT_NULL;
			break;
		}
		r->type = RT_ARRAY;
		r->len = (size_t)n;
		r->elems = n ? xcalloc((size_t)n, sizeof(*r->elems)) : NULL;
		for (long long i = 0; i < n; i++)
			if (parse_reply(&r->elems[i], p, end, depth + 1) != 0)
				return -1;
		break;
	default:
		return -1;
	}
	r->rawlen = (size_t)(*p - s);
	return 0;
}

static void reply_tree_free(Reply *r)
{
	for (size_t i = 0; r->type == RT_ARRAY && i < r->len && r->elems; i++)
		reply_tree_free(&r->elems[i]);
	free(r->elems);
}

static void call_reply_free(Reply *r)
{
	if (!r || !r->top)
		return; /* elements go with their top-level reply */
	reply_tree_free(r);
	free(r->raw);
	free(r);
}

static void api_free_call_reply(Reply *r)
{
	if (r && cur_ctx)
		auto_forget(cur_ctx, r);
	call_reply_free(r);
}

/* Run the command in argv[0..argc) for @ctx's client through the table,
 * as redis.call does (script.c's run_command()): NULL with errno ENOENT
 * (unknown command), EINVAL (wrong arity), EPERM (MODULE LOAD/UNLOAD/LIST:
 * they take mod_lock, whose holder may be an unload waiting for this very
 * call), ENOTSUP (no client: OnLoad, OnUnload). */
static Reply *call_argv(Ctx *ctx, int argc, const char **argv, size_t *argl)
{
	struct conn *c = ctx ? ctx->c : NULL;
	const char **sv;
	size_t *sl, unsent;
	int sa, why, sresp;
	const struct cmd *k;
	const char *p, *end;
	char *raw;
	size_t rawlen;
	Reply *r;

	if (!c) {
		errno = ENOTSUP;
		return NULL;
	}
	if (ctx->tsc) { /* a thread-safe context: only while its thread holds the lock */
		if (ctx->tsc != MOD_TSC_LIVE || !module_gil_held()) {
			srv_log(LL_WARNING, "module called RedisModule_Call on a thread-safe context "
					    "without ThreadSafeContextLock: refused");
			errno = EPERM;
			return NULL;
		}
		db_pin(c); /* the table of its db now (SWAPDB, FLUSHDB may have moved it) */
	}
	sv = c->argv, sl = c->argl, sa = c->argc;
	c->argc = argc, c->argv = argv, c->argl = argl;
	k = cmd_script_row(c, &why);
	if (!k || k->proc == cmd_module_load || k->proc == cmd_module_unload ||
	    k->proc == cmd_module_list) {
		c->argc = sa, c->argv = sv, c->argl = sl;
		errno = !k ? (why == 1 ? ENOENT : EINVAL) : EPERM;
		return NULL;
	}
	unsent = c->out.len - c->out.pos; /* pos moves if the buffer compacts */
	sresp = c->resp;
	c->resp = 2;
	cmd_exec_one(c);
	c->resp = sresp;
	c->argc = sa, c->argv = sv, c->argl = sl;
	p = c->out.buf + c->out.pos + unsent;
	end = c->out.buf + c->out.len;
	r = xcalloc(1, sizeof(*r));
	raw = xmemdup(p, (size_t)(end - p));
	rawlen = (size_t)(end - p);
	c->out.len = c->out.pos + unsent;
	p = raw;
	if (parse_reply(r, &p, raw + rawlen, 0) != 0) { /* parse_reply() clears r */
		reply_tree_free(r);
		memset(r, 0, sizeof(*r));
		r->type = RT_ERROR;
		r->str = "ERR rcukv: reply conversion failed";
		r->len = strlen(r->str);
		r->rawp = "-ERR rcukv: reply conversion failed\r\n";
		r->rawlen = strlen(r->rawp);
	}
	r->raw = raw; /* the top level owns the bytes */
	r->top = 1;
	if (ctx->automem)
		auto_add(ctx, 2, r);
	errno = 0;
	return r;
}

/* RedisModule_Call's format: c (C string), s (RedisModuleString), b
 * (buffer, length), l (long long), v (array of strings, count); the flags
 * after them (! A R 3 0 C S W M E X) are accepted and ignored: no
 * replication, no ACL, RESP2 replies, no script mode. */
static Reply *api_call(Ctx *ctx, const char *name, const char *fmt, ...)
{
	const char **argv = NULL;
	size_t *argl = NULL, cap = 0;
	char **owned = NULL;
	int argc = 0, nowned = 0;
	va_list ap;
	Reply *r;

#define PUSH(P, L)                                                                               \
	do {                                                                                     \
		if ((size_t)argc == cap) {                                                       \
			cap = cap ? cap * 2 : 8;                                                 \
			argv = xrealloc(argv, cap * sizeof(*argv));                              \
			argl = xrealloc(argl, cap * sizeof(*argl));                              \
		}                                                                                \
		argv[argc] = (P);                                                                \
		argl[argc++] = (L);                                                              \
	} while (0)
	PUSH(name, strlen(name));
	va_start(ap, fmt);
	for (const char *f = fmt; *f; f++) {
		if (*f == 'c') {
			const char *s = va_arg(ap, const char *);

			PUSH(s, strlen(s));
		} else if (*f == 's') {
			const Str *s = va_arg(ap, const Str *);

			PUSH(s->ptr, s->len);
		} else if (*f == 'b') {
			const char *s = va_arg(ap, const char *);
			size_t n = va_arg(ap, size_t);

			PUSH(s, n);
		} else if (*f == 'l') {
			long long v = va_arg(ap, long long);
			char *b = xmalloc(32);

			owned = xrealloc(owned, (size_t)(nowned + 1) * sizeof(*owned));
			owned[nowned++] = b;
			PUSH(b, (size_t)snprintf(b, 32, "%lld", v));
		} else if (*f == 'v') {
			Str **v = va_arg(ap, Str **);
			size_t n = va_arg(ap, size_t);

			for (size_t i = 0; i < n; i++)
				PUSH(v[i]->ptr, v[i]->len);
		} else if (strchr("!AR30CSWMEX", *f) == NULL) {
			va_end(ap);
			free(argv);
			free(argl);
			for (int i = 0; i < nowned; i++)
				free(owned[i]);
			free(owned);
			errno = EINVAL;
			return NULL;
		}
	}
	va_end(ap);
#undef PUSH
	r = call_argv(ctx, argc, argv, argl);
	free(argv);
	free(argl);
	for (int i = 0; i < nowned; i++)
		free(owned[i]);
	free(owned);
	return r;
}

static int api_call_reply_type(Reply *r)
{
	return r ? r->type : -1;
}

static long long api_call_reply_integer(Reply *r)
{
	return r && r->type == RT_INTEGER ? r->integer : LLONG_MIN; /* as Redis */
}

static size_t api_call_reply_length(Reply *r)
{
	if (!r)
		return 0;
	return r->type == RT_ARRAY || r->type == RT_STRING || r->type == RT_ERROR ? r->len : 0;
}

static Reply *api_call_reply_array_element(Reply *r, size_t i)
{
	return r && r->type == RT_ARRAY && i < r->len ? &r->elems[i] : NULL;
}

static const char *api_call_reply_string_ptr(Reply *r, size_t *len)
{
	if (!r || (r->type != RT_STRING && r->type != RT_ERROR))
		return NULL;
	if (len)
		*len = r->len;
	return r->str;
}

static Str *api_create_string_from_call_reply(Reply *r)
{
	char buf[32];

	if (!r)
		return NULL;
	if (r->type == RT_STRING || r->type == RT_ERROR)
		return module_string_made(cur_ctx, r->str, r->len);
	if (r->type == RT_INTEGER)
		return module_string_made(cur_ctx, buf,
					 (size_t)snprintf(buf, sizeof(buf), "%lld", r->integer));
	return NULL;
}

static int api_replicate(Ctx *ctx, const char *name, const char *fmt, ...)
{
	(void)ctx, (void)name, (void)fmt;
	return OK; /* no replication in rcukv yet */
}

static int api_replicate_verbatim(Ctx *ctx)
{
	(void)ctx;
	return OK;
}

/* ------------------------------------------------------------------ keys */

/* Run "<cmd> <key> a[0] .. a[n-1]" for @k; the reply is the caller's (not
 * AutoMemory's), freed with module_reply_free(). */
Reply *module_key_callv(Key *k, const char *cmd, int n, const char *const *a, const size_t *al)
{
	const char *small[8], **argv = small;
	size_t smalll[8], *argl = smalll;
	int am = k->ctx->automem;
	Reply *r;

	if (n + 2 > 8) {
		argv = xmalloc(sizeof(*argv) * (size_t)(n + 2));
		argl = xmalloc(sizeof(*argl) * (size_t)(n + 2));
	}
	argv[0] = cmd, argl[0] = strlen(cmd);
	argv[1] = k->name->ptr, argl[1] = k->name->len;
	for (int i = 0; i < n; i++)
		argv[2 + i] = a[i], argl[2 + i] = al[i];
	k->ctx->automem = 0; /* ours, freed by the caller */
	r = call_argv(k->ctx, n + 2, argv, argl);
	k->ctx->automem = am;
	if (argv != small) {
		free(argv);
		free(argl);
	}
	return r;
}

void module_reply_free(Reply *r)
{
	call_reply_free(r);
}

/* Run "<cmd> <key> [a] [b]" for @k. */
static Reply *kcall(Key *k, const char *cmd, const char *a, size_t alen, const char *b)
{
	const char *av[2] = {a, b};
	size_t al[2] = {alen, b ? strlen(b) : 0};

	return module_key_callv(k, cmd, (a != NULL) + (b != NULL), av, al);
}

int module_key_type(Key *k)
{
	Reply *r;
	int t = KT_EMPTY;

	if (!k)
		return KT_EMPTY;
	r = kcall(k, "type", NULL, 0, NULL);
	if (r && r->type == RT_STRING) {
		t = KT_MODULE; /* TYPE answers a module type's name */
		static const char *const names[] = {"none", "string", "list", "hash",
						    "set",  "zset",   "",     "stream"};

		for (int i = 0; i < 8; i++)
			if (r->len == strlen(names[i]) && !memcmp(r->str, names[i], r->len))
				t = i;
	}
	call_reply_free(r);
	return t;
}

static Key *api_open_key(Ctx *ctx, Str *name, int mode)
{
	Key *k;

	if (!ctx || !ctx->c)
		return NULL;
	if (ctx->tsc && (ctx->tsc != MOD_TSC_LIVE || !module_gil_held()))
		return NULL; /* as RedisModule_Call: only under the lock */
	k = xcalloc(1, sizeof(*k));
	k->ctx = ctx;
	k->name = module_string_new(NULL, name->ptr, name->len);
	k->mode = mode;
	if (!(mode & M_WRITE) && module_key_type(k) == KT_EMPTY) { /* as Redis: NULL */
		module_string_free(NULL, k->name);
		free(k);
		return NULL;
	}
	/* always tracked: a key cannot outlive its command, and one left open
	 * (a module leaving through an unimplemented call) is closed at the end */
	auto_add(ctx, 3, k);
	return k;
}

/* StringDMA's copy back into the key, its TTL kept. */
static void key_flush(Key *k)
{
	if (k->dma && k->dirty)
		call_reply_free(kcall(k, "set", k->dma, k->dmalen, "keepttl"));
	free(k->dma);
	k->dma = NULL;
	k->dirty = 0;
}

static void key_close(Key *k)
{
	if (!k)
		return;
	key_flush(k);
	module_zrange_stop(k);
	module_key_release(k);
	module_string_free(NULL, k->name);
	free(k);
}

static void api_close_key(Key *k)
{
	if (!k)
		return;
	auto_forget(k->ctx, k);
	key_close(k);
}

static int api_key_type(Key *k)
{
	if (k && k->dma)
		return KT_STRING;
	for (int i = 0; i < 3; i++) {
		int t;

		if (module_key_box(k)) /* once seen, the key's value for its life */
			return KT_MODULE;
		if ((t = module_key_type(k)) != KT_MODULE)
			return t;
		/* TYPE saw a module value the lookup before it did not: another
		 * worker made it meanwhile (RENAME, RESTORE); look again */
	}
	return KT_EMPTY; /* it keeps changing under us: call it gone */
}

static size_t api_value_length(Key *k)
{
	/* as Redis: the length of whatever the key holds, 0 for none */
	static const char *const len_cmd[] = {[KT_STRING] = "strlen", [KT_LIST] = "llen",
					      [KT_HASH] = "hlen", [KT_SET] = "scard",
					      [KT_ZSET] = "zcard"};
	Reply *r;
	size_t n = 0;
	int t;

	if (!k)
		return 0;
	if (k->dma)
		return k->dmalen;
	t = module_key_type(k);
	if (t < KT_STRING || t > KT_ZSET)
		return 0;
	r = kcall(k, len_cmd[t], NULL, 0, NULL);
	if (r && r->type == RT_INTEGER)
		n = (size_t)r->integer;
	call_reply_free(r);
	return n;
}

static int api_delete_key(Key *k)
{
	if (!k || !(k->mode & M_WRITE))
		return ERR;
	free(k->dma);
	k->dma = NULL;
	k->dirty = 0;
	module_key_release(k);
	call_reply_free(kcall(k, "del", NULL, 0, NULL));
	return OK;
}

static int api_string_set(Key *k, Str *v)
{
	Reply *r;
	int ok;

	if (!k || !(k->mode & M_WRITE))
		return ERR;
	free(k->dma);
	k->dma = NULL;
	k->dirty = 0;
	r = kcall(k, "set", v->ptr, v->len, NULL); /* as Redis: the TTL goes */
	ok = r && r->type == RT_STRING;
	call_reply_free(r);
	return ok ? OK : ERR;
}

/* A copy of the value the module may change in place (REDISMODULE_WRITE);
 * written back when the key closes. */
static char *api_string_dma(Key *k, size_t *len, int mode)
{
	Reply *r;
	int t;

	if (!k)
		return NULL;
	if (k->dma) {
		k->dirty |= (mode & M_WRITE) != 0;
		*len = k->dmalen;
		return k->dma;
	}
	t = module_key_type(k);
	if (t != KT_STRING && !(t == KT_EMPTY && (k->mode & M_WRITE)))
		return NULL;
	if (t == KT_EMPTY) { /* as Redis: an empty string is created */
		k->dma = xmalloc(1);
		k->dmalen = 0;
		k->dirty = 1;
	} else {
		r = kcall(k, "get", NULL, 0, NULL);
		if (!r || r->type != RT_STRING) {
			call_reply_free(r);
			return NULL;
		}
		k->dma = xmalloc(r->len + 1);
		memcpy(k->dma, r->str, r->len);
		k->dmalen = r->len;
		call_reply_free(r);
		k->dirty = (mode & M_WRITE) != 0;
	}
	k->dma[k->dmalen] = '\0';
	*len = k->dmalen;
	return k->dma;
}

static int api_string_truncate(Key *k, size_t n)
{
	size_t len;

	if (!k || !(k->mode & M_WRITE) || n > 512u * 1024 * 1024)
		return ERR;
	if (!k->dma && !api_string_dma(k, &len, M_WRITE))
		return ERR;
	k->dma = xrealloc(k->dma, n + 1);
	if (n > k->dmalen)
		memset(k->dma + k->dmalen, 0, n - k->dmalen);
	k->dmalen = n;
	k->dma[n] = '\0';
	k->dirty = 1;
	return OK;
}

static long long api_get_expire(Key *k)
{
	Reply *r;
	long long ttl = NO_EXPIRE;

	if (!k)
		return NO_EXPIRE;
	key_flush(k);
	r = kcall(k, "pttl", NULL, 0, NULL);
	if (r && r->type == RT_INTEGER && r->integer >= 0)
		ttl = r->integer;
	call_reply_free(r);
	return ttl;
}

static int api_set_expire(Key *k, long long ms)
{
	char buf[32];
	Reply *r;
	int ok;

	if (!k || !(k->mode & M_WRITE))
		return ERR;
	key_flush(k);
	if (ms == NO_EXPIRE) {
		r = kcall(k, "persist", NULL, 0, NULL);
	} else {
		if (ms < 0)
			ms = 0;
		snprintf(buf, sizeof(buf), "%lld", ms);
		r = kcall(k, "pexpire", buf, strlen(buf), NULL);
	}
	ok = r && r->type == RT_INTEGER && (ms == NO_EXPIRE || r->integer == 1);
	call_reply_free(r);
	return ok ? OK : ERR;
}

static int api_key_exists(Ctx *ctx, Str *name)
{
	Key k = {.ctx = ctx, .name = name};

	return ctx && ctx->c && module_key_type(&k) != KT_EMPTY;
}

static int api_get_selected_db(Ctx *ctx)
{
	return ctx && ctx->c ? atomic_load_explicit(&ctx->c->db, memory_order_relaxed) : 0;
}

static int api_select_db(Ctx *ctx, int id)
{
	if (!ctx || !ctx->c || id < 0 || id >= g_ndbs)
		return ERR;
	db_select(ctx->c, id);
	db_pin(ctx->c);
	return OK;
}

/* ---------------------------------------------------------- commands */

/* CreateCommand's flags string, as Redis 7.0 parses it: unknown -> -1 */
static long parse_flags(const char *s)
{
	static const struct {
		const char *name;
		unsigned flag;
	} names[] = {
	    {"write", CMD_WRITE},
	    {"readonly", CMD_READONLY},
	    {"admin", CMD_ADMIN},
	    {"deny-oom", CMD_DENYOOM},
	    {"deny-script", CMD_NOSCRIPT},
	    {"allow-loading", CMD_LOADING},
	    {"pubsub", CMD_PUBSUB},
	    {"random", 0},
	    {"allow-stale", CMD_STALE},
	    {"no-monitor", 0},
	    {"no-slowlog", CMD_SKIP_SLOWLOG},
	    {"fast", CMD_FAST},
	    {"no-auth", CMD_NOAUTH},
	    {"may-replicate", 0},
	    {"getkeys-api", 0},
	    {"no-cluster", 0},
	    {"no-mandatory-keys", 0},
	    {"allow-busy", CMD_ALLOW_BUSY},
	    {"getchannels-api", 0},
	    {"blocking", 0},
	};
	char buf[512], *w, *sp;
	unsigned flags = 0;

	if (!s)
		return 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (w = strtok_r(buf, " ", &sp); w; w = strtok_r(NULL, " ", &sp)) {
		size_t i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcasecmp(w, names[i].name))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return -1;
		flags |= names[i].flag;
	}
	return (long)flags;
}

static int api_create_command(Ctx *ctx, const char *name, void *func, const char *strflags,
			      int first, int last, int step)
{
	long flags = parse_flags(strflags);

	if (flags < 0 || first < 0 || step < 0 || last < -1 || !func)
		return ERR;
	return module_create_command(ctx, name, func, (unsigned)flags, first, last, step);
}

static void api_set_module_attribs(Ctx *ctx, const char *name, int ver, int apiver)
{
	(void)apiver;
	module_set_attribs(ctx, name, ver);
}

static int api_is_module_name_busy(const char *name)
{
	return module_name_busy(name);
}

static int api_is_keys_position_request(Ctx *ctx)
{
	(void)ctx;
	return 0; /* rcukv takes key positions from the CreateCommand arguments */
}

static void api_key_at_pos(Ctx *ctx, int pos)
{
	(void)ctx, (void)pos;
}

static unsigned long long api_get_client_id(Ctx *ctx)
{
	return ctx && ctx->c ? (unsigned long long)ctx->c->id : 0;
}

/* ----------------------------------------------------------- misc */

static unsigned long long api_create_timer(Ctx *ctx, long long ms, void *cb, void *data)
{
	return module_timer_create(ctx, ms, cb, data);
}

static int api_stop_timer(Ctx *ctx, unsigned long long id, void **data)
{
	return module_timer_stop(ctx, id, data);
}

static long long api_milliseconds(void)
{
	return util_mstime();
}

__attribute__((format(printf, 3, 4))) static void api_log(Ctx *ctx, const char *level,
							  const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int ll = LL_NOTICE;

	if (!strcasecmp(level, "debug"))
		ll = LL_DEBUG;
	else if (!strcasecmp(level, "verbose"))
		ll = LL_VERBOSE;
	else if (!strcasecmp(level, "warning"))
		ll = LL_WARNING;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	srv_log(ll, "<%s> %s", ctx && ctx->m && ctx->m->name ? ctx->m->name : "module", buf);
}

void module_ctx_release(Ctx *ctx)
{
	/* keys first: closing one may run a command (DMA write-back) */
	for (int i = 0; i < ctx->nautos; i++)
		if (ctx->autos[i].p && ctx->autos[i].kind == 3) {
			Key *k = ctx->autos[i].p;

			ctx->autos[i].p = NULL;
			key_close(k);
		}
	for (int i = 0; i < ctx->nautos; i++) {
		void *p = ctx->autos[i].p;

		if (!p)
			continue;
		ctx->autos[i].p = NULL;
		if (ctx->autos[i].kind == 1) {
			Str *s = p;

			unhold(s);
			free(s->ptr);
			free(s);
		} else if (ctx->autos[i].kind == 2) {
			call_reply_free(p);
		} else if (ctx->autos[i].kind == 4) {
			free(p);
		} else if (ctx->autos[i].kind == MOD_AUTO_DICT) {
			module_dict_free(p);
		}
	}
	free(ctx->autos);
	ctx->autos = NULL;
	ctx->nautos = ctx->cautos = 0;
	ctx->npost = 0;
}

/* ----------------------------------------------- unimplemented: stubs */

/*
 * A function rcukv does not implement gets REDISMODULE_ERR from GetApi (the
 * header ignores it) and a stub of its own, so that calling it names it:
 * the stub leaves the module through the longjmp its caller set (the
 * command answers an error, OnLoad fails), or, outside any, aborts with the
 * name.  Leaving by longjmp skips the module's frames: what it allocated
 * there leaks, unless AutoMemory tracked it.  STUBS names at most, shared
 * by every module (a name keeps its stub).
 */
#define STUBS 512
static pthread_mutex_t stub_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *stub_names[STUBS]; /* stub_lock; set once per slot */
static int nstubs;		      /* stub_lock */

static void unimplemented(int i)
{
	const char *name;

	pthread_mutex_lock(&stub_lock);
	name = stub_names[i];
	pthread_mutex_unlock(&stub_lock);
	srv_log(LL_WARNING, "module called %s, which rcukv does not implement", name);
	if (cur_ctx && cur_ctx->unimpl_jmp) {
		cur_ctx->unimpl_name = name;
		longjmp(*cur_ctx->unimpl_jmp, 1);
	}
	srv_die("module called %s, which rcukv does not implement", name);
}

#define STUB1(n)                                                                                 \
	static long stub_##n(void)                                                               \
	{                                                                                        \
		unimplemented(n);                                                                \
		return 0;                                                                        \
	}
#define STUB8(n) STUB1(n##0) STUB1(n##1) STUB1(n##2) STUB1(n##3) STUB1(n##4) STUB1(n##5) STUB1(n##6) STUB1(n##7)
#define STUB64(n) STUB8(n##0) STUB8(n##1) STUB8(n##2) STUB8(n##3) STUB8(n##4) STUB8(n##5) STUB8(n##6) STUB8(n##7)
/* octal literals: 0000 .. 0777 is 0 .. 511 */
STUB64(00) STUB64(01) STUB64(02) STUB64(03) STUB64(04) STUB64(05) STUB64(06) STUB64(07)
#define REF1(n) stub_##n,
#define REF8(n) REF1(n##0) REF1(n##1) REF1(n##2) REF1(n##3) REF1(n##4) REF1(n##5) REF1(n##6) REF1(n##7)
#define REF64(n) REF8(n##0) REF8(n##1) REF8(n##2) REF8(n##3) REF8(n##4) REF8(n##5) REF8(n##6) REF8(n##7)
static long (*const stubs[STUBS])(void) = {REF64(00) REF64(01) REF64(02) REF64(03) REF64(04)
						  REF64(05) REF64(06) REF64(07)};

static void *stub_for(const char *name)
{
	void *p = NULL;

	pthread_mutex_lock(&stub_lock);
	for (int i = 0; i < nstubs && !p; i++)
		if (!strcmp(stub_names[i], name))
			p = (void *)(uintptr_t)stubs[i];
	if (!p && nstubs < STUBS) {
		stub_names[nstubs] = xstrdup(name); /* kept for the process's life */
		p = (void *)(uintptr_t)stubs[nstubs++];
	}
	pthread_mutex_unlock(&stub_lock);
	return p;
}

/* ---------------------------------------------------------- the registry */

static const struct mod_api_fn api[] = {
    MOD_API(Alloc, api_alloc),
    MOD_API(TryAlloc, api_tryalloc),
    MOD_API(Calloc, api_calloc),
    MOD_API(Realloc, api_realloc),
    MOD_API(Free, api_free),
    MOD_API(Strdup, api_strdup),
    MOD_API(PoolAlloc, api_pool_alloc),
    MOD_API(AutoMemory, api_auto_memory),
    MOD_API(CreateCommand, api_create_command),
    MOD_API(SetModuleAttribs, api_set_module_attribs),
    MOD_API(IsModuleNameBusy, api_is_module_name_busy),
    MOD_API(WrongArity, api_wrong_arity),
    MOD_API(ReplyWithLongLong, api_reply_ll),
    MOD_API(ReplyWithError, api_reply_error),
    MOD_API(ReplyWithSimpleString, api_reply_simple),
    MOD_API(ReplyWithArray, api_reply_array),
    MOD_API(ReplyWithNullArray, api_reply_null_array),
    MOD_API(ReplyWithEmptyArray, api_reply_empty_array),
    MOD_API(ReplySetArrayLength, api_reply_set_array_length),
    MOD_API(ReplyWithStringBuffer, api_reply_string_buffer),
    MOD_API(ReplyWithCString, api_reply_cstring),
    MOD_API(ReplyWithString, api_reply_string),
    MOD_API(ReplyWithEmptyString, api_reply_empty_string),
    MOD_API(ReplyWithNull, api_reply_null),
    MOD_API(ReplyWithBool, api_reply_bool),
    MOD_API(ReplyWithCallReply, api_reply_call_reply),
    MOD_API(ReplyWithDouble, api_reply_double),
    MOD_API(ReplyWithLongDouble, api_reply_long_double),
    MOD_API(GetSelectedDb, api_get_selected_db),
    MOD_API(SelectDb, api_select_db),
    MOD_API(KeyExists, api_key_exists),
    MOD_API(OpenKey, api_open_key),
    MOD_API(CloseKey, api_close_key),
    MOD_API(KeyType, api_key_type),
    MOD_API(ValueLength, api_value_length),
    MOD_API(StringToLongLong, api_string_to_ll),
    MOD_API(StringToDouble, api_string_to_double),
    MOD_API(Call, api_call),
    MOD_API(CallReplyType, api_call_reply_type),
    MOD_API(CallReplyInteger, api_call_reply_integer),
    MOD_API(CallReplyLength, api_call_reply_length),
    MOD_API(CallReplyArrayElement, api_call_reply_array_element),
    MOD_API(CallReplyStringPtr, api_call_reply_string_ptr),
    MOD_API(CreateStringFromCallReply, api_create_string_from_call_reply),
    MOD_API(FreeCallReply, api_free_call_reply),
    MOD_API(CreateString, api_create_string),
    MOD_API(CreateStringFromLongLong, api_create_string_ll),
    MOD_API(CreateStringFromDouble, api_create_string_double),
    MOD_API(CreateStringFromString, api_create_string_from_string),
    MOD_API(CreateStringPrintf, api_create_string_printf),
    MOD_API(FreeString, api_free_string),
    MOD_API(RetainString, api_retain_string),
    MOD_API(StringPtrLen, api_string_ptr_len),
    MOD_API(StringCompare, api_string_compare),
    MOD_API(Replicate, api_replicate),
    MOD_API(ReplicateVerbatim, api_replicate_verbatim),
    MOD_API(DeleteKey, api_delete_key),
    MOD_API(StringSet, api_string_set),
    MOD_API(StringDMA, api_string_dma),
    MOD_API(StringTruncate, api_string_truncate),
    MOD_API(GetExpire, api_get_expire),
    MOD_API(SetExpire, api_set_expire),
    MOD_API(IsKeysPositionRequest, api_is_keys_position_request),
    MOD_API(KeyAtPos, api_key_at_pos),
    MOD_API(GetClientId, api_get_client_id),
    MOD_API(Milliseconds, api_milliseconds),
    MOD_API(CreateTimer, api_create_timer),
    MOD_API(StopTimer, api_stop_timer),
    MOD_API(Log, api_log),
};

void *module_api_find(const struct mod_api_fn *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return t[i].fn;
	return NULL;
}

int module_api_get(const char *name, void *out)
{
	if ((*(void **)out = module_api_find(api, sizeof(api) / sizeof(api[0]), name)) ||
	    (*(void **)out = module_dict_api(name)) || (*(void **)out = module_type_api(name)) ||
	    (*(void **)out = module_keys_api(name)) ||
	    (*(void **)out = module_block_api(name)))
		return OK;
	*(void **)out = stub_for(name);
	return ERR;
}
