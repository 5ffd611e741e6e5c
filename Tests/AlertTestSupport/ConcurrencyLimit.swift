// Swift Testing is there for test builds only: the benchmarks that use this module's servers
// (PostgresServer, CPUSteal) build in release without it, and this file is then left out.
#if canImport(Testing)
import Foundation
import Synchronization
public import Testing

/// Bounds what runs at once in the test process, for tests that load the machine: at most
/// `width` of the tests holding the same limit run together; the others wait (suspended, holding
/// no thread) for a place. With `ownThread`, each runs on a thread of its own (a task executor
/// preference) instead of Swift's cooperative pool, which has one thread per core: a test that
/// computes for seconds without suspending would otherwise stall every other test, and the
/// servers they run in this process, until it ends.
///
/// Swift Testing starts every test at once. On two cores, a hundred programs and servers started
/// together each get too little of them to answer within any timeout; a few at a time, each
/// finishes as it would alone.
public struct ConcurrencyLimit: TestTrait, SuiteTrait, TestScoping {
    let places: Places
    let ownThread: Bool

    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }
        await places.take()
        defer { places.give() }
        guard ownThread else { return try await function() }
        let executor = ThreadExecutor()
        defer { executor.stop() }
        try await withTaskExecutorPreference(executor) { try await function() }
    }

    /// A count of free places and the tests waiting for one, in order.
    final class Places: Sendable {
        private let state: Mutex<(free: Int, waiting: [CheckedContinuation<Void, Never>])>

        init(_ count: Int) {
            state = Mutex((count, []))
        }

        func take() async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state in
                    guard state.free > 0 else {
                        state.waiting.append(continuation)
                        return false
                    }
                    state.free -= 1
                    return true
                }
                if now { continuation.resume() }
            }
        }

        func give() {
            let next = state.withLock { state in
                guard !state.waiting.isEmpty else {
                    state.free += 1
                    return nil as CheckedContinuation<Void, Never>?
                }
                return state.waiting.removeFirst()
            }
            next?.resume()
        }
    }

    static let programs = Places(max(2, 2 * ProcessInfo.processInfo.activeProcessorCount))
    static let computation = Places(1)
}

extension Trait where Self == ConcurrencyLimit {
    /// For tests that run the built binary, other programs or a load of servers and clients:
    /// two per core at once.
    public static var programs: Self { ConcurrencyLimit(places: ConcurrencyLimit.programs, ownThread: false) }

    /// For tests that compute for seconds (reference engines over long random streams, fuzzing):
    /// one at a time, on a thread of its own, so the other core stays free for everything else.
    public static var computation: Self { ConcurrencyLimit(places: ConcurrencyLimit.computation, ownThread: true) }
}

/// A task executor with one thread that runs its jobs in order. Once stopped, its thread ends
/// when no job is left, and a job that still comes goes to the global executor.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: `jobs`, `stopped` and `ended` are read and written only with
    // `condition` locked.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false
    private var ended = false

    public init() {
        Thread { [self] in run() }.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        if ended {
            condition.unlock()
            globalConcurrentExecutor.enqueue(job)
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    public func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty, !stopped { condition.wait() }
            guard !jobs.isEmpty else {
                ended = true
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
#endif
