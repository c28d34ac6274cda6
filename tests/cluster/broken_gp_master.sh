#!/usr/bin/env bash
# tests/cluster/broken_gp_master.sh - shows test_master.sh's full sync under
# load can fail: an rcukv-server built with BROKEN_GP=1 (grace periods, SRCU's
# too, that do not wait for readers: RCU_GP_BROKEN in rcu/rcu_internal.h) and
# run with RCUKV_POISON_FREES=1 frees the entries a full sync's snapshot
# still holds while SETs overwrite them, so the dump a redis-server replica
# loads carries poisoned values: the replica ends unequal to the master, or
# refuses the dump, or the master dies of SIGSEGV/SIGBUS.  A run where none of
# that happens does not count; up to BROKEN_GP_RUNS runs (default 3), caught
# when one is.  Release variant only.  Ports 9380-9399.
set -u
cd "$(dirname "$0")/../.."
if [ "${VARIANT:-release}" != release ]; then
	echo "SKIP under ${VARIANT} (release variant only)"; echo "0 passed, 0 failed, 1 skipped"; exit 0
fi
bb=build/release-brokengp
runs=${BROKEN_GP_RUNS:-3}
PORT_LAST=9399
. scripts/lib.sh
skip_without "needs redis-server, redis-benchmark and redis-cli" redis-server redis-benchmark redis-cli
find_redis_py || { skip "python3-redis not installed"; summary; exit 0; }
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s BROKEN_GP=1 $bb/rcukv-server >/dev/null ||
	{ bad "build with BROKEN_GP=1"; summary; exit 1; }
scratch_init bgp-master
caught=0 why=
for i in $(seq 1 "$runs"); do
	P=$(free_port 9380)
	RP=$(free_port $((P + 1)))
	RCUKV_POISON_FREES=1 timeout -k 5 120 $bb/rcukv-server --port "$P" --threads 2 --save "" \
		--dir "$tmp" >"$tmp/server.$i.log" 2>&1 &
	spid=$!
	pids+=("$spid")
	wait_up "$P" || { why="run $i: the server did not start"; continue; }
	redis-benchmark -p "$P" -t set -n 60000 -r 30000 -d 300 -P 32 -q >/dev/null 2>&1
	redis-benchmark -p "$P" -t set -n 600000 -r 30000 -d 300 -P 16 -c 20 -q >/dev/null 2>&1 &
	load=$!
	sleep 0.5
	redis-server --port "$RP" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
		--dbfilename "r$i.rdb" --replicaof 127.0.0.1 "$P" >"$tmp/replica.$i.log" 2>&1 &
	rpid=$!
	pids+=("$rpid")
	sleep 4
	kill "$load" 2>/dev/null
	wait "$load" 2>/dev/null
	# the replica at the master's offset (20 s at most), else no compare
	insync=0
	for _ in $(seq 1 200); do
		mo=$(redis-cli -p "$P" info replication 2>/dev/null | tr -d '\r' | awk -F: '$1 == "master_repl_offset" { print $2 }')
		ro=$(redis-cli -p "$RP" info replication 2>/dev/null | tr -d '\r' | awk -F: '$1 == "slave_repl_offset" { print $2 }')
		[ -n "$mo" ] && [ "$mo" = "$ro" ] && { insync=1; break; }
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	out=
	[ $insync = 1 ] && out=$("$PY" tests/cluster/repl_compare.py "$P" "$RP" 1 2>&1 | head -n 1)
	kill -0 "$spid" 2>/dev/null
	alive=$?
	refused=$(grep -cE "Bad file format|Short read|Internal error in RDB|Invalid|CRC" "$tmp/replica.$i.log")
	kill "$spid" "$rpid" 2>/dev/null
	wait "$spid" 2>/dev/null
	src=$?
	if [[ $out == *" mismatches="[1-9]* ]] || [ "$refused" -gt 0 ] || [ $src = 139 ] ||
		[ $src = 135 ] || { [ $alive != 0 ] && [ $src != 0 ] && [ $src != 143 ]; }; then
		ok "broken grace period caught (run $i of at most $runs: ${out:-no compare}; replica load errors: $refused; server exit $src)"
		caught=1
		break
	fi
	why="run $i: ${out:-replica not in sync}, replica load errors $refused, server exit $src"
	echo "# $why"
done
[ $caught = 1 ] || bad "broken grace period NOT caught in $runs runs ($why)"
summary
