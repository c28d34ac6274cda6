"""tests/server/pycheck.py - the counting the redis-py tests share:
check(ok, what) counts a pass or prints "FAIL what"; done() prints
"N passed, M failed" and exits 1 on any failure."""
import sys

passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL " + what)


def done():
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
