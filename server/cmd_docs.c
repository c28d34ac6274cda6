/*
 * cmd_docs.c - the "arguments" of COMMAND DOCS, from which redis-cli builds
 * its command-line hints and "help <command>" text.
 *
 * Each command's syntax is written once below in a compact notation of our
 * own and turned into the argument maps COMMAND DOCS returns:
 *   name[:type]      an argument (type key, string, integer, double, pattern,
 *                    unix-time; "key" defaults to key, others to string)
 *   TOKEN            a pure token (all capitals)
 *   TOKEN name:type  a token followed by its value (one argument)
 *   [ ... ]          optional: several items make a block, '|' a choice
 *   { ... }          required group: a block, or a choice with '|'
 *   item...          the item may repeat
 * Read-only tables, parsed on each request (COMMAND DOCS is rare).
 */
#include "server/server_internal.h"

#include <ctype.h>
#include <string.h>

struct docspec {
	const char *cmd;
	const char *args;
};

static const struct docspec specs[] = {
	{ "ping", "[message]" },
	{ "echo", "message" },
	{ "hello", "[protover:integer [AUTH username password] [SETNAME clientname]]" },
	{ "auth", "[username] password" },
	{ "select", "index:integer" },
	{ "info", "[section...]" },
	{ "shutdown", "[NOSAVE|SAVE] [NOW] [FORCE] [ABORT]" },
	{ "client|setname", "connection-name" },
	{ "client|kill",
	  "{ip:port|[ID client-id:integer] [TYPE type] [USER username] [ADDR ip:port] "
	  "[LADDR ip:port] [SKIPME yes/no] [MAXAGE maxage:integer]}" },
	{ "client|list", "[TYPE type] [ID client-id:integer...]" },
	{ "config|get", "parameter..." },
	{ "config|set", "{parameter value}..." },
	{ "command|info", "[command-name...]" },
	{ "command|docs", "[command-name...]" },
	{ "get", "key" },
	{ "set",
	  "key value [NX|XX] [GET] [EX seconds:integer|PX milliseconds:integer|"
	  "EXAT unix-time-seconds:unix-time|PXAT unix-time-milliseconds:unix-time|KEEPTTL]" },
	{ "setnx", "key value" },
	{ "setex", "key seconds:integer value" },
	{ "psetex", "key milliseconds:integer value" },
	{ "getset", "key value" },
	{ "getdel", "key" },
	{ "getex",
	  "key [EX seconds:integer|PX milliseconds:integer|EXAT unix-time-seconds:unix-time|"
	  "PXAT unix-time-milliseconds:unix-time|PERSIST]" },
	{ "mget", "key..." },
	{ "mset", "{key value}..." },
	{ "msetnx", "{key value}..." },
	{ "del", "key..." },
	{ "unlink", "key..." },
	{ "exists", "key..." },
	{ "incr", "key" },
	{ "decr", "key" },
	{ "incrby", "key increment:integer" },
	{ "decrby", "key decrement:integer" },
	{ "incrbyfloat", "key increment:double" },
	{ "append", "key value" },
	{ "strlen", "key" },
	{ "getrange", "key start:integer end:integer" },
	{ "setrange", "key offset:integer value" },
	{ "expire", "key seconds:integer [NX|XX|GT|LT]" },
	{ "pexpire", "key milliseconds:integer [NX|XX|GT|LT]" },
	{ "expireat", "key unix-time-seconds:unix-time [NX|XX|GT|LT]" },
	{ "pexpireat", "key unix-time-milliseconds:unix-time [NX|XX|GT|LT]" },
	{ "ttl", "key" },
	{ "pttl", "key" },
	{ "expiretime", "key" },
	{ "pexpiretime", "key" },
	{ "persist", "key" },
	{ "type", "key" },
	{ "rename", "key newkey:key" },
	{ "renamenx", "key newkey:key" },
	{ "copy", "source:key destination:key [DB destination-db:integer] [REPLACE]" },
	{ "keys", "pattern:pattern" },
	{ "scan", "cursor:integer [MATCH pattern:pattern] [COUNT count:integer] [TYPE type]" },
	{ "flushdb", "[ASYNC|SYNC]" },
	{ "flushall", "[ASYNC|SYNC]" },
};

#define MAXNODES 64

struct node {
	const char *name, *type, *token;
	size_t namelen, tokenlen, typelen;
	int optional, multiple;
	int kind;               /* 0 plain, 1 pure-token, 2 block, 3 oneof */
	int child[16];
	int nchild;
};

struct parser {
	const char *p;
	struct node n[MAXNODES];
	int nn;
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
	if (ps->nn == MAXNODES)
		srv_die("command docs spec too large");
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
		ps->n[id].optional |= opt;
	} else {
		int n = word_len(ps->p);

		id = new_node(ps);
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
			if (colon && (strncmp(colon + 1, "integer", 7) && strncmp(colon + 1, "key", 3) &&
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
			if (nitems < 16)
				items[nitems++] = parse_item(ps);
		}
		if (nitems == 1) {
			alts[nalt] = items[0];
		} else {
			int b = new_node(ps);

			ps->n[b].kind = 2;
			ps->n[b].name = "block";
			ps->n[b].namelen = 5;
			memcpy(ps->n[b].child, items, (size_t)nitems * sizeof(int));
			ps->n[b].nchild = nitems;
			alts[nalt] = b;
		}
		if (nalt < 15)
			nalt++;
		if (*ps->p != '|')
			break;
		ps->p++;
	}
	if (nalt == 1)
		return alts[0];
	{
		int o = new_node(ps);

		ps->n[o].kind = 3;
		ps->n[o].name = "choice";
		ps->n[o].namelen = 6;
		memcpy(ps->n[o].child, alts, (size_t)nalt * sizeof(int));
		ps->n[o].nchild = nalt;
		return o;
	}
}

static void emit(struct conn *c, struct parser *ps, int id)
{
	const struct node *n = &ps->n[id];
	int nflags = n->optional + n->multiple;
	int fields = 2 + (n->token && n->kind != 2 && n->kind != 3) + (nflags > 0) +
		     (n->kind >= 2);
	static const char *const kinds[] = { NULL, "pure-token", "block", "oneof" };

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

static const char *spec_of(const char *fullname)
{
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		if (!strcmp(specs[i].cmd, fullname))
			return specs[i].args;
	return NULL;
}

int cmd_docs_has_args(const char *fullname)
{
	return spec_of(fullname) != NULL;
}

void cmd_docs_reply_args(struct conn *c, const char *fullname)
{
	const char *spec = spec_of(fullname);
	struct parser ps;
	int top[16], ntop = 0;

	memset(&ps, 0, sizeof(ps));
	ps.p = spec ? spec : "";
	for (;;) {
		skip_ws(&ps);
		if (!*ps.p)
			break;
		if (ntop < 16)
			top[ntop++] = parse_item(&ps);
		if (*ps.p == '|' || *ps.p == ']' || *ps.p == '}')
			ps.p++;         /* stray separators in a spec: skip */
	}
	reply_array(c, ntop);
	for (int i = 0; i < ntop; i++)
		emit(c, &ps, top[i]);
}
