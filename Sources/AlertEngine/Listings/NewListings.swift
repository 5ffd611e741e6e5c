import AlertModel

/// New listings (Docs/rules.md "New listings: the event"): each enabled `match` rule with
/// `"when": {"listed": true}` fires once for each market a fresh market list adds, at that
/// market's first valid tick after the list that added it (so the event carries a real tick's
/// time and price). The first list seen only becomes the known one: it fires nothing.
public struct NewListings: Sendable {
    /// The `listed` rules, in rule order.
    private let rules: [(rule: Rule, filter: MarketFilter)]
    /// Upper-cased symbols of the last market list; nil until a first list is seen.
    public private(set) var known: Set<String>?
    /// Symbols a list added whose first tick has not come yet.
    public private(set) var pending: Set<String> = []
    /// The last list, to match a pending symbol's entries against the rules' filters.
    private var markets = MarketList([])
    /// `known` or `pending` changed since `init`/`restore`: there is something to save.
    public private(set) var changed = false

    public init(rules: [Rule]) {
        self.rules = rules.compactMap { rule in
            guard rule.enabled, case .listed = rule.condition, case .match(let filter) = rule.scope else { return nil }
            return (rule, filter)
        }
    }

    /// The same known and pending markets, watched for `rules` (reloaded rule files).
    public func with(rules: [Rule]) -> NewListings {
        var copy = NewListings(rules: rules)
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

    /// No `listed` rule: nothing to watch, nothing to save.
    public var isEmpty: Bool { rules.isEmpty }

    /// What an earlier run saved (`known` nil: it had seen no list).
    public mutating func restore(known: Set<String>?, pending: Set<String>) {
        self.known = known
        self.pending = pending
        changed = false
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

    /// After the engine accepted `tick`: the `listed` events of a pending symbol, in rule order.
    public mutating func process(_ tick: Tick, into alerts: inout [Alert]) {
        guard !pending.isEmpty else { return }
        let symbol = Symbol.normalize(tick.symbol)
        guard pending.remove(symbol) != nil else { return }
        changed = true
        let entries = markets.entries(for: symbol)
        for (rule, filter) in rules where entries.contains(where: filter.matches) {
            if let expires = rule.extras?.expires, tick.time >= expires { continue }
            alerts.append(
                Alert(
                    rule: rule.id, symbol: symbol, time: tick.time, price: tick.price,
                    condition: Condition.listed.summary, threshold: .none, value: tick.price,
                    template: rule.message ?? MessageTemplate.defaultTemplate(for: .listed),
                    notify: rule.notify))
        }
    }
}
