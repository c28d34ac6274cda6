#!/usr/bin/env bash
# broken_gp.sh - shows the table's torture test can fail: built with
# BROKEN_GP=1 (grace periods that do not wait for readers: RCU_GP_BROKEN in
# rcu/rcu_internal.h), each flavor's hashtable torture must report that its
# readers saw freed entries.  A case counts as caught only on the torture's
# own freed-entry messages (a held entry that changed under its reader, an
# entry with a foreign key, a value not written for its key, a scan that
# reached a freed entry): either it exits 1 and its closing "readers saw"
# line counts freed or foreign entries, or it printed such messages and then
# died of SIGSEGV/SIGBUS (a reader that followed a link the table had just
# poisoned, before the quarantine below could redirect it: seen in 2 of 4
# cases of one CI rehearsal).  Missed stable keys alone, a timeout, a crash
# with no freed-entry message or another failure are NOT caught and shown.
# The torture's BROKEN_GP build keeps freed blocks in a quarantine (so a
# reader of a freed entry reports instead of crashing); the table poisons
# them first (rcu/poison.h).  Each case runs under both allocators: jemalloc
# (the product's) and glibc malloc (USE_JEMALLOC=0, its own build directory).
# Release variant only, like tests/rcu/broken_gp.sh.  BROKEN_GP_TIMEOUT
# (default 120) is each run's limit in seconds.
set -u
cd "$(dirname "$0")/../.."
if [ "${VARIANT:-release}" != release ]; then
	echo "SKIP under ${VARIANT} (release variant only)"; echo "0 passed, 0 failed, 1 skipped"; exit 0
fi
limit=${BROKEN_GP_TIMEOUT:-120}
pass=0 fail=0
for alloc in jemalloc glibc; do
	if [ $alloc = jemalloc ]; then bb=build/release-brokengp; opts=(); else bb=build/release-brokengp-glibc; opts=(B=$bb USE_JEMALLOC=0); fi
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s BROKEN_GP=1 "${opts[@]}" \
		$bb/tests/hashtable/test_ht_torture_qsbr $bb/tests/hashtable/test_ht_torture_memb >/dev/null ||
		{ echo "FAIL build with $alloc"; fail=$((fail + 1)); continue; }
	for f in qsbr memb; do
		out=$(TORTURE_SECONDS=1 timeout -k 5 "$limit" $bb/tests/hashtable/test_ht_torture_$f 2>&1)
		rc=$?
		line=$(echo "$out" | grep -E '^readers saw: [0-9]+ freed or foreign entries, ' | tail -n 1)
		freed=$(echo "$line" | sed -E 's/^readers saw: ([0-9]+) freed.*/\1/')
		msgs=$(echo "$out" | grep -cE '^torture: .*(\(freed\)|foreign key|not written for it|reached a freed entry)')
		echo "$f, $alloc: ${line:-no closing line} ($(echo "$out" | grep -E '^quarantine:' | sed 's/^quarantine: //'))"
		if [ $rc = 1 ] && [ -n "$line" ] && [ "${freed:-0}" -gt 0 ]; then
			echo "ok   broken grace period caught ($f, $alloc: $freed freed or foreign entries seen)"
			pass=$((pass + 1))
			continue
		fi
		if { [ $rc = 139 ] || [ $rc = 135 ]; } && [ "$msgs" -gt 0 ]; then
			echo "ok   broken grace period caught ($f, $alloc: $msgs freed-entry messages, then a reader died of signal $((rc - 128)) on poisoned memory)"
			pass=$((pass + 1))
			continue
		fi
		case $rc in
		0) why="the torture passed" ;;
		1) why="it failed, but readers saw no freed entry" ;;
		124 | 137) why="timed out after $limit s (rc=$rc)" ;;
		*) if [ $rc -gt 128 ]; then why="killed by signal $((rc - 128))"; else why="exit $rc"; fi ;;
		esac
		echo "FAIL broken grace period NOT caught ($f, $alloc: $why)"; fail=$((fail + 1))
		echo "$out" | tail -n 30 | sed 's/^/    | /'
	done
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
