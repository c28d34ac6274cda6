#!/usr/bin/env bash
# tests/server/modules_fetch.sh DIR - Redis 7.0.15's example modules, built
# at test time from Debian's source package (issue 20): nothing of Redis's is
# kept in this tree.
#
# Into DIR (created): apt-get source --download-only redis (a deb-src line
# for bookworm is added under /etc/apt/sources.list.d/ when apt has none and
# we are root), dpkg-source -x, then each src/modules/NAME.c that
# MODULES_BUILD names (default: helloworld hellotimer hellodict hellotype helloblock) compiled with
# gcc -shared -fPIC against that release's own src/redismodule.h into
# DIR/NAME.so; and rcukv's own test modules, tests/server/modules/*.c, against
# the same header.  A tree already in DIR (or in $REDIS_SRC, an unpacked source
# tree) is reused.  Prints the source tree's path on success; exits 1 with
# the reason on stderr when the source cannot be had (the tests count a skip).
set -u
dir=${1:?usage: modules_fetch.sh DIR}
mods=${MODULES_BUILD:-helloworld hellotimer hellodict hellotype helloblock}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

src=${REDIS_SRC:-}
[ -z "$src" ] && src=$(ls -d "$dir"/redis-7.0.15* 2>/dev/null | head -n 1)
if [ -z "$src" ] || [ ! -f "$src/src/redismodule.h" ]; then
  command -v apt-get >/dev/null || { echo "modules_fetch: no apt-get" >&2; exit 1; }
  command -v dpkg-source >/dev/null || { echo "modules_fetch: no dpkg-source (dpkg-dev)" >&2; exit 1; }
  if ! grep -rqs '^deb-src\|^Types:.*deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    if [ "$(id -u)" = 0 ]; then
      # In the format of the machine's own sources: a deb822 file with the
      # same Signed-By when apt's sources are deb822 (a one-line entry for
      # the same archive without it is "Conflicting values set for option
      # Signed-By", and then apt reads no source at all), else a one-line
      # entry.
      signed=$(awk '/^Signed-By:/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null)
      if [ -n "$signed" ]; then
        printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: %s\n' \
          "$signed" >/etc/apt/sources.list.d/rcukv-deb-src.sources
      else
        echo 'deb-src http://deb.debian.org/debian bookworm main' >/etc/apt/sources.list.d/rcukv-deb-src.list
      fi
      if ! apt-get update -qq >"$dir/update.log" 2>&1; then
        rm -f /etc/apt/sources.list.d/rcukv-deb-src.sources /etc/apt/sources.list.d/rcukv-deb-src.list
        echo "modules_fetch: apt-get update failed with the deb-src line (removed again): $(tail -n 1 "$dir/update.log")" >&2
        exit 1
      fi
    else
      echo "modules_fetch: no deb-src line in apt's sources, and not root to add one" >&2
      exit 1
    fi
  fi
  (cd "$dir" && apt-get source --download-only redis >"$dir/fetch.log" 2>&1) || {
    echo "modules_fetch: apt-get source redis failed (see $dir/fetch.log)" >&2; exit 1; }
  dsc=$(ls "$dir"/redis_7.0.15*.dsc 2>/dev/null | head -n 1)
  [ -n "$dsc" ] || { echo "modules_fetch: no redis 7.0.15 .dsc (apt offers: $(ls "$dir"/*.dsc 2>/dev/null))" >&2; exit 1; }
  (cd "$dir" && dpkg-source -x "$dsc" redis-7.0.15 >>"$dir/fetch.log" 2>&1) || {
    echo "modules_fetch: dpkg-source -x failed" >&2; exit 1; }
  src=$dir/redis-7.0.15
fi
grep -q 'REDISMODULE_APIVER_1' "$src/src/redismodule.h" || {
  echo "modules_fetch: $src/src/redismodule.h is not a module header" >&2; exit 1; }
for m in $mods; do
  [ -f "$dir/$m.so" ] && [ "$dir/$m.so" -nt "$src/src/modules/$m.c" ] && continue
  gcc -O1 -g -shared -fPIC -std=gnu99 -w -o "$dir/$m.so" "$src/src/modules/$m.c" || {
    echo "modules_fetch: building $m.so failed" >&2; exit 1; }
done
# rcukv's own test modules (tests/server/modules/*.c), against the same header
here=$(cd "$(dirname "$0")" && pwd)
for c in "$here"/modules/*.c; do
  m=$(basename "$c" .c)
  [ -f "$dir/$m.so" ] && [ "$dir/$m.so" -nt "$c" ] && continue
  gcc -O1 -g -shared -fPIC -std=gnu99 -Wall -Werror -I"$src/src" -o "$dir/$m.so" "$c" || {
    echo "modules_fetch: building $m.so failed" >&2; exit 1; }
done
echo "$src"
