#!/usr/bin/env python3
"""Generates Samples/ticks.jsonl: a synthetic, seeded two-hour stream (one tick per symbol
every 10 s) around the levels Rules/demo.json watches. It is not market data; it exists so the
README's first command shows alerts offline. Re-run to regenerate the same file."""
import json, random

random.seed(20231114)
start = 1_700_000_000_000  # 2023-11-14T22:13:20Z
symbols = {  # symbol: (start price, volatility per step, carries a 24h figure)
    "BTC": (43000.0, 0.0012, False), "ETH": (2300.0, 0.0015, False), "SOL": (60.0, 0.003, False),
    "BTC-PERP": (43010.0, 0.0012, True), "ETH-PERP": (2301.0, 0.0015, True),
    "BTSE": (1.9, 0.002, True), "CYBER": (5.4, 0.004, True),
}
price = {s: v[0] for s, v in symbols.items()}
change24h = {s: random.uniform(-3, 3) for s in symbols}
with open("ticks.jsonl", "w") as out:
    for step in range(720):
        for s, (_, vol, has24h) in symbols.items():
            move = random.gauss(0, vol)
            price[s] *= 1 + move
            change24h[s] += move * 100
            tick = {"time": start + step * 10_000 + random.randint(0, 900), "symbol": s,
                    "price": round(price[s], 6 if price[s] < 10 else 2)}
            if has24h:
                tick["change24h"] = round(change24h[s], 3)
            out.write(json.dumps(tick) + "\n")
