#!/usr/bin/env bash
# tests/cluster/test_twemproxy.sh - sharding with twemproxy (Debian's
# nutcracker) in front of three rcukv-servers (issue 18 item 1).  The proxy's
# configuration is conf/nutcracker.yml with its ports moved to free loopback
# ports (8100-8199).  The same checks run against three redis-servers behind
# the same configuration, and every reply must be the same:
#   1. routing: 300 keys through the proxy are each on exactly one node,
#      every node holds some, one MGET of all of them reads them back, and
#      each key sits on the node of the same name as with redis-server;
#   2. hash tags: twenty {user:7}:* keys land on one node;
#   3. a script of string, expiry, bit, multi-key (MSET, MGET, DEL, EXISTS,
#      fragmented over the nodes by the proxy) and EVAL commands answers as
#      it does with redis-server nodes, byte for byte;
#   4. what twemproxy refuses (KEYS, MULTI, SUBSCRIBE, FLUSHALL, SCAN,
#      INFO...) is refused the same way, and the proxy serves on;
#   5. a node killed: its keys answer -ERR while it is down, the other
#      nodes' keys are served; restarted on its port, it takes writes again;
#   6. auto_eject_hosts: true and redis_db: 3: with a node down its keys
#      move to the other two (every SET succeeds) and into database 3.
# Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
PORT_LAST=8199
. "$(dirname "$0")/../../scripts/lib.sh"
skip_without "twemproxy test needs nutcracker (scripts/deps.sh test) and redis-cli" nutcracker redis-cli
need_built "$SRV"
scratch_init twemproxy
CONF=conf/nutcracker.yml

check "conf/nutcracker.yml is a valid nutcracker configuration (nutcracker -t)" \
  'nutcracker -t -c "$CONF" >"$tmp/conf-test.log" 2>&1'

next=8100
# take_port: a free port from $next into $port; $next moves past it.
take_port() {
  port=$(free_port "$next")
  [ "$port" = 0 ] && { bad "no free port in $next-$PORT_LAST"; summary; exit 1; }
  next=$((port + 1))
}

# node_start KIND NAME PORT: an rcukv-server or a redis-server on PORT;
# NODE_PID[NAME].
declare -A NODE_PID NODE_PORT
node_start() {
  case $1 in
    rcukv) "$SRV" --port "$3" --bind 127.0.0.1 --threads 2 --save "" \
             --dir "$tmp" >>"$tmp/$2.log" 2>&1 & ;;
    redis) redis-server --port "$3" --bind 127.0.0.1 --save "" --appendonly no \
             --dir "$tmp" >>"$tmp/$2.log" 2>&1 & ;;
  esac
  NODE_PID[$2]=$!
  NODE_PORT[$2]=$3
  pids+=("$!")
  wait_up "$3" || { bad "$1 node $2 did not start on $3"; summary; exit 1; }
}

# cluster KIND TAG [SED]: three KIND nodes TAG1..TAG3 and a nutcracker in
# front of them, configured by $CONF with its ports replaced (and SED
# applied); sets PX[TAG] to the proxy's port.
declare -A PX
cluster() {
  local kind=$1 tag=$2 extra=${3:-} i lp sp
  local sedargs=()
  for i in 1 2 3; do
    take_port
    node_start "$kind" "$tag$i" "$port"
    sedargs+=(-e "s/127\.0\.0\.1:638$((i - 1)):1 rcukv$i/127.0.0.1:$port:1 rcukv$i/")
  done
  take_port; lp=$port
  take_port; sp=$port
  sed "${sedargs[@]}" -e "s/127\.0\.0\.1:22121/127.0.0.1:$lp/" ${extra:+-e "$extra"} \
    "$CONF" >"$tmp/$tag.yml"
  nutcracker -c "$tmp/$tag.yml" -a 127.0.0.1 -s "$sp" -o "$tmp/$tag-proxy.log" &
  pids+=("$!")
  PX[$tag]=$lp
  wait_up "$lp" || { bad "nutcracker for $tag did not answer on $lp"; cat "$tmp/$tag-proxy.log"; summary; exit 1; }
}

have_redis=1
command -v redis-server >/dev/null || have_redis=0
cluster rcukv r
if [ "$have_redis" = 1 ]; then
  cluster redis s
else
  skip "redis-server not installed: rcukv's replies through the proxy are not compared with Redis's"
fi
tags=r
[ "$have_redis" = 1 ] && tags="r s"

# ------------------------------------------------------------ 1. routing
# placement TAG: "rcukvN key" lines, sorted, of every key on every node.
placement() {
  local i
  for i in 1 2 3; do
    redis-cli -p "${NODE_PORT[$1$i]}" --raw keys '*' | sed "s/^/rcukv$i /"
  done | sort
}
# placed_once TAG: 300 OKs, 300 keys on the nodes, none on two nodes.
placed_once() {
  [ "$(grep -c "^OK$" "$tmp/$1.set.out")" = 300 ] && [ "$(wc -l <"$tmp/$1.place")" = 300 ] &&
    [ -z "$(awk '{ print $2 }' "$tmp/$1.place" | sort | uniq -d)" ]
}
for t in $tags; do
  what=rcukv-server; [ "$t" = s ] && what=redis-server
  for i in $(seq 1 300); do printf 'SET key:%d val:%d\n' "$i" "$i"; done |
    redis-cli -p "${PX[$t]}" >"$tmp/$t.set.out"
  placement "$t" >"$tmp/$t.place"
  check "$what: 300 SETs through the proxy, each key on exactly one node" 'placed_once "$t"'
  check "$what: every node holds some of them ($(awk '{print $1}' "$tmp/$t.place" | uniq -c | awk '{printf "%s ", $1}'))" \
    '[ "$(awk "{print \$1}" "$tmp/$t.place" | sort -u | wc -l)" = 3 ]'
  # shellcheck disable=SC2046
  redis-cli -p "${PX[$t]}" --raw mget $(seq -f 'key:%.0f' 1 300) >"$tmp/$t.mget"
  check "$what: one MGET of the 300 keys through the proxy reads each value back" \
    'cmp -s "$tmp/$t.mget" <(seq -f "val:%.0f" 1 300)'
done
if [ "$have_redis" = 1 ]; then
  check "each key on the node of the same name as with redis-server nodes" \
    'cmp -s "$tmp/r.place" "$tmp/s.place"'
fi

# ------------------------------------------------------------ 2. hash tags
for t in $tags; do
  what=rcukv-server; [ "$t" = s ] && what=redis-server
  for f in $(seq 1 20); do printf 'SET {user:7}:f%d %d\n' "$f" "$f"; done |
    redis-cli -p "${PX[$t]}" >/dev/null
  check "$what: the twenty {user:7}:* keys are on one node" \
    '[ "$(placement "$t" | grep -F " {user:7}:" | awk "{print \$1}" | sort | uniq -c | awk "{print \$1}")" = 20 ]'
done

# ------------------------------------------------------------ 3. a script
# One command a line, through redis-cli's standard input (its own reply
# rendering, the same for both).  Keys spread over the nodes, so MSET, MGET,
# DEL, EXISTS and TOUCH are split into one command per node by the proxy
# and their replies merged.
cat >"$tmp/script" <<'EOF'
SET s1 hello
GET s1
APPEND s1 " world"
STRLEN s1
GETRANGE s1 0 4
SETRANGE s1 6 W
GET s1
SETNX s1 other
GETSET s1 again
GET nosuch
INCR c1
INCRBY c1 41
DECRBY c1 2
DECR c1
INCRBYFLOAT f1 1.5
INCR s1
SETEX t1 100 v
TTL t1
PERSIST t1
TTL t1
EXPIRE t1 50
TTL t1
PEXPIRE t1 50000
PTTL nosuch
TYPE s1
TYPE nosuch
MSET m1 a m2 b m3 c m4 d m5 e m6 f m7 g m8 h {t}a 1 {t}b 2
MGET m1 m2 nosuch m3 m4 m5 m6 m7 m8 {t}a {t}b
EXISTS m1 m2 m3 nosuch m4
TOUCH m5 m6 nosuch
DEL m1 m2 nosuch m3
MGET m1 m2 m3 m4 m5
GETDEL m4
EXISTS m4 m5
SETBIT b1 7 1
GETBIT b1 7
BITCOUNT b1
EVAL "return redis.call('incrby', KEYS[1], ARGV[1])" 1 ev1 5
EVAL "return redis.call('incrby', KEYS[1], ARGV[1])" 1 ev1 5
EVAL "return {KEYS[1], ARGV[1]}" 1 {t}x y
PING
EOF
for t in $tags; do
  redis-cli -p "${PX[$t]}" <"$tmp/script" >"$tmp/$t.script.out" 2>&1
done
check "rcukv-server: the script runs to the end through the proxy ($(wc -l <"$tmp/r.script.out") reply lines, ending in PONG)" \
  '[ "$(tail -n 1 "$tmp/r.script.out")" = PONG ] && ! grep -q "closed the connection" "$tmp/r.script.out"'
if [ "$have_redis" = 1 ]; then
  check "the script's replies through the proxy are redis-server's, byte for byte" \
    'cmp -s "$tmp/r.script.out" "$tmp/s.script.out" || { diff "$tmp/s.script.out" "$tmp/r.script.out" | head -n 20; false; }'
fi

# ------------------------------------------------------------ 4. refused
refused=("KEYS *" "MULTI" "SUBSCRIBE ch" "FLUSHALL" "SCAN 0" "INFO" "DBSIZE" "SELECT 1" "CONFIG GET maxmemory")
for t in $tags; do
  for c in "${refused[@]}"; do
    # shellcheck disable=SC2086
    echo "$c: $(redis-cli -p "${PX[$t]}" $c 2>&1 | head -n 3 | tr '\n' ' ')"
  done >"$tmp/$t.refused"
  echo "after: $(redis-cli -p "${PX[$t]}" get s1 2>&1)" >>"$tmp/$t.refused"
done
check "rcukv-server: the proxy refuses ${#refused[@]} commands it cannot route and serves on" \
  '[ "$(grep -c "closed the connection\|ERR" "$tmp/r.refused")" = ${#refused[@]} ] &&
   [ "$(tail -n 1 "$tmp/r.refused")" = "after: again" ]'
if [ "$have_redis" = 1 ]; then
  check "what the proxy refuses with rcukv nodes is what it refuses with redis-server's" \
    'cmp -s "$tmp/r.refused" "$tmp/s.refused" || { diff "$tmp/s.refused" "$tmp/r.refused"; false; }'
fi

# ------------------------------------------------------------ 5. a node down
# k2: a key on rcukv2; k1: one on rcukv1.
k2=$(awk '$1 == "rcukv2" && $2 ~ /^key:/ { print $2; exit }' "$tmp/r.place")
k1=$(awk '$1 == "rcukv1" && $2 ~ /^key:/ { print $2; exit }' "$tmp/r.place")
stop_pid "${NODE_PID[r2]}"
down=$(redis-cli -p "${PX[r]}" get "$k2" 2>&1)
check "rcukv2 down: its key $k2 answers an error through the proxy ($down)" \
  '[[ $down == ERR* ]]'
check "rcukv2 down: rcukv1's key $k1 is still served" \
  '[ "$(redis-cli -p "${PX[r]}" get "$k1")" = "val:${k1#key:}" ]'
node_start rcukv r2 "${NODE_PORT[r2]}"
back=
for _ in $(seq 1 50); do
  back=$(redis-cli -p "${PX[r]}" set "$k2" again 2>&1)
  [ "$back" = OK ] && break
  sleep 0.1
done
check "rcukv2 restarted on its port: a SET of $k2 through the proxy succeeds ($back) and lands on it" \
  '[ "$back" = OK ] && [ "$(redis-cli -p "${NODE_PORT[r2]}" get "$k2")" = again ]'

# ------------------------------------------------------------ 6. ejection
sum() { awk '{ s += $1 } END { print s + 0 }'; }
cluster rcukv e 's/auto_eject_hosts: false/auto_eject_hosts: true/; s/redis_db: 0/redis_db: 3/'
redis-cli -p "${PX[e]}" set probe 1 >/dev/null
in3=$(for i in 1 2 3; do redis-cli -p "${NODE_PORT[e$i]}" -n 3 exists probe; done | sum)
in0=$(for i in 1 2 3; do redis-cli -p "${NODE_PORT[e$i]}" -n 0 dbsize; done | sum)
check "redis_db: 3: the proxy's key is in database 3 of one node ($in3), none in database 0 ($in0)" \
  '[ "$in3" = 1 ] && [ "$in0" = 0 ]'
stop_pid "${NODE_PID[e3]}"
# Each failure ejects rcukv3 (server_failure_limit 1): the first requests
# routed to it fail, then every key goes to rcukv1 or rcukv2.
okn=0
for round in $(seq 1 20); do
  okn=0
  for i in $(seq 1 30); do
    [ "$(redis-cli -p "${PX[e]}" set "ej:$round:$i" v 2>&1)" = OK ] && okn=$((okn + 1))
  done
  [ "$okn" = 30 ] && break
  sleep 0.1
done
on12=$(for i in 1 2; do redis-cli -p "${NODE_PORT[e$i]}" -n 3 --raw keys "ej:$round:*"; done | wc -l)
check "auto_eject_hosts: rcukv3 down, 30 of 30 SETs succeed ($okn) and all land on rcukv1 and rcukv2 ($on12)" \
  '[ "$okn" = 30 ] && [ "$on12" = 30 ]'

for t in $tags; do
  for i in 1 2 3; do
    kill -0 "${NODE_PID[$t$i]}" 2>/dev/null || continue
    if grep -qE 'runtime error:|ERROR: AddressSanitizer|WARNING: ThreadSanitizer' "$tmp/$t$i.log"; then
      bad "node $t$i: its log has a sanitizer report"
    fi
  done
done
summary
