import AlertModel
import AlertStore
import Logging
import PostgresNIO

/// What the policy stages hold, in PostgreSQL (`policy_pending`), as
/// `AlertStore.PolicyStateStore` keeps it in SQLite: one row per (sink, held event) in `seq`
/// order. Changes are writes on the outbox's queue, so they commit in the order they were handed
/// over relative to the outbox's rows (a digest's row is in the outbox in the same or an earlier
/// transaction than the removal of its events here), and `PostgresOutbox.commit` waits for both.
///
/// Several instances write one table: a row is known by (sink, event id), and its `seq` comes
/// from the database's sequence when it is inserted, never from the writer, so two writers never
/// replace each other's rows, and every reader sees one order (the order rows were inserted in;
/// one writer's rows keep the order it handed them over in). `Pending.seq` given to `record` is
/// not stored; `load` returns the store's.
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

    /// Every row in `seq` order, read from one snapshot of the table (the rows' alerts and their
    /// places are two queries: another instance's insert between them must not shift one
    /// against the other).
    static func all(_ connection: PostgresConnection, _ logger: Logger) async throws -> [PolicyStateStore.Pending] {
        try await PostgresQueue.write(connection, logger) { connection in
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: logger)
            return try await snapshot(connection, logger)
        }
    }

    private static func snapshot(
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [PolicyStateStore.Pending] {
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

    /// Writes `rows` in order, each numbered by the table's sequence. A row whose (sink, event) the
    /// table holds already is left as it is, in its place: it is the same event, entered
    /// earlier (by this instance, or by another leader before a takeover).
    static func insert(
        _ rows: [PolicyStateStore.Pending], _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        for row in rows {
            let alert = row.alert
            let (low, high) = OutboxColumns.threshold(alert.threshold)
            try await connection.query(
                """
                INSERT INTO policy_pending (sink, alert_id, rule, symbol, time, price, condition, threshold_low,
                  threshold_high, threshold_null, value, message, notify, kind, reminder, quiet, source)
                VALUES (\(row.sink), \(alert.id), \(alert.rule), \(alert.symbol), \(alert.time), \(alert.price),
                  \(alert.condition), \(low), \(high), \(alert.threshold == .none), \(alert.value), \(alert.message),
                  \(alert.notify.joined(separator: "\n")), \(alert.kind.rawValue), \(alert.reminder.map(Int64.init)),
                  \(row.quiet), \(alert.source))
                ON CONFLICT (sink, alert_id) DO NOTHING
                """, logger: logger)
        }
    }

    /// Schema step 5 (`PostgresMigrations.all`): `seq` from a sequence, (sink, event) the row's
    /// identity. The sequence starts past the rows a single instance numbered before.
    static let sharedOrder = [
        "CREATE SEQUENCE policy_pending_seq",
        "SELECT setval('policy_pending_seq', COALESCE((SELECT MAX(seq) FROM policy_pending), 0) + 1, false)",
        "ALTER TABLE policy_pending ALTER COLUMN seq SET DEFAULT nextval('policy_pending_seq')",
        "ALTER SEQUENCE policy_pending_seq OWNED BY policy_pending.seq",
        "ALTER TABLE policy_pending DROP CONSTRAINT policy_pending_pkey",
        "ALTER TABLE policy_pending DROP CONSTRAINT policy_pending_sink_alert_id_key",
        "ALTER TABLE policy_pending ADD PRIMARY KEY (sink, alert_id)",
        "CREATE UNIQUE INDEX policy_pending_order ON policy_pending (seq)"
    ]

    public var unwritten: String? { failing.reason }
}
