import AlertStore
import Logging
import PostgresNIO

/// Silences in PostgreSQL, as `AlertStore.SilenceStore` keeps them in SQLite: glob patterns as
/// given, `[from, until)` in epoch ms, expired ones kept. Shared by every pricealert on the store.
public final class PostgresSilences: Sendable {
    let queue: PostgresQueue

    init(_ queue: PostgresQueue) {
        self.queue = queue
    }

    /// Stores a new silence under a fresh id and returns it.
    public func add(
        rule: String, symbol: String, from: Int64, until: Int64, comment: String, now: Int64
    ) async throws -> SilenceRecord {
        return try await queue.perform { connection in
            while true {
                let record = SilenceRecord(
                    id: SilenceRecord.newID(), rule: rule, symbol: symbol, from: from, until: until, comment: comment,
                    createdAt: now, expiredAt: nil)
                let rows = try await connection.query(
                    """
                    INSERT INTO silences (id, rule, symbol, starts_at, ends_at, comment, created_at)
                    VALUES (\(record.id), \(rule), \(symbol), \(from), \(until), \(comment), \(now))
                    ON CONFLICT (id) DO NOTHING RETURNING id
                    """, logger: self.queue.logger)
                for try await _ in rows.decode(String.self) { return record }
            }
        }
    }

    /// Every silence, expired ones too, by start time then id.
    public func all() async throws -> [SilenceRecord] {
        try await select("TRUE", nil)
    }

    /// Ends the silence `id` at `now`. Nil when there is no such silence; a silence that has
    /// ended already is returned unchanged.
    public func expire(id: String, now: Int64) async throws -> SilenceRecord? {
        try await queue.perform { connection in
            _ = try await connection.query(
                "UPDATE silences SET ends_at = \(now), expired_at = \(now) WHERE id = \(id) AND ends_at > \(now)",
                logger: self.queue.logger)
        }
        return try await select("id = $1", id).first
    }

    private func select(_ condition: String, _ id: String?) async throws -> [SilenceRecord] {
        let logger = queue.logger
        return try await queue.perform { connection in try await Self.select(condition, id, connection, logger) }
    }

    /// The silences that meet `condition` (`$1` is `id`), on `connection`.
    static func select(
        _ condition: String, _ id: String?, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [SilenceRecord] {
        var query = PostgresQuery(
            unsafeSQL: """
                SELECT id, rule, symbol, starts_at, ends_at, comment, created_at, expired_at FROM silences
                WHERE \(condition) ORDER BY starts_at, id
                """)
        if let id { query.binds.append(id, context: .default) }
        let rows = try await connection.query(query, logger: logger)
        var records: [SilenceRecord] = []
        for try await row in rows.decode((String, String, String, Int64, Int64, String, Int64, Int64?).self) {
            records.append(
                SilenceRecord(
                    id: row.0, rule: row.1, symbol: row.2, from: row.3, until: row.4, comment: row.5,
                    createdAt: row.6, expiredAt: row.7))
        }
        return records
    }
}

/// The backfill ledger in PostgreSQL, as `AlertStore.BackfillLedger` keeps it in SQLite: per
/// source and symbol, how far back its history was fetched.
public final class PostgresBackfillLedger: Sendable {
    let queue: PostgresQueue

    init(_ queue: PostgresQueue) {
        self.queue = queue
    }

    /// Symbol → reach (epoch ms) for `source`.
    public func reaches(source: String) async throws -> [String: Int64] {
        return try await queue.perform { connection in
            let rows = try await connection.query(
                "SELECT symbol, reach FROM backfill_ledger WHERE source = \(source)", logger: self.queue.logger)
            var reaches: [String: Int64] = [:]
            for try await (symbol, reach) in rows.decode((String, Int64).self) { reaches[symbol] = reach }
            return reaches
        }
    }

    /// Every entry, by source then symbol.
    public func all() async throws -> [BackfillLedger.Entry] {
        return try await queue.perform { connection in
            let rows = try await connection.query(
                "SELECT source, symbol, reach, fetched_at, candles FROM backfill_ledger ORDER BY source, symbol",
                logger: self.queue.logger)
            var entries: [BackfillLedger.Entry] = []
            for try await row in rows.decode((String, String, Int64, Int64, Int64).self) {
                entries.append(
                    BackfillLedger.Entry(
                        source: row.0, symbol: row.1, reach: row.2, fetchedAt: row.3, candles: Int(row.4)))
            }
            return entries
        }
    }

    /// Stores `entries`, each replacing what its (source, symbol) had, in one transaction.
    public func record(_ entries: [BackfillLedger.Entry]) async throws {
        guard !entries.isEmpty else { return }
        try await queue.transaction { connection in
            for entry in entries {
                try await connection.query(
                    """
                    INSERT INTO backfill_ledger (source, symbol, reach, fetched_at, candles)
                    VALUES (\(entry.source), \(entry.symbol), \(entry.reach), \(entry.fetchedAt), \(Int64(entry.candles)))
                    ON CONFLICT (source, symbol) DO UPDATE
                      SET reach = excluded.reach, fetched_at = excluded.fetched_at, candles = excluded.candles
                    """, logger: self.queue.logger)
            }
        }
    }
}
