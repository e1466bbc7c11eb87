#!/usr/bin/env bash
# Which thread bounds `batch` (issue 17): the CPU of each thread of the coordinator and of the worker over one
# `fluxbus bench batch --control …` against a cluster started here.
#
#   scripts/batch-threads.sh [FLUXBUS] [durable|off|memory]     (defaults: .build/release/fluxbus, durable)
#
# Starts a coordinator and one worker hosting `counter` (scripts/one-worker-cluster.sh), reads every thread's run time
# (/proc/PID/task/*/schedstat) before and after `bench batch --count 200000` (with its 10% warm-up: 220,000 actions),
# and prints each thread that ran more than 10 ms, by name. The bench's own baseline runs in processes of its own.
set -euo pipefail
fluxbus=$(realpath "${1:-.build/release/fluxbus}")
mode=${2:-durable}
dir=$(mktemp -d /tmp/fluxbus-batch-threads.XXXXXX)
source "$(dirname "$0")/one-worker-cluster.sh"
snap() { for t in /proc/"$1"/task/*; do echo "$(tr ' ' _ <"$t/comm" 2>/dev/null) $(cut -d' ' -f1 "$t/schedstat" 2>/dev/null)"; done; }
snap "$coordinator" >"$dir/c0"
snap "$worker" >"$dir/w0"
"$fluxbus" bench batch --control "$control" --count 200000 --json >"$dir/bench.json" 2>/dev/null
snap "$coordinator" >"$dir/c1"
snap "$worker" >"$dir/w1"
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
def load(path):
    threads = {}
    for line in open(path):
        parts = line.split()
        if len(parts) == 2:
            threads[parts[0]] = threads.get(parts[0], 0) + int(parts[1])
    return threads
scenario = [s for s in json.load(open(f"{d}/bench.json"))["scenarios"] if s["scenario"] == "batch"][0]
print(f"batch: {scenario['throughput']:,.0f} actions/s over {scenario['count']:,} actions (and the warm-up)")
for process, label in (("c", "coordinator"), ("w", "worker")):
    before, after = load(f"{d}/{process}0"), load(f"{d}/{process}1")
    for name, ns in sorted(after.items()):
        cpu = (ns - before.get(name, 0)) / 1e9
        if cpu > 0.01:
            print(f"  {label:12s} {name:18s} {cpu:6.2f} s")
PY
