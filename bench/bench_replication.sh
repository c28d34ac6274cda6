#!/usr/bin/env bash
# bench/bench_replication.sh - rcukv-server and redis-server 7 as replicas
# of one redis-server master, side by side, and as masters of one
# redis-server replica (issue 18 item 5).
#
#   full_sync  the master holds N keys (DEBUG POPULATE, 2,000,000; 200,000
#              with BENCH_QUICK=1); a fresh replica is started and told
#              REPLICAOF; the time until its link is up at the master's
#              offset.  Alternating rcukv/redis, REPEATS times, median.
#   lag        both replicas attached while redis-benchmark SETs into the
#              master (-P 16 -c 50, 32-byte values); every 20 ms each
#              replica's offset is read against the master's; the p50 and
#              p99 of the gap in bytes, and the time each needs to catch up
#              after the load stops.
#   master     rcukv-server and redis-server each as the master of one
#              redis-server replica: redis-benchmark SET throughput into the
#              master (-P 16 -c 50, -r 100000) once the replica is online;
#              alternating, REPEATS times, median.
# Prints BENCH lines per system and RATIO lines (rcukv/redis, lower is
# better).  A reference that fails stops the bench with exit 1, no RATIO.
#
# Usage: bench/bench_replication.sh [path/to/rcukv-server]
# Env:   BENCH_QUICK=1, BENCH_REPEATS=N
set -u
SERVER=${1:-${B:-build/release}/rcukv-server}
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then
  REPEATS=${BENCH_REPEATS:-1}; NKEYS=200000; LOAD_N=300000
else
  REPEATS=${BENCH_REPEATS:-3}; NKEYS=2000000; LOAD_N=2000000
fi
PORT_LAST=8399
LIB_BENCH=1
. "$(dirname "$0")/../scripts/lib.sh"
need_tools redis-server redis-benchmark redis-cli
need_built "$SERVER"
find_redis_py || die "python3-redis not found (scripts/deps.sh test)"
scratch_init bench-replication

field() { tr -d '\r' | awk -F: -v f="$1" '$1 == f { print $2 }'; }
now_ms() { date +%s%3N; }
MP=$(free_port 8300)
redis-server --port "$MP" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
  --enable-debug-command yes --repl-backlog-size 64mb --repl-diskless-sync-delay 0 \
  --loglevel warning \
  >"$tmp/master.log" 2>&1 &
pids+=("$!")
wait_up "$MP" || die "master redis-server did not start on $MP"
redis-cli -p "$MP" debug populate "$NKEYS" key 32 >/dev/null
[ "$(redis-cli -p "$MP" dbsize)" = "$NKEYS" ] || die "master: DEBUG POPULATE $NKEYS failed"
echo "bench_replication: $(nproc) cores, master redis-server with $NKEYS keys, $REPEATS repeat(s)"

# replica_start SYS PORT: a fresh replica (not yet following), pid in RPID
replica_start() {
  case $1 in
    rcukv) "$SERVER" --port "$2" --bind 127.0.0.1 --save "" --dir "$tmp" --loglevel warning \
             >"$tmp/$1.$2.log" 2>&1 & ;;
    redis) redis-server --port "$2" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
             --dbfilename "replica-$2.rdb" --loglevel warning >"$tmp/$1.$2.log" 2>&1 & ;;
  esac
  RPID=$!
  pids+=("$RPID")
  wait_up "$2" || die "$1 replica did not start on $2"
}
# in_sync PORT: the replica's link is up at the master's offset
in_sync() {
  local mo ro st
  mo=$(redis-cli -p "$MP" info replication | field master_repl_offset)
  ro=$(redis-cli -p "$1" info replication | field slave_repl_offset)
  st=$(redis-cli -p "$1" info replication | field master_link_status)
  [ "$st" = up ] && [ "$mo" = "$ro" ]
}

RES=$tmp/results
: >"$RES"
next=$((MP + 1))
for rep in $(seq 1 "$REPEATS"); do
  if [ $((rep % 2)) = 1 ]; then order=(rcukv redis); else order=(redis rcukv); fi
  for sys in "${order[@]}"; do
    port=$(free_port "$next"); next=$((port + 1))
    replica_start "$sys" "$port"
    t0=$(now_ms)
    redis-cli -p "$port" replicaof 127.0.0.1 "$MP" >/dev/null
    done_ms=
    for _ in $(seq 1 6000); do
      if in_sync "$port"; then done_ms=$(now_ms); break; fi
      sleep 0.05
    done
    [ -n "$done_ms" ] || die "$sys replica did not sync within 300 s"
    keys=$(redis-cli -p "$port" dbsize)
    [ "$keys" = "$NKEYS" ] || die "$sys replica has $keys keys after the sync, not $NKEYS"
    echo "full_sync $sys $((done_ms - t0))" >>"$RES"
    printf 'run %d full_sync %-6s %6d ms (%s keys)\n' "$rep" "$sys" $((done_ms - t0)) "$keys"
    stop_pid "$RPID"
  done
done

# --- lag: both attached, SET load on the master
declare -A RPORT
for sys in rcukv redis; do
  port=$(free_port "$next"); next=$((port + 1))
  replica_start "$sys" "$port"
  RPORT[$sys]=$port
  redis-cli -p "$port" replicaof 127.0.0.1 "$MP" >/dev/null
done
for sys in rcukv redis; do
  for _ in $(seq 1 6000); do in_sync "${RPORT[$sys]}" && break; sleep 0.05; done
  in_sync "${RPORT[$sys]}" || die "$sys replica did not sync before the lag run"
done
redis-benchmark -p "$MP" -t set -n "$LOAD_N" -r 1000000 -d 32 -P 16 -c 50 -q >/dev/null 2>&1 &
load=$!
# One connection to each server; per sample the replica's offset first,
# then the master's, so a gap is never negative (at most the master's growth
# in the microseconds between the two reads).
"$PY" - "$MP" "${RPORT[rcukv]}" "${RPORT[redis]}" "$load" >>"$RES" <<'PYEOF'
import os, sys, time
import redis
mp, pr, ps, load = (int(x) for x in sys.argv[1:5])
def off(r, f):
    return int(r.info("replication")[f])
m = redis.Redis(port=mp); reps = {"rcukv": redis.Redis(port=pr), "redis": redis.Redis(port=ps)}
def alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True
while alive(load):
    for name, r in reps.items():
        ro = off(r, "slave_repl_offset")
        print("lag %s %d" % (name, off(m, "master_repl_offset") - ro))
    time.sleep(0.02)
PYEOF
wait "$load"
t0=$(now_ms)
for sys in rcukv redis; do
  for _ in $(seq 1 2000); do in_sync "${RPORT[$sys]}" && break; sleep 0.01; done
  in_sync "${RPORT[$sys]}" || die "$sys replica did not catch up after the load"
  echo "catchup $sys $(($(now_ms) - t0))" >>"$RES"
done

# --- master: rcukv and redis-server feeding one redis-server replica
for rep in $(seq 1 "$REPEATS"); do
  if [ $((rep % 2)) = 1 ]; then order=(rcukv redis); else order=(redis rcukv); fi
  for sys in "${order[@]}"; do
    mport=$(free_port "$next"); rport=$(free_port $((mport + 1))); next=$((rport + 1))
    replica_start "$sys" "$mport"
    mpid=$RPID
    replica_start redis "$rport"
    redis-cli -p "$rport" replicaof 127.0.0.1 "$mport" >/dev/null
    online=
    for _ in $(seq 1 200); do
      redis-cli -p "$mport" info replication | grep -q 'state=online' && { online=1; break; }
      sleep 0.05
    done
    [ -n "$online" ] || die "a redis-server replica of the $sys master did not come online"
    rps=$(redis-benchmark -p "$mport" -t set -n "$LOAD_N" -r 100000 -d 32 -P 16 -c 50 -q \
      2>/dev/null | tr '\r' '\n' | grep -o 'SET: [0-9.]*' | tail -n 1 | awk '{ print $2 }')
    [ -n "$rps" ] || die "redis-benchmark against the $sys master printed no figure"
    echo "master $sys $rps" >>"$RES"
    printf 'run %d master_set_with_replica %-6s %10s requests/s\n' "$rep" "$sys" "$rps"
    stop_pid "$RPID"
    stop_pid "$mpid"
  done
done

# pct SYS KIND P: the P-th percentile of the values of KIND for SYS
pct() {
  awk -v s="$1" -v k="$2" '$1 == k && $2 == s { print $3 }' "$RES" | sort -g |
    awk -v p="$3" '{ v[NR] = $1 } END { if (NR) { i = int(NR * p / 100 + 0.999); if (i < 1) i = 1; print v[i] } }'
}
for sys in rcukv redis; do
  echo "BENCH replication.full_sync_${NKEYS}.$sys $(pct "$sys" full_sync 50) ms"
  echo "BENCH replication.lag_bytes.p50.$sys $(pct "$sys" lag 50) bytes"
  echo "BENCH replication.lag_bytes.p99.$sys $(pct "$sys" lag 99) bytes"
  echo "BENCH replication.catchup.$sys $(pct "$sys" catchup 50) ms"
done
for sys in rcukv redis; do
  echo "BENCH replication.master_set_with_replica.$sys $(pct "$sys" master 50) requests/s"
done
ratio() {  # name a b
  awk -v a="$2" -v b="$3" -v n="$1" 'BEGIN { if (b > 0) printf "RATIO %s %.2f lower\n", n, a / b; else exit 1 }'
}
ratio "replication.full_sync_${NKEYS}" "$(pct rcukv full_sync 50)" "$(pct redis full_sync 50)" ||
  die "redis full sync time is zero"
# a lag of 0 bytes (the replica never behind when sampled) has no ratio
if ! ratio replication.lag_bytes.p99 "$(pct rcukv lag 99)" "$(pct redis lag 99)"; then
  echo "# replication.lag_bytes.p99: redis-server's replica was never behind when sampled; no ratio"
fi
awk -v a="$(pct rcukv master 50)" -v b="$(pct redis master 50)" 'BEGIN {
  if (b > 0) printf "RATIO replication.master_set_with_replica %.2f higher\n", a / b }'
