import AlertModel

/// Flap damping for the feed's own alerts (Docs/observability.md#a-flapping-feed): a feed that
/// goes stale and recovers again and again must not page someone on every change. The
/// evaluator makes every `@feed-stale` and `@feed-recovered` as Docs/sources.md says; this
/// stage, on their way to the sinks, decides which are delivered, per source (the alert's
/// symbol):
///
/// - A change (a stale or recovered alert) is delivered at once while it is one of at most
///   `limit` changes of its source within `window` (by the alerts' times): one outage and the
///   next going stale still reach people as they happen.
/// - A change beyond that makes the source flapping: it is held, and a later change replaces
///   the one held (the replaced one is never delivered: counted in `damped`).
/// - Once the source had no change for `holdDown`, the held alert is delivered if it differs
///   from the last one delivered (so what people last heard is the feed's state), else it is
///   dropped as damped; the count starts again.
/// - At shutdown (`flush`) every held alert that differs from the last one delivered is
///   delivered, for the same reason.
///
/// Other alerts pass untouched. Wall time only: `run` alone makes feed alerts.
struct FeedFlapDamping {
    static let window: Int64 = 10 * 60_000
    static let limit = 3
    static let holdDown: Int64 = 5 * 60_000

    private struct Source {
        /// Times of the changes within the window (oldest first).
        var changes: [Int64] = []
        /// The rule of the last alert delivered (nil: none yet, the feed is taken as fine).
        var lastDelivered: String?
        var held: Alert?
    }

    private var sources: [String: Source] = [:]
    /// Feed alerts never delivered because a later change replaced them or nothing changed.
    private(set) var damped = 0
    /// Called for each of them as it is damped (`/metrics`).
    let counted: @Sendable () -> Void

    init(counted: @escaping @Sendable () -> Void = {}) {
        self.counted = counted
    }

    private mutating func dampOne() {
        damped += 1
        counted()
    }

    enum Verdict: Equatable {
        /// Deliver it now.
        case deliver
        /// Held: the source is flapping; `began` the first time since it last was steady.
        case held(began: Bool)
    }

    static func isFeedAlert(_ alert: Alert) -> Bool {
        alert.rule == FeedAlert.staleRule || alert.rule == FeedAlert.recoveredRule
    }

    /// What to do with `alert` now.
    mutating func take(_ alert: Alert) -> Verdict {
        guard Self.isFeedAlert(alert) else { return .deliver }
        var source = sources[alert.symbol, default: Source()]
        defer { sources[alert.symbol] = source }
        source.changes.removeAll { $0 <= alert.time - Self.window }
        source.changes.append(alert.time)
        if source.held == nil, source.changes.count <= Self.limit {
            source.lastDelivered = alert.rule
            return .deliver
        }
        let began = source.held == nil
        if !began { dampOne() }
        source.held = alert
        return .held(began: began)
    }

    /// The held alerts of sources without a change for `holdDown` at `now` that are to be
    /// delivered (see the type's rules), oldest source first.
    mutating func due(now: Int64) -> [Alert] {
        release { now - ($0.changes.last ?? now) >= Self.holdDown }
    }

    /// Every held alert that differs from the last one delivered of its source (shutdown).
    mutating func flush() -> [Alert] {
        release { _ in true }
    }

    var isHolding: Bool { sources.values.contains { $0.held != nil } }

    private mutating func release(when ready: (Source) -> Bool) -> [Alert] {
        var out: [Alert] = []
        for name in sources.keys.sorted() {
            guard var source = sources[name], let held = source.held, ready(source) else { continue }
            if held.rule != source.lastDelivered {
                out.append(held)
                source.lastDelivered = held.rule
            } else {
                dampOne()
            }
            source.held = nil
            source.changes.removeAll()
            sources[name] = source
        }
        return out
    }
}
