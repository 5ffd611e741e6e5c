import Foundation
import Testing

@testable import AlertStore

/// The folder lock within one process (the case of a child's copy of the descriptor is
/// `OutboxTests.closingFreesTheFolderWhileAChildHoldsACopyOfTheLock`).
@Suite struct StateLockTests {
    /// Two opens in one process exclude each other: the second fails, naming this process.
    @Test func aSecondLockOfThisProcessIsRefused() throws {
        let folder = temporaryFolder()
        try folder.create()
        let first = try StateLock(folder: folder)
        defer { first.release() }
        #expect(throws: StateError.self) { try StateLock(folder: folder) }
        do {
            _ = try StateLock(folder: folder)
        } catch {
            #expect(error.lockedBy == getpid())
        }
    }

    /// The lock says when it no longer guards its folder: the folder removed, or moved away and
    /// another made in its place.
    @Test func aRemovedOrReplacedFolderIsNoticed() throws {
        let folder = temporaryFolder()
        try folder.create()
        let lock = try StateLock(folder: folder)
        defer { lock.release() }
        #expect(lock.lost() == nil)
        try FileManager.default.removeItem(atPath: folder.path)
        #expect(lock.lost() == "\(folder.lockPath) was deleted")

        let moved = temporaryFolder()
        try moved.create()
        let other = try StateLock(folder: moved)
        defer { other.release() }
        try FileManager.default.moveItem(atPath: moved.path, toPath: moved.path + "-away")
        defer { try? FileManager.default.removeItem(atPath: moved.path + "-away") }
        try moved.create()
        defer { try? FileManager.default.removeItem(atPath: moved.path) }
        #expect(other.lost()?.hasPrefix("\(moved.lockPath) is gone") == true)
        #expect(FileManager.default.createFile(atPath: moved.lockPath, contents: Data()))
        #expect(other.lost() == "\(moved.lockPath) is another file now")
    }
}
