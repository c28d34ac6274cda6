#!/usr/bin/env python3
"""tests/server/test_list_block.py - blocking list pops with real clients
(raw RESP over sockets, so the reply bytes are checked as sent).

Usage: test_list_block.py PORT [rcukv]

  cross    a client blocked in BLPOP is woken by RPUSH from another client; on
           rcukv-server --threads 2 the two connections sit on different
           workers (accepted one after the other, both open: the least loaded
           worker takes each, net.c)
  fifo     three clients blocked on one key are served in the order they
           blocked, by one RPUSH of three elements
  timeout  BLPOP/BRPOP/BLMPOP/BLMOVE time out with nil (RESP2 *-1, RESP3 _)
  close    a client that disconnects while blocked is forgotten: the next
           push stays in the list
  unblock  CLIENT UNBLOCK (TIMEOUT, ERROR) and the 'b' flag of CLIENT LIST,
           INFO blocked_clients
  move     BLMOVE and BLMPOP woken by a push
  notify   the keyspace events of every list write, as Redis names them
Ends with "N passed, M failed"."""
import socket
import sys
import threading
import time

import pycheck
from pycheck import check

PORT = int(sys.argv[1])


class Conn:
    def __init__(self):
        self.s = socket.create_connection(("127.0.0.1", PORT))
        self.s.settimeout(10)
        self.buf = b""

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.s.sendall(out)

    def _line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(65536)
            if not d:
                raise EOFError
            self.buf += d
        i = self.buf.index(b"\r\n")
        line, self.buf = self.buf[:i + 2], self.buf[i + 2:]
        return line

    def _need(self, n):
        while len(self.buf) < n:
            d = self.s.recv(65536)
            if not d:
                raise EOFError
            self.buf += d
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def raw(self):
        """One whole reply, as its bytes."""
        line = self._line()
        t = line[:1]
        if t in b"+-:_#,(":
            return line
        n = int(line[1:-2])
        if t in b"$=!":
            return line if n < 0 else line + self._need(n + 2)
        if n < 0:
            return line
        if t == b"%":
            n *= 2
        return line + b"".join(self.raw() for _ in range(n))

    def cmd(self, *args):
        self.send(*args)
        return self.raw()

    def close(self):
        self.s.close()


def bulk(s):
    return b"$%d\r\n%s\r\n" % (len(s), s)


def arr(*items):
    return b"*%d\r\n" % len(items) + b"".join(items)


def blocked_count(c):
    info = c.cmd("INFO", "clients").decode()
    for line in info.split("\r\n"):
        if line.startswith("blocked_clients:"):
            return int(line.split(":")[1])
    return -1


def wait_blocked(c, n, secs=5):
    end = time.time() + secs
    while time.time() < end:
        if blocked_count(c) == n:
            return True
        time.sleep(0.01)
    return False


def info_field(c, name):
    for line in c.cmd("INFO", "clients").decode().split("\r\n"):
        if line.startswith(name + ":"):
            return int(line.split(":")[1])
    return -1


def test_cross():
    a, b = Conn(), Conn()
    a.cmd("DEL", "q")
    a.send("BLPOP", "q", "5")
    check(wait_blocked(b, 1), "cross: the BLPOP client is blocked")
    check(info_field(b, "clients_in_timeout_table") == 1, "cross: in the timeout table")
    t0 = time.time()
    check(b.cmd("RPUSH", "q", "x") == b":1\r\n", "cross: RPUSH from the other connection")
    r = a.raw()
    check(r == arr(bulk(b"q"), bulk(b"x")), "cross: woken with [q, x] (%r)" % r)
    check(time.time() - t0 < 2, "cross: woken at once")
    check(b.cmd("LLEN", "q") == b":0\r\n", "cross: the element was taken")
    check(blocked_count(b) == 0, "cross: no client blocked afterwards")
    check(info_field(b, "clients_in_timeout_table") == 0, "cross: out of the timeout table")
    a.close()
    b.close()


def test_fifo():
    p = Conn()
    p.cmd("DEL", "fq")
    cs = []
    for i in range(3):
        c = Conn()
        c.send("BRPOP", "other", "fq", "10")
        check(wait_blocked(p, i + 1), "fifo: client %d blocked" % i)
        cs.append(c)
    check(p.cmd("RPUSH", "fq", "a", "b", "c") == b":3\r\n", "fifo: RPUSH a b c")
    got = [c.raw() for c in cs]
    want = [arr(bulk(b"fq"), bulk(x)) for x in (b"c", b"b", b"a")]
    check(got == want, "fifo: served in blocking order, BRPOP from the tail (%r)" % got)
    check(p.cmd("EXISTS", "fq") == b":0\r\n", "fifo: the list is gone")
    for c in cs:
        c.close()
    p.close()


def test_timeout():
    c = Conn()
    c.cmd("DEL", "nokey")
    for args in (("BLPOP", "nokey", "0.2"), ("BRPOP", "nokey", "nokey2", "0.2"),
                 ("BLMPOP", "0.2", "1", "nokey", "LEFT"),
                 ("BLMOVE", "nokey", "dst", "LEFT", "LEFT", "0.2"),
                 ("BRPOPLPUSH", "nokey", "dst", "0.2")):
        t0 = time.time()
        r = c.cmd(*args)
        dt = time.time() - t0
        check(r == b"*-1\r\n", "timeout: %s answers *-1 (%r)" % (args[0], r))
        check(0.15 < dt < 3, "timeout: %s after %.2f s" % (args[0], dt))
    c.cmd("HELLO", "3")
    r = c.cmd("BLPOP", "nokey", "0.1")
    check(r == b"_\r\n", "timeout: RESP3 BLPOP answers _ (%r)" % r)
    r = c.cmd("BLMOVE", "nokey", "dst", "LEFT", "LEFT", "0.1")
    check(r == b"_\r\n", "timeout: RESP3 BLMOVE answers _ (%r)" % r)
    check(c.cmd("PING") == b"+PONG\r\n", "timeout: the connection goes on")
    c.close()


def test_close():
    a, b = Conn(), Conn()
    a.cmd("DEL", "cq")
    a.send("BLPOP", "cq", "0")
    check(wait_blocked(b, 1), "close: blocked")
    check(info_field(b, "clients_in_timeout_table") == 0, "close: no timeout, not in the table")
    a.close()
    check(wait_blocked(b, 0), "close: forgotten after the disconnect")
    check(b.cmd("RPUSH", "cq", "x") == b":1\r\n", "close: push after")
    time.sleep(0.2)
    check(b.cmd("LLEN", "cq") == b":1\r\n", "close: nobody took the element")
    b.cmd("DEL", "cq")
    b.close()


def test_unblock():
    a, b = Conn(), Conn()
    aid = int(a.cmd("CLIENT", "ID")[1:-2])
    a.send("BLPOP", "uq", "0")
    check(wait_blocked(b, 1), "unblock: blocked")
    cl = b.cmd("CLIENT", "LIST", "ID", str(aid)).decode()
    check(" flags=b " in cl, "unblock: CLIENT LIST shows flag b (%s)" % cl.strip())
    check(b.cmd("CLIENT", "UNBLOCK", str(aid)) == b":1\r\n", "unblock: CLIENT UNBLOCK answers 1")
    r = a.raw()
    check(r == b"*-1\r\n", "unblock: the client answers nil (%r)" % r)
    check(b.cmd("CLIENT", "UNBLOCK", str(aid)) == b":0\r\n", "unblock: not blocked any more: 0")
    a.send("BRPOP", "uq", "0")
    check(wait_blocked(b, 1), "unblock: blocked again")
    check(b.cmd("CLIENT", "UNBLOCK", str(aid), "ERROR") == b":1\r\n", "unblock ERROR: 1")
    r = a.raw()
    check(r == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n", "unblock ERROR: %r" % r)
    check(a.cmd("PING") == b"+PONG\r\n", "unblock: the connection goes on")
    a.close()
    b.close()


def test_move():
    a, b = Conn(), Conn()
    a.cmd("DEL", "src", "dst", "m1", "m2")
    a.send("BLMOVE", "src", "dst", "RIGHT", "LEFT", "5")
    check(wait_blocked(b, 1), "move: BLMOVE blocked")
    b.cmd("RPUSH", "src", "x", "y")
    r = a.raw()
    check(r == bulk(b"y"), "move: BLMOVE got y (%r)" % r)
    check(b.cmd("LRANGE", "dst", "0", "-1") == arr(bulk(b"y")), "move: y is in dst")
    check(b.cmd("LRANGE", "src", "0", "-1") == arr(bulk(b"x")), "move: x stays in src")
    a.send("BLMPOP", "5", "2", "m1", "m2", "LEFT", "COUNT", "2")
    check(wait_blocked(b, 1), "move: BLMPOP blocked")
    b.cmd("RPUSH", "m2", "1", "2", "3")
    r = a.raw()
    check(r == arr(bulk(b"m2"), arr(bulk(b"1"), bulk(b"2"))), "move: BLMPOP got m2 [1 2] (%r)" % r)
    # a push in MULTI wakes the waiter after EXEC
    a.send("BLPOP", "mq", "5")
    check(wait_blocked(b, 1), "move: BLPOP blocked before MULTI")
    b.cmd("MULTI")
    b.cmd("RPUSH", "mq", "z")
    b.cmd("EXEC")
    r = a.raw()
    check(r == arr(bulk(b"mq"), bulk(b"z")), "move: woken by a push in EXEC (%r)" % r)
    # RENAME, COPY and RESTORE onto a key a client waits on wake it
    b.cmd("DEL", "rq", "rsrc")
    b.cmd("RPUSH", "rsrc", "r1")
    a.send("BLPOP", "rq", "5")
    check(wait_blocked(b, 1), "move: BLPOP rq blocked")
    b.cmd("RENAME", "rsrc", "rq")
    r = a.raw()
    check(r == arr(bulk(b"rq"), bulk(b"r1")), "move: woken by RENAME onto its key (%r)" % r)
    b.cmd("RPUSH", "rsrc", "c1")
    a.send("BRPOP", "cq", "5")
    check(wait_blocked(b, 1), "move: BRPOP cq blocked")
    b.cmd("COPY", "rsrc", "cq")
    r = a.raw()
    check(r == arr(bulk(b"cq"), bulk(b"c1")), "move: woken by COPY onto its key (%r)" % r)
    d = b.cmd("DUMP", "rsrc")
    a.send("BLPOP", "dq", "5")
    check(wait_blocked(b, 1), "move: BLPOP dq blocked")
    b.send("RESTORE", "dq", "0", d[d.index(b"\r\n") + 2:-2])
    b.raw()
    r = a.raw()
    check(r == arr(bulk(b"dq"), bulk(b"c1")), "move: woken by RESTORE onto its key (%r)" % r)
    a.send("BLPOP", "sq", "0.3")
    check(wait_blocked(b, 1), "move: BLPOP sq blocked")
    b.cmd("SET", "sq2", "x")
    b.cmd("RENAME", "sq2", "sq")
    r = a.raw()
    check(r == b"*-1\r\n", "move: a string renamed onto its key does not serve it (%r)" % r)
    a.cmd("DEL", "src", "dst", "m1", "m2", "mq", "rq", "rsrc", "cq", "dq", "sq")
    a.close()
    b.close()


def test_notify():
    a, sub = Conn(), Conn()
    old = a.cmd("CONFIG", "GET", "notify-keyspace-events")
    a.cmd("CONFIG", "SET", "notify-keyspace-events", "KEA")
    a.cmd("DEL", "n1", "n2")
    sub.send("PSUBSCRIBE", "__keyevent@0__:*")
    sub.raw()
    steps = [("RPUSH", "n1", "a", "b", "c"), ("LPUSH", "n1", "z"), ("LPUSHX", "n1", "y"),
             ("RPUSHX", "nokey", "x"), ("LPOP", "n1"), ("RPOP", "n1", "1"),
             ("LINSERT", "n1", "BEFORE", "a", "q"), ("LINSERT", "n1", "BEFORE", "nosuch", "q"),
             ("LSET", "n1", "0", "s"), ("LREM", "n1", "0", "q"), ("LREM", "n1", "0", "nosuch"),
             ("LTRIM", "n1", "0", "-1"), ("LMOVE", "n1", "n2", "LEFT", "RIGHT"),
             ("RPOPLPUSH", "n1", "n2"), ("LMPOP", "1", "n2", "LEFT", "COUNT", "5"),
             ("RPUSH", "n1", "x"), ("LTRIM", "n1", "1", "0"), ("RPUSH", "n1", "x", "y"),
             ("LREM", "n1", "0", "x"), ("LREM", "n1", "0", "y"), ("DEL", "n1")]
    for st in steps:
        a.cmd(*st)
    a.cmd("PUBLISH", "__keyevent@0__:zzend", "n1")  # the end marker
    got = []
    while True:
        m = sub.raw()
        parts = m.split(b"\r\n")
        # pmessage pattern channel payload: channel is parts[6], payload parts[8]
        ch, key = parts[6], parts[8]
        if ch.endswith(b":zzend"):
            break
        got.append((ch.split(b":", 1)[1].decode(), key.decode()))
    want = [("rpush", "n1"), ("lpush", "n1"), ("lpush", "n1"), ("lpop", "n1"), ("rpop", "n1"),
            ("linsert", "n1"), ("lset", "n1"), ("lrem", "n1"), ("ltrim", "n1"),
            ("rpush", "n2"), ("lpop", "n1"), ("lpush", "n2"), ("rpop", "n1"),
            ("lpop", "n2"), ("del", "n2"), ("rpush", "n1"), ("ltrim", "n1"), ("del", "n1"),
            ("rpush", "n1"), ("lrem", "n1"), ("lrem", "n1"), ("del", "n1")]
    check(got == want, "notify: the list events (%r)" % got)
    a.cmd("CONFIG", "SET", "notify-keyspace-events", old.split(b"\r\n")[4].decode())
    a.close()
    sub.close()


def main():
    test_notify()
    test_cross()
    test_fifo()
    test_timeout()
    test_close()
    test_unblock()
    test_move()
    print("%d passed, %d failed" % (pycheck.passed, pycheck.failed))
    sys.exit(1 if pycheck.failed else 0)


if __name__ == "__main__":
    main()
