#!/usr/bin/env bash
# SQLite's own cost per lock-step commit of the coordinator's log, without FluxBus (scripts/sqlite-commit-floor.c):
#
#   scripts/sqlite-commit-floor.sh [COUNT] [dispatch|row]     (default 4000 of each shape; needs a C compiler, `cc` or the Swift toolchain's `clang`, and libsqlite3-dev, which `make deps` installs)
#
# Builds the C program in a temporary directory and runs it on a database there (the same file system as the
# coordinator's default temporary data directory).
set -euo pipefail
count=${1:-4000}
dir=$(mktemp -d /tmp/fluxbus-floor.XXXXXX)
trap 'rm -rf "$dir"' EXIT
compiler=${CC:-$(command -v cc || command -v clang)}
"$compiler" -O2 -o "$dir/floor" "$(dirname "$0")/sqlite-commit-floor.c" -lsqlite3
"$dir/floor" "$dir" "$count" ${2:+"$2"}
