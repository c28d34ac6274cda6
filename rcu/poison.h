/*
 * rcu/poison.h - poisoning freed memory, for the tortures and the table's
 * poison_frees option, as the kernel's linux/poison.h and slab poisoning do.
 *
 * A plain memset() just before free() is a dead store: gcc -O2 removes it
 * (the block is dead once freed), so "poisoned" memory kept its old contents
 * and a reader that followed a stale pointer saw a plausible entry.
 * rcu_poison() calls memset() through a volatile function pointer, which the
 * compiler cannot see through, so the stores stay.  Shown by
 * tests/hashtable/broken_gp.sh: with a plain memset() the table's torture,
 * under grace periods that do not wait, saw no freed entry at all.
 */
#ifndef RCU_POISON_H
#define RCU_POISON_H

#include <stddef.h>
#include <string.h>

/* What freed memory is filled with (the kernel's POISON_FREE). */
#define RCU_POISON_BYTE 0x6b

/* Fill @n bytes at @p with RCU_POISON_BYTE; never dropped as a dead store. */
static inline void rcu_poison(void *p, size_t n)
{
	void *(*volatile set)(void *, int, size_t) = memset;

	set(p, RCU_POISON_BYTE, n);
}

#endif /* RCU_POISON_H */
