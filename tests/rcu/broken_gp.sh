#!/usr/bin/env bash
# Shows the RCU tortures can fail: built with BROKEN_GP=1 (every grace period
# ends at once: synchronize_rcu(), call_rcu(), polled cookies, SRCU; see
# RCU_GP_BROKEN in rcu/rcu_internal.h), each torture, run alone, must report
# that its readers saw freed or stale elements.  A case counts as caught only
# when the torture exits 1 and prints its own use-after-free or stale-element
# message; a timeout, a kill by a signal (the torture's own alarm included), a
# crash, a pass, or a failure for another reason (a work-count floor) is NOT
# caught and is shown with its output.
# Runs only in the release variant (sanitizers would stop at the first
# use-after-free, which also proves the point but says less).
# BROKEN_GP_TIMEOUT (default 60) is each run's limit in seconds.
set -u
cd "$(dirname "$0")/../.."
if [ "${VARIANT:-release}" != release ]; then
	echo "SKIP under ${VARIANT} (release variant only)"; echo "0 passed, 0 failed, 1 skipped"; exit 0
fi
limit=${BROKEN_GP_TIMEOUT:-60}
pass=0; fail=0

# run <what> <command...>: sets out and rc.
run() {
	out=$(TORTURE_SECONDS=1 timeout -k 5 "$limit" "$@" 2>&1)
	rc=$?
}

# verdict <what> <caught: 0/1> <why>: counts the case; a miss shows the output.
verdict() {
	if [ "$2" = 1 ]; then
		echo "ok: broken grace period caught ($1: $3)"; pass=$((pass + 1))
	else
		echo "FAIL: broken grace period NOT caught ($1: $3)"; fail=$((fail + 1))
		echo "$out" | tail -n 30 | sed 's/^/    | /'
	fi
}

# why_not: the reason a run that lacks the message is not a catch.
why_not() {
	case $rc in
	0) echo "the torture passed" ;;
	124 | 137) echo "timed out after ${limit} s (rc=$rc)" ;;
	1) echo "it failed without its use-after-free or stale-element message" ;;
	*) if [ "$rc" -gt 128 ]; then echo "killed by signal $((rc - 128)) (rc=$rc)"; else echo "exit $rc"; fi ;;
	esac
}

# Every case under both allocators: jemalloc (the product's) and glibc malloc
# (USE_JEMALLOC=0, its own build directory), whose freed blocks are not
# handed out again at once.
for alloc in jemalloc glibc; do
	if [ $alloc = jemalloc ]; then bb=build/release-brokengp; opts=(); else bb=build/release-brokengp-glibc; opts=(B=$bb USE_JEMALLOC=0); fi
	BB=$bb/tests/rcu
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s BROKEN_GP=1 "${opts[@]}" $BB/test_torture_qsbr $BB/test_torture_memb \
		$BB/test_srcu_memb $BB/test_rculist_qsbr $BB/test_rculist_memb >/dev/null ||
		{ echo "FAIL: build with $alloc"; fail=$((fail + 1)); continue; }
	for f in qsbr memb; do
		run $BB/test_torture_$f
		echo "$out" | grep '^torture'
		if [ $rc = 1 ] && echo "$out" | grep -q '^FAIL .*: readers saw no freed or stale element$'; then
			verdict "torture $f, $alloc" 1 "$(echo "$out" | grep -o 'errors [0-9]*$')"
		else
			verdict "torture $f, $alloc" 0 "$(why_not)"
		fi
	done

	# The list torture alone: its unit tests that involve a grace period fail
	# first in this build.  Its closing line counts what readers saw by kind; a
	# catch needs reclaimed elements seen (poisoned by their call_rcu()
	# callback), not only the age check or "garbage" (which a splice that did
	# not wait also gives), so that the call_rcu() reclamation path is what
	# failed.
	for f in qsbr memb; do
		run $BB/test_rculist_$f torture
		line=$(echo "$out" | grep -E '^  readers saw: [0-9]+ reclaimed, [0-9]+ garbage, ' | tail -n 1)
		[ -n "$line" ] && echo "list torture $f, $alloc: ${line#  }"
		reclaimed=$(echo "$line" | sed -E 's/^  readers saw: ([0-9]+) reclaimed.*/\1/')
		if [ $rc = 1 ] && [ -n "$line" ] && [ "${reclaimed:-0}" -gt 0 ]; then
			verdict "list torture $f, $alloc" 1 "$reclaimed reclaimed elements seen"
		elif [ $rc = 1 ] && [ -n "$line" ]; then
			verdict "list torture $f, $alloc" 0 "no reclaimed element seen"
		else
			verdict "list torture $f, $alloc" 0 "$(why_not)"
		fi
	done

	run $BB/test_srcu_memb test_srcu_torture
	echo "$out" | grep -E '^srcu torture'
	if [ $rc = 1 ] && echo "$out" | grep -qE '^srcu torture error: readers saw [1-9][0-9]* freed or reused elements$'; then
		verdict "srcu torture, $alloc" 1 "freed or reused elements seen"
	else
		verdict "srcu torture, $alloc" 0 "$(why_not)"
	fi
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
