import AlertModel
import AlertRules
import Testing

@testable import AlertPipeline

/// `FeedSymbols.needed`: which symbols each feed subscribes, decided from the rules alone.
@Suite struct FeedSymbolsTests {
    static func rule(_ id: String, _ scope: Scope, enabled: Bool = true) -> Rule {
        Rule(id: id, scope: scope, condition: .price(.above(1)), enabled: enabled, fileVersion: 3)
    }

    static func ruleSet(_ rules: [Rule], portfolios: [Portfolio] = [], series: [SeriesDefinition] = []) -> RuleSet {
        var set = RuleSet(rules: rules, sinks: [:], portfolios: portfolios)
        set.sources = [SourceDefinition(name: "bx", type: "binance"), SourceDefinition(name: "kr", type: "kraken")]
        set.series = series
        return set
    }

    @Test func unqualifiedKeysGoToEveryFeedQualifiedOnlyToTheirSource() {
        let set = Self.ruleSet([
            Self.rule("a", .symbols(["BTC/USDT"])),
            Self.rule("b", .symbols(["bx:ETH/BTC", "kr:SOL/EUR"])),
            Self.rule("off", .symbols(["DOGE/USD", "bx:ADA/USDT"]), enabled: false)
        ])
        #expect(FeedSymbols.needed(by: set, source: "bx") == ["BTC/USDT", "ETH/BTC"])
        #expect(FeedSymbols.needed(by: set, source: "kr") == ["BTC/USDT", "SOL/EUR"])
        // `--source`'s ticks have no source: only unqualified keys name them.
        #expect(FeedSymbols.needed(by: set, source: nil) == ["BTC/USDT"])
    }

    @Test func portfolioHoldingsAndSeriesMembersAreNeeded() {
        let set = Self.ruleSet(
            [Self.rule("p", .portfolio("bag")), Self.rule("s", .series("btc"))],
            portfolios: [
                Portfolio(
                    name: "bag",
                    holdings: [.init(symbol: "kr:XRP/EUR", amount: 1), .init(symbol: "LTC/USDT", amount: 2)])
            ],
            series: [SeriesDefinition(name: "btc", kind: .median, members: ["bx:BTC/USDT", "kr:BTC/USD", "@BAG"])])
        #expect(FeedSymbols.needed(by: set, source: "bx") == ["LTC/USDT", "BTC/USDT"])
        #expect(FeedSymbols.needed(by: set, source: "kr") == ["XRP/EUR", "LTC/USDT", "BTC/USD"])
    }

    @Test func anEnabledMatchRuleThatCanApplyNeedsEveryMarket() {
        let symbol = Self.rule("a", .symbols(["BTC/USDT"]))
        let onlyKraken = Self.ruleSet([symbol, Self.rule("m", .match(MarketFilter(quote: "EUR", sources: ["kr"])))])
        #expect(FeedSymbols.needed(by: onlyKraken, source: "kr") == nil)
        #expect(FeedSymbols.needed(by: onlyKraken, source: "bx") == ["BTC/USDT"])
        #expect(FeedSymbols.needed(by: onlyKraken, source: nil) == ["BTC/USDT"])
        let everywhere = Self.ruleSet([symbol, Self.rule("m", .match(MarketFilter(quote: "EUR")))])
        #expect(FeedSymbols.needed(by: everywhere, source: "bx") == nil)
        #expect(FeedSymbols.needed(by: everywhere, source: nil) == nil)
        let disabled = Self.ruleSet([symbol, Self.rule("m", .match(MarketFilter()), enabled: false)])
        #expect(FeedSymbols.needed(by: disabled, source: "bx") == ["BTC/USDT"])
    }

    @Test func aFeedNoKeyNamesFollowsEveryMarket() {
        let set = Self.ruleSet([Self.rule("a", .symbols(["kr:BTC/USD"]))])
        #expect(FeedSymbols.needed(by: set, source: "bx") == nil)
        #expect(FeedSymbols.needed(by: set, source: "kr") == ["BTC/USD"])
    }
}
