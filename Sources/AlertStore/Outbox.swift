import AlertCore
import GRDB

/// One alert waiting for one sink (or, in `dead`, given up on). Holds every field of the alert,
/// so it can be delivered again after a restart.
public struct OutboxEntry: Sendable, Equatable {
    /// The row id: insertion order, which is the delivery order of a rule's alerts per sink.
    public var id: Int64
    public var alert: Alert
    public var sink: String
    /// The spec §7 JSON, as enqueued.
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

/// The durable outbox: alerts bound for sinks that must not lose them (webhook, exec), in
/// SQLite. A row is written before delivery starts and deleted only after success, or moved to
/// `dead_letters` with the reason. Every method is one transaction; times are epoch ms.
public final class Outbox: Sendable {
    private let database: DatabasePool

    init(database: DatabasePool) {
        self.database = database
    }

    /// Writes one row per sink for `alert`, all in one transaction. An (alert id, sink) already
    /// pending is left as it is, so enqueueing twice never delivers twice.
    public func enqueue(_ alert: Alert, sinks: [String], now: Int64) throws {
        guard !sinks.isEmpty else { return }
        let payload = AlertFormat.json(alert)
        let (low, high) = Self.columns(alert.threshold)
        try database.write { db in
            for sink in sinks {
                try db.execute(sql: """
                    INSERT OR IGNORE INTO outbox (alert_id, rule, symbol, sink, time, price, condition,
                      threshold_low, threshold_high, value, message, notify, payload, created_at, attempts,
                      next_attempt_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)
                    """, arguments: [alert.id, alert.rule, alert.symbol, sink, alert.time, alert.price,
                                     alert.condition, low, high, alert.value, alert.message,
                                     alert.notify.joined(separator: "\n"), payload, now, now])
            }
        }
    }

    /// Rows due at `now`, oldest first, at most `limit`; only the oldest pending row of each
    /// (sink, rule) is ever due, so a rule's alerts reach a sink in order.
    public func due(now: Int64, limit: Int, sink: String? = nil) throws -> [OutboxEntry] {
        try database.read { db in
            try Row.fetchAll(db, sql: """
                SELECT * FROM outbox o
                WHERE o.next_attempt_at <= ? AND (? IS NULL OR o.sink = ?)
                  AND o.id = (SELECT MIN(id) FROM outbox WHERE sink = o.sink AND rule = o.rule)
                ORDER BY o.next_attempt_at, o.id LIMIT ?
                """, arguments: [now, sink, sink, limit]).map { Self.entry($0, dead: false) }
        }
    }

    /// The earliest `next_attempt_at` of a sink's pending rows (nil when none).
    public func nextAttemptAt(sink: String) throws -> Int64? {
        try database.read { db in
            try Int64.fetchOne(db, sql: "SELECT MIN(next_attempt_at) FROM outbox WHERE sink = ?", arguments: [sink])
        }
    }

    /// Delivered: the row is deleted.
    public func markDelivered(_ id: Int64) throws {
        try database.write { db in try db.execute(sql: "DELETE FROM outbox WHERE id = ?", arguments: [id]) }
    }

    /// A failed attempt to try again at `after` (epoch ms).
    public func markRetry(_ id: Int64, after: Int64, reason: String) throws {
        try database.write { db in
            try db.execute(sql: """
                UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ? WHERE id = ?
                """, arguments: [after, reason, id])
        }
    }

    /// Given up: the row moves to `dead_letters` with `reason` (counting this attempt).
    public func markDead(_ id: Int64, reason: String, lastError: String?, now: Int64) throws {
        try database.write { db in
            try db.execute(sql: """
                INSERT INTO dead_letters (alert_id, rule, symbol, sink, time, price, condition, threshold_low,
                  threshold_high, value, message, notify, payload, created_at, attempts, last_error, reason, died_at)
                SELECT alert_id, rule, symbol, sink, time, price, condition, threshold_low, threshold_high, value,
                  message, notify, payload, created_at, attempts + 1, ?, ?, ? FROM outbox WHERE id = ?
                """, arguments: [lastError, reason, now, id])
            try db.execute(sql: "DELETE FROM outbox WHERE id = ?", arguments: [id])
        }
    }

    /// Makes every pending row due at `now` (for `outbox flush`).
    public func makeAllDue(now: Int64) throws {
        try database.write { db in try db.execute(sql: "UPDATE outbox SET next_attempt_at = ?", arguments: [now]) }
    }

    /// Every pending row, in insertion order.
    public func pending() throws -> [OutboxEntry] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM outbox ORDER BY id").map { Self.entry($0, dead: false) }
        }
    }

    /// Every dead letter, oldest first.
    public func dead() throws -> [OutboxEntry] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM dead_letters ORDER BY id").map { Self.entry($0, dead: true) }
        }
    }

    /// Pending rows (optionally of one sink).
    public func depth(sink: String? = nil) throws -> Int {
        try database.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox WHERE ? IS NULL OR sink = ?",
                             arguments: [sink, sink]) ?? 0
        }
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

    private static func columns(_ threshold: Threshold) -> (Double, Double?) {
        switch threshold {
        case .value(let x): return (x, nil)
        case .range(let low, let high): return (low, high)
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
