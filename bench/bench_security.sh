#!/usr/bin/env bash
# bench/bench_security.sh - TLS throughput (issue 9), side by side in one run.
#
# Makes throwaway certificates, starts fresh on loopback (persistence off):
#   rcukv      build/<variant>/rcukv-server, plain port + tls-port
#   redis      redis-server 7 (Debian, built with TLS), tls-port only
# and runs redis-benchmark -t get -P 16 -c 50 --threads 2 -d 32 -r 100000 in
# turn (alternating, repeated, median) against rcukv over TLS, rcukv over
# plain TCP and redis-server over TLS (tls-auth-clients no: server-side
# encryption only, as most deployments).
# Prints:
#   BENCH security.tls_get_p16.rcukv / .rcukv_plain / .redis  ops/s
#   RATIO security.tls_get_p16          rcukv TLS / redis TLS
#   RATIO security.tls_get_p16_vs_plain rcukv TLS / rcukv plain TCP
#   BENCH security.cli_tls_get_p16.rcukv / .redis  rcukv-cli bench over TLS, ops/s
# Usage: bench/bench_security.sh [path/to/rcukv-server]
# Env:   BENCH_QUICK=1 (fewer, shorter runs), BENCH_REPEATS=N, BENCH_PORT=7290 (3 ports)
set -u
SERVER=${1:-${B:-build/release}/rcukv-server}
PORT0=${BENCH_PORT:-7290}
if [ "${BENCH_QUICK:-0}" = 1 ]; then REPEATS=${BENCH_REPEATS:-3}; N=200000; else REPEATS=${BENCH_REPEATS:-5}; N=600000; fi
for tool in redis-server redis-benchmark openssl; do
  command -v $tool >/dev/null || { echo "bench_security: $tool not found" >&2; exit 1; }
done
[ -x "$SERVER" ] || { echo "bench_security: $SERVER not built" >&2; exit 1; }
TMP=$(mktemp -d /tmp/rcukv-bench-sec.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
(
  cd "$TMP" || exit 1
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -keyout ca.key -out ca.crt -subj "/CN=rcukv bench CA"
  openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=127.0.0.1"
  openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out server.crt
) >"$TMP/openssl.log" 2>&1 || { echo "bench_security: openssl failed" >&2; exit 1; }
TLSA=(--tls-cert-file "$TMP/server.crt" --tls-key-file "$TMP/server.key" --tls-auth-clients no)
P_PLAIN=$PORT0; P_TLS=$((PORT0 + 1)); P_REDIS=$((PORT0 + 2))
"$SERVER" --port "$P_PLAIN" --tls-port "$P_TLS" --bind 127.0.0.1 --loglevel warning "${TLSA[@]}" >"$TMP/rcukv.log" 2>&1 &
PIDS+=($!)
redis-server --port 0 --tls-port "$P_REDIS" --bind 127.0.0.1 --save '' --appendonly no \
  --loglevel warning --dir "$TMP" "${TLSA[@]}" >"$TMP/redis.log" 2>&1 &
PIDS+=($!)
for i in $(seq 1 100); do
  redis-cli -p "$P_PLAIN" ping >/dev/null 2>&1 &&
    redis-cli -p "$P_REDIS" --tls --cacert "$TMP/ca.crt" ping >/dev/null 2>&1 && break
  sleep 0.1
done
declare -A ARGS=(
  [rcukv]="-p $P_TLS --tls --cacert $TMP/ca.crt"
  [rcukv_plain]="-p $P_PLAIN"
  [redis]="-p $P_REDIS --tls --cacert $TMP/ca.crt"
)
# same keys in both keyspaces
for s in rcukv redis; do
  # shellcheck disable=SC2086
  redis-benchmark ${ARGS[$s]} -t set -n 100000 -P 16 -c 20 -d 32 -r 100000 -q >/dev/null 2>&1
done
declare -A R
for rep in $(seq 1 "$REPEATS"); do
  for s in rcukv rcukv_plain redis; do
    # shellcheck disable=SC2086
    v=$(redis-benchmark ${ARGS[$s]} -t get -n "$N" -P 16 -c 50 --threads 2 -d 32 -r 100000 --csv 2>/dev/null |
        awk -F'"' '/^"GET"/ {print $4}')
    echo "run $rep $s ${v:-?} ops/s"
    R[$s]="${R[$s]:-} ${v:-0}"
  done
done
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
declare -A M
for s in rcukv rcukv_plain redis; do
  M[$s]=$(median "${R[$s]}")
  echo "BENCH security.tls_get_p16.$s ${M[$s]} ops/s"
done
awk -v a="${M[rcukv]}" -v b="${M[redis]}" 'BEGIN { if (b > 0) printf "RATIO security.tls_get_p16 %.2f higher\n", a / b }'
awk -v a="${M[rcukv]}" -v b="${M[rcukv_plain]}" 'BEGIN { if (b > 0) printf "RATIO security.tls_get_p16_vs_plain %.2f higher\n", a / b }'
# rcukv-cli bench over TLS against both servers (GET, 2 threads x 25 connections, -P 16)
CLI=$(dirname "$SERVER")/rcukv-cli
for s in rcukv redis; do
  # shellcheck disable=SC2086
  [ -x "$CLI" ] && v=$("$CLI" ${ARGS[$s]} bench -q -t 2 -c 25 -P 16 -r "$N" --ratio 1:0 2>/dev/null |
    awk '/^throughput/ {print $2}') && echo "BENCH security.cli_tls_get_p16.$s ${v:-?} ops/s"
done
echo "cores: $(nproc)"
