#!/usr/bin/env python3
"""tests/server/test_modules_block.py RCUKV_PORT REDIS_PORT MODDIR - the
module blocked-client API (docs/modules.md, "Blocked clients") through
Redis 7.0.15's own hellotype.c (HELLOTYPE.BRANGE: BlockClientOnKeys,
SignalKeyAsReady, GetBlockedClientReadyKey) and helloblock.c (HELLO.BLOCK:
BlockClient, UnblockClient from a thread, GetBlockedClientPrivateData,
SetDisconnectCallback; HELLO.KEYS: a thread's GetThreadSafeContext(bc),
ThreadSafeContextLock/Unlock, RedisModule_Call of SCAN and replies on that
context, delivered at the unblock), run the same way against an rcukv-server and a
redis-server 7.0.15 with the same modules loaded: every scenario's
observations (replies, blocked_clients, what MODULE UNLOAD answers) must be
equal on both.  REDIS_PORT 0: no redis-server, the scenarios run on rcukv
only and each comparison is a skip.  Prints ok/FAIL/SKIP lines and
"N passed, M failed, K skipped".
"""
import socket, sys, threading, time, redis

rport, dport, moddir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
passed = failed = skipped = 0


def result(ok, msg):
    global passed, failed
    print(('ok   ' if ok else 'FAIL ') + msg)
    if ok:
        passed += 1
    else:
        failed += 1


def cmd(r, *a):
    try:
        v = r.execute_command(*a)
    except redis.ResponseError as e:
        return 'ERR:' + str(e)
    return v.decode() if isinstance(v, bytes) else v


def blocked(r):
    return r.info('clients')['blocked_clients']


def wait_blocked(r, n):
    for _ in range(300):
        if blocked(r) == n:
            return n
        time.sleep(0.01)
    return blocked(r)


class Bg:
    """Run one command on a connection of its own in a thread."""
    def __init__(self, port, *a):
        self.r = redis.Redis(port=port, socket_timeout=20)
        self.id = self.r.client_id()
        self.v = None
        self.t = threading.Thread(target=self.run, args=a)
        self.t.start()

    def run(self, *a):
        self.v = cmd(self.r, *a)

    def join(self):
        self.t.join(25)
        return 'still blocked' if self.t.is_alive() else self.v


def scenarios(port):
    r = redis.Redis(port=port, socket_timeout=20)
    r.flushall()
    out = []
    for m in ('hellotype', 'helloblock'):
        out.append(('load ' + m, cmd(r, 'module', 'load', '%s/%s.so' % (moddir, m))))
    # 1. BRANGE on an empty key blocks until an insert signals it
    a = Bg(port, 'hellotype.brange', 'k1', 0, 10, 0)
    out.append(('brange blocked', wait_blocked(r, 1)))
    out.append(('insert', cmd(r, 'hellotype.insert', 'k1', 7)))
    out.append(('brange served by the insert', a.join()))
    out.append(('nobody blocked after', wait_blocked(r, 0)))
    # 2. its timeout (milliseconds) answers the timeout callback
    out.append(('brange timeout', cmd(r, 'hellotype.brange', 'k2', 0, 10, 200)))
    out.append(('k2 untouched', cmd(r, 'exists', 'k2')))
    # 3. a signal the reply callback refuses keeps it blocked: a list push
    # on the key (its callback sees no hellotype), then DEL and an insert
    a = Bg(port, 'hellotype.brange', 'k3', 0, 10, 0)
    out.append(('brange k3 blocked', wait_blocked(r, 1)))
    out.append(('lpush k3', cmd(r, 'lpush', 'k3', 'x')))
    time.sleep(0.2)
    out.append(('still blocked after the lpush', blocked(r)))
    out.append(('del k3', cmd(r, 'del', 'k3')))
    out.append(('insert k3', cmd(r, 'hellotype.insert', 'k3', 1)))
    out.append(('brange k3 served', a.join()))
    # 4. two waiters on one key: one insert serves both (RANGE takes nothing)
    a = Bg(port, 'hellotype.brange', 'k4', 0, 10, 0)
    wait_blocked(r, 1)
    b = Bg(port, 'hellotype.brange', 'k4', 0, 10, 0)
    out.append(('two blocked on k4', wait_blocked(r, 2)))
    out.append(('insert k4', cmd(r, 'hellotype.insert', 'k4', 3)))
    out.append(('first waiter', a.join()))
    out.append(('second waiter', b.join()))
    # 5. WRONGTYPE before blocking; a key of the type answers at once
    r.set('s', 'x')
    out.append(('brange on a string', cmd(r, 'hellotype.brange', 's', 0, 10, 0)))
    out.append(('brange on a full key', cmd(r, 'hellotype.brange', 'k1', 0, 10, 0)))
    # 6. CLIENT UNBLOCK: the timeout callback; with ERROR, -UNBLOCKED
    a = Bg(port, 'hellotype.brange', 'k5', 0, 10, 0)
    wait_blocked(r, 1)
    out.append(('client unblock', cmd(r, 'client', 'unblock', a.id)))
    out.append(('unblocked brange', a.join()))
    a = Bg(port, 'hellotype.brange', 'k5', 0, 10, 0)
    wait_blocked(r, 1)
    out.append(('client unblock error', cmd(r, 'client', 'unblock', a.id, 'error')))
    out.append(('unblocked brange (error)', a.join()))
    # 7. BRANGE inside MULTI: answered at once, never blocks
    p = r.pipeline(transaction=True)
    p.execute_command('hellotype.brange', 'k6', 0, 10, 0)
    try:
        v = p.execute(raise_on_error=False)
        out.append(('brange in multi', [str(x) if isinstance(x, Exception) else x for x in v]))
    except redis.RedisError as e:
        out.append(('brange in multi', 'ERR:' + str(e)))
    # 8. HELLO.BLOCK: a thread unblocks it after 1 s with a random number
    a = Bg(port, 'hello.block', 1, 0)
    out.append(('hello.block blocked', wait_blocked(r, 1)))
    out.append(('unload while blocked', cmd(r, 'module', 'unload', 'helloblock')))
    v = a.join()
    out.append(('hello.block answers an integer', type(v).__name__))
    # 9. its timeout (1 ms) comes first; the thread's later UnblockClient
    # frees the handle
    out.append(('hello.block timeout', cmd(r, 'hello.block', 1, 1)))
    # 10. inside MULTI: an error in EXEC's reply, an aborted handle the
    # thread still unblocks
    p = r.pipeline(transaction=True)
    p.execute_command('hello.block', 1, 0)
    try:
        v = p.execute(raise_on_error=False)
        out.append(('hello.block in multi', [str(x) if isinstance(x, Exception) else x for x in v]))
    except redis.RedisError as e:
        out.append(('hello.block in multi', 'ERR:' + str(e)))
    # 11. a client that goes while blocked (the disconnect callback)
    s = socket.create_connection(('127.0.0.1', port))
    s.sendall(b'*3\r\n$11\r\nhello.block\r\n$1\r\n1\r\n$1\r\n0\r\n')
    out.append(('raw client blocked', wait_blocked(r, 1)))
    s.close()
    out.append(('gone', wait_blocked(r, 0)))
    time.sleep(1.3)  # every thread of 8-11 has called UnblockClient
    out.append(('server answers', cmd(r, 'ping')))
    # 12. HELLO.KEYS: a thread SCANs under ThreadSafeContextLock and replies
    # on GetThreadSafeContext(bc); the reply reaches the client at the
    # unblock.  SCAN's order is each server's table order: compared sorted
    out.append(('gone before hello.keys', wait_blocked(r, 0)))
    r.flushall()
    r.mset({'key:%d' % i: i for i in range(300)})
    v = cmd(r, 'hello.keys')
    out.append(('hello.keys, sorted', sorted(x.decode() for x in v)))
    r2 = redis.Redis(port=port, db=2)
    r2.set('only-in-2', 1)
    out.append(('hello.keys in db 2', cmd(r2, 'hello.keys')))
    # 13. many HELLO.KEYS at once while other clients write: every reply
    # has each key present throughout (SCAN's promise), writes all land
    def writer(n):
        w = redis.Redis(port=port, socket_timeout=20)
        for i in range(2000):
            w.set('w%d:%d' % (n, i % 50), i)
    ws = [threading.Thread(target=writer, args=(n,)) for n in range(2)]
    for t in ws:
        t.start()
    ks = [Bg(port, 'hello.keys') for _ in range(8)]
    got = [k.join() for k in ks]
    for t in ws:
        t.join(25)
    base = set('key:%d' % i for i in range(300))
    out.append(('8 concurrent hello.keys: each has the 300 keys',
                [isinstance(g, list) and base <= set(x.decode() for x in g) for g in got]))
    out.append(('writers done', [t.is_alive() for t in ws]))
    out.append(('w0 keys', len(r.keys('w0:*'))))
    # 14. a client that goes while its HELLO.KEYS runs
    for _ in range(3):
        s = socket.create_connection(('127.0.0.1', port))
        s.sendall(b'*1\r\n$10\r\nhello.keys\r\n')
        s.close()
    out.append(('gone while hello.keys ran', wait_blocked(r, 0)))
    out.append(('answers after', cmd(r, 'ping')))
    # 15. MODULE UNLOAD while a thread holds a context (its blocked client):
    # refused.  100,000 keys make the scan take long enough to ask.
    p = r.pipeline(transaction=False)
    for i in range(0, 100000, 1000):
        p.mset({'big:%d' % j: 1 for j in range(i, i + 1000)})
    p.execute()
    a = Bg(port, 'hello.keys')
    out.append(('hello.keys on 100,000 keys blocked', wait_blocked(r, 1)))
    out.append(('unload while a thread scans', cmd(r, 'module', 'unload', 'helloblock')))
    v = a.join()
    out.append(('that hello.keys', len(v) if isinstance(v, list) else v))
    out.append(('nobody blocked after it', wait_blocked(r, 0)))
    # 16. tests/server/modules/tsctest.c: TryLock from a command (EBUSY),
    # a thread's detached context (Call, OpenKey, Log), a NULL context's
    # reply (dropped, OK), a blocked client's context's reply
    out.append(('load tsctest', cmd(r, 'module', 'load', '%s/tsctest.so' % moddir)))
    out.append(('tsc.trylock in a command', cmd(r, 'tsc.trylock')))
    out.append(('tsc.thread', cmd(r, 'tsc.thread', 'tsckey')))
    out.append(('tsckey', cmd(r, 'get', 'tsckey')))
    out.append(('unload tsctest', cmd(r, 'module', 'unload', 'tsctest')))
    out.append(('unload after', cmd(r, 'module', 'unload', 'helloblock')))
    out.append(('dbsize', r.dbsize()))
    return out


mine = scenarios(rport)
# rcukv only (Redis deadlocks, races or reads freed memory on these,
# docs/modules.md): Lock twice and Unlock thrice from one thread, Call
# unlocked (NULL, EPERM), Call on a freed context (NULL), Free twice
r = redis.Redis(port=rport, socket_timeout=20)
cmd(r, 'module', 'load', '%s/tsctest.so' % moddir)
v = cmd(r, 'tsc.misuse')
result(v == [1, 1, 1], 'tsc.misuse on rcukv: %r (unlocked Call refused, nested lock, freed ctx refused)' % (v,))
result(cmd(r, 'ping') is True, 'rcukv answers after tsc.misuse')
result(cmd(r, 'module', 'unload', 'tsctest') == 'OK', 'tsctest unloads after')
if dport:
    ref = scenarios(dport)
    for (name, v), (_, w) in zip(mine, ref):
        result(v == w, '%s: rcukv %r, redis-server %r' % (name, v, w))
else:
    for name, v in mine:
        print('SKIP %s: rcukv %r (no redis-server to compare with)' % (name, v))
        skipped += 1
print('%d passed, %d failed, %d skipped' % (passed, failed, skipped))
sys.exit(1 if failed else 0)
