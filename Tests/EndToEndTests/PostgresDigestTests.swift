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
    /// A webhook receiver that answers 200 and records, per request, its `webhook-id` and the
    /// ids of the events its body carries (a digest's `events`, or the event itself).
    final class Receiver: Sendable {
        let deliveries = Mutex<[(id: String, events: [String])]>([])
        /// One per event id received.
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
                self.deliveries.withLock { $0.append((id, ids)) }
                for _ in ids { self.events.record() }
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

    /// The leader holds five events in an open digest (window 1 h, max 10) and is killed with
    /// SIGKILL; a standby started after those events (so it never evaluated them) takes over,
    /// rebuilds the digest from the journal and closes it with the next five: one digest with
    /// all ten events arrives, once, and the journal is left empty.
    @Test func aNewLeaderRebuildsTheOpenDigestFromTheJournal() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-pgdigest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = try ExchangeSourceCommandTests.exchange(ExchangeSourceCommandTests.cases[0].rest)
        let exchangePort = try await exchange.start()
        // Ticks of the last half hour: the digest's window (1 h) is still open on the wall clock.
        let start = Int(Date().timeIntervalSince1970 * 1000) - 1_800_000
        let batches = [0, 1].map { PostgresDaemonTests.ticks(from: start + $0 * 100_000, pairs: 5) }
        let receiver = Receiver()
        try await PostgresServer.with { server in
            try await LoopbackServer.with(receiver.router()) { hookPort in
                let sink = #""type": "webhook", "url": "http://127.0.0.1:\#(hookPort)/hook", "timeout": "10s""#
                let rule = """
                    "rules": [{"id": "up", "symbol": "BTC/USDT", "when": {"price": {"crossesAbove": 50000}},
                               "notify": ["ops"]}]}
                    """
                try #"{"version": 2, "sinks": {"ops": {\#(sink), "group": {"window": "1h", "max": 10}}}, \#(rule)"#
                    .write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
                // The events' ids, from a replay of the same ticks without the group.
                try #"{"version": 2, "sinks": {"ops": {\#(sink)}}, \#(rule)"#
                    .write(to: dir.appendingPathComponent("plain.json"), atomically: true, encoding: .utf8)
                let lines = batches.joined().map {
                    #"{"time": \#($0.time), "symbol": "BTC/USDT", "price": \#($0.price)}"#
                }
                try (lines.joined(separator: "\n") + "\n").write(
                    to: dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
                let replay = try await PriceAlertBinary.run(
                    ["replay", "--rules", "plain.json", "--ticks", "ticks.jsonl", "--format", "json"], in: dir)
                let expected = replay.stdout.split(separator: "\n").compactMap { line -> String? in
                    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
                }
                #expect(expected.count == 10)

                let setup = PostgresStandbyTests.Setup(
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
                #expect(kill(first.pid, SIGKILL) == 0)
                _ = try await second.waitForStderrLine(
                    containing: "source binance: taking over in epoch 2", timeout: 60)
                setup.send(1, to: [secondFeed])
                try await receiver.events.wait(for: 10)
                try await setup.outboxEmptied()
                try await until(server, "SELECT COUNT(*) FROM policy_pending", is: "0\n")
                #expect(try await second.stop(signal: SIGTERM) == 0, "\(second.stderr)")

                let deliveries = receiver.deliveries.withLock { $0 }
                #expect(deliveries.count == 1, "\(deliveries)\n\(first.stderr)\n\(second.stderr)")
                #expect(deliveries.first?.id == "digest:ops:\(expected[0])", "\(deliveries)")
                #expect(deliveries.flatMap(\.events).sorted() == expected.sorted(), "\(deliveries)")
                #expect(!(first.stderr + second.stderr).contains(server.password))
            }
        }
        await exchange.stop()
    }
}
