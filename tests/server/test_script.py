#!/usr/bin/env python3
"""tests/server/test_script.py PORT [torture SECONDS] - Lua scripting as
applications use it through redis-py (Debian's python3-redis 4.3):
register_script (EVALSHA, then EVAL after NOSCRIPT), the distributed lock
r.lock() (acquire, release, extend, reacquire, timeout, blocking, two
threads contending), errors as ResponseError.  With "torture", instead:
processes move amounts between two declared keys by script (one of them
first bumps an undeclared counter, so its script runs in two atomic
stretches, the move wholly in the second) while readers MGET both and check that the sum never changes.
Runs against any server on 127.0.0.1:PORT (a redis-server 7.0 passes it
too).  Ends with "N passed, M failed"."""
import multiprocessing
import sys
import threading
import time

import redis

from pycheck import check, done

port = int(sys.argv[1])



def client():
    return redis.Redis(host="127.0.0.1", port=port)


MOVE = """
if ARGV[2] == 'undeclared' then redis.call('incr', 'tor:undeclared') end
local a = tonumber(redis.call('get', KEYS[1]))
local b = tonumber(redis.call('get', KEYS[2]))
local n = tonumber(ARGV[1])
redis.call('set', KEYS[1], a - n)
redis.call('set', KEYS[2], b + n)
return a + b
"""


def mover(seconds, mode, out):
    r = client()
    move = r.register_script(MOVE)
    n, i, end = 0, 0, time.time() + seconds
    while time.time() < end and n < 200000:
        i += 1
        ks = ["tor:a", "tor:b"] if i % 2 else ["tor:b", "tor:a"]
        move(keys=ks, args=[i % 7 + 1, mode])
        n += 1
    out.put(("moves", n))


def reader(seconds, total, out):
    r = client()
    n, bad, end = 0, 0, time.time() + seconds
    while time.time() < end and n < 400000:
        a, b = r.mget("tor:a", "tor:b")
        if int(a) + int(b) != total:
            bad += 1
        n += 1
    out.put(("reads", n, bad))


def torture(seconds):
    r = client()
    r.delete("tor:a", "tor:b", "tor:undeclared")
    r.mset({"tor:a": 1000000, "tor:b": 0})
    out = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=mover, args=(seconds, "declared", out)),
             multiprocessing.Process(target=mover, args=(seconds, "undeclared", out)),
             multiprocessing.Process(target=reader, args=(seconds, 1000000, out)),
             multiprocessing.Process(target=reader, args=(seconds, 1000000, out))]
    for p in procs:
        p.start()
    res = [out.get(timeout=seconds + 60) for _ in procs]
    for p in procs:
        p.join()
    moves = sum(x[1] for x in res if x[0] == "moves")
    reads = sum(x[1] for x in res if x[0] == "reads")
    bad = sum(x[2] for x in res if x[0] == "reads")
    print("# %d scripted moves, %d MGETs, %d saw a changed sum" % (moves, reads, bad))
    check(bad == 0, "no MGET saw half a script: %d of %d did" % (bad, reads))
    check(moves > 100 and reads > 100, "the torture ran: %d moves, %d reads" % (moves, reads))
    a, b = r.mget("tor:a", "tor:b")
    check(int(a) + int(b) == 1000000, "the total at the end: %s + %s" % (a, b))
    check(int(r.get("tor:undeclared") or 0) > 0, "the undeclared key was written")
    r.delete("tor:a", "tor:b", "tor:undeclared")


def api():
    r = client()
    r.delete("py:k", "py:lock")
    r.script_flush()
    # register_script: EVALSHA, NOSCRIPT, then EVAL loads it
    incr = r.register_script("return redis.call('incrby', KEYS[1], ARGV[1])")
    check(incr(keys=["py:k"], args=[5]) == 5, "register_script runs (EVAL after NOSCRIPT)")
    check(r.script_exists(incr.sha) == [True], "the script is cached after the first call")
    check(incr(keys=["py:k"], args=[2]) == 7, "register_script runs by EVALSHA")
    r.script_flush()
    check(r.script_exists(incr.sha) == [False], "SCRIPT FLUSH empties the cache")
    check(incr(keys=["py:k"], args=[1]) == 8, "NOSCRIPT after a flush falls back to EVAL")
    sha = r.script_load("return ARGV[1]")
    check(r.evalsha(sha, 0, "x") == b"x", "script_load then evalsha")
    try:
        r.evalsha("f" * 40, 0)
        check(False, "evalsha of an unknown sha raises")
    except redis.exceptions.NoScriptError:
        check(True, "evalsha of an unknown sha raises NoScriptError")
    try:
        r.eval("return redis.call('incr', KEYS[1])", 1, "py:lockless")
        r.set("py:str", "x")
        r.eval("return redis.call('incr', KEYS[1])", 1, "py:str")
        check(False, "a script error raises")
    except redis.exceptions.ResponseError as e:
        check("not an integer" in str(e), "a script error raises ResponseError: %s" % e)
    check(r.eval("return {1, 'two', {3}}", 0) == [1, b"two", [3]], "nested tables")

    # the lock
    lock = r.lock("py:lock", timeout=10)
    check(lock.acquire(blocking=False), "lock acquired")
    check(lock.locked() and lock.owned(), "locked and owned")
    other = client().lock("py:lock", timeout=10)
    check(not other.acquire(blocking=False), "a second lock is refused")
    check(lock.extend(5), "extend adds time")
    ttl = r.pttl("py:lock")
    check(10000 < ttl <= 15000, "extended TTL %d" % ttl)
    check(lock.reacquire(), "reacquire resets the timeout")
    check(r.pttl("py:lock") <= 10000, "reacquired TTL")
    lock.release()
    check(not lock.locked(), "released")
    try:
        lock.release()
        check(False, "releasing an unowned lock raises")
    except redis.exceptions.LockError:
        check(True, "releasing an unowned lock raises LockError")
    short = r.lock("py:lock", timeout=0.2)
    check(short.acquire(), "short lock acquired")
    time.sleep(0.4)
    check(not short.locked(), "the lock expired by its timeout")
    try:
        short.release()
        check(False, "release after expiry raises")
    except redis.exceptions.LockNotOwnedError:
        check(True, "release after expiry raises LockNotOwnedError")
    short = r.lock("py:lock", timeout=0.2)
    check(short.acquire(), "short lock acquired again")
    time.sleep(0.4)
    try:
        short.extend(1)
        check(False, "extend after expiry raises")
    except redis.exceptions.LockNotOwnedError:
        check(True, "extend after expiry raises LockNotOwnedError")

    # two threads contend: the counter under the lock loses no update
    counter = {"n": 0, "inside": 0, "overlap": 0}

    def work():
        c = client()
        for _ in range(30):
            with c.lock("py:lock", timeout=5, blocking_timeout=10, sleep=0.001):
                counter["inside"] += 1
                if counter["inside"] > 1:
                    counter["overlap"] += 1
                v = int(c.get("py:k") or 0)
                c.set("py:k", v + 1)
                counter["n"] += 1
                counter["inside"] -= 1

    r.set("py:k", 0)
    ts = [threading.Thread(target=work) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    check(counter["overlap"] == 0, "never two holders at once (%d overlaps)" % counter["overlap"])
    check(int(r.get("py:k")) == 60 and counter["n"] == 60,
          "no update lost under the lock: %s" % r.get("py:k"))
    # blocking with a timeout gives up
    held = r.lock("py:lock", timeout=5)
    held.acquire()
    got = client().lock("py:lock", blocking_timeout=0.3).acquire()
    check(not got, "a blocking acquire gives up after blocking_timeout")
    held.release()
    r.delete("py:k", "py:lock", "py:str", "py:lockless")


if len(sys.argv) > 2 and sys.argv[2] == "torture":
    torture(float(sys.argv[3]) if len(sys.argv) > 3 else 3)
else:
    api()
done()
