#!/usr/bin/env python3
"""Compares replay-benchmark binaries at the sizes of Benchmarks/run-replay.sh (100, 100 000 and
1 000 000 rules, mixes dense and dormant), their runs interleaved (A B A B ...) on one core
(`taskset -c 0`) so that a machine whose speed drifts treats them alike. Each run is the best of
its 3 replays; prints every run with the load average, then per mix, size and binary the median
and the best of the runs (ticks/s and ns/tick) and the ratio of each binary to the first.

usage: Benchmarks/compare-replay.py ROUNDS LABEL=BINARY [LABEL=BINARY ...]
       (SIZES="100 100000" narrows the sizes; extra replay-benchmark arguments in ARGS)"""
import os, re, statistics, subprocess, sys

if len(sys.argv) < 4:
    sys.exit(__doc__)
rounds = int(sys.argv[1])
pairs = [argument.split("=", 1) for argument in sys.argv[2:]]
sizes = os.environ.get("SIZES", "100 100000 1000000").split()
extra = os.environ.get("ARGS", "").split()
rates = {}
loads = []
for n in range(rounds):
    for mix in ("dense", "dormant"):
        for size in sizes:
            for label, binary in pairs:
                load = float(open("/proc/loadavg").read().split()[0])
                loads.append(load)
                out = subprocess.run(["taskset", "-c", "0", binary, "--rules", size, "--mix", mix] + extra,
                                     check=True, capture_output=True, text=True).stdout.strip()
                print(f"round={n + 1} build={label} load={load} {out}", flush=True)
                fields = dict(re.findall(r"(\S+)=(\S+)", out))
                rates.setdefault((mix, size), {}).setdefault(label, []).append(int(fields["ticks/s"]))
print(f"load average at the runs: {min(loads)}-{max(loads)}, median {statistics.median(loads)}")
first = pairs[0][0]
for (mix, size), by in rates.items():
    line = f"{mix:8} {size:>8}"
    for label, _ in pairs:
        median, best = statistics.median(by[label]), max(by[label])
        line += f"  {label}: median {median / 1e6:.2f} M/s ({1e9 / median:.0f} ns), best {best / 1e6:.2f} M/s ({1e9 / best:.0f} ns)"
        if label != first:
            line += f" = {median / statistics.median(by[first]):.2f}x / {best / max(by[first]):.2f}x"
    print(line)
