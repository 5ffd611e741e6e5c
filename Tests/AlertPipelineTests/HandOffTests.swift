import AlertPipeline
import Dispatch
import Foundation
import Synchronization
import Testing

/// The link between the stages of a file replay: a producer thread and a consumer thread.
/// Every wait here is on an event (a value, a thread's end), with a generous timeout.
@Suite struct HandOffTests {
    /// Runs `body` on a thread of its own; the semaphore is signalled when it returns.
    static func thread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let ended = DispatchSemaphore(value: 0)
        Thread {
            body()
            ended.signal()
        }.start()
        return ended
    }

    @Test("every value sent before finish arrives once, in order; then nil, again and again")
    func orderAndEnd() {
        let handOff = HandOff<Int>(capacity: 3)
        let producer = Self.thread {
            for i in 0..<10_000 { #expect(handOff.send(i)) }
            handOff.finish()
        }
        var received: [Int] = []
        while let value = handOff.receive() { received.append(value) }
        #expect(received == Array(0..<10_000))
        #expect(handOff.receive() == nil)
        #expect(handOff.receive() == nil)
        #expect(producer.wait(timeout: .now() + 60) == .success)
    }

    @Test("a producer is never more than capacity values ahead of its consumer")
    func bounded() {
        let capacity = 4
        let handOff = HandOff<Int>(capacity: capacity)
        let sent = Atomic<Int>(0)
        let producer = Self.thread {
            for i in 0..<2_000 {
                handOff.send(i)
                sent.add(1, ordering: .sequentiallyConsistent)
            }
            handOff.finish()
        }
        var received = 0
        var mostAhead = 0
        while handOff.receive() != nil {
            received += 1
            // The values sent and not yet received all wait in the hand-off.
            mostAhead = max(mostAhead, sent.load(ordering: .sequentiallyConsistent) - received)
        }
        #expect(received == 2_000)
        #expect(mostAhead <= capacity)
        #expect(producer.wait(timeout: .now() + 60) == .success)
    }

    @Test("close by the consumer makes a send blocked on a full hand-off, and every later one, return false")
    func closeReleasesTheProducer() {
        let handOff = HandOff<Int>(capacity: 1)
        let results = Mutex<[Bool]>([])
        let producer = Self.thread {
            for i in 0..<4 {
                let taken = handOff.send(i)
                results.withLock { $0.append(taken) }
            }
        }
        #expect(handOff.receive() == 0) // the producer is now at its second or third send
        handOff.close()
        #expect(producer.wait(timeout: .now() + 60) == .success)
        let taken = results.withLock { $0 }
        #expect(taken.count == 4)
        // The first send was taken, the second perhaps (into the room the receive made).
        #expect(taken.first == true)
        #expect(taken.suffix(2) == [false, false])
    }

    @Test("a hand-off can be freed with values still waiting (a run that ends on an error)")
    func freedWhileFull() {
        do {
            let handOff = HandOff<[Int]>(capacity: 4)
            #expect(handOff.send([1]))
            #expect(handOff.send([2, 3]))
        }
        let closed = HandOff<Int>(capacity: 2)
        #expect(closed.send(1))
        closed.close()
        #expect(!closed.send(2))
    }
}
