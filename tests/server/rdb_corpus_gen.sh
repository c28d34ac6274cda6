#!/usr/bin/env bash
# rdb_corpus_gen.sh - regenerates tests/server/rdb-corpus/redis-7.0.15-types.rdb
# with a real redis-server 7 (not run by make test; the fixture is checked in).
# The file holds every value type and encoding redis-server 7.0 writes for
# small data sets, plus strings with TTLs and a function library; test_rdb.c
# loads it with and without skip_unsupported and sweeps corruptions over it.
# Usage: tests/server/rdb_corpus_gen.sh [port]   (loopback, default 7349)
set -eu
port=${1:-7349}
out=tests/server/rdb-corpus/redis-7.0.15-types.rdb
tmp=$(mktemp -d /tmp/rdb_corpus.XXXXXX)
redis-server --port "$port" --bind 127.0.0.1 --dir "$tmp" --dbfilename dump.rdb \
	--save '' --appendonly no --daemonize no --logfile "$tmp/log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
cli() { redis-cli -h 127.0.0.1 -p "$port" "$@"; }
for i in $(seq 1 50); do [ "$(cli ping 2>/dev/null)" = PONG ] && break; sleep 0.1; done
{
	echo "SET s:plain hello"
	echo "SET s:int -12345"
	echo "SET s:ttl value PXAT 4102444800000"
	echo "SET s:lzf $(printf 'abcdefgh%.0s' $(seq 1 40))"
	echo "HSET h:lp f1 v1 f2 2"
	echo "SADD set:int 1 2 3 70000"
	echo "SADD set:str a b c"
	echo "RPUSH l:lp a b 3"
	echo "ZADD z:lp 1 a 2.5 b"
	echo "XADD st 1-1 f v"
	echo "XADD st 2-1 g w"
	echo "XGROUP CREATE st grp 0"
	echo "XREADGROUP GROUP grp alice COUNT 1 STREAMS st >"
	echo "PEXPIREAT h:lp 4102444800000"
	for i in $(seq 1 130); do
		echo "HSET h:ht f$i v$i"; echo "SADD set:ht m$i"; echo "ZADD z:sl $i m$i"
	done
	echo "RPUSH l:plain $(head -c 9000 /dev/zero | tr '\0' y) tail"
	echo "SELECT 2"
	echo "SET db2:key in-db-2"
} | cli >/dev/null
cli function load "#!lua name=corpus
redis.register_function('corpus_f', function() return 1 end)" >/dev/null
cli save >/dev/null
cp "$tmp/dump.rdb" "$out"
echo "wrote $out ($(stat -c %s "$out") bytes)"
