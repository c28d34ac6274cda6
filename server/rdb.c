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

int rdb_write_string_kv(struct rdb_writer *w, const void *key, size_t klen, const void *val,
			size_t vlen, int64_t expire_ms)
{
	if (expire_ms != -1) {
		unsigned char b[9];

		b[0] = OP_EXPIRETIME_MS;
		for (int i = 0; i < 8; i++)
			b[1 + i] = (unsigned char)((uint64_t)expire_ms >> (8 * i));
		w_put(w, b, 9);
	}
	w_byte(w, 0); /* RDB_TYPE_STRING */
	w_string(w, key, klen);
	return w_string(w, val, vlen);
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

/* ------------------------------------------------------- DUMP payloads */

int rdb_dump_string(const void *val, size_t vlen, bool compress, void **out, size_t *outlen)
{
	static const unsigned char ver[2] = {RDB_DUMP_VERSION & 0xff, RDB_DUMP_VERSION >> 8};
	struct rdb_writer *w = w_alloc(-1, compress, true);
	int r;

	if (!w)
		return -ENOMEM;
	w_byte(w, 0); /* RDB_TYPE_STRING */
	w_string(w, val, vlen);
	w_put(w, ver, sizeof(ver));
	r = w_crc_trailer(w);
	if (!r) {
		*out = w->mem;
		*outlen = (size_t)w->flushed;
		w->mem = NULL;
	}
	rdb_writer_free(w);
	return r;
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

/* A string key's value: read it and hand the key to the string_kv callback
 * (*@cr gets its refusal).  Return: 0, or the error. */
static int rd_string_kv(struct rd *r, struct rd_ctx *x, int *cr)
{
	struct rdb_kv kv;

	if (rd_string(r, &r->val, "string value"))
		return r->err;
	kv.dbnum = x->dbnum;
	kv.key = r->key.p;
	kv.klen = r->key.len;
	kv.val = r->val.p;
	kv.vlen = r->val.len;
	kv.expire_ms = x->expire;
	kv.expired = x->expire != -1 && x->expire < x->now;
	kv.lru_idle = x->idle;
	kv.lfu_freq = x->freq;
	kv.offset = x->rec_off;
	kv.end = r->off;
	x->st->keys++;
	x->st->expired += kv.expired;
	if (x->cb->string_kv)
		*cr = x->cb->string_kv(x->cb->arg, &kv);
	return 0;
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
static int rd_payload_value(struct rd *r, enum rdb_kind *kind)
{
	unsigned type = 0;

	if (rd_u8(r, &type, "value type"))
		return r->err;
	if (type == 0)
		return rd_string(r, &r->val, "string value");
	if (type > RDB_DUMP_MAX_TYPE || !type_tab[type].known ||
	    type_tab[type].kind == RDB_KIND_MODULE)
		return rd_fail(r, -EBADMSG, "value type %u", type);
	if (rd_skip_value(r, type))
		return r->err;
	*kind = type_tab[type].kind;
	return -ENOTSUP;
}

int rdb_restore_string(const void *p, size_t len, void **val, size_t *vlen, enum rdb_kind *kind)
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
	ret = rd_payload_value(r, kind);
	if (ret == 0) {
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
