import AlertHTTP
import AlertTestSupport
import DemoExchange
import Foundation
import Testing

/// `run`, `demo`, `markets`, `record` and `exchange` as users run them: the built binary
/// against the real embedded exchange on 127.0.0.1.
@Suite("end to end: live commands", .programs)
struct LiveCommandTests {
    /// Runs `body` with an exchange on a free port, stopped afterwards.
    func withExchange<T>(
        faults: ExchangeFaults = ExchangeFaults(), interval: Duration = .milliseconds(200),
        _ body: (Int) async throws -> T
    ) async throws -> T {
        try await withExchangeServer(faults: faults, interval: interval) { _, port in try await body(port) }
    }

    /// `withExchange`, handing `body` the server too (to change its faults while it runs).
    func withExchangeServer<T>(
        faults: ExchangeFaults = ExchangeFaults(), interval: Duration = .milliseconds(200),
        _ body: (DemoExchangeServer, Int) async throws -> T
    ) async throws -> T {
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(
                port: 0, prices: .randomWalk(seed: 3, interval: interval), faults: faults))
        let port = try await exchange.start()
        do {
            let result = try await body(exchange, port)
            await exchange.stop()
            return result
        } catch {
            await exchange.stop()
            throw error
        }
    }

    func tempFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static let rules = """
        {"version": 1,
         "sinks": {"out": {"type": "stdout", "format": "json"}},
         "defaults": {"notify": ["out"]},
         "rules": [
           {"id": "btc-listed", "symbol": "BTC", "when": {"price": {"above": 1}}},
           {"id": "usd-spot", "match": {"quote": "USD", "future": false}, "when": {"price": {"above": 1000}}}
         ]}
        """

    func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func runFollowsTheExchangeAndDispatchesAlerts() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let result = try await withExchange { port in
            let running = try PriceAlertBinary.start(
                [
                    "run", "--rules", "rules.json", "--source", "btse",
                    "--endpoint", "http://127.0.0.1:\(port)"
                ], in: dir)
            // BTC fires at its first tick; the match rule joins BTC to the listed BTC-USD spot market.
            _ = try await running.waitForStdoutLine(containing: #""rule":"btc-listed","symbol":"BTC""#, timeout: 60)
            _ = try await running.waitForStdoutLine(containing: #""rule":"usd-spot","symbol":"BTC""#, timeout: 60)
            return try await running.stop(signal: SIGTERM) == 0 ? running.stderr : nil
        }
        let stderr = try #require(result, "run did not exit 0 on SIGTERM")
        #expect(stderr.contains("btse: 227 markets, 2 rules"))
        #expect(stderr.contains("run: "))
    }

    /// `--duration` ends the run by itself, with its summary and exit 0.
    @Test func durationEndsTheRun() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let result = try await withExchange { port in
            try await PriceAlertBinary.run(
                [
                    "run", "--rules", "rules.json", "--source", "btse",
                    "--endpoint", "http://127.0.0.1:\(port)", "--duration", "1s"
                ], in: dir)
        }
        #expect(result.status == 0)
        #expect(result.stderr.contains("run: "))
    }

    /// The exchange goes silent once prices flow, and speaks again once the feed is stale: one
    /// stale-feed alert, then one recovery alert.
    @Test func silenceSendsAStaleFeedAlertAndThenARecoveryAlert() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let (status, stdout) = try await withExchangeServer { exchange, port in
            let running = try PriceAlertBinary.start(
                [
                    "run", "--rules", "rules.json", "--source", "btse", "--endpoint",
                    "http://127.0.0.1:\(port)", "--stale-after", "5s"
                ], in: dir)
            _ = try await running.waitForStdoutLine(containing: #""rule":"btc-listed""#, timeout: 60)
            exchange.setFaults(ExchangeFaults(silenceAfter: .zero, silenceFor: .seconds(3600)))
            _ = try await running.waitForStdoutLine(containing: #""rule":"@feed-stale""#, timeout: 60)
            exchange.setFaults(ExchangeFaults())
            _ = try await running.waitForStdoutLine(containing: #""rule":"@feed-recovered""#, timeout: 60)
            return (try await running.stop(signal: SIGTERM), running.stdout)
        }
        #expect(status == 0)
        let rules = try jsonLines(stdout).compactMap { $0["rule"] as? String }
        let stale = try #require(rules.firstIndex(of: "@feed-stale"))
        let recovered = try #require(rules.firstIndex(of: "@feed-recovered"))
        #expect(stale < recovered)
        #expect(rules.filter { $0 == "@feed-stale" }.count == 1)
    }

    @Test func sigtermStopsTheDaemonCleanly() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let (status, running) = try await withExchange { port in
            let running = try PriceAlertBinary.start(
                [
                    "run", "--rules", "rules.json", "--source", "btse", "--endpoint",
                    "http://127.0.0.1:\(port)"
                ], in: dir)
            _ = try await running.waitForStdoutLine(containing: #""rule":"btc-listed""#, timeout: 60)
            return (try await running.stop(signal: SIGTERM), running)
        }
        #expect(status == 0)
        #expect(running.stderr.contains("run: "))
    }

    /// SIGTERM the moment `exchange` says it listens: a clean stop, every time.
    @Test func exchangeStopsCleanlyOnSIGTERMAsSoonAsItListens() async throws {
        for _ in 0..<5 {
            let exchange = try PriceAlertBinary.start(["exchange", "--port", "0"])
            _ = try await exchange.waitForStderrLine(
                containing: "exchange: listening on http://127.0.0.1:", timeout: 60)
            #expect(try await exchange.stop(signal: SIGTERM) == 0, "\(exchange.stderr)")
        }
    }

    @Test func demoRunsOfflineAndPrintsAlerts() async throws {
        let dir = try tempFolder() // no Rules/ here: the built-in demo rules are used
        defer { try? FileManager.default.removeItem(at: dir) }
        let running = try PriceAlertBinary.start(["demo", "--interval", "200ms"], in: dir)
        _ = try await running.waitForStdoutLine(containing: "[demo-", timeout: 60)
        #expect(try await running.stop(signal: SIGTERM) == 0)
        #expect(running.stderr.contains("demo: exchange on http://127.0.0.1:"))
    }

    /// The demo's wick: OKX shows BTC 10 % high, so the rule on OKX's BTC fires while the rule on
    /// the median of Binance, Bybit and OKX does not. A rule on the same series below the level
    /// (this test's own, given beside `Rules/demo-consensus.json`) fires, so the series had a
    /// value, with its quorum, when the consensus rule stayed silent. The level is above half the
    /// wick's move: with two of three members fresh the median is their mean.
    @Test func demoWickFiresTheOneExchangeRuleAndNeverTheConsensusRule() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let probe = dir.appendingPathComponent("probe.json").path
        try #"""
        {"version": 3, "rules": [
          {"id": "probe-consensus-btc-below-46000", "series": "demo-btc-consensus", "when": {"price": {"below": 46000}}}
        ]}
        """#.write(toFile: probe, atomically: true, encoding: .utf8)
        let consensus = PriceAlertBinary.repo.appendingPathComponent("Rules/demo-consensus.json").path
        let running = try PriceAlertBinary.start(
            ["demo", "--interval", "200ms", "--rules", consensus, probe], in: dir)
        let wick = try await running.waitForStdoutLine(containing: "[demo-okx-btc-above-46000]", timeout: 120)
        _ = try await running.waitForStdoutLine(containing: "[probe-consensus-btc-below-46000]", timeout: 120)
        #expect(try await running.stop(signal: SIGTERM) == 0, "\(running.stderr)")
        #expect(wick.contains("BTC/USDT price above 46000"), "\(wick)")
        #expect(!running.stdout.contains("demo-consensus-btc-above-46000"), "\(running.stdout)")
        #expect(running.stderr.contains("demo: okx shows BTC at 1.1 times its price (a wick)"))
    }

    @Test func marketsListsSearchesAndSortsWithPrices() async throws {
        let result = try await withExchange { port in
            try await PriceAlertBinary.run([
                "markets", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
                "--search", "bt", "--sort", "symbol", "--format", "json"
            ])
        }
        #expect(result.status == 0)
        let rows = try jsonLines(result.stdout)
        let symbols = rows.compactMap { $0["symbol"] as? String }
        #expect(symbols == symbols.sorted())
        #expect(symbols.contains("BTC") && symbols.contains("BTC-PERP"))
        // Every row matched the search in its symbol, name or base.
        #expect(
            rows.allSatisfy { row in
                ["symbol", "name", "base"].contains { (row[$0] as? String)?.lowercased().contains("bt") == true }
            })
        let btc = try #require(rows.first { $0["symbol"] as? String == "BTC" })
        #expect((btc["price"] as? Double ?? 0) > 0)
    }

    @Test func recordWritesTicksThatReplayReads() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("ticks.jsonl").path
        let recorded = try await withExchange { port in
            let running = try PriceAlertBinary.start(
                [
                    "record", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
                    "--out", "ticks.jsonl"
                ], in: dir)
            // The file grows as frames arrive (each line whole); stopped once it holds 100 ticks.
            let written = { (FileManager.default.contents(atPath: out) ?? Data()).count(where: { $0 == 0x0A }) }
            var looks = 0
            while written() <= 100, looks < 3_000 {
                looks += 1
                try await Task.sleep(for: .milliseconds(20))
            }
            _ = try await running.stop(signal: SIGTERM)
            return try await running.wait(timeout: 60)
        }
        #expect(recorded.status == 0)
        let lines = try String(contentsOf: dir.appendingPathComponent("ticks.jsonl"), encoding: .utf8).split(
            separator: "\n")
        #expect(lines.count > 100)
        #expect(recorded.stderr.contains("record: \(lines.count) ticks written to ticks.jsonl"))
        try Self.rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let replayed = try await PriceAlertBinary.run(
            ["replay", "--rules", "rules.json", "--ticks", "ticks.jsonl"], in: dir)
        #expect(replayed.status == 0)
        #expect(replayed.stderr.contains("replay: \(lines.count) ticks read, 0 dropped"))
    }

    @Test func exchangeCommandServesUntilSigterm() async throws {
        let server = try PriceAlertBinary.start(["exchange", "--port", "0"])
        let ready = try await server.waitForStderrLine(containing: "listening on http://127.0.0.1:", timeout: 60)
        let port = try #require(ready.split(separator: ":").last.flatMap { Int($0.prefix { $0.isNumber }) })
        let http = CurlHTTPClient()
        let response = try await http.send(
            HTTPRequest(url: "http://127.0.0.1:\(port)/futures/api/inquire/initial/market", timeout: 60_000))
        http.shutdown()
        #expect(response.status == 200)
        #expect(response.body.count > 100_000)
        let status = try await server.stop(signal: SIGTERM)
        #expect(status == 0)
    }

    @Test(arguments: [
        ("Sources/pricealert/Support/DemoRules.swift", "Rules/demo.json"),
        ("Sources/pricealert/Support/DemoConsensusRules.swift", "Rules/demo-consensus.json")
    ])
    func theBuiltInDemoRulesAreTheirRulesFile(swiftFile: String, rulesFile: String) async throws {
        let source = try String(
            contentsOf: PriceAlertBinary.repo.appendingPathComponent(swiftFile), encoding: .utf8)
        let start = try #require(source.range(of: "#\"\"\"\n"))
        let end = try #require(source.range(of: "\"\"\"#", options: .backwards))
        // The literal's lines, less the indentation of its closing delimiter, as Swift reads them.
        let lines = source[start.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
        let indentation = try #require(lines.last).count
        let embedded = lines.dropLast().map { $0.dropFirst(indentation) + "\n" }.joined()
        let file = try String(
            contentsOf: PriceAlertBinary.repo.appendingPathComponent(rulesFile), encoding: .utf8)
        #expect(embedded == file)
    }
}
