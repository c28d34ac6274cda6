#!/usr/bin/env python3
"""tests/server/test_modules_torture.py PORT SO [CALLERS] [CYCLES] [MODE] -
load and unload a module under callers (issue 20 item 4).

MODE "hello" (default): SO is Redis's helloworld.so; "sleepy": SO is
tests/server/modules/sleepy.c's, whose command sleeps offline (DEBUG SLEEP
through RedisModule_Call) inside the module, so unload must wait for the
module's in-flight calls, not only for a grace period.

CALLERS clients (default 6) call helloworld's commands in a loop, pipelined
a few at a time (hello.simple, hello.leftpad, hello.toggle.case on a key of
their own, hello.repl1), while one more client loads and unloads the module
CYCLES times (default 200).  Every reply must be the module's right one or
Redis's unknown-command error, the server must stay up, and the run must
have seen both kinds of reply (else the race was not exercised).  Prints
ok/FAIL lines and the loader's figures; exits 1 on any failure.  Raw
sockets, no client library.
"""
import socket
import sys
import threading

PORT = int(sys.argv[1])
SO = sys.argv[2]
CALLERS = int(sys.argv[3]) if len(sys.argv) > 3 else 6
CYCLES = int(sys.argv[4]) if len(sys.argv) > 4 else 200
MODE = sys.argv[5] if len(sys.argv) > 5 else "hello"
MODNAME = "helloworld" if MODE == "hello" else "sleepy"


def enc(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self):
        self.s = socket.create_connection(("127.0.0.1", PORT), timeout=30)
        self.buf = b""

    def line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(65536)
            if not d:
                raise EOFError("connection closed")
            self.buf += d
        i = self.buf.index(b"\r\n")
        ln, self.buf = self.buf[:i], self.buf[i + 2:]
        return ln

    def reply(self):
        """one reply, as its raw bytes (bulk bodies included)"""
        ln = self.line()
        if ln[:1] == b"$" and int(ln[1:]) >= 0:
            n = int(ln[1:])
            while len(self.buf) < n + 2:
                d = self.s.recv(65536)
                if not d:
                    raise EOFError("connection closed")
                self.buf += d
            body, self.buf = self.buf[:n], self.buf[n + 2:]
            return ln + b"\r\n" + body + b"\r\n"
        if ln[:1] == b"*" and int(ln[1:]) > 0:
            return ln + b"\r\n" + b"".join(self.reply() for _ in range(int(ln[1:])))
        return ln + b"\r\n"

    def call(self, *args):
        self.s.sendall(enc(*args))
        return self.reply()


def unknown(name, args=b""):
    return b"-ERR unknown command '" + name + b"', with args beginning with: " + args + b"\r\n"


stop = threading.Event()
lock = threading.Lock()
seen = {"module": 0, "unknown": 0}
failures = []


def caller(i):
    key = b"tk%d" % i
    try:
        c = Conn()
        c.call("SET", key, "aBc")
        flips = 0
        while not stop.is_set():
            if MODE == "sleepy":
                r = c.call("sleepy.call")
                if r == b"+slept\r\n":
                    kind = "module"
                elif r == unknown(b"sleepy.call"):
                    kind = "unknown"
                else:
                    with lock:
                        failures.append("caller %d: sleepy.call -> %r" % (i, r))
                    stop.set()
                    return
                with lock:
                    seen[kind] += 1
                continue
            batch = [
                (enc("hello.simple"), [b":0\r\n"], unknown(b"hello.simple")),
                (enc("hello.leftpad", "ab", 5, "-"), [b"$5\r\n---ab\r\n"],
                 unknown(b"hello.leftpad", b"'ab' '5' '-' ")),
                (enc("hello.toggle.case", key), [b"+OK\r\n"],
                 unknown(b"hello.toggle.case", b"'" + key + b"' ")),
                (enc("hello.repl1"), [b":0\r\n"], unknown(b"hello.repl1")),
            ]
            c.s.sendall(b"".join(b[0] for b in batch))
            for req, good, unk in batch:
                r = c.reply()
                if r in good:
                    kind = "module"
                    if b"toggle" in req:
                        flips += 1
                elif r == unk:
                    kind = "unknown"
                else:
                    with lock:
                        failures.append("caller %d: %r -> %r" % (i, req, r))
                    stop.set()
                    return
                with lock:
                    seen[kind] += 1
            # the key went through exactly `flips` case toggles
            v = c.call("GET", key)
            want = b"$3\r\naBc\r\n" if flips % 2 == 0 else b"$3\r\nAbC\r\n"
            if v != want:
                with lock:
                    failures.append("caller %d: %d toggles, GET %r" % (i, flips, v))
                stop.set()
                return
    except Exception as e:  # a crash shows up here as a closed connection
        with lock:
            failures.append("caller %d: %s" % (i, e))
        stop.set()


def loader():
    try:
        c = Conn()
        for n in range(CYCLES):
            if stop.is_set():
                return
            r = c.call("MODULE", "LOAD", SO)
            if r != b"+OK\r\n":
                failures.append("cycle %d: MODULE LOAD -> %r" % (n, r))
                return
            r = c.call("MODULE", "UNLOAD", MODNAME)
            if r != b"+OK\r\n":
                failures.append("cycle %d: MODULE UNLOAD -> %r" % (n, r))
                return
        loader.done = CYCLES
    except Exception as e:
        failures.append("loader: %s" % e)
    finally:
        stop.set()


loader.done = 0
threads = [threading.Thread(target=caller, args=(i,)) for i in range(CALLERS)]
for t in threads:
    t.start()
lt = threading.Thread(target=loader)
lt.start()
lt.join()
for t in threads:
    t.join()

ok = True


def check(what, cond):
    global ok
    print(("ok   " if cond else "FAIL ") + what)
    ok = ok and cond


for f in failures[:10]:
    print("# " + f)
check("%d load/unload cycles under %d callers" % (loader.done, CALLERS),
      loader.done == CYCLES and not failures)
check("replies: %d from the module, %d unknown command, nothing else"
      % (seen["module"], seen["unknown"]),
      seen["module"] > 0 and seen["unknown"] > 0 and not failures)
try:
    check("server still answers", Conn().call("PING") == b"+PONG\r\n")
except Exception as e:
    check("server still answers (%s)" % e, False)
sys.exit(0 if ok else 1)
