#!/usr/bin/env bash
# The version 1 replay figures of this tree's engine against the engine before version 3
# (BASE, default 3406794^: the commit before the version 3 model), the 5 % the issue allows:
# both replay benchmarks built the same way (release flags, each module whole, as
# "One engine per key against two" in Docs/performance.md), their runs interleaved on one core
# by compare-replay.py (ROUNDS rounds, default 3; SIZES, default "100 100000"). Run it on an
# idle machine. Builds in a temporary folder and a detached worktree of BASE, both removed after.
#   Benchmarks/run-replay-v1.sh            (BASE=… ROUNDS=… SIZES=… to change them)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
base=${BASE:-3406794^}
work=$(mktemp -d)
trap 'git -C "$repo" worktree remove --force "$work/before" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$repo" worktree add --detach "$work/before" "$base" >/dev/null 2>&1
# build OUT SOURCE MODULE... : the modules the benchmark needs, each after what it uses.
build() {
    local out=$1 src=$2 libs="" m
    shift 2
    mkdir -p "$out"
    for m in "$@"; do
        (cd "$out" && swiftc -O -wmo -swift-version 6 -parse-as-library -module-name "$m" -emit-module \
            -emit-library -static -I . -o "lib$m.a" $(find "$src/Sources/$m" -name '*.swift'))
        libs="-l$m $libs"
    done
    (cd "$out" && swiftc -O -wmo -swift-version 6 -I . -L . $libs -lm -o replay-benchmark \
        "$src/Benchmarks/ReplayBenchmark/main.swift")
}
build "$work/rb-before" "$work/before" Platform SeededRandom AlertModel AlertEngine
build "$work/rb-after" "$repo" Platform SeededRandom AlertModel AlertEngine
SIZES=${SIZES:-100 100000} python3 "$repo/Benchmarks/compare-replay.py" "${ROUNDS:-3}" \
    before="$work/rb-before/replay-benchmark" after="$work/rb-after/replay-benchmark"
