import AlertModel
import GRDB

/// What the event-time policy stages hold for a sink (Docs/sinks.md#staying-calm-on-a-crash-day):
/// the events held by quiet hours and those in open digests, one row per (sink, event), in the
/// order they entered the stages. Event time drives the stages, so feeding these rows back in
/// `seq` order after a restart rebuilds the same held windows and the same open digests (and so
/// the same digest ids).
///
/// Changes go through the outbox's writer (`record`), so they commit in the order they were
/// handed over relative to the outbox's rows: a digest's row is in the outbox in the same or an
/// earlier transaction than the removal of its events here, and `Outbox.commit()` waits for both.
public final class PolicyStateStore: Sendable {
    private let writer: GroupCommitter
    /// For `list()`, which also reads a folder opened read only.
    private let reader: DatabasePool
    private let failing = FailingWrites()

    init(writer: GroupCommitter, reader: DatabasePool) {
        self.writer = writer
        self.reader = reader
    }

    /// One event held for one sink.
    public struct Pending: Sendable, Equatable {
        /// The order the event entered the stages.
        public var seq: Int64
        public var sink: String
        public var alert: Alert
        /// True when quiet hours hold it, false when it waits in an open digest; nil for a
        /// row written by a binary of schema 8, which did not say.
        public var quiet: Bool?

        public init(seq: Int64, sink: String, alert: Alert, quiet: Bool? = nil) {
            self.seq = seq
            self.sink = sink
            self.alert = alert
            self.quiet = quiet
        }
    }

    /// Every pending row in `seq` order, read after everything recorded before.
    public func load() async throws -> [Pending] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM policy_pending ORDER BY seq").map(Self.pending)
        }
    }

    /// Every pending row in `seq` order, as committed, read at once (also from a folder opened
    /// read only, beside the process that writes it): `outbox list`.
    public func list() throws -> [Pending] {
        try reader.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM policy_pending ORDER BY seq").map(Self.pending)
        }
    }

    /// Queues `added` and the removal of `removed` (sink, event id) for the writer's next group
    /// and returns at once. A write that fails is kept and written again with later groups;
    /// until it is written, `unwritten` says so.
    public func record(added: [Pending], removed: [(sink: String, eventID: String)]) {
        guard !added.isEmpty || !removed.isEmpty else { return }
        let token = failing.token()
        writer.submit(
            GroupCommitter.Write(
                apply: { db in
                    let delete = try db.cachedStatement(
                        sql: "DELETE FROM policy_pending WHERE sink = ? AND alert_id = ?")
                    for (sink, id) in removed { try delete.execute(arguments: [sink, id]) }
                    let insert = try db.cachedStatement(
                        sql: """
                            INSERT OR REPLACE INTO policy_pending (seq, sink, alert_id, rule, symbol, time, price, condition,
                              threshold_low, threshold_high, threshold_null, value, message, notify, kind, reminder, quiet,
                              source)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                            """)
                    for row in added {
                        let alert = row.alert
                        let (low, high) = OutboxColumns.threshold(alert.threshold)
                        try insert.execute(arguments: [
                            row.seq, row.sink, alert.id, alert.rule, alert.symbol, alert.time,
                            alert.price, alert.condition, low, high, alert.threshold == .none ? 1 : 0, alert.value,
                            alert.message, alert.notify.joined(separator: "\n"),
                            alert.kind.rawValue, alert.reminder, row.quiet, alert.source
                        ])
                    }
                    return { self.failing.written(token) }
                },
                failed: { error in self.failing.failed(token, reason: StateStore.reason(error)) }, retried: true))
    }

    /// Why some recorded changes are not written yet; nil when every one is (after a commit).
    public var unwritten: String? { failing.reason }

    private static func pending(_ row: Row) -> Pending {
        var alert = Outbox.alert(row)
        alert.adoptOccurrence(fromID: row["alert_id"])
        // A schema 8 file opened read only has no `quiet` column: nil, as for its rows.
        return Pending(
            seq: row["seq"], sink: row["sink"], alert: alert, quiet: row.hasColumn("quiet") ? row["quiet"] : nil)
    }

    /// Schema 8: the policy stages' pending events.
    static func migrate(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE policy_pending (
                  seq INTEGER PRIMARY KEY, sink TEXT NOT NULL, alert_id TEXT NOT NULL,
                  rule TEXT NOT NULL, symbol TEXT NOT NULL, time INTEGER NOT NULL, price REAL NOT NULL,
                  condition TEXT NOT NULL, threshold_low REAL NOT NULL, threshold_high REAL,
                  threshold_null INTEGER NOT NULL, value REAL NOT NULL, message TEXT NOT NULL,
                  notify TEXT NOT NULL, kind TEXT NOT NULL, reminder INTEGER,
                  UNIQUE (sink, alert_id)
                );
                PRAGMA user_version = 8;
                """)
    }

    /// Schema 9: whether a row is held by quiet hours or waits in a digest, for `outbox list`.
    static func migrateStage(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE policy_pending ADD COLUMN quiet INTEGER;
                PRAGMA user_version = 9;
                """)
    }
}
