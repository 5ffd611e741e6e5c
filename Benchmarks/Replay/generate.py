#!/usr/bin/env python3
"""Inputs for Benchmarks/Replay/compare.py: a rule file of N rules over the 227 symbols of the
bundled BTSE market list and a tick file of T ticks (random walks, ±0.05 % a tick, one tick
every 10 ms of stream time, symbols in turn). The rules are made to fire: 40 % crossings and
20 % bands whose levels sit within ±10 % of the symbol's start price (each fires every time
the walk passes it), 20 % `above`/`below` levels with hysteresis, 20 % `change` over 5 min and
1 h; a quarter carry a one-minute cooldown. With the defaults (100 000 rules, 1 000 000 ticks)
they fire about 250 000 alerts.

usage: generate.py OUT_DIR [RULES] [TICKS] [SEED]"""
import json, os, random, sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
nrules = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
nticks = int(sys.argv[3]) if len(sys.argv) > 3 else 1_000_000
seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
rng = random.Random(seed)
here = os.path.dirname(os.path.abspath(__file__))
markets = json.load(open(os.path.join(here, "..", "..", "Samples", "btse-markets.json")))["data"]
symbols = sorted({m["symbol"].upper() for m in markets})
start_price = {s: 10 ** rng.uniform(-2, 4) for s in symbols}
SPREAD = float(os.environ.get("SPREAD", "0.1"))

rules = []
for i in range(nrules):
    s = symbols[rng.randrange(len(symbols))]
    p = start_price[s]
    x = round(p * (1 + rng.uniform(-SPREAD, SPREAD)), 8)
    kind = i % 10
    if kind < 4:
        when = {"price": {"crossesAbove" if kind % 2 == 0 else "crossesBelow": x}}
    elif kind < 6:
        when = {"price": {"inside" if kind == 4 else "outside": [round(x * 0.998, 8), round(x * 1.002, 8)]}}
    elif kind < 8:
        when = {"price": {"above" if kind == 6 else "below": x}}
    else:
        c = round(rng.uniform(1, 4), 2)
        when = {"change": {"window": "5m" if kind == 8 else "1h", "above" if i % 2 else "below": c if i % 2 else -c}}
    rule = {"id": f"rule-{i}", "symbol": s, "when": when}
    if kind in (6, 7):
        rule["hysteresis"] = 0.1
    if i % 4 == 0:
        rule["cooldown"] = "1m"
    rules.append(rule)
with open(os.path.join(out, "rules.json"), "w") as f:
    json.dump({"version": 1, "rules": rules}, f)

t0 = 1_700_000_000_000
price = [start_price[s] for s in symbols]
with open(os.path.join(out, "ticks.jsonl"), "w") as f:
    lines = []
    for n in range(nticks):
        k = n % len(symbols)
        price[k] *= 1 + rng.uniform(-0.0005, 0.0005)
        lines.append('{"time":%d,"symbol":"%s","price":%s}\n' % (t0 + n * 10, symbols[k], repr(round(price[k], 8))))
        if len(lines) == 10_000:
            f.writelines(lines)
            lines.clear()
    f.writelines(lines)
