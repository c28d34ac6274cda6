#!/usr/bin/env bash
# broken_gp.sh - shows the table's torture test can fail: built with
# BROKEN_GP=1 (grace periods that do not wait for readers), each flavor's
# hashtable torture run must report errors (readers missing keys present
# throughout, or seeing values not written for their key, once unzip steps
# and frees outrun them, or crashing on a poisoned link).  Release variant only, like tests/rcu/broken_gp.sh.
set -u
cd "$(dirname "$0")/../.."
if [ "${VARIANT:-release}" != release ]; then echo "skipped under ${VARIANT}"; echo "0 passed, 0 failed"; exit 0; fi
pass=0 fail=0
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s BROKEN_GP=1 \
	build/release-brokengp/tests/hashtable/test_ht_torture_qsbr \
	build/release-brokengp/tests/hashtable/test_ht_torture_memb >/dev/null ||
	{ echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
for f in qsbr memb; do
	out=$(TORTURE_SECONDS=1 timeout 120 build/release-brokengp/tests/hashtable/test_ht_torture_$f 2>&1)
	rc=$?
	echo "$out" | grep -E '^flavor|^FAIL'
	if [ $rc != 0 ] && echo "$out" | grep -q '^FAIL every value seen'; then
		echo "ok   broken grace period caught ($f)"; pass=$((pass + 1))
	elif [ $rc -ge 128 ]; then
		# a reader followed a freed, poisoned link: also a catch
		echo "ok   broken grace period caught ($f: reader crashed on poisoned memory, rc=$rc)"
		pass=$((pass + 1))
	else
		echo "FAIL broken grace period NOT caught ($f, rc=$rc)"; fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
