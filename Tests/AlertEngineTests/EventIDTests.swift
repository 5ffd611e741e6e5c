import AlertRules
import AlertSinks
import Testing

@testable import AlertEngine
@testable import AlertModel

/// Every event id unique (rules-v3 §6, for every version): a pair's later event in the same
/// millisecond gets `:2`, `:3`, …, counted across restarts so the ids stay stable.
@Suite("event ids")
struct EventIDTests {
    static let t: Int64 = 1_700_000_000_000

    /// A version 2 rule with `resolve` (the plain evaluator) and a version 1 rule (the indexed
    /// engine), both on BTC above 100, cooldown 0.
    static func rules() throws -> (rules: [Rule], portfolios: [Portfolio]) {
        let v2 =
            #"{"version": 2, "rules": [{"id": "r2", "symbol": "BTC", "when": {"price": {"above": 100}}, "resolve": true}]}"#
        let v1 = #"{"version": 1, "rules": [{"id": "r1", "symbol": "BTC", "when": {"price": {"above": 100}}}]}"#
        let loaded = try RuleLoader.load([
            RuleSource(path: "v1.json", bytes: Array(v1.utf8)),
            RuleSource(path: "v2.json", bytes: Array(v2.utf8))
        ]).get()
        return (loaded.rules, loaded.portfolios)
    }

    static let prices: [Double] = [101, 99, 101, 99, 101]

    static let expected = [
        "r1:BTC:\(t)", "r2:BTC:\(t)",
        "r2:BTC:\(t):resolved",
        "r1:BTC:\(t):2", "r2:BTC:\(t):2",
        "r2:BTC:\(t):resolved:2",
        "r1:BTC:\(t):3", "r2:BTC:\(t):3"
    ]

    @Test func alertResolvedAlertInOneMillisecondHaveThreeIDs() throws {
        let (rules, portfolios) = try Self.rules()
        let engine = Engine(rules: rules, portfolios: portfolios)
        var alerts: [Alert] = []
        for p in Self.prices { engine.process(Tick(time: Self.t, symbol: "BTC", price: p), into: &alerts) }
        #expect(alerts.map(\.id) == Self.expected)
        #expect(Set(alerts.map(\.id)).count == alerts.count)
        // The JSON every sink gets carries the same id.
        for alert in alerts {
            var json: [UInt8] = []
            AlertFormat.appendJSON(alert, to: &json)
            #expect(String(decoding: json, as: UTF8.self).hasPrefix(#"{"id":"\#(alert.id)","#))
        }
    }

    /// A restart after every tick (the state saved, encoded, decoded, restored into a new
    /// engine), as `check` over pieces of one millisecond does: the same ids.
    @Test func idsStayTheSameAcrossRestarts() throws {
        let (rules, portfolios) = try Self.rules()
        var saved: [String: SymbolSnapshot] = [:]
        var ids: [String] = []
        for p in Self.prices {
            let engine = Engine(rules: rules, portfolios: portfolios)
            engine.restore(saved.values.map { try! SymbolSnapshot(decoding: $0.encoded()) })
            var alerts: [Alert] = []
            engine.process(Tick(time: Self.t, symbol: "BTC", price: p), into: &alerts)
            ids += alerts.map(\.id)
            for snapshot in engine.takeFinalChanges() { saved[snapshot.symbol] = snapshot }
        }
        #expect(ids == Self.expected)
    }

    /// A later millisecond starts the count over; an event rebuilt from its stored id keeps it.
    @Test func aLaterMillisecondStartsOverAndStoredIDsAreKept() throws {
        let (rules, portfolios) = try Self.rules()
        let engine = Engine(rules: rules, portfolios: portfolios)
        var alerts: [Alert] = []
        for p in Self.prices { engine.process(Tick(time: Self.t, symbol: "BTC", price: p), into: &alerts) }
        alerts.removeAll()
        engine.process(Tick(time: Self.t + 1, symbol: "BTC", price: 99), into: &alerts)
        engine.process(Tick(time: Self.t + 1, symbol: "BTC", price: 101), into: &alerts)
        #expect(alerts.map(\.id) == ["r2:BTC:\(Self.t + 1):resolved", "r1:BTC:\(Self.t + 1)", "r2:BTC:\(Self.t + 1)"])
        var rebuilt = Alert(
            rule: "r2", symbol: "BTC", time: Self.t, price: 1, condition: "", threshold: .none,
            value: 1, message: "", notify: [], kind: .resolved)
        rebuilt.adoptOccurrence(fromID: "r2:BTC:\(Self.t):resolved:2")
        #expect(rebuilt.id == "r2:BTC:\(Self.t):resolved:2")
        rebuilt.adoptOccurrence(fromID: "other:BTC:\(Self.t):resolved:7")
        #expect(rebuilt.occurrence == 2)
    }
}
