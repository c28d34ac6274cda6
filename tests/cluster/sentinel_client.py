#!/usr/bin/env python3
"""tests/cluster/sentinel_client.py MASTER_PID SENTINEL_PORT... - an
application's view of a Sentinel failover (issue 18 item 4), through
redis-py's Sentinel client (Debian's python3-redis): it asks the sentinels
for "mymaster", writes 200 keys and waits until both replicas have them
(WAIT 2), kills the master (SIGKILL of MASTER_PID), and goes on writing
through the same client, retrying on connection and read-only errors, until
100 writes have succeeded after the kill (60 s at most).  Then: the master
the sentinels name is another server, it says ROLE master, the other
replica follows it, and every key acknowledged before or after the kill is
on it.  Prints ok/FAIL lines and "N passed, M failed"; the last line before
them is "new-master HOST PORT" for the caller."""
import os
import signal
import sys
import time

import redis
from redis.sentinel import Sentinel

passed = failed = 0


def check(cond, what):
    """An ok or FAIL line (the shell test counts them)."""
    global passed, failed
    print(("ok   " if cond else "FAIL ") + what)
    if cond:
        passed += 1
    else:
        failed += 1


def done():
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)

master_pid = int(sys.argv[1])
sentinels = [("127.0.0.1", int(p)) for p in sys.argv[2:]]
snt = Sentinel(sentinels, socket_timeout=0.5)
old = snt.discover_master("mymaster")
m = snt.master_for("mymaster", socket_timeout=0.5, retry_on_timeout=False)

for i in range(200):
    m.set("k:%d" % i, i)
n = m.execute_command("WAIT", 2, 5000)
check(n == 2, "200 keys written through the Sentinel client, WAIT 2 says %r replicas have them" % n)

os.kill(master_pid, signal.SIGKILL)
t_kill = time.time()
acked, errors, i = [], 0, 200
first_ok = None
while len(acked) < 100 and time.time() - t_kill < 60:
    try:
        m.set("k:%d" % i, i)
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
            redis.exceptions.ReadOnlyError, redis.exceptions.ResponseError):
        errors += 1
        time.sleep(0.1)
        continue
    if first_ok is None:
        first_ok = time.time()
    acked.append(i)
    i += 1
check(len(acked) == 100,
      "after the kill the same client goes on writing: %d writes acknowledged, the first %.1f s "
      "after the kill, %d errors while failing over"
      % (len(acked), (first_ok or time.time()) - t_kill, errors))

new = snt.discover_master("mymaster")
check(new != old, "the sentinels name a new master: %s:%d (was %s:%d)" % (new + old))
nm = redis.Redis(host=new[0], port=new[1], socket_timeout=2)
role = nm.execute_command("ROLE")
check(role[0] == b"master", "the new master says ROLE master (%r)" % (role[0],))
missing = [k for k in range(200) if nm.get("k:%d" % k) != str(k).encode()]
check(not missing, "every key written before the kill is on the new master (%d missing)" % len(missing))
lost = [k for k in acked if nm.get("k:%d" % k) != str(k).encode()]
check(not lost, "every write acknowledged after the failover is on the new master (%d missing)" % len(lost))

# the other replica: reconfigured by the sentinels to follow the new master
others = [tuple(r) for r in snt.discover_slaves("mymaster") if tuple(r) != tuple(new)]
following = None
deadline = time.time() + 30
while time.time() < deadline:
    following = []
    for h, p in others:
        try:
            r = redis.Redis(host=h, port=p, socket_timeout=1).execute_command("ROLE")
        except redis.exceptions.ConnectionError:
            continue  # the killed master, still listed
        if r[0] == b"slave" and r[2] == new[1] and r[3] == b"connected":
            following.append((h, p))
    if following:
        break
    time.sleep(0.2)
check(bool(following), "the other replica follows the new master (%r)" % (following,))
if following:
    rep = redis.Redis(host=following[0][0], port=following[0][1], socket_timeout=2)
    m.execute_command("WAIT", 1, 5000)  # on the connection that wrote: WAIT waits for its writes
    gone = [k for k in acked if rep.get("k:%d" % k) != str(k).encode()]
    why = ""
    if gone:
        why = "; replica dbsize %d, master dbsize %d, replica %r, master %r" % (
            rep.dbsize(), nm.dbsize(),
            {f: v for f, v in rep.info("replication").items() if "offset" in f or "link" in f},
            {f: v for f, v in nm.info("replication").items() if "offset" in f or "slave" in f})
    check(not gone, "it has every write made after the failover (%d missing%s)" % (len(gone), why))
print("new-master %s %d" % new)
done()
