#!/bin/sh
# The state a cron `check` saves when every symbol is read by both kinds of rule: the N rules of
# run-check.sh (indexed: levels, crossings, change windows up to 24 h) plus one version 2
# `fromHigh` rule per symbol (evaluated pair by pair: minute buckets with highs and lows), over
# 227 symbols with a full day of minute history. Prints the bytes of the symbol states and of the
# minute history chunks after the day is loaded, then wall and CPU time of M consecutive checks
# (each saves the state), then the bytes again. See Docs/performance.md.
#   PRICEALERT_BIN=path/to/pricealert Benchmarks/run-state-size.sh [RULES] [RUNS]
set -e
rules=${1:-10000}
runs=${2:-8}
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$(dirname "$PRICEALERT_BIN")" && pwd)/$(basename "$PRICEALERT_BIN")
dir=$(mktemp -d)
trap 'cd /; rm -rf "$dir"' EXIT
python3 "$repo/Benchmarks/Check/generate.py" "$dir" "$rules" "$runs"
cd "$dir"
python3 - <<'PY'
import json
symbols = sorted({r["symbol"] for r in json.load(open("rules.json"))["rules"]})
rules = [{"id": f"off-high-{s}", "symbol": s, "when": {"fromHigh": {"window": "1h", "below": -5}}} for s in symbols]
json.dump({"version": 2, "defaults": {"notify": ["journal"]}, "rules": rules}, open("rules-v2.json", "w"))
PY
sizes() { # sizes LABEL
    python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect("st/pricealert.sqlite")
state = db.execute("SELECT COUNT(*), SUM(LENGTH(snapshot)) FROM symbol_state").fetchone()
history = db.execute("SELECT COUNT(*), COALESCE(SUM(LENGTH(entries)), 0) FROM symbol_history").fetchone()
print("%s: symbol_state %d rows, %d bytes; symbol_history %d rows, %d bytes; together %d bytes"
      % (sys.argv[1], state[0], state[1], history[0], history[1], state[1] + history[1]))
PY
}
"$bin" check --rules rules.json rules-v2.json --ticks day.jsonl --markets "$repo/Samples/btse-markets.json" \
    --state st >/dev/null
sizes "after the day"
: > runs.txt
i=0
while [ "$i" -lt "$runs" ]; do
    python3 "$repo/Benchmarks/Check/timed.py" "run $i" runs.txt "$bin" check --rules rules.json rules-v2.json \
        --ticks "snapshot$i.jsonl" --state st
    i=$((i + 1))
done
sort -n runs.txt | awk '{w[NR]=$1} END {
    printf "wall: min %.1f ms, median %.1f ms, max %.1f ms\n", w[1]/1000, w[int((NR+1)/2)]/1000, w[NR]/1000 }'
sizes "after $runs checks"
