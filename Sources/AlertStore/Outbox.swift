import AlertModel
import AlertOutbox
import AlertPolicy
import GRDB

/// The durable outbox: deliveries (an event or a digest) bound for sinks that must not lose
/// them (webhook, exec), in SQLite. A row is written before delivery starts and deleted only
/// after success, or moved to `dead_letters` with the reason. Times are epoch ms.
///
/// One row representation: a row (pending or dead) names its delivery id, its sink and the ids
/// of the alerts it carries, in order (one for an event); each alert's fields are stored once,
/// in `alerts`, however many rows and sinks name it, with the number of rows that do
/// (`refs`): an alert goes when the last row naming it is delivered or purged. Sink secrets
/// are never stored: a row holds the sink's name, and `last_error` the sink's redacted reason.
///
/// The delivery path uses the `DeliveryOutbox` methods: they return at once and are written
/// by one writer on a thread of its own, all that queued up while the previous transaction
/// was committing in one transaction and one fsync (`GroupCommitter`). The other methods are
/// one blocking transaction each, for commands and tests.
public final class Outbox: DeliveryOutbox {
    private let database: DatabasePool
    let writer: GroupCommitter

    init(database: DatabasePool) {
        self.database = database
        self.writer = GroupCommitter(database: database)
    }

    // MARK: Grouped, off the caller's thread

    public func enqueue(
        _ delivery: Delivery, sinks: [String], urgent: Bool, now: Int64,
        committed: @escaping @Sendable (Result<[OutboxEntry], any Error>) -> Void
    ) {
        writer.submit(
            GroupCommitter.Write(
                apply: { db in
                    let rows = try Self.insert(delivery, sinks: sinks, urgent: urgent, now: now, db)
                    return { committed(.success(rows)) }
                }, failed: { committed(.failure($0)) }, retried: true))
    }

    /// `dispatch(alert)`'s enqueue: the event to `sinks`, not urgent.
    public func enqueue(
        _ alert: Alert, sinks: [String], now: Int64,
        committed: @escaping @Sendable (Result<[OutboxEntry], any Error>) -> Void
    ) {
        enqueue(.event(alert), sinks: sinks, urgent: false, now: now, committed: committed)
    }

    /// `.delivered` waits for the next other write or at most `writer.lazyDelay` (200 ms): a
    /// delivery is usually the end of its rows, and a crash in between only delivers them once
    /// more, with the same id.
    public func record(
        _ ids: [Int64], _ outcome: OutboxOutcome,
        committed: @escaping @Sendable (RecordedOutcome) -> Void,
        failed: @escaping @Sendable (any Error) -> Void
    ) {
        writer.submit(
            GroupCommitter.Write(
                apply: { db in
                    let recorded = try Self.apply(outcome, to: ids, db)
                    return { committed(recorded) }
                }, failed: failed, retried: true, lazy: outcome == .delivered))
    }

    public func deadLetter(
        _ delivery: Delivery, sink: String, reason: String, now: Int64,
        failed: @escaping @Sendable (any Error) -> Void
    ) {
        writer.submit(
            GroupCommitter.Write(
                apply: { db in
                    try Self.insertDead(delivery, sink: sink, reason: reason, now: now, db)
                    return {}
                }, failed: failed, retried: true))
    }

    public func commit() async {
        await writer.barrier()
    }

    public func loadPending() async throws -> [OutboxEntry] {
        try await writer.read { db in try Self.entries(db, table: "outbox") }
    }

    public func countPending() async throws -> Int {
        try await writer.read { db in try Self.depth(db, sink: nil) }
    }

    public func reason(_ error: any Error) -> String {
        StateStore.reason(error)
    }

    // MARK: One transaction each, blocking

    /// Writes one row per sink for `delivery`, all in one transaction. A (delivery id, sink)
    /// already pending is left as it is, so enqueueing twice never delivers twice.
    @discardableResult
    public func enqueue(_ delivery: Delivery, sinks: [String], urgent: Bool = false, now: Int64) throws -> [OutboxEntry]
    {
        try database.write { db in try Self.insert(delivery, sinks: sinks, urgent: urgent, now: now, db) }
    }

    @discardableResult
    public func enqueue(_ alert: Alert, sinks: [String], now: Int64) throws -> [OutboxEntry] {
        try enqueue(.event(alert), sinks: sinks, now: now)
    }

    /// Writes one attempt's outcome for the rows `ids`; returns the rows a fallback got.
    @discardableResult
    public func record(_ ids: [Int64], _ outcome: OutboxOutcome) throws -> [OutboxEntry] {
        try database.write { db in try Self.apply(outcome, to: ids, db).moved }
    }

    /// Writes one attempt's outcome for the row `id`.
    public func record(_ id: Int64, _ outcome: OutboxOutcome) throws {
        try record([id], outcome)
    }

    /// Makes every pending row due at `now` (for `outbox flush`).
    public func makeAllDue(now: Int64) throws {
        try database.write { db in try db.execute(sql: "UPDATE outbox SET next_attempt_at = ?", arguments: [now]) }
    }

    /// Every pending row, in insertion order.
    public func pending() throws -> [OutboxEntry] {
        try database.read { db in try Self.entries(db, table: "outbox") }
    }

    /// Every dead letter, oldest first.
    public func dead() throws -> [OutboxEntry] {
        try database.read { db in try Self.entries(db, table: "dead_letters") }
    }

    /// Pending rows (optionally of one sink).
    public func depth(sink: String? = nil) throws -> Int {
        try database.read { db in try Self.depth(db, sink: sink) }
    }

    /// Alerts stored (each once, however many rows name it), for tests.
    func storedAlerts() throws -> Int {
        try database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM alerts") ?? 0 }
    }

    /// Deletes dead letters (`dead`), or dead letters and pending rows (`all`); returns how many
    /// rows went.
    @discardableResult
    public func purge(dead: Bool, all: Bool) throws -> Int {
        try database.write { db in
            var count = 0
            if dead || all { count += try Self.delete(db, table: "dead_letters") }
            if all { count += try Self.delete(db, table: "outbox") }
            return count
        }
    }

    // MARK: The statements

    private static func insert(
        _ delivery: Delivery, sinks: [String], urgent: Bool, now: Int64,
        _ db: Database
    ) throws -> [OutboxEntry] {
        // Cached: compiled once per connection, not once per delivery.
        let statement = try db.cachedStatement(
            sql: """
                INSERT OR IGNORE INTO outbox (sink, delivery_id, alerts, digest, held, urgent, created_at,
                  attempts, next_attempt_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)
                """)
        let (id, alerts, isDigest) = (delivery.id, OutboxColumns.alertList(delivery), OutboxColumns.isDigest(delivery))
        var rows: [OutboxEntry] = []
        for sink in sinks {
            try statement.execute(arguments: [sink, id, alerts, isDigest, delivery.held, urgent, now, now])
            if db.changesCount > 0 {
                rows.append(
                    OutboxEntry(
                        id: db.lastInsertedRowID, sink: sink, delivery: delivery, urgent: urgent,
                        createdAt: now, nextAttemptAt: now))
            }
        }
        if !rows.isEmpty { try store(delivery.events, references: rows.count, db) }
        return rows
    }

    /// Stores each alert once, counting `references` more rows that name it.
    private static func store(_ alerts: [Alert], references: Int, _ db: Database) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO alerts (id, refs, rule, symbol, time, price, condition, threshold_low, threshold_high,
                  threshold_null, value, message, notify, kind, reminder, source)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET refs = refs + excluded.refs
                """)
        for alert in alerts {
            let (low, high) = OutboxColumns.threshold(alert.threshold)
            try statement.execute(arguments: [
                alert.id, references, alert.rule, alert.symbol, alert.time, alert.price,
                alert.condition, low, high, alert.threshold == .none, alert.value,
                alert.message, alert.notify.joined(separator: "\n"),
                alert.kind.rawValue, alert.reminder, alert.source
            ])
        }
    }

    /// Counts one row fewer naming each of `ids`; an alert no row names any more is deleted.
    private static func release(_ ids: [String], _ db: Database) throws {
        let decrement = try db.cachedStatement(sql: "UPDATE alerts SET refs = refs - 1 WHERE id = ?")
        let delete = try db.cachedStatement(sql: "DELETE FROM alerts WHERE id = ? AND refs <= 0")
        for id in ids {
            try decrement.execute(arguments: [id])
            try delete.execute(arguments: [id])
        }
    }

    private static func apply(_ outcome: OutboxOutcome, to ids: [Int64], _ db: Database) throws -> RecordedOutcome {
        switch outcome {
        case .delivered:
            let delete = try db.cachedStatement(sql: "DELETE FROM outbox WHERE id = ? RETURNING alerts")
            for id in ids {
                guard let alerts = try String.fetchOne(delete, arguments: [id]) else { continue }
                try release(OutboxColumns.split(alerts), db)
            }
            return RecordedOutcome()
        case .retry(let at, let reason):
            let update = try db.cachedStatement(
                sql: """
                    UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ? WHERE id = ?
                    """)
            for id in ids { try update.execute(arguments: [at, reason, id]) }
            return RecordedOutcome()
        case .dead(let reason, let lastError, let at, let fallback):
            var recorded = RecordedOutcome()
            for id in ids {
                guard let row = try entries(db, table: "outbox", id: id).first else { continue }
                recorded.deadLetters += 1
                try db.execute(
                    sql: """
                        INSERT INTO dead_letters (sink, delivery_id, alerts, digest, held, urgent, created_at, attempts,
                          last_error, reason, died_at)
                        SELECT sink, delivery_id, alerts, digest, held, urgent, created_at, attempts + 1, ?, ?, ?
                          FROM outbox WHERE id = ?
                        """, arguments: [lastError, reason, at, id])
                try db.execute(sql: "DELETE FROM outbox WHERE id = ?", arguments: [id])
                // The alerts stay: the dead letter names them. A fallback row names them once more.
                if let fallback {
                    recorded.moved += try insert(row.delivery, sinks: [fallback], urgent: row.urgent, now: at, db)
                }
            }
            return recorded
        }
    }

    private static func insertDead(
        _ delivery: Delivery, sink: String, reason: String, now: Int64,
        _ db: Database
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO dead_letters (sink, delivery_id, alerts, digest, held, urgent, created_at, attempts,
                  last_error, reason, died_at)
                VALUES (?, ?, ?, ?, ?, 0, ?, 1, ?, ?, ?)
                """,
            arguments: [
                sink, delivery.id, OutboxColumns.alertList(delivery), OutboxColumns.isDigest(delivery), delivery.held,
                now,
                reason, reason, now
            ])
        try store(delivery.events, references: 1, db)
    }

    private static func delete(_ db: Database, table: String) throws -> Int {
        let lists = try String.fetchAll(db, sql: "SELECT alerts FROM \(table)")
        try db.execute(sql: "DELETE FROM \(table)")
        for list in lists { try release(OutboxColumns.split(list), db) }
        return lists.count
    }

    private static func depth(_ db: Database, sink: String?) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox WHERE ? IS NULL OR sink = ?", arguments: [sink, sink])
            ?? 0
    }

    /// The rows of `table` (`outbox` or `dead_letters`) in id order (only `id` when given), with
    /// their alerts read from `alerts`.
    private static func entries(_ db: Database, table: String, id: Int64? = nil) throws -> [OutboxEntry] {
        let rows = try Row.fetchAll(
            db, sql: "SELECT * FROM \(table) WHERE ? IS NULL OR id = ? ORDER BY id",
            arguments: [id, id])
        guard !rows.isEmpty else { return [] }
        var alerts: [String: Alert] = [:]
        let lookup = try db.cachedStatement(sql: "SELECT * FROM alerts WHERE id = ?")
        let dead = table == "dead_letters"
        return try rows.map { row in
            var events: [Alert] = []
            let list: String = row["alerts"]
            for id in OutboxColumns.split(list) {
                if let alert = alerts[id] {
                    events.append(alert)
                } else if let stored = try Row.fetchOne(lookup, arguments: [id]) {
                    var alert = Self.alert(stored)
                    alert.adoptOccurrence(fromID: id)
                    alerts[id] = alert
                    events.append(alert)
                }
            }
            guard !events.isEmpty else {
                throw DatabaseError(
                    resultCode: .SQLITE_CORRUPT, message: "outbox row \(row["id"] as Int64) names no stored alert")
            }
            let isDigest: Bool = row["digest"]
            let held: Bool = row["held"]
            let sink: String = row["sink"]
            let delivery: Delivery =
                isDigest
                ? .digest(
                    Digest(
                        sink: digestSink(row["delivery_id"], first: events[0].id) ?? sink, events: events, held: held))
                : .event(events[0])
            return OutboxEntry(
                id: row["id"], sink: sink, delivery: delivery, urgent: row["urgent"],
                createdAt: row["created_at"], attempts: row["attempts"],
                nextAttemptAt: dead ? row["died_at"] : row["next_attempt_at"],
                lastError: row["last_error"], deadReason: dead ? row["reason"] : nil)
        }
    }

    /// The sink a digest was made for, read from its id `digest:SINK:<first event id>`: a
    /// fallback row keeps the id, and so the name, of the sink that gave it up.
    private static func digestSink(_ id: String, first: String) -> String? {
        let prefix = "digest:", suffix = ":" + first
        guard id.hasPrefix(prefix), id.hasSuffix(suffix), id.count > prefix.count + suffix.count else { return nil }
        return String(id.dropFirst(prefix.count).dropLast(suffix.count))
    }

    /// The alert of a row with `alertColumns` (also `policy_pending`'s).
    static func alert(_ row: Row) -> Alert {
        let high: Double? = row["threshold_high"]
        let low: Double = row["threshold_low"]
        let notify: String = row["notify"]
        let isNull: Bool = row["threshold_null"]
        let threshold: Threshold = if isNull { .none } else if let high { .range(low, high) } else { .value(low) }
        let kind: String = row["kind"]
        var alert = Alert(
            rule: row["rule"], symbol: row["symbol"], time: row["time"], price: row["price"],
            condition: row["condition"], threshold: threshold,
            value: row["value"], message: row["message"],
            notify: notify.isEmpty ? [] : notify.split(separator: "\n").map(String.init),
            kind: AlertKind(rawValue: kind) ?? .alert, reminder: row["reminder"])
        // A file of schema 9 or older opened read only has no `source` column: no source, as
        // every event it holds.
        if row.hasColumn("source") { alert.source = row["source"] }
        return alert
    }
}
