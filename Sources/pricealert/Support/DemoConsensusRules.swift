/// `Rules/demo-consensus.json`, built in beside `DemoRules`: three sources (pointed by `demo`
/// at the embedded exchange's look-alikes), a median series over their BTC market, a rule on the
/// series and one on the exchange the demo gives a wick (a test keeps the two the same).
enum DemoConsensusRules {
    static let path = "Rules/demo-consensus.json"
    static let text = #"""
        {
          "version": 3,
          "sources": {
            "demo-binance": { "type": "binance" },
            "demo-bybit": { "type": "bybit" },
            "demo-okx": { "type": "okx" }
          },
          "series": {
            "demo-btc-consensus": {
              "median": ["demo-binance:BTC/USDT", "demo-bybit:BTC/USDT", "demo-okx:BTC/USDT"], "maxAge": "30s", "quorum": 2
            }
          },
          "rules": [
            { "id": "demo-okx-btc-above-46000", "symbol": "demo-okx:BTC/USDT", "when": { "price": { "above": 46000 } } },
            { "id": "demo-consensus-btc-above-46000", "series": "demo-btc-consensus", "when": { "price": { "above": 46000 } } }
          ]
        }
        """#
}
