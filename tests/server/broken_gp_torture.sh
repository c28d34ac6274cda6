#!/usr/bin/env bash
# tests/server/broken_gp_torture.sh NAME TORTURE FIRST_PORT BAD_RE - shows a
# server torture can fail: an rcukv-server built with BROKEN_GP=1 (grace
# periods that do not wait for readers: RCU_GP_BROKEN in
# rcu/rcu_internal.h) and run with RCUKV_POISON_FREES=1 frees a replaced
# value while readers on the other worker still copy it.  The torture
# $B/tests/server/TORTURE (its test script runs it against the real build)
# must then fail: the server dies of SIGSEGV/SIGBUS on a poisoned value, or
# the torture reports bad reads (lines of its stderr matching BAD_RE, an
# extended regex).  A run whose torture fails for another reason (a
# timeout, a server that exits otherwise) does not count.  The race is a
# matter of timing: up to BROKEN_GP_RUNS runs (default 5), caught when one
# is.  Release variant only, like tests/hashtable/broken_gp.sh.  Ports
# FIRST_PORT to FIRST_PORT + 9.  Run by broken_gp_hash.sh (hashes) and
# broken_gp_set.sh (sets).
set -u
name=${1:?usage: broken_gp_torture.sh NAME TORTURE FIRST_PORT BAD_RE}
torture=${2:?}
first=${3:?}
bad_re=${4:?}
cd "$(dirname "$0")/../.."
if [ "${VARIANT:-release}" != release ]; then
	echo "SKIP under ${VARIANT} (release variant only)"; echo "0 passed, 0 failed, 1 skipped"; exit 0
fi
bb=build/release-brokengp
HT=${B:-build/release}/tests/server/$torture
runs=${BROKEN_GP_RUNS:-5}
if [ ! -x "$HT" ]; then
	echo "FAIL $HT not built (make build-tests)"; echo "0 passed, 1 failed"; exit 1
fi
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s BROKEN_GP=1 $bb/rcukv-server >/dev/null ||
	{ echo "FAIL build with BROKEN_GP=1"; echo "0 passed, 1 failed"; exit 1; }
tmp=$(mktemp -d "/tmp/rcukv-bgp-$name.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
port=$first
while (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && [ $port -lt $((first + 9)) ]; do port=$((port + 1)); done
caught=0 why=
for i in $(seq 1 "$runs"); do
	RCUKV_POISON_FREES=1 timeout -k 5 120 $bb/rcukv-server --port $port --threads 2 --save "" \
		>"$tmp/server.log" 2>&1 &
	spid=$!
	for _ in $(seq 1 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.05; done
	out=$(timeout -k 5 120 "$HT" --port $port 2>&1)
	trc=$?
	kill "$spid" 2>/dev/null
	wait "$spid"
	src=$?
	bad=$(echo "$out" | grep -cE "$bad_re")
	if [ $trc != 0 ] && { [ $src = 139 ] || [ $src = 135 ] || [ "$bad" -gt 0 ]; }; then
		echo "ok   broken grace period caught by $torture (run $i of at most $runs: server exit $src, $bad bad reads reported)"
		caught=1
		break
	fi
	why="run $i: torture exit $trc, server exit $src"
	echo "# $why"
done
if [ $caught = 1 ]; then
	echo "1 passed, 0 failed"
else
	echo "FAIL broken grace period NOT caught by $torture in $runs runs ($why)"
	echo "$out" | tail -n 10 | sed 's/^/    | /'
	echo "0 passed, 1 failed"
	exit 1
fi
