import Synchronization

/// Bounds the alerts between the evaluation loop and the delivery task. A frame of 227 ticks
/// over 100 000 rules can fire 20 000 alerts at once; without a bound every one of them waits in
/// the stream (and then in the outbox's queue) at the same time. After a tick that leaves `limit`
/// or more alerts in flight, the loop waits until half of them are dispatched: nothing is
/// dropped, the order is kept, and a burst holds at most `limit` alerts plus one tick's on
/// their way out.
///
/// The evaluator bounds the saves on their way to the store with a gate of its own, counting
/// the bytes of their copies (`LiveEvaluation.saveChanges`).
final class AlertGate: Sendable {
    let limit: Int
    private let state = Mutex<(inFlight: Int, waiter: CheckedContinuation<Void, Never>?)>((0, nil))

    init(limit: Int = 1024) {
        precondition(limit > 0)
        self.limit = limit
    }

    /// Alerts handed to the delivery task and not dispatched yet.
    var inFlight: Int { state.withLock { $0.inFlight } }

    /// One more alert (or `count` more units) handed on.
    func sent(_ count: Int = 1) {
        state.withLock { $0.inFlight += count }
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

    /// One alert (or `count` units) dispatched by the delivery task.
    func dispatched(_ count: Int = 1) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.inFlight -= count
            guard state.inFlight <= limit / 2, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }
}
