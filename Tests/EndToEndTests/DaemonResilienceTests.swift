import AlertTestSupport
import Foundation
import Testing

/// `run` when the world misbehaves (issue #23): a candle endpoint that never answers, a state
/// folder deleted under the daemon, a feed that keeps going stale and coming back. The built
/// binary against `HostileExchange` on 127.0.0.1.
@Suite("end to end: the daemon when the world misbehaves", .programs)
struct DaemonResilienceTests {
    func folder(rules: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-resilience-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try write(rules, in: url)
        return url
    }

    func write(_ rules: String, in dir: URL) throws {
        try rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
    }

    /// A version 2 rule file with stdout JSON alerts and `rules` (JSON objects).
    static func rules(_ rules: [String]) -> String {
        #"{"version": 2, "sinks": {"out": {"type": "stdout", "format": "json"}}, "defaults": {"notify": ["out"]}, "rules": ["#
            + rules.joined(separator: ", ") + "]}"
    }

    /// Runs `run` against the exchange while `body` runs; killed if `body` throws.
    func run(
        _ exchange: HostileExchange, _ extra: [String] = [], in dir: URL,
        _ body: (PriceAlertBinary.Running, Int) async throws -> Void
    ) async throws {
        let port = try await exchange.start()
        let running = try PriceAlertBinary.start(
            [
                "run", "--rules", "rules.json", "--source", "btse",
                "--endpoint", "http://127.0.0.1:\(port)"
            ] + extra, in: dir)
        do {
            try await body(running, port)
            await exchange.stop()
        } catch {
            if running.process.isRunning { _ = try? await running.stop(signal: SIGKILL) }
            await exchange.stop()
            throw error
        }
    }

    static func count(_ text: String, in output: String) -> Int {
        output.components(separatedBy: text).count - 1
    }

    // MARK: backfill beside the feed

    /// SIGTERM or SIGINT while a candle request hangs: the run stops at once (the remaining
    /// symbol is never asked for, the hanging request is not reported as a failure), exit 0;
    /// what was filled before (BTC, which has no candles) is in the ledger, so a restart asks
    /// only for the symbol it did not get (ETH) and not for BTC again.
    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalDuringAHangingBackfillStopsAtOnceAndKeepsWhatWasFilled(_ signal: Int32) async throws {
        let dir = try folder(
            rules: Self.rules([
                #"{"id": "week", "symbols": ["BTC", "ETH", "SOL"], "when": {"change": {"window": "7d", "above": 1}}}"#
            ]))
        defer { try? FileManager.default.removeItem(at: dir) }
        // Candles are filled symbol by symbol, in name order: BTC is answered, ETH hangs.
        let exchange = HostileExchange(
            websocket: .accept(.prices(every: .milliseconds(200))),
            candles: .hang(answered: ["BTC-", "BTCPFC"]))
        try await run(exchange, ["--state", "st"], in: dir) { running, _ in
            try await exchange.wait(for: "the ETH candle request") { $0.candlesHeld == 1 }
            let result = try await running.stop(signal: signal, timeout: 120)
            #expect(result == 0, "\(running.stderr)")
            let asked = exchange.current.candleRequests
            #expect(asked.filter { $0.contains("symbol=SOL") }.isEmpty, "\(asked)")
            #expect(!running.stderr.contains("not fetched"), "\(running.stderr)")
        }
        let first = exchange.current.candleRequests
        #expect(first.contains { $0.contains("symbol=BTC-USD&") })

        let again = HostileExchange(
            websocket: .accept(.prices(every: .milliseconds(200))),
            candles: .hang(answered: ["BTC-", "BTCPFC"]))
        try await run(again, ["--state", "st"], in: dir) { running, _ in
            try await again.wait(for: "the ETH candle request again") { $0.candlesHeld == 1 }
            #expect(try await running.stop(signal: SIGTERM, timeout: 120) == 0, "\(running.stderr)")
        }
        let second = again.current.candleRequests
        #expect(second.contains { $0.contains("symbol=ETH-USD&") }, "\(second)")
        #expect(!second.contains { $0.contains("symbol=BTC") }, "BTC was filled and recorded: \(second)")
    }

    /// A SIGHUP that adds a 7-day window on ETH, whose candle request never ends: BTC's ticks
    /// go on making alerts while the request is still held open, and the feed is never taken
    /// for stale.
    @Test func aReloadThatAddsAWindowDoesNotHoldUpTheTicksOfOtherSymbols() async throws {
        let btcMoves = #"{"id": "btc-moves", "symbol": "BTC", "when": {"move": {"percent": 0.001}}}"#
        let dir = try folder(rules: Self.rules([btcMoves]))
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = HostileExchange(
            websocket: .accept(.prices(every: .milliseconds(100))), candles: .hang(answered: []))
        try await run(exchange, ["--stale-after", "3s"], in: dir) { running, _ in
            _ = try await running.waitForStdoutLine(containing: #""rule":"btc-moves""#, timeout: 60)
            try write(
                Self.rules([
                    btcMoves, #"{"id": "eth-week", "symbol": "ETH", "when": {"change": {"window": "7d", "above": 1}}}"#
                ]),
                in: dir)
            kill(running.pid, SIGHUP)
            try await exchange.wait(for: "the ETH candle request") { $0.candlesHeld == 1 }
            let before = Self.count(#""rule":"btc-moves""#, in: running.stdout)
            try await running.occurrences(.stdout, of: #""rule":"btc-moves""#, atLeast: before + 5, timeout: 60)
            #expect(exchange.current.candlesHeld == 1, "BTC's alerts waited for ETH's candles")
            #expect(try await running.stop(signal: SIGTERM, timeout: 120) == 0, "\(running.stderr)")
            #expect(!running.stdout.contains("@feed-stale"), "\(running.stdout)")
            #expect(running.stderr.contains("rules reloaded: 2 rules"))
        }
    }

    // MARK: the state folder deleted under the daemon

    /// Removing the state folder while `run` uses it is noticed: an error naming the folder, and
    /// exit 73 (Docs/cli.md) instead of carrying on with files nobody reads.
    @Test func aDeletedStateFolderEndsTheRunWithAnError() async throws {
        let dir = try folder(
            rules: Self.rules([#"{"id": "btc-up", "symbol": "BTC", "when": {"price": {"above": 1}}}"#]))
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = HostileExchange(websocket: .accept(.prices(every: .milliseconds(200))))
        try await run(exchange, ["--state", "st"], in: dir) { running, _ in
            _ = try await running.waitForStdoutLine(containing: #""rule":"btc-up""#, timeout: 60)
            try FileManager.default.removeItem(at: dir.appendingPathComponent("st"))
            let result = try await running.wait(timeout: 120)
            #expect(result.status == 73, "\(result.stderr)")
            #expect(result.stderr.contains("state folder st was deleted or moved while in use"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("st").path))
        }
    }

    // MARK: a flapping feed

    /// A feed that gives a few prices, falls silent, and comes back on every reconnect: the
    /// first stale, recovered and stale reach the sink as they happen; then the feed is
    /// flapping and its changes are held (Docs/observability.md): at shutdown only its state by
    /// then, if it changed, is delivered, instead of one alert per change.
    @Test func aFlappingFeedIsDamped() async throws {
        let dir = try folder(
            rules: Self.rules([#"{"id": "btc-up", "symbol": "BTC", "when": {"price": {"above": 1}}}"#]))
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = HostileExchange(websocket: .accept(.flapping(count: 3, every: .milliseconds(100))))
        try await run(exchange, ["--stale-after", "1s"], in: dir) { running, _ in
            // Seven connections: six times stale and six times recovered.
            try await exchange.wait(for: "seven connections", timeout: .seconds(120)) { $0.upgradeRequests >= 7 }
            #expect(try await running.stop(signal: SIGTERM, timeout: 120) == 0, "\(running.stderr)")
            let feed = running.stdout.split(separator: "\n").compactMap { line -> String? in
                if line.contains(#""rule":"@feed-stale""#) { return "stale" }
                if line.contains(#""rule":"@feed-recovered""#) { return "recovered" }
                return nil
            }
            // The feed did go stale again and again (logged every time), …
            #expect(Self.count("btse: no prices for", in: running.stderr) >= 5, "\(running.stderr)")
            // … but people heard of it three times, and at most once more of how it ended.
            #expect(Array(feed.prefix(3)) == ["stale", "recovered", "stale"], "\(feed)")
            #expect(feed.count <= 4, "\(feed)")
            #expect(feed.dropFirst(3).allSatisfy { $0 == "recovered" }, "\(feed)")
            #expect(running.stderr.contains("btse feed is flapping"), "\(running.stderr)")
        }
    }
}
