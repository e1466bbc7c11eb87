# Sourced by the cost scripts: `sample PID` prints a process's run time in ns and its voluntary context switches,
# each summed over its threads (/proc/PID/task/*: schedstat's first figure, and status).
sample() {
    local pid=$1 ns=0 switches=0 task schedstat status
    for task in /proc/"$pid"/task/*; do
        # A thread may exit between the listing and the reads (a dispatch queue's idle worker): skip it.
        schedstat=$(cat "$task/schedstat" 2>/dev/null) && status=$(cat "$task/status" 2>/dev/null) || continue
        ns=$((ns + ${schedstat%% *}))
        switches=$((switches + $(awk '/^voluntary_ctxt_switches/ { print $2 }' <<<"$status")))
    done
    echo "$ns $switches"
}
