/// What the delivery stage did for one sink since start.
public struct DeliveryCounts: Sendable, Equatable {
    public var delivered = 0
    /// Failed attempts that will be tried again.
    public var retried = 0
    /// Alerts given up on (now dead letters, or failed for good on a direct sink).
    public var dead = 0

    public init(delivered: Int = 0, retried: Int = 0, dead: Int = 0) {
        self.delivered = delivered
        self.retried = retried
        self.dead = dead
    }
}
