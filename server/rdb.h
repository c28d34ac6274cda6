/*
 * rdb.h - the RDB file format layer: writes and reads Redis-compatible dump
 * files (issue 8).  It knows bytes and files only: nothing here sees the hash
 * table, the SRCU domain or server types.  The server supplies an iterator to
 * save and callbacks to load.
 *
 * What it writes, byte for byte as redis-server 7.0 does for string keys:
 *   "REDIS0010", AUX fields (redis-ver, redis-bits, ctime, used-mem,
 *   aof-base), then per database SELECTDB + RESIZEDB, then per key an optional
 *   EXPIRETIME_MS (absolute Unix ms, little-endian) and a STRING record, then
 *   EOF and the CRC64 (Jones polynomial, reflected, little-endian; eight zero
 *   bytes when checksums are off).  A value or key of at most 11 bytes that is
 *   the canonical decimal form of an int8/16/32 is stored as an integer; a
 *   string longer than 20 bytes is LZF-compressed when compression is on and
 *   saves at least 4 bytes.  These are Redis's rules.
 *
 * Hashes (docs/types.md) are written as RDB_TYPE_HASH (4), which Redis
 * loads; Redis itself writes small hashes as listpacks (16).
 *
 * What it reads: RDB versions 1 to 11 (Redis 7.0 writes 10, 7.2 writes 11).
 * Opcodes AUX, SELECTDB, RESIZEDB, EXPIRETIME, EXPIRETIME_MS, IDLE, FREQ,
 * MODULE_AUX (skipped through its opcode stream) and FUNCTION2 (skipped and
 * counted).  String values in every encoding are handed to a callback with
 * their expiry, hashes of types 4 and 16 to another when it is set; keys of
 * other types (and hashes in the older ziplist and zipmap encodings) stop
 * the load with an error naming type
 * and key, or are parsed past and counted when skip_unsupported is set
 * (lists, sets, zsets, hashes in plain, ziplist, listpack, intset and
 * quicklist encodings; streams; MODULE_2 values).  Pre-GA module values
 * (type 6) and pre-GA functions cannot be skipped and always stop the load.
 *
 * Invariants of the reader: every length read from the file is checked
 * against the bytes left in the file before anything is allocated, so a
 * corrupted or hostile file costs at most its own size in memory (one string
 * at a time) and never a crash; every error message names the byte offset.
 *
 * Concurrency: a writer or a load is used by one thread at a time; separate
 * writers and loads are independent.  No function here takes a lock or
 * touches RCU; a caller may hold an SRCU read-side section across any of
 * them (they block on disk I/O).
 *
 * Tested by tests/server/test_rdb.c (round trips, corruption sweeps, disk
 * full) and tests/server/rdb_redis.sh (redis-check-rdb and redis-server 7).
 */
#ifndef RCUKV_SERVER_RDB_H
#define RCUKV_SERVER_RDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The version this module writes (Redis 7.0's) and the newest it reads. */
#define RDB_WRITE_VERSION 10
#define RDB_MAX_READ_VERSION 11

/* Largest string the reader accepts, as Redis's proto-max-bulk-len default. */
#define RDB_MAX_STRING_DEFAULT (512ull * 1024 * 1024)

/* Longest redis-ver value accepted by the writer. */
#define RDB_MAX_VERSION_STR 64

/* Writer options; zero-initialised means: no compression, no checksum. */
struct rdb_opts {
	bool compress;	       /* rdbcompression: LZF where Redis would use it */
	bool checksum;	       /* rdbchecksum: CRC64 trailer, else 8 zero bytes */
	const char *redis_ver; /* "redis-ver" AUX; NULL: "7.0.15" */
	int64_t ctime;	       /* "ctime" AUX (Unix seconds); 0: time(NULL) */
	int64_t used_mem;      /* "used-mem" AUX in bytes; < 0: field left out */
	bool aof_base;	       /* "aof-base" AUX value (0 or 1) */
};

struct rdb_writer;

/**
 * rdb_writer_new() - start an RDB stream on @fd.
 * @fd: open for writing, positioned where the file starts; owned by the caller
 *      (never closed, never fsynced here).
 * @o: options, copied; NULL means all defaults.
 *
 * The magic and AUX fields go into the writer's buffer; nothing is written
 * to @fd until the buffer fills or rdb_writer_finish() runs.
 *
 * Context: any thread; may not block.
 * Return: the writer (free with rdb_writer_free()), or NULL with errno set
 * (ENOMEM, or EINVAL for a redis_ver longer than RDB_MAX_VERSION_STR).
 */
struct rdb_writer *rdb_writer_new(int fd, const struct rdb_opts *o);

/**
 * rdb_write_db_header() - SELECTDB @dbnum and RESIZEDB hints.
 * @w: the writer.
 * @dbnum: database index.
 * @keys: number of keys that follow for this database (a hint for the
 *        loader's table size; it need not be exact).
 * @expires: how many of them carry an expiry (hint).
 *
 * Context: any thread; may block on write(2).
 * Return: 0, or the writer's first error as -errno (errors are sticky).
 */
int rdb_write_db_header(struct rdb_writer *w, uint32_t dbnum, uint64_t keys, uint64_t expires);

/**
 * rdb_write_string_kv() - one string key, with its expiry.
 * @w: the writer.
 * @key, @klen: key bytes (binary safe); @klen may be 0.
 * @val, @vlen: value bytes (binary safe); @vlen may be 0.
 * @expire_ms: absolute expiry in Unix milliseconds, or -1 for none.
 *
 * The bytes are copied (into the buffer, or compressed) before return.
 *
 * Context: any thread; may block on write(2).
 * Return: 0, or -errno (sticky; later calls return it too).
 */
int rdb_write_string_kv(struct rdb_writer *w, const void *key, size_t klen, const void *val,
			size_t vlen, int64_t expire_ms);

/* One field of a hash, for the writers and the hash_kv callback. */
struct rdb_pair {
	const void *f;
	size_t fl;
	const void *v;
	size_t vl;
};

#define RDB_TYPE_HASH 4 /* the plain hash encoding: count, then field/value strings */
#define RDB_TYPE_HASH_LISTPACK 16 /* Redis 7.0's small hashes: one listpack string */

/**
 * rdb_write_hash_kv() - one hash key, with its expiry, as RDB_TYPE_HASH.
 * @p, @n: its fields and values (@n >= 1; written in this order).
 *
 * Redis 7.0 writes small hashes as listpacks (type 16) and loads type 4 of
 * any size (converting small ones), as redis-check-rdb accepts it.
 * Context and return: as rdb_write_string_kv().
 */
int rdb_write_hash_kv(struct rdb_writer *w, const void *key, size_t klen,
		      const struct rdb_pair *p, size_t n, int64_t expire_ms);

#define RDB_TYPE_SET 2	  /* the plain set encoding: count, then member strings */
#define RDB_TYPE_SET_INTSET 11 /* Redis 7.0's intsets: one string holding the intset */

/**
 * rdb_write_set_kv() - one set key, with its expiry, as RDB_TYPE_SET.
 * @m, @n: its members in @m[i].f/.fl (@n >= 1; v unused).
 *
 * Redis 7.0 writes intsets as type 11 and loads type 2 of any size
 * (making an intset of what fits), as redis-check-rdb accepts it.
 * Context and return: as rdb_write_string_kv().
 */
int rdb_write_set_kv(struct rdb_writer *w, const void *key, size_t klen,
		     const struct rdb_pair *m, size_t n, int64_t expire_ms);
/* One element of a sorted set, for the writers and the zset_kv callback. */
struct rdb_zel {
	const void *m;
	size_t ml;
	double score; /* never NaN */
};

#define RDB_TYPE_ZSET 3		  /* count, then member strings and text scores */
#define RDB_TYPE_ZSET_2 5	  /* count, then member strings and binary doubles */
#define RDB_TYPE_ZSET_ZIPLIST 12  /* Redis 6's small sorted sets: one ziplist */
#define RDB_TYPE_ZSET_LISTPACK 17 /* Redis 7.0's small sorted sets: one listpack */

/**
 * rdb_write_zset_kv() - one sorted set key, with its expiry, as
 * RDB_TYPE_ZSET_2 (what Redis 7.0 writes for skiplist-encoded sets; it
 * loads any size, converting small ones to listpacks).
 * @e, @n: its elements (@n >= 1), written in this order.
 * Context and return: as rdb_write_string_kv().
 */
int rdb_write_zset_kv(struct rdb_writer *w, const void *key, size_t klen,
		      const struct rdb_zel *e, size_t n, int64_t expire_ms);

#define RDB_TYPE_LIST 1		   /* the plain list: count, then element strings */
#define RDB_TYPE_LIST_QUICKLIST 14   /* Redis 3.2-6.2: nodes of ziplists */
#define RDB_TYPE_LIST_QUICKLIST_2 18 /* Redis 7.0: nodes of listpacks (or plain) */
/**
 * rdb_write_list_kv() - one list key, with its expiry, as Redis 7.0 writes
 * it: RDB_TYPE_LIST_QUICKLIST_2, listpack nodes of at most 8 KB (an element
 * past that alone in its node).
 * @e, @n: its elements in order (@n >= 1; e[i].f, e[i].fl; v unused).
 * Context and return: as rdb_write_string_kv(); -ENOMEM too.
 */
int rdb_write_list_kv(struct rdb_writer *w, const void *key, size_t klen,
		      const struct rdb_pair *e, size_t n, int64_t expire_ms);
/*
 * Module data types (docs/modules.md, "Data types"): RDB_TYPE_MODULE_2, as
 * Redis 7.0 writes it: the 64-bit module type id (rdbSaveLen), then what the
 * type's rdb_save callback writes, each item behind an opcode (RDB_MODULE_
 * OPCODE_*: SINT 1, UINT 2, FLOAT 3, DOUBLE 4, STRING 5), then the EOF
 * opcode 0.  This layer knows the framing only: @body is the module layer's
 * function, which writes the items with rdb_module_put_*().
 */
#define RDB_TYPE_MODULE_2 7
typedef int (*rdb_module_body_fn)(void *arg, struct rdb_writer *w);
/**
 * rdb_write_module_kv() - one module value key, with its expiry.
 * @id: the module type id (name and encoding version, Redis's encoding).
 * @body, @arg: writes the value's items; returns 0 or -errno.
 * Context and return: as rdb_write_string_kv(); or @body's error.
 */
int rdb_write_module_kv(struct rdb_writer *w, const void *key, size_t klen, uint64_t id,
			rdb_module_body_fn body, void *arg, int64_t expire_ms);
/* One item of a module value (RedisModule_Save*): Unsigned, Signed (the
 * two's complement behind the UINT opcode, as Redis 7.0 writes it: SINT is
 * never used), String (the string
 * rules above), Double (8 bytes LE), Float (4 bytes LE).  Errors are the
 * writer's, sticky. */
void rdb_module_put_uint(struct rdb_writer *w, uint64_t v);
void rdb_module_put_sint(struct rdb_writer *w, int64_t v);
void rdb_module_put_string(struct rdb_writer *w, const void *p, size_t n);
void rdb_module_put_double(struct rdb_writer *w, double d);
void rdb_module_put_float(struct rdb_writer *w, float f);
/* The reader's side, given to the module_kv callback: 0 and the item, or
 * -1 when the next item is not of that kind or the file is short (the load
 * then fails, its message naming the offset).  get_string mallocs *@p
 * (@n bytes and a NUL). */
struct rdb_module_in;
int rdb_module_get_uint(struct rdb_module_in *in, uint64_t *v);
int rdb_module_get_sint(struct rdb_module_in *in, int64_t *v);
int rdb_module_get_string(struct rdb_module_in *in, char **p, size_t *n);
int rdb_module_get_double(struct rdb_module_in *in, double *d);
int rdb_module_get_float(struct rdb_module_in *in, float *f);
/* Fail the load (or RESTORE) from a module_kv callback with @msg. */
void rdb_module_fail(struct rdb_module_in *in, const char *msg);
/**
 * rdb_dump_module() - the DUMP payload of a module value (RDB_TYPE_MODULE_2
 * and its body, as in a file).  @id, @body, @arg as rdb_write_module_kv();
 * @compress, @out, @outlen as rdb_dump_string().
 */
int rdb_dump_module(uint64_t id, rdb_module_body_fn body, void *arg, bool compress, void **out,
		    size_t *outlen);

/**
 * rdb_writer_finish() - write EOF and the checksum, and flush the buffer.
 * @w: the writer; still to be freed with rdb_writer_free().
 *
 * Does not fsync, close or rename: the caller owns @fd.
 *
 * Context: any thread; may block on write(2).
 * Return: 0, or -errno of the first failed write (ENOSPC, EFBIG, EIO...).
 */
int rdb_writer_finish(struct rdb_writer *w);

/**
 * rdb_writer_bytes() - bytes produced so far (written plus buffered).
 * @w: the writer.
 *
 * Context: any thread.
 * Return: the count.
 */
uint64_t rdb_writer_bytes(const struct rdb_writer *w);

/**
 * rdb_writer_free() - free the writer without writing anything more.
 * @w: the writer, or NULL.  Buffered bytes not flushed by
 *     rdb_writer_finish() are dropped.
 *
 * Context: any thread.
 */
void rdb_writer_free(struct rdb_writer *w);

/* One key handed to rdb_save_file() by the caller's iterator.  The pointers
 * need stay valid only until the next call of the iterator. */
struct rdb_item {
	uint32_t dbnum; /* items come grouped by database */
	const void *key;
	size_t klen;
	const void *val;
	size_t vlen;
	int64_t expire_ms; /* absolute Unix ms, or -1 */
};

/* The caller's data set, as rdb_save_file() walks it. */
struct rdb_source {
	/* Fills @it with the next key.  Returns 1 when @it is filled, 0 at the
	 * end, or -errno to abandon the save (the old file is kept). */
	int (*next)(void *arg, struct rdb_item *it);
	/* Optional: RESIZEDB hints for @dbnum, called when items of a new
	 * database begin.  NULL writes 0 and 0 (still valid). */
	void (*db_size)(void *arg, uint32_t dbnum, uint64_t *keys, uint64_t *expires);
	void *arg;
};

/* What rdb_save_file() did. */
struct rdb_save_stats {
	uint64_t keys;	/* keys written */
	uint64_t bytes; /* file size */
};

/**
 * rdb_save_file() - write a whole dump crash-safely.
 * @path_tmp: temporary file in the same directory as @path_final; NULL
 *            means "<path_final>.tmp-<pid>".  Created or truncated.
 * @path_final: the dump's name; replaced atomically by rename(2).
 * @o: writer options (NULL: defaults).
 * @src: the iterator over the data set.
 * @st: filled when not NULL (also on failure, with what was done).
 *
 * Writes @path_tmp, fsyncs it, renames it over @path_final, fsyncs the
 * directory.  On any failure (open, write, fsync, rename, or the iterator's
 * error) the temporary file is removed and @path_final is left as it was, so
 * a crash or a full disk never costs the previous dump.
 *
 * Context: any thread; blocks on disk I/O for as long as the save takes.
 * The caller ignores SIGXFSZ if it runs under a file size limit.
 * Return: 0, or -errno (-ENOSPC, -EFBIG, -EACCES, ... or the iterator's).
 */
int rdb_save_file(const char *path_tmp, const char *path_final, const struct rdb_opts *o,
		  const struct rdb_source *src, struct rdb_save_stats *st);

/* Value kinds the reader may meet, for skip counts and messages. */
enum rdb_kind {
	RDB_KIND_STRING,
	RDB_KIND_LIST,
	RDB_KIND_SET,
	RDB_KIND_ZSET,
	RDB_KIND_HASH,
	RDB_KIND_STREAM,
	RDB_KIND_MODULE,
	RDB_KIND_MAX
};

/**
 * rdb_kind_name() - "string", "list", "set", "zset", "hash", "stream",
 * "module".
 * @k: the kind.
 *
 * Context: any thread.
 * Return: a static string ("unknown" when @k is out of range).
 */
const char *rdb_kind_name(enum rdb_kind k);

/* One string key as loaded.  Every pointer belongs to the reader and is
 * valid only during the callback: copy what you keep.  key and val are each
 * followed by a NUL byte that their lengths do not count (they may also hold
 * NULs of their own). */
struct rdb_kv {
	uint32_t dbnum; /* from the last SELECTDB (0 before any) */
	const void *key;
	size_t klen;
	const void *val; /* integer encodings arrive as decimal text */
	size_t vlen;
	int64_t expire_ms; /* absolute Unix ms, or -1 */
	bool expired;	   /* expire_ms != -1 && expire_ms < now_ms: Redis
			    * drops such keys when loading as a master */
	int64_t lru_idle;  /* IDLE opcode seconds, or -1 */
	int lfu_freq;	   /* FREQ opcode counter, or -1 */
	uint64_t offset;   /* first byte of the record (expiry opcode or
			    * type byte) */
	uint64_t end;	   /* one past its last byte */
};

/* Loader callbacks; any may be NULL.  Returning non-zero (a -errno) stops
 * the load with that value. */
struct rdb_load_cbs {
	int (*string_kv)(void *arg, const struct rdb_kv *kv);
	/* A hash in RDB_TYPE_HASH or RDB_TYPE_HASH_LISTPACK (kv's val is
	 * NULL): @n pairs (listpack integers as decimal text), valid during
	 * the call.  NULL: hashes are refused or skipped like other types. */
	int (*hash_kv)(void *arg, const struct rdb_kv *kv, const struct rdb_pair *p, size_t n);
	/* A set in RDB_TYPE_SET or RDB_TYPE_SET_INTSET: @n members in
	 * @m[i].f/.fl (v NULL; intset members as decimal text), valid during
	 * the call.  NULL: sets are refused or skipped like other types. */
	int (*set_kv)(void *arg, const struct rdb_kv *kv, const struct rdb_pair *m, size_t n);
	/* A sorted set in RDB_TYPE_ZSET, _ZSET_2, _ZSET_ZIPLIST or
	 * _ZSET_LISTPACK (kv's val is NULL): @n elements as stored (not
	 * sorted; a NaN score is refused before), valid during the call;
	 * @lp: it came in a listpack or ziplist, whose members Redis keeps
	 * compact whatever their length.  NULL: refused or skipped. */
	int (*zset_kv)(void *arg, const struct rdb_kv *kv, const struct rdb_zel *e, size_t n,
		       int lp);
	/* A list in RDB_TYPE_LIST, _QUICKLIST or _QUICKLIST_2 (kv's val NULL):
	 * its @n elements in order as p[i].f/fl (ziplist and listpack integers
	 * as decimal text), valid during the call.  NULL: refused or skipped. */
	int (*list_kv)(void *arg, const struct rdb_kv *kv, const struct rdb_pair *p, size_t n);
	/* A module value (RDB_TYPE_MODULE_2) of type @id: the callback reads
	 * its items through @in (the type's rdb_load) and returns 0, after
	 * which the reader checks the EOF opcode; or 1: the reader skips the
	 * value (an expired key); or -errno.  NULL: refused or skipped. */
	int (*module_kv)(void *arg, const struct rdb_kv *kv, uint64_t id,
			 struct rdb_module_in *in);
	/* AUX field; name and val NUL-terminated as rdb_kv's key and val. */
	int (*aux)(void *arg, const void *name, size_t nlen, const void *val, size_t vlen);
	int (*select_db)(void *arg, uint32_t dbnum);
	/* RESIZEDB hints for the current database. */
	int (*resize_db)(void *arg, uint32_t dbnum, uint64_t keys, uint64_t expires);
	void *arg;
};

struct rdb_load_opts {
	bool skip_unsupported; /* parse past non-string keys and count them */
	bool ignore_checksum;  /* do not verify the CRC64 trailer */
	int64_t now_ms;	       /* clock for rdb_kv.expired; 0: the real one */
	uint64_t max_string;   /* 0: RDB_MAX_STRING_DEFAULT */
};

struct rdb_load_stats {
	int version;			/* RDB version from the header */
	uint64_t keys;			/* string keys given to string_kv */
	uint64_t expired;		/* of those, with expired set */
	uint64_t skipped[RDB_KIND_MAX]; /* skipped keys by kind */
	uint64_t skipped_total;
	uint64_t aux_fields;
	uint64_t functions;	/* FUNCTION2 libraries skipped */
	uint64_t module_aux;	/* MODULE_AUX blocks skipped */
	uint64_t bytes;		/* bytes consumed */
	bool checksum_verified; /* a non-zero CRC64 matched */
};

/**
 * rdb_load_file() - parse a dump and call back per string key.
 * @path: the file.
 * @cb: callbacks (NULL: parse and validate only).
 * @o: options (NULL: defaults: unsupported types are errors).
 * @st: filled when not NULL (also on failure, with what was read).
 * @errbuf, @errlen: receives a one-line message on failure ("offset N: ..."),
 *                   may be NULL.
 *
 * Context: any thread; blocks on file reads; memory use is a 64 KiB buffer
 * plus the largest single string in the file.
 * Return: 0; -EBADMSG for a truncated or corrupt file (bad magic, bad
 * lengths, checksum mismatch, bytes after EOF are ignored as Redis does);
 * -ENOTSUP for a version or value type this module does not handle (the
 * message names type and key); -ENOMEM; -errno of open/read; or the value a
 * callback returned.
 */
int rdb_load_file(const char *path, const struct rdb_load_cbs *cb, const struct rdb_load_opts *o,
		  struct rdb_load_stats *st, char *errbuf, size_t errlen);

/**
 * rdb_load_fd() - rdb_load_file() on an open regular file.
 * @fd: read from its current position to its end (fstat size bounds every
 *      length); not closed.
 * @cb, @o, @st, @errbuf, @errlen: as rdb_load_file().
 *
 * Context: as rdb_load_file().
 * Return: as rdb_load_file().
 */
int rdb_load_fd(int fd, const struct rdb_load_cbs *cb, const struct rdb_load_opts *o,
		struct rdb_load_stats *st, char *errbuf, size_t errlen);

/**
 * rdb_crc64() - CRC-64/Jones as Redis uses it (reflected, polynomial
 * 0xad93d23594c935a9, initial 0, no final xor).
 * @crc: previous value (0 to start).
 * @p, @n: bytes to add.
 *
 * rdb_crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9ca.
 *
 * Context: any thread.
 * Return: the updated CRC.
 */
uint64_t rdb_crc64(uint64_t crc, const void *p, size_t n);

/*
 * DUMP and RESTORE payloads (Redis's createDumpPayload() and
 * verifyDumpPayload()): the value as an RDB object (type byte, then the
 * value in the RDB encoding, with this module's integer and LZF rules), the
 * RDB version as two bytes little-endian, then the CRC64 of every byte
 * before it, eight bytes little-endian.  Payloads are in memory: these
 * allocate, never touch a file.
 */
#define RDB_DUMP_VERSION RDB_WRITE_VERSION /* written, and the newest taken */
#define RDB_DUMP_MAX_TYPE 19		   /* Redis 7.0's last value type */

/**
 * rdb_dump_string() - the DUMP payload of a string value.
 * @val, @vlen: the value (binary safe; @vlen may be 0).
 * @compress: rdbcompression: LZF a value over 20 bytes when it saves 4.
 * @out, @outlen: receive the payload, malloc()ed; the caller frees it.
 *
 * The payload is byte for byte redis-server 7.0's for the same value.
 *
 * Context: any thread; may not block.
 * Return: 0, or -ENOMEM (nothing is returned then).
 */
int rdb_dump_string(const void *val, size_t vlen, bool compress, void **out, size_t *outlen);

/* rdb_dump_hash() - the DUMP payload of a hash (RDB_TYPE_HASH; Redis's
 * own DUMP of a small hash is a listpack, so the bytes differ, but
 * redis-server RESTOREs this one).  As rdb_dump_string() otherwise. */
int rdb_dump_hash(const struct rdb_pair *p, size_t n, bool compress, void **out, size_t *outlen);
/* rdb_dump_set() - the DUMP payload of a set (RDB_TYPE_SET, members
 * @m[i].f; Redis's own DUMP of an intset is type 11, so the bytes differ,
 * but redis-server RESTOREs this one).  As rdb_dump_string() otherwise. */
int rdb_dump_set(const struct rdb_pair *m, size_t n, bool compress, void **out, size_t *outlen);

/* rdb_dump_zset() - the DUMP payload of a sorted set (RDB_TYPE_ZSET_2;
 * Redis's own DUMP of a small one is a listpack, so the bytes differ, but
 * redis-server RESTOREs this one).  As rdb_dump_string() otherwise. */
int rdb_dump_zset(const struct rdb_zel *e, size_t n, bool compress, void **out, size_t *outlen);
/* rdb_dump_list() - the DUMP payload of a list (RDB_TYPE_LIST_QUICKLIST_2,
 * as rdb_write_list_kv() writes it).  As rdb_dump_string() otherwise. */
int rdb_dump_list(const struct rdb_pair *e, size_t n, bool compress, void **out, size_t *outlen);

/**
 * rdb_restore_string() - the string value of a DUMP payload.
 * @p, @len: the payload (binary; any bytes at all).
 * @val, @vlen: on success receive the value, malloc()ed and followed by a
 *              NUL its length does not count; the caller frees it.
 * @kind: on -ENOTSUP receives the kind of the value.
 *
 * Checked in Redis 7.0's order: shorter than its footer, an RDB version
 * over RDB_DUMP_VERSION, or a CRC64 that does not match is -EPROTO; then
 * the value is parsed from the first byte over the whole payload (footer
 * included; bytes after the value are ignored, as Redis ignores them).
 *
 * Context: any thread; may not block.  Allocates at most the payload's
 * size plus the value's (an LZF length is bounded by RDB_MAX_STRING_DEFAULT).
 * Return: 0; -EPROTO (Redis's "DUMP payload version or checksum are
 * wrong"); -EBADMSG (its "Bad data format": an unknown or module type, or a
 * value that does not parse); -ENOTSUP, a well-formed value of a type other
 * than string that Redis 7.0 would load; -ENOMEM.
 */
int rdb_restore_string(const void *p, size_t len, void **val, size_t *vlen, enum rdb_kind *kind);

/**
 * rdb_restore_value() - rdb_restore_string(), and hashes too.
 * @hash, @arg: a payload holding a hash (RDB_TYPE_HASH or _LISTPACK) is
 *   given to @hash(@arg, pairs, n) during the call (pairs valid only then);
 *   the return is then 0 with *@kind RDB_KIND_HASH and *@val NULL, or, when
 *   @hash returned an error, that error (-ENOMEM) or -EBADMSG.  NULL: as
 *   rdb_restore_string().
 * Context and other returns: as rdb_restore_string().
 */
int rdb_restore_value(const void *p, size_t len, void **val, size_t *vlen, enum rdb_kind *kind,
		      int (*hash)(void *arg, const struct rdb_pair *p, size_t n), void *arg);
/**
 * rdb_restore_typed() - rdb_restore_value(), for every collection type: a
 * payload holding one goes to its sink during the call (what it is given
 * valid only then), with *@kind its RDB_KIND_*; a NULL sink refuses that
 * type as rdb_restore_value() does.
 *   @hash: RDB_TYPE_HASH or _LISTPACK, (@arg, pairs, n);
 *   @set: RDB_TYPE_SET or _INTSET, (@arg, members in .f/.fl, n);
 *   @zset: RDB_TYPE_ZSET, _ZSET_2, _ZSET_ZIPLIST or _ZSET_LISTPACK,
 *     (@arg, elements, n, lp) with @lp as zset_kv's;
 *   @list: RDB_TYPE_LIST, _QUICKLIST or _QUICKLIST_2, (@arg, elements in
 *     order in .f/.fl, n).
 * @s may be NULL (strings only).  Context and returns: as
 * rdb_restore_value().
 */
struct rdb_restore_sinks {
	int (*hash)(void *arg, const struct rdb_pair *p, size_t n);
	int (*set)(void *arg, const struct rdb_pair *m, size_t n);
	int (*zset)(void *arg, const struct rdb_zel *e, size_t n, int lp);
	int (*list)(void *arg, const struct rdb_pair *e, size_t n);
	/* A module value: as rdb_load_cbs.module_kv (no skipping: 1 is an error). */
	int (*module)(void *arg, uint64_t id, struct rdb_module_in *in);
	void *arg;
};
int rdb_restore_typed(const void *p, size_t len, void **val, size_t *vlen, enum rdb_kind *kind,
		      const struct rdb_restore_sinks *s);


#endif /* RCUKV_SERVER_RDB_H */
