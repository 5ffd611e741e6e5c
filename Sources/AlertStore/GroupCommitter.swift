import AlertOutbox
import AlertPolicy
import Dispatch
import GRDB
import Synchronization

/// The one writer of the state database. Writes run on a serial dispatch queue of its own —
/// never on Swift's cooperative pool, so a slow fsync holds up no task — and everything
/// submitted while the previous transaction was committing goes into the next one: one
/// transaction and one fsync for a whole group (group commit). Writes commit in the order they
/// were submitted, and what a write hands on after its commit (`Write.apply`'s result) runs on
/// the queue in that order too.
final class GroupCommitter: Sendable {
    /// One write. `apply` runs inside the group's transaction and returns what to do once that
    /// transaction is committed; `failed` is called instead when the write could not be made.
    struct Write: Sendable {
        var apply: @Sendable (Database) throws -> @Sendable () -> Void
        var failed: @Sendable (any Error) -> Void
        /// Kept after failing and tried again with the next group (for idempotent writes that
        /// must not be forgotten while the process runs, such as delivery outcomes).
        var retried = false
        /// Need not be durable at once (a "delivered" whose loss in a crash only means one more
        /// delivery): it waits for the next write that is, or at most `lazyDelay`, so the usual
        /// alert costs one transaction and one fsync instead of two.
        var lazy = false
    }

    /// A write that holds the writer inside its transaction until `gate` is signalled, like an
    /// fsync on a stalled disk (for tests). Only the first time: when a group fails, each of its
    /// writes is applied again on its own.
    static func stall(until gate: DispatchSemaphore) -> Write {
        let stalled = Mutex(false)
        return Write(
            apply: { _ in
                if !stalled.withLock({ $0 }) {
                    stalled.withLock { $0 = true }
                    gate.wait()
                }
                return {}
            }, failed: { _ in })
    }

    /// A write that runs `sql` in its group (for tests: a trigger that refuses inserts like a
    /// full disk, and dropping it again).
    static func execute(_ sql: String) -> Write {
        Write(
            apply: { db in
                try db.execute(sql: sql)
                return {}
            }, failed: { _ in })
    }

    private struct State {
        var submitted: [Write] = []
        /// Failed writes to try again with the next group (their `failed` already called).
        var retained: [Write] = []
        /// A run is scheduled on the queue or running.
        var running = false
        /// A run for lazy writes is scheduled `lazyDelay` from when the first was submitted.
        var lazyScheduled = false
        /// A run for retained writes is scheduled `retryDelay` from the last failure.
        var retryScheduled = false
        /// `waitBlocking` has run: the database is closing, no run is scheduled any more.
        var closed = false
        /// Transactions committed, for tests of the grouping.
        var transactions = 0
    }

    private let database: DatabasePool
    private let queue = DispatchQueue(label: "pricealert.state.writer")
    private let state = Mutex(State())
    /// How long a lazy write waits at most for a group to join.
    let lazyDelay: DispatchTimeInterval
    /// How long failed writes that are kept (`Write.retried`) wait at most for the next attempt
    /// when no other write comes along (a disk that was full may have room again).
    let retryDelay: DispatchTimeInterval

    init(
        database: DatabasePool, lazyDelay: DispatchTimeInterval = .milliseconds(200),
        retryDelay: DispatchTimeInterval = .seconds(1)
    ) {
        self.database = database
        self.lazyDelay = lazyDelay
        self.retryDelay = retryDelay
    }

    /// Queues `write` for the next group; returns at once. Once `waitBlocking` has run (the
    /// database is closing or closed), the write is not made: its `failed` gets `OutboxClosed`.
    func submit(_ write: Write) {
        enum Schedule { case none, now, later, refused }
        let schedule: Schedule = state.withLock { state in
            if state.closed { return .refused }
            state.submitted.append(write)
            if state.running { return .none }
            if write.lazy {
                if state.lazyScheduled { return .none }
                state.lazyScheduled = true
                return .later
            }
            state.running = true
            return .now
        }
        switch schedule {
        case .none: break
        case .refused: write.failed(OutboxClosed())
        case .now: queue.async { self.run() }
        case .later: queue.asyncAfter(deadline: .now() + lazyDelay) { self.runLazy() }
        }
    }

    /// On the queue: commits what waits (lazy writes no other write has taken along).
    private func runLazy() {
        let start = state.withLock { state in
            state.lazyScheduled = false
            guard !state.running, !state.submitted.isEmpty else { return false }
            state.running = true
            return true
        }
        if start { run() }
    }

    /// Returns when everything submitted before has been committed (or has failed).
    func barrier() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            submit(Write(apply: { _ in { continuation.resume() } }, failed: { _ in continuation.resume() }))
        }
    }

    /// Runs `body` on the queue after everything submitted before, inside a group.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit(
                Write(
                    apply: { db in
                        let value = try body(db)
                        return { continuation.resume(returning: value) }
                    }, failed: { continuation.resume(throwing: $0) }))
        }
    }

    /// Blocks the caller until everything submitted so far is written, lazy writes too, and
    /// failed writes that are kept have had one more attempt (before closing). Nothing is
    /// scheduled afterwards.
    func waitBlocking() {
        queue.sync {
            let start = state.withLock { state in
                state.closed = true
                guard !state.running, !(state.submitted.isEmpty && state.retained.isEmpty) else { return false }
                state.running = true
                return true
            }
            if start { run(retrying: true) }
        }
    }

    /// On the queue: tries the kept failed writes again when no other run took them along.
    private func runRetained() {
        let start = state.withLock { state in
            state.retryScheduled = false
            guard !state.running, !state.closed, !state.retained.isEmpty else { return false }
            state.running = true
            return true
        }
        if start { run(retrying: true) }
    }

    var transactions: Int { state.withLock { $0.transactions } }

    /// Commits groups until nothing is submitted; `retrying`: the first group is the kept failed
    /// writes even when nothing new was submitted. Kept writes that failed again are tried
    /// again after `retryDelay`.
    private func run(retrying: Bool = false) {
        var retrying = retrying
        while true {
            let group: [Write] = state.withLock { state in
                guard !state.submitted.isEmpty || (retrying && !state.retained.isEmpty) else {
                    state.running = false
                    return []
                }
                defer {
                    state.submitted = []
                    state.retained = []
                }
                return state.retained + state.submitted
            }
            retrying = false
            if group.isEmpty { break }
            commit(group)
        }
        let retry = state.withLock { state in
            guard !state.retained.isEmpty, !state.retryScheduled, !state.closed else { return false }
            state.retryScheduled = true
            return true
        }
        if retry { queue.asyncAfter(deadline: .now() + retryDelay) { self.runRetained() } }
    }

    private func commit(_ group: [Write]) {
        do {
            let committed = try database.write { db in try group.map { try $0.apply(db) } }
            state.withLock { $0.transactions += 1 }
            for action in committed { action() }
        } catch {
            // One bad write must not take the others down: each alone, in its own transaction.
            for write in group {
                do {
                    let action = try database.write { db in try write.apply(db) }
                    state.withLock { $0.transactions += 1 }
                    action()
                } catch {
                    write.failed(error)
                    if write.retried {
                        var again = write
                        again.failed = { _ in }
                        state.withLock { $0.retained.append(again) }
                    }
                }
            }
        }
    }
}
