#!/usr/bin/env python3
"""tests/server/zset_ziplist.py {dump|rdb} - a Redis 6 style sorted set in
RDB_TYPE_ZSET_ZIPLIST (12), written to stdout: "dump", a DUMP payload (RDB
version 9) for RESTORE; "rdb", a whole RDB file (REDIS0009) holding it as
key "zl" in db 0.  The ziplist has a string of each length class, every
integer encoding (immediate 0-12, int8, int16, int24, int32, int64), text
scores and a member longer than zset-max-listpack-value.  No redis-server 6
is at hand here: redis-server 7.0.15 RESTOREs and loads these bytes, and
tests/server/test_zset.sh checks rcukv reads them as it does."""
import struct, sys


def crc64(data):
    poly = 0x95ac9329ac4bc9b5
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
    return crc
def zl_entry(prevlen, v):
    pl = bytes([prevlen]) if prevlen < 254 else b"\xfe" + struct.pack("<I", prevlen)
    if isinstance(v, bytes):
        n = len(v)
        if n < 64: enc = bytes([n])
        elif n < 16384: enc = bytes([0x40 | (n >> 8), n & 0xff])
        else: enc = b"\x80" + struct.pack(">I", n)
        return pl + enc + v
    if 0 <= v <= 12: return pl + bytes([0xf1 + v])
    if -128 <= v <= 127: return pl + b"\xfe" + struct.pack("<b", v)
    if -32768 <= v <= 32767: return pl + b"\xc0" + struct.pack("<h", v)
    if -(1 << 23) <= v < (1 << 23): return pl + b"\xf0" + struct.pack("<i", v)[:3]
    if -(1 << 31) <= v < (1 << 31): return pl + b"\xd0" + struct.pack("<i", v)
    return pl + b"\xe0" + struct.pack("<q", v)
def ziplist(items):
    body = b""; prev = 0; tail = 10
    for it in items:
        e = zl_entry(prev, it)
        tail = 10 + len(body)
        body += e; prev = len(e)
    total = 10 + len(body) + 1
    return struct.pack("<IIH", total, tail, len(items)) + body + b"\xff"
def rdb_str(b):
    n = len(b)
    if n < 64: return bytes([n]) + b
    if n < 16384: return bytes([0x40 | (n >> 8), n & 0xff]) + b
    return b"\x80" + struct.pack(">I", n) + b
# sorted by score as a Redis 6 ziplist holds them
items = [b"big", -9007199254740993, b"i64", -(1 << 40), b"g", -2147483648, b"d", -100000, b"b", -5000,
         b"f", -3, b"z", 0, b"cc", b"2.5", b"e", 7, b"a", 12, b"k", 13, b"x" * 70, b"1e300", b"inf", b"inf"]
value = bytes([12]) + rdb_str(ziplist(items))
if sys.argv[1:] == ["rdb"]:
    out = b"REDIS0009" + b"\xfe\x00" + bytes([12]) + rdb_str(b"zl") + value[1:] + b"\xff"
else:
    out = value + bytes([9, 0])
out += struct.pack("<Q", crc64(out))
sys.stdout.buffer.write(out)
