/// `Rules/demo.json`, built in, so `pricealert demo` works from any folder (a test keeps the
/// two the same).
enum DemoRules {
    static let path = "Rules/demo.json"
    static let text = #"""
{
  "version": 1,
  "defaults": { "cooldown": "5m" },
  "rules": [
    { "id": "demo-btc-above-43200", "symbol": "BTC", "when": { "price": { "above": 43200 } }, "hysteresis": 0.1 },
    { "id": "demo-btc-below-42800", "symbol": "BTC", "when": { "price": { "below": 42800 } }, "hysteresis": 0.1 },
    { "id": "demo-btc-crosses-43000", "symbol": "BTC", "when": { "price": { "crossesAbove": 43000 } } },
    { "id": "demo-eth-leaves-range", "symbol": "ETH", "when": { "price": { "outside": [2280, 2320] } } },
    { "id": "demo-eth-crosses-below-2300", "symbol": "ETH", "when": { "price": { "crossesBelow": 2300 } } },
    { "id": "demo-sol-in-range", "symbol": "SOL", "when": { "price": { "inside": [59.5, 60.5] } }, "repeat": "once" },
    { "id": "demo-sol-up-1pct-5m", "symbol": "SOL", "when": { "change": { "window": "5m", "above": 1 } } },
    { "id": "demo-majors-down-1pct-1m", "symbols": ["BTC", "ETH", "SOL"],
      "when": { "change": { "window": "1m", "below": -1 } } },
    { "id": "demo-usd-spot-up-half-pct-5m", "match": { "future": false, "quote": "USD" },
      "when": { "change": { "window": "5m", "above": 0.5 } } },
    { "id": "demo-futures-move-24h", "match": { "future": true },
      "when": { "change": { "window": "24h", "below": -2 } } }
  ]
}
"""#
}
