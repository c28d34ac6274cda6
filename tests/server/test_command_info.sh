#!/usr/bin/env bash
# tests/server/test_command_info.sh - COMMAND INFO of every command and
# subcommand rcukv-server has, against redis-server 7.0.15's
# (tests/server/test_command_info.py, redis-py).  Starts both on free
# loopback ports (7830-7859).  Ends with the Python test's closing line
# "N passed, M failed, K skipped" (K: the known differences it names).
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
PORT_LAST=7859
. "$(dirname "$0")/../../scripts/lib.sh"
skip_without "COMMAND INFO comparison needs redis-server" redis-server redis-cli
find_redis_py || { skip "python3-redis not installed (scripts/deps.sh test)"; summary; exit 0; }
need_built "$SRV"
scratch_init command-info
server_up "" 7830 --threads 2 --save ""
redis_up $((P + 1)) || { summary; exit 1; }
cd "$(dirname "$0")" && "$PY" test_command_info.py "$P" "$RP"
