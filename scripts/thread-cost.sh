#!/usr/bin/env bash
# What one lock-step `workers-1` dispatch costs each thread of the coordinator and of the worker: CPU µs (the
# scheduler's run time), of it user and system time (clock ticks, so only roughly), and wake-ups (voluntary context
# switches). scripts/dispatch-cost.sh sums the threads and adds syscalls; this one tells the loop from libzmq's I/O
# thread.
#
#   scripts/thread-cost.sh [COUNT] [FLUXBUS] [durable|off|memory]     (defaults: 5000, .build/release/fluxbus, off)
#
# Prints each thread that took more than 0.5 µs or 0.05 wake-ups a dispatch, and the run's p50 against its baseline.
set -euo pipefail
count=${1:-5000}
fluxbus=$(realpath "${2:-.build/release/fluxbus}")
mode=${3:-off}
dir=$(mktemp -d /tmp/fluxbus-threads.XXXXXX)
source "$(dirname "$0")/one-worker-cluster.sh"

# One line per thread: id, name, run time ns, voluntary switches, user ticks, system ticks.
threads() {
    local task
    for task in /proc/"$1"/task/*; do
        echo "$(basename "$task") $(tr ' ' _ <"$task/comm") $(cut -d' ' -f1 "$task/schedstat") \
$(awk '/^voluntary_ctxt_switches/ { print $2 }' "$task/status") $(sed 's/.*) //' "$task/stat" | cut -d' ' -f12,13)"
    done 2>/dev/null
}

threads "$coordinator" >"$dir/coordinator.0"
threads "$worker" >"$dir/worker.0"
"$fluxbus" bench workers-1 --control "$control" --count "$count" --warmup 0 --lock-step-only --json >"$dir/bench.json"
threads "$coordinator" >"$dir/coordinator.1"
threads "$worker" >"$dir/worker.1"

python3 - "$dir" "$count" "$mode" "$(getconf CLK_TCK)" <<'PY'
import json, sys
d, n, mode, tick = sys.argv[1], int(sys.argv[2]), sys.argv[3], 1e6 / int(sys.argv[4])
def read(path):
    return {f[0]: (f[1], *map(int, f[2:6])) for f in (line.split() for line in open(path)) if len(f) == 6}
bench = json.load(open(f"{d}/bench.json"))
scenario = bench["scenarios"][0]
print(f"workers-1, {mode} log, {n} lock-step dispatches: p50 {scenario['latency']['p50']:.0f} µs, "
      f"baseline {bench['baselineMedian']:.0f} µs ({scenario['ratioToBaseline']:.2f}×)")
print(f"{'per dispatch':12s} {'thread':18s} {'CPU µs':>7s} {'user':>6s} {'sys':>6s} {'wake-ups':>8s}")
for process in ("coordinator", "worker"):
    before, after = read(f"{d}/{process}.0"), read(f"{d}/{process}.1")
    for tid, (name, ns, switches, user, system) in after.items():
        if tid not in before:
            continue
        _, ns0, switches0, user0, system0 = before[tid]
        cpu, wakes = (ns - ns0) / n / 1000, (switches - switches0) / n
        if cpu > 0.5 or wakes > 0.05:
            print(f"{process:12s} {name:18s} {cpu:7.1f} {(user - user0) * tick / n:6.1f} {(system - system0) * tick / n:6.1f} {wakes:8.2f}")
PY
