"""tests/server/test_pubsub.py - pub/sub through redis-py (Debian's
python3-redis 4.3), as an application uses it: PubSub objects on their own
connections, channel and pattern handlers, get_message(), publish() counts,
ping() while subscribed, unsubscribe().  Usage: test_pubsub.py PORT.
Prints "ok ..."/"FAIL ..." lines and "N passed, M failed"; exit 1 on a
failure.  Run by tests/server/test_pubsub.sh."""
import sys
import time

import redis

passed = failed = 0


def check(what, cond):
    global passed, failed
    if cond:
        passed += 1
        print("ok   " + what)
    else:
        failed += 1
        print("FAIL " + what)


def next_message(p, timeout=5.0):
    end = time.time() + timeout
    while time.time() < end:
        m = p.get_message(timeout=0.1)
        if m is not None:
            return m
    return None


r = redis.Redis(port=int(sys.argv[1]))
p = r.pubsub()
p.subscribe("py.news")
check("subscribe confirmation",
      next_message(p) == {"type": "subscribe", "pattern": None,
                          "channel": b"py.news", "data": 1})
p.psubscribe("py.*")
check("psubscribe confirmation", next_message(p)["data"] == 2)
check("publish counts channel + pattern", r.publish("py.news", "hello") == 2)
m1, m2 = next_message(p), next_message(p)
check("message", m1 == {"type": "message", "pattern": None,
                        "channel": b"py.news", "data": b"hello"})
check("pmessage", m2 == {"type": "pmessage", "pattern": b"py.*",
                         "channel": b"py.news", "data": b"hello"})
got = []
q = r.pubsub(ignore_subscribe_messages=True)
q.subscribe(**{"py.h": lambda m: got.append(m["data"])})
next_message(q, 0.5)  # the confirmation, handled and dropped
for i in range(100):
    r.publish("py.h", str(i))
end = time.time() + 5
while len(got) < 100 and time.time() < end:
    q.get_message(timeout=0.1)
check("handler got 100 messages in order",
      got == [str(i).encode() for i in range(100)])
check("pubsub_numsub", r.pubsub_numsub("py.news", "py.h") ==
      [(b"py.news", 1), (b"py.h", 1)])
check("pubsub_numpat", r.pubsub_numpat() == 1)
check("pubsub_channels", sorted(r.pubsub_channels("py.*")) == [b"py.h", b"py.news"])
pm = [next_message(p) for _ in range(100)]
check("the py.* subscriber got the 100 as pmessages",
      [m["data"] for m in pm if m and m["type"] == "pmessage"] ==
      [str(i).encode() for i in range(100)])
p.ping()
check("ping while subscribed", next_message(p) ==
      {"type": "pong", "pattern": None, "channel": None, "data": b""})
p.unsubscribe()
p.punsubscribe()
types = sorted(m["type"] for m in (next_message(p), next_message(p)))
check("unsubscribe and punsubscribe confirmations",
      types == ["punsubscribe", "unsubscribe"])
p.close()
q.close()
end = time.time() + 5
while r.pubsub_numpat() and time.time() < end:
    time.sleep(0.05)
check("closed PubSub objects leave nothing", r.pubsub_numpat() == 0 and
      r.publish("py.h", "x") == 0)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
