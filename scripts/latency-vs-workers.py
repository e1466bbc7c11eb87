#!/usr/bin/env python3
"""Draw median and p99 dispatch latency against the number of worker processes, from `fluxbus bench --json`.

Usage:
    fluxbus bench workers-1 workers-3 workers-8 --json > bench.json
    scripts/latency-vs-workers.py bench.json docs/latency-vs-workers.svg

Reads the `workers-N` scenarios and the baseline of one run and writes an SVG (Python 3 standard library only):
median and p99 for each N, and the raw ZeroMQ baseline's median and p99 as horizontal lines. The latency axis is
logarithmic, so medians and tails both stay readable.
"""
import json
import math
import re
import sys
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 640, 400
LEFT, RIGHT, TOP, BOTTOM = 70, 150, 50, 60


def load(path):
    with open(path) as handle:
        report = json.load(handle)
    points = []
    for scenario in report.get("scenarios", []):
        match = re.fullmatch(r"workers-(\d+)", scenario.get("scenario", ""))
        if match and scenario.get("outcome") == "ok" and scenario.get("latency"):
            points.append((int(match.group(1)), scenario["latency"]["p50"], scenario["latency"]["p99"]))
    if not points:
        sys.exit("no workers-N scenario with latencies in %s; run `fluxbus bench workers-1 workers-3 workers-8 --json`" % path)
    return report, sorted(points)


def ticks(low, high):
    """1, 2 and 5 times powers of ten from below low to above high."""
    values = []
    exponent = math.floor(math.log10(low))
    while True:
        for step in (1, 2, 5):
            value = step * 10 ** exponent
            if value >= low / 2:
                values.append(value)
            if value >= high:
                return values
        exponent += 1


def svg(report, points):
    baseline = (report.get("baseline") or {}).get("latency") or {}
    values = [v for _, p50, p99 in points for v in (p50, p99)] + [baseline[k] for k in ("p50", "p99") if k in baseline]
    grid = ticks(min(values), max(values))
    bottom, top = math.log10(grid[0]), math.log10(grid[-1])
    workers = [n for n, _, _ in points]
    low, high = min(workers), max(workers)
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(n):
        return LEFT + (plot_width / 2 if high == low else (n - low) / (high - low) * plot_width)

    def y(micros):
        return TOP + plot_height - (math.log10(max(micros, grid[0])) - bottom) / (top - bottom) * plot_height

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'font-family="sans-serif" font-size="12">' % (WIDTH, HEIGHT, WIDTH, HEIGHT),
           '<rect width="100%" height="100%" fill="white"/>']
    machine = report.get("machine", {})
    title = "FluxBus dispatch latency vs. worker processes (lock-step, %d-byte payload)" % report.get("payloadBytes", 64)
    out.append('<text x="%d" y="20" font-size="14" font-weight="bold">%s</text>' % (LEFT, escape(title)))
    out.append('<text x="%d" y="36" fill="#555">%s</text>' % (LEFT, escape(
        "%s cores, %s, %s" % (machine.get("cores", "?"), machine.get("cpuModel", "?"), machine.get("date", "?")[:10]))))
    # Axes and grid.
    for value in grid:
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (LEFT, y(value), LEFT + plot_width, y(value)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (LEFT - 6, y(value) + 4, value))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (LEFT, TOP, LEFT, TOP + plot_height))
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (LEFT, TOP + plot_height, LEFT + plot_width, TOP + plot_height))
    for n in workers:
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (x(n), TOP + plot_height + 18, n))
    out.append('<text x="%.1f" y="%d" text-anchor="middle">worker processes (one store replicated on each)</text>'
               % (LEFT + plot_width / 2, HEIGHT - 15))
    out.append('<text x="18" y="%.1f" text-anchor="middle" transform="rotate(-90 18 %.1f)">latency (µs, log scale)</text>'
               % (TOP + plot_height / 2, TOP + plot_height / 2))
    # Baseline lines.
    legend = []
    for key, dash, label in (("p50", "6 4", "baseline median"), ("p99", "2 3", "baseline p99")):
        if key in baseline:
            out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#888" stroke-dasharray="%s"/>'
                       % (LEFT, y(baseline[key]), LEFT + plot_width, y(baseline[key]), dash))
            legend.append(("#888", dash, "%s %.0f µs" % (label, baseline[key])))
    # The series.
    for index, color, label in ((1, "#1f77b4", "median"), (2, "#d62728", "p99")):
        path = " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", x(p[0]), y(p[index])) for i, p in enumerate(points))
        out.append('<path d="%s" fill="none" stroke="%s" stroke-width="2"/>' % (path, color))
        for point in points:
            out.append('<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%d workers: %s %.1f µs</title></circle>'
                       % (x(point[0]), y(point[index]), color, point[0], label, point[index]))
            out.append('<text x="%.1f" y="%.1f" fill="%s" font-size="10">%.0f</text>'
                       % (x(point[0]) + 6, y(point[index]) - 6, color, point[index]))
        legend.insert(index - 1, (color, "", label))
    for index, (color, dash, label) in enumerate(legend):
        ly = TOP + 10 + index * 20
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                   % (WIDTH - RIGHT + 15, ly, WIDTH - RIGHT + 40, ly, color, ' stroke-dasharray="%s"' % dash if dash else ""))
        out.append('<text x="%d" y="%d">%s</text>' % (WIDTH - RIGHT + 45, ly + 4, escape(label)))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    report, points = load(argv[1])
    with open(argv[2], "w") as handle:
        handle.write(svg(report, points))


if __name__ == "__main__":
    main(sys.argv)
