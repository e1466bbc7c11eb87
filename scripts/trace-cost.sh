#!/usr/bin/env bash
# What the untraced hot path pays for dispatch tracing (issue 19), in instructions counted by callgrind.
#
#   VALGRIND=/opt/vg324/usr/bin/valgrind.bin VALGRIND_LIB=/opt/vg324/usr/libexec/valgrind scripts/trace-cost.sh [ROUNDS]
#
# Builds FluxInstructions twice in release: from the working tree as it is, and from a copy of it in which the four
# trace fields (DISPATCH's and ACTION's `traceparent`, ACK's `timings`, RESULT's `trace`) are neither stored in the
# message structs nor carried on the wire. The engines are the same in both; an untraced dispatch only ever tests
# those fields for emptiness. Then, ROUNDS times (default 5), the builds take turns running `bus 0` and `bus 3000`
# under callgrind: (instructions at 3,000 - at 0) / 3,000 is what one lock-step dispatch costs a coordinator, a worker
# and a client in one process. The counts vary by a few tenths of a percent with the threads' interleaving, so the
# medians are compared (`--fair-sched=yes` narrows that spread). Needs valgrind 3.20 or later (see scripts/instruction-counts.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
VALGRIND=${VALGRIND:-valgrind}
ROUNDS=${1:-5}
N=3000
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The control: the same tree without the trace fields. Each edit must apply, or the script stops.
mkdir "$scratch/untraced"
git ls-files -z | xargs -0 -I{} cp --parents {} "$scratch/untraced/"
python3 - "$scratch/untraced" <<'PY'
import sys
root = sys.argv[1]
def strip(path, edits):
    full = f"{root}/{path}"
    text = open(full).read()
    for old, new in edits:
        if old not in text:
            sys.exit(f"trace-cost: {path} no longer has {old.strip()!r}; update this script")
        text = text.replace(old, new, 1)
    open(full, "w").write(text)
unstored = lambda name, kind, empty: (f"        public var {name}: {kind}\n", f"        public var {name}: {kind} {{ get {{ {empty} }} set {{}} }}\n")
strip("Sources/FluxBusProtocol/Messages/Messages+Dispatch.swift", [
    unstored("traceparent", "String", '""'), ("            self.traceparent = traceparent\n", ""),
    unstored("timings", "[StoreTiming]", "[]"), ("            self.timings = timings\n", ""),
    ('        try visitor.string(&traceparent, "traceparent")\n', ""), ('        try visitor.list(&timings, "timings")\n', ""),
])
strip("Sources/FluxBusProtocol/Messages/Messages+Client.swift", [
    unstored("traceparent", "String", '""'), ("            self.traceparent = traceparent\n", ""),
    unstored("trace", "[TraceStep]", "[]"), ("            self.trace = trace\n", ""),
    ('        try visitor.string(&traceparent, "traceparent")\n', ""), ('        try visitor.list(&trace, "trace")\n', ""),
])
PY

build() {
    swift build -c release --package-path "$1" --scratch-path "$2" --product FluxInstructions >"$scratch/build.log" 2>&1 ||
        { cat "$scratch/build.log" >&2; exit 1; }
}
echo "trace-cost: building the tree as it is and the control without trace fields" >&2
build . "$scratch/build-traced"
build "$scratch/untraced" "$scratch/build-untraced"

count() {
    "$VALGRIND" --tool=callgrind --fair-sched=yes --callgrind-out-file="$scratch/out" "$1" bus "$2" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
per_dispatch() { echo $(( ($(count "$1" "$N") - $(count "$1" 0)) / N )); }

traced=(); untraced=()
for (( round = 1; round <= ROUNDS; round++ )); do
    traced+=("$(per_dispatch "$scratch/build-traced/release/FluxInstructions")")
    untraced+=("$(per_dispatch "$scratch/build-untraced/release/FluxInstructions")")
    echo "round $round: with trace fields ${traced[-1]}, without ${untraced[-1]}" >&2
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
with=$(median "${traced[@]}"); without=$(median "${untraced[@]}")
printf '%-22s %s\n' "with trace fields" "${traced[*]}" "without" "${untraced[*]}"
awk -v a="$with" -v b="$without" 'BEGIN { printf "median: %d vs %d instructions per dispatch: the trace fields cost %d (%.2f%%)\n", a, b, a - b, 100 * (a - b) / b }'
