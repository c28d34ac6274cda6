/*
 * db_none.c - stand-in keyspace used only while hashtable/ has no library to
 * link: no key commands, an empty keyspace.  server/server.mk picks db.c as
 * soon as $(B)/libht_qsbr.a is buildable.
 */
#include "server/server_internal.h"

struct cmd g_key_cmds[1];
int g_nkey_cmds;

void db_init(void) {}
void db_fini(void) {}
unsigned long long db_size(void)
{
	return 0;
}
unsigned long long db_expires(void)
{
	return 0;
}
long long db_avg_ttl(void)
{
	return 0;
}
unsigned long long db_expired_total(void)
{
	return 0;
}
size_t db_entry_bytes(void)
{
	return 0;
}
void db_active_expire_cycle(void) {}
