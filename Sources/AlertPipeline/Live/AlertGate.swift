import Synchronization

/// Bounds the alerts between the evaluation loop and the delivery task. A frame of 227 ticks
/// over 100 000 rules can fire 20 000 alerts at once; without a bound every one of them waits in
/// the stream (and then in the outbox's queue) at the same time. After a tick that leaves `limit`
/// or more alerts in flight, the loop waits until half of them are dispatched: nothing is
/// dropped, the order is kept, and a burst holds at most `limit` alerts plus one tick's on
/// their way out.
final class AlertGate: Sendable {
    let limit: Int
    private let state = Mutex<(inFlight: Int, waiter: CheckedContinuation<Void, Never>?)>((0, nil))

    init(limit: Int = 1024) {
        precondition(limit > 0)
        self.limit = limit
    }

    /// Alerts handed to the delivery task and not dispatched yet.
    var inFlight: Int { state.withLock { $0.inFlight } }

    /// One more alert handed on.
    func sent() {
        state.withLock { $0.inFlight += 1 }
    }

    /// Whether the loop should wait (`waitForRoom`) before handing on more.
    var isFull: Bool { state.withLock { $0.inFlight >= limit } }

    /// Returns once at most half of `limit` alerts are in flight.
    func waitForRoom() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.inFlight <= limit / 2 { return true }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// One alert dispatched by the delivery task.
    func dispatched() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.inFlight -= 1
            guard state.inFlight <= limit / 2, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}
