#!/usr/bin/env bash
# bench/bench_curves.sh - cost curves (issue 19 item 3): how rcukv-server's
# cost grows with the number of keys, the value size and the number of
# connections, side by side with redis-server 7 (default configuration, one
# thread) in one run.  Both servers run at once on loopback (persistence
# off); every point runs the real redis-benchmark against one, then the
# other, alternating the order from one repeat to the next, and reports the
# median over CURVES_REPEATS (3) of the throughput and of the p99 latency
# (redis-benchmark --csv, one client thread: see bench_run).  Each timed run is sized by a short calibration
# run of the same point to last about SECS seconds (1 s; quick: 0.5 s).
#
#   keys     GET and SET, -P 16 -c 50, 16-byte keys ("key:%012d",
#            redis-benchmark's -r keys) and 32-byte values, at 1K, 100K, 1M,
#            10M, 30M keys: the servers are filled up to each count in turn
#            (redis-cli --pipe), and SET overwrites within it.
#              BENCH curves.keys_<n>.{get,set}[.p99].{rcukv,redis}
#              RATIO curves.keys_<n>.{get,set}[.p99]
#            and how much of its 1M-key throughput each server keeps at the
#            largest count measured (the slope past 1M):
#              BENCH curves.keys.{get,set}.kept_1m_to_<n>.{rcukv,redis}
#              RATIO curves.keys.{get,set}.kept_1m_to_<n> (higher: flatter)
#   bytes    bytes per key at each count: (used_memory after the fill -
#            used_memory of the empty server) / keys, INFO memory, the same
#            measure on both servers (RSS printed on '#' lines only).
#              BENCH curves.bytes_per_key.keys_<n>.{rcukv,redis}
#              RATIO curves.bytes_per_key.keys_<n> (lower)
#   values   GET and SET, -P 1 -c 50, over min(100K, 512 MiB /
#            size) keys filled with values of 16 B, 256 B, 4 KiB, 64 KiB,
#            1 MiB (the servers restarted empty first).
#              curves.value_<size>b.{get,set}[.p99]... (16b .. 1mb: binary k, m)
#   conns    GET and SET, -P 1, 100K keys of 32 bytes, with 1, 10, 50, 500,
#            5000 clients.
#              curves.conns_<c>.{get,set}[.p99]...
#   idle     GET -P 1 -c 50 while bench/curves_idle.py holds 10,000 idle
#            connections (each answered one PING) to the same server; the
#            holder runs against one server at a time.
#              curves.idle_10000.get[.p99]...
# A point a machine cannot hold (estimated memory over 70 % of MemAvailable,
# or CURVES_MAX_KEYS) or an open-files limit too low for a connection count
# prints a "SKIP <name>: <reason>" line and no figure.  A redis-benchmark run
# without a usable --csv line, a fill that left the wrong key count or a
# reference that measured zero stops the bench (exit 1) before any RATIO.
# The points go to $OUT/points.tsv and bench/curves_plot.py draws one SVG per
# curve there (rcukv and redis on the same axes).
#
# Usage: bench/bench_curves.sh [path/to/rcukv-server]
# Env:   CURVES_QUICK=1 (fewer and smaller points, 0.5 s runs, 1 repeat),
#        CURVES_REPEATS=N, CURVES_PORT=9250 (uses 2 ports from there),
#        CURVES_MAX_KEYS=N, CURVES_OUT=bench/results/curves (quick:
#        bench/results/curves-quick)
set -u
SERVER=${1:-${B:-build/release}/rcukv-server}
HERE=$(dirname "$0")
PORT0=${CURVES_PORT:-9250}
QUICK=${CURVES_QUICK:-0}
if [ "$QUICK" = 1 ]; then
  REPEATS=${CURVES_REPEATS:-1}; SECS=0.5
  KEYS_PTS=(1000 100000 1000000); VAL_PTS=(16 4096 65536); CONN_PTS=(1 50 500); IDLE=1000
  OUT=${CURVES_OUT:-bench/results/curves-quick}
else
  REPEATS=${CURVES_REPEATS:-3}; SECS=1
  KEYS_PTS=(1000 100000 1000000 10000000 30000000); VAL_PTS=(16 256 4096 65536 1048576)
  CONN_PTS=(1 10 50 500 5000); IDLE=10000
  OUT=${CURVES_OUT:-bench/results/curves}
fi
MAX_KEYS=${CURVES_MAX_KEYS:-0}
CONN_KEYS=100000
EST_BPK=200       # bytes per key and server assumed by the memory check (both measured ~91 and ~136 at 1M)
RUN_TIMEOUT=300   # a redis-benchmark run that takes longer has hung

LIB_BENCH=1
# need_tools, need_built, die, scratch_init ($tmp, $pids stopped on exit)
. "$HERE/../scripts/lib.sh"
need_tools redis-server redis-cli redis-benchmark python3 timeout
need_built "$SERVER"
scratch_init bench-curves
TMP=$tmp
# start NAME PORT (PID[NAME], in $pids), SYSTEMS
. "$HERE/servers.sh"
SYS=(rcukv redis)
declare -A PORT=([rcukv]=$PORT0 [redis]=$((PORT0 + 1)))

# the open-files limit: 5000 clients and 10,000 idle connections need it
ulimit -n "$(ulimit -Hn)" 2>/dev/null
NOFILE=$(ulimit -n)
mem_avail=$(awk '/^MemAvailable:/ { printf "%.0f", $2 * 1024 }' /proc/meminfo)
echo "bench_curves: $(nproc) cores, $REPEATS repeat(s), ${SECS}s runs, open files $NOFILE," \
  "MemAvailable $((mem_avail >> 20)) MiB, load $(cut -d' ' -f1-3 /proc/loadavg), rcukv=$SERVER"

# time: every point runs 2 tests x 2 servers x (REPEATS + 1 calibration) runs
# of about SECS (+0.3 s to start), the idle point 1 test; the fills go at
# about 1.5M keys/s (redis-cli --pipe, both servers at once); the holder
# opens IDLE connections in about 1 s.  The full run measured 7 min here.
npts=$((${#KEYS_PTS[@]} + ${#VAL_PTS[@]} + ${#CONN_PTS[@]}))
maxk=${KEYS_PTS[-1]}; [ "$MAX_KEYS" != 0 ] && [ "$MAX_KEYS" -lt "$maxk" ] && maxk=$MAX_KEYS
echo "# estimate: $(awk -v p="$npts" -v r="$REPEATS" -v s="$SECS" -v k="$maxk" -v i="$IDLE" 'BEGIN {
  t = p * 4 * (r + 1) * (s + 0.3) + 2 * (r + 1) * (s + 0.3) + 2 * r * i / 10000 + (k + 1e6) / 1.5e6 + 30
  printf "%.0f s", t }'), memory at most $((maxk * EST_BPK * 2 >> 20)) MiB for both servers ($EST_BPK bytes a key each)"

RES=$TMP/results   # "curve x name test system rps p99" per timed run
BYTES=$TMP/bytes   # "x name system bytes_per_key"
: >"$RES"; : >"$BYTES"
declare -A NREQ

start_both() {
  local s
  for s in "${SYS[@]}"; do
    start "$s" "${PORT[$s]}" --save "" --maxclients $((IDLE + 200))
    # the server answering must be the one just started, not a leftover
    [ "$(server_pid "${PORT[$s]}")" = "${PID[$s]}" ] ||
      die "port ${PORT[$s]} is answered by pid '$(server_pid "${PORT[$s]}")', not by the $s just started (${PID[$s]})"
  done
}
stop_both() {
  local s
  for s in "${SYS[@]}"; do stop_pid "${PID[$s]}"; done
}
info_field() {  # system section field
  redis-cli -p "${PORT[$1]}" info "$2" | tr -d '\r' | awk -F: -v k="$3" '$1 == k { print $2 }'
}
rss() { awk '/^VmRSS/ { printf "%.0f\n", $2 * 1024 }' "/proc/${PID[$1]}/status"; }
label() {  # number -> 1k, 30m (keys: decimal), 4k, 64k, 1m (bytes: binary)
  awk -v n="$1" 'BEGIN {
    if (n >= 1048576 && n % 1048576 == 0 && n < 1e6 * 1.5) { print n / 1048576 "m"; exit }
    if (n >= 1e6 && n % 1e6 == 0) { print n / 1e6 "m"; exit }
    if (n >= 1024 && n % 1024 == 0 && n < 1e5) { print n / 1024 "k"; exit }
    if (n >= 1000 && n % 1000 == 0) { print n / 1000 "k"; exit }
    print n }'
}

# fill FROM TO SIZE: SET key:FROM .. key:TO-1 to SIZE-byte values on both
# servers at once (redis-cli --pipe each); stops on any error reply.
fill() {
  local a=$1 b=$2 d=$3 s p
  declare -A FP
  for s in "${SYS[@]}"; do
    awk -v a="$a" -v b="$b" -v d="$d" 'BEGIN {
      v = "v"; while (length(v) < d) v = v v; v = substr(v, 1, d)
      for (i = a; i < b; i++) printf "*3\r\n$3\r\nSET\r\n$16\r\nkey:%012d\r\n$%d\r\n%s\r\n", i, d, v
    }' | redis-cli -p "${PORT[$s]}" --pipe >"$TMP/fill.$s" 2>&1 &
    FP[$s]=$!
  done
  for s in "${SYS[@]}"; do
    wait "${FP[$s]}" || die "filling $s with keys $a..$b: $(tail -n 2 "$TMP/fill.$s" | paste -sd ' ')"
    grep -q 'errors: 0,' "$TMP/fill.$s" ||
      die "filling $s with keys $a..$b: $(tail -n 2 "$TMP/fill.$s" | paste -sd ' ')"
  done
}
check_keys() {  # n
  local s n
  for s in "${SYS[@]}"; do
    n=$(redis-cli -p "${PORT[$s]}" dbsize)
    [ "$n" = "$1" ] || die "$s holds '$n' keys, expected $1 (see $TMP/fill.$s)"
  done
}

# bench_run SYSTEM TEST N P C R D -> "rps p99" (stops on a bad run)
bench_run() {
  local s=$1 t=$2 n=$3 P=$4 c=$5 r=$6 d=$7 line
  # one client thread: with --threads, redis-benchmark 7.0 reports
  # requests / elapsed with the elapsed time rounded to 250 ms (200,000 GETs
  # read 796,812/s, 300,000 read 1,195,219/s, 700,000 1,397,205/s on one
  # redis-server), so a 1 s run could be off by a quarter
  line=$(timeout "$RUN_TIMEOUT" redis-benchmark -p "${PORT[$s]}" -t "$t" -n "$n" -P "$P" -c "$c" \
           -d "$d" -r "$r" --csv 2>"$TMP/rb.err" | grep -v '^"test"' | tail -n 1)
  # "SET","rps","avg","min","p50","p95","p99","max": 8 fields and a rate
  echo "$line" | tr -d '"' | awk -F, 'NF == 8 && $2 + 0 > 0 && $7 != "" { ok = 1 } END { exit !ok }' ||
    die "$t -n $n -P $P -c $c -d $d -r $r against $s: no usable redis-benchmark --csv line ('$line'; $(tail -n 2 "$TMP/rb.err" | paste -sd ' '))"
  echo "$line" | tr -d '"' | awk -F, '{ print $2, $7 }'
}

# point CURVE X NAME P C R D [TESTS]: calibrate, then REPEATS alternating
# timed runs of each test on both servers, recorded in $RES
point() {
  local curve=$1 x=$2 name=$3 P=$4 c=$5 r=$6 d=$7 tests=${8:-set get} rep t s n ncal order out
  # calibration: about 50 MB or 50,000 requests, at least 4 per client
  ncal=$(awk -v d="$d" -v P="$P" -v c="$c" 'BEGIN {
    n = (P > 1) ? 50000 : 10000; m = int(50e6 / (d + 40)); if (n > m) n = m
    if (n < 4 * c) n = 4 * c; if (n < 100) n = 100; print n }')
  for t in $tests; do
    for s in "${SYS[@]}"; do
      out=$(bench_run "$s" "$t" "$ncal" "$P" "$c" "$r" "$d") || exit 1
      NREQ[$s]=$(echo "$out" | awk -v secs="$SECS" -v m="$ncal" -v c="$c" '{
        n = int($1 * secs); if (n < 4 * c) n = 4 * c; if (n < 100) n = 100; print n }')
      NREQ[$t.$s]=${NREQ[$s]}
    done
    for rep in $(seq "$REPEATS"); do
      order=(rcukv redis); [ $((rep % 2)) = 0 ] && order=(redis rcukv)
      for s in "${order[@]}"; do
        n=${NREQ[$t.$s]}
        out=$(bench_run "$s" "$t" "$n" "$P" "$c" "$r" "$d") || exit 1
        echo "$curve $x $name $t $s $out" >>"$RES"
        printf 'run %d %-16s %-3s %-5s n=%-8d rps,p99: %s\n' "$rep" "$name" "$t" "$s" "$n" "$out"
      done
    done
  done
}

# ---------------------------------------------------------------- keys, bytes
phase_keys() {
  local s n have=0 need name
  declare -A U0
  start_both
  sleep 0.5
  for s in "${SYS[@]}"; do U0[$s]=$(info_field "$s" memory used_memory); done
  for n in "${KEYS_PTS[@]}"; do
    name=keys_$(label "$n")
    if [ "$MAX_KEYS" != 0 ] && [ "$n" -gt "$MAX_KEYS" ]; then
      echo "SKIP curves.$name: over CURVES_MAX_KEYS=$MAX_KEYS"; continue
    fi
    need=$((n * EST_BPK * 2))
    if [ "$need" -gt $((mem_avail / 10 * 7)) ]; then
      echo "SKIP curves.$name: needs about $((need >> 20)) MiB for both servers ($EST_BPK bytes a key each), over 70 % of MemAvailable ($((mem_avail >> 20)) MiB)"
      continue
    fi
    echo "# filling to $n keys (about $((need >> 20)) MiB for both servers)"
    fill "$have" "$n" 32
    have=$n
    check_keys "$n"
    sleep 1  # the table's background resize and frees settle
    for s in "${SYS[@]}"; do
      local u1 r1
      u1=$(info_field "$s" memory used_memory); r1=$(rss "$s")
      echo "# $s: $n keys, used_memory ${U0[$s]} -> $u1, rss $r1"
      echo "$n $name $s $(awk -v a="${U0[$s]}" -v b="$u1" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }')" >>"$BYTES"
    done
    point keys "$n" "$name" 16 50 "$n" 32
  done
  stop_both
}

# ---------------------------------------------------------------- values
phase_values() {
  local d k
  for d in "${VAL_PTS[@]}"; do
    start_both
    k=$(( (512 << 20) / d )); [ "$k" -gt 100000 ] && k=100000
    echo "# values of $d bytes: $k keys"
    fill 0 "$k" "$d"
    check_keys "$k"
    point values "$d" "value_$(label "$d")b" 1 50 "$k" "$d"
    stop_both
  done
}

# ---------------------------------------------------------------- connections
phase_conns() {
  local c
  start_both
  fill 0 "$CONN_KEYS" 32
  check_keys "$CONN_KEYS"
  for c in "${CONN_PTS[@]}"; do
    if [ $((c + 64)) -gt "$NOFILE" ]; then
      echo "SKIP curves.conns_$c: open-files limit $NOFILE (ulimit -Hn) under $c + 64"; continue
    fi
    point conns "$c" "conns_$c" 1 "$c" "$CONN_KEYS" 32
  done
  phase_idle
  stop_both
}

# idle: GET -c 50 while the holder keeps IDLE connections open to the
# server measured (servers filled by phase_conns)
phase_idle() {
  local rep s order out hp name=idle_$IDLE
  if [ $((IDLE + 64)) -gt "$NOFILE" ]; then
    echo "SKIP curves.$name: open-files limit $NOFILE (ulimit -Hn) under $IDLE + 64"; return
  fi
  for s in "${SYS[@]}"; do
    out=$(bench_run "$s" get 10000 1 50 "$CONN_KEYS" 32) || exit 1
    NREQ[idle.$s]=$(echo "$out" | awk -v secs="$SECS" '{ n = int($1 * secs); print n < 200 ? 200 : n }')
  done
  for rep in $(seq "$REPEATS"); do
    order=(rcukv redis); [ $((rep % 2)) = 0 ] && order=(redis rcukv)
    for s in "${order[@]}"; do
      mkfifo "$TMP/idle.in"
      python3 "$HERE/curves_idle.py" --port "${PORT[$s]}" --conns "$IDLE" --hold 600 \
        <"$TMP/idle.in" >"$TMP/idle.out" 2>"$TMP/idle.err" &
      hp=$!
      pids+=("$hp")
      exec 7>"$TMP/idle.in"
      for _ in $(seq 1200); do  # 60 s at most
        grep -q '^ready' "$TMP/idle.out" 2>/dev/null && break
        kill -0 "$hp" 2>/dev/null || break
        sleep 0.05
      done
      grep -q "^ready $IDLE" "$TMP/idle.out" ||
        die "$IDLE idle connections to $s: $(cat "$TMP/idle.err")"
      echo "# $s: $(info_field "$s" clients connected_clients) clients connected"
      out=$(bench_run "$s" get "${NREQ[idle.$s]}" 1 50 "$CONN_KEYS" 32) || exit 1
      exec 7>&-
      wait "$hp" || die "the idle holder against $s: $(cat "$TMP/idle.err")"
      rm -f "$TMP/idle.in"
      echo "idle $IDLE $name get $s $out" >>"$RES"
      printf 'run %d %-16s %-3s %-5s n=%-8d rps,p99: %s\n' "$rep" "$name" get "$s" "${NREQ[idle.$s]}" "$out"
    done
  done
}

phase_keys
phase_values
phase_conns

# ---------------------------------------------------------------- report
mkdir -p "$OUT"
awk -v pts="$OUT/points.tsv" -v bytesf="$BYTES" '
function median(arr, n,    i, j, t) {
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
  return (n % 2) ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
}
BEGIN {
  while ((getline l < bytesf) > 0) {
    split(l, f, " "); nb++; BX[nb] = f[1]; BN[nb] = f[2]; BS[nb] = f[3]; BV[nb] = f[4]
  }
}
{ k = $3 SUBSEP $4 SUBSEP $5
  if (!(k in cnt)) { nk++; K[nk] = k; CUR[k] = $1; X[k] = $2 }
  cnt[k]++; rps[k, cnt[k]] = $6; p99[k, cnt[k]] = $7 }
END {
  for (i = 1; i <= nk; i++) {
    k = K[i]; n = cnt[k]
    for (j = 1; j <= n; j++) { a[j] = rps[k, j]; b[j] = p99[k, j] }
    R[k] = median(a, n); P[k] = median(b, n)
    split(k, f, SUBSEP)
    printf "BENCH curves.%s.%s.%s %.0f ops/s\n", f[1], f[2], f[3], R[k]
    printf "BENCH curves.%s.%s.p99.%s %.3f ms\n", f[1], f[2], f[3], P[k]
  }
  for (i = 1; i <= nb; i++) printf "BENCH curves.bytes_per_key.%s.%s %s bytes\n", BN[i], BS[i], BV[i]
  # the slope past 1M keys: the fraction of its 1M-key rate each keeps at
  # the largest count measured
  big = 0
  for (i = 1; i <= nk; i++) { k = K[i]; if (CUR[k] == "keys" && X[k] + 0 > big) { big = X[k] + 0; bigname = substr(k, 1, index(k, SUBSEP) - 1) } }
  nslope = 0
  if (big > 1000000) {
    split("get set", T, " ")
    for (t = 1; t <= 2; t++) {
      for (s = 1; s <= 2; s++) {
        sy = (s == 1) ? "rcukv" : "redis"
        lo = "keys_1m" SUBSEP T[t] SUBSEP sy; hi = bigname SUBSEP T[t] SUBSEP sy
        if (!(R[lo] > 0)) continue
        KEPT[T[t], sy] = R[hi] / R[lo]
        printf "BENCH curves.keys.%s.kept_1m_to_%s.%s %.3f\n", T[t], substr(bigname, 6), sy, KEPT[T[t], sy]
      }
    }
  }
  # A reference that measured zero (or is missing) has no ratio: stop
  # before any RATIO line.
  for (i = 1; i <= nk; i++) {
    k = K[i]; split(k, f, SUBSEP); if (f[3] != "rcukv") continue
    ref = f[1] SUBSEP f[2] SUBSEP "redis"
    if (!(R[ref] > 0) || !(P[ref] > 0)) {
      printf "bench_curves: curves.%s.%s: the reference measured %s ops/s, p99 %s ms; no ratio, stopping\n", f[1], f[2], R[ref], P[ref] > "/dev/stderr"
      exit 1
    }
  }
  for (i = 1; i <= nb; i++) if (BS[i] == "rcukv") {
    for (j = 1; j <= nb; j++) if (BS[j] == "redis" && BN[j] == BN[i]) ref = BV[j]
    if (!(ref > 0)) { printf "bench_curves: bytes_per_key.%s: the reference measured %s; stopping\n", BN[i], ref > "/dev/stderr"; exit 1 }
    RB[BN[i]] = BV[i] / ref
  }
  for (i = 1; i <= nk; i++) {
    k = K[i]; split(k, f, SUBSEP); if (f[3] != "rcukv") continue
    ref = f[1] SUBSEP f[2] SUBSEP "redis"
    printf "RATIO curves.%s.%s %.2f higher\n", f[1], f[2], R[k] / R[ref]
    printf "RATIO curves.%s.%s.p99 %.2f lower\n", f[1], f[2], P[k] / P[ref]
  }
  for (i = 1; i <= nb; i++) if (BS[i] == "rcukv") printf "RATIO curves.bytes_per_key.%s %.2f lower\n", BN[i], RB[BN[i]]
  split("get set", T, " ")
  for (t = 1; t <= 2; t++) if (KEPT[T[t], "redis"] > 0)
    printf "RATIO curves.keys.%s.kept_1m_to_%s %.2f higher\n", T[t], substr(bigname, 6), KEPT[T[t], "rcukv"] / KEPT[T[t], "redis"]
  # the plots: one per curve and measure, GET and SET of both servers
  print "title\tkeys.ops\tThroughput against keys (GET/SET -P 16 -c 50, 32 B values)\tkeys\tops/s" > pts
  print "title\tkeys.p99\tp99 latency against keys (GET/SET -P 16 -c 50)\tkeys\tms" > pts
  print "title\tvalues.ops\tThroughput against value size (-P 1 -c 50)\tvalue bytes\tops/s" > pts
  print "title\tvalues.p99\tp99 latency against value size (-P 1 -c 50)\tvalue bytes\tms" > pts
  print "title\tconns.ops\tThroughput against connections (-P 1, 100K keys)\tconnections\tops/s" > pts
  print "title\tconns.p99\tp99 latency against connections (-P 1, 100K keys)\tconnections\tms" > pts
  print "title\tbytes_per_key\tBytes per key (used_memory delta, 16 B keys, 32 B values)\tkeys\tbytes" > pts
  for (i = 1; i <= nk; i++) {
    k = K[i]; split(k, f, SUBSEP); if (CUR[k] == "idle") continue
    printf "point\t%s.ops\t%s\t%s %s\t%s\n", CUR[k], X[k], f[3], toupper(f[2]), R[k] > pts
    printf "point\t%s.p99\t%s\t%s %s\t%s\n", CUR[k], X[k], f[3], toupper(f[2]), P[k] > pts
  }
  for (i = 1; i <= nb; i++) printf "point\tbytes_per_key\t%s\t%s\t%s\n", BX[i], BS[i], BV[i] > pts
  close(pts)
}' "$RES" || exit 1
python3 "$HERE/curves_plot.py" "$OUT/points.tsv" "$OUT" | sed 's/^/# /' ||
  die "the plots in $OUT"
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
