#!/usr/bin/env bash
# tests/server/test_admin.sh - the admin commands of issue 16 item 5:
#   1. replies: tests/server/cases_admin.txt (recorded from redis-server
#      7.0.15) through test_server --cases-only, against rcukv-server and
#      against a redis-server started here, so an expectation loosened or
#      written to match rcukv fails there;
#   2. MONITOR across workers: two monitors (consecutive connections, so on
#      both workers of --threads 2: sockets are handed out round-robin) and
#      four clients pipelining SETs at once; each monitor gets every SET,
#      each client's in the order it sent them;
#   3. CLIENT PAUSE WRITE: a write sent during the pause has not completed
#      a second later while reads from another client pass, and completes
#      after CLIENT UNPAUSE; a pipelined client keeps its order;
#   4. DEBUG: tests/server/cases_admin_debug.txt against an rcukv-server and
#      a redis-server both started with enable-debug-command yes;
#   5. CONFIG REWRITE: the same config file (comments, blank runs, a repeated
#      option, memory in mb) given to rcukv-server and redis-server, the
#      same CONFIG SETs, then CONFIG REWRITE: the files are the same but
#      for the port, Redis's "user default" line (rcukv has no ACL users)
#      and the order of the appended options (Redis's dict order).
# Starts $B/rcukv-server on free loopback ports (7780-7799).  Ends with
# "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
PORT_LAST=7799
. "$(dirname "$0")/../../scripts/lib.sh"
skip_without "test_admin needs redis-cli" redis-cli
need_built "$TS"
scratch_init admin
server_up "" 7780 --threads 2 --save ""

r() { redis-cli -p "$P" "$@" 2>&1; }

# ------------------------------------------------------------ 1. replies
cases_both cases_admin.txt

# -------------------------------------------------------- 2. MONITOR
N=500
mons=""
for m in 1 2; do
  timeout 30 redis-cli -p "$P" monitor >"$tmp/mon.$m" 2>&1 & mons="$mons $!"
done
for _ in $(seq 50); do  # both monitors registered (CLIENT LIST flags=O)
  [ "$(r client list | grep -c 'flags=O')" = 2 ] && break
  sleep 0.1
done
senders=""
for k in 1 2 3 4; do
  seq "$N" | sed "s/^/SET mon:$k /" | redis-cli -p "$P" >/dev/null 2>&1 & senders="$senders $!"
done
# shellcheck disable=SC2086
wait $senders
r set mon:done 1 >/dev/null
for _ in $(seq 100); do
  grep -q '"mon:done"' "$tmp/mon.1" && grep -q '"mon:done"' "$tmp/mon.2" && break
  sleep 0.1
done
# shellcheck disable=SC2086
kill $mons 2>/dev/null
# shellcheck disable=SC2086
wait $mons 2>/dev/null
seq "$N" >"$tmp/want"
for m in 1 2; do
  for k in 1 2 3 4; do
    grep "\"SET\" \"mon:$k\"" "$tmp/mon.$m" | sed 's/.*"mon:[0-9]*" "\([0-9]*\)"$/\1/' \
      >"$tmp/got.$m.$k"
  done
  check "monitor $m: every SET of the 4 clients, each client's in order" \
    '(for k in 1 2 3 4; do cmp -s "$tmp/want" "$tmp/got.$m.$k" || exit 1; done)'
  check "monitor $m: lines as Redis writes them" \
    'grep -Eq "^[0-9]+\.[0-9]{6} \[0 127\.0\.0\.1:[0-9]+\] \"SET\" \"mon:1\" \"1\"\$" "$tmp/mon.$m"'
done

# ----------------------------------------------------- 3. CLIENT PAUSE
r del pz >/dev/null
r client pause 60000 write >/dev/null
(redis-cli -p "$P" set pz held >"$tmp/pz.set" 2>&1; echo done >>"$tmp/pz.set") & setter=$!
sleep 1
check "paused SET has not completed within the pause" '[ ! -s "$tmp/pz.set" ]'
check "a read passes under WRITE (GET pz: '$(r get pz)')" '[ -z "$(r get pz)" ]'
check "the held client shows flags=b" 'r client list | grep -q "flags=b .*cmd=set"'
r client unpause >/dev/null
for _ in $(seq 50); do grep -q done "$tmp/pz.set" && break; sleep 0.1; done
check "UNPAUSE releases it: +OK and the value set" \
  'grep -qx OK "$tmp/pz.set" && [ "$(r get pz)" = held ]'
wait "$setter" 2>/dev/null
# ALL with a timeout: a pipeline of 200 INCRs waits, then runs in order
r set pc 0 >/dev/null
r client pause 500 all >/dev/null
printf 'INCR pc\n%.0s' $(seq 200) | timeout 20 redis-cli -p "$P" >"$tmp/pc" 2>&1
check "ALL pause ends by its timeout; 200 pipelined INCRs in order" \
  '[ "$(tail -1 "$tmp/pc")" = 200 ] && seq 200 | cmp -s - "$tmp/pc"'

# ------------------------------------------------------------ 4. DEBUG
server_up "" $((P + 2)) --threads 2 --save "" --enable-debug-command yes
check_cases "cases_admin_debug.txt against rcukv-server (enable-debug-command yes)" \
  "$("$TS" --port "$P" --cases tests/server/cases_admin_debug.txt --cases-only 2>&1)"
stop_pid "$spid"
RP=$(free_port $((P + 1)))
if ! command -v redis-server >/dev/null; then
  skip "cases_admin_debug.txt against redis-server: not installed"
elif [ "$RP" = 0 ]; then
  bad "cases_admin_debug.txt against redis-server: no free port"
else
  redis-server --port "$RP" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
    --enable-debug-command yes >"$tmp/redis.log" 2>&1 &
  rpid=$!
  pids+=("$rpid")
  if wait_up "$RP"; then
    check_cases "cases_admin_debug.txt against redis-server (enable-debug-command yes)" \
      "$("$TS" --port "$RP" --cases tests/server/cases_admin_debug.txt --cases-only 2>&1)"
  else
    bad "redis-server with enable-debug-command yes did not start on $RP"
  fi
  stop_pid "$rpid"
fi

# --------------------------------------------------- 5. CONFIG REWRITE
rw_conf() {  # rw_conf FILE PORT: the starting config file
  printf '%s\n' "# a comment kept" "" "port $2" "timeout 0" "maxmemory 1mb" \
    "# another comment" "" "" "maxmemory-policy allkeys-lru" "timeout 7" 'save ""' \
    "appendonly no" >"$1"
}
rw_run() {  # rw_run PORT: the same changes, then the rewrite's reply
  redis-cli -p "$1" config set maxmemory 3145728 >/dev/null
  redis-cli -p "$1" config set slowlog-max-len 64 >/dev/null
  redis-cli -p "$1" config set maxmemory-policy noeviction >/dev/null
  redis-cli -p "$1" config rewrite
}
# the part up to the signature as it is, the appended options sorted
rw_norm() {
  sed -e 's/^port [0-9]*$/port N/' -e '/^user default /d' "$1" |
    awk '/^# Generated by CONFIG REWRITE$/ { tail = 1; print; next }
         tail { print | "sort" ; next } { print }'
}
mkdir -p "$tmp/rw"
P2=$(free_port $((P + 1)))
rw_conf "$tmp/rw/k.conf" "$P2"
"$SRV" "$tmp/rw/k.conf" --dir "$tmp/rw" --save "" >"$tmp/rw/k.log" 2>&1 & kpid=$!
pids+=("$kpid")
if wait_up "$P2"; then
  check "CONFIG REWRITE on rcukv-server: OK" '[ "$(rw_run "$P2")" = OK ]'
else
  bad "rcukv-server with a config file did not start on $P2"
fi
stop_pid "$kpid"
"$SRV" "$tmp/rw/k.conf" >"$tmp/rw/k2.log" 2>&1 & kpid=$!
pids+=("$kpid")
if wait_up "$P2"; then
  cfg() { redis-cli -p "$P2" config get "$1" | tail -1; }
  check "restarted from the rewritten file: maxmemory 3mb, slowlog-max-len 64" \
    '[ "$(cfg maxmemory) $(cfg slowlog-max-len)" = "3145728 64" ]'
else
  bad "rcukv-server did not start from its rewritten config ($(tail -3 "$tmp/rw/k2.log"))"
fi
stop_pid "$kpid"
RP=$(free_port $((P2 + 1)))
if command -v redis-server >/dev/null && [ "$RP" != 0 ]; then
  rw_conf "$tmp/rw/r.conf" "$RP"
  redis-server "$tmp/rw/r.conf" --dir "$tmp/rw" --save "" >"$tmp/rw/r.log" 2>&1 & rpid=$!
  pids+=("$rpid")
  if wait_up "$RP"; then
    rw_run "$RP" >/dev/null
    rw_norm "$tmp/rw/r.conf" >"$tmp/rw/r.norm"
    rw_norm "$tmp/rw/k.conf" >"$tmp/rw/k.norm"
    check "rewritten as redis-server rewrites it ($(diff "$tmp/rw/r.norm" "$tmp/rw/k.norm" | tr '\n' ' '))" \
      'cmp -s "$tmp/rw/r.norm" "$tmp/rw/k.norm"'
  else
    bad "redis-server with a config file did not start on $RP"
  fi
  stop_pid "$rpid"
else
  skip "CONFIG REWRITE against redis-server: not installed or no port"
fi

summary
