import AlertModel

/// New listings (Docs/rules.md "New listings: the event") on one market list: the list of ticks
/// without a source (`source` nil), or a rule-file source's (rules v3 §3). Each enabled `match`
/// rule with `"when": {"listed": true}` that applies to the list's ticks (no `match.source`
/// for ticks without a source; none, or one naming the source, for a source's) fires once for
/// each market a fresh list adds, at that market's first valid tick after the list that added
/// it (so the event carries a real tick's time and price, and the tick's source). The first
/// list seen only becomes the known one: it fires nothing.
public struct NewListings: Sendable {
    /// The list's source: nil for ticks without a source.
    public let source: String?
    /// The `listed` rules that apply to the list's ticks, in rule order.
    private let rules: [(rule: Rule, filter: MarketFilter)]
    /// Upper-cased symbols of the last market list; nil until a first list is seen.
    public private(set) var known: Set<String>?
    /// Symbols a list added whose first tick has not come yet.
    public private(set) var pending: Set<String> = []
    /// The last list, to match a pending symbol's entries against the rules' filters; nil
    /// until a list is given (`update`).
    private var markets: MarketList?
    /// `known` or `pending` changed since `init`/`restore`: there is something to save.
    public private(set) var changed = false

    public init(rules: [Rule], source: String? = nil) {
        self.source = source
        self.rules = rules.compactMap { rule in
            guard rule.enabled, case .listed = rule.condition, case .match(let filter) = rule.scope,
                Self.applies(filter, to: source)
            else { return nil }
            return (rule, filter)
        }
    }

    /// Whether a `match` filter applies to the ticks of `source` (rules v3 §3): `match.source`
    /// restricts a rule to those sources, so such a rule never sees ticks without a source.
    static func applies(_ filter: MarketFilter, to source: String?) -> Bool {
        guard let sources = filter.sources else { return true }
        return source.map(sources.contains) ?? false
    }

    /// The same known and pending markets, watched for `rules` (reloaded rule files).
    public func with(rules: [Rule]) -> NewListings {
        var copy = NewListings(rules: rules, source: source)
        copy.known = known
        copy.pending = pending
        copy.markets = markets
        return copy
    }

    /// Whether something changed since the last call (or `restore`): there is something to save.
    public mutating func takeChanged() -> Bool {
        defer { changed = false }
        return changed
    }

    /// No `listed` rule applies to this list's ticks: nothing to watch, nothing to save.
    public var isEmpty: Bool { rules.isEmpty }

    /// What an earlier run saved (`known` nil: it had seen no list). A list given before the
    /// restore (`check` reads its prices first) is then taken as the list after the saved one.
    public mutating func restore(known: Set<String>?, pending: Set<String>) {
        self.known = known
        self.pending = pending
        changed = false
        if let markets { update(markets) }
    }

    /// A market list: its symbols that the previous list lacked wait for their first tick.
    /// A pending symbol the new list no longer has is forgotten.
    public mutating func update(_ list: MarketList) {
        let symbols = Set(list.markets.map { Symbol.normalize($0.symbol) })
        let newPending = known.map { pending.union(symbols.subtracting($0)) }.map { $0.intersection(symbols) } ?? []
        if symbols != known || newPending != pending { changed = true }
        known = symbols
        pending = newPending
        markets = list
    }

    /// After the engine accepted `tick` (of this list's source): the `listed` events of a
    /// pending symbol, in rule order.
    public mutating func process(_ tick: Tick, into alerts: inout [Alert]) {
        guard !pending.isEmpty else { return }
        let symbol = Symbol.normalize(tick.symbol)
        guard pending.remove(symbol) != nil else { return }
        changed = true
        let entries = markets?.entries(for: symbol) ?? []
        for (rule, filter) in rules where entries.contains(where: filter.matches) {
            if let expires = rule.extras?.expires, tick.time >= expires { continue }
            var alert = Alert(
                rule: rule.id, symbol: symbol, time: tick.time, price: tick.price,
                condition: Condition.listed.summary, threshold: .none, value: tick.price,
                template: rule.message ?? MessageTemplate.defaultTemplate(for: .listed),
                notify: rule.notify)
            alert.source = source
            alerts.append(alert)
        }
    }
}

/// The new listings of every market list in use: the list of ticks without a source and each
/// rule-file source's (rules v3 §3), each with the `listed` rules that apply to its ticks. A
/// list's tracker is made when its first list or its saved markets arrive; a list no `listed`
/// rule applies to is not tracked (nothing fires, nothing is saved).
public struct SourceListings: Sendable {
    private var rules: [Rule]
    /// By source; the key nil is the list of ticks without a source.
    private var lists: [String?: NewListings] = [:]
    /// Some enabled `listed` rule exists.
    public let watches: Bool

    public init(rules: [Rule]) {
        self.rules = rules
        watches = rules.contains { rule in
            guard rule.enabled, case .listed = rule.condition, case .match = rule.scope else { return false }
            return true
        }
    }

    /// The same known and pending markets of every list, watched for `rules`.
    public func with(rules: [Rule]) -> SourceListings {
        var copy = SourceListings(rules: rules)
        for (source, listings) in lists { copy.lists[source] = listings.with(rules: rules) }
        return copy
    }

    /// The tracker of `source`'s list, made when some `listed` rule applies to its ticks.
    private mutating func tracker(_ source: String?, _ body: (inout NewListings) -> Void) {
        if lists[source] == nil {
            let made = NewListings(rules: rules, source: source)
            if made.isEmpty { return }
            lists[source] = made
        }
        body(&lists[source]!)
    }

    /// The market list of `source` (nil: ticks without a source).
    public mutating func update(_ list: MarketList, source: String?) {
        tracker(source) { $0.update(list) }
    }

    /// What an earlier run saved for `source`'s list.
    public mutating func restore(known: Set<String>?, pending: Set<String>, source: String?) {
        tracker(source) { $0.restore(known: known, pending: pending) }
    }

    /// After the engine accepted `tick`: the `listed` events of its source's list.
    public mutating func process(_ tick: Tick, into alerts: inout [Alert]) {
        guard !lists.isEmpty else { return }
        lists[tick.source]?.process(tick, into: &alerts)
    }

    /// The lists whose known or pending markets changed since the last call (or the restore);
    /// nil when none did.
    public mutating func takeChanged() -> [NewListings]? {
        var changed: [NewListings] = []
        for source in lists.keys where lists[source]!.takeChanged() { changed.append(lists[source]!) }
        return changed.isEmpty ? nil : changed
    }

    /// The tracker of `source`'s list; nil when it has none yet.
    public func listings(of source: String?) -> NewListings? { lists[source] }
}

/// One market list's `listed` markets as a state folder keeps them (`ListingStore`).
public struct SavedListings: Sendable, Equatable {
    /// The list's source: nil for ticks without a source.
    public var source: String?
    /// The symbols of the last list seen; nil when none was.
    public var known: Set<String>?
    public var pending: Set<String>

    public init(source: String?, known: Set<String>?, pending: Set<String>) {
        self.source = source
        self.known = known
        self.pending = pending
    }
}
