import GRDB

/// Which symbols' history was already filled from a source's candles (Docs/candles.md), so
/// `run` and `check` fetch candles once per symbol: the seeded history itself is in the engine
/// state (`EngineStateStore`). One row per source and symbol: how far back the fetch reached,
/// when, and how many candles it gave (0: the source had none; not asked again either).
///
/// The table is created on first use (`CREATE TABLE IF NOT EXISTS`), so folders of any schema
/// version gain it without a migration, and a binary without it ignores it.
public final class BackfillLedger: Sendable {
    private let database: DatabasePool

    init(database: DatabasePool) {
        self.database = database
    }

    public struct Entry: Sendable, Equatable {
        public var source: String
        public var symbol: String
        /// Milliseconds of history the fetch asked for, back from `fetchedAt`.
        public var reach: Int64
        public var fetchedAt: Int64
        public var candles: Int

        public init(source: String, symbol: String, reach: Int64, fetchedAt: Int64, candles: Int) {
            self.source = source
            self.symbol = symbol
            self.reach = reach
            self.fetchedAt = fetchedAt
            self.candles = candles
        }
    }

    /// The symbols of `source` filled so far, with the reach each fetch had.
    public func reaches(source: String) throws -> [String: Int64] {
        try database.write { db in
            try Self.create(db)
            var reaches: [String: Int64] = [:]
            let rows = try Row.fetchCursor(
                db, sql: "SELECT symbol, reach FROM backfill_ledger WHERE source = ?", arguments: [source])
            while let row = try rows.next() { reaches[row[0]] = row[1] }
            return reaches
        }
    }

    /// Records `entries` (replacing earlier rows of the same source and symbol), in one transaction.
    public func record(_ entries: [Entry]) throws {
        guard !entries.isEmpty else { return }
        try database.write { db in
            try Self.create(db)
            let statement = try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO backfill_ledger (source, symbol, reach, fetched_at, candles) VALUES (?, ?, ?, ?, ?)
                    """)
            for entry in entries {
                try statement.execute(arguments: [
                    entry.source, entry.symbol, entry.reach, entry.fetchedAt, entry.candles
                ])
            }
        }
    }

    /// Every entry, by source then symbol (for `pricealert store copy`).
    public func all() throws -> [Entry] {
        try database.write { db in
            try Self.create(db)
            return try Row.fetchAll(
                db,
                sql: "SELECT source, symbol, reach, fetched_at, candles FROM backfill_ledger ORDER BY source, symbol"
            ).map { row in Entry(source: row[0], symbol: row[1], reach: row[2], fetchedAt: row[3], candles: row[4]) }
        }
    }

    private static func create(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS backfill_ledger (
                  source TEXT NOT NULL, symbol TEXT NOT NULL, reach INTEGER NOT NULL,
                  fetched_at INTEGER NOT NULL, candles INTEGER NOT NULL,
                  PRIMARY KEY (source, symbol)
                ) WITHOUT ROWID
                """)
    }
}
