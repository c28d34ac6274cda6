#!/usr/bin/env bash
# bench/bench_scaleout.sh - twemproxy (Debian's nutcracker) in front of
# rcukv-servers and in front of redis-servers, side by side (issue 18 item 1).
#
# Per system (rcukv: build/<variant>/rcukv-server --threads 2; redis:
# redis-server, default configuration), three nodes and two proxies
# configured by conf/nutcracker.yml (ports moved): proxy1 over node 1 alone,
# proxy3 over the three nodes.  The same redis-benchmark run
# (-c 50 --threads 2 -d 32 -r 100000, -t set or get, -P 1 or -P 16) goes
#   direct   to node 1,
#   proxy1   through the proxy to node 1,
#   proxy3   through the proxy to the three nodes,
# alternating between the systems, REPEATS times; medians reported:
#   BENCH scaleout.<wl>.<target>.<system> <ops/s>      and .p99 <ms>
#   BENCH scaleout.<wl>.proxy1_kept.<system> <proxy1/direct>
#   RATIO scaleout.<wl>.<target> <rcukv/redis> higher  (throughput)
#   RATIO scaleout.<wl>.<target>.p99 <rcukv/redis> lower
# What two cores show: nutcracker is one single-threaded process, and here
# it shares the two cores with the nodes and redis-benchmark.  It is the
# bottleneck through the proxy for both systems, so the proxy RATIOs come
# out near 1.0 and proxy3 cannot beat proxy1: what this measures is the
# proxy's cost and that rcukv behind it costs nothing extra, not how a
# sharded deployment on several machines scales.
# A run whose CSV line is missing stops the bench (exit 1, no RATIO).
#
# Usage: bench/bench_scaleout.sh [path/to/rcukv-server]
# Env:   BENCH_QUICK=1 (one repeat, shorter runs), BENCH_REPEATS=N
set -u
SERVER=${1:-${B:-build/release}/rcukv-server}
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then
  REPEATS=${BENCH_REPEATS:-1}; N_P1=10000; N_P16=100000
else
  REPEATS=${BENCH_REPEATS:-3}; N_P1=30000; N_P16=300000
fi
PORT_LAST=8299
LIB_BENCH=1
. "$(dirname "$0")/../scripts/lib.sh"
need_tools nutcracker redis-server redis-benchmark redis-cli
need_built "$SERVER"
scratch_init bench-scaleout
CONF=$(dirname "$0")/../conf/nutcracker.yml

next=8200
take_port() {
  port=$(free_port "$next")
  [ "$port" = 0 ] && die "no free port in $next-$PORT_LAST"
  next=$((port + 1))
}
declare -A TARGET   # TARGET[system.target] = port

node_start() {  # system port
  case $1 in
    rcukv) "$SERVER" --port "$2" --bind 127.0.0.1 --threads 2 --save "" \
             --loglevel warning >"$tmp/$1.$2.log" 2>&1 & ;;
    redis) redis-server --port "$2" --bind 127.0.0.1 --save "" --appendonly no \
             --loglevel warning --dir "$tmp" >"$tmp/$1.$2.log" 2>&1 & ;;
  esac
  pids+=("$!")
  wait_up "$2" || die "$1 did not start on $2"
}

# proxy_start SYSTEM NAME PORT...: nutcracker over the nodes on PORT...
proxy_start() {
  local sys=$1 name=$2 i=0 lp sp
  shift 2
  take_port; lp=$port
  take_port; sp=$port
  {
    sed -n '/^rcukv:/,/^  servers:/p' "$CONF" | sed "s/127\.0\.0\.1:22121/127.0.0.1:$lp/"
    for p in "$@"; do
      i=$((i + 1))
      echo "   - 127.0.0.1:$p:1 rcukv$i"
    done
  } >"$tmp/$sys.$name.yml"
  nutcracker -c "$tmp/$sys.$name.yml" -a 127.0.0.1 -s "$sp" -o "$tmp/$sys.$name.log" &
  pids+=("$!")
  wait_up "$lp" || die "nutcracker $sys.$name did not answer on $lp"
  TARGET[$sys.$name]=$lp
}

SYSTEMS=(rcukv redis)
for sys in "${SYSTEMS[@]}"; do
  nodes=()
  for _ in 1 2 3; do take_port; node_start "$sys" "$port"; nodes+=("$port"); done
  TARGET[$sys.direct]=${nodes[0]}
  proxy_start "$sys" proxy1 "${nodes[0]}"
  proxy_start "$sys" proxy3 "${nodes[@]}"
done
echo "bench_scaleout: $(nproc) cores, $REPEATS repeat(s), rcukv=$SERVER"

RES=$tmp/results
: >"$RES"
# run REP WL SYS TARGET: one redis-benchmark run; "wl target sys rps p99".
run() {
  local wl=$2 sys=$3 tgt=$4 op=${2%_p*} pl=${2#*_p} n line
  n=$N_P1; [ "$pl" = 16 ] && n=$N_P16
  line=$(redis-benchmark -p "${TARGET[$sys.$tgt]}" -t "$op" -n "$n" -c 50 --threads 2 \
           -d 32 -r 100000 -P "$pl" --csv 2>/dev/null | grep -i "^\"$op\"")
  [ -n "$line" ] || die "redis-benchmark $wl against $sys.$tgt printed no result"
  IFS=, read -r _ rps _ _ _ _ p99 _ <<<"$(tr -d '"' <<<"$line")"
  echo "$wl $tgt $sys $rps $p99" >>"$RES"
  printf 'run %d %-8s %-7s %-6s %12s ops/s  p99 %s ms\n' "$1" "$wl" "$tgt" "$sys" "$rps" "$p99"
}

WLS=(set_p1 get_p1 set_p16 get_p16)
TGTS=(direct proxy1 proxy3)
for rep in $(seq 1 "$REPEATS"); do
  for wl in "${WLS[@]}"; do
    for tgt in "${TGTS[@]}"; do
      # alternate which system goes first
      if [ $((rep % 2)) = 1 ]; then order=(rcukv redis); else order=(redis rcukv); fi
      for sys in "${order[@]}"; do run "$rep" "$wl" "$sys" "$tgt"; done
    done
  done
done

# med WL TGT SYS COL: the median of column COL (4 rps, 5 p99)
med() {
  awk -v w="$1" -v t="$2" -v s="$3" -v c="$4" '$1 == w && $2 == t && $3 == s { print $c }' "$RES" |
    sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
for wl in "${WLS[@]}"; do
  for tgt in "${TGTS[@]}"; do
    for sys in "${SYSTEMS[@]}"; do
      echo "BENCH scaleout.$wl.$tgt.$sys $(med "$wl" "$tgt" "$sys" 4) ops/s"
      echo "BENCH scaleout.$wl.$tgt.p99.$sys $(med "$wl" "$tgt" "$sys" 5) ms"
    done
  done
  for sys in "${SYSTEMS[@]}"; do
    d=$(med "$wl" direct "$sys" 4); p=$(med "$wl" proxy1 "$sys" 4)
    echo "BENCH scaleout.$wl.proxy1_kept.$sys $(awk -v a="$p" -v b="$d" 'BEGIN { printf "%.3f", a / b }') ratio"
  done
done
for wl in "${WLS[@]}"; do
  for tgt in "${TGTS[@]}"; do
    a=$(med "$wl" "$tgt" rcukv 4); b=$(med "$wl" "$tgt" redis 4)
    awk -v b="$b" 'BEGIN { exit !(b > 0) }' || die "redis $wl $tgt: no throughput"
    echo "RATIO scaleout.$wl.$tgt $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }') higher"
    a=$(med "$wl" "$tgt" rcukv 5); b=$(med "$wl" "$tgt" redis 5)
    if awk -v b="$b" 'BEGIN { exit !(b > 0) }'; then
      echo "RATIO scaleout.$wl.$tgt.p99 $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }') lower"
    fi
  done
done
