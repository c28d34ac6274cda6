/*
 * script.c - the Lua engine behind EVAL (script.h): per-worker states, the
 * shared script cache, the conversions both ways, redis.* and the bridge
 * that runs redis.call's commands through the command table.
 *
 * Owns: the cache (cache_lock), each worker's struct script_vm (its owner
 * thread; SCRIPT KILL and INFO read the atomics marked so).  Invariants: a
 * state's functions are "f_<sha>" in its registry and belong to the cache
 * epoch the state was made in (SCRIPT FLUSH bumps the epoch; a state of an
 * older one is closed at its worker's next script).  Scripts run in a
 * coroutine of the state, so that a command that cannot run with the KEYS'
 * stripes held makes the coroutine yield, the ht_txn() end, the command run
 * alone, and a new ht_txn() resume the script (docs/scripting.md).
 * Tortured by tests/server/test_script.sh.
 */
#include "server/script.h"

#include "hashtable/ht.h"
#include "server/cmd.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/evict.h"
#include "server/log.h"
#include "server/persist.h"
#include "server/repl.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/util.h"

#include "resp/resp.h"

#include <lauxlib.h>
#include <lua-bitop.h>
#include <lua-cjson.h>
#include <lua.h>
#include <lualib.h>

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* lua-time-limit / busy-reply-threshold (ms): a script running longer is
 * busy, and SCRIPT KILL may stop it.  Relaxed: a threshold, read per hook. */
_Atomic long long script_busy_ms;

#define SHEBANG_NO_WRITES 0x1
#define SHEBANG_ALLOW_OOM 0x2
#define SHEBANG_SET 0x100 /* the body has a shebang: its flags rule */

/* ------------------------------------------------------------------ cache */

struct cached {
	struct cached *next;
	char sha[41];
	unsigned flags; /* SHEBANG_* */
	size_t len;
	char body[];
};

#define CACHE_BUCKETS 1024
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cached *cache[CACHE_BUCKETS]; /* cache_lock */
static size_t cache_n, cache_bytes;	    /* cache_lock */
/* Bumped by SCRIPT FLUSH under cache_lock; read relaxed by each worker
 * before its script: a state of an older epoch is closed first. */
static _Atomic unsigned long cache_epoch;

struct script_vm;
/* The vms of every worker, for SCRIPT KILL and INFO: set once by the owner
 * (release, after the vm is initialised; acquire where others read it);
 * freed by script_fini() only, when no worker is left. */
static struct script_vm *_Atomic vms[1024];

static unsigned bucket_of(const char *sha)
{
	unsigned h = 0;

	for (int i = 0; i < 8; i++)
		h = h * 16 + (unsigned)(isdigit((unsigned char)sha[i]) ? sha[i] - '0' : sha[i] - 'a' + 10);
	return h % CACHE_BUCKETS;
}

static void sha1hex(char out[41], const char *p, size_t n)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;

	if (!EVP_Digest(p, n, md, &mdlen, EVP_sha1(), NULL) || mdlen != 20)
		srv_die("SHA1 failed");
	for (int i = 0; i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* Copy the body of @sha (lower case) into a malloc'd block; NULL if none. */
static struct cached *cache_get(const char *sha)
{
	struct cached *e, *copy = NULL;

	pthread_mutex_lock(&cache_lock);
	for (e = cache[bucket_of(sha)]; e; e = e->next)
		if (!memcmp(e->sha, sha, 40))
			break;
	if (e) {
		copy = xmalloc(sizeof(*e) + e->len + 1);
		memcpy(copy, e, sizeof(*e) + e->len + 1);
	}
	pthread_mutex_unlock(&cache_lock);
	return copy;
}

static void cache_add(const char *sha, const char *body, size_t len, unsigned flags)
{
	struct cached *e;
	unsigned b = bucket_of(sha);

	pthread_mutex_lock(&cache_lock);
	for (e = cache[b]; e; e = e->next)
		if (!memcmp(e->sha, sha, 40))
			break;
	if (!e) {
		e = xmalloc(sizeof(*e) + len + 1);
		memcpy(e->sha, sha, 41);
		e->flags = flags;
		e->len = len;
		memcpy(e->body, body, len);
		e->body[len] = '\0';
		e->next = cache[b];
		cache[b] = e;
		cache_n++;
		cache_bytes += len + 40;
	}
	pthread_mutex_unlock(&cache_lock);
}

int script_exists(const char *s, size_t len)
{
	char sha[41];
	struct cached *e;

	if (len != 40)
		return 0;
	for (int i = 0; i < 40; i++)
		sha[i] = (char)tolower((unsigned char)s[i]);
	sha[40] = '\0';
	e = cache_get(sha);
	free(e);
	return e != NULL;
}

static void cache_clear(void)
{
	for (int b = 0; b < CACHE_BUCKETS; b++) {
		while (cache[b]) {
			struct cached *e = cache[b];

			cache[b] = e->next;
			free(e);
		}
	}
	cache_n = cache_bytes = 0;
}

void script_flush(void)
{
	pthread_mutex_lock(&cache_lock);
	cache_clear();
	atomic_fetch_add_explicit(&cache_epoch, 1, memory_order_relaxed);
	pthread_mutex_unlock(&cache_lock);
}

void script_fini(void)
{
	pthread_mutex_lock(&cache_lock);
	cache_clear();
	pthread_mutex_unlock(&cache_lock);
	for (int i = 0; i < 1024; i++) /* no worker left: the vms' structs */
		free(atomic_exchange_explicit(&vms[i], NULL, memory_order_relaxed));
}

/* ------------------------------------------------------------ the states */

struct run;

struct script_vm {
	lua_State *L;
	unsigned long epoch;
	long gc_count;
	uint64_t rnd; /* math.random's state (xorshift64*) */
	struct run *run; /* the script running now, or NULL; owner */
	/* Read by SCRIPT KILL and INFO on other workers (relaxed: flags and
	 * figures, nothing is published through them). */
	_Atomic long long start_ms; /* 0: no script running */
	_Atomic int wrote;
	_Atomic int kill;
	_Atomic size_t mem;
};

static struct script_vm *vm_slot(struct worker *w)
{
	return atomic_load_explicit(&vms[w->idx % 1024], memory_order_acquire);
}

/* One script run. */
struct run {
	struct conn *c;
	struct script_vm *vm;
	lua_State *co; /* the coroutine the script runs in */
	const char *sha;
	int resp;   /* redis.setresp(): 2 or 3 */
	int ro;	    /* EVAL_RO, or a shebang without writes */
	int oom;    /* over maxmemory when it began, and no allow-oom */
	int nkeys;
	const void **keys;
	size_t *klens;
	struct ht *txn_ht; /* the table whose stripes of KEYS are held, or NULL */
	int in_txn;	   /* inside that ht_txn() now */
	int status;	   /* lua_resume()'s last */
	int nres;	   /* values to resume the coroutine with */
	/* a command that must run outside the held stripes (the coroutine
	 * yielded for it): one block, argv into it */
	int pend_argc, pend_raise;
	int raise_pending; /* its error, in REG_PENDING, raised by the hook */
	const char **pend_argv;
	size_t *pend_argl;
};

static const char *const sandbox_src =
    /* The scripts' globals: a read-only proxy over `shadow`, where the
     * libraries, KEYS and ARGV are.  Reading a missing global and writing
     * any is an error, as Redis 7.0's read-only globals. */
    "local shadow, G = ...\n"
    "local err, tostring, setmt, rawset, type = error, tostring, setmetatable, rawset, type\n"
    "local function ro() err('Attempt to modify a readonly table', 2) end\n"
    "local protected = setmt({}, {__mode = 'k'})\n"
    "local function protect(t)\n"
    "  local p = setmt({}, {__index = t, __newindex = ro, __metatable = false})\n"
    "  protected[p] = true\n"
    "  return p\n"
    "end\n"
    "local env = setmt({}, {__index = function(_, k) local v = shadow[k]\n"
    "    if v == nil then err(\"Script attempted to access nonexistent global variable '\" .. tostring(k) .. \"'\", 2) end\n"
    "    return v end, __newindex = ro, __metatable = false})\n"
    "protected[env] = true\n"
    "for _, n in ipairs({'xpcall','tostring','setmetatable','next','assert','tonumber',\n"
    "    'rawequal','collectgarbage','getmetatable','rawset','pcall','type','select',\n"
    "    'unpack','gcinfo','pairs','rawget','ipairs','_VERSION','error','newproxy'}) do\n"
    "  shadow[n] = G[n]\n"
    "end\n"
    "for _, n in ipairs({'string','math','table','bit','cjson','coroutine','redis'}) do\n"
    "  if G[n] then shadow[n] = protect(G[n]) end\n"
    "end\n"
    "shadow._G = env\n"
    "shadow.rawset = function(t, k, v) if protected[t] then err('Attempt to modify a readonly table', 0) end return rawset(t, k, v) end\n"
    "shadow.setmetatable = function(t, m) if protected[t] then err('Attempt to modify a readonly table', 0) end return setmt(t, m) end\n"
    "local ls, sfe = G.loadstring, G.setfenv\n"
    "shadow.loadstring = function(s, name) local f, e = ls(s, name) if f then sfe(f, env) end return f, e end\n"
    "shadow.load = function(fn, name) local f, e = G.load(fn, name) if f then sfe(f, env) end return f, e end\n"
    "return env\n";

#define REG_ENV "rcukv_env"
#define REG_SHADOW "rcukv_shadow"
#define SANDBOX_CHUNK "=rcukv"

static struct run *run_of(lua_State *L);

/* Push Redis's error table {err = "CODE msg"} for @msg ("-CODE msg", or
 * "msg" for ERR), its trailing CR/LF trimmed (luaPushErrorBuff()). */
static void push_error(lua_State *L, const char *msg, size_t n)
{
	const char *code = "ERR", *text = msg;
	size_t codelen = 3, textlen = n;
	luaL_Buffer b;

	if (n && msg[0] == '-') {
		const char *sp = memchr(msg, ' ', n);

		if (sp) {
			code = msg + 1;
			codelen = (size_t)(sp - msg - 1);
			text = sp + 1;
			textlen = n - (size_t)(sp + 1 - msg);
		} else {
			text = msg + 1;
			textlen = n - 1;
		}
	}
	while (textlen && (text[textlen - 1] == '\r' || text[textlen - 1] == '\n'))
		textlen--;
	while (textlen && (text[0] == '\r' || text[0] == '\n'))
		text++, textlen--;
	lua_newtable(L);
	lua_pushstring(L, "err");
	luaL_buffinit(L, &b);
	luaL_addlstring(&b, code, codelen);
	luaL_addchar(&b, ' ');
	luaL_addlstring(&b, text, textlen);
	luaL_pushresult(&b);
	lua_settable(L, -3);
}

static int raise_error(lua_State *L, const char *msg)
{
	push_error(L, msg, strlen(msg));
	return lua_error(L);
}

/* ---------------------------------------------------- RESP -> Lua values */

static const char *crlf(const char *p, const char *end)
{
	for (; p + 1 < end; p++)
		if (p[0] == '\r' && p[1] == '\n')
			return p;
	return NULL;
}

/*
 * Push the Lua value of the reply at *pp (bytes rcukv's own encoders wrote:
 * trusted, but bounded by @end): Redis's conversions (integer -> number,
 * bulk -> string, nil -> false, array -> table, status -> {ok=}, error ->
 * {err=}; RESP3: map -> {map=}, set -> {set=}, double -> {double=},
 * big number -> {big_number=}, boolean, null -> nil).  Return 0, or -1 on
 * a malformed reply or no Lua stack left.
 */
static int push_reply(lua_State *L, const char **pp, const char *end)
{
	const char *p = *pp, *e;
	long long n;
	char t;

	if (p >= end || !(e = crlf(p, end)) || !lua_checkstack(L, 4))
		return -1;
	t = *p++;
	*pp = e + 2;
	switch (t) {
	case '+':
		lua_newtable(L);
		lua_pushstring(L, "ok");
		lua_pushlstring(L, p, (size_t)(e - p));
		lua_settable(L, -3);
		return 0;
	case '-':
		push_error(L, p - 1, (size_t)(e - p + 1));
		lua_pushstring(L, "ignore_error_stats_update");
		lua_pushboolean(L, 1);
		lua_settable(L, -3);
		return 0;
	case ':':
		lua_pushnumber(L, (lua_Number)strtoll(p, NULL, 10));
		return 0;
	case ',':
		lua_newtable(L);
		lua_pushstring(L, "double");
		lua_pushnumber(L, strtod(p, NULL));
		lua_settable(L, -3);
		return 0;
	case '(':
		lua_newtable(L);
		lua_pushstring(L, "big_number");
		lua_pushlstring(L, p, (size_t)(e - p));
		lua_settable(L, -3);
		return 0;
	case '#':
		lua_pushboolean(L, *p == 't');
		return 0;
	case '_':
		lua_pushnil(L);
		return 0;
	case '$':
	case '=':
		n = strtoll(p, NULL, 10);
		if (n < 0) {
			lua_pushboolean(L, 0);
			return 0;
		}
		if ((size_t)n + 2 > (size_t)(end - *pp))
			return -1;
		if (t == '=' && n >= 4) { /* verbatim: "txt:" then the text */
			lua_newtable(L);
			lua_pushstring(L, "verbatim_string");
			lua_newtable(L);
			lua_pushstring(L, "string");
			lua_pushlstring(L, *pp + 4, (size_t)n - 4);
			lua_settable(L, -3);
			lua_pushstring(L, "format");
			lua_pushlstring(L, *pp, 3);
			lua_settable(L, -3);
			lua_settable(L, -3);
		} else {
			lua_pushlstring(L, *pp, (size_t)n);
		}
		*pp += n + 2;
		return 0;
	case '*':
	case '>':
	case '~':
	case '%':
		n = strtoll(p, NULL, 10);
		if (n < 0) {
			lua_pushboolean(L, 0);
			return 0;
		}
		lua_newtable(L);
		if (t == '~' || t == '%') {
			lua_pushstring(L, t == '~' ? "set" : "map");
			lua_newtable(L);
		}
		for (long long i = 0; i < n; i++) {
			if (t == '*' || t == '>')
				lua_pushnumber(L, (lua_Number)(i + 1));
			if (push_reply(L, pp, end) != 0)
				return -1;
			if (t == '~')
				lua_pushboolean(L, 1);
			else if (t == '%' && push_reply(L, pp, end) != 0)
				return -1;
			lua_settable(L, -3);
		}
		if (t == '~' || t == '%')
			lua_settable(L, -3);
		return 0;
	default:
		return -1;
	}
}

/* ---------------------------------------------------- Lua values -> RESP */

static void reply_status_mapped(struct conn *c, const char *s, size_t n)
{
	char *d = reply_reserve(c, n + 3);

	d[0] = '+';
	for (size_t i = 0; i < n; i++)
		d[i + 1] = (s[i] == '\r' || s[i] == '\n') ? ' ' : s[i];
	d[n + 1] = '\r';
	d[n + 2] = '\n';
	reply_commit(c, n + 3);
}

/* The error of the script's error object @msg: "-msg" (reply_error maps
 * CR/LF to spaces). */
static void reply_lua_error(struct conn *c, const char *msg)
{
	char *buf = xmalloc(strlen(msg) + 2);

	buf[0] = '-';
	strcpy(buf + 1, msg);
	reply_error(c, buf);
	free(buf);
}

/* Field @name of the table at the top, pushed; its type returned. */
static int field(lua_State *L, const char *name)
{
	lua_pushstring(L, name);
	lua_rawget(L, -2);
	return lua_type(L, -1);
}

/* Reply the value at the top of @L (popped) to @c, as Redis's
 * luaReplyToRedisReply(): @resp is the script's (booleans). */
static void reply_value(struct conn *c, lua_State *L, int resp)
{
	int t = lua_type(L, -1);

	if (!lua_checkstack(L, 4)) {
		reply_error(c, "reached lua stack limit");
		lua_pop(L, 1);
		return;
	}
	switch (t) {
	case LUA_TSTRING: {
		size_t n;
		const char *s = lua_tolstring(L, -1, &n);

		reply_bulk(c, s, n);
		break;
	}
	case LUA_TBOOLEAN:
		if (resp == 2) {
			if (lua_toboolean(L, -1))
				reply_int(c, 1);
			else
				reply_null(c);
		} else {
			reply_bool(c, lua_toboolean(L, -1));
		}
		break;
	case LUA_TNUMBER:
		reply_int(c, (long long)lua_tonumber(L, -1));
		break;
	case LUA_TTABLE: {
		long long n = 0;

		if (field(L, "err") == LUA_TSTRING) {
			reply_lua_error(c, lua_tostring(L, -1));
			lua_pop(L, 2);
			return;
		}
		lua_pop(L, 1);
		if (field(L, "ok") == LUA_TSTRING) {
			size_t len;
			const char *s = lua_tolstring(L, -1, &len);

			reply_status_mapped(c, s, len);
			lua_pop(L, 2);
			return;
		}
		lua_pop(L, 1);
		if (field(L, "double") == LUA_TNUMBER) {
			reply_double(c, lua_tonumber(L, -1));
			lua_pop(L, 2);
			return;
		}
		lua_pop(L, 1);
		if (field(L, "big_number") == LUA_TSTRING) {
			size_t len;
			const char *s = lua_tolstring(L, -1, &len);
			char *d;

			if (c->resp >= 3) {
				d = reply_reserve(c, len + 3);
				d[0] = '(';
				for (size_t i = 0; i < len; i++)
					d[i + 1] = (s[i] == '\r' || s[i] == '\n') ? ' ' : s[i];
				d[len + 1] = '\r';
				d[len + 2] = '\n';
				reply_commit(c, len + 3);
			} else {
				reply_bulk(c, s, len);
			}
			lua_pop(L, 2);
			return;
		}
		lua_pop(L, 1);
		if (field(L, "verbatim_string") == LUA_TTABLE) {
			if (field(L, "format") == LUA_TSTRING) {
				if (field(L, "string") == LUA_TSTRING) {
					size_t len;
					const char *s = lua_tolstring(L, -1, &len);

					/* rcukv's verbatim replies are all "txt" */
					reply_verbatim(c, s, len);
					lua_pop(L, 4);
					return;
				}
				lua_pop(L, 1);
			}
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
		t = field(L, "map");
		if (t == LUA_TTABLE || (lua_pop(L, 1), field(L, "set")) == LUA_TTABLE) {
			int is_map = t == LUA_TTABLE;

			lua_pushnil(L);
			while (lua_next(L, -2)) {
				n++;
				lua_pop(L, 1);
			}
			if (is_map)
				reply_map(c, n);
			else
				reply_set(c, n);
			lua_pushnil(L);
			while (lua_next(L, -2)) {
				if (is_map) {
					lua_pushvalue(L, -2);
					reply_value(c, L, resp); /* the key */
					reply_value(c, L, resp); /* the value */
				} else {
					lua_pop(L, 1);
					lua_pushvalue(L, -1);
					reply_value(c, L, resp);
				}
			}
			lua_pop(L, 2);
			return;
		}
		lua_pop(L, 1);
		/* an array: elements 1.. up to the first nil */
		for (;; n++) {
			lua_rawgeti(L, -1, (int)(n + 1));
			t = lua_type(L, -1);
			lua_pop(L, 1);
			if (t == LUA_TNIL || n >= INT_MAX - 1)
				break;
		}
		reply_array(c, n);
		for (long long i = 1; i <= n; i++) {
			lua_rawgeti(L, -1, (int)i);
			reply_value(c, L, resp);
		}
		break;
	}
	default:
		reply_null(c);
	}
	lua_pop(L, 1);
}

/* ----------------------------------------------------------- redis.call */

/* The arguments at L's stack 1..top as strings (numbers as "%.17g"), in one
 * block.  Return argc, or -1 with the error pushed. */
static int args_of(lua_State *L, const char ***argvp, size_t **arglp)
{
	int argc = lua_gettop(L);
	size_t bytes = 0, *argl;
	const char **argv;
	char num[64], *p;

	if (argc <= 0) {
		push_error(L, "Please specify at least one argument for this redis lib call",
			   strlen("Please specify at least one argument for this redis lib call"));
		return -1;
	}
	for (int j = 0; j < argc; j++) {
		int t = lua_type(L, j + 1);
		size_t n;

		if (t == LUA_TNUMBER)
			n = (size_t)snprintf(num, sizeof(num), "%.17g", (double)lua_tonumber(L, j + 1));
		else if (t == LUA_TSTRING)
			lua_tolstring(L, j + 1, &n);
		else {
			push_error(L, "Lua redis lib command arguments must be strings or integers",
				   strlen("Lua redis lib command arguments must be strings or integers"));
			return -1;
		}
		bytes += n + 1;
	}
	argl = xmalloc((size_t)argc * (sizeof(size_t) + sizeof(char *)) + bytes);
	argv = (const char **)(void *)(argl + argc);
	p = (char *)(argv + argc);
	for (int j = 0; j < argc; j++) {
		const char *s;
		size_t n;

		if (lua_type(L, j + 1) == LUA_TNUMBER) {
			n = (size_t)snprintf(num, sizeof(num), "%.17g", (double)lua_tonumber(L, j + 1));
			s = num;
		} else {
			s = lua_tolstring(L, j + 1, &n);
		}
		memcpy(p, s, n);
		p[n] = '\0';
		argv[j] = p;
		argl[j] = n;
		p += n + 1;
	}
	*argvp = argv;
	*arglp = argl;
	return argc;
}

/* A read-only replica refuses writes from anyone but its master (Redis's
 * server.masterhost && server.repl_slave_ro && !mustObeyClient()). */
static int replica_refuses(const struct conn *c)
{
	return repl_refuses_writes() && !(c->flags & CONN_MASTER);
}

#define ERR_READONLY "-READONLY You can't write against a read only replica."

/* Commands of redis.call/pcall running on this thread now (Redis's
 * CLIENT_SCRIPT): script_in_call(). */
static _Thread_local int in_call;

int script_in_call(void)
{
	return in_call > 0;
}

static int is_declared(const struct run *r, const char *key, size_t klen)
{
	for (int i = 0; i < r->nkeys; i++)
		if (r->klens[i] == klen && !memcmp(r->keys[i], key, klen))
			return 1;
	return 0;
}

/* Whether row @k on these arguments must run outside the held stripes:
 * it is on another db, changes or crosses dbs, works on the whole keyspace
 * or the server (EXEC's "alone" rule, cmd_multi.c), or may write a key that
 * is not among KEYS (the table refuses a write outside a transaction's keys). */
static int needs_outside(const struct run *r, const struct cmd *k, int argc, const char **argv,
			 const size_t *argl)
{
	int first, last, step;

	if (!r->in_txn)
		return 0;
	if (db_of(r->c) != r->txn_ht || k->proc == cmd_select || k->proc == cmd_move ||
	    k->proc == cmd_swapdb || k->proc == cmd_copy)
		return 1;
	/* keys after a numkeys argument: a write must hold them all */
	if (!(k->flags & CMD_READONLY) && cmd_numkeys_range(k, argc, argv, argl, &first, &last) > 0) {
		for (int i = first; i <= last; i++)
			if (!is_declared(r, argv[i], argl[i]))
				return 1;
		if (k->first_key == 0)
			return 0;
	}
	if (k->first_key == 0)
		return (k->flags & (CMD_WRITE | CMD_ADMIN)) ||
		       (k->acl & (ACL_KEYSPACE | ACL_DANGEROUS | ACL_ADMIN));
	if (k->flags & CMD_READONLY)
		return 0;
	if (cmd_key_range(k, argc, &first, &last, &step))
		for (int i = first; i <= last; i += step)
			if (!is_declared(r, argv[i], argl[i]))
				return 1;
	return 0;
}

/*
 * Check and run one command for the script: the value (or error table) is
 * pushed on @L.  Return 1 if it is an error reply or refusal, else 0.  The
 * checks are Redis's scriptCall()'s, in its order.  @outside: 0 check only
 * whether it may run here (return 2 without running when it must run
 * outside the stripes), 1 it runs outside now.
 */
static int run_command(struct run *r, lua_State *L, int argc, const char **argv, size_t *argl,
		       int outside)
{
	struct conn *c = r->c;
	const char **sv = c->argv;
	size_t *sl = c->argl, unsent;
	int sa = c->argc, why, sresp, err;
	const struct cmd *k;
	const char *p, *end, *msg = NULL;

	c->argc = argc;
	c->argv = argv;
	c->argl = argl;
	k = cmd_script_row(c, &why);
	if (!k)
		msg = why == 1 ? "Unknown Redis command called from script"
			       : "Wrong number of args calling Redis command from script";
	else if (k->flags & CMD_NOSCRIPT)
		msg = "This Redis command is not allowed from script";
	else if ((k->flags & CMD_WRITE) && r->ro)
		msg = "Write commands are not allowed from read-only scripts.";
	/* once the script has written, a state check may not fail it halfway */
	else if ((k->flags & CMD_WRITE) &&
		 atomic_load_explicit(&r->vm->wrote, memory_order_relaxed))
		msg = NULL;
	else if ((k->flags & CMD_WRITE) && replica_refuses(c))
		msg = ERR_READONLY;
	else if ((k->flags & CMD_WRITE) && persist_writes_denied())
		msg = ERR_MISCONF;
	else if ((k->flags & CMD_DENYOOM) && r->oom)
		msg = ERR_OOM;
	if (msg) {
		c->argc = sa, c->argv = sv, c->argl = sl;
		push_error(L, msg, strlen(msg));
		lua_pushstring(L, "ignore_error_stats_update");
		lua_pushboolean(L, 1);
		lua_settable(L, -3);
		return 1;
	}
	if (!outside && needs_outside(r, k, argc, argv, argl)) {
		c->argc = sa, c->argv = sv, c->argl = sl;
		return 2;
	}
	if (k->flags & CMD_WRITE)
		atomic_store_explicit(&r->vm->wrote, 1, memory_order_relaxed);
	unsent = c->out.len - c->out.pos; /* pos moves if the buffer compacts */
	sresp = c->resp;
	c->resp = r->resp;
	in_call++;
	cmd_exec_one(c);
	in_call--;
	c->resp = sresp;
	c->argc = sa, c->argv = sv, c->argl = sl;
	p = c->out.buf + c->out.pos + unsent;
	end = c->out.buf + c->out.len;
	err = p < end && *p == '-';
	if (push_reply(L, &p, end) != 0) {
		lua_settop(L, lua_gettop(L)); /* what was pushed stays; replace it */
		push_error(L, "reply conversion failed", strlen("reply conversion failed"));
		err = 1;
	}
	c->out.len = c->out.pos + unsent;
	return err;
}

/* redis.call (upvalue true: an error is raised) and redis.pcall (false: it
 * is returned).  Return the value; or yield, when the command must run
 * outside the held stripes: the driver resumes with its value, and raises
 * its error through the hook (raise_after_yield()). */
static int lua_bridge(lua_State *L)
{
	struct run *r = run_of(L);
	int raise = lua_toboolean(L, lua_upvalueindex(1)), argc, e;
	const char **argv;
	size_t *argl;

	if (!r)
		return raise_error(L, "redis.call/pcall can only be called inside a script invocation");
	argc = args_of(L, &argv, &argl);
	if (argc < 0) {
		if (raise)
			return lua_error(L);
		return 1;
	}
	lua_settop(L, 0);
	e = run_command(r, L, argc, argv, argl, 0);
	if (e == 2) {
		if (L != r->co) { /* a coroutine of the script's own: no way out */
			free(argl);
			push_error(L, "rcukv: this command needs its keys declared in KEYS when called from a coroutine",
				   strlen("rcukv: this command needs its keys declared in KEYS when called from a coroutine"));
			if (raise)
				return lua_error(L);
			return 1;
		}
		r->pend_argc = argc;
		r->pend_argv = argv;
		r->pend_argl = argl;
		r->pend_raise = raise;
		return lua_yield(L, 0);
	}
	free(argl);
	if (e && raise)
		return lua_error(L);
	return 1;
}

/* ---------------------------------------------------------- redis.* rest */

static int lua_pcall_redis(lua_State *L)
{
	/* Redis 7's pcall: an error table with an err string becomes that string */
	int argc = lua_gettop(L);

	luaL_checkany(L, 1);
	lua_pushboolean(L, 1);
	lua_insert(L, 1);
	if (lua_pcall(L, argc - 1, LUA_MULTRET, 0)) {
		lua_remove(L, 1);
		if (lua_istable(L, -1)) {
			lua_getfield(L, -1, "err");
			if (lua_isstring(L, -1))
				lua_replace(L, -2);
			else
				lua_pop(L, 1);
		}
		lua_pushboolean(L, 0);
		lua_insert(L, 1);
	}
	return lua_gettop(L);
}

static int lua_sha1hex(lua_State *L)
{
	char digest[41];
	size_t len = 0;
	const char *s;

	if (lua_gettop(L) != 1)
		return raise_error(L, "wrong number of arguments");
	s = lua_tolstring(L, 1, &len);
	sha1hex(digest, s ? s : "", s ? len : 0);
	lua_pushstring(L, digest);
	return 1;
}

static int lua_error_reply(lua_State *L)
{
	size_t n;
	const char *s;

	if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
		push_error(L, "wrong number or type of arguments", 33);
		return 1;
	}
	s = lua_tolstring(L, -1, &n);
	if (n && s[0] == '-') {
		push_error(L, s, n);
	} else {
		char *b = xmalloc(n + 2);

		b[0] = '-';
		memcpy(b + 1, s, n);
		push_error(L, b, n + 1);
		free(b);
	}
	return 1;
}

static int lua_status_reply(lua_State *L)
{
	if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
		push_error(L, "wrong number or type of arguments", 33);
		return 1;
	}
	lua_newtable(L);
	lua_pushstring(L, "ok");
	lua_pushvalue(L, -3);
	lua_settable(L, -3);
	return 1;
}

static int lua_log(lua_State *L)
{
	int argc = lua_gettop(L), level;
	luaL_Buffer b;

	if (argc < 2)
		return raise_error(L, "redis.log() requires two arguments or more.");
	if (!lua_isnumber(L, 1))
		return raise_error(L, "First argument must be a number (log level).");
	level = (int)lua_tonumber(L, 1);
	if (level < LL_DEBUG || level > LL_WARNING)
		return raise_error(L, "Invalid debug level.");
	luaL_buffinit(L, &b);
	for (int j = 2; j <= argc; j++) {
		size_t n;
		const char *s = lua_tolstring(L, j, &n);

		if (!s)
			continue;
		if (j != 2)
			luaL_addchar(&b, ' ');
		luaL_addlstring(&b, s, n);
	}
	luaL_pushresult(&b);
	srv_log_raw(level, lua_tostring(L, -1));
	return 0;
}

static int lua_setresp(lua_State *L)
{
	struct run *r = run_of(L);
	int resp;

	if (!r)
		return raise_error(L, "redis.setresp can only be called inside a script invocation");
	if (lua_gettop(L) != 1)
		return raise_error(L, "redis.setresp() requires one argument.");
	resp = (int)lua_tonumber(L, 1);
	if (resp != 2 && resp != 3)
		return raise_error(L, "RESP version must be 2 or 3.");
	r->resp = resp;
	return 0;
}

static int lua_set_repl(lua_State *L)
{
	if (!run_of(L))
		return raise_error(L, "redis.set_repl can only be called inside a script invocation");
	if (lua_gettop(L) != 1)
		return raise_error(L, "redis.set_repl() requires two arguments.");
	if (((int)lua_tonumber(L, 1) & ~3) != 0)
		return raise_error(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
	return 0; /* no replication: accepted, nothing to do */
}

static int lua_true(lua_State *L)
{
	lua_pushboolean(L, 1);
	return 1;
}

static int lua_false(lua_State *L)
{
	lua_pushboolean(L, 0);
	return 1;
}

static int lua_nothing(lua_State *L)
{
	(void)L;
	return 0;
}

/* math.random / math.randomseed on the state's own generator (libc's
 * rand() is one per process and not thread-safe), Lua 5.1's arithmetic. */
static double vm_rand(struct script_vm *vm)
{
	vm->rnd ^= vm->rnd >> 12;
	vm->rnd ^= vm->rnd << 25;
	vm->rnd ^= vm->rnd >> 27;
	return (double)((vm->rnd * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

static int lua_random(lua_State *L)
{
	struct script_vm *vm = lua_touserdata(L, lua_upvalueindex(1));
	double r = vm_rand(vm);

	switch (lua_gettop(L)) {
	case 0:
		lua_pushnumber(L, r);
		break;
	case 1: {
		int u = luaL_checkint(L, 1);

		luaL_argcheck(L, 1 <= u, 1, "interval is empty");
		lua_pushnumber(L, floor(r * u) + 1);
		break;
	}
	case 2: {
		int l = luaL_checkint(L, 1), u = luaL_checkint(L, 2);

		luaL_argcheck(L, l <= u, 2, "interval is empty");
		lua_pushnumber(L, floor(r * (u - l + 1)) + l);
		break;
	}
	default:
		return luaL_error(L, "wrong number of arguments");
	}
	return 1;
}

static int lua_randomseed(lua_State *L)
{
	struct script_vm *vm = lua_touserdata(L, lua_upvalueindex(1));

	vm->rnd = (uint64_t)(unsigned)luaL_checkint(L, 1) * 0x9e3779b97f4a7c15ull | 1;
	return 0;
}

#define REG_RUN "rcukv_run"

static struct run *run_of(lua_State *L)
{
	struct run *r;

	lua_getfield(L, LUA_REGISTRYINDEX, REG_RUN);
	r = lua_touserdata(L, -1);
	lua_pop(L, 1);
	return r;
}

static void set_fn(lua_State *L, const char *name, lua_CFunction f)
{
	lua_pushcfunction(L, f);
	lua_setfield(L, -2, name);
}

static void set_num(lua_State *L, const char *name, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, name);
}

/* The redis table, in the globals. */
static void open_redis(lua_State *L)
{
	lua_newtable(L);
	/* call and pcall: the bridge, raising or not (its upvalue) */
	lua_pushboolean(L, 1);
	lua_pushcclosure(L, lua_bridge, 1);
	lua_setfield(L, -2, "call");
	lua_pushboolean(L, 0);
	lua_pushcclosure(L, lua_bridge, 1);
	lua_setfield(L, -2, "pcall");
	set_fn(L, "log", lua_log);
	set_num(L, "LOG_DEBUG", LL_DEBUG);
	set_num(L, "LOG_VERBOSE", LL_VERBOSE);
	set_num(L, "LOG_NOTICE", LL_NOTICE);
	set_num(L, "LOG_WARNING", LL_WARNING);
	set_num(L, "REDIS_VERSION_NUM", 0x07000f);
	lua_pushstring(L, REDIS_COMPAT_VERSION);
	lua_setfield(L, -2, "REDIS_VERSION");
	set_fn(L, "setresp", lua_setresp);
	set_fn(L, "sha1hex", lua_sha1hex);
	set_fn(L, "error_reply", lua_error_reply);
	set_fn(L, "status_reply", lua_status_reply);
	set_fn(L, "set_repl", lua_set_repl);
	set_fn(L, "replicate_commands", lua_true);
	set_fn(L, "breakpoint", lua_false);
	set_fn(L, "debug", lua_nothing);
	set_num(L, "REPL_NONE", 0);
	set_num(L, "REPL_AOF", 1);
	set_num(L, "REPL_SLAVE", 2);
	set_num(L, "REPL_REPLICA", 2);
	set_num(L, "REPL_ALL", 3);
	lua_setglobal(L, "redis");
}

/* Open a library; a module that returns its table without setting a
 * global (Debian's cjson) gets the global @name. */
static void open_lib(lua_State *L, const char *name, lua_CFunction f)
{
	lua_pushcfunction(L, f);
	lua_pushstring(L, name);
	lua_call(L, 1, 1);
	if (*name && lua_istable(L, -1)) {
		lua_getglobal(L, name);
		if (lua_isnil(L, -1)) {
			lua_pop(L, 1);
			lua_setglobal(L, name);
			return;
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

static lua_State *state_new(struct script_vm *vm)
{
	lua_State *L = luaL_newstate();

	if (!L)
		srv_die("out of memory creating a Lua state");
	open_lib(L, "", luaopen_base);
	open_lib(L, LUA_TABLIBNAME, luaopen_table);
	open_lib(L, LUA_STRLIBNAME, luaopen_string);
	open_lib(L, LUA_MATHLIBNAME, luaopen_math);
	open_lib(L, "bit", luaopen_bit);
	open_lib(L, "cjson", luaopen_cjson);
	lua_getglobal(L, "math");
	lua_pushlightuserdata(L, vm);
	lua_pushcclosure(L, lua_random, 1);
	lua_setfield(L, -2, "random");
	lua_pushlightuserdata(L, vm);
	lua_pushcclosure(L, lua_randomseed, 1);
	lua_setfield(L, -2, "randomseed");
	lua_pop(L, 1);
	lua_pushcfunction(L, lua_pcall_redis);
	lua_setglobal(L, "pcall");
	open_redis(L);
	/* the sandbox: scripts see env, a read-only proxy over shadow */
	if (luaL_loadbuffer(L, sandbox_src, strlen(sandbox_src), SANDBOX_CHUNK))
		srv_die("Lua sandbox: %s", lua_tostring(L, -1));
	lua_newtable(L);
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, REG_SHADOW);
	lua_pushvalue(L, LUA_GLOBALSINDEX);
	lua_call(L, 2, 1);
	lua_setfield(L, LUA_REGISTRYINDEX, REG_ENV);
	return L;
}

/* The worker's vm, its state of the cache's current epoch. */
static struct script_vm *vm_get(struct conn *c)
{
	struct script_vm *vm = c->w->script_vm;
	unsigned long epoch = atomic_load_explicit(&cache_epoch, memory_order_relaxed);

	if (!vm) {
		vm = xmalloc(sizeof(*vm));
		memset(vm, 0, sizeof(*vm));
		vm->rnd = 0x853c49e6748fea9bull ^ (uint64_t)c->w->idx;
		c->w->script_vm = vm;
		atomic_store_explicit(&vms[c->w->idx % 1024], vm, memory_order_release);
	}
	if (vm->L && vm->epoch != epoch) {
		lua_close(vm->L);
		vm->L = NULL;
	}
	if (!vm->L) {
		vm->L = state_new(vm);
		vm->epoch = epoch;
	}
	return vm;
}

/* ------------------------------------------------------------- compiling */

/* Parse the shebang ("#!lua flags=a,b"): its flags in *flags, and the
 * length of the line to skip; or the error Redis gives, in @err. */
static const char *shebang(const char *body, size_t len, unsigned *flags, size_t *skip,
			   char *err, size_t errlen)
{
	const char *nl, *p, *end;

	*flags = 0;
	*skip = 0;
	if (len < 2 || body[0] != '#' || body[1] != '!')
		return NULL;
	nl = memchr(body, '\n', len);
	end = nl ? nl : body + len;
	*skip = (size_t)(end - body);
	*flags = SHEBANG_SET;
	p = body;
	while (p < end && *p == ' ')
		p++;
	if (p == end)
		return "Invalid engine in script shebang";
	{
		const char *w = p;

		while (p < end && *p != ' ')
			p++;
		if ((size_t)(p - w) != 5 || memcmp(w, "#!lua", 5)) {
			snprintf(err, errlen, "Unexpected engine in script shebang: %.*s", (int)(p - w), w);
			return err;
		}
	}
	for (;;) {
		const char *w;

		while (p < end && *p == ' ')
			p++;
		if (p == end)
			return NULL;
		w = p;
		while (p < end && *p != ' ')
			p++;
		if ((size_t)(p - w) >= 6 && !memcmp(w, "flags=", 6)) {
			const char *f = w + 6;

			while (f < p) {
				const char *fe = memchr(f, ',', (size_t)(p - f));
				size_t fl;

				if (!fe)
					fe = p;
				fl = (size_t)(fe - f);
				if (fl == 9 && !memcmp(f, "no-writes", 9))
					*flags |= SHEBANG_NO_WRITES;
				else if (fl == 9 && !memcmp(f, "allow-oom", 9))
					*flags |= SHEBANG_ALLOW_OOM;
				else if ((fl == 11 && !memcmp(f, "allow-stale", 11)) ||
					 (fl == 10 && !memcmp(f, "no-cluster", 10)) ||
					 (fl == 21 && !memcmp(f, "allow-cross-slot-keys", 21)))
					; /* nothing to do without replicas or a cluster */
				else {
					snprintf(err, errlen, "Unexpected flag in script shebang: %.*s",
						 (int)fl, f);
					return err;
				}
				f = fe + 1;
			}
		} else {
			snprintf(err, errlen, "Unknown lua shebang option: %.*s", (int)(p - w), w);
			return err;
		}
	}
}

/*
 * Make f_<sha> in the worker's state from @body (a chunk named
 * "@user_script", as Redis 7.0 loads it),
 * unless it is there; its shebang's flags in *flagsp.  Return 0, or -1
 * after replying the error to @c.
 */
static int compile(struct conn *c, lua_State *L, const char *sha, const char *body, size_t len,
		   unsigned *flagsp)
{
	char fname[43], err[256];
	const char *why;
	size_t skip;

	snprintf(fname, sizeof(fname), "f_%s", sha);
	why = shebang(body, len, flagsp, &skip, err, sizeof(err));
	if (why) {
		reply_error(c, why);
		return -1;
	}
	lua_getfield(L, LUA_REGISTRYINDEX, fname);
	if (!lua_isnil(L, -1)) {
		lua_pop(L, 1);
		return 0;
	}
	lua_pop(L, 1);
	/* the body is the function (Redis 7.0); a shebang's line is skipped
	 * but its newline kept, so line numbers are the body's */
	if (luaL_loadbuffer(L, body + skip, len - skip, "@user_script")) {
		reply_errorf(c, "Error compiling script (new function): %s", lua_tostring(L, -1));
		lua_pop(L, 1);
		return -1;
	}
	lua_getfield(L, LUA_REGISTRYINDEX, REG_ENV);
	lua_setfenv(L, -2);
	lua_setfield(L, LUA_REGISTRYINDEX, fname);
	fname[0] = 'F'; /* the shebang's flags beside the function */
	lua_pushnumber(L, *flagsp);
	lua_setfield(L, LUA_REGISTRYINDEX, fname);
	return 0;
}
static void vm_note_memory(struct script_vm *vm)
{
	atomic_store_explicit(&vm->mem, (size_t)lua_gc(vm->L, LUA_GCCOUNT, 0) * 1024,
			      memory_order_relaxed);
}

/* ------------------------------------------------------------- running */

#define HOOK_EVERY 100000
#define GC_EVERY 50 /* scripts between two incremental GC steps, as Redis */
#define REG_PENDING "rcukv_pending_error"

static void hook(lua_State *L, lua_Debug *ar);

/* The kill check's hook, when busy-reply-threshold is on (as Redis). */
static void set_hook(struct run *r, lua_State *L)
{
	if (atomic_load_explicit(&script_busy_ms, memory_order_relaxed) > 0)
		lua_sethook(L, hook, LUA_MASKCOUNT, HOOK_EVERY);
	else
		lua_sethook(L, NULL, 0, 0);
	(void)r;
}

/* The count hook: SCRIPT KILL's flag.  Once killed it raises at every line,
 * so that no pcall can swallow the kill (as Redis). */
static void hook(lua_State *L, lua_Debug *ar)
{
	struct run *r = run_of(L);

	(void)ar;
	if (r && r->raise_pending) {
		/* redis.call's error after a yield: raised in the script's frame,
		 * at the instruction after the call */
		r->raise_pending = 0;
		set_hook(r, L);
		lua_getfield(L, LUA_REGISTRYINDEX, REG_PENDING);
		lua_pushnil(L);
		lua_setfield(L, LUA_REGISTRYINDEX, REG_PENDING);
		lua_error(L);
	}
	/* SCRIPT KILL, or the server shutting down (the worker must stop) */
	if (r && (atomic_load_explicit(&r->vm->kill, memory_order_relaxed) ||
		  atomic_load_explicit(&g_srv.shutdown_asap, memory_order_relaxed))) {
		lua_sethook(L, hook, LUA_MASKLINE, 0);
		srv_log(LL_WARNING, "Lua script killed by user with SCRIPT KILL.");
		raise_error(L, "Script killed by user with SCRIPT KILL...");
	}
}

static void resume(struct run *r)
{
	r->status = lua_resume(r->co, r->nres);
	r->nres = 0;
}

static int txn_fn(struct ht_txn *tx, void *arg)
{
	struct run *r = arg;

	(void)tx;
	r->in_txn = 1;
	resume(r);
	r->in_txn = 0;
	return 0;
}

/*
 * Run the coroutine to its end: each stretch inside one ht_txn() over KEYS
 * (while the connection is on the db they were declared in), each command
 * that cannot run there (run_command()'s 2: the coroutine yielded) alone
 * between two stretches, its value resumed into redis.call.
 */
static void drive(struct run *r)
{
	for (;;) {
		int e;

		if (!(r->txn_ht && db_of(r->c) == r->txn_ht &&
		      ht_txn(r->txn_ht, (size_t)r->nkeys, r->keys, r->klens, txn_fn, r) == 0))
			resume(r);
		if (r->status != LUA_YIELD)
			return;
		if (!r->pend_argv) /* coroutine.yield() of the script's own: go on */
			continue;
		e = run_command(r, r->co, r->pend_argc, r->pend_argv, r->pend_argl, 1);
		free(r->pend_argl);
		r->pend_argv = NULL;
		r->pend_argl = NULL;
		r->nres = 1;
		if (e && r->pend_raise) {
			lua_pushvalue(r->co, -1);
			lua_setfield(r->co, LUA_REGISTRYINDEX, REG_PENDING);
			r->raise_pending = 1;
			lua_sethook(r->co, hook, LUA_MASKCOUNT, 1);
		}
	}
}

/* Reply the error the coroutine died of, as Redis 7.0: "-<err> script:
 * <sha>, on <source>:<line>." with the first frame that is the script's. */
static void reply_script_error(struct run *r)
{
	lua_State *co = r->co;
	lua_Debug ar;
	const char *msg = NULL;
	char *full;
	size_t n;
	int found = 0;

	if (lua_istable(co, -1)) {
		lua_getfield(co, -1, "err");
		if (lua_isstring(co, -1))
			msg = lua_tostring(co, -1);
		lua_insert(co, -2); /* keep it referenced under the table */
	} else {
		lua_pushstring(co, "ERR ");
		lua_pushstring(co, lua_isstring(co, -2) ? lua_tostring(co, -2) : "execution failure");
		lua_concat(co, 2);
		msg = lua_tostring(co, -1);
	}
	if (!msg)
		msg = "ERR unknown error";
	for (int level = 0; lua_getstack(co, level, &ar); level++) {
		lua_getinfo(co, "Sl", &ar);
		if (strcmp(ar.what, "C") && strcmp(ar.source, SANDBOX_CHUNK)) {
			found = ar.currentline >= 0;
			break;
		}
	}
	n = strlen(msg) + 128 + (found ? strlen(ar.source) : 0);
	full = xmalloc(n);
	if (found)
		snprintf(full, n, "-%s script: %s, on %s:%d.", msg, r->sha, ar.source, ar.currentline);
	else
		snprintf(full, n, "-%s", msg);
	reply_error(r->c, full);
	free(full);
}

/* Checks before a script with a shebang runs (Redis's scriptPrepareForRun()):
 * Return the refusal or NULL.  A shebang without no-writes makes EVAL a
 * write in Redis's processCommand() (evalGetCommandFlags()), whose checks
 * come first: a read-only replica's refusal before the *_ro one. */
static const char *refuse_run(const struct conn *c, unsigned flags, int ro, int *oom)
{
	int over = atomic_load_explicit(&g_evict_cfg.maxmemory, memory_order_relaxed) &&
		   evict_before_command() != 0;

	*oom = over && !(flags & SHEBANG_ALLOW_OOM);
	if (!(flags & SHEBANG_SET) || (flags & SHEBANG_NO_WRITES))
		return NULL;
	if (replica_refuses(c))
		return ERR_READONLY;
	if (ro)
		return "Can not execute a script with write flag using *_ro command.";
	if (*oom)
		return ERR_OOM;
	if (persist_writes_denied())
		return ERR_MISCONF;
	return NULL;
}

static void set_array(lua_State *L, const char *name, struct conn *c, int from, int n)
{
	lua_newtable(L);
	for (int j = 0; j < n; j++) {
		lua_pushlstring(L, ARGV(c, from + j), ARGL(c, from + j));
		lua_rawseti(L, -2, j + 1);
	}
	lua_setfield(L, -2, name);
}

/* Find or compile the script: its function pushed, its flags.  Return 0,
 * or -1 after replying (NOSCRIPT, a compile error). */
static int script_fn(struct conn *c, lua_State *L, const char *sha, int evalsha, unsigned *flags)
{
	char fname[43];

	snprintf(fname, sizeof(fname), "f_%s", sha);
	lua_getfield(L, LUA_REGISTRYINDEX, fname);
	if (lua_isnil(L, -1)) {
		struct cached *e = NULL;
		const char *body = ARGV(c, 1);
		size_t len = ARGL(c, 1);
		int rc;

		lua_pop(L, 1);
		if (evalsha) {
			e = cache_get(sha);
			if (!e) {
				reply_error(c, "-NOSCRIPT No matching script. Please use EVAL.");
				return -1;
			}
			body = e->body;
			len = e->len;
		}
		rc = compile(c, L, sha, body, len, flags);
		if (rc == 0 && !evalsha)
			cache_add(sha, body, len, *flags);
		free(e);
		if (rc)
			return -1;
		lua_getfield(L, LUA_REGISTRYINDEX, fname);
		return 0;
	}
	fname[0] = 'F';
	lua_getfield(L, LUA_REGISTRYINDEX, fname);
	*flags = (unsigned)lua_tonumber(L, -1);
	lua_pop(L, 1);
	return 0;
}

void script_eval(struct conn *c, int argc, int evalsha, int ro)
{
	long long numkeys;
	char sha[41];
	struct script_vm *vm;
	lua_State *L;
	unsigned flags = 0;
	struct run r = {0};
	const char *why;
	int db = atomic_load_explicit(&c->db, memory_order_relaxed);
	int last_cmd = atomic_load_explicit(&c->last_cmd, memory_order_relaxed);
	int last_sub = atomic_load_explicit(&c->last_sub, memory_order_relaxed);

	if (!resp_str2ll(ARGV(c, 2), ARGL(c, 2), &numkeys)) {
		reply_error(c, ERR_NOT_INT);
		return;
	}
	if (numkeys > argc - 3) {
		reply_error(c, "Number of keys can't be greater than number of args");
		return;
	}
	if (numkeys < 0) {
		reply_error(c, "Number of keys can't be negative");
		return;
	}
	if (evalsha) {
		if (ARGL(c, 1) != 40) {
			reply_error(c, "-NOSCRIPT No matching script. Please use EVAL.");
			return;
		}
		for (int i = 0; i < 40; i++)
			sha[i] = (char)tolower((unsigned char)ARGV(c, 1)[i]);
		sha[40] = '\0';
	} else {
		sha1hex(sha, ARGV(c, 1), ARGL(c, 1));
	}
	vm = vm_get(c);
	L = vm->L;
	if (script_fn(c, L, sha, evalsha, &flags))
		return;
	r.ro = ro || (flags & SHEBANG_NO_WRITES);
	if ((why = refuse_run(c, flags, ro, &r.oom)) != NULL) {
		lua_pop(L, 1);
		reply_error(c, why);
		return;
	}
	r.c = c;
	r.vm = vm;
	r.sha = sha;
	r.resp = 2;
	r.nkeys = (int)numkeys;
	if (numkeys) {
		r.keys = xmalloc((size_t)numkeys * (sizeof(*r.keys) + sizeof(*r.klens)));
		r.klens = (size_t *)(void *)(r.keys + numkeys);
		for (int j = 0; j < numkeys; j++) {
			r.keys[j] = ARGV(c, 3 + j);
			r.klens[j] = ARGL(c, 3 + j);
		}
		r.txn_ht = db_of(c);
	}
	lua_getfield(L, LUA_REGISTRYINDEX, REG_SHADOW);
	set_array(L, "KEYS", c, 3, (int)numkeys);
	set_array(L, "ARGV", c, 3 + (int)numkeys, argc - 3 - (int)numkeys);
	lua_pop(L, 1);
	r.co = lua_newthread(L);
	lua_insert(L, -2);
	lua_xmove(L, r.co, 1); /* the function, into the coroutine */
	lua_pushlightuserdata(L, &r);
	lua_setfield(L, LUA_REGISTRYINDEX, REG_RUN);
	set_hook(&r, r.co);
	vm->run = &r;
	atomic_store_explicit(&vm->wrote, 0, memory_order_relaxed);
	atomic_store_explicit(&vm->kill, 0, memory_order_relaxed);
	atomic_store_explicit(&vm->start_ms, util_mstime(), memory_order_relaxed);

	drive(&r);

	atomic_store_explicit(&vm->start_ms, 0, memory_order_relaxed);
	vm->run = NULL;
	if (atomic_load_explicit(&c->db, memory_order_relaxed) != db) {
		/* SELECT inside a script changes the script's db only (Redis 7) */
		atomic_store_explicit(&c->db, db, memory_order_relaxed);
	}
	db_pin(c);
	atomic_store_explicit(&c->last_cmd, last_cmd, memory_order_relaxed);
	atomic_store_explicit(&c->last_sub, last_sub, memory_order_relaxed);
	if (r.status == 0) {
		lua_settop(r.co, 1); /* the first value returned, or nil */
		reply_value(c, r.co, r.resp);
	} else {
		reply_script_error(&r);
	}
	lua_pushnil(L);
	lua_setfield(L, LUA_REGISTRYINDEX, REG_RUN);
	lua_pop(L, 1); /* the coroutine: garbage from here */
	free(r.keys);
	free(r.pend_argl);
	if (++vm->gc_count == GC_EVERY) {
		lua_gc(L, LUA_GCSTEP, GC_EVERY);
		vm->gc_count = 0;
	}
	vm_note_memory(vm);
}

void script_load(struct conn *c, const char *body, size_t len)
{
	struct script_vm *vm = vm_get(c);
	char sha[41];
	unsigned flags;

	sha1hex(sha, body, len);
	if (compile(c, vm->L, sha, body, len, &flags))
		return;
	cache_add(sha, body, len, flags);
	reply_bulk(c, sha, 40);
	vm_note_memory(vm);
}

int script_kill(void)
{
	long long now = util_mstime();
	long long limit = atomic_load_explicit(&script_busy_ms, memory_order_relaxed);
	int killed = 0, unkillable = 0;

	if (limit <= 0)
		return -1;
	for (int i = 0; i < g_srv.nworkers && i < 1024; i++) {
		struct script_vm *vm = vm_slot(&g_srv.workers[i]);
		long long start;

		if (!vm)
			continue;
		start = atomic_load_explicit(&vm->start_ms, memory_order_relaxed);
		if (!start || now - start < limit)
			continue;
		if (atomic_load_explicit(&vm->wrote, memory_order_relaxed)) {
			unkillable = 1;
			continue;
		}
		atomic_store_explicit(&vm->kill, 1, memory_order_relaxed);
		killed = 1;
	}
	return killed ? 0 : unkillable ? -2 : -1;
}

void script_info(size_t *lua_bytes, size_t *nscripts, size_t *bytes)
{
	*lua_bytes = 0;
	for (int i = 0; i < g_srv.nworkers && i < 1024; i++) {
		struct script_vm *vm = vm_slot(&g_srv.workers[i]);

		if (vm)
			*lua_bytes += atomic_load_explicit(&vm->mem, memory_order_relaxed);
	}
	pthread_mutex_lock(&cache_lock);
	*nscripts = cache_n;
	*bytes = cache_bytes;
	pthread_mutex_unlock(&cache_lock);
}

void script_worker_fini(struct worker *w)
{
	struct script_vm *vm = w->script_vm;

	if (vm && vm->L) {
		lua_close(vm->L);
		vm->L = NULL;
		atomic_store_explicit(&vm->mem, 0, memory_order_relaxed);
	}
}
