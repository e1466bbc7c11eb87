#!/usr/bin/env bash
# What one lock-step `workers-1` dispatch costs each process (issue 17): CPU time, wake-ups and syscalls.
#
#   scripts/dispatch-cost.sh [COUNT] [FLUXBUS] [durable|off|memory]     (defaults: 4000, .build/release/fluxbus, durable)
#
# Starts a coordinator (`durable`: its default `--sync always` log in a temporary data directory; `memory`:
# `--in-memory`) and one worker hosting `counter`, then runs `fluxbus bench workers-1 --control … --lock-step-only`
# twice, COUNT dispatches each, no warm-up:
#   1. untraced, reading each process's threads before and after from /proc: CPU (the scheduler's run time, in
#      /proc/PID/task/*/schedstat) and wake-ups (voluntary context switches: each is a thread that blocked and was
#      woken again);
#   2. under `strace -f -c`, for the syscalls (strace slows the processes, so pass 1 gives the times).
# Each figure is divided by COUNT. The bench's own baseline runs in processes of its own, not counted here; the
# counted processes idle meanwhile (their timers add a few wake-ups per second).
set -euo pipefail
count=${1:-4000}
fluxbus=$(realpath "${2:-.build/release/fluxbus}")
mode=${3:-durable}
dir=$(mktemp -d /tmp/fluxbus-cost.XXXXXX)
source "$(dirname "$0")/one-worker-cluster.sh"

bench() { "$fluxbus" bench workers-1 --control "$control" --count "$count" --warmup 0 --lock-step-only --json >"$dir/$1.json"; }

read -r c_ns0 c_sw0 < <(sample "$coordinator")
read -r w_ns0 w_sw0 < <(sample "$worker")
bench untraced
read -r c_ns1 c_sw1 < <(sample "$coordinator")
read -r w_ns1 w_sw1 < <(sample "$worker")

strace -f -c -o "$dir/coordinator.strace" -p "$coordinator" 2>/dev/null &
trace_c=$!
strace -f -c -o "$dir/worker.strace" -p "$worker" 2>/dev/null &
trace_w=$!
sleep 1
bench traced
kill -INT "$trace_c" "$trace_w"
wait "$trace_c" "$trace_w" || true

python3 - "$count" "$dir" "$c_ns0" "$c_ns1" "$c_sw0" "$c_sw1" "$w_ns0" "$w_ns1" "$w_sw0" "$w_sw1" "$mode" <<'PY'
import json, sys
n = int(sys.argv[1]); d = sys.argv[2]; mode = sys.argv[11]
c_ns, w_ns = (int(sys.argv[4]) - int(sys.argv[3])), (int(sys.argv[8]) - int(sys.argv[7]))
c_sw, w_sw = (int(sys.argv[6]) - int(sys.argv[5])), (int(sys.argv[10]) - int(sys.argv[9]))
def syscalls(process):
    total = 0
    for line in open(f"{d}/{process}.strace"):
        fields = line.split()
        # strace -c rows: % time, seconds, usecs/call, calls, [errors], syscall.
        if len(fields) >= 5 and fields[0].replace('.', '', 1).isdigit() and fields[-1] != 'total':
            total += int(fields[3])
    return total / n
bench = json.load(open(f"{d}/untraced.json"))
scenario = bench["scenarios"][0]
print(f"workers-1, {mode} log, {n} lock-step dispatches: p50 {scenario['latency']['p50']:.0f} µs, "
      f"baseline {bench['baselineMedian']:.0f} µs ({scenario['ratioToBaseline']:.2f}×)")
print(f"{'per dispatch':14s} {'CPU µs':>8s} {'wake-ups':>9s} {'syscalls':>9s}")
for name, ns, sw in (("coordinator", c_ns, c_sw), ("worker", w_ns, w_sw)):
    print(f"{name:14s} {ns / n / 1000:8.1f} {sw / n:9.2f} {syscalls(name):9.1f}")
print(f"raw figures: {d}")
PY
