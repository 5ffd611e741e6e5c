import Synchronization

/// Counts events (requests received, attempts made) and lets a test suspend until the count
/// reaches a number: a wait on the event itself, with no polling and no thread held.
/// (No package the project uses has a counting wait or a gate for async code.)
public final class EventCounter: Sendable {
    public struct TimedOut: Error, CustomStringConvertible {
        public var waitingFor: Int
        public var count: Int
        public var description: String { "waited for \(waitingFor) events, saw \(count)" }
    }

    private struct State {
        var count = 0
        var waiters: [Int: (target: Int, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    public init() {}

    public var count: Int { state.withLock { $0.count } }

    /// Counts one event and wakes whoever waits for this many.
    public func record() {
        let ready = state.withLock { state in
            state.count += 1
            let ready = state.waiters.filter { $0.value.target <= state.count }
            for id in ready.keys { state.waiters[id] = nil }
            return ready.values.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Suspends until at least `target` events have been counted, at most `timeout`.
    public func wait(for target: Int, timeout: Duration = .seconds(60)) async throws {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let timer = Task { [weak self] in
            try await Task.sleep(for: timeout)
            self?.fail(id, TimedOut(waitingFor: target, count: self?.count ?? 0))
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let met = state.withLock { state in
                    if state.count >= target { return true }
                    state.waiters[id] = (target, continuation)
                    return false
                }
                if met { continuation.resume() } else if Task.isCancelled { fail(id, CancellationError()) }
            }
        } onCancel: {
            fail(id, CancellationError())
        }
    }

    private func fail(_ id: Int, _ error: any Error) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(throwing: error)
    }
}

/// Closed until `open()`; `pass()` suspends until then (at once once open).
public final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    public init() {}

    public func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    public func pass() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }
}
