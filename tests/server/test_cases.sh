#!/usr/bin/env bash
# tests/server/test_cases.sh - case files with no test of their own, each
# replayed by test_server --cases-only against $B/rcukv-server (--threads 2,
# started on a free port in 7820-7839) and against a reference redis-server
# started here (the one they were recorded from, so an expectation written
# to match rcukv fails there):
#   cases_notify.txt   notify-keyspace-events and the expired/evicted events
# Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
PORT_LAST=7839
. "$(dirname "$0")/../../scripts/lib.sh"
need_built "$SRV" "$TS"
scratch_init cases
server_up "" 7820 --threads 2 --save ""

run_all() { # run_all WHO PORT
  local f
  for f in cases_notify.txt; do
    check_cases "$f against $1" "$("$TS" --port "$2" --cases "tests/server/$f" --cases-only 2>&1)"
  done
}

against_both run_all $((P + 1))
summary
