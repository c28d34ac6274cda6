/*
 * notify.c - keyspace notifications (notify.h): the notify-keyspace-events
 * option and the publication of each event through pub/sub.
 *
 * Expired and new keys are announced from the table's watch hook (db.c),
 * which must then be called for every key: while the 'x' or 'n' class is on,
 * this module is a user of ht_watch_all().  The other events come from the
 * commands (db_notify(), db_hit()'s keymiss) and from eviction, where the
 * change is made.
 */
#include "server/notify.h"
#include "server/config.h"
#include "server/pubsub.h"
#include "server/util.h"

#include "hashtable/ht.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Atomic int g_notify_flags;
static void (*n_watch_all)(int delta); /* notify_init() */
static int n_watching; /* we are an ht_watch_all() user; CONFIG SET's lock */

static void opt_apply(void);

void notify_init(void (*watch_all)(int delta))
{
	n_watch_all = watch_all;
	opt_apply(); /* the value from the config file */
}

int notify_parse(const char *s, size_t len)
{
	static const struct {
		char c;
		int flag;
	} letters[] = {{'A', NOTIFY_ALL},	 {'g', NOTIFY_GENERIC},	 {'$', NOTIFY_STRING},
		       {'l', NOTIFY_LIST},	 {'s', NOTIFY_SET},	 {'h', NOTIFY_HASH},
		       {'z', NOTIFY_ZSET},	 {'x', NOTIFY_EXPIRED},	 {'e', NOTIFY_EVICTED},
		       {'K', NOTIFY_KEYSPACE},	 {'E', NOTIFY_KEYEVENT}, {'t', NOTIFY_STREAM},
		       {'m', NOTIFY_KEY_MISS},	 {'d', NOTIFY_MODULE},	 {'n', NOTIFY_NEW}};
	int flags = 0;

	for (size_t i = 0; i < len; i++) {
		size_t j;

		for (j = 0; j < sizeof(letters) / sizeof(letters[0]); j++)
			if (letters[j].c == s[i])
				break;
		if (j == sizeof(letters) / sizeof(letters[0]))
			return -1;
		flags |= letters[j].flag;
	}
	return flags;
}

void notify_format(int flags, char *buf)
{
	static const char order[] = "g$lshzxetdn";
	static const int bits[] = {NOTIFY_GENERIC, NOTIFY_STRING, NOTIFY_LIST,	  NOTIFY_SET,
				   NOTIFY_HASH,	   NOTIFY_ZSET,	  NOTIFY_EXPIRED, NOTIFY_EVICTED,
				   NOTIFY_STREAM,  NOTIFY_MODULE, NOTIFY_NEW};
	char *p = buf;

	if ((flags & NOTIFY_ALL) == NOTIFY_ALL) {
		*p++ = 'A'; /* and, as Redis prints it, no 'n' even when set */
	} else {
		for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
			if (flags & bits[i])
				*p++ = order[i];
	}
	if (flags & NOTIFY_KEYSPACE)
		*p++ = 'K';
	if (flags & NOTIFY_KEYEVENT)
		*p++ = 'E';
	if (flags & NOTIFY_KEY_MISS)
		*p++ = 'm';
	*p = '\0';
}

void notify_event(int type, const char *event, const void *key, size_t klen, int dbid)
{
	int f = atomic_load_explicit(&g_notify_flags, memory_order_relaxed);
	size_t elen = strlen(event);
	char stack[256], *ch = stack;
	size_t need = 32 + (klen > elen ? klen : elen);
	int n;

	if (!(f & type))
		return;
	if (need > sizeof(stack))
		ch = xmalloc(need);
	if (f & NOTIFY_KEYSPACE) {
		n = snprintf(ch, need, "__keyspace@%d__:", dbid);
		memcpy(ch + n, key, klen);
		pubsub_publish(NULL, PS_CHANNEL, ch, (size_t)n + klen, event, elen);
	}
	if (f & NOTIFY_KEYEVENT) {
		n = snprintf(ch, need, "__keyevent@%d__:", dbid);
		memcpy(ch + n, event, elen);
		pubsub_publish(NULL, PS_CHANNEL, ch, (size_t)n + elen, key, klen);
	}
	if (ch != stack)
		free(ch);
}

/* --------------------------------------------------------- the option */

static const char *opt_set(const struct cfg_opt *o, int argc, char **argv, const size_t *lens,
			   int startup, int apply)
{
	int flags;

	(void)o;
	(void)startup;
	if (argc != 1)
		return "wrong number of arguments";
	flags = notify_parse(argv[0], lens[0]);
	if (flags < 0)
		return "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
	if (apply)
		atomic_store_explicit(&g_notify_flags, flags, memory_order_relaxed);
	return NULL;
}

static void opt_get(const struct cfg_opt *o, char *buf, size_t len)
{
	char s[32];

	(void)o;
	notify_format(atomic_load_explicit(&g_notify_flags, memory_order_relaxed), s);
	snprintf(buf, len, "%s", s);
}

/* Expired keys are seen in the table's hook: have it called for every key
 * while expired events are wanted (a start-up value is applied by
 * notify_init()'s caller through this too). */
static void opt_apply(void)
{
	int want = notify_wanted(NOTIFY_EXPIRED | NOTIFY_NEW) != 0;

	if (!n_watch_all || want == n_watching)
		return;
	n_watch_all(want ? 1 : -1);
	n_watching = want;
}

static const struct cfg_opt notify_rows[] = {
    {.name = "notify-keyspace-events", .kind = CFG_SPECIAL, .mut = CFG_MUTABLE, .def = "",
     .set = opt_set, .get = opt_get, .apply = opt_apply},
};

static struct cfg_group notify_group = {"notify", notify_rows, 1, NULL, NULL, NULL};
CFG_REGISTER(notify_group)
