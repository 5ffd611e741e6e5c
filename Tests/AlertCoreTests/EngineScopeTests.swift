import Testing
@testable import AlertCore

@Suite("§4 scope and the market list")
struct EngineScopeTests {
    let markets = MarketList([
        Market(symbol: "BTC-PERP", base: "BTC", quote: "USD", future: true, active: true),
        Market(symbol: "ETH", base: "ETH", quote: "USD", future: false, active: true),
        Market(symbol: "ETH", base: "ETH", quote: "USDT", future: false, active: false),
        Market(symbol: "DOGE", base: "DOGE", quote: "EUR", future: false, active: true),
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
        #expect(Engine(rules: [Rule(id: "m", scope: .match(MarketFilter(future: true)), condition: .price(.above(0)))]).hasMatchRules)
    }

    @Test func symbolRulesApplyWhetherOrNotTheSymbolIsListed() {
        let r = rule(.price(.above(0)), symbols: ["XRP"])
        let engine = Engine(rules: [r], markets: markets)
        var alerts: [Alert] = []
        engine.process(Tick(time: 1, symbol: "XRP", price: 1), into: &alerts)
        #expect(alerts.map(\.symbol) == ["XRP"])
    }
}
