#!/usr/bin/env bash
# tests/server/test_startup.sh - how rcukv-server refuses to start, against
# what redis-server 7.0 prints in the same situation (recorded here, at test
# time, from the real redis-server; skipped when there is none):
#   - a port already in use: Redis's two log lines, exit 1, the holder of
#     the port untouched;
#   - configuration errors (file and command line): the FATAL banner, the
#     offending line as Redis quotes it, Redis's reason in the message, exit 1.
# Ports 7730-7749.
set -u
cd "$(dirname "$0")/../.."
B=${B:-build/release}
SRV=$B/rcukv-server
case $SRV in /*) ;; *) SRV=$PWD/$SRV ;; esac
PORT_LAST=7749
# counters, ok/bad/skip/check/summary, free_port
. "$(dirname "$0")/../../scripts/lib.sh"

scratch_init startup
holder=""
at_exit '[ -n "$holder" ] && kill "$holder" 2>/dev/null'

# Log lines without Redis's "pid:role dd Mon yyyy hh:mm:ss.mmm " prefix.
strip() { sed -E 's/^[0-9]+:[A-Z] [0-9]+ [A-Za-z]+ [0-9]+ [0-9:.]+ //' "$1"; }

have_redis=1
command -v redis-server >/dev/null || have_redis=0

# --- a port in use -----------------------------------------------------------
port=$(free_port 7730)
python3 - "$port" <<'EOF' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
time.sleep(60)
EOF
holder=$!
for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
(cd "$tmp" && timeout 20 "$SRV" --bind 127.0.0.1 --port "$port" --save "") >"$tmp/rcukv.log" 2>&1
rc=$?
check "port in use: rcukv-server exits 1 (got $rc)" '[ "$rc" = 1 ]'
check "port in use: the listener holding it is untouched" 'kill -0 "$holder" 2>/dev/null'
if [ "$have_redis" = 1 ]; then
	(cd "$tmp" && timeout 20 redis-server --bind 127.0.0.1 --port "$port" --save "") >"$tmp/redis.log" 2>&1
	rrc=$?
	check "port in use: redis-server exits 1 too (got $rrc)" '[ "$rrc" = 1 ]'
	strip "$tmp/redis.log" | grep -E 'listening socket|Failed listening' >"$tmp/redis.lines"
	strip "$tmp/rcukv.log" | grep -E 'listening socket|Failed listening' >"$tmp/rcukv.lines"
	check "port in use: redis-server printed its two lines ($(wc -l <"$tmp/redis.lines"))" \
		'[ "$(wc -l <"$tmp/redis.lines")" = 2 ]'
	if cmp -s "$tmp/redis.lines" "$tmp/rcukv.lines"; then
		ok "port in use: rcukv logs redis-server's lines: $(head -n 1 "$tmp/rcukv.lines")"
	else
		bad "port in use: rcukv's lines differ from redis-server's"
		diff "$tmp/redis.lines" "$tmp/rcukv.lines" | sed 's/^/    | /'
	fi
else
	skip "port in use: no redis-server to compare the log lines with"
fi
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
holder=""

# --- configuration errors ------------------------------------------------------
# conf_case NAME 'file contents' [command-line options...]
conf_case() {
	local name=$1 text=$2 rc rrc reason quoted
	shift 2
	printf '%b' "$text" >"$tmp/$name.conf"
	timeout 20 "$SRV" "$tmp/$name.conf" "$@" >"$tmp/$name.rcukv" 2>&1
	rc=$?
	check "$name: rcukv-server exits 1 (got $rc)" '[ "$rc" = 1 ]'
	check "$name: the FATAL CONFIG FILE ERROR banner" \
		"grep -q '^\*\*\* FATAL CONFIG FILE ERROR' '$tmp/$name.rcukv'"
	if [ "$have_redis" = 0 ]; then
		skip "$name: no redis-server to compare the message with"
		return
	fi
	timeout 20 redis-server "$tmp/$name.conf" "$@" >"$tmp/$name.redis" 2>&1
	rrc=$?
	check "$name: redis-server exits 1 too (got $rrc)" '[ "$rrc" = 1 ]'
	# Redis's last two lines: ">>> 'the line'" and the reason.
	quoted=$(grep '^>>> ' "$tmp/$name.redis" | head -n 1)
	reason=$(grep -A1 '^>>> ' "$tmp/$name.redis" | tail -n 1)
	check "$name: rcukv quotes the line as Redis does ($quoted)" \
		'[ -n "$quoted" ] && grep -qxF -- "$quoted" "$tmp/$name.rcukv"'
	check "$name: rcukv's message holds Redis's reason ($reason)" \
		'[ -n "$reason" ] && grep -A1 "^>>> " "$tmp/$name.rcukv" | tail -n 1 | grep -qF -- "$reason"'
}
conf_case not_a_number 'bind 127.0.0.1\nport abc\n'
conf_case unknown_option 'nosuchopt 1\n'
conf_case out_of_range 'bind 127.0.0.1\n' --port 99999
conf_case bad_enum 'maxmemory-policy sometimes\n'
conf_case bad_memory 'maxmemory 12q\n'
conf_case bad_bool 'protected-mode maybe\n'

summary
[ "$fail" = 0 ]
