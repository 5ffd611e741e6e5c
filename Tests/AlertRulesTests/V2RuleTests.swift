import AlertEngine
import AlertModel
import AlertSinks
import Testing

@testable import AlertRules

/// Valid version 2 files become exactly these model values (Docs/rules.md#version-2).
@Suite struct V2RuleTests {
    static let conditions: [(when: String, expected: Condition)] = [
        (
            #"{"all": [{"price": {"above": 60000}}, {"change": {"window": "24h", "above": 5}}]}"#,
            Condition.all([.price(.above(60000)), .change(window: 86_400_000, .above(5))])
        ),
        (
            #"{"any": [{"price": {"below": 1}}, {"price": {"inside": [2, 3]}}, {"fromLow": {"window": "1h", "above": 4}}]}"#,
            .any([.price(.below(1)), .price(.inside(2, 3)), .fromLow(window: 3_600_000, .above(4))])
        ),
        (
            #"{"all": [{"any": [{"all": [{"price": {"above": 1}}, {"price": {"below": 9}}]}, {"price": {"crossesAbove": 5}}]}, {"change": {"window": "5m", "below": 0}}]}"#,
            .all([
                .any([.all([.price(.above(1)), .price(.below(9))]), .price(.crossesAbove(5))]),
                .change(window: 300_000, .below(0))
            ])
        ),
        (#"{"fromHigh": {"window": "7d", "below": -10}}"#, .fromHigh(window: 7 * 86_400_000, .below(-10))),
        (#"{"fromLow": {"above": 20, "window": "30d"}}"#, .fromLow(window: 30 * 86_400_000, .above(20))),
        (#"{"change": {"window": "400d", "above": 50}}"#, .change(window: 400 * 86_400_000, .above(50))),
        (#"{"change": {"window": "25h", "below": -1}}"#, .change(window: 25 * 3_600_000, .below(-1))),
        (#"{"change": {"window": "90m", "below": -1}}"#, .change(window: 5_400_000, .below(-1))),
        (#"{"move": {"percent": 5}}"#, .move(.percent(5))),
        (#"{"move": {"step": 1000}}"#, .move(.step(1000))),
        (
            #"{"all": [{"price": {"above": 1}}, {"price": {"above": 2}}, {"price": {"above": 3}}, {"price": {"above": 4}}, {"price": {"above": 5}}, {"price": {"above": 6}}, {"price": {"above": 7}}, {"price": {"above": 8}}]}"#,
            .all((1...8).map { Condition.price(.above(Double($0))) })
        )
    ]

    @Test(arguments: conditions)
    func conditionsBecomeTheirValues(when: String, expected: Condition) throws {
        let rule = try #require(onlyRuleV2(#"{"id": "r", "symbol": "BTC", "when": \#(when)}"#))
        #expect(rule.condition == expected)
        #expect(rule.fileVersion == 2)
        #expect(rule.extras == nil)
    }

    @Test func portfolioRulesAndPortfolios() throws {
        let set = try #require(
            ruleSet([
                (
                    "r.json",
                    ruleFileV2(
                        #"{"id": "down", "portfolio": "pf", "when": {"pnl": {"below": -10}}}, {"id": "value", "portfolio": "pf", "when": {"all": [{"pnl": {"above": 5}}, {"price": {"above": 50000}}]}}"#
                    )
                )
            ]))
        #expect(set.rules.map(\.scope) == [.portfolio("pf"), .portfolio("pf")])
        #expect(set.rules[0].condition == .pnl(.below(-10)))
        #expect(set.rules[1].condition == .all([.pnl(.above(5)), .price(.above(50000))]))
        #expect(
            set.portfolios == [
                Portfolio(
                    name: "pf", holdings: [.init(symbol: "BTC", amount: 0.5), .init(symbol: "ETH", amount: 4)],
                    cost: 40000)
            ])
        #expect(set.portfolios[0].symbol == "@PF")
    }

    @Test func portfoliosOfEveryFileInFileOrderAndUsableAcrossFiles() throws {
        let first =
            #"{"version": 2, "portfolios": {"b": {"holdings": {"SOL": 10}}, "a": {"holdings": {"BTC": 1, "ADA": 3}, "cost": 5}}, "rules": []}"#
        let second =
            #"{"version": 2, "portfolios": {"Main": {"holdings": {"ETH": 2}}}, "rules": [{"id": "r", "portfolio": "a", "when": {"pnl": {"above": 1}}}]}"#
        let set = try #require(ruleSet([("1.json", first), ("2.json", second)]))
        #expect(set.portfolios.map(\.name) == ["b", "a", "Main"])
        #expect(set.portfolios.map(\.cost) == [nil, 5, nil])
        #expect(set.portfolios[1].holdings.map(\.symbol) == ["BTC", "ADA"])
        #expect(set.portfolios[2].symbol == "@MAIN")
    }

    @Test func listedOnAMatchRule() throws {
        let rule = try #require(onlyRuleV2(#"{"id": "new", "match": {"quote": "USDT"}, "when": {"listed": true}}"#))
        #expect(rule.condition == .listed)
        #expect(rule.scope == .match(MarketFilter(quote: "USDT")))
    }

    @Test func everyRuleKeyOfVersion2IsRead() throws {
        let rule = try #require(
            onlyRuleV2(
                """
                {"id": "r", "symbol": "eth", "when": {"price": {"below": 2000}}, "repeat": {"every": "1h"}, "for": "10m",
                 "expires": "2026-12-31T00:00:00+02:00", "resolve": true, "priority": "high", "cooldown": "5m", "hysteresis": 1}
                """))
        #expect(rule.repeatMode == .rearm)
        #expect(rule.cooldown == 300_000)
        #expect(rule.hysteresis == 1)
        #expect(
            rule.extras
                == RuleExtras(
                    sustain: 600_000, remindEvery: 3_600_000, expires: 1_798_668_000_000,
                    resolve: true, highPriority: true))
    }

    @Test(arguments: [
        (#""priority": "normal""#, nil as RuleExtras?),
        (#""resolve": false"#, nil),
        (#""expires": "2030-01-01T00:00:00Z""#, RuleExtras(expires: 1_893_456_000_000)),
        (#""expires": "2030-01-01t00:00:00.5z""#, RuleExtras(expires: 1_893_456_000_500)),
        (#""repeat": "once""#, nil),
        (#""for": "1h30m""#, RuleExtras(sustain: 5_400_000))
    ])
    func oneKeyAtATime(key: String, expected: RuleExtras?) throws {
        let rule = try #require(onlyRuleV2(#"{"id": "r", "symbol": "BTC", "when": {"price": {"above": 1}}, \#(key)}"#))
        #expect(rule.extras == expected)
    }

    /// A default applies only where the rule may carry the key itself.
    @Test func defaultsApplyWhereTheRuleMayCarryTheKey() throws {
        let text = """
            {"version": 2, "defaults": {"repeat": {"every": "5m"}, "hysteresis": 1, "cooldown": "1m"},
             "rules": [{"id": "p", "symbol": "A", "when": {"price": {"above": 1}}},
                       {"id": "mp", "symbol": "A", "when": {"move": {"percent": 2}}},
                       {"id": "ms", "symbol": "A", "when": {"move": {"step": 10}}},
                       {"id": "in", "symbol": "A", "when": {"price": {"inside": [1, 2]}}},
                       {"id": "l", "match": {"quote": "USD"}, "when": {"listed": true}},
                       {"id": "c", "symbol": "A", "when": {"all": [{"price": {"inside": [1, 2]}}, {"price": {"above": 3}}]}}]}
            """
        let rules = try #require(ruleSet([("r.json", text)])).rules
        #expect(rules.map(\.extras?.remindEvery) == [300_000, nil, nil, 300_000, nil, 300_000])
        #expect(rules.map(\.hysteresis) == [1, 0, 1, 0, 0, 1])
        #expect(rules.map(\.cooldown) == Array(repeating: 60_000, count: 6))
        #expect(rules.map(\.repeatMode) == Array(repeating: .rearm, count: 6))
    }

    @Test func versionOneAndTwoFilesTogether() throws {
        let v1 =
            #"{"version": 1, "rules": [{"id": "old", "symbol": "BTC", "when": {"change": {"window": "25h30m", "above": 1}}}]}"#
        let v2 =
            #"{"version": 2.0, "rules": [{"id": "new", "symbol": "BTC", "when": {"change": {"window": "25h", "above": 1}}, "for": "1m"}]}"#
        let set = try #require(ruleSet([("a.json", v1), ("b.json", v2)]))
        #expect(set.rules.map(\.id) == ["old", "new"])
        #expect(set.rules.map(\.fileVersion) == [1, 2])
        #expect(set.rules[0].condition == .change(window: 91_800_000, .above(1)))
        #expect(set.rules[0].extras == nil)
        #expect(set.rules[1].extras == RuleExtras(sustain: 60_000))
    }

    /// The rules are read as they stream; a `version` (or `defaults`) written after them
    /// gives the same rules and the same errors.
    @Test func versionWrittenAfterTheRules() throws {
        let rules =
            #"[{"id": "r", "symbol": "BTC", "when": {"any": [{"price": {"above": 1}}, {"move": {"step": 1}}]}}, {"id": "s", "symbol": "BTC", "when": {"move": {"step": 2}}}]"#
        let defaults = #"{"repeat": {"every": "1m"}}"#
        let before = "{\"version\": 2, \"defaults\": \(defaults), \"rules\": \(rules)}"
        let after = "{\"rules\": \(rules), \"defaults\": \(defaults), \"version\": 2}"
        #expect(
            diagnostics([("r.json", before)]) == [
                #"r.json:1:139: error: 'move' cannot be inside 'all' or 'any': a move alerts against its own reference price"#
            ])
        #expect(
            diagnostics([("r.json", after)]) == [
                #"r.json:1:84: error: 'move' cannot be inside 'all' or 'any': a move alerts against its own reference price"#
            ])
        let fixed = rules.replacingOccurrences(of: #"{"move": {"step": 1}}"#, with: #"{"price": {"below": 1}}"#)
        let a = try #require(ruleSet([("r.json", "{\"version\": 2, \"defaults\": \(defaults), \"rules\": \(fixed)}")]))
        let b = try #require(ruleSet([("r.json", "{\"rules\": \(fixed), \"defaults\": \(defaults), \"version\": 2}")]))
        #expect(a.rules == b.rules)
        #expect(a.rules.map(\.extras?.remindEvery) == [60_000, nil])
        let v1After = "{\"rules\": \(fixed), \"version\": 1}"
        #expect(
            diagnostics([("r.json", v1After)]) == [
                #"r.json:1:50: error: 'any' needs "version": 2"#,
                #"r.json:1:149: error: 'move' needs "version": 2"#
            ])
    }

    @Test func expiredRulesAreWarnedAboutAtTheirPlace() throws {
        let set = try #require(
            ruleSet([
                (
                    "r.json",
                    ruleFileV2(
                        #"{"id": "old", "symbol": "BTC", "when": {"price": {"above": 1}}, "expires": "2020-01-01T00:00:00Z"},"#
                            + "\n"
                            + #"{"id": "new", "symbol": "BTC", "when": {"price": {"above": 1}}, "expires": "2030-01-01T00:00:00Z"}"#
                    )
                )
            ]))
        #expect(set.expirations.map(\.rule) == ["old", "new"])
        #expect(
            set.expiryWarnings(now: 1_700_000_000_000).map(\.description) == [
                "r.json:4:76: warning: rule 'old' expired at 2020-01-01T00:00:00.000Z; it will never fire"
            ])
        #expect(set.expiryWarnings(now: 1_577_836_800_000).count == 1)
        #expect(set.expiryWarnings(now: 1_577_836_799_999).isEmpty)
    }
}

/// `check`'s rules cache keeps the rules encoded (`Rule.encode`) and reads the files' other
/// parts again: with it, the example files give exactly the rule set of a fresh read.
@Suite struct CachedV2RulesTests {
    @Test func theCachedParseIsTheFreshParse() throws {
        let sources = try RuleLoader.readFiles(paths: ExampleRuleFilesTests.paths).get()
        let fresh = try RuleLoader.load(sources).get()
        #expect(fresh.rules.contains { $0.fileVersion == 2 && $0.extras != nil })
        let cachedRules = try Rule.decode(Rule.encode(fresh.rules))
        let cached = try RuleLoader.load(sources, cachedRules: cachedRules, rulesEnds: fresh.rulesEnds).get()
        #expect(cached.rules == fresh.rules)
        #expect(cached.portfolios == fresh.portfolios)
        #expect(cached.sinks.keys.sorted() == fresh.sinks.keys.sorted())
    }
}
