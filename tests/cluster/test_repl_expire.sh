#!/usr/bin/env bash
# tests/cluster/test_repl_expire.sh - expiry on a replica (issue 18,
# docs/replication.md "Expiry on a replica").  Free loopback ports 9100-9199.
# An rcukv replica must treat expired keys as a Redis 7.0 replica does, so
# that it stays equal to its master key by key: it never removes a key
# because it expired (neither in the active cycle nor on access), reads of a
# logically expired key answer "missing" while the key stays (DBSIZE counts
# it), and the master's own commands see the key as present.
#   1. a redis-server master with DEBUG SET-ACTIVE-EXPIRE 0, a redis-server
#      replica and an rcukv replica side by side: keys with PEXPIRE 100..290,
#      a key SET with a PXAT in the past, and a script that busy-waits 300
#      ms on the master (time stands still in a script there, so its keys
#      have not expired for it): PEXPIRE 50, RESTORE with a 50 ms TTL, SET
#      PX 100, then INCR of those keys, whose time passed meanwhile (one
#      made PERSISTent).
#      Its effects reach the replicas when every TTL has passed on their
#      clock;
#   2. once the TTLs passed: GET, EXISTS, TYPE, TTL, PEXPIRETIME, STRLEN,
#      MGET, HGETALL, SMEMBERS, DBSIZE, SCAN, KEYS, INFO keyspace and
#      expired_keys, asked of both replicas, the answers compared (the redis
#      replica's are recorded live here, not written down);
#   then a full sync of the rcukv replica and of a new redis replica (the
#      dump has the logically expired keys; a replica's load keeps them), and
#      the same answers compared again;
#   3. DEBUG SET-ACTIVE-EXPIRE 1 on the master: its DELs arrive, and both
#      replicas end equal to the master key by key (repl_compare.py) with
#      the same DBSIZE;
#   4. the same with an rcukv master (DEBUG SET-ACTIVE-EXPIRE 0, then 1), an
#      rcukv replica and a redis-server replica of it;
#   5. replica-read-only no: keys the replicas' own clients write with a TTL
#      (SET PX/PXAT, PEXPIRE, GETEX, EXPIRE -1, MULTI, EVAL) expire there,
#      the master's key does not (Redis's slaveKeysWithExpire).
# With an rcukv-server that expires keys on its own as a replica (main before
# this test, or SRV=...), steps 2 and 3 fail.
# Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=${SRV:-$B/rcukv-server}
TS=$B/tests/server/test_server
PORT_LAST=${PORT_LAST:-9199}
FIRST=${FIRST_PORT:-9100}
. "$(dirname "$0")/../../scripts/lib.sh"
skip_without "replica expiry test needs redis-server and redis-cli" redis-server redis-cli
need_built "$SRV"
scratch_init rexpire
if ! find_redis_py; then
  skip "python3-redis not installed: no key-by-key comparisons"
  summary
  exit 0
fi
CMP=tests/cluster/repl_compare.py
. "$(dirname "$0")/repl_lib.sh"

# start_redis NAME FIRST [ARGS...]: a redis-server on a free port, sets PORT
start_redis() {
  local name=$1
  PORT=$(free_port "$2")
  shift 2
  redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
    --dbfilename "$name.rdb" --enable-debug-command local "$@" >"$tmp/$name.log" 2>&1 &
  pids+=("$!")
  wait_up "$PORT" || { bad "$name: redis-server did not start on $PORT"; summary; exit 1; }
}
# start_rcukv NAME FIRST [ARGS...]: an rcukv-server on a free port, sets PORT
start_rcukv() {
  local name=$1
  PORT=$(free_port "$2")
  shift 2
  mkdir -p "$tmp/$name"
  RCUKV_POISON_FREES=1 "$SRV" --port "$PORT" --threads 2 --save "" --dir "$tmp/$name" \
    --enable-debug-command local "$@" >"$tmp/$name.log" 2>&1 &
  pids+=("$!")
  wait_up "$PORT" || { bad "$name: rcukv-server did not start on $PORT"; summary; exit 1; }
}

# the keys of step 1 (m: the master)
keys_cmds() {
  for i in $(seq 1 20); do echo "SET e:$i v$i"; echo "PEXPIRE e:$i $((90 + 10 * i))"; done
  echo "HSET eh f v g w"; echo "PEXPIRE eh 150"
  echo "SADD es a b c"; echo "PEXPIRE es 200"
  for i in $(seq 1 5); do echo "SET live:$i L$i"; done
  echo "SET lt t EX 100000"
}
# the script of step 1: time stands still for it on a redis master
BUSY="local function now() local t = redis.call('TIME') return t[1] * 1000000 + t[2] end
redis.call('PEXPIRE', 'pe', 50)
local d = redis.call('DUMP', 'src')
redis.call('RESTORE', 'rs', 50, d)
redis.call('RESTORE', 'rs2', 50, d, 'REPLACE')
redis.call('SET', 'cnt', 10, 'PX', 100)
redis.call('SET', 'cnt2', 20, 'PX', 100)
local s = now()
while now() - s < 300000 do end
local a = redis.call('INCR', 'cnt')
redis.call('PERSIST', 'cnt')
local b = redis.call('INCR', 'cnt2')
return {a, b}"
READ_KEYS="$(for i in $(seq 1 20); do printf 'e:%d ' "$i"; done)eh es live:1 live:5 lt past cnt cnt2 pe rs rs2 src nokey"

# reads PORT: the step 2 answers of the server on PORT, one a line
reads() {
  local k p=$1
  for k in $READ_KEYS; do
    for c in EXISTS TYPE GET STRLEN PEXPIRETIME; do
      printf '%s %s: %s\n' "$c" "$k" "$(redis-cli -p "$p" "$c" "$k" 2>&1 | tr '\n' ' ')"
    done
    [ "$k" = lt ] || printf 'TTL %s: %s\n' "$k" "$(redis-cli -p "$p" ttl "$k")"
  done
  echo "MGET: $(redis-cli -p "$p" mget e:1 live:1 e:20 cnt nokey | tr '\n' ' ')"
  echo "EXISTS many: $(redis-cli -p "$p" exists e:1 e:2 live:1 live:1 cnt)"
  echo "HGETALL eh: $(redis-cli -p "$p" hgetall eh | tr '\n' ' ')"
  echo "SMEMBERS es: $(redis-cli -p "$p" smembers es | sort | tr '\n' ' ')"
  echo "DBSIZE: $(redis-cli -p "$p" dbsize)"
  echo "SCAN: $(redis-cli -p "$p" scan 0 count 10000 | head -n 1) $(redis-cli -p "$p" scan 0 count 10000 | tail -n +2 | sort | tr '\n' ' ')"
  echo "SCAN MATCH: $(redis-cli -p "$p" scan 0 match 'e:*' count 10000 | tail -n +2 | sort | tr '\n' ' ')"
  echo "KEYS: $(redis-cli -p "$p" keys '*' | sort | tr '\n' ' ')"
  echo "INFO keyspace: $(redis-cli -p "$p" info keyspace | tr -d '\r' | grep '^db0:')"
  echo "expired_keys: $(redis-cli -p "$p" info stats | field expired_keys)"
}

# both_synced WHAT: both replicas ($RR, $XR) at the master's offset
both_synced() {
  local p out
  for p in "$RR" "$XR"; do
    out=$(synced "$p")
    check "$1: replica $p at the master's offset ($out)" '[[ $out == offset* ]]'
  done
}

# same_reads WHAT: the step 2 answers of the rcukv replica ($XR) and of the
# redis replica ($RR), compared
same_reads() {
  reads "$XR" >"$tmp/reads.rcukv"
  reads "$RR" >"$tmp/reads.redis"
  check "$1: the rcukv replica answers as the redis replica ($(wc -l <"$tmp/reads.redis") answers; $(grep '^DBSIZE' "$tmp/reads.redis"))" \
    'cmp -s "$tmp/reads.redis" "$tmp/reads.rcukv" || { diff "$tmp/reads.redis" "$tmp/reads.rcukv" | head -n 30 | sed "s/^/    | /"; false; }'
  check "$1: the rcukv replica kept the logically expired keys (DBSIZE $(redis-cli -p "$XR" dbsize), the master's $(m dbsize))" \
    '[ "$(redis-cli -p "$XR" dbsize)" = "$(m dbsize)" ]'
}

# expiry_on WHAT LIVE: active expiry back on at the master: until its DBSIZE
# is LIVE, then both replicas at its offset, equal to it key by key
expiry_on() {
  local n out i want=$2
  m debug set-active-expire 1 >/dev/null
  for i in $(seq 1 100); do
    n=$(m dbsize)
    [ "$n" = "$want" ] && break
    sleep 0.1
  done
  check "$1: the master expired its keys (DBSIZE $n, $want expected)" '[ "$n" = "$want" ]'
  both_synced "$1, expiry on"
  for p in "$XR" "$RR"; do
    check "$1: replica $p DBSIZE $(redis-cli -p "$p" dbsize), the master's $n" \
      '[ "$(redis-cli -p "$p" dbsize)" = "$n" ]'
    out=$("$PY" "$CMP" "$MPORT" "$p" 1 2>&1 | head -n 6)
    check "$1: replica $p equal to the master key by key ($out)" \
      '[[ $out == *" mismatches=0"* ]] && [[ $out != keys=0* ]]'
  done
  reads "$XR" | grep -E '^(expired_keys|INFO keyspace)' >"$tmp/end.rcukv"
  reads "$RR" | grep -E '^(expired_keys|INFO keyspace)' >"$tmp/end.redis"
  check "$1: after the DELs, INFO keyspace and expired_keys as the redis replica's ($(tr '\n' ' ' <"$tmp/end.redis"))" \
    'cmp -s "$tmp/end.redis" "$tmp/end.rcukv" || { diff "$tmp/end.redis" "$tmp/end.rcukv"; false; }'
}

# ------------------------------------------------------------ 1-3. a redis master
start_redis master "$FIRST"
MPORT=$PORT
m() { redis-cli -p "$MPORT" "$@"; }
start_redis rreplica $((MPORT + 1)) --replicaof 127.0.0.1 "$MPORT"
RR=$PORT
start_rcukv xreplica $((RR + 1)) --replicaof 127.0.0.1 "$MPORT"
XR=$PORT
m set src payload >/dev/null
both_synced "redis master $MPORT, full sync"
check "DEBUG SET-ACTIVE-EXPIRE 0 on the redis master" '[ "$(m debug set-active-expire 0)" = OK ]'
keys_cmds | m >/dev/null
{
  echo "SET past v PXAT 1"
  echo "SET pe v"; echo "SET rs2 old"
} | m >/dev/null
res=$(m eval "$BUSY" 0 | tr '\n' ' ')
check "the master's script acted on keys that had not expired for it (INCRs: $res)" '[ "$res" = "11 21 " ]'
sleep 0.4 # every TTL above has passed on the replicas' clock
both_synced "redis master, the keys written"
sleep 0.3 # a few active expiry cycles (hz 10) on each replica
same_reads "redis master, its active expiry off"
check "the master's INCR of a key expired on the replica's clock acted on its value (GET cnt: $(redis-cli -p "$XR" get cnt))" \
  '[ "$(redis-cli -p "$XR" get cnt)" = 11 ]'
# a full sync now: the master's dump has the expired keys, and a replica's
# load keeps them (a fresh redis replica beside it)
full0=$(m info stats | field sync_full)
redis-cli -p "$XR" replicaof no one >/dev/null
redis-cli -p "$XR" replicaof 127.0.0.1 "$MPORT" >/dev/null
start_redis rreplica2 $((XR + 1)) --replicaof 127.0.0.1 "$MPORT"
RR1=$RR
RR=$PORT
both_synced "redis master, full sync again"
full1=$(m info stats | field sync_full)
check "two more full syncs (master sync_full $full0 -> $full1)" '[ "$full1" = $((full0 + 2)) ]'
# between REPLICAOF NO ONE and REPLICAOF the rcukv server was a master, whose
# cycle rightly expired keys: the counters start again here, on both
for p in "$RR" "$XR"; do redis-cli -p "$p" config resetstat >/dev/null; done
sleep 0.3
same_reads "after a full sync of the logically expired keys"
redis-cli -p "$RR1" replicaof no one >/dev/null
# live keys: src, cnt (made persistent), live:1..5, lt
expiry_on "redis master" 8

# ------------------------------------------------------------ 4. an rcukv master
for p in "$XR" "$RR"; do redis-cli -p "$p" replicaof no one >/dev/null; done
start_rcukv xmaster $((XR + 1))
MPORT=$PORT
for p in "$XR" "$RR"; do redis-cli -p "$p" replicaof 127.0.0.1 "$MPORT" >/dev/null; done
m set src payload >/dev/null
both_synced "rcukv master $MPORT, full sync"
check "DEBUG SET-ACTIVE-EXPIRE 0 on the rcukv master" '[ "$(m debug set-active-expire 0)" = OK ]'
keys_cmds | m >/dev/null
m set cnt 10 >/dev/null
sleep 0.4
both_synced "rcukv master, the keys written"
sleep 0.3
same_reads "rcukv master, its active expiry off"
# live keys: src, cnt, live:1..5, lt
expiry_on "rcukv master" 8

# ------------------------------------------------------------ 5. writable replicas
# Keys a client writes with a TTL on a replica with replica-read-only no
# expire there (Redis's slaveKeysWithExpire); the master's do not.
m debug set-active-expire 0 >/dev/null
m set mk v px 100 >/dev/null
for p in "$RR" "$XR"; do
  redis-cli -p "$p" config set replica-read-only no >/dev/null
  redis-cli -p "$p" config resetstat >/dev/null
  {
    echo "SET w:1 v PX 100"
    echo "SET w:2 v"; echo "PEXPIRE w:2 150"
    echo "SET w:3 v PXAT 1"
    echo "SET w:4 v"; echo "GETEX w:4 PXAT 1"
    echo "SET w:5 v"; echo "EXPIRE w:5 -1"
    echo "MULTI"; echo "SET w:6 v PX 100"; echo "EXEC"
    echo "EVAL \"redis.call('SET', KEYS[1], 'v', 'PX', 100)\" 1 w:7"
    echo "SET w:8 v"
    echo "SET w:9 v EX 100000"
  } | redis-cli -p "$p" >"$tmp/w.$p" 2>&1
done
both_synced "writable replicas"
sleep 0.6 # several cron turns on each
for p in "$RR" "$XR"; do
  {
    echo "DBSIZE: $(redis-cli -p "$p" dbsize)"
    echo "KEYS: $(redis-cli -p "$p" keys 'w:*' | sort | tr '\n' ' ')"
    echo "expired_keys: $(redis-cli -p "$p" info stats | field expired_keys)"
    echo "EXISTS mk: $(redis-cli -p "$p" exists mk)"
  } >>"$tmp/w.$p"
  redis-cli -p "$p" config set replica-read-only yes >/dev/null
done
check "writable replica: its clients' keys with a TTL expire, the master's stay, as on the redis replica ($(tail -n 4 "$tmp/w.$RR" | tr '\n' ' '))" \
  'cmp -s "$tmp/w.$RR" "$tmp/w.$XR" || { diff "$tmp/w.$RR" "$tmp/w.$XR"; false; }'
check "writable replica: the master's logically expired key is still counted (DBSIZE $(redis-cli -p "$XR" dbsize), the master's $(m dbsize))" \
  '[ "$(redis-cli -p "$XR" dbsize)" = $(($(m dbsize) + 2)) ]'

for f in "$tmp"/x*.log; do
  if grep -qE 'runtime error:|ERROR: AddressSanitizer|WARNING: ThreadSanitizer' "$f"; then
    bad "$(basename "$f"): a sanitizer report"
  fi
done
summary
