#!/usr/bin/env bash
# test_install.sh - `make install PREFIX=<temp dir>`, then build the example
# program (examples/cache/cache.c) with nothing but
# `pkg-config --cflags --libs rcukv` and run it.  Also checks that the shared
# library exports the rcukv_* API only.  Prints 'N passed, M failed'.
set -u
cd "$(dirname "$0")/../.."
VARIANT=${VARIANT:-release}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

if env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make --no-print-directory VARIANT="$VARIANT" \
	install PREFIX="$tmp" >"$tmp/install.log" 2>&1; then
	ok "make install PREFIX=$tmp"
else
	bad "make install"; tail -20 "$tmp/install.log"
fi
for f in include/rcukv.h lib/librcukv.a lib/librcukv.so lib/pkgconfig/rcukv.pc; do
	[ -e "$tmp/$f" ] && ok "installed $f" || bad "missing $f"
done
export PKG_CONFIG_PATH="$tmp/lib/pkgconfig"
if flags=$(pkg-config --cflags --libs rcukv); then ok "pkg-config --cflags --libs rcukv: $flags"; else bad "pkg-config rcukv"; fi
san=
case "$VARIANT" in
asan) san="-fsanitize=address,undefined -fno-omit-frame-pointer" ;;
tsan) san="-fsanitize=thread" ;;
esac
# shellcheck disable=SC2086
if cc -std=c11 -O2 -g -D_GNU_SOURCE -pthread -Wall -Wextra -Werror $san examples/cache/cache.c \
	$flags -o "$tmp/cache" 2>"$tmp/cc.log"; then
	ok "example builds with pkg-config only"
	if LD_LIBRARY_PATH="$tmp/lib" "$tmp/cache" >"$tmp/run.log" 2>&1; then
		ok "installed example runs: $(tail -n 1 "$tmp/run.log")"
	else
		bad "installed example"; tail -20 "$tmp/run.log"
	fi
else
	bad "example build"; cat "$tmp/cc.log"
fi
extra=$(nm -D --defined-only "$tmp/lib/librcukv.so" 2>/dev/null | awk '$2 ~ /^[TDBR]$/ && $3 !~ /^rcukv_/ {print $3}')
[ -z "$extra" ] && ok "librcukv.so exports rcukv_* only" || bad "librcukv.so also exports: $extra"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
