#!/usr/bin/env bash
# tests/server/test_multi.sh - transactions (issue 16 item 2) three ways,
# against $B/rcukv-server (--threads 2, started on a free port in 7740-7759)
# and against a reference redis-server started here (the one the
# expectations were recorded from: a case or check written to match rcukv
# fails there):
#   1. tests/server/cases_multi.txt through test_server --cases-only: queueing,
#      EXECABORT, errors inside EXEC, WATCH broken by writes, deletes, expiry,
#      FLUSHALL, MSET and RENAME from another client, RESP3, CLIENT LIST
#   2. $B/tests/server/test_multi --port: transfers under MULTI/EXEC and under
#      WATCH retries while readers on both workers check MGET totals and
#      pairs of GETs (no reader sees half a transaction, no update is lost)
#   3. tests/server/test_multi.py: redis-py's pipelines and transaction()
# Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
TM=$B/tests/server/test_multi
PORT_LAST=7759
. "$(dirname "$0")/../../scripts/lib.sh"
need_built "$SRV" "$TS" "$TM"
scratch_init multi
server_up "" 7740 --threads 2 --save ""

find_redis_py

run_all() { # run_all WHO PORT
  check_cases "cases_multi.txt against $1" \
    "$("$TS" --port "$2" --cases tests/server/cases_multi.txt --cases-only 2>&1)"
  check_cases "test_multi against $1" "$("$TM" --port "$2" 2>&1)"
  if [ -n "$PY" ]; then
    check_cases "redis-py transactions against $1" "$("$PY" tests/server/test_multi.py "$2" 2>&1)"
  else
    skip "redis-py transactions against $1: python3-redis not installed (scripts/deps.sh test)"
  fi
}

against_both run_all $((P + 1))
summary
