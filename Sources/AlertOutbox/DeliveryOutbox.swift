import AlertCore

/// One delivery (an event or a digest) waiting for one sink in the outbox, or, as a dead letter,
/// given up on. The alerts it carries are stored once however many rows name them.
public struct OutboxEntry: Sendable, Equatable {
    /// The row id: insertion order, which is the delivery order of a rule's events per sink.
    public var id: Int64
    public var sink: String
    public var delivery: Delivery
    /// A high-priority event: it leaves before what waits for the sink, alone.
    public var urgent: Bool
    /// Epoch milliseconds.
    public var createdAt: Int64
    public var attempts: Int
    /// Epoch milliseconds; for dead letters, when it died.
    public var nextAttemptAt: Int64
    public var lastError: String?
    /// Why it is a dead letter (nil while pending).
    public var deadReason: String?

    public init(id: Int64, sink: String, delivery: Delivery, urgent: Bool = false, createdAt: Int64,
                attempts: Int = 0, nextAttemptAt: Int64, lastError: String? = nil, deadReason: String? = nil) {
        self.id = id
        self.sink = sink
        self.delivery = delivery
        self.urgent = urgent
        self.createdAt = createdAt
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
        self.deadReason = deadReason
    }

    /// The event's id, or the digest's (`digest:SINK:<first event id>`).
    public var deliveryID: String { delivery.id }
}

/// What became of one delivery attempt, as the outbox records it for the rows it carried.
public enum OutboxOutcome: Sendable, Equatable {
    /// The rows are deleted.
    case delivered
    /// Tried again at `at` (epoch ms); `attempts` goes up by one.
    case retry(at: Int64, reason: String)
    /// The rows move to the dead letters with `reason` (counting this attempt), dying at `at`;
    /// with `fallback`, each is also put in the outbox for that sink, same delivery id, in the
    /// same transaction.
    case dead(reason: String, lastError: String?, at: Int64, fallback: String? = nil)
}

/// What the delivery stage needs of the durable outbox (Docs/sinks.md#outbox-and-retries), so it
/// does not depend on how rows are stored. Every method returns at once; writes are made in the
/// order they were handed over, several in one transaction, off the caller's thread.
public protocol DeliveryOutbox: Sendable {
    /// Queues one row per sink for `delivery`. `committed` runs once the rows are durable, in
    /// the order deliveries were enqueued, with the rows written (a (delivery id, sink) already
    /// pending is left as it is and not returned), or with the error when they cannot be written;
    /// such a write is kept and tried again while the process runs, and `committed` then gets
    /// the rows once they are written.
    func enqueue(_ delivery: Delivery, sinks: [String], urgent: Bool, now: Int64,
                 committed: @escaping @Sendable (Result<[OutboxEntry], any Error>) -> Void)

    /// Queues the outcome of one attempt that carried the rows `ids` (several when a backlog
    /// was batched into one digest): all get it together. `committed` gets the rows a dead
    /// letter's fallback put in the outbox, once durable. When the outcome cannot be written,
    /// `failed` is called once and it is tried again with every later write.
    func record(_ ids: [Int64], _ outcome: OutboxOutcome,
                committed: @escaping @Sendable ([OutboxEntry]) -> Void,
                failed: @escaping @Sendable (any Error) -> Void)

    /// Writes a dead letter for `delivery` on `sink` that never had a row there (a fallback sink
    /// delivered directly that failed too).
    func deadLetter(_ delivery: Delivery, sink: String, reason: String, now: Int64,
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

/// An outbox write that came after the outbox was closed at the end of the process (a
/// delivery attempt that outlived the drain): not made. The rows it would have updated are
/// still pending, and are attempted again at the next start.
public struct OutboxClosed: Error, Sendable, CustomStringConvertible {
    public init() {}
    public var description: String { "the outbox was already closed (pricealert is exiting)" }
}
