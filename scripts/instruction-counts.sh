#!/usr/bin/env bash
# Instructions per operation of the in-process workloads (the Flux dispatcher, the Redux store) against their floors,
# counted by callgrind: unlike timings on a shared VM, which swing 2x from run to run, the counts repeat exactly.
#
#   scripts/instruction-counts.sh            # N=100000 operations per run
#   VALGRIND=/path/to/valgrind N=20000 scripts/instruction-counts.sh
#
# Each workload runs four times under callgrind: 0 and N operations, itself and its floor; the difference over N is
# what one operation costs, start-up excluded. Needs valgrind 3.20 or later (3.19 cannot read the DWARF 5 that
# Swift 6 emits); docs/BENCHMARKS.md says where one comes from on Debian 12.
set -euo pipefail
cd "$(dirname "$0")/.."
VALGRIND=${VALGRIND:-valgrind}
N=${N:-100000}
version=$("$VALGRIND" --version | sed -n 's/^valgrind-\([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
read -r major minor <<<"${version:-0 0}"
if (( major < 3 || (major == 3 && minor < 20) )); then
    echo "instruction-counts: $("$VALGRIND" --version) cannot read Swift 6's DWARF 5; use valgrind 3.20 or later (VALGRIND=…)" >&2
    exit 2
fi
swift build -c release --product FluxInstructions >/dev/null
binary="$(swift build -c release --show-bin-path)/FluxInstructions"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

collected() {
    "$VALGRIND" --tool=callgrind --callgrind-out-file="$scratch/out" "$binary" "$@" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

printf '%-11s %12s %12s %7s\n' scenario "instr/op" "floor/op" ratio
for scenario in dispatcher redux; do
    run=$(( $(collected "$scenario" "$N") - $(collected "$scenario" 0) ))
    floor=$(( $(collected "$scenario" "$N" floor) - $(collected "$scenario" 0 floor) ))
    awk -v s="$scenario" -v r="$run" -v f="$floor" -v n="$N" \
        'BEGIN { printf "%-11s %12.1f %12.1f %6.2fx\n", s, r / n, f / n, r / f }'
done
