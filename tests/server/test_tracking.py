#!/usr/bin/env python3
"""tests/server/test_tracking.py PORT - client-side caching as an application
uses it through redis-py (Debian's python3-redis 4.3, RESP2): the
invalidations of CLIENT TRACKING ... REDIRECT arrive on the
__redis__:invalidate channel of a subscribed connection, and a small local
cache built on them never serves a value older than the last write it was
told about.  Several tracking clients (the server spreads connections over
its workers) redirect to one listener; BCAST with prefixes; FLUSHALL
invalidates everything (a null).  Runs against any server on
127.0.0.1:PORT (a redis-server 7.0 passes it too).  Ends with
"N passed, M failed"."""
import socket
import sys
import time

import redis

from pycheck import check, done

port = int(sys.argv[1])



def listener():
    """A raw connection subscribed to the invalidation channel, and its id."""
    conn = redis.Connection(host="127.0.0.1", port=port, socket_timeout=5)
    conn.send_command("CLIENT", "ID")
    cid = conn.read_response()
    conn.send_command("SUBSCRIBE", "__redis__:invalidate")
    conn.read_response()  # [subscribe, channel, 1]
    return conn, cid


def next_invalidation(conn):
    """The keys of the next invalidation message (None: all keys)."""
    msg = conn.read_response()
    if not (isinstance(msg, list) and msg[0] == b"message" and msg[1] == b"__redis__:invalidate"):
        raise AssertionError("not an invalidation: %r" % (msg,))
    return msg[2]


class LocalCache:
    """The application pattern: keep values locally, drop them when told."""

    def __init__(self, r, inval):
        self.r, self.inval, self.local = r, inval, {}

    def get(self, key):
        self.drain()
        if key in self.local:
            return self.local[key], True
        v = self.r.get(key)
        self.local[key] = v
        return v, False

    def drain(self):
        while self.inval.can_read(timeout=0.05):
            keys = next_invalidation(self.inval)
            if keys is None:
                self.local.clear()
            else:
                for k in keys:
                    self.local.pop(k.decode(), None)


w = redis.Redis(host="127.0.0.1", port=port)
w.flushall()

# 1. one tracking client, redirected to a listener; a local cache on top
inval, lid = listener()
r = redis.Redis(host="127.0.0.1", port=port, single_connection_client=True)
check(r.execute_command("CLIENT", "TRACKING", "on", "REDIRECT", lid) == b"OK",
      "CLIENT TRACKING on REDIRECT <listener>")
check(r.execute_command("CLIENT", "GETREDIR") == lid, "CLIENT GETREDIR names the listener")
w.set("user:1", "alice")
cache = LocalCache(r, inval)
v1, hit1 = cache.get("user:1")
v2, hit2 = cache.get("user:1")
check(v1 == b"alice" and not hit1 and hit2, "second read served from the local cache")
w.set("user:1", "bob")
keys = next_invalidation(inval)
check(keys == [b"user:1"], "a write by another client invalidates the key: %r" % (keys,))
cache.local.pop("user:1", None)  # what drain() does with it
v3, hit3 = cache.get("user:1")
check(v3 == b"bob" and not hit3, "after the invalidation the cache reads the new value")
# many writes, a read after each: never stale once the invalidation arrived
stale = 0
for i in range(200):
    w.set("user:1", "v%d" % i)
    deadline = time.time() + 5
    while True:
        v, hit = cache.get("user:1")
        if v == b"v%d" % i:
            break
        if time.time() > deadline:
            stale += 1
            break
check(stale == 0, "200 write/read rounds: the cache caught up after every write (%d stale)" % stale)

# 2. several tracking clients (spread over the workers), one listener
readers = [redis.Redis(host="127.0.0.1", port=port, single_connection_client=True)
           for _ in range(4)]
for c in readers:
    c.execute_command("CLIENT", "TRACKING", "on", "REDIRECT", lid)
    c.get("shared")
cache.drain()
w.set("shared", "x")
got = [next_invalidation(inval) for _ in readers]
check(got == [[b"shared"]] * len(readers), "every tracking client's invalidation arrives: %r" % got)

# 3. FLUSHALL: all keys (a null)
w.flushall()
nulls = 0
while inval.can_read(timeout=0.5):
    if next_invalidation(inval) is None:
        nulls += 1
check(nulls == 1 + len(readers), "FLUSHALL tells every tracking client (%d nulls)" % nulls)
for c in readers:
    c.execute_command("CLIENT", "TRACKING", "off")

# 4. BCAST with prefixes: keys under them, read or not
b = redis.Redis(host="127.0.0.1", port=port, single_connection_client=True)
b.execute_command("CLIENT", "TRACKING", "on", "REDIRECT", lid, "BCAST", "PREFIX", "obj:")
w.set("obj:7", "1")
w.set("zzz", "1")
w.set("obj:8", "1")
check(next_invalidation(inval) == [b"obj:7"] and next_invalidation(inval) == [b"obj:8"],
      "BCAST PREFIX obj: hears obj:7 and obj:8, not zzz")
info = b.execute_command("CLIENT", "TRACKINGINFO")
check(info[1] == [b"on", b"bcast"] and info[5] == [b"obj:"], "TRACKINGINFO: %r" % (info,))
b.execute_command("CLIENT", "TRACKING", "off")
r.execute_command("CLIENT", "TRACKING", "off")
check(not inval.can_read(timeout=0.3), "nothing more once tracking is off")


# 5. the REDIRECT target goes away: each invalidation becomes Redis's RESP3
# push ["tracking-redir-broken", id] to the tracking client itself (RESP2:
# nothing), and TRACKINGINFO says broken_redirect until tracking is on again
def raw_conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    return s


def raw_send(s, *args):
    out = "*%d\r\n" % len(args) + "".join("$%d\r\n%s\r\n" % (len(a), a) for a in args)
    s.sendall(out.encode())


def raw_read(s, done=None, wait=5.0):
    """What arrives until done(bytes) holds (at most @wait seconds), or with
    no done, everything within 0.3 s of quiet (to see that nothing comes)."""
    got = b""
    end = time.time() + (wait if done else 0.3)
    while not (done and done(got)):
        left = end - time.time()
        if left <= 0:
            break
        s.settimeout(left)
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        if not d:
            break
        got += d
        if not done:
            end = time.time() + 0.3
    return got


def crlf_lines(n):
    """done(): at least @n CRLF-terminated lines have arrived."""
    return lambda b: b.count(b"\r\n") >= n


def info_done(b):
    return b.endswith(b"prefixes\r\n*0\r\n")


for proto in ("3", "2"):
    gone = raw_conn()
    raw_send(gone, "CLIENT", "ID")
    gid = int(raw_read(gone, crlf_lines(1)).strip()[1:])
    t = raw_conn()
    raw_send(t, "HELLO", proto)
    raw_send(t, "CLIENT", "TRACKING", "on", "REDIRECT", str(gid))
    raw_send(t, "GET", "rb:" + proto)
    raw_send(t, "PING", "ready")
    raw_read(t, lambda b: b.endswith(b"ready\r\n"))
    gone.close()
    for _ in range(100):  # until the server has seen the close (5 s at most)
        if all(cl["id"] != str(gid) for cl in w.client_list()):
            break
        time.sleep(0.05)
    push = b">2\r\n$21\r\ntracking-redir-broken\r\n:%d\r\n" % gid
    w.set("rb:" + proto, "1")
    want = push if proto == "3" else b""
    got = raw_read(t, (lambda b: len(b) >= len(want)) if want else None)
    check(got == want, "RESP%s: a write after the REDIRECT target closed: %r" % (proto, got))
    raw_send(t, "CLIENT", "TRACKINGINFO")
    info = raw_read(t, info_done)
    check(b"$15\r\nbroken_redirect\r\n" in info, "RESP%s: TRACKINGINFO flags broken_redirect: %r" % (proto, info))
    raw_send(t, "GET", "rb:" + proto)
    raw_send(t, "PING", "ready")
    raw_read(t, lambda b: b.endswith(b"ready\r\n"))
    w.flushall()
    got = raw_read(t, (lambda b: len(b) >= len(want)) if want else None)
    check(got == want, "RESP%s: told again at the next invalidation (FLUSHALL): %r" % (proto, got))
    raw_send(t, "CLIENT", "TRACKING", "on")
    raw_send(t, "CLIENT", "TRACKINGINFO")
    info = raw_read(t, info_done)
    check(b"broken_redirect" not in info and b"\r\n$2\r\non\r\n" in info,
          "RESP%s: CLIENT TRACKING on again clears broken_redirect: %r" % (proto, info))
    t.close()
w.flushall()
done()
