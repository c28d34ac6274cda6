#!/usr/bin/env bash
# tests/server/test_hash.sh - the hash type (issue 17, first increment).
# Starts $B/rcukv-server (--threads 2, RCUKV_POISON_FREES=1: freed entries
# are filled with 0x6b) and redis-servers on free loopback ports (7840-7859):
#   1. replies: tests/server/cases_hash.txt (recorded from redis-server
#      7.0.15) through test_server --cases-only, against both servers;
#   2. torture: test_hash_torture against both (readers check every value
#      and the sum of each hash while writers churn fields across the
#      listpack/hashtable threshold);
#   3. RDB: rcukv's SAVE of small, big (hashtable) and expiring hashes passes
#      redis-check-rdb, loads into redis-server and into a new rcukv-server
#      with every field; a dump from redis-server with listpack (RDB type
#      16, every integer width) and hashtable-encoded (type 4) hashes loads
#      into rcukv-server, the listpack one in its order; DUMP of a hash
#      RESTOREs into redis-server, redis-server's into rcukv-server, and
#      rcukv's into itself;
#   4. maxmemory: hashes count in used_memory and allkeys-lru evicts them.
# Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
HT=$B/tests/server/test_hash_torture
PORT_LAST=7859
. "$(dirname "$0")/../../scripts/lib.sh"
need_built "$SRV" "$TS" "$HT"
scratch_init hash
export RCUKV_POISON_FREES=1
server_up "" 7840 --threads 2 --save "" --dir "$tmp"

r() { redis-cli -p "$P" "$@" 2>&1; }

# ------------------------------------------------------------ 1. replies
cases_both cases_hash.txt

# ------------------------------------------------------------ 2. torture
run_torture() { # run_torture WHO PORT
  check_cases "test_hash_torture against $1" "$("$HT" --port "$2" 2>&1)"
}
against_both run_torture $((P + 1))

# ---------------------------------------------------------------- 3. RDB
# sorted "field value" lines of hash $2 on port $1
fields() { redis-cli -p "$1" hgetall "$2" | paste - - | sort; }
r flushall >/dev/null
r hset small a 1 b 2 c "" >/dev/null
r hset ttl x y >/dev/null
r expire ttl 1000 >/dev/null
for i in $(seq 1 600); do printf 'HSET big f%d v%d\n' "$i" "$i"; done | redis-cli -p "$P" >/dev/null
r hset long f "$(printf 'x%.0s' $(seq 1 100))" >/dev/null
r set str plain >/dev/null
check "rcukv SAVE with hashes" '[ "$(r save)" = OK ]'
if command -v redis-check-rdb >/dev/null; then
  check "redis-check-rdb accepts rcukv's dump" 'redis-check-rdb "$tmp/dump.rdb" >"$tmp/check.out" 2>&1'
else
  skip "redis-check-rdb: not installed"
fi
if command -v redis-server >/dev/null; then
  RP2=$(free_port $((P + 5)))
  cp "$tmp/dump.rdb" "$tmp/r.rdb"
  redis-server --port "$RP2" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
    --dbfilename r.rdb >"$tmp/redis2.log" 2>&1 &
  rp2=$!
  pids+=("$rp2")
  if wait_up "$RP2"; then
    for k in small big long; do
      check "redis-server loaded rcukv's hash $k whole" '[ "$(fields "$RP2" $k)" = "$(fields "$P" $k)" ]'
    done
    check "redis-server loaded the TTL" '[ "$(redis-cli -p "$RP2" ttl ttl)" -gt 900 ]'
    check "redis-server sees hashtable for 600 fields" \
      '[ "$(redis-cli -p "$RP2" object encoding big)" = hashtable ]'
    # DUMP of a hash from rcukv RESTOREd into redis-server
    r dump small | head -c -1 >"$tmp/small.dump"
    redis-cli -p "$RP2" -x restore small2 0 <"$tmp/small.dump" >"$tmp/restore.out" 2>&1
    check "rcukv's DUMP of a hash RESTOREs into redis-server" \
      '[ "$(cat "$tmp/restore.out")" = OK ] && [ "$(fields "$RP2" small2)" = "$(fields "$P" small)" ]'
    # redis -> rcukv: listpack-encoded hashes are RDB type 16 (every
    # integer width of a listpack here), hashtable-encoded ones type 4
    redis-cli -p "$RP2" flushall >/dev/null
    redis-cli -p "$RP2" hset lp a 1 b -5000 c 100000 d 9223372036854775807 e -1 \
      f -9223372036854775808 g 127 h 128 i 4095 j -4096 k 32767 l 8388607 m -8388608 \
      n 2147483647 -33 x "" "" 012 -0 s60 "$(printf 'y%.0s' $(seq 1 60))" >/dev/null
    redis-cli -p "$RP2" hgetall lp >"$tmp/lp.redis"
    # DUMP of a listpack hash from redis-server RESTOREd into rcukv, and
    # rcukv's own DUMP of a big hash RESTOREd into rcukv
    redis-cli -p "$RP2" dump lp | head -c -1 >"$tmp/lp.dump"
    r -x restore lpr 0 <"$tmp/lp.dump" >"$tmp/restore2.out"
    r hgetall lpr >"$tmp/lpr.rcukv"
    check "redis-server's DUMP of a listpack hash RESTOREs into rcukv, in order" \
      '[ "$(cat "$tmp/restore2.out")" = OK ] && cmp -s "$tmp/lpr.rcukv" "$tmp/lp.redis"'
    r dump big | head -c -1 >"$tmp/big.dump"
    r -x restore big2 0 <"$tmp/big.dump" >"$tmp/restore3.out"
    check "rcukv's DUMP of a big hash RESTOREs into rcukv" \
      '[ "$(cat "$tmp/restore3.out")" = OK ] && [ "$(fields "$P" big2)" = "$(fields "$P" big)" ] && [ "$(r object encoding big2)" = hashtable ]'
    redis-cli -p "$RP2" config set hash-max-listpack-entries 0 >/dev/null
    redis-cli -p "$RP2" hset rh a 1 b 2 >/dev/null
    for i in $(seq 1 300); do printf 'HSET rbig f%d v%d\n' "$i" "$i"; done | redis-cli -p "$RP2" >/dev/null
    redis-cli -p "$RP2" save >/dev/null
    stop_pid "$rp2"
    P2=$(free_port $((P + 10)))
    "$SRV" --port "$P2" --threads 2 --save "" --dir "$tmp" --dbfilename r.rdb >"$tmp/server2.log" 2>&1 &
    sp2=$!
    pids+=("$sp2")
    if wait_up "$P2"; then
      check "rcukv loaded redis-server's type-4 hashes" \
        '[ "$(redis-cli -p "$P2" hlen rbig)" = 300 ] && [ "$(redis-cli -p "$P2" hget rh b)" = 2 ]'
      redis-cli -p "$P2" hgetall lp >"$tmp/lp.rcukv"
      check "rcukv loaded redis-server's listpack hash in its order" \
        'cmp -s "$tmp/lp.rcukv" "$tmp/lp.redis" && [ "$(redis-cli -p "$P2" object encoding lp)" = listpack ]'
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
# rcukv reloads its own dump
P3=$(free_port $((P + 15)))
"$SRV" --port "$P3" --threads 2 --save "" --dir "$tmp" >"$tmp/server3.log" 2>&1 &
sp3=$!
pids+=("$sp3")
if wait_up "$P3"; then
  for k in small big long; do
    check "rcukv reloaded its hash $k whole" '[ "$(fields "$P3" $k)" = "$(fields "$P" $k)" ]'
  done
  check "rcukv reloaded the encodings" \
    '[ "$(redis-cli -p "$P3" object encoding small) $(redis-cli -p "$P3" object encoding big) $(redis-cli -p "$P3" object encoding long)" = "listpack hashtable hashtable" ]'
  stop_pid "$sp3"
else
  bad "rcukv-server started on its own dump"; tail -n 5 "$tmp/server3.log"
fi

# ------------------------------------------------------- 4. maxmemory
# 600 hashes of 100 fields (about 6 KB each) into a 4 MB rcukv-server with
# allkeys-lru: every HSET answers, hashes are evicted, memory stays near
# the limit (a hash's bytes count: it is one entry, ht_entry_size()).
P4=$(free_port $((P + 12)))
"$SRV" --port "$P4" --threads 2 --save "" --maxmemory 4mb --maxmemory-policy allkeys-lru \
  >"$tmp/server4.log" 2>&1 &
sp4=$!
pids+=("$sp4")
if wait_up "$P4"; then
  for i in $(seq 1 600); do
    printf 'HSET h%d' "$i"
    for j in $(seq 1 100); do printf ' f%d 0123456789012345678901234567890123456789' "$j"; done
    printf '\n'
  done | redis-cli -p "$P4" >"$tmp/evict.out" 2>&1
  keys=$(redis-cli -p "$P4" dbsize)
  ev=$(redis-cli -p "$P4" info stats | tr -d '\r' | sed -n 's/^evicted_keys://p')
  used=$(redis-cli -p "$P4" info memory | tr -d '\r' | sed -n 's/^used_memory://p')
  check "maxmemory 4mb: all 600 HSETs of 100 fields answered 100" '[ "$(grep -c "^100$" "$tmp/evict.out")" = 600 ]'
  check "hashes were evicted ($ev evicted, $keys left)" '[ "$ev" -gt 0 ] && [ "$keys" -gt 0 ] && [ "$keys" -lt 600 ]'
  check "used_memory stays near maxmemory ($used bytes)" '[ "$used" -lt $((6 * 1024 * 1024)) ]'
  stop_pid "$sp4"
else
  bad "rcukv-server with maxmemory started"; tail -n 5 "$tmp/server4.log"
fi

summary
