/*
 * module_dict.c - the Redis module API's dictionaries (RedisModule_CreateDict
 * and the Dict* calls; hellodict.c uses them): a map from binary keys to a
 * module's pointers, in the order Redis's rax keeps them (bytes compared
 * unsigned, a prefix before its extensions), with iterators that seek by
 * operator (^ $ > >= < <= ==) and walk both ways.
 *
 * A sorted array: lookups and seeks are binary searches, an insert or a
 * delete moves the tail (modules keep small dicts; Redis's rax is a radix
 * tree).  An iterator keeps a copy of the key it last returned and finds
 * its place again at every step, so a dict changed between two steps is
 * walked on from where the iterator was, never from freed memory (Redis asks
 * a module to reseek after a change; here it is never needed).
 *
 * Module callbacks run under the module lock (module.c), one at a time, as
 * in Redis: a dict is only touched by one thread at a time and has no lock.
 */
#include "server/module.h"
#include "server/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OK 0
#define ERR 1

struct dent {
	unsigned char *key;
	size_t len;
	void *val;
};

struct RedisModuleDict {
	struct dent *e;
	size_t n, cap;
	struct module *owner;		   /* the module that made it */
	struct RedisModuleDict *next, *prev; /* owner->dicts */
};

struct RedisModuleDictIter {
	struct RedisModuleDict *d;
	unsigned char *cur; /* the key last returned (or sought to) */
	size_t curlen, curcap;
	int state; /* IT_* */
};

enum {
	IT_EOF,	   /* nothing more either way */
	IT_SOUGHT, /* cur is the element the next Next/Prev returns */
	IT_AT,	   /* cur was returned: Next goes past it, Prev before it */
};

typedef struct RedisModuleDict Dict;
typedef struct RedisModuleDictIter Iter;

static int keycmp(const void *a, size_t alen, const void *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c)
		return c;
	return alen < blen ? -1 : alen > blen;
}

/* The first index whose key is >= @key (@ge) or > @key (!@ge). */
static size_t lower(const Dict *d, const void *key, size_t len, int ge)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = keycmp(d->e[mid].key, d->e[mid].len, key, len);

		if (c < 0 || (!ge && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The index of @key, or -1. */
static long find(const Dict *d, const void *key, size_t len)
{
	size_t i = lower(d, key, len, 1);

	return i < d->n && keycmp(d->e[i].key, d->e[i].len, key, len) == 0 ? (long)i : -1;
}

void module_dict_free(Dict *d)
{
	if (!d)
		return;
	if (d->prev)
		d->prev->next = d->next;
	else if (d->owner)
		d->owner->dicts = d->next;
	if (d->next)
		d->next->prev = d->prev;
	for (size_t i = 0; i < d->n; i++)
		free(d->e[i].key);
	free(d->e);
	free(d);
}

void module_dict_free_all(struct module *m)
{
	while (m->dicts)
		module_dict_free(m->dicts);
}

static Dict *api_create_dict(struct RedisModuleCtx *ctx)
{
	struct RedisModuleCtx *cur = ctx ? ctx : module_current_ctx();
	Dict *d = xcalloc(1, sizeof(*d));

	/* a dict made with no context (to outlive the callback) is still the
	 * running module's: freed at its unload if it never freed it */
	if (cur && cur->m) {
		d->owner = cur->m;
		d->next = cur->m->dicts;
		if (d->next)
			d->next->prev = d;
		cur->m->dicts = d;
	}
	module_auto_add(ctx, MOD_AUTO_DICT, d);
	return d;
}

static void api_free_dict(struct RedisModuleCtx *ctx, Dict *d)
{
	module_auto_forget(ctx, d);
	module_dict_free(d);
}

static uint64_t api_dict_size(Dict *d)
{
	return d->n;
}

/* Insert or (@replace) overwrite; OK when @key was new, as rax's insert. */
static int set_generic(Dict *d, const void *key, size_t len, void *ptr, int replace)
{
	size_t i = lower(d, key, len, 1);

	if (i < d->n && keycmp(d->e[i].key, d->e[i].len, key, len) == 0) {
		if (replace)
			d->e[i].val = ptr;
		return ERR;
	}
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 8;
		d->e = xrealloc(d->e, d->cap * sizeof(*d->e));
	}
	memmove(d->e + i + 1, d->e + i, (d->n - i) * sizeof(*d->e));
	d->e[i].key = xmalloc(len ? len : 1);
	memcpy(d->e[i].key, key, len);
	d->e[i].len = len;
	d->e[i].val = ptr;
	d->n++;
	return OK;
}

static int api_dict_set_c(Dict *d, void *key, size_t len, void *ptr)
{
	return set_generic(d, key, len, ptr, 0);
}

static int api_dict_replace_c(Dict *d, void *key, size_t len, void *ptr)
{
	return set_generic(d, key, len, ptr, 1);
}

static int api_dict_set(Dict *d, struct RedisModuleString *key, void *ptr)
{
	return set_generic(d, key->ptr, key->len, ptr, 0);
}

static int api_dict_replace(Dict *d, struct RedisModuleString *key, void *ptr)
{
	return set_generic(d, key->ptr, key->len, ptr, 1);
}

static void *api_dict_get_c(Dict *d, void *key, size_t len, int *nokey)
{
	long i = find(d, key, len);

	if (nokey)
		*nokey = i < 0;
	return i < 0 ? NULL : d->e[i].val;
}

static void *api_dict_get(Dict *d, struct RedisModuleString *key, int *nokey)
{
	return api_dict_get_c(d, key->ptr, key->len, nokey);
}

static int api_dict_del_c(Dict *d, void *key, size_t len, void *oldval)
{
	long i = find(d, key, len);

	if (i < 0)
		return ERR;
	if (oldval)
		*(void **)oldval = d->e[i].val;
	free(d->e[i].key);
	memmove(d->e + i, d->e + i + 1, (d->n - (size_t)i - 1) * sizeof(*d->e));
	d->n--;
	return OK;
}

static int api_dict_del(Dict *d, struct RedisModuleString *key, void *oldval)
{
	return api_dict_del_c(d, key->ptr, key->len, oldval);
}

/* ------------------------------------------------------------ iterators */

static void set_cur(Iter *it, const void *key, size_t len)
{
	if (len + 1 > it->curcap) {
		it->curcap = len + 1;
		it->cur = xrealloc(it->cur, it->curcap);
	}
	memcpy(it->cur, key, len);
	it->cur[len] = '\0'; /* DictNextC hands the key out as a C string too */
	it->curlen = len;
}

/* Seek @it by @op to @key: OK, or ERR for an unknown operator (EOF then). */
static int seek(Iter *it, const char *op, const void *key, size_t len)
{
	Dict *d = it->d;
	long i = -1;

	it->state = IT_EOF;
	if (!strcmp(op, "^"))
		i = d->n ? 0 : -1;
	else if (!strcmp(op, "$"))
		i = (long)d->n - 1;
	else if (!strcmp(op, ">="))
		i = (long)lower(d, key, len, 1);
	else if (!strcmp(op, ">"))
		i = (long)lower(d, key, len, 0);
	else if (!strcmp(op, "<="))
		i = (long)lower(d, key, len, 0) - 1;
	else if (!strcmp(op, "<"))
		i = (long)lower(d, key, len, 1) - 1;
	else if (!strcmp(op, "=="))
		i = find(d, key, len);
	else
		return ERR;
	if (i >= 0 && (size_t)i < d->n) {
		set_cur(it, d->e[i].key, d->e[i].len);
		it->state = IT_SOUGHT;
	}
	return OK;
}

static Iter *api_dict_iterator_start_c(Dict *d, const char *op, void *key, size_t len)
{
	Iter *it = xcalloc(1, sizeof(*it));

	it->d = d;
	seek(it, op, key, len);
	return it;
}

static Iter *api_dict_iterator_start(Dict *d, const char *op, struct RedisModuleString *key)
{
	return api_dict_iterator_start_c(d, op, key ? key->ptr : "", key ? key->len : 0);
}

static void api_dict_iterator_stop(Iter *it)
{
	if (!it)
		return;
	free(it->cur);
	free(it);
}

static int api_dict_iterator_reseek_c(Iter *it, const char *op, void *key, size_t len)
{
	return seek(it, op, key, len);
}

static int api_dict_iterator_reseek(Iter *it, const char *op, struct RedisModuleString *key)
{
	return seek(it, op, key->ptr, key->len);
}

/* One step forward (@dir 1) or back (-1): the element's index, or -1. */
static long step(Iter *it, int dir)
{
	Dict *d = it->d;
	long i;

	if (it->state == IT_EOF)
		return -1;
	if (it->state == IT_SOUGHT) /* the sought element, if it is still there */
		i = dir > 0 ? (long)lower(d, it->cur, it->curlen, 1)
			    : (long)lower(d, it->cur, it->curlen, 0) - 1;
	else
		i = dir > 0 ? (long)lower(d, it->cur, it->curlen, 0)
			    : (long)lower(d, it->cur, it->curlen, 1) - 1;
	if (i < 0 || (size_t)i >= d->n) {
		it->state = IT_EOF;
		return -1;
	}
	set_cur(it, d->e[i].key, d->e[i].len);
	it->state = IT_AT;
	return i;
}

static void *next_c(Iter *it, int dir, size_t *keylen, void **dataptr)
{
	long i = step(it, dir);

	if (i < 0)
		return NULL;
	if (keylen)
		*keylen = it->curlen;
	if (dataptr)
		*dataptr = it->d->e[i].val;
	return it->cur;
}

static void *api_dict_next_c(Iter *it, size_t *keylen, void **dataptr)
{
	return next_c(it, 1, keylen, dataptr);
}

static void *api_dict_prev_c(Iter *it, size_t *keylen, void **dataptr)
{
	return next_c(it, -1, keylen, dataptr);
}

static struct RedisModuleString *api_dict_next(struct RedisModuleCtx *ctx, Iter *it,
					       void **dataptr)
{
	size_t len;
	void *k = next_c(it, 1, &len, dataptr);

	return k ? module_string_made(ctx, k, len) : NULL;
}

static struct RedisModuleString *api_dict_prev(struct RedisModuleCtx *ctx, Iter *it,
					       void **dataptr)
{
	size_t len;
	void *k = next_c(it, -1, &len, dataptr);

	return k ? module_string_made(ctx, k, len) : NULL;
}

/* The element the iterator is at (sought or last returned) against @key by
 * @op (> >= < <= ==): OK when it holds, ERR when not, at EOF or for any
 * other operator. */
static int api_dict_compare_c(Iter *it, const char *op, void *key, size_t len)
{
	int c;

	if (it->state == IT_EOF)
		return ERR;
	c = keycmp(it->cur, it->curlen, key, len);
	if (!strcmp(op, ">"))
		return c > 0 ? OK : ERR;
	if (!strcmp(op, ">="))
		return c >= 0 ? OK : ERR;
	if (!strcmp(op, "<"))
		return c < 0 ? OK : ERR;
	if (!strcmp(op, "<="))
		return c <= 0 ? OK : ERR;
	if (!strcmp(op, "=="))
		return c == 0 ? OK : ERR;
	return ERR; /* "^", "$" and anything else, as rax's raxCompare() */
}

static int api_dict_compare(Iter *it, const char *op, struct RedisModuleString *key)
{
	return api_dict_compare_c(it, op, key->ptr, key->len);
}

static const struct mod_api_fn dict_api[] = {
    MOD_API(CreateDict, api_create_dict),
    MOD_API(FreeDict, api_free_dict),
    MOD_API(DictSize, api_dict_size),
    MOD_API(DictSetC, api_dict_set_c),
    MOD_API(DictReplaceC, api_dict_replace_c),
    MOD_API(DictSet, api_dict_set),
    MOD_API(DictReplace, api_dict_replace),
    MOD_API(DictGetC, api_dict_get_c),
    MOD_API(DictGet, api_dict_get),
    MOD_API(DictDelC, api_dict_del_c),
    MOD_API(DictDel, api_dict_del),
    MOD_API(DictIteratorStartC, api_dict_iterator_start_c),
    MOD_API(DictIteratorStart, api_dict_iterator_start),
    MOD_API(DictIteratorStop, api_dict_iterator_stop),
    MOD_API(DictIteratorReseekC, api_dict_iterator_reseek_c),
    MOD_API(DictIteratorReseek, api_dict_iterator_reseek),
    MOD_API(DictNextC, api_dict_next_c),
    MOD_API(DictPrevC, api_dict_prev_c),
    MOD_API(DictNext, api_dict_next),
    MOD_API(DictPrev, api_dict_prev),
    MOD_API(DictCompareC, api_dict_compare_c),
    MOD_API(DictCompare, api_dict_compare),
};

void *module_dict_api(const char *name)
{
	return module_api_find(dict_api, sizeof(dict_api) / sizeof(dict_api[0]), name);
}
