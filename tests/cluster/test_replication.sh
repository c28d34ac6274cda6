#!/usr/bin/env bash
# tests/cluster/test_replication.sh - rcukv-server as a replica of a
# redis-server 7 master (issue 18 item 2).  Free loopback ports 8000-8099.
#   1. replies: tests/server/cases_repl.txt (recorded from redis-server
#      7.0.15) against rcukv-server and redis-server;
#   2. full resync: a master with 20,000 keys in db 0, keys with TTLs, keys
#      in db 3, small and big hashes, behind requirepass; the replica (masterauth) loads its RDB
#      and is then equal to it key by key (value and TTL, every db);
#   3. the stream: redis-benchmark SET/INCR/MSET and a script of DEL,
#      EXPIRE, PERSIST, APPEND, SETRANGE, MULTI/EXEC, SELECT, FLUSHDB, COPY,
#      RENAME, HSET, HDEL, HINCRBY(FLOAT), HSETNX on the master, while redis-benchmark GETs from the replica:
#      equal again, the replica's offset is the master's;
#   4. partial resync: the master drops the link (CLIENT KILL TYPE
#      replica); the replica comes back with PSYNC (sync_partial_ok) and
#      catches up on the writes made meanwhile;
#   5. against a redis-server replica of the same master: writes refused
#      with the same -READONLY, ROLE's first four fields the same, every
#      INFO replication field rcukv prints is one Redis prints;
#      with the link down and replica-serve-stale-data no, the same
#      -MASTERDOWN; with yes, the stale data served;
#   6. replica-read-only no lets writes in; REPLICAOF NO ONE keeps the data
#      and takes writes; REPLICAOF again is a full resync that drops them;
#   7. SHUTDOWN of a replica with a live link exits.
# Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
PORT_LAST=8099
. "$(dirname "$0")/../../scripts/lib.sh"
skip_without "replication test needs redis-server, redis-benchmark and redis-cli" \
  redis-server redis-benchmark redis-cli
need_built "$SRV" "$TS"
scratch_init repl
server_up "" 8000 --threads 2 --save "" --dir "$tmp"

# ------------------------------------------------------------ 1. replies
cases_both cases_repl.txt
if ! find_redis_py; then
  skip "python3-redis not installed: no key-by-key comparisons"
  summary
  exit 0
fi
CMP=tests/cluster/repl_compare.py

PASS=s3cret
MP=$(free_port $((P + 2)))
redis-server --port "$MP" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
  --requirepass "$PASS" >"$tmp/master.log" 2>&1 &
pids+=("$!")
wait_up "$MP" "$PASS" || { bad "master redis-server did not start on $MP"; summary; exit 1; }
m() { redis-cli -p "$MP" -a "$PASS" --no-auth-warning "$@"; }
r() { redis-cli -p "$P" "$@"; }
. "$(dirname "$0")/repl_lib.sh"
compare() { "$PY" "$CMP" "$MP" "$1" 8 "$PASS" 2>&1 | head -n 6; }

# ------------------------------------------------------------ 2. full resync
redis-benchmark -p "$MP" -a "$PASS" -t set -n 20000 -r 20000 -d 32 -P 32 -q >/dev/null 2>&1
{
  dataset_cmds
  echo "HSET hbig $(for f in $(seq 1 300); do printf 'f%d %d ' "$f" "$f"; done)"
  echo "EXPIRE h:1 7000"
  printf 'SET "bin\\x00key" "a\\x00b\\r\\nc"\n'
} | m >/dev/null
r set stale-local 1 >/dev/null # replaced by the master's data set
r config set masterauth "$PASS" >/dev/null
rep=$(r replicaof 127.0.0.1 "$MP")
check "REPLICAOF 127.0.0.1 $MP: $rep" '[ "$rep" = OK ]'
how=$(synced "$P")
check "full resync: the link is up at the master's offset ($how)" '[[ $how == offset* ]]'
out=$(compare "$P")
check "after the full resync, equal key by key ($out)" '[[ $out == *" mismatches=0"* ]] && [[ $out != keys=0* ]]'
check "the replica's own key before the sync is gone" '[ -z "$(r get stale-local)" ]'

# ------------------------------------------------------------ 3. the stream
redis-benchmark -p "$P" -t get -n 200000 -r 20000 -P 16 -c 10 -q >"$tmp/reads.out" 2>&1 &
readers=$!
redis-benchmark -p "$MP" -a "$PASS" -t set,incr,mset -n 30000 -r 5000 -d 20 -P 16 -c 20 -q \
  >/dev/null 2>&1
{
  for i in $(seq 1 200); do echo "DEL key:$(printf '%012d' "$i")"; done
  for i in $(seq 1 100); do echo "EXPIRE t:$i 5000"; echo "PERSIST pt:$i"; done
  for i in $(seq 1 50); do echo "APPEND ap:$i x$i"; echo "APPEND ap:$i y"; echo "SETRANGE ap:$i 1 Z"; done
  echo "MULTI"; echo "SET tx:a 1"; echo "INCRBY tx:b 5"; echo "DEL t:200"; echo "EXEC"
  echo "SELECT 5"; for i in $(seq 1 50); do echo "SET db5:$i v"; done
  echo "SELECT 3"; echo "FLUSHDB"; echo "SET db3:only 1"
  echo "SELECT 0"; echo "COPY tx:a tx:copy"; echo "RENAME tx:b tx:renamed"
  echo "GETDEL t:201"; echo "GETEX t:202 PERSIST"; echo "SET nx:1 a NX"; echo "INCRBYFLOAT f 1.5"
  for i in $(seq 1 30); do echo "HSET h:$i f3 x"; echo "HDEL h:$i f1"; echo "HINCRBY h:$i f2 10"; done
  echo "HINCRBYFLOAT hbig f1 0.5"; echo "HDEL h:40 f1 f2"; echo "HSETNX h:41 f1 no"
} | m >/dev/null
wait "$readers"
how=$(synced "$P")
check "the stream: the replica is at the master's offset ($how)" '[[ $how == offset* ]]'
out=$(compare "$P")
check "after writes of every kind on the master, equal key by key ($out)" '[[ $out == *" mismatches=0"* ]]'
check "GETs from the replica while it applied the stream completed ($(tr '\r' '\n' <"$tmp/reads.out" | grep -o 'GET: [0-9.]* requests per second' | tail -n 1))" \
  'grep -q "requests per second" "$tmp/reads.out"'

# ------------------------------------------------------------ 4. partial resync
m client kill type replica >/dev/null
for i in $(seq 1 500); do echo "SET p:$i $i"; done | m >/dev/null
how=$(synced "$P")
check "the link dropped by the master comes back ($how)" '[[ $how == offset* ]]'
ok_n=$(m info stats | field sync_partial_ok)
full_n=$(m info stats | field sync_full)
check "it came back with a partial resync (master: sync_partial_ok:$ok_n, sync_full:$full_n)" \
  '[ "$ok_n" -ge 1 ] && [ "$full_n" = 1 ]'
out=$(compare "$P")
check "after the partial resync, equal key by key ($out)" '[[ $out == *" mismatches=0"* ]]'

# ------------------------------------------------------------ 5. vs a Redis replica
RP=$(free_port $((MP + 1)))
redis-server --port "$RP" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
  --masterauth "$PASS" --replicaof 127.0.0.1 "$MP" --dbfilename replica.rdb \
  >"$tmp/replica.log" 2>&1 &
pids+=("$!")
if wait_up "$RP" && synced "$RP" >/dev/null; then
  for p in "$P" "$RP"; do
    {
      redis-cli -p "$p" set x 1
      redis-cli -p "$p" incr p:1
      redis-cli -p "$p" get p:2
      redis-cli -p "$p" del p:3
      redis-cli -p "$p" role | head -n 4
    } >"$tmp/ro.$p" 2>&1
    redis-cli -p "$p" info replication | tr -d '\r' | awk -F: 'NF > 1 { print $1 }' | sort >"$tmp/fields.$p"
  done
  check "as a redis-server replica: -READONLY for writes, reads served, ROLE slave host port connected" \
    'cmp -s "$tmp/ro.$P" "$tmp/ro.$RP" || { diff "$tmp/ro.$RP" "$tmp/ro.$P"; false; }'
  # scripts: a write through redis.call/pcall is refused (the key is not
  # touched), a shebang script that may write is refused before it runs,
  # one that wrote nothing before its read does not change the replica
  for p in "$P" "$RP"; do
    {
      redis-cli -p "$p" eval "return redis.call('set','x','2')" 0
      redis-cli -p "$p" eval "return redis.pcall('set','x','2')" 0
      redis-cli -p "$p" eval "redis.call('get','p:1') return redis.call('incr','p:1')" 0
      redis-cli -p "$p" eval $'#!lua\nreturn 1' 0
      redis-cli -p "$p" eval_ro $'#!lua\nreturn 1' 0
      redis-cli -p "$p" eval $'#!lua flags=no-writes\nreturn redis.call("get","p:1")' 0
      redis-cli -p "$p" eval_ro "return redis.call('set','x','2')" 0
      redis-cli -p "$p" get x
    } >"$tmp/ros.$p" 2>&1
  done
  check "as a redis-server replica: scripts' writes get the same -READONLY, reads served" \
    'cmp -s "$tmp/ros.$P" "$tmp/ros.$RP" || { diff "$tmp/ros.$RP" "$tmp/ros.$P"; false; }'
  extra=$(comm -23 "$tmp/fields.$P" "$tmp/fields.$RP" | tr '\n' ' ')
  check "every INFO replication field rcukv prints is one redis-server's replica prints${extra:+ (not: $extra)}" \
    '[ -z "$extra" ]'
  out=$(compare "$RP")
  check "the redis-server replica agrees with the master too ($out)" '[[ $out == *" mismatches=0"* ]]'
  # replica-serve-stale-data no, the link down (a master that is not there)
  dead=$(free_port $((RP + 1)))
  for p in "$P" "$RP"; do
    redis-cli -p "$p" config set replica-serve-stale-data no >/dev/null
    redis-cli -p "$p" replicaof 127.0.0.1 "$dead" >/dev/null
    {
      redis-cli -p "$p" get p:2
      redis-cli -p "$p" dbsize
      redis-cli -p "$p" ping
      redis-cli -p "$p" role | head -n 1
      redis-cli -p "$p" info replication | tr -d '\r' | grep master_link_status
    } >"$tmp/stale.$p" 2>&1
    redis-cli -p "$p" config set replica-serve-stale-data yes >/dev/null
  done
  check "link down with replica-serve-stale-data no: -MASTERDOWN as redis-server's replica, PING and ROLE served ($(head -n 1 "$tmp/stale.$P"))" \
    'cmp -s "$tmp/stale.$P" "$tmp/stale.$RP" || { diff "$tmp/stale.$RP" "$tmp/stale.$P"; false; }'
  check "link down, replica-serve-stale-data yes: the stale data is served" '[ "$(r get p:2)" = 2 ]'
  r replicaof 127.0.0.1 "$MP" >/dev/null
  synced "$P" >/dev/null
else
  bad "a redis-server replica of the master did not sync"
fi

# ------------------------------------------------------------ 6. read-only, promotion
r config set replica-read-only no >/dev/null
check "replica-read-only no: a replica takes a client's SET" '[ "$(r set local 1)" = OK ]'
r config set replica-read-only yes >/dev/null
before=$(r dbsize)
check "REPLICAOF NO ONE: +OK, ROLE master, the data set kept ($before keys)" \
  '[ "$(r replicaof no one)" = OK ] && [ "$(r role | head -n 1)" = master ] && [ "$(r dbsize)" = "$before" ]'
check "promoted: writes are taken" '[ "$(r set promoted 1)" = OK ]'
r replicaof 127.0.0.1 "$MP" >/dev/null
how=$(synced "$P")
full_n=$(m info stats | field sync_full)
check "REPLICAOF again: a full resync ($how, master sync_full:$full_n)" \
  '[[ $how == offset* ]] && [ "$full_n" -ge 3 ]'
out=$(compare "$P")
check "after it the promoted writes are gone, equal key by key ($out)" \
  '[[ $out == *" mismatches=0"* ]] && [ -z "$(r get promoted)" ]'

# ------------------------------------------------------------ 7. shutdown
redis-cli -p "$P" shutdown nosave >/dev/null 2>&1
gone=no
for _ in $(seq 1 100); do kill -0 "$spid" 2>/dev/null || { gone=yes; break; }; sleep 0.1; done
check "SHUTDOWN of a replica with a live link exits (gone: $gone)" '[ "$gone" = yes ]'
if grep -qE 'runtime error:|ERROR: AddressSanitizer|WARNING: ThreadSanitizer' "$tmp/server.log"; then
  bad "the replica's log has a sanitizer report"
fi
summary
