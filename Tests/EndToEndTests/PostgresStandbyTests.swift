import AlertTestSupport
import Foundation
import Testing

/// Two `run`s sharing one PostgreSQL store (Docs/postgres.md#several-instances): the built
/// binary twice, a scripted Binance on 127.0.0.1 streaming the same BTC/USDT ticks (timed by the
/// exchange) to both, a webhook receiver and a real PostgreSQL. One instance leads the source;
/// the other evaluates as a hot standby, sends and saves nothing, and takes over.
@Suite("end to end: a leader and a standby on one PostgreSQL store", .programs)
struct PostgresStandbyTests {
    /// Everything one test needs: the store, the exchange, the receiver, the rules and the ids
    /// `replay` gives for the three batches of ticks.
    struct Setup: Sendable {
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
    }

    func withSetup(_ body: @Sendable (Setup) async throws -> Void) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-pgha-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = try ExchangeSourceCommandTests.exchange(ExchangeSourceCommandTests.cases[0].rest)
        let exchangePort = try await exchange.start()
        let hook = CrashRecoveryTests.Hook()
        hook.status.withLock { $0 = 200 }
        let batches = [0, 1, 2].map { PostgresDaemonTests.ticks(from: 1_700_000_000_000 + $0 * 100_000, pairs: 5) }
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
                    let lines = batches[...i].joined().map {
                        #"{"time": \#($0.time), "symbol": "BTC/USDT", "price": \#($0.price)}"#
                    }
                    try (lines.joined(separator: "\n") + "\n").write(
                        to: dir.appendingPathComponent("ticks.jsonl"), atomically: true, encoding: .utf8)
                    let replay = try await PriceAlertBinary.run(
                        ["replay", "--rules", "rules.json", "--ticks", "ticks.jsonl", "--format", "json"], in: dir)
                    let ids = replay.stdout.split(separator: "\n").compactMap { line -> String? in
                        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["id"] as? String
                    }
                    expected.append(Array(ids.dropFirst(expected.joined().count)))
                }
                #expect(expected.map(\.count) == [5, 5, 5])
                try await body(
                    Setup(
                        dir: dir, server: server, exchange: exchange, exchangePort: exchangePort, hook: hook,
                        batches: batches, expected: expected))
            }
        }
        await exchange.stop()
    }

    /// The instance id `daemon` logged at start (`instance "ID" follows …`).
    func instanceID(_ daemon: ObservedProcess) throws -> String {
        let line = try #require(daemon.stderr.split(separator: "\n").first { $0.contains("] instance \"") })
        let start = try #require(line.range(of: "instance \"")).upperBound
        return String(line[start...].prefix { $0 != "\"" })
    }

    /// `/metrics` and `/healthz` of `daemon` once `pricealert_source_leader{source="binance"}`
    /// reads `leader`.
    func roles(of daemon: ObservedProcess, leader: Int) async throws -> (metrics: String, health: String) {
        let base = try await daemon.statusBase()
        let tests = LiveCommandTests()
        while true {
            let metrics = try await tests.get("\(base)/metrics").body
            if LiveCommandTests.sample(metrics, #"pricealert_source_leader{source="binance"}"#) == Double(leader) {
                return (metrics, try await tests.get("\(base)/healthz").body)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Only the leader delivers, each event once; the standby shows its role and sends nothing.
    /// The leader stopped gracefully hands over: the standby takes the source in the next epoch,
    /// enters nothing the leader entered (the ledger skips it by id) and delivers what follows.
    @Test func onlyTheLeaderDeliversAndAGracefulStopHandsOver() async throws {
        try await withSetup { setup in
            let (leader, standby, feeds) = try await setup.startPair()

            setup.send(0, to: feeds)
            try await setup.hook.arrivals.wait(for: 5)
            setup.send(1, to: feeds)
            try await setup.hook.arrivals.wait(for: 10)
            let shown = try await roles(of: leader, leader: 1)
            #expect(LiveCommandTests.sample(shown.metrics, #"pricealert_source_epoch{source="binance"}"#) == 1)
            #expect(shown.health.contains("role binance: leader (epoch 1)"), "\(shown.health)")
            let standing = try await roles(of: standby, leader: 0)
            #expect(standing.health.contains("role binance: standby"), "\(standing.health)")
            // `store status` names both running instances and their roles.
            let (leaderID, standbyID) = (try instanceID(leader), try instanceID(standby))
            let status = try await PriceAlertBinary.run(["store", "status", "--store", setup.server.url()])
            let line = try #require(status.stdout.split(separator: "\n").first { $0.hasPrefix("source \"binance\"") })
            #expect(line.hasPrefix("source \"binance\" leader \"\(leaderID)\" epoch 1 since "), "\(status.stdout)")
            #expect(line.hasSuffix("; standbys: \"\(standbyID)\""), "\(status.stdout)")
            #expect(status.stdout.contains("instance \"\(standbyID)\" host "), "\(status.stdout)")

            #expect(try await leader.stop(signal: SIGTERM) == 0, "\(leader.stderr)")
            _ = try await standby.waitForStderrLine(containing: "source binance: taking over in epoch 2", timeout: 60)
            let taken = try await roles(of: standby, leader: 1)
            #expect(LiveCommandTests.sample(taken.metrics, #"pricealert_source_epoch{source="binance"}"#) == 2)
            setup.send(2, to: feeds)
            try await setup.hook.arrivals.wait(for: 15)
            #expect(try await standby.stop(signal: SIGTERM) == 0, "\(standby.stderr)")

            let received = setup.hook.received.withLock { $0 }
            #expect(received.sorted() == setup.expected.joined().sorted(), "\(leader.stderr)\n\(standby.stderr)")
            #expect(try await setup.ledger() == "1|10\n2|5\n")
            #expect(try await setup.server.query("SELECT COUNT(*) FROM outbox") == "0\n")
            #expect(!(leader.stderr + standby.stderr).contains(setup.server.password))
        }
    }

    /// A leader paused (SIGSTOP) past its lease loses the source to the standby, which enters
    /// what fired meanwhile; continued (SIGCONT), the old leader writes nothing (the fence) and
    /// follows as a standby. Every event is delivered once.
    @Test func aPausedLeaderWakesAsAStandbyAndWritesNothing() async throws {
        try await withSetup { setup in
            let (leader, standby, feeds) = try await setup.startPair()
            setup.send(0, to: feeds)
            try await setup.hook.arrivals.wait(for: 5)
            // A delivery in flight when its sender stops is sent again by the next leader (at
            // least once): paused once every outcome is recorded, nothing is sent twice.
            try await setup.outboxEmptied()

            #expect(kill(leader.pid, SIGSTOP) == 0)
            setup.send(1, to: feeds)
            _ = try await standby.waitForStderrLine(containing: "source binance: taking over in epoch 2", timeout: 60)
            try await setup.hook.arrivals.wait(for: 10)
            #expect(kill(leader.pid, SIGCONT) == 0)
            _ = try await leader.waitForStderrLine(containing: "source binance: standby", timeout: 60)
            setup.send(2, to: feeds)
            try await setup.hook.arrivals.wait(for: 15)
            #expect(try await standby.stop(signal: SIGTERM) == 0, "\(standby.stderr)")
            #expect(try await leader.stop(signal: SIGTERM) == 0, "\(leader.stderr)")

            let received = setup.hook.received.withLock { $0 }
            #expect(received.sorted() == setup.expected.joined().sorted(), "\(leader.stderr)\n\(standby.stderr)")
            // The old leader entered the first batch only; what it evaluated after it woke was
            // refused by the fence, and the new leader entered the rest.
            #expect(try await setup.ledger() == "1|5\n2|10\n", "\(leader.stderr)")
        }
    }
}
