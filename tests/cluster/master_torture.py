#!/usr/bin/env python3
"""tests/cluster/master_torture.py - overlapping writes on shared keys (redis-py).

Usage: master_torture.py PORT SECONDS THREADS [noshort]
THREADS clients (each its own connection, so they land on every worker) for
SECONDS (bounded) write a small shared key space with every kind of write
the replication stream must order: INCR, APPEND, SET with and without
relative expiries, INCRBYFLOAT, HSET, HINCRBY, HINCRBYFLOAT, EXPIRE and
PEXPIRE (long ones, and short ones that expire during the run so the master
sends DEL), GETEX, DEL, MULTI/EXEC blocks, and a script.  Errors such as
WRONGTYPE are expected (a key changes type under another client) and
counted.  With "noshort", no expiry short enough to pass during the run.
Prints "ops=N errors=E" and exits 0 when N is not tiny.
"""
import random
import sys
import threading
import time

import redis

SCRIPT = "redis.call('incr', KEYS[1]); return redis.call('append', KEYS[2], ARGV[1])"


def worker(port, stop_at, seed, counts, idx, short):
    rnd = random.Random(seed)
    r = redis.Redis(host="127.0.0.1", port=port)
    ops = errs = 0
    while time.time() < stop_at:
        k = "t:%d" % rnd.randrange(60)
        k2 = "t:%d" % rnd.randrange(60)
        h = "th:%d" % rnd.randrange(15)
        op = rnd.randrange(20)
        if not short and op in (3, 9):
            op = 0
        try:
            if op == 0:
                r.incr(k)
            elif op == 1:
                r.append(k, "x%d" % rnd.randrange(10))
            elif op == 2:
                r.set(k, "v%d" % rnd.randrange(1000), ex=rnd.randrange(100, 1000))
            elif op == 3:
                r.set(k, "p", px=rnd.randrange(20, 150))  # gone before the compare
            elif op == 4:
                r.incrbyfloat(k, 0.5)
            elif op == 5:
                r.hset(h, "f%d" % rnd.randrange(5), rnd.randrange(100))
            elif op == 6:
                r.hincrby(h, "n", 3)
            elif op == 7:
                r.hincrbyfloat(h, "fl", 1.25)
            elif op == 8:
                r.expire(k, rnd.randrange(200, 2000))
            elif op == 9:
                r.pexpire(k, rnd.randrange(10, 120))
            elif op == 10:
                r.delete(k)
            elif op == 11:
                r.getex(k, ex=rnd.randrange(300, 900))
            elif op == 12:
                p = r.pipeline(transaction=True)
                p.incr(k)
                p.append(k2, "m")
                p.expire(k2, 5000)
                p.hset(h, "tx", rnd.randrange(100))
                p.execute(raise_on_error=False)
            elif op == 13:
                r.eval(SCRIPT, 2, k, k2, "s")
            elif op == 14:
                r.setex(k, rnd.randrange(100, 500), "se")
            elif op == 15:
                r.persist(k)
            elif op == 16:
                r.mset({k: "ms1", k2: "ms2"})
            elif op == 17:
                r.set(k, "nx", nx=True, px=rnd.randrange(60000, 90000))
            elif op == 18:
                r.delete(h)
            else:
                r.getdel(k)
        except redis.ResponseError:
            errs += 1
        ops += 1
    counts[idx] = (ops, errs)


def main():
    port, secs, n = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    short = not (len(sys.argv) > 4 and sys.argv[4] == "noshort")
    stop_at = time.time() + min(secs, 60)
    counts = [(0, 0)] * n
    ts = [threading.Thread(target=worker, args=(port, stop_at, 1000 + i, counts, i, short))
          for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    ops = sum(c[0] for c in counts)
    errs = sum(c[1] for c in counts)
    print("ops=%d errors=%d" % (ops, errs))
    return 0 if ops > 100 else 1


if __name__ == "__main__":
    sys.exit(main())
