#!/usr/bin/env bash
# A FluxBus cluster on this machine: one coordinator and N workers, each a background process with its log and pid
# file in a run directory. Run with no arguments for usage.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: deploy/local-cluster.sh start [N] [--store SPEC ...]
       deploy/local-cluster.sh status
       deploy/local-cluster.sh stop
       deploy/local-cluster.sh env

  start N   start a coordinator and N workers (default 2) with ids w1..wN, each hosting the same stores
            (default: --store counter=counter, so every worker is a replica of one counter); wait until all N
            are live and caught up (fluxbus status --wait-ready N), then print the status. Refuses while a
            cluster recorded in the run directory is still running. If the workers do not become ready, stops
            what it started and exits 1.
  status    list the recorded processes, alive or dead, then run fluxbus status. Exits 0 when every recorded
            process is alive and the coordinator answers.
  stop      SIGTERM the recorded pids (workers first, then the coordinator), wait for them, SIGKILL what is
            left, and remove the pid files. Logs stay.
  env       print `export FLUXBUS_COORDINATOR=...` for the recorded cluster: eval "$(deploy/local-cluster.sh env)"

  SPEC is NAME=KIND[,after=DEP+DEP][,handles=TYPE+TYPE]; see `fluxbus worker --help`.

environment:
  FLUXBUS_CLUSTER_DIR    run directory: logs, pid files, endpoints (default: ./fluxbus-cluster)
  FLUXBUS                the fluxbus binary (default: .build/release/fluxbus, then .build/debug/fluxbus of
                         this checkout, then fluxbus on PATH)
  FLUXBUS_CONTROL        control endpoint for start (default: ipc://RUNDIR/control.sock)
  FLUXBUS_PUBLISH        publish endpoint for start (default: ipc://RUNDIR/publish.sock)
  FLUXBUS_READY_TIMEOUT  seconds start waits for the workers to be ready (default: 30)
  FLUXBUS_STOP_GRACE     seconds stop waits after each SIGTERM before SIGKILL (default: 10)
  status, stop and env use the endpoints recorded by start, not these variables.

exit codes: 0 done, 1 failed, 2 usage.
EOF
}

die() { echo "local-cluster: $*" >&2; exit 1; }
bad_usage() { echo "local-cluster: $*" >&2; usage >&2; exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=deploy/common.sh
. "$root/deploy/common.sh"
dir=${FLUXBUS_CLUSTER_DIR:-./fluxbus-cluster}


# The control endpoint recorded by start.
recorded_control() {
    [ -f "$dir/control.endpoint" ] || die "no cluster recorded in $dir (start one with: $0 start 2)"
    cat "$dir/control.endpoint"
}

# Names of the recorded processes, workers first (the order stop signals them in).
recorded_names() {
    local file name
    for file in "$dir"/w*.pid "$dir"/coordinator.pid; do
        [ -f "$file" ] || continue
        name=${file##*/}
        echo "${name%.pid}"
    done
}

# Whether a recorded pid is still the process start started: alive, and (where /proc exists) still a fluxbus
# process using this cluster's control endpoint, so that a recycled pid is never signalled.
is_ours() {
    local pid=$1 control=$2
    kill -0 "$pid" 2>/dev/null || return 1
    [ -r "/proc/$pid/cmdline" ] || return 0
    { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qF -- "$control"
}

start() {
    local count=2 stores=()
    if [ $# -gt 0 ] && [[ $1 != --* ]]; then
        if ! [[ $1 =~ ^[0-9]+$ ]] || [ "$1" -lt 1 ] || [ "$1" -gt 64 ]; then
            bad_usage "N must be a number from 1 to 64, not '$1'"
        fi
        count=$1
        shift
    fi
    while [ $# -gt 0 ]; do
        case $1 in
            --store)
                [ $# -ge 2 ] || bad_usage "--store needs a SPEC"
                stores+=(--store "$2")
                shift 2
                ;;
            --store=*) stores+=(--store "${1#--store=}"); shift ;;
            *) bad_usage "unexpected argument '$1'" ;;
        esac
    done
    local example=""
    if [ ${#stores[@]} -eq 0 ]; then
        stores=(--store counter=counter)
        example="counter.add '{\"by\":1}'"
    fi

    local fluxbus
    fluxbus=$(find_fluxbus)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ -f "$dir/control.endpoint" ]; then
        local name old
        old=$(cat "$dir/control.endpoint")
        for name in $(recorded_names); do
            if is_ours "$(cat "$dir/$name.pid")" "$old"; then
                die "a cluster is already running from $dir ($name is alive); stop it first: $0 stop"
            fi
        done
        rm -f "$dir"/*.pid
    fi

    local control=${FLUXBUS_CONTROL:-ipc://$dir/control.sock}
    local publish=${FLUXBUS_PUBLISH:-ipc://$dir/publish.sock}
    local endpoint
    for endpoint in "$control" "$publish"; do
        # A Unix socket path holds at most 107 bytes.
        if [[ $endpoint == ipc://* ]] && [ ${#endpoint} -gt $((107 + 6)) ]; then
            die "$endpoint is too long for an ipc:// endpoint; use a shorter FLUXBUS_CLUSTER_DIR"
        fi
    done
    # The coordinator itself refuses an endpoint in use (exit 2, for ipc:// too); asking first gives the script's
    # own message, naming the variable to change, before anything starts.
    if "$fluxbus" status --coordinator "$control" --timeout 1 >/dev/null 2>&1; then
        die "a coordinator already answers on $control; stop it or choose another FLUXBUS_CONTROL"
    fi
    echo "$control" >"$dir/control.endpoint"
    echo "$publish" >"$dir/publish.endpoint"
    echo "fluxbus: $fluxbus"
    echo "run directory: $dir"

    launch coordinator "$fluxbus" coordinator --control "$control" --publish "$publish" --data-dir "$dir/data"
    # Wait for the coordinator to answer, so that a failure to bind is reported as such.
    local tries=0
    until "$fluxbus" status --coordinator "$control" --timeout 1 >/dev/null 2>&1; do
        if ! kill -0 "$(cat "$dir/coordinator.pid")" 2>/dev/null; then
            echo "the coordinator exited; the end of $dir/coordinator.log:" >&2
            tail -n 5 "$dir/coordinator.log" >&2
            rm -f "$dir/coordinator.pid"
            exit 1
        fi
        tries=$((tries + 1))
        [ "$tries" -lt 20 ] || { stop; die "the coordinator did not answer on $control"; }
    done

    local index
    for index in $(seq 1 "$count"); do
        launch "w$index" "$fluxbus" worker --id "w$index" --coordinator "$control" "${stores[@]}"
    done
    if ! "$fluxbus" status --wait-ready "$count" --coordinator "$control" --timeout "${FLUXBUS_READY_TIMEOUT:-30}"; then
        echo "local-cluster: $count workers did not become ready; the ends of their logs:" >&2
        for index in $(seq 1 "$count"); do
            echo "--- w$index" >&2
            tail -n 5 "$dir/w$index.log" >&2
        done
        stop >&2
        exit 1
    fi
    echo
    echo "ready: a coordinator and workers w1..w$count. Point every fluxbus command at it:"
    echo "  export FLUXBUS_COORDINATOR=$control"
    echo "  $fluxbus dispatch ${example:-TYPE JSON}"
}


# launch NAME COMMAND...: starts COMMAND in the background, in its own session where setsid exists (so that a
# Ctrl-C or a closed terminal does not reach it), with no descriptor of ours but its log, which is NAME.log; its
# pid goes to NAME.pid. (The subshell execs setsid, which execs COMMAND: one pid throughout.)
launch() {
    local name=$1
    shift
    (
        close_inherited_fds
        if command -v setsid >/dev/null 2>&1; then
            exec setsid "$@" </dev/null >"$dir/$name.log" 2>&1
        fi
        exec "$@" </dev/null >"$dir/$name.log" 2>&1
    ) &
    echo $! >"$dir/$name.pid"
}

status() {
    local control fluxbus name pid dead=0
    control=$(recorded_control)
    fluxbus=$(find_fluxbus)
    echo "run directory: $(cd "$dir" && pwd)"
    echo "control: $control"
    if [ -z "$(recorded_names)" ]; then
        echo "not running: no recorded processes (stopped)"
        return 1
    fi
    for name in $(recorded_names); do
        pid=$(cat "$dir/$name.pid")
        if is_ours "$pid" "$control"; then
            printf '  %-12s pid %-8s alive\n' "$name" "$pid"
        else
            printf '  %-12s pid %-8s dead (log: %s)\n' "$name" "$pid" "$dir/$name.log"
            dead=1
        fi
    done
    echo
    "$fluxbus" status --coordinator "$control" --timeout 3 || return 1
    return "$dead"
}

stop() {
    local control
    if [ ! -f "$dir/control.endpoint" ]; then
        echo "nothing to stop: no cluster recorded in $dir"
        return 0
    fi
    control=$(recorded_control)
    local workers=() name
    for name in $(recorded_names); do
        [ "$name" = coordinator ] || workers+=("$name")
    done
    # Workers first, so that the coordinator hears their goodbyes; then the coordinator.
    if [ ${#workers[@]} -gt 0 ]; then terminate "$control" "${workers[@]}"; fi
    if [ -f "$dir/coordinator.pid" ]; then terminate "$control" coordinator; fi
    # The coordinator leaves its ipc:// socket files behind; remove the ones start names by default.
    rm -f "$dir/control.sock" "$dir/publish.sock"
    echo "stopped; logs are in $(cd "$dir" && pwd)"
}

# terminate CONTROL NAME...: SIGTERM to each recorded pid that is still ours, wait up to the grace period,
# SIGKILL what is left, then remove the pid files.
terminate() {
    local control=$1 name pid
    shift
    local grace=${FLUXBUS_STOP_GRACE:-10}
    local deadline=$((SECONDS + grace))
    for name in "$@"; do
        pid=$(cat "$dir/$name.pid")
        if is_ours "$pid" "$control"; then kill -TERM "$pid" 2>/dev/null || true; fi
    done
    for name in "$@"; do
        pid=$(cat "$dir/$name.pid")
        while is_ours "$pid" "$control" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
        if is_ours "$pid" "$control"; then
            kill -KILL "$pid" 2>/dev/null || true
            echo "  $name (pid $pid): still running after ${grace} s; sent SIGKILL"
        else
            echo "  $name (pid $pid): exited"
        fi
        rm -f "$dir/$name.pid"
    done
}

env_command() {
    local control
    control=$(recorded_control)
    printf 'export FLUXBUS_COORDINATOR=%q\n' "$control"
}

[ $# -ge 1 ] || bad_usage "missing a subcommand"
command=$1
shift
case $command in
    start) start "$@" ;;
    status) [ $# -eq 0 ] || bad_usage "status takes no arguments"; status ;;
    stop) [ $# -eq 0 ] || bad_usage "stop takes no arguments"; stop ;;
    env) [ $# -eq 0 ] || bad_usage "env takes no arguments"; env_command ;;
    -h | --help | help) usage ;;
    *) bad_usage "unknown subcommand '$command'" ;;
esac
