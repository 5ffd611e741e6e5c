import AlertModel
import AlertPipeline
import AlertRules
import AlertSinks
import Platform
import Testing

/// Tick times against the local clock (Docs/rules.md#ticks-from-the-future), with clocks the
/// tests set: a tick from the future is refused, state holding one is recovered, and a step of
/// the system clock back does not leave the rules blind.
@Suite struct ClockTests {
    static let hour: Int64 = 3_600_000
    /// The "true" time of these tests.
    static let now: Int64 = 1_800_000_000_000
    /// 9999-12-31T23:59:59.000Z.
    static let year9999: Int64 = 253_402_300_799_000

    /// A crossing rule and a cooldown rule: both see whether ticks after the step are evaluated.
    static let rules = """
        {"version": 1, "rules": [
          {"id": "cross", "symbol": "BTC", "when": {"price": {"crossesAbove": 100}}},
          {"id": "high", "symbol": "BTC", "when": {"price": {"above": 200}}, "cooldown": "10m"}]}
        """

    static func evaluator() throws -> Evaluator {
        Evaluator(
            ruleSet: try RuleLoader.load([RuleSource(path: "r.json", bytes: Array(rules.utf8))]).get(), markets: nil)
    }

    static func process(
        _ evaluator: inout Evaluator, _ ticks: [(Int64, Double)], notAfter: Int64 = .max
    ) -> ([String], [Drop]) {
        var alerts: [Alert] = []
        var drops: [Drop] = []
        for (t, p) in ticks {
            if let drop = evaluator.process(
                Tick(time: t, symbol: "BTC", price: p), at: .feed(source: "poloniex"),
                into: &alerts, notAfter: notAfter)
            {
                drops.append(drop)
            }
        }
        return (alerts.map(\.id), drops)
    }

    @Test("a tick more than the skew ahead of the clock is refused, counted and named; the next one counts")
    func aTickFromTheFutureIsRefused() throws {
        var evaluator = try Self.evaluator()
        let limit = Self.now + 300_000
        let (ids, drops) = Self.process(
            &evaluator, [(Self.now, 90), (Self.year9999, 250), (Self.now + 1_000, 250)], notAfter: limit)
        #expect(ids == ["cross:BTC:\(Self.now + 1_000)", "high:BTC:\(Self.now + 1_000)"])
        #expect(drops.map(\.reason) == [.aheadOfClock])
        #expect(
            drops.first?.description
                == "poloniex: dropped: BTC at 9999-12-31T23:59:59.000Z: time is further ahead of the local clock than --max-tick-skew (ahead-of-clock)"
        )
        #expect(evaluator.stats.dropped == [.aheadOfClock: 1])
    }

    /// The system clock steps back an hour while ticks are timed by it: without forgetting,
    /// every tick of the next hour would be out of order (and the cooldown of a pair that fired
    /// just before the step would last an hour more).
    @Test("after a step back, the state's times after the new clock are forgotten and ticks fire again")
    func aStepBackDoesNotBlindTheRules() throws {
        var evaluator = try Self.evaluator()
        let before = Self.process(&evaluator, [(Self.now, 90), (Self.now + 1_000, 250)])
        #expect(before.0 == ["cross:BTC:\(Self.now + 1_000)", "high:BTC:\(Self.now + 1_000)"])
        // The step: the monotonic clock went on 2 s, the time of day went back an hour.
        var watch = ClockStepWatch(wall: Self.now + 1_000, monotonic: 50_000)
        let stepped = Self.now + 3_000 - Self.hour
        let step = watch.step(wall: stepped, monotonic: 52_000)
        #expect(step == -Self.hour)
        let forgetting = evaluator.forgetTimes(after: stepped)
        let forgotten = try #require(forgetting)
        #expect(forgotten.symbols == ["BTC"])
        #expect(forgotten.latest == Self.now + 1_000)
        let after = Self.process(&evaluator, [(stepped, 90), (stepped + 1_000, 250)])
        #expect(after.1 == [])
        #expect(after.0 == ["cross:BTC:\(stepped + 1_000)", "high:BTC:\(stepped + 1_000)"])
        // Counts of the run survive the new engine.
        #expect(evaluator.stats.accepted == 4)
        #expect(evaluator.stats.alerts == 4)
    }

    @Test("the clocks moving together, or apart by NTP's slewing, is no step; a step forward is one")
    func clockStepWatch() {
        var watch = ClockStepWatch(wall: Self.now, monotonic: 0)
        #expect(watch.step(wall: Self.now + 10_000, monotonic: 10_000) == nil)
        // 500 ppm over an hour: 1.8 s, inside 1 s + 0.1 %.
        #expect(watch.step(wall: Self.now + 10_000 + Self.hour + 1_800, monotonic: 10_000 + Self.hour) == nil)
        #expect(
            watch.step(wall: Self.now + 10_000 + Self.hour + 1_800 + 1_000 + 5_000, monotonic: 11_000 + Self.hour)
                == 5_000)
    }

    @Test("saved state with a time from the future is recovered at restore, not deleted")
    func poisonedStateIsRecovered() throws {
        var poisoned = try Self.evaluator()
        _ = Self.process(&poisoned, [(Self.now, 90), (Self.year9999, 250)])
        let saved = poisoned.takeChanges(final: true)
        #expect(saved.first?.lastTime == Self.year9999)

        var blind = try Self.evaluator()
        blind.restore(saved)
        #expect(Self.process(&blind, [(Self.now + 1_000, 90)]).1.map(\.reason) == [.outOfOrder])

        var evaluator = try Self.evaluator()
        let restored = evaluator.restore(saved, forgettingAfter: Self.now + 300_000)
        let forgotten = try #require(restored)
        #expect(forgotten.symbols == ["BTC"])
        #expect(forgotten.latest == Self.year9999)
        #expect(
            forgotten.warning(limit: Self.now + 300_000, why: "beyond the local clock and --max-tick-skew")
                == "the state of 1 symbol (BTC) holds times up to 9999-12-31T23:59:59.000Z, beyond the local clock and --max-tick-skew (2027-01-15T08:05:00.000Z): those times are taken as not seen, so later ticks are not out of order"
        )
        // `prev` (250) stays: 90 then 150 is a crossing; the `high` pair fired in 9999 counts as
        // never fired, so its cooldown does not hold it back.
        let (ids, drops) = Self.process(
            &evaluator, [(Self.now + 1_000, 90), (Self.now + 2_000, 150), (Self.now + 3_000, 250)])
        #expect(drops == [])
        #expect(ids == ["cross:BTC:\(Self.now + 2_000)", "high:BTC:\(Self.now + 3_000)"])
        // Nothing after the limit: nothing forgotten.
        var clean = try Self.evaluator()
        #expect(clean.restore(saved, forgettingAfter: .max) == nil)
    }
}
