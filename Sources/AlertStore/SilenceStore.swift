import GRDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The silences of a state folder (Docs/sinks.md#silences), in their own file
/// `silences.sqlite` beside `pricealert.sqlite`: a user adds and expires silences while a daemon
/// holds the folder's lock, so this file takes no lock; SQLite's own locking (WAL, a busy
/// timeout) keeps the writers apart. The file and its `-wal` and `-shm` are private (0600).
public final class SilenceStore: Sendable {
    static let schemaVersion = 1

    public let path: String
    private let database: DatabasePool

    /// Creates the folder (0700) and the file as needed.
    public static func open(_ folder: StateFolder) throws(StateError) -> SilenceStore {
        try folder.create()
        let path = folder.path + "/silences.sqlite"
        do {
            if access(path, F_OK) != 0 {
                if !createPrivateFile(path) && errno != EEXIST {
                    throw StateError(path: folder.path, reason: "cannot create \(path): \(StateFolder.describe(errno))")
                }
            } else {
                _ = chmod(path, 0o600)
            }
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            let database = try DatabasePool(path: path, configuration: configuration)
            let found = try database.read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0 }
            if found > schemaVersion {
                throw StateError(
                    path: folder.path, reason: "\(path) was written by a newer pricealert (schema \(found))")
            }
            try migrator.migrate(database)
            return SilenceStore(path: path, database: database)
        } catch let error as StateError {
            throw error
        } catch {
            throw StateError(path: folder.path, reason: "cannot open \(path): \(StateStore.reason(error))")
        }
    }

    /// The folder's silences file if there is one (nil: no silence was ever added), for a
    /// command that only reads them and must not create a state folder to do so.
    public static func openIfPresent(_ folder: StateFolder) throws(StateError) -> SilenceStore? {
        guard access(folder.path + "/silences.sqlite", F_OK) == 0 else { return nil }
        return try open(folder)
    }

    private init(path: String, database: DatabasePool) {
        self.path = path
        self.database = database
    }

    /// Stores a new silence under a fresh id and returns it.
    public func add(
        rule: String, symbol: String, from: Int64, until: Int64, comment: String, now: Int64
    ) throws -> SilenceRecord {
        try database.write { db in
            var id = SilenceRecord.newID()
            while try Bool.fetchOne(db, sql: "SELECT 1 FROM silences WHERE id = ?", arguments: [id]) == true {
                id = SilenceRecord.newID()
            }
            let record = SilenceRecord(
                id: id, rule: rule, symbol: symbol, from: from, until: until, comment: comment,
                createdAt: now, expiredAt: nil)
            try db.execute(
                sql: """
                    INSERT INTO silences (id, rule, symbol, starts_at, ends_at, comment, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [record.id, rule, symbol, from, until, comment, now])
            return record
        }
    }

    /// Every silence, expired ones too, by start time then id.
    public func all() throws -> [SilenceRecord] {
        try database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, rule, symbol, starts_at, ends_at, comment, created_at, expired_at
                    FROM silences ORDER BY starts_at, id
                    """
            ).map { row in
                SilenceRecord(
                    id: row[0], rule: row[1], symbol: row[2], from: row[3], until: row[4], comment: row[5],
                    createdAt: row[6], expiredAt: row[7])
            }
        }
    }

    /// Ends the silence `id` at `now` (it silences nothing from then on). Nil when there is no
    /// such silence; a silence that has ended already is returned unchanged.
    public func expire(id: String, now: Int64) throws -> SilenceRecord? {
        try database.write { db in
            try db.execute(
                sql: """
                    UPDATE silences SET ends_at = ?, expired_at = ? WHERE id = ? AND ends_at > ?
                    """, arguments: [now, now, id, now])
            return try Row.fetchOne(
                db,
                sql: """
                    SELECT id, rule, symbol, starts_at, ends_at, comment, created_at, expired_at FROM silences WHERE id = ?
                    """, arguments: [id]
            ).map { row in
                SilenceRecord(
                    id: row[0], rule: row[1], symbol: row[2], from: row[3], until: row[4], comment: row[5],
                    createdAt: row[6], expiredAt: row[7])
            }
        }
    }

    public func close() {
        try? database.close()
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-silences") { db in
            try db.execute(
                sql: """
                    CREATE TABLE silences (
                      id TEXT PRIMARY KEY, rule TEXT NOT NULL, symbol TEXT NOT NULL,
                      starts_at INTEGER NOT NULL, ends_at INTEGER NOT NULL, comment TEXT NOT NULL,
                      created_at INTEGER NOT NULL, expired_at INTEGER
                    );
                    PRAGMA user_version = 1;
                    """)
        }
        return migrator
    }
}

/// One stored silence: glob patterns as given (the symbol's upper-cased), `[from, until)` in
/// epoch milliseconds.
public struct SilenceRecord: Sendable, Equatable {
    public var id: String
    public var rule: String
    public var symbol: String
    public var from: Int64
    public var until: Int64
    public var comment: String
    public var createdAt: Int64
    /// When `silence expire` ended it; nil when it runs its course.
    public var expiredAt: Int64?

    public init(
        id: String, rule: String, symbol: String, from: Int64, until: Int64, comment: String, createdAt: Int64,
        expiredAt: Int64?
    ) {
        self.id = id
        self.rule = rule
        self.symbol = symbol
        self.from = from
        self.until = until
        self.comment = comment
        self.createdAt = createdAt
        self.expiredAt = expiredAt
    }

    /// `active`, `pending` (starts later) or `expired` at `now`.
    public func state(at now: Int64) -> String {
        if until <= now { return "expired" }
        return from <= now ? "active" : "pending"
    }

    /// Twelve random hex digits: short enough to type, unlikely to repeat among a folder's
    /// silences (the store checks anyway).
    public static func newID() -> String {
        let value = UInt64.random(in: 0..<(1 << 48))
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 12 - hex.count) + hex
    }
}
