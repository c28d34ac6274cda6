#!/usr/bin/env bash
# tests/server/test_set.sh - the set type (issue 17, second type).
# Starts $B/rcukv-server (--threads 2, RCUKV_POISON_FREES=1: freed entries
# are filled with 0x6b) and redis-servers on free loopback ports (9010-9049):
#   1. replies: tests/server/cases_set.txt (recorded from redis-server
#      7.0.15) through test_server --cases-only, against both servers;
#   2. unordered replies: what Redis does not order (hashtable-encoded sets:
#      SMEMBERS, SINTER/SUNION/SDIFF and their STORE forms, SPOP and
#      SRANDMEMBER with a count, a whole SSCAN) compared as sorted multisets
#      with what the test computed, against both servers;
#   2b. torture: test_set_torture against both (readers check every member
#      and that its twin is there while writers churn sets across the
#      intset/hashtable threshold);
#   3. RDB: rcukv's SAVE of intsets, hashtable sets and an expiring set
#      passes redis-check-rdb, loads into redis-server and into a new
#      rcukv-server with every member and Redis's encodings; a dump from
#      redis-server with intsets of every width (RDB type 11) and hashtable
#      sets (type 2) loads into rcukv-server; DUMP of a set RESTOREs into
#      redis-server, and redis-server's (type 11 and 2) into rcukv-server;
#   4. maxmemory: sets count in used_memory and allkeys-lru evicts them;
#   5. side by side: test_set_diff.py (redis-py) sends the same random set
#      commands to rcukv-server and a redis-server and compares every reply.
# Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
PORT_LAST=9049
. "$(dirname "$0")/../../scripts/lib.sh"
ST=$B/tests/server/test_set_torture
need_built "$SRV" "$TS" "$ST"
scratch_init set
export RCUKV_POISON_FREES=1
server_up "" 9010 --threads 2 --save "" --dir "$tmp"

r() { redis-cli -p "$P" "$@" 2>&1; }

# ------------------------------------------------------------ 1. replies
cases_both cases_set.txt

# -------------------------------------------------- 2. unordered replies
# sorted lines of a reply on port $1
sorted() { local p=$1; shift; redis-cli -p "$p" "$@" | sort; }
unordered() { # unordered WHO PORT
  local who=$1 p=$2 n
  rc() { redis-cli -p "$p" "$@"; }
  rc flushall >/dev/null
  # A: m1..m600 and 1..300 (hashtable); B: the even mN and 250..400; C: m1..m50
  { printf 'SADD A'; for i in $(seq 1 600); do printf ' m%d' "$i"; done; seq 1 300 | sed 's/^/ /' | tr -d '\n'; echo
    printf 'SADD B'; for i in $(seq 2 2 600); do printf ' m%d' "$i"; done; seq 250 400 | sed 's/^/ /' | tr -d '\n'; echo
    printf 'SADD C'; for i in $(seq 1 50); do printf ' m%d' "$i"; done; echo
  } | rc >/dev/null
  { seq 1 600 | sed 's/^/m/'; seq 1 300; } | sort >"$tmp/A"
  { seq 2 2 600 | sed 's/^/m/'; seq 250 400; } | sort >"$tmp/B"
  seq 1 50 | sed 's/^/m/' | sort >"$tmp/C"
  check "$who: SMEMBERS of a hashtable set of 900" '[ "$(sorted "$p" smembers A)" = "$(cat "$tmp/A")" ]'
  check "$who: OBJECT ENCODING hashtable" '[ "$(rc object encoding A)" = hashtable ]'
  comm -12 "$tmp/A" "$tmp/B" >"$tmp/AiB"
  sort -u "$tmp/A" "$tmp/B" >"$tmp/AuB"
  comm -23 "$tmp/A" "$tmp/B" >"$tmp/AmB"
  comm -12 "$tmp/AiB" "$tmp/C" >"$tmp/AiBiC"
  check "$who: SINTER A B" '[ "$(sorted "$p" sinter A B)" = "$(cat "$tmp/AiB")" ]'
  check "$who: SINTER A B C" '[ "$(sorted "$p" sinter A B C)" = "$(cat "$tmp/AiBiC")" ]'
  check "$who: SUNION A B" '[ "$(sorted "$p" sunion A B)" = "$(cat "$tmp/AuB")" ]'
  check "$who: SDIFF A B" '[ "$(sorted "$p" sdiff A B)" = "$(cat "$tmp/AmB")" ]'
  check "$who: SDIFF A B C (algorithm 1)" '[ "$(sorted "$p" sdiff A B C)" = "$(comm -23 "$tmp/AmB" "$tmp/C")" ]'
  check "$who: SDIFF C A (algorithm 2)" '[ -z "$(rc sdiff C A)" ]'
  check "$who: SINTERCARD 2 A B" '[ "$(rc sintercard 2 A B)" = "$(wc -l <"$tmp/AiB")" ]'
  check "$who: SINTERCARD 2 A B LIMIT 7" '[ "$(rc sintercard 2 A B LIMIT 7)" = 7 ]'
  check "$who: SINTERSTORE" '[ "$(rc sinterstore D A B)" = "$(wc -l <"$tmp/AiB")" ] && [ "$(sorted "$p" smembers D)" = "$(cat "$tmp/AiB")" ]'
  check "$who: SUNIONSTORE" '[ "$(rc sunionstore D A B)" = "$(wc -l <"$tmp/AuB")" ] && [ "$(sorted "$p" smembers D)" = "$(cat "$tmp/AuB")" ]'
  check "$who: SDIFFSTORE" '[ "$(rc sdiffstore D A B)" = "$(wc -l <"$tmp/AmB")" ] && [ "$(sorted "$p" smembers D)" = "$(cat "$tmp/AmB")" ]'
  # SRANDMEMBER: distinct members of the set, or with repetition
  rc srandmember A 100 | sort >"$tmp/r1"
  check "$who: SRANDMEMBER A 100: 100 distinct members" \
    '[ "$(sort -u "$tmp/r1" | wc -l)" = 100 ] && [ -z "$(comm -23 "$tmp/r1" "$tmp/A")" ]'
  rc srandmember A 800 | sort >"$tmp/r1"
  check "$who: SRANDMEMBER A 800 (Redis case 3): 800 distinct members" \
    '[ "$(sort -u "$tmp/r1" | wc -l)" = 800 ] && [ -z "$(comm -23 "$tmp/r1" "$tmp/A")" ]'
  check "$who: SRANDMEMBER A 5000: the whole set" '[ "$(sorted "$p" srandmember A 5000)" = "$(cat "$tmp/A")" ]'
  rc srandmember C -500 | sort >"$tmp/r1"
  check "$who: SRANDMEMBER C -500: 500 draws from C, most members seen" \
    '[ "$(wc -l <"$tmp/r1")" = 500 ] && [ -z "$(sort -u "$tmp/r1" | comm -23 - "$tmp/C")" ] && [ "$(sort -u "$tmp/r1" | wc -l)" -gt 40 ]'
  # SPOP with a count: popped + left = the set, disjoint (cases 2 and 3)
  for n in 10 850; do
    rc sunionstore P A >/dev/null
    rc spop P "$n" | sort >"$tmp/popped"
    sorted "$p" smembers P >"$tmp/left"
    check "$who: SPOP P $n: $n popped, the rest left" \
      '[ "$(wc -l <"$tmp/popped")" = "$n" ] && [ "$(sort "$tmp/popped" "$tmp/left")" = "$(cat "$tmp/A")" ] && [ "$(rc scard P)" = $((900 - n)) ]'
  done
  # a whole SSCAN of a hashtable set: every member once
  : >"$tmp/scan"
  cur=0
  for i in $(seq 1 1000); do
    rc sscan A "$cur" COUNT 37 >"$tmp/page"
    cur=$(head -n 1 "$tmp/page")
    tail -n +2 "$tmp/page" | grep -v "^$" >>"$tmp/scan"
    [ "$cur" = 0 ] && break
  done
  check "$who: SSCAN of A: every member exactly once ($i calls)" \
    '[ "$cur" = 0 ] && [ "$(sort "$tmp/scan")" = "$(cat "$tmp/A")" ]'
  check "$who: SSCAN MATCH m1?? of A" \
    '[ "$(cur=0; while :; do rc sscan A $cur MATCH "m1??" COUNT 100 >"$tmp/pg"; cur=$(head -n1 "$tmp/pg"); tail -n +2 "$tmp/pg" | grep -v "^$"; [ "$cur" = 0 ] && break; done | sort)" = "$(grep "^m1..$" "$tmp/A")" ]'
  rc flushall >/dev/null
}
against_both unordered $((P + 2))

# ---------------------------------------------------------- 2b. torture
run_torture() { # run_torture WHO PORT
  check_cases "test_set_torture against $1" "$("$ST" --port "$2" 2>&1)"
}
against_both run_torture $((P + 3))

# ---------------------------------------------------------------- 3. RDB
# sorted members of set $2 on port $1
members() { redis-cli -p "$1" smembers "$2" | sort; }
encs() { local p=$1; shift; for k in "$@"; do redis-cli -p "$p" object encoding "$k"; done | tr '\n' ' '; }
r flushall >/dev/null
r sadd si 3 1 2 -7 9223372036854775807 >/dev/null
r sadd sh a b "" c >/dev/null
r sadd sttl 5 >/dev/null
r expire sttl 1000 >/dev/null
for i in $(seq 1 600); do printf 'SADD sbig %d\n' "$i"; done | redis-cli -p "$P" >/dev/null
r set str plain >/dev/null
check "rcukv SAVE with sets" '[ "$(r save)" = OK ]'
if command -v redis-check-rdb >/dev/null; then
  check "redis-check-rdb accepts rcukv's dump" 'redis-check-rdb "$tmp/dump.rdb" >"$tmp/check.out" 2>&1'
else
  skip "redis-check-rdb: not installed"
fi
if command -v redis-server >/dev/null; then
  RP2=$(free_port $((P + 5)))
  cp "$tmp/dump.rdb" "$tmp/r.rdb"
  redis-server --port "$RP2" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
    --dbfilename r.rdb >"$tmp/redis2.log" 2>&1 &
  rp2=$!
  pids+=("$rp2")
  if wait_up "$RP2"; then
    for k in si sh sbig; do
      check "redis-server loaded rcukv's set $k whole" '[ "$(members "$RP2" $k)" = "$(members "$P" $k)" ]'
    done
    check "redis-server loaded the TTL" '[ "$(redis-cli -p "$RP2" ttl sttl)" -gt 900 ]'
    check "redis-server's encodings of rcukv's sets: intset hashtable hashtable" \
      '[ "$(encs "$RP2" si sh sbig)" = "intset hashtable hashtable " ]'
    r dump si | head -c -1 >"$tmp/si.dump"
    redis-cli -p "$RP2" -x restore si2 0 <"$tmp/si.dump" >"$tmp/restore.out" 2>&1
    check "rcukv's DUMP of a set RESTOREs into redis-server" \
      '[ "$(cat "$tmp/restore.out")" = OK ] && [ "$(members "$RP2" si2)" = "$(members "$P" si)" ]'
    # redis -> rcukv: intsets are RDB type 11 (16-, 32- and 64-bit members
    # here), hashtable sets type 2
    redis-cli -p "$RP2" flushall >/dev/null
    redis-cli -p "$RP2" sadd i16 1 -5 32767 -32768 >/dev/null
    redis-cli -p "$RP2" sadd i32 70000 -1 -2147483648 2147483647 >/dev/null
    redis-cli -p "$RP2" sadd i64 5000000000 -9223372036854775808 9223372036854775807 0 >/dev/null
    redis-cli -p "$RP2" sadd rh x y "" 12 >/dev/null
    for i in $(seq 1 700); do printf 'SADD rbig %d\n' "$i"; done | redis-cli -p "$RP2" >/dev/null
    for k in i16 i32 i64; do
      redis-cli -p "$RP2" smembers $k >"$tmp/$k.want"
      redis-cli -p "$RP2" dump $k | head -c -1 >"$tmp/$k.dump"
      r -x restore "r$k" 0 <"$tmp/$k.dump" >"$tmp/restore-$k.out"
      check "redis-server's DUMP of intset $k (type 11) RESTOREs into rcukv, ascending" \
        '[ "$(cat "$tmp/restore-$k.out")" = OK ] && [ "$(r smembers r$k)" = "$(cat "$tmp/$k.want")" ] && [ "$(r object encoding r$k)" = intset ]'
    done
    redis-cli -p "$RP2" dump rh | head -c -1 >"$tmp/rh.dump"
    r -x restore rrh 0 <"$tmp/rh.dump" >"$tmp/restore-rh.out"
    check "redis-server's DUMP of a hashtable set (type 2) RESTOREs into rcukv" \
      '[ "$(cat "$tmp/restore-rh.out")" = OK ] && [ "$(members "$P" rrh)" = "$(members "$RP2" rh)" ]'
    r dump sbig | head -c -1 >"$tmp/sbig.dump"
    r -x restore sbig2 0 <"$tmp/sbig.dump" >"$tmp/restore3.out"
    check "rcukv's DUMP of a big set RESTOREs into rcukv" \
      '[ "$(cat "$tmp/restore3.out")" = OK ] && [ "$(members "$P" sbig2)" = "$(members "$P" sbig)" ] && [ "$(r object encoding sbig2)" = hashtable ]'
    redis-cli -p "$RP2" save >/dev/null
    stop_pid "$rp2"
    P2=$(free_port $((P + 10)))
    "$SRV" --port "$P2" --threads 2 --save "" --dir "$tmp" --dbfilename r.rdb >"$tmp/server2.log" 2>&1 &
    sp2=$!
    pids+=("$sp2")
    if wait_up "$P2"; then
      for k in i16 i32 i64; do
        check "rcukv loaded redis-server's intset $k (type 11) ascending" \
          '[ "$(redis-cli -p "$P2" smembers $k)" = "$(cat "$tmp/$k.want")" ]'
      done
      check "rcukv loaded redis-server's type-2 sets" \
        '[ "$(redis-cli -p "$P2" scard rbig)" = 700 ] && [ "$(members "$P2" rh)" = "$(members "$P" rrh)" ]'
      check "rcukv's encodings of redis-server's sets: intset intset intset hashtable hashtable" \
        '[ "$(encs "$P2" i16 i32 i64 rh rbig)" = "intset intset intset hashtable hashtable " ]'
      stop_pid "$sp2"
    else
      bad "rcukv-server started on redis-server's dump"; tail -n 5 "$tmp/server2.log"
    fi
  else
    bad "redis-server started on rcukv's dump"; tail -n 5 "$tmp/redis2.log"
  fi
else
  skip "RDB to and from redis-server: redis-server not installed"
fi
# rcukv reloads its own dump
P3=$(free_port $((P + 15)))
"$SRV" --port "$P3" --threads 2 --save "" --dir "$tmp" >"$tmp/server3.log" 2>&1 &
sp3=$!
pids+=("$sp3")
if wait_up "$P3"; then
  for k in si sh sbig; do
    check "rcukv reloaded its set $k whole" '[ "$(members "$P3" $k)" = "$(members "$P" $k)" ]'
  done
  check "rcukv reloaded the encodings and the TTL" \
    '[ "$(encs "$P3" si sh sbig)" = "intset hashtable hashtable " ] && [ "$(redis-cli -p "$P3" ttl sttl)" -gt 900 ]'
  stop_pid "$sp3"
else
  bad "rcukv-server started on its own dump"; tail -n 5 "$tmp/server3.log"
fi

# ------------------------------------------------------- 4. maxmemory
# 600 sets of 100 members (about 4 KB each) into a 4 MB rcukv-server with
# allkeys-lru: every SADD answers, sets are evicted, memory stays near the
# limit (a set's bytes count: it is one entry, ht_entry_size()).
P4=$(free_port $((P + 12)))
"$SRV" --port "$P4" --threads 2 --save "" --maxmemory 4mb --maxmemory-policy allkeys-lru \
  >"$tmp/server4.log" 2>&1 &
sp4=$!
pids+=("$sp4")
if wait_up "$P4"; then
  for i in $(seq 1 600); do
    printf 'SADD s%d' "$i"
    for j in $(seq 1 100); do printf ' member-%d-0123456789012345678901234567' "$j"; done
    printf '\n'
  done | redis-cli -p "$P4" >"$tmp/evict.out" 2>&1
  keys=$(redis-cli -p "$P4" dbsize)
  ev=$(redis-cli -p "$P4" info stats | tr -d '\r' | sed -n 's/^evicted_keys://p')
  used=$(redis-cli -p "$P4" info memory | tr -d '\r' | sed -n 's/^used_memory://p')
  check "maxmemory 4mb: all 600 SADDs of 100 members answered 100" '[ "$(grep -c "^100$" "$tmp/evict.out")" = 600 ]'
  check "sets were evicted ($ev evicted, $keys left)" '[ "$ev" -gt 0 ] && [ "$keys" -gt 0 ] && [ "$keys" -lt 600 ]'
  check "used_memory stays near maxmemory ($used bytes)" '[ "$used" -lt $((6 * 1024 * 1024)) ]'
  stop_pid "$sp4"
else
  bad "rcukv-server with maxmemory started"; tail -n 5 "$tmp/server4.log"
fi

# --------------------------------------------------------- 5. side by side
if ! find_redis_py; then
  skip "test_set_diff.py: python3-redis not installed (scripts/deps.sh test)"
elif redis_up $((P + 20)); then
  check_cases "test_set_diff.py: random set commands, rcukv-server and redis-server" \
    "$(cd "$(dirname "$0")" && "$PY" test_set_diff.py "$P" "$RP" 2>&1)"
  stop_pid "$rpid"
fi

summary
