import AlertModel

/// The events each pair emitted in the latest millisecond it emitted any, so that a later event
/// of the pair in the same millisecond gets `:2`, `:3`, … on its id (Docs/rules.md#the-alert-event).
///
/// The ticks of a symbol come in time order (an earlier one is dropped), so an event can share
/// its base id only with events of the same millisecond: per key, only the counts of
/// its latest event time are kept. They are saved with the symbol's state (`SymbolSnapshot.events`),
/// so a restart or the next `check` numbers on where the last one stopped.
struct EventNumbers {
    private(set) var bySymbol: [String: EventCounts] = [:]

    /// Sets `occurrence` of `alerts[start...]`, the events of one tick, in their order.
    mutating func number(_ alerts: inout [Alert], from start: Int) {
        for i in start..<alerts.count {
            let time = alerts[i].time
            let key = alerts[i].kind == .resolved ? alerts[i].rule + EventCounts.resolvedSuffix : alerts[i].rule
            // Per key (rules v3 §1): the same symbol of two sources is two keys.
            let owner = alerts[i].source.map { $0 + ":" + alerts[i].symbol } ?? alerts[i].symbol
            alerts[i].occurrence = bySymbol[owner, default: EventCounts(time: time)].count(key, at: time)
        }
    }

    /// Counts a previous run saved, for symbols not numbered in this one yet.
    mutating func restore(_ symbol: String, _ counts: EventCounts) {
        if bySymbol[symbol] == nil { bySymbol[symbol] = counts }
    }

    /// The counts to save with `symbol`'s state; nil when it emitted nothing that needs them.
    func counts(of symbol: String) -> EventCounts? {
        bySymbol[symbol]
    }
}

/// The events of one symbol's pairs at `time`, the latest millisecond any of them emitted in:
/// per pair (its rule id, with `:resolved` for resolved events, whose ids differ), how many.
public struct EventCounts: Sendable, Equatable {
    public var time: Int64
    /// By rule id (`resolvedSuffix` appended for resolved events), in no particular order.
    public var counts: [String: Int] = [:]

    static let resolvedSuffix = ":resolved"

    public init(time: Int64, counts: [String: Int] = [:]) {
        self.time = time
        self.counts = counts
    }

    /// Counts one more event of `key` at `time` and returns its number (1 for the first).
    /// An event at another time starts the counts over: no earlier event can share its id.
    mutating func count(_ key: String, at time: Int64) -> Int {
        if time != self.time {
            self.time = time
            counts.removeAll(keepingCapacity: true)
        }
        let n = counts[key, default: 0] + 1
        counts[key] = n
        return n
    }
}
