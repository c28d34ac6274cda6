#!/usr/bin/env bash
# fuzz_short.sh - the fuzzing part of `make test`: every regression input
# (tests/fuzz/regress/<harness>/*) must run clean, then each harness fuzzes
# for FUZZ_SHORT_SECONDS (default 10) from its seed corpus into a scratch
# directory.  Inputs under regress/<harness>/pending/ are findings not fixed
# yet (docs/fuzzing.md): they are run and reported, expected to fail,
# and not counted; one that passes is reported so it can move up a level.
# Skips (one skip, 0 failed) under VARIANT=asan or tsan: the harnesses carry
# their own ASan+UBSan build (build/fuzz/, clang).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# counters (ok/bad/skip/summary), scratch_init
. "$root/scripts/lib.sh"
case "${VARIANT:-release}" in
  asan|tsan) skip "fuzz_short under VARIANT=$VARIANT (build/fuzz has its own sanitizers)"
             summary; exit 0 ;;
esac
b="$root/build/fuzz"
secs=${FUZZ_SHORT_SECONDS:-10}
scratch_init fuzz-short
for h in fuzz_resp fuzz_cmd; do
  bin="$b/$h"
  if [ ! -x "$bin" ]; then
    bad "$h: $bin not built (make fuzz-build)"; continue
  fi
  for f in "$here/regress/$h"/*; do
    [ -f "$f" ] || continue
    if "$bin" -timeout=10 "$f" >"$tmp/run.log" 2>&1; then
      ok "$h regress $(basename "$f")"
    else
      bad "$h regress $(basename "$f")"
      grep -E 'fuzz check failed|ERROR: |SUMMARY|#[0-9]+ 0x' "$tmp/run.log" | head -12 | sed 's/^/    | /'
    fi
  done
  for f in "$here/regress/$h/pending"/*; do
    [ -f "$f" ] || continue
    if "$bin" -timeout=10 "$f" >"$tmp/run.log" 2>&1; then
      echo "XPASS $h pending $(basename "$f"): fixed? move it to regress/$h/ (not counted)"
    else
      echo "xfail $h pending $(basename "$f"): open finding (not counted): $(grep -m1 -oE 'fuzz check failed: .*|ERROR: AddressSanitizer: [a-z-]+|runtime error: .*' "$tmp/run.log")"
    fi
  done
  mkdir -p "$tmp/$h" "$tmp/art-$h"
  dict=(); [ -f "$here/$h.dict" ] && dict=(-dict="$here/$h.dict")
  # from the scratch directory: a SAVE the fuzzer composes writes its
  # dump.rdb there, not into the working directory
  if (cd "$tmp" && "$bin" -max_total_time="$secs" -max_len=4096 -timeout=10 -print_final_stats=1 "${dict[@]}" \
       -artifact_prefix="$tmp/art-$h/" "$tmp/$h" "$here/corpus/$h") >"$tmp/$h.log" 2>&1; then
    ok "$h fuzz ${secs}s: $(grep -E '^stat::number_of_executed_units' "$tmp/$h.log" | awk '{print $2}') executions, $(grep -E '^#[0-9]+' "$tmp/$h.log" | tail -n 1 | grep -oE 'cov: [0-9]+')"
  else
    bad "$h fuzz ${secs}s"
    grep -E 'fuzz check failed|ERROR: |SUMMARY|runtime error|#[0-9]+ 0x' "$tmp/$h.log" | head -15 | sed 's/^/    | /'
    mkdir -p "$b/artifacts/$h"; cp "$tmp/art-$h/"* "$b/artifacts/$h/" 2>/dev/null
    echo "    crash input kept in $b/artifacts/$h/"
  fi
done
summary
