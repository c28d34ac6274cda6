#!/usr/bin/env bash
# rdb_redis.sh - the RDB format layer (server/rdb.c) against the real tools:
#  1. redis-check-rdb accepts files written by rdb_save_file(), with and
#     without compression and checksum;
#  2. a real redis-server 7 loads them and redis-cli sees every key, value and
#     TTL (expired keys dropped); what redis-server then SAVEs has the same
#     record bytes as ours, key by key, and reads back through our reader;
#  3. files redis-server writes (strings with TTLs, hash/set/list/zset in
#     several encodings, a stream with a consumer group, a function library)
#     load through our reader: an error naming the type without skipping,
#     counts by type with it, exact absolute expiries (PEXPIRETIME);
#  4. a full tmpfs (when this machine lets us mount one) fails the save with
#     ENOSPC and leaves the old dump loadable.
# redis-server runs on a free loopback port in 7300-7349, with --dir a temp
# dir and persistence otherwise off; it is stopped by its PID.  Uses the test
# binary's tool modes ($B/tests/server/test_rdb).  Ends "N passed, M failed, K skipped".
set -u
B=${B:-build/release}
T=$B/tests/server/test_rdb
PORT_LAST=7349
# shared counters, ok/bad/skip/check/summary
. "$(dirname "$0")/../../scripts/lib.sh"

scratch_init rdb_redis
rpid=""
port=""
mounted=""
at_exit '[ -n "$rpid" ] && kill "$rpid" 2>/dev/null && wait "$rpid" 2>/dev/null'
at_exit '[ -n "$mounted" ] && umount "$mounted" 2>/dev/null'

if ! have_tools redis-server redis-cli redis-check-rdb "$T"; then
	bad "missing $missing (scripts/deps.sh test installs redis-server and redis-tools; make builds $T)"
	summary
	exit 1
fi

cli() { redis-cli -h 127.0.0.1 -p "$port" "$@"; }

# start_redis DIR DBFILE [ARGS]: redis-server on the first free port, loading
# DBFILE, with extra ARGS.
start_redis() {
	local p tries dir=$1 db=$2
	shift 2
	for p in $(seq 7300 7349); do
		: >"$dir/redis.log"
		redis-server --port "$p" --bind 127.0.0.1 --dir "$dir" --dbfilename "$db" \
			--save '' --appendonly no --daemonize no --logfile "$dir/redis.log" \
			"$@" >/dev/null 2>&1 &
		rpid=$!
		port=$p
		for tries in $(seq 1 100); do
			if [ "$(cli ping 2>/dev/null)" = PONG ]; then
				return 0
			fi
			kill -0 "$rpid" 2>/dev/null || break
			sleep 0.1
		done
		kill "$rpid" 2>/dev/null
		wait "$rpid" 2>/dev/null
		rpid=""
		grep -q "Address already in use" "$dir/redis.log" || break
	done
	echo "redis-server did not start; its log:"
	sed 's/^/    | /' "$dir/redis.log" | tail -20
	return 1
}

stop_redis() {
	if [ -n "$rpid" ]; then
		kill "$rpid" 2>/dev/null
		wait "$rpid" 2>/dev/null
		rpid=""
	fi
}

# Every key as "hexkey value-summary pttl" (see value_summary() in test_rdb.c).
LUA_DUMP='
local function hex(s)
  if #s == 0 then return "-" end
  return (string.gsub(s, ".", function(c) return string.format("%02x", string.byte(c)) end))
end
local out = {}
for _, k in ipairs(redis.call("KEYS", "*")) do
  local v = redis.call("GET", k)
  local hv
  if #v <= 4096 then hv = hex(v)
  else hv = "len:" .. #v .. ":" .. hex(string.sub(v, 1, 64)) .. ":" .. hex(string.sub(v, -64)) end
  out[#out + 1] = hex(k) .. " " .. hv .. " " .. redis.call("PTTL", k)
end
return out'

base=$(($(date +%s) * 1000))
expired_key=74746c2d70617374   # "ttl-past", expired in D(base)

# --- 1. redis-check-rdb on our files -----------------------------------------
for flags in "compress checksum" "" "compress" "checksum"; do
	name="ours-${flags// /-}.rdb"
	if ! "$T" write "$tmp/$name" "$base" $flags; then
		bad "write $name"
		continue
	fi
	out=$(redis-check-rdb "$tmp/$name" 2>&1)
	rc=$?
	if [ $rc = 0 ] && grep -q "RDB looks OK" <<<"$out"; then
		ok "redis-check-rdb accepts $name ($(grep -c 'AUX FIELD' <<<"$out") aux fields, $(grep -o '[0-9]* keys read' <<<"$out"))"
	else
		bad "redis-check-rdb $name (exit $rc)"
		sed 's/^/    | /' <<<"$out" | tail -20
	fi
	if [ "$flags" = "compress checksum" ]; then
		echo "redis-check-rdb output for $name:"
		sed 's/^/    | /' <<<"$out"
	fi
done

# --- 2. redis-server loads our files -----------------------------------------
for flags in "compress checksum" ""; do
	name="ours-${flags// /-}.rdb"
	d="$tmp/srv-${flags// /-}"
	mkdir -p "$d"
	cp "$tmp/$name" "$d/dump.rdb"
	if ! start_redis "$d" dump.rdb; then
		bad "redis-server loads $name"
		continue
	fi
	ok "redis-server 7 started on port $port with $name"
	n=$(cli dbsize)
	check "DBSIZE after loading $name is 1028 (1029 keys less the expired one): $n" '[ "$n" = 1028 ]'
	cli eval "$LUA_DUMP" 0 >"$d/lines" 2>&1
	if "$T" verify-lines "$d/lines" "$base"; then
		ok "redis-cli sees every key, value and TTL of $name"
	else
		bad "redis-cli view of $name"
	fi
	check "GET plain" '[ "$(cli get plain)" = hello ]'
	check "GET i64n" '[ "$(cli get i64n)" = -9223372036854775808 ]'
	check "PEXPIRETIME compressible = base + 1 day" \
		'[ "$(cli pexpiretime compressible)" = $((base + 86400000)) ]'
	check "STRLEN big-compressible" '[ "$(cli strlen big-compressible)" = $((3 * 1024 * 1024 + 7)) ]'
	# Byte-for-byte: Redis's own save of the same data, record by record.
	if [ -n "$flags" ]; then cli config set rdbcompression yes >/dev/null
	else cli config set rdbcompression no >/dev/null; fi
	# (dbfilename is a protected config in 7.0: SAVE overwrites the loaded
	# dump.rdb, a copy of $tmp/$name.)
	check "redis SAVE" '[ "$(cli save)" = OK ]'
	mv "$d/dump.rdb" "$d/resaved.rdb"
	"$T" records "$tmp/$name" | grep -v "^$expired_key " | sort >"$d/ours.rec"
	"$T" records "$d/resaved.rdb" | sort >"$d/redis.rec"
	nrec=$(wc -l <"$d/ours.rec")
	if cmp -s "$d/ours.rec" "$d/redis.rec"; then
		ok "all $nrec key records byte-identical to redis-server's SAVE ($name)"
	else
		bad "records differ from redis-server's SAVE ($name): $(diff "$d/ours.rec" "$d/redis.rec" | grep -c '^<') of $nrec"
		diff "$d/ours.rec" "$d/redis.rec" | cut -c1-150 | head -6 | sed 's/^/    | /'
	fi
	check "redis-server's file reads back through our reader" \
		'"$T" verify-rdb "$d/resaved.rdb" "$base"'
	stop_redis
done

# --- 3. files written by redis-server ------------------------------------------
d="$tmp/srv-types"
mkdir -p "$d"
if start_redis "$d" dump.rdb; then
	now=$(($(date +%s) * 1000))
	{
		echo "SET s:plain hello"
		echo "SET s:int 12345"
		echo "SET s:ttl-ex withex EX 1000"
		echo "SET s:ttl-px withpx PX 5000000"
		echo "SET s:ttl-at at PXAT $((now + 7777777))"
		echo "SET s:big $(head -c 3000 /dev/zero | tr '\0' x)"
		echo "HSET h:small f1 v1 f2 v2"
		echo "SADD set:ints 1 2 3 400000"
		echo "SADD set:strs a b c"
		echo "RPUSH l:small a b c"
		echo "ZADD z:small 1 a 2.5 b"
		echo "XADD st 1-1 f v"
		echo "XADD st 2-1 g w"
		echo "XGROUP CREATE st grp 0"
		echo "XREADGROUP GROUP grp alice COUNT 1 STREAMS st >"
		echo "EXPIRE h:small 10000"
	} | cli >/dev/null
	# Big encodings: hashtable hash and set, skiplist zset, quicklist of
	# several nodes, one plain (large) list element.
	for i in $(seq 1 300); do echo "HSET h:big f$i v$i"; echo "SADD set:big m$i";
		echo "ZADD z:big $i m$i"; echo "RPUSH l:big e$i"; done | cli >/dev/null
	echo "RPUSH l:big $(head -c 20000 /dev/zero | tr '\0' y)" | cli >/dev/null
	cli function load "#!lua name=rdbtest
redis.register_function('rdbtest_f', function() return 1 end)" >/dev/null
	check "redis SAVE (types)" '[ "$(cli save)" = OK ]'
	for k in s:ttl-ex s:ttl-px s:ttl-at; do
		echo "$(printf %s "$k" | od -An -tx1 | tr -d ' \n') $(cli pexpiretime "$k")"
	done >"$d/want-exp"
	stop_redis
	# rdbchecksum cannot change at run time: restart with it off.
	cp "$d/dump.rdb" "$d/types.rdb"
	if start_redis "$d" dump.rdb --rdbchecksum no; then
		check "redis SAVE without checksum" '[ "$(cli save)" = OK ]'
		stop_redis
		mv "$d/dump.rdb" "$d/nocrc.rdb"
	else
		bad "redis-server restart with rdbchecksum no"
	fi
	mv "$d/types.rdb" "$d/dump.rdb"
	out=$("$T" load "$d/dump.rdb")
	rc=$?
	if [ $rc != 0 ] && grep -q "load error: offset [0-9]*: key \".*\" (db 0) is a [a-z]* (RDB type" <<<"$out"; then
		ok "other types refused with type and key named: $(grep 'load error' <<<"$out" | cut -c1-160)"
	else
		bad "other types without skip (exit $rc): $out"
	fi
	out=$("$T" load "$d/dump.rdb" skip)
	rc=$?
	echo "    $out"
	check "load with skip succeeds" '[ $rc = 0 ]'
	check "skip counts by type" 'grep -q "skipped 10: list=2 set=3 zset=2 hash=2 stream=1 module=0, functions 1, checksum verified" <<<"$out"'
	check "6 string keys" 'grep -q "6 string keys (0 expired)" <<<"$out"'
	"$T" print "$d/dump.rdb" skip >"$d/print"
	good=1
	while read -r hk want; do
		got=$(awk -v k="$hk" '$1 == k { print $3 }' "$d/print")
		[ "$got" = "$want" ] || { good=0; echo "    expiry of $hk: ours $got, redis $want"; }
	done <"$d/want-exp"
	check "absolute expiries match PEXPIRETIME" '[ $good = 1 ]'
	check "s:int loads as 12345" 'grep -q "^733a696e74 3132333435 -1 0$" "$d/print"'
	out=$("$T" load "$d/nocrc.rdb" skip)
	check "file saved with rdbchecksum no loads (not verified): $out" \
		'grep -q "skipped 10: .*checksum not verified" <<<"$out"'
	# A flipped byte in Redis's file is caught by the checksum.
	cp "$d/dump.rdb" "$d/flipped.rdb"
	size=$(stat -c %s "$d/flipped.rdb")
	printf '\x5a' | dd of="$d/flipped.rdb" bs=1 seek=$((size / 2)) conv=notrunc status=none
	out=$("$T" load "$d/flipped.rdb" skip)
	check "flipped byte in redis's file rejected" 'grep -q "load error: offset" <<<"$out"'
	head -c $((size - 100)) "$d/dump.rdb" >"$d/short.rdb"
	out=$("$T" load "$d/short.rdb" skip)
	check "truncated redis file rejected: $(grep 'load error' <<<"$out" | cut -c1-100)" \
		'grep -q "load error: offset [0-9]*: " <<<"$out"'
else
	bad "redis-server start for the types file"
fi

# --- 4. a full disk ------------------------------------------------------------
mkdir -p "$tmp/small"
if mount -t tmpfs -o size=1m tmpfs "$tmp/small" 2>/dev/null; then
	mounted="$tmp/small"
	"$T" write "$tmp/small/dump.rdb" "$base" small
	before=$("$T" load "$tmp/small/dump.rdb")
	out=$("$T" write "$tmp/small/dump.rdb" "$base" 2>&1)
	rc=$?
	check "save to a full tmpfs fails with ENOSPC: $out" \
		'grep -q "No space left on device" <<<"$out"'
	check "failed save exit status" '[ $rc != 0 ]'
	after=$("$T" load "$tmp/small/dump.rdb")
	check "old dump intact after ENOSPC ($after)" '[ "$before" = "$after" ]'
	check "no temporary file left" '[ "$(ls "$tmp/small")" = dump.rdb ]'
	umount "$tmp/small" && mounted=""
else
	skip "tmpfs disk-full test: cannot mount tmpfs here (test_rdb covers RLIMIT_FSIZE)"
fi

summary
[ $fail = 0 ]
