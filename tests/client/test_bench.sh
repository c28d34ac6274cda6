#!/usr/bin/env bash
# tests/client/test_bench.sh: "rcukv-cli bench" against a real server.
#
# Each figure is checked from the server side (INFO commandstats, DBSIZE,
# key contents) rather than trusted from the generator's own report: request
# counts, the GET:SET ratio, key space and patterns, value sizes, command
# templates, pipelining, hits and misses, error counting.  Outputs: --json,
# --hdr (HdrHistogram text), --svg and --svg-compare parsed by xmllint.
# Coordinated omission: the server is stopped (SIGSTOP) for about 300 ms in
# the middle of an open-loop and of a closed-loop run; the open-loop p99 must
# show the stall and the closed-loop p99 must not; the test asserts on the
# ratio of the two, never on an absolute time.  Faults: unreachable server,
# refused AUTH, bad flags, server killed mid-run.
#
# Target: RCUKV_TEST_HOST/RCUKV_TEST_PORT, or a redis-server started here on
# 7100-7199 (see lib.sh).  The stall and kill tests need a server started
# here and are skipped otherwise.  Ends with 'N passed, M failed, K skipped'.
cd "$(dirname "$0")/../.." || exit 1
. tests/client/lib.sh
setup_target

R() { redis-cli -h "$HOST" -p "$PORT" "$@"; }
B() { timeout 60 "$CLI" -h "$HOST" -p "$PORT" bench -q "$@"; }
# stat_calls CMD: calls of one command (INFO commandstats), 0 if none.
stat_calls() {
	local n
	n=$(R info commandstats | tr -d '\r' | sed -n "s/^cmdstat_$1:calls=\([0-9]*\),.*/\1/p")
	echo "${n:-0}"
}
# server_calls: commands the server ran since fresh(), less this INFO itself
# (INFO stats is all a server needs for it; rcukv-server has no commandstats yet).
server_calls() {
	local n
	n=$(R info stats | tr -d '\r' | sed -n 's/^total_commands_processed:\([0-9]*\)/\1/p')
	echo $(( ${n:-0} - 1 ))
}
R ping >/dev/null  # so that commandstats has a line if the server keeps them
HAS_CMDSTATS=$(R info commandstats | grep -c "^cmdstat_")
[ "$HAS_CMDSTATS" -gt 0 ] || skip "per-command splits: the server has no INFO commandstats (totals checked)"
fresh() { R flushall >/dev/null; R config resetstat >/dev/null; }
# jnum FILE KEY: the first number after "KEY": in a --json file.
jnum() { grep -o "\"$2\": [-0-9.e+]*" "$1" | head -1 | sed 's/.*: //'; }
# jlat FILE PCT: the top-level latency figure (the last "latency_us" object).
jlat() { grep -o '"latency_us": {[^}]*}' "$1" | tail -1 | grep -o "\"$2\": [0-9]*" | sed 's/.*: //'; }

# ---- counts and ratio ----
fresh
B -t 2 -c 2 --requests 4000 --ratio 1:3 >"$TMP/out" || fail "run 1"
check "requests: the server ran 4000 commands" '[ "$(server_calls)" = 4000 ]'
if [ "$HAS_CMDSTATS" -gt 0 ]; then
	check "requests: GET calls = 1000 (ratio 1:3 of 4000)" '[ "$(stat_calls get)" = 1000 ]'
	check "requests: SET calls = 3000" '[ "$(stat_calls set)" = 3000 ]'
fi
check "report names the requests" 'grep -q "^requests     4000 (GET 1000, SET 3000)" "$TMP/out"'

fresh
B -t 2 -c 3 --rate 10000 --requests 3000 >/dev/null
check "open loop with --requests: the server ran exactly 3000" '[ "$(server_calls)" = 3000 ]'

fresh
B -t 2 -c 3 -P 16 --requests 4800 --ratio 0:1 >/dev/null
check "pipeline 16: every request reached the server" '[ "$(server_calls)" = 4800 ]'

# ---- key space ----
fresh
B --ratio 0:1 --key-pattern sequential --keys 700 --requests 2100 --key-prefix kp: >/dev/null
check "sequential: DBSIZE = --keys" '[ "$(R dbsize)" = 700 ]'
check "sequential: first and last key exist" '[ "$(R exists kp:0 kp:699 kp:700)" = 2 ]'
fresh
B --ratio 0:1 --key-pattern uniform --keys 50 --requests 2000 >/dev/null
check "uniform: key space bounded by --keys" '[ "$(R dbsize)" -le 50 -a "$(R dbsize)" -ge 45 ]'
fresh
B --ratio 0:1 --key-pattern zipf --zipf-s 1.2 --keys 100000 --requests 2000 >/dev/null
n=$(R dbsize)
check "zipf: skewed (far fewer distinct keys than requests: $n)" '[ "$n" -lt 1500 ]'
check "zipf: the hottest key exists" '[ "$(R exists key:0)" = 1 ]'

# Distributions, counted by the server: INCR per request on the chosen key.
fresh
B --command "INCR __key__" --key-prefix c: --key-pattern zipf --zipf-s 1 --keys 100 --requests 20000 >/dev/null
c0=$(R get c:0); c1=$(R get c:1); c2=$(R get c:2)
echo "# zipf s=1 over 100 keys, 20000 requests: c:0=$c0 c:1=$c1 c:2=$c2 (expected about 3856 1928 1285)"
check "zipf s=1: rank 1 twice as frequent as rank 2 (1.7..2.3)" \
	'awk -v a="$c0" -v b="$c1" "BEGIN { r = a / b; exit !(r > 1.7 && r < 2.3) }"'
check "zipf s=1: rank 1 three times as frequent as rank 3 (2.5..3.5)" \
	'awk -v a="$c0" -v b="$c2" "BEGIN { r = a / b; exit !(r > 2.5 && r < 3.5) }"'
fresh
B --command "INCR __key__" --key-prefix u: --key-pattern uniform --keys 10 --requests 10000 >/dev/null
counts=$(for i in $(seq 0 9); do echo "get u:$i"; done | R | sort -n | tr '\n' ' ')
echo "# uniform over 10 keys, 10000 requests: $counts"
check "uniform: every key within 800..1200 of 10000/10" \
	'(for c in $counts; do [ "$c" -ge 800 ] && [ "$c" -le 1200 ] || exit 1; done)'

# ---- values ----
fresh
B --ratio 0:1 --key-pattern sequential --keys 5 --requests 5 --data-size 100 >/dev/null
check "data-size fixed" '[ "$(R strlen key:4)" = 100 ]'
fresh
B --ratio 0:1 --key-pattern sequential --keys 200 --requests 200 --data-size 10-20 >/dev/null
lens=$(for i in $(seq 0 199); do echo "strlen key:$i"; done | R | sort -n | uniq)
check "data-size range: lengths within 10..20" '[ "$(echo "$lens" | head -1)" -ge 10 -a "$(echo "$lens" | tail -1)" -le 20 ]'
check "data-size range: lengths vary" '[ "$(echo "$lens" | wc -l)" -gt 3 ]'

# ---- command template ----
fresh
B --command "SET t:__key__ v" --key-pattern sequential --keys 500 --requests 500 --key-prefix m >"$TMP/out"
check "command template: the server ran 500 commands" '[ "$(server_calls)" = 500 ]'
check "command template: 500 keys" '[ "$(R dbsize)" = 500 ]'
check "command template: __key__ replaced" '[ "$(R exists t:m0 t:m499)" = 2 ]'
check "command template: named in the report" 'grep -q "^requests     500 (SET 500)" "$TMP/out"'
fresh
B --command "SET h:__key__ x__data__y" --keys 1 --requests 10 --data-size 3 >/dev/null
check "command template: __data__ replaced inside an argument" '[ "$(R get h:key:0)" = xabcy ]'

# ---- hits, misses, errors, JSON ----
fresh
for i in $(seq 0 99); do echo "set key:$i v"; done | R >/dev/null
R config resetstat >/dev/null
B --ratio 1:0 --keys 200 --key-pattern sequential --requests 200 --json "$TMP/hm.json" >"$TMP/out"
check "hits counted (JSON)" '[ "$(jnum "$TMP/hm.json" hits)" = 100 ]'
check "misses counted (JSON)" '[ "$(jnum "$TMP/hm.json" misses)" = 100 ]'
check "hits/misses in the report" 'grep -q "GET 100 hits, 100 misses" "$TMP/out"'
check "JSON requests = server calls" '[ "$(jnum "$TMP/hm.json" requests)" = "$(server_calls)" ]'
B -3 --ratio 1:0 --keys 200 --key-pattern sequential --requests 200 --json "$TMP/hm3.json" >/dev/null
check "RESP3: hits and misses" '[ "$(jnum "$TMP/hm3.json" hits)" = 100 -a "$(jnum "$TMP/hm3.json" misses)" = 100 ]'
R set str abc >/dev/null
B --command "INCR str" --requests 50 --json "$TMP/err.json" >"$TMP/out"; rc=$?
check "error replies: the run completes (exit 0)" '[ $rc = 0 ]'
check "error replies: counted by type" 'grep -q "\"ERR\": 50" "$TMP/err.json"'
check "error replies: in the report" 'grep -q "errors       50 (ERR 50)" "$TMP/out"'

# ---- duration, warmup, outputs ----
fresh
B -c 2 --duration 0.4 --json "$TMP/d.json" --hdr "$TMP/d.hdr" --svg "$TMP/d.svg" --label "dur run" >/dev/null
n=$(server_calls)
check "duration: JSON requests = server calls ($n)" '[ "$(jnum "$TMP/d.json" requests)" = "$n" -a "$n" -gt 0 ]'
check "SVG is well-formed (xmllint)" 'xmllint --noout "$TMP/d.svg"'
check "SVG has both panels" '[ "$(grep -c "<polyline" "$TMP/d.svg")" = 2 ]'
check "HDR: header" 'grep -q "Value     Percentile TotalCount 1/(1-Percentile)" "$TMP/d.hdr"'
check "HDR: footer total count" 'grep -q "Total count    = *$n\]" "$TMP/d.hdr"'
# Rows whose value repeats the previous row's are not printed, so the p50 is
# the value of the last row at or below percentile 0.5.
hp50=$(awk 'NF == 4 && $2 ~ /^[0-9.]+$/ && $2 + 0 <= 0.5 {v = $1} END {print v}' "$TMP/d.hdr")
jp50=$(awk -v v="$(jlat "$TMP/d.json" p50)" 'BEGIN {printf "%.3f", v / 1000}')
check "HDR: p50 row = JSON p50 ($hp50 ms)" '[ -n "$hp50" -a "$hp50" = "$jp50" ]'
check "HDR: last row at percentile 1.0" 'grep -v "^#" "$TMP/d.hdr" | tail -1 | grep -q " 1.000000000000 "'
fresh
B -c 1 --warmup 0.3 --duration 0.3 --json "$TMP/w.json" >/dev/null
n=$(server_calls)
check "warmup: not counted in the report" '[ "$(jnum "$TMP/w.json" requests)" -lt "$n" ]'

# ---- faults and flags ----
# The server closes every connection mid-run: counted errors, reconnection, the run goes on.
fresh
B -c 2 --duration 1 --json "$TMP/kill.json" >/dev/null &
bp=$!
sleep 0.4
R client kill type normal >/dev/null
wait $bp; rc=$?
check "connections killed mid-run: run completes (exit 0)" '[ $rc = 0 ]'
check "connections killed mid-run: in-flight requests counted as connection errors" \
	'grep -q "\"connection\": [1-9]" "$TMP/kill.json"'
conns=$(R info stats | tr -d '\r' | sed -n 's/^total_connections_received:\([0-9]*\)/\1/p')
check "connections killed mid-run: the generator reconnected ($conns connections)" '[ "${conns:-0}" -ge 6 ]'

"$CLI" -h 127.0.0.1 -p 1 bench -q --requests 10 >/dev/null 2>"$TMP/e"; rc=$?
check "unreachable: exit 1 with a message" '[ "$rc" = 1 ] && grep -q "Could not connect" "$TMP/e"'
"$CLI" -h "$HOST" -p "$PORT" -a wrongpass bench -q --requests 10 >/dev/null 2>"$TMP/e"; rc=$?
check "refused AUTH: exit 1 with the server's error" '[ "$rc" = 1 ] && grep -q "AUTH failed" "$TMP/e"'
for bad in "--threads 0" "--ratio x" "--key-pattern foo" "--data-size 9-3" "--bogus" "--requests" \
           "--requests 5 --duration 1" "--rate -1" "--command \"\""; do
	eval "B $bad" >/dev/null 2>"$TMP/e"; rc=$?
	check "bad flag '$bad': exit 1 with a message" '[ "$rc" = 1 ] && [ -s "$TMP/e" ]'
done
B --svg-compare "$TMP/d.json" "$TMP/nonexistent.json" >/dev/null 2>&1; rc=$?
check "svg-compare: missing file is an error" '[ "$rc" = 1 ]'

# ---- coordinated omission: stall the server under open and closed loop ----
if [ -n "$SERVER_PID" ]; then
	stall_run() { # stall_run JSON ARGS...: SIGSTOP the server ~300 ms, 0.5 s into a 1.5 s run
		local json=$1; shift
		B -c 1 --duration 1.5 --json "$json" "$@" >"$json.txt" &
		local bp=$!
		sleep 0.5
		kill -STOP "$SERVER_PID"; sleep 0.3; kill -CONT "$SERVER_PID"
		wait $bp
	}
	fresh
	stall_run "$TMP/open.json" --rate 2000 --label "open loop 2000/s"
	stall_run "$TMP/closed.json" --label "closed loop"
	op99=$(jlat "$TMP/open.json" p99); cp99=$(jlat "$TMP/closed.json" p99)
	omax=$(jlat "$TMP/open.json" max); cmax=$(jlat "$TMP/closed.json" max)
	echo "# stall: open loop p99 ${op99} us max ${omax} us; closed loop p99 ${cp99} us max ${cmax} us"
	check "stall: open-loop p99 shows it, closed-loop p99 hides it (>= 10x)" '[ "$op99" -ge $((10 * cp99)) ]'
	check "stall: both runs saw the stall in their max" '[ "$omax" -ge $((10 * cp99)) -a "$cmax" -ge $((10 * cp99)) ]'
	check "stall: open-loop p99.9 >= closed-loop p99.9" '[ "$(jlat "$TMP/open.json" p99.9)" -ge "$(jlat "$TMP/closed.json" p99.9)" ]'
	B --svg-compare "$TMP/open.json" "$TMP/closed.json" --svg "$TMP/cmp.svg"
	check "svg-compare: well-formed" 'xmllint --noout "$TMP/cmp.svg"'
	check "svg-compare: both runs drawn" 'grep -q "open loop 2000/s" "$TMP/cmp.svg" && grep -q "closed loop" "$TMP/cmp.svg" && [ "$(grep -c "<polyline" "$TMP/cmp.svg")" = 4 ]'

	# Server killed mid-run (open loop; the closed loop case is in test_client.c):
	# counted errors, reconnection attempts, then a clear exit 1 within --timeout.
	B -c 2 --rate 2000 --duration 3 --timeout 0.5 >"$TMP/out" 2>"$TMP/e" &
	bp=$!
	sleep 0.3
	stop_redis
	wait $bp; rc=$?
	check "server killed mid-run: exit 1" '[ $rc = 1 ]'
	check "server killed mid-run: says so" 'grep -q "connection.*lost" "$TMP/e"'
else
	skip "stall and kill tests: they need a server this script starts"
fi

finish
