import AlertTestSupport
import SeededRandom
import Testing

@testable import AlertEngine
@testable import AlertModel

/// Docs/rules.md#change-windows and the change rows of the table in Docs/rules.md#conditions.
@Suite("Change conditions")
struct EngineChangeTests {
    /// Alerts' (time, value) for one symbol.
    func fired(_ rules: [Rule], _ ticks: [Tick]) -> [(Int64, Double)] {
        let engine = Engine(rules: rules)
        var alerts: [Alert] = []
        for tick in ticks { engine.process(tick, into: &alerts) }
        return alerts.map { ($0.time, $0.value) }
    }

    func tick(_ time: Int64, _ price: Double, change24h: Double? = nil) -> Tick {
        Tick(time: time, symbol: "BTC", price: price, change24h: change24h)
    }

    @Test func windowNotCoveredMeansUnknownNeitherFiresNorRearms() {
        let r = rule(.change(window: 5 * minute, .above(1)))
        // The first tick is at 0; at 4 min 59 s the window is not covered even though +100 %.
        let result = fired([r], [tick(0, 100), tick(5 * minute - 1000, 200)])
        #expect(result.isEmpty)
    }

    @Test func windowCoveredWhenFirstTickIsExactlyAtTMinusW() {
        let r = rule(.change(window: 5 * minute, .above(1)))
        let result = fired([r], [tick(0, 100), tick(5 * minute, 110)])
        #expect(result.map(\.0) == [5 * minute])
        let expected: Double = (110.0 - 100) / 100 * 100
        #expect(result.map(\.1) == [expected])
    }

    @Test func baseIsLastPriceBeforeTheEndOfTheMinuteContainingTMinusW() {
        // W = 2 min, t = 10:30 → t − W = 8:30, minute [8:00, 9:00): base is the last price
        // before 9:00, i.e. the tick at 8:59 (not 8:20, and not 9:00 itself).
        // "down" holds only at 10:30 (c is 400, 300 and 3900 before), so it fires there once.
        let r = rule(.change(window: 2 * minute, .below(-100)), symbols: ["BTC"])
        let engine = Engine(rules: [r, rule("down", .change(window: 2 * minute, .below(150)))])
        var alerts: [Alert] = []
        for (t, p) in [(Int64(0), 10.0), (8 * minute + 20_000, 50), (8 * minute + 59_000, 40), (9 * minute, 400)] {
            engine.process(tick(t, p), into: &alerts)
        }
        alerts.removeAll()
        engine.process(tick(10 * minute + 30_000, 80), into: &alerts)
        #expect(alerts.map(\.rule) == ["down"])
        // Base 40 gives 100; base 50 (8:20) would give 60, base 400 (9:00) −80.
        #expect(alerts.map(\.value) == [100])
    }

    /// History filled after live ticks (`run` after a SIGHUP that adds a longer window): the
    /// seeded minutes older than the live ones become the window's bases; a minute that has a
    /// live price keeps it.
    @Test func historySeededAfterLiveTicksFillsTheMinutesBeforeThem() {
        /// Minute candles `[i, i + 1)` with close 50 + i / 10, oldest first, each seeded as
        /// (start, low), (start, high), (end − 1 ms, close).
        func seedCandles(_ minutes: ClosedRange<Int>, into engine: Engine) {
            for i in minutes {
                let start = Int64(i) * minute, close = 50 + Double(i) / 10
                for (t, p) in [(start, close - 5), (start, close + 5), (start + minute - 1, close)] {
                    engine.seed(tick(t, p))
                }
            }
        }
        var alerts: [Alert] = []
        let filled = Engine(rules: [rule(.change(window: 60 * minute, .above(-100)))])
        filled.process(tick(120 * minute, 100), into: &alerts)
        seedCandles(0...119, into: filled)
        // t − W in minute 90: its base is the candle's close, 59.
        filled.process(tick(150 * minute, 118), into: &alerts)
        #expect(alerts.map(\.value) == [100])

        alerts.removeAll()
        let kept = Engine(rules: [rule(.change(window: 60 * minute, .above(-100)))])
        kept.process(tick(120 * minute, 100), into: &alerts)
        kept.process(tick(121 * minute, 101), into: &alerts)
        #expect(alerts.isEmpty, "an hour is not covered by two minutes")
        seedCandles(0...120, into: kept)
        // t − W in minute 120: its base is the live 100, not the candle's close 62.
        kept.process(tick(180 * minute + 30_000, 200), into: &alerts)
        #expect(alerts.map(\.value) == [100])
    }

    @Test func changeAboveRearmsAtOrBelowCMinusHInPoints() {
        // W = 1 min, base chain: each minute's value relative to the previous minute's last price.
        // above 5 with h = 2: fires at +10 %, +4 % does not re-arm (> 3), +2.5 % re-arms, +6 % fires.
        let r = rule(.change(window: minute, .above(5)), hysteresis: 2)
        var ticks = [tick(0, 100)]
        var price = 100.0
        for (i, pct) in [10.0, 4, 6, 2.5, 6].enumerated() {
            price *= 1 + pct / 100
            ticks.append(tick(Int64(i + 1) * minute, price))
        }
        #expect(fired([r], ticks).map(\.0) == [minute, 5 * minute])
    }

    @Test func changeBelowRearmsAtOrAboveCPlusH() {
        let r = rule(.change(window: minute, .below(-5)), hysteresis: 1)
        var ticks = [tick(0, 100)]
        var price = 100.0
        for (i, pct) in [-6.0, -4.5, -6, -3.5, -7].enumerated() {
            price *= 1 + pct / 100
            ticks.append(tick(Int64(i + 1) * minute, price))
        }
        // −6 fires; −4.5 < −4 no re-arm; −6 silent; −3.5 ≥ −4 re-arms; −7 fires.
        #expect(fired([r], ticks).map(\.0) == [minute, 5 * minute])
    }

    @Test func twentyFourHourWindowUsesTheSourcesOwnFigure() {
        let r = rule(.change(window: 24 * 60 * minute, .below(-5)))
        // No history at all, yet the source's change24h decides.
        let result = fired([r], [tick(0, 100, change24h: -4.9), tick(1000, 100, change24h: -5.2)])
        #expect(result.map(\.0) == [1000])
        #expect(result.map(\.1) == [-5.2])
    }

    @Test func twentyFourHourWindowWithoutFigureUsesHistory() {
        let day = 24 * 60 * minute
        let r = rule(.change(window: day, .above(50)))
        let result = fired([r], [tick(0, 100), tick(day - 1, 300), tick(day, 160)])
        #expect(result.map(\.0) == [day])
        let expected: Double = (160.0 - 100) / 100 * 100
        #expect(result.map(\.1) == [expected])
    }

    @Test func sourceFigureIsOnlyForExactlyTwentyFourHours() {
        let r = rule(.change(window: 23 * 60 * minute, .below(-5)))
        #expect(fired([r], [tick(0, 100, change24h: -50), tick(1000, 100, change24h: -50)]).isEmpty)
    }

    @Test func unknownChangeKeepsTheStateOfTheLastKnownValue() {
        // 24h figure on some ticks only: without it and without history c is unknown, and the
        // pair neither fires nor re-arms.
        let r = rule(.change(window: 24 * 60 * minute, .above(5)))
        let ticks = [
            tick(0, 100, change24h: 6), tick(1, 100), tick(2, 100, change24h: 4), tick(3, 100),
            tick(4, 100, change24h: 7)
        ]
        #expect(fired([r], ticks).map(\.0) == [0, 4])
    }

    @Test(.computation) func historyKeepsEnoughForTheLongestWindowOverLongStreams() {
        // Three days of one tick per 10 s with a 1 h and a 24 h rule: compare with the reference.
        let rules = [
            rule("h", .change(window: 60 * minute, .above(0.5)), cooldown: 30 * minute),
            rule("d", .change(window: 24 * 60 * minute, .below(-1)), cooldown: 60 * minute)
        ]
        let engine = Engine(rules: rules)
        let reference = ReferenceEngine(rules: rules)
        var rng = SeededRandom(seed: 7)
        var price = 1000.0
        var ours: [Alert] = []
        var theirs: [(String, String, Int64, Double, String)] = []
        for i in 0..<(3 * 8640) {
            price *= 1 + Double.random(in: -0.002...0.002, using: &rng)
            let tick = Tick(time: Int64(i) * 10_000, symbol: "BTC", price: price)
            engine.process(tick, into: &ours)
            theirs += reference.process(tick)
        }
        #expect(!ours.isEmpty)
        #expect(ours.map { "\($0.rule) \($0.time) \($0.value)" } == theirs.map { "\($0.0) \($0.2) \($0.3)" })
    }
}
