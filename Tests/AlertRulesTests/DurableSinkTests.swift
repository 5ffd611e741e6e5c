import AlertModel
import Testing

@testable import AlertRules

/// Which sinks go through the durable outbox is decided by the rule files' sink kinds, in the
/// library, for every command alike.
@Suite struct DurableSinkTests {
    @Test func webhookAndExecSinksAreDurableStdoutAndFileAreNot() throws {
        let rules = try #require(
            ruleSet([
                (
                    "r.json",
                    """
                    {"version": 2,
                     "sinks": {"hook": {"type": "webhook", "url": "https://hooks.example.com/x"},
                               "page": {"type": "exec", "command": ["/bin/true"]},
                               "log": {"type": "file", "path": "alerts.jsonl"},
                               "out": {"type": "stdout", "format": "json"}},
                     "rules": [{"id": "a", "symbol": "BTC", "when": {"price": {"above": 1}},
                                "notify": ["hook", "page", "log", "out", "stdout"]}]}
                    """
                )
            ]))
        #expect(rules.durableSinks(among: ["hook", "page", "log", "out", "stdout"]) == ["hook", "page"])
        // Only the names asked about, and a name no file defines is not durable.
        #expect(rules.durableSinks(among: ["log", "page", "missing"]) == ["page"])
        #expect(rules.sinks.values.filter(\.kind.isDurable).map(\.name).sorted() == ["hook", "page"])
    }
}
