#!/usr/bin/env bash
# tests/cluster/test_sentinel.sh - failover with Redis Sentinel (issue 18
# item 4): three sentinels (Debian's redis-server run with --sentinel, as the
# redis-sentinel package does) on loopback monitor a master with two
# replicas; the master is killed; the sentinels promote a replica; an
# application using redis-py's Sentinel client goes on writing to the
# promoted one (tests/cluster/sentinel_client.py); the other replica and the
# old master, restarted, follow the new master.
#
# Each setup is "MASTER REPLICA1 REPLICA2", each of them rcukv or redis:
#   redis redis redis   all redis-server 7.0.15 (proves the test itself)
#   rcukv rcukv rcukv   all rcukv-server
#   rcukv rcukv redis   mixed: one redis-server replica
# SENTINEL_SETUPS (default the three, separated by commas; under a
# sanitizer VARIANT only "rcukv rcukv rcukv", to keep the run short) picks
# some.
# Free loopback ports 8400-8459.  Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
PORT_LAST=8459
. "$(dirname "$0")/../../scripts/lib.sh"
skip_without "sentinel test needs redis-server (it runs as a sentinel too) and redis-cli" \
  redis-server redis-cli
need_built "$SRV"
scratch_init sentinel
if ! find_redis_py; then
  skip "python3-redis not installed: no Sentinel client"
  summary
  exit 0
fi

next=8400
take_port() {
  port=$(free_port "$next")
  [ "$port" = 0 ] && { bad "no free port in $next-$PORT_LAST"; summary; exit 1; }
  next=$((port + 1))
}
field() { tr -d '\r' | awk -F: -v f="$1" '$1 == f { print $2 }'; }

# node KIND NAME PORT [replicaof PORT]: a server; NPID[NAME]
declare -A NPID
node() {
  local kind=$1 name=$2 p=$3 of=()
  [ $# -ge 4 ] && of=(--replicaof 127.0.0.1 "$4")
  mkdir -p "$tmp/$name"
  case $kind in
    rcukv) "$SRV" --port "$p" --bind 127.0.0.1 --threads 2 --save "" --dir "$tmp/$name" \
             "${of[@]}" >>"$tmp/$name.log" 2>&1 & ;;
    redis) redis-server --port "$p" --bind 127.0.0.1 --save "" --appendonly no \
             --dir "$tmp/$name" "${of[@]}" >>"$tmp/$name.log" 2>&1 & ;;
  esac
  NPID[$name]=$!
  pids+=("$!")
  wait_up "$p"
}

# until SECONDS CMD...: CMD every 0.2 s until it succeeds; 1 after SECONDS.
until_ok() {
  local n=$(($1 * 5))
  shift
  while [ "$n" -gt 0 ]; do
    "$@" && return 0
    sleep 0.2
    n=$((n - 1))
  done
  return 1
}
replica_up() { [ "$(redis-cli -p "$1" info replication | field master_link_status)" = up ]; }
sentinels_see() { # sentinels_see PORT: this sentinel knows 2 replicas and 2 other sentinels
  local info
  info=$(redis-cli -p "$1" sentinel master mymaster | tr -d '\r' | paste - -)
  [ "$(awk '$1 == "num-slaves" { print $2 }' <<<"$info")" = 2 ] &&
    [ "$(awk '$1 == "num-other-sentinels" { print $2 }' <<<"$info")" = 2 ]
}
follows() { # follows PORT MASTER_PORT: ROLE says a connected replica of it
  local r
  r=$(redis-cli -p "$1" role 2>/dev/null | tr '\n' ' ')
  [[ $r == "slave 127.0.0.1 $2 connected "* ]]
}

# follows_named PORT SENTINEL_PORT: PORT follows the master SENTINEL names
# ($named, its port)
follows_named() {
  named=$(redis-cli -p "$2" sentinel get-master-addr-by-name mymaster 2>/dev/null | sed -n 2p | tr -d '\r')
  [ -n "$named" ] && follows "$1" "$named"
}
# the sentinels' last lines (they say which failovers they ran and why)
sentinel_logs() {
  local s
  for s in 1 2 3; do
    echo "    --- sentinel $s ($tmp/$t-s$s.log)"
    tail -n 30 "$tmp/$t-s$s.log" | sed 's/^/    | /'
  done
}

setup() {
  local mk=$1 r1k=$2 r2k=$3 label="$1/$2/$3" mp p1 p2 s sps=() np l
  local t=${label//\//_} # in file names
  local -a spids=()
  take_port; mp=$port
  take_port; p1=$port
  take_port; p2=$port
  node "$mk" "$t-m" "$mp" || { bad "$label: the master ($mk) did not start"; return; }
  node "$r1k" "$t-r1" "$p1" "$mp" || { bad "$label: replica 1 ($r1k) did not start"; return; }
  node "$r2k" "$t-r2" "$p2" "$mp" || { bad "$label: replica 2 ($r2k) did not start"; return; }
  if ! until_ok 20 replica_up "$p1" || ! until_ok 20 replica_up "$p2"; then
    bad "$label: the replicas did not sync with the master"
    return
  fi
  for s in 1 2 3; do
    take_port
    sps+=("$port")
    mkdir -p "$tmp/$t-s$s"
    cat >"$tmp/$t-s$s/sentinel.conf" <<EOF
port $port
bind 127.0.0.1
dir $tmp/$t-s$s
sentinel monitor mymaster 127.0.0.1 $mp 2
sentinel down-after-milliseconds mymaster 1000
sentinel failover-timeout mymaster 6000
sentinel parallel-syncs mymaster 1
EOF
    redis-server "$tmp/$t-s$s/sentinel.conf" --sentinel >"$tmp/$t-s$s.log" 2>&1 &
    spids+=("$!")
    pids+=("$!")
    wait_up "$port" || { bad "$label: sentinel $s did not start"; return; }
  done
  if until_ok 30 sentinels_see "${sps[0]}" && until_ok 10 sentinels_see "${sps[2]}"; then
    ok "$label: the sentinels found both replicas and each other"
  else
    bad "$label: the sentinels did not find both replicas and each other: $(redis-cli -p "${sps[0]}" sentinel master mymaster | tr '\r\n' '  ')"
    return
  fi
  out=$(timeout 120 "$PY" tests/cluster/sentinel_client.py "${NPID[$t-m]}" "${sps[@]}" 2>&1)
  rc=$?
  while IFS= read -r l; do
    case $l in
      "ok   "*) ok "$label: ${l#ok   }" ;;
      "FAIL "*) bad "$label: ${l#FAIL }" ;;
    esac
  done <<<"$out"
  [ "$rc" = 0 ] || { bad "$label: the Sentinel client failed (rc $rc): $(echo "$out" | tail -n 3 | tr '\n' ' ')"; }
  np=$(echo "$out" | awk '$1 == "new-master" { print $3 }')
  [ -n "$np" ] || return
  # the old master comes back on its port: the sentinels make it a replica
  node "$mk" "$t-m" "$mp" || { bad "$label: the old master did not restart"; return; }
  # against the master the sentinels name when asked: under a loaded
  # machine they may fail over a second time (a sentinel missing the new
  # master's replies for down-after-milliseconds), which is theirs to do
  if until_ok 30 follows_named "$mp" "${sps[0]}"; then
    if [ "$named" = "$np" ]; then
      ok "$label: the old master, restarted, is made a replica of the new one ($np)"
    else
      ok "$label: the old master, restarted, is made a replica of the master the sentinels name now ($named; the client saw $np: a second failover)"
      sentinel_logs
    fi
  else
    bad "$label: the old master, restarted, does not follow the master the sentinels name ($named; the client saw $np): $(redis-cli -p "$mp" role | tr '\n' ' ')"
    sentinel_logs
  fi
  for s in "${spids[@]}"; do stop_pid "$s"; done
  for s in m r1 r2; do stop_pid "${NPID[$t-$s]}"; done
}

default="redis redis redis,rcukv rcukv rcukv,rcukv rcukv redis"
[ "${VARIANT:-release}" = release ] || default="rcukv rcukv rcukv"
IFS=, read -ra SETUPS <<<"${SENTINEL_SETUPS:-$default}"
for s in "${SETUPS[@]}"; do
  # shellcheck disable=SC2086
  setup $s
done
summary
