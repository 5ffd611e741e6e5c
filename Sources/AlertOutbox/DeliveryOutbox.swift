import AlertModel
import AlertPolicy

/// What the delivery stage needs of the durable outbox (Docs/sinks.md#outbox-and-retries), so it
/// does not depend on how rows are stored. Every method returns at once; writes are made in the
/// order they were handed over, several in one transaction, off the caller's thread.
public protocol DeliveryOutbox: Sendable {
    /// Queues one row per sink for `delivery`. `committed` runs once the rows are durable, in
    /// the order deliveries were enqueued, with the rows written (a (delivery id, sink) already
    /// pending is left as it is and not returned), or with the error when they cannot be written;
    /// such a write is kept and tried again while the process runs, and `committed` then gets
    /// the rows once they are written.
    func enqueue(
        _ delivery: Delivery, sinks: [String], urgent: Bool, now: Int64,
        committed: @escaping @Sendable (Result<[OutboxEntry], any Error>) -> Void)

    /// Queues the outcome of one attempt that carried the rows `ids` (several when a backlog
    /// was batched into one digest): all get it together. `committed` says, once durable, what
    /// it changed (`RecordedOutcome`). When the outcome cannot be written, `failed` is called
    /// once and it is tried again with every later write.
    func record(
        _ ids: [Int64], _ outcome: OutboxOutcome,
        committed: @escaping @Sendable (RecordedOutcome) -> Void,
        failed: @escaping @Sendable (any Error) -> Void)

    /// Writes a dead letter for `delivery` on `sink` that never had a row there (a fallback sink
    /// delivered directly that failed too).
    func deadLetter(
        _ delivery: Delivery, sink: String, reason: String, now: Int64,
        failed: @escaping @Sendable (any Error) -> Void)

    /// Returns when everything handed over before is durable (or failed).
    func commit() async

    /// Every pending row in insertion order, read after everything handed over before.
    func loadPending() async throws -> [OutboxEntry]

    /// Pending rows (all sinks), counted after everything handed over before.
    func countPending() async throws -> Int

    /// `error` (from this outbox) in a few words for a log line.
    func reason(_ error: any Error) -> String
}

/// What a recorded outcome changed, once durable.
public struct RecordedOutcome: Sendable, Equatable {
    /// The rows a dead letter's fallback put in the outbox.
    public var moved: [OutboxEntry]
    /// How many of the attempt's rows became dead letters: all of a dead outcome's, but in a
    /// shared outbox the rows whose claim ran out during the attempt and that another deliverer
    /// claimed since (that one decides their outcome), and rows no longer pending.
    public var deadLetters: Int

    public init(moved: [OutboxEntry] = [], deadLetters: Int = 0) {
        self.moved = moved
        self.deadLetters = deadLetters
    }
}

/// An outbox write that came after the outbox was closed at the end of the process (a
/// delivery attempt that outlived the drain): not made. The rows it would have updated are
/// still pending, and are attempted again at the next start.
public struct OutboxClosed: Error, Sendable, CustomStringConvertible {
    public init() {}
    public var description: String { "the outbox was already closed (pricealert is exiting)" }
}

/// An outbox that several processes deliver from at once (Docs/postgres.md#several-deliverers-one-outbox):
/// a sink's worker takes rows by claiming them, never by loading them all, and a sink's `rate`
/// is one window for every process together.
///
/// A claimed row is this process's until its outcome is recorded, it is released, or its lease
/// runs out (then another process takes it, with the same delivery id: at least once).
public protocol SharedOutbox: DeliveryOutbox {
    /// Leases up to `limit` rows of `sink` that are due at `now` (epoch ms) and leased by no one,
    /// most urgent then oldest first, to this process.
    func claim(sink: String, limit: Int, now: Int64) async throws -> [OutboxEntry]

    /// Extends to `now + claimLease` the lease of the rows `ids` (rows this process claimed and
    /// still holds); returns those it extended. A row missing is no longer this process's: its
    /// lease ran out and another process claimed it, or it is gone (delivered, dead).
    func renew(_ ids: [Int64], now: Int64) async throws -> Set<Int64>

    /// How long (ms) a claim leases a row; a worker renews what it holds well before then.
    var claimLease: Int64 { get }

    /// Ends this process's lease on rows it claimed and will not attempt, so any process may
    /// take them at once.
    func release(_ ids: [Int64]) async throws

    /// Pending rows per sink (for the start-up warning about sinks no rule defines).
    func pendingBySink() async throws -> [String: Int]

    /// Starts an attempt on `sink` in the window of `rate` that every process shares, or says
    /// how long to wait before asking again.
    func beginAttempt(sink: String, rate: RateSpec) async throws -> SharedStart

    /// The attempt `beginAttempt` started at `started` has ended (now): it counts from now on.
    func settleAttempt(sink: String, rate: RateSpec, started: Int64) async throws

    /// The attempt `beginAttempt` started at `started` was not made (there was nothing to
    /// send): it leaves the window.
    func cancelAttempt(sink: String, rate: RateSpec, started: Int64) async throws
}

/// What the shared window of a sink's rate says about an attempt.
public enum SharedStart: Sendable, Equatable {
    /// It started at this time (the window's clock); settle or cancel it with this time.
    case start(Int64)
    /// Ask again after this many ms; nil while an attempt in flight (any process's) decides it.
    case wait(millis: Int64?)
}
