#!/usr/bin/env bash
# Replay benchmark at the sizes Docs/performance.md reports, one process each, on one core.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product replay-benchmark >&2
for n in 100 100000 1000000; do
  taskset -c 0 .build/release/replay-benchmark --rules "$n" "$@"
done
