import AlertTestSupport
import Foundation
import Testing

/// `check` with a PostgreSQL store (`--store`, `PRICEALERT_STORE`): the built binary against a
/// real PostgreSQL, as cron runs it on several hosts.
@Suite("end to end: check with a PostgreSQL store", .programs)
struct PostgresCheckTests {
    func tempFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-pgcheck-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Two checks started together on one store (two cron hosts in the same minute): one
    /// evaluates (one ticker request to the exchange, one alert), the other exits 0 saying
    /// nothing. A check in a later interval evaluates again, against the state the first saved:
    /// the rule that fired does not fire again.
    @Test func twoChecksAtOnceEvaluateOnceAndALaterIntervalAgain() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let c = ExchangeSourceCommandTests.cases[0]
        let exchange = try ExchangeSourceCommandTests.exchange(c.rest)
        let port = try await exchange.start()
        try """
        {"version": 1, "sinks": {"out": {"type": "stdout", "format": "json"}}, "defaults": {"notify": ["out"]},
         "rules": [{"id": "above", "symbol": "\(c.symbol)", "when": {"price": {"above": \(c.price / 2)}}}]}
        """.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        try await PostgresServer.with { server in
            let arguments = [
                "check", "--rules", "rules.json", "--source", c.source, "--endpoint", "http://127.0.0.1:\(port)"
            ]
            let environment = ["PRICEALERT_STORE": server.url()]
            let both = try [
                PriceAlertBinary.start(arguments, in: dir, environment: environment),
                PriceAlertBinary.start(arguments, in: dir, environment: environment)
            ]
            var results: [ObservedProcess.Result] = []
            for check in both { results.append(try await check.wait(timeout: 120)) }
            for result in results {
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stderr.isEmpty, "\(result.stderr)")
                #expect(!(result.stdout + result.stderr).contains(server.password))
            }
            let fired = results.map { $0.stdout.components(separatedBy: #""rule":"above""#).count - 1 }
            #expect(fired.sorted() == [0, 1], "\(results.map(\.stdout))")
            let tickers = { exchange.requests.filter { $0.hasPrefix("/api/v3/ticker/24hr") }.count }
            #expect(tickers() == 1, "\(exchange.requests)")
            #expect(try await server.query("SELECT COUNT(*) FROM engine_symbols") == "1\n")

            // Within the interval, a third check does nothing; with debug logs it says why.
            let third = try await PriceAlertBinary.run(
                arguments, in: dir, environment: environment.merging(["PRICEALERT_LOG_LEVEL": "debug"]) { $1 })
            #expect(third.status == 0, "\(third.stderr)")
            #expect(third.stderr.contains("within half of --interval; nothing to do"), "\(third.stderr)")
            #expect(tickers() == 1)

            // An interval later (the last evaluation moved back a minute): it evaluates again,
            // and the state the first check saved says the rule fired already.
            _ = try await server.query("UPDATE check_runs SET began_at = began_at - 60000")
            let later = try await PriceAlertBinary.run(arguments, in: dir, environment: environment)
            #expect(later.status == 0, "\(later.stderr)")
            #expect(tickers() == 2, "\(exchange.requests)")
            #expect(later.stdout.isEmpty, "\(later.stdout)")
        }
        await exchange.stop()
    }

    /// `check --store` keeps its state across runs as `--state` does: pieces of one stream give
    /// the alerts of the whole (a crossing whose first half is in the previous piece fires).
    @Test func stateIsKeptAcrossChecksAsInAStateFolder() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try """
        {"version": 1, "sinks": {"out": {"type": "stdout", "format": "json"}}, "defaults": {"notify": ["out"]},
         "rules": [{"id": "up", "symbol": "BTC/USDT", "when": {"price": {"crossesAbove": 50000}}}]}
        """.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let pieces = [(1_700_000_000_000, 49_000), (1_700_000_060_000, 51_000), (1_700_000_120_000, 52_000)]
        for (i, (time, price)) in pieces.enumerated() {
            try #"{"time": \#(time), "symbol": "BTC/USDT", "price": \#(price)}"#.write(
                to: dir.appendingPathComponent("t\(i).jsonl"), atomically: true, encoding: .utf8)
        }
        try await PostgresServer.with { server in
            var fired: [String] = []
            for i in pieces.indices {
                // Each piece is its own interval.
                if i > 0 { _ = try await server.query("UPDATE check_runs SET began_at = began_at - 60000") }
                let result = try await PriceAlertBinary.run(
                    ["check", "--rules", "rules.json", "--ticks", "t\(i).jsonl", "--store", server.url()], in: dir)
                #expect(result.status == 0, "\(result.stderr)")
                fired.append(result.stdout)
            }
            #expect(fired[0].isEmpty && fired[2].isEmpty, "\(fired)")
            #expect(fired[1].contains(#""rule":"up""#), "\(fired)")
        }
    }

    /// A `run` holds the store: a check does not evaluate beside it, and says so (exit 75).
    @Test func aCheckBesideARunOnTheStoreIsRefused() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = try ExchangeSourceCommandTests.exchange(ExchangeSourceCommandTests.cases[0].rest)
        let port = try await exchange.start()
        try """
        {"version": 1, "rules": [{"id": "high", "symbol": "BTC/USDT", "when": {"price": {"above": 50000}}}]}
        """.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        try await PostgresServer.with { server in
            let source = ["--rules", "rules.json", "--source", "binance", "--endpoint", "http://127.0.0.1:\(port)"]
            let daemon = try PriceAlertBinary.start(["run"] + source + ["--store", server.url()], in: dir)
            _ = try await daemon.waitForStderrLine(containing: "source binance: leader in epoch 1", timeout: 60)
            let check = try await PriceAlertBinary.run(["check"] + source + ["--store", server.url()], in: dir)
            #expect(check.status == 75, "\(check.stderr)")
            #expect(check.stderr.contains("in use by another pricealert: a run on"), "\(check.stderr)")
            #expect(!check.stderr.contains(server.password))
            #expect(try await daemon.stop(signal: SIGTERM) == 0, "\(daemon.stderr)")
        }
        await exchange.stop()
    }
}
