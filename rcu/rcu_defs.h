/*
 * rcu_defs.h - what every RCU flavor header shares: struct rcu_head, the
 * publish/subscribe pointer primitives, memory barriers, the die macro and the
 * statistics record.
 *
 * Owns nothing at run time.  The pointer primitives are GCC __atomic builtins on
 * plain pointer fields, so RCU-protected fields need no _Atomic qualifier:
 *   rcu_dereference(p)      consume load (acquire on gcc); read side of any flavor
 *   rcu_assign_pointer(p,v) release store; publishes v's initialisation first
 *   rcu_access_pointer(p)   relaxed load for comparisons only, never dereferenced
 *   rcu_dereference_protected(p, c)  update side, c names the lock held
 * Under ThreadSanitizer (RCU_TSAN) full fences become seq_cst read-modify-writes
 * on one word, because TSan does not model atomic_thread_fence().
 * Tortured by tests/rcu/test_torture.c (both flavors).
 */
#ifndef RCU_DEFS_H
#define RCU_DEFS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define RCU_LIKELY(x) __builtin_expect(!!(x), 1)
#define RCU_UNLIKELY(x) __builtin_expect(!!(x), 0)

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))
#endif

/* --- barriers ------------------------------------------------------------ */

/* Compiler-only barrier: stops the compiler moving memory accesses across. */
#define rcu_barrier_compiler() atomic_signal_fence(memory_order_seq_cst)

#if defined(RCU_TSAN) && RCU_TSAN
extern _Atomic unsigned long rcu_tsan_fence_word;
#define rcu_smp_mb() \
	((void)atomic_fetch_add_explicit(&rcu_tsan_fence_word, 0, memory_order_seq_cst))
#else
/* Full barrier: orders every earlier load and store before every later one. */
#define rcu_smp_mb() atomic_thread_fence(memory_order_seq_cst)
#endif

/*
 * Set once, before main(), by the library constructor: non-zero when
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is registered for this process.
 * Readers then need only compiler barriers; the grace period supplies the
 * fence on their behalf.  Read-only after start-up.
 */
extern int rcu_has_membarrier;

/*
 * The reader's half of an asymmetric fence: a compiler barrier when the
 * updater calls membarrier(), a real fence otherwise.  Pairs with
 * rcu_heavy_mb() in the grace-period code (rcu_core.c).
 */
#define rcu_light_mb()                          \
	do {                                    \
		if (RCU_LIKELY(rcu_has_membarrier)) \
			rcu_barrier_compiler(); \
		else                            \
			rcu_smp_mb();           \
	} while (0)

/* --- publish / subscribe ------------------------------------------------- */

#define rcu_access_pointer(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define rcu_assign_pointer(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
/* Quick Quiz 8: initialising a structure no reader can reach yet. */
#define RCU_INIT_POINTER(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELAXED)

/* Read-side state of the calling thread, for the checker and for assertions:
 * QSBR: registered and online; memb: inside a section; any: either, or
 * inside a section of some SRCU domain (tracked by the RCU_DEBUG build only). */
int rcu_qsbr_read_held(void);
int rcu_memb_read_held(void);
int rcu_read_held_any(void);
#if defined(RCU_FLAVOR_QSBR)
#define RCU_DEBUG_FLAVOR_HELD() rcu_qsbr_read_held()
#define RCU_DEBUG_FLAVOR_STR "qsbr"
#elif defined(RCU_FLAVOR_MEMB)
#define RCU_DEBUG_FLAVOR_HELD() rcu_memb_read_held()
#define RCU_DEBUG_FLAVOR_STR "memb"
#else
#define RCU_DEBUG_FLAVOR_HELD() rcu_read_held_any()
#define RCU_DEBUG_FLAVOR_STR "RCU (any flavor)"
#endif

#if defined(RCU_DEBUG) && RCU_DEBUG
/*
 * The checker (make DEBUG_RCU=1): each dereference checks the calling
 * thread's read-side state against the flavor the unit maps
 * (RCU_DEBUG_FLAVOR_HELD() above) and aborts naming the
 * expression, the flavor and the thread.  Zero cost when RCU_DEBUG is off.
 */
void rcu_debug_check_at(int ok, const char *what, const char *expr, const char *flavor,
			const char *file, int line);
#define rcu_debug_check(ok, what, expr, flavor) \
	rcu_debug_check_at((ok), (what), (expr), (flavor), __FILE__, __LINE__)
#define rcu_dereference(p)                                                       \
	(rcu_debug_check(RCU_DEBUG_FLAVOR_HELD(), "rcu_dereference", #p,         \
			 RCU_DEBUG_FLAVOR_STR),                                  \
	 __atomic_load_n(&(p), __ATOMIC_CONSUME))
/* Read side, or update side with c naming the lock that protects p. */
#define rcu_dereference_check(p, c)                                              \
	(rcu_debug_check((c) || RCU_DEBUG_FLAVOR_HELD(), "rcu_dereference_check", #p, \
			 RCU_DEBUG_FLAVOR_STR),                                  \
	 __atomic_load_n(&(p), __ATOMIC_CONSUME))
/* Update side only: c says which lock makes the plain load safe. */
#define rcu_dereference_protected(p, c)                                          \
	(rcu_debug_check(!!(c), "rcu_dereference_protected", #p, "update side"), \
	 __atomic_load_n(&(p), __ATOMIC_RELAXED))
#else
#define rcu_dereference(p) __atomic_load_n(&(p), __ATOMIC_CONSUME)
#define rcu_dereference_check(p, c) ((void)sizeof(c), rcu_dereference(p))
#define rcu_dereference_protected(p, c) ((void)sizeof(c), __atomic_load_n(&(p), __ATOMIC_RELAXED))
#endif

/* --- callbacks ----------------------------------------------------------- */

struct rcu_head;
typedef void (*rcu_callback_t)(struct rcu_head *head);

/*
 * Embedded in every object reclaimed through call_rcu(); call_rcu() never
 * allocates.  Owned by the RCU library from call_rcu() until func runs.
 */
struct rcu_head {
	struct rcu_head *next;
	rcu_callback_t func;
};

/* --- errors ---------------------------------------------------------------- */

/* Prints "rcu: <file>:<line> <func>: <message>" and aborts.  Never returns. */
__attribute__((noreturn, format(printf, 4, 5))) void
rcu_die_at(const char *file, int line, const char *func, const char *fmt, ...);
#define rcu_die(...) rcu_die_at(__FILE__, __LINE__, __func__, __VA_ARGS__)

/* --- statistics ------------------------------------------------------------ */

/* A snapshot of one flavor's counters (rcu_qsbr_get_stats(), rcu_memb_get_stats()). */
struct rcu_stats {
	unsigned long gp_completed;     /* grace periods ended since start */
	unsigned long long gp_last_ns;  /* duration of the last grace period */
	unsigned long long gp_max_ns;   /* longest grace period */
	unsigned long cb_queued;        /* call_rcu() calls */
	unsigned long cb_invoked;       /* callbacks run */
	unsigned long cb_pending;       /* queued and not yet run */
	unsigned long cb_pending_hwm;   /* high-water mark of cb_pending, as sampled */
	unsigned long cb_throttled;     /* times an updater waited for the backlog */
	unsigned long cb_batches;       /* callback-thread iterations that ran callbacks */
	unsigned long readers;          /* registered threads */
	unsigned long stalls;           /* stall warnings printed */
};

/* Private: a registered thread's place in its flavor's registry.  Touched only
 * by rcu_core.c and the flavor .c files, under the flavor's registry lock. */
struct rcu_cbq;
struct rcu_reader_link {
	struct rcu_reader_link *next, *prev;
	struct rcu_cbq *cbq;        /* this thread's call_rcu queue */
	unsigned long thread;       /* pthread_t of the owner, for stall messages */
	int tid;                    /* kernel thread id, for stall messages */
	int registered;             /* owner thread only */
};

#endif /* RCU_DEFS_H */
