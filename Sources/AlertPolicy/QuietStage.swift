import AlertCore

/// The quiet-hours stage of one sink (Docs/sinks.md#quiet-hours), driven by event time.
///
/// With `hold`, what falls in a window waits; everything held in one window (windows that
/// overlap count as one) leaves as one digest with `held: true` when the window ends for the
/// sink: at the first event for the sink at or after its end, by `close(wallTime:)` once the
/// wall clock passes it, or by `finish()`. With `drop`, such events are dropped.
public struct QuietStage: Sendable {
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

    public enum Decision: Sendable, Equatable {
        /// Not in a window: on to the next stage.
        case pass
        case held
        case dropped
    }

    /// The digest of what was held, when `time` is at or after the end of the held window: it
    /// leaves before the event that ended the window.
    public mutating func windowEnded(before time: Int64) -> Delivery? {
        held.isEmpty || time < heldUntil ? nil : release()
    }

    /// Whether `alert` passes, is held, or is dropped. Call `windowEnded(before:)` first.
    public mutating func admit(_ alert: Alert) -> Decision {
        guard let interval = hours.interval(containing: alert.time) else { return .pass }
        if hours.action == .drop { return .dropped }
        held.append(alert)
        heldUntil = max(heldUntil, interval.end)
        return .held
    }

    public mutating func close(wallTime: Int64) -> Delivery? {
        windowEnded(before: wallTime)
    }

    public mutating func finish() -> Delivery? {
        held.isEmpty ? nil : release()
    }

    private mutating func release() -> Delivery {
        defer { held = []; heldUntil = .min }
        return Delivery(sink: sink, events: held, held: true)
    }
}
