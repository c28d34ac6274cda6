#!/usr/bin/env bash
# bench/bench_security.sh - TLS throughput (issue 9), side by side in one run.
#
# Makes throwaway certificates, starts fresh on loopback (persistence off):
#   rcukv      build/<variant>/rcukv-server, plain port + tls-port
#   redis      redis-server 7 (Debian, built with TLS), tls-port only, defaults
#   redis_io2  the same with --io-threads 2 --io-threads-do-reads yes
# and runs redis-benchmark -t get -P 16 -c 50 --threads 2 -d 32 -r 100000 in
# turn (repeated, median) against rcukv over TLS, rcukv over plain TCP and
# both redis-servers over TLS (tls-auth-clients no: server-side encryption
# only, as most deployments).  The order alternates: rcukv first in odd
# rounds, the references first (reversed order) in even rounds.
# Prints:
#   BENCH security.tls_get_p16.rcukv / .rcukv_plain / .redis / .redis_io2  ops/s
#   RATIO security.tls_get_p16          rcukv TLS / the better Redis over TLS
#                                       (default or io-threads, as bench_server.sh)
#   RATIO security.tls_get_p16_vs_plain rcukv TLS / rcukv plain TCP
#   BENCH security.cli_tls_get_p16.rcukv / .redis  rcukv-cli bench over TLS, ops/s
# Usage: bench/bench_security.sh [path/to/rcukv-server]
# Env:   BENCH_QUICK=1 (fewer, shorter runs), BENCH_REPEATS=N, BENCH_PORT=7290 (4 ports)
# A run that produced no figure, or a reference that measured zero, stops the
# bench with a message and exit 1: no RATIO.
set -u
SERVER=${1:-${B:-build/release}/rcukv-server}
PORT0=${BENCH_PORT:-7290}
if [ "${BENCH_QUICK:-0}" = 1 ]; then REPEATS=${BENCH_REPEATS:-3}; N=200000; else REPEATS=${BENCH_REPEATS:-5}; N=600000; fi
LIB_BENCH=1
LIB_STOP="no ratio, stopping"
# need_tools, need_built, die, scratch_init ($tmp, $pids stopped on exit)
. "$(dirname "$0")/../scripts/lib.sh"
need_tools redis-server redis-benchmark openssl
need_built "$SERVER"
scratch_init bench-security
TMP=$tmp
# throwaway certificates (scripts/lib.sh): the server uses cn.crt, the address as CN
tls_certs "$TMP" || die "openssl failed ($TMP/openssl.log)"
TLSA=(--tls-cert-file "$TMP/cn.crt" --tls-key-file "$TMP/cn.key" --tls-auth-clients no)
P_PLAIN=$PORT0; P_TLS=$((PORT0 + 1)); P_REDIS=$((PORT0 + 2)); P_REDIS_IO=$((PORT0 + 3))
"$SERVER" --port "$P_PLAIN" --tls-port "$P_TLS" --bind 127.0.0.1 --loglevel warning "${TLSA[@]}" >"$TMP/rcukv.log" 2>&1 &
pids+=($!)
redis-server --port 0 --tls-port "$P_REDIS" --bind 127.0.0.1 --save '' --appendonly no \
  --loglevel warning --dir "$TMP" "${TLSA[@]}" >"$TMP/redis.log" 2>&1 &
pids+=($!)
redis-server --port 0 --tls-port "$P_REDIS_IO" --bind 127.0.0.1 --save '' --appendonly no \
  --io-threads 2 --io-threads-do-reads yes \
  --loglevel warning --dir "$TMP" "${TLSA[@]}" >"$TMP/redis_io2.log" 2>&1 &
pids+=($!)
up=0
for i in $(seq 1 100); do
  redis-cli -p "$P_PLAIN" ping >/dev/null 2>&1 &&
    redis-cli -p "$P_REDIS" --tls --cacert "$TMP/ca.crt" ping >/dev/null 2>&1 &&
    redis-cli -p "$P_REDIS_IO" --tls --cacert "$TMP/ca.crt" ping >/dev/null 2>&1 && { up=1; break; }
  sleep 0.1
done
[ "$up" = 1 ] || { cat "$TMP"/*.log >&2; die "a server did not answer PING over its port"; }
declare -A ARGS=(
  [rcukv]="-p $P_TLS --tls --cacert $TMP/ca.crt"
  [rcukv_plain]="-p $P_PLAIN"
  [redis]="-p $P_REDIS --tls --cacert $TMP/ca.crt"
  [redis_io2]="-p $P_REDIS_IO --tls --cacert $TMP/ca.crt"
)
SYSTEMS=(rcukv rcukv_plain redis redis_io2)
# same keys in every keyspace
for s in rcukv redis redis_io2; do
  # shellcheck disable=SC2086
  redis-benchmark ${ARGS[$s]} -t set -n 100000 -P 16 -c 20 -d 32 -r 100000 -q >/dev/null 2>&1
done
declare -A R
for rep in $(seq 1 "$REPEATS"); do
  # alternate: rcukv first in odd rounds, the references first in even ones
  order=("${SYSTEMS[@]}")
  [ $((rep % 2)) = 0 ] && order=(redis_io2 redis rcukv_plain rcukv)
  for s in "${order[@]}"; do
    # shellcheck disable=SC2086
    v=$(redis-benchmark ${ARGS[$s]} -t get -n "$N" -P 16 -c 50 --threads 2 -d 32 -r 100000 --csv 2>/dev/null |
        awk -F'"' '/^"GET"/ {print $4}')
    echo "run $rep $s ${v:-?} ops/s"
    # a failed run is not a 0 in the median
    awk -v v="$v" 'BEGIN { exit !(v != "" && v + 0 > 0) }' || die "run $rep: $s gave no GET figure ('$v')"
    R[$s]="${R[$s]:-} $v"
  done
done
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
declare -A M
for s in "${SYSTEMS[@]}"; do
  M[$s]=$(median "${R[$s]}")
  echo "BENCH security.tls_get_p16.$s ${M[$s]} ops/s"
done
# the better Redis, as bench_server.sh compares against
best=redis; awk -v a="${M[redis_io2]}" -v b="${M[redis]}" 'BEGIN { exit !(a > b) }' && best=redis_io2
echo "# security.tls_get_p16: against $best (${M[$best]} ops/s), the better of redis and redis_io2"
awk -v a="${M[rcukv]}" -v b="${M[$best]}" 'BEGIN { printf "RATIO security.tls_get_p16 %.2f higher\n", a / b }'
awk -v a="${M[rcukv]}" -v b="${M[rcukv_plain]}" 'BEGIN { printf "RATIO security.tls_get_p16_vs_plain %.2f higher\n", a / b }'
# rcukv-cli bench over TLS against both servers (GET, 2 threads x 25 connections, -P 16)
CLI=$(dirname "$SERVER")/rcukv-cli
for s in rcukv redis; do
  # shellcheck disable=SC2086
  [ -x "$CLI" ] && v=$("$CLI" ${ARGS[$s]} bench -q -t 2 -c 25 -P 16 -r "$N" --ratio 1:0 2>/dev/null |
    awk '/^throughput/ {print $2}') && echo "BENCH security.cli_tls_get_p16.$s ${v:-?} ops/s"
done
echo "cores: $(nproc)"
