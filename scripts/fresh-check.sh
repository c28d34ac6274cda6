#!/usr/bin/env bash
# scripts/fresh-check.sh: what a newcomer's first two commands do on a fresh
# Debian 12 machine.  `make fresh-check` runs it.
#
#   scripts/fresh-check.sh          a throwaway Debian 12 root (debootstrap
#                                   --variant=minbase bookworm), a fresh clone of
#                                   this repository's HEAD in it, `make` as the
#                                   only package added by hand; then the run
#                                   checks below, then `make test` in the same
#                                   root.  Needs root and the network to Debian.
#   scripts/fresh-check.sh --here   the run checks only, in this tree on this
#                                   machine (CI runs it before `make test`, on
#                                   its fresh machine).
#
# The run checks: `make run` in the background answers PING (redis-cli when
# there is one, else a RESP PING over bash's /dev/tcp) before anything else
# was built or installed, without the test packages (cmocka); SHUTDOWN makes
# it exit 0; a second `make run` on a port in use fails with Redis's two log
# lines and exit 1; SIGINT to make's process group (what Ctrl-C does) shuts the
# server down with Redis's lines and make returns.
#
# Exit status: 0 every check passed; 1 a check failed; 77 the machine cannot
# make the throwaway root (not root, no debootstrap, or debootstrap failed):
# nothing was checked then, and the script says so.
set -u
cd "$(dirname "$0")/.."
top=$PWD
# counters, ok/bad/skip/check/summary, free_port
. scripts/lib.sh
cannot() { echo "fresh-check: cannot make a throwaway Debian root: $*" >&2
	echo "fresh-check: nothing was checked (exit 77)" >&2; exit 77; }

# --- the run checks ---------------------------------------------------------
# FRESH_CHROOT, when set, is the root `make` runs in (the tree is /src there).
in_root() {
	if [ -n "${FRESH_CHROOT:-}" ]; then
		chroot "$FRESH_CHROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
			bash -c "cd /src && $1"
	else
		bash -c "cd '$top' && $1"
	fi
}

# ping PORT: prints the server's answer to PING (empty if none).
ping_port() {
	if command -v redis-cli >/dev/null; then
		timeout 3 redis-cli -p "$1" PING 2>/dev/null
		return
	fi
	local line=""
	exec 3<>"/dev/tcp/127.0.0.1/$1" || return
	printf '*1\r\n$4\r\nPING\r\n' >&3
	read -r -t 3 line <&3
	exec 3<&- 3>&-
	printf '%s\n' "${line%$'\r'}" | sed 's/^+//'
}

send_shutdown() {
	if command -v redis-cli >/dev/null; then
		timeout 10 redis-cli -p "$1" SHUTDOWN >/dev/null 2>&1
		return 0
	fi
	exec 3<>"/dev/tcp/127.0.0.1/$1" || return
	printf '*1\r\n$8\r\nSHUTDOWN\r\n' >&3
	timeout 10 cat <&3 >/dev/null
	exec 3<&- 3>&-
}

# wait_up PORT PID: until PING answers PONG or PID is gone (up to 20 min: on a
# fresh machine the first `make run` installs packages and builds).
wait_up() {
	local i
	for i in $(seq 1 12000); do
		[ "$(ping_port "$1")" = PONG ] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# wait_gone PID SECS: true when PID has exited within SECS seconds.
wait_gone() {
	local i
	for i in $(seq 1 $(($2 * 10))); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# start_run PORT LOG: `make run` in the background, in a process group of its
# own (job control on), as a terminal would run it; $! is the group's leader.
start_run() {
	set -m
	(in_root "exec make run RUN_ARGS='--port $1'") >"$2" 2>&1 &
	set +m
}

run_checks() {
	local port log log2 pid pid2 rc
	port=$(free_port $((20000 + RANDOM % 20000)) 40999)
	[ "$port" = 0 ] && { bad "no free port found"; return; }
	log=$(mktemp /tmp/fresh-run.XXXXXX)
	log2=$(mktemp /tmp/fresh-run2.XXXXXX)
	echo "== make run RUN_ARGS='--port $port' (log: $log)"
	local t0=$SECONDS fresh_build=1
	in_root 'test -d build/release/tests' && fresh_build=0
	start_run "$port" "$log"
	pid=$!
	if wait_up "$port" "$pid"; then
		ok "make run answers PING on port $port ($((SECONDS - t0)) s, packages and build included)"
	else
		bad "make run answers PING on port $port"
		tail -n 30 "$log" | sed 's/^/    | /'
		kill -TERM -- "-$pid" 2>/dev/null
		return
	fi
	if [ "$fresh_build" = 1 ]; then
		check "make run built no test program (no build/release/tests)" \
			"! in_root 'test -d build/release/tests'"
	else
		skip "make run built no test program: build/release/tests existed before"
	fi
	if [ -n "${FRESH_CHROOT:-}" ]; then
		check "make run installed no test package (libcmocka-dev absent)" \
			"! in_root 'dpkg-query -W -f=\"\${Status}\" libcmocka-dev 2>/dev/null | grep -q \"ok installed\"'"
	fi

	echo "== a second make run on port $port, which is in use"
	in_root "make run RUN_ARGS=\"--port $port\"" >"$log2" 2>&1
	rc=$?
	check "port in use: make run fails (status $rc)" '[ "$rc" != 0 ]'
	check "port in use: the server exits 1 (make says Error 1)" "grep -q 'run. Error 1' '$log2'"
	check "port in use: Redis's bind warning" \
		"grep -q '# Warning: Could not create server TCP listening socket 127.0.0.1:$port: bind: Address already in use' '$log2'"
	check "port in use: Redis's abort line" \
		"grep -q '# Failed listening on port $port (TCP), aborting.' '$log2'"
	check "port in use: the first server still answers" '[ "$(ping_port "$port")" = PONG ]'

	echo "== SHUTDOWN"
	send_shutdown "$port"
	if wait_gone "$pid" 30; then
		wait "$pid"
		rc=$?
		check "SHUTDOWN: make run exits 0 (status $rc)" '[ "$rc" = 0 ]'
	else
		bad "SHUTDOWN: make run exits within 30 s"
		kill -TERM -- "-$pid" 2>/dev/null
	fi
	check "SHUTDOWN: the server logged its last line" "grep -q 'is now ready to exit, bye bye' '$log'"

	echo "== make run, then SIGINT to its process group (Ctrl-C)"
	start_run "$port" "$log"
	pid=$!
	if ! wait_up "$port" "$pid"; then
		bad "make run answers PING again"
		tail -n 30 "$log" | sed 's/^/    | /'
		kill -TERM -- "-$pid" 2>/dev/null
		return
	fi
	kill -INT -- "-$pid"
	if wait_gone "$pid" 30; then
		ok "Ctrl-C: make run returns"
	else
		bad "Ctrl-C: make run returns within 30 s"
		kill -TERM -- "-$pid" 2>/dev/null
	fi
	check "Ctrl-C: the server logged Redis's SIGINT line" "grep -q 'Received SIGINT scheduling shutdown' '$log'"
	check "Ctrl-C: the server shut down cleanly" "grep -q 'is now ready to exit, bye bye' '$log'"
	check "Ctrl-C: nothing answers on port $port afterwards" '[ -z "$(ping_port "$port")" ]'
	pid2=$(pgrep -f "rcukv-server conf/rcukv.conf --port $port" || true)
	check "Ctrl-C: no rcukv-server left on port $port" '[ -z "$pid2" ]'
	rm -f "$log" "$log2"
}

if [ "${1:-}" = --here ]; then
	run_checks
	summary
	exit
fi

# --- the throwaway root -------------------------------------------------------
[ "$(id -u)" = 0 ] || cannot "not root (debootstrap and chroot need root)"
if ! command -v debootstrap >/dev/null; then
	echo "fresh-check: installing debootstrap"
	{ apt-get update -qq && apt-get install -y -qq debootstrap; } >/dev/null 2>&1 ||
		cannot "debootstrap is not installed and apt-get could not install it"
fi
command -v git >/dev/null || cannot "git is missing (the root gets a fresh clone)"
work=$(mktemp -d /var/tmp/rcukv-fresh.XXXXXX)
root=$work/root
cleanup() {
	for m in dev/pts dev/shm dev proc sys; do
		mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m"
	done
	[ -n "${FRESH_KEEP:-}" ] && { echo "fresh-check: kept $work"; return; }
	rm -rf "$work"
}
trap cleanup EXIT
mirror=${FRESH_MIRROR:-http://deb.debian.org/debian}
echo "== debootstrap --variant=minbase bookworm $root $mirror"
t0=$SECONDS
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
	tail -n 5 "$work/debootstrap.log" >&2
	cannot "debootstrap failed (log above)"
}
echo "   $((SECONDS - t0)) s"
# The sources a Debian 12 installation has: bookworm, its updates, security.
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb ${FRESH_SECURITY_MIRROR:-http://deb.debian.org/debian-security} bookworm-security main
EOF
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
mount -t proc proc "$root/proc" && mount -t sysfs sys "$root/sys" &&
	mount --bind /dev "$root/dev" && mount --bind /dev/pts "$root/dev/pts" ||
	cannot "could not mount /proc, /sys, /dev in the root"
mountpoint -q "$root/dev/shm" || mount -t tmpfs shm "$root/dev/shm"
echo "== a fresh clone of HEAD ($(git rev-parse --short HEAD)) in /src"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "   (uncommitted changes are not in the clone: it checks what is committed)"
fi
git clone -q "$top" "$root/src" || { bad "git clone"; summary; exit 1; }
export FRESH_CHROOT=$root
echo "== apt-get install make (the one package a newcomer installs by hand)"
if in_root 'apt-get update -qq && apt-get install -y -qq make' >"$work/make.log" 2>&1; then
	ok "make installed in the root"
else
	tail -n 5 "$work/make.log"
	bad "apt-get install make in the root"
	summary
	exit 1
fi
run_checks
echo "== make test in the same root"
t0=$SECONDS
in_root 'make test' >"$work/test.log" 2>&1
rc=$?
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$work/test.log" | tail -n 1)
tail -n 3 "$work/test.log" | sed 's/^/    | /'
check "make test in the fresh root exits 0 and ends '0 failed' ($line; $((SECONDS - t0)) s)" \
	'[ "$rc" = 0 ] && [[ "$line" =~ ^[0-9]+\ passed,\ 0\ failed ]]'
[ "$rc" = 0 ] || grep -E '^FAIL' "$work/test.log" | sed 's/^/    | /'
summary
