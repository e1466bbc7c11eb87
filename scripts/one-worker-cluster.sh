# Sourced by the cost scripts: starts a coordinator and one worker hosting `counter`, both from "$fluxbus" and logging
# into "$dir", on free tcp ports of 127.0.0.1; stops both when the sourcing script exits, and returns once the worker
# is live. Sets `control`, `coordinator` and `worker`, and defines `sample` (scripts/process-sample.sh). The
# coordinator's log options are the array `log` if the sourcing script set one, otherwise those `mode` names:
# `durable` (a data directory in "$dir", its default `--sync always`), `off` (the same with `--sync off`) or `memory`
# (`--in-memory`).
if [[ -z ${log+set} ]]; then
    case "$mode" in
        durable) log=(--data-dir "$dir/data") ;;
        off) log=(--data-dir "$dir/data" --sync off) ;;
        memory) log=(--in-memory) ;;
        *) echo "the third argument is durable, off or memory, not '$mode'" >&2; exit 2 ;;
    esac
fi

source "$(dirname "${BASH_SOURCE[0]}")/process-sample.sh"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
control=tcp://127.0.0.1:$(port)
publish=tcp://127.0.0.1:$(port)
"$fluxbus" coordinator "${log[@]}" --control "$control" --publish "$publish" --log-level warning >"$dir/coordinator.log" 2>&1 &
coordinator=$!
"$fluxbus" worker --id w1 --coordinator "$control" --store counter=counter --log-level warning >"$dir/worker.log" 2>&1 &
worker=$!
cleanup() { kill -TERM "$worker" "$coordinator" 2>/dev/null || true; wait "$worker" "$coordinator" 2>/dev/null || true; }
trap cleanup EXIT
"$fluxbus" status --coordinator "$control" --wait-ready 1 --timeout 30 >/dev/null
