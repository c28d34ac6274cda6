#!/usr/bin/env bash
# bench/bench_server.sh - rcukv-server against redis-server 7, side by side.
#
# Starts three servers fresh on loopback, persistence off:
#   rcukv      build/<variant>/rcukv-server (threads = cores)
#   redis      redis-server, default configuration
#   redis_io2  redis-server --io-threads 2 --io-threads-do-reads yes
# fills each with the same keys, then runs the real redis-benchmark with the
# same flags against each in turn (alternating, repeated), per workload:
#   get_p1 set_p1 get_p16 set_p16   (-c 50 --threads 2 -d 32 -r 1000000)
# and bench/bench_multi (hiredis; redis-benchmark sends one command only)
# for transactions, with the same connections, threads and values:
#   multi_set4   MULTI, 4 SETs, EXEC pipelined per transaction (-r 1000000)
# and reports, per system, the median over repeats of throughput (ops/s;
# txn/s for multi_set4), p50 and p99 latency (redis-benchmark --csv; MULTI
# to EXEC reply for a transaction), and CPU time per operation: the
# server's user+sys time from /proc/PID/stat across the run divided by the
# requests (transactions) it served.  RATIO lines compare rcukv with the
# better Redis.
# A run whose CSV line is missing or malformed (no 8 fields, no rate) stops
# the bench with a message (an empty line once shifted every field after it),
# and so does a bench_multi run that fails (a reply that is not byte for
# byte +OK, 4 +QUEUED, *4 and 4 +OK; a lost connection) and a reference
# whose median is zero: exit 1, no RATIO.
#
# Usage: bench/bench_server.sh [path/to/rcukv-server]
# Env:   BENCH_QUICK=1 (one repeat, shorter sections), BENCH_REPEATS=N,
#        BENCH_PORT=7280 (uses 3 ports from there)
set -u
SERVER=${1:-${B:-build/release}/rcukv-server}
MULTI=$(dirname "$SERVER")/bench/bench_multi
PORT0=${BENCH_PORT:-7280}
QUICK=${BENCH_QUICK:-0}
# Each timed section aims at SECS seconds: a short calibration run per
# section measures the rate that sizes -n for the timed runs.
if [ "$QUICK" = 1 ]; then
  REPEATS=${BENCH_REPEATS:-2}; SECS=1; N_P1=10000; N_P16=100000; N_FILL=200000
else
  REPEATS=${BENCH_REPEATS:-3}; SECS=3; N_P1=20000; N_P16=200000; N_FILL=1000000
fi
CLK_TCK=$(getconf CLK_TCK)

LIB_BENCH=1
# need_tools, need_built, die, scratch_init ($tmp, $pids stopped on exit)
. "$(dirname "$0")/../scripts/lib.sh"
need_tools redis-server redis-benchmark
need_built "$SERVER" "$MULTI"
scratch_init bench-server
TMP=$tmp

# start NAME PORT, cpu_ticks PID, SYSTEMS, PID[]
. "$(dirname "$0")/servers.sh"
names=("${SYSTEMS[@]}")
ports=($PORT0 $((PORT0 + 1)) $((PORT0 + 2)))
declare -A NREQ

echo "bench_server: $(nproc) cores, $REPEATS repeat(s), rcukv=$SERVER"
for i in 0 1 2; do start "${names[$i]}" "${ports[$i]}"; done
for i in 0 1 2; do
  redis-benchmark -p "${ports[$i]}" -t set -n "$N_FILL" -P 64 -c 50 --threads 2 -d 32 \
    -r 1000000 -q >/dev/null 2>&1
  echo "filled ${names[$i]}: $(redis-cli -p "${ports[$i]}" dbsize) keys"
done

# results: lines "workload name rps p50 p99 cpu_us_per_op"
RES=$TMP/results
: >"$RES"
workloads=(set_p1 get_p1 set_p16 get_p16 multi_set4)

# record rep wl name n line: the result line "wl name rps p50 p99 cpu_us_per_op"
record() {
  echo "$5" >>"$RES"
  printf 'run %d %-10s %-9s n=%-8d rps,p50,p99,cpu_us/op: %s\n' "$1" "$2" "$3" "$4" \
    "$(echo "$5" | cut -d' ' -f3-)"
}

# run_multi rep index record(0|1): bench_multi for SECS, its own warm-up
run_multi() {
  local rep=$1 name=${names[$2]} port=${ports[$2]} rec=$3 c0 c1 line out
  local pid=${PID[${names[$2]}]}
  c0=$(cpu_ticks "$pid")
  line=$("$MULTI" --port "$port" --clients 50 --threads 2 --size 32 --keys 1000000 \
           --ms $((SECS * 1000)) 2>"$TMP/multi.err") ||
    die "multi_set4 against $name: $(tail -n 3 "$TMP/multi.err" | paste -sd " ")"
  c1=$(cpu_ticks "$pid")
  # multi txns=N all=A secs=S txn_per_s=R p50_us=.. p99_us=.. max_us=..
  out=$(echo "$line" | awk -v name="$name" -v dc=$((c1 - c0)) -v hz="$CLK_TCK" '
    /^multi / { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
    END { if (!(v["txn_per_s"] > 0) || v["p99_us"] == "") exit 1
          printf "multi_set4 %s %s %.3f %.3f %.3f\n", name, v["txn_per_s"], v["p50_us"] / 1000,
            v["p99_us"] / 1000, dc / hz * 1e6 / v["all"] }') ||
    die "multi_set4 against $name: no usable bench_multi line ('$line')"
  [ "$rec" = 1 ] && record "$rep" multi_set4 "$name" "$(echo "$line" | sed 's/.* all=\([0-9]*\).*/\1/')" "$out"
  return 0
}

run_one() {  # rep wl index record(0|1)
  local rep=$1 wl=$2 i=$3 rec=$4
  [ "$wl" = multi_set4 ] && { run_multi "$rep" "$i" "$rec"; return; }
  local t=${wl%_p*} P=${wl#*_p} name=${names[$i]} port=${ports[$i]}
  local pid=${PID[${names[$i]}]} n c0 c1 line out
  n=${NREQ[$wl.$name]:-}
  if [ -z "$n" ]; then n=$N_P1; [ "$P" = 16 ] && n=$N_P16; fi
  c0=$(cpu_ticks "$pid")
  line=$(redis-benchmark -p "$port" -t "$t" -n "$n" -P "$P" -c 50 --threads 2 -d 32 \
           -r 1000000 --csv 2>/dev/null | grep -v '^"test"' | tail -n 1)
  c1=$(cpu_ticks "$pid")
  # "SET","rps","avg","min","p50","p95","p99","max": exactly 8 fields and a
  # rate, or the run failed (an empty line would shift every field below)
  echo "$line" | tr -d '"' | awk -F, 'NF == 8 && $2 + 0 > 0 && $5 != "" && $7 != "" { ok = 1 } END { exit !ok }' ||
    die "$wl against $name: no usable redis-benchmark --csv line ('$line')"
  out=$(echo "$line" | tr -d '"' | awk -F, -v wl="$wl" -v name="$name" -v n="$n" \
    -v dc=$((c1 - c0)) -v hz="$CLK_TCK" \
    '{ printf "%s %s %s %s %s %.3f\n", wl, name, $2, $5, $7, dc / hz * 1e6 / n }')
  # size the next run of this section to last about SECS seconds
  NREQ[$wl.$name]=$(echo "$out" | awk -v s="$SECS" -v m="$N_P1" \
    '{ n = int($3 * s); if (n < m) n = m; print n }')
  [ "$rec" = 1 ] && record "$rep" "$wl" "$name" "$n" "$out"
  return 0
}

# calibration: one short run per redis-benchmark section sizes the timed
# runs (bench_multi runs for SECS and warms up on its own)
for wl in "${workloads[@]::4}"; do
  for i in 0 1 2; do run_one 0 "$wl" "$i" 0; done
done
for rep in $(seq "$REPEATS"); do
  for wl in "${workloads[@]}"; do
    # alternate the order of the systems from one repeat to the next
    order=(0 1 2); [ $((rep % 2)) = 0 ] && order=(2 1 0)
    for i in "${order[@]}"; do run_one "$rep" "$wl" "$i" 1; done
  done
done

# medians and ratios
awk -v wls="${workloads[*]}" '
function median(arr, n,    i, j, t) {
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
  return (n % 2) ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
}
{ k = $1 SUBSEP $2; cnt[k]++; rps[k, cnt[k]] = $3; p50[k, cnt[k]] = $4; p99[k, cnt[k]] = $5; cpu[k, cnt[k]] = $6 }
END {
  nw = split(wls, W, " "); split("rcukv redis redis_io2", S, " ")
  for (w = 1; w <= nw; w++) for (s = 1; s <= 3; s++) {
    k = W[w] SUBSEP S[s]; n = cnt[k]
    for (i = 1; i <= n; i++) { a[i] = rps[k, i]; b[i] = p50[k, i]; c[i] = p99[k, i]; d[i] = cpu[k, i] }
    R[k] = median(a, n); P5[k] = median(b, n); P9[k] = median(c, n); C[k] = median(d, n)
    printf "BENCH server.%s.%s %.0f %s\n", W[w], S[s], R[k], W[w] ~ /^multi/ ? "txn/s" : "ops/s"
    printf "BENCH server.%s.p50.%s %.3f ms\n", W[w], S[s], P5[k]
    printf "BENCH server.%s.p99.%s %.3f ms\n", W[w], S[s], P9[k]
    printf "BENCH server.%s.cpu_per_op.%s %.3f us\n", W[w], S[s], C[k]
  }
  # A reference that measured zero has no ratio: stop (exit 1) before any
  # RATIO line, never print 0.
  for (w = 1; w <= nw; w++) {
    x = W[w] SUBSEP "redis"; y = W[w] SUBSEP "redis_io2"
    best = (R[x] > R[y]) ? x : y
    bp = (P9[x] < P9[y]) ? P9[x] : P9[y]
    bc = (C[x] < C[y]) ? C[x] : C[y]
    if (!(R[best] > 0) || !(bp > 0) || !(bc > 0)) {
      printf "bench_server: server.%s: a reference measured zero (rps %s, p99 %s, cpu/op %s); no ratio, stopping\n", W[w], R[best], bp, bc > "/dev/stderr"
      exit 1
    }
  }
  for (w = 1; w <= nw; w++) {
    r = W[w] SUBSEP "rcukv"; x = W[w] SUBSEP "redis"; y = W[w] SUBSEP "redis_io2"
    best = (R[x] > R[y]) ? x : y
    bp = (P9[x] < P9[y]) ? P9[x] : P9[y]
    bc = (C[x] < C[y]) ? C[x] : C[y]
    printf "RATIO server.%s %.2f higher\n", W[w], R[r] / R[best]
    printf "RATIO server.%s.p99 %.2f lower\n", W[w], P9[r] / bp
    printf "RATIO server.%s.cpu_per_op %.2f lower\n", W[w], C[r] / bc
  }
}' "$RES"
