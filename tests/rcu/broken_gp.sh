#!/usr/bin/env bash
# Shows the torture test can fail: with BROKEN_GP=1 the grace period does not
# wait for readers, and each flavor's torture run must report errors.
# Runs only in the release variant (sanitizers would stop at the first
# use-after-free, which also proves the point but says less).
set -u
cd "$(dirname "$0")/../.."
if [ "${VARIANT:-release}" != release ]; then echo "skipped under ${VARIANT}"; echo "0 passed, 0 failed"; exit 0; fi
pass=0; fail=0
make -s BROKEN_GP=1 build/release-brokengp/tests/rcu/test_torture_qsbr \
	build/release-brokengp/tests/rcu/test_torture_memb \
	build/release-brokengp/tests/rcu/test_srcu_memb \
	build/release-brokengp/tests/rcu/test_rculist_qsbr \
	build/release-brokengp/tests/rcu/test_rculist_memb >/dev/null || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
for f in qsbr memb; do
  out=$(TORTURE_SECONDS=1 timeout 60 build/release-brokengp/tests/rcu/test_torture_$f 2>&1)
  rc=$?
  echo "$out" | grep '^torture'
  if [ $rc != 0 ] && echo "$out" | grep -q 'FAIL: readers saw no freed or stale element'; then
    echo "ok: broken grace period caught ($f)"; pass=$((pass+1))
  else
    echo "FAIL: broken grace period NOT caught ($f, rc=$rc)"; fail=$((fail+1))
  fi
done
for f in qsbr memb; do
  out=$(TORTURE_SECONDS=1 timeout 60 build/release-brokengp/tests/rcu/test_rculist_$f 2>&1)
  rc=$?
  if [ $rc != 0 ]; then
    echo "ok: broken grace period caught by the list torture ($f)"; pass=$((pass+1))
  else
    echo "FAIL: broken grace period NOT caught by the list torture ($f)"; fail=$((fail+1))
  fi
done
out=$(TORTURE_SECONDS=1 timeout 60 build/release-brokengp/tests/rcu/test_srcu_memb 2>&1)
rc=$?
echo "$out" | grep -E '^srcu torture'
if [ $rc != 0 ] && echo "$out" | grep -q 'FAILED  \] test_srcu_torture'; then
  echo "ok: broken SRCU grace period caught"; pass=$((pass+1))
else
  echo "FAIL: broken SRCU grace period NOT caught (rc=$rc)"; fail=$((fail+1))
fi
echo "$pass passed, $fail failed"
[ $fail = 0 ]
