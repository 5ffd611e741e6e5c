import Synchronization
import Testing

@testable import AlertPipeline

/// The evaluator's inbox in lanes: a feed that floods fills its own lane and waits there,
/// while another feed's input goes in at once and is read behind what was already waiting.
@Suite struct InboxLaneTests {
    @Test(.timeLimit(.minutes(1))) func aFullLaneHoldsUpOnlyItsOwnSender() async throws {
        let inbox = Inbox<String>(capacity: 2)
        await inbox.send("a1", lane: 1)
        await inbox.send("a2", lane: 1)
        // Lane 1 is full: its next sender waits until the reader takes one of lane 1's inputs.
        let flooding = Task { await inbox.send("a3", lane: 1) }
        // Another lane is not full: this returns without any reader (the test would hang here
        // if lane 2 waited for lane 1's room).
        await inbox.send("b1", lane: 2)
        await inbox.send("b2", lane: 2)
        #expect(inbox.counts.sent == 4)
        var iterator = inbox.makeAsyncIterator()
        var read: [String] = []
        for _ in 0..<5 { read.append(try #require(await iterator.next())) }
        await flooding.value
        inbox.finish()
        #expect(await iterator.next() == nil)
        // In the order taken in: a3 was let in when a1 was read, behind b1 and b2.
        #expect(read == ["a1", "a2", "b1", "b2", "a3"])
        #expect(inbox.counts.peak == 4)
    }
}
