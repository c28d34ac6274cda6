#!/usr/bin/env bash
# tests/server/test_dump.sh - DUMP and RESTORE between rcukv-server and
# redis-server 7 (issue 16 item 5).  Starts $B/rcukv-server and a
# redis-server on free loopback ports (7760-7789):
#   1. replies: tests/server/cases_dump.txt (recorded from redis-server
#      7.0.15) through test_server --cases-only, against both servers.
#   2. redis -> rcukv: values of many shapes (empty, integers of every RDB
#      encoding and past them, LZF-compressible strings over 20 bytes, random
#      binary, 1 MB compressible and 1 MB random) are SET in redis-server,
#      DUMPed, RESTOREd into rcukv-server with a TTL; the value read back is
#      the same bytes, the TTL is the one given, and rcukv's own DUMP of it is
#      byte for byte redis-server's.
#   3. rcukv -> redis: the same values SET in rcukv-server, DUMPed, RESTOREd
#      into redis-server with a TTL; value and TTL compared.  (redis-cli -x
#      sends the payload last, so ABSTTL is left to cases_dump.txt.)
#   4. rdbcompression no: both servers DUMP a compressible value uncompressed,
#      identically.
# Without redis-server only part 1 against rcukv runs (the rest is skipped).
# Ends with "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
SRV=$B/rcukv-server
TS=$B/tests/server/test_server
PORT_LAST=7789
. "$(dirname "$0")/../../scripts/lib.sh"
need_built "$SRV" "$TS"
scratch_init dump
server_up "" 7760 --threads 2 --save ""

if ! command -v redis-server >/dev/null; then
  check_cases "cases_dump.txt against rcukv-server" \
    "$("$TS" --port "$P" --cases tests/server/cases_dump.txt --cases-only 2>&1)"
  skip "redis-server not installed (scripts/deps.sh test installs it): no interchange checks"
  summary
  exit
fi
RP=$(free_port $((P + 1)))
[ "$RP" = 0 ] && { bad "no free port for redis-server"; summary; exit 1; }
redis-server --port "$RP" --bind 127.0.0.1 --save "" --appendonly no --dir "$tmp" \
  >"$tmp/redis.log" 2>&1 &
pids+=("$!")
wait_up "$RP" || { bad "redis-server did not start on $RP"; summary; exit 1; }

# ------------------------------------------------------------ 1. replies
for who in "rcukv-server:$P" "redis-server:$RP"; do
  check_cases "cases_dump.txt against ${who%%:*}" \
    "$("$TS" --port "${who#*:}" --cases tests/server/cases_dump.txt --cases-only 2>&1)"
done

# ------------------------------------------------------------ the values
# Each value is a file $tmp/v.NAME, sent with redis-cli -x (binary safe).
mkdir -p "$tmp/v"
val() { printf '%s' "$2" >"$tmp/v/$1"; }
val empty ''
val i8 12
val neg -1
val i8min -128
val i16 12345
val i32 -2147483648
val i32over 2147483648
val big 123456789012
val llmax 9223372036854775807
val lead0 007
val s21 aaaaaaaaaaaaaaaaaaaaa
val text "The quick brown fox jumps over the lazy dog; the quick brown fox again."
head -c 4096 /dev/urandom >"$tmp/v/rand4k"
printf 'a\0b\r\n\0' >"$tmp/v/nul"
head -c 1048576 /dev/zero | tr '\0' 'x' >"$tmp/v/x1m"
head -c 1048576 /dev/urandom >"$tmp/v/rand1m"
names=$(ls "$tmp/v")

# cli PORT ARGS...: redis-cli, raw output (one trailing newline added)
cli() { local p=$1; shift; redis-cli -p "$p" --raw "$@"; }
# get_to PORT CMD KEY FILE: the reply bulk of CMD KEY into FILE, exactly
get_to() { cli "$1" "$2" "$3" | head -c -1 >"$4"; }
# pttl_in PORT KEY LO HI
pttl_in() { local t; t=$(cli "$1" pttl "$2"); [ "$t" -ge "$3" ] && [ "$t" -le "$4" ]; }

# ------------------------------------------------------------ 2. redis -> rcukv
cli "$RP" flushall >/dev/null
cli "$P" flushall >/dev/null
for n in $names; do
  cli "$RP" -x set "k:$n" <"$tmp/v/$n" >/dev/null
  get_to "$RP" dump "k:$n" "$tmp/redis.$n.dump"
  r=$(cli "$P" -x restore "k:$n" 100000 <"$tmp/redis.$n.dump")
  get_to "$P" get "k:$n" "$tmp/rcukv.$n.val"
  get_to "$P" dump "k:$n" "$tmp/rcukv.$n.dump"
  check "redis -> rcukv $n ($(stat -c %s "$tmp/v/$n") bytes): RESTORE $r, same bytes back" \
    '[ "$r" = OK ] && cmp -s "$tmp/v/$n" "$tmp/rcukv.$n.val"'
  check "redis -> rcukv $n: PTTL within 100 s, DUMP byte for byte redis-server's" \
    'pttl_in "$P" "k:$n" 90000 100000 && cmp -s "$tmp/redis.$n.dump" "$tmp/rcukv.$n.dump"'
done

# ------------------------------------------------------------ 3. rcukv -> redis
cli "$RP" flushall >/dev/null
cli "$P" flushall >/dev/null
for n in $names; do
  cli "$P" -x set "k:$n" <"$tmp/v/$n" >/dev/null
  get_to "$P" dump "k:$n" "$tmp/rcukv.$n.dump"
  r=$(cli "$RP" -x restore "k:$n" 3600000 <"$tmp/rcukv.$n.dump")
  get_to "$RP" get "k:$n" "$tmp/redis.$n.val"
  check "rcukv -> redis $n: RESTORE $r, same bytes back, PTTL within an hour" \
    '[ "$r" = OK ] && cmp -s "$tmp/v/$n" "$tmp/redis.$n.val" && pttl_in "$RP" "k:$n" 3590000 3600000'
done

# ------------------------------------------------------------ 4. rdbcompression
for p in "$P" "$RP"; do
  cli "$p" config set rdbcompression no >/dev/null
  cli "$p" -x set k:x <"$tmp/v/x1m" >/dev/null
  get_to "$p" dump k:x "$tmp/nocomp.$p.dump"
  cli "$p" config set rdbcompression yes >/dev/null
done
check "rdbcompression no: 1 MB DUMP uncompressed ($(stat -c %s "$tmp/nocomp.$P.dump") bytes), as redis-server's" \
  '[ "$(stat -c %s "$tmp/nocomp.$P.dump")" -gt 1048576 ] && cmp -s "$tmp/nocomp.$P.dump" "$tmp/nocomp.$RP.dump"'

summary
