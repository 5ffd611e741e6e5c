import AlertModel
import AlertTestSupport
import SeededRandom
import Testing

// Hand-worked examples for the v1+v2 reference engine. Every expected event is computed in
// the comment above it from the rules' text; none was produced by running the reference.

/// 2023-11-14T22:00:00Z, the start of a UTC hour.
private let h0: Int64 = 1_699_999_200_000
private let sec: Int64 = 1000
private let hour: Int64 = 3_600_000

private func file(_ version: Int, _ rules: String, extra: String = "") -> String {
    #"{"version": \#(version), \#(extra) "rules": [\#(rules)]}"#
}

/// Live ticks `(time, symbol, price)` through `engine`, all events in order.
private func run(_ engine: ReferenceEngineV2, _ ticks: [(Int64, String, Double)]) -> [RefEvent] {
    ticks.flatMap { engine.process(Tick(time: $0.0, symbol: $0.1, price: $0.2)) }
}

private func alert(
    _ rule: String, _ symbol: String, _ t: Int64, _ price: Double, value: Double? = nil,
    _ threshold: RefEvent.Threshold
) -> RefEvent {
    RefEvent(.alert, rule, symbol, t, price: price, value: value ?? price, threshold: threshold)
}

@Suite("reference engine v2, worked by hand")
struct ReferenceV2Tests {
    /// One `change 48h above 10` rule in a v1 file and the same in a v2 file, given together.
    /// Ticks X: h0+10m 100, h0+40m 200, h0+48h+30m 300; t − W = h0+30m; the first tick
    /// (h0+10m) is before it, so the window is covered.
    /// - v1, minute buckets: boundary = floor((h0+30m)/1m)+1 → h0+31m; base = last before it
    ///   = 100; c = (300 − 100)/100 × 100 = 200.
    /// - v2, hour buckets: boundary = (floor((h0+30m)/1h)+1) h → h0+1h; base = 200 (h0+40m);
    ///   c = (300 − 200)/200 × 100 = 50.
    /// Files in the order given: the v1 rule's event first.
    @Test func versionOneFileKeepsMinuteBucketsBesideVersionTwo() throws {
        let rule = #""symbol": "X", "when": {"change": {"window": "48h", "above": 10}}"#
        let engine = try ReferenceEngineV2(files: [
            file(1, #"{"id": "v1", \#(rule)}"#), file(2, #"{"id": "v2", \#(rule)}"#)
        ])
        let t = h0 + 48 * hour + 30 * minute
        #expect(
            run(engine, [(h0 + 10 * minute, "X", 100), (h0 + 40 * minute, "X", 200), (t, "x", 300)]) == [
                alert("v1", "X", t, 300, value: 200, .number(10)),
                alert("v2", "X", t, 300, value: 50, .number(10))
            ])
    }

    /// `all(price above 100, change 1m above 5)`, value = p, threshold null.
    /// - h0 100: price 100 > 100 false; change unknown (first tick h0 > h0 − 1m). Nothing.
    /// - h0+1m 106: base = last before h0+1m = 100 → c = 6 > 5; 106 > 100 → alert.
    /// - h0+2m 104: base = 106 → c = −1.89; `all` re-arms when some member re-arms: change
    ///   r = c ≤ 5 → re-armed, no event.
    /// - h0+3m 110: base = 104 → c = 5.77 > 5; 110 > 100 → alert.
    /// `any(price below 90, price above 120)`: 100 nothing; 125 alert; 110 re-arms (both
    /// members re-arm: 110 ≥ 90 and 110 ≤ 120); 85 alert; 95 re-arms; 89 alert.
    @Test func allAndAny() throws {
        let engine = try ReferenceEngineV2(files: [
            file(
                2,
                #"""
                {"id": "both", "symbol": "A", "when": {"all": [{"price": {"above": 100}}, {"change": {"window": "1m", "above": 5}}]}},
                {"id": "either", "symbol": "B", "when": {"any": [{"price": {"below": 90}}, {"price": {"above": 120}}]}}
                """#)
        ])
        #expect(
            run(
                engine,
                [(h0, "A", 100), (h0 + minute, "A", 106), (h0 + 2 * minute, "A", 104), (h0 + 3 * minute, "A", 110)])
                == [
                    alert("both", "A", h0 + minute, 106, .none),
                    alert("both", "A", h0 + 3 * minute, 110, .none)
                ])
        #expect(
            run(
                engine,
                [
                    (h0, "B", 100), (h0 + 1, "B", 125), (h0 + 2, "B", 110), (h0 + 3, "B", 85), (h0 + 4, "B", 95),
                    (h0 + 5, "B", 89)
                ]) == [
                    alert("either", "B", h0 + 1, 125, .none),
                    alert("either", "B", h0 + 3, 85, .none),
                    alert("either", "B", h0 + 5, 89, .none)
                ])
    }

    /// Nested three levels: `any(all(price above 10, any(price below 20, price above 30)), price above 100)`.
    /// 15: all(15 > 10, any(15 < 20)) → fires. 25: re-arm needs every member of the outer `any`
    /// to re-arm: `all` re-arms when one member does: any(25 ≥ 20, 25 ≤ 30) re-arms → yes;
    /// price above 100 re-arms at 25 ≤ 100 → re-armed. 35: fires (35 > 30).
    @Test func nestedThreeLevels() throws {
        let engine = try ReferenceEngineV2(files: [
            file(
                2,
                #"""
                {"id": "deep", "symbol": "A", "when": {"any": [
                  {"all": [{"price": {"above": 10}}, {"any": [{"price": {"below": 20}}, {"price": {"above": 30}}]}]},
                  {"price": {"above": 100}}]}}
                """#)
        ])
        #expect(
            run(engine, [(h0, "A", 15), (h0 + 1, "A", 25), (h0 + 2, "A", 35)]) == [
                alert("deep", "A", h0, 15, .none),
                alert("deep", "A", h0 + 2, 35, .none)
            ])
    }

    /// `change 5m below -10`: at h0+1m the price halved (c would be −50), but the window needs
    /// a first tick at or before h0+1m − 5m: unknown, no alert; `all(price below 60, change…)`
    /// is false too (unknown counts as false), while `any(price below 60, change…)` fires on
    /// its price member. At h0+5m: covered (first tick h0 ≤ h0); boundary h0+1m, base 100,
    /// c = (50 − 100)/100 × 100 = −50 → the change rule and the `all` fire.
    @Test func unknownWhileNotCovered() throws {
        let change = #"{"change": {"window": "5m", "below": -10}}"#
        let engine = try ReferenceEngineV2(files: [
            file(
                2,
                #"""
                {"id": "drop", "symbol": "A", "when": \#(change)},
                {"id": "all", "symbol": "A", "when": {"all": [{"price": {"below": 60}}, \#(change)]}},
                {"id": "any", "symbol": "A", "when": {"any": [{"price": {"below": 60}}, \#(change)]}}
                """#)
        ])
        #expect(
            run(engine, [(h0, "A", 100), (h0 + minute, "A", 50), (h0 + 5 * minute, "A", 50)]) == [
                alert("any", "A", h0 + minute, 50, .none),
                alert("drop", "A", h0 + 5 * minute, 50, value: -50, .number(-10)),
                alert("all", "A", h0 + 5 * minute, 50, .none)
            ])
    }

    /// `price above 100` with `for: 2m`. since: h0 101 → h0; h0+1m 102 (1m < 2m); h0+90s 99
    /// resets it; h0+2m 103 → since h0+2m; h0+3m 104 (1m); h0+4m 105: 2m ≥ 2m → alert.
    /// h0+5m 99 re-arms; h0+6m 101 starts again (since h0+6m), no alert.
    /// `change 1m above 0` with `for: 1m`: the unknown first minute keeps since at none:
    /// h0 (unknown), h0+1m 101: base 100 → c = 1 → since h0+1m; h0+2m 102: c = 0.99, 1m ≥ 1m → alert.
    @Test func sustainedForResets() throws {
        let engine = try ReferenceEngineV2(files: [
            file(
                2,
                #"""
                {"id": "held", "symbol": "A", "when": {"price": {"above": 100}}, "for": "2m"},
                {"id": "rising", "symbol": "B", "when": {"change": {"window": "1m", "above": 0}}, "for": "1m"}
                """#)
        ])
        #expect(
            run(
                engine,
                [
                    (h0, "A", 101), (h0 + minute, "A", 102), (h0 + 90 * sec, "A", 99), (h0 + 2 * minute, "A", 103),
                    (h0 + 3 * minute, "A", 104), (h0 + 4 * minute, "A", 105), (h0 + 5 * minute, "A", 99),
                    (h0 + 6 * minute, "A", 101)
                ])
                == [alert("held", "A", h0 + 4 * minute, 105, .number(100))])
        let c = (102.0 - 101) / 101 * 100
        #expect(
            run(engine, [(h0, "B", 100), (h0 + minute, "B", 101), (h0 + 2 * minute, "B", 102)])
                == [alert("rising", "B", h0 + 2 * minute, 102, value: c, .number(0))])
    }

    /// A candle [h0, h0+1h) low 90 high 200 close 150 seeds (h0, 90), (h0, 200), (h0+1h−1ms, 150).
    /// Live tick t1 = h0+48h+30m at 170; windows of 48 h use hours; t1 − W = h0+30m, covered
    /// by the seeded h0.
    /// - fromHigh 48h below −10: m0 = h0; H = 200 → d = (170 − 200)/200 × 100 = −15 → alert.
    /// - fromLow 48h above 50: L = 90 → d = 80/90 × 100 = 88.9 → alert.
    /// - change 48h above 10: boundary h0+1h; base = the close 150 (its last price) →
    ///   c = 20/150 × 100 = 13.3 → alert.
    /// - crossesAbove 160: seeded ticks set no prev, so 170 is a first price: no alert; then
    ///   155, and 162 (prev 155 ≤ 160 < 162) → alert. (At 155 `chg` re-arms: c = 5/150 × 100
    ///   = 3.3 ≤ 10; at 162 c = 12/150 × 100 = 8, no alert.)
    /// Without the candle the windows are not covered and only the crossing fires.
    @Test func seededHistoryFillsHighsLowsAndCoverageButNotPrev() throws {
        let rules = file(
            2,
            #"""
            {"id": "high", "symbol": "X", "when": {"fromHigh": {"window": "48h", "below": -10}}},
            {"id": "low", "symbol": "X", "when": {"fromLow": {"window": "48h", "above": 50}}},
            {"id": "chg", "symbol": "X", "when": {"change": {"window": "48h", "above": 10}}},
            {"id": "cross", "symbol": "X", "when": {"price": {"crossesAbove": 160}}}
            """#)
        let t1 = h0 + 48 * hour + 30 * minute
        let live: [(Int64, String, Double)] = [(t1, "X", 170), (t1 + minute, "X", 155), (t1 + 2 * minute, "X", 162)]
        let seeded = try ReferenceEngineV2(files: [rules])
        seeded.seed(symbol: "X", start: h0, end: h0 + hour, high: 200, low: 90, close: 150)
        #expect(
            run(seeded, live) == [
                alert("high", "X", t1, 170, value: -15, .number(-10)),
                alert("low", "X", t1, 170, value: 80.0 / 90 * 100, .number(50)),
                alert("chg", "X", t1, 170, value: 20.0 / 150 * 100, .number(10)),
                alert("cross", "X", t1 + 2 * minute, 162, .number(160))
            ])
        #expect(
            run(try ReferenceEngineV2(files: [rules]), live) == [
                alert("cross", "X", t1 + 2 * minute, 162, .number(160))
            ])
    }

    /// fromHigh over 10m: m0 is the start of the minute of t − W, and this tick counts.
    /// Ticks 100 (h0), 120 (h0+30s), 110 (h0+10m), 108 (h0+10m+40s).
    /// - h0+10m: t − W = h0, m0 = h0; H = 120 → d = (110 − 120)/120 × 100 = −8.33 < −5 → alert.
    /// - h0+10m+40s: m0 = h0 still; pair disarmed; r = d ≥ −5 + 1 = −4? d = −10 → no.
    /// - h0+11m 119: m0 = h0+1m, so 120 (h0+30s) left the window: H = max(110, 108, 119) = 119
    ///   → d = 0 ≥ −4 → re-arm. h0+12m 113: H = 119, d = −5.04 < −5 → alert.
    @Test func fromHighSlidesByMinute() throws {
        let engine = try ReferenceEngineV2(files: [
            file(
                2,
                #"{"id": "dip", "symbol": "A", "when": {"fromHigh": {"window": "10m", "below": -5}}, "hysteresis": 1}"#)
        ])
        let events = run(
            engine,
            [
                (h0, "A", 100), (h0 + 30 * sec, "A", 120), (h0 + 10 * minute, "A", 110),
                (h0 + 10 * minute + 40 * sec, "A", 108), (h0 + 11 * minute, "A", 119), (h0 + 12 * minute, "A", 113)
            ])
        #expect(
            events == [
                alert("dip", "A", h0 + 10 * minute, 110, value: -10.0 / 120 * 100, .number(-5)),
                alert("dip", "A", h0 + 12 * minute, 113, value: -6.0 / 119 * 100, .number(-5))
            ])
    }

    /// `move percent 5`, cooldown 2m. ref = 100 (first tick, no alert).
    /// - h0+1m 104: m = 4. h0+2m 105: m = 5 ≥ 5 → alert (threshold +5), ref 105.
    /// - h0+3m 111: m = 5.71 but 1m < cooldown → nothing, ref stays 105.
    /// - h0+4m 112: 2m ≥ 2m, m = 7/105 × 100 = 6.67 → alert, ref 112.
    /// - h0+5m 106: m = −5.36, cooldown → nothing. h0+6m 107: m = −4.46 → nothing.
    /// - h0+6m30s 106: m = −5.36, 2.5m ≥ 2m → alert, threshold −5.
    @Test func movePercentWithCooldown() throws {
        let engine = try ReferenceEngineV2(files: [
            file(2, #"{"id": "mv", "symbol": "M", "when": {"move": {"percent": 5}}, "cooldown": "2m"}"#)
        ])
        let events = run(
            engine,
            [
                (h0, "M", 100), (h0 + minute, "M", 104), (h0 + 2 * minute, "M", 105), (h0 + 3 * minute, "M", 111),
                (h0 + 4 * minute, "M", 112), (h0 + 5 * minute, "M", 106), (h0 + 6 * minute, "M", 107),
                (h0 + 6 * minute + 30 * sec, "M", 106)
            ])
        #expect(
            events == [
                alert("mv", "M", h0 + 2 * minute, 105, value: 5, .number(5)),
                alert("mv", "M", h0 + 4 * minute, 112, value: 7.0 / 105 * 100, .number(5)),
                alert("mv", "M", h0 + 6 * minute + 30 * sec, 106, value: -6.0 / 112 * 100, .number(-5))
            ])
    }

    /// `move step 10`, hysteresis 10 → g = 10 × 10/100 = 1. First 105: K = 10, no alert.
    /// - 110.5: up needs ≥ (10+1)·10 + 1 = 111 → no. 111 → alert, threshold floor(11.1)·10 = 110; K = 11.
    /// - 109.5: down needs < 11·10 − 1 = 109 → no. 108.9 → alert, threshold (floor(10.89)+1)·10 = 110; K = 10.
    /// - 125: ≥ 111 → alert, threshold 120; K = 12. 87: < 119 → alert, threshold (8+1)·10 = 90; K = 8.
    @Test func moveStepHysteresisThresholdsUpAndDown() throws {
        let engine = try ReferenceEngineV2(files: [
            file(2, #"{"id": "st", "symbol": "S", "when": {"move": {"step": 10}}, "hysteresis": 10}"#)
        ])
        let prices = [105, 110.5, 111, 109.5, 108.9, 125, 87]
        let events = run(engine, prices.enumerated().map { (h0 + Int64($0.offset) * minute, "S", $0.element) })
        #expect(
            events == [
                alert("st", "S", h0 + 2 * minute, 111, .number(110)),
                alert("st", "S", h0 + 4 * minute, 108.9, .number(110)),
                alert("st", "S", h0 + 5 * minute, 125, .number(120)),
                alert("st", "S", h0 + 6 * minute, 87, .number(90))
            ])
    }

    /// `price below 50`, `repeat every 10m`:
    /// h0 49 alert; h0+5m 48 (5m < 10m); h0+10m 47 → reminder 1; h0+15m 51 re-arms;
    /// h0+16m 45 → alert (count back to 0); h0+26m 44 → reminder 1; h0+36m 43 → reminder 2.
    /// Same ticks with cooldown 15m: a reminder waits max(10m, 15m): h0 alert; h0+10m no;
    /// h0+15m re-arm; h0+16m alert (16m ≥ 15m); h0+26m no (10m); h0+36m reminder 1 (20m).
    @Test func remindersCountAndReset() throws {
        let engine = try ReferenceEngineV2(files: [
            file(
                2,
                #"""
                {"id": "low", "symbol": "W", "when": {"price": {"below": 50}}, "repeat": {"every": "10m"}},
                {"id": "slow", "symbol": "W", "when": {"price": {"below": 50}}, "repeat": {"every": "10m"}, "cooldown": "15m"}
                """#)
        ])
        let ticks: [(Int64, String, Double)] = [
            (h0, "W", 49), (h0 + 5 * minute, "W", 48), (h0 + 10 * minute, "W", 47), (h0 + 15 * minute, "W", 51),
            (h0 + 16 * minute, "W", 45), (h0 + 26 * minute, "W", 44), (h0 + 36 * minute, "W", 43)
        ]
        func reminder(_ rule: String, _ t: Int64, _ p: Double, _ n: Int) -> RefEvent {
            RefEvent(.reminder, rule, "W", t, price: p, value: p, threshold: .number(50), reminder: n)
        }
        #expect(
            run(engine, ticks) == [
                alert("low", "W", h0, 49, .number(50)), alert("slow", "W", h0, 49, .number(50)),
                reminder("low", h0 + 10 * minute, 47, 1),
                alert("low", "W", h0 + 16 * minute, 45, .number(50)),
                alert("slow", "W", h0 + 16 * minute, 45, .number(50)),
                reminder("low", h0 + 26 * minute, 44, 1),
                reminder("low", h0 + 36 * minute, 43, 2), reminder("slow", h0 + 36 * minute, 43, 1)
            ])
    }

    /// `price above 100`, hysteresis 1, `resolve`: 101 alert; 100 does not re-arm (needs
    /// ≤ 99); 98 re-arms → resolved (value 98, id …:resolved); 102 alert again.
    /// With `repeat: "once"` nothing re-arms, so no resolved event (rule `once` below is
    /// written without `resolve`: the pair simply never re-arms).
    @Test func resolvedOnRearm() throws {
        let engine = try ReferenceEngineV2(files: [
            file(
                2,
                #"""
                {"id": "up", "symbol": "R", "when": {"price": {"above": 100}}, "hysteresis": 1, "resolve": true},
                {"id": "once", "symbol": "R", "when": {"price": {"above": 100}}, "repeat": "once"}
                """#)
        ])
        let events = run(engine, [(h0, "R", 101), (h0 + 1, "R", 100), (h0 + 2, "R", 98), (h0 + 3, "R", 102)])
        #expect(
            events == [
                alert("up", "R", h0, 101, .number(100)), alert("once", "R", h0, 101, .number(100)),
                RefEvent(.resolved, "up", "R", h0 + 2, price: 98, value: 98, threshold: .number(100)),
                alert("up", "R", h0 + 3, 102, .number(100))
            ])
        #expect(events[2].id == "up:R:\(h0 + 2):resolved")
        #expect(events[3].id == "up:R:\(h0 + 3)")
    }

    /// `expires` h0+5m (22:05:00Z): a tick 1 ms before fires; at exactly h0+5m the rule no
    /// longer applies (it neither re-arms at 99 nor fires for symbol B at 101).
    @Test func expiryBoundary() throws {
        let engine = try ReferenceEngineV2(files: [
            file(
                2,
                #"{"id": "exp", "symbols": ["A", "B"], "when": {"price": {"above": 100}}, "expires": "2023-11-14T22:05:00Z"}"#
            )
        ])
        let end = h0 + 5 * minute
        #expect(
            run(
                engine,
                [(h0 + minute, "A", 99), (end - 1, "A", 101), (end, "A", 99), (end + 1, "A", 101), (end, "B", 101)])
                == [alert("exp", "A", end - 1, 101, .number(100))])
    }

    /// Portfolio main: BTC 0.5, ETH 4, cost 40000. Symbol rules come first in a tick.
    /// - h0 BTC 60000: ETH has no price yet → V undefined, no @MAIN tick (BTC move: ref 60000).
    /// - h0+1m ETH 3000: V = 0.5·60000 + 4·3000 = 42000; pnl = 2000/40000 × 100 = 5.
    /// - h0+2m BTC 70000: BTC move m = 16.7 ≥ 10 → alert; V = 35000 + 12000 = 47000 > 45000 → alert.
    /// - h0+3m ETH 1000: V = 35000 + 4000 = 39000 (re-arms `value`); pnl = −2.5.
    /// - h0+4m BTC 60000: move m = −14.3 → alert; V = 30000 + 4000 = 34000; pnl = −6000/40000 × 100 = −15 < −10 → alert.
    /// A `symbol: "@main"` rule never sees the synthetic ticks.
    @Test func portfolioValueOnceEveryHoldingTicked() throws {
        let engine = try ReferenceEngineV2(files: [
            file(
                2,
                #"""
                {"id": "btc-move", "symbol": "BTC", "when": {"move": {"percent": 10}}},
                {"id": "value", "portfolio": "main", "when": {"price": {"above": 45000}}},
                {"id": "loss", "portfolio": "main", "when": {"pnl": {"below": -10}}},
                {"id": "not-a-symbol", "symbol": "@main", "when": {"price": {"above": 0}}}
                """#, extra: #""portfolios": {"main": {"holdings": {"BTC": 0.5, "eth": 4}, "cost": 40000}},"#)
        ])
        let events = run(
            engine,
            [
                (h0, "BTC", 60000), (h0 + minute, "ETH", 3000), (h0 + 2 * minute, "BTC", 70000),
                (h0 + 3 * minute, "ETH", 1000), (h0 + 4 * minute, "BTC", 60000)
            ])
        #expect(
            events == [
                alert("btc-move", "BTC", h0 + 2 * minute, 70000, value: 10000.0 / 60000 * 100, .number(10)),
                alert("value", "@MAIN", h0 + 2 * minute, 47000, .number(45000)),
                alert("btc-move", "BTC", h0 + 4 * minute, 60000, value: -10000.0 / 70000 * 100, .number(-10)),
                alert("loss", "@MAIN", h0 + 4 * minute, 34000, value: -15, .number(-10))
            ])
    }

    /// Portfolio pair: A 1, B 1; rule `price above 35`.
    /// A h0+2m 10 (B unknown); B h0+1m 20 → V = 30 at h0+1m; A h0+3m 11 → V = 31 at h0+3m;
    /// B h0+2m 25 (valid for B) → V = 36 at h0+2m < h0+3m → dropped, no alert;
    /// A h0+4m 11 → V = 36 at h0+4m → alert.
    @Test func outOfOrderSyntheticTicksAreDropped() throws {
        let engine = try ReferenceEngineV2(files: [
            file(
                2, #"{"id": "big", "portfolio": "pair", "when": {"price": {"above": 35}}}"#,
                extra: #""portfolios": {"pair": {"holdings": {"A": 1, "B": 1}}},"#)
        ])
        let events = run(
            engine,
            [
                (h0 + 2 * minute, "A", 10), (h0 + minute, "B", 20), (h0 + 3 * minute, "A", 11),
                (h0 + 2 * minute, "B", 25), (h0 + 4 * minute, "A", 11)
            ])
        #expect(events == [alert("big", "@PAIR", h0 + 4 * minute, 36, .number(35))])
        #expect(engine.droppedSynthetic == 1)
        #expect(engine.dropped == 0)
    }

    /// Portfolios in file order after the symbol's rules: two portfolios holding C, the later
    /// file's first. One tick C 10 → @SECOND (file 1) then @FIRST (file 2); within a portfolio,
    /// rules in rule order.
    @Test func eventOrderAcrossPortfolios() throws {
        let a = file(
            2, #"{"id": "s", "portfolio": "second", "when": {"price": {"above": 1}}}"#,
            extra: #""portfolios": {"second": {"holdings": {"C": 2}}, "first": {"holdings": {"C": 1}}},"#)
        let b = file(
            2,
            #"""
            {"id": "f1", "portfolio": "first", "when": {"price": {"above": 1}}},
            {"id": "c", "symbol": "C", "when": {"price": {"above": 1}}},
            {"id": "f2", "portfolio": "first", "when": {"price": {"above": 1}}}
            """#)
        let events = run(try ReferenceEngineV2(files: [a, b]), [(h0, "C", 10)])
        #expect(events.map(\.id) == ["c:C:\(h0)", "s:@SECOND:\(h0)", "f1:@FIRST:\(h0)", "f2:@FIRST:\(h0)"])
        #expect(events.map(\.price) == [10, 20, 10, 10])
    }

    /// Defaults apply where the rule may carry the key: `repeat: once` and `cooldown: 1m`
    /// from `defaults`; the move rule ignores the default `repeat` (an error on a move rule).
    /// - `level` (above 99.5): 100 fires; 99 would re-arm a `rearm` rule (99 ≤ 99.5), but it is
    ///   `once`, so 101 fires nothing.
    /// - `mv` (percent 10): ref 100; 120 at h0+30s: m = 20 → alert (no earlier alert, so no
    ///   cooldown yet), ref 120; 135 at h0+60s: m = 12.5 but 30s < 1m → nothing; 136 at h0+90s:
    ///   m = 16/120 × 100 = 13.3, 60s ≥ 1m → alert.
    @Test func defaultsWhereAllowed() throws {
        let engine = try ReferenceEngineV2(files: [
            file(
                2,
                #"""
                {"id": "level", "symbol": "P", "when": {"price": {"above": 99.5}}},
                {"id": "mv", "symbol": "P", "when": {"move": {"percent": 10}}}
                """#, extra: #""defaults": {"repeat": "once", "cooldown": "1m"},"#)
        ])
        let events = run(
            engine,
            [
                (h0, "P", 100), (h0 + 1, "P", 99), (h0 + 2, "P", 101), (h0 + 30 * sec, "P", 120),
                (h0 + 60 * sec, "P", 135), (h0 + 90 * sec, "P", 136)
            ])
        #expect(
            events == [
                alert("level", "P", h0, 100, .number(99.5)),
                alert("mv", "P", h0 + 30 * sec, 120, value: 20, .number(10)),
                alert("mv", "P", h0 + 90 * sec, 136, value: 16.0 / 120 * 100, .number(10))
            ])
    }

    /// Dropped live ticks change nothing: a bad price, an empty symbol, an `@` symbol and an
    /// out-of-order tick are counted; the crossing sees prev = 99 from the last valid tick.
    @Test func droppedTicksChangeNothing() throws {
        let engine = try ReferenceEngineV2(files: [
            file(2, #"{"id": "x", "symbol": "D", "when": {"price": {"crossesAbove": 100}}}"#)
        ])
        let events = run(
            engine,
            [
                (h0 + 10, "D", 99), (h0 + 11, "D", -1), (h0 + 12, "", 5), (h0 + 13, "@D", 5),
                (h0 + 5, "D", 101), (h0 + 14, "D", 101)
            ])
        #expect(events == [alert("x", "D", h0 + 14, 101, .number(100))])
        #expect(engine.dropped == 4)
    }
}

/// The v2 reference reads v1 files with v1's meaning: on the random v1 streams of
/// `EngineReferenceTests` it gives the v1 reference's alerts, rule for rule.
@Suite("reference v2 agrees with the v1 reference on v1 files", .computation)
struct ReferenceV2AgainstV1Tests {
    /// `rules` as one `"version": 1` file.
    static func v1File(_ rules: [Rule]) -> String {
        func n(_ x: Double) -> String { JSONNumber.format(x) }
        let entries = rules.map { rule -> String in
            let scope: String
            switch rule.scope {
            case .symbols(let list): scope = #""symbols": [\#(list.map { "\"\($0)\"" }.joined(separator: ", "))]"#
            case .match(let f):
                var keys: [String] = []
                if let v = f.future { keys.append(#""future": \#(v)"#) }
                if let v = f.quote { keys.append(#""quote": "\#(v)""#) }
                if let v = f.base { keys.append(#""base": "\#(v)""#) }
                if let v = f.active { keys.append(#""active": \#(v)"#) }
                scope = #""match": {\#(keys.joined(separator: ", "))}"#
            case .portfolio, .series: preconditionFailure("version 1 rules only")
            }
            let when: String
            switch rule.condition {
            case .price(.above(let x)): when = #"{"price": {"above": \#(n(x))}}"#
            case .price(.below(let x)): when = #"{"price": {"below": \#(n(x))}}"#
            case .price(.crossesAbove(let x)): when = #"{"price": {"crossesAbove": \#(n(x))}}"#
            case .price(.crossesBelow(let x)): when = #"{"price": {"crossesBelow": \#(n(x))}}"#
            case .price(.inside(let l, let h)): when = #"{"price": {"inside": [\#(n(l)), \#(n(h))]}}"#
            case .price(.outside(let l, let h)): when = #"{"price": {"outside": [\#(n(l)), \#(n(h))]}}"#
            case .change(let w, .above(let c)): when = #"{"change": {"window": "\#(w / 60_000)m", "above": \#(n(c))}}"#
            case .change(let w, .below(let c)): when = #"{"change": {"window": "\#(w / 60_000)m", "below": \#(n(c))}}"#
            default: preconditionFailure("version 1 rules only")
            }
            return #"{"id": "\#(rule.id)", \#(scope), "when": \#(when), "repeat": "\#(rule.repeatMode.rawValue)", "#
                + #""cooldown": "\#(rule.cooldown)ms", "hysteresis": \#(n(rule.hysteresis)), "enabled": \#(rule.enabled)}"#
        }
        return #"{"version": 1, "rules": [\#(entries.joined(separator: ",\n"))]}"#
    }

    static func compare(_ rules: [Rule], _ ticks: [Tick], markets: MarketList? = nil) throws -> (Int, Bool) {
        let v1 = ReferenceEngine(rules: rules, markets: markets)
        let v2 = try ReferenceEngineV2(files: [v1File(rules)], markets: markets?.markets)
        var theirs: [(String, String, Int64, Double, String)] = []
        var ours: [(String, String, Int64, Double, String)] = []
        for tick in ticks {
            theirs += v1.process(tick)
            ours += v2.process(tick).map { ($0.rule, $0.symbol, $0.time, $0.value, $0.id) }
        }
        let same =
            theirs.count == ours.count
            && zip(theirs, ours).allSatisfy {
                $0.0 == $1.0 && $0.1 == $1.1 && $0.2 == $1.2 && $0.3 == $1.3 && $0.4 == $1.4
            }
        return (ours.count, same)
    }

    @Test(arguments: 1...6)
    func randomV1Streams(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let rules = EngineReferenceTests.randomRules(&rng, count: 60)
        let (count, same) = try Self.compare(rules, EngineReferenceTests.randomTicks(&rng, count: 3000))
        #expect(count > 50)
        #expect(same)
    }

    @Test func randomV1MatchRules() throws {
        var rng = SeededRandom(seed: 99)
        let (markets, rules) = EngineReferenceTests.matchRules(&rng, count: 30)
        let (count, same) = try Self.compare(
            rules, EngineReferenceTests.randomTicks(&rng, count: 3000), markets: markets)
        #expect(count > 30)
        #expect(same)
    }
}

/// Random v2 files beside random v1 files, with seeded history: every kind of event occurs,
/// and the v1 file's alerts are the same with or without the v2 file next to it.
@Suite("reference v2 on random streams", .computation)
struct ReferenceV2RandomTests {
    @Test(arguments: [21, 22, 23])
    func mixedFilesWithHistory(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let start = h0 + 12 * hour
        let v1 = ReferenceV2AgainstV1Tests.v1File(EngineReferenceTests.randomRules(&rng, count: 20))
        let v2 = RandomRulesV2.file(&rng, count: 30, expiresAt: start + 3 * hour)
        let candles = RandomRulesV2.candles(&rng, hours: 72, before: start)
        let ticks = RandomRulesV2.ticks(&rng, count: 1500, start: start)
        let mixed = try ReferenceEngineV2(files: [v1, v2])
        let alone = try ReferenceEngineV2(files: [v1])
        for (symbol, candle) in candles {
            for tick in candle.seededTicks(symbol: symbol) {
                mixed.seed(tick)
                alone.seed(tick)
            }
        }
        var events: [RefEvent] = []
        var v1Alone: [RefEvent] = []
        for tick in ticks {
            events += mixed.process(tick)
            v1Alone += alone.process(tick)
        }
        // v1 rule ids are `r0`…, v2 ones `v0`….
        #expect(events.filter { $0.rule.hasPrefix("r") } == v1Alone)
        #expect(v1Alone.count > 20)
        #expect(events.filter { $0.kind == .alert && $0.rule.hasPrefix("v") }.count > 50)
        #expect(events.contains { $0.kind == .reminder })
        #expect(events.contains { $0.kind == .resolved })
        #expect(events.contains { $0.symbol == "@PF" })
        #expect(mixed.dropped > 0)
    }
}
