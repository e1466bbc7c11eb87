# Functions shared by deploy/local-cluster.sh and deploy/two-hosts.sh, which source this file after setting
# `root` (the package root) and defining `die`.
# shellcheck shell=bash

# find_fluxbus: prints the fluxbus binary to run: $FLUXBUS, else a release or debug build, else fluxbus on PATH.
# shellcheck disable=SC2154  # `root` is set by the sourcing script
find_fluxbus() {
    if [ -n "${FLUXBUS:-}" ]; then
        [ -x "$FLUXBUS" ] || die "FLUXBUS=$FLUXBUS is not an executable file"
        echo "$FLUXBUS"
    elif [ -x "$root/.build/release/fluxbus" ]; then
        echo "$root/.build/release/fluxbus"
    elif [ -x "$root/.build/debug/fluxbus" ]; then
        echo "$root/.build/debug/fluxbus"
    elif command -v fluxbus >/dev/null 2>&1; then
        command -v fluxbus
    else
        die "no fluxbus binary: build one (swift build), put it on PATH, or set FLUXBUS"
    fi
}

# close_inherited_fds: closes every descriptor above 2 in this (sub)shell, so that a background process does not
# keep its caller's pipes and sockets open: a caller waiting for one to close (Foundation's Process waits on a
# socket it shares with the child; a pipe reader waits for EOF) would otherwise wait for the cluster's whole life.
close_inherited_fds() {
    local fd number
    [ -d "/proc/$BASHPID/fd" ] || return 0
    for fd in /proc/"$BASHPID"/fd/*; do
        number=${fd##*/}
        if [ "$number" -gt 2 ]; then { eval "exec $number>&-"; } 2>/dev/null || true; fi
    done
}
