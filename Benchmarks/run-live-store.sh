#!/bin/sh
# Evaluation throughput with PostgreSQL saves: `live-benchmark --sources 5` (run's pipeline
# following the five look-alike floods, Docs/performance.md#live-throughput-five-sources-at-once)
# without a store and with `--store` on a PostgreSQL cluster of its own (Benchmarks/Failover/
# postgres.py: Debian's server programs, no service), interleaved ROUNDS times (default 3), each
# run SECONDS long (default 10). With the store, the engine state is saved there every second;
# the counting sink is a stdout sink, delivered directly, unless `--sink webhook` makes it a
# webhook, whose alerts all go through the store's outbox. Extra arguments go to every run.
#   Benchmarks/run-live-store.sh [ROUNDS] [SECONDS] [ARGS...]   ($LIVE_BENCHMARK: another build)
set -e
cd "$(dirname "$0")/.."
rounds=${1:-3}
seconds=${2:-10}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
if [ -z "$LIVE_BENCHMARK" ]; then
    swift build -c release --static-swift-stdlib --product live-benchmark >&2
    LIVE_BENCHMARK=.build/release/live-benchmark
fi
echo "# run-live-store: taskset -c 0,1, $rounds rounds of ${seconds} s; $(uptime | sed 's/.*load/load/')"
export LIVE_BENCHMARK rounds seconds
exec python3 Benchmarks/Failover/postgres.py sh -c '
    for i in $(seq "$rounds"); do
        taskset -c 0,1 "$LIVE_BENCHMARK" --sources 5 --seconds "$seconds" "$@"
        taskset -c 0,1 "$LIVE_BENCHMARK" --sources 5 --seconds "$seconds" --store "$PRICEALERT_STORE" "$@"
    done' run-live-store "$@"
