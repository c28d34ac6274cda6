#!/usr/bin/env python3
"""bench/curves_idle.py - hold N idle client connections to a server on
127.0.0.1 for bench/bench_curves.sh (the p99 of 50 active clients while
10,000 idle ones stay connected).

Opens N connections (loopback only), sends one PING on each and reads its
+PONG, so every connection is accepted and registered by the server before
the measurement starts, then prints "ready N" on stdout and holds them,
sending nothing, until stdin reaches end of file or --hold seconds pass
(bounded: the holder never outlives the bench).  Exits 1 with a message on
the first connection that fails (the bench then stops: no figure).

Usage: curves_idle.py --port P --conns N [--hold SECS]
The caller raises the open-files limit (ulimit -n) above N first.
"""
import argparse
import select
import socket
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--conns", type=int, required=True)
    ap.add_argument("--hold", type=float, default=600.0)
    a = ap.parse_args()
    socks = []
    try:
        for _ in range(a.conns):
            s = socket.create_connection(("127.0.0.1", a.port), timeout=10)
            socks.append(s)
        # PING in batches of 500: each reply proves the server holds it
        for i in range(0, len(socks), 500):
            batch = socks[i:i + 500]
            for s in batch:
                s.sendall(b"PING\r\n")
            for s in batch:
                got = b""
                while not got.endswith(b"\r\n"):
                    chunk = s.recv(64)
                    if not chunk:
                        raise OSError("connection closed by the server")
                    got += chunk
                if got != b"+PONG\r\n":
                    raise OSError("unexpected reply %r" % got)
    except OSError as e:
        print("curves_idle: connection %d of %d to port %d: %s"
              % (len(socks), a.conns, a.port, e), file=sys.stderr)
        return 1
    print("ready %d" % len(socks), flush=True)
    deadline = time.monotonic() + a.hold
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select([sys.stdin], [], [], min(left, 1.0))
        if r and not sys.stdin.buffer.read1(4096):
            break
    for s in socks:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
