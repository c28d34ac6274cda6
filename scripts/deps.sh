#!/usr/bin/env bash
# Installs the Debian packages rcukv needs to build, test and benchmark.
# As root it runs apt-get; as anyone else it prints the exact command and fails.
# Usage: scripts/deps.sh [build|test]   (test adds the reference servers and tools)
set -eu
build_pkgs="build-essential pkg-config libevent-dev libjemalloc-dev libhiredis-dev libedit-dev liblzf-dev libssl-dev liblua5.1-0-dev lua-bitop-dev lua-cjson-dev"
test_pkgs="openssl libcmocka-dev liburcu-dev libglib2.0-dev redis-server redis-tools nutcracker python3-redis libxml2-utils valgrind clang libclang-rt-14-dev dpkg-dev"
want="$build_pkgs"
[ "${1:-build}" = test ] && want="$want $test_pkgs"
missing=""
for p in $want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "rcukv needs these Debian packages:$missing" >&2
  echo "install them as root with:" >&2
  echo "  apt-get update && apt-get install -y$missing" >&2
  exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq $missing >/dev/null
