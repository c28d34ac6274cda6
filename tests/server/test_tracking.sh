#!/usr/bin/env bash
# tests/server/test_tracking.sh - client-side caching (issue 16 item 4), against
# $B/rcukv-server (--threads 2, started on a free port in 7800-7819) and a
# reference redis-server started here (the one the expectations were
# recorded from):
#   1. tests/server/cases_tracking.txt through test_server --cases-only:
#      CLIENT TRACKING/CACHING/GETREDIR/TRACKINGINFO and their errors, RESP3
#      invalidation pushes (default mode, OPTIN, NOLOOP, BCAST prefixes,
#      expiry, FLUSHALL)
#   2. tests/server/test_tracking.py: redis-py (RESP2) with REDIRECT to a
#      subscribed listener, a local cache built on the invalidations, several
#      tracking clients over the workers
# Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
PORT_LAST=7819
. "$(dirname "$0")/../../scripts/lib.sh"
need_built "$SRV" "$TS"
scratch_init tracking
server_up "" 7800 --threads 2 --save ""
find_redis_py

run_all() { # run_all WHO PORT
  check_cases "cases_tracking.txt against $1" \
    "$("$TS" --port "$2" --cases tests/server/cases_tracking.txt --cases-only 2>&1)"
  if [ -n "$PY" ]; then
    check_cases "redis-py client-side caching against $1" \
      "$(timeout 120 "$PY" tests/server/test_tracking.py "$2" 2>&1)"
  else
    skip "redis-py client-side caching against $1: python3-redis not installed (scripts/deps.sh test)"
  fi
}

against_both run_all $((P + 1))
summary
