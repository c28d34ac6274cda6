# bench/servers.sh - sourced by bench_server.sh and bench_pubsub.sh, after
# scripts/lib.sh's scratch_init: the three systems they compare, each
# started fresh on loopback with persistence off:
#   rcukv      $SERVER (build/<variant>/rcukv-server; threads = cores)
#   redis      redis-server, default configuration
#   redis_io2  redis-server --io-threads 2 --io-threads-do-reads yes
# start NAME PORT [ARGS...] (more options for the server, e.g. --maxclients N)
# sets PID[NAME] (also in $pids, stopped on exit) and stops
# the benchmark when the server does not answer; logs go to $TMP/NAME.log.
SYSTEMS=(rcukv redis redis_io2)
declare -A PID

start() {  # name port
  local name=$1 port=$2
  shift 2
  case $name in
    rcukv) "$SERVER" --port "$port" --bind 127.0.0.1 --loglevel warning "$@" >"$TMP/$name.log" 2>&1 & ;;
    redis) redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
             --loglevel warning --dir "$TMP" "$@" >"$TMP/$name.log" 2>&1 & ;;
    redis_io2) redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
             --io-threads 2 --io-threads-do-reads yes \
             --loglevel warning --dir "$TMP" "$@" >"$TMP/$name.log" 2>&1 & ;;
  esac
  PID[$name]=$!
  pids+=($!)
  for _ in $(seq 100); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "$LIB_NAME: $name did not start on port $port" >&2
  cat "$TMP/$name.log" >&2
  exit 1
}

cpu_ticks() {  # pid -> utime+stime in ticks
  awk '{ print $14 + $15 }' "/proc/$1/stat"
}
