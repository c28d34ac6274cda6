#!/usr/bin/env python3
"""tests/server/test_set_diff.py - rcukv-server against redis-server 7.0.15,
side by side, under random set commands (issue 17, sets): SADD SREM SMOVE
the STORE forms, SPOP of the whole set, SMEMBERS SINTER SUNION SDIFF SCARD
SISMEMBER SMISMEMBER SINTERCARD SRANDMEMBER SSCAN, and OBJECT ENCODING after
them, over four keys (and a string, for WRONGTYPE) whose members are small
integers, non-canonical integers ("01", "+1", "-0") and strings, with
set-max-intset-entries 6 so the sets cross it all the time.  Every reply
must be Redis's: byte for byte where Redis fixes the order (an intset's
members, counts, errors, encodings), as a sorted multiset where it does not
(hashtable sets).  Usage: test_set_diff.py RCUKV_PORT REDIS_PORT [STEPS]
(default 3000 a seed, seeds 1 to 4).  Ends with "N passed, M failed"."""
import random
import sys
import redis
import pycheck
from pycheck import check

KEYS = ["k1", "k2", "k3", "k4", "str"]
INTS = [str(i) for i in range(-3, 12)] + ["01", "+1", "-0"]
STRS = ["a", "b", "c", "", "xxx"]
UNORDERED = {"SMEMBERS", "SINTER", "SUNION", "SDIFF", "SRANDMEMBER", "SPOP", "SSCAN"}
ONE_KEY = {"SMEMBERS", "SRANDMEMBER", "SPOP", "SSCAN"}


def conn(port):
    r = redis.Redis(host="127.0.0.1", port=port)
    r.response_callbacks.clear()
    return r


def run(a, b, seed, steps):
    rnd = random.Random(seed)
    for r in (a, b):
        r.execute_command("FLUSHALL")
        r.execute_command("CONFIG", "SET", "set-max-intset-entries", "6")
        r.execute_command("SET", "str", "v")

    def mem():
        return rnd.choice(INTS if rnd.random() < 0.8 else STRS)

    def key():
        return rnd.choice(KEYS[:4] if rnd.random() < 0.95 else KEYS)

    def some(f, lo, hi):
        return [f() for _ in range(rnd.randint(lo, hi))]

    makers = [
        lambda: ["SADD", key()] + some(mem, 1, 4),
        lambda: ["SREM", key()] + some(mem, 1, 4),
        lambda: ["SMOVE", key(), key(), mem()],
        lambda: ["SINTERSTORE", key()] + some(key, 1, 3),
        lambda: ["SUNIONSTORE", key()] + some(key, 1, 3),
        lambda: ["SDIFFSTORE", key()] + some(key, 1, 3),
        lambda: ["SPOP", key(), "100"],
        lambda: ["SMEMBERS", key()],
        lambda: ["SINTER"] + some(key, 1, 3),
        lambda: ["SUNION"] + some(key, 1, 3),
        lambda: ["SDIFF"] + some(key, 1, 3),
        lambda: ["SCARD", key()],
        lambda: ["SISMEMBER", key(), mem()],
        lambda: ["SMISMEMBER", key(), mem(), mem()],
        lambda: ["SINTERCARD", "2", key(), key(), "LIMIT", str(rnd.randint(0, 3))],
        lambda: ["OBJECT", "ENCODING", key()],
        lambda: ["SRANDMEMBER", key(), "100"],
        lambda: ["SSCAN", key(), "0", "COUNT", "100"],
    ]
    bad = 0
    encs = set()
    for step in range(steps):
        cmd = rnd.choice(makers)()
        # a one-key read of an intset replies in its order; SINTER, SUNION
        # and SDIFF are compared as multisets (their order follows the
        # result's encoding, or the smallest set's)
        ordered = cmd[0] not in UNORDERED or \
            (cmd[0] in ONE_KEY and b.execute_command("OBJECT", "ENCODING", cmd[1]) == b"intset")
        out = []
        for r in (a, b):
            try:
                out.append(r.execute_command(*cmd))
            except redis.ResponseError as e:
                out.append("ERR " + str(e))
        if not ordered:
            out = [[x[0], sorted(x[1])] if cmd[0] == "SSCAN" and isinstance(x, list)
                   else sorted(x) if isinstance(x, list) else x for x in out]
        if cmd[0] == "OBJECT":
            encs.add(out[1])
        if out[0] != out[1]:
            bad += 1
            if bad <= 5:
                print("# seed %d step %d %s\n#   rcukv %r\n#   redis %r" % (seed, step, cmd, out[0], out[1]))
    check(bad == 0, "seed %d: %d of %d replies differ from redis-server's" % (seed, bad, steps))
    check({b"intset", b"hashtable"} <= encs,
          "seed %d: both encodings seen (%s)" % (seed, sorted(map(repr, encs))))
    for r in (a, b):
        r.execute_command("CONFIG", "SET", "set-max-intset-entries", "512")
        r.execute_command("FLUSHALL")


def main():
    a, b = conn(int(sys.argv[1])), conn(int(sys.argv[2]))
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    for seed in range(1, 5):
        run(a, b, seed, steps)
    pycheck.done()


if __name__ == "__main__":
    main()
