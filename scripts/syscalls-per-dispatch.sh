#!/usr/bin/env bash
# Syscalls per lock-step dispatch, per process (issue 17): an in-memory coordinator and one worker hosting
# `counter`, `strace -f -c` attached to each once the worker is live, and `fluxbus bench workers-1 --control …
# --lock-step-only` dispatching COUNT actions (no warm-up, no pipelined half). The bench's baseline runs in its own
# processes, which are not traced; the traced processes idle meanwhile (a few timer syscalls, noted in the figures).
#
#   scripts/syscalls-per-dispatch.sh [COUNT] [FLUXBUS]      (defaults: 4000, .build/release/fluxbus)
#
# Prints, per process, each syscall's calls divided by COUNT; the raw `strace -c` tables stay in the printed
# directory.
set -euo pipefail
count=${1:-4000}
fluxbus=$(realpath "${2:-.build/release/fluxbus}")
dir=$(mktemp -d /tmp/fluxbus-syscalls.XXXXXX)
log=(--in-memory)
source "$(dirname "$0")/one-worker-cluster.sh"

strace -f -c -o "$dir/coordinator.strace" -p "$coordinator" 2>/dev/null &
trace_c=$!
strace -f -c -o "$dir/worker.strace" -p "$worker" 2>/dev/null &
trace_w=$!
sleep 1
"$fluxbus" bench workers-1 --control "$control" --count "$count" --warmup 0 --lock-step-only >"$dir/bench.txt"
kill -INT "$trace_c" "$trace_w"
wait "$trace_c" "$trace_w" || true

for process in coordinator worker; do
    echo "$process: syscalls per dispatch (count $count)"
    # strace -c rows: % time, seconds, usecs/call, calls, [errors], syscall; the name is the last field.
    awk -v n="$count" '$1 ~ /^[0-9.]+$/ && NF >= 5 { printf "  %-16s %8.2f\n", $NF, $4 / n }' "$dir/$process.strace"
done
echo "raw tables and logs: $dir"
