#!/usr/bin/env python3
"""tests/server/test_zset_block.py PORT - BZPOPMIN, BZPOPMAX and BZMPOP as
clients use them (redis-py, RESP2): a client blocked on an empty sorted set
is served by a ZADD from another connection (rcukv spreads connections over
its workers), two blocked clients are served in the order they blocked,
a ZUNIONSTORE into the awaited key wakes its waiter, a timeout answers nil,
and CLIENT UNBLOCK ends a wait.  Runs against any server on 127.0.0.1:PORT
(redis-server 7.0 passes it too).  Ends with "N passed, M failed"."""
import sys
import threading
import time

import redis

from pycheck import check, done

port = int(sys.argv[1])


def conn():
    return redis.Redis(host="127.0.0.1", port=port, socket_timeout=10)


def blocked_count(r):
    return int(r.info("clients")["blocked_clients"])


def until_blocked(r, n):
    for _ in range(200):
        if blocked_count(r) >= n:
            return True
        time.sleep(0.01)
    return False


w = conn()
w.delete("bq", "bq2", "src")
out = {}


def waiter(name, *args):
    out[name] = conn().execute_command(*args)


# a waiter on one worker, served by a ZADD on another connection
t = threading.Thread(target=waiter, args=("a", "BZPOPMIN", "bq", "bq2", 5))
t.start()
check(until_blocked(w, 1), "BZPOPMIN on empty keys blocks (blocked_clients 1)")
w.zadd("bq2", {"m": 1.5})
t.join(10)
check(tuple(out.get("a") or ()) == (b"bq2", b"m", 1.5), "a ZADD on the other key serves it: %r" % (out.get("a"),))

# FIFO: the first to block is served first
t1 = threading.Thread(target=waiter, args=("f1", "BZPOPMAX", "bq", 5))
t1.start()
until_blocked(w, 1)
t2 = threading.Thread(target=waiter, args=("f2", "BZPOPMAX", "bq", 5))
t2.start()
until_blocked(w, 2)
w.zadd("bq", {"x": 1, "y": 2})
t1.join(10)
t2.join(10)
check(tuple(out.get("f1") or ()) == (b"bq", b"y", 2.0) and tuple(out.get("f2") or ()) == (b"bq", b"x", 1.0),
      "two waiters, one ZADD of two: served in the order they blocked: %r %r"
      % (out.get("f1"), out.get("f2")))

# a STORE into the awaited key wakes BZMPOP
t = threading.Thread(target=waiter, args=("s", "BZMPOP", 5, 1, "bq", "MIN", "COUNT", 5))
t.start()
until_blocked(w, 1)
w.zadd("src", {"p": 3, "q": 4})
w.zunionstore("bq", ["src"])
t.join(10)
check(out.get("s") == [b"bq", [[b"p", b"3"], [b"q", b"4"]]],
      "ZUNIONSTORE into the key serves BZMPOP: %r" % (out.get("s"),))

# timeout
t0 = time.time()
r = conn().execute_command("BZPOPMIN", "bq", 0.2)
check(r is None and time.time() - t0 >= 0.15, "BZPOPMIN with a 0.2 s timeout answers nil")

# CLIENT UNBLOCK
c = conn()
cid = c.client_id()
t = threading.Thread(target=lambda: out.__setitem__("u", c.execute_command("BZMPOP", 0, 1, "bq", "MAX")))
t.start()
until_blocked(w, 1)
check(w.execute_command("CLIENT", "UNBLOCK", cid) == 1, "CLIENT UNBLOCK of the waiter answers 1")
t.join(10)
check(out.get("u") is None and blocked_count(w) == 0, "the unblocked BZMPOP answers nil: %r" % (out.get("u"),))
w.delete("bq", "bq2", "src")
done()
