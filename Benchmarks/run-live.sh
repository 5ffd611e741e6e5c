#!/usr/bin/env bash
# Live-path benchmark (websocket → parse → engine → sink) on loopback, one process: server and
# client share the CPUs. Run with `taskset -c 0,1`: two cores, so the figures compare with the
# 2-core machine of Docs/performance.md; on that machine it is the whole machine (no pinning
# inside it), and one core would make client and server take turns. Extra arguments go to
# the benchmark (e.g. --frames 5000 --rules 10000 --rate 500).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --product live-benchmark >&2
echo "# live-benchmark: taskset -c 0,1 (2 cores shared by server and client; this machine has $(nproc)); $(uptime | sed 's/.*load/load/')"
taskset -c 0,1 .build/release/live-benchmark "$@"
