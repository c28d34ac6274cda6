/*
 * info.h - INFO (info.c).
 */
#ifndef SERVER_INFO_H
#define SERVER_INFO_H

void info_reset_stats(void);
void info_sample_ops(void);

#endif /* SERVER_INFO_H */
