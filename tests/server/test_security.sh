#!/usr/bin/env bash
# tests/server/test_security.sh - issue 9: authentication, rename-command,
# protected mode.  Starts $B/rcukv-server on free loopback ports (7300-7349):
#   1. requirepass + rename-command: the cases of tests/server/cases_auth.txt
#      (recorded from redis-server 7.0.15) through test_server --cases-only;
#      redis-cli -a and redis-benchmark -a work, without -a they get NOAUTH;
#      a rename-command naming no command fails at start (exit 1).
#   2. protected mode: bound to 0.0.0.0 without a password, 127.0.0.1 is
#      served and a second local address (10.77.0.1 added to lo if we are root,
#      removed afterwards) gets Redis's -DENIED text and is closed; with a
#      password or protected-mode no it is let in.  Skipped, saying so, if no
#      second address can be had.
#   3. client-output-buffer-limit normal (hard, then soft + seconds): a client
#      that pipelines 200 MiB of GET replies and never reads is closed and the
#      server's RSS stays within 64 MB of its baseline; a reading client is
#      untouched.  maxclients, timeout and the query buffer limit are tested by
#      test_server (test_limits).
# Ends with "N passed, M failed".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
PORT_LAST=7349
. "$(dirname "$0")/../../scripts/lib.sh"
scratch_init sec
added_ip=0
at_exit '[ "$added_ip" = 1 ] && ip addr del 10.77.0.1/32 dev lo 2>/dev/null'

start() { # logname args...
  local log=$tmp/$1.log; shift
  "$SRV" "$@" >"$log" 2>&1 &
  pids+=($!)
  last_pid=$!
}
stop() {
  kill "$1" 2>/dev/null; wait "$1" 2>/dev/null
}

# ------------------------------------------------------------ 1. auth
P=$(free_port 7300)
cat >"$tmp/auth.conf" <<CONF
port $P
bind 127.0.0.1
threads 2
requirepass s3cret
rename-command FLUSHDB myflushdb
rename-command KEYS ""
CONF
start auth "$tmp/auth.conf"
apid=$last_pid
if wait_up "$P" s3cret; then
  ok "server with requirepass up on $P"
  check_cases "cases_auth.txt" "$("$TS" --port "$P" --cases tests/server/cases_auth.txt --cases-only 2>&1)"
  r=$(redis-cli -p "$P" set k1 v1 2>&1)
  check "redis-cli without -a gets NOAUTH ($r)" '[ "$r" = "NOAUTH Authentication required." ]'
  r=$(redis-cli -p "$P" -a s3cret --no-auth-warning set k1 v1 2>&1)
  check "redis-cli -a set ($r)" '[ "$r" = "OK" ]'
  r=$(redis-cli -p "$P" -a s3cret --no-auth-warning get k1 2>&1)
  check "redis-cli -a get ($r)" '[ "$r" = "v1" ]'
  r=$(redis-cli -p "$P" -a wrong --no-auth-warning get k1 2>&1)
  check "redis-cli -a wrong password refused" 'grep -q "WRONGPASS" <<<"$r"'
  r=$(redis-cli -p "$P" --user default --pass s3cret --no-auth-warning -3 acl whoami 2>&1)
  check "redis-cli --user --pass -3 (HELLO 3 AUTH) whoami ($r)" '[ "$r" = "default" ]'
  r=$(timeout 60 redis-benchmark -p "$P" -a s3cret -t set,get -n 5000 -c 10 -q 2>&1 | tr '\r' '\n')
  n=$(grep -cE '^(SET|GET): [0-9.]+ requests per second' <<<"$r")
  check "redis-benchmark -a: 2 result lines, no error ($n)" '[ "$n" = 2 ] && ! grep -qiE "err|noauth" <<<"$r"'
  r=$(redis-cli -p "$P" -a s3cret --no-auth-warning shutdown 2>&1)
  wait "$apid"; rc=$?
  check "SHUTDOWN after auth: exit $rc" '[ "$rc" = 0 ]'
else
  bad "server with requirepass did not start"; sed 's/^/    | /' "$tmp/auth.log"
fi

printf 'port %s\nrename-command NOSUCHCMD foo\n' "$P" >"$tmp/bad.conf"
"$SRV" "$tmp/bad.conf" >"$tmp/bad.log" 2>&1; rc=$?
check "rename-command of an unknown command: exit $rc" '[ "$rc" = 1 ] && grep -q "No such command in rename-command" "$tmp/bad.log"'
printf 'port %s\nrename-command GET set\n' "$P" >"$tmp/bad.conf"
"$SRV" "$tmp/bad.conf" >"$tmp/bad.log" 2>&1; rc=$?
check "rename-command onto an existing name: exit $rc" '[ "$rc" = 1 ] && grep -q "Target command name already exists" "$tmp/bad.log"'

# ------------------------------------------------------ 2. protected mode
DENIED="DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside."
have_ip=0
if ip -4 addr show dev lo 2>/dev/null | grep -q ' 10\.77\.0\.1/'; then
  have_ip=1
elif ip addr add 10.77.0.1/32 dev lo 2>/dev/null; then
  have_ip=1; added_ip=1
fi
if [ "$have_ip" = 0 ]; then
  echo "SKIP protected mode from a non-loopback address: cannot add 10.77.0.1 to lo (not root?)"
else
  P2=$(free_port $((P + 1)))
  start prot --port "$P2" --bind 0.0.0.0 --threads 1
  ppid_=$last_pid
  if wait_up "$P2"; then
    r=$(redis-cli -h 127.0.0.1 -p "$P2" ping 2>&1)
    check "protected mode: 127.0.0.1 served ($r)" '[ "$r" = PONG ]'
    r=$(redis-cli -h 10.77.0.1 -p "$P2" ping 2>&1)
    check "protected mode: 10.77.0.1 gets Redis's DENIED text" '[ "$r" = "$DENIED" ]'
    r=$(redis-cli -h 10.77.0.1 -p "$P2" ping 2>&1 | head -c 60)
    redis-cli -p "$P2" config set requirepass pw >/dev/null
    r=$(redis-cli -h 10.77.0.1 -p "$P2" ping 2>&1)
    check "protected mode with a password: 10.77.0.1 asked to AUTH ($r)" '[ "$r" = "NOAUTH Authentication required." ]'
    r=$(redis-cli -h 10.77.0.1 -p "$P2" -a pw --no-auth-warning ping 2>&1)
    check "protected mode with a password: 10.77.0.1 after AUTH ($r)" '[ "$r" = PONG ]'
    redis-cli -p "$P2" -a pw --no-auth-warning config set requirepass "" >/dev/null
    r=$(redis-cli -h 10.77.0.1 -p "$P2" ping 2>&1 | cut -c1-6)
    check "password removed: DENIED again ($r)" '[ "$r" = DENIED ]'
    redis-cli -p "$P2" config set protected-mode no >/dev/null
    r=$(redis-cli -h 10.77.0.1 -p "$P2" ping 2>&1)
    check "protected-mode no: 10.77.0.1 served ($r)" '[ "$r" = PONG ]'
    r=$(redis-cli -p "$P2" config get protected-mode | tr '\n' ' ')
    check "CONFIG GET protected-mode ($r)" '[ "$r" = "protected-mode no " ]'
  else
    bad "server bound to 0.0.0.0 did not start"; sed 's/^/    | /' "$tmp/prot.log"
  fi
  stop "$ppid_"
fi

# ------------------------------------------------------------- 3. limits
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
nclients() { redis-cli -p "$1" info clients | tr -d '\r' | awk -F: '/^connected_clients:/ {print $2}'; }
# A client that pipelines GETs of a 512 KiB value and never reads: over the
# hard limit it is closed, and the server does not keep its replies.
P3=$(free_port $((P + 2)))
# (over client-output-buffer-pause, 1 MB, a client's commands wait anyway, so
# a hard limit above ~1.5 MB is never reached with 512 KiB replies: use 1mb)
start cobl --port "$P3" --threads 2 --client-output-buffer-limit normal 1mb 0 0
cpid=$last_pid
if wait_up "$P3"; then
  r=$(redis-cli -p "$P3" config get client-output-buffer-limit | tail -n 1)
  check "CONFIG GET client-output-buffer-limit ($r)" '[ "$r" = "normal 1048576 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60" ]'
  r=$(redis-cli -p "$P3" config set client-output-buffer-limit "normal 1mb 0 0 bogus")
  want="ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Wrong number of arguments in buffer limit configuration."
  check "CONFIG SET client-output-buffer-limit, wrong arity refused" '[ "$r" = "$want" ]'
  head -c 524288 /dev/zero | tr '\0' x | redis-cli -p "$P3" -x set big >/dev/null
  base=$(rss_kb "$cpid")
  # 400 GETs = 200 MiB of replies asked for; the client never reads.
  exec 5<>"/dev/tcp/127.0.0.1/$P3"
  # the server may close mid-write: no SIGPIPE for this shell
  (trap '' PIPE; for i in $(seq 1 400); do printf 'GET big\r\n' || break; done >&5) 2>/dev/null
  gone=0
  for i in $(seq 1 100); do
    if [ "$(nclients "$P3")" = 1 ]; then gone=1; break; fi
    sleep 0.1
  done
  after=$(rss_kb "$cpid")
  exec 5>&-
  check "client over the hard output limit closed" '[ "$gone" = 1 ]'
  check "server RSS did not follow the replies asked for (${base} KB -> ${after} KB, < +64 MB)" '[ $((after - base)) -lt 65536 ]'
  check "closing logged" 'grep -q "closed for overcoming of output buffer limits" "$tmp/cobl.log"'
  # soft limit: over 256 KiB for 1 s
  redis-cli -p "$P3" config set client-output-buffer-limit "normal 0 256kb 1" >/dev/null
  exec 5<>"/dev/tcp/127.0.0.1/$P3"
  (trap '' PIPE; for i in $(seq 1 40); do printf 'GET big\r\n' || break; done >&5) 2>/dev/null
  gone=0
  for i in $(seq 1 100); do
    if [ "$(nclients "$P3")" = 1 ]; then gone=1; break; fi
    sleep 0.1
  done
  exec 5>&-
  check "client over the soft output limit for its seconds closed" '[ "$gone" = 1 ]'
  # a client that reads is untouched by the same limits
  r=$(redis-cli -p "$P3" get big | wc -c)
  check "a reading client gets its 512 KiB reply ($r bytes)" '[ "$r" = 524289 ]'
  r=$(redis-cli -p "$P3" ping)
  check "server still serving ($r)" '[ "$r" = PONG ]'
else
  bad "server with client-output-buffer-limit did not start"; sed 's/^/    | /' "$tmp/cobl.log"
fi
stop "$cpid"
if [ "$(ulimit -n)" -ge 10032 ] || grep -qE "Increased maximum number of open files|maxclients has been reduced" "$tmp/cobl.log"; then
  ok "RLIMIT_NOFILE raised to maxclients + 32 (or already enough), logged"
else
  bad "RLIMIT_NOFILE not raised (ulimit -n $(ulimit -n))"
fi

# sanitizer builds: any report in a server log is a failure
if grep -lE "ERROR: (Address|Leak)Sanitizer|runtime error:" "$tmp"/*.log 2>/dev/null; then
  bad "sanitizer report in a server log"; grep -hE -A5 "Sanitizer|runtime error:" "$tmp"/*.log | head -40
else
  ok "no sanitizer report in the server logs"
fi

summary
[ "$fail" = 0 ]
