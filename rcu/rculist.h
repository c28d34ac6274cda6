/*
 * rculist.h - intrusive doubly-linked lists (struct list_head, circular) and
 * hash-bucket lists (struct hlist_head / hlist_node, linear, one-pointer
 * head), in plain and RCU-safe forms, with the kernel's names so that the
 * article's second table ("RCU part 3: the RCU API", LWN 2008) maps one to one.
 *
 * Owns nothing: every node is embedded in its caller's object, and the caller
 * frees it.  A node taken out with list_del_rcu()/hlist_del_rcu() may still be
 * under a reader's feet; free it only after a grace period of every flavor
 * whose readers can reach the list (call_rcu() or synchronize_rcu()).
 *
 * Concurrency contract (the `_rcu` suffix):
 *  - Readers traverse with list_for_each_entry_rcu() / hlist_for_each_entry_rcu()
 *    and friends inside a read-side critical section of the flavor protecting
 *    the list (or between two quiescent states under QSBR).  They follow only
 *    `next` (and `first`) pointers, never `prev`/`pprev`.  Code that may also
 *    run on the update side uses the `_check` forms, naming the lock it holds;
 *    SRCU readers use the `_srcu` forms, naming their domain.  The RCU_DEBUG
 *    build checks each traversal step against that protection.
 *  - Updaters (every non-traversal function here) exclude each other with a
 *    lock of the caller's choosing; this header takes no lock.  The `_rcu`
 *    updates may run while readers traverse; the plain ones may not, except
 *    where a comment says otherwise.
 *
 * Invariants and field ownership:
 *  - `next` and hlist `first`/`next`: RCU-protected.  Read by readers only
 *    through rcu_dereference().  Written by updaters with a release store
 *    (rcu_assign_pointer()) whenever a reader may follow the new value: not
 *    only when it makes a new node reachable but also when a deletion makes an
 *    already-reachable node reachable from a new place, because a reader that
 *    arrives by the new route must still see that node initialised, and
 *    nothing else orders the node's initialisation before this store when one
 *    updater adds a node and then deletes its neighbour (no lock hand-off in
 *    between).  RCU_LIST_WRITE_ONCE() (relaxed) only where the value stored
 *    needs no initialisation seen (a head pointing at itself, NULL, poison)
 *    or nothing can read the field yet.  On x86 both are a plain mov.  Thus
 *    ThreadSanitizer sees no racing plain access and no unordered handoff.
 *  - `prev` and `pprev`: update side only (updater lock), plain accesses.
 *  - A deleted node: list_del_rcu() leaves `next` intact (a reader standing on
 *    the node must still find its way back onto the list) and poisons only
 *    `prev` with RCU_LIST_POISON_PREV (Quick Quiz 7); hlist_del_rcu() likewise
 *    poisons only `pprev`.  The plain list_del()/hlist_del() poison both.
 *  - hlist: `pprev` points at the `next` field of the previous node, or at the
 *    head's `first`; it is NULL only for a node on no list (hlist_unhashed()).
 *
 * Deliberate absences: there is no "list_empty() then take the first entry"
 * for readers (two loads that can disagree); use list_first_or_null_rcu().
 * There is no list_del_init_rcu(): re-initialising `next` would strand a
 * reader standing on the node; hlist_del_init_rcu() is safe and provided,
 * because it resets only the deleted node's `pprev`, which readers never use.
 *
 * Tortured by tests/rcu/test_rculist.c (both flavors): readers walk a list and
 * an hlist while a writer adds, deletes, replaces and splices, freeing through
 * call_rcu() into poisoned memory.
 */
#ifndef RCU_RCULIST_H
#define RCU_RCULIST_H

#include <stddef.h>

#include "rcu/rcu_defs.h"

/* Relaxed single-copy-atomic accesses to an RCU-protected link that readers may
 * be loading concurrently (the kernel's WRITE_ONCE/READ_ONCE). */
#define RCU_LIST_WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define RCU_LIST_READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* Poison for deleted links: non-NULL, unmapped, and recognisable in a core. */
#define RCU_LIST_POISON_NEXT ((void *)0x100)
#define RCU_LIST_POISON_PREV ((void *)0x122)

/* ------------------------------------------------------------------------- */
/* struct list_head: circular, doubly linked, the head is a node of its own. */

struct list_head {
	struct list_head *next; /* RCU-protected: see the file comment */
	struct list_head *prev; /* updater lock only; poisoned on deletion */
};

#define LIST_HEAD_INIT(name) { &(name), &(name) }
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)

#define list_entry(ptr, type, member) container_of(ptr, type, member)

/* The entry containing @node at @offset, or NULL for a NULL @node. */
static inline void *rcu_list_entry_or_null(void *node, size_t offset)
{
	return node ? (void *)((char *)node - offset) : NULL;
}

#define list_first_entry(head, type, member) list_entry((head)->next, type, member)
#define list_last_entry(head, type, member) list_entry((head)->prev, type, member)

/**
 * INIT_LIST_HEAD() - make @list an empty list (or an unlinked node).
 * Context: update side.  Safe even if readers still hold @list (as a head they
 * see it empty): `next` is stored with a relaxed atomic store.
 */
static inline void INIT_LIST_HEAD(struct list_head *list)
{
	RCU_LIST_WRITE_ONCE(list->next, list);
	list->prev = list;
}

/**
 * list_empty() - is @head an empty list?
 * Context: update side, or a reader that only wants a hint (a relaxed load;
 * the answer may be stale the moment it is returned).
 * Return: non-zero when empty.
 */
static inline int list_empty(const struct list_head *head)
{
	return RCU_LIST_READ_ONCE(head->next) == head;
}

/* Link @n between two adjacent nodes @prev and @next (no readers). */
static inline void rcu_list_link_between(struct list_head *n, struct list_head *prev,
					 struct list_head *next)
{
	next->prev = n;
	RCU_LIST_WRITE_ONCE(n->next, next);
	n->prev = prev;
	RCU_LIST_WRITE_ONCE(prev->next, n);
}

/**
 * list_add() - insert @n right after @head (stack order).
 * Context: update side, and no concurrent readers (use list_add_rcu() then).
 */
static inline void list_add(struct list_head *n, struct list_head *head)
{
	rcu_list_link_between(n, head, head->next);
}

/**
 * list_add_tail() - insert @n right before @head (queue order).
 * Context: update side, no concurrent readers.
 */
static inline void list_add_tail(struct list_head *n, struct list_head *head)
{
	rcu_list_link_between(n, head->prev, head);
}

/* Make @prev and @next adjacent, dropping what was between them. */
static inline void rcu_list_unlink_between(struct list_head *prev, struct list_head *next)
{
	next->prev = prev;
	/* Release: @next is reachable by a new route; pairs with list_entry_rcu()
	 * (see "Invariants" above for why relaxed is not enough). */
	rcu_assign_pointer(prev->next, next);
}

/**
 * list_del() - unlink @entry and poison both its links.
 * Context: update side, no reader may be standing on @entry.
 */
static inline void list_del(struct list_head *entry)
{
	rcu_list_unlink_between(entry->prev, entry->next);
	RCU_LIST_WRITE_ONCE(entry->next, (struct list_head *)RCU_LIST_POISON_NEXT);
	entry->prev = RCU_LIST_POISON_PREV;
}

/**
 * list_del_init() - unlink @entry and leave it an empty list of its own.
 * Context: update side, no reader may be standing on @entry.
 */
static inline void list_del_init(struct list_head *entry)
{
	rcu_list_unlink_between(entry->prev, entry->next);
	INIT_LIST_HEAD(entry);
}

/**
 * list_replace() - put @n where @old is; @old's links are left stale.
 * Context: update side, no concurrent readers.
 */
static inline void list_replace(struct list_head *old, struct list_head *n)
{
	RCU_LIST_WRITE_ONCE(n->next, old->next);
	n->next->prev = n;
	n->prev = old->prev;
	RCU_LIST_WRITE_ONCE(n->prev->next, n);
}

/**
 * list_move_tail() - move @entry from its list to the tail of @head.
 * Context: update side, no concurrent readers of either list.
 */
static inline void list_move_tail(struct list_head *entry, struct list_head *head)
{
	rcu_list_unlink_between(entry->prev, entry->next);
	list_add_tail(entry, head);
}

/**
 * list_splice_init() - move every entry of @list to the front of @head and
 * leave @list empty.
 * Context: update side, no concurrent readers (see list_splice_init_rcu()).
 */
static inline void list_splice_init(struct list_head *list, struct list_head *head)
{
	struct list_head *first = list->next, *last = list->prev, *at = head->next;

	if (first == list)
		return;
	first->prev = head;
	RCU_LIST_WRITE_ONCE(head->next, first);
	RCU_LIST_WRITE_ONCE(last->next, at);
	at->prev = last;
	INIT_LIST_HEAD(list);
}

/* Plain traversals: update side, or a list no reader can reach. */
#define list_for_each(pos, head) \
	for (pos = (head)->next; pos != (head); pos = pos->next)

#define list_for_each_entry(pos, head, member)                               \
	for (pos = list_entry((head)->next, __typeof__(*pos), member);       \
	     &pos->member != (head);                                         \
	     pos = list_entry(pos->member.next, __typeof__(*pos), member))

/* As list_for_each_entry(), and the body may delete (and free) pos. */
#define list_for_each_entry_safe(pos, tmp, head, member)                     \
	for (pos = list_entry((head)->next, __typeof__(*pos), member),       \
	     tmp = list_entry(pos->member.next, __typeof__(*pos), member);   \
	     &pos->member != (head);                                         \
	     pos = tmp, tmp = list_entry(tmp->member.next, __typeof__(*tmp), member))

/* --- list, RCU forms ------------------------------------------------------- */

/* The entry a `next` link points at, loaded with rcu_dereference().  @ptr
 * must be an lvalue (a `next` field or a head's `next`). */
#define list_entry_rcu(ptr, type, member) container_of(rcu_dereference(ptr), type, member)

/**
 * list_for_each_entry_rcu() - walk an RCU-protected list.
 * @pos:    loop cursor, a pointer to the entry type
 * @head:   the list head
 * @member: name of the struct list_head inside the entry
 * Context: read-side critical section of the flavor protecting the list (the
 * update side uses list_for_each_entry_rcu_check(), which the RCU_DEBUG build
 * accepts with the updater lock held).  Every `next` is loaded with
 * rcu_dereference(), so an entry published with list_add_rcu() is seen
 * initialised.  Terminates even while entries are added and deleted: deleted
 * entries keep their `next`, which leads back onto the list.
 */
#define list_for_each_entry_rcu(pos, head, member)                           \
	for (pos = list_entry_rcu((head)->next, __typeof__(*pos), member);   \
	     &pos->member != (head);                                         \
	     pos = list_entry_rcu(pos->member.next, __typeof__(*pos), member))

/* The entry a `next` link points at, loaded with rcu_dereference_check(). */
#define list_entry_rcu_check(ptr, type, member, cond) \
	container_of(rcu_dereference_check(ptr, cond), type, member)

/**
 * list_for_each_entry_rcu_check() - list_for_each_entry_rcu() for code that
 * runs either inside a read-side section or on the update side.
 * @cond: true when the caller holds the updater lock (e.g. a "lock held"
 *        predicate); the RCU_DEBUG build accepts the traversal if @cond holds
 *        or the thread is in a read-side section of the unit's flavor.
 */
#define list_for_each_entry_rcu_check(pos, head, member, cond)               \
	for (pos = list_entry_rcu_check((head)->next, __typeof__(*pos), member, cond); \
	     &pos->member != (head);                                         \
	     pos = list_entry_rcu_check(pos->member.next, __typeof__(*pos), member, cond))

/**
 * list_for_each_entry_srcu() - walk an RCU list inside an SRCU read-side
 * section of @ss (a struct srcu_struct *; include rcu/srcu.h).  The list's
 * frees must wait for a grace period of @ss too (srcu_reclaim, DESIGN.md
 * hazard 1).
 */
#define list_for_each_entry_srcu(pos, head, member, ss)                      \
	for (pos = container_of(srcu_dereference((head)->next, ss), __typeof__(*pos), member); \
	     &pos->member != (head);                                         \
	     pos = container_of(srcu_dereference(pos->member.next, ss), __typeof__(*pos), member))

/* As list_for_each_entry_rcu(), starting after @pos (which the caller reached
 * in the same read-side section). */
#define list_for_each_entry_continue_rcu(pos, head, member)                  \
	for (pos = list_entry_rcu(pos->member.next, __typeof__(*pos), member); \
	     &pos->member != (head);                                         \
	     pos = list_entry_rcu(pos->member.next, __typeof__(*pos), member))

/* list_for_each_entry_continue_rcu() for read side or update side. */
#define list_for_each_entry_continue_rcu_check(pos, head, member, cond)      \
	for (pos = list_entry_rcu_check(pos->member.next, __typeof__(*pos), member, cond); \
	     &pos->member != (head);                                         \
	     pos = list_entry_rcu_check(pos->member.next, __typeof__(*pos), member, cond))

/* The node @head->next points at, or NULL when the list is empty: one load. */
static inline struct list_head *rcu_list_first_node_or_null(struct list_head *head)
{
	struct list_head *first = rcu_dereference(head->next);

	return first != head ? first : NULL;
}

/**
 * list_first_or_null_rcu() - first entry of an RCU list, or NULL if empty.
 * Context: read-side critical section.  A single rcu_dereference() decides
 * both emptiness and the entry, so the two cannot disagree.
 */
#define list_first_or_null_rcu(head, type, member)                           \
	((type *)rcu_list_entry_or_null(rcu_list_first_node_or_null(head),   \
					offsetof(type, member)))

/**
 * list_add_rcu() - publish @n right after @head while readers may traverse.
 * @n:    node to insert; its entry must be fully initialised
 * @head: list head (or any node: @n goes after it)
 * Context: update side, updater lock held.  Readers see either the old list
 * or the new one with @n initialised (the release store in rcu_assign_pointer()
 * orders the caller's initialisation of @n's entry and @n->next before @n is
 * reachable; pairs with rcu_dereference() in list_for_each_entry_rcu()).
 */
static inline void list_add_rcu(struct list_head *n, struct list_head *head)
{
	struct list_head *next = head->next;

	n->next = next; /* plain: @n is not yet reachable (Quick Quiz 8) */
	n->prev = head;
	/* Release: publishes @n and its entry; pairs with list_entry_rcu(). */
	rcu_assign_pointer(head->next, n);
	next->prev = n;
}

/**
 * list_add_tail_rcu() - publish @n right before @head (at the tail).
 * Context: update side, updater lock held; ordering as list_add_rcu().
 */
static inline void list_add_tail_rcu(struct list_head *n, struct list_head *head)
{
	struct list_head *prev = head->prev;

	n->next = head; /* plain: @n is not yet reachable */
	n->prev = prev;
	/* Release: publishes @n; pairs with list_entry_rcu(). */
	rcu_assign_pointer(prev->next, n);
	head->prev = n;
}

/**
 * list_del_rcu() - unlink @entry while readers may be standing on it.
 * Context: update side, updater lock held.  Readers that already reached
 * @entry continue through its intact `next`; only `prev` is poisoned (Quick
 * Quiz 7).  Does not wait: free @entry only after a grace period (call_rcu()),
 * and do not reuse it in another list before then.
 */
static inline void list_del_rcu(struct list_head *entry)
{
	rcu_list_unlink_between(entry->prev, entry->next);
	entry->prev = RCU_LIST_POISON_PREV;
}

/**
 * list_replace_rcu() - put @n where @old is, atomically for readers.
 * @old: entry on the list; afterwards reclaimable after a grace period
 * @n:   initialised node not on any list
 * Context: update side, updater lock held.  A reader sees @old or @n, never
 * neither: the release store of the predecessor's `next` publishes @n with
 * its `next` already pointing at @old's successor.  @old keeps its `next`;
 * its `prev` is poisoned.
 */
static inline void list_replace_rcu(struct list_head *old, struct list_head *n)
{
	n->next = old->next; /* plain: @n is not yet reachable */
	n->prev = old->prev;
	/* Release: publishes @n; pairs with list_entry_rcu(). */
	rcu_assign_pointer(n->prev->next, n);
	n->next->prev = n;
	old->prev = RCU_LIST_POISON_PREV;
}

/*
 * Worked example of the splice below.  Source list L: L <-> a <-> b <-> L.
 * Destination: P <-> N, splicing between P and N.
 *   1. L is re-initialised (L->next = L).  Readers entering L now see it empty;
 *      readers already on a or b still walk to b->next == L and stop, because
 *      b->next was not touched.
 *   2. sync() waits until no reader is on a or b any more.
 *   3. b->next = N (relaxed: a and b are unreachable now), a->prev = P,
 *      N->prev = b, then P->next = a with a release store: readers of the
 *      destination now see P a b N, with a and b fully linked.
 * Without step 2, a reader on b would follow b->next = N after step 3 and
 * never come back to L: it would loop, or walk the wrong list, forever.
 */
static inline void rcu_list_splice_init_between(struct list_head *list, struct list_head *prev,
						struct list_head *next, void (*sync)(void))
{
	struct list_head *first = list->next, *last = list->prev;

	if (first == list)
		return;
	INIT_LIST_HEAD(list);
	sync();
	RCU_LIST_WRITE_ONCE(last->next, next);
	first->prev = prev;
	next->prev = last;
	/* Release: publishes the spliced chain; pairs with list_entry_rcu(). */
	rcu_assign_pointer(prev->next, first);
}

/**
 * list_splice_init_rcu() - move every entry of @list to the front of @head,
 * leaving @list empty, while readers may traverse either list.
 * @list: source list; readers of it may be mid-traversal
 * @head: destination list; readers of it may be traversing
 * @sync: a function that waits a full grace period of every flavor whose
 *        readers can reach @list (for example synchronize_rcu)
 * Context: update side, holding the updater lock of both lists; blocks for a
 * grace period (Grace-period latency, as the article's table says), so under
 * QSBR the calling thread must hold no RCU reference.  Returns at once if
 * @list is empty.
 */
static inline void list_splice_init_rcu(struct list_head *list, struct list_head *head,
					void (*sync)(void))
{
	rcu_list_splice_init_between(list, head, head->next, sync);
}

/* As list_splice_init_rcu(), at the tail of @head. */
static inline void list_splice_tail_init_rcu(struct list_head *list, struct list_head *head,
					     void (*sync)(void))
{
	rcu_list_splice_init_between(list, head->prev, head, sync);
}

/* ------------------------------------------------------------------------- */
/* struct hlist_head: linear, NULL-terminated, a one-pointer head. */

struct hlist_node {
	struct hlist_node *next;   /* RCU-protected: see the file comment */
	struct hlist_node **pprev; /* updater lock only; NULL when unhashed */
};

struct hlist_head {
	struct hlist_node *first;  /* RCU-protected */
};

#define HLIST_HEAD_INIT { NULL }
#define HLIST_HEAD(name) struct hlist_head name = { NULL }

#define hlist_entry(ptr, type, member) container_of(ptr, type, member)
/* The entry containing node @ptr, or NULL when @ptr is NULL (evaluated once). */
#define hlist_entry_safe(ptr, type, member) \
	((type *)rcu_list_entry_or_null((ptr), offsetof(type, member)))

/* INIT_HLIST_HEAD() - make @h empty.  Context: update side. */
static inline void INIT_HLIST_HEAD(struct hlist_head *h)
{
	RCU_LIST_WRITE_ONCE(h->first, (struct hlist_node *)NULL);
}

/* INIT_HLIST_NODE() - mark @n as on no list.  Context: @n unreachable. */
static inline void INIT_HLIST_NODE(struct hlist_node *n)
{
	n->next = NULL;
	n->pprev = NULL;
}

/* hlist_unhashed() - non-zero when @n is on no list.  Context: update side. */
static inline int hlist_unhashed(const struct hlist_node *n)
{
	return !n->pprev;
}

/* hlist_empty() - non-zero when @h is empty.  A hint for readers (relaxed load). */
static inline int hlist_empty(const struct hlist_head *h)
{
	return !RCU_LIST_READ_ONCE(h->first);
}

/* Unlink @n from its list (no poisoning). */
static inline void rcu_hlist_unlink(struct hlist_node *n)
{
	struct hlist_node *next = n->next;
	struct hlist_node **pprev = n->pprev;

	/* Release: @next is reachable by a new route; pairs with
	 * hlist_for_each_entry_rcu() (see "Invariants" above). */
	rcu_assign_pointer(*pprev, next);
	if (next)
		next->pprev = pprev;
}

/**
 * hlist_add_head() - insert @n at the front of @h.
 * Context: update side, no concurrent readers.
 */
static inline void hlist_add_head(struct hlist_node *n, struct hlist_head *h)
{
	struct hlist_node *first = h->first;

	RCU_LIST_WRITE_ONCE(n->next, first);
	if (first)
		first->pprev = &n->next;
	RCU_LIST_WRITE_ONCE(h->first, n);
	n->pprev = &h->first;
}

/**
 * hlist_del() - unlink @n and poison both links.
 * Context: update side, no reader may be standing on @n.
 */
static inline void hlist_del(struct hlist_node *n)
{
	rcu_hlist_unlink(n);
	RCU_LIST_WRITE_ONCE(n->next, (struct hlist_node *)RCU_LIST_POISON_NEXT);
	n->pprev = RCU_LIST_POISON_PREV;
}

/**
 * hlist_del_init() - unlink @n if it is on a list and mark it unhashed.
 * Context: update side, no reader may be standing on @n.
 */
static inline void hlist_del_init(struct hlist_node *n)
{
	if (hlist_unhashed(n))
		return;
	rcu_hlist_unlink(n);
	INIT_HLIST_NODE(n);
}

/* Plain traversals: update side, or a list no reader can reach. */
#define hlist_for_each_entry(pos, head, member)                              \
	for (pos = hlist_entry_safe((head)->first, __typeof__(*pos), member); \
	     pos;                                                            \
	     pos = hlist_entry_safe(pos->member.next, __typeof__(*pos), member))

/* As hlist_for_each_entry(); the body may delete (and free) pos.  @tmp is a
 * struct hlist_node *. */
#define hlist_for_each_entry_safe(pos, tmp, head, member)                    \
	for (pos = hlist_entry_safe((head)->first, __typeof__(*pos), member); \
	     pos && ((tmp) = pos->member.next, 1);                           \
	     pos = hlist_entry_safe(tmp, __typeof__(*pos), member))

/* --- hlist, RCU forms ------------------------------------------------------ */

/**
 * hlist_for_each_entry_rcu() - walk an RCU-protected hlist.
 * @pos:    loop cursor, a pointer to the entry type
 * @head:   the struct hlist_head *
 * @member: name of the struct hlist_node inside the entry
 * Context: read-side critical section of the flavor protecting the list (the
 * update side uses hlist_for_each_entry_rcu_check()).  Every link is loaded
 * with rcu_dereference().
 */
#define hlist_for_each_entry_rcu(pos, head, member)                          \
	for (pos = hlist_entry_safe(rcu_dereference((head)->first),          \
				    __typeof__(*pos), member);               \
	     pos;                                                            \
	     pos = hlist_entry_safe(rcu_dereference(pos->member.next),       \
				    __typeof__(*pos), member))

/* hlist_for_each_entry_rcu() for read side or update side; @cond as in
 * list_for_each_entry_rcu_check(). */
#define hlist_for_each_entry_rcu_check(pos, head, member, cond)              \
	for (pos = hlist_entry_safe(rcu_dereference_check((head)->first, cond), \
				    __typeof__(*pos), member);               \
	     pos;                                                            \
	     pos = hlist_entry_safe(rcu_dereference_check(pos->member.next, cond), \
				    __typeof__(*pos), member))

/* hlist_for_each_entry_rcu() inside an SRCU read-side section of @ss
 * (include rcu/srcu.h); see list_for_each_entry_srcu(). */
#define hlist_for_each_entry_srcu(pos, head, member, ss)                     \
	for (pos = hlist_entry_safe(srcu_dereference((head)->first, ss),     \
				    __typeof__(*pos), member);               \
	     pos;                                                            \
	     pos = hlist_entry_safe(srcu_dereference(pos->member.next, ss),  \
				    __typeof__(*pos), member))

/* As hlist_for_each_entry_rcu(), starting after @pos (reached in the same
 * read-side section): for cursors that resume within one bucket. */
#define hlist_for_each_entry_continue_rcu(pos, member)                       \
	for (pos = hlist_entry_safe(rcu_dereference(pos->member.next),       \
				    __typeof__(*pos), member);               \
	     pos;                                                            \
	     pos = hlist_entry_safe(rcu_dereference(pos->member.next),       \
				    __typeof__(*pos), member))

/* hlist_for_each_entry_continue_rcu() for read side or update side. */
#define hlist_for_each_entry_continue_rcu_check(pos, member, cond)           \
	for (pos = hlist_entry_safe(rcu_dereference_check(pos->member.next, cond), \
				    __typeof__(*pos), member);               \
	     pos;                                                            \
	     pos = hlist_entry_safe(rcu_dereference_check(pos->member.next, cond), \
				    __typeof__(*pos), member))

/* hlist_first_rcu() - the first node of @h, or NULL.  Context: read side. */
static inline struct hlist_node *hlist_first_rcu(struct hlist_head *h)
{
	return rcu_dereference(h->first);
}

/* hlist_next_rcu() - the node after @n, or NULL.  Context: read side. */
static inline struct hlist_node *hlist_next_rcu(struct hlist_node *n)
{
	return rcu_dereference(n->next);
}

/**
 * hlist_add_head_rcu() - publish @n at the front of @h while readers traverse.
 * Context: update side, updater lock held.  Release store of @h->first orders
 * @n's entry and @n->next before @n is reachable; pairs with the
 * rcu_dereference() in hlist_for_each_entry_rcu().
 */
static inline void hlist_add_head_rcu(struct hlist_node *n, struct hlist_head *h)
{
	struct hlist_node *first = h->first;

	n->next = first; /* plain: @n is not yet reachable */
	n->pprev = &h->first;
	/* Release: publishes @n; pairs with hlist_for_each_entry_rcu(). */
	rcu_assign_pointer(h->first, n);
	if (first)
		first->pprev = &n->next;
}

/**
 * hlist_add_before_rcu() - publish @n just before @next, which is on a list.
 * Context: update side, updater lock held; ordering as hlist_add_head_rcu().
 */
static inline void hlist_add_before_rcu(struct hlist_node *n, struct hlist_node *next)
{
	n->pprev = next->pprev;
	n->next = next; /* plain: @n is not yet reachable */
	/* Release: publishes @n through the predecessor's link (or the head's
	 * first); pairs with hlist_for_each_entry_rcu(). */
	rcu_assign_pointer(*n->pprev, n);
	next->pprev = &n->next;
}

/**
 * hlist_add_behind_rcu() - publish @n just after @prev, which is on a list.
 * Context: update side, updater lock held; ordering as hlist_add_head_rcu().
 */
static inline void hlist_add_behind_rcu(struct hlist_node *n, struct hlist_node *prev)
{
	struct hlist_node *next = prev->next;

	n->next = next; /* plain: @n is not yet reachable */
	n->pprev = &prev->next;
	/* Release: publishes @n; pairs with hlist_for_each_entry_rcu(). */
	rcu_assign_pointer(prev->next, n);
	if (next)
		next->pprev = &n->next;
}

/**
 * hlist_add_after_rcu() - the article's (2.6.14) spelling of
 * hlist_add_behind_rcu(), with that era's argument order: @prev first, the
 * new node @n second.
 */
static inline void hlist_add_after_rcu(struct hlist_node *prev, struct hlist_node *n)
{
	hlist_add_behind_rcu(n, prev);
}

/**
 * hlist_del_rcu() - unlink @n while readers may be standing on it.
 * Context: update side, updater lock held.  @n->next stays intact so a reader
 * on @n reaches the rest of the list; only `pprev` is poisoned (Quick Quiz 7),
 * so hlist_unhashed() is false afterwards.  Free @n after a grace period.
 */
static inline void hlist_del_rcu(struct hlist_node *n)
{
	rcu_hlist_unlink(n);
	n->pprev = RCU_LIST_POISON_PREV;
}

/**
 * hlist_del_init_rcu() - as hlist_del_rcu() for a node that may be unhashed,
 * and mark it unhashed (pprev = NULL) instead of poisoning it, so that it can
 * be tested with hlist_unhashed().  `next` stays intact for readers.
 * Context: update side, updater lock held.
 */
static inline void hlist_del_init_rcu(struct hlist_node *n)
{
	if (hlist_unhashed(n))
		return;
	rcu_hlist_unlink(n);
	n->pprev = NULL;
}

/**
 * hlist_replace_rcu() - put @n where @old is, atomically for readers.
 * @old: node on a list; afterwards reclaimable after a grace period
 * @n:   initialised node not on any list
 * Context: update side, updater lock held.  A reader sees @old or @n, never
 * neither; @old keeps its `next` and has its `pprev` poisoned.
 */
static inline void hlist_replace_rcu(struct hlist_node *old, struct hlist_node *n)
{
	struct hlist_node *next = old->next;

	n->next = next; /* plain: @n is not yet reachable */
	n->pprev = old->pprev;
	/* Release: publishes @n; pairs with hlist_for_each_entry_rcu(). */
	rcu_assign_pointer(*n->pprev, n);
	if (next)
		next->pprev = &n->next;
	old->pprev = RCU_LIST_POISON_PREV;
}

#endif /* RCU_RCULIST_H */
