import Testing

@testable import AlertRules

/// Every error a version 3 file can have (rules v3 §8, Docs/rules.md#version-3-errors), at its
/// place. In files built by `ruleFileV3` the sources sit on line 2, the series on line 3 and
/// the one rule on line 5; each expected column was counted from the text it points at.
@Suite struct V3ErrorTests {
    static let ruleCases: [(rule: String, expected: [String])] = [
        // a qualified symbol naming an undefined source
        (
            #"{"id": "a", "symbol": "binanse:BTC", "when": {"price": {"above": 1}}}"#,
            [#"r.json:5:23: error: unknown source 'binanse' in "binanse:BTC" (did you mean 'binance'?)"#]
        ),
        (
            #"{"id": "a", "symbols": ["BTC", "okx:BTC"], "when": {"price": {"above": 1}}}"#,
            [#"r.json:5:32: error: unknown source 'okx' in "okx:BTC""#]
        ),
        (
            #"{"id": "a", "symbol": ":BTC", "when": {"price": {"above": 1}}}"#,
            [#"r.json:5:23: error: ":BTC" needs a source name before ':' (source:SYMBOL)"#]
        ),
        (
            #"{"id": "a", "symbol": "binance:", "when": {"price": {"above": 1}}}"#,
            [#"r.json:5:23: error: "binance:" needs a symbol after ':' (source:SYMBOL)"#]
        ),
        (
            #"{"id": "a", "symbol": "binance:@X", "when": {"price": {"above": 1}}}"#,
            [
                #"r.json:5:23: error: "binance:@X": a source's symbol never starts with '@' (those are portfolio and series values)"#
            ]
        ),
        (
            #"{"id": "a", "symbol": "@btc-usd", "when": {"price": {"above": 1}}}"#,
            [
                #"r.json:5:23: error: symbol "@btc-usd" is a portfolio's or series' value: only a rule with "portfolio": NAME or "series": NAME sees it"#
            ]
        ),
        // match.source
        (
            #"{"id": "a", "match": {"source": ["binance", "krakn"]}, "when": {"price": {"above": 1}}}"#,
            [#"r.json:5:45: error: unknown source 'krakn' in 'match' (did you mean 'kraken'?)"#]
        ),
        (
            #"{"id": "a", "match": {"source": []}, "when": {"price": {"above": 1}}}"#,
            [#"r.json:5:33: error: 'source' in 'match' must not be empty"#]
        ),
        (
            #"{"id": "a", "match": {"source": 1}, "when": {"price": {"above": 1}}}"#,
            [#"r.json:5:33: error: 'source' in 'match' must be a source name or an array of them, found number"#]
        ),
        (
            #"{"id": "a", "match": {}, "when": {"price": {"above": 1}}}"#,
            [
                #"r.json:5:22: error: 'match' is empty and would match every market; give at least one of 'future', 'quote', 'base', 'active' or 'source'"#
            ]
        ),
        // the series scope
        (
            #"{"id": "a", "series": "btc-gpa", "when": {"price": {"above": 1}}}"#,
            [#"r.json:5:23: error: unknown series 'btc-gpa' (did you mean 'btc-gap'?)"#]
        ),
        (
            #"{"id": "a", "series": "btc-gap", "when": {"all": [{"price": {"above": 1}}, {"volume": {"above": 1}}]}}"#,
            [
                #"r.json:5:77: error: 'volume' is not allowed on spread series 'btc-gap': a rule on a spread uses only 'price'"#
            ]
        ),
        (
            #"{"id": "a", "series": "btc-gap", "when": {"price": {"above": 1}}, "hysteresis": 1}"#,
            [
                #"r.json:5:81: error: 'hysteresis' is not allowed on spread series 'btc-gap': a spread may be 0 or negative"#
            ]
        ),
        (
            #"{"id": "a", "series": "btc-usd", "when": {"pnl": {"above": 1}}}"#,
            [
                #"r.json:5:43: error: 'pnl' needs a portfolio rule ("portfolio": NAME): it compares a portfolio's value with its cost"#
            ]
        ),
        (
            #"{"id": "btc-usd", "symbol": "BTC", "when": {"price": {"above": 1}}}"#,
            [#"r.json:5:8: error: duplicate id 'btc-usd' (first defined at r.json:3:12)"#]
        ),
        (
            #"{"id": "a", "when": {"price": {"above": 1}}}"#,
            [#"r.json:5:1: error: rule needs a scope: one of 'symbol', 'symbols', 'match', 'portfolio' or 'series'"#]
        ),
        // volume
        (
            #"{"id": "a", "symbol": "BTC", "when": {"volume": {"above": -1}}}"#,
            [#"r.json:5:59: error: 'above' must be 0 or more, found -1"#]
        ),
        (
            #"{"id": "a", "symbol": "BTC", "when": {"volume": {"above": "x"}}}"#,
            [#"r.json:5:59: error: 'above' must be a number, found string"#]
        ),
        (
            #"{"id": "a", "symbol": "BTC", "when": {"volume": {"below": 1e999}}}"#,
            [#"r.json:5:59: error: 'below' must be a finite number, found 1e999"#]
        ),
        (
            #"{"id": "a", "symbol": "BTC", "when": {"volume": {}}}"#,
            [#"r.json:5:49: error: 'volume' needs one of 'above' or 'below'"#]
        ),
        (
            #"{"id": "a", "symbol": "BTC", "when": {"volume": {"above": 1, "below": 2}}}"#,
            [#"r.json:5:62: error: 'volume' takes only one of 'above' or 'below'"#]
        ),
        (
            #"{"id": "a", "symbol": "BTC", "when": {"volume": {"abvoe": 1}}}"#,
            [#"r.json:5:50: error: unknown operator 'abvoe' (did you mean 'above'?)"#]
        ),
        (
            #"{"id": "a", "symbol": "BTC", "when": {}}"#,
            [
                #"r.json:5:38: error: 'when' needs exactly one condition: 'price', 'change', 'fromHigh', 'fromLow', 'move', 'pnl', 'all', 'any', 'listed' or 'volume'"#
            ]
        )
    ]

    @Test(arguments: ruleCases)
    func ruleError(rule: String, expected: [String]) {
        #expect(ruleDiagnosticsV3(rule) == expected)
    }

    static let okRule = #"{"id": "r", "symbol": "BTC", "when": {"price": {"above": 1}}}"#

    static let seventeenMembers = (1...17).map { "\"C\($0)\"" }.joined(separator: ", ")

    /// (sources on line 2, series on line 3, expected)
    static let definitionCases: [(sources: String, series: String, expected: [String])] = [
        (
            #"{"Bin": {"type": "binance"}}"#, "{}",
            [#"r.json:2:13: error: source name must be 1 to 32 lowercase letters, digits or '-', found "Bin""#]
        ),
        (
            "{\"" + String(repeating: "a", count: 33) + "\": {\"type\": \"okx\"}}", "{}",
            [
                "r.json:2:13: error: source name must be 1 to 32 lowercase letters, digits or '-', found \""
                    + String(repeating: "a", count: 33) + "\""
            ]
        ),
        (
            #"{"b": {"type": "coinbsae"}}"#, "{}",
            [#"r.json:2:27: error: unknown source type "coinbsae" (did you mean 'coinbase'?)"#]
        ),
        (
            #"{"b": {"type": "deribit"}}"#, "{}",
            [
                #"r.json:2:27: error: unknown source type "deribit" (known: binance, coinbase, kraken, bybit, okx, btse, poloniex, poloniex-legacy, coingecko, coinranking)"#
            ]
        ),
        (#"{"b": {}}"#, "{}", [#"r.json:2:18: error: missing required key 'type'"#]),
        (
            #"{"b": {"type": "okx", "endpoint": "ftp://x"}}"#, "{}",
            [#"r.json:2:46: error: 'endpoint' must be an http:// or https:// URL"#]
        ),
        (
            #"{"b": {"type": "okx", "endpoint": "https://"}}"#, "{}",
            [#"r.json:2:46: error: 'endpoint' must be an http:// or https:// URL"#]
        ),
        (
            #"{"b": {"type": "okx", "url": "http://x"}}"#, "{}",
            [#"r.json:2:34: error: unknown key 'url'"#]
        ),
        (
            defaultSources, #"{"s": {"mean": ["krakn:BTC", "BTC"]}}"#,
            [#"r.json:3:27: error: unknown source 'krakn' in "krakn:BTC" (did you mean 'kraken'?)"#]
        ),
        (
            "{}", #"{"s": {"mean": ["kraken:BTC", "BTC"]}}"#,
            [#"r.json:3:27: error: unknown source 'kraken' in "kraken:BTC" (no file defines 'sources')"#]
        ),
        (
            defaultSources, #"{"s": {"median": ["BTC"]}}"#,
            [#"r.json:3:28: error: 'median' needs 2 to 16 members, found 1"#]
        ),
        (
            defaultSources,
            "{\"s\": {\"max\": [" + seventeenMembers + "]}}",
            [#"r.json:3:25: error: 'max' needs 2 to 16 members, found 17"#]
        ),
        (
            defaultSources, #"{"s": {"spread": ["A", "B", "C"]}}"#,
            [#"r.json:3:28: error: 'spread' needs exactly 2 members [A, B], found 3"#]
        ),
        (
            defaultSources, #"{"s": {"ratio": "A"}}"#,
            [#"r.json:3:27: error: 'ratio' must be an array of exactly 2 members [A, B], found string"#]
        ),
        (
            defaultSources, #"{"s": {"min": ["binance:BTC", "binance:btc"]}}"#,
            [
                #"r.json:3:41: error: member "binance:btc" is given twice (symbols ignore case) (first at line 3, column 26)"#
            ]
        ),
        (
            defaultSources, #"{"s": {"max": ["@pf", "BTC"]}}"#,
            [
                #"r.json:3:26: error: a series member is a symbol or source:SYMBOL, never a portfolio's or series' value, found "@pf""#
            ]
        ),
        (
            defaultSources, #"{"s": {"medain": ["A", "B"]}}"#,
            [#"r.json:3:18: error: unknown key 'medain' (did you mean 'median'?)"#]
        ),
        (
            defaultSources, #"{"s": {"min": ["A", "B"], "max": ["A", "B"]}}"#,
            [#"r.json:3:37: error: series 's' has more than one kind ('min' and 'max'); give exactly one"#]
        ),
        (
            defaultSources, #"{"s": {"maxAge": "1m"}}"#,
            [#"r.json:3:17: error: series 's' needs one of 'median', 'mean', 'min', 'max', 'spread' or 'ratio'"#]
        ),
        (
            defaultSources, #"{"s": {"mean": ["A", "B"], "quorum": 0}}"#,
            [#"r.json:3:48: error: 'quorum' must be a whole number from 1 to 2"#]
        ),
        (
            defaultSources, #"{"s": {"mean": ["A", "B"], "quorum": 1.5}}"#,
            [#"r.json:3:48: error: 'quorum' must be a whole number from 1 to 2"#]
        ),
        (
            defaultSources, #"{"s": {"ratio": ["A", "B"], "quorum": 2}}"#,
            [#"r.json:3:39: error: 'quorum' is not allowed on 'ratio' series: both members must be fresh"#]
        ),
        (
            defaultSources, #"{"s": {"min": ["A", "B"], "maxAge": "999ms"}}"#,
            [#"r.json:3:47: error: 'maxAge' must be at least 1s, found "999ms""#]
        ),
        (
            defaultSources, #"{"s": {"min": ["A", "B"], "maxAge": "1d1s"}}"#,
            [#"r.json:3:47: error: 'maxAge' must be at most 1d, found "1d1s""#]
        ),
        (
            defaultSources, #"{"s s": {"min": ["A", "B"]}}"#,
            [#"r.json:3:12: error: series name must be 1 to 64 letters, digits, '.', '_' or '-', found "s s""#]
        ),
        (defaultSources, #"{"s": []}"#, [#"r.json:3:17: error: series 's' must be an object, found array"#])
    ]

    @Test(arguments: definitionCases)
    func definitionError(sources: String, series: String, expected: [String]) {
        #expect(ruleDiagnosticsV3(Self.okRule, sources: sources, series: series) == expected)
    }

    /// A version 3 key in a version 1 or 2 file names the version it needs.
    @Test func versionThreeKeysInOlderFiles() {
        #expect(
            ruleDiagnostics(#"{"id": "a", "series": "s", "when": {"price": {"above": 1}}}"#) == [
                #"r.json:4:13: error: 'series' needs "version": 3"#
            ])
        #expect(
            ruleDiagnosticsV2(#"{"id": "a", "symbol": "BTC", "when": {"volume": {"above": 1}}}"#) == [
                #"r.json:4:39: error: 'volume' needs "version": 3"#
            ])
        #expect(
            ruleDiagnosticsV2(#"{"id": "a", "match": {"source": "x"}, "when": {"price": {"above": 1}}}"#) == [
                #"r.json:4:23: error: 'match.source' needs "version": 3"#
            ])
        #expect(
            diagnostics([("r.json", #"{"version": 2, "sources": {}, "series": {}, "rules": []}"#)]) == [
                #"r.json:1:16: error: 'sources' needs "version": 3"#,
                #"r.json:1:31: error: 'series' needs "version": 3"#
            ])
        #expect(
            diagnostics([("r.json", #"{"version": 1, "series": {}, "rules": []}"#)]) == [
                #"r.json:1:16: error: 'series' needs "version": 3"#
            ])
    }

    @Test func aSourceDefinedInTwoFiles() {
        let a = #"{"version": 3, "sources": {"bn": {"type": "binance"}}, "rules": []}"#
        let b = "{\"version\": 3,\n\"sources\": {\"bn\": {\"type\": \"bybit\"}}, \"rules\": []}"
        #expect(
            diagnostics([("a.json", a), ("b.json", b)]) == [
                "b.json:2:13: error: duplicate source 'bn' (first defined at a.json:1:28)"
            ])
    }

    @Test func aSourceDefinedTwiceInOneFile() {
        let file = #"{"version": 3, "sources": {"bn": {"type": "binance"}, "bn": {"type": "okx"}}, "rules": []}"#
        #expect(
            diagnostics([("r.json", file)]) == [
                "r.json:1:55: error: duplicate key 'bn' (first at line 1, column 28)"
            ])
    }

    @Test func aQualifiedHoldingNamesADefinedSource() {
        let file = """
            {"version": 3, "sources": {"cb": {"type": "coinbase"}},
             "portfolios": {"pf": {"holdings": {"cd:BTC/USD": 1, "cb:eth/usd": 2, "CB:ETH/USD": 3}}},
             "rules": []}
            """
        #expect(
            diagnostics([("r.json", file)]) == [
                #"r.json:2:37: error: unknown source 'cd' in "cd:BTC/USD" (did you mean 'cb'?)"#,
                #"r.json:2:71: error: unknown source 'CB' in "CB:ETH/USD" (did you mean 'cb'?)"#
            ])
    }

    @Test func aHoldingGivenTwiceByItsKey() {
        let file = """
            {"version": 3, "sources": {"cb": {"type": "coinbase"}},
             "portfolios": {"pf": {"holdings": {"cb:ETH/USD": 1, "cb:eth/usd": 2}}},
             "rules": []}
            """
        #expect(
            diagnostics([("r.json", file)]) == [
                "r.json:2:54: error: holding 'cb:ETH/USD' is given twice (symbols ignore case) (first at line 2, column 37)"
            ])
    }

    @Test func aSeriesAndAPortfolioWithOneSymbol() {
        let file = """
            {"version": 3, "portfolios": {"Gap": {"holdings": {"BTC": 1}}},
             "series": {"gap": {"min": ["A", "B"]}},
             "rules": []}
            """
        #expect(
            diagnostics([("r.json", file)]) == [
                "r.json:2:13: error: series 'gap' has the same symbol '@GAP' as portfolio 'Gap' (first defined at r.json:1:31)"
            ])
    }

    @Test func aSpreadRuleInAnotherFileIsCheckedToo() {
        let definitions = #"{"version": 3, "series": {"g": {"spread": ["A", "B"]}}, "rules": []}"#
        let rules =
            #"{"version": 3, "rules": [{"id": "r", "series": "g", "when": {"change": {"window": "1h", "above": 1}}}]}"#
        #expect(
            diagnostics([("rules.json", rules), ("defs.json", definitions)]) == [
                "rules.json:1:62: error: 'change' is not allowed on spread series 'g': a rule on a spread uses only 'price'"
            ])
    }

    @Test func noSeriesDefined() {
        #expect(
            ruleDiagnosticsV3(#"{"id": "a", "series": "x", "when": {"price": {"above": 1}}}"#, series: "{}") == [
                "r.json:5:23: error: unknown series 'x' (no file defines 'series')"
            ])
    }

    /// A broken series is known by name: a rule on it is not also told it is unknown.
    @Test func aRuleOnABrokenSeriesIsNotAlsoUnknown() {
        #expect(
            ruleDiagnosticsV3(
                #"{"id": "a", "series": "s", "when": {"price": {"above": 1}}}"#, series: #"{"s": {"min": ["A"]}}"#)
                == ["r.json:3:25: error: 'min' needs 2 to 16 members, found 1"])
    }

    /// Rules are checked as they are read, and again when `defaults` comes after them: what
    /// the first check recorded about sources and series is taken back, so each error is
    /// reported once.
    @Test func rulesCheckedAgainReportEachReferenceOnce() {
        let file =
            #"{"version": 3, "rules": [{"id": "a", "series": "nope", "when": {"price": {"above": 1}}}, {"id": "b", "symbol": "zz:BTC", "when": {"price": {"above": 1}}}], "defaults": {"cooldown": "1m"}}"#
        #expect(
            diagnostics([("r.json", file)]) == [
                "r.json:1:48: error: unknown series 'nope' (no file defines 'series')",
                #"r.json:1:112: error: unknown source 'zz' in "zz:BTC" (no file defines 'sources')"#
            ])
    }
}
