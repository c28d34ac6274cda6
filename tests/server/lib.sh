# tests/server/lib.sh - shared by the server's shell tests (sourced).
# Counters and checks (each script ends with summary: "N passed, M failed,
# K skipped"), a free loopback port in the script's own block, and a wait for
# a server.  Before sourcing, set PORT_LAST: the last port of the script's block.
pass=0; fail=0; skipped=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
# skip WHAT: a check that cannot be made on this machine (printed and counted
# as skipped, never as passed)
skip() { skipped=$((skipped + 1)); echo "SKIP $*"; }
# summary: the closing line tests/run.sh reads
summary() { echo "$pass passed, $fail failed, $skipped skipped"; }

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

# free_port FIRST: the first port in FIRST..PORT_LAST nobody listens on, or 0.
free_port() {
  local p
  for p in $(seq "$1" "$PORT_LAST"); do
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo "$p"; return; fi
  done
  echo 0
}

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

# scratch_init NAME: $tmp, a directory removed on exit, and $pids, servers
# killed (and waited for) on exit.
scratch_init() {
  tmp=$(mktemp -d "/tmp/rcukv-$1.XXXXXX")
  pids=()
  trap scratch_cleanup EXIT
}
scratch_cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
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
      kill "$spid" 2>/dev/null
      wait "$spid" 2>/dev/null
      first=$((P + 1))
    done
  fi
  bad "server up on port $P"
  summary
  exit 1
}
