#!/usr/bin/env bash
# FluxBus across two hosts of our own: two network namespaces joined by a veth pair, the coordinator in one and
# the workers in the other, talking TCP over the veth. Needs root and iproute2. Run with no arguments for usage.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: deploy/two-hosts.sh up [N] | status | down | demo [N]

  up [N]    create two network namespaces joined by a veth pair: the coordinator host (10.233.X.1/30) and the
            worker host (10.233.X.2/30), X random. Start the coordinator on the first, bound to
            tcp://10.233.X.1:7401 (control) and :7400 (publish), plus an ipc:// control endpoint in the state
            directory that clients in this (root) namespace use. Start N workers (default 2) on the second,
            ids far1..farN, each a counter replica reaching the coordinator over TCP through the veth. Waits until
            they are ready. The addresses exist only inside the namespaces; nothing is routed anywhere else.
  status    the namespaces, the recorded processes alive or dead, and fluxbus status.
  down      SIGTERM the recorded processes (SIGKILL after FLUXBUS_STOP_GRACE s), then delete exactly the
            namespaces up created (the veth pair goes with them), and the records.
  demo [N]  up, five dispatches, the status and the TCP connections on the worker host, then down.

environment:
  FLUXBUS_TWO_HOSTS_DIR  state directory: names, pids, logs (default: ./fluxbus-two-hosts)
  FLUXBUS                the fluxbus binary (default: .build/release/fluxbus, then .build/debug/fluxbus of
                         this checkout, then fluxbus on PATH)
  FLUXBUS_READY_TIMEOUT  seconds up waits for the workers (default: 30)
  FLUXBUS_STOP_GRACE     seconds down waits after SIGTERM before SIGKILL (default: 10)

exit codes: 0 done, 1 failed, 2 usage.
EOF
}

die() { echo "two-hosts: $*" >&2; exit 1; }
bad_usage() { echo "two-hosts: $*" >&2; usage >&2; exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=deploy/common.sh
. "$root/deploy/common.sh"
dir=${FLUXBUS_TWO_HOSTS_DIR:-./fluxbus-two-hosts}

require_root_and_ip() {
    [ "$(id -u)" -eq 0 ] || die "needs root to create network namespaces (run it with sudo)"
    command -v ip >/dev/null 2>&1 || die "needs the ip command from iproute2 (apt-get install iproute2)"
}


# record KEY VALUE / recorded KEY: the state file, one KEY=VALUE a line, never sourced.
record() { echo "$1=$2" >>"$dir/state"; }
recorded() { sed -n "s/^$1=//p" "$dir/state" 2>/dev/null | tail -n 1; }

# Whether a recorded pid is still a process up started (it still has the state directory's path in its
# arguments, via the ipc:// endpoint or the log), so that a recycled pid is never signalled.
is_ours() {
    local pid=$1
    kill -0 "$pid" 2>/dev/null || return 1
    [ -r "/proc/$pid/cmdline" ] || return 0
    { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -qF -- "$(recorded coordinator_address)"
}


# launch NAMESPACE NAME ARGS...: runs `fluxbus ARGS...` in the namespace, in its own session, with no descriptor
# of ours but its log, NAME.log; its pid goes to NAME.pid (setsid and ip netns exec both exec: one pid throughout).
launch() {
    local namespace=$1 name=$2
    shift 2
    (
        close_inherited_fds
        exec setsid ip netns exec "$namespace" "$fluxbus" "$@" </dev/null >"$dir/$name.log" 2>&1
    ) &
    echo $! >"$dir/$name.pid"
}

up() {
    local count=2
    if [ $# -gt 1 ]; then bad_usage "up takes at most one argument"; fi
    if [ $# -eq 1 ]; then
        if ! [[ $1 =~ ^[0-9]+$ ]] || [ "$1" -lt 1 ] || [ "$1" -gt 16 ]; then
            bad_usage "N must be a number from 1 to 16, not '$1'"
        fi
        count=$1
    fi
    require_root_and_ip
    fluxbus=$(find_fluxbus)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [ ! -s "$dir/state" ] || die "$dir already records namespaces ($(recorded coordinator_host), ...); run down first"

    local tag subnet
    tag=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
    subnet=$((1 + $(od -An -N1 -tu1 /dev/urandom | tr -d ' ') % 250))
    local chost=fbc$tag whost=fbw$tag cif=vc$tag wif=vw$tag
    local caddress=10.233.$subnet.1 waddress=10.233.$subnet.2
    local control=ipc://$dir/control.sock
    [ ${#control} -le $((107 + 6)) ] || die "$control is too long for an ipc:// endpoint; use a shorter FLUXBUS_TWO_HOSTS_DIR"
    : >"$dir/state"
    record coordinator_address "$caddress"
    record worker_address "$waddress"
    record control "$control"
    record workers "$count"

    echo "fluxbus: $fluxbus"
    echo "coordinator host: namespace $chost, $cif $caddress/30"
    echo "worker host:      namespace $whost, $wif $waddress/30"
    # Each name is recorded as soon as it exists, so that down removes exactly what was created, even after a
    # failure half-way.
    step ip netns add "$chost"
    record coordinator_host "$chost"
    step ip netns add "$whost"
    record worker_host "$whost"
    # Both ends are created inside the namespaces: the host's own network never sees them.
    step ip -n "$chost" link add "$cif" type veth peer name "$wif" netns "$whost"
    step ip -n "$chost" addr add "$caddress/30" dev "$cif"
    step ip -n "$whost" addr add "$waddress/30" dev "$wif"
    local host interface
    for host in "$chost:$cif" "$whost:$wif"; do
        interface=${host#*:}
        host=${host%%:*}
        step ip -n "$host" link set lo up
        step ip -n "$host" link set "$interface" up
    done

    launch "$chost" coordinator coordinator --control "tcp://$caddress:7401" --control "$control" \
        --publish "tcp://$caddress:7400" --data-dir "$dir/data"
    local index
    for index in $(seq 1 "$count"); do
        launch "$whost" "far$index" worker --id "far$index" --store counter=counter \
            --coordinator "tcp://$caddress:7401"
    done
    if ! "$fluxbus" status --wait-ready "$count" --coordinator "$control" --timeout "${FLUXBUS_READY_TIMEOUT:-30}"; then
        echo "two-hosts: the workers did not become ready; the ends of the logs:" >&2
        for name in coordinator $(seq -f 'far%g' 1 "$count"); do
            echo "--- $name" >&2
            tail -n 5 "$dir/$name.log" >&2
        done
        down >&2
        exit 1
    fi
    echo
    echo "up. From this namespace: export FLUXBUS_COORDINATOR=$control"
}

# step COMMAND...: runs a setup command; on failure, removes what up created so far and exits 1.
step() {
    if ! "$@"; then
        echo "two-hosts: failed: $*; removing what up created" >&2
        down >&2
        exit 1
    fi
}

# The recorded process names, workers first.
recorded_names() {
    local file name
    for file in "$dir"/far*.pid "$dir"/coordinator.pid; do
        [ -f "$file" ] || continue
        name=${file##*/}
        echo "${name%.pid}"
    done
}

status() {
    require_root_and_ip
    [ -s "$dir/state" ] || die "nothing recorded in $dir (bring the hosts up with: $0 up)"
    local host name pid dead=0
    for host in coordinator_host worker_host; do
        if ip netns list | grep -qw -- "$(recorded "$host")"; then
            echo "namespace $(recorded "$host"): present"
        else
            echo "namespace $(recorded "$host"): missing"
            dead=1
        fi
    done
    for name in $(recorded_names); do
        pid=$(cat "$dir/$name.pid")
        if is_ours "$pid"; then echo "  $name (pid $pid): alive"; else echo "  $name (pid $pid): dead"; dead=1; fi
    done
    echo
    "$(find_fluxbus)" status --coordinator "$(recorded control)" --timeout 3 || return 1
    return "$dead"
}

down() {
    require_root_and_ip
    if [ ! -s "$dir/state" ]; then
        echo "nothing to take down: no state in $dir"
        return 0
    fi
    # Workers first, so that the coordinator hears their goodbyes; then the coordinator.
    local name workers=()
    for name in $(recorded_names); do
        [ "$name" = coordinator ] || workers+=("$name")
    done
    if [ ${#workers[@]} -gt 0 ]; then terminate "${workers[@]}"; fi
    if [ -f "$dir/coordinator.pid" ]; then terminate coordinator; fi
    local host namespace left=""
    for host in worker_host coordinator_host; do
        namespace=$(recorded "$host")
        [ -n "$namespace" ] || continue
        if ! ip netns list | grep -qw -- "$namespace"; then continue; fi
        if ip netns del "$namespace"; then
            echo "  deleted namespace $namespace"
        else
            left="$left $namespace"
        fi
    done
    # Keep the records while a namespace is left, so that down can be run again.
    [ -z "$left" ] || die "could not delete namespace(s)$left; the state in $dir is kept"
    rm -f "$dir/state" "$dir/control.sock"
    echo "down; logs are in $(cd "$dir" && pwd)"
}

# terminate NAME...: SIGTERM to each recorded pid that is still ours, wait up to the grace period, SIGKILL what is
# left, then remove the pid files.
terminate() {
    local name pid deadline=$((SECONDS + ${FLUXBUS_STOP_GRACE:-10}))
    for name in "$@"; do
        pid=$(cat "$dir/$name.pid")
        if is_ours "$pid"; then kill -TERM "$pid" 2>/dev/null || true; fi
    done
    for name in "$@"; do
        pid=$(cat "$dir/$name.pid")
        while is_ours "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
        if is_ours "$pid"; then
            kill -KILL "$pid" 2>/dev/null || true
            echo "  $name (pid $pid): still running after ${FLUXBUS_STOP_GRACE:-10} s; sent SIGKILL"
        else
            echo "  $name (pid $pid): exited"
        fi
        rm -f "$dir/$name.pid"
    done
}

demo() {
    up "$@"
    trap 'down' EXIT
    local control
    control=$(recorded control)
    echo
    echo "== five dispatches from this namespace, through the coordinator host, to the workers across the veth"
    local index
    for index in 1 2 3 4 5; do
        "$fluxbus" dispatch counter.add '{"by":1}' --coordinator "$control"
    done
    echo
    echo "== fluxbus status"
    "$fluxbus" status --coordinator "$control"
    echo
    echo "== TCP connections on the worker host $(recorded worker_host)"
    ip netns exec "$(recorded worker_host)" ss -tn
    echo
}

[ $# -ge 1 ] || bad_usage "missing a subcommand"
command=$1
shift
fluxbus=""
case $command in
    up) up "$@" ;;
    status) [ $# -eq 0 ] || bad_usage "status takes no arguments"; status ;;
    down) [ $# -eq 0 ] || bad_usage "down takes no arguments"; down ;;
    demo) demo "$@" ;;
    -h | --help | help) usage ;;
    *) bad_usage "unknown subcommand '$command'" ;;
esac
