import AlertTestSupport
import Foundation
import Testing

/// `run` with a PostgreSQL store (`PRICEALERT_STORE`): the built binary, a scripted Binance on
/// 127.0.0.1 streaming BTC/USDT ticks, a webhook receiver, and a real PostgreSQL that is
/// restarted under the daemon.
@Suite("end to end: run with a PostgreSQL store", .programs)
struct PostgresDaemonTests {
    /// Ticks 1 s apart, from `start`, alternating 49 000 and 51 000: one crossing of 50 000 per
    /// pair, at the second tick's time.
    static func ticks(from start: Int, pairs: Int) -> [(time: Int, price: Double)] {
        (0..<(pairs * 2)).map { (start + $0 * 1000, $0 % 2 == 0 ? 49_000 : 51_000) }
    }

    /// Five crossings before the restart, five while the database is down, five after: every
    /// alert reaches the receiver once, by its id, and the run ends cleanly.
    @Test func aDatabaseRestartUnderARunLosesAndDoublesNoAlert() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-pgrun-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = try ExchangeSourceCommandTests.exchange(ExchangeSourceCommandTests.cases[0].rest)
        let exchangePort = try await exchange.start()
        let hook = CrashRecoveryTests.Hook()
        hook.status.withLock { $0 = 200 }
        let batches = [0, 1, 2].map { Self.ticks(from: 1_700_000_000_000 + $0 * 100_000, pairs: 5) }
        try await PostgresServer.with { server in
            try await CrashRecoveryTests().withHook(hook) { hookPort in
                let rules = """
                    {"version": 1,
                     "sinks": {"ops": {"type": "webhook", "url": "http://127.0.0.1:\(hookPort)/hook", "timeout": "10s"}},
                     "rules": [{"id": "up", "symbol": "BTC/USDT", "when": {"price": {"crossesAbove": 50000}},
                                "notify": ["ops"]}]}
                    """
                try rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
                // The ids a replay of the same ticks gives.
                let lines = batches.joined().map {
                    #"{"time": \#($0.time), "symbol": "BTC/USDT", "price": \#($0.price)}"#
                }
                try (lines.joined(separator: "\n") + "\n").write(
                    to: dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
                let replay = try await PriceAlertBinary.run(
                    ["replay", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--format", "json"], in: dir)
                let expected = replay.stdout.split(separator: "\n").compactMap { line -> String? in
                    (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
                }
                #expect(expected.count == 15 && Set(expected).count == 15, "\(replay.stdout)\(replay.stderr)")

                let daemon = try PriceAlertBinary.start(
                    [
                        "run", "--rules", "rules.json", "--source", "binance", "--endpoint",
                        "http://127.0.0.1:\(exchangePort)", "--save-every", "1s"
                    ], in: dir, environment: ["PRICEALERT_STORE": server.url()])
                let feed = try await exchange.connection(1)
                try await feed.waitForTexts(1)
                @Sendable func send(_ batch: [(time: Int, price: Double)]) {
                    for tick in batch {
                        feed.send(ExchangeSourceCommandTests.binanceTicker(tick.time, price: tick.price))
                    }
                }
                send(batches[0])
                try await hook.arrivals.wait(for: 5)
                try await server.restart {
                    send(batches[1])
                    _ = try await daemon.waitForStderrLine(containing: "waiting for the database", timeout: 120)
                }
                _ = try await daemon.waitForStderrLine(containing: "connected again", timeout: 120)
                send(batches[2])
                try await hook.arrivals.wait(for: 15)
                #expect(try await daemon.stop(signal: SIGTERM) == 0, "\(daemon.stderr)")
                let received = hook.received.withLock { $0 }
                #expect(received.sorted() == expected.sorted(), "\(daemon.stderr)")
                #expect(!(daemon.stdout + daemon.stderr).contains(server.password))
                // Nothing left behind: the store's outbox is empty, and the state was saved there.
                #expect(try await server.query("SELECT COUNT(*) FROM outbox") == "0\n")
                #expect(try await server.query("SELECT COUNT(*) FROM engine_symbols") == "1\n")
            }
        }
        await exchange.stop()
    }
}
