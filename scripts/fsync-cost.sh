#!/usr/bin/env bash
# What one fdatasync costs this machine besides its wait (scripts/fsync-cost.c): its average latency, the kernel CPU
# it takes, and how much it slows a thread spinning beside it.
#
#   scripts/fsync-cost.sh [SECONDS]     (default 3; needs a C compiler: `cc`, or the Swift toolchain's `clang`)
#
# Builds the C program in a temporary directory under /tmp and syncs a file there: the file system the bench's
# coordinators keep their data directories on. Run it on an otherwise idle machine: the kernel time is the machine's.
set -euo pipefail
seconds=${1:-3}
dir=$(mktemp -d /tmp/fluxbus-fsync.XXXXXX)
trap 'rm -rf "$dir"' EXIT
compiler=${CC:-$(command -v cc || command -v clang)}
"$compiler" -O2 -pthread -o "$dir/fsync-cost" "$(dirname "$0")/fsync-cost.c"
"$dir/fsync-cost" "$dir/synced" "$seconds"
