/*
 * cmd_docs.c - COMMAND DOCS "arguments", from the args spec of a row of
 * server/commands.def.
 *
 * redis-cli builds its command-line hints and "help <command>" text from
 * these maps.  Each command's syntax is written once, in its row, in a
 * compact notation of our own (below), and turned into the argument maps
 * Redis 7.0 returns.  Specs are parsed on each request (COMMAND DOCS is
 * rare) into a parser on the stack: no allocation, no shared state, so any
 * thread may call these.  cmd_docs_check() runs on every row at start-up
 * (cmd_rows_check()), so a spec that reaches cmd_docs_reply() parses.
 */
#include "server/cmd.h"
#include "server/conn.h"
#include "server/reply.h"

#include <ctype.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)

/*
 * The notation:
 *   name[:type]      an argument (type key, string, integer, double, pattern,
 *                    unix-time; "key" defaults to key, others to string)
 *   TOKEN            a pure token (all capitals)
 *   TOKEN name:type  a token followed by its value (one argument)
 *   [ ... ]          optional: several items make a block, '|' a choice
 *   { ... }          required group: a block, or a choice with '|'
 *   item...          the item may repeat
 * "" is a command whose arguments field is an empty array; a row with no
 * arguments field at all has NULL.
 */

#define MAXNODES 64

struct node {
	const char *name, *type, *token;
	size_t namelen, tokenlen, typelen;
	int optional, multiple;
	int kind; /* 0 plain, 1 pure-token, 2 block, 3 oneof */
	int child[16];
	int nchild;
};

struct parser {
	const char *p;
	struct node n[MAXNODES];
	int nn;
	const char *err; /* the first reason the spec is malformed, or NULL */
};

static int is_upper_word(const char *p, size_t n)
{
	int letters = 0;

	for (size_t i = 0; i < n; i++) {
		if (islower((unsigned char)p[i]))
			return 0;
		letters += isupper((unsigned char)p[i]) != 0;
	}
	return letters > 0;
}

static int new_node(struct parser *ps)
{
	if (ps->nn == MAXNODES) {
		ps->err = "more than " STR(MAXNODES) " nodes";
		ps->nn = MAXNODES - 1; /* keep going on the last node; the spec is refused */
	}
	memset(&ps->n[ps->nn], 0, sizeof(ps->n[0]));
	return ps->nn++;
}

static void skip_ws(struct parser *ps)
{
	while (*ps->p == ' ')
		ps->p++;
}

static int word_len(const char *p)
{
	int n = 0;

	while (p[n] && p[n] != ' ' && p[n] != '|' && p[n] != ']' && p[n] != '}' && p[n] != '[' &&
	       p[n] != '{' && strncmp(p + n, "...", 3))
		n++;
	return n;
}

static int parse_seq(struct parser *ps, char close);

/* One item: a group, a token (maybe with its value) or an argument. */
static int parse_item(struct parser *ps)
{
	int id;

	skip_ws(ps);
	if (*ps->p == '[' || *ps->p == '{') {
		char close = *ps->p == '[' ? ']' : '}';
		int opt = *ps->p == '[';

		ps->p++;
		id = parse_seq(ps, close);
		if (*ps->p == close)
			ps->p++;
		else if (!ps->err)
			ps->err = close == ']' ? "'[' without its ']'" : "'{' without its '}'";
		ps->n[id].optional |= opt;
	} else {
		int n = word_len(ps->p);

		id = new_node(ps);
		if (n == 0) {
			/* a misplaced ']', '}' or '...': refused, and skipped so
			 * the scan always moves on */
			if (!ps->err)
				ps->err = "a misplaced ']', '}' or '...', or an empty item";
			ps->p += *ps->p != '\0';
			return id;
		}
		if (is_upper_word(ps->p, (size_t)n)) {
			const char *tok = ps->p;
			const char *q = ps->p + n;

			ps->n[id].token = tok;
			ps->n[id].tokenlen = (size_t)n;
			ps->p = q;
			/* TOKEN value: a lower-case word right after, same alternative */
			if (q[0] == ' ' && islower((unsigned char)q[1])) {
				ps->p = q + 1;
				n = word_len(ps->p);
			} else {
				ps->n[id].kind = 1;
				ps->n[id].name = tok;
				ps->n[id].namelen = (size_t)n;
				goto suffix;
			}
		}
		{
			const char *w = ps->p, *colon = memchr(w, ':', (size_t)n);

			/* "ip:port" keeps its colon: only known types follow one */
			if (colon &&
			    (strncmp(colon + 1, "integer", 7) && strncmp(colon + 1, "key", 3) &&
			     strncmp(colon + 1, "double", 6) && strncmp(colon + 1, "pattern", 7) &&
			     strncmp(colon + 1, "unix-time", 9) && strncmp(colon + 1, "string", 6)))
				colon = NULL;
			ps->n[id].name = w;
			ps->n[id].namelen = colon ? (size_t)(colon - w) : (size_t)n;
			if (colon) {
				ps->n[id].type = colon + 1;
				ps->n[id].typelen = (size_t)(w + n - colon - 1);
			} else if (ps->n[id].namelen == 3 && !memcmp(w, "key", 3)) {
				ps->n[id].type = "key";
				ps->n[id].typelen = 3;
			} else {
				ps->n[id].type = "string";
				ps->n[id].typelen = 6;
			}
			ps->p = w + n;
		}
	}
suffix:
	if (!strncmp(ps->p, "...", 3)) {
		ps->n[id].multiple = 1;
		ps->p += 3;
	}
	return id;
}

/* A block (kind 2) or a oneof (kind 3) of @n nodes. */
static int group_node(struct parser *ps, int kind, const char *name, const int *child, int n)
{
	int id = new_node(ps);

	ps->n[id].kind = kind;
	ps->n[id].name = name;
	ps->n[id].namelen = strlen(name);
	memcpy(ps->n[id].child, child, (size_t)n * sizeof(int));
	ps->n[id].nchild = n;
	return id;
}

/* Items up to `close` (or the end): one item stays itself, several make a
 * block, alternatives separated by '|' make a oneof. */
static int parse_seq(struct parser *ps, char close)
{
	int alts[16], nalt = 0;

	for (;;) {
		int items[16], nitems = 0;

		for (;;) {
			skip_ws(ps);
			if (!*ps->p || *ps->p == close || *ps->p == '|')
				break;
			int it = parse_item(ps);

			if (nitems < 16)
				items[nitems++] = it;
			else if (!ps->err)
				ps->err = "more than 16 items in one block";
		}
		if (nitems == 0 && !ps->err)
			ps->err = "an empty group or alternative";
		alts[nalt] = nitems == 1 ? items[0] : group_node(ps, 2, "block", items, nitems);
		if (nalt < 15)
			nalt++;
		else if (!ps->err)
			ps->err = "more than 15 alternatives";
		if (*ps->p != '|')
			break;
		ps->p++;
	}
	return nalt == 1 ? alts[0] : group_node(ps, 3, "choice", alts, nalt);
}

static void emit(struct conn *c, struct parser *ps, int id)
{
	const struct node *n = &ps->n[id];
	int nflags = n->optional + n->multiple;
	int fields = 2 + (n->token && n->kind != 2 && n->kind != 3) + (nflags > 0) + (n->kind >= 2);
	static const char *const kinds[] = {NULL, "pure-token", "block", "oneof"};

	reply_map(c, fields);
	reply_bulk_str(c, "name");
	if (n->kind == 1) {
		char low[64];
		size_t l = n->namelen < sizeof(low) ? n->namelen : sizeof(low) - 1;

		for (size_t i = 0; i < l; i++)
			low[i] = (char)tolower((unsigned char)n->name[i]);
		reply_bulk(c, low, l);
	} else {
		reply_bulk(c, n->name, n->namelen);
	}
	reply_bulk_str(c, "type");
	if (n->kind)
		reply_bulk_str(c, kinds[n->kind]);
	else
		reply_bulk(c, n->type, n->typelen);
	if (n->token && n->kind != 2 && n->kind != 3) {
		reply_bulk_str(c, "token");
		reply_bulk(c, n->token, n->tokenlen);
	}
	if (nflags) {
		reply_bulk_str(c, "flags");
		reply_set(c, nflags);
		if (n->optional)
			reply_simple(c, "optional");
		if (n->multiple)
			reply_simple(c, "multiple");
	}
	if (n->kind >= 2) {
		reply_bulk_str(c, "arguments");
		reply_array(c, n->nchild);
		for (int i = 0; i < n->nchild; i++)
			emit(c, ps, n->child[i]);
	}
}

/* Parse a whole spec: a sequence of items.  Return the number of top-level
 * items, stored in top[]; ps->err says whether it was well formed. */
static int parse_spec(struct parser *ps, const char *spec, int top[16])
{
	int ntop = 0;

	memset(ps, 0, sizeof(*ps));
	ps->p = spec;
	for (;;) {
		int it;

		skip_ws(ps);
		if (!*ps->p)
			break;
		if (*ps->p == '|' || *ps->p == ']' || *ps->p == '}') {
			if (!ps->err)
				ps->err = "a '|', ']' or '}' outside any group";
			ps->p++;
			continue;
		}
		it = parse_item(ps);
		if (ntop < 16)
			top[ntop++] = it;
		else if (!ps->err)
			ps->err = "more than 16 top-level items";
	}
	return ntop;
}

const char *cmd_docs_check(const char *spec)
{
	struct parser ps;
	int top[16];

	parse_spec(&ps, spec, top);
	return ps.err;
}

void cmd_docs_reply(struct conn *c, const char *spec)
{
	struct parser ps;
	int top[16], ntop = parse_spec(&ps, spec, top);

	reply_array(c, ntop);
	for (int i = 0; i < ntop; i++)
		emit(c, &ps, top[i]);
}
