#!/usr/bin/env python3
"""capture.py LISTEN_PORT SERVER_PORT OUTDIR [SECONDS]

A tiny loopback TCP proxy: forwards every connection on 127.0.0.1:LISTEN_PORT
to 127.0.0.1:SERVER_PORT and saves the bytes each client sent, one file per
connection (OUTDIR/conn-<n>.bin).  Used once to record the real traffic of
redis-cli, redis-benchmark and hiredis that seeds the fuzz corpora
(tests/fuzz/gen_corpus.py reads OUTDIR).  Stops by itself after SECONDS
(default 60) or when the file OUTDIR/.stop appears."""
import os, selectors, socket, sys, time

lport, sport, outdir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
deadline = time.time() + (float(sys.argv[4]) if len(sys.argv) > 4 else 60)
os.makedirs(outdir, exist_ok=True)
sel = selectors.DefaultSelector()
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", lport))
ls.listen(64)
ls.setblocking(False)
sel.register(ls, selectors.EVENT_READ, None)
n = 0
while time.time() < deadline and not os.path.exists(os.path.join(outdir, ".stop")):
    for key, _ in sel.select(0.2):
        if key.data is None:
            c, _ = ls.accept()
            s = socket.create_connection(("127.0.0.1", sport))
            n += 1
            f = open(os.path.join(outdir, "conn-%03d.bin" % n), "wb")
            sel.register(c, selectors.EVENT_READ, (c, s, f))
            sel.register(s, selectors.EVENT_READ, (s, c, None))
            continue
        src, dst, f = key.data
        try:
            d = src.recv(65536)
        except OSError:
            d = b""
        if not d:
            for x in (src, dst):
                try:
                    sel.unregister(x)
                except (KeyError, ValueError):
                    pass
                x.close()
            continue
        if f:
            f.write(d)
            f.flush()
        dst.sendall(d)
