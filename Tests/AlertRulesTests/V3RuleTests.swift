import AlertModel
import AlertSinks
import Foundation
import Testing

@testable import AlertRules

/// Valid version 3 files become exactly these model values (rules v3 §2–§5,
/// Docs/rules.md#version-3).
@Suite struct V3RuleTests {
    @Test func sourcesAreReadInFileOrder() throws {
        let set = try #require(ruleSetV3(#"{"id": "r", "symbol": "BTC", "when": {"price": {"above": 1}}}"#))
        #expect(
            set.sources == [
                SourceDefinition(name: "binance", type: "binance"),
                SourceDefinition(name: "kraken", type: "kraken", endpoint: "http://127.0.0.1:9001")
            ])
        #expect(set.rules[0].fileVersion == 3)
    }

    @Test func everySourceTypeIsAccepted() throws {
        let sources =
            "{"
            + SourceDefinition.types.enumerated().map { #""s\#($0.offset)": {"type": "\#($0.element)"}"# }
            .joined(separator: ", ") + "}"
        let set = try #require(
            ruleSetV3(#"{"id": "r", "symbol": "BTC", "when": {"price": {"above": 1}}}"#, sources: sources, series: "{}")
        )
        #expect(set.sources.map(\.type) == SourceDefinition.types)
        #expect(set.sources.map(\.name) == SourceDefinition.types.indices.map { "s\($0)" })
    }

    @Test func seriesAreReadWithTheirMembersAsKeys() throws {
        let set = try #require(ruleSetV3(#"{"id": "r", "symbol": "BTC", "when": {"price": {"above": 1}}}"#))
        #expect(
            set.series == [
                SeriesDefinition(
                    name: "btc-usd", kind: .median, members: ["binance:BTC/USDT", "kraken:BTC/USD", "BTC"],
                    maxAge: 30_000, quorum: 2),
                SeriesDefinition(name: "btc-gap", kind: .spread, members: ["kraken:BTC/USD", "binance:BTC/USDT"])
            ])
        #expect(set.series[1].quorum == 2)
        #expect(set.series[1].maxAge == 60_000)
    }

    @Test(arguments: SeriesDefinition.Kind.allCases)
    func everyKindWithItsDefaults(kind: SeriesDefinition.Kind) throws {
        let series = #"{"s": {"\#(kind.rawValue)": ["binance:ETH/USDT", "binance:BTC/USDT"]}}"#
        let set = try #require(
            ruleSetV3(#"{"id": "r", "series": "s", "when": {"price": {"above": 1}}}"#, series: series))
        #expect(
            set.series == [SeriesDefinition(name: "s", kind: kind, members: ["binance:ETH/USDT", "binance:BTC/USDT"])])
        #expect(set.series[0].quorum == (kind.isPair ? 2 : 1))
        #expect(set.rules[0].scope == .series("s"))
    }

    @Test func maxAgeAndQuorumAtTheirBounds() throws {
        let members = (1...16).map { #""binance:C\#($0)/USDT""# }.joined(separator: ", ")
        let series =
            #"{"low": {"min": ["A", "B"], "maxAge": "1s", "quorum": 1}, "high": {"max": [\#(members)], "maxAge": "1d", "quorum": 16}}"#
        let set = try #require(
            ruleSetV3(#"{"id": "r", "series": "high", "when": {"price": {"above": 1}}}"#, series: series))
        #expect(set.series.map(\.maxAge) == [1_000, 86_400_000])
        #expect(set.series.map(\.quorum) == [1, 16])
        #expect(set.series[1].members.count == 16)
    }

    @Test func qualifiedAndUnqualifiedSymbols() throws {
        let set = try #require(
            ruleSetV3(
                #"{"id": "a", "symbol": "binance:btc/usdt", "when": {"price": {"above": 1}}}, {"id": "b", "symbols": ["kraken:ETH/USD", "kraken:eth/usd", "eth/usd", "binance:ETH/USDT"], "when": {"price": {"above": 1}}}"#
            ))
        #expect(set.rules[0].scope == .symbols(["binance:BTC/USDT"]))
        #expect(set.rules[1].scope == .symbols(["kraken:ETH/USD", "ETH/USD", "binance:ETH/USDT"]))
    }

    @Test func aColonInVersionOneAndTwoFilesIsPartOfTheSymbol() throws {
        let v1 = try #require(onlyRule(#"{"id": "a", "symbol": "binance:btc", "when": {"price": {"above": 1}}}"#))
        #expect(v1.scope == .symbols(["BINANCE:BTC"]))
        let v2 = try #require(onlyRuleV2(#"{"id": "a", "symbols": ["x:eth"], "when": {"price": {"above": 1}}}"#))
        #expect(v2.scope == .symbols(["X:ETH"]))
    }

    @Test func matchSource() throws {
        let set = try #require(
            ruleSetV3(
                #"{"id": "a", "match": {"quote": "USDT", "source": "binance"}, "when": {"price": {"above": 1}}}, {"id": "b", "match": {"source": ["kraken", "binance", "kraken"]}, "when": {"change": {"window": "24h", "above": 10}}}"#
            ))
        #expect(set.rules[0].scope == .match(MarketFilter(quote: "USDT", sources: ["binance"])))
        #expect(set.rules[1].scope == .match(MarketFilter(sources: ["kraken", "binance"])))
    }

    @Test func volumeLeaves() throws {
        let set = try #require(
            ruleSetV3(
                #"{"id": "a", "symbol": "binance:BTC/USDT", "when": {"volume": {"above": 1e9}}, "hysteresis": 10}, {"id": "b", "symbol": "BTC", "when": {"all": [{"volume": {"below": 0}}, {"price": {"above": 5}}]}}"#
            ))
        #expect(set.rules[0].condition == .volume(.above(1e9)))
        #expect(set.rules[0].hysteresis == 10)
        #expect(set.rules[0].condition.summary == "volume above 1000000000")
        #expect(set.rules[1].condition == .all([.volume(.below(0)), .price(.above(5))]))
    }

    @Test func qualifiedHoldings() throws {
        let file = """
            {"version": 3, "sources": {"binance": {"type": "binance"}},
             "portfolios": {"pf": {"holdings": {"binance:btc/usdt": 0.5, "ETH": 2}, "cost": 10}},
             "rules": [{"id": "r", "portfolio": "pf", "when": {"pnl": {"above": 5}}}]}
            """
        let set = try #require(ruleSet([("r.json", file)]))
        #expect(
            set.portfolios[0].holdings == [
                Portfolio.Holding(symbol: "binance:BTC/USDT", amount: 0.5), Portfolio.Holding(symbol: "ETH", amount: 2)
            ])
    }

    /// A file's default hysteresis is meant for the rules it fits: a rule on a spread takes none.
    @Test func aDefaultHysteresisDoesNotApplyToASpreadRule() throws {
        let file = """
            {"version": 3, "sources": {"a": {"type": "okx"}, "b": {"type": "bybit"}},
             "series": {"gap": {"spread": ["a:BTC/USDT", "b:BTC/USDT"]}, "mid": {"mean": ["a:BTC/USDT", "b:BTC/USDT"]}},
             "defaults": {"hysteresis": 2},
             "rules": [{"id": "g", "series": "gap", "when": {"price": {"above": 0.5}}},
                       {"id": "m", "series": "mid", "when": {"price": {"above": 1}}},
                       {"id": "s", "symbol": "a:BTC/USDT", "when": {"price": {"above": 1}}}]}
            """
        let set = try #require(ruleSet([("r.json", file)]))
        #expect(set.rules.map(\.hysteresis) == [0, 2, 2])
    }

    /// Sources, series and the rules that use them may be in different files, and files of
    /// all three versions load together.
    @Test func definitionsInOtherFilesAndAllVersionsTogether() throws {
        let definitions =
            #"{"version": 3, "sources": {"cb": {"type": "coinbase"}}, "series": {"eth": {"mean": ["cb:ETH/USD", "ETH"]}}, "rules": []}"#
        let uses =
            #"{"version": 3, "rules": [{"id": "u", "series": "eth", "when": {"price": {"above": 1}}}, {"id": "v", "symbol": "cb:ETH/USD", "when": {"volume": {"above": 5}}}]}"#
        let v1 = #"{"version": 1, "rules": [{"id": "w", "symbol": "BTC", "when": {"price": {"above": 1}}}]}"#
        let v2 =
            #"{"version": 2, "rules": [{"id": "x", "symbol": "BTC", "when": {"fromHigh": {"window": "1h", "below": -5}}}]}"#
        let set = try #require(
            ruleSet([("v1.json", v1), ("uses.json", uses), ("v2.json", v2), ("defs.json", definitions)]))
        #expect(set.rules.map(\.id) == ["w", "u", "v", "x"])
        #expect(set.rules.map(\.fileVersion) == [1, 3, 3, 2])
        #expect(set.sources.map(\.name) == ["cb"])
        #expect(set.series.map(\.name) == ["eth"])
    }

    /// A rule file whose `version` comes after its rules is checked as the version it gives.
    @Test func versionAfterTheRules() throws {
        let file =
            #"{"rules": [{"id": "a", "series": "s", "when": {"volume": {"above": 1}}}], "series": {"s": {"min": ["A", "B"]}}, "version": 3}"#
        let set = try #require(ruleSet([("r.json", file)]))
        #expect(set.rules[0].scope == .series("s"))
        #expect(set.rules[0].fileVersion == 3)
    }

    /// The whole file that Docs/rules.md#version-3 offers to paste is valid, and shows what it says.
    @Test func theDocumentedFileIsValid() throws {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3) // V3RuleTests.swift, AlertRulesTests, Tests
        let docs = try String(contentsOfFile: parts.joined(separator: "/") + "/Docs/rules.md", encoding: .utf8)
        let section = try #require(docs.components(separatedBy: "\n## Version 3\n").last)
        let block = try #require(section.components(separatedBy: "```json\n").dropFirst().first)
        let text = try #require(block.components(separatedBy: "\n```").first)
        let set = try #require(ruleSet([("rules.json", text)]))
        #expect(set.rules.count == 7)
        #expect(set.sources.map(\.name) == ["binance", "coinbase", "kraken"])
        #expect(set.series.map(\.kind) == [.median, .spread, .ratio])
    }
}
