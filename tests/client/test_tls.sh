#!/usr/bin/env bash
# tests/client/test_tls.sh: rcukv-cli --tls (issue 9) against rcukv-server's
# tls-port and, to show the client speaks TLS as Redis expects it, against
# redis-server 7's tls-port.
#
# Makes throwaway certificates with the openssl CLI in a temp dir (a CA, a
# server certificate for IP:127.0.0.1 and DNS:localhost, a client
# certificate, and a rogue self-signed CA), starts $B/rcukv-server (plain port
# + tls-port) and redis-server (plain port + tls-port), both with
# tls-auth-clients yes, on free loopback ports in 7100-7199, and for each:
#   - command mode: PING/SET/GET and formatted replies, byte for byte as
#     redis-cli --tls prints them; rediss:// URI; the certificate's DNS name
#     checked through --sni; a 3 MB value both ways;
#   - line mode (a pipe) and interactive mode (a pseudo-terminal);
#   - rcukv-cli bench over TLS: closed-loop pipelined GET/SET and big SETs
#     (partial non-blocking TLS writes) with zero errors, the server's command
#     count checked on its plain port; connections killed mid-run: reconnected;
#   - a certificate naming 127.0.0.1 by CN alone is accepted (as redis-cli
#     does), another address is not;
#   - failures, each with a non-zero exit and a clear message: wrong CA
#     (certificate verify failed), name mismatch (--sni), client certificate
#     required but missing, --tls against a plain port (bounded by -t), bad
#     --cacert path (redis-cli's text), --cert without --key, bench with a
#     wrong CA; and --insecure succeeds where verification would fail.
# Skipped (0 failed, saying why) without the openssl CLI or redis-server.
# Ends with 'N passed, M failed, K skipped'.
cd "$(dirname "$0")/../.." || exit 1
. tests/client/lib.sh
SRV=${B:-build/release}/rcukv-server
case $SRV in /*) ;; *) SRV=$PWD/$SRV ;; esac

if ! have_tools openssl redis-server redis-cli || ! redis-cli --help 2>&1 | grep -q -- '--tls'; then
	skip "needs the openssl CLI, redis-server and a redis-cli built with TLS"
	finish
fi
need_built "$CLI" "$SRV"

# ---- throwaway certificates (2 days): scripts/lib.sh's tls_certs ----
tls_certs "$TMP" || { fail "making certificates"; cat "$TMP/openssl.log"; finish; }
ok "throwaway CA, server (IP:127.0.0.1, DNS:localhost) and client certificates made"

used=" "
FREE=0
free_port() { # FREE=a loopback port in 7100-7199 nobody listens on, not handed out yet
	local p
	FREE=0
	for p in $(seq $((7100 + $$ % 50)) 7199) $(seq 7100 7199); do
		case $used in *" $p "*) continue ;; esac
		if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then
			used="$used$p "
			FREE=$p
			return
		fi
	done
}
SRVTLS=(--tls-cert-file "$TMP/server.crt" --tls-key-file "$TMP/server.key"
	--tls-ca-cert-file "$TMP/ca.crt" --tls-auth-clients yes)
CERTS=(--cacert "$TMP/ca.crt" --cert "$TMP/client.crt" --key "$TMP/client.key")
TLS=(--tls "${CERTS[@]}")

# suite NAME PLAIN_PORT TLS_PORT: every case against one server.
suite() {
	local name=$1 P=$2 TP=$3 out rc a b
	C() { timeout 30 "$CLI" -p "$TP" "${TLS[@]}" "$@"; }
	R() { timeout 30 redis-cli -p "$TP" "${TLS[@]}" "$@"; }
	RP() { redis-cli -p "$P" "$@"; }

	RP flushall >/dev/null
	out=$(C ping 2>&1)
	check "$name: PING over TLS ($out)" '[ "$out" = PONG ]'
	out=$(C set tk "tls value" 2>&1)
	check "$name: SET over TLS ($out)" '[ "$out" = OK ]'
	out=$(RP get tk)
	check "$name: the plain port sees the key written over TLS" '[ "$out" = "tls value" ]'
	C rpush tl a "b c" 1 >/dev/null
	for args in "get tk" "lrange tl 0 -1" "get nokey" "incr tk" "hello 3"; do
		# shellcheck disable=SC2086
		C --no-raw $args >"$TMP/a" 2>&1; R --no-raw $args >"$TMP/b" 2>&1
		if [ "$args" = "hello 3" ]; then # server name and version differ: compare the shape
			sed -i 's/"[^"]*"$/"."/; s/(integer) [0-9]*$/(integer) n/' "$TMP/a" "$TMP/b"
		fi
		check "$name: '$args' printed as redis-cli --tls prints it" 'cmp -s "$TMP/a" "$TMP/b"'
	done
	out=$(timeout 30 "$CLI" -u "rediss://127.0.0.1:$TP" "${CERTS[@]}" get tk 2>&1)
	check "$name: rediss:// URI ($out)" '[ "$out" = "tls value" ]'
	out=$(timeout 30 "$CLI" -p "$TP" "${TLS[@]}" --sni localhost ping 2>&1)
	check "$name: --sni localhost matches the DNS name ($out)" '[ "$out" = PONG ]'

	head -c 3000000 /dev/zero | tr '\0' y >"$TMP/big"
	C -x set big <"$TMP/big" >/dev/null
	out=$(C get big | wc -c)
	check "$name: 3 MB value both ways over TLS ($out bytes)" '[ "$out" = 3000001 ]'

	printf 'set l1 one\nget l1\nincr n\nincr n\nget n\n' | C >"$TMP/a" 2>&1
	check "$name: line mode (pipe) over TLS" '[ "$(tr "\n" " " <"$TMP/a")" = "OK one 1 2 2 " ]'
	printf 'set ik "a b"\nget ik\nquit\n' |
		script -qec "$(printf '%q ' timeout --foreground 30 "$CLI" -p "$TP" "${TLS[@]}")" /dev/null >"$TMP/i" 2>&1
	tr -d '\r' <"$TMP/i" >"$TMP/i2"
	check "$name: interactive mode over TLS (prompt and quoted reply)" \
		'grep -q "127.0.0.1:$TP> " "$TMP/i2" && grep -q "^\"a b\"\$" "$TMP/i2"'

	# bench: the server counts the commands (its plain port answers INFO).
	RP config resetstat >/dev/null
	timeout 60 "$CLI" -p "$TP" "${TLS[@]}" bench -q -t 2 -c 4 -P 16 --requests 20000 \
		--json "$TMP/b1.json" >"$TMP/b1" 2>&1
	rc=$?
	out=$(RP info stats | tr -d '\r' | sed -n 's/^total_commands_processed:\([0-9]*\)/\1/p')
	check "$name: bench over TLS, 8 connections, pipeline 16: exit $rc, errors 0" \
		'[ "$rc" = 0 ] && grep -q "^errors       0\$" "$TMP/b1"'
	# the 20000 requests and this INFO (the connections sent nothing else)
	check "$name: bench over TLS: the server ran the 20000 requests ($out)" '[ "${out:-0}" = 20001 ]'
	timeout 60 "$CLI" -p "$TP" "${TLS[@]}" bench -q -t 1 -c 2 -P 8 --requests 400 --ratio 0:1 \
		--data-size 200000 >"$TMP/b2" 2>&1
	rc=$?
	check "$name: bench over TLS, pipelined 200 KB SETs (partial TLS writes): exit $rc, errors 0" \
		'[ "$rc" = 0 ] && grep -q "^errors       0\$" "$TMP/b2" && grep -q "^requests     400 " "$TMP/b2"'

	# The server closes every connection mid-run: the generator reconnects over TLS.
	RP config resetstat >/dev/null
	timeout 60 "$CLI" -p "$TP" "${TLS[@]}" bench -q -c 2 -P 4 --duration 1 --json "$TMP/kill.json" >/dev/null 2>&1 &
	local bp=$!
	sleep 0.4
	RP client kill type normal >/dev/null
	wait $bp; rc=$?
	out=$(RP info stats | tr -d '\r' | sed -n 's/^total_connections_received:\([0-9]*\)/\1/p')
	check "$name: bench over TLS, connections killed mid-run: exit $rc, in-flight counted, reconnected ($out connections)" \
		'[ "$rc" = 0 ] && grep -q "\"connection\": [1-9]" "$TMP/kill.json" && [ "${out:-0}" -ge 5 ]'

	# ---- refusals ----
	"$CLI" -p "$TP" --tls --cacert "$TMP/nonexistent.crt" ping >/dev/null 2>"$TMP/e"
	rc=$?
	redis-cli -p "$TP" --tls --cacert "$TMP/nonexistent.crt" ping >/dev/null 2>"$TMP/re"
	check "$name: bad --cacert path: exit $rc, redis-cli's message" \
		'[ "$rc" = 1 ] && [ "$(head -1 "$TMP/e")" = "$(head -1 "$TMP/re")" ]'
	timeout 30 "$CLI" -p "$TP" --tls --cacert "$TMP/rogue.crt" --cert "$TMP/client.crt" \
		--key "$TMP/client.key" ping >"$TMP/o" 2>"$TMP/e"
	rc=$?
	check "$name: wrong CA: exit 1" '[ $rc = 1 ]'
	check "$name: wrong CA: redis-cli's message and the reason" \
		'grep -q "^Could not connect to Redis at 127.0.0.1:$TP: SSL_connect failed: certificate verify failed (" "$TMP/e"'
	check "$name: wrong CA: nothing on stdout" '[ ! -s "$TMP/o" ]'
	out=$(timeout 30 "$CLI" -p "$TP" --tls --insecure --cert "$TMP/client.crt" --key "$TMP/client.key" ping 2>&1)
	check "$name: --insecure without the CA succeeds ($out)" '[ "$out" = PONG ]'
	timeout 30 "$CLI" -p "$TP" "${TLS[@]}" --sni other.example ping >/dev/null 2>"$TMP/e"
	rc=$?
	check "$name: name mismatch (--sni other.example): exit $rc, 'hostname mismatch'" \
		'[ "$rc" = 1 ] && grep -q "certificate verify failed (hostname mismatch: the certificate does not name .other.example." "$TMP/e"'
	out=$(timeout 30 "$CLI" -p "$TP" "${TLS[@]}" --sni other.example --insecure ping 2>&1)
	check "$name: name mismatch with --insecure succeeds ($out)" '[ "$out" = PONG ]'
	timeout 30 "$CLI" -p "$TP" --tls --cacert "$TMP/ca.crt" set nocert 1 >"$TMP/o" 2>"$TMP/e"
	rc=$?
	check "$name: client certificate required and missing: exit $rc, a message, not served" \
		'[ "$rc" = 1 ] && [ -s "$TMP/e" ] && ! grep -q OK "$TMP/o" && [ -z "$(redis-cli -p "$P" exists nocert | grep 1)" ]'
	timeout 30 "$CLI" -p "$TP" ping >"$TMP/o" 2>&1
	rc=$?
	check "$name: plain RESP to the TLS port fails (exit $rc)" '[ $rc = 1 ]'
	timeout 30 "$CLI" -p "$P" -t 1 "${TLS[@]}" ping >/dev/null 2>"$TMP/e"
	rc=$?
	check "$name: --tls to the plain port fails within -t (exit $rc)" \
		'[ "$rc" = 1 ] && grep -q "SSL_connect failed" "$TMP/e"'
	timeout 30 "$CLI" -p "$TP" --tls --cacert "$TMP/rogue.crt" "${CERTS[@]:2}" bench -q \
		-c 2 --requests 100 >/dev/null 2>"$TMP/e"
	rc=$?
	check "$name: bench with a wrong CA: exit $rc, verify failure named" \
		'[ "$rc" = 1 ] && grep -q "certificate verify failed" "$TMP/e"'
}

# ---- option errors (no server needed) ----
"$CLI" -p 1 --tls --cacert "$TMP/ca.crt" --cert "$TMP/nonexistent.crt" --key "$TMP/client.key" ping >/dev/null 2>"$TMP/e"; rc=$?
check "bad --cert path: exit $rc, 'Invalid client certificate'" \
	'[ "$rc" = 1 ] && grep -q "Could not negotiate a TLS connection: Invalid client certificate" "$TMP/e"'
"$CLI" -p 1 --tls --cacert "$TMP/ca.crt" --cert "$TMP/client.crt" --key "$TMP/rogue.key" ping >/dev/null 2>"$TMP/e"; rc=$?
check "key not matching the certificate: exit $rc, 'Invalid private key'" \
	'[ "$rc" = 1 ] && grep -q "Invalid private key" "$TMP/e"'
"$CLI" -p 1 --tls --cert "$TMP/client.crt" ping >/dev/null 2>"$TMP/e"; rc=$?
check "--cert without --key: exit $rc, said so" '[ "$rc" = 1 ] && grep -q -- --key "$TMP/e"'
"$CLI" --help >"$TMP/h"
missing=
for f in --tls --sni --cacert --cacertdir --insecure --cert --key; do
	grep -q -- " $f[ ,]" "$TMP/h" || missing="$missing $f"
done
check "--help documents the TLS flags${missing:+ (missing:$missing)}" '[ -z "$missing" ]'
"$CLI" bench --help >"$TMP/h"
check "bench --help documents --tls" 'grep -q -- "--tls" "$TMP/h"'

# ---- rcukv-server ----
free_port; P=$FREE; free_port; TP=$FREE
"$SRV" --port "$P" --tls-port "$TP" --bind 127.0.0.1 --threads 2 "${SRVTLS[@]}" >"$TMP/rcukv.log" 2>&1 &
pids+=($!)
if wait_up "$P"; then
	suite rcukv "$P" "$TP"
else
	fail "rcukv-server with tls-port did not start"; sed 's/^/    | /' "$TMP/rcukv.log"
fi

# ---- redis-server 7: the same client against the reference ----
free_port; P=$FREE; free_port; TP=$FREE
redis-server --port "$P" --tls-port "$TP" --bind 127.0.0.1 --save '' --appendonly no \
	--dir "$TMP" "${SRVTLS[@]}" >"$TMP/redis.log" 2>&1 &
pids+=($!)
if wait_up "$P"; then
	suite redis "$P" "$TP"
else
	fail "redis-server with tls-port did not start"; sed 's/^/    | /' "$TMP/redis.log"
fi

# ---- a certificate naming its address by CN only (no subjectAltName) ----
free_port; P=$FREE; free_port; TP=$FREE
redis-server --port "$P" --tls-port "$TP" --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP" \
	--tls-cert-file "$TMP/cn.crt" --tls-key-file "$TMP/cn.key" --tls-auth-clients no >"$TMP/redis-cn.log" 2>&1 &
pids+=($!)
if wait_up "$P"; then
	out=$(timeout 30 "$CLI" -p "$TP" --tls --cacert "$TMP/ca.crt" ping 2>&1)
	check "CN=127.0.0.1 without subjectAltName: -h 127.0.0.1 accepted, as redis-cli ($out)" '[ "$out" = PONG ]'
	out=$(timeout 30 "$CLI" -p "$TP" --tls --cacert "$TMP/ca.crt" --sni 127.0.0.2 ping 2>&1)
	check "CN=127.0.0.1 without subjectAltName: another address refused" \
		'grep -q "certificate verify failed (IP address mismatch" <<<"$out"'
	out=$(timeout 30 "$CLI" -p "$TP" --tls --cacert "$TMP/rogue.crt" ping 2>&1)
	check "CN=127.0.0.1 without subjectAltName: the chain is still verified" \
		'grep -q "certificate verify failed" <<<"$out"'
else
	fail "redis-server with a CN-only certificate did not start"; sed 's/^/    | /' "$TMP/redis-cn.log"
fi

if grep -lE "ERROR: (Address|Leak)Sanitizer|runtime error:" "$TMP"/*.log >/dev/null 2>&1; then
	fail "sanitizer report in a server log"
fi
finish
