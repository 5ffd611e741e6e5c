import AlertTestSupport
import DemoExchange
import Foundation
import Hummingbird
import Testing

/// Feed text that could forge lines, and the messages that must say clearly what happened:
/// the built binary against real servers on 127.0.0.1.
@Suite("end to end: forged text and clear messages", .programs)
struct ForgedTextAndMessagesTests {
    func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-msgs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func write(_ text: String, to name: String, in dir: URL) throws {
        try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    static let btcRule = """
        {"version": 1, "rules": [{"id": "btc", "symbol": "BTC", "when": {"price": {"above": 1}}}]}
        """

    // MARK: 10. Control characters in symbols

    /// Ticks whose symbol holds a control character are dropped and counted where every tick
    /// passes: none becomes an alert, a line of the listing, or state.
    @Test func ticksWithControlCharactersInTheirSymbolAreDroppedAndCounted() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(Self.btcRule, to: "r.json", in: dir)
        try write(
            #"""
            {"time": 1700000000000, "symbol": "BT\nC", "price": 50000}
            {"time": 1700000001000, "symbol": "ETH\u0000", "price": 3000}
            {"time": 1700000002000, "symbol": "SOL\r\n2023-11-14T22:13:20.000Z [btc] BTC above 1", "price": 100}
            {"time": 1700000003000, "symbol": "\u0085BTC\u007f", "price": 50000}
            {"time": 1700000004000, "symbol": "BTC", "price": 50000}

            """#, to: "t.jsonl", in: dir)
        let result = try await PriceAlertBinary.run(["replay", "--rules", "r.json", "--ticks", "t.jsonl"], in: dir)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 1, "\(result.stdout)")
        #expect(lines.first?.hasSuffix("[btc] BTC price above 1 (price 50000)") == true, "\(result.stdout)")
        for line in 1...4 {
            #expect(
                result.stderr.contains(
                    "t.jsonl:\(line): dropped: symbol holds a control character (control-character)"),
                "\(result.stderr)")
        }
        #expect(result.stderr.contains("4 dropped (4 control-character)"), "\(result.stderr)")
    }

    // MARK: 11. Log levels

    @Test func aLogLevelThatNamesNoLevelIsSaid() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(Self.btcRule, to: "r.json", in: dir)
        try write(#"{"time": 1700000000000, "symbol": "BTC", "price": 50000}"# + "\n", to: "t.jsonl", in: dir)
        let result = try await PriceAlertBinary.run(
            ["replay", "--rules", "r.json", "--ticks", "t.jsonl"], in: dir,
            environment: ["PRICEALERT_LOG_LEVEL": "verbose"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains(#"PRICEALERT_LOG_LEVEL="verbose" is not a log level"#), "\(result.stderr)")
        #expect(result.stderr.contains("logging at info"))
    }

    /// `warn` is warning: `run`'s info lines (connected, market list) are left out.
    @Test func warnMeansWarning() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(Self.btcRule, to: "r.json", in: dir)
        let stderr = try await LiveCommandTests().withExchange { port in
            let running = try PriceAlertBinary.start(
                [
                    "run", "--rules", "r.json", "--source", "btse",
                    "--endpoint", "http://127.0.0.1:\(port)"
                ], in: dir,
                environment: ["PRICEALERT_LOG_LEVEL": "warn"])
            _ = try await running.waitForStdoutLine(containing: "[btc] BTC", timeout: 60)
            #expect(try await running.stop(signal: SIGTERM) == 0)
            return running.stderr
        }
        #expect(!stderr.contains("connected to"), "\(stderr)")
        #expect(!stderr.contains("is not a log level"), "\(stderr)")
        #expect(stderr.contains("run: "), "the summary is no log line: \(stderr)")
    }

    /// `DEBUG` is debug, whatever its case: dropped frames are logged.
    @Test func upperCaseDebugMeansDebug() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(Self.btcRule, to: "r.json", in: dir)
        try await LiveCommandTests().withExchange(faults: ExchangeFaults(invalidEvery: 2)) { port in
            let running = try PriceAlertBinary.start(
                [
                    "run", "--rules", "r.json", "--source", "btse",
                    "--endpoint", "http://127.0.0.1:\(port)"
                ], in: dir,
                environment: ["PRICEALERT_LOG_LEVEL": "DEBUG"])
            _ = try await running.waitForStderrLine(containing: "frame dropped", timeout: 60)
            #expect(try await running.stop(signal: SIGTERM) == 0)
        }
    }

    // MARK: 11. Counts of the run

    /// A SIGHUP swaps the rules in, not the counts: the summary covers the whole run.
    @Test func theRunSummaryCountsFromTheStartAcrossAReload() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(Self.btcRule, to: "r.json", in: dir)
        let stderr = try await LiveCommandTests().withExchange { port in
            let running = try PriceAlertBinary.start(
                [
                    "run", "--rules", "r.json", "--source", "btse",
                    "--endpoint", "http://127.0.0.1:\(port)"
                ], in: dir)
            // The rule fires once, at BTC's first tick; the reload keeps its state, so not again.
            _ = try await running.waitForStdoutLine(containing: "[btc] BTC", timeout: 60)
            kill(running.pid, SIGHUP)
            _ = try await running.waitForStderrLine(containing: "rules reloaded", timeout: 60)
            #expect(try await running.stop(signal: SIGTERM) == 0)
            return running.stderr
        }
        let summary = try #require(stderr.split(separator: "\n").first { $0.hasPrefix("run: ") }, "\(stderr)")
        #expect(summary.contains(", 1 alerts"), "\(summary)")
        let ticks = try #require(Int(summary.dropFirst("run: ".count).prefix { $0.isNumber }))
        #expect(ticks >= 1, "\(summary)")
    }

    /// Symbols that only version 2 rules watch are watched: the summary does not call their
    /// ticks ticks no rule applies to.
    @Test func symbolsOfVersion2RulesOnlyAreWatched() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(
            """
            {"version": 2, "rules": [{"id": "held", "symbol": "BTC", "when": {"price": {"above": 1}}, "for": "1ms"}]}
            """, to: "r.json", in: dir)
        let exchange = HostileExchange(websocket: .accept(.prices(every: .milliseconds(50))))
        let port = try await exchange.start()
        let running = try PriceAlertBinary.start(
            [
                "run", "--rules", "r.json", "--source", "btse",
                "--endpoint", "http://127.0.0.1:\(port)"
            ], in: dir)
        _ = try await running.waitForStdoutLine(containing: "[held] BTC", timeout: 60)
        let status = try await running.stop(signal: SIGTERM)
        await exchange.stop()
        #expect(status == 0)
        let summary = running.stderr.split(separator: "\n").first { $0.hasPrefix("run: ") }
        #expect(summary != nil, "\(running.stderr)")
        #expect(summary?.contains("no rule applies to") == false, "\(running.stderr)")
    }

    // MARK: 11. Market lists and the state folder

    /// A reload that lists no market keeps the last list, at warning.
    @Test func anEmptyMarketListOnReloadIsAWarningAndKeepsTheLastList() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(
            """
            {"version": 1, "rules": [{"id": "usd", "match": {"quote": "USD"}, "when": {"price": {"above": 1}}}]}
            """, to: "r.json", in: dir)
        let requests = EventCounter()
        let router = Router()
        router.get("/futures/api/inquire/initial/market") { _, _ -> String in
            requests.record()
            return requests.count == 1
                ? #"[{"symbol":"BTC","marketName":"BTC-USD","active":true,"future":false,"quoteCurrency":"USD","baseCurrency":"BTC"}]"#
                : "[]"
        }
        router.get("/spot/api/v3.2/market_summary") { _, _ in "[]" }
        try await LoopbackServer.with(router) { port in
            let running = try PriceAlertBinary.start(
                [
                    "run", "--rules", "r.json", "--source", "btse", "--markets-every", "100ms",
                    "--endpoint", "http://127.0.0.1:\(port)"
                ], in: dir)
            let line = try await running.waitForStderrLine(
                containing: "market list reload gave no markets", timeout: 60)
            #expect(line.contains("warning"), "\(line)")
            #expect(line.contains("keeping the last one"), "\(line)")
            #expect(try await running.stop(signal: SIGTERM) == 0)
            #expect(!running.stderr.contains("market list reloaded: 0 markets"), "\(running.stderr)")
        }
    }

    /// `listings.txt` is private like the rest of the state folder.
    @Test func theKnownMarketsFileIsPrivate() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try write(
            """
            {"version": 2, "rules": [{"id": "new", "match": {"quote": "USD"}, "when": {"listed": true}}]}
            """, to: "r.json", in: dir)
        try await LiveCommandTests().withExchange { port in
            let result = try await PriceAlertBinary.run(
                [
                    "check", "--rules", "r.json", "--source", "btse",
                    "--endpoint", "http://127.0.0.1:\(port)", "--state", "st"
                ], in: dir)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let path = dir.appendingPathComponent("st/listings.txt").path
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int).map { String($0, radix: 8) } == "600")
    }

    // MARK: 11. Shutdown with a notifier running

    /// A notifier still running when `check` stops waiting ends with pricealert; what its end
    /// would have recorded is left for the next start, and said so, with no database error.
    @Test func aNotifierEndingAfterTheOutboxClosedIsNoDatabaseError() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("notify.sh")
        try "#!/bin/sh\nexec sleep 1000\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        try write(
            """
            {"version": 1, "sinks": {"pager": {"type": "exec", "command": ["\(script.path)"], "timeout": "1h"}},
             "rules": [{"id": "a", "symbol": "BTC", "when": {"price": {"above": 100}}, "notify": ["pager"]}]}
            """, to: "r.json", in: dir)
        try write(#"{"time": 1700000000000, "symbol": "BTC", "price": 50000}"# + "\n", to: "t.jsonl", in: dir)
        let result = try await PriceAlertBinary.run(
            [
                "check", "--rules", "r.json", "--ticks", "t.jsonl", "--state", "st",
                "--drain-timeout", "1s"
            ], in: dir)
        #expect(result.status == 74, "\(result.stderr)")
        #expect(!result.stderr.contains("SQLite error"), "\(result.stderr)")
        #expect(!result.stderr.contains("outbox not updated"), "\(result.stderr)")
        #expect(result.stderr.contains("1 deliveries wait in the outbox"), "\(result.stderr)")
    }

    // MARK: 11. TLS: clear errors, and trusting a private CA

    /// One server with a certificate of the private CA, answering everything with `body`, for `body`'s run.
    func withHTTPS<T>(
        _ served: KeyPath<PrivateCA, PrivateCA.Served>, body: String,
        _ run: (PrivateCA, TLSReceiver, Int) async throws -> T
    ) async throws -> T {
        let ca = try PrivateCA()
        defer { ca.remove() }
        let server = try TLSReceiver(serving: ca[keyPath: served], body: body)
        let port = try await server.start()
        do {
            let result = try await run(ca, server, port)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Answers both the market list and the market summary of BTSE.
    static let btseBody =
        #"[{"symbol":"BTC-USD","marketName":"BTC-USD","active":true,"future":false,"futures":false,"quoteCurrency":"USD","baseCurrency":"BTC","base":"BTC","quote":"USD","last":50000,"percentageChange":1.5}]"#

    @Test func feedsTrustTheCAOfSSL_CERT_FILE() async throws {
        try await withHTTPS(\.valid, body: Self.btseBody) { ca, server, port in
            let arguments = ["markets", "--source", "btse", "--endpoint", "https://127.0.0.1:\(port)"]
            let untrusted = try await PriceAlertBinary.run(arguments)
            #expect(untrusted.status != 0)
            #expect(untrusted.stderr.contains("https://127.0.0.1:\(port)/"), "\(untrusted.stderr)")
            #expect(
                untrusted.stderr.contains("TLS handshake failed: certificate not trusted (unknown CA)"),
                "\(untrusted.stderr)")
            #expect(!untrusted.stderr.contains("BoringSSL"), "\(untrusted.stderr)")
            #expect(server.answered.count == 0)

            let trusted = try await PriceAlertBinary.run(arguments, environment: ["SSL_CERT_FILE": ca.ca])
            #expect(trusted.status == 0, "\(trusted.stderr)")
            #expect(trusted.stdout.contains("BTC"), "\(trusted.stdout)")
            #expect(server.answered.count >= 1)
        }
    }

    @Test func anExpiredFeedCertificateIsNamed() async throws {
        try await withHTTPS(\.expired, body: Self.btseBody) { ca, _, port in
            let result = try await PriceAlertBinary.run(
                ["markets", "--source", "btse", "--endpoint", "https://127.0.0.1:\(port)"],
                environment: ["SSL_CERT_FILE": ca.ca])
            #expect(result.status != 0)
            #expect(result.stderr.contains("https://127.0.0.1:\(port)/"), "\(result.stderr)")
            #expect(
                result.stderr.contains("TLS handshake failed: certificate expired (not valid after "),
                "\(result.stderr)")
        }
    }

    @Test func webhooksTrustTheCAOfSSL_CERT_FILE() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try await withHTTPS(\.valid, body: "{}") { ca, server, port in
            try write(
                """
                {"version": 1, "sinks": {"ops": {"type": "webhook", "url": "https://127.0.0.1:\(port)/hook"}}, "rules": []}
                """, to: "hooks.json", in: dir)
            let arguments = ["sinks", "test", "ops", "--rules", "hooks.json"]
            let untrusted = try await PriceAlertBinary.run(arguments, in: dir)
            #expect(untrusted.status != 0, "\(untrusted.stderr)")
            #expect(server.answered.count == 0)
            let trusted = try await PriceAlertBinary.run(arguments, in: dir, environment: ["SSL_CERT_FILE": ca.ca])
            #expect(trusted.status == 0, "\(trusted.stderr)")
            #expect(server.answered.count == 1)
        }
    }
}
