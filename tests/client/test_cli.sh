#!/usr/bin/env bash
# tests/client/test_cli.sh: rcukv-cli command, line and interactive modes,
# compared byte for byte with the real redis-cli against the same server.
#
# Comparisons run with stdout a pipe (raw form) and with --no-raw (terminal
# form); a sample of every reply type also runs with stdout a terminal (under
# script(1)), as redis-cli prints differently in each case.  RESP3 replies come from DEBUG PROTOCOL when the server
# has it (redis-server is started with enable-debug-command).
#
# Target: RCUKV_TEST_HOST/RCUKV_TEST_PORT, or a redis-server started here on
# 7100-7199 (see lib.sh).  Ends with 'N passed, M failed, K skipped'.
cd "$(dirname "$0")/../.." || exit 1
. tests/client/lib.sh

SOCK=
if [ -z "${RCUKV_TEST_PORT:-}" ]; then
	setup_sock=$TMP/redis.sock
	if pick_and_start --unixsocket "$setup_sock" --unixsocketperm 700; then
		SOCK=$setup_sock
		echo "# started redis-server pid $SERVER_PID on $HOST:$PORT"
	fi
fi
setup_target

R() { redis-cli -h "$HOST" -p "$PORT" "$@"; }
C() { "$CLI" -h "$HOST" -p "$PORT" "$@"; }

# Run one client on a pseudo-terminal; stdout and stderr both land in the output.
on_tty() {
	script -qec "$(printf '%q ' "$@")" /dev/null </dev/null
}

# same NAME ARGS...: stdout of rcukv-cli and redis-cli must match, raw and formatted.
# same_tty NAME ARGS...: the same, and also with stdout a terminal (slower: script(1)),
# used for a sample of each reply type since the terminal form is the --no-raw form
# except for push messages.
same() { MODES="pipe no-raw" compare "$@"; }
same_tty() { MODES="pipe no-raw tty" compare "$@"; }
compare() {
	local name=$1; shift
	local mode
	for mode in $MODES; do
		case $mode in
		pipe)   C "$@" >"$TMP/a" 2>/dev/null; R "$@" >"$TMP/b" 2>/dev/null ;;
		no-raw) C --no-raw "$@" >"$TMP/a" 2>/dev/null; R --no-raw "$@" >"$TMP/b" 2>/dev/null ;;
		tty)    on_tty "$CLI" -h "$HOST" -p "$PORT" "$@" >"$TMP/a"
		        on_tty redis-cli -h "$HOST" -p "$PORT" "$@" >"$TMP/b" ;;
		esac
		if cmp -s "$TMP/a" "$TMP/b"; then
			ok "$name [$mode]"
		else
			fail "$name [$mode]" "output differs"
			diff "$TMP/a" "$TMP/b" | head -10 | sed 's/^/    /'
		fi
	done
}

# ---- data ----
R flushall >/dev/null
R set s "hello world" >/dev/null
printf 'a\001\002"\\\n\tb\r\x7f\xff' | R -x set bin >/dev/null
R rpush l a b c d e f g h i j k 1 2 >/dev/null
R hset h f1 v1 f2 "v 2" f3 3 >/dev/null
R sadd st x y z >/dev/null
R zadd z 1 a 2.5 b >/dev/null
R xadd xs 1-1 k v >/dev/null
R xadd xs 2-1 k2 v2 k3 v3 >/dev/null
R set empty "" >/dev/null

for proto in -2 -3; do
	p=${proto#-}
	same "resp$p status" $proto set s2 "x"
	same_tty "resp$p string" $proto get s
	same "resp$p binary string" $proto get bin
	same "resp$p empty string" $proto get empty
	same_tty "resp$p nil" $proto get nokey
	same "resp$p integer" $proto exists s
	same "resp$p negative integer" $proto ttl s
	same_tty "resp$p error" $proto foo bar
	same "resp$p wrongtype" $proto lpush s x
	same_tty "resp$p array 13" $proto lrange l 0 -1
	same "resp$p empty array" $proto lrange nolist 0 -1
	same_tty "resp$p hash" $proto hgetall h
	same "resp$p empty hash" $proto hgetall nohash
	same "resp$p set" $proto smembers st
	same "resp$p empty set" $proto smembers noset
	same "resp$p zset scores" $proto zrange z 0 -1 withscores
	same "resp$p zscore" $proto zscore z b
	same "resp$p nested stream" $proto xrange xs - +
	same "resp$p config map" $proto config get maxmemory*
	same_tty "resp$p nested eval" $proto eval "return {1,{2,{3,'x'}},'a',{}}" 0
	same_tty "resp$p error in array" $proto eval "return {1,redis.error_reply('bad'),2}" 0
	same "resp$p status from eval" $proto eval "return redis.status_reply('FINE')" 0
	same "resp$p nil in array" $proto hmget h f1 nofield f2
	same "resp$p null array (blpop timeout)" $proto blpop nolist 0.01
	same "resp$p status in array" $proto eval "return {redis.status_reply('FINE'), 'x'}" 0
	same "resp$p multiline" $proto echo "two
lines"
	same "resp$p deep nesting (command info)" $proto command info get set
	same "resp$p nested maps (command docs)" $proto command docs get
	same "resp$p stream info" $proto xinfo stream xs
	same "resp$p lua double and verbatim" $proto eval "return {{double=3.5}, {double=-0.25}, {verbatim_string={format='txt', string='v\nw'}}}" 0
	same "resp$p map values on one or several lines" $proto eval "return {map={a={1}, b={1,2}, c={}, d={map={x=1}}, e={set={y=true}}, f={map={x=1,y=2}}, g={set={y=true,z=true}}, h={{1,2}}, i={map={x={1,2}}}}}" 0
done

if [ "$(R debug protocol string 2>/dev/null)" = "Hello World" ]; then
	for t in string integer double null array set map push verbatim true false; do
		same "resp2 debug protocol $t" -2 debug protocol $t
		same_tty "resp3 debug protocol $t" -3 debug protocol $t
	done
	# Not compared: redis-cli 7.0 cannot print RESP3 big numbers or attributes.
	out=$(C -3 debug protocol bignum)
	check "resp3 big number (raw)" '[ "$out" = 1234567999999999999999999999999999999 ]'
	out=$(C --no-raw -3 debug protocol bignum)
	check "resp3 big number (formatted)" '[ "$out" = "(big number) 1234567999999999999999999999999999999" ]'
	out=$(C -3 debug protocol attrib)
	check "resp3 attribute skipped" '[ "$out" = "Some real reply following the attribute" ]'
else
	skip "RESP3 type matrix: the server has no DEBUG PROTOCOL"
fi

# ---- options ----
same "-n selects a db (set)" -n 3 set indb3 yes
same "-n selects a db (get)" -n 3 get indb3
same "db 0 unaffected" get indb3
same "-r repeat" -r 3 echo hi
same "-r -i repeat with interval" -r 2 -i 0.05 ping
C del xk >/dev/null
printf 'x\ny\n' | C -x set xk >/dev/null
same "-x reads the last argument" get xk
printf 'a b' | C -x hset xh f >/dev/null
same "-x after other args" hget xh f
a=$(C -a wrong ping 2>"$TMP/ce"); b=$(R -a wrong ping 2>"$TMP/re")
check "-a refused: same stdout" '[ "$a" = "$b" ]'
check "-a refused: same stderr" 'cmp -s "$TMP/ce" "$TMP/re"'
a=$(C -a wrong --no-auth-warning ping 2>&1); b=$(R -a wrong --no-auth-warning ping 2>&1)
check "--no-auth-warning" '[ "$a" = "$b" ]'
a=$(C -n 99 ping 2>&1); b=$(R -n 99 ping 2>&1)
check "-n out of range reported as redis-cli does" '[ "$a" = "$b" ]'
same "-u URI with a database" -u "redis://$HOST:$PORT/3" get indb3
out=$("$CLI" -u "redis://:wrong%21@$HOST:$PORT" ping 2>&1)
check "-u URI with a password (decoded, refused)" 'grep -q "AUTH failed" <<<"$out" && grep -q PONG <<<"$out"'
"$CLI" -u "http://x" ping >/dev/null 2>&1; rc=$?; check "-u bad URI: exit 1" '[ "$rc" = 1 ]'
if [ -n "$SOCK" ]; then
	out=$("$CLI" -s "$SOCK" ping)
	check "-s unix socket" '[ "$out" = PONG ]'
fi
check "--raw on a terminal" '[ "$(script -qec "$CLI -h $HOST -p $PORT --raw get s" /dev/null | tr -d "\r")" = "hello world" ]'

# ---- streaming: SUBSCRIBE prints messages until interrupted ----
publish_once() { # publish until one subscriber got it (bounded)
	for _ in $(seq 1 100); do
		[ "$(R publish chan hello)" = 1 ] && return 0
		sleep 0.02
	done
}
subscribe_run() { # subscribe_run OUT CLIENT...: subscribe, receive one message, stop
	local out=$1; shift
	"$@" -h "$HOST" -p "$PORT" --no-raw $proto subscribe chan >"$out" 2>/dev/null &
	local sp=$!
	publish_once
	sleep 0.2
	kill $sp 2>/dev/null
	wait $sp 2>/dev/null
}
for proto in -2 -3; do
	subscribe_run "$TMP/a" "$CLI"
	subscribe_run "$TMP/b" redis-cli
	check "subscribe ${proto#-}: messages as redis-cli prints them" 'cmp -s "$TMP/a" "$TMP/b"'
done

# ---- exit codes and messages ----
C get s >/dev/null; rc=$?; check "exit 0 on success" '[ "$rc" = 0 ]'
C foo >/dev/null; rc=$?; check "exit 1 on an error reply" '[ "$rc" = 1 ]'
C -r 3 foo >/dev/null; rc=$?; check "exit 1 when a repeat got an error" '[ "$rc" = 1 ]'
"$CLI" -h 127.0.0.1 -p 1 ping >/dev/null 2>"$TMP/e"; rc=$?
check "exit 1 when unreachable" '[ $rc = 1 ]'
check "unreachable: redis-cli's message" 'grep -q "Could not connect to Redis at 127.0.0.1:1: Connection refused" "$TMP/e"'
"$CLI" --bogus >/dev/null 2>"$TMP/e"; rc=$?
check "bad option: exit 1" '[ $rc = 1 ]'
check "bad option: usage on stderr" 'grep -q "Usage: rcukv-cli" "$TMP/e"'
"$CLI" -p notaport ping >/dev/null 2>"$TMP/e"; rc=$?
check "bad port: exit 1 with a message" '[ "$rc" = 1 ] && grep -q notaport "$TMP/e"'
"$CLI" -p >/dev/null 2>&1; rc=$?; check "missing option value: exit 1" '[ "$rc" = 1 ]'
"$CLI" --help >"$TMP/h"; rc=$?
check "--help exits 0" '[ $rc = 0 ]'
missing=
for f in -h -p -s -u -a --user --pass --no-auth-warning -n -2 -3 -r -i -x -t --raw --no-raw -e --help --version; do
	grep -q -- " $f[ ,]" "$TMP/h" || missing="$missing $f"
done
check "--help documents every flag${missing:+ (missing:$missing)}" '[ -z "$missing" ]'
"$CLI" bench --help >"$TMP/bh"; rc=$?
missing=
for f in --threads --clients --pipeline --requests --duration --warmup --rate --ratio --keys \
         --key-pattern --zipf-s --data-size --key-prefix --command --json --hdr --svg \
         --svg-compare --label --quiet --timeout; do
	grep -q -- "$f" "$TMP/bh" || missing="$missing $f"
done
check "bench --help documents every flag${missing:+ (missing:$missing)}" '[ $rc = 0 -a -z "$missing" ]'

# ---- line mode: commands from a pipe, redis-cli quoting ----
cat >"$TMP/lines" <<'L'
set q1 "a\x41\n\t\"b\""
get q1
set q2 'it\'s'
get q2
set q3 'it\x27s'
get q3
set q4 "ab"c
set q5 "unbalanced

   get    s
hset qh "two words" 'v v'
hgetall qh
set q6 ""
get q6
strlen q6
L
R del qh >/dev/null; C <"$TMP/lines" >"$TMP/a" 2>&1
R del qh >/dev/null; R <"$TMP/lines" >"$TMP/b" 2>&1
if cmp -s "$TMP/a" "$TMP/b"; then ok "line mode quoting (pipe)"; else fail "line mode quoting (pipe)"; diff "$TMP/a" "$TMP/b" | head; fi
R del qh >/dev/null; C --no-raw <"$TMP/lines" >"$TMP/a" 2>&1
R del qh >/dev/null; R --no-raw <"$TMP/lines" >"$TMP/b" 2>&1
if cmp -s "$TMP/a" "$TMP/b"; then ok "line mode quoting (--no-raw)"; else fail "line mode quoting (--no-raw)"; diff "$TMP/a" "$TMP/b" | head; fi
out=$(printf 'ping\nquit\nping\n' | C)
check "line mode: quit stops" '[ "$out" = PONG ]'
out=$(printf 'connect 127.0.0.1 1\nconnect %s %s\nget s\n' "$HOST" "$PORT" | "$CLI" -h "$HOST" -p "$PORT" 2>"$TMP/e")
check "line mode: connect switches server" '[ "$out" = "hello world" ]'
check "line mode: connect to a dead port says so" 'grep -q "Could not connect to Redis at 127.0.0.1:1" "$TMP/e"'

# ---- interactive mode (a pseudo-terminal, libedit) ----
export RCUKVCLI_HISTFILE=$TMP/hist
printf 'set ik "a b"\nget ik\nquit\n' | script -qec "$CLI -h $HOST -p $PORT" /dev/null >"$TMP/i" 2>&1
tr -d '\r' <"$TMP/i" >"$TMP/i2"
check "interactive: prompt host:port>" 'grep -q "$HOST:$PORT> " "$TMP/i2"'
check "interactive: quoted argument" 'grep -q "^\"a b\"\$" "$TMP/i2"'
check "interactive: history written" 'grep -q "get.*ik" "$TMP/hist"'
if [ "$(R select 2)" = OK ]; then  # rcukv-server has one database
	printf 'select 2\nping\nquit\n' | script -qec "$CLI -h $HOST -p $PORT" /dev/null >"$TMP/i" 2>&1
	check "interactive: prompt shows the db" 'grep -q "$HOST:$PORT\[2\]> " "$TMP/i"'
fi
if [ -n "$SERVER_PID" ]; then
	# Reconnect: restart the server between two commands of one session.
	(
		printf 'set before 1\n'; sleep 0.5
		stop_redis
		start_redis "$PORT" >/dev/null
		echo "$SERVER_PID" >"$TMP/newpid"
		printf 'set after 2\n'; sleep 0.5
		printf 'get after\n'; sleep 0.3
		printf 'quit\n'
	) | script -qec "$CLI -h $HOST -p $PORT" /dev/null >"$TMP/i" 2>&1
	SERVER_PID=$(cat "$TMP/newpid" 2>/dev/null)
	tr -d '\r' <"$TMP/i" >"$TMP/i2"
	check "interactive: reconnects after a server restart" 'grep -q "^\"2\"\$" "$TMP/i2"'
	check "interactive: server restarted (new pid)" '[ -n "$SERVER_PID" ]'
fi

if [ -n "$SERVER_PID" ]; then
	C shutdown nosave >"$TMP/o" 2>"$TMP/e"; rc=$?
	check "shutdown: exit 0, silent, as redis-cli" '[ "$rc" = 0 ] && [ ! -s "$TMP/o" ] && [ ! -s "$TMP/e" ]'
	for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.02; done
	check "shutdown: the server is gone" '! kill -0 "$SERVER_PID" 2>/dev/null'
fi

finish
