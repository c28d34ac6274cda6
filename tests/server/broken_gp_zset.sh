#!/usr/bin/env bash
# tests/server/broken_gp_zset.sh - shows the sorted set torture can fail: an
# rcukv-server built with BROKEN_GP=1 (grace periods that do not wait for
# readers) and run with RCUKV_POISON_FREES=1 frees a replaced sorted set
# while ZRANGEs on the other worker still copy it, and test_zset_torture
# (tests/server/test_zset.sh runs it against the real build) must then fail:
# the server dies of SIGSEGV/SIGBUS on a poisoned value, or the readers
# report bad members, orders or sums.  The first run caught it, by SIGSEGV,
# in 5 of 5 tries on the 2-core machine it was written on.  The runs, the
# build and what counts are broken_gp_torture.sh's.  Ports 9230-9239.
exec bash "$(dirname "$0")/broken_gp_torture.sh" zset test_zset_torture 9230 \
	'^ZRANGE(BYSCORE)? z:[0-9]+: '
