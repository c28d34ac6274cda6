#!/usr/bin/env python3
"""bench/curves_plot.py - the SVG plots of bench/bench_curves.sh, written by
hand with the standard library only (no plotting package).

Input (the bench's points file), one record a line, tab-separated:
  title <plot> <title> <x label> <y label>
  point <plot> <x> <series> <y>
Every <plot> becomes OUTDIR/<plot>.svg: one polyline per series, all on the
same axes (rcukv and redis-server side by side), x on a log scale (keys,
bytes, connections span four to seven decades), y from 0, or on a log scale
when the series span more than a factor of 50 (throughput against value
size).  A series' points are joined in x order; a point left out (the bench
printed a SKIP) is simply absent.

Usage: curves_plot.py POINTS OUTDIR   (prints "wrote OUTDIR/<plot>.svg" lines)
"""
import math
import os
import sys
from xml.sax.saxutils import escape

W, H = 640, 400
L, R, T, B = 80, 170, 40, 60  # margins: the legend sits on the right
COLORS = ["#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b"]
DASHES = ["", "6,3"]  # rcukv solid, redis dashed (the series' second word)


def fmt(v):
    """A tick label: 1k, 30M, 4Ki-style numbers stay short."""
    a = abs(v)
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            s = "%.3g" % (v / div)
            return s + suf
    if a >= 1 or a == 0:
        return "%.3g" % v
    return "%.2g" % v


def log_ticks(lo, hi):
    out = []
    e = math.floor(math.log10(lo))
    while 10 ** e <= hi * 1.0001:
        if 10 ** e >= lo / 1.0001:
            out.append(10 ** e)
        e += 1
    return out or [lo, hi]


def lin_ticks(hi):
    if hi <= 0:
        return [0, 1]
    step = 10 ** math.floor(math.log10(hi / 5))
    for m in (1, 2, 5, 10):
        if hi / (step * m) <= 6:
            step *= m
            break
    n = int(math.ceil(hi / step))
    return [i * step for i in range(n + 1)]


def plot(name, meta, series, outdir):
    title, xlabel, ylabel = meta
    xs = [x for pts in series.values() for x, _ in pts]
    ys = [y for pts in series.values() for _, y in pts]
    if not xs:
        return None
    xlo, xhi = min(xs), max(xs)
    if xlo <= 0:
        xlo = 1
    if xhi <= xlo:
        xhi = xlo * 10
    pos = [y for y in ys if y > 0]
    ylog = bool(pos) and min(pos) > 0 and max(pos) / min(pos) > 50
    if ylog:
        ylo = 10 ** math.floor(math.log10(min(pos)))
        yhi = 10 ** math.ceil(math.log10(max(pos)))
        yt = log_ticks(ylo, yhi)
    else:
        yt = lin_ticks(max(ys) * 1.05 if ys else 1)
        ylo, yhi = 0, yt[-1]
    pw, ph = W - L - R, H - T - B

    def px(x):
        return L + pw * (math.log10(x) - math.log10(xlo)) / (math.log10(xhi) - math.log10(xlo))

    def py(y):
        if ylog:
            y = max(y, ylo)
            f = (math.log10(y) - math.log10(ylo)) / (math.log10(yhi) - math.log10(ylo))
        else:
            f = (y - ylo) / (yhi - ylo)
        return T + ph * (1 - f)

    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'font-family="sans-serif" font-size="12">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="22" font-size="14" font-weight="bold">%s</text>' % (L, escape(title))]
    for t in yt:
        y = py(t)
        o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, y, L + pw, y))
        o.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (L - 6, y + 4, fmt(t)))
    xt = sorted(set(xs))
    for t in xt:
        x = px(t)
        o.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (x, T, x, T + ph))
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (x, T + ph + 16, fmt(t)))
    o.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>'
             % (L, T, pw, ph))
    o.append('<text x="%d" y="%d" text-anchor="middle">%s (log scale)</text>'
             % (L + pw // 2, H - 18, escape(xlabel)))
    o.append('<text transform="translate(18,%d) rotate(-90)" text-anchor="middle">%s%s</text>'
             % (T + ph // 2, escape(ylabel), " (log scale)" if ylog else ""))
    kinds = sorted({s.split(" ", 1)[-1] if " " in s else "" for s in series})
    for i, s in enumerate(sorted(series)):
        pts = sorted(series[s])
        kind = s.split(" ", 1)[1] if " " in s else ""
        color = COLORS[kinds.index(kind) % len(COLORS)]
        dash = DASHES[0 if s.startswith("rcukv") else 1]
        d = " ".join("%.1f,%.1f" % (px(x), py(y)) for x, y in pts)
        o.append('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>'
                 % (d, color, ' stroke-dasharray="%s"' % dash if dash else ""))
        for x, y in pts:
            o.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (px(x), py(y), color))
        ly = T + 14 + 20 * i
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                 % (L + pw + 12, ly, L + pw + 40, ly, color,
                    ' stroke-dasharray="%s"' % dash if dash else ""))
        o.append('<text x="%d" y="%d">%s</text>' % (L + pw + 46, ly + 4, escape(s)))
    o.append("</svg>")
    path = os.path.join(outdir, name + ".svg")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")
    return path


def main():
    if len(sys.argv) != 3:
        print("usage: curves_plot.py POINTS OUTDIR", file=sys.stderr)
        return 2
    metas, data, order = {}, {}, []
    with open(sys.argv[1]) as f:
        for n, line in enumerate(f, 1):
            p = line.rstrip("\n").split("\t")
            if p[0] == "title" and len(p) == 5:
                metas[p[1]] = tuple(p[2:])
            elif p[0] == "point" and len(p) == 5:
                try:
                    x, y = float(p[2]), float(p[4])
                except ValueError:
                    print("curves_plot: line %d: not a number: %r" % (n, line), file=sys.stderr)
                    return 1
                if p[1] not in data:
                    order.append(p[1])
                data.setdefault(p[1], {}).setdefault(p[3], []).append((x, y))
            elif p[0]:
                print("curves_plot: line %d: not a title or point record: %r"
                      % (n, line), file=sys.stderr)
                return 1
    os.makedirs(sys.argv[2], exist_ok=True)
    for name in order:
        path = plot(name, metas.get(name, (name, "x", "y")), data[name], sys.argv[2])
        if path:
            print("wrote %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
