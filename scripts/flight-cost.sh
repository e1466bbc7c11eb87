#!/usr/bin/env bash
# What one lock-step `flight` dispatch costs each process, beside what its floor costs the process standing in the
# same place (issue 17): CPU time and wake-ups, per dispatch or round trip.
#
#   scripts/flight-cost.sh [COUNT] [FLUXBUS] [always|off|memory]     (defaults: 4000, .build/release/fluxbus, always)
#
# 1. The bus: a coordinator (`always`: its default log in a temporary data directory; `off`: the same with `--sync
#    off`; `memory`: `--in-memory`) and three workers hosting country, city and price, each in its own process, and
#    `fluxbus bench flight --control … --lock-step-only`, COUNT dispatches after no warm-up.
# 2. The floor (`fluxbus bench flight-floor`, docs/BENCHMARKS.md): `bench-peer flight-relay` (with a sync file
#    unless the log is `off` or `memory`) and three `bench-peer stage`s, and `bench-peer client`, COUNT round trips.
# For each, every thread of each process is read from /proc before and after: CPU is the scheduler's run time
# (schedstat), wake-ups are voluntary context switches. The client is not counted. The bench's own baseline runs in
# processes of its own meanwhile, not counted either; the counted processes idle then (timers add a few wake-ups).
set -euo pipefail
count=${1:-4000}
fluxbus=$(realpath "${2:-.build/release/fluxbus}")
mode=${3:-always}
dir=$(mktemp -d /tmp/fluxbus-flight-cost.XXXXXX)
case "$mode" in
    always) log=(--data-dir "$dir/data"); sync=(--sync-file "$dir/floor.pages") ;;
    off) log=(--data-dir "$dir/data" --sync off); sync=() ;;
    memory) log=(--in-memory); sync=() ;;
    *) echo "the third argument is always, off or memory, not '$mode'" >&2; exit 2 ;;
esac
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pids=()
cleanup() { kill -TERM "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; }
trap cleanup EXIT

source "$(dirname "$0")/process-sample.sh"
# Samples every process in "$@" into the named file, one line each.
sample_all() { local out=$1; shift; for pid in "$@"; do sample "$pid"; done >"$out"; }

# 1. The bus.
control=tcp://127.0.0.1:$(port)
publish=tcp://127.0.0.1:$(port)
"$fluxbus" coordinator "${log[@]}" --control "$control" --publish "$publish" --log-level warning >"$dir/coordinator.log" 2>&1 &
bus=($!)
for store in country city price; do
    "$fluxbus" worker --id "$store" --coordinator "$control" --store "$store=$store" --log-level warning >"$dir/$store.log" 2>&1 &
    bus+=($!)
done
pids+=("${bus[@]}")
"$fluxbus" status --coordinator "$control" --wait-ready 3 --timeout 30 >/dev/null
sample_all "$dir/bus.before" "${bus[@]}"
"$fluxbus" bench flight --control "$control" --count "$count" --warmup 0 --lock-step-only --json >"$dir/bus.json"
sample_all "$dir/bus.after" "${bus[@]}"
kill -TERM "${bus[@]}"
wait "${bus[@]}" 2>/dev/null || true

# 2. The floor.
control=tcp://127.0.0.1:$(port)
publish=tcp://127.0.0.1:$(port)
"$fluxbus" bench-peer flight-relay --endpoint "$control" --publish "$publish" "${sync[@]}" >"$dir/relay.log" 2>&1 &
floor=($!)
for stage in 1 2 3; do
    "$fluxbus" bench-peer stage --stage "$stage" --endpoint "$control" --publish "$publish" >"$dir/stage-$stage.log" 2>&1 &
    floor+=($!)
done
pids+=("${floor[@]}")
sample_all "$dir/floor.before" "${floor[@]}"
"$fluxbus" bench-peer client --endpoint "$control" --count "$count" >"$dir/floor.txt"
sample_all "$dir/floor.after" "${floor[@]}"

python3 - "$count" "$dir" "$mode" <<'PY'
import json, re, sys
n, d, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def deltas(part):
    before = [list(map(int, line.split())) for line in open(f"{d}/{part}.before")]
    after = [list(map(int, line.split())) for line in open(f"{d}/{part}.after")]
    return [((a[0] - b[0]) / n / 1000, (a[1] - b[1]) / n) for b, a in zip(before, after)]
bench = json.load(open(f"{d}/bus.json"))
scenario = bench["scenarios"][0]
floor_p50 = float(re.search(r"p50 ([0-9.]+)", open(f"{d}/floor.txt").read()).group(1))
print(f"flight, {mode} log, {n} lock-step dispatches: p50 {scenario['latency']['p50']:.0f} µs; its floor {floor_p50:.0f} µs "
      f"({scenario['latency']['p50'] / floor_p50:.2f}×); the bench's baseline {bench['baselineMedian']:.0f} µs")
print(f"{'per dispatch':22s} {'CPU µs':>8s} {'wake-ups':>9s}   {'floor':10s} {'CPU µs':>8s} {'wake-ups':>9s}")
names = ["coordinator", "worker: country", "worker: city", "worker: price"]
floors = ["relay", "stage 1", "stage 2", "stage 3"]
totals = [0, 0, 0, 0]
for name, (cpu, wakes), floor, (fcpu, fwakes) in zip(names, deltas("bus"), floors, deltas("floor")):
    print(f"{name:22s} {cpu:8.1f} {wakes:9.2f}   {floor:10s} {fcpu:8.1f} {fwakes:9.2f}")
    totals = [totals[0] + cpu, totals[1] + wakes, totals[2] + fcpu, totals[3] + fwakes]
print(f"{'all four':22s} {totals[0]:8.1f} {totals[1]:9.2f}   {'all four':10s} {totals[2]:8.1f} {totals[3]:9.2f}")
print(f"raw figures: {d}")
PY
