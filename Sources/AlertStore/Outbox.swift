import AlertCore
import GRDB

/// One alert waiting for one sink (or, in `dead`, given up on). Holds every field of the alert,
/// so it can be delivered again after a restart.
public struct OutboxEntry: Sendable, Equatable {
    /// The row id: insertion order, which is the delivery order of a rule's alerts per sink.
    public var id: Int64
    public var alert: Alert
    public var sink: String
    /// The alert event's JSON (Docs/rules.md#the-alert-event), as enqueued.
    public var payload: String
    /// Epoch milliseconds.
    public var createdAt: Int64
    public var attempts: Int
    /// Epoch milliseconds; for dead letters, when it died.
    public var nextAttemptAt: Int64
    public var lastError: String?
    /// Why it is a dead letter (nil while pending).
    public var deadReason: String?

    public var alertID: String { alert.id }
}

/// What became of one delivery attempt, as the outbox records it.
public enum OutboxOutcome: Sendable, Equatable {
    /// The row is deleted.
    case delivered
    /// Tried again at `at` (epoch ms); `attempts` goes up by one.
    case retry(at: Int64, reason: String)
    /// The row moves to `dead_letters` with `reason` (counting this attempt), dying at `at`.
    case dead(reason: String, lastError: String?, at: Int64)
}

/// The durable outbox: alerts bound for sinks that must not lose them (webhook, exec), in
/// SQLite. A row is written before delivery starts and deleted only after success, or moved to
/// `dead_letters` with the reason. Times are epoch ms.
///
/// The delivery path uses the grouped methods (`enqueue(_:sinks:now:committed:)`,
/// `record(_:_:failed:)`, `commit()`, `loadPending()`, `countPending()`): they return at once
/// and are written by one writer on a thread of its own, all that queued up while the previous
/// transaction was committing in one transaction and one fsync (`GroupCommitter`). The other
/// methods are one blocking transaction each, for commands and tests.
public final class Outbox: Sendable {
    private let database: DatabasePool
    let writer: GroupCommitter

    init(database: DatabasePool) {
        self.database = database
        self.writer = GroupCommitter(database: database)
    }

    // MARK: Grouped, off the caller's thread

    /// Queues one row per sink for `alert` for the next group commit and returns at once.
    /// `committed` runs on the writer's queue once the rows are durable, in the order alerts were
    /// enqueued, with the rows written (an (alert id, sink) already pending is left as it is and
    /// not returned). When they cannot be written (disk full, table missing), `committed` gets
    /// the error, and the write is kept and tried again with every later group, and at least
    /// every `writer.retryDelay`, while the process runs: `committed` then gets the rows once
    /// they are written.
    public func enqueue(_ alert: Alert, sinks: [String], now: Int64,
                        committed: @escaping @Sendable (Result<[OutboxEntry], any Error>) -> Void) {
        writer.submit(GroupCommitter.Write(apply: { db in
            let rows = try Self.insert(alert, sinks: sinks, now: now, db)
            return { committed(.success(rows)) }
        }, failed: { committed(.failure($0)) }, retried: true))
    }

    /// Queues an attempt's outcome for the next group commit and returns at once; `.delivered`
    /// waits for the next other write or at most `writer.lazyDelay` (200 ms). When it cannot be
    /// written, `failed` is called once and the write is tried again with every later group
    /// while the process runs.
    public func record(_ id: Int64, _ outcome: OutboxOutcome, failed: @escaping @Sendable (any Error) -> Void) {
        // A delivery is usually the end of its row: no need to make it durable before the next
        // alert's commit (a crash in between delivers that alert once more, with the same id).
        writer.submit(GroupCommitter.Write(apply: { db in
            try Self.apply(outcome, to: id, db)
            return {}
        }, failed: failed, retried: true, lazy: outcome == .delivered))
    }

    /// Returns when everything enqueued or recorded before is durable (or failed).
    public func commit() async {
        await writer.barrier()
    }

    /// Every pending row in insertion order, read after everything enqueued or recorded before.
    public func loadPending() async throws -> [OutboxEntry] {
        try await writer.read { db in try Self.pending(db) }
    }

    /// Pending rows (all sinks), counted after everything enqueued or recorded before.
    public func countPending() async throws -> Int {
        try await writer.read { db in try Self.depth(db, sink: nil) }
    }

    // MARK: One transaction each, blocking

    /// Writes one row per sink for `alert`, all in one transaction. An (alert id, sink) already
    /// pending is left as it is, so enqueueing twice never delivers twice.
    @discardableResult
    public func enqueue(_ alert: Alert, sinks: [String], now: Int64) throws -> [OutboxEntry] {
        try database.write { db in try Self.insert(alert, sinks: sinks, now: now, db) }
    }

    /// Writes one attempt's outcome.
    public func record(_ id: Int64, _ outcome: OutboxOutcome) throws {
        try database.write { db in try Self.apply(outcome, to: id, db) }
    }

    /// Makes every pending row due at `now` (for `outbox flush`).
    public func makeAllDue(now: Int64) throws {
        try database.write { db in try db.execute(sql: "UPDATE outbox SET next_attempt_at = ?", arguments: [now]) }
    }

    /// Every pending row, in insertion order.
    public func pending() throws -> [OutboxEntry] {
        try database.read { db in try Self.pending(db) }
    }

    /// Every dead letter, oldest first.
    public func dead() throws -> [OutboxEntry] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM dead_letters ORDER BY id").map { Self.entry($0, dead: true) }
        }
    }

    /// Pending rows (optionally of one sink).
    public func depth(sink: String? = nil) throws -> Int {
        try database.read { db in try Self.depth(db, sink: sink) }
    }

    /// Deletes dead letters (`dead`), or dead letters and pending rows (`all`); returns how many
    /// rows went.
    @discardableResult
    public func purge(dead: Bool, all: Bool) throws -> Int {
        try database.write { db in
            var count = 0
            if dead || all {
                try db.execute(sql: "DELETE FROM dead_letters")
                count += db.changesCount
            }
            if all {
                try db.execute(sql: "DELETE FROM outbox")
                count += db.changesCount
            }
            return count
        }
    }

    // MARK: The statements

    private static func insert(_ alert: Alert, sinks: [String], now: Int64, _ db: Database) throws -> [OutboxEntry] {
        let payload = AlertFormat.json(alert)
        let (low, high) = columns(alert.threshold)
        var rows: [OutboxEntry] = []
        // Cached: compiled once per connection, not once per alert.
        let statement = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO outbox (alert_id, rule, symbol, sink, time, price, condition,
              threshold_low, threshold_high, value, message, notify, payload, created_at, attempts,
              next_attempt_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)
            """)
        for sink in sinks {
            try statement.execute(arguments: [alert.id, alert.rule, alert.symbol, sink, alert.time, alert.price,
                                              alert.condition, low, high, alert.value, alert.message,
                                              alert.notify.joined(separator: "\n"), payload, now, now])
            if db.changesCount > 0 {
                rows.append(OutboxEntry(id: db.lastInsertedRowID, alert: alert, sink: sink, payload: payload,
                                        createdAt: now, attempts: 0, nextAttemptAt: now, lastError: nil,
                                        deadReason: nil))
            }
        }
        return rows
    }

    private static func apply(_ outcome: OutboxOutcome, to id: Int64, _ db: Database) throws {
        let delete = try db.cachedStatement(sql: "DELETE FROM outbox WHERE id = ?")
        switch outcome {
        case .delivered:
            try delete.execute(arguments: [id])
        case .retry(let at, let reason):
            try db.cachedStatement(sql: """
                UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ? WHERE id = ?
                """).execute(arguments: [at, reason, id])
        case .dead(let reason, let lastError, let at):
            try db.execute(sql: """
                INSERT INTO dead_letters (alert_id, rule, symbol, sink, time, price, condition, threshold_low,
                  threshold_high, value, message, notify, payload, created_at, attempts, last_error, reason, died_at)
                SELECT alert_id, rule, symbol, sink, time, price, condition, threshold_low, threshold_high, value,
                  message, notify, payload, created_at, attempts + 1, ?, ?, ? FROM outbox WHERE id = ?
                """, arguments: [lastError, reason, at, id])
            try delete.execute(arguments: [id])
        }
    }

    private static func pending(_ db: Database) throws -> [OutboxEntry] {
        try Row.fetchAll(db, sql: "SELECT * FROM outbox ORDER BY id").map { entry($0, dead: false) }
    }

    private static func depth(_ db: Database, sink: String?) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox WHERE ? IS NULL OR sink = ?", arguments: [sink, sink]) ?? 0
    }

    private static func columns(_ threshold: Threshold) -> (Double, Double?) {
        switch threshold {
        case .value(let x): return (x, nil)
        case .range(let low, let high): return (low, high)
        case .none: return (.nan, nil)
        }
    }

    private static func entry(_ row: Row, dead: Bool) -> OutboxEntry {
        let high: Double? = row["threshold_high"]
        let low: Double = row["threshold_low"]
        let notify: String = row["notify"]
        let threshold: Threshold = if let high { .range(low, high) } else { .value(low) }
        let next: Int64 = dead ? row["died_at"] : row["next_attempt_at"]
        let reason: String? = dead ? row["reason"] : nil
        let alert = Alert(rule: row["rule"], symbol: row["symbol"], time: row["time"], price: row["price"],
                          condition: row["condition"], threshold: threshold,
                          value: row["value"], message: row["message"],
                          notify: notify.isEmpty ? [] : notify.split(separator: "\n").map(String.init))
        return OutboxEntry(id: row["id"], alert: alert, sink: row["sink"], payload: row["payload"],
                           createdAt: row["created_at"], attempts: row["attempts"],
                           nextAttemptAt: next, lastError: row["last_error"], deadReason: reason)
    }
}
