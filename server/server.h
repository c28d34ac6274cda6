/*
 * server.h - the process's state (g_srv, defined in main.c): workers,
 * listeners, shutdown and loading flags, ids.  Written by the main thread at
 * start-up; the _Atomic fields are the ones other threads change or read
 * afterwards.
 */
#ifndef SERVER_SERVER_H
#define SERVER_SERVER_H

#include <stdatomic.h>
#include <sys/types.h>

#include "server/config.h"

struct server {
	struct worker *workers;
	int nworkers;
	struct event_base *base; /* main thread */
	int notify_fd;		 /* eventfd: shutdown requests */
	_Atomic int shutdown_asap;
	/* 1 while the dump at start-up is not yet wholly in the table: commands
	 * without CMD_LOADING answer ERR_LOADING.  Set by the main thread before
	 * any command can run (persist_load_start()), cleared by the loader
	 * thread once, after its last insert; never set again.  Stays 1 after a
	 * failed or stopped load (the server is on its way out).  Read with
	 * acquire (persist_loading()). */
	_Atomic int loading;
	_Atomic int nclients;
	_Atomic unsigned long long next_client_id;
	_Atomic unsigned long long rejected_conns;
	long long start_ms;
	char executable[4096];
	pid_t pid;
	int listen_fds[2 * CFG_MAX_BIND + 1];
	int nlisten;
	struct event *listen_ev[2 * CFG_MAX_BIND + 1];
	char runid[41];
	char replid[41]; /* master_replid: random, chosen at start like runid */
};
extern struct server g_srv;

#endif /* SERVER_SERVER_H */
