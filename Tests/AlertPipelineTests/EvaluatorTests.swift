import AlertEngine
import AlertModel
import AlertPipeline
import AlertRules
import AlertSinks
import Testing

/// The one evaluation step of `replay`, `check` and `run` (their end-to-end tests show the
/// commands behave as before; these pin what the evaluator itself guarantees).
@Suite struct EvaluatorTests {
    static func rules(_ json: String) throws -> RuleSet {
        try RuleLoader.load([RuleSource(path: "rules.json", bytes: Array(json.utf8))]).get()
    }

    static let above100 = """
        {"version": 1, "rules": [{"id": "btc-above-100", "symbol": "BTC", "when": {"price": {"above": 100}}}]}
        """

    /// Evaluates `ticks` as lines 1… of `file`; returns the events' rule ids and the drops.
    static func run(
        _ evaluator: inout Evaluator, _ ticks: [Tick], file: String = "t.jsonl"
    )
        -> (rules: [String], drops: [Drop])
    {
        var alerts: [Alert] = []
        var drops: [Drop] = []
        for (i, tick) in ticks.enumerated() {
            if let drop = evaluator.process(tick, at: .line(file: file, line: i + 1), into: &alerts) {
                drops.append(drop)
            }
        }
        return (alerts.map(\.rule), drops)
    }

    @Test("ticks in, events out; every refused tick is one Drop with its reason and place, counted in stats")
    func ticksAndDrops() throws {
        var evaluator = Evaluator(ruleSet: try Self.rules(Self.above100), markets: nil)
        let (fired, drops) = Self.run(
            &evaluator,
            [
                Tick(time: 1_000, symbol: "BTC", price: 90),
                Tick(time: 2_000, symbol: "BTC", price: 110),
                Tick(time: 1_500, symbol: "BTC", price: 120),
                Tick(time: 3_000, symbol: "BTC", price: -1),
                Tick(time: 3_000, symbol: "", price: 5)
            ])
        #expect(fired == ["btc-above-100"])
        #expect(
            drops == [
                Drop(reason: .outOfOrder, place: .line(file: "t.jsonl", line: 3)),
                Drop(reason: .invalidPrice, place: .line(file: "t.jsonl", line: 4)),
                Drop(reason: .emptySymbol, place: .line(file: "t.jsonl", line: 5))
            ])
        #expect(
            drops[0].description
                == "t.jsonl:3: dropped: time is earlier than the previous tick of this symbol (out-of-order)")
        let unreadable = evaluator.reject("expected a JSON object", at: .line(file: "t.jsonl", line: 6))
        #expect(unreadable.description == "t.jsonl:6: error: expected a JSON object; line skipped")
        let frame = evaluator.reject("not JSON", at: .feed(source: "btse"))
        #expect(frame.description == "btse: frame dropped: not JSON")
        let snapshot = Drop(reason: .invalidPrice, place: .snapshot(source: "btse", symbol: "XYZ"))
        #expect(
            snapshot.description == "btse: XYZ: dropped: price is not a finite number greater than 0 (invalid-price)")

        let stats = evaluator.stats
        #expect(stats.accepted == 2)
        #expect(stats.alerts == 1)
        #expect(stats.dropped == [.outOfOrder: 1, .invalidPrice: 1, .emptySymbol: 1, .malformed: 2])
        #expect(
            Summary.line(read: 7, stats: stats)
                == "7 ticks read, 5 dropped (2 malformed, 1 invalid-price, 1 empty-symbol, 1 out-of-order), 1 alert")
    }

    @Test(
        "waiting for markets: no tick is evaluated before the first list; the saved state goes into the engine it makes"
    )
    func restoreWaitsForTheFirstMarketList() throws {
        let crossing = try Self.rules(
            """
            {"version": 1, "rules": [{"id": "btc-crosses-100", "symbol": "BTC", "when": {"price": {"crossesAbove": 100}}}]}
            """)
        var first = Evaluator(ruleSet: crossing, markets: nil)
        #expect(Self.run(&first, [Tick(time: 1_000, symbol: "BTC", price: 90)]).rules.isEmpty)
        let saved = first.takeChanges(final: true)
        #expect(saved.map(\.symbol) == ["BTC"])

        var second = Evaluator(waitingForMarketsWith: crossing)
        second.restore(saved)
        #expect(!second.isReady)
        // Before the market list: not evaluated, not dropped, not counted.
        #expect(Self.run(&second, [Tick(time: 1_500, symbol: "BTC", price: 95)]) == ([], []))
        #expect(second.stats.accepted == 0)
        #expect(second.updateMarkets(MarketList([])) == .madeEngine(restored: 1))
        #expect(second.updateMarkets(MarketList([])) == .replaced)
        // The restored previous price (90) makes the first tick a crossing.
        #expect(Self.run(&second, [Tick(time: 2_000, symbol: "BTC", price: 110)]).rules == ["btc-crosses-100"])

        var fresh = Evaluator(waitingForMarketsWith: crossing)
        fresh.updateMarkets(MarketList([]))
        #expect(
            Self.run(&fresh, [Tick(time: 2_000, symbol: "BTC", price: 110)]).rules.isEmpty,
            "without the saved state the first tick has nothing to cross from")
    }

    @Test(
        "new listings: the first list fires nothing; a market a later list adds fires once, at its first accepted tick, across reloads"
    )
    func listings() throws {
        let listed = try Self.rules(
            """
            {"version": 2, "rules": [{"id": "new-usd", "match": {"quote": "USD"}, "when": {"listed": true}}]}
            """)
        func market(_ base: String) -> Market {
            Market(symbol: base, base: base, quote: "USD", future: false, active: true)
        }
        var evaluator = Evaluator(waitingForMarketsWith: listed)
        #expect(evaluator.watchesListings)
        evaluator.updateMarkets(MarketList([market("BTC")]))
        #expect(evaluator.takeChangedListings()?.first?.known == ["BTC"])
        #expect(evaluator.takeChangedListings() == nil, "taken: nothing changed since")
        #expect(Self.run(&evaluator, [Tick(time: 1_000, symbol: "BTC", price: 1)]).rules.isEmpty)

        evaluator.updateMarkets(MarketList([market("BTC"), market("NEW")]))
        #expect(evaluator.takeChangedListings()?.first?.pending == ["NEW"])
        #expect(Self.run(&evaluator, [Tick(time: 2_000, symbol: "NEW", price: 3)]).rules == ["new-usd"])
        #expect(Self.run(&evaluator, [Tick(time: 3_000, symbol: "NEW", price: 4)]).rules.isEmpty)
        #expect(evaluator.takeChangedListings()?.first?.pending == [])

        // A refused tick is no first tick: the market stays pending, and so it does across a reload.
        evaluator.updateMarkets(MarketList([market("BTC"), market("NEW"), market("ALT")]))
        evaluator.reload(listed)
        let refused = Self.run(&evaluator, [Tick(time: 4_000, symbol: "ALT", price: -1)])
        #expect(refused.rules.isEmpty && refused.drops.map(\.reason) == [.invalidPrice])
        #expect(Self.run(&evaluator, [Tick(time: 5_000, symbol: "ALT", price: 1)]).rules == ["new-usd"])
    }

    @Test(
        "new listings per market list (rules v3 §3): a rule-file source's list fires for its own ticks, with the source; match.source restricts; the saved known markets come before a list given first"
    )
    func listingsPerSource() throws {
        let listed = try Self.rules(
            """
            {"version": 3, "sources": {"bx": {"type": "binance"}, "ok": {"type": "okx"}},
             "rules": [{"id": "new-any", "match": {"quote": "USDT"}, "when": {"listed": true}},
                       {"id": "new-ok", "match": {"quote": "USDT", "source": "ok"}, "when": {"listed": true}}]}
            """)
        func market(_ base: String) -> Market {
            Market(symbol: base + "/USDT", base: base, quote: "USDT", future: false, active: true)
        }
        func tick(_ time: Int64, _ symbol: String, _ source: String?) -> Tick {
            var tick = Tick(time: time, symbol: symbol, price: 2)
            tick.source = source
            return tick
        }
        var evaluator = Evaluator(waitingForMarketsWith: listed)
        evaluator.updateMarkets(MarketList([market("BTC")]), source: "bx")
        evaluator.updateMarkets(MarketList([market("BTC")]), source: "ok")
        _ = evaluator.makeEngineUnlessReady()
        let first = evaluator.takeChangedListings() ?? []
        #expect(Set(first.map(\.source)) == ["bx", "ok"] && first.allSatisfy { $0.known == ["BTC/USDT"] })

        evaluator.updateMarkets(MarketList([market("BTC"), market("NEW")]), source: "bx")
        var alerts: [Alert] = []
        #expect(evaluator.process(tick(1_000, "NEW/USDT", "ok"), at: .feed(source: "ok"), into: &alerts) == nil)
        #expect(alerts.isEmpty, "NEW is new on bx's list only")
        #expect(evaluator.process(tick(1_000, "NEW/USDT", nil), at: .feed(source: "x"), into: &alerts) == nil)
        #expect(alerts.isEmpty, "nor is it on the list of ticks without a source")
        #expect(evaluator.process(tick(2_000, "NEW/USDT", "bx"), at: .feed(source: "bx"), into: &alerts) == nil)
        #expect(alerts.map(\.rule) == ["new-any"], "new-ok is restricted to ok")
        #expect(alerts.first?.source == "bx" && alerts.first?.id == "new-any:bx:NEW/USDT:2000")
        #expect(evaluator.takeChangedListings()?.map(\.source) == ["bx"])

        alerts = []
        evaluator.updateMarkets(MarketList([market("BTC"), market("ALT")]), source: "ok")
        #expect(evaluator.process(tick(3_000, "ALT/USDT", "ok"), at: .feed(source: "ok"), into: &alerts) == nil)
        #expect(alerts.map(\.rule) == ["new-any", "new-ok"])

        // check: a source's list comes before the saved markets are restored; it is still the newer.
        var check = Evaluator(ruleSet: listed, markets: nil)
        check.updateMarkets(MarketList([market("BTC"), market("NEW")]), source: "bx")
        check.restoreListings([SavedListings(source: "bx", known: ["BTC/USDT"], pending: [])])
        alerts = []
        #expect(check.process(tick(4_000, "NEW/USDT", "bx"), at: .feed(source: "bx"), into: &alerts) == nil)
        #expect(alerts.map(\.rule) == ["new-any"])
    }

    @Test("reload: unchanged rules keep their state, new rules start fresh")
    func reloadKeepsUnchangedRulesState() throws {
        var evaluator = Evaluator(ruleSet: try Self.rules(Self.above100), markets: nil)
        #expect(Self.run(&evaluator, [Tick(time: 1_000, symbol: "BTC", price: 110)]).rules == ["btc-above-100"])
        evaluator.reload(
            try Self.rules(
                """
                {"version": 1, "rules": [{"id": "btc-above-100", "symbol": "BTC", "when": {"price": {"above": 100}}},
                                         {"id": "btc-above-105", "symbol": "BTC", "when": {"price": {"above": 105}}}]}
                """))
        #expect(evaluator.ruleSet.rules.count == 2)
        // btc-above-100 fired and is not re-armed (the price stayed above): only the new rule fires.
        #expect(Self.run(&evaluator, [Tick(time: 2_000, symbol: "BTC", price: 111)]).rules == ["btc-above-105"])

        var forgetting = Evaluator(ruleSet: evaluator.ruleSet, markets: nil)
        #expect(
            Self.run(&forgetting, [Tick(time: 2_000, symbol: "BTC", price: 111)]).rules == [
                "btc-above-100", "btc-above-105"
            ],
            "the same rules without the kept state fire both")
    }

    @Test("seeded history fills windows and fires nothing; the first tick compares with it; a refused seed is a Drop")
    func seededHistory() throws {
        let change = try Self.rules(
            """
            {"version": 1, "rules": [{"id": "btc-up-5pct-5m", "symbol": "BTC", "when": {"change": {"window": "5m", "above": 5}}}]}
            """)
        var seeded = Evaluator(ruleSet: change, markets: nil)
        #expect(seeded.seed(Tick(time: 60_000, symbol: "BTC", price: 100), at: .line(file: "h.jsonl", line: 1)) == nil)
        let refused = seeded.seed(Tick(time: 60_000, symbol: "BTC", price: .nan), at: .line(file: "h.jsonl", line: 2))
        #expect(refused == Drop(reason: .invalidPrice, place: .line(file: "h.jsonl", line: 2)))
        #expect(seeded.stats.alerts == 0)
        #expect(Self.run(&seeded, [Tick(time: 400_000, symbol: "BTC", price: 110)]).rules == ["btc-up-5pct-5m"])

        var unseeded = Evaluator(ruleSet: change, markets: nil)
        #expect(Self.run(&unseeded, [Tick(time: 400_000, symbol: "BTC", price: 110)]).rules.isEmpty)
    }
}
