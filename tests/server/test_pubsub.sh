#!/usr/bin/env bash
# tests/server/test_pubsub.sh - pub/sub (issue 16 item 3) three ways, against
# $B/rcukv-server (--threads 2, started on a free port in 7760-7779) and
# against a reference redis-server started here (the one the expectations
# were recorded from: a case or check written to match rcukv fails there):
#   1. tests/server/cases_pubsub.txt through test_server --cases-only: errors,
#      RESP2 subscribed mode, RESP3 pushes, PUBSUB introspection
#   2. $B/tests/server/test_pubsub --port: several clients on both workers
#      (its own run against a server it starts is in make test's binaries)
#   3. tests/server/test_pubsub.py: redis-py (Debian python3-redis), as an
#      application uses pub/sub
# Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
TP=$B/tests/server/test_pubsub
PORT_LAST=7779
. "$(dirname "$0")/../../scripts/lib.sh"
need_built "$SRV" "$TS" "$TP"
scratch_init pubsub
server_up "" 7760 --threads 2 --save ""

find_redis_py

run_all() { # run_all WHO PORT
  check_cases "cases_pubsub.txt against $1" \
    "$("$TS" --port "$2" --cases tests/server/cases_pubsub.txt --cases-only 2>&1)"
  check_cases "test_pubsub against $1" "$("$TP" --port "$2" 2>&1)"
  if [ -n "$PY" ]; then
    check_cases "redis-py pub/sub against $1" "$("$PY" tests/server/test_pubsub.py "$2" 2>&1)"
  else
    skip "redis-py pub/sub against $1: python3-redis not installed (scripts/deps.sh test)"
  fi
}

against_both run_all $((P + 1))
summary
