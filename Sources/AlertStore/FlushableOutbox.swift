import AlertOutbox

/// What `outbox flush` needs of an outbox beyond delivery, so it flushes a state folder's
/// (`Outbox`, SQLite) or a PostgreSQL store's alike.
public protocol FlushableOutbox: DeliveryOutbox {
    /// The sinks pending rows are for, each once, sorted.
    func pendingSinks() async throws -> [String]
    /// Makes every pending row due at `now`.
    func makeAllDue(now: Int64) async throws
}

extension Outbox: FlushableOutbox {
    public func pendingSinks() async throws -> [String] {
        Array(Set(try pending().map(\.sink))).sorted()
    }
}
