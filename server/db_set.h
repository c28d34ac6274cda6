/*
 * db_set.h - what the keyspace layer knows of sets (docs/types.md "Sets"):
 * the option set-max-intset-entries, and building or reading a whole set
 * value (sval.h) for the RDB loader, DUMP/RESTORE and the snapshot writer.
 * The commands are cmd_set.c's.
 */
#ifndef SERVER_DB_SET_H
#define SERVER_DB_SET_H

#include "hashtable/ht.h"
#include "server/rdb.h"

#include <stddef.h>

/* set-max-intset-entries (relaxed; read by writers). */
long long db_set_max_intset(void);

/* A set value (sval.h) holding the members @m[i].f/.fl (i < @n), encoded as Redis 7.0 encodes a set
 * it loads (intset when every member is an integer and @n <=
 * set-max-intset-entries), malloc()ed into *@out (*@outlen bytes; store it
 * with HT_VAL_TAGGED): 0, or -1 when @n is 0 or two members are equal. */
int db_set_build(const struct rdb_pair *m, size_t n, void **out, size_t *outlen);

/* Set @e's members in its order as pairs (.f/.fl; v NULL), *@n of them:
 * each points into @e or into *@arena (valid while @e is; the caller frees
 * the array and *@arena). */
struct rdb_pair *db_set_members(const struct ht_entry *e, size_t *n, char **arena);

#endif /* SERVER_DB_SET_H */
