#!/usr/bin/env bash
# tests/server/test_cache.sh - issue 7: the cache tier.  Starts $B/rcukv-server
# on free loopback ports (7400-7449), or uses CACHE_TEST_PORT (any server that
# holds nothing you need: it runs FLUSHALL and CONFIG SET; a redis-server 7
# passes it too, which proves the test):
#   1. expiry: a key set with PX 100 is present at 50 ms (checked only when the
#      GET really ran before 90 ms) and gone at 200 ms; the active cycle
#      removes keys nobody touches; INFO expiry stats.
#   2. replies: tests/server/cases_cache.txt (recorded from redis-server
#      7.0.15) through test_server --cases-only, against rcukv-server and
#      against a redis-server started here.
#   3. noeviction: writes get the exact -OOM text, reads and DEL go on.
#   4. allkeys-lru: a hot set read between batches of cold writes survives a
#      scan of cold keys worth several times maxmemory; allkeys-lfu likewise
#      with a frequently read hot set; allkeys-random stays under the limit.
#   5. volatile-lru/lfu/random/ttl never evict keys without a TTL (and give
#      -OOM once only those are left); volatile-ttl evicts the nearest expiry.
#   6. used_memory stays under maxmemory plus a small margin while writing ten
#      times the limit; CONFIG SET maxmemory lower evicts at once.
#   7. write flood: pipelined SETs overwriting the same keys from every core;
#      rcu_callbacks_pending_hwm stays within the configured bound
#      (rcu-callback-limit per thread) and RSS stays within 25% of its level
#      after the first 1.5 s plus the bytes that bound lets wait.
# "Within the limit" means used_memory - mem_not_counted_for_evict (evicted
# entries still waiting for their grace period, which eviction does not evict
# for twice) <= maxmemory + 10% + 512 kB.
# Sizes are small so the whole run takes well under a minute; nothing asserts
# a time.  A check this machine cannot make (too slow for the 50 ms one, RSS
# under a sanitizer) is a skip.  Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
PORT_LAST=7449
. "$(dirname "$0")/../../scripts/lib.sh"
scratch_init cache
server_up "${CACHE_TEST_PORT:-}" 7400 --threads 2 --save ""

r() { redis-cli -p "$P" "$@" 2>&1; }
# Redis's -OOM text
OOM="OOM command not allowed when used memory > 'maxmemory'."
margin() { echo $(($1 + $1 / 10 + 524288)); }
info_field() { r info "$1" | tr -d '\r' | awk -F: -v k="$2" '$1 == k { print $2 }'; }
used() { info_field memory used_memory; }
# used_memory minus mem_not_counted_for_evict (evicted entries still waiting
# for their grace period): what maxmemory is compared with
counted() {
  r info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { u = $2 }
    $1 == "mem_not_counted_for_evict" { n = $2 } END { print u - n }'
}

# fill PREFIX FIRST COUNT VALUE_SIZE [EX seconds]: SET PREFIX<i> <value> via --pipe
fill() {
  local prefix=$1 first=$2 count=$3 size=$4 ex=${5:-}
  awk -v p="$prefix" -v f="$first" -v n="$count" -v s="$size" -v ex="$ex" 'BEGIN {
    v = sprintf("%" s "s", ""); gsub(/ /, "x", v)
    for (i = f; i < f + n; i++) {
      k = p i
      if (ex != "")
        printf "*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$2\r\nEX\r\n$%d\r\n%s\r\n", length(k), k, s, v, length(ex), ex
      else
        printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(k), k, s, v
    }
  }' | redis-cli -p "$P" --pipe >"$tmp/pipe.out" 2>&1
}
# read PREFIX FIRST COUNT [TIMES]: GET each key TIMES times via --pipe
readkeys() {
  local prefix=$1 first=$2 count=$3 times=${4:-1}
  awk -v p="$prefix" -v f="$first" -v n="$count" -v t="$times" 'BEGIN {
    for (j = 0; j < t; j++)
      for (i = f; i < f + n; i++) {
        k = p i
        printf "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", length(k), k
      }
  }' | redis-cli -p "$P" --pipe >/dev/null 2>&1
}
# count PREFIX FIRST COUNT: how many of the keys exist (EXISTS in batches of 500)
count() {
  local prefix=$1 first=$2 n=$3 total=0 i j args
  for ((i = first; i < first + n; i += 500)); do
    args=()
    for ((j = i; j < i + 500 && j < first + n; j++)); do args+=("$prefix$j"); done
    total=$((total + $(r exists "${args[@]}")))
  done
  echo "$total"
}
# limit BYTES POLICY: maxmemory = current used memory + BYTES
limit() {
  local base
  base=$(used)
  r config set maxmemory-policy "$2" >/dev/null
  r config set maxmemory $((base + $1)) >/dev/null
  echo $((base + $1))
}
# until_oom PREFIX: SET 2 kB values until one is refused (at most 2000 tries;
# a client's buffers count too, so the first refusal may come a little later
# than the bulk fill suggests).  Prints the last reply.
until_oom() {
  local i rep val
  val=$(printf '%02000d' 0)
  for i in $(seq 1 2000); do
    rep=$(r set "$1$i" "$val")
    [ "$rep" != OK ] && break
  done
  echo "$rep"
}
reset() {
  r config set maxmemory 0 >/dev/null
  r config set maxmemory-policy noeviction >/dev/null
  r flushall >/dev/null
  sleep 0.3 # entries flushed are freed after a grace period
}

r flushall >/dev/null
r config set hz 100 >/dev/null # a finer LRU clock and a busier expiry cycle

# ------------------------------------------------------------ 1. expiry
present=skip
for attempt in 1 2 3 4 5; do
  t0=$EPOCHREALTIME
  r set pxkey v px 100 >/dev/null
  sleep 0.05
  v=$(r get pxkey)
  t1=$EPOCHREALTIME
  ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", (b - a) * 1000 }')
  if [ "$ms" -lt 90 ]; then
    present=$v
    break
  fi
done
if [ "$present" = skip ]; then
  skip "PX 100 present at 50 ms: the GET never ran within 90 ms (five tries: the machine is too slow to make this check)"
else
  check "PX 100: present at 50 ms (GET returned '$present' after ${ms} ms)" '[ "$present" = v ]'
fi
r set pxkey v px 100 >/dev/null
sleep 0.2
check "PX 100: gone at 200 ms" '[ -z "$(r get pxkey)" ]'
check "PX 100: PTTL -2 at 200 ms" '[ "$(r pttl pxkey)" = "-2" ]'

r flushall >/dev/null
exp0=$(info_field stats expired_keys)
fill vol: 0 3000 16 1
fill keep: 0 100 16
for i in $(seq 1 100); do
  [ "$(r dbsize)" = 100 ] && break
  sleep 0.1
done
check "active expiry removed 3000 untouched keys (dbsize $(r dbsize), want 100)" '[ "$(r dbsize)" = 100 ]'
exp1=$(info_field stats expired_keys)
check "expired_keys grew by 3000 ($exp0 -> $exp1)" '[ $((exp1 - exp0)) -ge 3000 ]'
for f in expired_stale_perc expired_time_cap_reached_count expire_cycle_cpu_milliseconds; do
  check "INFO stats has $f" '[ -n "$(info_field stats $f)" ]'
done
check "keys without TTL untouched ($(count keep: 0 100))" '[ "$(count keep: 0 100)" = 100 ]'

# ------------------------------------------------------------ 2. replies
# cases_cache.txt runs against this server and against a real redis-server
# (the one it was recorded from): a glob too loose or an expectation written
# to match rcukv fails there.
run_cases() { # run_cases WHO PORT
  check_cases "cases_cache.txt against $1" \
    "$("$TS" --port "$2" --cases tests/server/cases_cache.txt --cases-only 2>&1)"
}
if [ "$external" = 0 ] && [ -x "$TS" ]; then
  run_cases rcukv-server "$P"
  r config set hz 100 >/dev/null
  if redis_up $((P + 1)); then
    run_cases "redis-server $(redis-server --version | grep -o 'v=[0-9.]*')" "$RP"
  fi
  [ -n "${rpid:-}" ] && { kill "$rpid"; wait "$rpid" 2>/dev/null; }
elif [ "$external" = 1 ]; then
  skip "cases_cache.txt: run against a server this script starts only"
else
  skip "cases_cache.txt: $TS not built"
fi

# ------------------------------------------------------------ 3. noeviction
reset
fill base: 0 1000 100
mm=$(limit 2000000 noeviction)
fill big: 0 40000 100
rep=$(until_oom more:)
check "noeviction: SET gets the exact OOM error ($rep)" \
  '[ "$rep" = "$OOM" ]'
check "noeviction: GET still works" '[ "$(r get base:1 | head -c 3)" = xxx ]'
check "noeviction: DEL still works" '[ "$(r del base:1)" = 1 ]'
check "noeviction: nothing evicted" '[ "$(info_field stats evicted_keys)" = 0 ]'
check "noeviction: INFO maxmemory $mm, policy" \
  '[ "$(info_field memory maxmemory)" = "$mm" ] && [ "$(info_field memory maxmemory_policy)" = noeviction ]'
check "noeviction: CONFIG GET maxmemory" '[ "$(r config get maxmemory | tail -n 1)" = "$mm" ]'

# ------------------------------------------------------------ 4. allkeys
# hot set: 1000 keys of 100 bytes (~150 kB); cold scan: 60000 keys (~9 MB)
# against a 2 MB limit, the hot set read after every batch of 2000 cold keys.
hot_lru_test() { # policy reads-per-batch
  local policy=$1 times=$2 mm maxu=0 u n hotfill
  reset
  mm=$(limit 2000000 "$policy")
  fill hot: 0 1000 100
  # what the hot fill got (a failure of the check below says whether the hot
  # set was ever there or was evicted later)
  hotfill="$(tr -d '\r' <"$tmp/pipe.out" | tail -n 1), $(count hot: 0 1000) present"
  readkeys hot: 0 1000 "$times"
  for b in $(seq 0 29); do
    sleep 0.02 # let the clock move past the hot reads
    fill cold: $((b * 2000)) 2000 100
    readkeys hot: 0 1000 "$times"
    u=$(counted); [ "$u" -gt "$maxu" ] && maxu=$u
  done
  n=$(count hot: 0 1000)
  check "$policy: hot set survived a cold scan ($n of 1000; after the hot fill: $hotfill)" '[ "$n" -ge 950 ]'
  check "$policy: evicted_keys > 0 ($(info_field stats evicted_keys))" \
    '[ "$(info_field stats evicted_keys)" -gt 0 ]'
  check "$policy: counted memory peak $maxu within maxmemory $mm + margin" \
    '[ "$maxu" -le "$(margin "$mm")" ]'
}
hot_lru_test allkeys-lru 1
hot_lru_test allkeys-lfu 4
check "allkeys-lfu: OBJECT FREQ of a hot key > 5 ($(r object freq hot:1))" \
  '[ "$(r object freq hot:1)" -gt 5 ]'

reset
mm=$(limit 2000000 allkeys-random)
fill rnd: 0 60000 100
u=$(used)
n=$(r dbsize)
check "allkeys-random: used_memory $u within maxmemory $mm + margin, $n keys left" \
  '[ "$u" -le "$(margin "$mm")" ] && [ "$n" -gt 1000 ] && [ "$n" -lt 60000 ]'

# ------------------------------------------------------------ 5. volatile
for policy in volatile-lru volatile-lfu volatile-random volatile-ttl; do
  reset
  fill persist: 0 2000 100
  mm=$(limit 2000000 "$policy")
  if [ "$policy" = volatile-ttl ]; then
    fill longttl: 0 1000 100 100000
  fi
  fill vol: 0 40000 100 10000
  n=$(count persist: 0 2000)
  check "$policy: keys without TTL never evicted ($n of 2000)" '[ "$n" = 2000 ]'
  check "$policy: volatile keys evicted ($(info_field stats evicted_keys))" \
    '[ "$(info_field stats evicted_keys)" -gt 0 ]'
  if [ "$policy" = volatile-ttl ]; then
    n=$(count longttl: 0 1000)
    check "volatile-ttl: keys with the furthest expiry kept ($n of 1000)" '[ "$n" -ge 950 ]'
  fi
  fill persist2: 0 30000 100
  rep=$(until_oom more:)
  check "$policy: OOM once only keys without TTL are left ($rep)" \
    '[ "$rep" = "$OOM" ]'
  n=$(count persist: 0 2000)
  check "$policy: still no key without TTL evicted ($n of 2000)" '[ "$n" = 2000 ]'
done

# ------------------------------------------------------------ 6. limit held
reset
mm=$(limit 4000000 allkeys-lru)
maxu=0
(for i in 0 1 2 3 4 5 6 7 8 9; do fill ten: $((i * 27000)) 27000 100; done) &
fpid=$!
rawmax=0
while kill -0 "$fpid" 2>/dev/null; do
  u=$(counted); [ -n "$u" ] && [ "$u" -gt "$maxu" ] && maxu=$u
  u=$(used); [ -n "$u" ] && [ "$u" -gt "$rawmax" ] && rawmax=$u
  sleep 0.05
done
wait "$fpid"
written=$((270000 * 150))
check "wrote $written bytes (~10x maxmemory $mm); counted memory peak $maxu <= maxmemory + margin (used_memory peak $rawmax)" \
  '[ "$maxu" -le "$(margin "$mm")" ]'
check "  ... used_memory with evicted entries still waiting for their grace period: $rawmax <= 2 x maxmemory" \
  '[ "$rawmax" -le $((2 * mm)) ]'

reset
fill shrink: 0 60000 100
before=$(used)
half=$((before / 2))
r config set maxmemory-policy allkeys-random >/dev/null
r config set maxmemory "$half" >/dev/null
rep=$(r set after-shrink v)
check "CONFIG SET maxmemory lower: the next write is served ($rep)" '[ "$rep" = OK ]'
for i in $(seq 1 100); do
  [ "$(used)" -le "$(margin "$half")" ] && break
  sleep 0.05
done
check "CONFIG SET maxmemory $half: used_memory $(used) (was $before) under it + margin with no more writes" \
  '[ "$(used)" -le "$(margin "$half")" ]'
r config set maxmemory 0 >/dev/null
r set keepme v >/dev/null
r config set maxmemory-policy noeviction >/dev/null
r config set maxmemory 1 >/dev/null
rep=$(r set x y)
check "CONFIG SET maxmemory 1 + noeviction: next SET refused at once" \
  '[ "$rep" = "$OOM" ]'
check "  ... and GET served" '[ "$(r get keepme)" = v ]'
r config set maxmemory 0 >/dev/null

# ------------------------------------------------------------ 7. write flood
if [ "$external" = 0 ]; then
  reset
  lim=2000
  r config set rcu-callback-limit $lim >/dev/null
  fill flood: 0 20000 64
  secs=${CACHE_FLOOD_SECONDS:-6}
  redis-benchmark -p "$P" -t set -P 64 -c 8 --threads 2 -r 20000 -d 64 \
    -n 100000000 -q >"$tmp/flood.out" 2>&1 &
  bpid=$!
  sleep 1.5
  rss0=$(info_field memory used_memory_rss)
  rssmax=$rss0
  for i in $(seq 1 $((secs * 4))); do
    sleep 0.25
    u=$(info_field memory used_memory_rss); [ -n "$u" ] && [ "$u" -gt "$rssmax" ] && rssmax=$u
  done
  kill "$bpid" 2>/dev/null; wait "$bpid" 2>/dev/null
  gp=$(info_field rcu rcu_grace_periods)
  hwm=$(info_field rcu rcu_callbacks_pending_hwm)
  thr=$(info_field rcu rcu_callbacks_throttled)
  queued=$(info_field rcu rcu_callbacks_queued)
  # each thread that retires entries (the workers and the main thread) may
  # hold $lim pending callbacks before it waits at its next quiescent state,
  # and as many again may sit in the callback thread's batch being invoked
  nthr=$(info_field server threads)
  bound=$((2 * (${nthr:-2} + 1) * lim))
  echo "flood: grace periods $gp, callbacks queued $queued, pending hwm $hwm, throttled $thr, rss $rss0 -> max $rssmax"
  check "flood: callbacks queued ($queued) and grace periods ($gp) went on" '[ "${queued:-0}" -gt "$lim" ] && [ "${gp:-0}" -gt 10 ]'
  check "flood: rcu_callbacks_pending_hwm $hwm <= bound $bound (rcu-callback-limit $lim)" '[ "$hwm" -le "$bound" ]'
  case "$B" in
  *asan* | *tsan*) # the sanitizer's allocator keeps freed memory in quarantine
    skip "flood: RSS $rss0 -> max $rssmax: not a measure of the server in a sanitizer build" ;;
  *)
    # flat: within 25% of the level after 1.5 s, plus what the callback
    # bound lets wait (2 workers x $lim batches x 32 entries x 128 bytes)
    allow=$((rss0 / 4 + 2 * lim * 32 * 128))
    check "flood: RSS max $rssmax within $rss0 + $allow (25% + the callback bound's bytes)" \
      '[ "$rssmax" -le $((rss0 + allow)) ]' ;;
  esac
  r config set rcu-callback-limit 100000 >/dev/null
fi

reset
r config set hz 10 >/dev/null
if [ "$external" = 0 ]; then
  kill "$spid"; wait "$spid"; st=$?
  check "server exits 0 on SIGTERM (leak checks in asan builds)" '[ "$st" = 0 ]'
  pids=()
  [ "$st" = 0 ] || tail -n 30 "$tmp/server.log"
fi
summary
[ "$fail" = 0 ]
