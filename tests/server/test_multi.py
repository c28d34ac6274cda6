#!/usr/bin/env python3
"""tests/server/test_multi.py PORT - transactions as an application uses them
through redis-py (Debian's python3-redis): the default pipeline (MULTI/EXEC),
a pipeline without a transaction, errors inside a transaction, the
optimistic-locking helper r.transaction() (WATCH, retried when another
client wrote the key), and WatchError.  Runs against any server on
127.0.0.1:PORT (a redis-server 7.0 passes it too).  Ends with
"N passed, M failed"."""
import sys

import redis

from pycheck import check, done

port = int(sys.argv[1])
r = redis.Redis(host="127.0.0.1", port=port)
other = redis.Redis(host="127.0.0.1", port=port)



r.delete("t:a", "t:s", "t:n", "t:w", "t:x")

# the default pipeline is a transaction
p = r.pipeline()
res = p.set("t:a", 1).incr("t:a").get("t:a").execute()
check(res == [True, 2, b"2"], "pipeline() runs as MULTI/EXEC: %r" % (res,))

# without a transaction
p = r.pipeline(transaction=False)
res = p.set("t:n", "x").append("t:n", "y").get("t:n").execute()
check(res == [True, 2, b"xy"], "pipeline(transaction=False): %r" % (res,))

# a command failing inside EXEC: the others ran, the error comes back
p = r.pipeline()
p.set("t:s", "hello").incr("t:s").append("t:s", "!")
try:
    p.execute()
    check(False, "execute() raises the INCR error")
except redis.ResponseError as e:
    check("not an integer" in str(e), "execute() raises the INCR error: %s" % e)
check(r.get("t:s") == b"hello!", "the commands around the error ran: %r" % r.get("t:s"))
p = r.pipeline()
res = p.set("t:s", "v").incr("t:s").execute(raise_on_error=False)
check(res[0] is True and isinstance(res[1], redis.ResponseError),
      "raise_on_error=False returns the error in place: %r" % (res,))

# a command refused while queueing: EXECABORT
p = r.pipeline()
p.set("t:x", 1)
p.execute_command("NOSUCHCOMMAND")
try:
    p.execute()
    check(False, "a refused command aborts the transaction")
except redis.ResponseError as e:
    check("EXECABORT" in str(e) or "unknown command" in str(e),
          "a refused command aborts the transaction: %s" % e)
check(r.get("t:x") is None, "nothing of the aborted transaction ran")

# r.transaction(): WATCH, read, MULTI, write; retried once another client
# wrote the watched key between the read and EXEC
r.set("t:w", 10)
calls = []


def incr_by_read(pipe):
    v = int(pipe.get("t:w"))
    calls.append(v)
    if len(calls) == 1:
        other.set("t:w", 100)  # a concurrent write breaks the WATCH
    pipe.multi()
    pipe.set("t:w", v + 1)


res = r.transaction(incr_by_read, "t:w")
check(len(calls) == 2 and calls == [10, 100], "transaction() retried after the write: %r" % calls)
check(r.get("t:w") == b"101", "the retry saw the other client's value: %r" % r.get("t:w"))

# WatchError by hand
with r.pipeline() as pipe:
    pipe.watch("t:w")
    pipe.get("t:w")
    other.incr("t:w")
    pipe.multi()
    pipe.set("t:w", 0)
    try:
        pipe.execute()
        check(False, "WatchError after a write to the watched key")
    except redis.WatchError:
        check(True, "WatchError after a write to the watched key")
check(r.get("t:w") == b"102", "the aborted SET did not run: %r" % r.get("t:w"))

# UNWATCH / reset between uses: the next transaction runs
with r.pipeline() as pipe:
    pipe.watch("t:w")
    pipe.unwatch()
    other.incr("t:w")
    pipe.multi()
    pipe.incr("t:w")
    check(pipe.execute() == [104], "after UNWATCH the transaction runs")

r.delete("t:a", "t:s", "t:n", "t:w", "t:x")
done()
