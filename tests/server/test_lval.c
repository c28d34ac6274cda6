/*
 * tests/server/test_lval.c - server/lval.c (the list value) against a model:
 * random pushes at both ends (one or many elements, short and over-8 KB
 * ones), pops, trims, sets, inserts and removals built with lv_b_* from the
 * previous version, which stays alive (shared chunks) until the next step;
 * after every step the new version validates (lv_validate(): counts, firsts,
 * bytes) and reads back equal to the model through lv_index(), lv_it_*() and
 * lv_rit_*() (backwards).
 * Old versions are dropped in a shuffled order, as grace periods may end.
 * Leaks and use-after-free show under ASan (make VARIANT=asan).
 */
#include "server/lval.h"

#include "tests/check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 20000
#define KEEP 8

struct el {
	char *p;
	size_t n;
};

static struct el *model;
static size_t mlen, mcap;

static uint64_t rs = 88172645463325252ull;

static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static struct el mk(void)
{
	struct el e;
	size_t n = rnd() % 50 == 0 ? 9000 + rnd() % 3000 : rnd() % 40;

	e.n = n;
	e.p = malloc(n + 1);
	for (size_t i = 0; i < n; i++)
		e.p[i] = (char)('a' + rnd() % 26);
	return e;
}

static void m_insert(size_t at, struct el e)
{
	if (mlen == mcap) {
		mcap = mcap ? mcap * 2 : 64;
		model = realloc(model, mcap * sizeof(*model));
	}
	memmove(model + at + 1, model + at, (mlen - at) * sizeof(*model));
	model[at] = e;
	mlen++;
}

static void m_erase(size_t a, size_t b)
{
	for (size_t i = a; i < b; i++)
		free(model[i].p);
	memmove(model + a, model + b, (mlen - b) * sizeof(*model));
	mlen -= b - a;
}

static int same(const struct lv_root *r)
{
	struct lv_it it;
	const char *p;
	size_t n, i = 0;

	if (!r)
		return mlen == 0;
	if (r->count != mlen || lv_validate(r) != 0)
		return 0;
	lv_it_at(&it, r, 0);
	while (lv_it_next(&it, &p, &n)) {
		if (i >= mlen || n != model[i].n || memcmp(p, model[i].p, n))
			return 0;
		i++;
	}
	if (i != mlen)
		return 0;
	{ /* backwards from a random element */
		static struct lv_rit rit;
		size_t j = (size_t)(rnd() % mlen);

		lv_rit_at(&rit, r, j);
		for (i = j + 1; i > 0 && lv_rit_prev(&rit, &p, &n); i--)
			if (n != model[i - 1].n || memcmp(p, model[i - 1].p, n))
				return 0;
		if (i != 0 || lv_rit_prev(&rit, &p, &n))
			return 0;
	}
	for (int k = 0; k < 10; k++) {
		size_t j = (size_t)(rnd() % mlen);

		lv_index(r, j, &p, &n);
		if (n != model[j].n || memcmp(p, model[j].p, n))
			return 0;
		lv_it_at(&it, r, j);
		if (!lv_it_next(&it, &p, &n) || n != model[j].n || memcmp(p, model[j].p, n))
			return 0;
	}
	return 1;
}

int main(void)
{
	const struct lv_root *keep[KEEP] = {0}, *cur = NULL;
	int bad = 0;
	const struct lv_root *copies[KEEP];
	unsigned long maxlen = 0, maxch = 0, maxseg = 0, n_discards = 0, n_copies = 0;
	int ncopies = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	lv_set_poison(1);
	for (int s = 0; s < STEPS && !bad; s++) {
		struct lv_b b;
		uint64_t n = cur ? cur->count : 0;
		int op = (int)(rnd() % 10);

		if (cur && rnd() % 8 == 0) {
			/* a version the table refuses: built from cur (which hands
			 * its references over), then discarded, so cur gets them
			 * back and validates with no slot handed over */
			uint64_t a = rnd() % n, z = a + rnd() % (n - a) + 1;
			const struct lv_root *x;

			lv_b_init(&b);
			if (rnd() % 2)
				lv_b_elem(&b, "x", 1);
			lv_b_range(&b, cur, a, z, (int)(rnd() % 2));
			x = lv_b_finish_from(&b, cur);
			lv_root_discard(x, cur);
			n_discards++;
			if (lv_validate(cur) < 0) {
				CHECK(0, "step %d: a discarded successor left cur invalid", s);
				bad = 1;
			}
		}
		if (cur && rnd() % 16 == 0) {
			/* a second holder (COPY, or the table's own copy pending):
			 * the next version counts its references instead */
			if (ncopies == KEEP) { /* the oldest holder goes */
				lv_root_put(copies[0]);
				memmove(copies, copies + 1, (KEEP - 1) * sizeof(*copies));
				ncopies--;
			}
			atomic_fetch_add(&((struct lv_root *)cur)->refs, 1);
			copies[ncopies++] = cur;
			n_copies++;
		}
		lv_b_init(&b);
		if (s < 600 || op < 4) { /* push */
			int k = 1 + (int)(rnd() % (rnd() % 8 ? 3 : 200)), right = rnd() % 2;
			struct el *es = malloc((size_t)k * sizeof(*es));

			for (int i = 0; i < k; i++)
				es[i] = mk();
			if (right) {
				lv_b_range(&b, cur, 0, n, 1);
				for (int i = 0; i < k; i++) {
					lv_b_elem(&b, es[i].p, es[i].n);
					m_insert(mlen, es[i]);
				}
			} else {
				for (int i = k - 1; i >= 0; i--)
					lv_b_elem(&b, es[i].p, es[i].n);
				lv_b_range(&b, cur, 0, n, 0);
				for (int i = 0; i < k; i++)
					m_insert(0, es[i]);
			}
			free(es);
		} else if (op < 6) { /* pop k from an end */
			uint64_t k = 1 + rnd() % 50;

			if (k > n)
				k = n;
			if (rnd() % 2) {
				lv_b_range(&b, cur, k, n, 0);
				m_erase(0, k);
			} else {
				lv_b_range(&b, cur, 0, n - k, 0);
				m_erase(mlen - k, mlen);
			}
		} else if (op < 7 && n) { /* trim to [a, z) */
			uint64_t a = rnd() % (n / 4 + 1), z = n - rnd() % (n / 4 + 1);

			if (z < a)
				z = a;
			lv_b_range(&b, cur, a, z, 0);
			m_erase(z, mlen);
			m_erase(0, a);
		} else if (op < 9 && n) { /* set or insert at i */
			uint64_t i = rnd() % n;
			struct el e = mk();
			int ins = rnd() % 2;

			lv_b_range(&b, cur, 0, i, 0);
			lv_b_elem(&b, e.p, e.n);
			lv_b_range(&b, cur, ins ? i : i + 1, n, 0);
			if (!ins)
				m_erase(i, i + 1);
			m_insert(i, e);
		} else if (n) { /* remove every step-th element from start */
			uint64_t step = 1 + rnd() % 500, start = rnd() % step, f = 0, pos;

			for (pos = start; pos < n; pos += step) {
				lv_b_range(&b, cur, f, pos, 0);
				f = pos + 1;
			}
			lv_b_range(&b, cur, f, n, 0);
			if (start < n)
				for (int64_t q = (int64_t)((n - 1 - start) / step * step + start);
				     q >= (int64_t)start; q -= (int64_t)step)
					m_erase((size_t)q, (size_t)q + 1);
		}
		{
			const struct lv_root *nu = cur ? lv_b_finish_from(&b, cur) : lv_b_finish(&b);

			if (!same(nu)) {
				CHECK(0, "step %d (op %d): the new version differs from the model", s, op);
				bad = 1;
			}
			if (nu && nu->count > maxlen)
				maxlen = nu->count;
			if (nu) {
				uint64_t nch = 0;

				for (uint32_t i = 0; i < nu->nseg; i++)
					nch += nu->sg[i].s->nch;
				if (nch > maxch)
					maxch = nch;
				if (nu->nseg > maxseg)
					maxseg = nu->nseg;
			}
			/* keep a few old versions alive, drop them in random order */
			{
				int slot = (int)(rnd() % KEEP);

				lv_root_put(keep[slot]);
				keep[slot] = cur;
			}
			cur = nu;
		}
	}
	CHECK(!bad, "%d steps: every version equal to the model", STEPS);
	CHECK(maxlen > 2000 && maxch > 10, "lists grew to %lu elements in %lu chunks", maxlen, maxch);
	printf("lists up to %lu elements in %lu chunks, %lu segments of at most %d chunks\n", maxlen,
	       maxch, maxseg, LV_SEG_MAX);
	/* past a few segments: shared segments, splits and merges all ran */
	CHECK(maxseg > 2, "up to %lu segments of at most %d chunks", maxseg, LV_SEG_MAX);
	printf("%lu discarded successors, %lu second holders\n", n_discards, n_copies);
	for (int i = 0; i < KEEP; i++)
		lv_root_put(keep[i]);
	for (int i = 0; i < ncopies; i++)
		lv_root_put(copies[i]);
	lv_root_put(cur);
	m_erase(0, mlen);
	free(model);
	return check_summary();
}
