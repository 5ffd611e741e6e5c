import Testing

@testable import AlertEngine
@testable import AlertModel

@Suite("Firing, arming, cooldown")
struct EngineFiringTests {
    let t = seconds([0]).first!.0

    @Test func levelHoldingThroughCooldownFiresAtFirstTickAfterIt() {
        // above 100, cooldown 5 s: fires at 0 s; re-arms at 1 s; holds at 2..4 s (cooling down);
        // at 5 s it still holds and 5 s have passed (t − lastFired ≥ cooldown): fires.
        let r = rule(.price(.above(100)), cooldown: 5000)
        #expect(fireTimes([r], seconds([101, 99, 101, 102, 103, 104, 105])) == [t, t + 5000])
    }

    @Test func levelThatStopsHoldingDuringCooldownDoesNotFireLater() {
        let r = rule(.price(.above(100)), cooldown: 5000)
        // Holds at 2 s during cooldown, falls at 3 s (armed, not holding), 6 s holds again: fires.
        #expect(fireTimes([r], seconds([101, 99, 101, 99, 99, 99, 101])) == [t, t + 6000])
    }

    @Test func crossingDuringCooldownIsLost() {
        let r = rule(.price(.crossesAbove(100)), cooldown: 10_000)
        // Cross at 1 s fires; re-arm at 2 s; cross at 3 s is within cooldown: lost, and at 20 s
        // the price is still above, which is no crossing.
        let ticks: [(Int64, Double)] = [(t, 99), (t + 1000, 101), (t + 2000, 99), (t + 3000, 101), (t + 20_000, 102)]
        #expect(fireTimes([r], ticks) == [t + 1000])
    }

    @Test func cooldownBoundaryIsInclusive() {
        let r = rule(.price(.above(100)), cooldown: 2000)
        // Fire at 0, re-arm at 1 s, at 2 s exactly t − lastFired = cooldown: fires.
        #expect(fireTimes([r], seconds([101, 99, 101])) == [t, t + 2000])
    }

    @Test func onceFiresAtMostOnceEver() {
        let r = rule(.price(.crossesAbove(100)), repeatMode: .once)
        #expect(fireTimes([r], seconds([99, 101, 99, 101, 99, 101])) == [t + 1000])
    }

    @Test func disabledRuleNeverFires() {
        #expect(fireTimes([rule(.price(.above(1)), enabled: false)], seconds([5, 6])) == [])
    }

    @Test func pairsAreIndependentPerSymbol() {
        let r = rule(.price(.above(100)), symbols: ["BTC", "ETH"])
        let engine = Engine(rules: [r])
        var alerts: [Alert] = []
        engine.process(Tick(time: 1, symbol: "BTC", price: 101), into: &alerts)
        engine.process(Tick(time: 2, symbol: "ETH", price: 101), into: &alerts)
        engine.process(Tick(time: 3, symbol: "BTC", price: 102), into: &alerts)
        #expect(alerts.map(\.symbol) == ["BTC", "ETH"])
    }

    @Test func alertsWithinOneTickFollowRuleOrder() {
        // Rule order is the list order, whatever the thresholds or condition kinds.
        let rules = [
            rule("c", .price(.above(50))),
            rule("a", .price(.inside(0, 1000))),
            rule("b", .price(.above(10))),
            rule("d", .change(window: 60_000, .above(-100)))
        ]
        let engine = Engine(rules: rules)
        var alerts: [Alert] = []
        engine.process(Tick(time: 0, symbol: "BTC", price: 20), into: &alerts)
        #expect(alerts.map(\.rule) == ["a", "b"])
        alerts.removeAll()
        engine.process(Tick(time: 60_000, symbol: "BTC", price: 60), into: &alerts)
        // c fires now (60 > 50); d's window is covered at t = 60 s; a and b are disarmed.
        #expect(alerts.map(\.rule) == ["c", "d"])
    }

    @Test func alertCarriesSpecFields() {
        let r = rule(
            "btc-100k", .price(.crossesAbove(100_000)), symbols: ["btc"],
            message: "{{rule}} {{symbol}} {{price}} {{value}} {{threshold}} {{condition}} {{time}}")
        let engine = Engine(rules: [r])
        var alerts: [Alert] = []
        engine.process(Tick(time: 1_699_999_999_000, symbol: "Btc", price: 99_000), into: &alerts)
        engine.process(Tick(time: 1_700_000_000_000, symbol: "bTC", price: 100_012.5), into: &alerts)
        #expect(alerts.count == 1)
        let a = alerts[0]
        #expect(a.id == "btc-100k:BTC:1700000000000")
        #expect(a.symbol == "BTC")
        #expect(a.condition == "price crossesAbove 100000")
        #expect(a.threshold == .value(100_000))
        #expect(a.value == 100_012.5)
        #expect(a.message == "btc-100k BTC 100012.5 100012.5 100000 price crossesAbove 100000 2023-11-14T22:13:20.000Z")
        #expect(
            AlertFormat.json(a)
                == #"{"id":"btc-100k:BTC:1700000000000","kind":"alert","rule":"btc-100k","symbol":"BTC","time":"2023-11-14T22:13:20.000Z","price":100012.5,"condition":"price crossesAbove 100000","threshold":100000,"value":100012.5,"message":"btc-100k BTC 100012.5 100012.5 100000 price crossesAbove 100000 2023-11-14T22:13:20.000Z"}"#
        )
    }

    @Test func rangeThresholdIsAPairInJSON() {
        let engine = Engine(rules: [rule("band", .price(.inside(40_000, 45_000.5)))])
        var alerts: [Alert] = []
        engine.process(Tick(time: 0, symbol: "BTC", price: 42_000), into: &alerts)
        #expect(alerts.first?.threshold == .range(40_000, 45_000.5))
        #expect(
            AlertFormat.json(alerts[0]).contains(
                #""condition":"price inside [40000, 45000.5]","threshold":[40000, 45000.5],"value":42000,"#))
        #expect(alerts[0].message == "BTC price inside [40000, 45000.5] (price 42000)")
    }
}
