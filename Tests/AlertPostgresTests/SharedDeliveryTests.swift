import AlertHTTP
import AlertModel
import AlertOutbox
import AlertSinks
import AlertTestSupport
import Hummingbird
import Logging
import Synchronization
import Testing

@testable import AlertPostgres

/// Two deliverers, each a `ReliableDispatcher` on a store connection of its own (as two `run`
/// instances are), delivering one PostgreSQL outbox to a real webhook receiver on 127.0.0.1
/// (Docs/postgres.md#several-deliverers-one-outbox).
@Suite struct SharedDeliveryTests {
    /// What the receiver got: each request's `webhook-id` and when it arrived.
    /// The request of the id `holding` names is answered only once its gate opens.
    final class Arrivals: Sendable {
        private let storage = Mutex<[(id: String, at: ContinuousClock.Instant)]>([])
        var all: [(id: String, at: ContinuousClock.Instant)] { storage.withLock { $0 } }
        /// One event per request received.
        let received = EventCounter()
        let holding: (id: String, gate: Gate)?

        init(holding: (id: String, gate: Gate)? = nil) {
            self.holding = holding
        }

        func router() -> Router<BasicRequestContext> {
            let router = Router()
            router.post("hook") { [self] request, _ -> Response in
                _ = try await request.body.collect(upTo: 1 << 20)
                let id = request.headers[.init("webhook-id")!] ?? ""
                let now = ContinuousClock.now
                storage.withLock { $0.append((id, now)) }
                received.record()
                if let holding, holding.id == id { await holding.gate.pass() }
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

    /// Enters `alerts` in the outbox and runs `body` with one deliverer (not started) on a
    /// connection of its own, delivering to a receiver that records in `arrivals`.
    static func withOneDeliverer(
        _ alerts: [Alert], arrivals: Arrivals, logger: Logger = Logger(label: "delivery"),
        intervals: any Clock<Duration> = ContinuousClock(),
        _ body: @Sendable (PostgresServer, PostgresStore, ReliableDispatcher) async throws -> Void
    ) async throws {
        try await PostgresServer.with { server in
            try await LoopbackServer.with(arrivals.router()) { port in
                let store = try await PostgresStoreTests.open(server)
                for alert in alerts { try await store.outbox.enqueue(.event(alert), sinks: ["hook"], now: 0) }
                let client = CurlHTTPClient()
                let sink = try WebhookSink(
                    name: "hook", spec: WebhookSpec(url: .inline("http://127.0.0.1:\(port)/hook")), client: client)
                let dispatcher = ReliableDispatcher(
                    sinks: ["hook": sink], durable: ["hook"], outbox: store.outbox,
                    configuration: .init(concurrency: 4, pollInterval: 50), logger: logger, intervals: intervals)
                try await body(server, store, dispatcher)
                await store.close()
                client.shutdown()
            }
        }
    }

    /// A deliverer sends a rule's later row while an earlier row of that rule is leased to
    /// another deliverer that died; the earlier row's lease runs out during the attempt, and the
    /// deliverer claims it. Each row arrives once: the later row leaves its lane when its attempt
    /// ends, although the earlier one now stands before it.
    @Test func anEarlierRowClaimedWhileALaterOneIsInFlightSendsEachOnce() async throws {
        let (earlier, later) = (Self.alert(0, rule: 0), Self.alert(1, rule: 0))
        let gate = Gate()
        let arrivals = Arrivals(holding: (later.id, gate))
        try await Self.withOneDeliverer([earlier, later], arrivals: arrivals) { server, store, dispatcher in
            let first = "(SELECT MIN(id) FROM outbox)"
            // The earlier row is leased to a deliverer that died.
            _ = try await server.query(
                "UPDATE outbox SET locked_by = 'dead', locked_until = 9000000000000000 WHERE id = \(first)")
            try await dispatcher.start()
            try await arrivals.received.wait(for: 1)
            // The dead deliverer's lease ends while the later row is in flight; the deliverer
            // claims the earlier row.
            _ = try await server.query("UPDATE outbox SET locked_by = NULL, locked_until = NULL WHERE id = \(first)")
            let deadline = ContinuousClock.now + .seconds(60)
            while try await server.query("SELECT locked_by IS NOT NULL FROM outbox WHERE id = \(first)") != "t\n",
                ContinuousClock.now < deadline
            {
                try await Task.sleep(for: .milliseconds(10))
            }
            gate.open()
            try await arrivals.received.wait(for: 2)
            await dispatcher.drain(timeout: .seconds(5))
            #expect(arrivals.all.map(\.id).sorted() == [earlier.id, later.id].sorted())
            #expect(try await store.outbox.depth() == 0)
        }
    }

    /// One deliverer on a manual clock with two rows of one rule, the first in flight (its
    /// request held until `gate` opens) and the second waiting behind it in its lane, both
    /// claimed: `body` then holds the deliverer up and lets another process take the second row.
    static func withARowWaitingBehindOneInFlight(
        _ body:
            @Sendable (
                _ server: PostgresServer, _ store: PostgresStore, _ dispatcher: ReliableDispatcher,
                _ clock: ManualClock,
                _ gate: Gate, _ capture: CapturingLogHandler
            ) async throws -> Void
    ) async throws {
        let (first, second) = (Self.alert(0, rule: 0), Self.alert(1, rule: 0))
        let gate = Gate()
        let arrivals = Arrivals(holding: (first.id, gate))
        let (capture, clock) = (CapturingLogHandler(), ManualClock())
        try await Self.withOneDeliverer(
            [first, second], arrivals: arrivals, logger: capture.logger(label: "delivery"), intervals: clock
        ) { server, store, dispatcher in
            try await dispatcher.start()
            try await arrivals.received.wait(for: 1)
            #expect(try await server.query("SELECT COUNT(*) FROM outbox WHERE locked_by IS NOT NULL") == "2\n")
            try await body(server, store, dispatcher, clock, gate, capture)
            await dispatcher.drain(timeout: .seconds(5))
            #expect(try await server.query("SELECT locked_by FROM outbox") == "other\n")
        }
        #expect(arrivals.all.map(\.id) == [first.id])
    }

    /// Waits until the deliverer says it let rows go whose claims ran out (or a generous
    /// timeout).
    static func waitForLetGo(_ capture: CapturingLogHandler) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !capture.records.contains(where: { $0.message.contains("ran out before they were renewed") }),
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// A deliverer held up past a waiting row's claim (its clock moves a third of a lease on,
    /// to its next renewal) while another process claimed that row: the renewal finds the row
    /// is no longer its own and lets it go, and only the row it still holds is sent.
    @Test func aWaitingRowAnotherProcessClaimedIsLetGoAtTheNextRenewal() async throws {
        try await Self.withARowWaitingBehindOneInFlight { server, store, _, clock, gate, capture in
            _ = try await server.query(
                "UPDATE outbox SET locked_by = 'other', locked_until = 9000000000000000 WHERE id = (SELECT MAX(id) FROM outbox)"
            )
            clock.advance(by: .milliseconds(store.outbox.claimLease / 3))
            try await Self.waitForLetGo(capture)
            gate.open()
        }
    }

    /// A deliverer held up for a whole lease (its clock moves a lease on, as a process paused
    /// with SIGSTOP finds when it is continued) while another process claimed its waiting row:
    /// when the attempt in flight ends, the waiting row is not sent on the strength of a claim
    /// that has run out. It waits for the renewal, which finds the row is another process's
    /// and lets it go. The renewal is held up by that process's open transaction until the
    /// attempt has ended, so the send would come first if the worker did not wait.
    @Test func aWaitingRowWhoseClaimRanOutWaitsForTheRenewalInsteadOfBeingSent() async throws {
        try await Self.withARowWaitingBehindOneInFlight { server, store, dispatcher, clock, gate, capture in
            // Another process takes the second row in a transaction it keeps open.
            let other = try await PostgresStoreTests.open(server)
            let (taken, commit) = (Gate(), Gate())
            let logger = other.outbox.queue.logger
            let taking = Task {
                try await other.outbox.queue.perform { connection in
                    try await PostgresQueue.write(connection, logger) { connection in
                        try await connection.query(
                            "UPDATE outbox SET locked_by = 'other', locked_until = 9000000000000000 WHERE id = (SELECT MAX(id) FROM outbox)",
                            logger: logger)
                        taken.open()
                        await commit.pass()
                    }
                }
            }
            await taken.pass()
            clock.advance(by: .milliseconds(store.outbox.claimLease))
            // The renewal waits for the other process's row lock.
            try await server.waitUntil("SELECT COUNT(*) > 0 FROM pg_locks WHERE NOT granted", timeout: .seconds(60))
            gate.open()
            let deadline = ContinuousClock.now + .seconds(60)
            // The first attempt has ended (and, without the wait, the second row's begun).
            while await dispatcher.counts()["hook"]?.delivered != 1, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            commit.open()
            try await taking.value
            try await Self.waitForLetGo(capture)
            await other.close()
        }
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
