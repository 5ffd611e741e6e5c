import AlertModel

/// A silence (Docs/sinks.md#silences): events whose rule and upper-cased symbol match the globs
/// and whose time is in `[from, until)` go to no sink.
public struct Silence: Sendable, Equatable {
    public var id: String
    public var rule: Glob
    /// Matched against the upper-cased symbol; the pattern is upper-cased on the way in.
    public var symbol: Glob
    /// Epoch milliseconds.
    public var from: Int64
    public var until: Int64
    public var comment: String

    public init(id: String, rule: Glob = .any, symbol: Glob = .any, from: Int64, until: Int64, comment: String = "") {
        self.id = id
        self.rule = rule
        self.symbol = (try? Glob(symbol.pattern.uppercased())) ?? symbol
        self.from = from
        self.until = until
        self.comment = comment
    }

    /// True when this silence keeps `alert` from every sink: decided by the event's time.
    public func silences(_ alert: Alert) -> Bool {
        from <= alert.time && alert.time < until && rule.matches(alert.rule) && symbol.matches(alert.symbol)
    }
}

/// The silences in force: the first (by `from`, then id) that silences an event names it.
public struct SilenceSet: Sendable, Equatable {
    public let silences: [Silence]

    public init(_ silences: [Silence] = []) {
        self.silences = silences.sorted { ($0.from, $0.id) < ($1.from, $1.id) }
    }

    public func silence(for alert: Alert) -> Silence? {
        silences.first { $0.silences(alert) }
    }
}
