import AlertTestSupport
import Foundation
import GRDB
import Testing

/// `run` against an exchange that misbehaves on purpose (`HostileExchange`): the feed keeps
/// trying, SIGTERM and `--duration` end it, and what it holds stays bounded.
@Suite("end to end: a hostile exchange", .programs)
struct HostileFeedTests {
    static let rules = """
        {"version": 1,
         "sinks": {"out": {"type": "stdout", "format": "json"}},
         "defaults": {"notify": ["out"]},
         "rules": [{"id": "btc-listed", "symbol": "BTC", "when": {"price": {"above": 1}}}]}
        """

    func folderWithRules() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Self.rules.write(to: url.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        return url
    }

    /// Runs `run` against the exchange on `port` while `body` runs; killed if `body` throws.
    func run(
        port: Int, _ extra: [String] = [], in dir: URL,
        _ body: (PriceAlertBinary.Running) async throws -> Void
    ) async throws {
        let running = try PriceAlertBinary.start(
            [
                "run", "--rules", "rules.json", "--source", "btse",
                "--endpoint", "http://127.0.0.1:\(port)"
            ] + extra, in: dir)
        do {
            try await body(running)
        } catch {
            if running.process.isRunning { _ = try? await running.stop(signal: SIGKILL) }
            throw error
        }
    }

    /// SIGTERM, and the exit status once `run` ended (failing the test with its log when it does not).
    func stop(_ running: PriceAlertBinary.Running) async throws -> Int32 {
        do {
            return try await running.stop(signal: SIGTERM)
        } catch {
            Issue.record("run ignored SIGTERM; its log ends with:\n\(running.stderr.suffix(4000))")
            throw error
        }
    }

    /// The first line of the log containing `text` (failing the test with the log when none comes).
    func line(_ running: PriceAlertBinary.Running, containing text: String) async throws -> String {
        do {
            return try await running.waitForStderrLine(containing: text, timeout: 60)
        } catch {
            Issue.record("no log line with '\(text)'; the log ends with:\n\(running.stderr.suffix(4000))")
            throw error
        }
    }

    /// Runs `body` with a started exchange, stopped afterwards.
    func with<T>(_ exchange: HostileExchange, _ body: (Int) async throws -> T) async throws -> T {
        let port = try await exchange.start()
        do {
            let result = try await body(port)
            await exchange.stop()
            return result
        } catch {
            await exchange.stop()
            throw error
        }
    }

    // MARK: handshakes that never become a connection

    static let failedHandshakes: [(HostileExchange.WebSocket, String)] = [
        (.reset, "the server reset the connection before answering the websocket upgrade"),
        (.close, "the server closed the connection before answering the websocket upgrade"),
        (.hang, "no websocket upgrade within 1s"),
        (.badAccept(chunk: 1024, every: .milliseconds(100)), "Sec-WebSocket-Accept that does not match the key sent")
    ]

    @Test(arguments: 0..<failedHandshakes.count)
    func everyFailedHandshakeIsRetriedAndSigtermStillStopsRun(_ index: Int) async throws {
        let (behaviour, reason) = Self.failedHandshakes[index]
        let dir = try folderWithRules()
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = HostileExchange(websocket: behaviour)
        try await with(exchange) { port in
            try await run(port: port, ["--stale-after", "2s"], in: dir) { running in
                try await exchange.wait(for: "5 upgrade attempts") { $0.upgradeRequests >= 5 }
                let line = try await line(running, containing: reason)
                #expect(line.contains("retrying in"))
                let status = try await stop(running)
                #expect(status == 0)
                #expect(running.stderr.contains("run: "))
            }
        }
    }

    @Test func durationEndsRunWhileTheUpgradeIsNeverAnswered() async throws {
        let dir = try folderWithRules()
        defer { try? FileManager.default.removeItem(at: dir) }
        // The default handshake deadline (10 s) is longer than the run: only cancellation ends it.
        let exchange = HostileExchange(websocket: .hang)
        let result = try await with(exchange) { port in
            try await PriceAlertBinary.run(
                [
                    "run", "--rules", "rules.json", "--source", "btse",
                    "--endpoint", "http://127.0.0.1:\(port)", "--duration", "3s"
                ],
                in: dir, timeout: 60)
        }
        #expect(result.status == 0)
        #expect(exchange.current.upgradeRequests >= 1)
        #expect(result.stderr.contains("run: "))
    }

    // MARK: what a misbehaving server sends does not pile up

    @Test func aRejectedUpgradeIsClosedSoNeitherMemoryNorDescriptorsGrow() async throws {
        let dir = try folderWithRules()
        defer { try? FileManager.default.removeItem(at: dir) }
        // After its bad answer the server sends as fast as the connection drains.
        let exchange = HostileExchange(websocket: .badAccept(chunk: 1 << 16, every: .zero))
        try await with(exchange) { port in
            try await run(port: port, ["--stale-after", "2s"], in: dir) { running in
                let pid = running.process.processIdentifier
                try await exchange.wait(for: "2 upgrade attempts") { $0.upgradeRequests >= 2 }
                let early = try ProcessProbe.openDescriptors(pid)
                try await exchange.wait(for: "7 upgrade attempts") { $0.upgradeRequests >= 7 }
                let late = try ProcessProbe.openDescriptors(pid)
                let peak = try ProcessProbe.peakResidentMB(pid)
                #expect(late <= early + 2, "descriptors: \(early) after 2 attempts, \(late) after 7")
                #expect(peak < 300, "peak resident memory \(peak) MB")
                // At most the attempt in progress is open at the server.
                #expect(exchange.current.openConnections <= 1)
                #expect(try await stop(running) == 0)
            }
        }
    }

    @Test func aFiftyMegabyteFrameIsRejectedUnreadAndSaidSo() async throws {
        let dir = try folderWithRules()
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = HostileExchange(websocket: .accept(.oversized(bytes: 50 << 20)))
        try await with(exchange) { port in
            try await run(port: port, ["--stale-after", "5s"], in: dir) { running in
                try await exchange.wait(for: "3 upgrade attempts") { $0.upgradeRequests >= 3 }
                let line = try await line(running, containing: "a frame longer than 16 MiB")
                #expect(line.contains("rejected unread, connection closed; retrying in"))
                #expect(!running.stderr.contains("connection closed by the server"))
                let peak = try ProcessProbe.peakResidentMB(running.process.processIdentifier)
                #expect(peak < 300, "peak resident memory \(peak) MB")
                // The server got to send a small part of the frame only: the client stopped reading.
                #expect(exchange.current.bytesSent < 3 * (50 << 20))
                #expect(try await stop(running) == 0)
                #expect(running.stderr.contains("run: "))
            }
        }
    }

    @Test func garbageFramesAreDroppedAndCountedAndTheFeedGoesOn() async throws {
        let dir = try folderWithRules()
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = HostileExchange(websocket: .accept(.garbage))
        try await with(exchange) { port in
            try await run(port: port, ["--stale-after", "5s"], in: dir) { running in
                try await exchange.wait(for: "3 upgrade attempts") { $0.upgradeRequests >= 3 }
                #expect(try await stop(running) == 0)
                // Each connection sent three frames that are no prices: every one is counted.
                let summary = try #require(running.stderr.split(separator: "\n").first { $0.contains("run: ") })
                let dropped =
                    summary.split(separator: ", ").first { $0.hasSuffix(" dropped") }
                    .flatMap { Int($0.split(separator: " ")[0]) } ?? 0
                #expect(dropped >= 6, "\(summary)")
            }
        }
    }

    @Test func aFloodOfNewSymbolsKeepsNeitherMemoryNorSavedState() async throws {
        let dir = try folderWithRules()
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = HostileExchange(websocket: .accept(.symbolFlood(perFrame: 10_000)))
        try await with(exchange) { port in
            try await run(port: port, ["--state", "state", "--save-every", "1s"], in: dir) { running in
                let pid = running.process.processIdentifier
                _ = try await running.waitForStdoutLine(containing: "btc-listed", timeout: 60)
                var peak = 0
                let deadline = ContinuousClock.now + .seconds(120)
                while exchange.current.symbolsSent < 600_000 {
                    peak = max(peak, try ProcessProbe.peakResidentMB(pid))
                    guard ContinuousClock.now < deadline else { break }
                    try await Task.sleep(for: .milliseconds(200))
                }
                peak = max(peak, try ProcessProbe.peakResidentMB(pid))
                let sent = exchange.current.symbolsSent
                #expect(sent >= 200_000, "the flood reached only \(sent) symbols")
                #expect(peak < 300, "peak resident memory \(peak) MB after \(sent) new symbols")
                #expect(try await stop(running) == 0)
                let summary = running.stderr.split(separator: "\n").first { $0.contains("run: ") } ?? ""
                #expect(summary.contains("of symbols no rule applies to"), "\(summary)")
                // Only BTC has a rule: only BTC has saved state.
                let queue = try DatabaseQueue(path: dir.appendingPathComponent("state/pricealert.sqlite").path)
                let saved = try await queue.read { db in try String.fetchAll(db, sql: "SELECT symbol FROM symbol_state")
                }
                #expect(saved == ["BTC"])
            }
        }
    }

    // MARK: a market list that cannot be loaded

    static let unreachableMarkets: [HostileExchange.Markets] = [.serverError, .reset, .slow, .notJSON]

    @Test(arguments: 0..<unreachableMarkets.count)
    func aMarketListThatCannotBeLoadedMakesTheFeedStale(_ index: Int) async throws {
        let dir = try folderWithRules()
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = HostileExchange(
            websocket: .accept(.prices(every: .milliseconds(200))),
            markets: Self.unreachableMarkets[index])
        try await with(exchange) { port in
            try await run(port: port, ["--stale-after", "2s"], in: dir) { running in
                _ = try await running.waitForStdoutLine(containing: "\"@feed-stale\"", timeout: 60)
                #expect(try await stop(running) == 0)
            }
        }
        #expect(exchange.current.marketRequests >= 1)
        #expect(exchange.current.upgradeRequests == 0)
    }

    @Test func aRefusedMarketListMakesTheFeedStale() async throws {
        let dir = try folderWithRules()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A port that was free a moment ago: nothing listens there.
        let exchange = HostileExchange(websocket: .hang)
        let port = try await exchange.start()
        await exchange.stop()
        try await run(port: port, ["--stale-after", "2s"], in: dir) { running in
            _ = try await running.waitForStdoutLine(containing: "\"@feed-stale\"", timeout: 60)
            #expect(try await stop(running) == 0)
        }
    }

    @Test func aMarketListErrorNamesItsURLOnce() async throws {
        let dir = try folderWithRules()
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = HostileExchange(websocket: .hang, markets: .notJSON)
        try await with(exchange) { port in
            try await run(port: port, in: dir) { running in
                let line = try await line(running, containing: "not valid JSON")
                let url = "http://127.0.0.1:\(port)/futures/api/inquire/initial/market"
                #expect(line.components(separatedBy: url).count == 2, "\(line)")
                #expect(try await stop(running) == 0)
            }
        }
    }
}

/// What /proc says about a child process.
enum ProcessProbe {
    /// VmHWM: the most resident memory the process has had, in MB.
    static func peakResidentMB(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        let kilobytes =
            line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) } ?? 0
        return kilobytes / 1024
    }

    /// Entries of /proc/PID/fd.
    static func openDescriptors(_ pid: Int32) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    }
}
