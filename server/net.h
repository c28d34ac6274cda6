/*
 * net.h - listeners, the acceptor, the worker threads and their event loops
 * (net.c, libevent).
 *
 * Every worker thread and the main thread are registered QSBR readers: they
 * report a quiescent state once per event-loop turn and are offline while they
 * block in epoll (see worker_main() in net.c).  Commands therefore run inside
 * an implicit QSBR read-side section and may hold table references until they
 * return.
 */
#ifndef SERVER_NET_H
#define SERVER_NET_H


void net_init(void);
int net_listen(void);
void net_start_workers(void);
void net_stop(void);
/* Main thread: park every worker between commands (a shutdown's final save),
 * and let them go on; shutdown_failed: answer the SHUTDOWN callers' waits. */
void net_pause_workers(void);
void net_resume_workers(int shutdown_failed);


#endif /* SERVER_NET_H */
