#!/usr/bin/env python3
"""tests/server/test_list_rdb.py - RESTORE of list payloads in every RDB list
encoding Redis 7.0 loads, built here byte by byte (with the CRC64 of the
DUMP footer), against the server on PORT:

  type 1   the plain list: count, then element strings (one an RDB integer)
  type 14  Redis 6's quicklist: two ziplist nodes holding every ziplist
           entry encoding (6-, 14- and 32-bit string lengths, int8, int16,
           int24, int32, int64, the 0..12 immediates, a 5-byte prevlen)
  type 18  Redis 7.0's quicklist: a plain node and a listpack node with
           integer entries (7-bit, 13-bit, 16/24/32/64-bit) and strings

Each is RESTOREd and read back with LRANGE; run against redis-server too,
which proves the payloads.  Ends with "N passed, M failed"."""
import socket
import struct
import sys

import pycheck
from pycheck import check

PORT = int(sys.argv[1])

POLY = 0x95AC9329AC4BC9B5  # Jones, reflected


def _table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ POLY if c & 1 else c >> 1
        t.append(c)
    return t


TABLE = _table()


def crc64(data):
    c = 0
    for b in data:
        c = TABLE[(c ^ b) & 0xff] ^ (c >> 8)
    return c


def rlen(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xff])
    return b"\x80" + struct.pack(">I", n)


def rstr(s):
    return rlen(len(s)) + s


def payload(type_byte, body):
    p = bytes([type_byte]) + body + struct.pack("<H", 10)
    return p + struct.pack("<Q", crc64(p))


# ------------------------------------------------------------------ ziplist
def zl_entry(prevlen, enc_and_data):
    pl = bytes([prevlen]) if prevlen < 254 else b"\xfe" + struct.pack("<I", prevlen)
    return pl + enc_and_data


def zl_str(s):
    n = len(s)
    if n < 64:
        return bytes([n]) + s
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xff]) + s
    return b"\x80" + struct.pack(">I", n) + s


def zl_int(v):
    if 0 <= v <= 12:
        return bytes([0xf1 + v])
    if -128 <= v < 128:
        return b"\xfe" + struct.pack("<b", v)
    if -32768 <= v < 32768:
        return b"\xc0" + struct.pack("<h", v)
    if -(1 << 23) <= v < (1 << 23):
        return b"\xf0" + struct.pack("<i", v)[:3]
    if -(1 << 31) <= v < (1 << 31):
        return b"\xd0" + struct.pack("<i", v)
    return b"\xe0" + struct.pack("<q", v)


def ziplist(items):
    body, prev = b"", 0
    for it in items:
        e = zl_int(it) if isinstance(it, int) else zl_str(it)
        ent = zl_entry(prev, e)
        body += ent
        prev = len(ent)
    total = 10 + len(body) + 1
    tail = 10 + len(body) - prev if items else 10
    return struct.pack("<IIH", total, tail, len(items)) + body + b"\xff"


# ----------------------------------------------------------------- listpack
def lp_backlen(n):
    if n <= 127:
        return bytes([n])
    if n < 16383:
        return bytes([n >> 7, (n & 127) | 128])
    return bytes([n >> 14, ((n >> 7) & 127) | 128, (n & 127) | 128])


def lp_entry(it):
    if isinstance(it, int):
        if 0 <= it < 128:
            e = bytes([it])
        elif -4096 <= it < 4096:
            u = it & 0x1fff
            e = bytes([0xc0 | (u >> 8), u & 0xff])
        elif -32768 <= it < 32768:
            e = b"\xf1" + struct.pack("<h", it)
        elif -(1 << 23) <= it < (1 << 23):
            e = b"\xf2" + struct.pack("<i", it)[:3]
        elif -(1 << 31) <= it < (1 << 31):
            e = b"\xf3" + struct.pack("<i", it)
        else:
            e = b"\xf4" + struct.pack("<q", it)
    else:
        n = len(it)
        if n < 64:
            e = bytes([0x80 | n]) + it
        elif n < 4096:
            e = bytes([0xe0 | (n >> 8), n & 0xff]) + it
        else:
            e = b"\xf0" + struct.pack("<I", n) + it
    return e + lp_backlen(len(e))


def listpack(items):
    body = b"".join(lp_entry(i) for i in items)
    return struct.pack("<IH", 6 + len(body) + 1, len(items)) + body + b"\xff"


def text(it):
    return str(it).encode() if isinstance(it, int) else it


class Conn:
    def __init__(self):
        self.s = socket.create_connection(("127.0.0.1", PORT))
        self.f = self.s.makefile("rb")

    def cmd(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)
        return self.read()

    def read(self):
        line = self.f.readline()
        t, rest = line[:1], line[1:-2]
        if t in (b"+", b"-"):
            return rest if t == b"+" else Exception(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            d = self.f.read(n + 2)
            return d[:-2]
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise ValueError(line)


def restore_and_check(c, key, pl, want, what):
    c.cmd("DEL", key)
    r = c.cmd("RESTORE", key, "0", pl)
    check(r == b"OK", "%s: RESTORE answers OK (%r)" % (what, r))
    got = c.cmd("LRANGE", key, "0", "-1")
    check(got == [text(w) for w in want], "%s: every element in order (%r)" % (what, got))
    check(c.cmd("TYPE", key) == b"list", "%s: TYPE list" % what)


def main():
    c = Conn()
    # type 1: count, element strings; "12345" as an RDB int16 (0xc1)
    items1 = [b"a", b"", b"12345", b"x" * 100]
    body = rlen(len(items1)) + rstr(b"a") + rstr(b"") + b"\xc1" + struct.pack("<h", 12345) + \
        rstr(b"x" * 100)
    restore_and_check(c, "r:1", payload(1, body), items1, "type 1")

    # type 14: two ziplist nodes, every entry encoding
    n1 = [b"a", b"y" * 300, -5, 1000, 100000, 10 ** 9, 10 ** 15, 7, 0, 12, b"z" * 20000, b"end"]
    n2 = [b"second", -(1 << 40), 13, -129]
    body = rlen(2) + rstr(ziplist(n1)) + rstr(ziplist(n2))
    restore_and_check(c, "r:14", payload(14, body), n1 + n2, "type 14")

    # type 18: a plain node, then a packed listpack node
    lp = [5, 127, -1, 4000, -4096, 30000, -(1 << 22), 1 << 30, 1 << 40, b"s", b"q" * 100,
          b"w" * 5000]
    body = rlen(2) + rlen(1) + rstr(b"plain element") + rlen(2) + rstr(listpack(lp))
    restore_and_check(c, "r:18", payload(18, body), [b"plain element"] + lp, "type 18")

    # a corrupt ziplist is Redis's "Bad data format"
    bad = bytearray(ziplist(n2))
    bad[-1] = 0x00
    r = c.cmd("RESTORE", "r:bad", "0", payload(14, rlen(1) + rstr(bytes(bad))))
    check(isinstance(r, Exception) and "Bad data format" in str(r),
          "a corrupt ziplist: Bad data format (%r)" % r)
    check(c.cmd("EXISTS", "r:bad") == 0, "the corrupt payload created nothing")

    # DUMP of a list round-trips on the same server
    c.cmd("DEL", "r:d", "r:d2")
    c.cmd("RPUSH", "r:d", *[b"e%d" % i for i in range(3000)])
    d = c.cmd("DUMP", "r:d")
    check(c.cmd("RESTORE", "r:d2", "0", d) == b"OK", "DUMP of a 3000-element list restores")
    check(c.cmd("LRANGE", "r:d2", "0", "-1") == [b"e%d" % i for i in range(3000)],
          "the restored list is equal")
    c.cmd("DEL", "r:1", "r:14", "r:18", "r:d", "r:d2")
    print("%d passed, %d failed" % (pycheck.passed, pycheck.failed))
    sys.exit(1 if pycheck.failed else 0)


if __name__ == "__main__":
    main()
