import AlertCore

/// The event-time stages in the order of Docs/sinks.md#notification-policy — silence, priority,
/// quiet hours, group — for every sink: events in, decisions out. It reads no clock: `replay`
/// feeds events and calls `finish()`, so the same events give the same decisions every time;
/// `run` and `check` also call `close(wallTime:)` with the time of day. What it delivers goes on
/// to the outbox and each sink's `SinkPacer`.
public struct PolicyPipeline: Sendable {
    public var silences: SilenceSet
    private var stages: [String: SinkStages]
    /// Sink names in a fixed order, for what closes at once.
    private let order: [String]

    struct SinkStages: Sendable {
        var quiet: QuietStage?
        var grouper: Grouper?
    }

    /// Sinks not in `sinks` get no quiet hours and no groups. Fails on a zone the system does
    /// not know (validation reports it at its place first).
    public init(sinks: [SinkDefinition], silences: SilenceSet = SilenceSet()) throws(UnknownZone) {
        var stages: [String: SinkStages] = [:]
        for sink in sinks {
            let policy = sink.policy
            let quiet = policy.quiet.isEmpty ? nil
                : QuietStage(sink: sink.name, hours: try QuietHours(policy.quiet, action: policy.quietAction))
            let grouper = policy.group.map { Grouper(sink: sink.name, spec: $0) }
            if quiet != nil || grouper != nil { stages[sink.name] = SinkStages(quiet: quiet, grouper: grouper) }
        }
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
            guard var stage = stages[sink] else {
                decisions.append(.deliver(sink: sink, .event(event.alert), urgent: event.highPriority))
                continue
            }
            if let digest = stage.quiet?.windowEnded(before: event.alert.time) {
                decisions.append(.deliver(sink: sink, digest, urgent: false))
            }
            if Priority.bypassesHoldAndGroups(event) {
                decisions.append(.deliver(sink: sink, .event(event.alert), urgent: true))
            } else {
                switch stage.quiet?.admit(event.alert) ?? .pass {
                case .held:
                    decisions.append(.held(sink: sink, eventID: event.alert.id))
                case .dropped:
                    decisions.append(.quietDropped(sink: sink, eventID: event.alert.id))
                case .pass:
                    if stage.grouper != nil {
                        decisions += stage.grouper!.add(event.alert).map { .deliver(sink: sink, $0, urgent: false) }
                    } else {
                        decisions.append(.deliver(sink: sink, .event(event.alert), urgent: false))
                    }
                }
            }
            stages[sink] = stage
        }
        return decisions
    }

    /// What the stages keep now, over every sink: events held by quiet hours, and open digests
    /// with the events in them (`/metrics`).
    public var waiting: (held: Int, openDigests: Int, inDigests: Int) {
        stages.values.reduce((0, 0, 0)) { sum, stage in
            (sum.0 + (stage.quiet?.heldCount ?? 0), sum.1 + (stage.grouper?.openDigests ?? 0),
             sum.2 + (stage.grouper?.openEvents ?? 0))
        }
    }

    /// When `sink`'s held window ends (epoch ms), while it holds events.
    public func heldUntil(sink: String) -> Int64? {
        guard let quiet = stages[sink]?.quiet, quiet.heldCount > 0 else { return nil }
        return quiet.heldUntil
    }

    /// Closes the quiet windows and digests that no event closed and whose end the wall clock
    /// has passed (`run`, `check`).
    public mutating func close(wallTime: Int64) -> [PolicyDecision] {
        closeAll { stage in
            (stage.quiet?.close(wallTime: wallTime)).map { [$0] } ?? []
        } groups: { grouper in
            grouper.close(wallTime: wallTime)
        }
    }

    /// Closes everything still open (the end of a replay).
    public mutating func finish() -> [PolicyDecision] {
        closeAll { stage in
            (stage.quiet?.finish()).map { [$0] } ?? []
        } groups: { grouper in
            grouper.finish()
        }
    }

    /// Per sink in name order: the held digest, then the digests in the order they opened.
    private mutating func closeAll(quiet: (inout SinkStages) -> [Delivery],
                                   groups: (inout Grouper) -> [Delivery]) -> [PolicyDecision] {
        var decisions: [PolicyDecision] = []
        for sink in order {
            var stage = stages[sink]!
            var closed = quiet(&stage)
            if stage.grouper != nil { closed += groups(&stage.grouper!) }
            stages[sink] = stage
            decisions += closed.map { .deliver(sink: sink, $0, urgent: false) }
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
