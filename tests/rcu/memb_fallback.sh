#!/usr/bin/env bash
# The memb flavor without membarrier(2): readers fence themselves.  Runs the
# memb behaviour tests and torture test with RCU_NO_MEMBARRIER=1.
set -u
cd "$(dirname "$0")/../.."
B=${B:-build/release}
pass=0; fail=0
for t in test_rcu_memb test_torture_memb; do
  out=$(RCU_NO_MEMBARRIER=1 timeout 300 "$B/tests/rcu/$t" 2>&1); rc=$?
  echo "$out" | grep -E '^(flavor|torture|flood)'
  line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
  if [ $rc = 0 ] && echo "$out" | grep -q 'membarrier off'; then
    echo "ok: $t without membarrier: $line"; pass=$((pass+1))
  else
    echo "$out" | tail -20; echo "FAIL: $t without membarrier (rc=$rc)"; fail=$((fail+1))
  fi
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
