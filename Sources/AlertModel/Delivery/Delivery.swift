/// One event on its way through the policy stages: the alert, the sinks its rule notifies, and
/// whether its rule has `"priority": "high"` (the rule file's `RuleExtras.highPriority`).
public struct PolicyEvent: Sendable, Equatable {
    public var alert: Alert
    public var sinks: [String]
    public var highPriority: Bool

    public init(alert: Alert, sinks: [String]? = nil, highPriority: Bool = false) {
        self.alert = alert
        self.sinks = sinks ?? alert.notify
        self.highPriority = highPriority
    }
}

/// Several events that reach a sink as one delivery (Docs/sinks.md#groups-and-digests).
public struct Digest: Sendable, Equatable {
    public var sink: String
    /// In the order they were added; never empty.
    public var events: [Alert]
    /// True for what quiet hours held.
    public var held: Bool

    public init(sink: String, events: [Alert], held: Bool = false) {
        precondition(!events.isEmpty, "a digest holds at least one event")
        self.sink = sink
        self.events = events
        self.held = held
    }

    /// `digest:SINK:<id of its first event>`: the same after a crash and a re-delivery.
    public var id: String { "digest:\(sink):\(events[0].id)" }
    /// The earliest and latest event time (epoch milliseconds).
    public var first: Int64 { events.lazy.map(\.time).min()! }
    public var last: Int64 { events.lazy.map(\.time).max()! }
}

/// What a sink is handed: one event, or a digest of several.
public enum Delivery: Sendable, Equatable {
    case event(Alert)
    case digest(Digest)

    /// A digest of one event is delivered as that plain event.
    public init(sink: String, events: [Alert], held: Bool = false) {
        self = events.count == 1 ? .event(events[0]) : .digest(Digest(sink: sink, events: events, held: held))
    }

    /// The alert's id, or the digest's.
    public var id: String {
        switch self {
        case .event(let alert): return alert.id
        case .digest(let digest): return digest.id
        }
    }

    public var events: [Alert] {
        switch self {
        case .event(let alert): return [alert]
        case .digest(let digest): return digest.events
        }
    }

    public var held: Bool {
        if case .digest(let digest) = self { return digest.held }
        return false
    }
}
