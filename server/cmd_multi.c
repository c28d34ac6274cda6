/*
 * cmd_multi.c - the transactions group: MULTI EXEC DISCARD WATCH UNWATCH
 * (Redis's src/multi.c).  The queue and the WATCH registry are multi.c's;
 * dispatch (cmd.c) queues commands between MULTI and EXEC.
 *
 * EXEC is atomic for every reader and every other writer.  It runs the
 * queue as one ht_txn() over the keys of every queued command and every
 * watched key (their first/last/step positions in commands.def): the
 * stripes of those keys are held for the whole run, so no other client's
 * write comes between two of its commands, and the table's per-stripe
 * sequence counts (ht.h guarantee 9) keep lock-free lookups on other
 * workers from seeing some of its writes and not others.  The handlers run
 * unchanged inside: their single-key writes and MSET/RENAME's ht_txn() find
 * their stripes held (ht_txn() nests).  The WATCH check runs inside the same
 * section, so no write can slip between the check and the first command.
 *
 * A queued command without keys that works on the whole keyspace or the
 * server (FLUSHALL, KEYS, SCAN, DBSIZE, INFO, CONFIG, CLIENT KILL, BGSAVE...:
 * no key positions and write, admin, @keyspace or @dangerous) cannot run
 * with stripes held (it takes every stripe, or may evict any key): it runs
 * alone, between the atomic runs of the keyed commands before and after it.
 * A transaction made of keyed commands, which is what applications send, is
 * wholly atomic; one that mixes in FLUSHALL is atomic up to it and after it.
 */
#include "hashtable/ht.h"
#include "server/cmd.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/multi.h"
#include "server/reply.h"
#include "server/util.h"

#include <stdlib.h>
#include <string.h>

void cmd_multi(struct conn *c, int argc)
{
	struct multi *m = multi_of(c);

	(void)argc;
	if (m->active) {
		reply_error(c, "MULTI calls can not be nested");
		return;
	}
	m->active = 1;
	atomic_store_explicit(&c->multi_count, 0, memory_order_relaxed);
	reply_ok(c);
}

void cmd_discard(struct conn *c, int argc)
{
	(void)argc;
	if (!c->multi || !c->multi->active) {
		reply_error(c, "DISCARD without MULTI");
		return;
	}
	multi_discard(c);
	reply_ok(c);
}

void cmd_watch(struct conn *c, int argc)
{
	struct multi *m = multi_of(c);

	if (m->active) {
		reply_error(c, "WATCH inside MULTI is not allowed");
		return;
	}
	/* As Redis: no point in watching more once a watched key was written. */
	if (!atomic_load_explicit(&m->dirty_cas, memory_order_relaxed))
		for (int j = 1; j < argc; j++)
			multi_watch(c, K(j));
	reply_ok(c);
}

void cmd_unwatch(struct conn *c, int argc)
{
	(void)argc;
	/* Queued, it runs inside EXEC, which unwatches everything at its end
	 * anyway (and holds the watched keys' stripes meanwhile). */
	if (!c->multi || !c->multi->in_exec)
		multi_unwatch_all(c);
	reply_ok(c);
}

/* ------------------------------------------------------------------ EXEC */

/* The keys one atomic run holds: pointers into the queued arguments and the
 * WATCH registry, both stable for the whole EXEC. */
struct keyset {
	const void **keys;
	size_t *klens;
	size_t n, cap;
};

static void keyset_add(struct keyset *ks, const void *key, size_t klen)
{
	if (ks->n == ks->cap) {
		ks->cap = ks->cap ? ks->cap * 2 : 16;
		ks->keys = realloc(ks->keys, ks->cap * sizeof(*ks->keys));
		ks->klens = realloc(ks->klens, ks->cap * sizeof(*ks->klens));
		if (!ks->keys || !ks->klens)
			srv_die("out of memory running EXEC");
	}
	ks->keys[ks->n] = key;
	ks->klens[ks->n++] = klen;
}

/* Point the connection's argument vector at queued command @q. */
static void use_args(struct conn *c, const struct multi_cmd *q)
{
	c->argc = q->argc;
	c->argv = q->argv;
	c->argl = q->argl;
}

/* Whether queued command @q (row @k) uses another database than the
 * connection's: SELECT, MOVE, SWAPDB, COPY ... DB.  Such a command runs
 * alone, and the run after it works on the connection's db as it is then. */
static int changes_db(const struct cmd *k, const struct multi_cmd *q)
{
	if (k->proc == cmd_select || k->proc == cmd_move || k->proc == cmd_swapdb)
		return 1;
	if (k->proc == cmd_copy)
		for (int j = 3; j < q->argc; j++)
			if (util_strcaseeq(q->argv[j], q->argl[j], "db"))
				return 1;
	return 0;
}

/*
 * Add queued command @q's keys to @ks.  Return 1 if it must run alone (no
 * key positions, and it works on the whole keyspace or the server; or it
 * changes or crosses databases, changes_db()), else 0.
 * An unknown command or a wrong arity (the table changed since it was
 * queued) adds nothing and runs in place, to reply its error.
 */
static int add_keys(struct conn *c, const struct multi_cmd *q, struct keyset *ks)
{
	const struct cmd *k;
	int first, last, step;

	use_args(c, q);
	k = cmd_row_of(c);
	if (!k)
		return 0;
	if (changes_db(k, q))
		return 1;
	/* A script holds its own KEYS' stripes and may run commands outside
	 * them (script.c): it cannot run inside another ht_txn(). */
	if (k->proc == cmd_eval || k->proc == cmd_evalsha || k->proc == cmd_eval_ro ||
	    k->proc == cmd_evalsha_ro)
		return 1;
	/* keys after a numkeys argument (ZUNIONSTORE's sources, ZMPOP's keys) */
	if (cmd_numkeys_range(k, q->argc, q->argv, q->argl, &first, &last) > 0) {
		for (int i = first; i <= last; i++)
			keyset_add(ks, q->argv[i], q->argl[i]);
		if (k->first_key == 0)
			return 0;
	}
	if (k->first_key == 0)
		return (k->flags & (CMD_WRITE | CMD_ADMIN)) ||
		       (k->acl & (ACL_KEYSPACE | ACL_DANGEROUS | ACL_ADMIN));
	if (cmd_key_range(k, q->argc, &first, &last, &step))
		for (int i = first; i <= last; i += step)
			keyset_add(ks, q->argv[i], q->argl[i]);
	return 0;
}

/* One atomic run: queued commands [from, to), and, for the first one, the
 * WATCH check and the reply's header. */
struct run {
	struct conn *c;
	int from, to;
	int first;
	int ran;
	int broken;
};

static int run_fn(struct ht_txn *tx, void *arg)
{
	struct run *r = arg;
	struct conn *c = r->c;
	struct multi *m = c->multi;

	(void)tx;
	r->ran = 1;
	if (r->first) {
		if (multi_watch_broken(c)) {
			r->broken = 1;
			return 0;
		}
		reply_array(c, m->nq);
	}
	for (int i = r->from; i < r->to; i++) {
		use_args(c, &m->q[i]);
		cmd_exec_one(c);
	}
	return 0;
}

/* Run @r holding the stripes of @ks (nothing to hold: just run it), in the
 * table of the connection's db as it is now (a SELECT or SWAPDB before it
 * ran alone). */
static void run_atomic(struct run *r, struct keyset *ks)
{
	db_pin(r->c);
	if (ks->n && ht_txn(db_of(r->c), ks->n, ks->keys, ks->klens, run_fn, r) == 0)
		return;
	if (!r->ran) /* no keys, or ht_txn() could not start (no memory) */
		run_fn(NULL, r);
}

void cmd_exec(struct conn *c, int argc)
{
	struct multi *m = c->multi;
	int saved_argc = c->argc, i = 0;
	const char **saved_argv = c->argv;
	size_t *saved_argl = c->argl;
	struct keyset ks = {0};
	int broken = 0;

	(void)argc;
	if (!m || !m->active) {
		reply_error(c, "EXEC without MULTI");
		return;
	}
	if (m->dirty_exec) {
		reply_error(c, "-EXECABORT Transaction discarded because of previous errors.");
		multi_discard(c);
		return;
	}
	m->in_exec = 1;
	/* Runs of keyed commands, each atomic; a whole-keyspace command alone
	 * between them.  The first run also holds the keys watched in the
	 * connection's db (keys watched in another db are checked unheld). */
	for (int w = 0; w < m->nw; w++) {
		const void *key;
		size_t klen;
		int db;

		multi_watch_key(c, w, &db, &key, &klen);
		if (db == atomic_load_explicit(&c->db, memory_order_relaxed))
			keyset_add(&ks, key, klen);
	}
	do {
		struct run r = {.c = c, .from = i, .first = i == 0};
		int alone = 0;

		for (; i < m->nq; i++)
			if ((alone = add_keys(c, &m->q[i], &ks)) != 0)
				break;
		r.to = i;
		run_atomic(&r, &ks);
		ks.n = 0;
		if (r.broken) {
			broken = 1;
			break;
		}
		if (alone) {
			struct run one = {.c = c, .from = i, .to = i + 1};

			db_pin(c);
			run_fn(NULL, &one);
			i++;
		}
	} while (i < m->nq);
	m->in_exec = 0;
	c->argc = saved_argc;
	c->argv = saved_argv;
	c->argl = saved_argl;
	free(ks.keys);
	free(ks.klens);
	if (broken)
		reply_null_array(c);
	multi_discard(c);
}
