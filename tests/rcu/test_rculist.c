/*
 * test_rculist.c - unit tests and a concurrent torture for rcu/rculist.h.
 *
 * Built once per flavor (tests/tests.mk): -DRCU_FLAVOR_QSBR gives
 * test_rculist_qsbr, -DRCU_FLAVOR_MEMB gives test_rculist_memb.  Ends with
 * "N passed, M failed, K skipped", one count per test (a tests/check.h case),
 * and exits non-zero on any failure.
 *
 * Unit tests: one per primitive, single-threaded, checking links, order and
 * poisoning (Quick Quiz 7), plus two that involve a real reader thread: a
 * reader standing on a node that list_del_rcu() removes still walks back to
 * the head, and list_splice_init_rcu() does not splice while a reader is on
 * the source list.
 *
 * Torture: READERS threads walk three structures, each traversal in its own
 * read-side section, while one writer adds, deletes, replaces and splices,
 * freeing every removed element through call_rcu() into poisoned memory (the
 * callback checks the element is live, poisons it, and keeps it in a
 * quarantine before free() so that a premature free is seen as poison).
 *   L  list_head, keys strictly increasing: a front block [0, 64) that arrives
 *      by list_splice_init_rcu(), anchors 1000 + 2i (present throughout,
 *      replaced in place), transients 1001 + 2i, a tail block [1<<20, +64)
 *      that arrives by list_splice_tail_init_rcu().
 *   S  the splice source: strictly increasing keys, all below 64 or all at
 *      or above 1<<20; a reader on S must come back to S's head.
 *   H  hlist, keys strictly increasing: 1 (added at the head), anchors
 *      2 + 2i (present throughout, replaced), transients 3 + 2i added behind
 *      or before their neighbours.
 * Each removed element carries the polled grace-period cookie taken at its
 * removal; a reader that sees it after poll_state_synchronize_rcu() says a
 * full grace period has passed fails the run (rcutorture's age check).
 * A reader fails the run when it sees a dead element, keys out of order or
 * out of range, a missing anchor, or more steps than the structure can hold
 * (a torn list).  The callback also points the element's next links at a
 * dead sentinel, so a reader that follows a link out of a reclaimed element
 * lands on a dead element and reports it instead of crashing on poison.  The
 * run prints its reader errors by kind ("readers saw: N reclaimed ...") and
 * reports what it exercised; it fails if an operation kind never ran.
 * TORTURE_SECONDS (default 2) sets its length.
 *
 * Arguments: test names (e.g. `torture`) run only those tests, so that
 * tests/rcu/broken_gp.sh runs the torture alone in a BROKEN_GP=1 build, where
 * the unit tests that involve a grace period fail first.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rcu/rcu.h"
#include "rcu/rculist.h"
#include "tests/check.h"

#ifndef RCU_FLAVOR_NAME
#error "build with -DRCU_FLAVOR_QSBR or -DRCU_FLAVOR_MEMB"
#endif

/* --- runner ---------------------------------------------------------------- */

/* Test names from the command line; none: every test. */
static char **only;
static int n_only, n_only_ran;

static void run_test(const char *name, void (*fn)(void))
{
	if (n_only) {
		int want = 0;

		for (int i = 0; i < n_only; i++)
			want |= strcmp(only[i], name) == 0;
		if (!want)
			return;
		n_only_ran++;
	}
	check_case_begin();
	fn();
	check_case_end("%s.%s", name, RCU_FLAVOR_NAME);
}

/* --- elements ---------------------------------------------------------------- */

#define MAGIC_LIVE 0x4c495645u
#define MAGIC_DEAD 0xdeadbeefu
#define POISON_BYTE 0x6b

struct elem {
	unsigned int magic;        /* MAGIC_LIVE from creation to the callback */
	/* Set by the writer after unlinking, before call_rcu(): the polled
	 * grace-period cookie taken then.  Readers check that no full grace
	 * period has passed since (rcutorture's age check, window 0). */
	_Atomic unsigned long gp_cookie;
	_Atomic int retired;
	unsigned long key;         /* immutable once published */
	struct list_head l;        /* on L, S, or a unit-test list */
	struct hlist_node h;       /* on H, or a unit-test hlist */
	struct rcu_head rh;        /* owned by RCU after call_rcu() */
};

static struct elem *elem_new(unsigned long key)
{
	struct elem *e = calloc(1, sizeof(*e));

	if (!e) {
		perror("calloc");
		abort();
	}
	e->magic = MAGIC_LIVE;
	e->key = key;
	return e;
}

/* ====================================================================== */
/* Unit tests                                                             */

/* Keys of @head in order into @out (at most @max); returns the count. */
static int list_keys(struct list_head *head, unsigned long *out, int max)
{
	struct elem *e;
	int n = 0;

	/* Update side: the unit tests are single-threaded. */
	list_for_each_entry_rcu_check(e, head, l, 1) {
		if (n < max)
			out[n] = e->key;
		n++;
		if (n > 1000)
			break;
	}
	return n;
}

static int hlist_keys(struct hlist_head *head, unsigned long *out, int max)
{
	struct elem *e;
	int n = 0;

	hlist_for_each_entry_rcu_check(e, head, h, 1) {
		if (n < max)
			out[n] = e->key;
		n++;
		if (n > 1000)
			break;
	}
	return n;
}

static int keys_are(const unsigned long *got, int n, const unsigned long *want, int wn)
{
	if (n != wn)
		return 0;
	for (int i = 0; i < n; i++)
		if (got[i] != want[i])
			return 0;
	return 1;
}

#define LIST_IS(head, ...)                                                  \
	do {                                                                \
		const unsigned long want_[] = { __VA_ARGS__ };              \
		unsigned long got_[16];                                     \
		int n_ = list_keys((head), got_, 16);                       \
		CHECK(keys_are(got_, n_, want_, (int)(sizeof(want_) / sizeof(want_[0]))), \
		      "list %s holds keys { %s }", #head, #__VA_ARGS__);          \
	} while (0)

#define HLIST_IS(head, ...)                                                 \
	do {                                                                \
		const unsigned long want_[] = { __VA_ARGS__ };              \
		unsigned long got_[16];                                     \
		int n_ = hlist_keys((head), got_, 16);                      \
		CHECK(keys_are(got_, n_, want_, (int)(sizeof(want_) / sizeof(want_[0]))), \
		      "hlist %s holds keys { %s }", #head, #__VA_ARGS__);         \
	} while (0)

/* Every prev link agrees with the next links: a well-formed circular list. */
static int list_well_formed(struct list_head *head)
{
	struct list_head *p = head;
	int n = 0;

	do {
		if (p->next->prev != p)
			return 0;
		p = p->next;
		if (++n > 1000)
			return 0;
	} while (p != head);
	return 1;
}

static int hlist_well_formed(struct hlist_head *head)
{
	struct hlist_node **pp = &head->first;
	int n = 0;

	for (struct hlist_node *p = head->first; p; p = p->next) {
		if (p->pprev != pp)
			return 0;
		pp = &p->next;
		if (++n > 1000)
			return 0;
	}
	return 1;
}

static void t_list_plain(void)
{
	LIST_HEAD(h);
	struct elem a = { .key = 1 }, b = { .key = 2 }, c = { .key = 3 }, d = { .key = 4 };
	struct elem *pos, *tmp;
	int n = 0;

	CHECK(list_empty(&h), "list_empty(&h)");
	list_add(&b.l, &h);
	list_add(&a.l, &h);
	list_add_tail(&c.l, &h);
	LIST_IS(&h, 1, 2, 3);
	CHECK(!list_empty(&h), "!list_empty(&h)");
	CHECK(list_well_formed(&h), "list_well_formed(&h)");
	CHECK(list_first_entry(&h, struct elem, l) == &a,
	      "list_first_entry(&h, struct elem, l) == &a");
	CHECK(list_last_entry(&h, struct elem, l) == &c,
	      "list_last_entry(&h, struct elem, l) == &c");
	list_for_each_entry(pos, &h, l)
		n += (int)pos->key;
	CHECK(n == 6, "n == 6");
	list_replace(&b.l, &d.l);
	LIST_IS(&h, 1, 4, 3);
	CHECK(list_well_formed(&h), "list_well_formed(&h)");
	list_del(&d.l);
	CHECK(d.l.next == RCU_LIST_POISON_NEXT && d.l.prev == RCU_LIST_POISON_PREV,
	      "d.l.next == RCU_LIST_POISON_NEXT && d.l.prev == RCU_LIST_POISON_PREV");
	LIST_IS(&h, 1, 3);
	list_del_init(&a.l);
	CHECK(list_empty(&a.l), "list_empty(&a.l)");
	LIST_IS(&h, 3);
	list_move_tail(&c.l, &a.l);
	CHECK(list_empty(&h), "list_empty(&h)");
	CHECK(list_first_entry(&a.l, struct elem, l) == &c,
	      "list_first_entry(&a.l, struct elem, l) == &c");
	list_for_each_entry_safe(pos, tmp, &a.l, l)
		list_del(&pos->l);
	CHECK(list_empty(&a.l), "list_empty(&a.l)");
}

static void t_list_splice_plain(void)
{
	LIST_HEAD(src);
	LIST_HEAD(dst);
	struct elem e[4];

	for (int i = 0; i < 4; i++)
		e[i] = (struct elem){ .key = (unsigned long)i };
	list_splice_init(&src, &dst); /* empty source: nothing happens */
	CHECK(list_empty(&dst), "list_empty(&dst)");
	list_add_tail(&e[0].l, &src);
	list_add_tail(&e[1].l, &src);
	list_add_tail(&e[2].l, &dst);
	list_add_tail(&e[3].l, &dst);
	list_splice_init(&src, &dst);
	LIST_IS(&dst, 0, 1, 2, 3);
	CHECK(list_empty(&src), "list_empty(&src)");
	CHECK(list_well_formed(&dst) && list_well_formed(&src),
	      "list_well_formed(&dst) && list_well_formed(&src)");
}

static void t_list_add_rcu(void)
{
	LIST_HEAD(h);
	struct elem a = { .key = 1 }, b = { .key = 2 }, c = { .key = 3 }, d = { .key = 4 };

	list_add_rcu(&b.l, &h);
	list_add_rcu(&a.l, &h);
	list_add_tail_rcu(&d.l, &h);
	list_add_rcu(&c.l, &b.l);       /* after a node, not only after the head */
	LIST_IS(&h, 1, 2, 3, 4);
	CHECK(list_well_formed(&h), "list_well_formed(&h)");
}

static void t_list_add_tail_rcu(void)
{
	LIST_HEAD(h);
	struct elem a = { .key = 1 }, b = { .key = 2 }, c = { .key = 3 };

	list_add_tail_rcu(&a.l, &h);
	list_add_tail_rcu(&c.l, &h);
	list_add_tail_rcu(&b.l, &c.l);  /* before a node */
	LIST_IS(&h, 1, 2, 3);
	CHECK(list_well_formed(&h), "list_well_formed(&h)");
}

static void t_list_del_rcu(void)
{
	LIST_HEAD(h);
	struct elem a = { .key = 1 }, b = { .key = 2 }, c = { .key = 3 };
	struct elem *pos;
	unsigned long sum = 0;

	list_add_tail_rcu(&a.l, &h);
	list_add_tail_rcu(&b.l, &h);
	list_add_tail_rcu(&c.l, &h);
	list_del_rcu(&b.l);
	LIST_IS(&h, 1, 3);
	CHECK(list_well_formed(&h), "list_well_formed(&h)");
	/* Quick Quiz 7: only prev is poisoned; next still leads onward. */
	CHECK(b.l.prev == RCU_LIST_POISON_PREV, "b.l.prev == RCU_LIST_POISON_PREV");
	CHECK(b.l.next == &c.l, "b.l.next == &c.l");
	/* A reader standing on b walks on to c and then the head. */
	pos = &b;
	list_for_each_entry_continue_rcu_check(pos, &h, l, 1)
		sum += pos->key;
	CHECK(sum == 3, "sum == 3");
	list_del_rcu(&a.l);
	list_del_rcu(&c.l);
	CHECK(list_empty(&h), "list_empty(&h)");
}

static void t_list_replace_rcu(void)
{
	LIST_HEAD(h);
	struct elem a = { .key = 1 }, b = { .key = 2 }, c = { .key = 3 }, n = { .key = 9 };
	struct elem m = { .key = 8 };

	list_add_tail_rcu(&a.l, &h);
	list_add_tail_rcu(&b.l, &h);
	list_add_tail_rcu(&c.l, &h);
	list_replace_rcu(&b.l, &n.l);
	LIST_IS(&h, 1, 9, 3);
	CHECK(list_well_formed(&h), "list_well_formed(&h)");
	CHECK(b.l.prev == RCU_LIST_POISON_PREV && b.l.next == &c.l,
	      "b.l.prev == RCU_LIST_POISON_PREV && b.l.next == &c.l");
	list_replace_rcu(&c.l, &m.l);   /* the last node */
	LIST_IS(&h, 1, 9, 8);
	CHECK(list_well_formed(&h), "list_well_formed(&h)");
}

/* A sync function for list_splice_init_rcu() that checks what a reader on the
 * source would see at the moment the grace period starts. */
static struct list_head *splice_src;
static struct elem *splice_last;
static int splice_syncs;
static int splice_ok;

static void splice_check_sync(void)
{
	splice_syncs++;
	/* The source head is already empty for new readers ... */
	splice_ok = list_empty(splice_src);
	/* ... and a reader on the old body still ends at the source head. */
	if (splice_last && rcu_access_pointer(splice_last->l.next) != splice_src)
		splice_ok = 0;
}

static void t_list_splice_init_rcu(void)
{
	LIST_HEAD(src);
	LIST_HEAD(dst);
	struct elem e[6];

	for (int i = 0; i < 6; i++)
		e[i] = (struct elem){ .key = (unsigned long)i };
	splice_src = &src;
	splice_syncs = 0;
	splice_last = NULL;
	list_splice_init_rcu(&src, &dst, splice_check_sync);
	CHECK(splice_syncs == 0, "an empty source needs no grace period");

	list_add_tail_rcu(&e[2].l, &dst);
	list_add_tail_rcu(&e[3].l, &dst);
	list_add_tail_rcu(&e[0].l, &src);
	list_add_tail_rcu(&e[1].l, &src);
	splice_last = &e[1];
	list_splice_init_rcu(&src, &dst, splice_check_sync);
	CHECK(splice_syncs == 1, "splice_syncs == 1");
	CHECK(splice_ok, "splice_ok");
	LIST_IS(&dst, 0, 1, 2, 3);
	CHECK(list_empty(&src), "list_empty(&src)");
	CHECK(list_well_formed(&dst) && list_well_formed(&src),
	      "list_well_formed(&dst) && list_well_formed(&src)");

	list_add_tail_rcu(&e[4].l, &src);
	list_add_tail_rcu(&e[5].l, &src);
	splice_last = &e[5];
	list_splice_tail_init_rcu(&src, &dst, splice_check_sync);
	CHECK(splice_syncs == 2, "splice_syncs == 2");
	CHECK(splice_ok, "splice_ok");
	LIST_IS(&dst, 0, 1, 2, 3, 4, 5);
	CHECK(list_well_formed(&dst) && list_empty(&src),
	      "list_well_formed(&dst) && list_empty(&src)");

	/* With the real grace period too. */
	list_del_rcu(&e[0].l);
	list_del_rcu(&e[1].l);
	list_add_tail_rcu(&e[0].l, &src);
	list_add_tail_rcu(&e[1].l, &src);
	list_splice_init_rcu(&src, &dst, synchronize_rcu);
	LIST_IS(&dst, 0, 1, 2, 3, 4, 5);
	CHECK(list_well_formed(&dst) && list_empty(&src),
	      "list_well_formed(&dst) && list_empty(&src)");
}

/* Runs fn(arg) on a registered thread inside a read-side section, so that
 * reader-only accessors pass the RCU_DEBUG checker. */
struct reader_call {
	void (*fn)(void *);
	void *arg;
};

static void *reader_call_thread(void *p)
{
	struct reader_call *c = p;

	rcu_register_thread();
	rcu_read_lock();
	c->fn(c->arg);
	rcu_read_unlock();
	rcu_quiescent_state();
	rcu_unregister_thread();
	return NULL;
}

static void as_reader(void (*fn)(void *), void *arg)
{
	struct reader_call c = { fn, arg };
	pthread_t t;

	CHECK(pthread_create(&t, NULL, reader_call_thread, &c) == 0,
	      "pthread_create(&t, NULL, reader_call_thread, &c) == 0");
	pthread_join(t, NULL);
}

struct first_arg {
	struct list_head *h;
	struct elem *got;
};

static void first_or_null(void *p)
{
	struct first_arg *a = p;

	a->got = list_first_or_null_rcu(a->h, struct elem, l);
}

static void t_list_first_or_null_rcu(void)
{
	LIST_HEAD(h);
	struct elem a = { .key = 1 };
	struct first_arg fa = { .h = &h };

	as_reader(first_or_null, &fa);
	CHECK(fa.got == NULL, "fa.got == NULL");
	list_add_rcu(&a.l, &h);
	as_reader(first_or_null, &fa);
	CHECK(fa.got == &a, "fa.got == &a");
}

static void t_hlist_plain(void)
{
	HLIST_HEAD(h);
	struct elem a = { .key = 1 }, b = { .key = 2 }, c = { .key = 3 };
	struct elem *pos;
	struct hlist_node *tmp;
	int n = 0;

	INIT_HLIST_NODE(&a.h);
	CHECK(hlist_unhashed(&a.h), "hlist_unhashed(&a.h)");
	CHECK(hlist_empty(&h), "hlist_empty(&h)");
	hlist_add_head(&c.h, &h);
	hlist_add_head(&b.h, &h);
	hlist_add_head(&a.h, &h);
	CHECK(!hlist_unhashed(&a.h) && !hlist_empty(&h),
	      "!hlist_unhashed(&a.h) && !hlist_empty(&h)");
	HLIST_IS(&h, 1, 2, 3);
	CHECK(hlist_well_formed(&h), "hlist_well_formed(&h)");
	hlist_for_each_entry(pos, &h, h)
		n += (int)pos->key;
	CHECK(n == 6, "n == 6");
	hlist_del(&b.h);
	CHECK(b.h.next == RCU_LIST_POISON_NEXT && (void *)b.h.pprev == RCU_LIST_POISON_PREV,
	      "b.h.next == RCU_LIST_POISON_NEXT && (void *)b.h.pprev == RCU_LIST_POISON_PREV");
	HLIST_IS(&h, 1, 3);
	hlist_del_init(&a.h);
	CHECK(hlist_unhashed(&a.h), "hlist_unhashed(&a.h)");
	hlist_del_init(&a.h); /* unhashed: a no-op */
	HLIST_IS(&h, 3);
	CHECK(hlist_well_formed(&h), "hlist_well_formed(&h)");
	hlist_for_each_entry_safe(pos, tmp, &h, h)
		hlist_del_init(&pos->h);
	CHECK(hlist_empty(&h), "hlist_empty(&h)");
	INIT_HLIST_HEAD(&h);
	CHECK(hlist_empty(&h), "hlist_empty(&h)");
}

static int hlist_accessors_ok;

/* Reader side of t_hlist_add_head_rcu(): the list is a(1) -> b(2). */
static void hlist_accessors(void *p)
{
	struct hlist_head *h = p;
	struct hlist_node *first = hlist_first_rcu(h);

	hlist_accessors_ok = first && hlist_next_rcu(first) &&
			     !hlist_next_rcu(hlist_next_rcu(first)) &&
			     hlist_entry(first, struct elem, h)->key == 1;
}

static void t_hlist_add_head_rcu(void)
{
	HLIST_HEAD(h);
	struct elem a = { .key = 1 }, b = { .key = 2 };

	hlist_add_head_rcu(&b.h, &h);
	hlist_add_head_rcu(&a.h, &h);
	HLIST_IS(&h, 1, 2);
	CHECK(hlist_well_formed(&h), "hlist_well_formed(&h)");
	as_reader(hlist_accessors, &h);
	CHECK(hlist_accessors_ok, "hlist_accessors_ok");
}

static void t_hlist_add_before_rcu(void)
{
	HLIST_HEAD(h);
	struct elem a = { .key = 1 }, b = { .key = 2 }, c = { .key = 3 };

	hlist_add_head_rcu(&c.h, &h);
	hlist_add_before_rcu(&a.h, &c.h); /* before the first: becomes first */
	hlist_add_before_rcu(&b.h, &c.h); /* in the middle */
	HLIST_IS(&h, 1, 2, 3);
	CHECK(hlist_well_formed(&h), "hlist_well_formed(&h)");
}

static void t_hlist_add_behind_rcu(void)
{
	HLIST_HEAD(h);
	struct elem a = { .key = 1 }, b = { .key = 2 }, c = { .key = 3 }, d = { .key = 4 };

	hlist_add_head_rcu(&a.h, &h);
	hlist_add_behind_rcu(&c.h, &a.h);  /* at the end */
	hlist_add_behind_rcu(&b.h, &a.h);  /* in the middle */
	hlist_add_after_rcu(&c.h, &d.h);   /* the article's spelling: (prev, new) */
	HLIST_IS(&h, 1, 2, 3, 4);
	CHECK(hlist_well_formed(&h), "hlist_well_formed(&h)");
}

static void t_hlist_del_rcu(void)
{
	HLIST_HEAD(h);
	struct elem a = { .key = 1 }, b = { .key = 2 }, c = { .key = 3 };
	struct elem *pos;
	unsigned long sum = 0;

	hlist_add_head_rcu(&c.h, &h);
	hlist_add_head_rcu(&b.h, &h);
	hlist_add_head_rcu(&a.h, &h);
	hlist_del_rcu(&b.h);
	HLIST_IS(&h, 1, 3);
	CHECK(hlist_well_formed(&h), "hlist_well_formed(&h)");
	CHECK((void *)b.h.pprev == RCU_LIST_POISON_PREV,
	      "(void *)b.h.pprev == RCU_LIST_POISON_PREV");
	CHECK(b.h.next == &c.h, "Quick Quiz 7: next left for readers");
	CHECK(!hlist_unhashed(&b.h), "!hlist_unhashed(&b.h)");
	pos = &b;
	hlist_for_each_entry_continue_rcu_check(pos, h, 1)
		sum += pos->key;
	CHECK(sum == 3, "sum == 3");
	hlist_del_rcu(&a.h);       /* the first node */
	HLIST_IS(&h, 3);
	hlist_del_init_rcu(&c.h);  /* the last node, marked unhashed */
	CHECK(hlist_unhashed(&c.h) && hlist_empty(&h), "hlist_unhashed(&c.h) && hlist_empty(&h)");
	hlist_del_init_rcu(&c.h);  /* unhashed: a no-op */
}

static void t_hlist_replace_rcu(void)
{
	HLIST_HEAD(h);
	struct elem a = { .key = 1 }, b = { .key = 2 }, c = { .key = 3 };
	struct elem x = { .key = 7 }, y = { .key = 8 }, z = { .key = 9 };

	hlist_add_head_rcu(&c.h, &h);
	hlist_add_head_rcu(&b.h, &h);
	hlist_add_head_rcu(&a.h, &h);
	hlist_replace_rcu(&b.h, &y.h);
	HLIST_IS(&h, 1, 8, 3);
	CHECK((void *)b.h.pprev == RCU_LIST_POISON_PREV && b.h.next == &c.h,
	      "(void *)b.h.pprev == RCU_LIST_POISON_PREV && b.h.next == &c.h");
	hlist_replace_rcu(&a.h, &x.h);   /* the first */
	hlist_replace_rcu(&c.h, &z.h);   /* the last */
	HLIST_IS(&h, 7, 8, 9);
	CHECK(hlist_well_formed(&h), "hlist_well_formed(&h)");
}

/* --- unit tests with a real reader thread --------------------------------- */

struct stand_arg {
	struct list_head *head;
	struct elem *stand_on;       /* the node the reader stops at */
	_Atomic int phase;           /* 1: reader is on the node; 2: go on */
	unsigned long sum;           /* keys seen after the stop */
	int steps;
};

static void wait_phase(_Atomic int *phase, int want)
{
	while (atomic_load(phase) < want)
		usleep(100);
}

/* Walks to @stand_on inside one read-side section, waits there, then goes on. */
static void *stand_reader(void *p)
{
	struct stand_arg *a = p;
	struct elem *pos;

	rcu_register_thread();
	rcu_read_lock();
	list_for_each_entry_rcu(pos, a->head, l) {
		if (pos == a->stand_on) {
			int zero = 0;

			/* Only the first visit stops (a torn list may come back). */
			if (atomic_compare_exchange_strong(&a->phase, &zero, 1))
				wait_phase(&a->phase, 2);
			continue;
		}
		if (atomic_load(&a->phase) >= 1)
			a->sum += pos->key;
		if (++a->steps > 100)
			break;
	}
	rcu_read_unlock();
	rcu_quiescent_state();
	rcu_unregister_thread();
	return NULL;
}

/* A reader on a node that list_del_rcu() removes walks back onto the list. */
static void t_list_del_rcu_reader(void)
{
	LIST_HEAD(h);
	struct elem e[4];
	struct stand_arg a = { .head = &h, .stand_on = &e[1] };
	pthread_t t;

	for (int i = 0; i < 4; i++) {
		e[i] = (struct elem){ .key = (unsigned long)(i + 1) };
		list_add_tail_rcu(&e[i].l, &h);
	}
	CHECK(pthread_create(&t, NULL, stand_reader, &a) == 0,
	      "pthread_create(&t, NULL, stand_reader, &a) == 0");
	wait_phase(&a.phase, 1);
	list_del_rcu(&e[1].l);
	list_del_rcu(&e[2].l);           /* the reader's successor goes too */
	atomic_store(&a.phase, 2);
	pthread_join(t, NULL);
	CHECK(a.sum == 7, "e[1] -> e[2] -> e[3] -> head");
	synchronize_rcu();
	LIST_IS(&h, 1, 4);
}

struct splice_arg {
	struct list_head *src, *dst;
	_Atomic int done;
};

static void *splicer(void *p)
{
	struct splice_arg *s = p;

	list_splice_init_rcu(s->src, s->dst, synchronize_rcu);
	atomic_store(&s->done, 1);
	return NULL;
}

/* list_splice_init_rcu() does not link the body into @dst while a reader is
 * still on the source list, and that reader ends at the source head. */
static void t_list_splice_waits_for_reader(void)
{
	LIST_HEAD(src);
	LIST_HEAD(dst);
	struct elem e[4];
	struct stand_arg a = { .head = &src, .stand_on = &e[0] };
	struct splice_arg s = { .src = &src, .dst = &dst };
	pthread_t rt, st;

	for (int i = 0; i < 3; i++) {
		e[i] = (struct elem){ .key = (unsigned long)(i + 1) };
		list_add_tail_rcu(&e[i].l, &src);
	}
	e[3] = (struct elem){ .key = 100 };
	list_add_tail_rcu(&e[3].l, &dst);
	CHECK(pthread_create(&rt, NULL, stand_reader, &a) == 0,
	      "pthread_create(&rt, NULL, stand_reader, &a) == 0");
	wait_phase(&a.phase, 1);
	CHECK(pthread_create(&st, NULL, splicer, &s) == 0,
	      "pthread_create(&st, NULL, splicer, &s) == 0");
	/* However long we wait here, the splice must not finish. */
	for (int i = 0; i < 200 && !list_empty(&src); i++)
		usleep(500);
	usleep(20000);
	CHECK(list_empty(&src), "the source was emptied first ...");
	CHECK(!atomic_load(&s.done), "... but the body is not moved yet");
	CHECK(rcu_access_pointer(dst.next) == &e[3].l, "rcu_access_pointer(dst.next) == &e[3].l");
	atomic_store(&a.phase, 2);
	pthread_join(rt, NULL);
	pthread_join(st, NULL);
	CHECK(a.sum == 5, "e[1], e[2], then back at src: stop");
	CHECK(a.steps == 2, "a.steps == 2");
	LIST_IS(&dst, 1, 2, 3, 100);
}

/* ====================================================================== */
/* Torture                                                                */

#define N_ANCHORS 64
#define L_ANCHOR_BASE 1000UL
#define BLOCK_LOW_BASE 0UL
#define BLOCK_HIGH_BASE (1UL << 20)
#define BLOCK_MAX 64
#define MAX_STEPS (4 * N_ANCHORS + 4 * BLOCK_MAX + 64)
#define READERS 2
#define QUARANTINE 65536 /* about 6 MB: a reader preempted for ~100 ms still finds poison */

/* The structures, updated by the writer thread only (it is the updater lock). */
static LIST_HEAD(tl);                    /* L */
static LIST_HEAD(ts);                    /* S */
static HLIST_HEAD(th);                   /* H */

static _Atomic int stop;
static _Atomic unsigned long errors;
static _Atomic unsigned long n_trav_l, n_trav_s, n_trav_h;
static _Atomic unsigned long n_cb;
static unsigned long n_call_rcu;         /* writer only */

/* What the writer did, by kind (writer only). */
enum { OP_L_ADD, OP_L_ADD_TAIL, OP_L_DEL, OP_L_REPLACE, OP_SPLICE, OP_SPLICE_TAIL,
       OP_H_ADD_HEAD, OP_H_ADD_BEFORE, OP_H_ADD_BEHIND, OP_H_ADD_AFTER, OP_H_DEL,
       OP_H_REPLACE, OP_NKINDS };
static const char *const op_names[OP_NKINDS] = {
	"list_add_rcu", "list_add_tail_rcu", "list_del_rcu", "list_replace_rcu",
	"list_splice_init_rcu", "list_splice_tail_init_rcu", "hlist_add_head_rcu",
	"hlist_add_before_rcu", "hlist_add_behind_rcu", "hlist_add_after_rcu",
	"hlist_del_rcu", "hlist_replace_rcu",
};
static unsigned long op_count[OP_NKINDS];

/* Quarantine of poisoned elements, so a premature free is seen as poison
 * rather than as a recycled live element.  Callback thread(s) only, but
 * locked in case a flavor runs callbacks on more than one thread. */
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static struct elem *quarantine[QUARANTINE];
static unsigned int q_next;

/* Reader errors by kind, for the closing "readers saw" line (the first ten
 * errors of any kind are printed as they happen, which one kind may fill). */
enum { ERR_RECLAIMED, ERR_GARBAGE, ERR_AGED, ERR_OTHER, ERR_NKINDS };
static _Atomic unsigned long err_kind[ERR_NKINDS];

static void report_kind(int kind, const char *what, unsigned long key)
{
	unsigned long n = atomic_fetch_add(&errors, 1);

	atomic_fetch_add_explicit(&err_kind[kind], 1, memory_order_relaxed);
	if (n < 10)
		printf("  torture error: %s (key %lu)\n", what, key);
}

static void report(const char *what, unsigned long key)
{
	report_kind(ERR_OTHER, what, key);
}

/* Where a reclaimed element's next links point (see elem_reclaim()). */
static struct elem dead_elem = { .magic = MAGIC_DEAD, .l = { &dead_elem.l, &dead_elem.l } };

static void elem_reclaim(struct rcu_head *rh)
{
	struct elem *e = container_of(rh, struct elem, rh);
	struct elem *old;

	if (e->magic != MAGIC_LIVE)
		report("callback on an element that is not live", e->key);
	/* A reader that (wrongly) still stands on @e and steps on lands on a
	 * dead element, which check_live() reports, rather than on a poisoned
	 * pointer, which would crash it before it could say what it saw.  So
	 * the next links go to the sentinel first and are never poisoned; the
	 * sentinel's own list link leads back to itself, and readers stop at
	 * the first dead element. */
	atomic_store_explicit((struct list_head *_Atomic *)&e->l.next, &dead_elem.l,
			      memory_order_relaxed);
	atomic_store_explicit((struct hlist_node *_Atomic *)&e->h.next, &dead_elem.h,
			      memory_order_relaxed);
	/* Dead before the rest is poisoned: a reader that looks while this
	 * runs sees "reclaimed", not "garbage". */
	e->magic = MAGIC_DEAD;
	memset(&e->gp_cookie, POISON_BYTE, offsetof(struct elem, l) - offsetof(struct elem, gp_cookie));
	memset(&e->l.prev, POISON_BYTE, sizeof(e->l.prev));
	memset(&e->h.pprev, POISON_BYTE, sizeof(e->h.pprev));
	memset(&e->rh, POISON_BYTE, sizeof(e->rh));
	pthread_mutex_lock(&q_lock);
	old = quarantine[q_next];
	quarantine[q_next] = e;
	q_next = (q_next + 1) % QUARANTINE;
	pthread_mutex_unlock(&q_lock);
	free(old);
	atomic_fetch_add_explicit(&n_cb, 1, memory_order_relaxed);
}

/* @e is already unlinked from every structure. */
static void retire(struct elem *e)
{
	n_call_rcu++;
	atomic_store_explicit(&e->gp_cookie, get_state_synchronize_rcu(), memory_order_relaxed);
	/* Release: the cookie is set before a reader can see retired == 1. */
	atomic_store_explicit(&e->retired, 1, memory_order_release);
	call_rcu(&e->rh, elem_reclaim);
}

/* --- readers --- */

static _Thread_local unsigned long seen_retired;   /* this reader's count */
static _Atomic unsigned long n_seen_retired;

static void check_live(struct elem *e, unsigned long *errs)
{
	if (e->magic != MAGIC_LIVE) {
		if (e->magic == MAGIC_DEAD)
			report_kind(ERR_RECLAIMED, "reader saw a reclaimed element", 0);
		else
			report_kind(ERR_GARBAGE, "reader saw garbage", 0);
		(*errs)++;
		return;
	}
	/* Acquire: pairs with the release in retire(). */
	if (atomic_load_explicit(&e->retired, memory_order_acquire)) {
		seen_retired++;
		/* A reader can reach a removed element only if its section began
		 * before the removal, so no full grace period can have ended since. */
		if (poll_state_synchronize_rcu(atomic_load_explicit(&e->gp_cookie,
								    memory_order_relaxed))) {
			report_kind(ERR_AGED,
				    "reader saw an element a full grace period after its removal",
				    e->key);
			(*errs)++;
		}
	}
}

static void walk_l(void)
{
	struct elem *e;
	unsigned long prev = 0, errs = 0;
	int first = 1, steps = 0, anchors = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(e, &tl, l) {
		unsigned long k;

		check_live(e, &errs);
		if (errs)
			break;
		k = e->key;
		if (!first && k <= prev) {
			report("L keys out of order", k);
			break;
		}
		if (!(k < BLOCK_LOW_BASE + BLOCK_MAX ||
		      (k >= L_ANCHOR_BASE && k < L_ANCHOR_BASE + 2 * N_ANCHORS) ||
		      (k >= BLOCK_HIGH_BASE && k < BLOCK_HIGH_BASE + BLOCK_MAX))) {
			report("L key out of range", k);
			break;
		}
		if (k >= L_ANCHOR_BASE && k < L_ANCHOR_BASE + 2 * N_ANCHORS && !(k & 1))
			anchors++;
		prev = k;
		first = 0;
		if (++steps > MAX_STEPS) {
			report("L traversal does not end (torn list)", k);
			break;
		}
	}
	rcu_read_unlock();
	if (!errs && steps <= MAX_STEPS && anchors != N_ANCHORS &&
	    atomic_load_explicit(&errors, memory_order_relaxed) == 0)
		report("L anchor missing", (unsigned long)anchors);
	atomic_fetch_add_explicit(&n_trav_l, 1, memory_order_relaxed);
}

static void walk_s(void)
{
	struct elem *e;
	unsigned long prev = 0, errs = 0;
	int first = 1, steps = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(e, &ts, l) {
		unsigned long k;

		check_live(e, &errs);
		if (errs)
			break;
		k = e->key;
		if ((!first && k <= prev) ||
		    !(k < BLOCK_LOW_BASE + BLOCK_MAX ||
		      (k >= BLOCK_HIGH_BASE && k < BLOCK_HIGH_BASE + BLOCK_MAX))) {
			report("reader on the splice source left it", k);
			break;
		}
		prev = k;
		first = 0;
		if (++steps > BLOCK_MAX) {
			report("S traversal does not end (torn list)", k);
			break;
		}
	}
	rcu_read_unlock();
	atomic_fetch_add_explicit(&n_trav_s, 1, memory_order_relaxed);
}

static void walk_h(void)
{
	struct elem *e;
	unsigned long prev = 0, errs = 0;
	int steps = 0, anchors = 0;

	rcu_read_lock();
	hlist_for_each_entry_rcu(e, &th, h) {
		unsigned long k;

		check_live(e, &errs);
		if (errs)
			break;
		k = e->key;
		if (k <= prev || k > 2 * N_ANCHORS + 1) {
			report("H keys out of order or range", k);
			break;
		}
		if (!(k & 1))
			anchors++;
		prev = k;
		if (++steps > MAX_STEPS) {
			report("H traversal does not end (torn list)", k);
			break;
		}
	}
	rcu_read_unlock();
	if (!errs && steps <= MAX_STEPS && anchors != N_ANCHORS &&
	    atomic_load_explicit(&errors, memory_order_relaxed) == 0)
		report("H anchor missing", (unsigned long)anchors);
	atomic_fetch_add_explicit(&n_trav_h, 1, memory_order_relaxed);
}

static void *torture_reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		walk_l();
		rcu_quiescent_state();
		walk_h();
		rcu_quiescent_state();
		walk_s();
		rcu_quiescent_state();
	}
	atomic_fetch_add(&n_seen_retired, seen_retired);
	rcu_unregister_thread();
	return NULL;
}

/* --- writer --- */

/* Writer's view (the updater lock is "being the writer thread"). */
static struct elem *l_anchor[N_ANCHORS], *l_odd[N_ANCHORS];
static struct elem *h_anchor[N_ANCHORS], *h_odd[N_ANCHORS], *h_one;
static int s_kind;          /* 0: S empty; 1: low block; 2: high block */
static int l_low, l_high;   /* size of the spliced blocks now on L */

static unsigned long xorshift(unsigned long *s)
{
	unsigned long x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static void writer_l(unsigned long r)
{
	int i = (int)((r >> 8) % N_ANCHORS);
	struct elem *e;

	switch (r % 8) {
	case 0: case 1: /* add or delete a transient */
		if (!l_odd[i]) {
			e = elem_new(L_ANCHOR_BASE + 2 * (unsigned long)i + 1);
			if ((r >> 16) & 1) {
				list_add_rcu(&e->l, &l_anchor[i]->l);
				op_count[OP_L_ADD]++;
			} else {
				/* Before the next anchor, or the tail block, or the head. */
				struct list_head *before = i + 1 < N_ANCHORS ? &l_anchor[i + 1]->l
							   : l_anchor[i]->l.next;
				list_add_tail_rcu(&e->l, before);
				op_count[OP_L_ADD_TAIL]++;
			}
			l_odd[i] = e;
		} else {
			list_del_rcu(&l_odd[i]->l);
			retire(l_odd[i]);
			l_odd[i] = NULL;
			op_count[OP_L_DEL]++;
		}
		break;
	case 2: case 3: /* replace an anchor (or a transient) in place */
		if (l_odd[i] && (r & 8)) {
			e = elem_new(l_odd[i]->key);
			list_replace_rcu(&l_odd[i]->l, &e->l);
			retire(l_odd[i]);
			l_odd[i] = e;
		} else {
			e = elem_new(l_anchor[i]->key);
			list_replace_rcu(&l_anchor[i]->l, &e->l);
			retire(l_anchor[i]);
			l_anchor[i] = e;
		}
		op_count[OP_L_REPLACE]++;
		break;
	case 4: /* fill S with a block (readers walk S meanwhile) */
		if (s_kind == 0) {
			int want_high = (int)((r >> 20) & 1);
			int n = 1 + (int)((r >> 24) % BLOCK_MAX);

			if ((want_high && l_high) || (!want_high && l_low))
				break;
			for (int k = 0; k < n; k++) {
				e = elem_new((want_high ? BLOCK_HIGH_BASE : BLOCK_LOW_BASE) +
					     (unsigned long)k);
				list_add_tail_rcu(&e->l, &ts);
			}
			s_kind = want_high ? 2 : 1;
		}
		break;
	case 5: /* splice S into L */
		if (s_kind == 1 && !l_low) {
			int n = 0;

			list_for_each_entry(e, &ts, l)
				n++;
			list_splice_init_rcu(&ts, &tl, synchronize_rcu);
			l_low = n;
			s_kind = 0;
			op_count[OP_SPLICE]++;
		} else if (s_kind == 2 && !l_high) {
			int n = 0;

			list_for_each_entry(e, &ts, l)
				n++;
			list_splice_tail_init_rcu(&ts, &tl, synchronize_rcu);
			l_high = n;
			s_kind = 0;
			op_count[OP_SPLICE_TAIL]++;
		}
		break;
	case 6: /* drop the front block from L, one element at a time */
		if (l_low) {
			e = list_first_entry(&tl, struct elem, l);
			list_del_rcu(&e->l);
			retire(e);
			l_low--;
			op_count[OP_L_DEL]++;
		}
		break;
	case 7: /* drop the tail block */
		if (l_high) {
			e = list_last_entry(&tl, struct elem, l);
			list_del_rcu(&e->l);
			retire(e);
			l_high--;
			op_count[OP_L_DEL]++;
		}
		break;
	}
}

static void writer_h(unsigned long r)
{
	int i = (int)((r >> 8) % N_ANCHORS);
	struct elem *e;

	switch (r % 6) {
	case 0: case 1: /* add or delete a transient 3 + 2i */
		if (!h_odd[i]) {
			e = elem_new(3 + 2 * (unsigned long)i);
			switch ((r >> 16) % 3) {
			case 0:
				hlist_add_behind_rcu(&e->h, &h_anchor[i]->h);
				op_count[OP_H_ADD_BEHIND]++;
				break;
			case 1:
				hlist_add_after_rcu(&h_anchor[i]->h, &e->h);
				op_count[OP_H_ADD_AFTER]++;
				break;
			default:
				if (i + 1 < N_ANCHORS) {
					hlist_add_before_rcu(&e->h, &h_anchor[i + 1]->h);
					op_count[OP_H_ADD_BEFORE]++;
				} else {
					hlist_add_behind_rcu(&e->h, &h_anchor[i]->h);
					op_count[OP_H_ADD_BEHIND]++;
				}
				break;
			}
			h_odd[i] = e;
		} else {
			hlist_del_rcu(&h_odd[i]->h);
			retire(h_odd[i]);
			h_odd[i] = NULL;
			op_count[OP_H_DEL]++;
		}
		break;
	case 2: case 3: /* replace */
		if (h_odd[i] && (r & 8)) {
			e = elem_new(h_odd[i]->key);
			hlist_replace_rcu(&h_odd[i]->h, &e->h);
			retire(h_odd[i]);
			h_odd[i] = e;
		} else {
			e = elem_new(h_anchor[i]->key);
			hlist_replace_rcu(&h_anchor[i]->h, &e->h);
			retire(h_anchor[i]);
			h_anchor[i] = e;
		}
		op_count[OP_H_REPLACE]++;
		break;
	default: /* key 1 at the head */
		if (!h_one) {
			h_one = elem_new(1);
			if (r & 16) {
				hlist_add_head_rcu(&h_one->h, &th);
				op_count[OP_H_ADD_HEAD]++;
			} else {
				hlist_add_before_rcu(&h_one->h, &h_anchor[0]->h);
				op_count[OP_H_ADD_BEFORE]++;
			}
		} else {
			hlist_del_rcu(&h_one->h);
			retire(h_one);
			h_one = NULL;
			op_count[OP_H_DEL]++;
		}
		break;
	}
}

static void torture_setup(void)
{
	INIT_LIST_HEAD(&tl);
	INIT_LIST_HEAD(&ts);
	INIT_HLIST_HEAD(&th);
	for (int i = 0; i < N_ANCHORS; i++) {
		l_anchor[i] = elem_new(L_ANCHOR_BASE + 2 * (unsigned long)i);
		list_add_tail(&l_anchor[i]->l, &tl);
	}
	for (int i = N_ANCHORS - 1; i >= 0; i--) {
		h_anchor[i] = elem_new(2 + 2 * (unsigned long)i);
		hlist_add_head(&h_anchor[i]->h, &th);
	}
}

static double now_s(void)
{
	struct timespec ts_;

	clock_gettime(CLOCK_MONOTONIC, &ts_);
	return (double)ts_.tv_sec + (double)ts_.tv_nsec / 1e9;
}

struct writer_arg {
	double seconds;
	unsigned long updates;
};

static void *torture_writer(void *p)
{
	struct writer_arg *w = p;
	unsigned long seed = 88172645463325252UL;
	double end = now_s() + w->seconds;

	rcu_register_thread();
	while (now_s() < end) {
		for (int k = 0; k < 64; k++) {
			unsigned long r = xorshift(&seed);

			if (r & (1UL << 40))
				writer_l(r);
			else
				writer_h(r);
			w->updates++;
		}
		rcu_quiescent_state();
		/* Leave the readers some room on a 2-core machine. */
		if ((w->updates & 1023) == 0)
			sched_yield();
	}
	rcu_unregister_thread();
	return NULL;
}

/* Removes and retires everything, then waits for the callbacks. */
static void torture_teardown(void)
{
	struct elem *e, *tmp;
	struct hlist_node *hn;

	rcu_register_thread();
	list_for_each_entry_safe(e, tmp, &tl, l) {
		list_del_rcu(&e->l);
		retire(e);
	}
	list_for_each_entry_safe(e, tmp, &ts, l) {
		list_del_rcu(&e->l);
		retire(e);
	}
	hlist_for_each_entry_safe(e, hn, &th, h) {
		hlist_del_rcu(&e->h);
		retire(e);
	}
	rcu_barrier();
	rcu_unregister_thread();
	pthread_mutex_lock(&q_lock);
	for (int i = 0; i < QUARANTINE; i++) {
		free(quarantine[i]);
		quarantine[i] = NULL;
	}
	pthread_mutex_unlock(&q_lock);
}

static double torture_seconds(void)
{
	const char *s = getenv("TORTURE_SECONDS");
	double v = s ? strtod(s, NULL) : 0;

	return v > 0 ? v : 2.0;
}

static void t_torture(void)
{
	pthread_t rd[READERS], wr;
	struct writer_arg w = { .seconds = torture_seconds() };
	struct rcu_stats st0, st1;

	rcu_get_stats(&st0);
	torture_setup();
	for (int i = 0; i < READERS; i++)
		CHECK(pthread_create(&rd[i], NULL, torture_reader, NULL) == 0,
		      "pthread_create(&rd[i], NULL, torture_reader, NULL) == 0");
	CHECK(pthread_create(&wr, NULL, torture_writer, &w) == 0,
	      "pthread_create(&wr, NULL, torture_writer, &w) == 0");
	pthread_join(wr, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < READERS; i++)
		pthread_join(rd[i], NULL);
	torture_teardown();
	rcu_get_stats(&st1);

	printf("  torture %s: %.1f s, %lu updates, %lu call_rcu, %lu callbacks, "
	       "%lu grace periods, backlog high-water %lu\n",
	       RCU_FLAVOR_NAME, w.seconds, w.updates, n_call_rcu,
	       atomic_load(&n_cb), st1.gp_completed - st0.gp_completed, st1.cb_pending_hwm);
	printf("  traversals: L %lu, H %lu, S %lu; removed-but-unreclaimed elements seen %lu\n",
	       atomic_load(&n_trav_l), atomic_load(&n_trav_h), atomic_load(&n_trav_s),
	       atomic_load(&n_seen_retired));
	printf("  ops:");
	for (int k = 0; k < OP_NKINDS; k++)
		printf(" %s=%lu", op_names[k], op_count[k]);
	printf("\n");
	/* tests/rcu/broken_gp.sh reads this line.  "reclaimed": a reader saw an
	 * element its callback had already poisoned (use-after-free, the
	 * check broken_gp.sh requires); "garbage": neither live nor dead, e.g.
	 * a list head taken for an element after a splice that did not wait;
	 * "past a full grace period": a stale element (the age check). */
	printf("  readers saw: %lu reclaimed, %lu garbage, %lu past a full grace period, "
	       "%lu other errors\n",
	       atomic_load(&err_kind[ERR_RECLAIMED]), atomic_load(&err_kind[ERR_GARBAGE]),
	       atomic_load(&err_kind[ERR_AGED]), atomic_load(&err_kind[ERR_OTHER]));

	CHECK(atomic_load(&errors) == 0, "readers saw %lu errors", atomic_load(&errors));
	CHECK(atomic_load(&n_cb) == n_call_rcu, "rcu_barrier() waited for all: %lu of %lu callbacks ran",
	      atomic_load(&n_cb), n_call_rcu);
	/* Report what was exercised, and fail if something never happened. */
	for (int k = 0; k < OP_NKINDS; k++)
		CHECK(op_count[k] > 0, "the writer never ran %s", op_names[k]);
	CHECK(atomic_load(&n_trav_l) > 0 && atomic_load(&n_trav_h) > 0 &&
	      atomic_load(&n_trav_s) > 0,
	      "readers traversed L, H and S (%lu, %lu, %lu times)", atomic_load(&n_trav_l),
	      atomic_load(&n_trav_h), atomic_load(&n_trav_s));
	CHECK(st1.gp_completed > st0.gp_completed, "grace periods completed during the torture");
}

/* ====================================================================== */

/* A reader that follows a poisoned link crashes; say so, and count it. */
static void on_fatal_signal(int sig)
{
	static const char msg[] = "  torture error: fatal signal (a reader followed a "
				  "poisoned or freed link)\n0 passed, 1 failed\n";

	(void)sig;
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

int main(int argc, char **argv)
{
	double secs = torture_seconds();

	only = argv + 1;
	n_only = argc - 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A hang (a reader looping on a torn list, a grace period that never
	 * ends) kills the run, which counts as a failure. */
	alarm((unsigned int)(secs + 120));
	signal(SIGSEGV, on_fatal_signal);
	signal(SIGBUS, on_fatal_signal);

	run_test("list_plain", t_list_plain);
	run_test("list_splice_plain", t_list_splice_plain);
	run_test("list_add_rcu", t_list_add_rcu);
	run_test("list_add_tail_rcu", t_list_add_tail_rcu);
	run_test("list_del_rcu", t_list_del_rcu);
	run_test("list_replace_rcu", t_list_replace_rcu);
	run_test("list_splice_init_rcu", t_list_splice_init_rcu);
	run_test("list_first_or_null_rcu", t_list_first_or_null_rcu);
	run_test("hlist_plain", t_hlist_plain);
	run_test("hlist_add_head_rcu", t_hlist_add_head_rcu);
	run_test("hlist_add_before_rcu", t_hlist_add_before_rcu);
	run_test("hlist_add_behind_rcu", t_hlist_add_behind_rcu);
	run_test("hlist_del_rcu", t_hlist_del_rcu);
	run_test("hlist_replace_rcu", t_hlist_replace_rcu);
	run_test("list_del_rcu_reader_walks_on", t_list_del_rcu_reader);
	run_test("list_splice_init_rcu_waits_for_reader", t_list_splice_waits_for_reader);
	run_test("torture", t_torture);

	if (n_only_ran != n_only) { /* a name that matches no test is a failure */
		CHECK(false, "%d of the %d test names given match no test", n_only - n_only_ran,
		      n_only);
	}
	return check_summary();
}
