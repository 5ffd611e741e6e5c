import AlertEngine
import AlertFeeds
import AlertModel
import AlertStore

/// The backfill step of `run` and `check --source` (Docs/candles.md): the symbols the rules
/// need history for and the state folder's ledger does not list yet are filled from the
/// source's candles and seeded into the engine. The ledger entries it returns are to be
/// recorded once the state holding the seeded history is saved, so a run that ends before that
/// fetches again rather than counting history it lost. `check` fills before it evaluates
/// (`fill`); `run` fills beside the feed (`BackfillService`); both through one loop (`fetch`).
public enum HistoryBackfill {
    public enum Line: Sendable {
        /// What was filled (a daemon logs it; `check` stays quiet).
        case info(String)
        /// A symbol without candles, a source without candle history.
        case notice(String)
        /// A fetch that failed (named by its URL).
        case warning(String)
    }

    /// The needs that `filled` (the reach filled per symbol) does not cover yet, by symbol.
    public static func todo(_ needs: [Backfill.Need], filled: [String: Int64]) -> [Backfill.Need] {
        needs.filter { (filled[$0.symbol] ?? 0) < $0.reach }.sorted { $0.symbol < $1.symbol }
    }

    /// A source without candle history: one line, and an entry with 0 candles per need (not
    /// asked again).
    public static func withoutCandles(
        _ todo: [Backfill.Need], source: String, now: Int64
    ) -> (Line, [BackfillLedger.Entry]) {
        (
            .notice("\(source) has no candles: the windows of \(todo.count) symbols wait until live prices cover them"),
            todo.map {
                BackfillLedger.Entry(source: source, symbol: $0.symbol, reach: $0.reach, fetchedAt: now, candles: 0)
            }
        )
    }

    /// What one need's fetch means: its ledger entry (nil when the fetch failed, so the symbol is
    /// asked again) and the line to say about it, if any.
    public static func outcome(
        _ outcome: Backfill.Outcome, of need: Backfill.Need, source: String,
        now: Int64
    ) -> (entry: BackfillLedger.Entry?, line: Line?) {
        switch outcome {
        case .candles(let found):
            return (
                BackfillLedger.Entry(
                    source: source, symbol: need.symbol, reach: need.reach, fetchedAt: now, candles: found.count), nil
            )
        case .none:
            return (
                BackfillLedger.Entry(
                    source: source, symbol: need.symbol, reach: need.reach, fetchedAt: now, candles: 0),
                .notice("\(source): no candles for \(need.symbol): its windows wait until live prices cover them")
            )
        case .failed(let error):
            return (
                nil,
                .warning(
                    "\(source): candles for \(need.symbol) not fetched: \(error); its windows wait until live prices cover them (tried again on the next run)"
                )
            )
        }
    }

    /// The line that sums up one fill of `todo`.
    public static func summary(_ todo: [Backfill.Need], entries: [BackfillLedger.Entry], source: String) -> Line {
        let reach = todo.map(\.reach).max() ?? 0
        let symbols = entries.filter { $0.candles > 0 }.count
        let candles = entries.reduce(0) { $0 + $1.candles }
        return .info(
            "\(source): history of \(symbols) of \(todo.count) symbols filled from \(candles) candles (up to \(DurationText.format(reach)) back)"
        )
    }

    /// Fills each need that `filled` (the ledger's reach per symbol) does not cover yet, and
    /// seeds what it fetches into `engine` (see `fetch`).
    public static func fill(
        _ needs: [Backfill.Need], from supply: any CandleSupply, engine: Engine,
        filled: [String: Int64], now: Int64, say: (Line) -> Void
    ) async -> [BackfillLedger.Entry] {
        let todo = todo(needs, filled: filled)
        guard !todo.isEmpty else { return [] }
        return await fetch(todo, from: supply, now: now, say: say) { need, candles, _ in
            Backfill.seed(candles, symbol: need.symbol, into: engine)
        }.entries
    }

    /// The one backfill loop, of `check` (`fill`) and `run` (`BackfillService`): fetches the
    /// history of `todo` one symbol at a time and hands each symbol's candles (none for a symbol
    /// without any, or from a source without candle history) and its ledger entry to `take`
    /// before the next is fetched, so one symbol's candles are let go before the next arrive.
    /// Says a line for each symbol without candles or whose fetch failed, and one that sums the
    /// fill up. A symbol whose fetch failed gets no entry, so the next run tries it again; one
    /// without candles gets an entry with 0 candles, so it is not asked again. When the task is
    /// cancelled during a fetch, that symbol is not handed over, no summary is said, and
    /// `complete` is false; the entries handed over before are returned.
    public static func fetch(
        _ todo: [Backfill.Need], from supply: any CandleSupply, now: Int64, say: (Line) -> Void,
        take: (Backfill.Need, [Candle], BackfillLedger.Entry?) async -> Void
    ) async
        -> (entries: [BackfillLedger.Entry], complete: Bool)
    {
        let name = supply.name
        guard supply.hasCandles else {
            let (line, entries) = withoutCandles(todo, source: name, now: now)
            say(line)
            for (need, entry) in zip(todo, entries) { await take(need, [], entry) }
            return (entries, true)
        }
        var entries: [BackfillLedger.Entry] = []
        for need in todo {
            let fetched = await supply.fetch(need)
            if Task.isCancelled { return (entries, false) }
            let (entry, line) = outcome(fetched, of: need, source: name, now: now)
            if let line { say(line) }
            var candles: [Candle] = []
            if case .candles(let found) = fetched { candles = found }
            await take(need, candles, entry)
            if let entry { entries.append(entry) }
        }
        say(summary(todo, entries: entries, source: name))
        return (entries, true)
    }
}

extension Evaluator {
    /// How far back each key the rules need history for must be filled (`match` rules and
    /// unqualified symbols on rule-file sources: under the market lists in use).
    public var historyReaches: [String: Backfill.Reach] {
        Backfill.reaches(
            rules: ruleSet.rules, markets: markets, portfolios: ruleSet.portfolios,
            sourceMarkets: engine?.sourceMarkets ?? [:])
    }

    /// Fills the history of `needs` from `supply`'s candles into the engine (see
    /// `HistoryBackfill.fill`); nothing before the engine exists.
    public func fillHistory(
        _ needs: [Backfill.Need], from supply: any CandleSupply,
        filled: [String: Int64], now: Int64,
        say: (HistoryBackfill.Line) -> Void
    ) async -> [BackfillLedger.Entry] {
        guard let engine else { return [] }
        return await HistoryBackfill.fill(needs, from: supply, engine: engine, filled: filled, now: now, say: say)
    }

    /// Seeds `candles` (oldest first) as `symbol`'s history (`Candle.seededTicks`); nothing
    /// before the engine exists.
    public func seedHistory(_ candles: [Candle], symbol: String) {
        guard let engine else { return }
        Backfill.seed(candles, symbol: symbol, into: engine)
    }
}
