#!/usr/bin/env bash
# The test suite as `make test` runs it, after `swift build --build-tests`: the SimulationTests module beside all
# the others, in two processes.
#
#   scripts/test-suites.sh [SWIFT]
#
# The simulation is CPU-bound and touches no socket, clock or child process, and took 200 of the suite's 485 s; the
# rest mostly waits on real processes and deadlines. So the simulation runs on what the others leave idle: under the
# kernel's idle scheduling class (`chrt --idle 0`, which yields a CPU to any other task at once; nice 19 where chrt
# is missing or refused), and they run as before, one test at a time. With nice 19 alone, one `make test` in three
# saw a worker of OperationsTests miss its 1 s liveness deadline. Each process keeps the cooperative
# pool's two threads to itself. The simulation's output is printed after the rest's, and the script fails if either
# failed. Deterministic hashing makes a simulation seed replay exactly in another process too.
set -uo pipefail
cd "$(dirname "$0")/.."
swift=${1:-swift}
bundle=$("$swift" build --show-bin-path)/FluxBusPackageTests.xctest
log=$(mktemp /tmp/fluxbus-simulation-tests.XXXXXX)
trap 'rm -f "$log"; [[ -n "${simulation:-}" ]] && kill "$simulation" 2>/dev/null' EXIT

# What `swift test --no-parallel` runs, called directly: SwiftPM holds a lock on .build for as long as it runs.
idle=(nice -n 19)
if chrt --idle 0 true 2>/dev/null; then idle=(chrt --idle 0 nice -n 19); fi
SWIFT_DETERMINISTIC_HASHING=1 NO_COLOR=1 "${idle[@]}" "$bundle" --no-parallel --filter '^SimulationTests\.' --testing-library swift-testing \
    >"$log" 2>&1 &
simulation=$!

SWIFT_DETERMINISTIC_HASHING=1 "$swift" test --skip-build --no-parallel --skip '^SimulationTests\.'
rest=$?

wait "$simulation"
simulated=$?
simulation=
echo "==> the SimulationTests module, run beside the rest on idle CPU (${idle[*]}):"
cat "$log"
if (( rest != 0 || simulated != 0 )); then
    echo "==> failed: the rest exited $rest, the simulation $simulated" >&2
    exit 1
fi
