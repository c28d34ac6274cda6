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
CLI=${RCUKV_CLI:-${B:-build/release}/rcukv-cli}
case $CLI in /*) ;; *) CLI=$PWD/$CLI ;; esac
PASS=0
FAIL=0
SKIP=0
HOST=${RCUKV_TEST_HOST:-127.0.0.1}
PORT=${RCUKV_TEST_PORT:-}
SERVER_PID=
TMP=$(mktemp -d /tmp/rcukv-cli-test.XXXXXX)

ok() { PASS=$((PASS + 1)); echo "ok   $1"; }
fail() { FAIL=$((FAIL + 1)); echo "FAIL $1${2:+: $2}"; }
skip() { SKIP=$((SKIP + 1)); echo "SKIP $1${2:+: $2}"; }
# check NAME 'EXPR': EXPR is ONE string, evaluated whole (eval), so every part
# of a compound condition is checked:
#   check "exit 1, said so" '[ "$rc" = 1 ] && grep -q usage "$TMP/e"'
# Anything else after NAME is refused as a failure: the old form
#   check "exit 1, said so" [ "$rc" = 1 ] && grep -q usage "$TMP/e"
# ran check on the first test only and evaluated the second outside it
# (issue 14), and now arrives here as several words.  Returns EXPR's status.
check() {
	if [ $# -ne 2 ]; then
		fail "$1" "check takes one quoted expression; got $(($# - 1)) words: ${*:2}"
		return 1
	fi
	if eval "$2"; then ok "$1"; else fail "$1"; return 1; fi
}

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
	if [ -n "$SERVER_PID" ]; then
		kill -CONT "$SERVER_PID" 2>/dev/null
		kill "$SERVER_PID" 2>/dev/null
		# Poll rather than wait: a subshell cannot wait for its parent's child.
		for _ in $(seq 1 200); do
			kill -0 "$SERVER_PID" 2>/dev/null || break
			sleep 0.02
		done
		wait "$SERVER_PID" 2>/dev/null
		SERVER_PID=
	fi
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

cleanup() { stop_redis; rm -rf "$TMP"; }
trap cleanup EXIT

setup_target() {
	if [ -z "$PORT" ]; then
		if ! command -v redis-server >/dev/null; then
			echo "redis-server not installed (make deps)"; echo "0 passed, 1 failed"; exit 1
		fi
		if ! pick_and_start; then
			echo "could not start redis-server on any port in 7100-7199"
			echo "0 passed, 1 failed"; exit 1
		fi
		echo "# started redis-server pid $SERVER_PID on $HOST:$PORT"
	else
		echo "# testing against $HOST:$PORT"
	fi
	if [ ! -x "$CLI" ]; then
		echo "rcukv-cli not built at $CLI"; echo "0 passed, 1 failed"; exit 1
	fi
}

finish() {
	echo "$PASS passed, $FAIL failed, $SKIP skipped"
	[ "$FAIL" = 0 ]
	exit $?
}
