#!/usr/bin/env bash
# What one batched action costs each process (issue 17, `batch`): CPU time and wake-ups, and the rate two cores
# could reach at that cost.
#
#   scripts/batch-cost.sh [COUNT] [FLUXBUS] [durable|off|memory]     (defaults: 200000, .build/release/fluxbus, durable)
#
# Starts a coordinator and one worker hosting `counter` (as scripts/dispatch-cost.sh does), then pipes COUNT
# `{"by":1}` lines into `fluxbus dispatch counter.add --batch` (batches of 1,000, one outstanding). The coordinator's
# and the worker's CPU (the scheduler's run time of all their threads, /proc/PID/task/*/schedstat) and voluntary
# context switches are read before and after; the client's CPU is its user + system time. Every figure is divided
# by COUNT. "ceiling" is 2 cores divided by the three processes' CPU per action: no schedule of the same work on
# this machine goes faster.
set -euo pipefail
count=${1:-200000}
fluxbus=$(realpath "${2:-.build/release/fluxbus}")
mode=${3:-durable}
dir=$(mktemp -d /tmp/fluxbus-batch-cost.XXXXXX)
source "$(dirname "$0")/one-worker-cluster.sh"

seq "$count" | sed 's/.*/{"by":1}/' >"$dir/input"
read -r c_ns0 c_sw0 < <(sample "$coordinator")
read -r w_ns0 w_sw0 < <(sample "$worker")
/usr/bin/time -f "%e %U %S" -o "$dir/client.time" \
    "$fluxbus" dispatch counter.add --batch --coordinator "$control" --timeout 60 <"$dir/input" >"$dir/client.out"
read -r c_ns1 c_sw1 < <(sample "$coordinator")
read -r w_ns1 w_sw1 < <(sample "$worker")

python3 - "$count" "$dir" "$mode" "$c_ns0" "$c_ns1" "$c_sw0" "$c_sw1" "$w_ns0" "$w_ns1" "$w_sw0" "$w_sw1" <<'PY'
import sys
n, d, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
c0, c1, cs0, cs1, w0, w1, ws0, ws1 = map(int, sys.argv[4:12])
wall, user, system = map(float, open(f"{d}/client.time").read().split())
rows = (("coordinator", (c1 - c0) / 1000 / n, (cs1 - cs0) / n),
        ("worker", (w1 - w0) / 1000 / n, (ws1 - ws0) / n),
        ("client", (user + system) * 1e6 / n, None))
total = sum(cpu for _, cpu, _ in rows)
print(f"batch, {mode} log, {n} actions in batches of 1,000: {n / wall:,.0f} actions/s ({wall:.2f} s)")
print(f"{'per action':12s} {'CPU µs':>7s} {'wake-ups':>9s}")
for name, cpu, switches in rows:
    print(f"{name:12s} {cpu:7.2f} {'' if switches is None else f'{switches:9.3f}'}")
print(f"{'all three':12s} {total:7.2f}   ceiling on 2 cores: {2e6 / total:,.0f} actions/s")
print(f"raw figures: {d}")
PY
