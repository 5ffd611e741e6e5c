import AlertModel
import AlertOutbox
import Logging
import PostgresNIO

/// The outbox written by the leader of a source (Docs/postgres.md#several-instances): each
/// (delivery id, sink) is entered at most once, ever, while the ledger keeps it.
///
/// An outbox row is deleted once it is delivered, so the row alone cannot tell a new leader
/// that an event it evaluated again was sent already. `outbox_ledger` keeps every (delivery
/// id, sink) a leader entered, with the source and epoch it was entered under; a fenced insert
/// writes the ledger first, with `ON CONFLICT DO NOTHING`, and adds an outbox row only for the
/// sinks the ledger did not have. A new leader can so insert every event it evaluated since the
/// old leader's last committed save: those the old leader entered are skipped by their stable
/// ids, the others are added.
extension PostgresOutbox {
    /// In one transaction under `fence`: enters `delivery` for each of `sinks` not entered
    /// before and returns the rows made. Throws `LostLeadership`, writing nothing, when the
    /// fence's epoch no longer leads its source.
    @discardableResult
    public func enqueue(
        _ delivery: Delivery, sinks: [String], urgent: Bool = false, now: Int64, fence: PostgresFence
    ) async throws -> [OutboxEntry] {
        let logger = queue.logger
        return try await queue.transaction { connection in
            try await PostgresLeadership.check(fence, connection, logger)
            return try await Self.enterOnce(delivery, sinks: sinks, urgent: urgent, now: now, fence, connection, logger)
        }
    }

    /// Inside a transaction that checked `fence` (`PostgresLeadership.write`): enters
    /// `delivery` for each of `sinks` the ledger does not hold yet, beside whatever else the
    /// transaction writes (the engine state the events came from).
    public static func enterOnce(
        _ delivery: Delivery, sinks: [String], urgent: Bool, now: Int64, _ fence: PostgresFence,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [OutboxEntry] {
        let rows = try await connection.query(
            """
            INSERT INTO outbox_ledger (delivery_id, sink, source, epoch, enqueued_at)
            SELECT \(delivery.id), sink, \(fence.source), \(fence.epoch), \(now) FROM UNNEST(\(sinks)::TEXT[]) AS sink
            ON CONFLICT (delivery_id, sink) DO NOTHING RETURNING sink
            """, logger: logger)
        var fresh: Set<String> = []
        for try await sink in rows.decode(String.self) { fresh.insert(sink) }
        let wanted = sinks.filter(fresh.contains)
        guard !wanted.isEmpty else { return [] }
        return try await insert(delivery, sinks: wanted, urgent: urgent, now: now, connection, logger)
    }

    /// Deletes ledger entries made before `before` (epoch ms); returns how many went. Keep
    /// them longer than any gap a new leader may evaluate again (the time between two engine
    /// saves, plus the longest takeover), or an event entered before could be entered twice.
    @discardableResult
    public func pruneLedger(before: Int64) async throws -> Int {
        try await queue.perform { connection in
            let rows = try await connection.query(
                "DELETE FROM outbox_ledger WHERE enqueued_at < \(before) RETURNING 1", logger: self.queue.logger)
            var count = 0
            for try await _ in rows.decode(Int.self) { count += 1 }
            return count
        }
    }
}
