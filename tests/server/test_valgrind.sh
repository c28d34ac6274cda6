#!/usr/bin/env bash
# tests/server/test_valgrind.sh - issue 5, point 6: a run with traffic, then
# SHUTDOWN, leaks nothing under valgrind.
#
# Starts the release rcukv-server under valgrind's memcheck (full leak check,
# definite and possible leaks counted as errors), drives it with
# redis-benchmark (SET, GET, INCR, MSET, pipelined, 10 clients), KEYS, SCAN,
# EXPIRE, CLIENT LIST, SAVE and BGSAVE (the SRCU snapshot thread), then
# SHUTDOWN NOSAVE.  Checks: the server exits 0 (valgrind's error exit code is
# 99), memcheck reports 0 errors, nothing definitely, indirectly or possibly
# lost, and no heap block in use at exit (every thread of ours joined: the
# RCU callback thread by rcu_shutdown(), jemalloc's background threads
# stopped).  Only for the release build (ASan builds have LeakSanitizer).
# Ends with "N passed, M failed".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
case $SRV in /*) ;; *) SRV=$PWD/$SRV ;; esac
PORT_LAST=7729
. "$(dirname "$0")/../../scripts/lib.sh"

if [ "${VARIANT:-release}" != release ]; then
  skip "valgrind runs on the release build only (this is ${VARIANT})"
  summary
  exit 0
fi
skip_without "needs valgrind and redis-benchmark (make test installs them)" valgrind redis-benchmark
scratch_init vg
vpid=
at_exit '[ -n "$vpid" ] && kill "$vpid" 2>/dev/null && wait "$vpid" 2>/dev/null'

P=$(free_port 7700)
valgrind --leak-check=full --show-leak-kinds=definite,indirect,possible \
  --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99 \
  --log-file="$tmp/vg.log" \
  "$SRV" --port "$P" --threads 2 --save "" --dir "$tmp" >"$tmp/server.log" 2>&1 &
vpid=$!
up=0
for _ in $(seq 1 600); do  # valgrind starts slowly: 60 s at most
  if redis-cli -p "$P" ping 2>/dev/null | grep -q PONG; then up=1; break; fi
  kill -0 "$vpid" 2>/dev/null || break
  sleep 0.1
done
check "server up under valgrind on port $P" '[ $up = 1 ]'
if [ $up = 0 ]; then
  tail -5 "$tmp/server.log" "$tmp/vg.log"
  summary
  exit 1
fi

R() { redis-cli -p "$P" "$@" 2>&1; }
out=$(redis-benchmark -p "$P" -t set,get,incr,mset -n 3000 -c 10 -P 4 -r 2000 -q 2>&1 | tr '\r' '\n')
check "redis-benchmark set,get,incr,mset ran (4 result lines)" \
  '[ "$(grep -c "requests per second" <<<"$out")" = 4 ]'
R set vk hello >/dev/null
R expire vk 100 >/dev/null
check "KEYS under valgrind" '[ "$(R keys "vk*")" = vk ]'
check "SCAN under valgrind" 'R scan 0 count 1000 | grep -q .'
check "CLIENT LIST under valgrind" 'R client list | grep -q cmd=client'
check "SAVE under valgrind" '[ "$(R save)" = OK ]'
# pub/sub: subscribers still connected at SHUTDOWN (their mailboxes and any
# messages queued for them freed at exit); redis-cli ends when the server does
redis-cli -p "$P" subscribe vch >"$tmp/sub1.out" 2>&1 &
pids+=($!)
redis-cli -p "$P" psubscribe "v*" >"$tmp/sub2.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ "$(R pubsub numpat)" = 1 ] && [ "$(R pubsub numsub vch | tail -n 1)" = 1 ] && break; sleep 0.1; done
check "PUBLISH under valgrind reaches both subscribers" '[ "$(R publish vch m)" = 2 ]'
R bgsave >/dev/null
for _ in $(seq 1 300); do
  R info persistence | grep -q '^rdb_bgsave_in_progress:0' && break
  sleep 0.1
done
check "BGSAVE finished ok" 'R info persistence | grep -q "^rdb_last_bgsave_status:ok"'

R shutdown nosave >/dev/null
wait "$vpid"
rc=$?
vpid=
check "exit status 0 after SHUTDOWN (valgrind's error exit is 99): $rc" '[ "$rc" = 0 ]'
check "memcheck: 0 errors" 'grep -q "ERROR SUMMARY: 0 errors" "$tmp/vg.log"'
check "memcheck: nothing definitely, indirectly or possibly lost" \
  '! grep -Eq "(definitely|indirectly|possibly) lost: [1-9]" "$tmp/vg.log"'
check "memcheck: no heap block in use at exit" 'grep -q "in use at exit: 0 bytes in 0 blocks" "$tmp/vg.log"'
if [ "$fail" != 0 ]; then
  sed -n '/HEAP SUMMARY/,$p' "$tmp/vg.log" | head -60
fi
summary
[ "$fail" = 0 ]
