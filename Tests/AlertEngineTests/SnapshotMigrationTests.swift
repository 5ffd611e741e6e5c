import AlertModel
import AlertRules
import AlertSinks
import Testing

@testable import AlertEngine

/// Symbol states saved in the formats before the one-key snapshot (tags 1–3: the indexed
/// rules' part, then the pair-by-pair rules' "series" with times, buckets and pairs of its
/// own) are read into the one snapshot and written back in the current format. The bytes
/// below were written by `pricealert check` at commit d0a0812 (the rule and tick files are in
/// the comments); Tests/EndToEndTests/SavedStateMigrationTests restores a whole state folder
/// of that version, format 3.
@Suite struct SnapshotMigrationTests {
    /// `{"version": 1, "rules": [{"id": "btc-high", "symbol": "BTC", "when": {"change": {"window": "2m", "above": 50}}}]}`
    /// after BTC ticks 100, 101, 102 at 1700000000000 + 0, 60 000, 120 000 ms (nothing fired;
    /// the minute history is in the database's chunks).
    static let format1 = "0103000000425443010068E5CF8B01000001C03CE7CF8B0100000100000000008059400000000000000000"
    /// `{"version": 2, "rules": [{"id": "eth-held", "symbol": "ETH", "when": {"price": {"above": 100}}, "for": "10m"}]}`
    /// after ETH ticks 150, 151 at 1700000000000 + 0, 60 000 ms: the `for` rule holds since
    /// the first tick.
    static let format2 =
        "02030000004554480000000000000000000000010068E5CF8B010000010000000000E06240016052E6CF8B010000016052E6CF8B010000000000000000000001000000080000006574682D68656C644C4E9AAB6B99BFEC0100010068E5CF8B010000000000000000000000"

    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let next = hex.index(i, offsetBy: 2)
            out.append(UInt8(hex[i..<next], radix: 16)!)
            i = next
        }
        return out
    }

    @Test func formatOneIsReadAndWrittenBackInTheCurrentFormat() throws {
        let old = try SymbolSnapshot(decoding: Self.bytes(Self.format1))
        #expect(old.symbol == "BTC")
        #expect(old.firstTime == 1_700_000_000_000)
        #expect(old.lastTime == 1_700_000_120_000)
        #expect(old.lastPrice == 102)
        #expect(old.pairs.isEmpty && old.pairStates.isEmpty && old.events == nil)
        let written = old.encoded()
        #expect(written.first == SymbolSnapshot.formatVersion)
        #expect(try SymbolSnapshot(decoding: written) == old)
    }

    /// Format 2's series gives the key's first tick, `prev`, newest tick and the `for` pair's
    /// start, which a restored engine goes on from: the rule fires 10 minutes after the saved
    /// start, as continuing would have, not 10 minutes after the restart.
    @Test func formatTwoSeriesBecomesTheKeysStateAndAForStartCarriesOver() throws {
        let old = try SymbolSnapshot(decoding: Self.bytes(Self.format2))
        #expect(old.symbol == "ETH")
        #expect(old.firstTime == 1_700_000_000_000)
        #expect(old.lastTime == 1_700_000_060_000)
        #expect(old.newest == 1_700_000_060_000)
        #expect(old.lastPrice == 151)
        #expect(old.pairs.isEmpty)
        #expect(old.pairStates.map(\.rule) == ["eth-held"])
        #expect(old.pairStates.first?.state.since == 1_700_000_000_000)
        let again = try SymbolSnapshot(decoding: old.encoded())
        #expect(again == old)

        let file =
            #"{"version": 2, "rules": [{"id": "eth-held", "symbol": "ETH", "when": {"price": {"above": 100}}, "for": "10m"}]}"#
        let rules = try RuleLoader.load([RuleSource(path: "r2.json", bytes: Array(file.utf8))]).get().rules
        func fired(restoring saved: SymbolSnapshot?) -> [String] {
            let engine = Engine(rules: rules)
            if let saved { engine.restore([saved]) }
            var alerts: [Alert] = []
            engine.process(Tick(time: 1_700_000_600_000, symbol: "ETH", price: 152), into: &alerts)
            return alerts.map(\.id)
        }
        #expect(fired(restoring: again) == ["eth-held:ETH:1700000600000"])
        #expect(fired(restoring: nil).isEmpty)
    }
}

/// A key keeps one history: a market-list reload that makes a pair-by-pair `match` rule apply
/// to a key already watched (here by an indexed rule) finds the key's highs and lows since its
/// first tick, as its coverage says, never those of part of the window.
@Suite struct OneHistoryPerKeyTests {
    @Test func aReloadedMatchRuleSeesTheWholeWindowsHigh() {
        let minute: Int64 = 60_000
        let rules = [
            Rule(id: "btc-watch", scope: .symbols(["BTC"]), condition: .price(.above(1_000))),
            // Recovered to within 5 % of the last hour's high.
            Rule(
                id: "near-high", scope: .match(MarketFilter(quote: "USD")),
                condition: .fromHigh(window: 60 * minute, .above(-5)),
                fileVersion: 2)
        ]
        let engine = Engine(rules: rules, markets: MarketList([]))
        var alerts: [Alert] = []
        // 150 at minute 60, 100 from minute 61 to 90: the high of the hour before minute 91 is 150.
        for m in Int64(0)...90 {
            engine.process(Tick(time: m * minute, symbol: "BTC", price: m == 60 ? 150 : 100), into: &alerts)
        }
        engine.replaceMarkets(
            MarketList([Market(symbol: "BTC", base: "BTC", quote: "USD", future: false, active: true)]))
        engine.process(Tick(time: 91 * minute, symbol: "BTC", price: 101), into: &alerts)
        // 101 is 33 % below the hour's high of 150: not within 5 %, so nothing fires (a high
        // taken over the minutes since the reload alone, 100, would have fired).
        #expect(alerts.map(\.rule).isEmpty)
        // Once the 150 has left the window, 101 is within 5 % of the high (101) and it fires.
        engine.process(Tick(time: 121 * minute, symbol: "BTC", price: 101), into: &alerts)
        #expect(alerts.map(\.rule) == ["near-high"])
    }

    /// A key read by an indexed change rule and a pair-by-pair `from_high` rule, as format 4
    /// saved it: the minute history over the change window, and minute buckets with highs over
    /// the shorter `from_high` window only. Restored, the two are one history: the change rule
    /// finds its base among the minutes only the history had, the `from_high` rule the high only
    /// the buckets had.
    @Test func aSavedMinuteHistoryAndMinuteBucketsRestoreAsOneHistory() {
        let minute: Int64 = 60_000
        let rules = [
            Rule(id: "btc-jump", scope: .symbols(["BTC"]), condition: .change(window: 10 * minute, .above(5))),
            Rule(
                id: "btc-off-high", scope: .symbols(["BTC"]), condition: .fromHigh(window: 2 * minute, .below(-50)),
                fileVersion: 2)
        ]
        var saved = SymbolSnapshot(
            symbol: "BTC", firstTime: 0, lastTime: 12 * minute, lastPrice: 100, minutes: Array(Int64(0)...12),
            prices: [Double](repeating: 100, count: 13))
        saved.evaluatesPairs = true
        saved.newest = 12 * minute
        saved.minuteBuckets = Buckets(
            keys: [10, 11, 12], last: [100, 100, 100], high: [100, 300, 100], low: [100, 100, 100])
        let engine = Engine(rules: rules)
        engine.restore([saved])
        var alerts: [Alert] = []
        // 110 is 10 % above minute 3's 100 and 63 % below minute 11's high of 300.
        engine.process(Tick(time: 13 * minute, symbol: "BTC", price: 110), into: &alerts)
        #expect(alerts.map(\.rule) == ["btc-jump", "btc-off-high"])
        // Saved again, the one history gives both parts, each minute once, in the minute buckets:
        // the change window's base minute on, and the high.
        let again = engine.takeChanges()
        #expect(again.first?.minutes == [])
        #expect(again.first?.minuteBuckets.entries.keys.first == 3)
        #expect(again.first?.minuteBuckets.extreme(from: 11, high: true) == 300)
    }

    /// A key with buckets writes each minute once: a snapshot holding its minutes both as a
    /// history and as buckets (what format 4 wrote) encodes to the bytes of the buckets alone,
    /// and reads back as them; a key without buckets writes its history.
    @Test func aKeyWithBucketsWritesEachMinuteOnce() throws {
        let minutes = Array(Int64(0)...12)
        let prices = minutes.map { 100 + Double($0) }
        var both = SymbolSnapshot(
            symbol: "BTC", firstTime: 0, lastTime: 12 * 60_000, lastPrice: 112, minutes: minutes, prices: prices)
        both.evaluatesPairs = true
        both.minuteBuckets = Buckets(keys: minutes, last: prices, high: prices.map { $0 + 1 }, low: prices)
        var bucketsOnly = both
        (bucketsOnly.minutes, bucketsOnly.prices) = ([], [])
        #expect(both.encoded() == bucketsOnly.encoded())
        #expect(try SymbolSnapshot(decoding: both.encoded()) == bucketsOnly)

        var plain = both
        plain.evaluatesPairs = false
        plain.minuteBuckets = Buckets()
        #expect(try SymbolSnapshot(decoding: plain.encoded()) == plain)
        // 16 bytes a minute as history; 32 as buckets (with the high and low), written once.
        #expect(bucketsOnly.encoded().count - plain.encoded().count == 13 * 16 + 4)
    }
}
