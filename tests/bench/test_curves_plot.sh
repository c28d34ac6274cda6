#!/usr/bin/env bash
# tests/bench/test_curves_plot.sh - bench/curves_plot.py (the SVG plots of
# make bench-curves) on a tiny fake points file, no server: every plot is
# written and parses as XML, each series is one polyline with one circle a
# point inside the plot frame, spread over it, the legend names every series, a plot whose
# series span more than a factor of 50 gets a log y axis (and one that does
# not, a linear one from 0), and a malformed record stops the script with
# exit 1 instead of a plot.
# CURVES_PLOT=path runs another copy of the script (to show the test fails
# against a broken one).
set -u
. "$(dirname "$0")/../../scripts/lib.sh"
PLOT=${CURVES_PLOT:-$(dirname "$0")/../../bench/curves_plot.py}
skip_without "the plot generator needs python3" python3
scratch_init test-curves-plot

T=$'\t'
cat >"$tmp/points.tsv" <<EOF
title${T}keys.ops${T}Throughput against keys${T}keys${T}ops/s
point${T}keys.ops${T}1000${T}rcukv GET${T}1500000
point${T}keys.ops${T}1000000${T}rcukv GET${T}1400000
point${T}keys.ops${T}100000${T}rcukv GET${T}1450000
point${T}keys.ops${T}1000${T}redis GET${T}1800000
point${T}keys.ops${T}100000${T}redis GET${T}1000000
point${T}keys.ops${T}1000000${T}redis GET${T}700000
title${T}values.ops${T}Throughput against value size${T}value bytes${T}ops/s
point${T}values.ops${T}16${T}rcukv SET${T}150000
point${T}values.ops${T}1048576${T}rcukv SET${T}900
point${T}values.ops${T}16${T}redis SET${T}140000
point${T}values.ops${T}1048576${T}redis SET${T}1000
EOF
out=$(python3 "$PLOT" "$tmp/points.tsv" "$tmp/svg" 2>&1)
rc=$?
check "exits 0 on a good points file ($out)" '[ "$rc" = 0 ]'
for p in keys.ops values.ops; do
  f=$tmp/svg/$p.svg
  if [ ! -s "$f" ]; then bad "$p.svg written ($out)"; continue; fi
  ok "$p.svg written"
  # XML, polylines, circles inside the frame, legend
  got=$(python3 - "$f" <<'EOF' 2>&1
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
r = ET.parse(sys.argv[1]).getroot()
lines = r.findall(ns + "polyline")
frame = [e for e in r.findall(ns + "rect") if e.get("fill") == "none"][0]
x0, y0 = float(frame.get("x")), float(frame.get("y"))
x1, y1 = x0 + float(frame.get("width")), y0 + float(frame.get("height"))
inside = all(x0 - 0.5 <= float(c.get("cx")) <= x1 + 0.5 and y0 - 0.5 <= float(c.get("cy")) <= y1 + 0.5
             for c in r.findall(ns + "circle"))
texts = [t.text for t in r.iter(ns + "text")]
# the highest point sits in the top quarter of the frame (the y axis ends
# above the largest value, at the next power of 10 on a log axis), the
# lowest in the bottom half
cys = [float(c.get("cy")) for c in r.findall(ns + "circle")]
spread = min(cys) <= y0 + (y1 - y0) / 4 and max(cys) >= (y0 + y1) / 2
print(len(lines), ",".join(str(len(l.get("points").split())) for l in lines),
      len(r.findall(ns + "circle")), inside,
      ",".join(sorted(t for t in texts if t and (t.startswith("rcukv") or t.startswith("redis")))),
      any(t and t.startswith("ops/s") and "log" in t for t in texts), spread)
EOF
)
  case $p in
    keys.ops) want="2 3,3 6 True rcukv GET,redis GET False True" ;;
    values.ops) want="2 2,2 4 True rcukv SET,redis SET True True" ;;
  esac
  check "$p: polylines, points each, circles, inside the frame, legend, log y ($got)" '[ "$got" = "$want" ]'
done
# the x axis is in x order whatever the order of the records: the rcukv GET
# polyline's x coordinates increase
xs=$(python3 - "$tmp/svg/keys.ops.svg" <<'EOF'
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
l = r.findall("{http://www.w3.org/2000/svg}polyline")[0]
x = [float(p.split(",")[0]) for p in l.get("points").split()]
print(x == sorted(x))
EOF
)
check "a series is drawn in x order" '[ "$xs" = True ]'

printf 'point\tkeys.ops\t1000\trcukv GET\tfast\n' >"$tmp/bad.tsv"
err=$(python3 "$PLOT" "$tmp/bad.tsv" "$tmp/svg2" 2>&1)
rc=$?
check "a point that is not a number: exit 1" '[ "$rc" = 1 ]'
case $err in *"not a number"*) ok "... and says so" ;; *) bad "... and says so ($err)" ;; esac
printf 'pint\tkeys.ops\t1000\trcukv GET\t1\n' >"$tmp/bad2.tsv"
python3 "$PLOT" "$tmp/bad2.tsv" "$tmp/svg3" >/dev/null 2>&1
rc=$?
check "a record that is neither title nor point: exit 1" '[ "$rc" = 1 ]'
summary
