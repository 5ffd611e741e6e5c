import Foundation
import Testing

@testable import AlertStore

/// The database file itself: private to its owner, never empty, readable beside its holder.
@Suite struct StateFileTests {
    func mode(_ path: String) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Int(info.st_mode & 0o777)
    }

    @Test func theDatabaseAndItsWalAndShmAreOwnerOnly() throws {
        let folder = temporaryFolder()
        let store = try StateStore.open(folder)
        defer { store.close() }
        try store.outbox.enqueue(alert(), sinks: ["hook"], now: 1)
        let database = folder.databasePath
        #expect(mode(database) == 0o600)
        #expect(mode(database + "-wal") == 0o600)
        #expect(mode(database + "-shm") == 0o600)
    }

    @Test func aDatabaseOthersCanReadIsMadePrivate() throws {
        let folder = temporaryFolder()
        try StateStore.open(folder).close()
        #expect(chmod(folder.databasePath, 0o644) == 0)
        let store = try StateStore.open(folder)
        defer { store.close() }
        #expect(mode(folder.databasePath) == 0o600)
    }

    /// A 0-byte file is not a database SQLite would start afresh in: it is refused, named, and
    /// left as it is.
    @Test func anEmptyDatabaseFileIsRefused() throws {
        let folder = temporaryFolder()
        try folder.create()
        #expect(FileManager.default.createFile(atPath: folder.databasePath, contents: Data()))
        #expect {
            try StateStore.open(folder)
        } throws: { error in
            "\(error)"
                == "state folder \(folder.path): \(folder.databasePath) is empty (0 bytes), not a pricealert database; move it away to start with no saved state"
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.databasePath)).isEmpty)
        #expect(throws: StateError.self) { try StateStore.openForReading(folder) }
    }

    /// A database half built by a process killed while creating it is built again.
    @Test func aHalfBuiltDatabaseIsBuiltAgain() throws {
        let folder = temporaryFolder()
        try folder.create()
        #expect(FileManager.default.createFile(atPath: folder.databasePath + ".new", contents: Data("garbage".utf8)))
        let store = try StateStore.open(folder)
        defer { store.close() }
        #expect(try store.outbox.depth() == 0)
        #expect(!FileManager.default.fileExists(atPath: folder.databasePath + ".new"))
    }

    /// While one store holds the folder (its lock), another reads what it has committed.
    @Test func theOutboxIsReadableWhileTheFolderIsHeld() async throws {
        let folder = temporaryFolder()
        #expect(try StateStore.openForReading(folder) == nil)
        let holder = try StateStore.open(folder)
        defer { holder.close() }
        #expect(throws: StateError.self) { try StateStore.open(folder) }
        try holder.outbox.enqueue(alert(), sinks: ["hook"], now: 1)
        let reader = try #require(try StateStore.openForReading(folder))
        #expect(try reader.outbox.pending().map(\.alertID) == [alert().id])
        reader.close()
        try holder.outbox.enqueue(alert(time: 2), sinks: ["hook"], now: 2)
        #expect(try holder.outbox.depth() == 2)
    }
}
