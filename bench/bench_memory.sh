#!/usr/bin/env bash
# bench/bench_memory.sh - the cache tier (issue 7), side by side with
# redis-server 7 in one run.  Starts fresh servers on loopback (persistence
# off; rcukv with its default threads, redis-server with its defaults) on
# BENCH_PORT (default 7460) and BENCH_PORT + 1:
#   1. bytes per key: 1,000,000 SETs of 16-byte keys ("key:%012d") and 32-byte
#      values through redis-cli --pipe; (used_memory after - before) / keys and
#      the same for RSS.
#        BENCH memory.bytes_per_key.{rcukv,redis}  RATIO memory.bytes_per_key
#        BENCH memory.rss_per_key.{rcukv,redis}    RATIO memory.rss_per_key
#   2. overwrite flood: redis-benchmark -t set -P 64 -c 16 --threads 2 over the
#      same 1M keys for 30 s (BENCH_QUICK: 8 s); RSS sampled every 0.5 s; the
#      steady state is the RSS after the first sixth (5 s; quick: 2 s);
#      growth = max / steady - 1 (never negative: max starts at steady).
#        BENCH memory.flood_rss_growth.{rcukv,redis} %   RATIO memory.flood_rss_growth
#        (rcukv's growth over redis's growth, lower is better; the growths
#        themselves, not the factors 1 + g, so 10 % against 1 % reads 10).
#      A growth under the noise level (BENCH_RSS_NOISE_PCT, default 1 % of
#      the steady RSS, about 1 MB here; rcukv's growth read 0.0 % in one quick
#      run and 0.75 % in the next) is not distinguishable from no growth,
#      and a ratio against ~0 means nothing: each side is floored at the noise
#      level before dividing, and the output says so.  Both under it reads
#      1.00 ("no difference we can see"), never a ratio against 0.
#   3. hit ratio: rcukv-cli bench --key-pattern zipf (s 0.99) over 1M keys,
#      GET:SET 3:1, 32-byte values, with maxmemory at 10% of the key space:
#      the server's empty used_memory + a tenth of what the 1M keys took in
#      redis-server (part 1), the same budget for both, as an operator would
#      give either (a leaner server holds more keys in it); for allkeys-lru and
#      allkeys-lfu, 20 s measured (BENCH_QUICK: 6 s) after 5 s of warm-up;
#      hit ratio = GET hits / GETs; the keys each held are printed.
#        BENCH cache.hit_ratio.<policy>.{rcukv,redis}  RATIO cache.hit_ratio.<policy>
#        RATIO cache.hit_ratio (the lower of the two policies' ratios)
# A reference (redis-server) that failed or measured zero (keys not loaded,
# no flood traffic, no GETs) stops the bench with a message and exit 1.
# Usage: bench/bench_memory.sh [path/to/rcukv-server]
# Env: BENCH_QUICK=1, BENCH_PORT, BENCH_RSS_NOISE_PCT
set -u
B=${B:-build/release}
SERVER=${1:-$B/rcukv-server}
CLI=$(dirname "$SERVER")/rcukv-cli
PORT0=${BENCH_PORT:-7460}
KEYS=1000000
NOISE_PCT=${BENCH_RSS_NOISE_PCT:-1}
if [ "${BENCH_QUICK:-0}" = 1 ]; then FLOOD=8; HITDUR=6; else FLOOD=30; HITDUR=20; fi
LIB_BENCH=1
# need_tools, need_built, die, scratch_init ($tmp, $pids stopped on exit)
. "$(dirname "$0")/../scripts/lib.sh"
need_tools redis-server redis-cli redis-benchmark
need_built "$SERVER" "$CLI"
scratch_init bench-memory
TMP=$tmp

declare -A PORT=([rcukv]=$PORT0 [redis]=$((PORT0 + 1)))
declare -A PID
start() { # system
  local s=$1 p=${PORT[$1]}
  if [ "$s" = rcukv ]; then
    "$SERVER" --port "$p" --bind 127.0.0.1 --save "" --loglevel warning >"$TMP/$s.log" 2>&1 &
  else
    redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no --loglevel warning \
      --dir "$TMP" >"$TMP/$s.log" 2>&1 &
  fi
  PID[$s]=$!
  pids+=($!)
  for i in $(seq 1 100); do
    redis-cli -p "$p" ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "bench_memory: $s did not start" >&2
  exit 1
}
stop() { # system
  kill "${PID[$1]}" 2>/dev/null
  wait "${PID[$1]}" 2>/dev/null
}
info() { # system field
  redis-cli -p "${PORT[$1]}" info memory | tr -d '\r' | awk -F: -v k="$2" '$1 == k { print $2 }'
}
rss() { # system: RSS in bytes from /proc
  awk '/^VmRSS/ { print $2 * 1024 }' "/proc/${PID[$1]}/status"
}
load() { # system: the 1M keys
  awk -v n="$KEYS" 'BEGIN {
    v = "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv"
    for (i = 0; i < n; i++) {
      k = sprintf("key:%012d", i)
      printf "*3\r\n$3\r\nSET\r\n$16\r\n%s\r\n$32\r\n%s\r\n", k, v
    }
  }' | redis-cli -p "${PORT[$1]}" --pipe >"$TMP/pipe.$1" 2>&1
}
# ratio figure a b -> RV = a / b.  A reference b that is empty or not > 0
# stops the bench (so: never call it in a $(...) subshell, where exit would
# only end the subshell).
RV=
ratio() {
  awk -v a="$2" -v b="$3" 'BEGIN { exit !(a != "" && b != "" && b + 0 > 0) }' ||
    die "$1: reference (redis) figure '${3}' is not > 0 (rcukv: '${2}')"
  RV=$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.3f", a / b }')
}
cmds() { # system: commands processed so far
  redis-cli -p "${PORT[$1]}" info stats | tr -d '\r' | awk -F: '$1 == "total_commands_processed" { print $2 }'
}

# ------------------------------------------------------------ 1. bytes per key
declare -A BPK RPK GROW
for s in rcukv redis; do
  start "$s"
  sleep 0.5
  u0=$(info "$s" used_memory); r0=$(rss "$s")
  load "$s"
  sleep 1 # the table's background resize and frees settle
  n=$(redis-cli -p "${PORT[$s]}" dbsize)
  [ "$n" = "$KEYS" ] || die "$s holds '$n' keys after loading $KEYS (see $TMP/pipe.$s)"
  u1=$(info "$s" used_memory); r1=$(rss "$s")
  BPK[$s]=$(awk -v a="$u0" -v b="$u1" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }')
  RPK[$s]=$(awk -v a="$r0" -v b="$r1" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }')
  echo "# $s: $n keys, used_memory $u0 -> $u1, rss $r0 -> $r1"
  echo "BENCH memory.bytes_per_key.$s ${BPK[$s]} bytes"
  echo "BENCH memory.rss_per_key.$s ${RPK[$s]} bytes"

  # ---------------------------------------------------------- 2. flood
  c0=$(cmds "$s")
  timeout "$FLOOD" redis-benchmark -p "${PORT[$s]}" -t set -P 64 -c 16 --threads 2 \
    -r "$KEYS" -d 32 -n 2000000000 -q >"$TMP/flood.$s" 2>&1 &
  fpid=$!
  sleep $((FLOOD / 6 > 2 ? FLOOD / 6 : 2)) # warm-up: the steady state
  steady=$(rss "$s"); max=$steady
  while kill -0 "$fpid" 2>/dev/null; do
    x=$(rss "$s"); [ "$x" -gt "$max" ] && max=$x
    sleep 0.5
  done
  wait "$fpid" 2>/dev/null
  c1=$(cmds "$s")
  # a flood that sent nothing would read as 0 % growth: stop instead
  [ -n "$c0" ] && [ -n "$c1" ] && [ $((c1 - c0)) -gt "$KEYS" ] ||
    die "$s served '$c0' -> '$c1' commands in the flood (see $TMP/flood.$s)"
  GROW[$s]=$(awk -v a="$steady" -v b="$max" 'BEGIN { printf "%.6f", b / a - 1 }')
  echo "# $s: flood ${FLOOD}s at -P 64: $((c1 - c0)) commands, rss steady $steady, max $max"
  if [ "$s" = rcukv ]; then
    redis-cli -p "${PORT[$s]}" info rcu | tr -d '\r' | grep -E 'grace_periods|pending|throttled' |
      sed 's/^/# rcukv /'
  fi
  echo "BENCH memory.flood_rss_growth.$s $(awk -v g="${GROW[$s]}" 'BEGIN { printf "%.2f", g * 100 }') %"
  stop "$s"
done
ratio memory.bytes_per_key "${BPK[rcukv]}" "${BPK[redis]}"
echo "RATIO memory.bytes_per_key $RV lower"
ratio memory.rss_per_key "${RPK[rcukv]}" "${RPK[redis]}"
echo "RATIO memory.rss_per_key $RV lower"
# Growths in %, each floored at the noise level (see the header).
declare -A GFL
for s in rcukv redis; do
  GFL[$s]=$(awk -v g="${GROW[$s]}" -v n="$NOISE_PCT" 'BEGIN { g *= 100; printf "%.4f", g < n ? n : g }')
  awk -v g="${GROW[$s]}" -v n="$NOISE_PCT" 'BEGIN { exit !(g * 100 < n) }' &&
    echo "# memory.flood_rss_growth: $s grew $(awk -v g="${GROW[$s]}" 'BEGIN { printf "%.2f", g * 100 }') %, under the ${NOISE_PCT} % noise level: counted as ${NOISE_PCT} % in the ratio"
done
ratio memory.flood_rss_growth "${GFL[rcukv]}" "${GFL[redis]}"
echo "RATIO memory.flood_rss_growth $RV lower"

# ------------------------------------------------------------ 3. hit ratio
worst=
for policy in allkeys-lru allkeys-lfu; do
  declare -A HIT
  for s in rcukv redis; do
    start "$s"
    sleep 0.3
    u0=$(info "$s" used_memory)
    mm=$(awk -v u="$u0" -v b="${BPK[redis]}" -v n="$KEYS" 'BEGIN { printf "%d", u + b * n / 10 }')
    redis-cli -p "${PORT[$s]}" config set maxmemory-policy "$policy" >/dev/null
    redis-cli -p "${PORT[$s]}" config set maxmemory "$mm" >/dev/null
    "$CLI" -p "${PORT[$s]}" bench --threads 2 --clients 4 --pipeline 8 --ratio 3:1 \
      --keys "$KEYS" --key-pattern zipf --data-size 32 --warmup 5 --duration "$HITDUR" \
      >"$TMP/hit.$s.$policy" 2>&1
    line=$(grep -E '^hits/misses' "$TMP/hit.$s.$policy")
    HIT[$s]=$(echo "$line" | awk '{ for (i = 1; i <= NF; i++) if ($i == "hits,") h = $(i - 1); else if ($i == "misses") m = $(i - 1); if (h + m > 0) printf "%.4f", h / (h + m) }')
    echo "# $s $policy: maxmemory $mm, $(redis-cli -p "${PORT[$s]}" dbsize) keys held, evicted $(redis-cli -p "${PORT[$s]}" info stats | tr -d '\r' | awk -F: '$1 == "evicted_keys" { print $2 }'); $line"
    p=${policy/-/_}
    [ -n "${HIT[$s]}" ] || die "cache.hit_ratio.$p: no hits/misses line from $s (see $TMP/hit.$s.$policy)"
    echo "BENCH cache.hit_ratio.$p.$s ${HIT[$s]}"
    stop "$s"
  done
  ratio "cache.hit_ratio.$p" "${HIT[rcukv]}" "${HIT[redis]}"; r=$RV
  echo "RATIO cache.hit_ratio.${policy/-/_} $r higher"
  if [ -z "$worst" ] || awk -v a="$r" -v b="$worst" 'BEGIN { exit !(a < b) }'; then worst=$r; fi
done
echo "RATIO cache.hit_ratio $worst higher"
