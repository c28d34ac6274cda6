#!/usr/bin/env bash
# bench/bench_collections.sh - hashes, sets, lists and sorted sets (issue 17),
# rcukv-server side by side with redis-server 7 in one run.
#
# 1. redis-benchmark with its default test list (no -t: PING_INLINE ...
#    LRANGE_600, MSET), -c 50 --threads 2, at -P 1 and at -P 16, against a
#    fresh FLUSHALL of each server, alternating which system goes first,
#    REPEATS times; medians reported:
#      BENCH collections.p<P>.<test>.<system> <ops/s>   (and .p99 <ms>)
#      RATIO collections.p<P>.<test> <rcukv/redis> higher
#      RATIO collections.p<P>.<test>.p99 <rcukv/redis> lower
#    <test> is redis-benchmark's name, lower case, first word
#    (lrange_100 ...); its second LPUSH ("needed to benchmark LRANGE") is
#    lpush_lrange.  Every test of the list must complete: a run that stops
#    on an error reply (redis-benchmark exits 1 at the first one) or misses a
#    test stops the bench with the error (exit 1, no RATIO), for either
#    system.
# 2. Memory per element (used_memory after - before, divided by elements,
#    after the server's deferred frees have settled):
#      hash_1m    one hash of 1,000,000 fields   "f:%d" -> "v:%d"
#      set_1m     one set of 1,000,000 members   "m:%d"
#      hash_small 10,000 hashes of 100 fields    "f:%d" -> "v:%d"
#    loaded through redis-cli --pipe in commands of 1000 fields each (a
#    million one-field HSETs would measure the load path, not the memory).
#      BENCH collections.mem.<case>.<system> <bytes/element>
#      RATIO collections.mem.<case> <rcukv/redis> lower
# Usage: bench/bench_collections.sh [path/to/rcukv-server]
# Env:   BENCH_QUICK=1 (one repeat, fewer requests), BENCH_REPEATS=N,
#        BENCH_PARTS="throughput memory" (either or both)
set -u
SERVER=${1:-${B:-build/release}/rcukv-server}
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then
  REPEATS=${BENCH_REPEATS:-1}; N_P1=20000; N_P16=100000; BIG=200000; SMALL=2000
else
  REPEATS=${BENCH_REPEATS:-3}; N_P1=100000; N_P16=1000000; BIG=1000000; SMALL=10000
fi
PARTS=${BENCH_PARTS:-throughput memory}
PORT_LAST=8999
LIB_BENCH=1
. "$(dirname "$0")/../scripts/lib.sh"
need_tools redis-server redis-benchmark redis-cli
need_built "$SERVER"
scratch_init bench-collections

SYSTEMS=(rcukv redis)
declare -A PORT PID
# start SYSTEM: a fresh server of SYSTEM on a free port from 8900.
start() {
  local p
  p=$(free_port 8900)
  [ "$p" = 0 ] && die "no free port in 8900-$PORT_LAST"
  case $1 in
    rcukv) "$SERVER" --port "$p" --bind 127.0.0.1 --threads 2 --save "" \
             --loglevel warning --dir "$tmp" >"$tmp/$1.log" 2>&1 & ;;
    redis) redis-server --port "$p" --bind 127.0.0.1 --save "" --appendonly no \
             --loglevel warning --dir "$tmp" >"$tmp/$1.log" 2>&1 & ;;
  esac
  PID[$1]=$!
  pids+=("$!")
  PORT[$1]=$p
  wait_up "$p" || die "$1 did not start on $p"
}
stop() { stop_pid "${PID[$1]}"; }

# ------------------------------------------------------------ 1. throughput
# The tests redis-benchmark 7.0 runs with no -t, by the names used here.
TESTS=(ping_inline ping_mbulk set get incr lpush rpush lpop rpop sadd hset
       spop zadd zpopmin lpush_lrange lrange_100 lrange_300 lrange_500
       lrange_600 mset)
RES=$tmp/results
: >"$RES"
# run REP P SYS: one redis-benchmark run of the default list; one
# "p<P> test sys rps p99" line per test into $RES.
run() {
  local rep=$1 pl=$2 sys=$3 n=$N_P1 out err name missing=""
  [ "$pl" = 16 ] && n=$N_P16
  out=$tmp/rb.$sys.p$pl.$rep.csv; err=$tmp/rb.$sys.p$pl.$rep.err
  redis-cli -p "${PORT[$sys]}" flushall >/dev/null || die "$sys: FLUSHALL failed"
  if ! redis-benchmark -p "${PORT[$sys]}" -n "$n" -c 50 --threads 2 -P "$pl" --csv \
         >"$out" 2>"$err"; then
    die "$sys: redis-benchmark -P $pl stopped: $(grep -m1 -i error "$err" || tail -n 1 "$err")"
  fi
  grep -qi "error" "$err" && die "$sys: redis-benchmark -P $pl reported: $(grep -m1 -i error "$err")"
  tr -d '"' <"$out" | awk -F, -v pl="$pl" -v sys="$sys" '
    NR > 1 {
      name = tolower($1)
      if (name ~ /needed to benchmark lrange/) name = "lpush_lrange"
      sub(/ .*/, "", name)
      print "p" pl, name, sys, $2, $7
    }' >"$tmp/run.lines"
  for name in "${TESTS[@]}"; do
    grep -q "^p$pl $name " "$tmp/run.lines" || missing+=" $name"
  done
  [ -z "$missing" ] || die "$sys: redis-benchmark -P $pl did not run:$missing"
  cat "$tmp/run.lines" >>"$RES"
  printf 'run %d -P %-2s %-6s %s\n' "$rep" "$pl" "$sys" \
    "$(awk '{ printf "%s=%.0f ", $2, $4 }' "$tmp/run.lines")"
}

# med P TEST SYS COL: the median of column COL (4 rps, 5 p99)
med() {
  awk -v p="$1" -v t="$2" -v s="$3" -v c="$4" '$1 == p && $2 == t && $3 == s { print $c }' "$RES" |
    sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

if [[ " $PARTS " == *" throughput "* ]]; then
  for sys in "${SYSTEMS[@]}"; do start "$sys"; done
  echo "bench_collections: $(nproc) cores, $REPEATS repeat(s), rcukv=$SERVER"
  for rep in $(seq 1 "$REPEATS"); do
    for pl in 1 16; do
      if [ $((rep % 2)) = 1 ]; then order=(rcukv redis); else order=(redis rcukv); fi
      for sys in "${order[@]}"; do run "$rep" "$pl" "$sys"; done
    done
  done
  for pl in 1 16; do
    for t in "${TESTS[@]}"; do
      for sys in "${SYSTEMS[@]}"; do
        echo "BENCH collections.p$pl.$t.$sys $(med "p$pl" "$t" "$sys" 4) ops/s"
        echo "BENCH collections.p$pl.$t.p99.$sys $(med "p$pl" "$t" "$sys" 5) ms"
      done
    done
  done
  for pl in 1 16; do
    for t in "${TESTS[@]}"; do
      a=$(med "p$pl" "$t" rcukv 4); b=$(med "p$pl" "$t" redis 4)
      awk -v b="$b" 'BEGIN { exit !(b > 0) }' || die "redis -P $pl $t: no throughput"
      echo "RATIO collections.p$pl.$t $(ratio "$a" "$b") higher"
      a=$(med "p$pl" "$t" rcukv 5); b=$(med "p$pl" "$t" redis 5)
      if awk -v b="$b" 'BEGIN { exit !(b > 0) }'; then
        echo "RATIO collections.p$pl.$t.p99 $(ratio "$a" "$b") lower"
      fi
    done
  done
  for sys in "${SYSTEMS[@]}"; do stop "$sys"; done
fi

# ------------------------------------------------------------ 2. memory
used() { redis-cli -p "$1" info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }'; }
# settled PORT: used_memory once two reads 0.5 s apart agree within 0.1 %
# (rcukv frees replaced copies after grace periods), at most 20 s.
settled() {
  local a b i
  a=$(used "$1")
  for i in $(seq 1 40); do
    sleep 0.5
    b=$(used "$1")
    awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= a / 1000) }' && break
    a=$b
  done
  echo "$b"
}
# gen CASE: the commands of CASE for redis-cli --pipe, 1000 fields each.
gen() {
  case $1 in
    hash_1m) awk -v n="$BIG" 'BEGIN { for (i = 0; i < n; i += 1000) {
               s = "HSET big"; for (j = i; j < i + 1000 && j < n; j++) s = s " f:" j " v:" j; print s } }' ;;
    set_1m) awk -v n="$BIG" 'BEGIN { for (i = 0; i < n; i += 1000) {
               s = "SADD big"; for (j = i; j < i + 1000 && j < n; j++) s = s " m:" j; print s } }' ;;
    hash_small) awk -v n="$SMALL" 'BEGIN { for (k = 0; k < n; k++) {
               s = "HSET h:" k; for (j = 0; j < 100; j++) s = s " f:" j " v:" j; print s } }' ;;
  esac
}
elements() { case $1 in hash_1m|set_1m) echo "$BIG" ;; hash_small) echo $((SMALL * 100)) ;; esac; }

if [[ " $PARTS " == *" memory "* ]]; then
  CASES=(hash_1m set_1m hash_small)
  declare -A MEM
  for c in "${CASES[@]}"; do gen "$c" >"$tmp/$c.cmds"; done
  for c in "${CASES[@]}"; do
    for sys in "${SYSTEMS[@]}"; do
      start "$sys"
      before=$(settled "${PORT[$sys]}")
      out=$(redis-cli -p "${PORT[$sys]}" --pipe <"$tmp/$c.cmds" 2>&1)
      case $out in
        *"errors: 0, replies: "*) ;;
        *) die "$sys: loading $c failed: $(tail -n 1 <<<"$out")" ;;
      esac
      after=$(settled "${PORT[$sys]}")
      n=$(elements "$c")
      MEM[$c.$sys]=$(awk -v a="$after" -v b="$before" -v n="$n" 'BEGIN { printf "%.1f", (a - b) / n }')
      echo "BENCH collections.mem.$c.$sys ${MEM[$c.$sys]} bytes/element ($n elements, used_memory $before -> $after)"
      stop "$sys"
    done
  done
  for c in "${CASES[@]}"; do
    awk -v b="${MEM[$c.redis]}" 'BEGIN { exit !(b > 0) }' || die "redis $c: no memory measured"
    echo "RATIO collections.mem.$c $(ratio "${MEM[$c.rcukv]}" "${MEM[$c.redis]}") lower"
  done
fi
