#!/usr/bin/env bash
# tests/server/test_tls.sh - issue 9: TLS (tls-port beside the plain port).
# Makes a throwaway CA, server and client certificates in a temp dir with the
# openssl CLI, starts $B/rcukv-server on free loopback ports (7350-7399) and
# connects with redis-cli --tls (Debian's redis-tools 7 is built with TLS):
#   - tls-auth-clients yes: a client certificate signed by the CA is served,
#     no certificate or a self-signed one is refused; the plain port works
#     beside it and shares the keyspace; plain RESP on the TLS port is refused;
#   - big values (300 KB, 3 MB) and a 1000-command pipeline through TLS;
#   - redis-benchmark --tls finishes without error;
#   - tls-auth-clients no: no client certificate needed;
#   - tls-protocols TLSv1.3: a TLSv1.2-only client (openssl s_client) fails;
#   - bad certificate path: start fails with exit 1.
# Skipped (0 failed, saying why) if the openssl CLI or redis-cli --tls is missing.
# Ends with "N passed, M failed".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
PORT_LAST=7399
. "$(dirname "$0")/../../scripts/lib.sh"
if ! have_tools openssl redis-cli || ! redis-cli --help 2>&1 | grep -q -- '--tls'; then
  skip "needs the openssl CLI and a redis-cli built with TLS"
  summary; exit 0
fi
scratch_init tls

# throwaway certificates (2 days); the server's is cn.crt, the address as CN
tls_certs "$tmp" || { bad "making certificates"; cat "$tmp/openssl.log"; summary; exit 1; }
ok "throwaway CA, server and client certificates made"

TLSC=(--tls --cacert "$tmp/ca.crt" --cert "$tmp/client.crt" --key "$tmp/client.key")

P=$(free_port 7350); TP=$(free_port $((P + 1)))
"$SRV" --port "$P" --tls-port "$TP" --threads 2 --tls-cert-file "$tmp/cn.crt" \
  --tls-key-file "$tmp/cn.key" --tls-ca-cert-file "$tmp/ca.crt" >"$tmp/srv.log" 2>&1 &
spid=$!; pids+=($spid)
if wait_up "$P"; then
  ok "server up: plain $P, tls $TP"
  r=$(redis-cli -p "$TP" "${TLSC[@]}" set tk tv 2>&1)
  check "redis-cli --tls with a client certificate: SET ($r)" '[ "$r" = OK ]'
  r=$(redis-cli -p "$P" get tk 2>&1)
  check "plain port sees the key written over TLS ($r)" '[ "$r" = tv ]'
  r=$(redis-cli -p "$TP" --tls --cacert "$tmp/ca.crt" get tk 2>&1)
  check "tls-auth-clients yes: no client certificate refused" '[ "$r" != tv ]'
  r=$(redis-cli -p "$TP" --tls --cacert "$tmp/ca.crt" --cert "$tmp/rogue.crt" --key "$tmp/rogue.key" get tk 2>&1)
  check "self-signed client certificate refused" '[ "$r" != tv ]'
  r=$(timeout 10 redis-cli -p "$TP" ping 2>&1)
  check "plain RESP on the TLS port refused" '[ "$r" != PONG ]'
  r=$(redis-cli -p "$TP" --tls --cacert "$tmp/rogue.crt" --cert "$tmp/client.crt" --key "$tmp/client.key" ping 2>&1)
  check "client that does not trust the server's CA fails" '[ "$r" != PONG ]'
  for sz in 300000 3000000; do
    head -c "$sz" /dev/zero | tr '\0' y | redis-cli -p "$TP" "${TLSC[@]}" -x set big >/dev/null
    r=$(redis-cli -p "$TP" "${TLSC[@]}" get big | wc -c)
    check "$sz-byte value through TLS ($r bytes)" '[ "$r" = $((sz + 1)) ]'
  done
  r=$(for i in $(seq 1 1000); do echo "INCR cnt"; done | redis-cli -p "$TP" "${TLSC[@]}" --pipe 2>&1 | tail -n 1)
  c=$(redis-cli -p "$P" get cnt)
  check "1000-command pipeline through TLS (cnt=$c)" '[ "$c" = 1000 ]'
  # replies far over client-output-buffer-pause: reading pauses and resumes
  head -c 200000 /dev/zero | tr '\0' z | redis-cli -p "$TP" "${TLSC[@]}" -x set big2 >/dev/null
  r=$(for i in $(seq 1 300); do printf 'GET big2\r\n'; done | timeout 60 redis-cli -p "$TP" "${TLSC[@]}" --pipe 2>&1 | tail -n 1)
  check "300 pipelined 200 KB GETs through TLS, 60 MB of replies ($r)" 'grep -q "errors: 0, replies: 300" <<<"$r"'
  r=$(timeout 60 redis-benchmark -p "$TP" "${TLSC[@]}" -t set,get -n 5000 -c 10 -q 2>&1 | tr '\r' '\n')
  n=$(grep -cE '^(SET|GET): [0-9.]+ requests per second' <<<"$r")
  check "redis-benchmark --tls: 2 result lines ($n)" '[ "$n" = 2 ]'
  r=$(redis-cli -p "$P" ping)
  check "server still serving ($r)" '[ "$r" = PONG ]'
  check "TLS port announced in the log" 'grep -q "Ready to accept connections tls on port $TP" "$tmp/srv.log"'
  redis-cli -p "$P" shutdown >/dev/null 2>&1; wait "$spid"; rc=$?
  check "SHUTDOWN with TLS: exit $rc" '[ "$rc" = 0 ]'
else
  bad "TLS server did not start"; sed 's/^/    | /' "$tmp/srv.log"
fi

# tls-auth-clients no + tls-protocols TLSv1.3
P=$(free_port 7350); TP=$(free_port $((P + 1)))
"$SRV" --port "$P" --tls-port "$TP" --threads 1 --tls-cert-file "$tmp/cn.crt" \
  --tls-key-file "$tmp/cn.key" --tls-auth-clients no --tls-protocols TLSv1.3 >"$tmp/srv2.log" 2>&1 &
spid=$!; pids+=($spid)
if wait_up "$P"; then
  r=$(redis-cli -p "$TP" --tls --cacert "$tmp/ca.crt" ping 2>&1)
  check "tls-auth-clients no: served without a client certificate ($r)" '[ "$r" = PONG ]'
  echo | timeout 10 openssl s_client -connect "127.0.0.1:$TP" -tls1_2 -CAfile "$tmp/ca.crt" >"$tmp/s12.log" 2>&1; rc12=$?
  echo | timeout 10 openssl s_client -connect "127.0.0.1:$TP" -tls1_3 -CAfile "$tmp/ca.crt" >"$tmp/s13.log" 2>&1; rc13=$?
  check "tls-protocols TLSv1.3: a TLSv1.2 client fails (rc $rc12), TLSv1.3 connects (rc $rc13)" '[ "$rc12" != 0 ] && [ "$rc13" = 0 ]'
  redis-cli -p "$P" shutdown >/dev/null 2>&1; wait "$spid"
else
  bad "second TLS server did not start"; sed 's/^/    | /' "$tmp/srv2.log"
fi

"$SRV" --port 0 --tls-port 7399 --tls-cert-file "$tmp/nonexistent.crt" --tls-key-file "$tmp/cn.key" >"$tmp/bad.log" 2>&1; rc=$?
check "missing certificate file: exit $rc, logged" '[ "$rc" = 1 ] && grep -q "Failed to load certificate" "$tmp/bad.log"'

if grep -lE "ERROR: (Address|Leak)Sanitizer|runtime error:" "$tmp"/*.log 2>/dev/null; then
  bad "sanitizer report in a server log"; grep -hE -A5 "Sanitizer|runtime error:" "$tmp"/*.log | head -40
else
  ok "no sanitizer report in the server logs"
fi
summary
[ "$fail" = 0 ]
