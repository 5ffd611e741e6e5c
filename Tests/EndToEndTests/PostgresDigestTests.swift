import AlertTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import Synchronization
import Testing

/// A sink's digests across two `run`s on one PostgreSQL store
/// (Docs/postgres.md#digests-and-quiet-hours-across-instances): the built binary twice, a
/// scripted Binance on 127.0.0.1, a webhook receiver that reads every body, and a real
/// PostgreSQL. The leader journals its events in the shared `policy_pending`; the home lease's
/// leader runs the group stage over them; a new one rebuilds the open digest from the journal.
@Suite("end to end: a digest across two instances on one PostgreSQL store", .programs)
struct PostgresDigestTests {
    /// One request the receiver answered: its `webhook-id`, the ids of the events it carries,
    /// and whether it is a digest of held events.
    struct Delivered: Sendable {
        var id: String
        var events: [String]
        var held: Bool
    }

    /// A webhook receiver that answers 200 and records, per request, its `webhook-id` and the
    /// ids of the events its body carries (a digest's `events`, or the event itself).
    final class Receiver: Sendable {
        let deliveries = Mutex<[Delivered]>([])
        /// One per event id received, but a feed's `@feed-stale`/`@feed-recovered`.
        let events = EventCounter()

        func router() -> Router<BasicRequestContext> {
            let router = Router()
            router.post("hook") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] ?? [:]
                let ids =
                    json["kind"] as? String == "digest"
                    ? (json["events"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
                    : [json["id"] as? String].compactMap { $0 }
                let id = request.headers[HTTPField.Name("webhook-id")!] ?? ""
                self.deliveries.withLock {
                    $0.append(Delivered(id: id, events: ids, held: json["held"] as? Bool ?? false))
                }
                for id in ids where !id.hasPrefix("@feed-") { self.events.record() }
                return Response(status: .ok)
            }
            return router
        }
    }

    /// Returns once `sql` prints `expected` (polled every 100 ms, at most a minute).
    func until(_ server: PostgresServer, _ sql: String, is expected: String) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while try await server.query(sql) != expected {
            if ContinuousClock.now >= deadline {
                Issue.record("\(sql) never gave \(expected)")
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// What one run of `leaderKilledWhileHolding` saw.
    struct Outcome {
        var deliveries: [Delivered]
        /// The events' ids, from a replay of the same ticks with a sink without stages.
        var expected: [String]
        var logs: String
    }

    /// A leader holds the five events of the first batch for `ops` (whose `policy` holds them)
    /// and is killed with SIGKILL (or, `paused`, stopped with SIGSTOP and continued once the
    /// standby leads, the second batch then sent to both); a standby started after those events
    /// (so it never evaluated them) takes over, rebuilds what the stages held from the journal,
    /// and gets the second batch. Returns once the ten events arrived, the outbox and the
    /// journal are empty, and the instances stopped. The ticks are of the last half hour.
    func leaderKilledWhileHolding(
        policy: String, start: Int, wait: Duration, paused: Bool = false
    ) async throws -> Outcome {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-pgdigest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = try ExchangeSourceCommandTests.exchange(ExchangeSourceCommandTests.cases[0].rest)
        let exchangePort = try await exchange.start()
        let batches = [0, 1].map { PostgresRunSetup.ticks(from: start + $0 * 100_000, pairs: 5) }
        let receiver = Receiver()
        do {
            let outcome = try await run(
                dir, exchange, exchangePort, batches, receiver, policy: policy, wait: wait, paused: paused)
            await exchange.stop()
            return outcome
        } catch {
            await exchange.stop()
            throw error
        }
    }

    private func run(
        _ dir: URL, _ exchange: ScriptedExchange, _ exchangePort: Int, _ batches: [[(time: Int, price: Double)]],
        _ receiver: Receiver, policy: String, wait: Duration, paused: Bool
    ) async throws -> Outcome {
        try await PostgresServer.with { server in
            try await LoopbackServer.with(receiver.router()) { hookPort in
                let sink = #""type": "webhook", "url": "http://127.0.0.1:\#(hookPort)/hook", "timeout": "10s""#
                let rule = """
                    "rules": [{"id": "up", "symbol": "BTC/USDT", "when": {"price": {"crossesAbove": 50000}},
                               "notify": ["ops"]}]}
                    """
                try #"{"version": 2, "sinks": {"ops": {\#(sink), \#(policy)}}, \#(rule)"#
                    .write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
                try #"{"version": 2, "sinks": {"ops": {\#(sink)}}, \#(rule)"#
                    .write(to: dir.appendingPathComponent("plain.json"), atomically: true, encoding: .utf8)
                let expected = try await PostgresRunSetup.replayIDs(
                    of: Array(batches.joined()), rules: "plain.json", in: dir)
                #expect(expected.count == 10)

                let setup = PostgresRunSetup(
                    dir: dir, server: server, exchange: exchange, exchangePort: exchangePort,
                    hook: CrashRecoveryTests.Hook(), batches: batches, expected: [expected])
                let first = try setup.start()
                _ = try await first.waitForStderrLine(containing: "source binance: leader in epoch 1", timeout: 60)
                let firstFeed = try await exchange.connection(1)
                _ = try await firstFeed.waitForTexts(1)
                setup.send(0, to: [firstFeed])
                try await until(server, "SELECT COUNT(*) FROM policy_pending", is: "5\n")

                let second = try setup.start()
                _ = try await second.waitForStderrLine(containing: "source binance: standby", timeout: 60)
                let secondFeed = try await exchange.connection(2)
                _ = try await secondFeed.waitForTexts(1)
                let standbyLines = first.stderr.components(separatedBy: "source binance: standby").count - 1
                #expect(kill(first.pid, paused ? SIGSTOP : SIGKILL) == 0)
                _ = try await second.waitForStderrLine(
                    containing: "source binance: taking over in epoch 2", timeout: 60)
                if paused {
                    // The old owner goes on: it finds it leads nothing, then evaluates the second
                    // batch beside the new leader, which alone journals and digests it.
                    #expect(kill(first.pid, SIGCONT) == 0)
                    try await first.occurrences(
                        .stderr, of: "source binance: standby", atLeast: standbyLines + 1, timeout: 60)
                    setup.send(1, to: [firstFeed, secondFeed])
                } else {
                    setup.send(1, to: [secondFeed])
                }
                try await receiver.events.wait(for: 10, timeout: wait)
                try await setup.outboxEmptied()
                try await until(server, "SELECT COUNT(*) FROM policy_pending", is: "0\n")
                #expect(try await second.stop(signal: SIGTERM) == 0, "\(second.stderr)")
                if paused { #expect(try await first.stop(signal: SIGTERM) == 0, "\(first.stderr)") }
                let logs = first.stderr + second.stderr
                #expect(!logs.contains(server.password))
                return Outcome(deliveries: receiver.deliveries.withLock { $0 }, expected: expected, logs: logs)
            }
        }
    }

    /// The open digest (window 1 h, max 10, by rule) is rebuilt by the new leader and closed by the
    /// tenth event: one digest with all ten events arrives, once.
    @Test func aNewLeaderRebuildsTheOpenDigestFromTheJournal() async throws {
        // The digest's window (1 h from half an hour ago) is still open on the wall clock.
        let start = Int(Date().timeIntervalSince1970 * 1000) - 1_800_000
        let seen = try await leaderKilledWhileHolding(
            policy: #""group": {"window": "1h", "max": 10, "by": ["rule"]}"#, start: start, wait: .seconds(60))
        // A feed that goes stale under load makes a digest of its own rule.
        let ups = seen.deliveries.filter { !$0.events.contains { $0.hasPrefix("@feed-") } }
        #expect(ups.count == 1, "\(seen.deliveries)\n\(seen.logs)")
        #expect(ups.first?.id == "digest:ops:\(seen.expected[0])", "\(seen.deliveries)")
        #expect(ups.first?.held == false)
        #expect(ups.flatMap(\.events).sorted() == seen.expected.sorted(), "\(seen.deliveries)")
    }

    /// The digest owner stopped with SIGSTOP while its digest is open, the standby takes over
    /// and rebuilds it, and the old owner is continued: it writes nothing, and one digest with
    /// all ten events arrives, once.
    @Test func anOwnerPausedAndContinuedWhileItsDigestIsOpenSendsNothingTwice() async throws {
        let start = Int(Date().timeIntervalSince1970 * 1000) - 1_800_000
        let seen = try await leaderKilledWhileHolding(
            policy: #""group": {"window": "1h", "max": 10, "by": ["rule"]}"#, start: start, wait: .seconds(60),
            paused: true)
        let ups = seen.deliveries.filter { !$0.events.contains { $0.hasPrefix("@feed-") } }
        #expect(ups.count == 1, "\(seen.deliveries)\n\(seen.logs)")
        #expect(ups.first?.id == "digest:ops:\(seen.expected[0])", "\(seen.deliveries)")
        #expect(ups.flatMap(\.events).sorted() == seen.expected.sorted(), "\(seen.deliveries)")
    }

    /// Two leaders of different sources feed one digest: the rule files name two sources
    /// (`one`, `two`, each a scripted Binance), and a sink `ops` whose group takes every event
    /// (window 1 h, max 10). The first instance leads both; once the second follows `two`, the
    /// first's connection to `two` is closed, so it hands `two` over (the longest follower
    /// leads) and keeps `one`, the home lease, whose leader owns the digests. Five crossings on
    /// each source: one digest with all ten events, from both leaders, arrives once.
    @Test func twoLeadersOfDifferentSourcesFeedOneDigest() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-pgdigest2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchanges = try [0, 1].map { _ in
            try ExchangeSourceCommandTests.exchange(ExchangeSourceCommandTests.cases[0].rest)
        }
        var ports: [Int] = []
        for exchange in exchanges { ports.append(try await exchange.start()) }
        let start = Int(Date().timeIntervalSince1970 * 1000) - 1_800_000
        let batches = [0, 1].map { PostgresRunSetup.ticks(from: start + $0 * 100_000, pairs: 5) }
        let receiver = Receiver()
        do {
            try await twoLeaders(dir, exchanges, ports, batches, receiver)
        } catch {
            for exchange in exchanges { await exchange.stop() }
            throw error
        }
        for exchange in exchanges { await exchange.stop() }
    }

    private func twoLeaders(
        _ dir: URL, _ exchanges: [ScriptedExchange], _ ports: [Int], _ batches: [[(time: Int, price: Double)]],
        _ receiver: Receiver
    ) async throws {
        try await PostgresServer.with { server in
            try await LoopbackServer.with(receiver.router()) { hookPort in
                let sink = #""type": "webhook", "url": "http://127.0.0.1:\#(hookPort)/hook", "timeout": "10s""#
                try """
                {"version": 3,
                 "sources": {"one": {"type": "binance", "endpoint": "http://127.0.0.1:\(ports[0])"},
                             "two": {"type": "binance", "endpoint": "http://127.0.0.1:\(ports[1])"}},
                 "sinks": {"ops": {\(sink), "group": {"window": "1h", "max": 10}}},
                 "rules": [{"id": "up1", "symbol": "one:BTC/USDT", "when": {"price": {"crossesAbove": 50000}}, "notify": ["ops"]},
                           {"id": "up2", "symbol": "two:BTC/USDT", "when": {"price": {"crossesAbove": 50000}}, "notify": ["ops"]}]}
                """.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
                // Rules v3 ids: rule, source, symbol and the crossing tick's time (the second of each pair).
                let expected = zip(["up1:one", "up2:two"], batches).flatMap { prefix, ticks in
                    ticks.enumerated().filter { $0.offset % 2 == 1 }.map { "\(prefix):BTC/USDT:\($0.element.time)" }
                }
                func start() throws -> ObservedProcess {
                    try PriceAlertBinary.start(
                        ["run", "--rules", "rules.json", "--save-every", "1s"], in: dir,
                        environment: ["PRICEALERT_STORE": server.url()])
                }
                // One tick below the level, before the batches: an instance follows a source
                // from the first prices it evaluates.
                let priming = ExchangeSourceCommandTests.binanceTicker(batches[0][0].time - 5_000, price: 49_000)
                let first = try start()
                for source in ["one", "two"] {
                    _ = try await first.waitForStderrLine(
                        containing: "source \(source): leader in epoch 1", timeout: 60)
                }
                let second = try start()
                _ = try await second.waitForStderrLine(containing: "source two: standby", timeout: 60)
                var feeds: [[ScriptedConnection]] = []
                for exchange in exchanges {
                    let pair = [try await exchange.connection(1), try await exchange.connection(2)]
                    for feed in pair { _ = try await feed.waitForTexts(1) }
                    feeds.append(pair)
                }
                for feed in feeds[1] { feed.send(priming) }
                // Both follow `two` once their heartbeats say so; the first then loses its feed.
                try await until(
                    server, "SELECT COUNT(*) FROM instances WHERE 'two' = ANY(following)", is: "2\n")
                feeds[1][0].close()
                _ = try await second.waitForStderrLine(containing: "source two: leader in epoch 2", timeout: 60)
                #expect(!second.stderr.contains("source one: leader"), "\(second.stderr)")
                for feed in feeds[0] {
                    for tick in batches[0] {
                        feed.send(ExchangeSourceCommandTests.binanceTicker(tick.time, price: tick.price))
                    }
                }
                for tick in batches[1] {
                    feeds[1][1].send(ExchangeSourceCommandTests.binanceTicker(tick.time, price: tick.price))
                }
                try await receiver.events.wait(for: 10, timeout: .seconds(60))
                try await until(server, "SELECT COUNT(*) FROM outbox", is: "0\n")
                try await until(server, "SELECT COUNT(*) FROM policy_pending", is: "0\n")
                let journalled = try await server.query(
                    "SELECT source || ' ' || COUNT(*) FROM outbox_ledger WHERE delivery_id NOT LIKE 'digest:%' GROUP BY source ORDER BY source"
                )
                for process in [second, first] {
                    #expect(try await process.stop(signal: SIGTERM) == 0, "\(process.stderr)")
                }
                let deliveries = receiver.deliveries.withLock { $0 }
                let logs = first.stderr + second.stderr
                #expect(!logs.contains(server.password))
                let ups = deliveries.filter { !$0.events.contains { $0.hasPrefix("@feed-") } }
                #expect(ups.count == 1, "\(deliveries)\n\(logs)\n\(journalled)")
                #expect(ups.first?.id == "digest:ops:\(ups.first?.events.first ?? "")")
                #expect(ups.flatMap(\.events).sorted() == expected.sorted(), "\(deliveries)")
            }
        }
    }

    /// Quiet hours from before the ticks until a minute boundary at least 45 s ahead: the new
    /// leader rebuilds the held window and releases all ten events in one held digest, once,
    /// when the wall clock passes its end.
    @Test func aNewLeaderReleasesWhatTheKilledLeaderHeldInQuietHours() async throws {
        let now = Int(Date().timeIntervalSince1970 * 1000)
        let start = now - 1_800_000
        let minute = 60_000
        let from = (start / minute - 1) * minute
        let to = (now + 45_000 + minute - 1) / minute * minute
        func clock(_ time: Int) -> String {
            let minutes = (time / minute) % 1440
            return String(format: "%02d:%02d", minutes / 60, minutes % 60)
        }
        let seen = try await leaderKilledWhileHolding(
            policy: #""quiet": [{"from": "\#(clock(from))", "to": "\#(clock(to))"}]"#, start: start,
            wait: .seconds(240))
        // The feed, quiet while the test waits for the window's end, may go stale: its
        // `@feed-stale` is held with the rest when it fires inside the quiet hours, and sent on
        // its own when it fires after them.
        let ups = seen.deliveries.filter { $0.events.contains { !$0.hasPrefix("@feed-") } }
        #expect(ups.count == 1, "\(seen.deliveries)\n\(seen.logs)")
        #expect(ups.first?.id == "digest:ops:\(seen.expected[0])", "\(seen.deliveries)")
        #expect(ups.first?.held == true)
        let events = ups.flatMap(\.events).filter { !$0.hasPrefix("@feed-") }
        #expect(events.sorted() == seen.expected.sorted(), "\(seen.deliveries)")
    }
}
