#!/usr/bin/env python3
"""gen_corpus.py - write the seed corpora of the fuzz harnesses:
tests/fuzz/corpus/fuzz_resp/ and tests/fuzz/corpus/fuzz_cmd/.

Sources: the client bytes recorded from redis-cli, redis-benchmark and
hiredis by capture.py (tests/fuzz/traffic/*.bin, each cut to 4 kB), the RESP
of every command the server implements with edge-case arguments, and hostile
frames.  Each file starts with the harness header (fuzz_common.h): a flags
byte, a chunk count S and S chunk sizes.  Deterministic: run it again after
changing the lists; the corpus stays a few hundred small files."""
import glob, hashlib, os

here = os.path.dirname(os.path.abspath(__file__))


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def hdr(flags=0, chunks=()):
    return bytes([flags, len(chunks)]) + bytes(c - 1 for c in chunks)


BIG = "9223372036854775807"
SMALL = "-9223372036854775808"
COMMANDS = [
    ["PING"], ["PING", "hello"], ["PING", "a", "b"], ["ECHO", "x" * 40], ["ECHO", ""],
    ["QUIT"], ["HELLO"], ["HELLO", "3"], ["HELLO", "2"], ["HELLO", "4"], ["HELLO", "x"],
    ["HELLO", "3", "AUTH", "default", "pw", "SETNAME", "me"], ["HELLO", "3", "AUTH", "bob", "pw"],
    ["HELLO", "2", "SETNAME", "bad name"], ["HELLO", "3", "BOGUS"],
    ["AUTH", "pw"], ["AUTH", "default", "pw"], ["AUTH", "a", "b", "c"],
    ["SELECT", "0"], ["SELECT", "1"], ["SELECT", "x"], ["SELECT", "99999999999"], ["TIME"],
    ["INFO"], ["INFO", "all"], ["INFO", "keyspace", "clients", "rcu"], ["INFO", "everything"],
    ["SHUTDOWN", "ABORT"], ["SHUTDOWN", "NOSAVE", "SAVE"], ["SHUTDOWN", "bogus"],
    ["CLIENT"], ["CLIENT", "ID"], ["CLIENT", "SETNAME", "n" * 20], ["CLIENT", "SETNAME", "a b"],
    ["CLIENT", "SETNAME", ""], ["CLIENT", "GETNAME"], ["CLIENT", "LIST"],
    ["CLIENT", "LIST", "TYPE", "normal"], ["CLIENT", "LIST", "TYPE", "pubsub"],
    ["CLIENT", "LIST", "ID", "1", "2"], ["CLIENT", "LIST", "ID", "0"], ["CLIENT", "INFO"],
    ["CLIENT", "KILL", "127.0.0.1:1"], ["CLIENT", "KILL", "ID", "1", "SKIPME", "no"],
    ["CLIENT", "KILL", "ADDR", "x", "LADDR", "y", "TYPE", "normal", "USER", "default", "MAXAGE", "0"],
    ["CLIENT", "KILL", "ID"], ["CLIENT", "HELP"], ["CLIENT", "BOGUS"],
    ["CONFIG", "GET", "*"], ["CONFIG", "GET", "maxclients", "port", "[a-z]*"],
    ["CONFIG", "SET", "maxclients", "100"], ["CONFIG", "SET", "timeout", "-1"],
    ["CONFIG", "SET", "port", "1"], ["CONFIG", "SET", "loglevel", "debug"],
    ["CONFIG", "SET", "proto-max-bulk-len", "1mb", "hz", "20"],
    ["CONFIG", "SET", "hz", "1", "hz", "2"], ["CONFIG", "SET", "save", ""],
    ["CONFIG", "SET", "client-output-buffer-pause", "16kb"], ["CONFIG", "SET", "a"],
    ["CONFIG", "RESETSTAT"], ["CONFIG", "HELP"],
    ["COMMAND"], ["COMMAND", "COUNT"], ["COMMAND", "LIST"], ["COMMAND", "INFO", "get", "client|list", "nosuch"],
    ["COMMAND", "DOCS"], ["COMMAND", "DOCS", "set", "config|get", "x|y"], ["COMMAND", "HELP"],
    ["COMMAND", "BOGUS"],
    ["SET", "k", "v"], ["SET", "k", "v", "NX"], ["SET", "k", "v", "XX", "GET"],
    ["SET", "k", "v", "EX", "10"], ["SET", "k", "v", "PX", "0"], ["SET", "k", "v", "EX", BIG],
    ["SET", "k", "v", "EXAT", "1"], ["SET", "k", "v", "PXAT", BIG], ["SET", "k", "v", "KEEPTTL"],
    ["SET", "k", "v", "EX", "10", "PX", "10"], ["SET", "k", "v", "NX", "XX"], ["SET", "k", "v", "EX"],
    ["GET", "k"], ["GET", ""], ["SETNX", "k", "v"], ["SETEX", "k", "10", "v"], ["SETEX", "k", "0", "v"],
    ["PSETEX", "k", "-5", "v"], ["GETSET", "k", "v2"], ["GETDEL", "k"], ["GETEX", "k", "EX", "5"],
    ["GETEX", "k", "PERSIST"], ["GETEX", "k", "PXAT", "1"], ["GETEX", "k", "EX", "1", "PERSIST"],
    ["MGET", "a", "b", "c"], ["MSET", "a", "1", "b", "2"], ["MSET", "a"], ["MSETNX", "a", "1", "z", "2"],
    ["DEL", "a", "b", "a"], ["UNLINK", "a"], ["EXISTS", "a", "a", "b"],
    ["INCR", "n"], ["DECR", "n"], ["INCRBY", "n", BIG], ["DECRBY", "n", SMALL], ["INCRBY", "n", "x"],
    ["INCRBYFLOAT", "f", "1.5"], ["INCRBYFLOAT", "f", "1e308"], ["INCRBYFLOAT", "f", "inf"],
    ["INCRBYFLOAT", "f", "-0"], ["INCRBYFLOAT", "f", "nan"], ["INCRBYFLOAT", "f", "0x10"],
    ["APPEND", "s", "abc"], ["STRLEN", "s"], ["GETRANGE", "s", "0", "-1"], ["GETRANGE", "s", SMALL, BIG],
    ["GETRANGE", "s", "-1", "-5"], ["SETRANGE", "s", "3", "zz"], ["SETRANGE", "s", "1048575", "x"],
    ["SETRANGE", "s", "-1", "x"], ["SETRANGE", "s", BIG, "x"], ["SETRANGE", "s", "10", ""],
    ["EXPIRE", "k", "100"], ["EXPIRE", "k", "100", "NX"], ["EXPIRE", "k", "100", "XX", "GT"],
    ["EXPIRE", "k", "-1"], ["EXPIRE", "k", BIG], ["PEXPIRE", "k", SMALL], ["EXPIREAT", "k", "1"],
    ["PEXPIREAT", "k", BIG, "LT"], ["EXPIRE", "k", "1", "NX", "XX"], ["TTL", "k"], ["PTTL", "k"],
    ["EXPIRETIME", "k"], ["PEXPIRETIME", "k"], ["PERSIST", "k"], ["TYPE", "k"], ["TYPE", "nosuch"],
    ["RENAME", "k", "k2"], ["RENAME", "nosuch", "x"], ["RENAME", "k", "k"], ["RENAMENX", "k", "k2"],
    ["COPY", "k", "k3"], ["COPY", "k", "k3", "REPLACE"], ["COPY", "k", "k3", "DB", "0"],
    ["COPY", "k", "k3", "DB", "1"], ["KEYS", "*"], ["KEYS", "k?[a-z]\\*"], ["KEYS", "[^"],
    ["KEYS", "*" * 50 + "x"], ["SCAN", "0"], ["SCAN", "0", "COUNT", "1", "MATCH", "k*"],
    ["SCAN", "-1"], ["SCAN", "18446744073709551616"], ["SCAN", "0", "TYPE", "list"],
    ["SCAN", "0", "COUNT", "0"], ["SCAN", "0", "COUNT", BIG], ["RANDOMKEY"], ["DBSIZE"],
    ["FLUSHDB"], ["FLUSHALL", "ASYNC"], ["FLUSHALL", "SYNC"], ["FLUSHALL", "x"],
    ["NOSUCHCOMMAND", "a", "b"], ["get"], ["GeT", "k", "extra"],
]
# Sequences: state that later commands act on.
SEQUENCES = [
    [["SET", "a", "10"], ["INCR", "a"], ["APPEND", "a", "5"], ["GET", "a"], ["DEL", "a"]],
    [["SET", "f", "3.0"], ["INCRBYFLOAT", "f", "0.1"], ["SET", "n", BIG], ["INCR", "n"]],
    [["MSET", "a", "1", "b", "2", "c", "3"], ["KEYS", "*"], ["SCAN", "0", "COUNT", "2"], ["RENAME", "a", "z"],
     ["COPY", "z", "b"], ["COPY", "z", "b", "REPLACE"], ["MGET", "a", "b", "z"], ["DBSIZE"], ["FLUSHALL"]],
    [["SET", "t", "v", "PX", "1"], ["PTTL", "t"], ["EXPIRE", "t", "-1"], ["GET", "t"], ["EXISTS", "t"]],
    [["HELLO", "3"], ["GET", "nosuch"], ["CONFIG", "GET", "port"], ["CLIENT", "LIST"], ["CLIENT", "INFO"],
     ["COMMAND", "DOCS", "get"], ["INCRBYFLOAT", "f", "inf"], ["HELLO", "2"], ["GET", "nosuch"]],
    [["CLIENT", "SETNAME", "x" * 1000], ["CLIENT", "INFO"], ["CLIENT", "LIST"]],
    [["SETRANGE", "big", "60000", "x"], ["GETRANGE", "big", "0", "-1"], ["STRLEN", "big"]],
    [["SET", "k", "v"], ["GETEX", "k", "EX", "100"], ["TTL", "k"], ["PERSIST", "k"], ["TTL", "k"]],
    [["SELECT", "3"], ["SET", "k", "v", "PX", "100000"], ["MOVE", "k", "0"], ["MOVE", "k", "3"],
     ["COPY", "k", "k", "DB", "15"], ["SWAPDB", "0", "3"], ["SWAPDB", "x", "16"], ["WATCH", "k"],
     ["MULTI"], ["SELECT", "15"], ["MOVE", "k", "3"], ["SWAPDB", "15", "0"], ["GET", "k"], ["EXEC"],
     ["INFO", "keyspace"], ["CLIENT", "INFO"], ["FLUSHDB", "ASYNC"], ["DBSIZE"], ["SELECT", "16"]],
    [["HSET", "h", "a", "1", "b", "2"], ["HSET", "h", "a"], ["HGET", "h", "a"], ["HMGET", "h", "a", "x"],
     ["HGETALL", "h"], ["HKEYS", "h"], ["HVALS", "h"], ["HLEN", "h"], ["HSTRLEN", "h", "b"],
     ["HEXISTS", "h", "a"], ["HSETNX", "h", "c", "3"], ["HINCRBY", "h", "a", BIG], ["HINCRBY", "h", "c", "x"],
     ["HINCRBYFLOAT", "h", "f", "1e308"], ["HINCRBYFLOAT", "h", "f", "1e308"], ["HRANDFIELD", "h"],
     ["HRANDFIELD", "h", SMALL, "WITHVALUES"], ["HRANDFIELD", "h", "-5", "WITHVALUES"], ["HSCAN", "h", "0"],
     ["HSCAN", "h", "0", "MATCH", "*a*", "COUNT", "1"], ["GET", "h"], ["APPEND", "h", "x"], ["TYPE", "h"],
     ["OBJECT", "ENCODING", "h"], ["HSET", "h", "x" * 100, "y"], ["OBJECT", "ENCODING", "h"],
     ["HSCAN", "h", "0", "COUNT", "1"], ["RENAME", "h", "h2"], ["COPY", "h2", "h3"], ["DUMP", "h3"],
     ["HDEL", "h3", "a", "b", "c", "f", "x" * 100], ["EXISTS", "h3"], ["SET", "h2", "s"], ["HGET", "h2", "a"]],
    [["SADD", "s", "3", "1", "2"], ["SADD", "s", "01", BIG, SMALL], ["SMEMBERS", "s"], ["SCARD", "s"],
     ["SISMEMBER", "s", "1"], ["SMISMEMBER", "s", "1", "x"], ["OBJECT", "ENCODING", "s"], ["SADD", "t", "2", "9"],
     ["SINTER", "s", "t"], ["SINTERCARD", "2", "s", "t", "LIMIT", "1"], ["SINTERCARD", BIG, "s"],
     ["SUNION", "s", "t", "nosuch"], ["SDIFF", "s", "t"], ["SINTERSTORE", "d", "s", "t"],
     ["SUNIONSTORE", "d", "s", "t"], ["SDIFFSTORE", "d", "t", "s"], ["SMOVE", "s", "t", "3"],
     ["SMOVE", "s", "s", "1"], ["SRANDMEMBER", "s", SMALL], ["SRANDMEMBER", "s", "-5"], ["SPOP", "t", "1"],
     ["SPOP", "s", BIG], ["SSCAN", "d", "0", "MATCH", "*", "COUNT", "1"], ["CONFIG", "SET",
     "set-max-intset-entries", "1"], ["SADD", "i", "1", "2"], ["OBJECT", "ENCODING", "i"], ["DUMP", "i"],
     ["SREM", "i", "1", "2"], ["EXISTS", "i"], ["SET", "d", "x"], ["SADD", "d", "y"], ["SINTER", "d"]],
    [["ZADD", "z", "1", "a", "2.5", "b", "-inf", "c"], ["ZADD", "z", "NX", "XX", "1", "a"],
     ["ZADD", "z", "GT", "CH", "INCR", "1", "a"], ["ZADD", "z", "INCR", "inf", "c"], ["ZADD", "z", "nan", "x"],
     ["ZINCRBY", "z", "1e308", "b"], ["ZINCRBY", "z", "1e308", "b"], ["ZSCORE", "z", "a"],
     ["ZMSCORE", "z", "a", "x"], ["ZRANK", "z", "b"], ["ZREVRANK", "z", "b"], ["ZCARD", "z"],
     ["ZCOUNT", "z", "(1", "+inf"], ["ZLEXCOUNT", "z", "[a", "(c"], ["ZRANGE", "z", "0", "-1", "WITHSCORES"],
     ["ZRANGE", "z", "+inf", "(1", "BYSCORE", "REV", "LIMIT", "0", BIG], ["ZRANGE", "z", "-", "+", "BYLEX", "LIMIT", SMALL, "1"],
     ["ZRANGEBYSCORE", "z", "-inf", "inf", "WITHSCORES", "LIMIT", "1", "-1"], ["ZREVRANGEBYLEX", "z", "+", "-"],
     ["ZRANGESTORE", "d", "z", "0", BIG], ["ZUNIONSTORE", "u", "2", "z", "d", "WEIGHTS", "2", "inf", "AGGREGATE", "MIN"],
     ["ZINTER", "2", "z", "u", "WITHSCORES"], ["ZDIFF", "2", "z", "nokey"], ["ZINTERCARD", "2", "z", "u", "LIMIT", "1"],
     ["ZUNION", BIG, "z"], ["ZRANDMEMBER", "z", SMALL, "WITHSCORES"], ["ZRANDMEMBER", "z", "-5", "WITHSCORES"],
     ["ZSCAN", "z", "0", "MATCH", "*a*", "COUNT", "1"], ["ZADD", "z", "1", "x" * 100], ["OBJECT", "ENCODING", "z"],
     ["ZSCAN", "z", "0", "COUNT", "1"], ["ZPOPMIN", "z", "2"], ["ZPOPMAX", "z"], ["ZMPOP", "2", "nokey", "z", "MAX", "COUNT", "9"],
     ["ZREMRANGEBYRANK", "u", "0", "0"], ["ZREMRANGEBYSCORE", "u", "-inf", "(0"], ["ZREMRANGEBYLEX", "u", "-", "+"],
     ["DUMP", "d"], ["GET", "d"], ["TYPE", "d"], ["ZREM", "d", "a", "b", "c"], ["EXISTS", "d"]],
    [["RPUSH", "l", "a", "b", "c"], ["LPUSH", "l", "x" * 9000], ["LRANGE", "l", "0", "-1"], ["LINDEX", "l", "-1"],
     ["LSET", "l", "1", "y"], ["LINSERT", "l", "BEFORE", "y", "z"], ["LREM", "l", "-1", "a"], ["LPOS", "l", "c", "RANK", "-1"],
     ["LTRIM", "l", "1", "-1"], ["LMOVE", "l", "l2", "LEFT", "RIGHT"], ["RPOPLPUSH", "l", "l2"], ["LMPOP", "2", "x", "l2", "LEFT", "COUNT", BIG],
     ["BLPOP", "l", "0"], ["BLMPOP", "0.1", "1", "l", "RIGHT"], ["MULTI"], ["BRPOP", "nosuch", "0"], ["EXEC"],
     ["LPOP", "l", SMALL], ["RPOP", "l", "-1"], ["COPY", "l2", "l3"], ["DUMP", "l3"], ["TYPE", "l3"], ["GET", "l3"],
     ["CLIENT", "UNBLOCK", "1"], ["BLPOP", "nosuch", "0"]],
]
HOSTILE = [
    b"*-1\r\n", b"*0\r\n", b"*2147483647\r\n", b"*2147483648\r\n", b"*1\r\n$-1\r\n", b"*1\r\n$536870913\r\n",
    b"*1\r\n$536870912\r\n", b"*1\r\n$4\r\nPINGxx", b"*1\r\n$40000\r\n" + b"a" * 100,
    b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n:1\r\n", b"*1\r\n$01\r\nx\r\n", b"*+1\r\n$1\r\nx\r\n",
    b"*1\r\n$ 1\r\nx\r\n", b"*1\r$4\rPING\r", b"*1\n$4\nPING\n", b"*\r\n", b"$4\r\nPING\r\n",
    b"*99999999999999999999\r\n", b"*1\r\n$9223372036854775807\r\n", b"\r\n\r\n\n\n",
    b"PING\r\n" * 20, b"PING\n", b"   \t PING  \r\n", b'SET "a\\x41\\n" \'b\\\'c\'\r\n', b'SET "a"b\r\n',
    b"SET 'a\r\n", b'GET "\\x4\r\n', b"\x00\x01\x02\xff\r\n", b"*2\r\n$4\r\nECHO\r\n$3\r\n\x00\r\n\r\n",
    b"*1\r\n$4\r\nPING\r\n" + b"*2\r\n$4\r\nECHO", b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nv",
    b"*1\r\n" + b"$1\r\n" * 3, b"*" + b"9" * 200, b"a" * 3000, b"*1\r\n$" + b"1" * 300 + b"\r\n",
    b"*4\r\n$6\r\nCLIENT\r\n$4\r\nKILL\r\n$4\r\nTYPE\r\n$6\r\nnormal\r\n",
    b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*1\r\n$4\r\nQUIT\r\n*1\r\n$4\r\nPING\r\n",
]


def write(d, name, data):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    resp_dir = os.path.join(here, "corpus", "fuzz_resp")
    cmd_dir = os.path.join(here, "corpus", "fuzz_cmd")
    for d in (resp_dir, cmd_dir):
        os.makedirs(d, exist_ok=True)
        for f in glob.glob(os.path.join(d, "*")):
            os.remove(f)
    traffic = sorted(glob.glob(os.path.join(here, "traffic", "*.bin")))
    chunkings = [(), (1,), (3, 7, 1), (200,), (16, 256)]
    n = 0
    for i, t in enumerate(traffic):
        data = open(t, "rb").read()[:4096]
        write(cmd_dir, "traffic-%02d" % i, hdr() + data)
        write(resp_dir, "traffic-%02d" % i, hdr((i % 4) << 1 | (i & 1), chunkings[i % 5]) + data)
    for i, c in enumerate(COMMANDS):
        write(cmd_dir, "cmd-%03d" % i, hdr(i % 7 == 3) + resp(*c))
        n += 1
    for i, s in enumerate(SEQUENCES):
        data = b"".join(resp(*c) for c in s)
        write(cmd_dir, "seq-%02d" % i, hdr() + data)
        write(cmd_dir, "seq-%02d-chunks" % i, hdr(0, (5, 11)) + data)
    # Inline forms of a few commands, as telnet users type them.
    inline = b"SET k v\r\nGET k\r\nINCR n\nKEYS *\r\nCLIENT LIST\r\nCOMMAND COUNT\r\n"
    write(cmd_dir, "inline-00", hdr() + inline)
    for i, h in enumerate(HOSTILE):
        write(cmd_dir, "hostile-%02d" % i, hdr() + h)
        write(resp_dir, "hostile-%02d" % i, hdr((i % 4) << 1, chunkings[i % 5]) + h)
    # The parser on every command's frame, in pieces.
    for i, c in enumerate(COMMANDS[::4]):
        write(resp_dir, "cmd-%03d" % i, hdr(1 if i % 3 == 0 else 0, chunkings[i % 5]) + resp(*c) * 2)
    print("fuzz_resp: %d files, fuzz_cmd: %d files" % (len(os.listdir(resp_dir)), len(os.listdir(cmd_dir))))


if __name__ == "__main__":
    main()
