import AlertFeeds
import AlertHTTP
import AlertModel
import AlertTestSupport
import Hummingbird
import Logging
import Synchronization
import Testing

/// CoinGecko and CoinRanking as polled sources, pointed with `--endpoint` at a local server
/// that serves their recorded payloads (and a 429 first).
@Suite("polled sources against a local server", .timeLimit(.minutes(2)))
struct PolledSourceTests {
    /// Serves `body` at `path`; the first `rejections` requests get 429 with Retry-After: 1.
    /// With `clock`, each request's arrival on it is noted in `arrivals`.
    func withServer<T: Sendable>(
        path: String, body: [UInt8], rejections: Int = 0,
        clock: ManualClock? = nil, arrivals: Arrivals? = nil,
        _ run: @Sendable (Int) async throws -> T
    ) async throws -> T {
        let remaining = Mutex(rejections)
        let router = Router()
        router.get(RouterPath(path)) { _, _ -> Response in
            if let clock { arrivals?.times.withLock { $0.append(clock.now) } }
            if remaining.withLock({ n in
                defer { n -= 1 }; return n > 0
            }) {
                return Response(status: .tooManyRequests, headers: [.retryAfter: "1"])
            }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        return try await LoopbackServer.with(router, run)
    }

    /// Runs the feed until it emitted `count` tick batches (the suite's time limit ends a feed
    /// that never does).
    func follow(
        _ source: PolledSource, batches count: Int, clock: any Clock<Duration> = ContinuousClock()
    ) async throws -> [FeedEvent] {
        var options = FeedOptions(backoffBase: .milliseconds(100))
        options.clock = clock
        let runner = FeedRunner(source: source, http: NIOHTTPClient(), options: options, logger: Logger(label: "test"))
        let (events, task) = runner.start()
        var seen: [FeedEvent] = []
        for await event in events {
            seen.append(event)
            if seen.filter({ if case .ticks = $0 { true } else { false } }).count >= count { break }
        }
        task.cancel()
        return seen
    }

    @Test func coinGeckoIsPolledAndJoinedFromItsOwnListing() async throws {
        let body = try fixtureBytes("coingecko_coins_markets_oas_example.json")
        let events = try await withServer(path: "/api/v3/coins/markets", body: body) { port in
            try await follow(.coinGecko(endpoint: "http://127.0.0.1:\(port)", interval: .milliseconds(200)), batches: 2)
        }
        let markets = events.compactMap { if case .markets(let m) = $0 { m } else { nil } }.first
        #expect(markets?.map(\.symbol) == ["BTC"])
        let ticks = events.flatMap { event -> [Tick] in if case .ticks(let t) = event { t } else { [] } }
        #expect(ticks.count >= 2)
        #expect(ticks.allSatisfy { $0.symbol == "BTC" && $0.price > 0 && $0.change24h != nil })
    }

    @Test func coinRankingSkipsNullPricesAndHonoursRetryAfter() async throws {
        let body = try fixtureBytes("coinranking_v2_coins_items_with_nulls.json")
        let clock = ManualClock()
        let arrivals = Arrivals()
        let events = try await withServer(
            path: "/v2/coins", body: body, rejections: 1, clock: clock, arrivals: arrivals
        ) { port in
            try await clock.advancing {
                try await follow(
                    .coinRanking(endpoint: "http://127.0.0.1:\(port)", interval: .milliseconds(200)),
                    batches: 1, clock: clock)
            }
        }
        // The first request got 429 + Retry-After: 1, and the next came after waiting it out on
        // the feed's clock (with no sleep in real time).
        #expect(
            events.contains {
                if case .disconnected(let reason, let wait) = $0 {
                    reason.contains("429") && wait >= .seconds(1)
                } else {
                    false
                }
            })
        let times = arrivals.times.withLock { $0 }
        #expect(times.count >= 2)
        if times.count >= 2 { #expect(times[0].duration(to: times[1]) >= .seconds(1)) }
        #expect(events.contains { if case .markets(let m) = $0 { !m.isEmpty } else { false } })
    }
}

/// When requests arrived, on a test's clock.
final class Arrivals: Sendable {
    let times = Mutex<[ManualClock.Instant]>([])
}
