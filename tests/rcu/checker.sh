#!/usr/bin/env bash
# Death tests for the RCU checker: each rule aborts with its message in the
# RCU_DEBUG build (make DEBUG_RCU=1); the checker-only rules cost nothing and
# check nothing in the normal build; the rules every build enforces abort in
# both.
set -u
cd "$(dirname "$0")/../.."
V=${VARIANT:-release}
if [ "$V" != release ]; then echo "SKIP checker.sh under $V (it builds its own DEBUG_RCU variant)"; echo "0 passed, 0 failed, 1 skipped"; exit 0; fi
make -s DEBUG_RCU=1 build/release-debug/tests/rcu/test_checker >/dev/null &&
make -s build/release/tests/rcu/test_checker >/dev/null || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
DBG=build/release-debug/tests/rcu/test_checker
REL=build/release/tests/rcu/test_checker
pass=0; fail=0
# mode | message in the debug build | enforced in every build (yes/no)
cases=(
  "sync-in-memb-read|rcu_memb_synchronize_rcu() inside a memb read-side critical section|yes"
  "barrier-in-memb-read|rcu_memb_rcu_barrier() inside a memb read-side critical section|yes"
  "sync-in-qsbr-read|rcu_qsbr_synchronize_rcu() inside a qsbr read-side critical section|no"
  "srcu-self-deadlock|synchronize_srcu(domain-a) inside a read-side critical section of the same domain|no"
  "srcu-cross-deadlock|would deadlock: thread|no"
  "deref-outside|rcu_dereference(global_ptr) outside a RCU (any flavor) read-side critical section|no"
  "deref-qsbr-offline|rcu_dereference(global_ptr) outside a RCU (any flavor) read-side critical section|no"
  "deref-protected-unheld|rcu_dereference_protected(global_ptr) outside|no"
  "srcu-deref-wrong-domain|srcu_dereference(global_ptr) outside a domain-a read-side critical section|no"
  "srcu-unlock-other-domain|srcu_read_unlock(domain-b, |no"
  "srcu-unlock-stale-index|srcu_read_unlock(domain-a, 1)|yes"
  "srcu-unlock-bad-index|srcu_read_unlock(domain-a, 7)|yes"
  "memb-unregistered|not registered with the memb flavor|yes"
  "qsbr-unregistered|not registered with the qsbr flavor|yes"
)
check() { # binary mode message expect(abort|clean)
  out=$(timeout 20 "$1" "$2" 2>&1); rc=$?
  if [ "$4" = abort ]; then
    if [ $rc = 134 ] && grep -qF -- "$3" <<<"$out"; then return 0; fi
  else
    if [ $rc = 0 ] && grep -q 'ran to the end' <<<"$out"; then return 0; fi
  fi
  echo "    got rc=$rc: $(head -c 400 <<<"$out")"; return 1
}
for c in "${cases[@]}"; do
  IFS='|' read -r mode msg always <<<"$c"
  if check "$DBG" "$mode" "$msg" abort; then
    echo "ok   debug build aborts: $mode"; pass=$((pass+1))
  else
    echo "FAIL debug build: $mode (expected abort with '$msg')"; fail=$((fail+1))
  fi
  if [ "$always" = yes ]; then
    if check "$REL" "$mode" "$msg" abort; then echo "ok   normal build aborts too: $mode"; pass=$((pass+1));
    else echo "FAIL normal build should abort: $mode"; fail=$((fail+1)); fi
  elif [ "$mode" != srcu-cross-deadlock ] && [ "$mode" != srcu-self-deadlock ]; then
    # The checker-only rules are free in the normal build: the misuse runs on.
    if check "$REL" "$mode" "$msg" clean; then echo "ok   normal build pays nothing: $mode"; pass=$((pass+1));
    else echo "FAIL normal build: $mode"; fail=$((fail+1)); fi
  fi
done
if check "$DBG" deref-check-lock-held "" clean; then echo "ok   debug build allows checked and protected dereferences"; pass=$((pass+1));
else echo "FAIL debug build: deref-check-lock-held"; fail=$((fail+1)); fi
# An SRCU scan in a unit mapped to a flavor holds no section of that flavor.
if make -s DEBUG_RCU=1 build/release-debug/examples/srcu_scan >/dev/null 2>&1 &&
   build/release-debug/examples/srcu_scan >/dev/null 2>&1; then
  echo "ok   debug build: srcu_dereference() needs only the SRCU domain"; pass=$((pass+1))
else
  echo "FAIL debug build: examples/srcu_scan"; fail=$((fail+1))
fi
echo "$pass passed, $fail failed"
[ $fail = 0 ]
