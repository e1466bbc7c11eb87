#!/usr/bin/env bash
# Runs the TodoSync example as a user would: a `fluxbus coordinator`, the package's todo-worker and todo-client, on
# ipc:// endpoints in a temporary directory. Fails unless the client prints the stats and the worker exits 0 on
# SIGTERM. Usage: run.sh FLUXBUS-BINARY TODOSYNC-BUILD-DIR (make example passes both).
set -euo pipefail
fluxbus=$1
bin=$2
dir=$(mktemp -d)
coordinator_pid=""
worker_pid=""
cleanup() {
    for pid in $worker_pid $coordinator_pid; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$dir"
}
trap cleanup EXIT
export FLUXBUS_COORDINATOR="ipc://$dir/control"

"$fluxbus" coordinator --control "$FLUXBUS_COORDINATOR" --publish "ipc://$dir/publish" --in-memory \
    --log-level warning &
coordinator_pid=$!
"$bin/todo-worker" --id todo-1 --log-level warning &
worker_pid=$!

output=$("$bin/todo-client" milk "buy milk")
echo "todo-client: $output"
[ "$output" = "open 0, done 1" ] || { echo "expected: open 0, done 1" >&2; exit 1; }

kill -TERM "$worker_pid"
status=0
wait "$worker_pid" || status=$?
worker_pid=""
[ "$status" = 0 ] || { echo "todo-worker exited $status on SIGTERM, not 0" >&2; exit 1; }
echo "ok: todo-worker and todo-client ran against fluxbus coordinator; the worker exited 0 on SIGTERM"
