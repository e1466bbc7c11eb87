#!/usr/bin/env bash
# Checks the systemd units with `systemd-analyze verify` (run by `make verify-deploy`, and so by `make test`).
#
# verify loads each unit as systemd would and checks its syntax and values, and that every Exec*= program exists
# and is executable; it does not check that User= exists (that is resolved when the unit starts), nor that the
# EnvironmentFile= exists. The units name /usr/local/bin/fluxbus, where a deployment installs it, so the check
# copies them to a temporary directory pointed at a binary that exists here: the built one, else true(1). verify
# also instantiates the worker template (as fluxbus-worker@w1.service). Warnings such as an unknown key do not
# change verify's exit status, so any output at all fails the check.
set -euo pipefail

source=${BASH_SOURCE[0]}
[[ $source == */* ]] || source=./$source
here=$(cd "${source%/*}" && pwd)
root=$(cd "$here/../.." && pwd)

if ! command -v systemd-analyze >/dev/null 2>&1; then
    echo "skipped: systemd-analyze not found (deploy/systemd units not verified)"
    exit 0
fi

binary=${FLUXBUS:-}
for candidate in "$root/.build/debug/fluxbus" "$root/.build/release/fluxbus"; do
    if [ -z "$binary" ] && [ -x "$candidate" ]; then binary=$candidate; fi
done
if [ -z "$binary" ]; then
    binary=$(type -P true)
    echo "note: no built fluxbus; pointing ExecStart at $binary for the check"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for unit in fluxbus-coordinator.service fluxbus-worker@.service; do
    sed "s#/usr/local/bin/fluxbus#$binary#g" "$here/$unit" > "$work/$unit"
done
cp "$work/fluxbus-worker@.service" "$work/fluxbus-worker@w1.service"

units=("$work/fluxbus-coordinator.service" "$work/fluxbus-worker@.service" "$work/fluxbus-worker@w1.service")
status=0
output=$(cd "$work" && systemd-analyze verify --man=no "${units[@]}" 2>&1) || status=$?
if [ "$status" -ne 0 ] || [ -n "$output" ]; then
    echo "systemd-analyze verify failed (exit $status):"
    echo "$output"
    exit 1
fi
echo "ok: systemd-analyze verify: fluxbus-coordinator.service, fluxbus-worker@.service ($(systemd-analyze --version | head -1))"
