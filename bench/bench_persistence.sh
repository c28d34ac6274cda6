#!/usr/bin/env bash
# bench/bench_persistence.sh - RDB snapshots: rcukv (no fork: a BGSAVE thread
# walking a point-in-time ht_snapshot()) against redis-server 7 (fork + COW),
# side by side in one run (issue 8).
#
# Per system, alternating, repeated (median reported):
#   1. start fresh (save points off), fill KEYS keys (key:<n>, 32-byte values)
#      with rcukv-cli bench, sequential SETs;
#   2. idle BGSAVE, timed by polling INFO: save keys/s;
#   3. for each load shape below: a GET/SET load at 50% writes (rcukv-cli
#      bench, closed loop, pipeline 1, uniform keys) for LOAD_SECS with no
#      save (p99_no_save, for reference), then the same load while BGSAVEs
#      run back to back the whole time: p99 latency and throughput of the
#      load during saves; meanwhile the memory the server uses is sampled
#      every ~10 ms (see "What a save costs" below): peak growth over the
#      server's VmRSS just before the load;
#   4. restart on the dump: load keys/s from the server's own log line
#      "DB loaded from disk: X seconds".
# Load shapes (figures without a suffix are the busy shape's):
#   busy  50 connections on 2 client threads (-t 2 -c 25), bench_server.sh's
#         redis-benchmark shape: the servers are the bottleneck, so what a
#         save costs in CPU shows in the load's latency.
#   light 8 connections on 1 client thread (-t 1 -c 8), figures suffixed
#         _light: the client is the bottleneck and both servers idle part of
#         the time (about 20 % and 35 % of the 2 cores here), which the save
#         uses, so neither server's p99 moves much.
# What a save costs (peak_rss_growth): each sample is the server's VmRSS plus,
# for each child it has (Redis's fork child; rcukv has none), the child's
# Private_Dirty from /proc/PID/smaps_rollup: the pages the child holds alone
# (those copy-on-write duplicated since the fork, and what the child itself
# allocated).  A child's VmRSS would also count every page it still shares
# with its parent, which the parent's VmRSS already counts, and Redis read
# about 0.97 whatever copy-on-write cost; Private_Dirty counts only what the
# save added.  So: Redis's figure is the parent's growth plus its child's
# private pages, rcukv's the process's growth.  (Reading smaps_rollup walks
# the child's page tables: some CPU on the sampler's side, Redis runs only.)
#
# Order: rcukv runs first in odd repeats and Redis first in even ones.  A
# reference (Redis) figure that is missing or zero stops the bench with a
# message and exit 1, never a RATIO.
#
# Usage: bench/bench_persistence.sh [path/to/rcukv-server]
# Env:   BENCH_QUICK=1 (200,000 keys, 1 repeat, 2 s loads), BENCH_REPEATS=N,
#        BENCH_KEYS=N, BENCH_PORT=7570 (2 ports from there)
set -u
export LC_ALL=C  # read -N counts bytes
SERVER=${1:-${B:-build/release}/rcukv-server}
CLI=$(dirname "$SERVER")/rcukv-cli
PORT0=${BENCH_PORT:-7570}
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then
  REPEATS=${BENCH_REPEATS:-1}; KEYS=${BENCH_KEYS:-200000}; LOAD_SECS=2
else
  REPEATS=${BENCH_REPEATS:-3}; KEYS=${BENCH_KEYS:-2000000}; LOAD_SECS=4
fi
SHAPES=(busy light)
declare -A LOADS=([busy]="-t 2 -c 25" [light]="-t 1 -c 8")

[ -r /proc/self/smaps_rollup ] || {
  echo "bench_persistence: /proc/PID/smaps_rollup not readable (Linux >= 4.14); cannot measure a fork child's private pages" >&2
  exit 1
}
LIB_BENCH=1
LIB_STOP="no ratio, stopping"
# need_tools, need_built, die, scratch_init ($tmp, $pids stopped on exit)
. "$(dirname "$0")/../scripts/lib.sh"
need_tools redis-server redis-cli
need_built "$SERVER" "$CLI"
scratch_init bench-persistence
TMP=$tmp


declare -A PORT=([rcukv]=$PORT0 [redis]=$((PORT0 + 1)))
SPID=

start() {  # name: starts on the dump in $TMP/name if there is one
  local name=$1 port=${PORT[$1]} dir=$TMP/$1
  mkdir -p "$dir"
  : >"$dir/log"
  case $name in
    rcukv) "$SERVER" --port "$port" --bind 127.0.0.1 --save '' --dir "$dir" \
             --logfile "$dir/log" >/dev/null 2>&1 & ;;
    redis) redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
             --dir "$dir" --logfile "$dir/log" >/dev/null 2>&1 & ;;
  esac
  SPID=$!
  pids+=("$SPID")
  for _ in $(seq 1 600); do
    redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && return 0
    sleep 0.1
  done
  echo "bench_persistence: $name did not start" >&2
  exit 1
}

stop() {  # name
  redis-cli -p "${PORT[$1]}" shutdown nosave >/dev/null 2>&1
  wait "$SPID" 2>/dev/null
}

info() {  # name field
  redis-cli -p "${PORT[$1]}" info persistence | tr -d '\r' | sed -n "s/^$2://p"
}

# While the load runs, the harness starts no process: on 2 cores a freshly
# exec'd redis-cli or sleep (a few ms of CPU each, 100 a second) took a
# server thread's CPU for its whole slice and dominated both servers' p99
# (perf sched: a worker runnable for 4.2 ms behind a redis-cli).  So: naps
# are reads with a timeout on a pipe nobody writes to, and BGSAVE and the
# INFO polls go over one connection opened with bash's /dev/tcp.
exec {NAPFD}<> <(:)
nap() { read -r -t "$1" -u "$NAPFD" _ 2>/dev/null; }
CONN=
conn_open() {  # name
  [ -n "$CONN" ] && exec {CONN}>&-
  exec {CONN}<>"/dev/tcp/127.0.0.1/${PORT[$1]}"
}
conn_cmd() {  # RESP request -> REPLY (a status line or a bulk string's body)
  local hdr len
  printf '%s' "$1" >&"$CONN"
  IFS= read -r -u "$CONN" hdr
  hdr=${hdr%$'\r'}
  case $hdr in
    \$*) len=${hdr#\$}; IFS= read -r -N $((len + 2)) -u "$CONN" REPLY ;;
    *) REPLY=$hdr ;;
  esac
}
bgsave_fast() { conn_cmd $'*1\r\n$6\r\nBGSAVE\r\n'; }
wait_save() {  # name; polls every 10 ms over the open connection
  local v
  while :; do
    conn_cmd $'*2\r\n$4\r\nINFO\r\n$11\r\npersistence\r\n'
    v=${REPLY#*rdb_bgsave_in_progress:}
    [ "${v%%$'\r'*}" = 0 ] && return
    nap 0.01
  done
}

# VmRSS in kB of pid plus its children (Redis forks from its main thread), in
# bash builtins only: the sampler runs every 10 ms and must not load the CPU
# it measures.
RSSKB=0
rss_of() {  # pid -> adds its VmRSS to RSSKB
  local k v _
  {
    while read -r k v _; do
      if [ "$k" = VmRSS: ]; then RSSKB=$((RSSKB + v)); break; fi
    done <"/proc/$1/status"
  } 2>/dev/null  # a fork child may be gone by now
}
rss_kb() {  # pid
  local kids=() c
  RSSKB=0
  rss_of "$1"
  read -r -a kids <"/proc/$1/task/$1/children" 2>/dev/null
  for c in "${kids[@]}"; do rss_of "$c"; done
  echo "$RSSKB"
}
PDKB=0
pd_of() {  # pid -> adds its Private_Dirty (kB, smaps_rollup) to PDKB
  local k v _
  {
    while read -r k v _; do
      if [ "$k" = Private_Dirty: ]; then PDKB=$((PDKB + v)); break; fi
    done <"/proc/$1/smaps_rollup"
  } 2>/dev/null  # a fork child may be gone by now
}
cost_sample() {  # pid -> RSSKB: VmRSS of pid + Private_Dirty of its children; PDKB (no subshell)
  local kids=() c
  RSSKB=0; PDKB=0
  rss_of "$1"
  read -r -a kids <"/proc/$1/task/$1/children" 2>/dev/null
  for c in "${kids[@]}"; do pd_of "$c"; done
  RSSKB=$((RSSKB + PDKB))
}

json_p99() {  # file: the whole run's p99 in microseconds
  sed -n 's/^  "latency_us": {.*"p99": \([0-9.]*\),.*/\1/p' "$1"
}
json_ops() {  # file: the whole run's throughput in ops/s
  sed -n 's/^  "throughput_ops": \([0-9.]*\),.*/\1/p' "$1"
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}'; }

load_run() {  # name rep shape server-pid
  local name=$1 rep=$2 shape=$3 pid=$4 port=${PORT[$1]} base peak loadpid
  local args=(-p "$port" bench ${LOADS[$shape]} -P 1 --ratio 1:1 -k "$KEYS" --data-size 32
              --duration "$LOAD_SECS" -q)
  local idle=$TMP/$name.$rep.$shape.idle.json busy=$TMP/$name.$rep.$shape.json

  "$CLI" "${args[@]}" --json "$idle" >/dev/null 2>&1
  json_p99 "$idle" >>"$TMP/$name.$shape.p99idle"

  base=$(rss_kb "$pid")  # no save runs now: the server alone
  rm -f "$TMP/stop"
  "$CLI" "${args[@]}" --json "$busy" >/dev/null 2>&1 &
  loadpid=$!
  (
    peak=0 pdpeak=0 withchild=0
    while [ ! -e "$TMP/stop" ]; do
      cost_sample "$pid"; [ "$RSSKB" -gt "$peak" ] && peak=$RSSKB
      [ "$PDKB" -gt 0 ] && withchild=$((withchild + 1))
      [ "$PDKB" -gt "$pdpeak" ] && pdpeak=$PDKB
      nap 0.01
    done
    echo "$peak $pdpeak $withchild" >"$TMP/peak"
  ) &
  local sampler=$! saves=0
  while kill -0 "$loadpid" 2>/dev/null; do
    bgsave_fast
    saves=$((saves + 1))
    nap 0.05
    wait_save "$name"
  done
  wait "$loadpid"
  touch "$TMP/stop"; wait "$sampler"
  local pdpeak withchild
  read -r peak pdpeak withchild <"$TMP/peak"
  json_p99 "$busy" >>"$TMP/$name.$shape.p99"
  json_ops "$busy" >>"$TMP/$name.$shape.ops"
  awk -v p="$peak" -v b="$base" 'BEGIN{printf "%.4f\n", (p - b) / b}' >>"$TMP/$name.$shape.rss"
  printf '  %s %-5s p99 %5s us, %6.0f ops/s without a save; %d BGSAVEs: p99 %5s us, %6.0f ops/s, RSS %s -> peak %s kB (children: peak Private_Dirty %s kB, seen in %s samples)\n' \
    "$name" "$shape" "$(json_p99 "$idle")" "$(json_ops "$idle")" "$saves" \
    "$(json_p99 "$busy")" "$(json_ops "$busy")" "$base" "$peak" "$pdpeak" "$withchild" >&2
  [ "$saves" -gt 0 ] || die "$name $shape: no BGSAVE ran during the load"
  if [ "$name" = redis ] && [ "$withchild" = 0 ]; then
    die "redis $shape: $saves BGSAVEs but the sampler never saw a fork child"
  fi
}

run_one() {  # name rep
  local name=$1 rep=$2 port=${PORT[$1]} t0 t1 r pid shape
  rm -f "$TMP/$name/dump.rdb"
  start "$name"
  pid=$SPID
  "$CLI" -p "$port" bench -t 2 -c 4 -P 64 --ratio 0:1 --key-pattern sequential \
    -k "$KEYS" -r "$KEYS" --data-size 32 -q >/dev/null 2>&1
  echo "  $name: $(redis-cli -p "$port" dbsize) keys, RSS $(rss_kb "$pid") kB" >&2

  conn_open "$name"
  # idle BGSAVE
  t0=$EPOCHREALTIME
  bgsave_fast
  nap 0.01
  wait_save "$name"
  t1=$EPOCHREALTIME
  awk -v k="$KEYS" -v a="$t0" -v b="$t1" 'BEGIN{printf "%.0f\n", k / (b - a)}' >>"$TMP/$name.save"

  # Each load shape: the load alone (reference), then the same load while
  # BGSAVEs run back to back, sampling RSS (see SHAPES at the top).
  for shape in "${SHAPES[@]}"; do
    load_run "$name" "$rep" "$shape" "$pid"
  done

  # a last save, then load it at start-up
  bgsave_fast; nap 0.01; wait_save "$name"
  exec {CONN}>&-; CONN=
  stop "$name"
  start "$name"
  r=$(sed -n 's/.*DB loaded from disk: \([0-9.]*\) seconds.*/\1/p' "$TMP/$name/log" | tail -1)
  awk -v k="$KEYS" -v s="$r" 'BEGIN{if (s > 0) printf "%.0f\n", k / s; else print "nan"}' >>"$TMP/$name.load"
  stop "$name"
}

echo "bench_persistence: $KEYS keys, $REPEATS repeat(s), ${LOAD_SECS}s load at 50% writes, $(nproc) cores" >&2
for rep in $(seq 1 "$REPEATS"); do
  # alternate: rcukv first in odd repeats, Redis first in even ones
  order=(rcukv redis); [ $((rep % 2)) = 0 ] && order=(redis rcukv)
  for name in "${order[@]}"; do
    run_one "$name" "$rep"
  done
done

ratio() {  # name a b higher|lower: a reference b missing or not > 0 stops the bench
  awk -v a="$2" -v b="$3" 'BEGIN { exit !(a != "" && a != "nan" && b != "" && b != "nan" && b + 0 > 0) }' ||
    die "persistence.$1: rcukv '$2', reference (redis) '$3'"
  awk -v n="$1" -v a="$2" -v b="$3" -v w="$4" \
    'BEGIN{printf "RATIO persistence.%s %.3f %s\n", n, a / b, w}'
}
declare -A V
for name in rcukv redis; do
  for shape in "${SHAPES[@]}"; do
    sfx=; [ "$shape" = busy ] || sfx=_$shape
    for f in p99idle p99 ops rss; do
      V[$name.$shape.$f]=$(median <"$TMP/$name.$shape.$f")
    done
    echo "BENCH persistence.p99_no_save$sfx.$name ${V[$name.$shape.p99idle]} us"
    echo "BENCH persistence.p99_during_save$sfx.$name ${V[$name.$shape.p99]} us"
    echo "BENCH persistence.ops_during_save$sfx.$name ${V[$name.$shape.ops]} ops/s"
    echo "BENCH persistence.peak_rss_growth$sfx.$name ${V[$name.$shape.rss]} fraction"
  done
  V[$name.save]=$(median <"$TMP/$name.save")
  V[$name.load]=$(median <"$TMP/$name.load")
  echo "BENCH persistence.save.$name ${V[$name.save]} keys/s"
  echo "BENCH persistence.load.$name ${V[$name.load]} keys/s"
done
for shape in "${SHAPES[@]}"; do
  sfx=; [ "$shape" = busy ] || sfx=_$shape
  ratio "p99_during_save$sfx" "${V[rcukv.$shape.p99]}" "${V[redis.$shape.p99]}" lower
  ratio "p99_no_save$sfx" "${V[rcukv.$shape.p99idle]}" "${V[redis.$shape.p99idle]}" lower
  ratio "peak_rss_growth$sfx" "${V[rcukv.$shape.rss]}" "${V[redis.$shape.rss]}" lower
done
ratio save "${V[rcukv.save]}" "${V[redis.save]}" higher
ratio load "${V[rcukv.load]}" "${V[redis.load]}" higher
