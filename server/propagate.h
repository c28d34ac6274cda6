/*
 * propagate.h - what a command appends to the replication stream
 * (propagate.c), around cmd_run()'s call of the handler (through the hooks
 * of cmd.h: cmd is a lower layer).
 */
#ifndef SERVER_PROPAGATE_H
#define SERVER_PROPAGATE_H

/* Start-up, main thread, before the workers: cmd_run()'s hooks
 * (cmd_prop_begin/end of cmd.h) become this file's. */
void prop_init(void);
/* The end of a worker's loop turn (net.c), and before it parks: a stream
 * lock kept for a pipeline's next write is given back. */
void prop_turn_end(void);

#endif /* SERVER_PROPAGATE_H */
