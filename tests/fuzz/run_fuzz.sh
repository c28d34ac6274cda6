#!/usr/bin/env bash
# run_fuzz.sh BUILD_DIR HARNESS... - `make fuzz`: run each libFuzzer harness for
# FUZZ_SECONDS (default 60), one process, on its seed corpus
# (tests/fuzz/corpus/<h>, read only) plus a working corpus kept between runs
# (BUILD_DIR/corpus/<h>, where new inputs go).  Crash inputs land in
# BUILD_DIR/artifacts/<h>/.  Prints executions, coverage and crashes per
# harness; exits non-zero if any harness found a crash.
set -u
b=$1; shift
secs=${FUZZ_SECONDS:-60}
here=$(cd "$(dirname "$0")" && pwd)
bad=0
for h in "$@"; do
  work="$b/corpus/$h"; art="$b/artifacts/$h"; log="$b/$h.log"
  mkdir -p "$work" "$art"
  dict=(); [ -f "$here/$h.dict" ] && dict=(-dict="$here/$h.dict")
  echo "== $h: ${secs}s"
  "$b/$h" -max_total_time="$secs" -max_len=4096 -timeout=10 -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$art/" "$work" "$here/corpus/$h" >"$log" 2>&1
  rc=$?
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
  cov=$(echo "$last" | grep -oE 'cov: [0-9]+' | awk '{print $2}')
  ft=$(echo "$last" | grep -oE 'ft: [0-9]+' | awk '{print $2}')
  units=$(echo "$last" | grep -oE 'corp: [0-9]+/[0-9]+[a-zA-Z]*' | awk '{print $2}')
  crashes=$(find "$art" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  echo "$h: executions ${execs:-?}, cov ${cov:-?}, ft ${ft:-?}, corpus ${units:-?}, exit $rc, crash files in $art: $crashes"
  if [ "$rc" != 0 ]; then
    bad=1
    grep -E 'fuzz check failed|ERROR: |SUMMARY' "$log" | head -5 | sed 's/^/    /'
    echo "    log: $log"
  fi
done
exit $bad
