@testable import AlertStore
import Foundation
import Testing

/// The folder lock against copies of its descriptor that child processes hold between fork and
/// exec, and against a second lock of the same process.
@Suite struct StateLockTests {
    /// The lock file's descriptor, locked and naming this process, as a child that has not yet
    /// exec'd holds it: a new lock waits for it to go instead of calling the folder in use.
    @Test func aCopyHeldByAChildOfThisProcessIsWaitedFor() async throws {
        let folder = temporaryFolder()
        try folder.create()
        let copy = open(folder.lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        try #require(copy >= 0 && flock(copy, LOCK_EX | LOCK_NB) == 0)
        _ = "\(getpid())\n".withCString { pwrite(copy, $0, strlen($0), 0) }
        let (started, continuation) = AsyncStream.makeStream(of: Void.self)
        let taken = Task.detached { () -> Result<StateLock, StateError> in
            continuation.yield()
            do throws(StateError) { return .success(try StateLock(folder: folder)) } catch { return .failure(error) }
        }
        for await _ in started { break }
        close(copy)
        let lock = try await taken.value.get()
        lock.release()
    }

    /// A lock this process's own `StateLock` holds is not a child's copy: the second open fails,
    /// naming this process.
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
