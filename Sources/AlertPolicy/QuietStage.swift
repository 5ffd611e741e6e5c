import AlertModel

/// The quiet-hours stage of one sink (Docs/sinks.md#quiet-hours), driven by event time.
///
/// With `hold`, what falls in a window waits; everything held in one window (windows that
/// overlap count as one) leaves as one digest with `held: true` when the window ends for the
/// sink: at the first event for the sink at or after its end, by `close(wallTime:)` once the
/// wall clock passes it, or by `finish()`. With `drop`, such events are dropped.
public struct QuietStage: Stage {
    public let sink: String
    public let hours: QuietHours
    private var held: [Alert] = []
    /// When the window that holds events ends (epoch ms); `.min` while none are held.
    public private(set) var heldUntil: Int64 = .min

    /// Events held now.
    public var heldCount: Int { held.count }

    public init(sink: String, hours: QuietHours) {
        self.sink = sink
        self.hours = hours
    }

    /// The digest of what was held, when `alert` comes at or after the end of the held window:
    /// it leaves before the event that ended the window.
    public mutating func closed(before alert: Alert) -> [Delivery] {
        close(wallTime: alert.time)
    }

    /// Not in a window: on to the next stage; in one: held or dropped, by the sink's action.
    public mutating func receive(_ event: PolicyEvent) -> StageStep {
        guard let interval = hours.interval(containing: event.alert.time) else { return .pass }
        if hours.action == .drop { return .dropped }
        held.append(event.alert)
        heldUntil = max(heldUntil, interval.end)
        return .held
    }

    public mutating func close(wallTime: Int64) -> [Delivery] {
        held.isEmpty || wallTime < heldUntil ? [] : [release()]
    }

    public mutating func finish() -> [Delivery] {
        held.isEmpty ? [] : [release()]
    }

    public var waiting: StageWaiting { StageWaiting(held: held.count) }

    private mutating func release() -> Delivery {
        defer { held = []; heldUntil = .min }
        return Delivery(sink: sink, events: held, held: true)
    }
}
