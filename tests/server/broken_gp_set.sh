#!/usr/bin/env bash
# tests/server/broken_gp_set.sh - shows the set torture can fail: against an
# rcukv-server built with BROKEN_GP=1 and run with RCUKV_POISON_FREES=1,
# test_set_torture (tests/server/test_set.sh runs it against the real
# build) must fail: the server dies on a poisoned value, or the readers
# report bad members, lone twins or odd counts (broken_gp_torture.sh says
# how; up to BROKEN_GP_RUNS runs).  Release variant only.  Ports 9050-9059.
exec bash "$(dirname "$0")/broken_gp_torture.sh" set test_set_torture 9050 \
	'^(bad member|.* without its twin|SINTERCARD of .* is odd)'
