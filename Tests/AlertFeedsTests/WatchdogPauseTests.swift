import AlertFeeds
import AlertHTTP
import AlertTestSupport
import DemoExchange
import Logging
import Testing

/// The silence watch after the process was paused, with the real feed client against the real
/// embedded exchange on 127.0.0.1 and the watch on a clock the test drives.
@Suite("feed watchdog after a pause", .programs)
struct WatchdogPauseTests {
    /// A pause as the feed sees it: prices keep coming while the reader is held (frames wait
    /// unread in the socket, as when the process is stopped) and the watch clock (`staleAfter`
    /// 4 s) jumps 10 s at once, as it does for a process continued after a pause. `body` gets
    /// the watch clock, the events, how many tick events came before the pause, and `release`,
    /// which lets the reader go on and returns how many tick events it held.
    private static func paused(
        _ body: (ManualClock, LiveFeedTests.Recorder, Int, () -> Int) async throws -> Void
    ) async throws {
        let watch = ManualClock()
        var options = FeedOptions(
            staleAfter: .seconds(4), backoffBase: .milliseconds(100), backoffMaximum: .milliseconds(400))
        options.watchClock = watch
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(port: 0, prices: .randomWalk(seed: 7, interval: .milliseconds(50))))
        let port = try await exchange.start()
        let runner = FeedRunner(
            source: BTSESource(endpoint: "http://127.0.0.1:\(port)"), http: NIOHTTPClient(), options: options,
            logger: Logger(label: "test"))
        let recorder = LiveFeedTests.Recorder()
        // While `holding` has counted one event (not none, not two), ticks wait at `gate`; `held`
        // counts those that did.
        let (holding, gate, held) = (EventCounter(), Gate(), EventCounter())
        let feed = Task {
            _ = try await runner.loadMarkets { recorder.append($0) }
            try await runner.run { event in
                if case .ticks = event, holding.count == 1 {
                    held.record()
                    await gate.pass()
                }
                recorder.append(event)
            }
        }
        #expect(await recorder.wait { !$0.ticks.isEmpty })
        try await until { !watch.deadlines.isEmpty }
        holding.record()
        try await held.wait(for: 1)
        let before = recorder.count(isTicks)
        watch.advance(by: .seconds(10))
        try await body(watch, recorder, before) {
            holding.record()
            gate.open()
            return held.count
        }
        holding.record()
        gate.open()
        feed.cancel()
        _ = await feed.result
        await exchange.stop()
    }

    /// The watch gives the reads a step before it judges: they deliver what waited, and the
    /// feed is neither stale nor reconnected.
    @Test func framesBufferedDuringAPauseAreReadBeforeTheFeedIsJudged() async throws {
        try await Self.paused { watch, recorder, before, release in
            // The watch judged (stale) or chose to wait a step (asleep past the jump).
            try await Self.until {
                recorder.count(Self.isStale) > 0 || watch.deadlines.contains { $0.offset > .seconds(10) }
            }
            let held = release()
            // Past the events that were held (their prices read before the jump), two read after it.
            #expect(await recorder.wait { $0.count(Self.isTicks) >= before + held + 2 })
            watch.advance(by: .seconds(1))
            try await Self.until { watch.deadlines.contains { $0.offset > .seconds(11) } }
            #expect(await recorder.wait { $0.count(Self.isTicks) >= before + held + 4 })
            #expect(recorder.count(Self.isStale) == 0)
            #expect(recorder.count { if case .disconnected = $0 { true } else { false } } == 0)
        }
    }

    /// A feed that gives nothing in the step after the pause is judged on the next round: stale,
    /// and the connection is replaced.
    @Test func aFeedStillSilentAStepAfterThePauseGoesStale() async throws {
        try await Self.paused { watch, recorder, _, release in
            try await Self.until { watch.deadlines.contains { $0.offset > .seconds(10) } }
            #expect(recorder.count(Self.isStale) == 0)
            watch.advance(by: .seconds(1))
            #expect(await recorder.wait { $0.count(Self.isStale) == 1 })
            _ = release()
            #expect(await recorder.wait { $0.count { if case .disconnected = $0 { true } else { false } } >= 1 })
        }
    }

    static func isTicks(_ event: FeedEvent) -> Bool {
        if case .ticks = event { return true }
        return false
    }

    static func isStale(_ event: FeedEvent) -> Bool {
        if case .stale = event { return true }
        return false
    }

    /// Waits for `condition`, which follows the feed's own tasks (no event to wait on: a sleep
    /// registered on the watch clock), looking every 2 ms like `ManualClock.advancing`.
    static func until(_ condition: () -> Bool) async throws {
        for _ in 0..<30_000 where !condition() { try await Task.sleep(for: .milliseconds(2)) }
        try #require(condition())
    }
}
