import AlertModel

/// The rule engine: ticks in, alerts out (Docs/rules.md#conditions, #ticks). Pure and
/// deterministic: no clock, no I/O; time is the tick's. Not thread-safe: one engine is driven by
/// one task.
///
/// One model per key (a symbol, or a portfolio's `@NAME`): `KeyState` holds its time order,
/// `prev`, history, highs and lows and the state of every (rule, key) pair. Rules are indexed
/// by symbol (and `match` rules are resolved against the market list once per symbol); the
/// `price` and `change` rules that need nothing but a threshold (`Rule.isIndexed`) are further
/// indexed by threshold inside each key's `ConditionGroup`s, an accelerator so that a tick
/// touches only the pairs whose state can change; every other rule is evaluated pair by pair
/// on the same key (`PairRules.swift`).
public final class Engine {
    public struct Stats: Sendable, Equatable {
        public var accepted = 0
        public var dropped: [DropReason: Int] = [:]
        public var alerts = 0
        /// Ticks of symbols no rule or portfolio applies to: valid and counted as accepted, but
        /// the engine keeps nothing for them (see `EngineCore.process`).
        public var unwatched = 0

        public var droppedTotal: Int { dropped.values.reduce(0, +) }

        public init() {}
    }

    public var rules: [Rule] { core.rules }
    public var stats: Stats { core.stats }
    public var markets: MarketList? { core.markets }
    /// Whether some enabled rule has a `match` scope, indexed or evaluated pair by pair (they
    /// apply to nothing without a market list).
    public var hasMatchRules: Bool { !core.matchRules.isEmpty || core.pairRules.hasMatchRules }

    /// Goes on counting from `stats` (an engine that takes over from another one, after a
    /// rule reload), so a run's counts cover the whole run.
    public func continueCounting(from stats: Stats) {
        core.stats = stats
    }

    /// All state lives in one struct, so a tick is one exclusive access to it rather than a
    /// dynamically checked access per property.
    var core: EngineCore
    /// How many events each pair emitted in its latest millisecond, for unique ids.
    var eventNumbers = EventNumbers()

    /// `rules` in evaluation order (files in the order given, rules in file order);
    /// `portfolios` and `series` in the order the files define them; `markets` the market list of
    /// ticks without a source, `sourceMarkets` each rule-file source's (rules v3 §3).
    public init(
        rules: [Rule], markets: MarketList? = nil, portfolios: [Portfolio] = [], series: [SeriesDefinition] = [],
        sourceMarkets: [String: MarketList] = [:]
    ) {
        core = EngineCore(
            rules: rules, markets: markets, portfolios: portfolios, series: series, sourceMarkets: sourceMarkets)
    }

    /// The market list of each rule-file source that has one.
    public var sourceMarkets: [String: MarketList] { core.sourceMarkets }

    /// Evaluates one tick and appends the events it gives to `alerts`, in the order of
    /// Docs/rules.md#event-order: the rules of the tick's key in rule order, then each portfolio
    /// holding the key, then each series having it as a member. Returns why the tick was
    /// dropped, or nil when it was accepted.
    @discardableResult
    public func process(_ tick: Tick, into alerts: inout [Alert]) -> DropReason? {
        let start = alerts.count
        let reason = core.process(tick, into: &alerts)
        if alerts.count > start { eventNumbers.number(&alerts, from: start) }
        return reason
    }

    /// Seeded history (Docs/rules.md#seeded-history): the tick enters its symbol's history
    /// and highs and lows and counts for window coverage; it sets no `prev` and evaluates
    /// nothing. Returns why it was dropped, or nil when it was taken.
    /// A dropped seeded tick is counted in `stats` like a dropped live one.
    @discardableResult
    public func seed(_ tick: Tick) -> DropReason? {
        guard tick.price.isFinite, tick.price > 0 else { return core.drop(.invalidPrice) }
        if let fault = tick.symbolFault { return core.drop(fault) }
        core.seed(tick.key, source: tick.source, time: tick.time, price: tick.price)
        return nil
    }

    /// Milliseconds of history the longest window of `rules` needs (0: none), for a backfill.
    public static func historyReach(of rules: [Rule]) -> Int64 {
        func reach(_ condition: Condition) -> Int64 {
            switch condition {
            case .change(let w, _), .fromHigh(let w, _), .fromLow(let w, _): return w
            case .all(let members), .any(let members): return members.map(reach).max() ?? 0
            case .price, .pnl, .move, .listed, .volume: return 0
            }
        }
        return rules.lazy.filter(\.enabled).map { reach($0.condition) }.max() ?? 0
    }

    /// Swaps in a reloaded market list: of the ticks without a source when `source` is nil, else
    /// of the rule-file source `source` (rules v3 §3); only the keys of that source are matched
    /// again. See `EngineCore.replaceMarkets`.
    public func replaceMarkets(_ markets: MarketList?, source: String? = nil) {
        core.replaceMarkets(markets, source: source)
    }

    /// Counts a tick that never reached the engine (a line or frame that could not be read).
    public func countDropped(_ reason: DropReason) {
        core.stats.dropped[reason, default: 0] += 1
    }

    /// Takes over `other`'s counts, for an engine that replaces it in the same run.
    public func carryStats(from other: Engine) {
        core.stats = other.core.stats
    }
}

struct EngineCore {
    let rules: [Rule]
    var stats = Engine.Stats()
    private(set) var markets: MarketList?

    /// The market list of each source a rule file defines (rules v3 §3), for its ticks' keys.
    private(set) var sourceMarkets: [String: MarketList] = [:]

    /// The enabled indexed rules by scope.
    private let indexed: ScopeIndex
    /// Indices of enabled indexed `match` rules.
    var matchRules: [Int32] { indexed.match }
    /// The rules evaluated pair by pair (`Rule.isIndexed` false) and the portfolios.
    let pairRules: PairRuleIndex
    /// The longest change window of an indexed rule in whole minutes (0: no minute history is kept).
    private let keepMinutes: Int64
    /// The minutes a key evaluating rules pair by pair keeps: its indexed and its other rules
    /// read the one minute history.
    let pairKeepMinutes: Int64
    /// Every change window of an enabled indexed rule, in whole minutes.
    let windowMinutes: Set<Int64>

    /// Key (upper-cased symbol, or `@NAME`) to its index in `symbols`.
    var symbolIndex: [String: Int] = [:]
    /// The one table of keys: everything the engine keeps of each.
    var symbols: [KeyState] = []
    /// Every key's condition groups in one array, so the part each tick reads stays in a
    /// few pages and cache lines whatever the number of rules behind them.
    private(set) var groups: [ConditionGroup] = []
    private var stamp: UInt32 = 0
    private var fired: [Int32] = []
    /// Keys no rule or portfolio applies to under the current market list, so their ticks skip
    /// the lookup; at most `unwatchedLimit`, emptied when the market list changes.
    private var unwatchedSymbols: Set<String> = []
    static let unwatchedLimit = 1 << 16
    /// Saved state of keys not seen yet in this run (see `restore`).
    var restoring: [String: SymbolSnapshot] = [:]
    /// Each rule's `RuleFingerprint` once it was needed (0: not computed yet; see `fingerprint`).
    var fingerprints: [UInt64] = []
    /// The buffer `fingerprint` encodes rules into.
    var fingerprintBuffer = ByteWriter()
    /// Rule ids to indices, built when a saved pair is first not found among its key's rules
    /// in order (see `savedPairs`).
    var ruleIndexByID: [String: Int32]?
    /// Synthetic ticks dropped for being earlier than their portfolio's previous one.
    var droppedSynthetic = 0

    init(
        rules: [Rule], markets: MarketList?, portfolios: [Portfolio] = [], series: [SeriesDefinition] = [],
        sourceMarkets: [String: MarketList] = [:]
    ) {
        self.rules = rules
        self.markets = markets
        self.sourceMarkets = sourceMarkets
        var windows: Set<Int64> = []
        for i in rules.indices where rules[i].enabled && rules[i].isIndexed {
            if case .change(let window, _) = rules[i].condition { windows.insert(window / 60_000) }
        }
        indexed = ScopeIndex(rules: rules, includes: \.isIndexed)
        keepMinutes = windows.max() ?? 0
        windowMinutes = windows
        pairRules = PairRuleIndex(rules: rules, portfolios: portfolios, series: series)
        pairKeepMinutes = max(keepMinutes, pairRules.keepMinutes)
    }

    /// The market list the keys of `source` are matched in (v1 §4's for keys without one).
    func marketList(for source: String?) -> MarketList? {
        guard let source else { return markets }
        return sourceMarkets[source]
    }

    mutating func process(_ tick: Tick, into alerts: inout [Alert]) -> DropReason? {
        guard tick.price.isFinite, tick.price > 0 else { return drop(.invalidPrice) }
        let symbol = Symbol.normalize(tick.symbol)
        // Only a portfolio or a series makes `@` ticks (Docs/rules.md#portfolios).
        if pairRules.hasSynthetic, symbol.hasPrefix("@") { return drop(tick.symbolFault ?? .portfolioSymbol) }
        let key = tick.source.map { $0 + ":" + symbol } ?? symbol
        // A key the engine keeps passed the symbol check when its state was made (a key enters
        // `symbolIndex` only through `addState`, after the check, or as a portfolio's or
        // series' own `@` key, which the line above keeps from ticks), so only an unknown key is
        // scanned.
        let s: Int
        if let known = symbolIndex[key] {
            s = known
        } else {
            if let fault = tick.symbolFault { return drop(fault) }
            guard let made = addState(key, source: tick.source) else {
                // No rule applies: keeping state for it would let a feed grow the engine (and the
                // saved state) without bound, one symbol at a time. If a market-list reload makes a
                // rule apply later, the symbol starts then, as if first seen (Docs/rules.md).
                if unwatchedSymbols.count < Self.unwatchedLimit { unwatchedSymbols.insert(key) }
                stats.accepted += 1
                stats.unwatched += 1
                return nil
            }
            s = made
        }
        if let last = symbols[s].lastTime, tick.time < last { return drop(.outOfOrder) }
        stats.accepted += 1
        let start = alerts.count
        if symbols[s].evaluatesPairs {
            // The key's rules in rule order: the indexed ones' events merged with the others'.
            let prev = symbols[s].lastPrice
            recordBuckets(s, time: tick.time, price: tick.price)
            evaluateIndexed(s, tick, into: &alerts)
            evaluatePairs(
                s, time: tick.time, price: tick.price, change24h: tick.change24h, volume24h: tick.volume24h,
                prev: prev, portfolio: nil, indexed: alerts.count > start ? fired[...] : [], start: start,
                into: &alerts)
            symbols[s].lastTime = tick.time
            symbols[s].lastPrice = tick.price
            if pairRules.isHeld(key) { evaluatePortfolios(holding: key, time: tick.time, into: &alerts) }
            if pairRules.isMember(key) { evaluateSeries(member: key, time: tick.time, into: &alerts) }
        } else {
            evaluateIndexed(s, tick, into: &alerts)
        }
        stats.alerts += alerts.count - start
        return nil
    }

    /// The indexed rules of key `s` on a valid tick in time order: their events in rule order,
    /// and what every accepted tick leaves behind (`record`).
    @inline(__always)
    private mutating func evaluateIndexed(_ s: Int, _ tick: Tick, into alerts: inout [Alert]) {
        let t = tick.time
        let p = tick.price
        let minute = floorDivMod(t, 60_000).0
        if symbols[s].quiet.admits(price: p, change24h: tick.change24h, time: t) {
            // No group can move past a level: only the symbol's own record changes.
            record(s, time: t, price: p, minute: minute)
            return
        }
        if symbols[s].quiet.valid, t >= symbols[s].quiet.until {
            // The window ran out of time (mostly: a new minute, so new change bases) and no
            // group has moved since it was built, so it can be rebuilt for this tick without
            // evaluating any group; most ticks at a minute boundary are quiet in the new one.
            symbols[s].quiet = quietWindow(s, time: t, minute: minute)
            if symbols[s].quiet.admits(price: p, change24h: tick.change24h, time: t) {
                record(s, time: t, price: p, minute: minute)
                return
            }
        }
        stamp &+= 1
        if stamp == 0 { stamp = 1 }
        if !fired.isEmpty { fired.removeAll(keepingCapacity: true) }

        let prev = symbols[s].lastPrice
        if symbols[s].firstTime == nil { symbols[s].firstTime = t }
        let first = symbols[s].firstTime ?? t
        for g in symbols[s].groups {
            let value: Double
            if groups[g].windowMinutes == 0 {
                value = p
            } else {
                guard let c = changeValue(group: g, tick: tick, minute: minute, first: first, symbol: s) else {
                    continue
                }
                value = c
            }
            if !groups[g].moveWithoutCrossing(to: value, time: t) {
                groups[g].advance(to: value, prev: prev, time: t, stamp: stamp, fired: &fired)
            }
        }
        record(s, time: t, price: p, minute: minute)
        symbols[s].quiet = quietWindow(s, time: t, minute: minute)
        guard !fired.isEmpty else { return }
        if fired.count > 1 { fired.sort() }
        let source = symbols[s].source
        let symbol = Key.eventSymbol(symbols[s].symbol, source: source)
        for r in fired {
            let rule = Int(r)
            let value: Double
            if case .change = rules[rule].condition {
                value = currentChange(rule: rule, symbol: s) ?? .nan
            } else {
                value = p
            }
            alerts.append(makeAlert(rule: rule, symbol: symbol, source: source, time: t, price: p, value: value))
        }
    }

    /// The index of `key`'s state (its ticks have `source`), made on its first tick; nil when
    /// nothing applies to it.
    @inline(__always)
    mutating func stateIndex(_ key: String, source: String?) -> Int? {
        if let known = symbolIndex[key] { return known }
        return addState(key, source: source)
    }

    /// The state index of `key`, which has none yet: a new state, or nil when no rule applies.
    private mutating func addState(_ key: String, source: String?) -> Int? {
        guard !unwatchedSymbols.contains(key), let state = makeState(key, source: source) else { return nil }
        symbols.append(state)
        symbolIndex[key] = symbols.count - 1
        return symbols.count - 1
    }

    /// A seeded history tick (Docs/rules.md#seeded-history): the key's history and coverage,
    /// nothing else. A tick older than the newest minute kept fills a minute that has no price
    /// yet (`Buckets.record`), so the bases the groups keep are looked up again.
    mutating func seed(_ key: String, source: String?, time t: Int64, price p: Double) {
        guard let s = stateIndex(key, source: source) else { return }
        symbols[s].firstTime = min(symbols[s].firstTime ?? t, t)
        symbols[s].changed = true
        symbols[s].quiet = QuietWindow()
        for g in symbols[s].groups { groups[g].base = nil }
        if symbols[s].evaluatesPairs {
            recordBuckets(s, time: t, price: p)
        } else if keepMinutes > 0, symbols[s].keepsHistory {
            let latest = t >= max(symbols[s].newest ?? .min, symbols[s].lastTime ?? .min)
            if latest { symbols[s].newest = t }
            symbols[s].minutes.record(key: floorDivMod(t, 60_000).0, price: p, latest: latest, keep: keepMinutes)
        }
    }

    /// What every accepted tick leaves behind: `prev`, the time order, the minute history (for a
    /// key evaluating rules pair by pair, `recordBuckets` recorded it already).
    @inline(__always)
    private mutating func record(_ s: Int, time t: Int64, price p: Double, minute: Int64) {
        symbols[s].changed = true
        symbols[s].lastTime = t
        symbols[s].lastPrice = p
        if keepMinutes > 0, symbols[s].keepsHistory, !symbols[s].evaluatesPairs {
            symbols[s].minutes.record(key: minute, price: p, latest: true, keep: keepMinutes)
        }
    }

    /// The prices (and source 24 h figures) for which the next ticks of symbol `s` in this
    /// minute, before `until`, cannot move any of its groups past a level: price groups give
    /// their level gates directly, change groups their gates turned into prices through this
    /// minute's base (narrowed by a relative 1e-9 against rounding, so a price inside is
    /// certainly inside in percent too). Reads each group's header in place (no copy of a
    /// group) and leaves the bases it looks up in the groups, for `changeValue`.
    private mutating func quietWindow(_ s: Int, time t: Int64, minute: Int64) -> QuietWindow {
        var window = QuietWindow()
        let (end, overflow) = (minute + 1).multipliedReportingOverflow(by: 60_000)
        window.until = overflow ? .max : end
        let first = symbols[s].firstTime ?? t
        for g in symbols[s].groups {
            window.until = min(window.until, groups[g].dueBy)
            let windowMinutes = groups[g].windowMinutes
            if windowMinutes == 0 {
                guard let (low, high) = groups[g].quietInterval else { return QuietWindow() }
                window.narrow(low, high)
                continue
            }
            let span = windowMinutes * 60_000
            if windowMinutes == 1440 {
                // A tick carrying the source's figure sets this group's value whether or not the
                // history covers the window; while the value is unknown, every such tick looks.
                (window.sourceLow, window.sourceHigh) = groups[g].quietInterval ?? (.infinity, -.infinity)
            }
            // Not covered yet: without the source's figure the group does nothing until it is,
            // whether or not its value is known.
            let (start, early) = t.subtractingReportingOverflow(span)
            guard !early, first <= start else {
                let (covered, late) = first.addingReportingOverflow(span)
                window.until = min(window.until, late ? .max : covered)
                continue
            }
            guard let (low, high) = groups[g].quietInterval,
                let base = base(group: g, target: minute - windowMinutes, symbol: s)
            else { return QuietWindow() }
            let lowPrice = base * (1 + low / 100), highPrice = base * (1 + high / 100)
            let narrowedLow = lowPrice + abs(lowPrice) * 1e-9, narrowedHigh = highPrice - abs(highPrice) * 1e-9
            if windowMinutes == 1440 {
                (window.dailyLow, window.dailyHigh) = (narrowedLow, narrowedHigh)
            } else {
                window.narrow(narrowedLow, narrowedHigh)
            }
        }
        window.valid = true
        return window
    }

    /// `base` (Docs/rules.md#change-windows) for group `g` in the minute whose window starts at `target`.
    /// Minutes before the current one are final (ticks come in time order and `target` is at
    /// least a minute back), so it is looked up once per minute and kept in the group.
    private mutating func base(group g: Int, target: Int64, symbol s: Int) -> Double? {
        if let cached = groups[g].base, cached.minute == target { return cached.price }
        guard let found = symbols[s].minutes.price(atOrBefore: target) else { return nil }
        groups[g].base = (target, found)
        return found
    }

    /// The change `c` in percent for group `g`'s window at this tick (Docs/rules.md), or nil when unknown.
    private mutating func changeValue(group g: Int, tick: Tick, minute: Int64, first: Int64, symbol s: Int) -> Double? {
        let windowMinutes = groups[g].windowMinutes
        if windowMinutes == 1440, let c = tick.change24h, c.isFinite { return c }
        // The window is whole minutes, so the minute of t − W is t's minute less W's minutes.
        let (start, overflow) = tick.time.subtractingReportingOverflow(windowMinutes * 60_000)
        guard !overflow, first <= start else { return nil }
        guard let base = base(group: g, target: minute - windowMinutes, symbol: s) else { return nil }
        return (tick.price - base) / base * 100
    }

    /// `c` of a change rule that fired on this tick: its group's coordinate, just evaluated.
    private func currentChange(rule: Int, symbol s: Int) -> Double? {
        guard case .change(let window, _) = rules[rule].condition else { return nil }
        return symbols[s].groups.lazy.map { self.groups[$0] }.first { $0.coordinate == .change(window: window) }?.value
    }

    /// The condition's text is made for each alert rather than kept per rule (100 000 rules
    /// would hold ~3 MB of them); threshold and template are cheap to take each time.
    private func makeAlert(
        rule: Int, symbol: String, source: String?, time: Int64, price: Double, value: Double
    ) -> Alert {
        let condition = rules[rule].condition
        var alert = Alert(
            rule: rules[rule].id, symbol: symbol, time: time, price: price, condition: condition.summary,
            threshold: condition.threshold, value: value,
            template: rules[rule].message ?? MessageTemplate.defaultTemplate(for: condition),
            notify: rules[rule].notify)
        alert.source = source
        return alert
    }

    mutating func drop(_ reason: DropReason) -> DropReason {
        stats.dropped[reason, default: 0] += 1
        return reason
    }

    /// Swaps in a new market list (Docs/rules.md#scope): every known symbol's `match` rules are resolved
    /// again. Pairs that still apply keep their state (armed, last fired, once); pairs that
    /// now apply start armed, or where they left off if they applied before. A changed
    /// symbol looks at all its pairs on its next tick, which decides exactly what continuing
    /// would have decided.
    mutating func replaceMarkets(_ list: MarketList?, source: String? = nil) {
        if let source { sourceMarkets[source] = list } else { markets = list }
        unwatchedSymbols = []
        if pairRules.hasMatchRules {
            for s in symbols.indices where symbols[s].source == source && !symbols[s].isSynthetic {
                symbols[s].pairRules = pairRules.applicable(
                    key: symbols[s].symbol, source: source, symbol: symbols[s].tickSymbol, markets: list, of: rules)
            }
        }
        guard !matchRules.isEmpty else { return }
        var garbage = 0
        for s in symbols.indices where symbols[s].source == source && !symbols[s].isSynthetic {
            let applicable = applicableRules(s)
            let old = symbols[s].groups
            if old.flatMap({ groups[$0].pairs.map(\.rule) }).sorted() == applicable { continue }
            // Pairs that stop applying are kept aside: if their rule applies again later, it
            // goes on from there (a `once` pair that fired never fires again).
            var saved = symbols[s].retired
            for g in old {
                for pair in groups[g].pairs { saved[pair.rule] = pair }
            }
            let fresh = buildGroups(applicable, restoring: saved)
            for rule in applicable { saved[rule] = nil }
            symbols[s].retired = Self.compacted(saved)
            let range = groups.count..<(groups.count + fresh.count)
            groups += fresh
            garbage += old.count
            symbols[s].groups = range
            symbols[s].keepsHistory = fresh.contains { $0.coordinate != .price }
            symbols[s].quiet = QuietWindow()
        }
        if garbage > 0, garbage * 2 > groups.count { compactGroups() }
    }

    /// Drops groups no symbol refers to any more.
    private mutating func compactGroups() {
        var kept: [ConditionGroup] = []
        for s in symbols.indices {
            let range = kept.count..<(kept.count + symbols[s].groups.count)
            kept += groups[symbols[s].groups]
            symbols[s].groups = range
        }
        groups = kept
    }

    /// Indices of the enabled indexed rules that apply to key `s`, in rule order (Docs/rules.md#scope).
    private func applicableRules(_ s: Int) -> [Int32] {
        let state = symbols[s]
        return indexed.applicable(
            key: state.symbol, source: state.source, symbol: state.tickSymbol, markets: marketList(for: state.source),
            of: rules)
    }

    /// Builds a new key's state: the groups of the indexed rules that apply to it and the list
    /// of the others, taking over its saved state when `restore` was given one. Nil when no rule
    /// or portfolio applies and no saved pair waits for one: the engine keeps nothing for such a key.
    private mutating func makeState(_ key: String, source: String?) -> KeyState? {
        var snapshot = restoring.removeValue(forKey: key)
        let symbol = Key.eventSymbol(key, source: source)
        let synthetic = source == nil && key.hasPrefix("@")
        let markets = marketList(for: source)
        let applicable =
            synthetic
            ? [] : indexed.applicable(key: key, source: source, symbol: symbol, markets: markets, of: rules)
        let others = pairRules.applicable(key: key, source: source, symbol: symbol, markets: markets, of: rules)
        var restoredPairs: [Int32: PairState] = [:]
        if let snapshot { restoredPairs = savedPairStates(snapshot) }
        let watchedByPairs =
            !others.isEmpty || pairRules.isHeld(key) || pairRules.isMember(key) || !restoredPairs.isEmpty
        if applicable.isEmpty, !watchedByPairs, snapshot?.pairs.isEmpty ?? true { return nil }
        // With pair-by-pair `match` rules every key keeps its buckets from its first tick: a
        // market-list reload that makes such a rule apply finds them covering what the key's
        // coverage (`firstTime`) says, so a high or low is never taken over part of a window.
        let evaluatesPairs = watchedByPairs || pairRules.hasMatchRules
        var saved: [Int32: ConditionGroup.Pair] = [:]
        if let snapshot { saved = savedPairs(snapshot, expected: applicable) }
        let fresh = buildGroups(applicable, restoring: saved)
        let range = groups.count..<(groups.count + fresh.count)
        groups += fresh
        var state = KeyState(symbol: key, groups: range, keepsHistory: fresh.contains { $0.coordinate != .price })
        state.source = source
        state.pairRules = others
        state.evaluatesPairs = evaluatesPairs
        if evaluatesPairs {
            state.minutes = Buckets(keepsExtremes: pairRules.readsExtremes)
            state.hours = Buckets(keepsExtremes: pairRules.readsExtremes)
        }
        state.pairs = restoredPairs
        if snapshot != nil {
            for rule in applicable { saved[rule] = nil }
            state.restore(&snapshot!, retired: Self.compacted(saved))
        }
        return state
    }

    /// `pairs` in storage of their own size: removing entries never shrinks a dictionary, and a
    /// symbol's (usually no) retired pairs kept the room of all its saved pairs for good
    /// (100 000 rules: 2.7 MB).
    private static func compacted(_ pairs: [Int32: ConditionGroup.Pair]) -> [Int32: ConditionGroup.Pair] {
        pairs.isEmpty ? [:] : Dictionary(uniqueKeysWithValues: pairs.map { ($0.key, $0.value) })
    }

    /// A fresh pair of rule `r`: what the engine needs of the rule to evaluate it, kept in the
    /// pair itself (the engine keeps no per-rule copies beside the rules).
    func pair(of r: Int32) -> ConditionGroup.Pair {
        let rule = rules[Int(r)]
        return ConditionGroup.Pair(
            rule: r, condition: CompiledCondition(rule.condition, hysteresis: rule.hysteresis),
            cooldown: rule.cooldown, once: rule.repeatMode == .once)
    }

    /// One group per coordinate (price, each change window), sealed; `saved` pair states are
    /// carried over by rule.
    private func buildGroups(_ applicable: [Int32], restoring saved: [Int32: ConditionGroup.Pair]) -> [ConditionGroup] {
        var groups: [ConditionGroup] = []
        // Each rule's group first, so each group's pairs are allocated once at their size (with
        // 100 000 rules, growing them by doubling left ~20 % of them empty, for good).
        var groupOf: [Int] = []
        var sizes: [Int] = []
        groupOf.reserveCapacity(applicable.count)
        for r in applicable {
            let coordinate: ConditionGroup.Coordinate
            if case .change(let window, _) = rules[Int(r)].condition {
                coordinate = .change(window: window)
            } else {
                coordinate = .price
            }
            let g = groups.firstIndex { $0.coordinate == coordinate } ?? groups.count
            if g == groups.count {
                groups.append(ConditionGroup(coordinate: coordinate))
                sizes.append(0)
            }
            sizes[g] += 1
            groupOf.append(g)
        }
        for g in groups.indices { groups[g].reserve(sizes[g]) }
        for (k, r) in applicable.enumerated() {
            groups[groupOf[k]].add(pair(of: r))
        }
        for g in groups.indices {
            groups[g].seal()
            if !saved.isEmpty { groups[g].restore(saved) }
        }
        return groups
    }
}

/// Where the next ticks of a symbol can go without any of its pairs changing state (see
/// `EngineCore.quietWindow`): such ticks skip the groups entirely. Flat, so the check a quiet
/// tick makes is a few comparisons of adjacent fields.
struct QuietWindow: Sendable {
    /// Exclusive: the minute ends (new change bases), a cooldown ends or a window becomes
    /// covered at this time. `Int64.min` admits nothing.
    var until = Int64.min
    /// Bounds on the price from the price group and the change groups below 24 h.
    var low = -Double.infinity
    var high = Double.infinity
    /// The 24 h group, for ticks that carry the source's figure: bounds on that figure
    /// (empty while the group's value is unknown; unbounded without a 24 h group).
    var sourceLow = -Double.infinity
    var sourceHigh = Double.infinity
    /// The 24 h group, for ticks that do not: bounds on the price from the history base
    /// (unbounded while the window is not covered, or without a 24 h group).
    var dailyLow = -Double.infinity
    var dailyHigh = Double.infinity
    /// Built from the groups as they are (an invalid window is never renewed, only rebuilt
    /// after the groups have looked at a tick).
    var valid = false

    init() {}

    mutating func narrow(_ low: Double, _ high: Double) {
        self.low = max(self.low, low)
        self.high = min(self.high, high)
    }

    @inline(__always)
    func admits(price p: Double, change24h: Double?, time t: Int64) -> Bool {
        guard t < until, low < p, p < high else { return false }
        // A figure that is not finite is no figure (`changeValue` falls back to the history).
        if let c = change24h, c.isFinite { return sourceLow < c && c < sourceHigh }
        return dailyLow < p && p < dailyHigh
    }
}

/// Everything the engine keeps for one key (an upper-cased symbol, `source:SYMBOL`, or a
/// portfolio's or series' `@NAME`): its time order, `prev`, its history, highs and lows, and
/// the state of each of its pairs.
struct KeyState: Sendable {
    // Stored properties are laid out in the order written: the ones a tick inside its key's
    // quiet window reads and writes (`quiet`, the flags, `lastTime`, `lastPrice`, and the open
    // bucket at the start of `minutes`) come first, so that such a tick touches the first two
    // cache lines of its state and not every line of it.
    var quiet = QuietWindow()
    /// Accepted a tick since its state was last saved.
    var changed = false
    /// Only keys with an indexed change rule, or evaluating rules pair by pair, keep `minutes`.
    var keepsHistory: Bool
    /// Evaluates rules pair by pair or is held by a portfolio: keeps `minutes` and `hours`, with
    /// highs and lows when some rule evaluated pair by pair reads them.
    var evaluatesPairs = false
    var lastTime: Int64?
    /// `prev` of Docs/rules.md#conditions: the previous valid price.
    var lastPrice: Double?
    /// The key's one history: minute buckets (the indexed change windows' bases and the other
    /// rules' windows) and hour buckets (windows over 24 h of version 2 files)
    /// (Docs/rules.md#change-windows, #highs-and-lows).
    var minutes = Buckets()
    /// Indices into the engine's `groups`: the pairs of indexed rules.
    var groups: Range<Int>
    /// The earliest tick, live or seeded (window coverage).
    var firstTime: Int64?
    /// The newest tick recorded, live or seeded.
    var newest: Int64?
    /// The key.
    let symbol: String
    /// The source of the key's ticks (rules v3 §1); nil for keys without one and `@` keys.
    var source: String?
    /// The rules evaluated pair by pair that apply, in rule order (`PairRules.swift`).
    var pairRules: [Int32] = []
    /// The state of each pair of a rule evaluated pair by pair, by rule index.
    var pairs: [Int32: PairState] = [:]
    var hours = Buckets()
    /// State of pairs whose `match` rule stopped applying at a market-list reload, or whose
    /// rule (still in the rule set) no longer applies to the symbol since the state was saved.
    var retired: [Int32: ConditionGroup.Pair] = [:]

    init(symbol: String, groups: Range<Int>, keepsHistory: Bool) {
        self.symbol = symbol
        self.groups = groups
        self.keepsHistory = keepsHistory
    }

    /// The upper-cased symbol of the key's ticks (the key less its `source:`).
    var tickSymbol: String { Key.eventSymbol(symbol, source: source) }
    /// A portfolio's or a series' `@NAME`.
    var isSynthetic: Bool { source == nil && symbol.hasPrefix("@") }
}

extension Rule {
    /// Whether the threshold-indexed path (`ConditionGroup`) evaluates the rule: a `price` or
    /// `change` condition with minute buckets, on symbols or a `match`, without `for`,
    /// reminders, `expires` or `resolve`. Every other rule is evaluated pair by pair.
    var isIndexed: Bool {
        switch scope {
        case .portfolio, .series: return false
        case .symbols, .match: break
        }
        if let e = extras, e.sustain != nil || e.remindEvery != nil || e.expires != nil || e.resolve { return false }
        switch condition {
        case .price: return true
        case .change(let window, _): return fileVersion == 1 || window <= 86_400_000
        case .fromHigh, .fromLow, .pnl, .move, .all, .any, .listed, .volume: return false
        }
    }
}
