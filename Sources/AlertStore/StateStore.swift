import GRDB

/// The opened state folder: the lock, and `pricealert.sqlite` in WAL mode with its schema
/// migrated to this binary's version. Open one per process; a second open of the same folder
/// (here or in another process) fails with "DIR is in use by another pricealert (pid N)".
public final class StateStore: Sendable {
    /// The schema version this binary writes (`PRAGMA user_version`).
    public static let schemaVersion = 5

    public let folder: StateFolder
    public let outbox: Outbox
    /// The engine's saved state and the last market list.
    public let engineState: EngineStateStore
    private let lock: StateLock
    private let database: DatabasePool

    /// Creates the folder if needed (0700), takes the lock, opens and migrates the database.
    public static func open(_ folder: StateFolder) throws(StateError) -> StateStore {
        try folder.create()
        let lock = try StateLock(folder: folder)
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
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
            throw StateError(path: folder.path, reason: "cannot open \(folder.databasePath): \(error)")
        }
    }

    private init(folder: StateFolder, lock: StateLock, database: DatabasePool) {
        self.folder = folder
        self.lock = lock
        self.database = database
        self.outbox = Outbox(database: database)
        self.engineState = EngineStateStore(database: database)
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
    /// copied already), which made every `check` rewrite the whole database.
    public func close() {
        outbox.writer.waitBlocking()
        _ = try? database.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        try? database.close()
        lock.release()
    }

    /// Every schema change is one migration, appended, never edited; each ends by setting
    /// `user_version` so an older binary can refuse a newer file instead of misreading it.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-outbox") { db in
            // The alert's fields (to rebuild it after a restart), its §7 JSON, and the sink.
            let alertColumns = """
                alert_id TEXT NOT NULL, rule TEXT NOT NULL, symbol TEXT NOT NULL, sink TEXT NOT NULL,
                time INTEGER NOT NULL, price REAL NOT NULL, condition TEXT NOT NULL,
                threshold_low REAL NOT NULL, threshold_high REAL, value REAL NOT NULL,
                message TEXT NOT NULL, notify TEXT NOT NULL, payload TEXT NOT NULL,
                created_at INTEGER NOT NULL
                """
            try db.execute(sql: """
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
            // Pending rows are read whole at start and held by the sink workers since the group
            // commit; nothing looks rows up by these, and each cost two more pages written per
            // insert and per delete (about a third of the outbox's disk writes).
            try db.execute(sql: """
                DROP INDEX IF EXISTS outbox_order;
                DROP INDEX IF EXISTS outbox_due;
                PRAGMA user_version = 3;
                """)
        }
        migrator.registerMigration("v4-history-chunks", migrate: EngineStateStore.migrateHistory)
        migrator.registerMigration("v5-history-by-hour", migrate: EngineStateStore.migrateHistoryByHour)
        return migrator
    }
}
