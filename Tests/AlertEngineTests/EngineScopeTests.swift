import AlertTestSupport
import SeededRandom
import Testing

@testable import AlertEngine
@testable import AlertModel

@Suite("Scope and the market list")
struct EngineScopeTests {
    let markets = MarketList([
        Market(symbol: "BTC-PERP", base: "BTC", quote: "USD", future: true, active: true),
        Market(symbol: "ETH", base: "ETH", quote: "USD", future: false, active: true),
        Market(symbol: "ETH", base: "ETH", quote: "USDT", future: false, active: false),
        Market(symbol: "DOGE", base: "DOGE", quote: "EUR", future: false, active: true)
    ])

    func symbolsFired(_ filter: MarketFilter, markets: MarketList?) -> [String] {
        let r = Rule(id: "m", scope: .match(filter), condition: .price(.above(0)))
        let engine = Engine(rules: [r], markets: markets)
        var alerts: [Alert] = []
        for s in ["BTC-PERP", "eth", "DOGE", "XRP"] {
            engine.process(Tick(time: 1, symbol: s, price: 1), into: &alerts)
        }
        return alerts.map(\.symbol)
    }

    @Test func matchByFuture() {
        #expect(symbolsFired(MarketFilter(future: true), markets: markets) == ["BTC-PERP"])
        #expect(symbolsFired(MarketFilter(future: false), markets: markets) == ["ETH", "DOGE"])
    }

    @Test func matchByQuoteCaseInsensitively() {
        #expect(symbolsFired(MarketFilter(quote: "usd"), markets: markets) == ["BTC-PERP", "ETH"])
    }

    @Test func matchByBase() {
        #expect(symbolsFired(MarketFilter(base: "btc"), markets: markets) == ["BTC-PERP"])
    }

    @Test func anyJoinedEntryMayMatchAndEveryKeyMustHold() {
        // ETH has an inactive USDT entry and an active USD one.
        #expect(symbolsFired(MarketFilter(quote: "USDT", active: false), markets: markets) == ["ETH"])
        #expect(symbolsFired(MarketFilter(quote: "USDT", active: true), markets: markets) == [])
        #expect(symbolsFired(MarketFilter(active: true), markets: markets) == ["BTC-PERP", "ETH", "DOGE"])
    }

    @Test func withoutMarketListMatchRulesApplyToNothing() {
        #expect(symbolsFired(MarketFilter(future: false), markets: nil) == [])
        #expect(
            Engine(rules: [Rule(id: "m", scope: .match(MarketFilter(future: true)), condition: .price(.above(0)))])
                .hasMatchRules)
        // A `match` rule evaluated pair by pair needs the market list as much as an indexed one.
        let offHigh = Rule(
            id: "h", scope: .match(MarketFilter(future: false)), condition: .fromHigh(window: 3_600_000, .below(-5)))
        #expect(Engine(rules: [offHigh]).hasMatchRules)
        #expect(!Engine(rules: [rule(.price(.above(0)), symbols: ["XRP"])]).hasMatchRules)
    }

    @Test func symbolRulesApplyWhetherOrNotTheSymbolIsListed() {
        let r = rule(.price(.above(0)), symbols: ["XRP"])
        let engine = Engine(rules: [r], markets: markets)
        var alerts: [Alert] = []
        engine.process(Tick(time: 1, symbol: "XRP", price: 1), into: &alerts)
        #expect(alerts.map(\.symbol) == ["XRP"])
    }
}

@Suite("Market list reloads")
struct EngineMarketReloadTests {
    @Test func aListedMarketStartsMatchingAfterAReload() {
        let r = Rule(id: "usd", scope: .match(MarketFilter(quote: "USD")), condition: .price(.above(1)))
        let engine = Engine(rules: [r], markets: MarketList([]))
        var alerts: [Alert] = []
        engine.process(Tick(time: 1, symbol: "NEW", price: 2), into: &alerts)
        #expect(alerts.isEmpty)
        engine.replaceMarkets(
            MarketList([Market(symbol: "NEW", base: "NEW", quote: "USD", future: false, active: true)]))
        engine.process(Tick(time: 2, symbol: "NEW", price: 2), into: &alerts)
        #expect(alerts.map(\.id) == ["usd:NEW:2"])
    }

    @Test func aPairThatStillAppliesKeepsItsStateAcrossAReload() {
        let listed = MarketList([Market(symbol: "BTC", base: "BTC", quote: "USD", future: false, active: true)])
        let rules = [
            Rule(id: "usd", scope: .match(MarketFilter(quote: "USD")), condition: .price(.above(100))),
            Rule(id: "spot", scope: .match(MarketFilter(future: false)), condition: .price(.crossesAbove(150)))
        ]
        let engine = Engine(rules: rules, markets: listed)
        var alerts: [Alert] = []
        engine.process(Tick(time: 1, symbol: "BTC", price: 101), into: &alerts) // usd fires, disarms
        // A reload that drops "spot" for BTC (now a future) and keeps "usd".
        engine.replaceMarkets(
            MarketList([Market(symbol: "BTC", base: "BTC", quote: "USD", future: true, active: true)]))
        engine.process(Tick(time: 2, symbol: "BTC", price: 160), into: &alerts)
        // usd is still disarmed (no second alert); spot no longer applies (no crossing alert).
        #expect(alerts.map(\.id) == ["usd:BTC:1"])
        engine.process(Tick(time: 3, symbol: "BTC", price: 90), into: &alerts) // usd re-arms
        engine.process(Tick(time: 4, symbol: "BTC", price: 101), into: &alerts) // and fires
        #expect(alerts.map(\.id) == ["usd:BTC:1", "usd:BTC:4"])
    }

    @Test func reloadsAgreeWithTheReference() {
        var rng = SeededRandom(seed: 4242)
        var rules = EngineReferenceTests.randomRules(&rng, count: 40)
        for i in rules.indices where i % 2 == 0 {
            rules[i].scope = .match(i % 4 == 0 ? MarketFilter(quote: "usd") : MarketFilter(future: true))
        }
        let lists = [
            MarketList([Market(symbol: "AAA", base: "AAA", quote: "USD", future: false, active: true)]),
            MarketList([
                Market(symbol: "AAA", base: "AAA", quote: "EUR", future: true, active: true),
                Market(symbol: "BBB", base: "BBB", quote: "USD", future: false, active: true)
            ]),
            MarketList([
                Market(symbol: "CCC", base: "CCC", quote: "USD", future: true, active: true),
                Market(symbol: "BBB", base: "BBB", quote: "USD", future: false, active: true)
            ])
        ]
        let (_, ours, theirs) = Self.compare(
            rules: rules, lists: lists, ticks: EngineReferenceTests.randomTicks(&rng, count: 3000))
        #expect(ours.count > 30)
        #expect(ours == theirs)
    }

    /// Runs `ticks` through the engine and the reference, switching to the next of `lists`
    /// every 1000 ticks; returns the engine and both alert lists as "id value" lines.
    static func compare(rules: [Rule], lists: [MarketList], ticks: [Tick]) -> (Engine, [String], [String]) {
        let engine = Engine(rules: rules, markets: lists[0])
        let reference = ReferenceEngine(rules: rules, markets: lists[0])
        var ours: [Alert] = []
        var theirs: [String] = []
        for (i, tick) in ticks.enumerated() {
            if i % 1000 == 999 {
                let list = lists[(i / 1000 + 1) % lists.count]
                engine.replaceMarkets(list)
                reference.markets = list
            }
            engine.process(tick, into: &ours)
            theirs += reference.process(tick).map { "\($0.4) \($0.3)" }
        }
        return (engine, ours.map { "\($0.id) \($0.value)" }, theirs)
    }
}

@Suite("symbols no rule applies to")
struct EngineUnwatchedSymbolTests {
    @Test func keepNoStateAndAreCounted() {
        let engine = Engine(
            rules: [Rule(id: "btc", scope: .symbols(["BTC"]), condition: .price(.above(1)))],
            markets: MarketList([Market(symbol: "BTC", base: "BTC", quote: "USD", future: false, active: true)]))
        var alerts: [Alert] = []
        for i in 0..<10_000 {
            engine.process(Tick(time: Int64(i), symbol: "NEW\(i)", price: 1.5), into: &alerts)
            engine.process(Tick(time: Int64(i), symbol: "BTC", price: 2), into: &alerts)
        }
        #expect(engine.core.symbols.map(\.symbol) == ["BTC"])
        #expect(engine.takeChanges().map(\.symbol) == ["BTC"])
        #expect(engine.stats.unwatched == 10_000)
        #expect(engine.stats.accepted == 20_000)
        #expect(alerts.map(\.id) == ["btc:BTC:0"])
    }

    @Test func aSymbolAMatchRuleReachesAfterAReloadStartsThen() {
        let r = Rule(id: "up", scope: .match(MarketFilter(quote: "USD")), condition: .price(.crossesAbove(150)))
        let engine = Engine(rules: [r], markets: MarketList([]))
        let reference = ReferenceEngine(rules: [r], markets: MarketList([]))
        var alerts: [Alert] = []
        var theirs: [String] = []
        let listed = MarketList([Market(symbol: "NEW", base: "NEW", quote: "USD", future: false, active: true)])
        for (time, price) in [(1, 100.0), (2, 160), (3, 140), (4, 160)] as [(Int64, Double)] {
            if time == 2 {
                engine.replaceMarkets(listed)
                reference.markets = listed
            }
            engine.process(Tick(time: time, symbol: "NEW", price: price), into: &alerts)
            theirs += reference.process(Tick(time: time, symbol: "NEW", price: price)).map { "\($0.0):\($0.1):\($0.2)" }
        }
        // The tick at 100 came while no rule applied: the first tick after the reload has no
        // `prev`, so the crossing is the one from 140 to 160.
        #expect(alerts.map(\.id) == ["up:NEW:4"])
        #expect(theirs == ["up:NEW:4"])
    }

    @Test func onlyMatchRulesAcrossReloadsAgreeWithTheReference() {
        var rng = SeededRandom(seed: 977)
        var rules = EngineReferenceTests.randomRules(&rng, count: 40)
        for i in rules.indices {
            rules[i].scope = .match(i % 2 == 0 ? MarketFilter(quote: "usd") : MarketFilter(future: true))
        }
        let lists = [
            MarketList([]),
            MarketList([Market(symbol: "AAA", base: "AAA", quote: "USD", future: false, active: true)]),
            MarketList([Market(symbol: "BBB", base: "BBB", quote: "USD", future: true, active: true)]),
            MarketList([
                Market(symbol: "CCC", base: "CCC", quote: "USD", future: true, active: true),
                Market(symbol: "AAA", base: "AAA", quote: "EUR", future: false, active: true)
            ])
        ]
        let (engine, ours, theirs) = EngineMarketReloadTests.compare(
            rules: rules, lists: lists, ticks: EngineReferenceTests.randomTicks(&rng, count: 4000))
        #expect(ours.count > 30)
        #expect(engine.stats.unwatched > 0)
        #expect(ours == theirs)
    }
}

@Suite("Once survives market list reloads")
struct EngineOnceAcrossReloadsTests {
    @Test func aOncePairThatFiredNeverFiresAgainEvenIfItsMarketLeavesAndReturns() {
        let r = Rule(
            id: "once", scope: .match(MarketFilter(quote: "USD")), condition: .price(.above(1)), repeatMode: .once)
        let listed = MarketList([Market(symbol: "X", base: "X", quote: "USD", future: false, active: true)])
        let engine = Engine(rules: [r], markets: listed)
        var alerts: [Alert] = []
        engine.process(Tick(time: 1, symbol: "X", price: 2), into: &alerts)
        engine.replaceMarkets(MarketList([]))
        engine.process(Tick(time: 2, symbol: "X", price: 0.5), into: &alerts)
        engine.replaceMarkets(listed)
        engine.process(Tick(time: 3, symbol: "X", price: 2), into: &alerts)
        #expect(alerts.map(\.id) == ["once:X:1"])
    }
}

/// A daemon may hold 100 000 rules: their inline size is budgeted (Docs/performance.md).
@Suite struct RuleSizeTests {
    @Test func aRuleStaysSmallInline() {
        #expect(MemoryLayout<Rule>.stride <= 80)
        #expect(MemoryLayout<Scope>.size <= 9)
    }

    @Test func aPairStaysSmallAndKeepsItsLastFiring() {
        #expect(MemoryLayout<ConditionGroup.Pair>.stride <= 48)
        #expect(MemoryLayout<PairSnapshot>.stride <= 40)
        var pair = ConditionGroup.Pair(
            rule: 3, condition: CompiledCondition(.price(.above(1)), hysteresis: 0),
            cooldown: 10, once: false)
        #expect(pair.lastFired == nil)
        pair.lastFired = 0
        #expect(pair.lastFired == 0)
        pair.lastFired = -5
        #expect(pair.lastFired == -5)
        pair.lastFired = nil
        #expect(pair.lastFired == nil)
    }

    @Test func aMatchScopeIsBoxedButEqualByValue() {
        let a = Scope.match(MarketFilter(quote: "USDT"))
        #expect(a == Scope.match(MarketFilter(quote: "USDT")))
        #expect(a != Scope.match(MarketFilter(quote: "USD")))
    }
}
