#!/usr/bin/env python3
"""tests/cluster/repl_compare.py - compare two servers key by key (redis-py).

Usage: repl_compare.py PORT_A PORT_B NDBS [PASSWORD_A]
For each of databases 0..NDBS-1: the same keys (SCAN), for each key the same
type, the same value (GET, or HGETALL for a hash) and the same expiry: PEXPIRETIME, an absolute time, so the
figures do not depend on when each server was read (both -1, or equal).
Prints one line: "keys=N dbs=D mismatches=M" followed by up to 5 examples,
and exits 0 when M is 0.
"""
import sys

import redis


def snapshot(port, db, password=None):
    r = redis.Redis(host="127.0.0.1", port=port, db=db, password=password)
    keys = sorted(r.scan_iter(count=1000))
    pipe = r.pipeline(transaction=False)
    for k in keys:
        pipe.type(k)
    types = pipe.execute()
    pipe = r.pipeline(transaction=False)
    for k, t in zip(keys, types):
        if t == b"hash":
            pipe.hgetall(k)
        else:
            pipe.get(k)
        pipe.execute_command("PEXPIRETIME", k)
    res = pipe.execute(raise_on_error=False)
    out = {}
    for i, k in enumerate(keys):
        out[k] = (types[i], res[2 * i], res[2 * i + 1])
    return out


def main():
    pa, pb, ndbs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    pw = sys.argv[4] if len(sys.argv) > 4 else None
    total, bad, examples = 0, 0, []
    for db in range(ndbs):
        a, b = snapshot(pa, db, pw), snapshot(pb, db)
        total += len(a)
        for k in sorted(set(a) | set(b)):
            va, vb = a.get(k), b.get(k)
            same = va is not None and vb is not None and va == vb
            if not same:
                bad += 1
                if len(examples) < 5:
                    examples.append("db%d %r: %r vs %r" % (db, k, va, vb))
    print("keys=%d dbs=%d mismatches=%d" % (total, ndbs, bad))
    for e in examples:
        print("  " + e)
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
