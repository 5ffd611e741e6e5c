/// `Rules/demo.json`, built in, so `pricealert demo` works from any folder (a test keeps the
/// two the same).
enum DemoRules {
    static let path = "Rules/demo.json"
    static let text = #"""
        {
          "version": 1,
          "defaults": { "cooldown": "5m" },
          "rules": [
            { "id": "demo-btc-below-42980", "symbol": "BTC", "when": { "price": { "below": 42980 } }, "hysteresis": 0.1 },
            { "id": "demo-btc-crosses-above-42990", "symbol": "BTC", "when": { "price": { "crossesAbove": 42990 } } },
            { "id": "demo-btc-crosses-below-42970", "symbol": "BTC", "when": { "price": { "crossesBelow": 42970 } } },
            { "id": "demo-eth-leaves-2297-2303", "symbol": "ETH", "when": { "price": { "outside": [2297, 2303] } } },
            { "id": "demo-eth-crosses-above-2299", "symbol": "ETH", "when": { "price": { "crossesAbove": 2299 } } },
            { "id": "demo-sol-in-60.10-60.20", "symbol": "SOL", "when": { "price": { "inside": [60.10, 60.20] } }, "repeat": "once" },
            { "id": "demo-sol-above-60.15", "symbol": "SOL", "when": { "price": { "above": 60.15 } }, "hysteresis": 0.1 },
            { "id": "demo-sol-crosses-below-60.035", "symbol": "SOL", "when": { "price": { "crossesBelow": 60.035 } } },
            { "id": "demo-sol-up-0.6pct-5m", "symbol": "SOL", "when": { "change": { "window": "5m", "above": 0.6 } } },
            { "id": "demo-btc-up-8pct-7d", "symbol": "BTC", "when": { "change": { "window": "7d", "above": 8 } } },
            { "id": "demo-majors-down-0.1pct-5m", "symbols": ["BTC", "ETH", "SOL"],
              "when": { "change": { "window": "5m", "below": -0.1 } } },
            { "id": "demo-usd-spot-up-1.2pct-5m", "match": { "future": false, "quote": "USD" },
              "when": { "change": { "window": "5m", "above": 1.2 } } }
          ]
        }
        """#
}
