#!/usr/bin/env bash
# tests/server/broken_gp_list.sh - shows the list torture can fail: an
# rcukv-server built with BROKEN_GP=1 (grace periods that do not wait for
# readers) and run with RCUKV_POISON_FREES=1 frees a replaced list version
# (its root, the chunks only it held) while LRANGEs on the other worker
# still copy it.  test_list_torture (tests/server/test_list.sh runs it
# against the real build) must then fail: the server dies of SIGSEGV/SIGBUS
# on a poisoned root or chunk, or the readers report bad or non-consecutive
# elements.  The runs, the build and the verdict are broken_gp_torture.sh's
# (up to BROKEN_GP_RUNS runs, default 5; caught in the first run each time
# it was run on the 2-core machine it was written on).  Ports 9140-9149.
exec bash "$(dirname "$0")/broken_gp_torture.sh" list test_list_torture 9140 \
	'^(bad element|bad LINDEX|tl:[0-9]+: element)'
