/*
 * propagate.c - what a command appends to the replication stream
 * (propagate.h): the rewrite hooks of the commands that are not
 * deterministic or take a relative time, MULTI/EXEC around what EXEC and
 * scripts write, and the stream lock held from before a write's first
 * change to after its append (replm.c keeps the stream;
 * docs/replication.md, "rcukv as a master").
 *
 * A write command propagates as it was sent unless its handler is listed in
 * rewrites[] below, and only when it changed something (the worker's dirty
 * counter moved, as Redis propagates on server.dirty): a new write command
 * needs nothing here if its effect follows from its arguments and the keys'
 * states (docs/adding-a-command.md).
 *
 * Context: the worker running the command, online, inside cmd_run().
 * Tested by tests/cluster/test_master.sh.
 */
#include "hashtable/ht.h"
#include "server/cmd.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/persist.h"
#include "server/propagate.h"
#include "server/replm.h"
#include "server/server.h"
#include "server/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nesting, per thread: EXEC and scripts run their commands through
 * cmd_run() again; the outer one holds the lock. */
static _Thread_local struct {
	int depth; /* prop_begin() nesting */
	int multi; /* MULTI appended for the current outer command */
	/* The lock kept after a write whose connection has more commands
	 * in its buffer (a pipeline): its next write goes on under it. */
	const struct conn *kept;
	int nkept;  /* writes in a row under one hold */
	int wrote;  /* something was appended under the kept hold */
} tl;

/* A pipeline's writes share one hold of the lock, up to this many. */
#define PROP_KEEP_MAX 32

/* Give the kept lock back (another connection's command, a command that
 * is not a write, the end of the loop turn). */
static void release_kept(void)
{
	int wrote = tl.wrote;

	tl.kept = NULL;
	tl.nkept = 0;
	tl.wrote = 0;
	replm_unlock(wrote);
}

void prop_turn_end(void)
{
	if (SRV_UNLIKELY(tl.kept != NULL))
		release_kept();
}

static void emit_strs(int argc, const char *const *argv)
{
	size_t l[8];

	for (int i = 0; i < argc; i++)
		l[i] = strlen(argv[i]);
	replm_emit(argc, argv, l);
}

#define emit_argv replm_emit


/* How a command is propagated (rewrite hooks, by handler).  A command not
 * listed goes as it was sent: it must then be deterministic given the keys'
 * states (docs/adding-a-command.md). */
enum {
	RW_ASIS,   /* argv unchanged */
	RW_SETEXP, /* SET/SETEX/PSETEX: a relative time becomes SET key value PXAT t */
	RW_EXPIRE, /* EXPIRE family: PEXPIREAT key t, or DEL when it removed the key */
	RW_GETEX,  /* GETEX: PEXPIREAT key t, PERSIST key, or DEL */
	RW_FLOAT,  /* INCRBYFLOAT: SET key value KEEPTTL */
	RW_STATE,  /* the key's whole state: RESTORE key t payload REPLACE ABSTTL, or DEL */
	RW_OUTER,  /* EXEC, EVAL, EVALSHA: their writes, wrapped in MULTI/EXEC */
	RW_AFTER,  /* SWAPDB: appended after it ran (it waits out every worker's turn) */
};

static const struct {
	cmd_proc *proc;
	int kind;
} rewrites[] = {
    {cmd_set, RW_SETEXP},	     {cmd_setex, RW_SETEXP},	 {cmd_psetex, RW_SETEXP},
    {cmd_expire, RW_EXPIRE},	     {cmd_pexpire, RW_EXPIRE},	 {cmd_expireat, RW_EXPIRE},
    {cmd_pexpireat, RW_EXPIRE},	     {cmd_getex, RW_GETEX},	 {cmd_incrbyfloat, RW_FLOAT},
    {cmd_hincrbyfloat, RW_STATE},    {cmd_restore, RW_STATE},	 {cmd_exec, RW_OUTER},
    {cmd_eval, RW_OUTER},	     {cmd_evalsha, RW_OUTER},	 {cmd_swapdb, RW_AFTER},
    /* random members: the set's state after (Redis appends SREM of the
     * popped ones; the RESTORE costs the set's size) */
    {cmd_spop, RW_STATE},
};

static int kind_of(const struct cmd *k)
{
	for (size_t i = 0; i < sizeof(rewrites) / sizeof(rewrites[0]); i++)
		if (rewrites[i].proc == k->proc)
			return rewrites[i].kind;
	return RW_ASIS;
}

static void emit_del(const void *key, size_t klen)
{
	const char *a[2] = {"DEL", key};
	size_t l[2] = {3, klen};

	emit_argv(2, a, l);
}

static void emit_key_ll(const char *verb, const void *key, size_t klen, long long v)
{
	char n[32];
	const char *a[3] = {verb, key, n};
	size_t l[3] = {strlen(verb), klen, 0};

	l[2] = (size_t)snprintf(n, sizeof(n), "%lld", v);
	emit_argv(3, a, l);
}

/* Append @c's command (argv, @kind) as the replica must apply it. */
static void emit_command(struct conn *c, int argc, int kind)
{
	const void *key = argc > 1 ? ARGV(c, 1) : NULL;
	size_t klen = argc > 1 ? ARGL(c, 1) : 0;
	const struct ht_entry *e = NULL;
	int64_t x = HT_NO_EXPIRE;

	if (kind != RW_ASIS && kind != RW_AFTER && key) {
		e = ht_peek_rcu(db_of(c), key, klen);
		x = e ? ht_entry_expire(e) : HT_NO_EXPIRE;
	}
	switch (kind) {
	case RW_SETEXP:
		if (!e) {
			emit_del(key, klen);
		} else if (x != HT_NO_EXPIRE) {
			char n[32];
			const char *a[5] = {"SET", key, ht_entry_val(e), "PXAT", n};
			size_t l[5] = {3, klen, ht_entry_vlen(e), 4, 0};

			l[4] = (size_t)snprintf(n, sizeof(n), "%lld", (long long)x);
			emit_argv(5, a, l);
		} else {
			emit_argv(argc, (const char *const *)c->argv, c->argl);
		}
		return;
	case RW_EXPIRE:
	case RW_GETEX:
		if (!e)
			emit_del(key, klen);
		else if (x != HT_NO_EXPIRE)
			emit_key_ll("PEXPIREAT", key, klen, (long long)x);
		else if (kind == RW_GETEX) {
			const char *a[2] = {"PERSIST", key};
			size_t l[2] = {7, klen};

			emit_argv(2, a, l);
		} else {
			emit_argv(argc, (const char *const *)c->argv, c->argl);
		}
		return;
	case RW_FLOAT:
		if (!e) {
			emit_del(key, klen);
		} else {
			const char *a[4] = {"SET", key, ht_entry_val(e), "KEEPTTL"};
			size_t l[4] = {3, klen, ht_entry_vlen(e), 7};

			emit_argv(4, a, l);
		}
		return;
	case RW_STATE:
		if (!e) {
			emit_del(key, klen);
		} else {
			void *pl = NULL;
			size_t pll = 0;
			char n[32];
			const char *a[6] = {"RESTORE", key, n, NULL, "REPLACE", "ABSTTL"};
			size_t l[6] = {7, klen, 0, 0, 7, 6};

			if (persist_dump(e, &pl, &pll) != 0) {
				emit_argv(argc, (const char *const *)c->argv, c->argl);
				return;
			}
			l[2] = (size_t)snprintf(n, sizeof(n), "%lld",
						x == HT_NO_EXPIRE ? 0LL : (long long)x);
			a[3] = pl;
			l[3] = pll;
			emit_argv(6, a, l);
			free(pl);
		}
		return;
	default:
		emit_argv(argc, (const char *const *)c->argv, c->argl);
	}
}

static int prop_begin(struct conn *c, const struct cmd *k, struct prop_call *rc)
{
	int kind = kind_of(k);

	if ((!(k->flags & CMD_WRITE) && kind != RW_OUTER) || !c->w) {
		if (tl.kept && tl.depth == 0)
			release_kept();
		return 0;
	}
	rc->kind = kind;
	rc->outer = kind == RW_OUTER;
	rc->after = kind == RW_AFTER && tl.depth == 0;
	rc->locked = 0;
	if (tl.kept && tl.depth == 0 && (tl.kept != c || rc->after))
		release_kept();
	if (tl.depth == 0 && !rc->after) {
		if (tl.kept) /* the pipeline's hold goes on */
			tl.kept = NULL;
		else
			replm_lock();
		tl.multi = 0;
		rc->locked = 1;
	}
	tl.depth++;
	rc->dirty0 = STAT_GET(c->w->st.dirty);
	return 1;
}

static void prop_end(struct conn *c, int argc, struct prop_call *rc)
{
	int wrote = STAT_GET(c->w->st.dirty) != rc->dirty0;
	long long before;

	tl.depth--;
	if (rc->after)
		replm_lock();
	before = replm_offset_locked();
	if (rc->outer) {
		if (tl.multi && tl.depth == 0) {
			const char *a[1] = {"EXEC"};

			emit_strs(1, a);
			tl.multi = 0;
		}
	} else if (wrote && replm_emitting()) {
		if (tl.depth > 0 && !tl.multi) {
			const char *a[1] = {"MULTI"};

			emit_strs(1, a);
			tl.multi = 1;
		}
		replm_emit_select(atomic_load_explicit(&c->db, memory_order_relaxed));
		emit_command(c, argc, rc->kind);
	}
	if (replm_offset_locked() != before)
		c->repl_woff = replm_offset_locked();
	tl.wrote |= replm_offset_locked() != before;
	if (!rc->locked && !rc->after)
		return;
	/* More of this connection's pipeline is buffered: keep the lock for
	 * its next write (prop_begin() or prop_turn_end() gives it back). */
	if (rc->locked && tl.nkept < PROP_KEEP_MAX && c->qpos < c->qlen &&
	    c->qbuf[c->qpos] == '*' &&
	    !(c->flags & (CONN_CLOSE_AFTER_REPLY | CONN_CLOSE_ASAP | CONN_HELD))) {
		tl.kept = c;
		tl.nkept++;
		return;
	}
	{
		int w = tl.wrote;

		tl.wrote = 0;
		tl.nkept = 0;
		replm_unlock(w);
	}
}


void prop_init(void)
{
	cmd_prop_begin = prop_begin;
	cmd_prop_end = prop_end;
}
