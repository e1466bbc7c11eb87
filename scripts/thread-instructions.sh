#!/usr/bin/env bash
# Instructions per operation of each thread of an in-process bus workload (`FluxInstructions`), by callgrind: the
# workload runs with 0 and with N operations, and each thread's difference over N is printed (threads over 1,000),
# then the sum over every thread. Threads are numbered by callgrind in the order they started: in `bus` the
# coordinator's loop was 05 and the worker's 09; in `flight` the coordinator's 05 and the workers hosting country, city
# and price 09, 10 and 11 (or 12).
#
#   scripts/thread-instructions.sh SCENARIO N [durable|durable-off] [FLUXINSTRUCTIONS]
#   VALGRIND=/opt/vg324/usr/bin/valgrind.bin VALGRIND_LIB=/opt/vg324/usr/libexec/valgrind \
#       scripts/thread-instructions.sh flight 1000 durable-off
set -euo pipefail
scenario=$1
count=$2
log=${3:-}
binary=${4:-$(dirname "$0")/../.build/release/FluxInstructions}
VALGRIND=${VALGRIND:-valgrind}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for n in 0 "$count"; do
    "$VALGRIND" --tool=callgrind --separate-threads=yes --callgrind-out-file="$scratch/$n.out" "$binary" "$scenario" "$n" $log \
        >"$scratch/$n.log" 2>&1 || { cat "$scratch/$n.log" >&2; exit 1; }
done
total() { sed -n 's/^totals: //p' "$1"; }
for first in "$scratch"/0.out-*; do
    thread=${first##*-}
    [[ -f "$scratch/$count.out-$thread" ]] || continue
    per=$(( ($(total "$scratch/$count.out-$thread") - $(total "$first")) / count ))
    if (( per > 1000 )); then echo "$scenario $count ${log:-memory} thread $thread: $per instructions per operation"; fi
done
# The client's work and libzmq's move between threads from run to run; their sum over every thread does not.
sum() { local all=0 file; for file in "$scratch/$1".out-*; do all=$(( all + $(total "$file") )); done; echo "$all"; }
echo "$scenario $count ${log:-memory} all threads: $(( ($(sum "$count") - $(sum 0)) / count )) instructions per operation"
