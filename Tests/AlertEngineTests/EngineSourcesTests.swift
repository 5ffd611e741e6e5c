import AlertTestSupport
import Testing

@testable import AlertEngine
@testable import AlertModel

/// Rules v3 in the engine, case by case: keys per source (§1, §3), series (§4), volume (§5),
/// events with a source and their order (§6, §7).
@Suite("engine: sources, series and volume (rules v3)")
struct EngineSourcesTests {
    static func v3(
        _ id: String, _ condition: Condition, scope: Scope, hysteresis: Double = 0
    ) -> Rule {
        Rule(id: id, scope: scope, condition: condition, hysteresis: hysteresis, fileVersion: 3)
    }

    static func tick(_ t: Int64, _ source: String?, _ symbol: String, _ p: Double, volume: Double? = nil) -> Tick {
        Tick(time: t, symbol: symbol, price: p, source: source, volume24h: volume)
    }

    static func run(_ engine: Engine, _ ticks: [Tick]) -> [Alert] {
        var alerts: [Alert] = []
        for tick in ticks { engine.process(tick, into: &alerts) }
        return alerts
    }

    @Test("an unqualified symbol is one pair per key; each key has its own prev and time order")
    func unqualifiedSymbolIsOnePairPerKey() {
        let engine = Engine(rules: [Self.v3("up", .price(.crossesAbove(100)), scope: .symbols(["btc/usd"]))])
        let alerts = Self.run(
            engine,
            [
                Self.tick(1000, "ex-a", "BTC/USD", 99),
                // An earlier time on another key is in order: each key keeps its own.
                Self.tick(500, "ex-b", "btc/usd", 101),
                Self.tick(2000, "ex-a", "BTC/USD", 101),
                Self.tick(3000, nil, "BTC/USD", 99),
                Self.tick(4000, nil, "BTC/USD", 101),
                Self.tick(1500, "ex-a", "BTC/USD", 99)
            ])
        #expect(alerts.map(\.id) == ["up:ex-a:BTC/USD:2000", "up:BTC/USD:4000"])
        #expect(alerts.map(\.source) == ["ex-a", nil])
        #expect(alerts.map(\.symbol) == ["BTC/USD", "BTC/USD"])
        #expect(engine.stats.dropped[.outOfOrder] == 1)
    }

    @Test("a qualified entry applies to exactly its key")
    func qualifiedEntryAppliesToItsKey() {
        let engine = Engine(rules: [Self.v3("a", .price(.above(100)), scope: .symbols(["ex-a:btc"]))])
        let alerts = Self.run(
            engine, [Self.tick(1, "ex-b", "BTC", 101), Self.tick(2, nil, "BTC", 101), Self.tick(3, "ex-a", "btc", 101)])
        #expect(alerts.map(\.id) == ["a:ex-a:BTC:3"])
    }

    @Test("match uses each source's market list and its source restriction; ticks without one the v1 list")
    func matchPerSource() {
        let usd = [Market(symbol: "BTC", base: "BTC", quote: "USD", future: false, active: true)]
        let eur = [Market(symbol: "BTC", base: "BTC", quote: "EUR", future: false, active: true)]
        let rules = [
            Self.v3("usd", .price(.above(100)), scope: .match(MarketFilter(quote: "USD"))),
            Self.v3("b-only", .price(.above(100)), scope: .match(MarketFilter(quote: "EUR", sources: ["ex-b"])))
        ]
        let engine = Engine(rules: rules, markets: MarketList(eur), sourceMarkets: ["ex-a": MarketList(usd)])
        var alerts = Self.run(
            engine, [Self.tick(1, "ex-a", "BTC", 101), Self.tick(1, "ex-b", "BTC", 101), Self.tick(1, nil, "BTC", 101)])
        #expect(alerts.map(\.id) == ["usd:ex-a:BTC:1"])
        // ex-b's list arrives: its keys are matched again; the others keep theirs.
        engine.replaceMarkets(MarketList(eur), source: "ex-b")
        alerts = Self.run(engine, [Self.tick(2, "ex-b", "BTC", 102), Self.tick(2, nil, "BTC", 102)])
        #expect(alerts.map(\.id) == ["b-only:ex-b:BTC:2"])
        #expect(engine.sourceMarkets.keys.sorted() == ["ex-a", "ex-b"])
    }

    @Test("a median with quorum and maxAge: a silent member leaves it, a wick on one member does not move it")
    func medianWithQuorum() {
        let series = SeriesDefinition(
            name: "btc", kind: .median, members: ["ex-a:BTC", "ex-b:BTC", "ex-c:BTC"], maxAge: 30_000, quorum: 2)
        let rules = [Self.v3("low", .price(.below(95)), scope: .series("btc"))]
        let engine = Engine(rules: rules, series: [series])
        var alerts = Self.run(
            engine,
            [
                Self.tick(0, "ex-a", "BTC", 100), // one fresh member: below quorum, no tick
                Self.tick(1000, "ex-b", "BTC", 101), // median of 100, 101: 100.5
                Self.tick(2000, "ex-c", "BTC", 80) // a wick: median of 100, 101, 80 is 100
            ])
        #expect(alerts.isEmpty)
        // ex-a and ex-b fall silent past maxAge: ex-c alone is below quorum.
        alerts = Self.run(engine, [Self.tick(40_000, "ex-c", "BTC", 80)])
        #expect(alerts.isEmpty)
        alerts = Self.run(engine, [Self.tick(41_000, "ex-a", "BTC", 90)])
        #expect(alerts.map(\.id) == ["low:@BTC:41000"])
        #expect(alerts.first?.price == 85)
        #expect(alerts.first?.source == nil)
    }

    @Test("spread may be negative; ratio; a series tick earlier than its previous one is dropped")
    func spreadAndRatio() {
        let gap = SeriesDefinition(name: "gap", kind: .spread, members: ["ex-a:BTC", "ex-b:BTC"], maxAge: 60_000)
        let ratio = SeriesDefinition(name: "r", kind: .ratio, members: ["ex-a:ETH", "ex-a:BTC"], maxAge: 60_000)
        let rules = [
            Self.v3("neg", .price(.below(-1)), scope: .series("gap")),
            Self.v3("ratio", .price(.above(0.05)), scope: .series("r"))
        ]
        let engine = Engine(rules: rules, series: [gap, ratio])
        let alerts = Self.run(
            engine,
            [
                Self.tick(10_000, "ex-a", "BTC", 98),
                Self.tick(20_000, "ex-b", "BTC", 100), // (98 − 100) / 100 × 100 = −2
                Self.tick(15_000, "ex-a", "BTC", 97), // in order for its key; the series tick is earlier: dropped
                Self.tick(25_000, "ex-a", "ETH", 6) // 6 / 97
            ])
        #expect(alerts.map(\.id) == ["neg:@GAP:20000", "ratio:@R:25000"])
        #expect(alerts.first?.price == -2)
        #expect(alerts.last?.price == 6.0 / 97)
        #expect(engine.core.droppedSynthetic == 1)
    }

    @Test("volume with hysteresis; unknown without volume24h, so on every series tick")
    func volume() {
        let rules = [
            Self.v3("vol", .volume(.above(1000)), scope: .symbols(["BTC"]), hysteresis: 10),
            Self.v3("svol", .volume(.above(0)), scope: .series("s"))
        ]
        let series = SeriesDefinition(name: "s", kind: .mean, members: ["ex-a:BTC", "ex-b:BTC"])
        let engine = Engine(rules: rules, series: [series])
        let alerts = Self.run(
            engine,
            [
                Self.tick(1, "ex-a", "BTC", 1, volume: 1001), // fires
                Self.tick(2, "ex-a", "BTC", 1, volume: 950), // not ≤ 900: stays disarmed
                Self.tick(3, "ex-a", "BTC", 1), // unknown
                Self.tick(4, "ex-a", "BTC", 1, volume: 1200), // disarmed
                Self.tick(5, "ex-a", "BTC", 1, volume: 900), // re-arms
                Self.tick(6, "ex-a", "BTC", 1, volume: 1100)
            ])
        #expect(alerts.map(\.id) == ["vol:ex-a:BTC:1", "vol:ex-a:BTC:6"])
        #expect(alerts.map(\.value) == [1001, 1100])
        #expect(alerts.first?.threshold == .value(1000))
        #expect(alerts.first?.condition == "volume above 1000")
    }

    @Test("within one tick: the key's rules, then the portfolios holding it, then its series")
    func eventOrder() {
        let portfolio = Portfolio(name: "pf", holdings: [.init(symbol: "ex-a:BTC", amount: 2)])
        let series = SeriesDefinition(name: "s", kind: .max, members: ["ex-a:BTC", "BTC"])
        let rules = [
            Self.v3("series", .price(.above(0)), scope: .series("s")),
            Self.v3("pf", .price(.above(0)), scope: .portfolio("pf")),
            Self.v3("key", .price(.above(0)), scope: .symbols(["ex-a:BTC"]))
        ]
        let engine = Engine(rules: rules, portfolios: [portfolio], series: [series])
        let alerts = Self.run(engine, [Self.tick(7, nil, "BTC", 5), Self.tick(8, "ex-a", "BTC", 3)])
        // The tick without a source: only the series (BTC is its member, not the portfolio's holding).
        #expect(alerts.map(\.id) == ["series:@S:7", "key:ex-a:BTC:8", "pf:@PF:8"])
        #expect(alerts[2].price == 6)
    }

    @Test("keys and series state survive a restart: pieces give the events of one run")
    func restoreKeysAndSeries() throws {
        let series = SeriesDefinition(name: "s", kind: .median, members: ["ex-a:BTC", "ex-b:BTC", "BTC"], quorum: 2)
        let rules = [
            Self.v3("cross", .price(.crossesAbove(100)), scope: .series("s")),
            Self.v3("k", .price(.crossesAbove(100)), scope: .symbols(["BTC"]))
        ]
        let ticks = [
            Self.tick(1000, "ex-a", "BTC", 99), Self.tick(2000, "ex-b", "BTC", 99), Self.tick(3000, nil, "BTC", 99),
            Self.tick(4000, "ex-a", "BTC", 101), Self.tick(5000, "ex-b", "BTC", 102), Self.tick(6000, nil, "BTC", 101)
        ]
        let whole = Self.run(Engine(rules: rules, series: [series]), ticks).map(\.id)
        var saved: [SymbolSnapshot] = []
        var pieces: [String] = []
        for piece in [ticks[0..<3], ticks[3..<4], ticks[4...]] {
            let engine = Engine(rules: rules, series: [series])
            engine.restore(try saved.map { try SymbolSnapshot(decoding: $0.encoded()) })
            pieces += Self.run(engine, Array(piece)).map(\.id)
            saved = engine.snapshotAll()
        }
        #expect(whole == ["k:ex-a:BTC:4000", "k:ex-b:BTC:5000", "cross:@S:5000", "k:BTC:6000"])
        #expect(pieces == whole)
        #expect(saved.map(\.symbol).sorted() == ["@S", "BTC", "ex-a:BTC", "ex-b:BTC"])
    }
}
