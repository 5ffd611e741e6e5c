import AlertFeeds
import AlertHTTP
import AlertModel
import AlertTestSupport
import DemoExchange
import Hummingbird
import Logging
import Synchronization
import Testing

/// The real feed client (`FeedRunner` + `BTSESource` + libcurl + websocket) against the real
/// embedded exchange on 127.0.0.1, with the exchange's faults.
@Suite("live feed against the embedded exchange", .programs)
struct LiveFeedTests {
    /// Events the runner emitted, readable while it runs; each one counted in `appended`.
    final class Recorder: Sendable {
        let events = Mutex<[FeedEvent]>([])
        /// When each event was emitted, on `clock` (the feed's, when a test drives it).
        let times = Mutex<[ManualClock.Instant]>([])
        let clock: ManualClock?
        let appended = EventCounter()

        init(clock: ManualClock? = nil) { self.clock = clock }

        func append(_ event: FeedEvent) {
            let now = clock?.now
            events.withLock { $0.append(event) }
            if let now { times.withLock { $0.append(now) } }
            appended.record()
        }

        /// Suspends until the events so far satisfy `done` (looked at after each new event), giving
        /// up after `timeout` without a new event; whether they did.
        func wait(timeout: Duration = .seconds(60), until done: (Recorder) -> Bool) async -> Bool {
            while true {
                let counted = appended.count
                if done(self) { return true }
                do { try await appended.wait(for: counted + 1, timeout: timeout) } catch { return done(self) }
            }
        }
        var all: [FeedEvent] { events.withLock { $0 } }
        var ticks: [Tick] { all.flatMap { event -> [Tick] in if case .ticks(let t) = event { t } else { [] } } }
        func count(_ predicate: (FeedEvent) -> Bool) -> Int { all.filter(predicate).count }
    }

    /// Starts an exchange with `faults`, runs the feed until `until` holds (or `timeout` passes
    /// without an event), stops both.
    /// The feed is stale only after 30 s without prices (unless `options` says otherwise), so a
    /// busy machine's pauses are not taken for an outage.
    func follow(
        faults: ExchangeFaults = ExchangeFaults(), interval: Duration = .milliseconds(100),
        options: FeedOptions = FeedOptions(
            staleAfter: .seconds(30), backoffBase: .milliseconds(100),
            backoffMaximum: .milliseconds(400)),
        timeout: Duration = .seconds(60), until: @escaping @Sendable (Recorder) -> Bool
    ) async throws -> Recorder {
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(
                port: 0, prices: .randomWalk(seed: 7, interval: interval), faults: faults))
        let port = try await exchange.start()
        let http = NIOHTTPClient()
        let runner = FeedRunner(
            source: BTSESource(endpoint: "http://127.0.0.1:\(port)"), http: http, options: options,
            logger: Logger(label: "test"))
        let recorder = Recorder(clock: options.clock as? ManualClock)
        let feed = Task {
            _ = try await runner.loadMarkets { recorder.append($0) }
            try await runner.run { recorder.append($0) }
        }
        _ = await recorder.wait(timeout: timeout, until: until)
        feed.cancel()
        _ = await feed.result
        await exchange.stop()
        return recorder
    }

    @Test func loadsTheMarketListSubscribesAndJoinsTheDailyChange() async throws {
        let recorder = try await follow { r in r.ticks.contains { $0.symbol == "BTC" && $0.change24h != nil } }
        let markets = recorder.all.compactMap { if case .markets(let m) = $0 { m } else { nil } }.first
        #expect(markets?.count == 227)
        #expect(recorder.count { if case .connected = $0 { true } else { false } } >= 1)
        let btc = recorder.ticks.filter { $0.symbol == "BTC" }
        #expect(!btc.isEmpty)
        #expect(btc.allSatisfy { $0.price > 0 })
        // The 24 h figure comes from market_summary and is attached to index ticks.
        #expect(btc.contains { $0.change24h != nil })
    }

    @Test func invalidFramesAreDroppedAndCountedNotFatal() async throws {
        let recorder = try await follow(faults: ExchangeFaults(invalidEvery: 3)) { r in
            r.count { if case .dropped = $0 { true } else { false } } >= 3 && r.ticks.count > 100
        }
        #expect(recorder.count { if case .dropped = $0 { true } else { false } } >= 3)
        #expect(recorder.count { if case .disconnected = $0 { true } else { false } } == 0)
    }

    @Test func aDroppedConnectionIsReconnectedAndResubscribed() async throws {
        // Done when the third connection delivered prices: each reconnect subscribed again.
        let recorder = try await follow(faults: ExchangeFaults(dropEvery: .seconds(1))) { r in
            let events = r.all
            guard events.filter(Self.isConnected).count >= 3, let last = events.lastIndex(where: Self.isConnected)
            else {
                return false
            }
            return events[last...].contains { if case .ticks(let t) = $0 { !t.isEmpty } else { false } }
        }
        let events = recorder.all
        #expect(events.filter(Self.isConnected).count >= 3)
        #expect(recorder.count { if case .disconnected = $0 { true } else { false } } >= 2)
        let last = try #require(events.lastIndex(where: Self.isConnected))
        #expect(events[last...].contains { if case .ticks(let t) = $0 { !t.isEmpty } else { false } })
    }

    static func isConnected(_ event: FeedEvent) -> Bool {
        if case .connected = event { return true }
        return false
    }

    /// The market list and the prices have a health each here (not `runFeed`): a list slow to
    /// come on a loaded machine may be said stale, but never recovers the silence watched for.
    @Test func silenceIsDetectedReportedAndRecovered() async throws {
        let recorder = try await follow(
            faults: ExchangeFaults(silenceAfter: .seconds(1), silenceFor: .seconds(4)),
            options: FeedOptions(
                staleAfter: .seconds(2), backoffBase: .milliseconds(100),
                backoffMaximum: .milliseconds(400))
        ) { r in
            r.count { if case .recovered = $0 { true } else { false } } >= 1
        }
        let stale = recorder.all.firstIndex { if case .stale = $0 { true } else { false } }
        let recovered = recorder.all.firstIndex { if case .recovered = $0 { true } else { false } }
        #expect(stale != nil)
        #expect(recovered != nil)
        if let stale, let recovered { #expect(stale < recovered) }
        // Silence ends the connection: the runner reconnects rather than wait on a dead socket.
        #expect(recorder.count { if case .disconnected = $0 { true } else { false } } >= 1)
    }

    /// A websocket that cannot be opened at all (here: the server has no such route) is an
    /// outage too: the feed is declared stale once, while the runner keeps retrying. The feed
    /// runs as `run` runs it (`runFeed`: one health for the market list and the prices), so a
    /// market list slow to come on a loaded machine does not start a second count.
    @Test func connectionsThatFailOutrightMakeTheFeedStale() async throws {
        let router = Router()
        router.get("/futures/api/inquire/initial/market") { _, _ in "[]" }
        router.get("/spot/api/v3.2/market_summary") { _, _ in "[]" }
        let recorder = Recorder()
        try await LoopbackServer.with(router) { port in
            let runner = FeedRunner(
                source: BTSESource(endpoint: "http://127.0.0.1:\(port)"), http: NIOHTTPClient(),
                options: FeedOptions(
                    staleAfter: .seconds(1), backoffBase: .milliseconds(100),
                    backoffMaximum: .milliseconds(200)),
                logger: Logger(label: "test"))
            let feed = Task { await runner.runFeed { recorder.append($0) } }
            // Stale, and still retrying after it: two more failed connections.
            _ = await recorder.wait { r in
                let events = r.all
                guard let stale = events.firstIndex(where: { if case .stale = $0 { true } else { false } }) else {
                    return false
                }
                return events[stale...].count { if case .disconnected = $0 { true } else { false } } >= 2
            }
            feed.cancel()
            _ = await feed.result
        }
        #expect(recorder.count { Self.isConnected($0) } == 0)
        let events = recorder.all
        let stale = try #require(events.firstIndex { if case .stale = $0 { true } else { false } })
        #expect(events[stale...].count { if case .disconnected = $0 { true } else { false } } >= 2)
        #expect(recorder.count { if case .stale = $0 { true } else { false } } == 1)
    }

    @Test func tooManyRequestsIsHonouredWithRetryAfter() async throws {
        let clock = ManualClock()
        var options = FeedOptions(
            staleAfter: .seconds(30), backoffBase: .milliseconds(100), backoffMaximum: .milliseconds(400))
        options.clock = clock
        let recorder = try await clock.advancing {
            try await follow(faults: ExchangeFaults(status429: 1), options: options) { r in
                r.all.contains { if case .markets = $0 { true } else { false } }
            }
        }
        // The first market-list request got 429 with Retry-After: 1; the retry waited for it.
        #expect(recorder.all.contains { if case .markets(let m) = $0 { m.count == 227 } else { false } })
        let retry = recorder.all.compactMap { event -> Duration? in
            if case .disconnected(let reason, let wait) = event, reason.contains("429") { return wait }
            return nil
        }
        #expect(retry.first.map { $0 >= .seconds(1) } == true)
        // The market list came once the wait had passed on the feed's clock, with no sleep in
        // real time: nothing else moves the clock before it.
        let marketsAt = recorder.all.firstIndex { if case .markets = $0 { true } else { false } }
            .map { recorder.times.withLock { $0 }[$0] }
        #expect(marketsAt.map { $0.offset >= .seconds(1) } == true)
    }

    /// A feed with a saved list (`FeedRunner.saved`) whose first market-list request fails
    /// follows the saved list at once, then takes the exchange's fresh list on a retry after a
    /// backoff, long before `marketsEvery`.
    @Test func aSavedListIsFollowedUntilAFreshOneComes() async throws {
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(
                port: 0, prices: .randomWalk(seed: 7, interval: .milliseconds(100)),
                faults: ExchangeFaults(status429: 1)))
        let port = try await exchange.start()
        var runner = FeedRunner(
            source: BTSESource(endpoint: "http://127.0.0.1:\(port)"), http: NIOHTTPClient(),
            options: FeedOptions(
                staleAfter: .seconds(30), backoffBase: .milliseconds(100), backoffMaximum: .milliseconds(400)),
            logger: Logger(label: "test"))
        runner.saved = (
            [Market(symbol: "BTC", base: "BTC", quote: "USD", future: false, active: true)], 1_700_000_000_000
        )
        let recorder = Recorder()
        let feed = Task { await runner.runFeed { recorder.append($0) } }
        // Done at the fresh list, or after 300 frames of prices (30 s of the exchange's) without one.
        _ = await recorder.wait { r in
            r.count { if case .markets = $0 { true } else { false } } >= 2
                || r.count { if case .ticks = $0 { true } else { false } } >= 300
        }
        feed.cancel()
        await feed.value
        await exchange.stop()
        let events = recorder.all
        let lists = events.compactMap { if case .markets(let m) = $0 { m.count } else { nil } }
        #expect(lists.prefix(2) == [1, 227], "the saved list, then the fresh one")
        let failed = events.firstIndex {
            if case .disconnected(let reason, _) = $0 { reason.contains("429") } else { false }
        }
        let saved = events.firstIndex { if case .markets = $0 { true } else { false } }
        #expect(failed != nil && saved != nil && failed! < saved!, "the saved list only after a failed request")
    }
}
