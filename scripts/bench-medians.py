#!/usr/bin/env python3
"""The median of several `fluxbus bench --json` runs, scenario by scenario, as a Markdown table.

    scripts/bench-medians.py run1.json run2.json run3.json

Each run's ratios are to its own baseline (the faster of the baseline measured before and after its scenarios), so a
ratio's median is the median of same-run ratios, never a ratio of medians from different runs. The per-run figures
follow each median in parentheses.
"""
import json
import statistics
import sys


def figures(scenario):
    """What one run says of one scenario: (name, value, format) for each figure it has."""
    latency = scenario.get("latency") or {}
    rows = []
    if scenario.get("inProcess"):
        process = scenario["inProcess"]
        rows.append(("ratio to floor", process.get("ratio") or process.get("ratioToFloor"), "{:.2f}×"))
        return rows
    if latency and scenario["scenario"] not in ("batch",):
        rows.append(("p50 µs", latency.get("p50"), "{:,.0f}"))
        rows.append(("× baseline", scenario.get("ratioToBaseline"), "{:.2f}×"))
        rows.append(("lock-step /s", scenario.get("throughput"), "{:,.0f}"))
        if scenario.get("pipelinedThroughput"):
            rows.append(("32 outstanding /s", scenario.get("pipelinedThroughput"), "{:,.0f}"))
        for floor in scenario.get("ratiosToShapeFloors") or []:
            rows.append((f"× `{floor['floor']}`", floor["ratio"], "{:.2f}×"))
    else:
        rows.append(("actions/s", scenario.get("throughput"), "{:,.0f}"))
    if scenario.get("coordinatorCPUSeconds") is not None:
        rows.append(("coordinator CPU s", scenario.get("coordinatorCPUSeconds"), "{:.2f}"))
    return rows


def main(paths):
    runs = [json.load(open(path)) for path in paths]
    table = {}
    order = []
    for run in runs:
        for scenario in run["scenarios"]:
            name = scenario["scenario"]
            if name not in order:
                order.append(name)
            for figure, value, form in figures(scenario):
                if value is not None:
                    table.setdefault((name, figure), (form, []))[1].append(value)
    baselines = [run["baselineMedian"] for run in runs]
    print(f"baseline p50 µs: median {statistics.median(baselines):,.0f} "
          f"({', '.join(f'{value:,.0f}' for value in baselines)})\n")
    print("| scenario | figure | median | runs |")
    print("|---|---|---|---|")
    for name in order:
        for (scenario, figure), (form, values) in table.items():
            if scenario != name:
                continue
            runs_text = ", ".join(form.format(value) for value in values)
            print(f"| `{name}` | {figure} | {form.format(statistics.median(values))} | {runs_text} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
