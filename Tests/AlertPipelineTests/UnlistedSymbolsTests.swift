import AlertModel
import AlertPipeline
import AlertRules
import Testing

/// `UnlistedSymbols`: which symbols the rules name that the list of the feed that would follow
/// them lacks (Docs/sources.md#symbols-no-market-list-has).
@Suite("unlisted symbols")
struct UnlistedSymbolsTests {
    static func feed(_ name: String, tag: String?, subscribes: Bool = true, _ symbols: [String]) -> UnlistedSymbols.Feed
    {
        UnlistedSymbols.Feed(
            name: name, tag: tag, subscribes: subscribes,
            list: MarketList(symbols.map { Market(symbol: $0, base: "B", quote: "Q", future: false, active: true) }))
    }

    @Test("a qualified key is looked up on its own source's list only; every name that uses it is listed once")
    func qualified() throws {
        let ruleSet = try EvaluatorTests.rules(
            """
            {"version": 3, "sources": {"bx": {"type": "binance"}, "ok": {"type": "okx"}},
             "portfolios": {"bag": {"holdings": {"ok:SOL/USDT": 2}}},
             "series": {"mid": {"median": ["bx:BTC/USDT", "ok:BTC/USDT"]}},
             "rules": [{"id": "a", "symbol": "bx:SOL/USDT", "when": {"price": {"above": 1}}},
                       {"id": "b", "symbols": ["ok:SOL/USDT", "ok:sol/usdt"], "when": {"price": {"above": 1}}},
                       {"id": "off", "symbol": "bx:XRP/USDT", "enabled": false, "when": {"price": {"above": 1}}}]}
            """)
        let found = UnlistedSymbols.find(
            in: ruleSet,
            feeds: [Self.feed("bx", tag: "bx", ["BTC/USDT"]), Self.feed("ok", tag: "ok", ["BTC/USDT"])],
            complete: true)
        #expect(
            found == [
                .init(feed: "bx", symbol: "SOL/USDT", namedBy: ["rule 'a'"]),
                .init(feed: "ok", symbol: "SOL/USDT", namedBy: ["rule 'b'", "portfolio 'bag'"])
            ])
        #expect(
            found[1].description
                == "ok: 'SOL/USDT' is not on its market list: rule 'b', portfolio 'bag' will get no prices of it from ok"
        )
    }

    @Test(
        "an unqualified rule symbol is reported only once every feed gave its list and none has it; a feed that follows every market is not reported on"
    )
    func unqualified() throws {
        let ruleSet = try EvaluatorTests.rules(
            """
            {"version": 3, "sources": {"bx": {"type": "binance"}, "cg": {"type": "coingecko"}},
             "rules": [{"id": "a", "symbols": ["BTC/USDT", "NOPE/USDT"], "when": {"price": {"above": 1}}},
                       {"id": "c", "symbol": "cg:NOPE", "when": {"price": {"above": 1}}}]}
            """)
        let feeds = [Self.feed("bx", tag: "bx", ["BTC/USDT"]), Self.feed("cg", tag: "cg", subscribes: false, [])]
        #expect(UnlistedSymbols.find(in: ruleSet, feeds: feeds, complete: false).isEmpty)
        #expect(
            UnlistedSymbols.find(in: ruleSet, feeds: feeds, complete: true) == [
                .init(feed: nil, symbol: "NOPE/USDT", namedBy: ["rule 'a'"])
            ])

        // Without rule-file sources, a v1 symbol is looked up on the --source list.
        let v1 = try EvaluatorTests.rules(
            #"{"version": 1, "rules": [{"id": "x", "symbol": "BTCUSDT", "when": {"price": {"above": 1}}}]}"#)
        #expect(
            UnlistedSymbols.find(in: v1, feeds: [Self.feed("binance", tag: nil, ["BTC/USDT"])], complete: false) == [
                .init(feed: "binance", symbol: "BTCUSDT", namedBy: ["rule 'x'"])
            ])
        #expect(
            UnlistedSymbols.find(
                in: v1, feeds: [Self.feed("btse", tag: nil, subscribes: false, ["BTC"])], complete: true
            ).isEmpty)
    }
}
