#!/usr/bin/env bash
# How many bytes the coordinator writes to its data directory per action (docs/OPERATIONS.md, section 9).
#
#   scripts/log-bytes.sh [BINARY] [ACTIONS] [PAYLOAD_BYTES] [single|batch]
#
# Starts a coordinator (default --sync always) and one kv worker under a temporary directory, dispatches ACTIONS
# kv.set actions whose payload is about PAYLOAD_BYTES (one `fluxbus dispatch` per action with `single`, batches of
# 1,000 with `batch`), then prints what the coordinator process wrote (write_bytes in /proc/PID/io, read before it
# stops) and the data directory's size after a graceful stop, both in total and per action.
set -euo pipefail
BIN=${1:-.build/debug/fluxbus}
ACTIONS=${2:-1000}
SIZE=${3:-4096}
MODE=${4:-batch}
DIR=$(mktemp -d /tmp/fluxbus-log-bytes.XXXXXX)
CONTROL="ipc://$DIR/control"
PUBLISH="ipc://$DIR/publish"
cleanup() {
    kill -KILL "${WORKER:-}" "${COORDINATOR:-}" 2>/dev/null || true
    rm -rf "$DIR"
}
trap cleanup EXIT

"$BIN" coordinator --control "$CONTROL" --publish "$PUBLISH" --data-dir "$DIR/data" >"$DIR/coordinator.log" 2>&1 &
COORDINATOR=$!
"$BIN" worker --id w1 --store kv=kv --coordinator "$CONTROL" >"$DIR/worker.log" 2>&1 &
WORKER=$!
"$BIN" status --wait-ready 1 --timeout 30 --coordinator "$CONTROL" >/dev/null

# A JSON value of SIZE bytes: {"key":"kN","value":"xxx…"}, over 16 keys so that the replica's state stays small.
VALUE=$(head -c "$SIZE" /dev/zero | tr '\0' x)
BEFORE=$(awk '/^write_bytes/ {print $2}' "/proc/$COORDINATOR/io")
if [ "$MODE" = single ]; then
    for i in $(seq 1 "$ACTIONS"); do
        "$BIN" dispatch kv.set "{\"key\":\"k$((i % 16))\",\"value\":\"$VALUE\"}" --coordinator "$CONTROL" >/dev/null \
            || [ $? = 1 ]  # 1: a store failed; the action is logged all the same
    done
else
    for i in $(seq 1 "$ACTIONS"); do echo "{\"key\":\"k$((i % 16))\",\"value\":\"$VALUE\"}"; done \
        | "$BIN" dispatch kv.set --batch --batch-size "${BATCH:-100}" --coordinator "$CONTROL" >"$DIR/dispatch.log" 2>&1 \
        || [ $? = 1 ] || { cat "$DIR/dispatch.log"; exit 1; }  # 1: a store failed; the actions are logged all the same
fi
AFTER=$(awk '/^write_bytes/ {print $2}' "/proc/$COORDINATOR/io")
kill -TERM "$WORKER" && wait "$WORKER" || true
kill -TERM "$COORDINATOR" && wait "$COORDINATOR" || true
WRITTEN=$((AFTER - BEFORE))
ON_DISK=$(du -sb "$DIR/data" | cut -f1)
PAYLOAD=$((SIZE + 20))
echo "mode=$MODE actions=$ACTIONS payload≈${PAYLOAD}B"
echo "written by the coordinator: $WRITTEN bytes, $((WRITTEN / ACTIONS)) per action ($(awk "BEGIN {printf \"%.1f\", $WRITTEN / $ACTIONS / $PAYLOAD}")× the payload)"
echo "data directory after stop:  $ON_DISK bytes, $((ON_DISK / ACTIONS)) per action"
