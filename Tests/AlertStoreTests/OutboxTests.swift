import AlertModel
import Foundation
import GRDB
import Synchronization
import Testing

@testable import AlertStore

func alert(
    _ rule: String = "btc-100k", time: Int64 = 1_700_000_000_000, notify: [String] = ["hook"],
    threshold: Threshold = .value(100000)
) -> Alert {
    Alert(
        rule: rule, symbol: "BTC", time: time, price: 100012.5, condition: "price crossesAbove 100000",
        threshold: threshold, value: 100012.5, message: "BTC \"crossed\"\n100k", notify: notify)
}

func temporaryFolder() -> StateFolder {
    StateFolder(path: NSTemporaryDirectory() + "pricealert-store-\(UUID().uuidString)/state")
}

@Suite struct OutboxTests {
    /// A pool turns its writer's `synchronous` down to NORMAL, which may lose the last commits
    /// on power loss; the outbox's writer must sync every commit (FULL).
    @Test func theWriterSyncsEveryCommit() throws {
        let store = try StateStore.open(temporaryFolder())
        defer { store.close() }
        #expect(try store.synchronousMode() == 2)
    }

    @Test func enqueueWritesOneRowPerSinkAndRebuildsTheAlert() throws {
        let store = try StateStore.open(temporaryFolder())
        defer { store.close() }
        let original = alert(notify: ["hook", "exec", "stdout"], threshold: .range(1, 2))
        try store.outbox.enqueue(original, sinks: ["hook", "exec"], now: 10)
        let rows = try store.outbox.pending()
        #expect(rows.map(\.sink) == ["hook", "exec"])
        #expect(rows[0].alert == original)
        #expect(rows[0].payload == AlertFormat.json(original))
        #expect(rows[0].attempts == 0 && rows[0].nextAttemptAt == 10 && rows[0].createdAt == 10)
        // The same (alert, sink) twice stays one row.
        try store.outbox.enqueue(original, sinks: ["hook"], now: 11)
        #expect(try store.outbox.depth() == 2)
    }

    @Test func recordUpdatesOrDeletesTheRow() throws {
        let store = try StateStore.open(temporaryFolder())
        defer { store.close() }
        let first = try #require(try store.outbox.enqueue(alert("a", time: 1), sinks: ["hook"], now: 100).first)
        try store.outbox.enqueue(alert("b", time: 1), sinks: ["hook"], now: 200)
        try store.outbox.record(first.id, .retry(at: 500, reason: "HTTP 503"))
        let retried = try store.outbox.pending()[0]
        #expect(
            retried.id == first.id && retried.attempts == 1 && retried.nextAttemptAt == 500
                && retried.lastError == "HTTP 503")
        try store.outbox.record(first.id, .delivered)
        #expect(try store.outbox.pending().map(\.alert.id) == ["b:BTC:1"])
    }

    @Test func deadMovesTheRowWithItsReasonAndPurgeClears() throws {
        let store = try StateStore.open(temporaryFolder())
        defer { store.close() }
        try store.outbox.enqueue(alert("a"), sinks: ["hook"], now: 1)
        try store.outbox.enqueue(alert("b"), sinks: ["hook"], now: 1)
        let row = try store.outbox.pending()[0]
        try store.outbox.record(row.id, .dead(reason: "HTTP 404", lastError: "HTTP 404", at: 7))
        #expect(try store.outbox.depth() == 1)
        let dead = try store.outbox.dead()
        #expect(dead.count == 1)
        #expect(dead[0].alert == row.alert && dead[0].deadReason == "HTTP 404" && dead[0].attempts == 1)
        #expect(try store.outbox.purge(dead: true, all: false) == 1)
        #expect(try store.outbox.dead().isEmpty && store.outbox.depth() == 1)
        try store.outbox.makeAllDue(now: 0)
        #expect(try store.outbox.purge(dead: false, all: true) == 1)
        #expect(try store.outbox.depth() == 0)
    }
}

@Suite struct StateStoreTests {
    @Test func reopenKeepsRowsAndFolderIsPrivate() throws {
        let folder = temporaryFolder()
        let store = try StateStore.open(folder)
        try store.outbox.enqueue(alert(), sinks: ["hook"], now: 1)
        store.close()
        var info = stat()
        #expect(stat(folder.path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        let again = try StateStore.open(folder)
        defer { again.close() }
        #expect(try again.outbox.pending().map(\.alert) == [alert()])
        let mode = try DatabaseQueue(path: folder.databasePath).read { db in
            try String.fetchOne(db, sql: "PRAGMA journal_mode")
        }
        #expect(mode == "wal")
    }

    @Test func aSecondOpenIsRefusedNamingThePid() throws {
        let folder = temporaryFolder()
        let store = try StateStore.open(folder)
        let error = #expect(throws: StateError.self) { try StateStore.open(folder) }
        #expect(error?.description == "\(folder.path) is in use by another pricealert (pid \(getpid()))")
        #expect(error?.lockedBy == getpid())
        store.close()
        let again = try StateStore.open(folder)
        again.close()
    }

    /// A child spawned while the folder is open holds a copy of the lock's descriptor (here
    /// for good, as one being spawned by another thread does until its exec): closing the
    /// store still frees the folder at once.
    @Test func closingFreesTheFolderWhileAChildHoldsACopyOfTheLock() throws {
        let folder = temporaryFolder()
        let store = try StateStore.open(folder)
        let lockFD = try #require(
            try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap(Int32.init)
                .first {
                    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))
                        == folder.lockPath
                })
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, lockFD, 3)
        var child = pid_t()
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("60"), nil]
        defer { for arg in argv { free(arg) } }
        #expect(posix_spawn(&child, "/bin/sleep", &actions, nil, argv, environ) == 0)
        defer {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        store.close()
        let again = try StateStore.open(folder)
        again.close()
    }

    @Test func aNewerSchemaIsRefused() throws {
        let folder = temporaryFolder()
        try StateStore.open(folder).close()
        try DatabaseQueue(path: folder.databasePath).write { db in try db.execute(sql: "PRAGMA user_version = 99") }
        let error = #expect(throws: StateError.self) { try StateStore.open(folder) }
        #expect(error?.description == "state in \(folder.path) was written by a newer pricealert (schema 99)")
    }

    @Test func migrationsRecordTheirVersion() throws {
        let folder = temporaryFolder()
        try StateStore.open(folder).close()
        let version = try DatabaseQueue(path: folder.databasePath).read { db in
            try Int.fetchOne(db, sql: "PRAGMA user_version")
        }
        #expect(version == StateStore.schemaVersion)
        // Opening again runs no migration twice.
        try StateStore.open(folder).close()
    }

    @Test func anUncreatableFolderIsNamed() throws {
        let file = NSTemporaryDirectory() + "pricealert-file-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: file, contents: Data())
        let error = #expect(throws: StateError.self) { try StateStore.open(StateFolder(path: file + "/state")) }
        #expect(error?.description.hasPrefix("state folder \(file)/state: cannot create \(file)/state") == true)
    }

    @Test func defaultFolderFollowsSystemdThenXDGThenHome() throws {
        #expect(try StateFolder.resolve(explicit: "x", environment: ["STATE_DIRECTORY": "/s"]).path == "x")
        #expect(
            try StateFolder.resolve(explicit: nil, environment: ["STATE_DIRECTORY": "/s:/t", "HOME": "/h"]).path == "/s"
        )
        #expect(
            try StateFolder.resolve(explicit: nil, environment: ["XDG_STATE_HOME": "/x", "HOME": "/h"]).path
                == "/x/pricealert")
        #expect(
            try StateFolder.resolve(explicit: nil, environment: ["HOME": "/h"]).path == "/h/.local/state/pricealert")
    }
}
