# tests/server/lib.sh - shared by the server's shell tests (sourced).
# Counters and checks (each script ends with "$pass passed, $fail failed"),
# a free loopback port in the script's own block, and a wait for a server.
# Before sourcing, set PORT_LAST: the last port of the script's block.
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

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
