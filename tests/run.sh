#!/usr/bin/env bash
# Runs each test binary or script given, keeps its output in build/<variant>/test-logs/,
# reads its closing 'N passed, M failed' line (', K skipped' optional: checks
# that cannot be made on this machine), and prints the sums.  A test that exits
# non-zero or prints no such line counts as one failure.
#
# Each test runs under a time limit, RCUKV_TEST_TIMEOUT seconds (default 900;
# the longest, the soak, takes about 70 s in a release build and the slowest
# suites a few minutes under TSan), so a hang fails with the test's name
# instead of stalling CI.  timeout(1) signals the test's whole process group,
# servers it spawned included; what survives SIGTERM gets SIGKILL 10 s later.
set -u
logdir="${B:-build/release}/test-logs"
limit=${RCUKV_TEST_TIMEOUT:-900}
mkdir -p "$logdir"
total_p=0; total_f=0; total_s=0; bad=()
for t in "$@"; do
  name=$(basename "$t")
  log="$logdir/$name.log"
  start=$EPOCHREALTIME
  stray_before=$(ls -d ./*.rdb 2>/dev/null)
  timeout -k 10 "$limit" "$t" >"$log" 2>&1
  rc=$?
  # A server a test starts without --dir saves into the working directory,
  # and every later server started there loads that file (a CI run failed
  # so: test_twemproxy's nodes each found the soak's key).  Counted as a
  # failure of the test that left it.
  stray=$(ls -d ./*.rdb 2>/dev/null)
  [ "$stray" = "$stray_before" ] || echo "run.sh: $name left RDB files in $PWD: $stray" >>"$log"
  secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}')
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$log" | tail -n 1)
  s=0
  if [ -n "$line" ]; then
    p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
    case $line in *skipped) s=${line##*failed, }; s=${s%% skipped} ;; esac
  else
    p=0; f=1
  fi
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    # killed by the limit: whatever it printed before, it failed
    echo "run.sh: $name killed after ${limit} s (RCUKV_TEST_TIMEOUT)" >>"$log"
    line="timed out after ${limit} s${line:+ (last summary: $line)}"
    [ "$f" = 0 ] && f=1
  fi
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
  if [ "$stray" != "$stray_before" ]; then
    f=$((f + 1)); line="$line; left RDB files in the working directory: $stray"
  fi
  total_p=$((total_p + p)); total_f=$((total_f + f)); total_s=$((total_s + s))
  if [ "$f" != 0 ]; then
    bad+=("$name"); status=FAIL
  else
    status=ok
  fi
  printf '%-4s %-32s %s (%ss)\n' "$status" "$name" "${line:-no summary line, exit $rc}" "$secs"
  if [ "$f" != 0 ]; then sed 's/^/    | /' "$log" | tail -n 40; fi
  if [ "$s" != 0 ]; then grep -iE '^ *SKIP' "$log" | sed 's/^/    | /' | head -n 20; fi
done
echo
[ ${#bad[@]} -gt 0 ] && echo "failing: ${bad[*]} (logs in $logdir)"
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" = 0 ]
