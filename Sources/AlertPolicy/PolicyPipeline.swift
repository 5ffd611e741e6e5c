import AlertModel

/// The event-time stages in the order of Docs/sinks.md#notification-policy — silence, then for
/// each sink priority, quiet hours, group — : events in, decisions out. It reads no clock:
/// `replay` feeds events and calls `finish()`, so the same events give the same decisions every
/// time; `run` and `check` also call `close(wallTime:)` with the time of day. What it delivers
/// goes on to the outbox and each sink's `SinkPacer`.
public struct PolicyPipeline: Sendable {
    public var silences: SilenceSet
    /// Each defined sink's stages, in the order `stages(for:)` gives.
    private var stages: [String: [any Stage]]
    /// Sink names in a fixed order, for what closes at once.
    private let order: [String]

    /// The order of the stages, in one place. A sink gets priority first (a high-priority event
    /// skips the rest), then quiet hours and groups when its policy has them. Silences come
    /// before all of these, once for every sink of an event (`receive`). Fails on a zone the
    /// system does not know (validation reports it at its place first).
    public static func stages(for sink: SinkDefinition) throws(UnknownZone) -> [any Stage] {
        let policy = sink.policy
        var stages: [any Stage] = [PriorityStage()]
        if !policy.quiet.isEmpty {
            stages.append(QuietStage(sink: sink.name, hours: try QuietHours(policy.quiet, action: policy.quietAction)))
        }
        if let group = policy.group { stages.append(Grouper(sink: sink.name, spec: group)) }
        return stages
    }

    /// A sink not in `sinks` gets the stages of a sink without policy.
    public init(sinks: [SinkDefinition], silences: SilenceSet = SilenceSet()) throws(UnknownZone) {
        var stages: [String: [any Stage]] = [:]
        for sink in sinks { stages[sink.name] = try Self.stages(for: sink) }
        self.stages = stages
        order = stages.keys.sorted()
        self.silences = silences
    }

    /// One event: silenced, or for each of its sinks delivered, held, dropped, or kept in a
    /// digest (no decision until the digest closes). What the event closes comes first.
    public mutating func receive(_ event: PolicyEvent) -> [PolicyDecision] {
        if let silence = silences.silence(for: event.alert) {
            return [.silenced(eventID: event.alert.id, silence: silence.id)]
        }
        var decisions: [PolicyDecision] = []
        for sink in event.sinks {
            if stages[sink] != nil {
                Self.receive(event, by: &stages[sink]!, sink: sink, into: &decisions)
            } else {
                var list: [any Stage] = [PriorityStage()]
                Self.receive(event, by: &list, sink: sink, into: &decisions)
            }
        }
        return decisions
    }

    /// What `event` closes in `list`, then `event` through `list` in order until a stage keeps,
    /// drops or takes it; past the last stage it is delivered as it is.
    private static func receive(
        _ event: PolicyEvent, by list: inout [any Stage], sink: String,
        into decisions: inout [PolicyDecision]
    ) {
        for i in list.indices {
            decisions += list[i].closed(before: event.alert).map { .deliver(sink: sink, $0, urgent: false) }
        }
        for i in list.indices {
            switch list[i].receive(event) {
            case .pass: continue
            case .held: decisions.append(.held(sink: sink, eventID: event.alert.id))
            case .dropped: decisions.append(.quietDropped(sink: sink, eventID: event.alert.id))
            case .taken(let deliveries, let urgent):
                decisions += deliveries.map { .deliver(sink: sink, $0, urgent: urgent) }
            }
            return
        }
        decisions.append(.deliver(sink: sink, .event(event.alert), urgent: false))
    }

    /// What the stages keep now, over every sink: events held by quiet hours, and open digests
    /// with the events in them (`/metrics`).
    public var waiting: (held: Int, openDigests: Int, inDigests: Int) {
        let sum = stages.values.joined().reduce(StageWaiting()) { $0 + $1.waiting }
        return (sum.held, sum.openDigests, sum.inDigests)
    }

    /// When `sink`'s held window ends (epoch ms), while it holds events.
    public func heldUntil(sink: String) -> Int64? {
        guard let quiet = stages[sink]?.lazy.compactMap({ $0 as? QuietStage }).first, quiet.heldCount > 0 else {
            return nil
        }
        return quiet.heldUntil
    }

    /// Closes the quiet windows and digests that no event closed and whose end the wall clock
    /// has passed (`run`, `check`).
    public mutating func close(wallTime: Int64) -> [PolicyDecision] {
        closeAll { $0.close(wallTime: wallTime) }
    }

    /// Closes everything still open (the end of a replay).
    public mutating func finish() -> [PolicyDecision] {
        closeAll { $0.finish() }
    }

    /// Per sink in name order, stage by stage: the held digest, then the digests in the order
    /// they opened.
    private mutating func closeAll(_ close: (inout any Stage) -> [Delivery]) -> [PolicyDecision] {
        var decisions: [PolicyDecision] = []
        for sink in order {
            for i in stages[sink]!.indices {
                decisions += close(&stages[sink]![i]).map { .deliver(sink: sink, $0, urgent: false) }
            }
        }
        return decisions
    }
}

/// What the event-time stages decided.
public enum PolicyDecision: Sendable, Equatable {
    /// The event goes to no sink (counted, and named by `--format json`).
    case silenced(eventID: String, silence: String)
    /// Into the outbox for `sink`; `urgent` for a high-priority event, which the rate stage
    /// sends before what waits.
    case deliver(sink: String, Delivery, urgent: Bool)
    /// Kept by quiet hours (`hold`) until the window ends.
    case held(sink: String, eventID: String)
    /// Dropped by quiet hours (`drop`), counted.
    case quietDropped(sink: String, eventID: String)
}
