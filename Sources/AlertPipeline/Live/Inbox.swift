// Written here rather than taken from swift-async-algorithms: its AsyncChannel holds no buffer
// and drops an element whose sender is cancelled, and the feed's last event must still reach
// the evaluator when the feed is stopped.
import Synchronization

/// The evaluator's inbox: many senders (each feed's tasks, the rule reload, the fills), one
/// reader, in lanes: each sender sends on its own lane, and at most `capacity` inputs of one
/// lane wait at once. A sender finding its lane full waits until the reader takes one of that
/// lane's inputs, so a feed reads no frame while the evaluator is `capacity` of its events
/// behind: the exchange's frames wait in the socket, and a feed kept waiting past its stale
/// limit reconnects. A feed that floods fills only its own lane: another feed's event waits
/// behind at most `capacity` of the flood's, never for room. Nothing sent before `finish` is
/// lost: the reader gets every input, in the order they were taken in. The lock is held only
/// to move one input; no sender holds it while it waits.
///
/// A send ignores its task's cancellation (the reader drains the inbox until `finish`); a
/// reader whose task is cancelled ends the inbox, and waiting senders return.
final class Inbox<Element: Sendable>: AsyncSequence, Sendable {
    /// What the inbox saw over its life.
    struct Counts: Sendable, Equatable {
        var sent = 0
        var received = 0
        /// The most inputs that were waiting at once (never more than `capacity` per lane).
        var peak = 0
    }

    private struct State {
        var waiting: [(lane: Int, element: Element)] = []
        var head = 0
        /// Inputs waiting per lane.
        var inLane: [Int: Int] = [:]
        /// Senders that found their lane full, with what they bring, in order, per lane.
        var blocked: [Int: [(Element, CheckedContinuation<Void, Never>)]] = [:]
        var reader: CheckedContinuation<Element?, Never>?
        var finished = false
        var counts = Counts()

        var count: Int { waiting.count - head }

        mutating func admit(_ element: Element, lane: Int) {
            waiting.append((lane, element))
            inLane[lane, default: 0] += 1
            counts.sent += 1
            counts.peak = Swift.max(counts.peak, count)
        }

        mutating func take() -> (lane: Int, element: Element)? {
            guard head < waiting.count else { return nil }
            let taken = waiting[head]
            head += 1
            if head == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                head = 0
            }
            inLane[taken.lane, default: 1] -= 1
            return taken
        }
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    var counts: Counts { state.withLock { $0.counts } }

    /// Hands `element` to the reader, waiting while `capacity` inputs of `lane` are waiting.
    /// After `finish`, the element is dropped.
    func send(_ element: Element, lane: Int = 0) async {
        let sent: Bool = state.withLock { state in
            guard !state.finished else { return true }
            if let reader = state.reader {
                state.reader = nil
                state.counts.sent += 1
                state.counts.received += 1
                reader.resume(returning: element)
                return true
            }
            guard state.inLane[lane, default: 0] < capacity else { return false }
            state.admit(element, lane: lane)
            return true
        }
        if sent { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = state.withLock { state in
                if state.finished { return true }
                if state.inLane[lane, default: 0] < capacity {
                    // Room was made between the two locks.
                    state.admit(element, lane: lane)
                    return true
                }
                state.blocked[lane, default: []].append((element, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// No input after the ones sent so far: the reader ends once it has taken them.
    func finish() {
        let reader: CheckedContinuation<Element?, Never>? = state.withLock { state in
            state.finished = true
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume(returning: nil)
    }

    /// The next input, nil once finished and empty (or the reader's task is cancelled).
    private func next() async -> Element? {
        if let element = state.withLock({ takeNext(&$0) }) { return element }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                let ready: Element?? = state.withLock { state in
                    if let element = takeNext(&state) { return .some(element) }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.reader = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let (reader, blocked) = state.withLock { state in
                state.finished = true
                defer { (state.reader, state.blocked) = (nil, [:]) }
                return (state.reader, state.blocked.values.flatMap { $0 })
            }
            reader?.resume(returning: nil)
            for (_, sender) in blocked { sender.resume() }
        }
    }

    /// Takes the first waiting input, letting the first blocked sender of its lane in behind.
    private func takeNext(_ state: inout State) -> Element? {
        guard let (lane, element) = state.take() else { return nil }
        state.counts.received += 1
        if var senders = state.blocked[lane], !senders.isEmpty {
            let (next, sender) = senders.removeFirst()
            state.blocked[lane] = senders.isEmpty ? nil : senders
            state.admit(next, lane: lane)
            sender.resume()
        }
        return element
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let inbox: Inbox

        mutating func next() async -> Element? { await inbox.next() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(inbox: self) }
}
