#!/bin/sh
# One `pricealert check` as cron runs it, with 227 markets and N rules (default 10 000), against a
# state folder that already holds a full day of minute history for every symbol. Reports wall
# time and peak RSS (GNU time) of each of M consecutive runs, and of one more after the rule file
# was touched (its rules cache misses: the file is checked in full). See Docs/performance.md.
#   [PRICEALERT_BIN=path/to/pricealert] Benchmarks/run-check.sh [RULES] [RUNS]
set -e
rules=${1:-10000}
runs=${2:-10}
. "$(dirname "$0")/Check/prepare.sh"
prepare "$rules" "$((runs + 1))"
echo "rules=$rules symbols=227 history=1440 min; each run: one tick per symbol, state saved"
i=0
while [ "$i" -lt "$runs" ]; do
    /usr/bin/time -f "run $i: wall %e s, peak RSS %M KiB" \
        "$bin" check --rules rules.json --ticks "snapshot$i.jsonl" --state st >/dev/null
    i=$((i + 1))
done
# An edited rule file (one more space: other bytes, same rules) misses the rules cache.
printf ' ' >> rules.json
/usr/bin/time -f "after an edit: wall %e s, peak RSS %M KiB" \
    "$bin" check --rules rules.json --ticks "snapshot$runs.jsonl" --state st >/dev/null
