#!/usr/bin/env bash
# bench/bench_client.sh: the load generator's own ceiling.  rcukv-cli bench
# and redis-benchmark drive the same redis-server with the same threads,
# connections and pipeline depth (-P 16), GET over 100000 keys, alternating
# run by run; each prints the median of its runs.  Both saturate the single
# server thread, so a ratio near 1 (or above) says the generator is not the
# bottleneck.  Output per /work/shared/BENCHMARKS.md:
#   BENCH client.max_rate.rcukv <ops/s> ops/s
#   BENCH client.max_rate.redis <ops/s> ops/s      (redis-benchmark)
#   RATIO client.max_rate <rcukv/redis> higher
#   BENCH client.cpu_per_req.{rcukv,redis} <ns> ns   (client CPU, user+sys)
#   RATIO client.cpu_per_req <rcukv/redis> lower
# BENCH_QUICK=1: 3 runs of 600k requests each (under a minute); otherwise 5
# runs of 2M.  The server runs on a free loopback port in 7100-7199 and is
# stopped by its PID.
set -u
CLI=${RCUKV_CLI:-build/release/rcukv-cli}
THREADS=${BENCH_THREADS:-1}
CLIENTS=${BENCH_CLIENTS:-8}        # connections per thread
PIPELINE=16
if [ "${BENCH_QUICK:-0}" = 1 ]; then RUNS=3; N=600000; else RUNS=5; N=2000000; fi

LIB_BENCH=1
LIB_NAME=bench-client
# need_tools, need_built, die, scratch_init ($tmp, $pids stopped on exit)
. "$(dirname "$0")/../scripts/lib.sh"
need_tools redis-server redis-benchmark
need_built "$CLI"
scratch_init bench-client
TMP=$tmp
PID=
for i in $(seq 0 99); do
	port=$((7100 + ($$ + i) % 100))
	(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && continue
	redis-server --save '' --appendonly no --port $port --bind 127.0.0.1 >"$TMP/log" 2>&1 &
	PID=$!
	for _ in $(seq 1 100); do
		grep -q "Ready to accept" "$TMP/log" && break
		kill -0 $PID 2>/dev/null || break
		sleep 0.05
	done
	grep -q "Ready to accept" "$TMP/log" && { pids+=("$PID"); break; }
	stop_pid "$PID"
	PID=
done
[ -n "$PID" ] || die "could not start redis-server in 7100-7199"

echo "bench-client: redis-server pid $PID on 127.0.0.1:$port; $THREADS thread(s) x $CLIENTS connections, -P $PIPELINE, GET, $N requests, $RUNS runs each, $(nproc) cores"
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
: >"$TMP/rcukv"; : >"$TMP/redis"; : >"$TMP/rcukv.cpu"; : >"$TMP/redis.cpu"
TIMEFORMAT='%3U %3S'
# cpu_ns FILE: user+sys seconds printed by the time keyword -> ns per request
cpu_ns() { awk -v n="$N" '{printf "%.0f\n", ($1 + $2) * 1e9 / n}' "$1"; }
for r in $(seq 1 "$RUNS"); do
	{ time "$CLI" -p "$port" bench -q -t "$THREADS" -c "$CLIENTS" -P "$PIPELINE" -r "$N" \
		--ratio 1:0 --keys 100000 >"$TMP/a.out"; } 2>"$TMP/a.time"
	{ time redis-benchmark -p "$port" --threads "$THREADS" -c $((THREADS * CLIENTS)) \
		-P "$PIPELINE" -n "$N" -r 100000 -t get --csv >"$TMP/b.out" 2>/dev/null; } 2>"$TMP/b.time"
	a=$(sed -n 's/^throughput *\([0-9.]*\) ops\/s/\1/p' "$TMP/a.out")
	b=$(awk -F'"' '$2=="GET" {print $4}' "$TMP/b.out")
	ac=$(cpu_ns "$TMP/a.time"); bc=$(cpu_ns "$TMP/b.time")
	echo "  run $r: rcukv-cli bench ${a:-?} ops/s ${ac} ns cpu/req, redis-benchmark ${b:-?} ops/s ${bc} ns cpu/req"
	[ -n "$a" ] && echo "$a" >>"$TMP/rcukv" && echo "$ac" >>"$TMP/rcukv.cpu"
	[ -n "$b" ] && echo "$b" >>"$TMP/redis" && echo "$bc" >>"$TMP/redis.cpu"
done
ra=$(median <"$TMP/rcukv"); rb=$(median <"$TMP/redis")
ca=$(median <"$TMP/rcukv.cpu"); cb=$(median <"$TMP/redis.cpu")
if [ -z "$ra" ] || [ -z "$rb" ]; then echo "bench-client: a run produced no figure" >&2; exit 1; fi
echo "BENCH client.max_rate.rcukv $ra ops/s"
echo "BENCH client.max_rate.redis $rb ops/s"
awk -v a="$ra" -v b="$rb" 'BEGIN {printf "RATIO client.max_rate %.2f higher\n", a / b}'
# The generator's own CPU per request (user+sys of the client process): steadier
# than throughput on a shared machine, and what "overhead" means.
echo "BENCH client.cpu_per_req.rcukv $ca ns"
echo "BENCH client.cpu_per_req.redis $cb ns"
awk -v a="$ca" -v b="$cb" 'BEGIN {printf "RATIO client.cpu_per_req %.2f lower\n", a / b}'
