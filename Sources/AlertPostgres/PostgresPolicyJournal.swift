import AlertModel
import AlertStore
import Logging
import PostgresNIO

/// What the policy stages hold, in PostgreSQL (`policy_pending`), as
/// `AlertStore.PolicyStateStore` keeps it in SQLite: one row per (sink, held event) in `seq`
/// order. Changes are writes on the outbox's queue, so they commit in the order they were handed
/// over relative to the outbox's rows (a digest's row is in the outbox in the same or an earlier
/// transaction than the removal of its events here), and `PostgresOutbox.commit` waits for both.
public final class PostgresPolicyJournal: PolicyJournal {
    let outbox: PostgresOutbox
    private let failing = FailingWrites()

    init(_ outbox: PostgresOutbox) {
        self.outbox = outbox
    }

    public func load() async throws -> [PolicyStateStore.Pending] {
        let logger = outbox.queue.logger
        return try await outbox.queue.perform { connection in try await Self.all(connection, logger) }
    }

    static func all(_ connection: PostgresConnection, _ logger: Logger) async throws -> [PolicyStateStore.Pending] {
        let columns = PostgresOutbox.alertColumns(id: "alert_id")
        let alerts = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT \(columns) FROM policy_pending ORDER BY seq"), logger: logger)
        var events: [Alert] = []
        for try await row in alerts.decode(PostgresOutbox.AlertColumns.self) {
            events.append(PostgresOutbox.alert(row))
        }
        let stages = try await connection.query(
            "SELECT seq, sink, quiet FROM policy_pending ORDER BY seq", logger: logger)
        var pending: [PolicyStateStore.Pending] = []
        for try await (seq, sink, quiet) in stages.decode((Int64, String, Bool?).self) {
            guard pending.count < events.count else { break }
            pending.append(PolicyStateStore.Pending(seq: seq, sink: sink, alert: events[pending.count], quiet: quiet))
        }
        return pending
    }

    public func record(added: [PolicyStateStore.Pending], removed: [(sink: String, eventID: String)]) {
        guard !added.isEmpty || !removed.isEmpty else { return }
        let token = failing.token()
        outbox.submit(
            PostgresOutbox.Write(
                apply: { connection, logger in
                    for (sink, id) in removed {
                        try await connection.query(
                            "DELETE FROM policy_pending WHERE sink = \(sink) AND alert_id = \(id)", logger: logger)
                    }
                    try await Self.insert(added, connection, logger)
                    return { self.failing.written(token) }
                },
                failed: { error in self.failing.failed(token, reason: self.outbox.reason(error)) }))
    }

    /// Writes `rows`, each replacing a row of the same `seq` or the same (sink, event).
    static func insert(
        _ rows: [PolicyStateStore.Pending], _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        for row in rows {
            let alert = row.alert
            let (low, high) = OutboxColumns.threshold(alert.threshold)
            try await connection.query(
                "DELETE FROM policy_pending WHERE sink = \(row.sink) AND alert_id = \(alert.id) AND seq <> \(row.seq)",
                logger: logger)
            try await connection.query(
                """
                INSERT INTO policy_pending (seq, sink, alert_id, rule, symbol, time, price, condition, threshold_low,
                  threshold_high, threshold_null, value, message, notify, kind, reminder, quiet, source)
                VALUES (\(row.seq), \(row.sink), \(alert.id), \(alert.rule), \(alert.symbol), \(alert.time), \(alert.price),
                  \(alert.condition), \(low), \(high), \(alert.threshold == .none), \(alert.value), \(alert.message),
                  \(alert.notify.joined(separator: "\n")), \(alert.kind.rawValue), \(alert.reminder.map(Int64.init)),
                  \(row.quiet), \(alert.source))
                ON CONFLICT (seq) DO UPDATE SET sink = excluded.sink, alert_id = excluded.alert_id, rule = excluded.rule,
                  symbol = excluded.symbol, time = excluded.time, price = excluded.price, condition = excluded.condition,
                  threshold_low = excluded.threshold_low, threshold_high = excluded.threshold_high,
                  threshold_null = excluded.threshold_null, value = excluded.value, message = excluded.message,
                  notify = excluded.notify, kind = excluded.kind, reminder = excluded.reminder, quiet = excluded.quiet,
                  source = excluded.source
                """, logger: logger)
        }
    }

    public var unwritten: String? { failing.reason }
}
