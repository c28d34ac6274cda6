#!/usr/bin/env bash
# bench/bench_pubsub.sh - Pub/Sub fan-out, rcukv-server against redis-server 7,
# side by side in one run (issue 16 item 6).
#
# Starts rcukv (threads = cores), redis and redis_io2 (bench/servers.sh) and
# runs bench/bench_pubsub (hiredis) against each in turn, repeated, the order
# of the systems reversed every other repeat: 1 publisher, 50 subscribers of
# one channel (spread over rcukv's workers), 64-byte payloads stamped with
# their send time (CLOCK_MONOTONIC, same host), two sections per system:
#   flood  as fast as the server delivers end to end, at most 32 messages per
#          subscriber published but not yet delivered: deliveries/s (total
#          over the 50 subscribers) and the delivery latency under that load
#   paced  2000 PUBLISH/s (100000 deliveries/s, a load every system here
#          carries): the delivery latency p50/p99
# A first, unrecorded round warms every server up.  Reported per system: the
# median over repeats; RATIO lines compare rcukv with the better Redis.
# A run that fails (lost deliveries, a wrong frame, a PUBLISH that does not
# count 50 receivers, a dropped connection) stops the bench with its message,
# and so does a reference whose median is zero: exit 1, no RATIO.
#
# Usage: bench/bench_pubsub.sh [path/to/rcukv-server]
# Env:   BENCH_QUICK=1 (1 s sections), BENCH_REPEATS=N (default 3),
#        BENCH_PORT=7290 (uses 3 ports from there)
set -u
SERVER=${1:-${B:-build/release}/rcukv-server}
GEN=$(dirname "$SERVER")/bench/bench_pubsub
PORT0=${BENCH_PORT:-7290}
REPEATS=${BENCH_REPEATS:-3}
SUBS=50
RATE=2000
if [ "${BENCH_QUICK:-0}" = 1 ]; then MS=1000; else MS=3000; fi

LIB_BENCH=1
# need_tools, need_built, die, scratch_init ($tmp, $pids stopped on exit)
. "$(dirname "$0")/../scripts/lib.sh"
need_tools redis-server redis-cli
need_built "$SERVER" "$GEN"
scratch_init bench-pubsub
TMP=$tmp
# start NAME PORT, SYSTEMS, PID[]
. "$(dirname "$0")/servers.sh"

echo "bench_pubsub: $(nproc) cores, $REPEATS repeat(s) of ${MS} ms sections, $SUBS subscribers, rcukv=$SERVER"
for i in 0 1 2; do start "${SYSTEMS[$i]}" $((PORT0 + i)); done

# results: lines "mode name msgs_per_s p50_us p99_us"
RES=$TMP/results
: >"$RES"

run_one() {  # rep mode index record(0|1)
  local rep=$1 mode=$2 name=${SYSTEMS[$3]} port=$((PORT0 + $3)) line
  line=$("$GEN" --port "$port" --subs "$SUBS" --mode "$mode" --ms "$MS" --rate "$RATE" \
           2>"$TMP/gen.err") ||
    die "$mode against $name: $(tail -n 3 "$TMP/gen.err" | paste -sd " ")"
  # pubsub mode=M published=N delivered=D secs=S msgs_per_s=R p50_us=.. p99_us=.. max_us=..
  echo "$line" | grep -Eq '^pubsub .*msgs_per_s=[0-9]+ p50_us=[0-9]+ p99_us=[0-9]+ ' ||
    die "$mode against $name: no result line ('$line')"
  [ "$rec" = 1 ] || return 0
  echo "$line" | sed -E "s/.*msgs_per_s=([0-9]+) p50_us=([0-9]+) p99_us=([0-9]+).*/$mode $name \1 \2 \3/" >>"$RES"
  printf 'run %d %-5s %-9s %s\n' "$rep" "$mode" "$name" "${line#pubsub }"
}

for rep in $(seq 0 "$REPEATS"); do
  order=(0 1 2); [ $((rep % 2)) = 0 ] && order=(2 1 0)
  rec=1; [ "$rep" = 0 ] && rec=0
  for mode in flood paced; do
    for i in "${order[@]}"; do run_one "$rep" "$mode" "$i" "$rec"; done
  done
done

awk -v subs="$SUBS" -v rate="$RATE" '
function median(arr, n,    i, j, t) {
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
  return (n % 2) ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
}
{ k = $1 SUBSEP $2; n = ++cnt[k]; rps[k, n] = $3; p50[k, n] = $4; p99[k, n] = $5 }
END {
  split("rcukv redis redis_io2", S, " "); split("flood paced", M, " ")
  for (m = 1; m <= 2; m++) for (s = 1; s <= 3; s++) {
    k = M[m] SUBSEP S[s]; n = cnt[k]
    for (i = 1; i <= n; i++) { a[i] = rps[k, i]; b[i] = p50[k, i]; c[i] = p99[k, i] }
    R[k] = median(a, n); P5[k] = median(b, n) / 1000; P9[k] = median(c, n) / 1000
  }
  f = "pubsub.flood_" subs "subs"; p = "pubsub.paced_" subs "subs"
  for (s = 1; s <= 3; s++) {
    printf "BENCH %s.%s %.0f msgs/s\n", f, S[s], R["flood", S[s]]
    printf "BENCH %s.p50.%s %.3f ms\n", f, S[s], P5["flood", S[s]]
    printf "BENCH %s.p99.%s %.3f ms\n", f, S[s], P9["flood", S[s]]
  }
  printf "BENCH %s.rate %.0f msgs/s\n", p, rate * subs
  for (s = 1; s <= 3; s++) {
    printf "BENCH %s.p50.%s %.3f ms\n", p, S[s], P5["paced", S[s]]
    printf "BENCH %s.p99.%s %.3f ms\n", p, S[s], P9["paced", S[s]]
  }
  # the better Redis: higher rate, lower p99; a reference that measured zero
  # has no ratio: stop (exit 1) before any RATIO line, never print 0
  br = R["flood", "redis"]; if (R["flood", "redis_io2"] > br) br = R["flood", "redis_io2"]
  bp = P9["paced", "redis"]; if (P9["paced", "redis_io2"] < bp) bp = P9["paced", "redis_io2"]
  if (!(br > 0) || !(bp > 0)) {
    printf "bench_pubsub: a reference measured zero (msgs/s %s, paced p99 %s ms); no ratio, stopping\n", br, bp > "/dev/stderr"
    exit 1
  }
  printf "RATIO %s %.2f higher\n", f, R["flood", "rcukv"] / br
  printf "RATIO %s.p99 %.2f lower\n", p, P9["paced", "rcukv"] / bp
}' "$RES"
