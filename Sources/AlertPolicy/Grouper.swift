import AlertModel

/// The group stage of one sink (Docs/sinks.md#groups-and-digests), driven by event time.
///
/// The first event of a group key opens a digest at its time `t0`; later events of that key
/// with time `< t0 + window` join it. It closes when it holds `max` events, at the first event
/// of its key with time `≥ t0 + window` (which opens the next), by `close(wallTime:)` once the
/// wall clock passes `t0 + window`, or by `finish()`.
public struct Grouper: Sendable {
    public let sink: String
    public let spec: GroupSpec
    private var open: [String: OpenDigest] = [:]
    /// Counts digests opened, so those closed together leave in the order they opened.
    private var opened = 0

    struct OpenDigest: Sendable {
        var start: Int64
        var sequence: Int
        var events: [Alert]
    }

    public init(sink: String, spec: GroupSpec) {
        self.sink = sink
        self.spec = spec
    }

    /// The key of the event's group: its `by` fields, in the order written.
    public func key(_ alert: Alert) -> String {
        spec.by.map { field -> String in
            switch field {
            case .rule: return alert.rule
            case .symbol: return alert.symbol
            case .condition: return alert.condition
            }
        }.joined(separator: "\u{1F}")
    }

    /// Adds `alert`; returns what that closes: the key's previous digest when the event is past
    /// its window, and the event's own digest when the event fills it.
    public mutating func add(_ alert: Alert) -> [Delivery] {
        let key = key(alert)
        var closed: [Delivery] = []
        if let digest = open[key], alert.time >= digest.start + spec.window {
            closed.append(Delivery(sink: sink, events: digest.events))
            open[key] = nil
        }
        if open[key] == nil {
            open[key] = OpenDigest(start: alert.time, sequence: opened, events: [])
            opened += 1
        }
        open[key]!.events.append(alert)
        if open[key]!.events.count >= spec.max, let full = open.removeValue(forKey: key) {
            closed.append(Delivery(sink: sink, events: full.events))
        }
        return closed
    }

    /// Closes the digests whose window ended at or before `wallTime` (`run` and `check`).
    public mutating func close(wallTime: Int64) -> [Delivery] {
        let window = spec.window
        return take { $0.start + window <= wallTime }
    }

    /// Closes every open digest (the end of a replay).
    public mutating func finish() -> [Delivery] {
        take { _ in true }
    }

    /// Digests open now.
    public var openDigests: Int { open.count }

    /// Events in open digests.
    public var openEvents: Int { open.values.reduce(0) { $0 + $1.events.count } }

    private mutating func take(where closes: (OpenDigest) -> Bool) -> [Delivery] {
        let sink = sink
        let closing = open.filter { closes($0.value) }.sorted { $0.value.sequence < $1.value.sequence }
        for (key, _) in closing { open[key] = nil }
        return closing.map { Delivery(sink: sink, events: $0.value.events) }
    }
}

extension Grouper: Stage {
    /// Every event that reaches the group stage is kept in a digest; what it closes leaves.
    public mutating func receive(_ event: PolicyEvent) -> StageStep {
        .taken(add(event.alert), urgent: false)
    }

    public var waiting: StageWaiting { StageWaiting(openDigests: openDigests, inDigests: openEvents) }
}
