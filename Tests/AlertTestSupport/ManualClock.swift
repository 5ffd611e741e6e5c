import Synchronization

/// A clock that moves only when a test moves it (`advance`), for code that takes an injected
/// `any Clock<Duration>` (`ElapsedMillis`): its readings and its sleeps follow the test, so a
/// test of a rate, a backoff or a pace asserts times on this clock and never waits for real time.
///
/// A sleep returns when the clock is advanced to or past its deadline (at once if it already
/// is), and throws `CancellationError` when its task is cancelled. `deadlines` shows who sleeps,
/// so a test can wait for the code to be waiting before it moves the clock.
public final class ManualClock: Clock, Sendable {
    public struct Instant: InstantProtocol {
        /// Time since the clock was made.
        public var offset: Duration

        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Int: Sleeper] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Moves the clock on and wakes every sleep whose deadline it reached.
    public func advance(by duration: Duration) {
        let woken = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// The deadlines of the sleeps waiting now, earliest first.
    public var deadlines: [Instant] {
        state.withLock { $0.sleepers.values.map(\.deadline).sorted() }
    }

    /// Runs `body` while a task moves the clock to the earliest deadline whenever something
    /// sleeps on it: every wait the code asks for passes in full on the clock, at once in real
    /// time. For code with one sleeper at a time (a feed's retry loop); where several sleep at
    /// once, drive the clock by hand.
    public func advancing<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        let driver = Task {
            while !Task.isCancelled {
                if let next = deadlines.first {
                    advance(by: now.duration(to: next))
                } else {
                    try? await Task.sleep(for: .milliseconds(2))
                }
            }
        }
        defer { driver.cancel() }
        return try await body()
    }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Under the lock: a cancellation either came before (the flag is set before the
                // handler runs) or finds the sleeper registered.
                let now: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let now { continuation.resume(with: now) }
            }
        } onCancel: {
            let continuation = state.withLock { $0.sleepers.removeValue(forKey: id)?.continuation }
            continuation?.resume(throwing: CancellationError())
        }
    }
}
