import AlertTestSupport
import Foundation
import Testing

/// What the tests of `run` on a PostgreSQL store share (`PostgresStandbyTests`,
/// `PostgresDaemonTests`): a real PostgreSQL, a scripted Binance on 127.0.0.1 (`--source
/// binance`), a webhook receiver, one rule (BTC/USDT crossing above 50 000, sink `ops`), three
/// batches of ticks (five crossings each) and the ids `replay` gives for each batch.
struct PostgresRunSetup: Sendable {
    var dir: URL
    var server: PostgresServer
    var exchange: ScriptedExchange
    var exchangePort: Int
    var hook: CrashRecoveryTests.Hook
    var batches: [[(time: Int, price: Double)]]
    var expected: [[String]]

    func start() throws -> ObservedProcess {
        try PriceAlertBinary.start(
            [
                "run", "--rules", "rules.json", "--source", "binance", "--endpoint",
                "http://127.0.0.1:\(exchangePort)", "--save-every", "1s", "--listen", "127.0.0.1:0"
            ], in: dir, environment: ["PRICEALERT_STORE": server.url()])
    }

    /// A leader (started first, leading in epoch 1), a standby, and their two feeds, each
    /// subscribed.
    func startPair() async throws -> (ObservedProcess, ObservedProcess, [ScriptedConnection]) {
        let leader = try start()
        _ = try await leader.waitForStderrLine(containing: "source binance: leader in epoch 1", timeout: 60)
        let standby = try start()
        _ = try await standby.waitForStderrLine(containing: "source binance: standby", timeout: 60)
        let feeds = [try await exchange.connection(1), try await exchange.connection(2)]
        for feed in feeds { _ = try await feed.waitForTexts(1) }
        return (leader, standby, feeds)
    }

    /// Sends `batch` on each of `connections`, in order.
    func send(_ batch: Int, to connections: [ScriptedConnection]) {
        for connection in connections {
            for tick in batches[batch] {
                connection.send(ExchangeSourceCommandTests.binanceTicker(tick.time, price: tick.price))
            }
        }
    }

    /// Returns once the outbox is empty: every delivery made and its outcome recorded
    /// (polled every 100 ms, at most a minute).
    func outboxEmptied() async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while try await server.query("SELECT COUNT(*) FROM outbox") != "0\n" {
            if ContinuousClock.now >= deadline {
                Issue.record("the outbox never emptied")
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// (epoch, rows) of the outbox ledger: which leader entered how many events.
    func ledger() async throws -> String {
        try await server.query("SELECT epoch, COUNT(*) FROM outbox_ledger GROUP BY epoch ORDER BY epoch")
    }

    /// The ids of the events `replay` with the rule file `rules` gives for BTC/USDT `ticks`, in
    /// order (the ticks written to `ticks.jsonl` in `dir`).
    static func replayIDs(of ticks: [(time: Int, price: Double)], rules: String, in dir: URL) async throws -> [String] {
        let lines = ticks.map { #"{"time": \#($0.time), "symbol": "BTC/USDT", "price": \#($0.price)}"# }
        try (lines.joined(separator: "\n") + "\n").write(
            to: dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
        let replay = try await PriceAlertBinary.run(
            ["replay", "--rules", rules, "--ticks", "ticks.jsonl", "--format", "json"], in: dir)
        return replay.stdout.split(separator: "\n").compactMap { line -> String? in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
        }
    }

    /// Ticks 1 s apart, from `start`, alternating 49 000 and 51 000: one crossing of 50 000 per
    /// pair, at the second tick's time.
    static func ticks(from start: Int, pairs: Int) -> [(time: Int, price: Double)] {
        (0..<(pairs * 2)).map { (start + $0 * 1000, $0 % 2 == 0 ? 49_000 : 51_000) }
    }

    /// Runs `body` with everything made, and takes it down after.
    static func with(_ body: @Sendable (PostgresRunSetup) async throws -> Void) async throws {
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
                try """
                {"version": 1,
                 "sinks": {"ops": {"type": "webhook", "url": "http://127.0.0.1:\(hookPort)/hook", "timeout": "10s"}},
                 "rules": [{"id": "up", "symbol": "BTC/USDT", "when": {"price": {"crossesAbove": 50000}},
                            "notify": ["ops"]}]}
                """.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
                var expected: [[String]] = []
                for i in batches.indices {
                    let ids = try await replayIDs(of: Array(batches[...i].joined()), rules: "rules.json", in: dir)
                    expected.append(Array(ids.dropFirst(expected.joined().count)))
                }
                #expect(expected.map(\.count) == [5, 5, 5])
                try await body(
                    PostgresRunSetup(
                        dir: dir, server: server, exchange: exchange, exchangePort: exchangePort, hook: hook,
                        batches: batches, expected: expected))
            }
        }
        await exchange.stop()
    }
}
