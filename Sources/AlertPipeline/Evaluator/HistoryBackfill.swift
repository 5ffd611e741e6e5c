import AlertCore
import AlertFeeds
import AlertHTTP
import AlertStore

/// The backfill step of `run` and `check --source` (Docs/candles.md): the symbols the rules
/// need history for and the state folder's ledger does not list yet are filled from the
/// source's candles and seeded into the engine before their first live tick. The ledger
/// entries it returns are to be recorded once the state holding the seeded history is saved,
/// so a run that ends before that fetches again rather than counting history it lost.
public enum HistoryBackfill {
    public enum Line {
        /// What was filled (a daemon logs it; `check` stays quiet).
        case info(String)
        /// A symbol without candles, a source without candle history.
        case notice(String)
        /// A fetch that failed (named by its URL).
        case warning(String)
    }

    /// Fills each need that `filled` (the ledger's reach per symbol) does not cover yet.
    /// A symbol whose fetch failed gets no entry, so the next run tries it again; one without
    /// candles gets an entry with 0 candles, so it is not asked again.
    public static func fill(_ needs: [Backfill.Need], source: any PriceSource, http: any HTTPClient, engine: Engine,
                     filled: [String: Int64], now: Int64, say: (Line) -> Void) async -> [BackfillLedger.Entry] {
        let todo = needs.filter { (filled[$0.symbol] ?? 0) < $0.reach }.sorted { $0.symbol < $1.symbol }
        guard !todo.isEmpty else { return [] }
        let name = source.name
        guard let history = source.candleHistory else {
            say(.notice("\(name) has no candles: the windows of \(todo.count) symbols wait until live prices cover them"))
            return todo.map { BackfillLedger.Entry(source: name, symbol: $0.symbol, reach: $0.reach, fetchedAt: now, candles: 0) }
        }
        var entries: [BackfillLedger.Entry] = []
        var candles = 0
        let backfill = Backfill(history: history, http: http)
        // One symbol at a time: its candles are seeded and let go before the next is fetched.
        for need in todo {
            switch await backfill.fetch(need) {
            case .candles(let found):
                Backfill.seed(found, symbol: need.symbol, into: engine)
                candles += found.count
                entries.append(BackfillLedger.Entry(source: name, symbol: need.symbol, reach: need.reach, fetchedAt: now, candles: found.count))
            case .none:
                say(.notice("\(name): no candles for \(need.symbol): its windows wait until live prices cover them"))
                entries.append(BackfillLedger.Entry(source: name, symbol: need.symbol, reach: need.reach, fetchedAt: now, candles: 0))
            case .failed(let error):
                say(.warning("\(name): candles for \(need.symbol) not fetched: \(error); its windows wait until live prices cover them (tried again on the next run)"))
            }
        }
        let reach = todo.map(\.reach).max() ?? 0
        let symbols = entries.filter { $0.candles > 0 }.count
        say(.info("\(name): history of \(symbols) of \(todo.count) symbols filled from \(candles) candles (up to \(DurationText.format(reach)) back)"))
        return entries
    }
}

extension Evaluator {
    /// How far back each symbol the rules need history for must be filled (`match` rules: under
    /// the market list in use).
    public var historyReaches: [String: Backfill.Reach] {
        Backfill.reaches(rules: ruleSet.rules, markets: markets, portfolios: ruleSet.portfolios)
    }

    /// Fills the history of `needs` from `source`'s candles into the engine (see
    /// `HistoryBackfill.fill`); nothing before the engine exists.
    public func fillHistory(_ needs: [Backfill.Need], source: any PriceSource, http: any HTTPClient,
                            filled: [String: Int64], now: Int64,
                            say: (HistoryBackfill.Line) -> Void) async -> [BackfillLedger.Entry] {
        guard let engine else { return [] }
        return await HistoryBackfill.fill(needs, source: source, http: http, engine: engine, filled: filled,
                                          now: now, say: say)
    }
}
