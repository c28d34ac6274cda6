#!/usr/bin/env bash
# bench/bench_modules.sh - module unload under load (issue 20 item 5): the
# RCU way and the freeze way in rcukv-server, side by side with redis-server
# unloading the same module (Redis 7.0.15's helloworld.so, built from
# Debian's source package by tests/server/modules_fetch.sh) under the same
# load, in one run.
#
# Per system (rcukv --threads 2 with module-unload-scheme rcu, then freeze;
# redis-server, default configuration), a fresh server, one key, and:
#   none    redis-benchmark -t get -P 16 -c 50 --threads 2 alone;
#   unload  the same run while another client unloads and loads the module
#           CYCLES times (default 100; 20 ms apart), timing each MODULE
#           UNLOAD and MODULE LOAD from its own socket.
# The run's request count is sized from a calibration run so that it lasts
# about 1.5 times the unload loop; a run that ends before the loop stops the
# bench (its percentiles would not cover the unloads).
#   BENCH modules.get_p99.<sys>.<none|unload> <ms>      (redis-benchmark's)
#   BENCH modules.get_p999.<sys>.<none|unload> <ms>     (its distribution)
#   BENCH modules.unload_us.<sys> <median> (and .p99, .max)
#   BENCH modules.load_us.<sys> <median>
#   RATIO modules.get_p999.<scheme>_cost  unload/none p99.9 of that system
#   RATIO modules.get_p999.<scheme>_vs_redis  rcukv/redis p99.9 while unloading
#   RATIO modules.unload_us.<scheme>_vs_redis  rcukv/redis median unload time
# <sys>: rcukv_rcu, rcukv_freeze, redis.  All lower is better.  A reference
# (redis-server) run that fails stops the bench with no RATIO.
# What two cores show: redis-benchmark, the loader and the server share
# them; the unload's own work (dlclose, a grace period) is microseconds to
# a millisecond, so the differences are in the tail, not the median.
# Usage: bench/bench_modules.sh [path/to/rcukv-server]
# Env:   BENCH_QUICK=1 (20 cycles), BENCH_CYCLES=N, MODULES_DIR
set -u
SERVER=${1:-${B:-build/release}/rcukv-server}
QUICK=${BENCH_QUICK:-0}
CYCLES=${BENCH_CYCLES:-100}
[ "$QUICK" = 1 ] && CYCLES=${BENCH_CYCLES:-20}
PORT_LAST=8899
LIB_BENCH=1
. "$(dirname "$0")/../scripts/lib.sh"
need_tools redis-server redis-benchmark redis-cli python3
need_built "$SERVER"
scratch_init bench-modules
MODDIR=${MODULES_DIR:-/tmp/rcukv-modules-7.0.15}
out=$(bash tests/server/modules_fetch.sh "$MODDIR" 2>&1) ||
  die "Redis 7.0.15's example modules could not be built: $(tail -n 1 <<<"$out")"
SO=$MODDIR/helloworld.so

# start SYS: a fresh server of SYS (rcukv_rcu, rcukv_freeze, redis) on $port.
start() {
  port=$(free_port 8800)
  [ "$port" = 0 ] && die "no free port in 8800-$PORT_LAST"
  case $1 in
    rcukv_*) "$SERVER" --port "$port" --bind 127.0.0.1 --threads 2 --save "" --dir "$tmp" \
               --loglevel warning --enable-module-command yes \
               --module-unload-scheme "${1#rcukv_}" >"$tmp/$1.log" 2>&1 & ;;
    redis) redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
             --loglevel warning --enable-module-command yes >"$tmp/$1.log" 2>&1 & ;;
  esac
  spid=$!
  pids+=("$spid")
  wait_up "$port" || die "$1 did not start on $port"
  redis-cli -p "$port" set key:1 "$(head -c 32 /dev/zero | tr '\0' v)" >/dev/null
  [ "$(redis-cli -p "$port" module load "$SO")" = OK ] || die "$1: MODULE LOAD $SO failed"
}

# bench N OUT: redis-benchmark GET -P 16 of N requests into OUT; its
# p99 and p99.9 (ms) printed.
bench() {
  redis-benchmark -p "$port" -t get -n "$1" -P 16 -c 50 --threads 2 -r 1 >"$2" 2>&1 ||
    die "redis-benchmark against port $port failed: $(tail -n 1 "$2")"
  tr '\r' '\n' <"$2" | awk '
    /Latency by percentile distribution/ { dist = 1; next }
    /Cumulative distribution/ { dist = 0 }
    dist && $1 ~ /%$/ && !p999 { v = $1; sub(/%/, "", v); if (v + 0 >= 99.9) p999 = $3 }
    /latency summary/ { getline; getline; p99 = $5 }
    END { if (p99 == "" || p999 == "") exit 1; print p99, p999 }' ||
    die "no percentiles in redis-benchmark's output ($2)"
}

# The loader: CYCLES x (MODULE UNLOAD, MODULE LOAD), 20 ms apart; prints
# "unload_median unload_p99 unload_max load_median" in microseconds and the
# end time; exits 1 on any reply that is not +OK.
cat >"$tmp/loader.py" <<'EOF'
import socket, sys, time
port, so, cycles = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
s = socket.create_connection(("127.0.0.1", port))
def call(*args):
    s.sendall(("*%d\r\n" % len(args) + "".join("$%d\r\n%s\r\n" % (len(a), a) for a in args)).encode())
    t0 = time.perf_counter()
    buf = b""
    while not buf.endswith(b"\r\n"):
        buf += s.recv(4096)
    us = (time.perf_counter() - t0) * 1e6
    if buf != b"+OK\r\n":
        sys.exit("loader: %s: %r" % (" ".join(args), buf))
    return us
un, lo = [], []
for _ in range(cycles):
    un.append(call("MODULE", "UNLOAD", "helloworld"))
    lo.append(call("MODULE", "LOAD", so))
    time.sleep(0.02)
un.sort(); lo.sort()
q = lambda v, f: v[min(len(v) - 1, int(f * len(v)))]
print("%.0f %.0f %.0f %.0f %.6f" % (q(un, 0.5), q(un, 0.99), un[-1], q(lo, 0.5), time.time()))
EOF

SYSTEMS=(rcukv_rcu rcukv_freeze redis)
declare -A P99 P999 UN UN99 UNMAX LO
echo "bench_modules: $(nproc) cores, $CYCLES unload/load cycles, rcukv=$SERVER, module=$SO"
for sys in "${SYSTEMS[@]}"; do
  start "$sys"
  # calibrate: requests per second of this system, then a run ~1.5x the loop
  t0=$EPOCHREALTIME
  bench 200000 "$tmp/$sys.cal" >/dev/null
  rps=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", 200000 / (b - a) }')
  loop_s=$(awk -v c="$CYCLES" 'BEGIN { print c * 0.03 + 1 }')
  n=$(awk -v r="$rps" -v s="$loop_s" 'BEGIN { printf "%.0f", r * s * 1.5 }')
  read -r p99 p999 <<<"$(bench "$n" "$tmp/$sys.none")"
  P99[$sys.none]=$p99; P999[$sys.none]=$p999
  (bench "$n" "$tmp/$sys.unload" >"$tmp/$sys.pct" && date +%s.%N >"$tmp/$sys.end") &
  bpid=$!
  sleep 0.2
  loader=$(python3 "$tmp/loader.py" "$port" "$SO" "$CYCLES") || die "$sys: the unload loop failed: $loader"
  wait "$bpid" || die "$sys: redis-benchmark during the unloads failed"
  read -r un un99 unmax lo lend <<<"$loader"
  awk -v b="$(cat "$tmp/$sys.end")" -v l="$lend" 'BEGIN { exit !(b >= l) }' ||
    die "$sys: redis-benchmark ended before the unload loop (raise its request count)"
  read -r p99 p999 <"$tmp/$sys.pct"
  P99[$sys.unload]=$p99; P999[$sys.unload]=$p999
  UN[$sys]=$un; UN99[$sys]=$un99; UNMAX[$sys]=$unmax; LO[$sys]=$lo
  printf '%-13s %9s req/s  GET p99/p99.9 alone %s/%s ms, while unloading %s/%s ms; unload %s us (p99 %s, max %s), load %s us\n' \
    "$sys" "$rps" "${P99[$sys.none]}" "${P999[$sys.none]}" "$p99" "$p999" "$un" "$un99" "$unmax" "$lo"
  stop_pid "$spid"
done

for sys in "${SYSTEMS[@]}"; do
  for ph in none unload; do
    echo "BENCH modules.get_p99.$sys.$ph ${P99[$sys.$ph]} ms"
    echo "BENCH modules.get_p999.$sys.$ph ${P999[$sys.$ph]} ms"
  done
  echo "BENCH modules.unload_us.$sys ${UN[$sys]} us"
  echo "BENCH modules.unload_us.p99.$sys ${UN99[$sys]} us"
  echo "BENCH modules.unload_us.max.$sys ${UNMAX[$sys]} us"
  echo "BENCH modules.load_us.$sys ${LO[$sys]} us"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) exit 1; printf "%.2f", a / b }'; }
for sys in "${SYSTEMS[@]}"; do
  echo "RATIO modules.get_p999.${sys#rcukv_}_cost $(ratio "${P999[$sys.unload]}" "${P999[$sys.none]}" || echo n/a) lower"
done
for sch in rcu freeze; do
  r=$(ratio "${P999[rcukv_$sch.unload]}" "${P999[redis.unload]}") || die "redis p99.9 is 0"
  echo "RATIO modules.get_p999.${sch}_vs_redis $r lower"
  r=$(ratio "${UN[rcukv_$sch]}" "${UN[redis]}") || die "redis unload time is 0"
  echo "RATIO modules.unload_us.${sch}_vs_redis $r lower"
done
