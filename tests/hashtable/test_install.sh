#!/usr/bin/env bash
# test_install.sh - `make install PREFIX=<temp dir>`, then build applications
# the way README.md's librcukv section says, and run them with no
# LD_LIBRARY_PATH:
#   - the README's example program, with the README's own two build lines
#     (shared with an rpath, static with the archive);
#   - examples/cache/cache.c with `pkg-config --cflags --libs rcukv` + rpath;
#   - tests/hashtable/rcukv_clash.c, which defines its own ht_new, ht_get,
#     rcu_read_lock and synchronize_srcu, linked both ways.
# Also checks that librcukv.a and librcukv.so define only rcukv_* globally
# and that nothing pulls in jemalloc.  Prints 'N passed, M failed'.
set -u
cd "$(dirname "$0")/../.."
root=$PWD
VARIANT=${VARIANT:-release}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
unset LD_LIBRARY_PATH

if env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make --no-print-directory VARIANT="$VARIANT" \
	install PREFIX="$tmp" >"$tmp/install.log" 2>&1; then
	ok "make install PREFIX=$tmp"
else
	bad "make install"; tail -20 "$tmp/install.log"
fi
for f in include/rcukv.h lib/librcukv.a lib/librcukv.so lib/librcukv.so.0 lib/pkgconfig/rcukv.pc; do
	[ -e "$tmp/$f" ] && ok "installed $f" || bad "missing $f"
done
export PKG_CONFIG_PATH="$tmp/lib/pkgconfig"
if flags=$(pkg-config --cflags --libs rcukv); then ok "pkg-config --cflags --libs rcukv: $flags"; else bad "pkg-config rcukv"; fi
san=
case "$VARIANT" in
asan) san="-fsanitize=address,undefined -fno-omit-frame-pointer" ;;
tsan) san="-fsanitize=thread" ;;
esac
CFLAGS="-std=c11 -O2 -g -D_GNU_SOURCE -pthread -Wall -Wextra -Werror $san"

# run_app NAME: run $tmp/NAME, expect exit 0; say whether it uses the .so.
run_app() {
	local name=$1 how
	if ldd "$tmp/$name" 2>/dev/null | grep -q 'librcukv.so.0 => /'; then how=shared
	elif ldd "$tmp/$name" 2>/dev/null | grep -q librcukv; then how="shared, unresolved"
	else how=static; fi
	if "$tmp/$name" >"$tmp/$name.log" 2>&1; then
		ok "$name ($how) runs without LD_LIBRARY_PATH: $(tail -n 1 "$tmp/$name.log")"
	else
		bad "$name ($how) run"; tail -20 "$tmp/$name.log"
	fi
}

# 1. The README's example with the README's build lines.
awk '/^## librcukv/ {s=1} s && /^```c$/ {c=1; next} c && /^```$/ {exit} c' README.md >"$tmp/app.c"
mapfile -t lines < <(awk '/^## librcukv/ {s=1} s && /^```sh$/ {c=1; next} c && /^```$/ {exit} c && /^cc app.c/' README.md)
if [ -s "$tmp/app.c" ] && [ ${#lines[@]} = 2 ]; then
	ok "README: example program and two build lines found"
else
	bad "README: example program or build lines missing (${#lines[@]} cc lines)"
fi
n=0
for l in "${lines[@]}"; do
	n=$((n + 1))
	cmd=${l/-o app /-o readme_app$n }
	if (cd "$tmp" && bash -c "$cmd -Werror -Wall -Wextra $san") >"$tmp/cc$n.log" 2>&1; then
		ok "README build line $n: $l"
		run_app readme_app$n
	else
		bad "README build line $n: $l"; cat "$tmp/cc$n.log"
	fi
done
ldd "$tmp/readme_app1" 2>/dev/null | grep -q "$tmp/lib/librcukv.so.0" &&
	ok "README shared build finds $tmp/lib/librcukv.so.0 through its rpath" ||
	bad "README shared build does not use the installed librcukv.so.0"
ldd "$tmp/readme_app2" 2>/dev/null | grep -q librcukv &&
	bad "README static build still needs librcukv.so" || ok "README static build needs no librcukv.so"

# 2. The threaded example, pkg-config only (+ rpath).
libdir=$(pkg-config --variable=libdir rcukv)
# shellcheck disable=SC2086
if cc $CFLAGS examples/cache/cache.c -o "$tmp/cache" $flags -Wl,-rpath,"$libdir" 2>"$tmp/cc.log"; then
	ok "examples/cache builds with pkg-config only"
	run_app cache
else
	bad "examples/cache build"; cat "$tmp/cc.log"
fi

# 3. An application with its own ht_new & co., both ways.
# shellcheck disable=SC2086
if cc $CFLAGS tests/hashtable/rcukv_clash.c -o "$tmp/clash_static" $(pkg-config --cflags rcukv) \
	"$libdir/librcukv.a" 2>"$tmp/cc.log"; then
	ok "an application defining ht_new/rcu_read_lock links statically"
	run_app clash_static
else
	bad "static link of an application defining ht_new"; cat "$tmp/cc.log"
fi
# shellcheck disable=SC2086
if cc $CFLAGS tests/hashtable/rcukv_clash.c -o "$tmp/clash_shared" $flags -Wl,-rpath,"$libdir" \
	2>"$tmp/cc.log"; then
	ok "an application defining ht_new/rcu_read_lock links dynamically"
	run_app clash_shared
else
	bad "dynamic link of an application defining ht_new"; cat "$tmp/cc.log"
fi

# 4. What the libraries expose and need.
extra=$(nm -D --defined-only "$tmp/lib/librcukv.so" 2>/dev/null | awk '$2 ~ /^[TDBRVW]$/ && $3 !~ /^rcukv_/ {print $3}')
[ -z "$extra" ] && ok "librcukv.so exports rcukv_* only" || bad "librcukv.so also exports: $extra"
extra=$(nm -g --defined-only "$tmp/lib/librcukv.a" 2>/dev/null | awk 'NF == 3 && $3 !~ /^rcukv_/ {print $3}')
n=$(nm -g --defined-only "$tmp/lib/librcukv.a" 2>/dev/null | awk 'NF == 3 && $3 ~ /^rcukv_/' | wc -l)
[ -z "$extra" ] && [ "$n" -gt 10 ] && ok "librcukv.a defines rcukv_* only ($n symbols)" ||
	bad "librcukv.a also defines: $extra ($n rcukv_*)"
# Every function rcukv.h declares, and nothing else named rcukv_, is exported
# (rcukv.map's rcukv_* glob would also export a stray non-static rcukv_ helper).
declared=$(grep -E '^[a-z].*\brcukv_[a-z_]+\(' "$root/hashtable/rcukv.h" | grep -oE '\brcukv_[a-z_]+\(' | tr -d '(' | sort)
exported=$(nm -D --defined-only "$tmp/lib/librcukv.so" 2>/dev/null | awk '$2 == "T" {sub(/@.*/, "", $3); print $3}' | sort)
[ -n "$declared" ] && [ "$declared" = "$exported" ] &&
	ok "librcukv.so exports exactly the $(echo "$declared" | wc -l) functions rcukv.h declares" ||
	bad "rcukv.h declares and librcukv.so exports differ: $(diff <(echo "$declared") <(echo "$exported") | grep '^[<>]' | tr '\n' ' ')"
if objdump -p "$tmp/lib/librcukv.so" | grep NEEDED | grep -q jemalloc; then
	bad "librcukv.so needs jemalloc"
else
	ok "librcukv.so needs no jemalloc ($(objdump -p "$tmp/lib/librcukv.so" | awk '/NEEDED/ {print $2}' | tr '\n' ' '))"
fi
if nm -u "$tmp/lib/librcukv.a" | grep -qi 'je_\|mallocx'; then bad "librcukv.a calls jemalloc"; else ok "librcukv.a calls no jemalloc"; fi
grep -q jemalloc "$tmp/lib/pkgconfig/rcukv.pc" && bad "rcukv.pc names jemalloc" || ok "rcukv.pc names no jemalloc"
cd "$root" || true
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
