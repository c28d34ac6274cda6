/*
 * rdb.c - RDB writer, crash-safe save, and bounded reader (see rdb.h).
 *
 * Owns: the writer's output buffer and LZF scratch, the reader's input
 * buffer and its two string buffers (key, value), and the CRC64 tables.
 *
 * Format notes, in the order a file is laid out (all written here from the
 * RDB format description, not from Redis's code):
 *  - magic "REDIS" and four ASCII digits of version;
 *  - opcodes 0xFA AUX, 0xFB RESIZEDB, 0xFC EXPIRETIME_MS (8 bytes LE),
 *    0xFD EXPIRETIME (4 bytes LE, seconds), 0xFE SELECTDB, 0xFF EOF,
 *    0xF9 FREQ (1 byte), 0xF8 IDLE (length), 0xF7 MODULE_AUX, 0xF6 pre-GA
 *    FUNCTION, 0xF5 FUNCTION2; any other byte is a value type;
 *  - length: top two bits 00 -> 6-bit, 01 -> 14-bit big-endian, 0x80 ->
 *    32-bit BE follows, 0x81 -> 64-bit BE follows, 11 -> special string
 *    encoding in the low six bits (0 int8, 1 int16 LE, 2 int32 LE, 3 LZF:
 *    compressed length, plain length, data);
 *  - after EOF (version >= 5) the CRC64 of every byte before it, LE.
 *
 * Reader invariant: rd.left is the number of file bytes not yet consumed;
 * every length is compared with it before a buffer is sized, and every
 * element count is compared with it before a loop (each element takes at
 * least one byte), so no input can make the reader allocate more than the
 * file's size or loop longer than the file is long.
 *
 * Concurrency: none; one writer or one load per thread.  The CRC tables are
 * built once under pthread_once().
 */
#include "server/rdb.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <lzf.h>

/* Opcodes. */
enum {
	OP_FUNCTION2 = 0xF5,
	OP_FUNCTION_PRE_GA = 0xF6,
	OP_MODULE_AUX = 0xF7,
	OP_IDLE = 0xF8,
	OP_FREQ = 0xF9,
	OP_AUX = 0xFA,
	OP_RESIZEDB = 0xFB,
	OP_EXPIRETIME_MS = 0xFC,
	OP_EXPIRETIME = 0xFD,
	OP_SELECTDB = 0xFE,
	OP_EOF = 0xFF,
};

/* Special string encodings (length byte 11xxxxxx). */
enum { ENC_INT8 = 0, ENC_INT16 = 1, ENC_INT32 = 2, ENC_LZF = 3 };

/* Module value opcodes (MODULE_AUX and MODULE_2 bodies). */
enum { MOP_EOF = 0, MOP_SINT = 1, MOP_UINT = 2, MOP_FLOAT = 3, MOP_DOUBLE = 4, MOP_STRING = 5 };

#define WBUF_SIZE (64 * 1024)
#define RBUF_SIZE (64 * 1024)

/* ---------------------------------------------------------------- CRC64 */

/* crc_tab[k][b]: the CRC of byte b followed by k zero bytes (slice-by-8). */
static uint64_t crc_tab[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	/* 0x95ac9329ac4bc9b5 is the Jones polynomial 0xad93d23594c935a9 with
	 * its bits reversed, for the reflected (LSB-first) form. */
	const uint64_t poly = 0x95ac9329ac4bc9b5ULL;

	for (unsigned i = 0; i < 256; i++) {
		uint64_t c = i;

		for (int b = 0; b < 8; b++)
			c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
		crc_tab[0][i] = c;
	}
	for (unsigned i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			crc_tab[k][i] =
			    (crc_tab[k - 1][i] >> 8) ^ crc_tab[0][crc_tab[k - 1][i] & 0xff];
}

uint64_t rdb_crc64(uint64_t crc, const void *p, size_t n)
{
	const unsigned char *s = p;

	pthread_once(&crc_once, crc_init);
	while (n >= 8) {
		uint64_t x =
		    crc ^ ((uint64_t)s[0] | (uint64_t)s[1] << 8 | (uint64_t)s[2] << 16 |
			   (uint64_t)s[3] << 24 | (uint64_t)s[4] << 32 | (uint64_t)s[5] << 40 |
			   (uint64_t)s[6] << 48 | (uint64_t)s[7] << 56);
		crc = crc_tab[7][x & 0xff] ^ crc_tab[6][(x >> 8) & 0xff] ^
		      crc_tab[5][(x >> 16) & 0xff] ^ crc_tab[4][(x >> 24) & 0xff] ^
		      crc_tab[3][(x >> 32) & 0xff] ^ crc_tab[2][(x >> 40) & 0xff] ^
		      crc_tab[1][(x >> 48) & 0xff] ^ crc_tab[0][x >> 56];
		s += 8;
		n -= 8;
	}
	while (n--)
		crc = crc_tab[0][(crc ^ *s++) & 0xff] ^ (crc >> 8);
	return crc;
}

/* -------------------------------------------------------- shared helpers */

/* Canonical decimal integer test, as Redis decides a string is an integer:
 * optional '-', no leading zeros, no '+', no "-0", fits in int64. */
static bool str_to_ll(const unsigned char *s, size_t len, long long *out)
{
	size_t i = 0;
	bool neg = false;
	unsigned long long v = 0;

	if (len == 0 || len > 20)
		return false;
	if (len == 1 && s[0] == '0') {
		*out = 0;
		return true;
	}
	if (s[0] == '-') {
		neg = true;
		i = 1;
		if (len == 1)
			return false;
	}
	if (s[i] < '1' || s[i] > '9')
		return false;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (v > (ULLONG_MAX - 9) / 10)
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (neg) {
		if (v > (unsigned long long)LLONG_MAX + 1)
			return false;
		*out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
	} else {
		if (v > (unsigned long long)LLONG_MAX)
			return false;
		*out = (long long)v;
	}
	return true;
}

const char *rdb_kind_name(enum rdb_kind k)
{
	static const char *const names[RDB_KIND_MAX] = {
	    [RDB_KIND_STRING] = "string", [RDB_KIND_LIST] = "list", [RDB_KIND_SET] = "set",
	    [RDB_KIND_ZSET] = "zset",	  [RDB_KIND_HASH] = "hash", [RDB_KIND_STREAM] = "stream",
	    [RDB_KIND_MODULE] = "module",
	};

	if ((unsigned)k >= RDB_KIND_MAX)
		return "unknown";
	return names[k];
}

/* Value types: kind and encoding name, indexed by the type byte. */
struct type_info {
	bool known;
	enum rdb_kind kind;
	const char *enc;
};

static const struct type_info type_tab[] = {
    [0] = {true, RDB_KIND_STRING, "string"},
    [1] = {true, RDB_KIND_LIST, "linked list"},
    [2] = {true, RDB_KIND_SET, "hashtable"},
    [3] = {true, RDB_KIND_ZSET, "skiplist, text scores"},
    [4] = {true, RDB_KIND_HASH, "hashtable"},
    [5] = {true, RDB_KIND_ZSET, "skiplist"},
    [6] = {true, RDB_KIND_MODULE, "pre-GA module"},
    [7] = {true, RDB_KIND_MODULE, "module"},
    [9] = {true, RDB_KIND_HASH, "zipmap"},
    [10] = {true, RDB_KIND_LIST, "ziplist"},
    [11] = {true, RDB_KIND_SET, "intset"},
    [12] = {true, RDB_KIND_ZSET, "ziplist"},
    [13] = {true, RDB_KIND_HASH, "ziplist"},
    [14] = {true, RDB_KIND_LIST, "quicklist"},
    [15] = {true, RDB_KIND_STREAM, "listpacks"},
    [16] = {true, RDB_KIND_HASH, "listpack"},
    [17] = {true, RDB_KIND_ZSET, "listpack"},
    [18] = {true, RDB_KIND_LIST, "quicklist v2"},
    [19] = {true, RDB_KIND_STREAM, "listpacks v2"},
    [20] = {true, RDB_KIND_SET, "listpack"},
    [21] = {true, RDB_KIND_STREAM, "listpacks v3"},
};
#define TYPE_TAB_LEN (sizeof(type_tab) / sizeof(type_tab[0]))

/* --------------------------------------------------------------- writer */

struct rdb_writer {
	int fd;	 /* -1: a memory writer, flushing into mem (DUMP payloads) */
	int err; /* first -errno; sticky */
	bool compress;
	bool checksum;
	uint64_t crc;	    /* over every byte flushed so far */
	uint64_t flushed;   /* bytes handed to write(2) */
	size_t len;	    /* bytes in buf */
	unsigned char *lzf; /* compression scratch, lzf_cap bytes */
	size_t lzf_cap;
	unsigned char *mem; /* memory writer: the bytes flushed, mem_cap allocated */
	size_t mem_cap;
	unsigned char buf[WBUF_SIZE];
};

/* A memory writer's flush: append to w->mem, doubling it. */
static int w_mem_append(struct rdb_writer *w, const unsigned char *p, size_t n)
{
	if (w->flushed + n > w->mem_cap) {
		size_t cap = w->mem_cap ? w->mem_cap : 64;
		unsigned char *m;

		while (cap < w->flushed + n)
			cap *= 2;
		m = realloc(w->mem, cap);
		if (!m)
			return w->err = -ENOMEM;
		w->mem = m;
		w->mem_cap = cap;
	}
	memcpy(w->mem + w->flushed, p, n);
	w->flushed += n;
	return 0;
}

static int w_write_all(struct rdb_writer *w, const unsigned char *p, size_t n)
{
	if (w->checksum)
		w->crc = rdb_crc64(w->crc, p, n);
	if (w->fd < 0)
		return w_mem_append(w, p, n);
	while (n) {
		ssize_t r = write(w->fd, p, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return w->err = -errno;
		}
		if (r == 0)
			return w->err = -EIO;
		p += r;
		n -= (size_t)r;
		w->flushed += (uint64_t)r;
	}
	return 0;
}

static int w_flush(struct rdb_writer *w)
{
	int r;

	if (w->err)
		return w->err;
	if (!w->len)
		return 0;
	r = w_write_all(w, w->buf, w->len);
	w->len = 0;
	return r;
}

static int w_put(struct rdb_writer *w, const void *p, size_t n)
{
	if (w->err)
		return w->err;
	if (n > sizeof(w->buf) - w->len) {
		if (w_flush(w))
			return w->err;
		if (n >= sizeof(w->buf))
			return w_write_all(w, p, n);
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
	return 0;
}

static int w_byte(struct rdb_writer *w, unsigned char c)
{
	return w_put(w, &c, 1);
}

static int w_len(struct rdb_writer *w, uint64_t len)
{
	unsigned char b[9];
	size_t n;

	if (len < 64) {
		b[0] = (unsigned char)len;
		n = 1;
	} else if (len < 16384) {
		b[0] = (unsigned char)(0x40 | (len >> 8));
		b[1] = (unsigned char)len;
		n = 2;
	} else if (len <= UINT32_MAX) {
		b[0] = 0x80;
		for (int i = 0; i < 4; i++)
			b[1 + i] = (unsigned char)(len >> (24 - 8 * i));
		n = 5;
	} else {
		b[0] = 0x81;
		for (int i = 0; i < 8; i++)
			b[1 + i] = (unsigned char)(len >> (56 - 8 * i));
		n = 9;
	}
	return w_put(w, b, n);
}

/* Integer encoding when s is the canonical text of an int8/16/32. */
static bool w_try_int(struct rdb_writer *w, const unsigned char *s, size_t len)
{
	long long v;
	unsigned char b[5];
	size_t n;

	if (len > 11 || !str_to_ll(s, len, &v))
		return false;
	if (v >= INT8_MIN && v <= INT8_MAX) {
		b[0] = 0xC0 | ENC_INT8;
		b[1] = (unsigned char)(v & 0xff);
		n = 2;
	} else if (v >= INT16_MIN && v <= INT16_MAX) {
		b[0] = 0xC0 | ENC_INT16;
		b[1] = (unsigned char)(v & 0xff);
		b[2] = (unsigned char)((v >> 8) & 0xff);
		n = 3;
	} else if (v >= INT32_MIN && v <= INT32_MAX) {
		b[0] = 0xC0 | ENC_INT32;
		for (int i = 0; i < 4; i++)
			b[1 + i] = (unsigned char)((v >> (8 * i)) & 0xff);
		n = 5;
	} else {
		return false;
	}
	w_put(w, b, n);
	return true;
}

/* LZF when it saves at least four bytes; false leaves nothing written. */
static bool w_try_lzf(struct rdb_writer *w, const unsigned char *s, size_t len)
{
	size_t cap = len - 4;
	unsigned int clen;

	if (len > UINT_MAX)
		return false;
	if (w->lzf_cap < cap) {
		unsigned char *p = realloc(w->lzf, cap);

		if (!p)
			return false; /* plain is always correct */
		w->lzf = p;
		w->lzf_cap = cap;
	}
	clen = lzf_compress(s, (unsigned int)len, w->lzf, (unsigned int)cap);
	if (clen == 0)
		return false;
	w_byte(w, 0xC0 | ENC_LZF);
	w_len(w, clen);
	w_len(w, len);
	w_put(w, w->lzf, clen);
	return true;
}

static int w_string(struct rdb_writer *w, const void *p, size_t len)
{
	if (len <= 11 && w_try_int(w, p, len))
		return w->err;
	if (w->compress && len > 20 && w_try_lzf(w, p, len))
		return w->err;
	w_len(w, len);
	return w_put(w, p, len);
}

static int w_aux(struct rdb_writer *w, const char *name, const char *val)
{
	w_byte(w, OP_AUX);
	w_string(w, name, strlen(name));
	return w_string(w, val, strlen(val));
}

static struct rdb_writer *w_alloc(int fd, bool compress, bool checksum)
{
	struct rdb_writer *w = malloc(sizeof(*w));

	if (!w)
		return NULL;
	memset(w, 0, offsetof(struct rdb_writer, buf));
	w->fd = fd;
	w->compress = compress;
	w->checksum = checksum;
	return w;
}

struct rdb_writer *rdb_writer_new(int fd, const struct rdb_opts *o)
{
	static const struct rdb_opts defaults;
	struct rdb_writer *w;
	char num[32], magic[16];
	const char *ver;

	if (!o)
		o = &defaults;
	ver = o->redis_ver ? o->redis_ver : "7.0.15";
	if (strlen(ver) > RDB_MAX_VERSION_STR) {
		errno = EINVAL;
		return NULL;
	}
	w = w_alloc(fd, o->compress, o->checksum);
	if (!w)
		return NULL;

	snprintf(magic, sizeof(magic), "REDIS%04d", RDB_WRITE_VERSION);
	w_put(w, magic, 9);
	w_aux(w, "redis-ver", ver);
	snprintf(num, sizeof(num), "%d", (int)(sizeof(void *) * 8));
	w_aux(w, "redis-bits", num);
	snprintf(num, sizeof(num), "%lld", (long long)(o->ctime ? o->ctime : (int64_t)time(NULL)));
	w_aux(w, "ctime", num);
	if (o->used_mem >= 0) {
		snprintf(num, sizeof(num), "%lld", (long long)o->used_mem);
		w_aux(w, "used-mem", num);
	}
	w_aux(w, "aof-base", o->aof_base ? "1" : "0");
	return w;
}

int rdb_write_db_header(struct rdb_writer *w, uint32_t dbnum, uint64_t keys, uint64_t expires)
{
	w_byte(w, OP_SELECTDB);
	w_len(w, dbnum);
	w_byte(w, OP_RESIZEDB);
	w_len(w, keys);
	return w_len(w, expires);
}

/* EXPIRETIME_MS before a key record, unless @expire_ms is -1. */
static void w_expire(struct rdb_writer *w, int64_t expire_ms)
{
	if (expire_ms != -1) {
		unsigned char b[9];

		b[0] = OP_EXPIRETIME_MS;
		for (int i = 0; i < 8; i++)
			b[1 + i] = (unsigned char)((uint64_t)expire_ms >> (8 * i));
		w_put(w, b, 9);
	}
}

int rdb_write_string_kv(struct rdb_writer *w, const void *key, size_t klen, const void *val,
			size_t vlen, int64_t expire_ms)
{
	w_expire(w, expire_ms);
	w_byte(w, 0); /* RDB_TYPE_STRING */
	w_string(w, key, klen);
	return w_string(w, val, vlen);
}

/* RDB_TYPE_HASH's value: the pair count, then field and value strings. */
static int w_hash_value(struct rdb_writer *w, const struct rdb_pair *p, size_t n)
{
	int r = w_len(w, n);

	for (size_t i = 0; i < n; i++) {
		w_string(w, p[i].f, p[i].fl);
		r = w_string(w, p[i].v, p[i].vl);
	}
	return r;
}

int rdb_write_hash_kv(struct rdb_writer *w, const void *key, size_t klen,
		      const struct rdb_pair *p, size_t n, int64_t expire_ms)
{
	w_expire(w, expire_ms);
	w_byte(w, RDB_TYPE_HASH);
	w_string(w, key, klen);
	return w_hash_value(w, p, n);
}

/* RDB_TYPE_SET's value: the member count, then the members as strings
 * (@m[i].f; v unused). */
static int w_set_value(struct rdb_writer *w, const struct rdb_pair *m, size_t n)
{
	int r = w_len(w, n);

	for (size_t i = 0; i < n; i++)
		r = w_string(w, m[i].f, m[i].fl);
	return r;
}

int rdb_write_set_kv(struct rdb_writer *w, const void *key, size_t klen,
		     const struct rdb_pair *m, size_t n, int64_t expire_ms)
{
	w_expire(w, expire_ms);
	w_byte(w, RDB_TYPE_SET);
	w_string(w, key, klen);
	return w_set_value(w, m, n);
}

/* RDB_TYPE_ZSET_2's value: the count, then member strings and binary
 * doubles (little-endian, as Redis writes them on every machine). */
static int w_zset_value(struct rdb_writer *w, const struct rdb_zel *e, size_t n)
{
	int r = w_len(w, n);

	for (size_t i = 0; i < n; i++) {
		unsigned char b[8];
		uint64_t u;

		memcpy(&u, &e[i].score, 8);
		for (int k = 0; k < 8; k++)
			b[k] = (unsigned char)(u >> (8 * k));
		w_string(w, e[i].m, e[i].ml);
		r = w_put(w, b, 8);
	}
	return r;
}

int rdb_write_zset_kv(struct rdb_writer *w, const void *key, size_t klen,
		      const struct rdb_zel *e, size_t n, int64_t expire_ms)
{
	w_expire(w, expire_ms);
	w_byte(w, RDB_TYPE_ZSET_2);
	w_string(w, key, klen);
	return w_zset_value(w, e, n);
}

/*
 * Lists: RDB_TYPE_LIST_QUICKLIST_2 (18), as Redis 7.0 writes them: the node
 * count, then per node its container (2: a listpack) and the listpack as an
 * RDB string.  A node takes elements until its listpack would pass
 * RDB_LIST_NODE_BYTES (Redis's list-max-listpack-size -2: 8 KB); a bigger
 * element is a node of its own.  Listpack entries are written as strings
 * (0x80 6-bit, 0xe0 12-bit, 0xf0 32-bit lengths), each followed by Redis's
 * back length (lpEncodeBacklen()).
 */
#define RDB_LIST_NODE_BYTES 8192

static size_t lpw_backlen(unsigned char *b, uint64_t l)
{
	if (l <= 127) {
		b[0] = (unsigned char)l;
		return 1;
	}
	if (l < 16383) {
		b[0] = (unsigned char)(l >> 7);
		b[1] = (unsigned char)((l & 127) | 128);
		return 2;
	}
	if (l < 2097151) {
		b[0] = (unsigned char)(l >> 14);
		b[1] = (unsigned char)(((l >> 7) & 127) | 128);
		b[2] = (unsigned char)((l & 127) | 128);
		return 3;
	}
	if (l < 268435455) {
		b[0] = (unsigned char)(l >> 21);
		b[1] = (unsigned char)(((l >> 14) & 127) | 128);
		b[2] = (unsigned char)(((l >> 7) & 127) | 128);
		b[3] = (unsigned char)((l & 127) | 128);
		return 4;
	}
	b[0] = (unsigned char)(l >> 28);
	b[1] = (unsigned char)(((l >> 21) & 127) | 128);
	b[2] = (unsigned char)(((l >> 14) & 127) | 128);
	b[3] = (unsigned char)(((l >> 7) & 127) | 128);
	b[4] = (unsigned char)((l & 127) | 128);
	return 5;
}

/* Bytes element @len takes in a listpack: header, data, back length. */
static size_t lpw_entry_size(size_t len)
{
	size_t hl = len < 64 ? 1 : len < 4096 ? 2 : 5;
	unsigned char b[5];

	return hl + len + lpw_backlen(b, hl + len);
}

/* Append element @p[@len] to listpack @lp at @off; return the new offset. */
static size_t lpw_entry(unsigned char *lp, size_t off, const void *p, size_t len)
{
	size_t hl;

	if (len < 64) {
		lp[off] = (unsigned char)(0x80 | len);
		hl = 1;
	} else if (len < 4096) {
		lp[off] = (unsigned char)(0xe0 | (len >> 8));
		lp[off + 1] = (unsigned char)(len & 0xff);
		hl = 2;
	} else {
		lp[off] = 0xf0;
		for (int i = 0; i < 4; i++)
			lp[off + 1 + i] = (unsigned char)((uint64_t)len >> (8 * i));
		hl = 5;
	}
	if (len)
		memcpy(lp + off + hl, p, len);
	return off + hl + len + lpw_backlen(lp + off + hl + len, hl + len);
}

/* The nodes of a list value, after its type byte and key. */
static int w_list_value(struct rdb_writer *w, const struct rdb_pair *e, size_t n)
{
	size_t nodes = 0, i, j;
	unsigned char *lp = NULL;
	size_t cap = 0;

	/* count the nodes first: the count precedes them */
	for (i = 0; i < n; nodes++) {
		size_t bytes = 7 + lpw_entry_size(e[i].fl);

		for (j = i + 1; j < n && j - i < 65535 &&
				bytes + lpw_entry_size(e[j].fl) <= RDB_LIST_NODE_BYTES;
		     j++)
			bytes += lpw_entry_size(e[j].fl);
		i = j;
	}
	w_len(w, nodes);
	for (i = 0; i < n;) {
		size_t bytes = 7 + lpw_entry_size(e[i].fl), off = 6;

		for (j = i + 1; j < n && j - i < 65535 &&
				bytes + lpw_entry_size(e[j].fl) <= RDB_LIST_NODE_BYTES;
		     j++)
			bytes += lpw_entry_size(e[j].fl);
		if (bytes > cap) {
			unsigned char *nl = realloc(lp, bytes);

			if (!nl) {
				free(lp);
				if (!w->err)
					w->err = -ENOMEM;
				return w->err;
			}
			lp = nl;
			cap = bytes;
		}
		for (int k = 0; k < 4; k++)
			lp[k] = (unsigned char)((uint64_t)bytes >> (8 * k));
		lp[4] = (unsigned char)((j - i) & 0xff);
		lp[5] = (unsigned char)((j - i) >> 8);
		for (size_t k = i; k < j; k++)
			off = lpw_entry(lp, off, e[k].f, e[k].fl);
		lp[off] = 0xff;
		w_len(w, 2); /* QUICKLIST_NODE_CONTAINER_PACKED */
		w_string(w, lp, bytes);
		i = j;
	}
	free(lp);
	return w->err;
}

int rdb_write_list_kv(struct rdb_writer *w, const void *key, size_t klen,
		      const struct rdb_pair *e, size_t n, int64_t expire_ms)
{
	w_expire(w, expire_ms);
	w_byte(w, RDB_TYPE_LIST_QUICKLIST_2);
	w_string(w, key, klen);
	return w_list_value(w, e, n);
}

/* The CRC64 trailer: the checksum of every byte before it (or eight zero
 * bytes with checksums off), little-endian, itself not checksummed. */
static int w_crc_trailer(struct rdb_writer *w)
{
	unsigned char b[8];
	uint64_t crc;

	if (w_flush(w))
		return w->err;
	crc = w->checksum ? w->crc : 0;
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(crc >> (8 * i));
	w->checksum = false;
	w_put(w, b, 8);
	return w_flush(w);
}

int rdb_writer_finish(struct rdb_writer *w)
{
	w_byte(w, OP_EOF);
	return w_crc_trailer(w);
}

uint64_t rdb_writer_bytes(const struct rdb_writer *w)
{
	return w->flushed + w->len;
}

void rdb_writer_free(struct rdb_writer *w)
{
	if (!w)
		return;
	free(w->lzf);
	free(w->mem);
	free(w);
}

/* ------------------------------------------------------- module values */

void rdb_module_put_uint(struct rdb_writer *w, uint64_t v)
{
	w_len(w, MOP_UINT);
	w_len(w, v);
}

void rdb_module_put_sint(struct rdb_writer *w, int64_t v)
{
	w_len(w, MOP_UINT); /* as Redis 7.0's RM_SaveSigned(): an unsigned */
	w_len(w, (uint64_t)v);
}

void rdb_module_put_string(struct rdb_writer *w, const void *p, size_t n)
{
	w_len(w, MOP_STRING);
	w_string(w, p, n);
}

static void w_le(struct rdb_writer *w, uint64_t u, int n)
{
	unsigned char b[8];

	for (int k = 0; k < n; k++)
		b[k] = (unsigned char)(u >> (8 * k));
	w_put(w, b, (size_t)n);
}

void rdb_module_put_double(struct rdb_writer *w, double d)
{
	uint64_t u;

	memcpy(&u, &d, 8);
	w_len(w, MOP_DOUBLE);
	w_le(w, u, 8);
}

void rdb_module_put_float(struct rdb_writer *w, float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	w_len(w, MOP_FLOAT);
	w_le(w, u, 4);
}

/* A module value after its type byte (and key): id, body, EOF opcode. */
static int w_module_body(struct rdb_writer *w, uint64_t id, rdb_module_body_fn body, void *arg)
{
	int r;

	w_len(w, id);
	if ((r = body(arg, w)) < 0)
		return r;
	return w_len(w, MOP_EOF);
}

static int w_module_value(struct rdb_writer *w, uint64_t id, rdb_module_body_fn body, void *arg)
{
	w_byte(w, RDB_TYPE_MODULE_2);
	return w_module_body(w, id, body, arg);
}

int rdb_write_module_kv(struct rdb_writer *w, const void *key, size_t klen, uint64_t id,
			rdb_module_body_fn body, void *arg, int64_t expire_ms)
{
	w_expire(w, expire_ms);
	w_byte(w, RDB_TYPE_MODULE_2);
	w_string(w, key, klen);
	return w_module_body(w, id, body, arg);
}

/* ------------------------------------------------------- DUMP payloads */

/* A DUMP payload's end: the version and the CRC after the value @w holds
 * (unless @r, the value's error, is set), handed out in *@out; @w freed. */
static int dump_finish(struct rdb_writer *w, int r, void **out, size_t *outlen)
{
	static const unsigned char ver[2] = {RDB_DUMP_VERSION & 0xff, RDB_DUMP_VERSION >> 8};

	if (r >= 0) {
		w_put(w, ver, sizeof(ver));
		r = w_crc_trailer(w);
	}
	if (!r) {
		*out = w->mem;
		*outlen = (size_t)w->flushed;
		w->mem = NULL;
	}
	rdb_writer_free(w);
	return r < 0 ? r : 0;
}

/* A DUMP payload: string @val (@p and @z NULL), hash @p[@n] (or set
 * @p[@n] when @set) or sorted set @z[@n]. */
static int dump_value(const void *val, size_t vlen, const struct rdb_pair *p,
		      const struct rdb_zel *z, size_t n, bool set, bool compress, void **out,
		      size_t *outlen)
{
	struct rdb_writer *w = w_alloc(-1, compress, true);

	if (!w)
		return -ENOMEM;
	if (z) {
		w_byte(w, RDB_TYPE_ZSET_2);
		w_zset_value(w, z, n);
	} else if (p && set) {
		w_byte(w, RDB_TYPE_SET);
		w_set_value(w, p, n);
	} else if (p) {
		w_byte(w, RDB_TYPE_HASH);
		w_hash_value(w, p, n);
	} else {
		w_byte(w, 0); /* RDB_TYPE_STRING */
		w_string(w, val, vlen);
	}
	return dump_finish(w, 0, out, outlen);
}

int rdb_dump_set(const struct rdb_pair *m, size_t n, bool compress, void **out, size_t *outlen)
{
	static const struct rdb_pair none;

	return dump_value(NULL, 0, n ? m : &none, NULL, n, true, compress, out, outlen);
}

int rdb_dump_string(const void *val, size_t vlen, bool compress, void **out, size_t *outlen)
{
	return dump_value(val, vlen, NULL, NULL, 0, false, compress, out, outlen);
}

int rdb_dump_hash(const struct rdb_pair *p, size_t n, bool compress, void **out, size_t *outlen)
{
	static const struct rdb_pair none;

	return dump_value(NULL, 0, n ? p : &none, NULL, n, false, compress, out, outlen);
}

int rdb_dump_zset(const struct rdb_zel *e, size_t n, bool compress, void **out, size_t *outlen)
{
	static const struct rdb_zel none;

	return dump_value(NULL, 0, NULL, n ? e : &none, n, false, compress, out, outlen);
}

int rdb_dump_module(uint64_t id, rdb_module_body_fn body, void *arg, bool compress, void **out,
		    size_t *outlen)
{
	struct rdb_writer *w = w_alloc(-1, compress, true);

	if (!w)
		return -ENOMEM;
	return dump_finish(w, w_module_value(w, id, body, arg), out, outlen);
}

int rdb_dump_list(const struct rdb_pair *e, size_t n, bool compress, void **out, size_t *outlen)
{
	struct rdb_writer *w = w_alloc(-1, compress, true);

	if (!w)
		return -ENOMEM;
	w_byte(w, RDB_TYPE_LIST_QUICKLIST_2);
	w_list_value(w, e, n);
	return dump_finish(w, 0, out, outlen);
}

/* ----------------------------------------------------------- save file */

static int fsync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, r = 0;

	if (!slash) {
		strcpy(dir, ".");
	} else if (slash == path) {
		strcpy(dir, "/");
	} else {
		size_t n = (size_t)(slash - path);

		if (n >= sizeof(dir))
			return -ENAMETOOLONG;
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

int rdb_save_file(const char *path_tmp, const char *path_final, const struct rdb_opts *o,
		  const struct rdb_source *src, struct rdb_save_stats *st)
{
	char tmpbuf[PATH_MAX];
	struct rdb_writer *w = NULL;
	struct rdb_item it;
	int64_t cur_db = -1;
	uint64_t keys = 0;
	int fd, r;

	if (!path_tmp) {
		if ((size_t)snprintf(tmpbuf, sizeof(tmpbuf), "%s.tmp-%ld", path_final,
				     (long)getpid()) >= sizeof(tmpbuf))
			return -ENAMETOOLONG;
		path_tmp = tmpbuf;
	}
	if (st)
		memset(st, 0, sizeof(*st));
	fd = open(path_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	w = rdb_writer_new(fd, o);
	if (!w) {
		r = -errno;
		goto fail;
	}
	for (;;) {
		memset(&it, 0, sizeof(it));
		r = src->next(src->arg, &it);
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		if ((int64_t)it.dbnum != cur_db) {
			uint64_t nk = 0, ne = 0;

			if (src->db_size)
				src->db_size(src->arg, it.dbnum, &nk, &ne);
			cur_db = it.dbnum;
			if ((r = rdb_write_db_header(w, it.dbnum, nk, ne)))
				goto fail;
		}
		r = rdb_write_string_kv(w, it.key, it.klen, it.val, it.vlen, it.expire_ms);
		if (r)
			goto fail;
		keys++;
	}
	if ((r = rdb_writer_finish(w)))
		goto fail;
	if (st) {
		st->keys = keys;
		st->bytes = rdb_writer_bytes(w);
	}
	rdb_writer_free(w);
	w = NULL;
	if (fsync(fd) < 0) {
		r = -errno;
		goto fail;
	}
	r = close(fd);
	fd = -1;
	if (r < 0) {
		r = -errno;
		goto fail;
	}
	if (rename(path_tmp, path_final) < 0) {
		r = -errno;
		goto fail;
	}
	/* The rename has happened: a failure here means only that it may not
	 * survive a power cut; the new file is in place either way. */
	return fsync_dir_of(path_final);

fail:
	if (st && w) {
		st->keys = keys;
		st->bytes = rdb_writer_bytes(w);
	}
	rdb_writer_free(w);
	if (fd >= 0)
		close(fd);
	unlink(path_tmp);
	return r;
}

/* --------------------------------------------------------------- reader */

/* A string as read: p[len] is always a NUL (not counted), cap > len. */
struct sbuf {
	unsigned char *p;
	size_t len;
	size_t cap;
};

struct rd {
	const unsigned char *mem; /* a memory reader (RESTORE): the input; fd
				   * and buf are unused */
	int fd;
	uint64_t off;	 /* bytes consumed */
	uint64_t left;	 /* file bytes not yet consumed */
	uint64_t crc;	 /* over consumed bytes */
	size_t pos, len; /* window into buf */
	int version;
	int err;
	uint64_t max_string;
	char *errbuf;
	size_t errlen;
	struct sbuf key, val;
	unsigned char buf[RBUF_SIZE];
};

__attribute__((format(printf, 4, 5))) static int rd_fail_at(struct rd *r, uint64_t off, int err,
							    const char *fmt, ...)
{
	if (r->err)
		return r->err;
	r->err = err;
	if (r->errbuf && r->errlen) {
		va_list ap;
		int n = snprintf(r->errbuf, r->errlen, "offset %llu: ", (unsigned long long)off);

		if (n >= 0 && (size_t)n < r->errlen) {
			va_start(ap, fmt);
			vsnprintf(r->errbuf + n, r->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return err;
}

#define rd_fail(r, err, ...) rd_fail_at((r), (r)->off, (err), __VA_ARGS__)

static int rd_fill(struct rd *r)
{
	ssize_t n;

	if (r->pos < r->len)
		return 0;
	do {
		n = read(r->fd, r->buf, sizeof(r->buf));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return rd_fail(r, -errno, "read: %s", strerror(errno));
	if (n == 0)
		return rd_fail(r, -EBADMSG, "file shrank while being read");
	r->pos = 0;
	r->len = (size_t)n;
	return 0;
}

/* Consume n bytes into dst (NULL: skip them).  Checks n against the file. */
static int rd_read(struct rd *r, void *dst, uint64_t n, const char *what)
{
	unsigned char *d = dst;

	if (r->err)
		return r->err;
	if (n > r->left)
		return rd_fail(r, -EBADMSG, "truncated: %s needs %llu bytes, %llu left in file",
			       what, (unsigned long long)n, (unsigned long long)r->left);
	if (r->mem) {
		/* No running CRC: a payload's is checked whole, before parsing. */
		if (d)
			memcpy(d, r->mem + r->off, (size_t)n);
		r->off += n;
		r->left -= n;
		return 0;
	}
	while (n) {
		size_t k;

		if (rd_fill(r))
			return r->err;
		k = r->len - r->pos;
		if (k > n)
			k = (size_t)n;
		r->crc = rdb_crc64(r->crc, r->buf + r->pos, k);
		if (d) {
			memcpy(d, r->buf + r->pos, k);
			d += k;
		}
		r->pos += k;
		r->off += k;
		r->left -= k;
		n -= k;
	}
	return 0;
}

static int rd_u8(struct rd *r, unsigned *v, const char *what)
{
	unsigned char c;

	if (rd_read(r, &c, 1, what))
		return r->err;
	*v = c;
	return 0;
}

static uint64_t le_u64(const unsigned char *b, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

/* A length; *enc is set (and *len is the encoding) for 11xxxxxx. */
static int rd_len(struct rd *r, uint64_t *len, bool *enc, const char *what)
{
	unsigned char b[8];
	unsigned c = 0;
	uint64_t start = r->off;

	if (enc)
		*enc = false;
	if (rd_u8(r, &c, what))
		return r->err;
	switch (c >> 6) {
	case 0:
		*len = c & 0x3f;
		return 0;
	case 1:
		if (rd_read(r, b, 1, what))
			return r->err;
		*len = (uint64_t)(c & 0x3f) << 8 | b[0];
		return 0;
	case 2:
		if (c == 0x80 || c == 0x81) {
			int n = c == 0x80 ? 4 : 8;

			if (rd_read(r, b, (uint64_t)n, what))
				return r->err;
			*len = 0;
			for (int i = 0; i < n; i++)
				*len = *len << 8 | b[i];
			return 0;
		}
		return rd_fail_at(r, start, -EBADMSG, "bad length byte 0x%02x in %s", c, what);
	default:
		if (!enc)
			return rd_fail_at(r, start, -EBADMSG,
					  "string encoding 0x%02x where %s expected", c, what);
		*enc = true;
		*len = c & 0x3f;
		return 0;
	}
}

/* A plain length that must fit in what is left of the file times @unit. */
static int rd_count(struct rd *r, uint64_t *n, uint64_t unit, const char *what)
{
	uint64_t start = r->off;

	if (rd_len(r, n, NULL, what))
		return r->err;
	if (*n > r->left / unit)
		return rd_fail_at(r, start, -EBADMSG,
				  "%s %llu is more than the %llu bytes left in the file can hold",
				  what, (unsigned long long)*n, (unsigned long long)r->left);
	return 0;
}

static int sbuf_reserve(struct rd *r, struct sbuf *s, uint64_t n)
{
	if (n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 64;
		unsigned char *p;

		while (cap < n + 1)
			cap *= 2;
		p = realloc(s->p, cap);
		if (!p)
			return rd_fail(r, -ENOMEM, "out of memory for a %llu-byte string",
				       (unsigned long long)n);
		s->p = p;
		s->cap = cap;
	}
	return 0;
}

/* A string in any encoding into s (or skipped when s is NULL). */
static int rd_string(struct rd *r, struct sbuf *s, const char *what)
{
	uint64_t start = r->off, len, clen, ulen;
	unsigned char b[4];
	bool enc;
	long long v;

	if (rd_len(r, &len, &enc, what))
		return r->err;
	if (!enc) {
		if (len > r->left)
			return rd_fail_at(r, start, -EBADMSG,
					  "%s length %llu is more than the %llu bytes left", what,
					  (unsigned long long)len, (unsigned long long)r->left);
		if (len > r->max_string)
			return rd_fail_at(
			    r, start, -EBADMSG, "%s length %llu is over the limit %llu", what,
			    (unsigned long long)len, (unsigned long long)r->max_string);
		if (!s)
			return rd_read(r, NULL, len, what);
		if (sbuf_reserve(r, s, len) || rd_read(r, s->p, len, what))
			return r->err;
		s->len = (size_t)len;
		s->p[len] = '\0';
		return 0;
	}
	switch (len) {
	case ENC_INT8:
		if (rd_read(r, b, 1, what))
			return r->err;
		v = (int8_t)b[0];
		break;
	case ENC_INT16:
		if (rd_read(r, b, 2, what))
			return r->err;
		v = (int16_t)le_u64(b, 2);
		break;
	case ENC_INT32:
		if (rd_read(r, b, 4, what))
			return r->err;
		v = (int32_t)le_u64(b, 4);
		break;
	case ENC_LZF:
		if (rd_len(r, &clen, NULL, what) || rd_len(r, &ulen, NULL, what))
			return r->err;
		/* A plain length of 0 is an empty string whatever the clen
		 * bytes hold: Redis decompresses them into no room, which
		 * liblzf reports as 0 bytes written, the length wanted. */
		if (ulen == 0 && clen <= r->left) {
			if (rd_read(r, NULL, clen, what))
				return r->err;
			if (s) {
				if (sbuf_reserve(r, s, 0))
					return r->err;
				s->len = 0;
				s->p[0] = '\0';
			}
			return 0;
		}
		/* An LZF back reference expands 3 bytes into at most 264, so
		 * more than 100x cannot be a real stream. */
		if (clen == 0 || clen > r->left || ulen > r->max_string || ulen / 100 > clen ||
		    ulen > UINT_MAX || clen > UINT_MAX)
			return rd_fail_at(r, start, -EBADMSG,
					  "%s: impossible LZF lengths (compressed %llu, plain "
					  "%llu, %llu bytes left)",
					  what, (unsigned long long)clen, (unsigned long long)ulen,
					  (unsigned long long)r->left);
		if (!s)
			return rd_read(r, NULL, clen, what);
		{
			unsigned char *c = malloc(clen);
			unsigned got;

			if (!c)
				return rd_fail(r, -ENOMEM, "out of memory");
			if (rd_read(r, c, clen, what) || sbuf_reserve(r, s, ulen)) {
				free(c);
				return r->err;
			}
			got = lzf_decompress(c, (unsigned)clen, s->p, (unsigned)ulen);
			free(c);
			if (got != ulen)
				return rd_fail_at(r, start, -EBADMSG,
						  "%s: LZF data does not decompress to %llu bytes",
						  what, (unsigned long long)ulen);
			s->len = (size_t)ulen;
			s->p[ulen] = '\0';
		}
		return 0;
	default:
		return rd_fail_at(r, start, -EBADMSG, "%s: unknown string encoding %llu", what,
				  (unsigned long long)len);
	}
	if (s) {
		if (sbuf_reserve(r, s, 24))
			return r->err;
		s->len = (size_t)snprintf((char *)s->p, s->cap, "%lld", v);
	}
	return 0;
}

/* Printable, bounded rendering of a key for messages. */
static const char *show_key(const struct sbuf *k, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; i < k->len && o + 8 < outlen; i++) {
		unsigned char c = k->p[i];

		if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
		if (i == 63 && k->len > 64) {
			o += (size_t)snprintf(out + o, outlen - o, "...");
			break;
		}
	}
	out[o] = '\0';
	return out;
}

/* The body of a MODULE_AUX block or MODULE_2 value, up to its EOF opcode. */
static int rd_skip_module(struct rd *r)
{
	for (;;) {
		uint64_t op, x;
		uint64_t start = r->off;

		if (rd_len(r, &op, NULL, "module opcode"))
			return r->err;
		switch (op) {
		case MOP_EOF:
			return 0;
		case MOP_SINT:
		case MOP_UINT:
			if (rd_len(r, &x, NULL, "module integer"))
				return r->err;
			break;
		case MOP_FLOAT:
			if (rd_read(r, NULL, 4, "module float"))
				return r->err;
			break;
		case MOP_DOUBLE:
			if (rd_read(r, NULL, 8, "module double"))
				return r->err;
			break;
		case MOP_STRING:
			if (rd_string(r, NULL, "module string"))
				return r->err;
			break;
		default:
			return rd_fail_at(r, start, -EBADMSG, "unknown module opcode %llu",
					  (unsigned long long)op);
		}
	}
}

static int rd_skip_stream(struct rd *r, unsigned type)
{
	uint64_t n, x, groups;

	if (rd_count(r, &n, 2, "stream listpack count"))
		return r->err;
	while (n--)
		if (rd_string(r, NULL, "stream node key") || rd_string(r, NULL, "stream listpack"))
			return r->err;
	/* length, last id (ms, seq) */
	for (int i = 0; i < 3; i++)
		if (rd_len(r, &x, NULL, "stream metadata"))
			return r->err;
	if (type >= 19) /* first id, max deleted id, entries added */
		for (int i = 0; i < 5; i++)
			if (rd_len(r, &x, NULL, "stream metadata"))
				return r->err;
	if (rd_count(r, &groups, 1, "stream consumer group count"))
		return r->err;
	while (groups--) {
		uint64_t pel, consumers;

		if (rd_string(r, NULL, "consumer group name") ||
		    rd_len(r, &x, NULL, "group last id") || rd_len(r, &x, NULL, "group last id"))
			return r->err;
		if (type >= 19 && rd_len(r, &x, NULL, "group entries read"))
			return r->err;
		if (rd_count(r, &pel, 25, "group pending count"))
			return r->err;
		while (pel--)
			if (rd_read(r, NULL, 16 + 8, "pending entry") ||
			    rd_len(r, &x, NULL, "delivery count"))
				return r->err;
		if (rd_count(r, &consumers, 9, "consumer count"))
			return r->err;
		while (consumers--) {
			if (rd_string(r, NULL, "consumer name") ||
			    rd_read(r, NULL, type >= 21 ? 16 : 8, "consumer times") ||
			    rd_count(r, &pel, 16, "consumer pending count"))
				return r->err;
			if (rd_read(r, NULL, pel * 16, "consumer pending ids"))
				return r->err;
		}
	}
	return 0;
}

/* Parse past one value of a non-string type. */
static int rd_skip_value(struct rd *r, unsigned type)
{
	uint64_t n, x;
	unsigned c = 0;

	switch (type) {
	case 1:
	case 2:
	case 14: /* list, set, quicklist of ziplists */
		if (rd_count(r, &n, 1, "element count"))
			return r->err;
		while (n--)
			if (rd_string(r, NULL, "element"))
				return r->err;
		return 0;
	case 4: /* hash: field, value */
		if (rd_count(r, &n, 2, "field count"))
			return r->err;
		while (n--)
			if (rd_string(r, NULL, "hash field") || rd_string(r, NULL, "hash value"))
				return r->err;
		return 0;
	case 3: /* zset, scores as length-prefixed text */
		if (rd_count(r, &n, 2, "member count"))
			return r->err;
		while (n--) {
			if (rd_string(r, NULL, "zset member") || rd_u8(r, &c, "zset score"))
				return r->err;
			/* 253 nan, 254 +inf, 255 -inf, else text length */
			if (c < 253 && rd_read(r, NULL, c, "zset score"))
				return r->err;
		}
		return 0;
	case 5: /* zset, binary double scores */
		if (rd_count(r, &n, 9, "member count"))
			return r->err;
		while (n--)
			if (rd_string(r, NULL, "zset member") || rd_read(r, NULL, 8, "zset score"))
				return r->err;
		return 0;
	case 9:
	case 10:
	case 11:
	case 12:
	case 13:
	case 16:
	case 17:
	case 20:
		return rd_string(r, NULL, "encoded value");
	case 18: /* quicklist v2: container, node */
		if (rd_count(r, &n, 2, "quicklist node count"))
			return r->err;
		while (n--) {
			uint64_t start = r->off;

			if (rd_len(r, &x, NULL, "quicklist container"))
				return r->err;
			if (x != 1 && x != 2)
				return rd_fail_at(r, start, -EBADMSG,
						  "bad quicklist container %llu",
						  (unsigned long long)x);
			if (rd_string(r, NULL, "quicklist node"))
				return r->err;
		}
		return 0;
	case 7: /* module, then its opcode stream */
		if (rd_len(r, &x, NULL, "module id"))
			return r->err;
		return rd_skip_module(r);
	case 15:
	case 19:
	case 21:
		return rd_skip_stream(r, type);
	default:
		return rd_fail(r, -ENOTSUP, "cannot skip values of type %u", type);
	}
}

static int64_t now_ms_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "REDISnnnn": the magic and the version, which must be one this reader
 * takes.  Return: 0, or the error. */
static int rd_header(struct rd *r, struct rdb_load_stats *st)
{
	unsigned char magic[9];
	int ver = 0;

	if (rd_read(r, magic, 9, "header"))
		return r->err;
	if (memcmp(magic, "REDIS", 5) != 0)
		return rd_fail_at(r, 0, -EBADMSG, "not an RDB file (no REDIS magic)");
	for (int i = 5; i < 9; i++) {
		if (magic[i] < '0' || magic[i] > '9')
			return rd_fail_at(r, 5, -EBADMSG, "bad RDB version digits");
		ver = ver * 10 + (magic[i] - '0');
	}
	st->version = r->version = ver;
	if (ver < 1 || ver > RDB_MAX_READ_VERSION)
		return rd_fail_at(r, 5, -ENOTSUP,
				  "RDB version %d not supported (this reader takes 1 to %d)", ver,
				  RDB_MAX_READ_VERSION);
	return 0;
}

/* The state rd_body() carries from one opcode to the next: the current
 * database, and the attributes (expiry, LRU idle, LFU frequency, first byte)
 * of the key record being read, reset after each key. */
struct rd_ctx {
	const struct rdb_load_cbs *cb;
	const struct rdb_load_opts *o;
	struct rdb_load_stats *st;
	uint32_t dbnum;
	int64_t now;
	int64_t expire, idle;
	int freq;
	uint64_t rec_off;
};

/* What an opcode reader returns when the opcode is not one of its own. */
#define RD_NOT_MINE 1

static void rd_ctx_key_done(struct rd_ctx *x)
{
	x->expire = -1;
	x->idle = -1;
	x->freq = -1;
}

/* EXPIRETIME, EXPIRETIME_MS, FREQ, IDLE: attributes of the key that follows.
 * Return: 0, RD_NOT_MINE, or the error. */
static int rd_key_attr(struct rd *r, unsigned type, struct rd_ctx *x)
{
	unsigned char b[8];
	unsigned f = 0;
	uint64_t a;

	switch (type) {
	case OP_EXPIRETIME:
		if (rd_read(r, b, 4, "expire time"))
			return r->err;
		x->expire = (int64_t)(int32_t)le_u64(b, 4) * 1000;
		return 0;
	case OP_EXPIRETIME_MS:
		if (rd_read(r, b, 8, "expire time"))
			return r->err;
		x->expire = (int64_t)le_u64(b, 8);
		return 0;
	case OP_FREQ:
		if (rd_u8(r, &f, "LFU frequency"))
			return r->err;
		x->freq = (int)f;
		return 0;
	case OP_IDLE:
		if (rd_len(r, &a, NULL, "LRU idle time"))
			return r->err;
		x->idle = a > INT64_MAX ? INT64_MAX : (int64_t)a;
		return 0;
	default:
		return RD_NOT_MINE;
	}
}

/* MODULE_AUX: skipped through its opcode stream, after checking its 'when'. */
static int rd_module_aux(struct rd *r, uint64_t start, struct rdb_load_stats *st)
{
	uint64_t a;

	if (rd_len(r, &a, NULL, "module id") || rd_len(r, &a, NULL, "module aux when opcode"))
		return r->err;
	if (a != MOP_UINT)
		return rd_fail_at(r, start, -EBADMSG,
				  "MODULE_AUX 'when' has opcode %llu, not an integer",
				  (unsigned long long)a);
	if (rd_len(r, &a, NULL, "module aux when") || rd_skip_module(r))
		return r->err;
	st->module_aux++;
	return 0;
}

/* The opcodes that are not keys: SELECTDB, RESIZEDB, AUX, MODULE_AUX and
 * the functions.  *@cr gets a callback's refusal.  Return: 0, RD_NOT_MINE,
 * or the error. */
static int rd_meta(struct rd *r, unsigned type, uint64_t start, struct rd_ctx *x, int *cr)
{
	const struct rdb_load_cbs *cb = x->cb;
	uint64_t a, bb;

	switch (type) {
	case OP_SELECTDB:
		if (rd_len(r, &a, NULL, "database number"))
			return r->err;
		if (a > UINT32_MAX)
			return rd_fail_at(r, start, -EBADMSG, "database number %llu out of range",
					  (unsigned long long)a);
		x->dbnum = (uint32_t)a;
		if (cb->select_db)
			*cr = cb->select_db(cb->arg, x->dbnum);
		return 0;
	case OP_RESIZEDB:
		if (rd_len(r, &a, NULL, "db size") || rd_len(r, &bb, NULL, "expires size"))
			return r->err;
		if (cb->resize_db)
			*cr = cb->resize_db(cb->arg, x->dbnum, a, bb);
		return 0;
	case OP_AUX: {
		struct sbuf *k = &r->key, *v = &r->val;

		if (rd_string(r, k, "AUX name") || rd_string(r, v, "AUX value"))
			return r->err;
		x->st->aux_fields++;
		if (cb->aux)
			*cr = cb->aux(cb->arg, k->p, k->len, v->p, v->len);
		return 0;
	}
	case OP_MODULE_AUX:
		return rd_module_aux(r, start, x->st);
	case OP_FUNCTION2:
		if (rd_string(r, NULL, "function library"))
			return r->err;
		x->st->functions++;
		return 0;
	case OP_FUNCTION_PRE_GA:
		return rd_fail_at(
		    r, start, -ENOTSUP,
		    "pre-release FUNCTION format (RC builds of Redis 7.0) not supported");
	default:
		return RD_NOT_MINE;
	}
}

/* ------------------------------------------- module values, reader side */

/* The next module item's opcode, which must be @want (its name @what). */
static int rd_mop(struct rd *r, uint64_t want, const char *what)
{
	uint64_t start = r->off, op;

	if (rd_len(r, &op, NULL, "module opcode"))
		return -1;
	if (op != want) {
		rd_fail_at(r, start, -EBADMSG, "module value: expected %s, found opcode %llu", what,
			   (unsigned long long)op);
		return -1;
	}
	return 0;
}

int rdb_module_get_uint(struct rdb_module_in *in, uint64_t *v)
{
	struct rd *r = (struct rd *)in;

	if (r->err || rd_mop(r, MOP_UINT, "an unsigned") || rd_len(r, v, NULL, "module unsigned"))
		return -1;
	return 0;
}

int rdb_module_get_sint(struct rdb_module_in *in, int64_t *v)
{
	struct rd *r = (struct rd *)in;
	uint64_t u;

	if (r->err || rd_mop(r, MOP_UINT, "a signed") || rd_len(r, &u, NULL, "module signed"))
		return -1;
	*v = (int64_t)u;
	return 0;
}

int rdb_module_get_string(struct rdb_module_in *in, char **p, size_t *n)
{
	struct rd *r = (struct rd *)in;
	struct sbuf sb = {0};

	if (r->err || rd_mop(r, MOP_STRING, "a string") || rd_string(r, &sb, "module string")) {
		free(sb.p);
		return -1;
	}
	if (!sb.p && !(sb.p = calloc(1, 1))) {
		rd_fail(r, -ENOMEM, "module string");
		return -1;
	}
	*p = (char *)sb.p;
	*n = sb.len;
	return 0;
}

static int rd_le(struct rd *r, uint64_t mop, int n, uint64_t *u, const char *what)
{
	unsigned char b[8];

	if (r->err || rd_mop(r, mop, what) || rd_read(r, b, (uint64_t)n, what))
		return -1;
	*u = le_u64(b, n);
	return 0;
}

int rdb_module_get_double(struct rdb_module_in *in, double *d)
{
	uint64_t u;

	if (rd_le((struct rd *)in, MOP_DOUBLE, 8, &u, "a double"))
		return -1;
	memcpy(d, &u, 8);
	return 0;
}

int rdb_module_get_float(struct rdb_module_in *in, float *f)
{
	uint64_t u;
	uint32_t v;

	if (rd_le((struct rd *)in, MOP_FLOAT, 4, &u, "a float"))
		return -1;
	v = (uint32_t)u;
	memcpy(f, &v, 4);
	return 0;
}

void rdb_module_fail(struct rdb_module_in *in, const char *msg)
{
	struct rd *r = (struct rd *)in;

	rd_fail_at(r, r->off, -EBADMSG, "%s", msg);
}

/* After a module value's body: its EOF opcode.  Return: 0, or the error. */
static int rd_module_eof(struct rd *r)
{
	uint64_t start = r->off, op;

	if (r->err)
		return r->err;
	if (rd_len(r, &op, NULL, "module opcode"))
		return r->err;
	if (op != MOP_EOF)
		return rd_fail_at(r, start, -EBADMSG,
				  "the module value's load left data behind (opcode %llu, not EOF)",
				  (unsigned long long)op);
	return 0;
}

/* The key record just read (key, expiry, IDLE/FREQ, offsets) into @kv,
 * its value left empty; counted as a key loaded. */
static void rd_kv_fill(struct rd *r, struct rd_ctx *x, struct rdb_kv *kv)
{
	memset(kv, 0, sizeof(*kv));
	kv->dbnum = x->dbnum;
	kv->key = r->key.p;
	kv->klen = r->key.len;
	kv->expire_ms = x->expire;
	kv->expired = x->expire != -1 && x->expire < x->now;
	kv->lru_idle = x->idle;
	kv->lfu_freq = x->freq;
	kv->offset = x->rec_off;
	kv->end = r->off;
	x->st->keys++;
	x->st->expired += kv->expired;
}

/* A string key's value: read it and hand the key to the string_kv callback
 * (*@cr gets its refusal).  Return: 0, or the error. */
static int rd_string_kv(struct rd *r, struct rd_ctx *x, int *cr)
{
	struct rdb_kv kv;

	if (rd_string(r, &r->val, "string value"))
		return r->err;
	rd_kv_fill(r, x, &kv);
	kv.val = r->val.p;
	kv.vlen = r->val.len;
	if (x->cb->string_kv)
		*cr = x->cb->string_kv(x->cb->arg, &kv);
	return 0;
}

/* Where a parsed hash goes: @fn(@arg, pairs, n), its result into *@cr. */
struct hash_sink {
	int (*fn)(struct rd *r, void *arg, const struct rdb_pair *p, size_t n);
	void *arg;
	int *cr;
};

/* An RDB_TYPE_HASH value: every pair read (copied into one buffer) and
 * handed to @k.  The count is checked against the bytes left (each string
 * takes at least one), so a hostile count costs nothing.
 * Return: 0, or the error. */
static int rd_hash_plain(struct rd *r, const struct hash_sink *k)
{
	uint64_t start = r->off, n;
	struct rdb_pair *ps = NULL;
	struct sbuf all = {NULL, 0, 0};
	size_t *offs = NULL;

	if (rd_len(r, &n, NULL, "hash size"))
		return r->err;
	if (n == 0 || n > r->left / 2)
		return rd_fail_at(r, start, -EBADMSG, "hash size %llu for %llu bytes left",
				  (unsigned long long)n, (unsigned long long)r->left);
	ps = malloc((size_t)n * sizeof(*ps));
	offs = malloc((size_t)n * 2 * sizeof(*offs));
	if (!ps || !offs) {
		free(ps);
		free(offs);
		return rd_fail(r, -ENOMEM, "out of memory for a hash of %llu fields",
			       (unsigned long long)n);
	}
	for (uint64_t i = 0; i < 2 * n; i++) {
		if (rd_string(r, &r->val, i % 2 ? "hash value" : "hash field") ||
		    sbuf_reserve(r, &all, all.len + r->val.len + 1))
			break;
		memcpy(all.p + all.len, r->val.p, r->val.len);
		offs[i] = all.len;
		all.len += r->val.len;
		if (i % 2)
			ps[i / 2].vl = r->val.len;
		else
			ps[i / 2].fl = r->val.len;
	}
	if (!r->err) {
		for (uint64_t i = 0; i < n; i++) {
			ps[i].f = all.p + offs[2 * i];
			ps[i].v = all.p + offs[2 * i + 1];
		}
		*k->cr = k->fn(r, k->arg, ps, (size_t)n);
	}
	free(all.p);
	free(ps);
	free(offs);
	return r->err;
}

/*
 * Redis 7.0's listpack (RDB_TYPE_HASH_LISTPACK's value, an RDB string):
 * [u32 total bytes][u16 count][entries][0xff], each entry its encoding and
 * data then a 1-5 byte back length.  lp_parse() puts every entry of
 * @p[@n] into @e as a string (integers as decimal text in @num, 21 bytes an
 * entry); it checks every length against the bytes there.  Return: the
 * number of entries, or -1 for a malformed listpack.
 */
struct lp_ent {
	const unsigned char *s;
	size_t len;
};

/* Redis's lpEncodeBacklen() sizes (its boundaries: 127, 16383, 2097151,
 * 268435455). */
static size_t lp_backlen_size(size_t l)
{
	return l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
}

/* Entry @e: integer @v as decimal text in @num (21 bytes) when @isint,
 * else the @len bytes at @s. */
static void lp_ent_put(struct lp_ent *e, char *num, int isint, int64_t v, const unsigned char *s,
		       size_t len)
{
	if (isint) {
		e->len = (size_t)snprintf(num, 21, "%lld", (long long)v);
		e->s = (const unsigned char *)num;
	} else {
		e->s = s;
		e->len = len;
	}
}

static long lp_parse(const unsigned char *p, size_t n, struct lp_ent *e, size_t max,
		     char *num)
{
	size_t off = 6, k = 0;

	if (n < 7 || le_u64(p, 4) != n || p[n - 1] != 0xff)
		return -1;
	while (off < n - 1) {
		unsigned c = p[off];
		size_t hl, dl; /* encoding header and data lengths */
		int64_t v = 0;
		int isint = 1;

		if (k == max)
			return -1;
		if (c < 0x80) {
			hl = 1, dl = 0, v = c;
		} else if ((c & 0xc0) == 0x80) {
			hl = 1, dl = c & 0x3f, isint = 0;
		} else if ((c & 0xe0) == 0xc0) {
			if (off + 2 > n - 1)
				return -1;
			hl = 2, dl = 0;
			v = (int64_t)(((c & 0x1f) << 8) | p[off + 1]);
			if (v >= 1 << 12)
				v -= 1 << 13;
		} else if ((c & 0xf0) == 0xe0) {
			if (off + 2 > n - 1)
				return -1;
			hl = 2, dl = ((size_t)(c & 0x0f) << 8) | p[off + 1], isint = 0;
		} else if (c == 0xf0) {
			if (off + 5 > n - 1)
				return -1;
			hl = 5, dl = (size_t)le_u64(p + off + 1, 4), isint = 0;
		} else if (c >= 0xf1 && c <= 0xf4) {
			static const unsigned char w[] = {2, 3, 4, 8};
			unsigned b = w[c - 0xf1];

			if (off + 1 + b > n - 1)
				return -1;
			hl = 1 + b, dl = 0;
			v = (int64_t)le_u64(p + off + 1, (int)b);
			if (b < 8 && (v >> (8 * b - 1)) & 1)
				v -= (int64_t)1 << (8 * b); /* sign-extend */
		} else {
			return -1;
		}
		if (dl > n - 1 - off - hl)
			return -1;
		lp_ent_put(&e[k], num + 21 * k, isint, v, p + off + hl, dl);
		k++;
		off += hl + dl;
		off += lp_backlen_size(hl + dl);
		if (off > n - 1)
			return -1;
	}
	return (long)k;
}

/* An RDB_TYPE_HASH_LISTPACK value to @k.  Return: 0, or the error. */
static int rd_hash_lp(struct rd *r, const struct hash_sink *k)
{
	uint64_t start = r->off;
	size_t max, n;
	struct lp_ent *e;
	struct rdb_pair *ps;
	char *num;
	long cnt;

	if (rd_string(r, &r->val, "hash listpack"))
		return r->err;
	max = r->val.len / 2 + 1; /* an entry takes two bytes at least */
	e = malloc(max * sizeof(*e));
	ps = malloc((max / 2 + 1) * sizeof(*ps));
	num = malloc(max * 21);
	if (!e || !ps || !num) {
		free(e);
		free(ps);
		free(num);
		return rd_fail(r, -ENOMEM, "out of memory for a listpack of %zu bytes", r->val.len);
	}
	cnt = lp_parse(r->val.p, r->val.len, e, max, num);
	if (cnt <= 0 || cnt % 2) {
		free(e);
		free(ps);
		free(num);
		return rd_fail_at(r, start, -EBADMSG, "bad hash listpack (%ld entries)", cnt);
	}
	n = (size_t)cnt / 2;
	for (size_t i = 0; i < n; i++)
		ps[i] = (struct rdb_pair){e[2 * i].s, e[2 * i].len, e[2 * i + 1].s, e[2 * i + 1].len};
	*k->cr = k->fn(r, k->arg, ps, n);
	free(e);
	free(ps);
	free(num);
	return 0;
}

/* An RDB_TYPE_SET value: every member read (copied into one buffer) and
 * handed to @k as pairs whose v is NULL.  The count is checked against the
 * bytes left.  Return: 0, or the error. */
static int rd_set_plain(struct rd *r, const struct hash_sink *k)
{
	uint64_t start = r->off, n;
	struct rdb_pair *ps;
	struct sbuf all = {NULL, 0, 0};
	size_t *offs;

	if (rd_len(r, &n, NULL, "set size"))
		return r->err;
	if (n == 0 || n > r->left)
		return rd_fail_at(r, start, -EBADMSG, "set size %llu for %llu bytes left",
				  (unsigned long long)n, (unsigned long long)r->left);
	ps = calloc((size_t)n, sizeof(*ps));
	offs = malloc((size_t)n * sizeof(*offs));
	if (!ps || !offs) {
		free(ps);
		free(offs);
		return rd_fail(r, -ENOMEM, "out of memory for a set of %llu members",
			       (unsigned long long)n);
	}
	for (uint64_t i = 0; i < n; i++) {
		if (rd_string(r, &r->val, "set member") ||
		    sbuf_reserve(r, &all, all.len + r->val.len + 1))
			break;
		memcpy(all.p + all.len, r->val.p, r->val.len);
		offs[i] = all.len;
		all.len += r->val.len;
		ps[i].fl = r->val.len;
	}
	if (!r->err) {
		for (uint64_t i = 0; i < n; i++)
			ps[i].f = all.p + offs[i];
		*k->cr = k->fn(r, k->arg, ps, (size_t)n);
	}
	free(all.p);
	free(ps);
	free(offs);
	return r->err;
}

/*
 * RDB_TYPE_SET_INTSET's value, an RDB string holding Redis's intset:
 * [u32 encoding: 2, 4 or 8 bytes a member][u32 count][count members of that
 * width], little-endian, strictly ascending (checked, as Redis's deep
 * sanitizer does).  Handed to @k as decimal strings.
 */
static int rd_set_intset(struct rd *r, const struct hash_sink *k)
{
	uint64_t start = r->off;
	const unsigned char *b;
	uint32_t enc, cnt;
	struct rdb_pair *ps;
	char *txt;
	size_t used = 0;
	int64_t prev = 0;

	if (rd_string(r, &r->val, "set intset"))
		return r->err;
	b = r->val.p;
	if (r->val.len < 8)
		return rd_fail_at(r, start, -EBADMSG, "intset of %zu bytes", r->val.len);
	enc = (uint32_t)le_u64(b, 4);
	cnt = (uint32_t)le_u64(b + 4, 4);
	if ((enc != 2 && enc != 4 && enc != 8) || cnt == 0 ||
	    (uint64_t)cnt * enc + 8 != r->val.len)
		return rd_fail_at(r, start, -EBADMSG, "bad intset (encoding %u, %u members, %zu bytes)",
				  enc, cnt, r->val.len);
	ps = calloc(cnt, sizeof(*ps));
	txt = malloc((size_t)cnt * 21);
	if (!ps || !txt) {
		free(ps);
		free(txt);
		return rd_fail(r, -ENOMEM, "out of memory for an intset of %u members", cnt);
	}
	for (uint32_t i = 0; i < cnt; i++) {
		uint64_t u = le_u64(b + 8 + (size_t)i * enc, enc);
		int64_t v;

		if (enc < 8 && (u >> (8 * enc - 1)) & 1) /* sign-extend */
			u |= ~(uint64_t)0 << (8 * enc);
		v = (int64_t)u;
		if (i && v <= prev) {
			free(ps);
			free(txt);
			return rd_fail_at(r, start, -EBADMSG, "intset not in ascending order");
		}
		prev = v;
		ps[i].f = txt + used;
		ps[i].fl = (size_t)snprintf(txt + used, 21, "%lld", (long long)v);
		used += ps[i].fl;
	}
	*k->cr = k->fn(r, k->arg, ps, cnt);
	free(ps);
	free(txt);
	return r->err;
}

/* A set value of RDB type @type (RDB_TYPE_SET or _INTSET) to @k. */
static int rd_set(struct rd *r, unsigned type, const struct hash_sink *k)
{
	return type == RDB_TYPE_SET ? rd_set_plain(r, k) : rd_set_intset(r, k);
}

/* A key record's set to the set_kv callback (@arg the rd_ctx). */
static int set_to_cb(struct rd *r, void *arg, const struct rdb_pair *p, size_t n)
{
	struct rd_ctx *x = arg;
	struct rdb_kv kv;

	rd_kv_fill(r, x, &kv);
	return x->cb->set_kv(x->cb->arg, &kv, p, n);
}

/* A key record's hash to the hash_kv callback (@arg the rd_ctx). */
static int hash_to_cb(struct rd *r, void *arg, const struct rdb_pair *p, size_t n)
{
	struct rd_ctx *x = arg;
	struct rdb_kv kv;

	rd_kv_fill(r, x, &kv);
	return x->cb->hash_kv(x->cb->arg, &kv, p, n);
}

/* A hash value of RDB type @type (RDB_TYPE_HASH or _LISTPACK) to @k. */
static int rd_hash(struct rd *r, unsigned type, const struct hash_sink *k)
{
	return type == RDB_TYPE_HASH ? rd_hash_plain(r, k) : rd_hash_lp(r, k);
}

/* Where a parsed sorted set goes: @fn(@arg, elements, n), its result into
 * *@cr. */
struct zset_sink {
	int (*fn)(struct rd *r, void *arg, const struct rdb_zel *e, size_t n, int lp);
	void *arg;
	int *cr;
};

/* A score as text (RDB_TYPE_ZSET, a listpack entry): strtod of the whole
 * text, NaN refused.  Return: 0, or -1. */
static int zscore_text(const unsigned char *s, size_t len, double *d)
{
	char buf[64], *end;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*d = strtod(buf, &end);
	return *end || isnan(*d) ? -1 : 0;
}

/* An RDB_TYPE_ZSET or _ZSET_2 value: every member read (copied into one
 * buffer) with its score, then handed to @k.  The count is checked against
 * the bytes left, so a hostile count costs nothing.  Return: 0, or the
 * error. */
static int rd_zset_plain(struct rd *r, unsigned type, const struct zset_sink *k)
{
	uint64_t start = r->off, n;
	struct rdb_zel *es = NULL;
	struct sbuf all = {NULL, 0, 0};
	size_t *offs = NULL;

	if (rd_len(r, &n, NULL, "zset size"))
		return r->err;
	if (n == 0 || n > r->left / 2)
		return rd_fail_at(r, start, -EBADMSG, "zset size %llu for %llu bytes left",
				  (unsigned long long)n, (unsigned long long)r->left);
	es = malloc((size_t)n * sizeof(*es));
	offs = malloc((size_t)n * sizeof(*offs));
	if (!es || !offs) {
		free(es);
		free(offs);
		return rd_fail(r, -ENOMEM, "out of memory for a zset of %llu members",
			       (unsigned long long)n);
	}
	for (uint64_t i = 0; i < n; i++) {
		unsigned char b[255];
		unsigned c = 0;

		if (rd_string(r, &r->val, "zset member") ||
		    sbuf_reserve(r, &all, all.len + r->val.len + 1))
			break;
		memcpy(all.p + all.len, r->val.p, r->val.len);
		offs[i] = all.len;
		es[i].ml = r->val.len;
		all.len += r->val.len;
		if (type == RDB_TYPE_ZSET_2) {
			uint64_t u;

			if (rd_read(r, b, 8, "zset score"))
				break;
			u = le_u64(b, 8);
			memcpy(&es[i].score, &u, 8);
		} else {
			if (rd_u8(r, &c, "zset score"))
				break;
			if (c == 253) {
				es[i].score = NAN;
			} else if (c == 254 || c == 255) {
				es[i].score = c == 254 ? INFINITY : -INFINITY;
			} else if (rd_read(r, b, c, "zset score")) {
				break;
			} else if (zscore_text(b, c, &es[i].score) < 0) {
				rd_fail(r, -EBADMSG, "zset score is not a number");
				break;
			}
		}
		if (isnan(es[i].score)) {
			rd_fail(r, -EBADMSG, "zset with a NaN score");
			break;
		}
	}
	if (!r->err) {
		for (uint64_t i = 0; i < n; i++)
			es[i].m = all.p + offs[i];
		*k->cr = k->fn(r, k->arg, es, (size_t)n, 0);
	}
	free(all.p);
	free(es);
	free(offs);
	return r->err;
}

/*
 * Redis 6's ziplist (RDB_TYPE_ZSET_ZIPLIST's value, an RDB string): a
 * 10-byte header (total bytes, tail offset, count), entries, 0xff.  An
 * entry is the previous entry's length (1 byte, or 0xfe and 4 bytes), an
 * encoding (a string of 6, 14 or 32 bits of length; an int16, int32,
 * int64, int24 or int8; or 0xf1-0xfd, the values 0 to 12 in the byte
 * itself), then its data.  As lp_parse(): every entry into @e (integers as
 * decimal text in @num), each length checked against the bytes; the number
 * of entries, or -1 for a malformed ziplist.
 */
static long zl_parse(const unsigned char *p, size_t n, struct lp_ent *e, size_t max, char *num)
{
	size_t off = 10, k = 0;

	if (n < 11 || le_u64(p, 4) != n || p[n - 1] != 0xff)
		return -1;
	while (off < n - 1) {
		size_t hl, dl = 0; /* prevlen + encoding bytes, data bytes */
		unsigned c;
		int64_t v = 0;
		int isint = 1;

		if (k == max)
			return -1;
		hl = p[off] < 254 ? 1 : 5;
		if (off + hl >= n - 1)
			return -1;
		c = p[off + hl];
		if (c >> 6 == 0) {
			hl += 1, dl = c & 0x3f, isint = 0;
		} else if (c >> 6 == 1) {
			if (off + hl + 2 > n - 1)
				return -1;
			dl = ((size_t)(c & 0x3f) << 8) | p[off + hl + 1], hl += 2, isint = 0;
		} else if (c == 0x80) {
			if (off + hl + 5 > n - 1)
				return -1;
			dl = (size_t)p[off + hl + 1] << 24 | (size_t)p[off + hl + 2] << 16 |
			     (size_t)p[off + hl + 3] << 8 | p[off + hl + 4];
			hl += 5, isint = 0;
		} else if (c >= 0xf1 && c <= 0xfd) {
			hl += 1, v = (int64_t)(c & 0x0f) - 1;
		} else {
			static const unsigned char codes[] = {0xc0, 0xd0, 0xe0, 0xf0, 0xfe};
			static const unsigned char widths[] = {2, 4, 8, 3, 1};
			int w = -1;

			for (int i = 0; i < 5; i++)
				if (c == codes[i])
					w = widths[i];
			if (w < 0 || off + hl + 1 + (size_t)w > n - 1)
				return -1;
			v = (int64_t)le_u64(p + off + hl + 1, w);
			if (w < 8 && (v >> (8 * w - 1)) & 1)
				v -= (int64_t)1 << (8 * w); /* sign-extend */
			hl += 1 + (size_t)w;
		}
		if (dl > n - 1 - off - hl)
			return -1;
		lp_ent_put(&e[k], num + 21 * k, isint, v, p + off + hl, dl);
		k++;
		off += hl + dl;
	}
	return (long)k;
}

/* An RDB_TYPE_ZSET_LISTPACK value, or with @zl an RDB_TYPE_ZSET_ZIPLIST
 * one (member, score, member, score...), to @k.  Return: 0, or the
 * error. */
static int rd_zset_lp(struct rd *r, const struct zset_sink *k, int zl)
{
	uint64_t start = r->off;
	size_t max, n;
	struct lp_ent *e;
	struct rdb_zel *es;
	char *num;
	long cnt;
	int bad = 0;

	if (rd_string(r, &r->val, zl ? "zset ziplist" : "zset listpack"))
		return r->err;
	max = r->val.len / 2 + 1; /* an entry takes two bytes at least */
	e = malloc(max * sizeof(*e));
	es = malloc((max / 2 + 1) * sizeof(*es));
	num = malloc(max * 21);
	if (!e || !es || !num) {
		free(e);
		free(es);
		free(num);
		return rd_fail(r, -ENOMEM, "out of memory for a listpack of %zu bytes", r->val.len);
	}
	cnt = zl ? zl_parse(r->val.p, r->val.len, e, max, num)
		 : lp_parse(r->val.p, r->val.len, e, max, num);
	n = cnt > 0 && cnt % 2 == 0 ? (size_t)cnt / 2 : 0;
	for (size_t i = 0; i < n && !bad; i++) {
		es[i] = (struct rdb_zel){e[2 * i].s, e[2 * i].len, 0};
		bad = zscore_text(e[2 * i + 1].s, e[2 * i + 1].len, &es[i].score) < 0;
	}
	if (n && !bad)
		*k->cr = k->fn(r, k->arg, es, n, 1);
	free(e);
	free(es);
	free(num);
	if (!n || bad)
		return rd_fail_at(r, start, -EBADMSG, "bad zset %s (%ld entries)",
				  zl ? "ziplist" : "listpack", cnt);
	return 0;
}

/* A sorted set value of RDB type @type to @k. */
static int rd_zset(struct rd *r, unsigned type, const struct zset_sink *k)
{
	if (type == RDB_TYPE_ZSET_LISTPACK || type == RDB_TYPE_ZSET_ZIPLIST)
		return rd_zset_lp(r, k, type == RDB_TYPE_ZSET_ZIPLIST);
	return rd_zset_plain(r, type, k);
}

static bool is_zset_type(unsigned type)
{
	return type == RDB_TYPE_ZSET || type == RDB_TYPE_ZSET_2 || type == RDB_TYPE_ZSET_LISTPACK ||
	       type == RDB_TYPE_ZSET_ZIPLIST;
}

/* A key record's sorted set to the zset_kv callback (@arg the rd_ctx). */
static int zset_to_cb(struct rd *r, void *arg, const struct rdb_zel *e, size_t n, int lp)
{
	struct rd_ctx *x = arg;
	struct rdb_kv kv;

	rd_kv_fill(r, x, &kv);
	return x->cb->zset_kv(x->cb->arg, &kv, e, n, lp);
}

/*
 * Lists: RDB_TYPE_LIST (1: the count, then the elements as strings),
 * RDB_TYPE_LIST_QUICKLIST (14, Redis 3.2 to 6.2: the node count, then each
 * node a ziplist string) and RDB_TYPE_LIST_QUICKLIST_2 (18, Redis 7.0: the
 * node count, then each node its container, 1 plain (the string is one
 * element) or 2 packed (a listpack string)).  Every element is copied into
 * one buffer and the whole list handed to the sink, as rd_hash_plain() does
 * (the pairs' f/fl are the elements, v NULL).
 */
struct list_acc {
	struct sbuf all;
	size_t *offs, *lens;
	size_t n, cap;
};

static int acc_add(struct rd *r, struct list_acc *a, const void *p, size_t len)
{
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 64;
		size_t *o = realloc(a->offs, nc * sizeof(*o)), *l;

		if (!o)
			return rd_fail(r, -ENOMEM, "out of memory for a list");
		a->offs = o;
		l = realloc(a->lens, nc * sizeof(*l));
		if (!l)
			return rd_fail(r, -ENOMEM, "out of memory for a list");
		a->lens = l;
		a->cap = nc;
	}
	if (sbuf_reserve(r, &a->all, a->all.len + len + 1))
		return r->err;
	if (len)
		memcpy(a->all.p + a->all.len, p, len);
	a->offs[a->n] = a->all.len;
	a->lens[a->n] = len;
	a->all.len += len;
	a->n++;
	return 0;
}

/*
 * A ziplist (Redis 6's list nodes): [u32 bytes][u32 tail][u16 count], each
 * entry [prevlen: 1 byte, or 0xfe and 4][encoding and data], then 0xff.
 * Every length is checked against the bytes there.  Return: entries added,
 * or -1 for a malformed ziplist.
 */
static long zl_parse_list(struct rd *r, struct list_acc *a, const unsigned char *p, size_t n)
{
	size_t off = 10;
	long k = 0;

	if (n < 11 || le_u64(p, 4) != n || p[n - 1] != 0xff)
		return -1;
	while (off < n - 1) {
		unsigned c;
		size_t hl, dl = 0;
		int64_t v = 0;
		int isint = 1;
		char num[24];

		off += p[off] == 0xfe ? 5 : 1; /* prevlen */
		if (off >= n - 1)
			return -1;
		c = p[off];
		if ((c >> 6) == 0) {
			hl = 1, dl = c & 0x3f, isint = 0;
		} else if ((c >> 6) == 1) {
			if (off + 2 > n - 1)
				return -1;
			hl = 2, dl = ((size_t)(c & 0x3f) << 8) | p[off + 1], isint = 0;
		} else if (c == 0x80) {
			if (off + 5 > n - 1)
				return -1;
			hl = 5, isint = 0;
			dl = ((size_t)p[off + 1] << 24) | ((size_t)p[off + 2] << 16) |
			     ((size_t)p[off + 3] << 8) | p[off + 4];
		} else if (c == 0xc0 || c == 0xd0 || c == 0xe0 || c == 0xf0 || c == 0xfe) {
			unsigned b = c == 0xc0 ? 2 : c == 0xd0 ? 4 : c == 0xe0 ? 8 : c == 0xf0 ? 3 : 1;

			if (off + 1 + b > n - 1)
				return -1;
			hl = 1 + b;
			v = (int64_t)le_u64(p + off + 1, (int)b);
			if (b < 8 && (v >> (8 * b - 1)) & 1)
				v -= (int64_t)1 << (8 * b); /* sign-extend */
		} else if (c >= 0xf1 && c <= 0xfd) {
			hl = 1, v = (int64_t)(c & 0x0f) - 1;
		} else {
			return -1;
		}
		if (dl > n - 1 - off - hl)
			return -1;
		if (isint) {
			int l = snprintf(num, sizeof(num), "%lld", (long long)v);

			if (acc_add(r, a, num, (size_t)l))
				return -1;
		} else if (acc_add(r, a, p + off + hl, dl)) {
			return -1;
		}
		off += hl + dl;
		k++;
	}
	return k;
}

static int rd_list(struct rd *r, unsigned type, const struct hash_sink *k)
{
	uint64_t start = r->off, n;
	struct list_acc a;
	struct rdb_pair *ps = NULL;

	memset(&a, 0, sizeof(a));
	if (rd_len(r, &n, NULL, type == RDB_TYPE_LIST ? "list size" : "quicklist nodes"))
		return r->err;
	if (n > r->left)
		return rd_fail_at(r, start, -EBADMSG, "list size %llu for %llu bytes left",
				  (unsigned long long)n, (unsigned long long)r->left);
	for (uint64_t i = 0; i < n && !r->err; i++) {
		uint64_t container = 2;

		if (type == RDB_TYPE_LIST_QUICKLIST_2 &&
		    rd_len(r, &container, NULL, "quicklist container"))
			break;
		if (container != 1 && container != 2) {
			rd_fail(r, -EBADMSG, "quicklist container %llu", (unsigned long long)container);
			break;
		}
		if (rd_string(r, &r->val, "list element or node"))
			break;
		if (type == RDB_TYPE_LIST || container == 1) {
			acc_add(r, &a, r->val.p, r->val.len);
		} else if (type == RDB_TYPE_LIST_QUICKLIST) {
			if (zl_parse_list(r, &a, r->val.p, r->val.len) < 0 && !r->err)
				rd_fail_at(r, start, -EBADMSG, "bad quicklist ziplist node");
		} else {
			size_t max = r->val.len / 2 + 1;
			struct lp_ent *e = malloc(max * sizeof(*e));
			char *num = malloc(max * 21);
			long cnt = e && num ? lp_parse(r->val.p, r->val.len, e, max, num) : -2;

			if (cnt == -2)
				rd_fail(r, -ENOMEM, "out of memory for a listpack");
			else if (cnt < 0)
				rd_fail_at(r, start, -EBADMSG, "bad quicklist listpack node");
			for (long j = 0; j < cnt && !r->err; j++)
				acc_add(r, &a, e[j].s, e[j].len);
			free(e);
			free(num);
		}
	}
	if (!r->err && !a.n)
		rd_fail_at(r, start, -EBADMSG, "empty list");
	if (!r->err) {
		ps = malloc(a.n * sizeof(*ps));
		if (!ps) {
			rd_fail(r, -ENOMEM, "out of memory for a list of %zu elements", a.n);
		} else {
			for (size_t i = 0; i < a.n; i++)
				ps[i] = (struct rdb_pair){a.all.p + a.offs[i], a.lens[i], NULL, 0};
			*k->cr = k->fn(r, k->arg, ps, a.n);
		}
	}
	free(ps);
	free(a.all.p);
	free(a.offs);
	free(a.lens);
	return r->err;
}

static int is_list_type(unsigned type)
{
	return type == RDB_TYPE_LIST || type == RDB_TYPE_LIST_QUICKLIST ||
	       type == RDB_TYPE_LIST_QUICKLIST_2;
}

/* A key record's list to the list_kv callback (@arg the rd_ctx). */
static int list_to_cb(struct rd *r, void *arg, const struct rdb_pair *p, size_t n)
{
	struct rd_ctx *x = arg;
	struct rdb_kv kv;

	rd_kv_fill(r, x, &kv);
	return x->cb->list_kv(x->cb->arg, &kv, p, n);
}

/* A key record of value type @type (a string, or a type skipped when
 * skip_unsupported allows, else refused).  Return: 0, or the error. */
static int rd_key_record(struct rd *r, unsigned type, uint64_t start, struct rd_ctx *x, int *cr)
{
	const struct type_info *ti;
	char shown[300];

	if (type >= TYPE_TAB_LEN || !type_tab[type].known)
		return rd_fail_at(r, start, -EBADMSG, "unknown value type or opcode %u", type);
	ti = &type_tab[type];
	if (rd_string(r, &r->key, "key"))
		return r->err;
	if (type == 0) {
		if (rd_string_kv(r, x, cr))
			return r->err;
	} else if ((type == RDB_TYPE_HASH || type == RDB_TYPE_HASH_LISTPACK) && x->cb->hash_kv) {
		struct hash_sink k = {hash_to_cb, x, cr};

		if (rd_hash(r, type, &k))
			return r->err;
	} else if ((type == RDB_TYPE_SET || type == RDB_TYPE_SET_INTSET) && x->cb->set_kv) {
		struct hash_sink k = {set_to_cb, x, cr};

		if (rd_set(r, type, &k))
			return r->err;
	} else if (is_zset_type(type) && x->cb->zset_kv) {
		struct zset_sink k = {zset_to_cb, x, cr};

		if (rd_zset(r, type, &k))
			return r->err;
	} else if (is_list_type(type) && x->cb->list_kv) {
		struct hash_sink k = {list_to_cb, x, cr};

		if (rd_list(r, type, &k))
			return r->err;
	} else if (type == RDB_TYPE_MODULE_2 && x->cb->module_kv) {
		struct rdb_kv kv;
		uint64_t id;
		int rc;

		if (rd_len(r, &id, NULL, "module id"))
			return r->err;
		rd_kv_fill(r, x, &kv);
		rc = x->cb->module_kv(x->cb->arg, &kv, id, (struct rdb_module_in *)r);
		if (r->err)
			return r->err;
		if (rc < 0) {
			*cr = rc;
		} else if (rc == 1) {
			if (rd_skip_module(r))
				return r->err;
		} else if (rd_module_eof(r)) {
			return r->err;
		}
	} else if (x->o->skip_unsupported && type != 6) {
		if (rd_skip_value(r, type))
			return r->err;
		x->st->skipped[ti->kind]++;
		x->st->skipped_total++;
	} else {
		return rd_fail_at(r, start, -ENOTSUP,
				  "key \"%s\" (db %u) is a %s (RDB type %u, %s); only strings "
				  "are supported%s",
				  show_key(&r->key, shown, sizeof(shown)), x->dbnum,
				  rdb_kind_name(ti->kind), type, ti->enc,
				  type == 6 ? " and pre-GA module values cannot be skipped"
					    : ", or set skip_unsupported to skip such keys");
	}
	rd_ctx_key_done(x);
	return 0;
}

/* After EOF (RDB 5 and later): the CRC64 of every byte before it; zero
 * means the writer had checksums off.  Return: 0, or the error. */
static int rd_checksum(struct rd *r, const struct rdb_load_opts *o, struct rdb_load_stats *st)
{
	unsigned char b[8];
	uint64_t crc = r->crc, want;

	if (rd_read(r, b, 8, "checksum"))
		return r->err;
	want = le_u64(b, 8);
	if (want && !o->ignore_checksum) {
		if (want != crc)
			return rd_fail_at(r, r->off - 8, -EBADMSG,
					  "checksum mismatch: file says %016llx, data gives %016llx",
					  (unsigned long long)want, (unsigned long long)crc);
		st->checksum_verified = true;
	}
	return 0;
}

/* The whole file: the header, then opcode after opcode until EOF, then the
 * checksum.  A record's attributes (expiry, idle, frequency) come before
 * it; everything else is a record of its own, after which a callback's
 * refusal stops the load.  Return: 0, or the error. */
static int rd_body(struct rd *r, const struct rdb_load_cbs *cb, const struct rdb_load_opts *o,
		   struct rdb_load_stats *st)
{
	struct rd_ctx x = {.cb = cb, .o = o, .st = st, .rec_off = UINT64_MAX};
	int e;

	x.now = o->now_ms ? o->now_ms : now_ms_real();
	rd_ctx_key_done(&x);
	e = rd_header(r, st);
	if (e)
		return e;
	for (;;) {
		uint64_t start = r->off;
		unsigned type = 0;
		int cr = 0;

		if (x.rec_off == UINT64_MAX)
			x.rec_off = start;
		if (rd_u8(r, &type, "opcode"))
			return r->err;
		if (type == OP_EOF)
			break;
		e = rd_key_attr(r, type, &x);
		if (e == 0)
			continue;
		if (e == RD_NOT_MINE)
			e = rd_meta(r, type, start, &x, &cr);
		if (e == RD_NOT_MINE)
			e = rd_key_record(r, type, start, &x, &cr);
		if (e)
			return e;
		x.rec_off = UINT64_MAX;
		if (cr)
			return rd_fail_at(r, start, cr, "load callback refused the record (%s)",
					  strerror(cr < 0 ? -cr : cr));
	}
	return r->version >= 5 ? rd_checksum(r, o, st) : 0;
}

int rdb_load_fd(int fd, const struct rdb_load_cbs *cb, const struct rdb_load_opts *o,
		struct rdb_load_stats *st, char *errbuf, size_t errlen)
{
	static const struct rdb_load_cbs no_cbs;
	static const struct rdb_load_opts no_opts;
	struct rdb_load_stats local;
	struct stat sb;
	struct rd *r;
	off_t pos;
	int ret;

	if (!cb)
		cb = &no_cbs;
	if (!o)
		o = &no_opts;
	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (fstat(fd, &sb) < 0) {
		ret = -errno;
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "fstat: %s", strerror(errno));
		return ret;
	}
	pos = lseek(fd, 0, SEEK_CUR);
	if (!S_ISREG(sb.st_mode) || pos < 0 || pos > sb.st_size) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "not a regular file");
		return -EINVAL;
	}
	r = malloc(sizeof(*r));
	if (!r) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	memset(r, 0, offsetof(struct rd, buf));
	r->fd = fd;
	r->left = (uint64_t)(sb.st_size - pos);
	r->max_string = o->max_string ? o->max_string : RDB_MAX_STRING_DEFAULT;
	r->errbuf = errbuf;
	r->errlen = errlen;
	ret = rd_body(r, cb, o, st);
	st->bytes = r->off;
	free(r->key.p);
	free(r->val.p);
	free(r);
	return ret;
}

int rdb_load_file(const char *path, const struct rdb_load_cbs *cb, const struct rdb_load_opts *o,
		  struct rdb_load_stats *st, char *errbuf, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r;

	if (fd < 0) {
		r = -errno;
		if (st)
			memset(st, 0, sizeof(*st));
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s: %s", path, strerror(errno));
		return r;
	}
	r = rdb_load_fd(fd, cb, o, st, errbuf, errlen);
	close(fd);
	return r;
}

/* --------------------------------------------------- RESTORE payloads */

/* The value of a payload, from its type byte on.  A string goes into
 * r->val; a value of another type that Redis 7.0 would load is parsed past
 * and refused with -ENOTSUP (*@kind set); module values (no module is
 * loaded here, as in a Redis without it) and types Redis 7.0 does not know
 * are -EBADMSG.  Return: 0, or the error. */
/* A restored collection to the caller's callback (@arg the sinks). */
#define restore_sink rdb_restore_sinks

static int list_to_restore(struct rd *r, void *arg, const struct rdb_pair *p, size_t n)
{
	const struct restore_sink *s = arg;

	(void)r;
	return s->list(s->arg, p, n);
}

static int zset_to_restore(struct rd *r, void *arg, const struct rdb_zel *e, size_t n, int lp)
{
	const struct restore_sink *s = arg;

	(void)r;
	return s->zset(s->arg, e, n, lp);
}

static int hash_to_restore(struct rd *r, void *arg, const struct rdb_pair *p, size_t n)
{
	const struct restore_sink *s = arg;

	(void)r;
	return s->hash(s->arg, p, n);
}

static int set_to_restore(struct rd *r, void *arg, const struct rdb_pair *p, size_t n)
{
	const struct restore_sink *s = arg;

	(void)r;
	return s->set(s->arg, p, n);
}

static int rd_payload_value(struct rd *r, enum rdb_kind *kind, const struct restore_sink *hs)
{
	unsigned type = 0;

	if (rd_u8(r, &type, "value type"))
		return r->err;
	if (type == 0)
		return rd_string(r, &r->val, "string value");
	if (is_zset_type(type) && hs && hs->zset) {
		int cr = 0;
		struct zset_sink k = {zset_to_restore, (void *)hs, &cr};

		*kind = RDB_KIND_ZSET;
		if (rd_zset(r, type, &k))
			return r->err;
		return cr < 0 ? cr : 1; /* 1: a sorted set, given to the sink */
	}
	if ((type == RDB_TYPE_HASH || type == RDB_TYPE_HASH_LISTPACK) && hs && hs->hash) {
		int cr = 0;
		struct hash_sink k = {hash_to_restore, (void *)hs, &cr};

		*kind = RDB_KIND_HASH;
		if (rd_hash(r, type, &k))
			return r->err;
		return cr < 0 ? cr : 1; /* 1: a hash, given to the sink */
	}
	if ((type == RDB_TYPE_SET || type == RDB_TYPE_SET_INTSET) && hs && hs->set) {
		int cr = 0;
		struct hash_sink k = {set_to_restore, (void *)hs, &cr};

		*kind = RDB_KIND_SET;
		if (rd_set(r, type, &k))
			return r->err;
		return cr < 0 ? cr : 1; /* 1: a set, given to the sink */
	}
	if (is_list_type(type) && hs && hs->list) {
		int cr = 0;
		struct hash_sink k = {list_to_restore, (void *)hs, &cr};

		*kind = RDB_KIND_LIST;
		if (rd_list(r, type, &k))
			return r->err;
		return cr < 0 ? cr : 1; /* 1: a list, given to the sink */
	}
	if (type == RDB_TYPE_MODULE_2 && hs && hs->module) {
		uint64_t id;
		int rc;

		*kind = RDB_KIND_MODULE;
		if (rd_len(r, &id, NULL, "module id"))
			return r->err;
		rc = hs->module(hs->arg, id, (struct rdb_module_in *)r);
		if (r->err)
			return r->err;
		if (rc != 0)
			return rc < 0 ? rc : -EBADMSG;
		if (rd_module_eof(r))
			return r->err;
		return 1; /* given to the sink */
	}
	if (type > RDB_DUMP_MAX_TYPE || !type_tab[type].known ||
	    type_tab[type].kind == RDB_KIND_MODULE)
		return rd_fail(r, -EBADMSG, "value type %u", type);
	if (rd_skip_value(r, type))
		return r->err;
	*kind = type_tab[type].kind;
	return -ENOTSUP;
}

int rdb_restore_value(const void *p, size_t len, void **val, size_t *vlen, enum rdb_kind *kind,
		      int (*hash)(void *arg, const struct rdb_pair *p, size_t n), void *arg)
{
	struct rdb_restore_sinks s = {.hash = hash, .arg = arg};

	return rdb_restore_typed(p, len, val, vlen, kind, &s);
}

int rdb_restore_typed(const void *p, size_t len, void **val, size_t *vlen, enum rdb_kind *kind,
		      const struct rdb_restore_sinks *hs)
{
	const unsigned char *b = p, *footer;
	struct rd *r;
	int ret;

	if (len < 10)
		return -EPROTO;
	footer = b + len - 10;
	if ((unsigned)(footer[0] | footer[1] << 8) > RDB_DUMP_VERSION ||
	    rdb_crc64(0, b, len - 8) != le_u64(footer + 2, 8))
		return -EPROTO;
	r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	memset(r, 0, offsetof(struct rd, buf));
	/* The value is parsed over the whole payload, footer included, as
	 * Redis does: a value may run into the footer, and bytes between its
	 * end and the footer are ignored. */
	r->mem = b;
	r->fd = -1;
	r->left = len;
	r->version = RDB_DUMP_VERSION;
	r->max_string = RDB_MAX_STRING_DEFAULT;
	ret = rd_payload_value(r, kind, hs);
	if (ret == 1) {
		*val = NULL;
		*vlen = 0;
		ret = 0;
	} else if (ret == 0) {
		*val = r->val.p;
		*vlen = r->val.len;
		r->val.p = NULL;
	} else if (ret != -ENOTSUP && ret != -ENOMEM) {
		ret = -EBADMSG;
	}
	free(r->key.p);
	free(r->val.p);
	free(r);
	return ret;
}

int rdb_restore_string(const void *p, size_t len, void **val, size_t *vlen, enum rdb_kind *kind)
{
	return rdb_restore_value(p, len, val, vlen, kind, NULL, NULL);
}
