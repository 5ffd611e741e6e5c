@testable import AlertStore
import Foundation
import Testing

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
}
