// Written here: the project's `Inbox` and swift-async-algorithms' channels hand values between
// tasks; the stages of a file replay are plain threads that block, which neither serves.
import Dispatch
import Synchronization

/// A bounded hand-off of values from one producing thread to one consuming thread: the link
/// between the stages of `replay`'s file pipeline (read and parse ticks, evaluate, list).
///
/// What it guarantees:
/// - the consumer receives every value sent before `finish()`, each once, in the order sent;
///   after the last one, `receive()` returns nil (and keeps returning nil);
/// - at most `capacity` values wait: `send` blocks the producer while the hand-off is full, so
///   a producer ahead of its consumer holds at most `capacity` values, never the whole input;
/// - after the consumer's `close()`, `send` returns false at once, also when it was blocked on
///   a full hand-off, and the values still waiting are dropped: a producer whose consumer gave
///   up (an error ended the run) stops instead of waiting forever.
///
/// One producer thread calls `send` and `finish`; one consumer thread calls `receive` and `close`.
public final class HandOff<Value: Sendable>: Sendable {
    private struct State {
        var waiting: [Value?] = []
        var head = 0
        var closed = false
    }

    public let capacity: Int
    private let state = Mutex(State())
    /// One permit per free place: `send` takes one before adding its value.
    private let room = DispatchSemaphore(value: 0)
    /// One permit per waiting value, and one more after `finish()`.
    private let ready = DispatchSemaphore(value: 0)

    public init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        // Permits are added rather than given as the initial value: libdispatch stops the process
        // when a semaphore is freed holding fewer permits than it started with, which a hand-off
        // freed with values still waiting would.
        for _ in 0..<capacity { room.signal() }
    }

    /// Hands `value` over, waiting while `capacity` values wait. Returns false, dropping the
    /// value, when the consumer has closed the hand-off.
    @discardableResult
    public func send(_ value: Value) -> Bool {
        room.wait()
        let taken = state.withLock { state in
            guard !state.closed else { return false }
            state.waiting.append(value)
            return true
        }
        // A refused send gives its permit back, so every later one is refused at once too.
        if taken { ready.signal() } else { room.signal() }
        return taken
    }

    /// Whether a value waits to be received now (the producer may send one at any moment).
    public var hasWaiting: Bool {
        state.withLock { $0.head < $0.waiting.count }
    }

    /// No more values: the consumer's `receive` returns nil once it has taken every one sent.
    public func finish() {
        ready.signal()
    }

    /// The next value in the order sent, waiting until there is one; nil after `finish()` and
    /// the last value.
    public func receive() -> Value? {
        ready.wait()
        let value: Value? = state.withLock { state in
            guard state.head < state.waiting.count else { return nil }
            // Received places are dropped once they outnumber the capacity, so the array holds
            // at most twice `capacity` places even when the consumer never catches up.
            defer {
                state.head += 1
                if state.head == state.waiting.count {
                    state.waiting.removeAll(keepingCapacity: true)
                    state.head = 0
                } else if state.head >= capacity {
                    state.waiting.removeFirst(state.head)
                    state.head = 0
                }
            }
            return state.waiting[state.head].take()
        }
        // The end's permit stays, so every later `receive` returns nil at once too.
        if value == nil { ready.signal() } else { room.signal() }
        return value
    }

    /// The consumer takes nothing more: the values waiting are dropped and every `send`, one
    /// blocked now included, returns false.
    public func close() {
        state.withLock { state in
            state.closed = true
            state.waiting = []
            state.head = 0
        }
        room.signal()
    }
}
