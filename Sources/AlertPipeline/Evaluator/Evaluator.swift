import AlertEngine
import AlertModel
import AlertRules

/// Ticks in, events out: the one evaluation step of `replay`, `check` and `run`, which differ
/// only in where ticks come from and where events go. It holds the engine (rule state, minute
/// history, portfolios), the new-listings tracker and the state a previous run saved, and
/// reports every tick it does not take as a `Drop`.
///
/// An evaluator made with `waitingForMarkets` has no engine until the first market list
/// (`updateMarkets`): `run` learns the markets from its feed, and the saved state handed to
/// `restore` goes into the engine when it is made. Ticks before that are not evaluated.
public struct Evaluator {
    public private(set) var ruleSet: RuleSet
    private(set) var engine: Engine?
    /// `listed` rules: the known markets of each market list, and those waiting for their first tick.
    private var listings: SourceListings
    /// Saved state for the engine that the first market list makes.
    private var restoring: [SymbolSnapshot] = []
    /// Market lists of rule-file sources given before the engine exists.
    private var pendingSourceMarkets: [String: MarketList] = [:]
    /// Inputs that never reached the engine (lines or frames that were not ticks).
    private var unreadable = 0

    /// An evaluator whose engine is made now, with `markets` for `match` rules on ticks without a
    /// source and `sourceMarkets` for those of each rule-file source (replay, check).
    public init(ruleSet: RuleSet, markets: MarketList?, sourceMarkets: [String: MarketList] = [:]) {
        self.ruleSet = ruleSet
        engine = Self.engine(ruleSet, markets: markets, sourceMarkets: sourceMarkets)
        listings = SourceListings(rules: ruleSet.rules)
    }

    /// The one way an engine is made from rules: their portfolios and series with them.
    private static func engine(_ ruleSet: RuleSet, markets: MarketList?, sourceMarkets: [String: MarketList]) -> Engine
    {
        Engine(
            rules: ruleSet.rules, markets: markets, portfolios: ruleSet.portfolios, series: ruleSet.series,
            sourceMarkets: sourceMarkets)
    }

    /// An evaluator whose engine is made by the first market list (run).
    public init(waitingForMarketsWith ruleSet: RuleSet) {
        self.ruleSet = ruleSet
        listings = SourceListings(rules: ruleSet.rules)
    }

    /// The engine exists: ticks are evaluated.
    public var isReady: Bool { engine != nil }

    /// Some enabled rule is scoped by `match`: it applies to nothing without a market list
    /// (false before the engine exists).
    public var hasMatchRules: Bool { engine?.hasMatchRules ?? false }

    /// Some enabled rule fires on new listings: the market list and the known markets matter.
    public var watchesListings: Bool { listings.watches }

    /// The market list in use (nil: none yet, or none given).
    public var markets: MarketList? { engine?.markets }

    /// Some rule-file source has a market list (rules v3 §3).
    public var hasSourceMarkets: Bool { !(engine?.sourceMarkets.isEmpty ?? pendingSourceMarkets.isEmpty) }

    /// Accepted and dropped ticks and events so far; drops include inputs that were not ticks.
    public var stats: Engine.Stats {
        var stats = engine?.stats ?? Engine.Stats()
        if unreadable > 0 { stats.dropped[.malformed, default: 0] += unreadable }
        return stats
    }

    // MARK: State a previous run saved

    /// Saved symbol state: into the engine now, or into the one the first market list makes.
    /// With `forgettingAfter`, every saved time after it is taken as never seen
    /// (Docs/rules.md#ticks-from-the-future); what was forgotten is returned, for a warning.
    @discardableResult
    public mutating func restore(_ snapshots: [SymbolSnapshot], forgettingAfter limit: Int64? = nil) -> ForgottenTimes?
    {
        var snapshots = snapshots
        let forgotten = limit.flatMap { ForgottenTimes.apply(after: $0, to: &snapshots) }
        if let engine { engine.restore(snapshots) } else { restoring = snapshots }
        return forgotten
    }

    /// Takes every time after `limit` in the state as never seen (Docs/rules.md#ticks-from-the-future),
    /// so ticks after the system clock stepped back are not out of order: a new engine takes over
    /// the state with those times forgotten, as after a restart. Nil when no time was after `limit`.
    public mutating func forgetTimes(after limit: Int64) -> ForgottenTimes? {
        guard let old = engine else { return ForgottenTimes.apply(after: limit, to: &restoring) }
        var snapshots = old.snapshotAll()
        guard let forgotten = ForgottenTimes.apply(after: limit, to: &snapshots) else { return nil }
        let engine = Self.engine(ruleSet, markets: old.markets, sourceMarkets: old.sourceMarkets)
        engine.carryStats(from: old)
        engine.restore(snapshots)
        self.engine = engine
        return forgotten
    }

    /// The known and pending markets of `listed` rules a previous run saved for the market
    /// list of `source` (nil: of ticks without a source).
    public mutating func restoreListings(known: Set<String>?, pending: Set<String>, source: String? = nil) {
        listings.restore(known: known, pending: pending, source: source)
    }

    /// What a previous run saved of every market list's `listed` markets (`ListingStore.load`).
    /// With `untrackedOnly`, a list whose markets are already followed (a reload) keeps them.
    public mutating func restoreListings(_ saved: [SavedListings], untrackedOnly: Bool = false) {
        for list in saved where !untrackedOnly || listings.listings(of: list.source) == nil {
            listings.restore(known: list.known, pending: list.pending, source: list.source)
        }
    }

    /// Which minutes of saved history `ticks` look up, so only those need loading (check).
    public func historyLookups(for ticks: some Sequence<Tick>) -> [String: [ClosedRange<Int64>]] {
        engine?.historyLookups(for: ticks) ?? [:]
    }

    // MARK: Inputs

    /// What a market list did to the evaluator.
    public enum MarketsUpdate: Sendable, Equatable {
        /// The first list made the engine; `restored` symbols' saved state went into it.
        case madeEngine(restored: Int)
        /// The engine's list was replaced (`match` rules resolved again).
        case replaced
    }

    /// The market list of the ticks without a source: `listed` rules learn which markets are
    /// new, `match` rules what they apply to.
    @discardableResult
    public mutating func updateMarkets(_ list: MarketList) -> MarketsUpdate {
        listings.update(list, source: nil)
        if let engine {
            engine.replaceMarkets(list)
            return .replaced
        }
        return makeEngine(markets: list)
    }

    /// Makes the engine, when there is none yet, without a list of ticks without a source: a
    /// rule-file source's market list came first (`run` with rule-file sources).
    public mutating func makeEngineUnlessReady() -> MarketsUpdate {
        engine == nil ? makeEngine(markets: nil) : .replaced
    }

    private mutating func makeEngine(markets list: MarketList?) -> MarketsUpdate {
        let engine = Self.engine(ruleSet, markets: list, sourceMarkets: pendingSourceMarkets)
        pendingSourceMarkets = [:]
        let restored = restoring.count
        if !restoring.isEmpty {
            engine.restore(restoring)
            restoring = []
        }
        self.engine = engine
        return .madeEngine(restored: restored)
    }

    /// The market list of rule-file source `source` (rules v3 §3): `match` rules on its ticks'
    /// keys, and `listed` rules on the markets it adds. Kept for the engine until the first list
    /// without a source makes it.
    public mutating func updateMarkets(_ list: MarketList, source: String) {
        listings.update(list, source: source)
        if let engine {
            engine.replaceMarkets(list, source: source)
        } else {
            pendingSourceMarkets[source] = list
        }
    }

    /// Evaluates `tick` and appends its events to `alerts`: the rules' (Docs/rules.md#event-order),
    /// then those of new listings. Returns the drop, with `place` (built only then), when the
    /// engine refused the tick. Does nothing before the engine exists (see `isReady`).
    /// `notAfter`: for live ticks, the local clock plus `--max-tick-skew`; a tick timed after
    /// it is refused (Docs/rules.md#ticks-from-the-future).
    public mutating func process(
        _ tick: Tick, at place: @autoclosure () -> Drop.Place,
        into alerts: inout [Alert], notAfter limit: Int64 = .max
    ) -> Drop? {
        guard let engine else { return nil }
        if tick.time > limit {
            engine.countDropped(.aheadOfClock)
            return Drop(
                reason: .aheadOfClock, place: place(),
                tick: "\(UserText.escaped(tick.symbol)) at \(Timestamp.format(tick.time))")
        }
        if let reason = engine.process(tick, into: &alerts) { return Drop(reason: reason, place: place()) }
        listings.process(tick, into: &alerts)
        return nil
    }

    /// Seeded history (Docs/rules.md#seeded-history): fills windows, highs and lows, fires
    /// nothing. Returns the drop when the tick was refused.
    public mutating func seed(_ tick: Tick, at place: @autoclosure () -> Drop.Place) -> Drop? {
        guard let engine, let reason = engine.seed(tick) else { return nil }
        return Drop(reason: reason, place: place())
    }

    /// An input at `place` that was not a tick (`detail` says why): counted, and returned to report.
    public mutating func reject(_ detail: String, at place: Drop.Place) -> Drop {
        unreadable += 1
        return Drop(reason: .malformed, place: place, detail: detail)
    }

    /// Swaps in reloaded rules: a new engine takes over every symbol's state and the run's
    /// counts, so rules that did not change keep theirs (armed, cooldown, once) and changed or
    /// new rules start fresh; new listings keep their known and pending markets.
    public mutating func reload(_ rules: RuleSet) {
        if let old = engine {
            let engine = Self.engine(rules, markets: old.markets, sourceMarkets: old.sourceMarkets)
            engine.restore(old.snapshotAll())
            engine.continueCounting(from: old.stats)
            self.engine = engine
        }
        ruleSet = rules
        listings = listings.with(rules: rules.rules)
    }

    // MARK: What to save

    /// The symbols' state changed since the last call. The `final` call moves each minute
    /// history into its snapshot instead of copying it: the evaluator takes no tick after it.
    public func takeChanges(final: Bool = false) -> [SymbolSnapshot] {
        guard let engine else { return [] }
        return final ? engine.takeFinalChanges() : engine.takeChanges()
    }

    /// At most `limit` changed symbols' snapshots (see `Engine.takeChanges(limit:)`).
    public func takeChanges(limit: Int) -> [SymbolSnapshot] {
        engine?.takeChanges(limit: limit) ?? []
    }

    /// The new-listings trackers (one per market list) to save whose known or pending markets
    /// changed since the last call (or the restore); nil when nothing changed.
    public mutating func takeChangedListings() -> [NewListings]? {
        listings.takeChanged()
    }
}

/// The summary line of a run: `1000 ticks read, 3 dropped (1 malformed, 2 out-of-order), 12 alerts`.
public enum Summary {
    public static func line(read: Int, stats: Engine.Stats) -> String {
        var text = "\(read) ticks read, \(stats.droppedTotal) dropped"
        let reasons = stats.dropped.keys.sorted().map { "\(stats.dropped[$0]!) \($0.rawValue)" }
        if !reasons.isEmpty { text += " (\(reasons.joined(separator: ", ")))" }
        return text + ", \(stats.alerts) alert\(stats.alerts == 1 ? "" : "s")"
    }
}
