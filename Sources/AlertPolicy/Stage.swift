import AlertModel

/// One step of a sink's notification policy between "a rule fired" and the outbox
/// (Docs/sinks.md#notification-policy), driven by event time like the engine: it reads no clock.
/// As in Alertmanager's `notify.Stage`, each stage does one thing and `PolicyPipeline.stages(for:)`
/// puts them in order, in one list. Silences come before every stage (they decide for all of an
/// event's sinks at once); rate and fallback come after the outbox, per sink (`SinkWorker`).
public protocol Stage: Sendable {
    /// Before any stage of the sink receives `alert`: what its time closes here (a held window
    /// that ended), delivered before it.
    mutating func closed(before alert: Alert) -> [Delivery]
    /// What becomes of `event` here. Called only when every stage before passed it on.
    mutating func receive(_ event: PolicyEvent) -> StageStep
    /// What the wall clock closes: windows and digests whose end `wallTime` (epoch ms) has passed
    /// (`run`, `check`).
    mutating func close(wallTime: Int64) -> [Delivery]
    /// Everything still kept (the end of a replay).
    mutating func finish() -> [Delivery]
    /// What the stage keeps now (`/metrics`).
    var waiting: StageWaiting { get }
}

/// What a stage did with an event.
public enum StageStep: Sendable, Equatable {
    /// On to the next stage; past the last one, the event is delivered as it is.
    case pass
    /// Kept until its window ends (quiet hours with `hold`).
    case held
    /// Dropped and counted (quiet hours with `drop`).
    case dropped
    /// Taken by this stage: `deliveries` leave now (none while a digest stays open), and no
    /// later stage sees the event. `urgent`: sent before what waits for the sink (priority).
    case taken(_ deliveries: [Delivery], urgent: Bool)
}

/// Events a stage keeps: held by quiet hours, and in open digests.
public struct StageWaiting: Sendable, Equatable {
    public var held = 0
    public var openDigests = 0
    public var inDigests = 0

    public init(held: Int = 0, openDigests: Int = 0, inDigests: Int = 0) {
        self.held = held
        self.openDigests = openDigests
        self.inDigests = inDigests
    }

    static func + (a: StageWaiting, b: StageWaiting) -> StageWaiting {
        StageWaiting(
            held: a.held + b.held, openDigests: a.openDigests + b.openDigests, inDigests: a.inDigests + b.inDigests)
    }
}

extension Stage {
    public mutating func closed(before alert: Alert) -> [Delivery] { [] }
    public mutating func close(wallTime: Int64) -> [Delivery] { [] }
    public mutating func finish() -> [Delivery] { [] }
    public var waiting: StageWaiting { StageWaiting() }
}
