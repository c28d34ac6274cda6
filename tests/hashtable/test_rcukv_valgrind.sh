#!/usr/bin/env bash
# test_rcukv_valgrind.sh - an application's leak check passes (issue 21): the
# example program (examples/cache/cache.c: 4 threads, TTLs, a memory limit,
# open and close twice) linked statically against librcukv.a, run under
# `valgrind --error-exitcode=1 --leak-check=full`.  Closing the last cache
# must leave no library thread behind (before: "possibly lost 320 bytes" of
# the RCU callback thread's stack).  Skipped without valgrind or outside the
# release variant (sanitizers and valgrind do not mix).
# Prints 'N passed, M failed, K skipped'.
set -u
cd "$(dirname "$0")/../.."
B=${B:-build/release}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

if ! command -v valgrind >/dev/null || [ "${VARIANT:-release}" != release ]; then
	echo "SKIP valgrind leak check (valgrind missing or VARIANT=${VARIANT:-release})"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
if cc -std=c11 -O1 -g -D_GNU_SOURCE -pthread -Wall -Wextra -Werror -Ihashtable \
	examples/cache/cache.c "$B/librcukv.a" -o "$tmp/cache" 2>"$tmp/cc.log"; then
	ok "example links against $B/librcukv.a"
else
	bad "example build"; cat "$tmp/cc.log"
fi
if valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,possible \
	"$tmp/cache" >"$tmp/run.log" 2>&1; then
	ok "valgrind --error-exitcode=1 --leak-check=full: $(grep -E 'passed, .* failed' "$tmp/run.log" | tail -n 1)"
else
	bad "valgrind reports errors or leaks"; tail -40 "$tmp/run.log"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
