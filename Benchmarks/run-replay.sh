#!/usr/bin/env bash
# Replay benchmark at the sizes Docs/performance.md reports, one process per size (peak memory
# is per process), pinned to one core. Extra arguments go to every run (e.g. --ticks 1000000).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product replay-benchmark >&2
for mix in dense dormant; do
  for n in 100 100000 1000000; do
    taskset -c 0 .build/release/replay-benchmark --rules "$n" --mix "$mix" "$@"
  done
done
