# tests/client/lib.sh: shared helpers of the rcukv-cli test scripts (sourced).
#
# Target: RCUKV_TEST_HOST / RCUKV_TEST_PORT name a running server (redis-server
# 7 or rcukv-server) to test against.  Without them a redis-server is started
# on a free loopback port in 7100-7199 with persistence off, and stopped by
# its PID when the script exits.  SERVER_PID is empty for an external server.
# The tests FLUSHALL the target: never point them at a server holding data.
#   RCUKV_TEST_PORT=7000 tests/client/test_bench.sh    # e.g. a running rcukv-server
#
# Counting: ok NAME / fail NAME WHY / skip NAME WHY (a check that cannot be
# made here: printed and counted as skipped, never as passed); finish prints
# 'N passed, M failed, K skipped' and exits non-zero on any failure.

set -u
# counters (ok/bad/skip/check/summary), scratch directory, stop_pid
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
CLI=${RCUKV_CLI:-${B:-build/release}/rcukv-cli}
case $CLI in /*) ;; *) CLI=$PWD/$CLI ;; esac
HOST=${RCUKV_TEST_HOST:-127.0.0.1}
PORT=${RCUKV_TEST_PORT:-}
SERVER_PID=
scratch_init cli-test
TMP=$tmp
at_exit stop_redis

# fail NAME [WHY]: a failed check, with the reason after a colon
fail() { bad "$1${2:+: $2}"; }

# start_redis PORT [extra args]: start redis-server, wait until it is ready.
# Returns non-zero if it could not listen (port taken).
start_redis() {
	local port=$1; shift
	local log=$TMP/redis-$port.log
	: >"$log"
	redis-server --save '' --appendonly no --port "$port" --bind 127.0.0.1 \
		--enable-debug-command yes "$@" >"$log" 2>&1 &
	SERVER_PID=$!
	for _ in $(seq 1 100); do
		if grep -q "Ready to accept connections" "$log"; then return 0; fi
		if ! kill -0 "$SERVER_PID" 2>/dev/null; then SERVER_PID=; return 1; fi
		sleep 0.05
	done
	stop_redis
	return 1
}

stop_redis() {
	stop_pid "$SERVER_PID"
	SERVER_PID=
}

# pick_and_start: choose a free port in 7100-7199 and start redis there.
pick_and_start() {
	local base=$((7100 + $$ % 100)) i port
	for i in $(seq 0 99); do
		port=$((7100 + (base - 7100 + i) % 100))
		# Skip ports someone already listens on.
		if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then continue; fi
		if start_redis "$port" "$@"; then PORT=$port; return 0; fi
	done
	return 1
}

setup_target() {
	if [ -z "$PORT" ]; then
		if ! command -v redis-server >/dev/null; then
			bad "redis-server not installed (make deps)"; finish
		fi
		if ! pick_and_start; then
			bad "could not start redis-server on any port in 7100-7199"; finish
		fi
		echo "# started redis-server pid $SERVER_PID on $HOST:$PORT"
	else
		echo "# testing against $HOST:$PORT"
	fi
	if [ ! -x "$CLI" ]; then
		bad "rcukv-cli not built at $CLI"; finish
	fi
}

# finish: the closing line; exits 1 on any failure
finish() {
	summary
	exit $?
}
