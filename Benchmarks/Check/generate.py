#!/usr/bin/env python3
"""Inputs for Benchmarks/run-check.sh: a rule file of N rules over the 227 symbols of the
bundled BTSE market list, a tick file with a full day of minute prices for every symbol (to fill
the state's minute history), and M snapshot files of one tick per symbol (the cron runs).

usage: generate.py OUT_DIR RULES SNAPSHOTS [SEED]
With PRICEALERT_BENCH_NOW=1 the day ends at the current minute (for a live daemon)."""
import json, random, sys, os, time

out, nrules, nsnap = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
rng = random.Random(seed)
here = os.path.dirname(os.path.abspath(__file__))
markets = json.load(open(os.path.join(here, "..", "..", "Samples", "btse-markets.json")))["data"]
symbols = sorted({m["symbol"].upper() for m in markets})
assert len(symbols) == 227, len(symbols)
start_price = {s: 10 ** rng.uniform(-2, 4) for s in symbols}

rules = []
for i in range(nrules):
    s = symbols[i % len(symbols)]
    p = start_price[s]
    kind = i % 10
    x = round(p * rng.uniform(0.8, 1.2), 6)
    if kind < 2:
        when = {"price": {"above" if kind == 0 else "below": x}}
    elif kind < 4:
        when = {"price": {"crossesAbove" if kind == 2 else "crossesBelow": x}}
    elif kind == 4:
        when = {"price": {"inside": [round(x * 0.99, 6), round(x * 1.01, 6)]}}
    elif kind == 5:
        when = {"price": {"outside": [round(p * 0.7, 6), round(p * 1.3, 6)]}}
    else:
        window = ["5m", "1h", "24h", "1h"][kind - 6]
        op = "above" if i % 2 else "below"
        c = round(rng.uniform(1, 10), 2)
        when = {"change": {"window": window, op: c if op == "above" else -c}}
    rule = {"id": f"r{i}", "symbol": s, "when": when}
    if i % 3 == 0:
        rule["cooldown"] = "15m"
    rules.append(rule)
with open(os.path.join(out, "rules.json"), "w") as f:
    json.dump({"version": 1, "sinks": {"journal": {"type": "file", "path": "alerts.jsonl"}},
               "defaults": {"notify": ["journal"]}, "rules": rules}, f)

# A day of minute prices (random walks), then the snapshots, one minute apart.
t0 = 1_700_000_000_000
if os.environ.get("PRICEALERT_BENCH_NOW"):
    t0 = (int(time.time()) // 60 - 1440) * 60_000
price = dict(start_price)
def step():
    for s in symbols:
        price[s] *= 1 + rng.gauss(0, 0.002)
with open(os.path.join(out, "day.jsonl"), "w") as f:
    for minute in range(1440):
        step()
        for s in symbols:
            f.write(json.dumps({"time": t0 + minute * 60_000, "symbol": s, "price": round(price[s], 8)}) + "\n")
for n in range(nsnap):
    step()
    with open(os.path.join(out, f"snapshot{n}.jsonl"), "w") as f:
        for s in symbols:
            f.write(json.dumps({"time": t0 + (1440 + n) * 60_000, "symbol": s, "price": round(price[s], 8)}) + "\n")
