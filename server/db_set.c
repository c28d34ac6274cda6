/*
 * db_set.c - sets for the keyspace layer (db_set.h): the option
 * set-max-intset-entries (Redis 7.0's name and default, 512; CONFIG
 * GET/SET, the config file and CONFIG REWRITE through its cfg_opt row), and
 * whole-value builders for the RDB loader, RESTORE and the snapshot writer.
 * No locks: values are immutable (sval.h).
 */
#include "server/db_set.h"
#include "server/config.h"
#include "server/sval.h"
#include "server/util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Written by CONFIG SET (relaxed); read by every set writer. */
static _Atomic long long max_intset = 512;

static const struct cfg_opt set_rows[] = {
    {.name = "set-max-intset-entries", .kind = CFG_INT, .mut = CFG_MUTABLE,
     .field = &max_intset, .min = 0, .max = LONG_MAX, .def = "512"},
};

static struct cfg_group set_group = {
    "set", set_rows, (int)(sizeof(set_rows) / sizeof(set_rows[0])), NULL, NULL, NULL};
CFG_REGISTER(set_group)

long long db_set_max_intset(void)
{
	return atomic_load_explicit(&max_intset, memory_order_relaxed);
}

int db_set_build(const struct rdb_pair *m, size_t n, void **out, size_t *outlen)
{
	struct sv_edit ed;
	int enc;

	if (n == 0)
		return -1;
	sv_edit_init(&ed, NULL);
	for (size_t i = 0; i < n; i++) {
		if (!sv_edit_add(&ed, m[i].f, m[i].fl)) {
			sv_edit_fini(&ed);
			return -1;
		}
	}
	enc = ed.nonint || (long long)n > db_set_max_intset() ? SV_ENC_HASHTABLE : SV_ENC_INTSET;
	*outlen = sv_edit_size(&ed, enc);
	*out = xmalloc(*outlen);
	sv_edit_write(&ed, *out, enc);
	sv_edit_fini(&ed);
	return 0;
}

struct rdb_pair *db_set_members(const struct ht_entry *e, size_t *n, char **arena)
{
	const void *v = ht_entry_val(e);
	uint32_t cnt = sv_count(v);
	struct rdb_pair *m = xcalloc((size_t)cnt + 1, sizeof(*m));
	char *a = NULL;
	struct sv_mem sm;

	if (sv_enc(v) == SV_ENC_INTSET)
		a = xmalloc((size_t)cnt * 21 + 1);
	*arena = a;
	*n = 0;
	for (size_t off = 0; sv_next(v, &off, &sm);) {
		if (a) {
			memcpy(a, sm.p, sm.l);
			m[*n] = (struct rdb_pair){a, sm.l, NULL, 0};
			a += sm.l;
		} else {
			m[*n] = (struct rdb_pair){sm.p, sm.l, NULL, 0};
		}
		(*n)++;
	}
	return m;
}
