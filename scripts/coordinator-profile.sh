#!/usr/bin/env bash
# Where a lock-step `workers-1` dispatch's coordinator CPU goes, by thread and by kernel or user space: `perf record`
# samples the coordinator (one worker hosting `counter`, as scripts/one-worker-cluster.sh starts them) for SECONDS
# while the bench runs COUNT lock-step dispatches, then prints the samples per thread and object, and the loop
# thread's heaviest symbols.
#
#   scripts/coordinator-profile.sh [COUNT] [FLUXBUS] [durable|off|memory] [SECONDS]
#       (defaults: 20000, .build/release/fluxbus, off, 12; needs `perf` and the right to sample the process)
set -euo pipefail
count=${1:-20000}
fluxbus=$(realpath "${2:-.build/release/fluxbus}")
mode=${3:-off}
seconds=${4:-12}
dir=$(mktemp -d /tmp/fluxbus-profile.XXXXXX)
source "$(dirname "$0")/one-worker-cluster.sh"

perf record -F 4999 -g -p "$coordinator" -o "$dir/perf.data" -- sleep "$seconds" >/dev/null 2>&1 &
recorder=$!
sleep 0.5
"$fluxbus" bench workers-1 --control "$control" --count "$count" --warmup 0 --lock-step-only --json >"$dir/bench.json"
wait "$recorder" || true

python3 - "$dir/bench.json" <<'PY'
import json, sys
bench = json.load(open(sys.argv[1]))
scenario = bench["scenarios"][0]
print(f"workers-1, lock-step: p50 {scenario['latency']['p50']:.0f} µs, baseline {bench['baselineMedian']:.0f} µs "
      f"({scenario['ratioToBaseline']:.2f}×)")
PY
echo "samples by thread and object:"
perf report -i "$dir/perf.data" --no-children --sort comm,dso -g none -q 2>/dev/null | head -12
# The loop thread is the one libdispatch named (its name is cut to 15 characters); the I/O thread is ZMQbg/IO/0.
loop=$(perf report -i "$dir/perf.data" --no-children --sort comm -g none -q 2>/dev/null | awk '$2 != "ZMQbg/IO/0" { print $2; exit }')
echo "the loop thread ($loop), heaviest symbols:"
perf report -i "$dir/perf.data" --no-children --comm "$loop" --sort dso,sym -g none -q 2>/dev/null | head -25
