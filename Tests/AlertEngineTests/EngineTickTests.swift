import Testing

@testable import AlertEngine
@testable import AlertModel

@Suite("Ticks")
struct EngineTickTests {
    @Test(arguments: [0.0, -1.0, .nan, .infinity, -.infinity])
    func nonPositiveOrNonFinitePriceIsDropped(price: Double) {
        let engine = Engine(rules: [rule(.price(.above(0.5)))])
        var alerts: [Alert] = []
        #expect(engine.process(Tick(time: 1, symbol: "BTC", price: price), into: &alerts) == .invalidPrice)
        #expect(alerts.isEmpty)
        #expect(engine.stats.dropped == [.invalidPrice: 1])
    }

    @Test func emptySymbolIsDropped() {
        let engine = Engine(rules: [])
        var alerts: [Alert] = []
        #expect(engine.process(Tick(time: 1, symbol: "", price: 1), into: &alerts) == .emptySymbol)
    }

    /// C0, DEL and C1 anywhere in a symbol: dropped before any state changes, seeded or live,
    /// by the indexed path and by the plain one (a `for` rule) alike.
    @Test(arguments: ["BT\nC", "\u{0}BTC", "BTC\r", "B\u{7F}TC", "BTC\u{85}", "\u{9F}", "\t"])
    func aControlCharacterInTheSymbolIsDropped(symbol: String) {
        for rules in [
            [rule(.price(.above(0.5)))],
            [
                Rule(
                    id: "held", scope: .symbols(["BTC"]), condition: .price(.above(0.5)), fileVersion: 2,
                    extras: RuleExtras(sustain: 1))
            ]
        ] {
            let engine = Engine(rules: rules)
            var alerts: [Alert] = []
            #expect(engine.process(Tick(time: 1, symbol: symbol, price: 1), into: &alerts) == .controlCharacter)
            #expect(engine.seed(Tick(time: 1, symbol: symbol, price: 1)) == .controlCharacter)
            #expect(alerts.isEmpty)
            #expect(engine.stats.dropped == [.controlCharacter: 2])
            #expect(engine.stats.accepted == 0)
        }
    }

    /// A symbol only a plain (version 2) rule watches is watched: its ticks are not counted as
    /// ticks of symbols no rule applies to.
    @Test func aSymbolOnlyAPlainRuleWatchesIsNotUnwatched() {
        let engine = Engine(rules: [
            Rule(
                id: "held", scope: .symbols(["BTC"]), condition: .price(.above(0.5)), fileVersion: 2,
                extras: RuleExtras(sustain: 1))
        ])
        var alerts: [Alert] = []
        #expect(engine.process(Tick(time: 1, symbol: "BTC", price: 1), into: &alerts) == nil)
        #expect(engine.process(Tick(time: 2, symbol: "ETH", price: 1), into: &alerts) == nil)
        #expect(engine.stats.unwatched == 1)
        #expect(engine.stats.accepted == 2)
    }

    @Test func otherUnicodeInTheSymbolIsKept() {
        for symbol in ["BTC€", "ÀÉ", "币", "\u{A0}X"] {
            #expect(Tick(time: 1, symbol: symbol, price: 1).symbolFault == nil, "\(symbol)")
        }
    }

    @Test func earlierThanPreviousValidTickIsDroppedButEqualTimeIsNot() {
        // Time order is kept for symbols a rule applies to (the engine remembers no other).
        let engine = Engine(rules: [Rule(id: "r", scope: .symbols(["BTC", "ETH"]), condition: .price(.above(1000)))])
        var alerts: [Alert] = []
        #expect(engine.process(Tick(time: 10, symbol: "BTC", price: 1), into: &alerts) == nil)
        #expect(engine.process(Tick(time: 9, symbol: "BTC", price: 1), into: &alerts) == .outOfOrder)
        #expect(engine.process(Tick(time: 10, symbol: "BTC", price: 1), into: &alerts) == nil)
        // Order is per symbol: another symbol may be earlier.
        #expect(engine.process(Tick(time: 1, symbol: "ETH", price: 1), into: &alerts) == nil)
        #expect(engine.stats.accepted == 3)
        #expect(engine.stats.dropped == [.outOfOrder: 1])
    }

    @Test func droppedTicksChangeNoStateNotEvenPrev() {
        // crossesAbove 100: 99, then a dropped 101 (earlier time), then 101: the crossing is
        // 99 → 101, so it fires once, on the valid tick.
        let r = rule(.price(.crossesAbove(100)))
        let engine = Engine(rules: [r])
        var alerts: [Alert] = []
        engine.process(Tick(time: 10, symbol: "BTC", price: 99), into: &alerts)
        engine.process(Tick(time: 5, symbol: "BTC", price: 101), into: &alerts)
        engine.process(Tick(time: 11, symbol: "BTC", price: -3), into: &alerts)
        engine.process(Tick(time: 12, symbol: "BTC", price: 101), into: &alerts)
        #expect(alerts.map(\.time) == [12])
    }

    @Test func droppedTickBeforeFirstValidOneDoesNotStartTheWindow() {
        let r = rule(.change(window: minute, .above(5)))
        let engine = Engine(rules: [r])
        var alerts: [Alert] = []
        engine.process(Tick(time: 0, symbol: "BTC", price: 0), into: &alerts) // dropped
        engine.process(Tick(time: 30_000, symbol: "BTC", price: 100), into: &alerts)
        engine.process(Tick(time: 60_000, symbol: "BTC", price: 200), into: &alerts) // first tick 30 s > t − W = 0
        #expect(alerts.isEmpty)
        engine.process(Tick(time: 90_000, symbol: "BTC", price: 200), into: &alerts) // covered: base 100
        #expect(alerts.map(\.value) == [100])
    }

    @Test func symbolsCompareCaseInsensitively() {
        let engine = Engine(rules: [rule(.price(.above(1)), symbols: ["eth"])])
        var alerts: [Alert] = []
        engine.process(Tick(time: 1, symbol: "Eth", price: 2), into: &alerts)
        #expect(alerts.map(\.symbol) == ["ETH"])
    }
}
