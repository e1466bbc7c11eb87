#!/usr/bin/env bash
# What catching up costs the replica and the coordinator (issue 17, `catch-up`).
#
#   scripts/catch-up-cost.sh [COUNT] [FLUXBUS] [LOG]   (defaults: 100000, .build/release/fluxbus, memory)
#
# Starts a coordinator that retains its whole log, in memory (LOG `memory`, `--in-memory`) or on SQLite (LOG
# `durable`, a data directory and its default `--sync always`, as `fluxbus bench catch-up` runs it), and one worker
# hosting `counter`, dispatches COUNT `counter.add` through `fluxbus dispatch --batch`, then starts a second worker
# hosting `counter` and waits until it is live: it replays all COUNT entries. Prints the wall time from its start to
# live (as `status --wait-ready` sees it, polling), the CPU of all its threads (/proc/PID/task/*/schedstat) and the
# coordinator's CPU meanwhile, which is what serving the entries cost it. A process that only starts and joins an
# empty bus spends about 15 ms of CPU; the rest is the replay.
set -euo pipefail
count=${1:-100000}
fluxbus=$(realpath "${2:-.build/release/fluxbus}")
dir=$(mktemp -d /tmp/fluxbus-catch-up-cost.XXXXXX)
case "${3:-memory}" in
    memory) log=(--in-memory --retain "$count") ;;
    durable) log=(--data-dir "$dir/data" --retain "$count") ;;
    *) echo "the third argument is memory or durable, not '$3'" >&2; exit 2 ;;
esac
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
    "($(python3 -c "print(f'{$replica_ns / $count / 1000:.2f}')") µs per entry); coordinator CPU $((coordinator_ns / 1000000)) ms" \
    "($(python3 -c "print(f'{$coordinator_ns / $count / 1000:.2f}')") µs per entry)"
