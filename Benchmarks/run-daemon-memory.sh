#!/bin/sh
# The daemon's memory with N rules (default 100 000) over the 227 markets and a full 24 h minute
# history for every symbol (the rules include 24 h change windows): fills a state folder with
# one `check` over the last 1 440 minutes, then runs `pricealert run` against the embedded
# exchange (`pricealert exchange`, loopback) for 30 s and reports its peak RSS.
# See Docs/performance.md.   Benchmarks/run-daemon-memory.sh [RULES] [SECONDS]
set -e
rules=${1:-100000}
seconds=${2:-30}
. "$(dirname "$0")/Check/prepare.sh"
PRICEALERT_BENCH_NOW=1 prepare "$rules" 0
cleanup() { [ -n "$exchange" ] && kill "$exchange" 2>/dev/null; cd /; rm -rf "$dir"; }
trap cleanup EXIT
"$bin" exchange --port 0 --interval 1s 2> exchange.log &
exchange=$!
while ! grep -q "listening on" exchange.log; do sleep 0.1; done
port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' exchange.log | head -1)
/usr/bin/time -f "peak RSS %M KiB, wall %e s" "$bin" run --rules rules.json --source btse \
    --endpoint "http://127.0.0.1:$port" --state st --duration "${seconds}s" 2> run.log >/dev/null || true
grep -E "restored|peak RSS|run:" run.log
echo "rules=$rules; symbols with saved state: $(sqlite3 st/pricealert.sqlite 'select count(*) from symbol_state' 2>/dev/null || echo 'unknown (no sqlite3)')"
