#!/usr/bin/env bash
# tests/server/test_list.sh - the list type (issue 17, lists).
# Starts $B/rcukv-server (--threads 2, RCUKV_POISON_FREES=1: freed entries,
# roots and chunks are filled with 0x6b) and redis-servers on free loopback
# ports (9110-9139):
#   1. replies: tests/server/cases_list.txt (recorded from redis-server
#      7.0.15) through test_server --cases-only, against both servers;
#   2. blocking: tests/server/test_list_block.py with real clients, against
#      both (blocked on one worker and woken from the other, FIFO of three
#      clients, timeouts in RESP2 and RESP3, a disconnect while blocked,
#      CLIENT UNBLOCK, BLMOVE/BLMPOP, a push inside EXEC) and the keyspace
#      events of every list write;
#   3. torture: test_list_torture against both (readers check that every
#      LRANGE holds consecutive self-checking elements while pipelined
#      writers push, pop and trim both ends of lists up to 6000 elements);
#   4. big lists: 100000 elements pushed one command each, read back whole
#      and by LINDEX/LRANGE, popped from both ends; memory accounted;
#   5. RDB: test_list_rdb.py (RESTORE of hand-built payloads of RDB types 1,
#      14 and 18, every ziplist and listpack entry encoding) against both;
#      rcukv's SAVE of small, 100000-element and expiring lists passes
#      redis-check-rdb and loads into redis-server and a new rcukv-server
#      with every element in order; redis-server's dump of the same loads
#      into rcukv-server; DUMP/RESTORE both ways.
# Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
LT=$B/tests/server/test_list_torture
PORT_LAST=9139
. "$(dirname "$0")/../../scripts/lib.sh"
need_built "$SRV" "$TS" "$LT"
scratch_init list
export RCUKV_POISON_FREES=1
server_up "" 9110 --threads 2 --save "" --dir "$tmp"

r() { redis-cli -p "$P" "$@" 2>&1; }

# ------------------------------------------------------------ 1. replies
cases_both cases_list.txt

# ----------------------------------------------------------- 2. blocking
run_block() { # run_block WHO PORT
  check_cases "test_list_block.py against $1" \
    "$(cd "$(dirname "$0")" && timeout 120 python3 test_list_block.py "$2" 2>&1)"
}
against_both run_block $((P + 1))

# ------------------------------------------------------------ 3. torture
run_torture() { # run_torture WHO PORT
  check_cases "test_list_torture against $1" "$(timeout 120 "$LT" --port "$2" 2>&1)"
}
against_both run_torture $((P + 3))

# ---------------------------------------------------------- 4. big lists
r flushall >/dev/null
seq 0 99999 | sed 's/^/RPUSH big /' | redis-cli -p "$P" >/dev/null
check "100000 RPUSHes: LLEN 100000" '[ "$(r llen big)" = 100000 ]'
check "LRANGE of all 100000 in order" '[ "$(r lrange big 0 -1 | md5sum)" = "$(seq 0 99999 | md5sum)" ]'
check "LINDEX 0, 54321, -1" '[ "$(r lindex big 0) $(r lindex big 54321) $(r lindex big -1)" = "0 54321 99999" ]'
check "LRANGE 600 from 70000" '[ "$(r lrange big 70000 70599 | md5sum)" = "$(seq 70000 70599 | md5sum)" ]'
used=$(r memory usage big)
check "MEMORY USAGE counts the chunks (${used} bytes)" '[ "${used:-0}" -gt 500000 ]'
seq 1 1000 | sed 's/.*/LPUSH big h&/' | redis-cli -p "$P" >/dev/null
check "1000 LPUSHes in front" '[ "$(r lindex big 0) $(r lindex big 1000) $(r llen big)" = "h1000 0 101000" ]'
check "LPOP 1000 and RPOP 50000" '[ "$(r lpop big 1000 | tail -n 1) $(r rpop big 50000 | tail -n 1)" = "h1 50000" ]'
check "what is left is 0..49999" '[ "$(r lrange big 0 -1 | md5sum)" = "$(seq 0 49999 | md5sum)" ]'
check "LTRIM to the middle" '[ "$(r ltrim big 10000 19999) $(r llen big) $(r lindex big 0)" = "OK 10000 10000" ]'
check "DEL frees it" '[ "$(r del big) $(r exists big)" = "1 0" ]'

# ---------------------------------------------------------------- 5. RDB
run_rdbpy() { # run_rdbpy WHO PORT
  check_cases "test_list_rdb.py against $1" \
    "$(cd "$(dirname "$0")" && timeout 60 python3 test_list_rdb.py "$2" 2>&1)"
}
against_both run_rdbpy $((P + 5))
sums() { # sums PORT: md5 of every list's elements, key by key
  local k
  for k in small big ttl bin; do echo "$k $(redis-cli -p "$1" lrange $k 0 -1 | md5sum)"; done
}
fill() { # fill PORT
  redis-cli -p "$1" flushall >/dev/null
  redis-cli -p "$1" rpush small a 1 -5 "" 9223372036854775807 >/dev/null
  seq 0 99999 | sed 's/^/RPUSH big e/' | redis-cli -p "$1" >/dev/null
  redis-cli -p "$1" rpush ttl x y >/dev/null
  redis-cli -p "$1" expire ttl 1000 >/dev/null
  redis-cli -p "$1" rpush bin "$(printf 'z%.0s' $(seq 1 9000))" short >/dev/null
}
fill "$P"
sums "$P" >"$tmp/sums.want"
check "rcukv SAVE with lists" '[ "$(r save)" = OK ]'
if command -v redis-check-rdb >/dev/null; then
  check "redis-check-rdb accepts rcukv's dump" 'redis-check-rdb "$tmp/dump.rdb" >"$tmp/check.out" 2>&1'
else
  skip "redis-check-rdb: not installed"
fi
if command -v redis-server >/dev/null; then
  RP2=$(free_port $((P + 10)))
  cp "$tmp/dump.rdb" "$tmp/r.rdb"
  redis-server --port "$RP2" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
    --dbfilename r.rdb >"$tmp/redis2.log" 2>&1 &
  rp2=$!
  pids+=("$rp2")
  if wait_up "$RP2"; then
    sums "$RP2" >"$tmp/sums.redis"
    check "redis-server loaded rcukv's lists, every element in order" 'cmp -s "$tmp/sums.redis" "$tmp/sums.want"'
    check "redis-server loaded the TTL" '[ "$(redis-cli -p "$RP2" ttl ttl)" -gt 900 ]'
    r dump big | head -c -1 >"$tmp/big.dump"
    redis-cli -p "$RP2" -x restore big2 0 <"$tmp/big.dump" >"$tmp/restore.out" 2>&1
    check "rcukv's DUMP of a 100000-element list RESTOREs into redis-server" \
      '[ "$(cat "$tmp/restore.out")" = OK ] && [ "$(redis-cli -p "$RP2" lrange big2 0 -1 | md5sum)" = "$(r lrange big 0 -1 | md5sum)" ]'
    # redis -> rcukv: redis-server's own dump (type 18) and DUMP
    fill "$RP2"
    redis-cli -p "$RP2" dump big | head -c -1 >"$tmp/rbig.dump"
    r -x restore rbig 0 <"$tmp/rbig.dump" >"$tmp/restore2.out"
    check "redis-server's DUMP of a 100000-element list RESTOREs into rcukv, in order" \
      '[ "$(cat "$tmp/restore2.out")" = OK ] && [ "$(r lrange rbig 0 -1 | md5sum)" = "$(r lrange big 0 -1 | md5sum)" ]'
    redis-cli -p "$RP2" save >/dev/null
    stop_pid "$rp2"
    P2=$(free_port $((P + 12)))
    "$SRV" --port "$P2" --threads 2 --save "" --dir "$tmp" --dbfilename r.rdb >"$tmp/server2.log" 2>&1 &
    sp2=$!
    pids+=("$sp2")
    if wait_up "$P2"; then
      sums "$P2" >"$tmp/sums.rcukv2"
      check "rcukv loaded redis-server's dump, every element in order" 'cmp -s "$tmp/sums.rcukv2" "$tmp/sums.want"'
      stop_pid "$sp2"
    else
      bad "rcukv-server started on redis-server's dump"; tail -n 5 "$tmp/server2.log"
    fi
  else
    bad "redis-server started on rcukv's dump"; tail -n 5 "$tmp/redis2.log"
  fi
else
  skip "RDB to and from redis-server: redis-server not installed"
fi
P3=$(free_port $((P + 15)))
"$SRV" --port "$P3" --threads 2 --save "" --dir "$tmp" >"$tmp/server3.log" 2>&1 &
sp3=$!
pids+=("$sp3")
if wait_up "$P3"; then
  sums "$P3" >"$tmp/sums.rcukv3"
  check "rcukv reloaded its own dump, every element in order" 'cmp -s "$tmp/sums.rcukv3" "$tmp/sums.want"'
  check "rcukv reloaded the TTL" '[ "$(redis-cli -p "$P3" ttl ttl)" -gt 900 ]'
  stop_pid "$sp3"
else
  bad "rcukv-server started on its own dump"; tail -n 5 "$tmp/server3.log"
fi

summary
