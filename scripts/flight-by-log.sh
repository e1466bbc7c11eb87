#!/usr/bin/env bash
# What each part of the log adds to `flight` (issue 17): the same lock-step `fluxbus bench flight` against a coordinator
# with its log in memory, on disk with `--sync off`, and on disk with `--sync always` (the default).
#
#   scripts/flight-by-log.sh [COUNT] [FLUXBUS] [memory|off|always ...]     (defaults: 3000, .build/release/fluxbus, all three)
#
# For each log, starts a coordinator and three workers (country, city, price, each in its own process) on free tcp
# ports of 127.0.0.1, runs `bench flight --control … --lock-step-only`, and prints the p50, the bench's same-run
# baseline and their ratio.
set -euo pipefail
count=${1:-3000}
fluxbus=$(realpath "${2:-.build/release/fluxbus}")
shift $(( $# < 2 ? $# : 2 ))
if [[ $# -eq 0 ]]; then modes=(memory off always); else modes=("$@"); fi
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

for mode in "${modes[@]}"; do
    dir=$(mktemp -d /tmp/fluxbus-flight.XXXXXX)
    case "$mode" in
        memory) log=(--in-memory) ;;
        off|always) log=(--data-dir "$dir/data" --sync "$mode") ;;
        *) echo "a log is memory, off or always, not '$mode'" >&2; exit 2 ;;
    esac
    control=tcp://127.0.0.1:$(port)
    "$fluxbus" coordinator --control "$control" --publish "tcp://127.0.0.1:$(port)" "${log[@]}" --log-level error >"$dir/coordinator.log" 2>&1 &
    pids=($!)
    for store in country city price; do
        "$fluxbus" worker --id "$store" --coordinator "$control" --store "$store=$store" --log-level error >"$dir/$store.log" 2>&1 &
        pids+=($!)
    done
    "$fluxbus" status --coordinator "$control" --wait-ready 3 --timeout 30 >/dev/null
    "$fluxbus" bench flight --control "$control" --coordinator-pid "${pids[0]}" --count "$count" --lock-step-only --json >"$dir/flight.json"
    python3 - "$dir/flight.json" "$mode" <<'PY'
import json, sys
bench = json.load(open(sys.argv[1]))
scenario = bench["scenarios"][0]
print(f"{sys.argv[2]:7s} p50 {scenario['latency']['p50']:6.0f} µs  baseline {bench['baselineMedian']:4.0f} µs  "
      f"{scenario['ratioToBaseline']:.2f}×")
PY
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
    rm -rf "$dir"
done
