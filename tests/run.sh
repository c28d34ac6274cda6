#!/usr/bin/env bash
# Runs each test binary or script given, keeps its output in build/<variant>/test-logs/,
# reads its closing 'N passed, M failed' line, and prints the sum.  A test that
# exits non-zero or prints no such line counts as one failure.
set -u
logdir="${B:-build/release}/test-logs"
mkdir -p "$logdir"
total_p=0; total_f=0; bad=()
for t in "$@"; do
  name=$(basename "$t")
  log="$logdir/$name.log"
  start=$EPOCHREALTIME
  "$t" >"$log" 2>&1
  rc=$?
  secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  if [ -n "$line" ]; then
    p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
  else
    p=0; f=1
  fi
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
  total_p=$((total_p + p)); total_f=$((total_f + f))
  if [ "$f" != 0 ]; then
    bad+=("$name"); status=FAIL
  else
    status=ok
  fi
  printf '%-4s %-32s %s (%ss)\n' "$status" "$name" "${line:-no summary line, exit $rc}" "$secs"
  if [ "$f" != 0 ]; then sed 's/^/    | /' "$log" | tail -n 40; fi
done
echo
[ ${#bad[@]} -gt 0 ] && echo "failing: ${bad[*]} (logs in $logdir)"
echo "$total_p passed, $total_f failed"
[ "$total_f" = 0 ]
