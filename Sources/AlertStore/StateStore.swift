import GRDB
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The opened state folder: the lock, and `pricealert.sqlite` in WAL mode with its schema
/// migrated to this binary's version. Open one per process; a second open of the same folder
/// (here or in another process) fails with "DIR is in use by another pricealert (pid N)".
///
/// The database file and its `-wal` and `-shm` are private to the user (0600: SQLite gives the
/// latter two the database's mode). A new database is built under another name and renamed into
/// place once its schema is committed, so `pricealert.sqlite` always holds a schema: an empty
/// (0 bytes) or damaged file is an error naming it, never a fresh start.
public final class StateStore: Sendable {
    /// The schema version this binary writes (`PRAGMA user_version`).
    public static let schemaVersion = 10

    public let folder: StateFolder
    public let outbox: Outbox
    /// The engine's saved state and the last market list.
    public let engineState: EngineStateStore
    /// The symbols whose history was filled from candles.
    public let backfill: BackfillLedger
    /// What the policy stages hold: quiet-hours holds and open digests.
    public let policyState: PolicyStateStore
    /// Nil when opened for reading only, without the lock (`openForReading`).
    private let lock: StateLock?
    private let database: DatabasePool
    private let closed = Atomic(false)

    /// Each connection's page cache, in KiB as SQLite's negative `cache_size` says (its default
    /// is 2 000 KiB): a daemon keeps it filled from one save to the next, and the pages it drops
    /// are read again from the kernel's file cache.
    static let pageCacheSize = -256

    /// Creates the folder if needed (0700), takes the lock, opens and migrates the database.
    public static func open(_ folder: StateFolder) throws(StateError) -> StateStore {
        try folder.create()
        let lock = try StateLock(folder: folder)
        do {
            try privateDatabase(folder)
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = \(pageCacheSize)") }
            let database = try DatabasePool(path: folder.databasePath, configuration: configuration)
            // FULL: in WAL mode, NORMAL may lose the last commits on power loss; an enqueued
            // alert must survive it. Set on the writer after opening: a pool switches its writer
            // to WAL with `synchronous = NORMAL` after `prepareDatabase` has run.
            // The version is read on the writer too: a `check` never opens a reader connection.
            let found = try database.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                return try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            }
            if found > schemaVersion {
                throw StateError(path: folder.path, reason: "newer schema", newerSchema: found)
            }
            // Each migration sets the version in its own transaction: at this binary's version,
            // every migration has been applied.
            if found < schemaVersion { try migrator.migrate(database) }
            return StateStore(folder: folder, lock: lock, database: database)
        } catch let error as StateError {
            lock.release()
            throw error
        } catch {
            lock.release()
            throw StateError(path: folder.path, reason: "cannot open \(folder.databasePath): \(reason(error))")
        }
    }

    /// Opens the database to read only, without taking the lock: safe beside the process that
    /// holds it (WAL readers see committed transactions only). Nil when there is no database.
    public static func openForReading(_ folder: StateFolder) throws(StateError) -> StateStore? {
        guard let size = try databaseSize(folder) else { return nil }
        do {
            if size == 0 { throw emptyDatabase(folder) }
            var configuration = Configuration()
            configuration.readonly = true
            configuration.busyMode = .timeout(5)
            let database = try DatabasePool(path: folder.databasePath, configuration: configuration)
            let found = try database.read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0 }
            if found > schemaVersion {
                throw StateError(path: folder.path, reason: "newer schema", newerSchema: found)
            }
            return StateStore(folder: folder, lock: nil, database: database)
        } catch let error as StateError {
            throw error
        } catch {
            throw StateError(path: folder.path, reason: "cannot open \(folder.databasePath): \(reason(error))")
        }
    }

    /// Makes the database private (0600, with a `-wal` and `-shm` a crash left), or builds a new
    /// one when there is none; refuses an empty file.
    private static func privateDatabase(_ folder: StateFolder) throws {
        guard let size = try databaseSize(folder) else { return try create(folder) }
        if size == 0 { throw emptyDatabase(folder) }
        for path in [folder.databasePath, folder.databasePath + "-wal", folder.databasePath + "-shm"] {
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & 0o077 != 0 { _ = chmod(path, 0o600) }
        }
    }

    /// The database file's size in bytes; nil when there is none.
    private static func databaseSize(_ folder: StateFolder) throws(StateError) -> Int? {
        var info = stat()
        guard stat(folder.databasePath, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw StateError(
                path: folder.path, reason: "cannot open \(folder.databasePath): \(StateFolder.describe(errno))")
        }
        return Int(info.st_size)
    }

    private static func emptyDatabase(_ folder: StateFolder) -> StateError {
        StateError(
            path: folder.path,
            reason:
                "\(folder.databasePath) is empty (0 bytes), not a pricealert database; move it away to start with no saved state"
        )
    }

    /// Builds the database under a temporary name (0600, WAL, migrated, the WAL emptied and
    /// removed by closing) and renames it into place. A process killed on the way leaves only
    /// the temporary file, which the next open replaces.
    private static func create(_ folder: StateFolder) throws {
        let building = folder.databasePath + ".new"
        for suffix in ["", "-wal", "-shm"] { unlink(building + suffix) }
        guard createPrivateFile(building) else {
            throw StateError(path: folder.path, reason: "cannot create \(building): \(StateFolder.describe(errno))")
        }
        let database = try DatabasePool(path: building)
        try migrator.migrate(database)
        _ = try database.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        try database.close()
        guard access(building + "-wal", F_OK) != 0 else {
            throw StateError(
                path: folder.path, reason: "cannot create \(folder.databasePath): its write-ahead log was not emptied")
        }
        guard rename(building, folder.databasePath) == 0 else {
            throw StateError(
                path: folder.path, reason: "cannot create \(folder.databasePath): \(StateFolder.describe(errno))")
        }
    }

    private init(folder: StateFolder, lock: StateLock?, database: DatabasePool) {
        self.folder = folder
        self.lock = lock
        self.database = database
        self.outbox = Outbox(database: database)
        self.engineState = EngineStateStore(database: database)
        self.backfill = BackfillLedger(database: database)
        self.policyState = PolicyStateStore(writer: outbox.writer, reader: database)
    }

    /// The writer connection's `PRAGMA synchronous` (2 = FULL), for tests.
    func synchronousMode() throws -> Int {
        try database.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }

    /// Waits for the outbox's queued writes, closes the database and releases the lock; the
    /// store must not be used afterwards.
    ///
    /// Copies the WAL into the database and empties it first: a WAL left behind is copied again
    /// whole by the next process's first checkpoint (SQLite cannot know which of its frames were
    /// copied already), which would make every `check` rewrite the whole database.
    public func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        outbox.writer.waitBlocking()
        if lock != nil { _ = try? database.writeWithoutTransaction { db in try db.checkpoint(.truncate) } }
        try? database.close()
        lock?.release()
    }

    /// Why this process no longer holds the folder it opened, or nil while it does (see
    /// `StateLock.lost`); always nil when opened for reading only.
    public func lost() -> String? {
        guard !closed.load(ordering: .relaxed), let reason = lock?.lost() else { return nil }
        return "state folder \(folder.path) was deleted or moved while in use: \(reason)"
    }

    /// `error` for a message: SQLite's errors (a damaged page, a missing table) name the
    /// database file.
    public func describe(_ error: any Error) -> String {
        error is DatabaseError ? "\(folder.databasePath): \(Self.reason(error))" : "\(error)"
    }

    /// SQLite's own words for `error`, without the statement ("database disk image is malformed
    /// (SQLite error 11)"); other errors as they describe themselves.
    public static func reason(_ error: any Error) -> String {
        guard let error = error as? DatabaseError else { return "\(error)" }
        return "\(error.message ?? "\(error.resultCode)") (SQLite error \(error.extendedResultCode.rawValue))"
    }

    /// Every schema change is one migration, appended, never edited; each ends by setting
    /// `user_version` so an older binary can refuse a newer file instead of misreading it.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-outbox") { db in
            // The alert's fields (to rebuild it after a restart), its event JSON, and the sink.
            let alertColumns = """
                alert_id TEXT NOT NULL, rule TEXT NOT NULL, symbol TEXT NOT NULL, sink TEXT NOT NULL,
                time INTEGER NOT NULL, price REAL NOT NULL, condition TEXT NOT NULL,
                threshold_low REAL NOT NULL, threshold_high REAL, value REAL NOT NULL,
                message TEXT NOT NULL, notify TEXT NOT NULL, payload TEXT NOT NULL,
                created_at INTEGER NOT NULL
                """
            try db.execute(
                sql: """
                    CREATE TABLE outbox (
                      id INTEGER PRIMARY KEY AUTOINCREMENT, \(alertColumns),
                      attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at INTEGER NOT NULL, last_error TEXT,
                      UNIQUE (alert_id, sink)
                    );
                    CREATE INDEX outbox_order ON outbox (sink, rule, id);
                    CREATE INDEX outbox_due ON outbox (sink, next_attempt_at);
                    CREATE TABLE dead_letters (
                      id INTEGER PRIMARY KEY AUTOINCREMENT, \(alertColumns),
                      attempts INTEGER NOT NULL, last_error TEXT, reason TEXT NOT NULL, died_at INTEGER NOT NULL
                    );
                    PRAGMA user_version = 1;
                    """)
        }
        migrator.registerMigration("v2-state", migrate: EngineStateStore.migrate)
        migrator.registerMigration("v3-outbox-lean") { db in
            // Pending rows are read whole at start and held by the sink workers; nothing looks
            // rows up by these indexes, and each would cost two more pages written per insert and
            // per delete.
            try db.execute(
                sql: """
                    DROP INDEX IF EXISTS outbox_order;
                    DROP INDEX IF EXISTS outbox_due;
                    PRAGMA user_version = 3;
                    """)
        }
        migrator.registerMigration("v4-history-chunks", migrate: EngineStateStore.migrateHistory)
        migrator.registerMigration("v5-history-by-hour", migrate: EngineStateStore.migrateHistoryByHour)
        migrator.registerMigration("v6-event-kinds") { db in
            // The event's kind and reminder number, and a null threshold (combinations), so a row
            // rebuilds the event it was made from. Rows written before are alerts with a threshold.
            for table in ["outbox", "dead_letters"] {
                try db.execute(
                    sql: """
                        ALTER TABLE \(table) ADD COLUMN kind TEXT NOT NULL DEFAULT 'alert';
                        ALTER TABLE \(table) ADD COLUMN reminder INTEGER;
                        ALTER TABLE \(table) ADD COLUMN threshold_null INTEGER NOT NULL DEFAULT 0;
                        """)
            }
            try db.execute(sql: "PRAGMA user_version = 6")
        }
        migrator.registerMigration("v7-deliveries", migrate: migrateToDeliveries)
        migrator.registerMigration("v8-policy-pending", migrate: PolicyStateStore.migrate)
        migrator.registerMigration("v9-policy-pending-stage", migrate: PolicyStateStore.migrateStage)
        migrator.registerMigration("v10-event-sources") { db in
            // The source of an event of a tick with one (rules v3 §6), so a redelivered or held
            // event keeps its `source` and its id. Rows written before have none, as their events.
            try db.execute(
                sql: """
                    ALTER TABLE alerts ADD COLUMN source TEXT;
                    ALTER TABLE policy_pending ADD COLUMN source TEXT;
                    PRAGMA user_version = 10;
                    """)
        }
        return migrator
    }
}

extension StateStore {
    /// Rows become deliveries (an event or a digest of alert ids) per sink, and each alert is
    /// stored once, in `alerts`, with the number of rows naming it. Every pending row and dead
    /// letter of schema 6 becomes an event row of the same id, sink, attempts and times.
    static func migrateToDeliveries(_ db: Database) throws {
        // A row: which delivery, for which sink, of which alerts (ids, one per line, in order).
        let rowColumns = """
            sink TEXT NOT NULL, delivery_id TEXT NOT NULL, alerts TEXT NOT NULL,
            digest INTEGER NOT NULL DEFAULT 0, held INTEGER NOT NULL DEFAULT 0, urgent INTEGER NOT NULL DEFAULT 0,
            created_at INTEGER NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT
            """
        // An alert's fields, enough to rebuild it after a restart.
        let alertColumns = """
            rule TEXT NOT NULL, symbol TEXT NOT NULL, time INTEGER NOT NULL, price REAL NOT NULL,
            condition TEXT NOT NULL, threshold_low REAL NOT NULL, threshold_high REAL,
            threshold_null INTEGER NOT NULL DEFAULT 0, value REAL NOT NULL, message TEXT NOT NULL,
            notify TEXT NOT NULL, kind TEXT NOT NULL DEFAULT 'alert', reminder INTEGER
            """
        let fields =
            "rule, symbol, time, price, condition, threshold_low, threshold_high, threshold_null, value, message, notify, kind, reminder"
        try db.execute(
            sql: """
                CREATE TABLE alerts (id TEXT PRIMARY KEY NOT NULL, refs INTEGER NOT NULL, \(alertColumns));
                INSERT INTO alerts (id, refs, \(fields))
                  SELECT alert_id, COUNT(*), \(fields) FROM
                    (SELECT alert_id, \(fields) FROM outbox UNION ALL SELECT alert_id, \(fields) FROM dead_letters)
                  GROUP BY alert_id;
                CREATE TABLE outbox_v7 (
                  id INTEGER PRIMARY KEY AUTOINCREMENT, \(rowColumns), next_attempt_at INTEGER NOT NULL,
                  UNIQUE (delivery_id, sink)
                );
                INSERT INTO outbox_v7 (id, sink, delivery_id, alerts, created_at, attempts, last_error, next_attempt_at)
                  SELECT id, sink, alert_id, alert_id, created_at, attempts, last_error, next_attempt_at FROM outbox;
                CREATE TABLE dead_letters_v7 (
                  id INTEGER PRIMARY KEY AUTOINCREMENT, \(rowColumns), reason TEXT NOT NULL, died_at INTEGER NOT NULL
                );
                INSERT INTO dead_letters_v7 (id, sink, delivery_id, alerts, created_at, attempts, last_error, reason, died_at)
                  SELECT id, sink, alert_id, alert_id, created_at, attempts, last_error, reason, died_at FROM dead_letters;
                DROP TABLE outbox;
                DROP TABLE dead_letters;
                ALTER TABLE outbox_v7 RENAME TO outbox;
                ALTER TABLE dead_letters_v7 RENAME TO dead_letters;
                PRAGMA user_version = 7;
                """)
    }
}

/// Creates an empty file readable and writable by its owner only (0600).
func createPrivateFile(_ path: String) -> Bool {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard fd >= 0 else { return false }
    close(fd)
    return true
}
