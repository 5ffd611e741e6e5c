import AlertEngine
import AlertModel
import AlertStore
import Platform

/// What `check` restores from the state folder before it evaluates, and in which order.
extension CheckRun {
    /// The prices a check evaluates, as `input` read them (a tick file or a source).
    public struct Input {
        public var ticks: [Tick]
        /// Each tick's line in the tick file (nil: a source's snapshot).
        public var lines: [Int]?
        /// Lines of the tick file that were not ticks.
        public var malformed: Int
        /// The market list to use (nil: none).
        public var markets: MarketsSave?
        /// Rule-file sources' market lists fetched now, to keep with the state.
        public var sourceMarkets: [MarketsSave] = []

        public init(ticks: [Tick], lines: [Int]?, malformed: Int, markets: MarketsSave?) {
            self.ticks = ticks
            self.lines = lines
            self.malformed = malformed
            self.markets = markets
        }
    }

    /// What `restore` read, for `CheckRun` and the summary line.
    public struct Restored {
        public var input: Input
        /// The market list to save with the state (nil: the saved one is still current).
        public var marketsToSave: MarketsSave?
        /// Where new listings are kept (nil: no `listed` rules).
        public var listings: (any ListingKeeper)?
        /// Ticks timed after this (epoch ms) are refused (nil: a tick file, which is history).
        public var liveLimit: Int64?
        /// `check --source`: how far back the ledger says each symbol's history is filled.
        public var filled: [String: Int64]?
    }

    /// Restores into `evaluator` what the previous check saved in `store` (a state folder or a
    /// PostgreSQL store), in this order: the
    /// saved market list, handed to `input`, which reads the prices and gives the list to use;
    /// the known and pending listings; that list; the state of the ticked symbols only, and of
    /// their minute history what these ticks look up; and for a source (`maxTickSkew` given,
    /// ms) the ledger of filled history. A source's ticks are timed by now's clocks: saved times
    /// beyond the local clock and the skew are forgotten, with a warning on standard error
    /// (Docs/rules.md#ticks-from-the-future); a tick file is history. Throws what reading the
    /// store or `input` throws.
    public static func restore(
        _ evaluator: inout Evaluator, from store: any DurableStore, source: String?, maxTickSkew: Int64,
        input: (_ saved: MarketsSave?, _ evaluator: inout Evaluator) async throws -> Input
    ) async throws -> Restored {
        let listings = evaluator.watchesListings ? store.listings : nil
        let saved = try await store.engine.loadMarkets()
        let read = try await input(saved, &evaluator)
        if let listings {
            evaluator.restoreListings(try await listings.load(sources: evaluator.ruleSet.sources.map(\.name)))
        }
        if let list = read.markets { evaluator.updateMarkets(MarketList(list.markets)) }
        let liveLimit = source == nil ? nil : Wallclock.millis() + maxTickSkew
        if let forgotten = evaluator.restore(
            try await store.engine.load(lookingUp: evaluator.historyLookups(for: read.ticks)),
            forgettingAfter: liveLimit), let liveLimit
        {
            StandardError.write(
                "pricealert: warning: \(forgotten.warning(limit: liveLimit, why: "beyond the local clock and --max-tick-skew"))"
            )
        }
        var filled: [String: Int64]?
        if let source { filled = try await store.ledger.reaches(source: source) }
        return Restored(
            input: read, marketsToSave: read.markets.flatMap { $0 == saved ? nil : $0 }, listings: listings,
            liveLimit: liveLimit, filled: filled)
    }

    /// A check of what `restored` read: its listings, the market list to save and the limit
    /// on tick times.
    public init(
        evaluator: consuming Evaluator, store: any DurableStore, delivery: AlertDelivery, drainTimeout: Duration,
        restored: Restored
    ) {
        self.init(evaluator: evaluator, store: store, delivery: delivery, drainTimeout: drainTimeout)
        listings = restored.listings
        marketsToSave = restored.marketsToSave
        sourceMarketsToSave = restored.input.sourceMarkets
        notAfter = restored.liveLimit ?? .max
    }
}
