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

    public init(
        id: Int64, sink: String, delivery: Delivery, urgent: Bool = false, createdAt: Int64,
        attempts: Int = 0, nextAttemptAt: Int64, lastError: String? = nil, deadReason: String? = nil
    ) {
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
