#!/usr/bin/env bash
# tests/cluster/test_master.sh - rcukv-server as a master of redis-server
# 7.0.15 replicas and of an rcukv replica (issue 18 item 3;
# docs/replication.md, "rcukv as a master").  Free loopback ports 9320-9399.
#   1. replies: tests/server/cases_master.txt (SYNC/PSYNC/WAIT argument
#      errors, ROLE of a master; recorded from redis-server 7.0.15) against
#      rcukv-server and redis-server;
#   2. full sync of a loaded data set (20,000 keys, TTLs, hashes, db 3, a
#      binary key) to a redis-server replica and an rcukv replica: equal key
#      by key (TYPE, value, PEXPIRETIME);
#   3. the torture: redis-benchmark SET/INCR/MSET with -r and a python client
#      of 8 threads doing overlapping INCR/APPEND/SET EX/PX/INCRBYFLOAT/HSET/
#      HINCRBYFLOAT/EXPIRE/PEXPIRE/GETEX/DEL/MULTI/EVAL on shared keys,
#      through both workers, while a third replica (redis-server) makes its
#      full sync from a snapshot taken mid-load; then WAIT 3, every replica at
#      the master's offset and equal key by key;
#   4. partial resync: CLIENT KILL TYPE replica; writes; every replica back
#      with +CONTINUE (sync_partial_ok), no new full sync, equal again; a
#      replica that cuts its own link comes back the same way;
#   5. WAIT (enough acks at once, too many: the timeout), min-replicas-to-write
#      (-NOREPLICAS; a replica stopped past min-replicas-max-lag, then
#      dropped after repl-timeout and back), INFO replication and ROLE fields as a redis-server
#      master prints them, CLIENT LIST TYPE replica (flags=S);
#   6. REPLICAOF on the master drops its replicas; SHUTDOWN with replicas
#      attached exits; no sanitizer report.
# The server runs with RCUKV_POISON_FREES=1.  Ends with "N passed, M failed,
# K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
PORT_LAST=9399
. "$(dirname "$0")/../../scripts/lib.sh"
skip_without "master test needs redis-server, redis-benchmark and redis-cli" \
  redis-server redis-benchmark redis-cli
need_built "$SRV" "$TS"
scratch_init master
export RCUKV_POISON_FREES=1
server_up "" 9320 --threads 2 --save "" --dir "$tmp"

# ------------------------------------------------------------ 1. replies
cases_both cases_master.txt
if ! find_redis_py; then
  skip "python3-redis not installed: no key-by-key comparisons"
  summary
  exit 0
fi
CMP=tests/cluster/repl_compare.py
m() { redis-cli -p "$P" "$@"; }
. "$(dirname "$0")/repl_lib.sh"
compare() { "$PY" "$CMP" "$P" "$1" 8 2>&1 | head -n 6; }
# replica NAME FIRST_PORT redis|rcukv: start a replica of the master, sets RPORT
replica() {
  RPORT=$(free_port "$2")
  if [ "$3" = redis ]; then
    redis-server --port "$RPORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
      --dbfilename "$1.rdb" --replicaof 127.0.0.1 "$P" >"$tmp/$1.log" 2>&1 &
  else
    mkdir -p "$tmp/$1"
    "$SRV" --port "$RPORT" --threads 2 --save "" --dir "$tmp/$1" \
      --replicaof 127.0.0.1 "$P" >"$tmp/$1.log" 2>&1 &
  fi
  pids+=("$!")
  wait_up "$RPORT"
}

# redis_replica_of NAME MASTER_PORT: a redis-server replica of that master,
# until the master shows it online (10 s at most)
redis_replica_of() {
  local port
  port=$(free_port $(($2 + 1)))
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
    --dbfilename "$1.rdb" --replicaof 127.0.0.1 "$2" >"$tmp/$1.log" 2>&1 &
  pids+=("$!")
  for _ in $(seq 1 100); do
    redis-cli -p "$2" info replication | grep -q 'state=online' && break
    sleep 0.1
  done
}

# ------------------------------------------------------------ 2. full sync
redis-benchmark -p "$P" -t set -n 20000 -r 20000 -d 32 -P 32 -q >/dev/null 2>&1
{
  dataset_cmds
  echo "EXPIRE h:1 7000"
  printf 'SET "bin\\x00key" "a\\x00b\\r\\nc"\n'
} | m >/dev/null
replica r1 $((P + 10)) redis || bad "redis-server replica r1 did not start"
R1=$RPORT
replica r2 $((P + 20)) rcukv || bad "rcukv replica r2 did not start"
R2=$RPORT
for r in "$R1" "$R2"; do
  how=$(synced "$r")
  check "full sync: replica on $r at the master's offset ($how)" '[[ $how == offset* ]]'
  out=$(compare "$r")
  check "after the full sync, replica on $r equal key by key ($out)" \
    '[[ $out == *" mismatches=0"* ]] && [[ $out != keys=0* ]]'
done
check "the rcukv replica (no capa eof) got a dump of known length from disk" \
  'grep -q "target: disk" "$tmp/server.log"'

# ------------------------------------------------------------ 3. torture
redis-benchmark -p "$P" -t set,incr,mset -n 60000 -r 5000 -d 20 -P 16 -c 16 -q \
  >"$tmp/bench.out" 2>&1 &
bench=$!
"$PY" tests/cluster/master_torture.py "$P" 6 8 noshort >"$tmp/torture.out" 2>&1 &
tort=$!
sleep 2
replica r3 $((P + 30)) redis || bad "redis-server replica r3 did not start"
R3=$RPORT
wait "$bench"
wait "$tort"
check "the torture client ran ($(cat "$tmp/torture.out"))" 'grep -q "^ops=" "$tmp/torture.out"'
sleep 0.3 # the short PX/PEXPIRE keys are gone everywhere
acks=$(m wait 3 10000)
check "WAIT 3 10000 after the torture: $acks" '[ "$acks" = 3 ]'
for r in "$R1" "$R2" "$R3"; do
  how=$(synced "$r")
  check "after the torture, replica on $r at the master's offset ($how)" '[[ $how == offset* ]]'
  out=$(compare "$r")
  check "after the torture, replica on $r equal key by key ($out)" '[[ $out == *" mismatches=0"* ]]'
done
check "replica r3 synced from a snapshot taken while writes went on" \
  'grep -q "MASTER <-> REPLICA sync: Finished with success" "$tmp/r3.log"'

# 3b. expiries that pass during the run: the master sends DEL for each
"$PY" tests/cluster/master_torture.py "$P" 4 8 >"$tmp/torture2.out" 2>&1
sleep 0.3
acks=$(m wait 3 10000)
check "torture with short expiries ($(cat "$tmp/torture2.out")), WAIT 3: $acks" '[ "$acks" = 3 ]'
for r in "$R1" "$R2" "$R3"; do
  synced "$r" >/dev/null
  out=$(compare "$r")
  check "short expiries: replica on $r equal key by key ($out)" '[[ $out == *" mismatches=0"* ]]'
done

# ------------------------------------------------------------ 4. partial resync
full0=$(m info stats | field sync_full)
killed=$(m client kill type replica)
check "CLIENT KILL TYPE replica: $killed" '[ "$killed" = 3 ]'
for i in $(seq 1 300); do echo "SET p:$i $i"; echo "INCR pc"; done | m >/dev/null
for r in "$R1" "$R2" "$R3"; do
  how=$(synced "$r")
  check "killed, replica on $r back at the master's offset ($how)" '[[ $how == offset* ]]'
done
ok_n=$(m info stats | field sync_partial_ok)
full_n=$(m info stats | field sync_full)
check "they came back with partial resyncs (sync_partial_ok:$ok_n, sync_full:$full0 -> $full_n)" \
  '[ "$ok_n" -ge 3 ] && [ "$full_n" = "$full0" ]'
out=$(compare "$R1")
check "after the partial resync, equal key by key ($out)" '[[ $out == *" mismatches=0"* ]]'

# a cut from the replica's side: it drops its master link and comes back
ok0=$(m info stats | field sync_partial_ok)
redis-cli -p "$R1" client kill type master >/dev/null
for i in $(seq 1 100); do echo "INCR cut"; done | m >/dev/null
how=$(synced "$R1")
ok1=$(m info stats | field sync_partial_ok)
check "the replica cut its link: back with a partial resync ($how; sync_partial_ok $ok0 -> $ok1)" \
  '[[ $how == offset* ]] && [ "$ok1" -gt "$ok0" ] && [ "$(m info stats | field sync_full)" = "$full0" ]'

# a steady writer: after each burst of serial SETs, the replica has the last
# one almost at once (a feeder that missed its wake-up slept out its 100 ms
# poll: median 46 ms; redis-server and a woken feeder: 0.1 ms)
lat=$("$PY" - "$P" "$R1" <<'EOF'
import sys, time
import redis
m = redis.Redis(port=int(sys.argv[1]), socket_timeout=5)
r = redis.Redis(port=int(sys.argv[2]), socket_timeout=5)
ms = []
for b in range(20):
    for i in range(50):
        m.set("lat:%d" % b, i)
    t = time.time()
    while r.get("lat:%d" % b) != b"49" and time.time() - t < 2:
        pass
    ms.append((time.time() - t) * 1000)
    time.sleep(0.02)
ms.sort()
print("%.1f ms median, %.1f ms max" % (ms[len(ms) // 2], ms[-1]))
EOF
)
check "a replica follows a steady writer: 20 bursts of 50 SETs, the last one on r1 after $lat" \
  '[[ $lat == *" ms median"* ]] && awk -v m="${lat%% *}" "BEGIN { exit !(m < 20) }"'

# ------------------------------------------------------------ 5. WAIT, min-replicas, INFO, ROLE
m set w 1 >/dev/null
check "WAIT 3 2000 after a write: 3" '[ "$(m wait 3 2000)" = 3 ]'
t0=$(date +%s%N)
acks=$(m wait 4 300)
ms=$((($(date +%s%N) - t0) / 1000000))
check "WAIT 4 300 with 3 replicas: $acks after $ms ms (the timeout)" \
  '[ "$acks" = 3 ] && [ "$ms" -ge 250 ]'
m config set min-replicas-to-write 4 >/dev/null
out=$(m set mr 1)
check "min-replicas-to-write 4 with 3 replicas: $out" \
  '[ "$out" = "NOREPLICAS Not enough good replicas to write." ]'
m config set min-replicas-to-write 3 >/dev/null
check "min-replicas-to-write 3: the write is taken" '[ "$(m set mr 1)" = OK ]'
# a replica that stops acking (stopped for 3 s) is no longer a good one,
# then (repl-timeout 4) it is dropped, and comes back when it runs again
m config set min-replicas-max-lag 1 >/dev/null
m config set repl-timeout 4 >/dev/null
r3pid=$(redis-cli -p "$R3" info server | field process_id)
kill -STOP "$r3pid"
sleep 3
out=$(m set mr 2)
good=$(m info replication | field min_slaves_good_slaves)
check "min-replicas-max-lag 1, one replica stopped for 3 s: $out (min_slaves_good_slaves:$good)" \
  '[ "$out" = "NOREPLICAS Not enough good replicas to write." ] && [ "$good" = 2 ]'
sleep 2.5
kill -CONT "$r3pid"
check "repl-timeout 4: the stopped replica was dropped" \
  'grep -q "Disconnecting timedout replica" "$tmp/server.log"'
m config set repl-timeout 60 >/dev/null
m config set min-replicas-to-write 0 >/dev/null
m config set min-replicas-max-lag 10 >/dev/null
how=$(synced "$R3")
check "the dropped replica came back ($how)" '[[ $how == offset* ]]'
n=$(m client list type replica | grep -c 'flags=S')
check "CLIENT LIST TYPE replica: $n replicas with flags=S" '[ "$n" = 3 ]'
role=$(m role | tr '\n' ' ')
check "ROLE: master, the offset, three replicas of ip port offset ($role)" \
  '[ "$(m role | wc -l)" = 11 ] && [[ $role == master\ * ]] && [[ $role == *127.0.0.1\ $R1\ * ]]'
if redis_up $((P + 40)); then
  redis_replica_of rr "$RP"
  for p in "$P" "$RP"; do
    redis-cli -p "$p" info replication | tr -d '\r' |
      sed -E 's/^(slave[0-9]+):.*$/\1:/; s/^([a-z_0-9]+):.*/\1/' | grep -v '^slave[1-9]' |
      grep -v '^#' | sort >"$tmp/fields.$p"
    redis-cli -p "$p" info replication | tr -d '\r' | grep '^slave0:' |
      sed -E 's/=[^,]*/=/g' >"$tmp/slave0.$p"
  done
  check "INFO replication of a master: the fields redis-server's prints" \
    'cmp -s "$tmp/fields.$P" "$tmp/fields.$RP" || { diff "$tmp/fields.$RP" "$tmp/fields.$P"; false; }'
  check "slave0: the same keys ($(cat "$tmp/slave0.$P"))" \
    'cmp -s "$tmp/slave0.$P" "$tmp/slave0.$RP" && grep -q "state=online" <(m info replication)'
fi

# ------------------------------------------------------------ 5b. diskless
m -n 3 flushdb >/dev/null # one database: a capa-eof replica gets the dump on its socket
replica r4 $((P + 50)) redis || bad "redis-server replica r4 did not start"
R4=$RPORT
how=$(synced "$R4")
out=$(compare "$R4")
check "a replica of a one-db master: EOF-marked dump on its socket, equal key by key ($how; $out)" \
  'grep -q "replicas sockets" "$tmp/server.log" && [[ $out == *" mismatches=0"* ]]'

# ------------------------------------------------------------ 5c. becoming a replica
# a second rcukv master with one replica is told REPLICAOF the first
M2=$(free_port $((P + 60)))
"$SRV" --port "$M2" --threads 2 --save "" --dir "$tmp" >"$tmp/m2.log" 2>&1 &
pids+=("$!")
if wait_up "$M2"; then
  redis_replica_of r5 "$M2"
  before=$(redis-cli -p "$M2" info replication | field connected_slaves)
  # inside MULTI/EXEC, as Sentinel sends it: EXEC holds the stream lock,
  # which REPLICAOF's drop of the replicas and INFO take too
  ex=$(printf 'MULTI\r\nINFO replication\r\nREPLICAOF 127.0.0.1 %s\r\nEXEC\r\n' "$P" |
    timeout 10 redis-cli -p "$M2" | grep -c '^connected_slaves:1')
  check "MULTI; INFO; REPLICAOF host port; EXEC on a master with a replica answers ($ex)" \
    '[ "$ex" = 1 ]'
  n=
  for _ in $(seq 1 50); do
    n=$(redis-cli -p "$M2" info replication | field connected_slaves)
    [ "$n" = 0 ] && break
    sleep 0.1
  done
  check "REPLICAOF on a master drops its replicas (connected_slaves:$before -> $n; no chained replication)" \
    '[ "$before" = 1 ] && [ "$n" = 0 ]'
else
  bad "a second rcukv master did not start on $M2"
fi

# ------------------------------------------------------------ 6. shutdown
m shutdown nosave >/dev/null 2>&1
gone=no
for _ in $(seq 1 100); do kill -0 "$spid" 2>/dev/null || { gone=yes; break; }; sleep 0.1; done
check "SHUTDOWN with replicas attached exits (gone: $gone)" '[ "$gone" = yes ]'
for f in "$tmp/server.log" "$tmp/r2.log"; do
  if grep -qE 'runtime error:|ERROR: AddressSanitizer|WARNING: ThreadSanitizer' "$f"; then
    bad "$(basename "$f") has a sanitizer report"
    grep -E -A12 'runtime error:|ERROR: AddressSanitizer|WARNING: ThreadSanitizer' "$f" | head -40
  fi
done
summary
