#!/usr/bin/env bash
# tests/server/test_sort.sh - SORT and SORT_RO (issue 17 item 3).
# Starts $B/rcukv-server (--threads 2, RCUKV_POISON_FREES=1) and
# redis-servers on free loopback ports (9060-9089):
#   1. replies: tests/server/cases_sort.txt (recorded from redis-server
#      7.0.15) through test_server --cases-only, against both servers;
#   2. what Redis does not order: SORT BY nosort of a hashtable set (and
#      with GET), compared as a sorted multiset, against both servers; big
#      sorts (a hashtable set ALPHA, 2000 numbers, STORE of them) against
#      what sort(1) computes;
#   3. a client blocked in BLPOP on the destination is woken by SORT ...
#      STORE, on both servers.
# Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
PORT_LAST=9089
. "$(dirname "$0")/../../scripts/lib.sh"
need_built "$SRV" "$TS"
scratch_init sort
export RCUKV_POISON_FREES=1
server_up "" 9060 --threads 2 --save "" --dir "$tmp"

# ------------------------------------------------------------ 1. replies
cases_both cases_sort.txt

# -------------------------------------------------- 2. unordered and big
unordered() { # unordered WHO PORT
  local who=$1 p=$2
  rc() { redis-cli -p "$p" "$@"; }
  rc flushall >/dev/null
  { printf 'SADD hs'; for i in $(seq 1 300); do printf ' m%d' "$i"; done; echo
    printf 'RPUSH nums'; for i in $(seq 1 2000); do printf ' %d' $(((i * 7919) % 10007 - 5000)); done; echo
    for i in $(seq 1 300); do printf 'SET w_m%d %d\n' "$i" $((301 - i)); done
  } | rc >/dev/null
  seq 1 300 | sed 's/^/m/' | LC_ALL=C sort >"$tmp/hs"
  for i in $(seq 1 2000); do echo $(((i * 7919) % 10007 - 5000)); done | sort -n >"$tmp/nums"
  check "$who: OBJECT ENCODING hs is hashtable" '[ "$(rc object encoding hs)" = hashtable ]'
  check "$who: SORT hs BY nosort: every member once" \
    '[ "$(rc sort hs by nosort | LC_ALL=C sort)" = "$(cat "$tmp/hs")" ]'
  check "$who: SORT hs BY nosort GET # GET w_*: 600 values" \
    '[ "$(rc sort hs by nosort get "#" get "w_*" | wc -l)" = 600 ]'
  check "$who: SORT hs ALPHA: byte order" '[ "$(rc sort hs alpha)" = "$(cat "$tmp/hs")" ]'
  check "$who: SORT hs BY w_* GET #: by weight" \
    '[ "$(rc sort hs by "w_*" get "#")" = "$(seq 300 -1 1 | sed "s/^/m/")" ]'
  check "$who: SORT hs BY nosort STORE d (sorted, ALPHA)" \
    '[ "$(rc sort hs by nosort store d)" = 300 ] && [ "$(rc lrange d 0 -1)" = "$(cat "$tmp/hs")" ]'
  check "$who: SORT nums (2000 numbers)" '[ "$(rc sort nums)" = "$(cat "$tmp/nums")" ]'
  check "$who: SORT nums DESC LIMIT 10 5" \
    '[ "$(rc sort nums desc limit 10 5)" = "$(sort -rn "$tmp/nums" | sed -n 11,15p)" ]'
  check "$who: SORT nums STORE nums2" \
    '[ "$(rc sort nums store nums2)" = 2000 ] && [ "$(rc lrange nums2 0 -1)" = "$(cat "$tmp/nums")" ]'
}
unordered rcukv-server "$P"
if redis_up $((P + 1)); then
  unordered redis-server "$RP"
fi

# ------------------------------------------------------ 3. blocked BLPOP
woken() { # woken WHO PORT
  local who=$1 p=$2 bp
  redis-cli -p "$p" del bdst >/dev/null
  redis-cli -p "$p" rpush src 3 1 2 >/dev/null
  redis-cli -p "$p" blpop bdst 5 >"$tmp/blpop.$p" 2>&1 &
  bp=$!
  sleep 0.3
  redis-cli -p "$p" sort src store bdst >/dev/null
  wait "$bp"
  check "$who: BLPOP bdst woken by SORT src STORE bdst" \
    '[ "$(tr "\n" " " <"$tmp/blpop.$p")" = "bdst 1 " ] && [ "$(redis-cli -p "$p" lrange bdst 0 -1 | tr "\n" " ")" = "2 3 " ]'
}
woken rcukv-server "$P"
if [ -n "${RP:-}" ] && wait_up "$RP" 2>/dev/null; then
  woken redis-server "$RP"
  stop_pid "$rpid"
fi

summary
