#!/usr/bin/env bash
# What catching up costs the replica and the coordinator (issue 17, `catch-up`).
#
#   scripts/catch-up-cost.sh [COUNT] [FLUXBUS]     (defaults: 100000, .build/release/fluxbus)
#
# Starts an in-memory coordinator that retains its whole log and one worker hosting `counter`, dispatches COUNT
# `counter.add` through `fluxbus dispatch --batch`, then starts a second worker hosting `counter` and waits until
# it is live: it replays all COUNT entries. Prints the wall time from its start to live (as `status --wait-ready`
# sees it, polling), the CPU of all its threads (/proc/PID/task/*/schedstat) and the coordinator's CPU meanwhile.
# A process that only starts and joins an empty bus spends about 15 ms of CPU; the rest is the replay.
set -euo pipefail
count=${1:-100000}
fluxbus=$(realpath "${2:-.build/release/fluxbus}")
dir=$(mktemp -d /tmp/fluxbus-catch-up-cost.XXXXXX)
log=(--in-memory --retain "$count")
source "$(dirname "$0")/one-worker-cluster.sh"
cpu() { local ns switches; read -r ns switches < <(sample "$1"); echo "$ns"; }

seq "$count" | sed 's/.*/{"by":1}/' | "$fluxbus" dispatch counter.add --batch --coordinator "$control" >/dev/null
before=$(cpu "$coordinator")
start=$(date +%s%N)
"$fluxbus" worker --id replica --coordinator "$control" --store counter=counter --log-level warning >"$dir/replica.log" 2>&1 &
replica=$!
trap 'kill -TERM "$replica" 2>/dev/null || true; wait "$replica" 2>/dev/null || true; cleanup' EXIT
"$fluxbus" status --coordinator "$control" --wait-ready 2 --timeout 120 >/dev/null
end=$(date +%s%N)
replica_ns=$(cpu "$replica")
coordinator_ns=$(( $(cpu "$coordinator") - before ))
echo "catch-up of $count entries: start to live $(( (end - start) / 1000000 )) ms; replica CPU $((replica_ns / 1000000)) ms" \
    "($(python3 -c "print(f'{$replica_ns / $count / 1000:.2f}')") µs per entry); coordinator CPU $((coordinator_ns / 1000000)) ms"
