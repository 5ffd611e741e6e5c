// Written here rather than taken from swift-async-algorithms: its AsyncChannel holds no buffer
// and drops an element whose sender is cancelled, and the feed's last event must still reach
// the evaluator when the feed is stopped.
import Synchronization

/// The evaluator's inbox: many senders (the feed's tasks, the rule reload), one reader, at most
/// `capacity` inputs waiting. A sender finding it full waits until the reader takes one, so the
/// feed reads no frame while the evaluator is `capacity` behind: the exchange's frames wait in
/// the socket, and a feed kept waiting past its stale limit reconnects. Nothing sent before
/// `finish` is lost: the reader gets every input, in the order they were taken in.
///
/// A send ignores its task's cancellation (the reader drains the inbox until `finish`); a
/// reader whose task is cancelled ends the inbox, and waiting senders return.
final class Inbox<Element: Sendable>: AsyncSequence, Sendable {
    /// What the inbox saw over its life.
    struct Counts: Sendable, Equatable {
        var sent = 0
        var received = 0
        /// The most inputs that were waiting at once (never more than `capacity`).
        var peak = 0
    }

    private struct State {
        var waiting: [Element] = []
        var head = 0
        /// Senders that found the inbox full, with what they bring, in order.
        var blocked: [(Element, CheckedContinuation<Void, Never>)] = []
        var reader: CheckedContinuation<Element?, Never>?
        var finished = false
        var counts = Counts()

        var count: Int { waiting.count - head }

        mutating func admit(_ element: Element) {
            waiting.append(element)
            counts.sent += 1
            counts.peak = Swift.max(counts.peak, count)
        }

        mutating func take() -> Element? {
            guard head < waiting.count else { return nil }
            let element = waiting[head]
            head += 1
            if head == waiting.count {
                waiting.removeAll(keepingCapacity: true)
                head = 0
            }
            return element
        }
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    var counts: Counts { state.withLock { $0.counts } }

    /// Hands `element` to the reader, waiting while `capacity` inputs are waiting. After
    /// `finish`, the element is dropped.
    func send(_ element: Element) async {
        let sent: Bool = state.withLock { state in
            guard !state.finished else { return true }
            if let reader = state.reader {
                state.reader = nil
                state.counts.sent += 1
                state.counts.received += 1
                reader.resume(returning: element)
                return true
            }
            guard state.count < capacity else { return false }
            state.admit(element)
            return true
        }
        if sent { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = state.withLock { state in
                if state.finished { return true }
                if state.count < capacity {
                    // Room was made between the two locks.
                    state.admit(element)
                    return true
                }
                state.blocked.append((element, continuation))
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
                defer { (state.reader, state.blocked) = (nil, []) }
                return (state.reader, state.blocked)
            }
            reader?.resume(returning: nil)
            for (_, sender) in blocked { sender.resume() }
        }
    }

    /// Takes the first waiting input, letting the first blocked sender's input in behind.
    private func takeNext(_ state: inout State) -> Element? {
        guard let element = state.take() else { return nil }
        state.counts.received += 1
        if !state.blocked.isEmpty {
            let (next, sender) = state.blocked.removeFirst()
            state.admit(next)
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
