#!/usr/bin/env python3
"""tests/server/test_modules_hellotype.py PORT SECONDS - Redis's hellotype.c
under concurrent key commands (docs/modules.md, "Data types").

Three clients HELLOTYPE.INSERT and one HELLOTYPE.RANGE on four keys while
two others DEL, UNLINK, RENAME, PEXPIRE (1-20 ms), SET and COPY the same
keys and one more DUMPs and RESTOREs them, asks MEMORY USAGE and TYPE, and
starts BGSAVE.  Those key commands are not module code: they do not wait
for the module lock, so a module command must see one value for each key
it opened however they race it (RedisModuleKey.mv), and a value must be
freed only after the last reader is done.  Every reply must be a reply
(WRONGTYPE and Redis's refusals allowed), every client must make progress,
the server must stay up.  Before keys kept their value, HELLOTYPE.INSERT
met a NULL value within seconds (SEGV under ASan).  Exit 0 or 1.
"""
import sys, threading, time, random, redis
port = int(sys.argv[1]); secs = float(sys.argv[2])
stop = time.time() + secs
errs = []; counts = {}
keys = ['t%d' % i for i in range(4)]
def loop(name, fn):
    r = redis.Redis(port=port); n = 0
    try:
        while time.time() < stop:
            fn(r, random.choice(keys)); n += 1
    except Exception as e:
        errs.append('%s: %r' % (name, e))
    counts[name] = n
def ok_wrongtype(f):
    try: f()
    except redis.ResponseError as e:
        if not str(e).startswith(('WRONGTYPE', 'not supported', 'no such key', 'source and destination')): raise
def ins(r, k): ok_wrongtype(lambda: r.execute_command('hellotype.insert', k, random.randint(-5, 5)))
def rng(r, k): ok_wrongtype(lambda: r.execute_command('hellotype.range', k, 0, 5))
def kill(r, k):
    c = random.randrange(6)
    if c == 0: r.delete(k)
    elif c == 1: r.unlink(k)
    elif c == 2: ok_wrongtype(lambda: r.rename(k, random.choice(keys)))
    elif c == 3: r.pexpire(k, random.randint(1, 20))
    elif c == 4: r.set(k, 'x')
    else: ok_wrongtype(lambda: r.copy(k, random.choice(keys)))
def look(r, k):
    c = random.randrange(4)
    if c == 0:
        d = r.dump(k)
        if d is not None:
            try: r.restore(k + 'r', 0, d, replace=True)
            except redis.ResponseError: pass
    elif c == 1: r.memory_usage(k)
    elif c == 2: r.type(k)
    else:
        try: r.bgsave()
        except redis.ResponseError: pass
ts = [threading.Thread(target=loop, args=('%s%d' % (f.__name__, i), f))
      for f, n in ((ins, 3), (rng, 1), (kill, 2), (look, 1)) for i in range(n)]
for t in ts: t.start()
for t in ts: t.join()
print('counts', sorted(counts.items()))
print('errors', errs[:5])
sys.exit(1 if errs or min(counts.values()) < 10 else 0)
