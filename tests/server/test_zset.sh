#!/usr/bin/env bash
# tests/server/test_zset.sh - the sorted set type (issue 17).
# Starts $B/rcukv-server (--threads 2, RCUKV_POISON_FREES=1: freed entries
# are filled with 0x6b) and redis-servers on free loopback ports (9200-9229):
#   1. replies: tests/server/cases_zset.txt (recorded from redis-server
#      7.0.15) through test_server --cases-only, against both servers;
#   2. torture: test_zset_torture against both (readers check every range
#      read for member checksums, strict order and a constant sum while
#      writers churn members across the listpack/skiplist threshold);
#   3. RDB: rcukv's SAVE of small (listpack), big (skiplist), long-member
#      and expiring sorted sets passes redis-check-rdb, loads into
#      redis-server and into a new rcukv-server with every member and score;
#      a dump from redis-server with listpack (RDB type 17: integer, float,
#      inf and -inf scores) and skiplist (type 5) sets loads into
#      rcukv-server whole; DUMP of a sorted set RESTOREs into redis-server,
#      redis-server's (both encodings) into rcukv-server, and rcukv's into
#      itself; a Redis 6 ziplist (type 12, tests/server/zset_ziplist.py) by
#      RESTORE and in an RDB file;
#   4. maxmemory: sorted sets count in used_memory and allkeys-lru evicts
#      them.
# Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
ZT=$B/tests/server/test_zset_torture
PORT_LAST=9229
. "$(dirname "$0")/../../scripts/lib.sh"
need_built "$SRV" "$TS" "$ZT"
scratch_init zset
export RCUKV_POISON_FREES=1
server_up "" 9200 --threads 2 --save "" --dir "$tmp"

r() { redis-cli -p "$P" "$@" 2>&1; }
PY3=$(command -v python3)

# ------------------------------------------------------------ 1. replies
cases_both cases_zset.txt

# ------------------------------------------------------------ 2. torture
run_torture() { # run_torture WHO PORT
  check_cases "test_zset_torture against $1" "$("$ZT" --port "$2" 2>&1)"
}
against_both run_torture $((P + 1))

# ------------------------------------------------------------ blocking pops
run_block() { # run_block WHO PORT
  if [ -n "$PYR" ]; then
    check_cases "BZPOPMIN/BZPOPMAX/BZMPOP blocking clients against $1" \
      "$(PYTHONPATH=tests/server timeout 120 "$PYR" tests/server/test_zset_block.py "$2" 2>&1)"
  else
    skip "blocking pops against $1: python3-redis not installed (scripts/deps.sh test)"
  fi
}
PYR=
find_redis_py && PYR=$PY
against_both run_block $((P + 2))

# ZSCAN of a skiplist (its order is rcukv's own): COUNT 7 until cursor 0,
# at most 200 calls, gives each of 300 members once with its score
r flushall >/dev/null
for i in $(seq 1 300); do printf 'ZADD scan %d.5 m%d\n' "$i" "$i"; done | redis-cli -p "$P" >/dev/null
cur=0 calls=0
: >"$tmp/scan.out"
while :; do
  redis-cli -p "$P" zscan scan "$cur" count 7 >"$tmp/scan.page"
  cur=$(head -n 1 "$tmp/scan.page")
  tail -n +2 "$tmp/scan.page" | paste - - >>"$tmp/scan.out"
  calls=$((calls + 1))
  [ "$cur" = 0 ] || [ "$calls" -ge 200 ] && break
done
check "ZSCAN of a 300-member skiplist: every member once, with its score ($calls calls)" '[ "$cur" = 0 ] && [ "$calls" -gt 10 ] && [ "$(sort "$tmp/scan.out")" = "$(redis-cli -p "$P" zrange scan 0 -1 withscores | paste - - | sort)" ] && [ "$(wc -l <"$tmp/scan.out")" = 300 ]'

# ---------------------------------------------------------------- 3. RDB
# "member score" lines of sorted set $2 on port $1, in order
elems() { redis-cli -p "$1" zrange "$2" 0 -1 withscores | paste - -; }
r flushall >/dev/null
r zadd small 1 a 2.5 b -3 c inf d -inf e 0.1 f 1e300 g >/dev/null
r zadd ttl 1 x >/dev/null
r expire ttl 1000 >/dev/null
for i in $(seq 1 300); do printf 'ZADD big %d.25 m%d\n' "$i" "$i"; done | redis-cli -p "$P" >/dev/null
r zadd long 1 "$(printf 'x%.0s' $(seq 1 100))" 2 b >/dev/null
r set str plain >/dev/null
check "the sets to save are there (7, 300, 2 members)" \
  '[ "$(r zcard small) $(r zcard big) $(r zcard long)" = "7 300 2" ]'
check "rcukv SAVE with sorted sets" '[ "$(r save)" = OK ]'
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
      check "redis-server loaded rcukv's sorted set $k whole" '[ "$(elems "$RP2" $k)" = "$(elems "$P" $k)" ]'
    done
    check "redis-server loaded the TTL" '[ "$(redis-cli -p "$RP2" ttl ttl)" -gt 900 ]'
    check "redis-server sees listpack, skiplist, skiplist" \
      '[ "$(redis-cli -p "$RP2" object encoding small) $(redis-cli -p "$RP2" object encoding big) $(redis-cli -p "$RP2" object encoding long)" = "listpack skiplist skiplist" ]'
    r dump small | head -c -1 >"$tmp/small.dump"
    redis-cli -p "$RP2" -x restore small2 0 <"$tmp/small.dump" >"$tmp/restore.out" 2>&1
    check "rcukv's DUMP of a sorted set RESTOREs into redis-server" '[ "$(cat "$tmp/restore.out")" = OK ] && [ "$(elems "$RP2" small2)" = "$(elems "$P" small)" ]'
    # redis -> rcukv: listpack-encoded sets are RDB type 17 (integer
    # scores of every listpack width, floats, inf), skiplist ones type 5
    redis-cli -p "$RP2" flushall >/dev/null
    redis-cli -p "$RP2" zadd lp 1 a -5000 b 100000 c 9007199254740992 d -1 e 127 f 128 g \
      4095 h -4096 i 32767 j 8388607 k -8388608 l 2147483647 m 1.5 n inf o -inf p 0.1 q \
      -0 r 1e-300 s 1e300 t 3 "" >/dev/null
    elems "$RP2" lp >"$tmp/lp.redis"
    check "redis-server holds the listpack set (21 members)" \
      '[ "$(wc -l <"$tmp/lp.redis") $(redis-cli -p "$RP2" object encoding lp)" = "21 listpack" ]'
    redis-cli -p "$RP2" dump lp | head -c -1 >"$tmp/lp.dump"
    r -x restore lpr 0 <"$tmp/lp.dump" >"$tmp/restore2.out"
    elems "$P" lpr >"$tmp/lpr.rcukv"
    check "redis-server's DUMP of a listpack sorted set RESTOREs into rcukv" \
      '[ "$(cat "$tmp/restore2.out")" = OK ] && cmp -s "$tmp/lpr.rcukv" "$tmp/lp.redis"'
    r dump big | head -c -1 >"$tmp/big.dump"
    r -x restore big2 0 <"$tmp/big.dump" >"$tmp/restore3.out"
    check "rcukv's DUMP of a big sorted set RESTOREs into rcukv" \
      '[ "$(cat "$tmp/restore3.out")" = OK ] && [ "$(elems "$P" big2)" = "$(elems "$P" big)" ] && [ "$(r object encoding big2)" = skiplist ]'
    for i in $(seq 1 300); do printf 'ZADD rbig %d.5 f%d\n' "$i" "$i"; done | redis-cli -p "$RP2" >/dev/null
    redis-cli -p "$RP2" zadd rbig inf top -inf bottom >/dev/null
    elems "$RP2" rbig >"$tmp/rbig.redis"
    check "redis-server holds the skiplist set (302 members)" \
      '[ "$(wc -l <"$tmp/rbig.redis") $(redis-cli -p "$RP2" object encoding rbig)" = "302 skiplist" ]'
    redis-cli -p "$RP2" dump rbig | head -c -1 >"$tmp/rbig.dump"
    r -x restore rbigr 0 <"$tmp/rbig.dump" >"$tmp/restore4.out"
    check "redis-server's DUMP of a skiplist sorted set RESTOREs into rcukv" \
      '[ "$(cat "$tmp/restore4.out")" = OK ] && [ "$(elems "$P" rbigr)" = "$(cat "$tmp/rbig.redis")" ]'
    # Redis 6's ziplist (type 12, tests/server/zset_ziplist.py): both
    # servers RESTORE it alike, listpack though a member is long (Redis
    # keeps a loaded listpack or ziplist compact whatever its members)
    "$PY3" tests/server/zset_ziplist.py dump >"$tmp/zl.dump"
    "$PY3" tests/server/zset_ziplist.py rdb >"$tmp/zl.rdb"
    redis-cli -p "$RP2" -x restore zl 0 <"$tmp/zl.dump" >/dev/null
    r -x restore zl 0 <"$tmp/zl.dump" >"$tmp/restore5.out"
    elems "$RP2" zl >"$tmp/zl.redis"
    check "a ziplist sorted set (RDB type 12) RESTOREs into rcukv as into redis-server" \
      '[ "$(cat "$tmp/restore5.out")" = OK ] && [ "$(wc -l <"$tmp/zl.redis")" = 13 ] && [ "$(elems "$P" zl)" = "$(cat "$tmp/zl.redis")" ] && [ "$(r object encoding zl) $(redis-cli -p "$RP2" object encoding zl)" = "listpack listpack" ]'
    redis-cli -p "$RP2" config set zset-max-listpack-value 1000 >/dev/null
    redis-cli -p "$RP2" zadd lplong 1 "$(printf 'y%.0s' $(seq 1 100))" 2 b >/dev/null
    redis-cli -p "$RP2" dump lplong | head -c -1 >"$tmp/lplong.dump"
    redis-cli -p "$RP2" config set zset-max-listpack-value 64 >/dev/null
    r -x restore lplong 0 <"$tmp/lplong.dump" >/dev/null
    check "a listpack with a 100-byte member RESTOREs as a listpack (as Redis 7.0 loads it)" \
      '[ "$(r object encoding lplong)" = listpack ] && [ "$(r zcard lplong)" = 2 ]'
    redis-cli -p "$RP2" save >/dev/null
    stop_pid "$rp2"
    P2=$(free_port $((P + 10)))
    "$SRV" --port "$P2" --threads 2 --save "" --dir "$tmp" --dbfilename r.rdb >"$tmp/server2.log" 2>&1 &
    sp2=$!
    pids+=("$sp2")
    if wait_up "$P2"; then
      check "rcukv loaded redis-server's type-5 sorted set whole" \
        '[ "$(elems "$P2" rbig)" = "$(cat "$tmp/rbig.redis")" ] && [ "$(redis-cli -p "$P2" object encoding rbig)" = skiplist ]'
      check "rcukv loaded redis-server's type-17 sorted set whole" \
        '[ "$(elems "$P2" lp)" = "$(cat "$tmp/lp.redis")" ] && [ "$(redis-cli -p "$P2" object encoding lp)" = listpack ]'
      stop_pid "$sp2"
      # the same ziplist in a whole RDB file (REDIS0009), as Redis 6 saves it
      "$SRV" --port "$P2" --threads 2 --save "" --dir "$tmp" --dbfilename zl.rdb >"$tmp/server5.log" 2>&1 &
      sp5=$!
      pids+=("$sp5")
      if wait_up "$P2"; then
        check "rcukv loaded a Redis 6 RDB file with a ziplist sorted set whole" \
          '[ "$(elems "$P2" zl)" = "$(cat "$tmp/zl.redis")" ]'
        stop_pid "$sp5"
      else
        bad "rcukv-server started on a Redis 6 style dump"; tail -n 5 "$tmp/server5.log"
      fi
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
    check "rcukv reloaded its sorted set $k whole" '[ "$(elems "$P3" $k)" = "$(elems "$P" $k)" ]'
  done
  check "rcukv reloaded the encodings and the TTL" \
    '[ "$(redis-cli -p "$P3" object encoding small) $(redis-cli -p "$P3" object encoding big) $(redis-cli -p "$P3" object encoding long)" = "listpack skiplist skiplist" ] && [ "$(redis-cli -p "$P3" ttl ttl)" -gt 900 ]'
  stop_pid "$sp3"
else
  bad "rcukv-server started on its own dump"; tail -n 5 "$tmp/server3.log"
fi

# ------------------------------------------------------- 4. maxmemory
# 600 sorted sets of 100 members (about 6 KB each) into a 4 MB
# rcukv-server with allkeys-lru: every ZADD answers, sets are evicted,
# memory stays near the limit (a set is one entry, ht_entry_size()).
P4=$(free_port $((P + 12)))
"$SRV" --port "$P4" --threads 2 --save "" --maxmemory 4mb --maxmemory-policy allkeys-lru \
  >"$tmp/server4.log" 2>&1 &
sp4=$!
pids+=("$sp4")
if wait_up "$P4"; then
  for i in $(seq 1 600); do
    printf 'ZADD z%d' "$i"
    for j in $(seq 1 100); do printf ' %d m%d-0123456789012345678901234567890123456789' "$j" "$j"; done
    printf '\n'
  done | redis-cli -p "$P4" >"$tmp/evict.out" 2>&1
  keys=$(redis-cli -p "$P4" dbsize)
  ev=$(redis-cli -p "$P4" info stats | tr -d '\r' | sed -n 's/^evicted_keys://p')
  used=$(redis-cli -p "$P4" info memory | tr -d '\r' | sed -n 's/^used_memory://p')
  check "maxmemory 4mb: all 600 ZADDs of 100 members answered 100" '[ "$(grep -c "^100$" "$tmp/evict.out")" = 600 ]'
  check "sorted sets were evicted ($ev evicted, $keys left)" '[ "$ev" -gt 0 ] && [ "$keys" -gt 0 ] && [ "$keys" -lt 600 ]'
  check "used_memory stays near maxmemory ($used bytes)" '[ "$used" -lt $((6 * 1024 * 1024)) ]'
  stop_pid "$sp4"
else
  bad "rcukv-server with maxmemory started"; tail -n 5 "$tmp/server4.log"
fi

summary
