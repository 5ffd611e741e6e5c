import AlertCore
import Foundation
import GRDB

/// The engine's state between runs (issue #5), beside the outbox in the same database: each
/// symbol's `SymbolSnapshot` (pair states, `prev`, minute history) and the last market list.
/// A save is one transaction, so a crash leaves the previous save or the new one, never a mix.
public final class EngineStateStore: Sendable {
    private let database: DatabasePool

    init(database: DatabasePool) {
        self.database = database
    }

    /// Every saved symbol. A row that cannot be read is an error naming the symbol: state is
    /// never silently dropped.
    public func load() throws -> [SymbolSnapshot] {
        let rows = try database.read { db in
            try Row.fetchAll(db, sql: "SELECT symbol, snapshot FROM symbol_state ORDER BY symbol")
        }
        return try rows.map { row in
            let symbol: String = row["symbol"]
            let bytes: [UInt8] = [UInt8](row["snapshot"] as Data)
            do throws(SnapshotError) {
                return try SymbolSnapshot(decoding: bytes)
            } catch {
                throw StateReadError(symbol: symbol, reason: error.reason)
            }
        }
    }

    /// Writes `snapshots` (replacing those symbols' rows) and, when given, the market list, in
    /// one transaction.
    public func save(_ snapshots: [SymbolSnapshot], markets: MarketsSave? = nil, now: Int64) throws {
        guard !snapshots.isEmpty || markets != nil else { return }
        try database.write { db in
            let statement = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO symbol_state (symbol, snapshot, saved_at) VALUES (?, ?, ?)
                """)
            for snapshot in snapshots {
                try statement.execute(arguments: [snapshot.symbol, Data(snapshot.encoded()), now])
            }
            if let markets { try Self.write(markets, db: db) }
        }
    }

    /// The market list saved last, and where and when it came from; nil when none was saved.
    public func loadMarkets() throws -> MarketsSave? {
        try database.read { db in
            guard let meta = try Row.fetchOne(db, sql: "SELECT source, fetched_at FROM market_list_meta") else { return nil }
            let markets = try Row.fetchAll(db, sql: "SELECT * FROM market_list ORDER BY position").map { row in
                Market(symbol: row["symbol"], name: row["name"], base: row["base"], quote: row["quote"],
                       future: row["future"], active: row["active"])
            }
            return MarketsSave(markets: markets, source: meta["source"], fetchedAt: meta["fetched_at"])
        }
    }

    private static func write(_ save: MarketsSave, db: Database) throws {
        try db.execute(sql: "DELETE FROM market_list; DELETE FROM market_list_meta")
        try db.execute(sql: "INSERT INTO market_list_meta (source, fetched_at) VALUES (?, ?)",
                       arguments: [save.source, save.fetchedAt])
        let statement = try db.cachedStatement(sql: """
            INSERT INTO market_list (position, symbol, name, base, quote, future, active) VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        for (i, m) in save.markets.enumerated() {
            try statement.execute(arguments: [i, m.symbol, m.name, m.base, m.quote, m.future, m.active])
        }
    }

    /// Symbols with saved state.
    public func count() throws -> Int {
        try database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM symbol_state") ?? 0 }
    }

    static func migrate(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE symbol_state (
              symbol TEXT PRIMARY KEY NOT NULL, snapshot BLOB NOT NULL, saved_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE market_list_meta (source TEXT NOT NULL, fetched_at INTEGER NOT NULL);
            CREATE TABLE market_list (
              position INTEGER PRIMARY KEY, symbol TEXT NOT NULL, name TEXT NOT NULL, base TEXT NOT NULL,
              quote TEXT NOT NULL, future INTEGER NOT NULL, active INTEGER NOT NULL
            );
            PRAGMA user_version = 2;
            """)
    }
}

/// A market list as saved: the entries, the source (name or file) and when (epoch ms).
public struct MarketsSave: Sendable, Equatable {
    public var markets: [Market]
    public var source: String
    public var fetchedAt: Int64

    public init(markets: [Market], source: String, fetchedAt: Int64) {
        self.markets = markets
        self.source = source
        self.fetchedAt = fetchedAt
    }
}

/// A saved symbol that cannot be read.
public struct StateReadError: Error, Sendable, CustomStringConvertible {
    public var symbol: String
    public var reason: String
    public var description: String { "saved state of \(symbol) cannot be read: \(reason)" }
}
