/*
 * cmd_object.c - OBJECT (ENCODING, FREQ, IDLETIME, REFCOUNT, HELP) and MEMORY
 * (USAGE, STATS, DOCTOR, PURGE, MALLOC-STATS, HELP): what the keyspace's
 * entries and the allocator look like from outside.  The access clock is
 * evict.c's (evict.h), the memory figures mem.c's (mem.h).
 *
 * Context: the connection's worker, online: the entries looked up stay valid
 * until the command returns (QSBR).  Nothing here touches an entry's access
 * word (ht_peek_rcu()), as Redis's OBJECT and MEMORY USAGE do not.
 *
 * Tested by tests/server/test_cache.sh and tests/server/cases_cache.txt
 * (replies recorded from redis-server 7.0.15).
 */
#define RCU_FLAVOR_QSBR
#include "hashtable/ht.h"
#include "resp/resp.h"
#include "server/cmd.h"
#include "server/conn.h"
#include "server/db.h"
#include "server/evict.h"
#include "server/mem.h"
#include "server/reply.h"
#include "server/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The live entry of key argv[2] without touching its access word, or NULL
 * after replying null. */
static const struct ht_entry *lookup_notouch(struct conn *c, int i)
{
	const struct ht_entry *e = ht_peek_rcu(db_of(c), ARGV(c, i), ARGL(c, i));

	if (!e)
		reply_null(c);
	return e;
}

#define ERR_NO_LFU                                                                                 \
	"-ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note " \
	"that when switching between policies at runtime LRU and LFU data will take some time to " \
	"adjust."
#define ERR_LFU_IDLE                                                                               \
	"-ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "  \
	"switching between policies at runtime LRU and LFU data will take some time to adjust."

static const char *const object_help[] = {
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Prints this help.",
    NULL,
};

void cmd_object_help(struct conn *c, int argc)
{
	(void)argc;
	reply_help(c, object_help);
}

void cmd_object_encoding(struct conn *c, int argc)
{
	const struct ht_entry *e;

	(void)argc;
	if ((e = lookup_notouch(c, 2)))
		reply_bulk_str(c, db_encoding(e));
}

void cmd_object_refcount(struct conn *c, int argc)
{
	const struct ht_entry *e;
	long long v;

	(void)argc;
	if (!(e = lookup_notouch(c, 2)))
		return;
	/* Redis shares the integers 0..9999 unless an LRU/LFU limit is on. */
	if (!strcmp(db_str_encoding(e, &v), "int") && v >= 0 && v < 10000 && evict_shares_integers())
		reply_int(c, INT_MAX);
	else
		reply_int(c, 1);
}

void cmd_object_freq(struct conn *c, int argc)
{
	const struct ht_entry *e;

	(void)argc;
	if (!(e = lookup_notouch(c, 2)))
		return;
	if (!evict_lfu_mode())
		reply_error(c, ERR_NO_LFU);
	else
		reply_int(c, evict_entry_freq(e));
}

void cmd_object_idletime(struct conn *c, int argc)
{
	const struct ht_entry *e;

	(void)argc;
	if (!(e = lookup_notouch(c, 2)))
		return;
	if (evict_lfu_mode())
		reply_error(c, ERR_LFU_IDLE);
	else
		reply_int(c, evict_entry_idle_s(e));
}

/* ------------------------------------------------------------ MEMORY */

void cmd_memory_usage(struct conn *c, int argc)
{
	const struct ht_entry *e;

	for (int j = 3; j < argc; j += 2) {
		long long samples;

		if (util_strcaseeq(ARGV(c, j), ARGL(c, j), "samples") && j + 1 < argc) {
			if (!resp_str2ll(ARGV(c, j + 1), ARGL(c, j + 1), &samples)) {
				reply_error(c, ERR_NOT_INT);
				return;
			}
			if (samples < 0) {
				reply_error(c, ERR_SYNTAX);
				return;
			}
		} else {
			reply_error(c, ERR_SYNTAX);
			return;
		}
	}
	if (!(e = lookup_notouch(c, 2)))
		return;
	if (db_type(e) == OBJ_MODULE) { /* the type's mem_usage, as Redis */
		size_t n = mem_entry_footprint(e); /* before: mem may wait offline */

		reply_int(c, (long long)(n + db_mod_hooks.mem(ht_entry_val(e))));
	} else {
		reply_int(c, (long long)mem_entry_footprint(e));
	}
}

/* MEMORY STATS's "db.N" maps, one per non-empty database as Redis: the
 * table's bucket array as its main hash table overhead.  Which dbs are
 * non-empty is read once (into @ids, g_ndbs of them), so the map's length
 * and its entries agree while other clients write. */
static int nonempty_dbs(int *ids)
{
	int n = 0;

	for (int i = 0; i < g_ndbs; i++)
		if (db_keys_of(i))
			ids[n++] = i;
	return n;
}

static void reply_db_overheads(struct conn *c, const int *ids, int n)
{
	for (int k = 0; k < n; k++) {
		struct ht_stats st;
		char name[24];

		ht_stats(db_at(ids[k]), &st);
		snprintf(name, sizeof(name), "db.%d", ids[k]);
		reply_bulk_str(c, name);
		reply_map(c, 3);
		reply_bulk_str(c, "overhead.hashtable.main");
		reply_int(c, (long long)(st.buckets * sizeof(void *)));
		reply_bulk_str(c, "overhead.hashtable.expires");
		reply_int(c, 0);
		reply_bulk_str(c, "overhead.hashtable.slot-to-keys");
		reply_int(c, 0);
	}
}

void cmd_memory_stats(struct conn *c, int argc)
{
	struct mem_figures m;
	size_t keys = (size_t)db_size();
	int *ids = xmalloc((size_t)g_ndbs * sizeof(*ids)), nids = nonempty_dbs(ids);
	size_t net;

	(void)argc;
	mem_figures(&m);
	net = m.used > m.startup ? m.used - m.startup : 0;
	reply_map(c, 27 + nids);
	reply_bulk_str(c, "peak.allocated");
	reply_int(c, (long long)m.peak);
	reply_bulk_str(c, "total.allocated");
	reply_int(c, (long long)m.used);
	reply_bulk_str(c, "startup.allocated");
	reply_int(c, (long long)m.startup);
	reply_bulk_str(c, "replication.backlog");
	reply_int(c, 0);
	reply_bulk_str(c, "clients.slaves");
	reply_int(c, 0);
	reply_bulk_str(c, "clients.normal");
	reply_int(c, (long long)m.clients_normal);
	reply_bulk_str(c, "cluster.links");
	reply_int(c, 0);
	reply_bulk_str(c, "aof.buffer");
	reply_int(c, 0);
	reply_bulk_str(c, "lua.caches");
	reply_int(c, 0);
	reply_bulk_str(c, "functions.caches");
	reply_int(c, 0);
	reply_db_overheads(c, ids, nids);
	free(ids);
	reply_bulk_str(c, "overhead.total");
	reply_int(c, (long long)m.overhead);
	reply_bulk_str(c, "keys.count");
	reply_int(c, (long long)keys);
	reply_bulk_str(c, "keys.bytes-per-key");
	reply_int(c, keys ? (long long)(net / keys) : 0);
	reply_bulk_str(c, "dataset.bytes");
	reply_int(c, (long long)m.dataset);
	reply_bulk_str(c, "dataset.percentage");
	reply_double(c, m.dataset_perc);
	reply_bulk_str(c, "peak.percentage");
	reply_double(c, m.peak_perc);
	reply_bulk_str(c, "allocator.allocated");
	reply_int(c, (long long)m.allocated);
	reply_bulk_str(c, "allocator.active");
	reply_int(c, (long long)m.active);
	reply_bulk_str(c, "allocator.resident");
	reply_int(c, (long long)m.resident);
	reply_bulk_str(c, "allocator-fragmentation.ratio");
	reply_double(c, m.alloc_frag);
	reply_bulk_str(c, "allocator-fragmentation.bytes");
	reply_int(c, m.alloc_frag_bytes);
	reply_bulk_str(c, "allocator-rss.ratio");
	reply_double(c, m.alloc_rss);
	reply_bulk_str(c, "allocator-rss.bytes");
	reply_int(c, m.alloc_rss_bytes);
	reply_bulk_str(c, "rss-overhead.ratio");
	reply_double(c, m.rss_overhead);
	reply_bulk_str(c, "rss-overhead.bytes");
	reply_int(c, m.rss_overhead_bytes);
	reply_bulk_str(c, "fragmentation");
	reply_double(c, m.frag);
	reply_bulk_str(c, "fragmentation.bytes");
	reply_int(c, m.frag_bytes);
}

void cmd_memory_doctor(struct conn *c, int argc)
{
	const char *msg = mem_allocated() < 5u * 1024 * 1024
			      ? "Hi Sam, this instance is empty or is using very little memory, my "
				"issues detector can't be used in these conditions. Please, leave for "
				"your mission on Earth and fill it with some data. The new Sam and I "
				"will be back to our programming as soon as I finished rebooting.\n"
			      : "Hi Sam, I can't find any memory issue in your instance. I can only "
				"account for what occurs on this base.\n";

	(void)argc;
	reply_verbatim(c, msg, strlen(msg));
}

void cmd_memory_purge(struct conn *c, int argc)
{
	(void)argc;
	mem_purge();
	reply_ok(c);
}

void cmd_memory_malloc_stats(struct conn *c, int argc)
{
	size_t len;
	char *text = mem_malloc_stats(&len);

	(void)argc;
	reply_verbatim(c, text, len);
	free(text);
}

static const char *const memory_help[] = {
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Prints this help.",
    NULL,
};

void cmd_memory_help(struct conn *c, int argc)
{
	(void)argc;
	reply_help(c, memory_help);
}
