#!/bin/sh
# One `pricealert check` as cron runs it, with 227 markets and N rules (default 10 000), against a
# state folder that already holds a full day of minute history for every symbol. Reports wall
# time, CPU time and peak RSS of each of M consecutive runs (Check/timed.py), and of one more
# after the rule file was touched (its rules cache misses: the file is checked in full).
# See Docs/performance.md.
#   [PRICEALERT_BIN=path/to/pricealert] Benchmarks/run-check.sh [RULES] [RUNS]
set -e
rules=${1:-10000}
runs=${2:-10}
. "$(dirname "$0")/Check/prepare.sh"
prepare "$rules" "$((runs + 1))"
echo "rules=$rules symbols=227 history=1440 min; each run: one tick per symbol, state saved"
# Wall time from fork to reaping, CPU time and peak RSS of each run: Check/timed.py.
timed() { # timed LABEL ARGS...
    label=$1; shift
    python3 "$repo/Benchmarks/Check/timed.py" "$label" runs.txt "$bin" "$@"
}
: > runs.txt
i=0
while [ "$i" -lt "$runs" ]; do
    timed "run $i" check --rules rules.json --ticks "snapshot$i.jsonl" --state st
    i=$((i + 1))
done
sort -n runs.txt | awk '{w[NR]=$1; if ($2 > m) m = $2} END {
    printf "wall: min %.1f ms, median %.1f ms, max %.1f ms; peak RSS max %d KiB\n", w[1]/1000, w[int((NR+1)/2)]/1000, w[NR]/1000, m }'
# An edited rule file (one more space: other bytes, same rules) misses the rules cache.
printf ' ' >> rules.json
timed "after an edit" check --rules rules.json --ticks "snapshot$runs.jsonl" --state st
