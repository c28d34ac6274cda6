# scripts/lib.sh - shared by the shell tests (tests/*/*.sh) and the benchmarks
# (bench/*.sh); sourced, never run.  Bash only.
#
#   counting     ok / bad / skip / check / check_cases / cases_vs_redis /
#                summary: each test script ends with summary's "N passed,
#                M failed, K skipped", the line tests/run.sh reads
#   tools        have_tools, need_tools and die (benchmarks: stop), skip_without
#                (tests: a skip, then the closing line), need_built
#   scratch      scratch_init NAME: $tmp, removed on exit, and $pids, servers
#                stopped by their process id on exit (SIGINT and SIGTERM
#                exit through the same cleanup); at_exit adds a command
#   ports        free_port: the first loopback port in a block nobody listens on
#   servers      wait_up, server_pid, server_up (start $SRV and make sure the
#                server answering is the one started, by its pid), redis_up
#                (a reference redis-server), stop_pid
#   TLS          tls_certs DIR: a throwaway CA and the certificates signed by it
#
# Messages that stop a script name it: $LIB_NAME, by default the script's
# file name without .sh.  A benchmark sets LIB_BENCH=1 before sourcing: its
# stops print no closing line (it has no checks to count).
LIB_NAME=${LIB_NAME:-$(basename "$0" .sh)}
LIB_BENCH=${LIB_BENCH:-0}

# --- counting ------------------------------------------------------------------
pass=0; fail=0; skipped=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
# skip WHAT: a check that cannot be made on this machine (printed and counted
# as skipped, never as passed)
skip() { skipped=$((skipped + 1)); echo "SKIP $*"; }
# summary: the closing line tests/run.sh reads; returns 1 on any failure
# summary: the closing line.  After a failure, first the sanitizer reports
# any server this script started left in its logs, so a crash seen only in CI
# names its cause.
summary() {
  if [ "$fail" != 0 ] && [ -n "${tmp:-}" ] && [ -d "$tmp" ]; then
    grep -h -A3 -E 'runtime error:|ERROR: AddressSanitizer|WARNING: ThreadSanitizer|ERROR: LeakSanitizer' \
      "$tmp"/*.log 2>/dev/null | head -n 20 | sed 's/^/# server log: /'
  fi
  echo "$pass passed, $fail failed, $skipped skipped"
  [ "$fail" = 0 ]
}

# check WHAT 'EXPR': EXPR is ONE string, evaluated whole (eval), so every part
# of a compound condition is checked:
#   check "policy and limit" '[ "$p" = noeviction ] && [ "$m" = 0 ]'
# Anything else after WHAT is refused as a failure: the old form
#   check "policy and limit" [ "$p" = noeviction ] && [ "$m" = 0 ]
# ran check on the first test only and evaluated the second outside it
# (issue 14), and now arrives here as several words.  Returns EXPR's status.
check() {
  if [ $# -ne 2 ]; then
    bad "$1 (check takes one quoted expression; got $(($# - 1)) words: ${*:2})"
    return 1
  fi
  if eval "$2"; then ok "$1"; else bad "$1"; return 1; fi
}

# check_cases NAME OUTPUT: OUTPUT is test_server --cases' output; passes when
# its closing line says 0 failed, counts its skipped cases as skips, and shows
# the tail of OUTPUT when it fails or has no closing line.
check_cases() {
  local line n
  line=$(echo "$2" | grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' | tail -n 1)
  if [[ $line =~ ^[0-9]+\ passed,\ 0\ failed ]]; then
    ok "$1: $line"
  else
    bad "$1: ${line:-no closing line}"
    echo "$2" | grep -v '^ok' | tail -n 30 | sed 's/^/    | /'
    return 1
  fi
  n=${line##*failed, }; n=${n%% skipped}
  if [[ $line == *skipped ]] && [ "$n" != 0 ]; then
    skip "$1: $n cases skipped by test_server"
  fi
  return 0
}

# cases_vs_redis NAME FILE FIRST_PORT: the test_server cases of FILE ($TS
# --cases-only) against a redis-server started here on a free port from
# FIRST_PORT (up to $PORT_LAST) in $tmp, counted as one check_cases; a skip
# when redis-server is not installed.  The server is stopped before it
# returns.  Needs scratch_init's $tmp and $pids, and $TS.
cases_vs_redis() {
  local name=$1 file=$2
  if redis_up "$3"; then
    check_cases "$name against redis-server $(redis-server --version | grep -o 'v=[0-9.]*')" \
      "$("$TS" --port "$RP" --cases "$file" --cases-only 2>&1)"
    stop_pid "$rpid"
  fi
}

# cases_both NAME: tests/server/NAME's cases against the rcukv-server on $P,
# then cases_vs_redis on a redis-server from port $P + 1.
cases_both() {
  check_cases "$1 against rcukv-server" \
    "$("$TS" --port "$P" --cases "tests/server/$1" --cases-only 2>&1)"
  cases_vs_redis "$1" "tests/server/$1" $((P + 1))
}

# --- tools -----------------------------------------------------------------------
# have_tools TOOL...: true when every TOOL is on PATH; else sets $missing to
# the first one that is not.
have_tools() {
  local t
  missing=
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 || { missing=$t; return 1; }
  done
}
# need_tools TOOL...: a benchmark's precondition: stops the script (exit 1)
# naming the missing tool.
need_tools() {
  have_tools "$@" || { echo "$LIB_NAME: $missing not found (scripts/deps.sh test)" >&2; exit 1; }
}
# die MSG: a benchmark that cannot go on: "$LIB_NAME: MSG; $LIB_STOP" on
# stderr, exit 1 (no RATIO line is printed after a failed reference).
# LIB_STOP defaults to "stopping".
die() { echo "$LIB_NAME: $*; ${LIB_STOP:-stopping}" >&2; exit 1; }
# need_built FILE...: stops the script (exit 1) naming the first FILE that is
# not an executable; a test counts it as a failure and prints its closing line.
need_built() {
  local f
  for f in "$@"; do
    [ -x "$f" ] && continue
    if [ "$LIB_BENCH" = 1 ]; then
      echo "$LIB_NAME: $f not built" >&2
    else
      bad "$f not built"
      summary
    fi
    exit 1
  done
}
# skip_without WHY TOOL...: a test that cannot run here: when a TOOL is
# missing, says so as one skip, prints the closing line and exits 0.
skip_without() {
  local why=$1
  shift
  have_tools "$@" && return 0
  skip "$why ($missing not found)"
  summary
  exit 0
}

# --- scratch ---------------------------------------------------------------------
# scratch_init NAME: $tmp, a directory removed on exit, and $pids, processes
# (servers) stopped and waited for on exit.  SIGINT and SIGTERM (run.sh's
# time limit) exit 130 through the same cleanup.
scratch_init() {
  tmp=$(mktemp -d "/tmp/rcukv-$1.XXXXXX")
  pids=()
  exit_cmds=()
  trap scratch_cleanup EXIT
  trap 'exit 130' INT TERM
}
# at_exit 'COMMAND': evaluated at exit, before $pids are stopped and $tmp is
# removed, with the values variables have then (a server started later, a
# mount to undo).
at_exit() { exit_cmds+=("$1"); }
scratch_cleanup() {
  local p c
  for c in "${exit_cmds[@]}"; do eval "$c"; done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}

# --- ports -----------------------------------------------------------------------
# free_port FIRST [LAST]: the first port in FIRST..LAST (default $PORT_LAST)
# nobody listens on on 127.0.0.1, or 0.
free_port() {
  local p
  for p in $(seq "$1" "${2:-$PORT_LAST}"); do
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo "$p"; return; fi
  done
  echo 0
}

# --- servers ---------------------------------------------------------------------
# wait_up PORT [PASSWORD]: until the server answers PING (10 s at most).
wait_up() {
  local i
  for i in $(seq 1 100); do
    if redis-cli -p "$1" ${2:+-a "$2"} --no-auth-warning ping 2>/dev/null | grep -q PONG; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# server_pid PORT: the process_id the server on PORT reports (INFO server).
server_pid() {
  redis-cli -p "$1" info server 2>/dev/null | tr -d '\r' | awk -F: '$1 == "process_id" { print $2 }'
}

# server_up EXT_PORT FIRST [ARGS...]: with EXT_PORT set, test the server
# already listening there (external=1); else start $SRV with ARGS on the
# first free port from FIRST, its log in $tmp/server.log (spid, in $pids;
# external=0).  Sets P; ends the script with its closing line if nothing
# answers.  A started server counts as up only when the one answering on P
# reports its pid: two scripts that picked the same free port at the same
# moment (two test runs on one machine) would otherwise both talk to the
# one that got the port, each flushing and reconfiguring the other's data;
# the one whose server could not listen moves on to the next free port.
server_up() {
  local ext=$1 first=$2 try
  shift 2
  if [ -n "$ext" ]; then
    P=$ext
    external=1
    if wait_up "$P"; then
      ok "server up on port $P"
      return
    fi
  else
    external=0
    for try in 1 2 3 4 5; do
      P=$(free_port "$first")
      [ "$P" = 0 ] && break
      "$SRV" --port "$P" "$@" >"$tmp/server.log" 2>&1 &
      spid=$!
      pids+=("$spid")
      if wait_up "$P" && [ "$(server_pid "$P")" = "$spid" ]; then
        ok "server up on port $P"
        return
      fi
      echo "# port $P: the server answering is not ours (pid $spid); trying the next port"
      stop_pid "$spid"
      first=$((P + 1))
    done
  fi
  bad "server up on port $P"
  summary
  exit 1
}

# find_redis_py: PY is a python3 that imports redis-py (Debian's
# python3-redis is for /usr/bin/python3, which may not be the first python3 on
# PATH), or empty.
find_redis_py() {
  local py
  PY=
  for py in /usr/bin/python3 python3; do
    if "$py" -c 'import redis' 2>/dev/null; then PY=$py; return 0; fi
  done
  return 1
}

# redis_up FIRST: start a reference redis-server 7 (no persistence) on the
# first free port from FIRST, its log in $tmp/redis.log; sets RP and rpid
# (in $pids).  Returns 1 after a skip (not installed) or a failure (no free
# port, did not answer), so a caller just goes on without it.
redis_up() {
  if ! command -v redis-server >/dev/null; then
    skip "redis-server: not installed (scripts/deps.sh test installs it)"; return 1
  fi
  RP=$(free_port "$1")
  if [ "$RP" = 0 ]; then bad "redis-server: no free port"; return 1; fi
  redis-server --port "$RP" --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$tmp" >"$tmp/redis.log" 2>&1 &
  rpid=$!
  pids+=("$rpid")
  wait_up "$RP" && return 0
  bad "redis-server did not start on $RP"; tail -n 5 "$tmp/redis.log"
  return 1
}

# against_both FN FIRST: FN WHO PORT for the rcukv-server of server_up
# ("rcukv-server" $P), then for a reference redis-server started by redis_up
# on a free port from FIRST ("redis-server v=X.Y.Z" $RP): the same checks
# against both, so one written to match rcukv fails against Redis.
against_both() {
  "$1" rcukv-server "$P"
  if redis_up "$2"; then
    "$1" "redis-server $(redis-server --version | grep -o 'v=[0-9.]*')" "$RP"
  fi
}

# stop_pid PID: SIGCONT (a stopped server), SIGTERM, then wait until PID is
# gone (10 s at most; polled, because a subshell cannot wait for its parent's
# child) and reap it when it is ours.
stop_pid() {
  local i
  [ -n "$1" ] || return 0
  kill -CONT "$1" 2>/dev/null
  kill "$1" 2>/dev/null
  for i in $(seq 1 500); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.02
  done
  wait "$1" 2>/dev/null
  return 0
}

# --- TLS ---------------------------------------------------------------------------
# tls_certs DIR: throwaway certificates (2 days) made with the openssl CLI in
# DIR, which must exist:
#   ca.crt/.key      the test CA
#   server.crt/.key  signed by the CA: CN "rcukv test server", subjectAltName
#                    IP:127.0.0.1 and DNS:localhost
#   cn.crt/.key      signed by the CA: the address as CN (127.0.0.1), no
#                    subjectAltName
#   client.crt/.key  signed by the CA: CN "client"
#   rogue.crt/.key   self-signed, CN "rogue": a CA nobody trusts
# openssl's output goes to DIR/openssl.log.  Returns non-zero when openssl
# failed (the log says why).
tls_certs() {
  (
    cd "$1" || exit 1
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >san.ext
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -keyout ca.key -out ca.crt -subj "/CN=rcukv test CA" &&
      tls_signed server "/CN=rcukv test server" -extfile san.ext &&
      tls_signed cn "/CN=127.0.0.1" &&
      tls_signed client "/CN=client" &&
      openssl req -x509 -newkey rsa:2048 -nodes -days 2 -keyout rogue.key -out rogue.crt -subj "/CN=rogue"
  ) >"$1/openssl.log" 2>&1
}
# tls_signed NAME SUBJECT [X509 ARGS...]: NAME.key and NAME.crt signed by the
# CA in the current directory (tls_certs' helper).
tls_signed() {
  local name=$1 subj=$2
  shift 2
  openssl req -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" -subj "$subj" &&
    openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 "$@" -out "$name.crt"
}
