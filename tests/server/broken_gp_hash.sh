#!/usr/bin/env bash
# tests/server/broken_gp_hash.sh - shows the hash torture can fail: an
# rcukv-server built with BROKEN_GP=1 (grace periods that do not wait for
# readers: RCU_GP_BROKEN in rcu/rcu_internal.h) and run with
# RCUKV_POISON_FREES=1 frees a replaced hash while HGETALLs on the other
# worker still copy it.  test_hash_torture (tests/server/test_hash.sh runs it
# against the real build) must then fail: the server dies of SIGSEGV/SIGBUS
# on a poisoned value (what is seen: the poisoned lengths send the reader out
# of bounds), or the readers report bad values or sums.  A run whose torture
# fails for another reason (a timeout, a server that exits otherwise) does
# not count.  The race is a matter of timing (a reader must be inside the
# copy when it is freed; 5 of 6 runs on the 2-core machine it was written
# on): up to BROKEN_GP_RUNS runs (default 5), caught when one is.  Release
# variant only, like tests/hashtable/broken_gp.sh.  Ports 7860-7869.  The
# runs are broken_gp_torture.sh's (shared with broken_gp_set.sh).
exec bash "$(dirname "$0")/broken_gp_torture.sh" hash test_hash_torture 7860 \
	'^(bad value|h:[0-9]+: .* sum to)'
