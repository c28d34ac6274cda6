/* bench_srcu.h - shared by bench_srcu.c and bench_srcu_urcu.c. */
#ifndef BENCH_SRCU_H
#define BENCH_SRCU_H
double bench_now_ns(void);
/* Times n liburcu memb synchronize_rcu() calls in batches of `batch`,
 * writing n / batch per-call averages to samples. */
void bench_urcu_memb_sync(double *samples, int n, int with_idle_reader, int batch);
#endif
