import AlertRules
import AlertSinks
import AlertTestSupport
import Testing

@testable import AlertEngine
@testable import AlertModel

/// History seeded behind live ticks into version 2 hour buckets (Docs/rules.md, "Seeded history
/// after live ticks"): the engine's events equal the reference's, which keeps every tick in
/// time order.
@Suite("engine v2 seeded after live ticks")
struct EngineSeededAfterLiveTests {
    static let hour: Int64 = 3_600_000
    /// The start of a UTC hour.
    static let start: Int64 = 472_223 * hour

    static let file = #"""
        {"version": 2, "rules": [
          {"id": "up", "symbol": "AAA", "when": {"change": {"window": "36h", "above": 20}}},
          {"id": "down", "symbol": "AAA", "when": {"change": {"window": "36h", "below": -20}}},
          {"id": "off-high", "symbol": "AAA", "when": {"fromHigh": {"window": "36h", "below": -20}}},
          {"id": "off-low", "symbol": "AAA", "when": {"fromLow": {"window": "36h", "above": 50}}}
        ]}
        """#

    /// Live ticks every 10 minutes over `[from, to)`, a price that steps by the hour.
    static func live(from: Int64, to: Int64) -> [Tick] {
        stride(from: from, to: to, by: 600_000).map { t in
            Tick(time: t, symbol: "AAA", price: 100 + Double((t / hour) % 3))
        }
    }

    @Test("hour candles and ticks seeded after live ticks: the buckets' last prices follow time")
    func seededAfterLiveTicksMatchReference() throws {
        let reference = try ReferenceEngineV2(files: [Self.file])
        let loaded = try RuleLoader.load([RuleSource(path: "r.json", bytes: Array(Self.file.utf8))]).get()
        let engine = Engine(rules: loaded.rules, portfolios: loaded.portfolios)
        var ours: [RefEvent] = []
        var theirs: [RefEvent] = []
        func process(_ ticks: [Tick]) {
            let more = events(of: engine, and: reference, over: ticks)
            ours += more.ours
            theirs += more.theirs
        }
        process(Self.live(from: Self.start, to: Self.start + 12 * Self.hour))
        // A reload's backfill: 40 hour candles that end where the live ticks begin, whose lows
        // and highs lie far from their closes, then ticks older than the live ones in the
        // first live hour (a bucket that has a live price).
        for h in Int64(1)...40 {
            let s = Self.start - h * Self.hour
            let candle = Candle(start: s, end: s + Self.hour, open: 100, high: 150, low: 50, close: 100)
            reference.seed(
                symbol: "AAA", start: candle.start, end: candle.end, high: candle.high, low: candle.low,
                close: candle.close)
            for tick in candle.seededTicks(symbol: "AAA") { #expect(engine.seed(tick) == nil) }
        }
        for (minutes, price) in [(5, 40.0), (15, 160.0), (25, 70.0)] {
            let tick = Tick(time: Self.start + Int64(minutes) * 60_000, symbol: "AAA", price: price)
            reference.seed(tick)
            #expect(engine.seed(tick) == nil)
        }
        process(Self.live(from: Self.start + 12 * Self.hour, to: Self.start + 40 * Self.hour))

        #expect(
            Set(theirs.map(\.rule)) == ["off-high", "off-low"], "the scenario's highs and lows fire, its changes do not"
        )
        #expect(ours == theirs, "\(firstDifference(ours, theirs) ?? "")")
    }
}
