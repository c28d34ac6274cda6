#!/usr/bin/env bash
# tests/server/broken_module_unload.sh - shows the module load/unload torture
# can fail: an rcukv-server built with BROKEN_MODULE_UNLOAD=1 unloads a module
# without its grace period, drain and barrier (module-unload-scheme rcu) or
# without stopping the other workers (module-unload-scheme freeze), so
# dlclose() unmaps code another worker is still running.  The torture
# (tests/server/test_modules_torture.py, as test_modules.sh runs it against
# the real build) must then fail: the server dies (SIGSEGV/SIGBUS on the
# unmapped code) or a caller gets a reply that is neither the module's nor
# "unknown command".  The torture's sleepy mode (tests/server/modules/sleepy.c:
# its command sleeps 2 ms offline inside the module, through
# RedisModule_Call) makes the window wide: a caller is inside the module at
# almost every unload.  For each scheme: up to BROKEN_UNLOAD_RUNS runs
# (default 3), caught when one is.  Needs sleepy.so, built against Redis
# 7.0.15's redismodule.h
# (tests/server/modules_fetch.sh; a skip without it).  Release variant only.
# Ports 7870-7879.  Ends with "N passed, M failed, K skipped".
set -u
cd "$(dirname "$0")/../.."
if [ "${VARIANT:-release}" != release ]; then
	echo "SKIP under ${VARIANT} (release variant only)"; echo "0 passed, 0 failed, 1 skipped"; exit 0
fi
bb=build/release-brokenunload
runs=${BROKEN_UNLOAD_RUNS:-3}
MODDIR=${MODULES_DIR:-/tmp/rcukv-modules-7.0.15}
if ! out=$(bash tests/server/modules_fetch.sh "$MODDIR" 2>&1); then
	echo "SKIP Redis 7.0.15's example modules could not be built: $(echo "$out" | tail -n 1)"
	echo "0 passed, 0 failed, 1 skipped"; exit 0
fi
SO=$MODDIR/sleepy.so
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s BROKEN_MODULE_UNLOAD=1 $bb/rcukv-server >/dev/null ||
	{ echo "FAIL build with BROKEN_MODULE_UNLOAD=1"; echo "0 passed, 1 failed"; exit 1; }
tmp=$(mktemp -d /tmp/rcukv-bmu.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
port=7870
while (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && [ $port -lt 7879 ]; do port=$((port + 1)); done
passed=0 failed=0
for scheme in rcu freeze; do
	caught=0 why=
	for i in $(seq 1 "$runs"); do
		timeout -k 5 200 $bb/rcukv-server --port $port --threads 2 --save "" --dir "$tmp" \
			--enable-module-command yes --module-unload-scheme $scheme >"$tmp/server.log" 2>&1 &
		spid=$!
		for _ in $(seq 1 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.05; done
		out=$(timeout -k 5 150 python3 tests/server/test_modules_torture.py $port "$SO" 6 100 sleepy 2>&1)
		trc=$?
		kill "$spid" 2>/dev/null
		wait "$spid"
		src=$?
		# the server died (128 + signal), or a reply that was not one of
		# the two right ones
		if [ $trc != 0 ] && { [ $src -gt 128 ] && [ $src != 143 ] || echo "$out" | grep -q "^FAIL replies"; }; then
			echo "ok   scheme $scheme: broken unload caught (run $i of at most $runs: server exit $src; $(echo "$out" | grep -m1 '^FAIL' || echo 'no FAIL line'))"
			caught=1
			break
		fi
		why="run $i: torture exit $trc, server exit $src"
		echo "# scheme $scheme: $why"
	done
	if [ $caught = 1 ]; then
		passed=$((passed + 1))
	else
		echo "FAIL scheme $scheme: broken unload NOT caught in $runs runs ($why)"
		echo "$out" | tail -n 10 | sed 's/^/    | /'
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
