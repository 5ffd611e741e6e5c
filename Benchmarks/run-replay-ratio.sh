#!/usr/bin/env bash
# The ratio target (1 000 000 rules at >= 0.8x the rate of 100 rules) on a shared
# machine: both sizes in the same conditions, alternated back to back for ROUNDS rounds (default
# 3), each run the best and median of 3 replays, one core. Extra arguments go to every run.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product replay-benchmark >&2
rounds=${ROUNDS:-3}
for mix in dormant dense; do
  for ((round = 1; round <= rounds; round++)); do
    for n in 100 1000000; do
      echo "round=$round load=$(cut -d' ' -f1 /proc/loadavg) $(taskset -c 0 .build/release/replay-benchmark --rules "$n" --mix "$mix" --ticks 4000000 --repeat 3 "$@")"
    done
  done
done
