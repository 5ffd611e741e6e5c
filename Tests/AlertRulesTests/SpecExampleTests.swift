import AlertModel
import Testing

@testable import AlertRules

/// The example file of Docs/rules.md#file-structure, verbatim, loads into these values.
@Suite struct SpecExampleTests {
    static let text = """
        {
          "version": 1,
          "defaults": { "notify": ["console"], "cooldown": "10m" },
          "sinks": {
            "console": { "type": "stdout", "format": "text" },
            "journal": { "type": "file", "path": "alerts.jsonl" },
            "ops":     { "type": "webhook", "url": "https://hooks.example.com/x", "secretEnv": "OPS_HOOK_SECRET" },
            "pager":   { "type": "exec", "command": ["/usr/local/bin/page-oncall", "--team", "markets"] }
          },
          "rules": [
            { "id": "btc-100k", "symbol": "BTC", "when": { "price": { "crossesAbove": 100000 } }, "notify": ["ops"] },
            { "id": "eth-dump", "symbol": "ETH", "when": { "change": { "window": "24h", "below": -5 } }, "hysteresis": 1 },
            { "id": "spot-pump", "match": { "future": false, "quote": "USD" },
              "when": { "change": { "window": "1h", "above": 8 } }, "cooldown": "1h" }
          ]
        }
        """

    @Test func loadsIntoTheExpectedRules() throws {
        let set = try #require(ruleSet([("spec.json", Self.text)]))
        #expect(
            set.rules == [
                Rule(
                    id: "btc-100k", scope: .symbols(["BTC"]), condition: .price(.crossesAbove(100_000)),
                    notify: ["ops"], cooldown: 600_000),
                Rule(
                    id: "eth-dump", scope: .symbols(["ETH"]), condition: .change(window: 86_400_000, .below(-5)),
                    notify: ["console"], cooldown: 600_000, hysteresis: 1),
                Rule(
                    id: "spot-pump", scope: .match(MarketFilter(future: false, quote: "USD")),
                    condition: .change(window: 3_600_000, .above(8)), notify: ["console"], cooldown: 3_600_000)
            ])
        #expect(set.sinks.keys.sorted() == ["console", "journal", "ops", "pager", "stdout"])
        #expect(
            set.sinks["ops"]?.kind
                == .webhook(
                    WebhookSpec(
                        url: .inline("https://hooks.example.com/x"),
                        secret: .environment("OPS_HOOK_SECRET"))))
    }
}
