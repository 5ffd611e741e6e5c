import AlertHTTP
import AlertModel
import AlertOutbox
import AlertSinks
import AlertTestSupport
import Hummingbird
import Synchronization
import Testing

@testable import AlertPostgres

/// Two deliverers, each a `ReliableDispatcher` on a store connection of its own (as two `run`
/// instances are), delivering one PostgreSQL outbox to a real webhook receiver on 127.0.0.1
/// (Docs/postgres.md#several-deliverers-one-outbox).
@Suite struct SharedDeliveryTests {
    /// What the receiver got: each request's `webhook-id` and when it arrived.
    final class Arrivals: Sendable {
        private let storage = Mutex<[(id: String, at: ContinuousClock.Instant)]>([])
        var all: [(id: String, at: ContinuousClock.Instant)] { storage.withLock { $0 } }

        func router() -> Router<BasicRequestContext> {
            let router = Router()
            router.post("hook") { [self] request, _ -> Response in
                _ = try await request.body.collect(upTo: 1 << 20)
                let id = request.headers[.init("webhook-id")!] ?? ""
                let now = ContinuousClock.now
                storage.withLock { $0.append((id, now)) }
                return Response(status: .noContent)
            }
            return router
        }
    }

    static func alert(_ n: Int, rule: Int) -> Alert {
        Alert(
            rule: "rule-\(rule)", symbol: "BTC", time: 1_700_000_000_000 + Int64(n), price: 43_000,
            condition: "price above 43000", threshold: .value(43_000), value: 43_000,
            message: "BTC price above 43000 (\(n))", notify: ["hook"])
    }

    /// Enters `alerts` in the outbox, then starts two dispatchers on their own connections and
    /// waits until the receiver has `expected` requests (or a generous timeout); returns what it
    /// got and what each dispatcher counted.
    static func deliver(
        _ alerts: [Alert], expected: Int, configuration: ReliableDispatcher.Configuration
    ) async throws -> (arrivals: [(id: String, at: ContinuousClock.Instant)], counts: [DeliveryCounts]) {
        try await PostgresServer.with { server in
            let arrivals = Arrivals()
            return try await LoopbackServer.with(arrivals.router()) { port in
                let stores = [try await PostgresStoreTests.open(server), try await PostgresStoreTests.open(server)]
                for alert in alerts { try await stores[0].outbox.enqueue(.event(alert), sinks: ["hook"], now: 0) }
                let client = CurlHTTPClient()
                let dispatchers = try stores.map { store in
                    let sink = try WebhookSink(
                        name: "hook", spec: WebhookSpec(url: .inline("http://127.0.0.1:\(port)/hook")), client: client)
                    return ReliableDispatcher(
                        sinks: ["hook": sink], durable: ["hook"], outbox: store.outbox, configuration: configuration)
                }
                async let first: Void = dispatchers[0].start()
                async let second: Void = dispatchers[1].start()
                _ = try await (first, second)
                let deadline = ContinuousClock.now + .seconds(120)
                while arrivals.all.count < expected, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
                // Both settle what they hold; nothing more may arrive.
                for dispatcher in dispatchers { await dispatcher.drain(timeout: .seconds(5)) }
                var counts: [DeliveryCounts] = []
                for dispatcher in dispatchers { counts.append(await dispatcher.counts()["hook"] ?? DeliveryCounts()) }
                #expect(try await stores[0].outbox.depth() == 0)
                for store in stores { await store.close() }
                client.shutdown()
                return (arrivals.all, counts)
            }
        }
    }

    @Test func twoDeliverersSendEachRowOnce() async throws {
        let alerts = (0..<300).map { Self.alert($0, rule: $0 % 16) }
        let (arrivals, counts) = try await Self.deliver(
            alerts, expected: alerts.count, configuration: .init(concurrency: 4, pollInterval: 50))
        #expect(arrivals.count == alerts.count)
        #expect(Set(arrivals.map(\.id)) == Set(alerts.map(\.id)))
        #expect(counts.map(\.delivered).reduce(0, +) == alerts.count)
    }

    @Test func twoDeliverersTogetherKeepTheSinksRate() async throws {
        // Two starts in any 600 ms, one event an attempt (no backlog digests).
        let rate = RateSpec(count: 2, per: 600)
        let alerts = (0..<10).map { Self.alert($0, rule: $0) }
        let (arrivals, counts) = try await Self.deliver(
            alerts, expected: alerts.count,
            configuration: .init(concurrency: 4, pollInterval: 50, rates: ["hook": rate], batchMax: ["hook": 1]))
        #expect(arrivals.count == alerts.count)
        #expect(Set(arrivals.map(\.id)) == Set(alerts.map(\.id)))
        #expect(counts.map(\.delivered).reduce(0, +) == alerts.count)
        // The window counts each attempt from its end, on the database's clock in whole ms: at
        // the receiver, the (n + 2)th arrival is at least 600 ms after the nth (less 2 ms for
        // the rounding of those ms).
        let times = arrivals.map(\.at).sorted()
        for n in 0..<(times.count - rate.count) {
            let gap = times[n].duration(to: times[n + rate.count])
            #expect(gap >= .milliseconds(rate.per - 2), "arrivals \(n) and \(n + rate.count) only \(gap) apart")
        }
    }
}
