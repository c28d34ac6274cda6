/*
 * test_cmdrows.c - the start-up self-check of server/commands.def
 * (cmd_rows_check() in server/cmd.c): every real row passes, each way of
 * spoiling a row is refused with a message naming the row, and the server's
 * start-up (cmd_init_rows()) exits 1 with that message instead of serving a
 * malformed table.
 */
#include "server/cmd.h"
#include "server/server.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#define MAXROWS 512

static struct cmd rows[MAXROWS];
static int nrows;

static void load(void)
{
	assert_true(cmd_nrows <= MAXROWS);
	memcpy(rows, cmd_rows, (size_t)cmd_nrows * sizeof(rows[0]));
	nrows = cmd_nrows;
}

static int find(const char *parent, const char *name)
{
	for (int i = 0; i < nrows; i++)
		if (!strcmp(rows[i].name, name) &&
		    (parent ? rows[i].parent && !strcmp(rows[i].parent, parent) : !rows[i].parent))
			return i;
	fail_msg("no row %s", name);
	return -1;
}

/* The check refuses the rows, naming @row and a reason containing @reason. */
static void refused(const char *row, const char *reason)
{
	char buf[256], want[64];
	const char *why = cmd_rows_check(rows, nrows, buf, sizeof(buf));

	assert_non_null(why);
	snprintf(want, sizeof(want), "commands.def row \"%s\": ", row);
	print_message("refused: %s\n", why);
	assert_true(strncmp(why, want, strlen(want)) == 0);
	assert_non_null(strstr(why, reason));
}

static void test_real_rows_pass(void **state)
{
	char buf[256];
	int subs = 0;

	(void)state;
	assert_null(cmd_rows_check(cmd_rows, cmd_nrows, buf, sizeof(buf)));
	for (int i = 0; i < cmd_nrows; i++)
		subs += cmd_rows[i].kind == CMD_ROW_SUB;
	print_message("%d rows (%d subcommands) pass\n", cmd_nrows, subs);
	assert_true(cmd_nrows > 60 && subs > 20);
}

/* Spoil one field of a fresh copy of the real rows: refused by name. */
#define SPOIL(stmt, row, reason)                                                                   \
	do {                                                                                       \
		load();                                                                            \
		stmt;                                                                              \
		refused(row, reason);                                                              \
	} while (0)

static void test_fields(void **state)
{
	int get, set, ck, ping;

	(void)state;
	load();
	get = find(NULL, "get"), set = find(NULL, "set"), ck = find("client", "kill");
	ping = find(NULL, "ping");

	SPOIL(rows[get].name = "GET", "GET", "name: lower-case");
	SPOIL(rows[get].name = "get me", "get me", "name");
	SPOIL(rows[get].proc = NULL, "get", "no handler");
	SPOIL(rows[get].arity = 0, "get", "arity");
	SPOIL(rows[ck].arity = 1, "client|kill", "subcommand's arity");
	SPOIL(rows[get].flags |= CMD_WRITE, "get", "both CMD_WRITE and CMD_READONLY");
	SPOIL(rows[get].flags |= 1u << 20, "get", "unknown CMD_ flag");
	SPOIL(rows[set].flags &= ~(uint32_t)CMD_WRITE, "set", "CMD_DENYOOM without CMD_WRITE");
	SPOIL(rows[get].acl |= ACL_READ, "get", "the flags imply");
	SPOIL(rows[get].acl |= ACL_SLOW, "get", "the flags imply");
	SPOIL(rows[get].acl |= 1u << 25, "get", "unknown ACL_ category");
	SPOIL(rows[get].first_key = 0, "get", "key positions");
	SPOIL(rows[get].last_key = 5, "get", "last key beyond the arity");
	SPOIL(rows[get].group = "strings", "get", "group");
	SPOIL(rows[get].since = "1.0", "get", "since");
	SPOIL(rows[get].summary = "Returns the value", "get", "summary");
	SPOIL(rows[ping].args = "[message", "ping", "'[' without its ']'");
	SPOIL(rows[ping].args = "message]", "ping", "outside any group");
	SPOIL(rows[ping].args = "{a|}", "ping", "empty group or alternative");
	SPOIL(rows[ping].args = "[a }]", "ping", "misplaced");
}

static void test_structure(void **state)
{
	int get, ck, client;

	(void)state;
	load();
	get = find(NULL, "get");
	rows[get].name = "set";
	refused("set", "command defined twice");

	load();
	ck = find("client", "kill");
	rows[ck].name = "list";
	refused("client|list", "subcommand defined twice");

	load();
	ck = find("client", "kill");
	rows[ck].parent = "config";
	refused("config|kill", "must follow its CONTAINER");

	load();
	get = find(NULL, "get");
	rows[get].kind = CMD_ROW_SUB;
	rows[get].parent = "get";
	refused("get|get", "must follow its CONTAINER");

	/* a container whose subcommands are gone */
	load();
	client = find(NULL, "client");
	{
		int first = client + 1, last = first;

		while (last < nrows && rows[last].kind == CMD_ROW_SUB)
			last++;
		memmove(&rows[first], &rows[last], (size_t)(nrows - last) * sizeof(rows[0]));
		nrows -= last - first;
	}
	refused("client", "a CONTAINER without SUB rows");

	load();
	client = find(NULL, "client");
	rows[client].args = "x";
	refused("client", "a container has no arguments");
}

/* What a malformed row does at start-up: the message, then exit 1. */
static void test_startup_refuses(void **state)
{
	int fds[2], status, get;
	char out[1024] = "";
	ssize_t n, got = 0;
	pid_t pid;

	(void)state;
	load();
	get = find(NULL, "get");
	rows[get].arity = 0;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		cmd_init_rows(rows, nrows);
		_exit(0); /* not reached when the check works */
	}
	close(fds[1]);
	while ((n = read(fds[0], out + got, sizeof(out) - 1 - (size_t)got)) > 0)
		got += n;
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	print_message("start-up said: %s", out);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	assert_non_null(strstr(out, "*** FATAL: malformed command table"));
	assert_non_null(strstr(out, "commands.def row \"get\": arity"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_real_rows_pass),
	    cmocka_unit_test(test_fields),
	    cmocka_unit_test(test_structure),
	    cmocka_unit_test(test_startup_refuses),
	};
	int n = (int)(sizeof(tests) / sizeof(tests[0])), failed;

	failed = cmocka_run_group_tests_name("cmdrows", tests, NULL, NULL);
	printf("%d passed, %d failed\n", n - failed, failed);
	return failed ? 1 : 0;
}
