#!/usr/bin/env bash
# tests/server/test_db.sh - the 16 databases (issue 16 item 1):
#   1. replies: tests/server/cases_db.txt (recorded from redis-server
#      7.0.15) through test_server --cases-only, against rcukv-server and
#      against a redis-server started here;
#   2. RDB both ways with several databases: a dump redis-server wrote of
#      dbs 0, 3 and 15 (strings, TTLs) loads into rcukv-server, each key in
#      its db; rcukv-server's SAVE of the same loads into redis-server (and
#      passes redis-check-rdb when installed);
#   3. `databases`: 4 databases refuse SELECT 4 and a dump with a key in
#      db 15 (start-up fails, as Redis's); 0 is refused at start-up;
#   4. SWAPDB under writers: INCRs pipelined into db 0 by two clients while
#      a third swaps dbs 0 and 1 200 times lose no increment (db 0 + db 1);
#   5. background work in every db: the active expiry cycle removes keys
#      with a TTL in db 9 without their being read, and allkeys-lru under
#      maxmemory evicts db 5's keys to make room for writes to db 0.
# Starts $B/rcukv-server on free loopback ports (7800-7829).  Ends with
# "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
PORT_LAST=7829
. "$(dirname "$0")/../../scripts/lib.sh"
skip_without "test_db needs redis-cli" redis-cli
need_built "$TS"
scratch_init db
server_up "" 7800 --threads 2 --save "" --dir "$tmp"

r() { redis-cli -p "$P" "$@" 2>&1; }

# ------------------------------------------------------------ 1. replies
cases_both cases_db.txt

# --------------------------------------------------------------- 2. RDB
# fill PORT: the same keys in dbs 0, 3 and 15 of the server on PORT.
fill() {
  redis-cli -p "$1" flushall >/dev/null
  redis-cli -p "$1" -n 0 set a0 zero >/dev/null
  redis-cli -p "$1" -n 0 set n0 12345 >/dev/null
  redis-cli -p "$1" -n 3 set a3 three >/dev/null
  redis-cli -p "$1" -n 3 set t3 ttl ex 1000 >/dev/null
  redis-cli -p "$1" -n 15 set a15 fifteen >/dev/null
  redis-cli -p "$1" -n 15 set a0 "same name, db 15" >/dev/null
}
# dump PORT: every db's keys, values and whether they have a TTL.
dump() {
  local db k
  for db in 0 1 3 15; do
    for k in $(redis-cli -p "$1" -n $db keys '*' | sort); do
      echo "$db $k $(redis-cli -p "$1" -n $db get "$k") $(redis-cli -p "$1" -n $db ttl "$k" |
        awk '{ print ($1 > 0) ? "ttl" : $1 }')"
    done
  done
}
if redis_up $((P + 2)); then
  fill "$RP"
  want=$(dump "$RP")
  redis-cli -p "$RP" save >/dev/null
  cp "$tmp/dump.rdb" "$tmp/from-redis.rdb"
  stop_pid "$rpid"
  # rcukv loads redis-server's dump of three databases
  P2=$(free_port $((P + 3)))
  "$SRV" --port "$P2" --save "" --dir "$tmp" --dbfilename from-redis.rdb \
    >"$tmp/load.log" 2>&1 &
  lpid=$!
  pids+=("$lpid")
  wait_up "$P2"
  got=$(dump "$P2")
  check "redis-server's dump of dbs 0, 3, 15 loads into rcukv, each key in its db" \
    '[ "$got" = "$want" ] && [ -n "$got" ]'
  [ "$got" = "$want" ] || diff <(echo "$want") <(echo "$got") | head -10
  check "INFO keyspace after the load lists db0, db3 and db15" \
    '[ "$(redis-cli -p "$P2" info keyspace | tr -d "\r" | grep -c "^db\(0\|3\|15\):keys=2,")" = 3 ]'
  # rcukv's SAVE of the same loads into redis-server
  # (dbfilename is a protected config: the SAVE rewrites from-redis.rdb)
  fill "$P2"
  redis-cli -p "$P2" save >/dev/null
  stop_pid "$lpid"
  mv "$tmp/from-redis.rdb" "$tmp/from-rcukv.rdb"
  if command -v redis-check-rdb >/dev/null; then
    check "redis-check-rdb accepts rcukv's dump of three dbs" \
      'redis-check-rdb "$tmp/from-rcukv.rdb" >"$tmp/check.log" 2>&1'
  else
    skip "redis-check-rdb: not installed"
  fi
  RP=$(free_port $((P + 4)))
  redis-server --port "$RP" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
    --dbfilename from-rcukv.rdb >"$tmp/redis2.log" 2>&1 &
  rpid=$!
  pids+=("$rpid")
  wait_up "$RP"
  got=$(dump "$RP")
  check "rcukv's dump of dbs 0, 3, 15 loads into redis-server, each key in its db" \
    '[ "$got" = "$want" ]'
  [ "$got" = "$want" ] || diff <(echo "$want") <(echo "$got") | head -10
  stop_pid "$rpid"
fi

# --------------------------------------------------------- 3. databases
P3=$(free_port $((P + 5)))
"$SRV" --port "$P3" --save "" --dir "$tmp" --dbfilename none.rdb --databases 4 \
  >"$tmp/db4.log" 2>&1 &
p3=$!
pids+=("$p3")
wait_up "$P3"
check "databases 4: SELECT 3 is OK" '[ "$(redis-cli -p "$P3" select 3)" = OK ]'
check "databases 4: SELECT 4 is out of range" \
  '[ "$(redis-cli -p "$P3" select 4)" = "ERR DB index is out of range" ]'
check "databases 4: CONFIG GET databases" \
  '[ "$(redis-cli -p "$P3" config get databases | tail -n 1)" = 4 ]'
stop_pid "$p3"
if [ -f "$tmp/from-rcukv.rdb" ]; then
  check "databases 4: a dump with a key in db 15 stops start-up" \
    '! timeout 10 "$SRV" --port "$P3" --save "" --dir "$tmp" --dbfilename from-rcukv.rdb \
       --databases 4 >"$tmp/db4b.log" 2>&1'
  grep -q "more than 4 databases" "$tmp/db4b.log" || tail -n 3 "$tmp/db4b.log"
fi
check "databases 0 is refused at start-up" \
  '! timeout 10 "$SRV" --port "$P3" --save "" --databases 0 >"$tmp/db0.log" 2>&1'

# ------------------------------------------------- 4. SWAPDB under writers
N=20000
incrs() {
  awk -v n="$N" 'BEGIN { for (i = 0; i < n; i++) printf "*2\r\n$4\r\nINCR\r\n$3\r\nctr\r\n" }' |
    redis-cli -p "$P" --pipe >"$tmp/pipe.$1" 2>&1
}
r flushall >/dev/null
incrs 0 & a=$!
incrs 1 & b=$!
for i in $(seq 1 200); do echo "SWAPDB 0 1"; done | redis-cli -p "$P" >/dev/null
wait "$a" "$b"
sum=$(($(r -n 0 get ctr | sed 's/^$/0/') + $(r -n 1 get ctr | sed 's/^$/0/')))
check "INCRs into db 0 while SWAPDB 0 1 runs 200 times: none lost ($sum of $((2 * N)))" \
  '[ "$sum" = $((2 * N)) ]'

# ------------------------------------------- 5. expiry and eviction per db
r flushall >/dev/null
awk 'BEGIN { for (i = 0; i < 2000; i++) printf "*5\r\n$3\r\nSET\r\n$%d\r\ne%d\r\n$1\r\nv\r\n$2\r\nPX\r\n$3\r\n100\r\n", length("e" i), i }' |
  redis-cli -p "$P" -n 9 --pipe >/dev/null 2>&1
before=$(r info stats | tr -d '\r' | sed -n 's/^expired_keys://p')
for i in $(seq 1 50); do
  [ "$(r -n 9 dbsize)" = 0 ] && break
  sleep 0.1
done
after=$(r info stats | tr -d '\r' | sed -n 's/^expired_keys://p')
check "active expiry empties db 9 unread ($((after - before)) expired_keys)" \
  '[ "$(r -n 9 dbsize)" = 0 ] && [ $((after - before)) -ge 1900 ]'
r flushall >/dev/null
big=$(head -c 1000 /dev/zero | tr '\0' x)
for i in $(seq 1 3000); do echo "SET old$i $big"; done | redis-cli -p "$P" -n 5 >/dev/null
used=$(r info memory | tr -d '\r' | sed -n 's/^used_memory://p')
r config set maxmemory-policy allkeys-lru >/dev/null
r config set maxmemory $((used + 1024 * 1024)) >/dev/null
for i in $(seq 1 3000); do echo "SET new$i $big"; done | redis-cli -p "$P" -n 0 >"$tmp/evict.out"
n5=$(r -n 5 dbsize)
n0=$(r -n 0 dbsize)
check "allkeys-lru evicts db 5's keys for db 0's writes (db5 $n5 of 3000, db0 $n0 of 3000)" \
  '[ "$n5" -lt 2500 ] && [ "$n0" -gt 1500 ] && ! grep -q OOM "$tmp/evict.out"'
r config set maxmemory 0 >/dev/null

summary
