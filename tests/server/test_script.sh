#!/usr/bin/env bash
# tests/server/test_script.sh - Lua scripting (EVAL, EVALSHA, SCRIPT),
# against $B/rcukv-server (--threads 2, started on a free port in
# 7900-7949) and against a reference redis-server started here (the one the
# expectations were recorded from, so a case written to match rcukv fails
# there):
#   1. tests/server/cases_script.txt through test_server --cases-only
#   2. tests/server/test_script.py: redis-py's register_script and r.lock()
#   3. test_script.py torture: scripted moves between two declared keys
#      while readers MGET them; no reader may see a changed sum
#   4. (rcukv) SCRIPT KILL of a busy script, hostile scripts, the server
#      still serving afterwards
# Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
PORT_LAST=7949
. "$(dirname "$0")/../../scripts/lib.sh"
need_built "$SRV" "$TS"
scratch_init script
server_up "" 7900 --threads 2 --save ""
find_redis_py

run_all() { # run_all WHO PORT
  check_cases "cases_script.txt against $1" \
    "$("$TS" --port "$2" --cases tests/server/cases_script.txt --cases-only 2>&1)"
  if [ -n "$PY" ]; then
    check_cases "redis-py scripts and locks against $1" "$("$PY" tests/server/test_script.py "$2" 2>&1)"
    check_cases "scripted transfers vs MGET readers against $1" \
      "$("$PY" tests/server/test_script.py "$2" torture 3 2>&1)"
  else
    skip "redis-py scripts against $1: python3-redis not installed (scripts/deps.sh test)"
  fi
}

against_both run_all $((P + 1))

# SCRIPT KILL: a busy script that wrote nothing stops; the killer runs on
# another connection (several, so that one lands on the other worker).
R="timeout 20 redis-cli -p $P"
$R config set busy-reply-threshold 200 >/dev/null
$R eval "local i = 0 while true do i = i + 1 end" 0 >"$tmp/busy.out" 2>&1 &
busy=$!
killed=
for i in $(seq 1 50); do
  sleep 0.1
  # a connection on the busy worker waits for the script: bounded
  out=$(timeout 2 redis-cli -p "$P" script kill 2>&1)
  if [ "$out" = OK ]; then killed=1; break; fi
done
for i in $(seq 1 100); do kill -0 "$busy" 2>/dev/null || break; sleep 0.1; done
kill "$busy" 2>/dev/null
wait "$busy"
check "SCRIPT KILL answers OK for a busy script" '[ -n "$killed" ]'
check "the killed script's client gets Redis's error" \
  'grep -q "ERR Script killed by user with SCRIPT KILL... script: .*, on @user_script:1." "$tmp/busy.out"'
check "SCRIPT KILL with nothing running: NOTBUSY" \
  '[ "$($R script kill 2>&1)" = "NOTBUSY No scripts in execution right now." ]'
$R config set busy-reply-threshold 5000 >/dev/null

# hostile scripts: errors, deep tables, huge tables, recursion; the server
# keeps serving and Lua memory stays bounded
$R eval "local t = {} for i = 1, 200000 do t[i] = i end return #t" 0 >"$tmp/h1" 2>&1
check "a 200000-element table" '[ "$(cat "$tmp/h1")" = 200000 ]'
$R eval "local t = {} local c = t for i = 1, 100000 do c[1] = {} c = c[1] end return t" 0 >/dev/null 2>&1
$R eval "local t = {} t[1] = t return t" 0 >/dev/null 2>&1
$R eval "local function f(n) return f(n + 1) + 1 end return f(1)" 0 >"$tmp/h2" 2>&1
check "infinite recursion is an error" 'grep -q "stack overflow" "$tmp/h2"'
$R eval "return string.rep('x', 1024 * 1024 * 64)" 0 >/dev/null 2>&1
for i in $(seq 1 20); do $R eval "local t = {} for i = 1, 100000 do t[i] = tostring(i) end return 1" 0 >/dev/null; done
check "the server still answers" '[ "$($R ping)" = PONG ]'
lua=$($R info memory | tr -d '\r' | awk -F: '$1 == "used_memory_lua" { print $2 }')
check "used_memory_lua is bounded after the hostile scripts ($lua bytes)" '[ -n "$lua" ] && [ "$lua" -gt 0 ] && [ "$lua" -lt 300000000 ]'
summary
