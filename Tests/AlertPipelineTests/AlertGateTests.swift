import Synchronization
import Testing

@testable import AlertPipeline

/// The bound between the evaluator service and the delivery service (LivePipeline).
@Suite struct AlertGateTests {
    @Test func theLoopWaitsWhenFullAndGoesOnAtHalf() async {
        let gate = AlertGate(limit: 4)
        for _ in 0..<4 { gate.sent() }
        #expect(gate.isFull)
        let resumed = Mutex(false)
        let waiting = Task {
            await gate.waitForRoom()
            resumed.withLock { $0 = true }
        }
        // One dispatched leaves 3 in flight: more than half, so the loop still waits.
        gate.dispatched()
        try? await Task.sleep(for: .milliseconds(50))
        #expect(!resumed.withLock { $0 })
        gate.dispatched()
        await waiting.value
        #expect(resumed.withLock { $0 })
        #expect(gate.inFlight == 2)
        #expect(!gate.isFull)
    }

    @Test func roomAlreadyThereReturnsAtOnce() async {
        let gate = AlertGate(limit: 8)
        for _ in 0..<3 { gate.sent() }
        await gate.waitForRoom()
        #expect(gate.inFlight == 3)
    }

    /// A producer handing on 10 000 alerts through a stream to a slower consumer never has more
    /// than `limit` in flight, and every alert arrives, in order.
    @Test func aBurstIsBoundedAndKeepsEveryAlertInOrder() async {
        let gate = AlertGate(limit: 64)
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let consumer = Task {
            var received: [Int] = []
            var mostInFlight = 0
            for await n in stream {
                mostInFlight = max(mostInFlight, gate.inFlight)
                if n % 100 == 0 { await Task.yield() }
                received.append(n)
                gate.dispatched()
            }
            return (received, mostInFlight)
        }
        for n in 0..<10_000 {
            gate.sent()
            continuation.yield(n)
            if gate.isFull { await gate.waitForRoom() }
        }
        continuation.finish()
        let (received, mostInFlight) = await consumer.value
        #expect(received == Array(0..<10_000))
        #expect(mostInFlight <= 64)
        #expect(gate.inFlight == 0)
    }
}
