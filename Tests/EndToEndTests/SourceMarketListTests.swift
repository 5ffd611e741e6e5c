import AlertHTTP
import AlertTestSupport
import DemoExchange
import Foundation
import Testing

/// Each rule-file source's market list (rules v3 §2, §3) with the built binary: `listed` rules
/// see the markets that source's list adds, on `run` and across `check` runs, and the state
/// folder keeps each source's list and known markets, so that a source whose REST API is down
/// at start follows its last list.
@Suite("end to end: each source's market list", .programs)
struct SourceMarketListTests {
    static func folder(_ rules: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-srcmk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        return dir
    }

    /// A rule-file source `bt` (BTSE) at `endpoint` and a `listed` rule on USD spot markets.
    static func listedRules(endpoint: String) -> String {
        """
        {"version": 3, "sources": {"bt": {"type": "btse", "endpoint": "\(endpoint)"}},
         "sinks": {"out": {"type": "stdout", "format": "json"}}, "defaults": {"notify": ["out"]},
         "rules": [{"id": "new-usd", "match": {"quote": "USD", "future": false}, "when": {"listed": true}}]}
        """
    }

    /// The embedded exchange, listing NEWCOIN once its market list has been served once.
    static func listingExchange() async throws -> (DemoExchangeServer, String) {
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(
                port: 0, prices: .randomWalk(seed: 5, interval: .milliseconds(200)), newMarketAfter: 1))
        let port = try await exchange.start()
        return (exchange, "http://127.0.0.1:\(port)")
    }

    @Test(
        "run: a reload of a rule-file source's list that adds a market fires its listed rule once, with the source; the state folder keeps the source's list and known markets"
    )
    func runSeesARuleFileSourcesNewListing() async throws {
        let (exchange, endpoint) = try await Self.listingExchange()
        defer { Task { await exchange.stop() } }
        let dir = try Self.folder(Self.listedRules(endpoint: endpoint))
        defer { try? FileManager.default.removeItem(at: dir) }
        let running = try PriceAlertBinary.start(
            ["run", "--rules", "rules.json", "--state", "st", "--markets-every", "1s"], in: dir)
        // A failed wait must not leave the daemon running.
        defer { if running.process.isRunning { running.process.terminate() } }
        let line = try await running.waitForStdoutLine(containing: #""condition":"listed""#, timeout: 60)
        let event = try #require(try NewListingTests.events(line).first)
        #expect(event["rule"] as? String == "new-usd")
        #expect(event["symbol"] as? String == "NEWCOIN")
        #expect(event["source"] as? String == "bt")
        #expect((event["id"] as? String)?.hasPrefix("new-usd:bt:NEWCOIN:") == true)
        _ = try await running.waitForStderrLine(containing: "market list reloaded", timeout: 60)
        #expect(try await running.stop(signal: SIGTERM) == 0, "\(running.stderr)")
        #expect(running.stdout.components(separatedBy: #""condition":"listed""#).count - 1 == 1)
        let known = try String(contentsOf: dir.appendingPathComponent("st/listings-bt.txt"), encoding: .utf8)
        #expect(known.contains("\nNEWCOIN\n"), "announced, no longer waiting: \(known)")
        let kept = try String(contentsOf: dir.appendingPathComponent("st/markets-bt.json"), encoding: .utf8)
        #expect(kept.contains(#""symbol":"NEWCOIN""#))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("st/listings.txt").path))
    }

    @Test(
        "check: a rule-file source's first list fires nothing; the next check, whose list adds a market, fires once for it; the third nothing"
    )
    func checkSeesARuleFileSourcesNewListing() async throws {
        let (exchange, endpoint) = try await Self.listingExchange()
        defer { Task { await exchange.stop() } }
        let dir = try Self.folder(Self.listedRules(endpoint: endpoint))
        defer { try? FileManager.default.removeItem(at: dir) }
        let args = ["check", "--rules", "rules.json", "--state", "st"]
        let first = try await PriceAlertBinary.run(args, in: dir)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.isEmpty, "the first list a state folder sees fires nothing")

        let second = try await PriceAlertBinary.run(args, in: dir)
        #expect(second.status == 0, "\(second.stderr)")
        let events = try NewListingTests.events(second.stdout)
        #expect(events.count == 1, "\(second.stdout)")
        #expect(events.first?["symbol"] as? String == "NEWCOIN")
        #expect(events.first?["source"] as? String == "bt")
        #expect(events.first?["price"] as? Double == 1.2345)

        let third = try await PriceAlertBinary.run(args, in: dir)
        #expect(third.status == 0, "\(third.stderr)")
        #expect(third.stdout.isEmpty, "a market is announced once")
    }

    static func binanceRules(endpoint: String) -> String {
        """
        {"version": 3, "sources": {"bx": {"type": "binance", "endpoint": "\(endpoint)"}},
         "sinks": {"out": {"type": "stdout", "format": "json"}}, "defaults": {"notify": ["out"]},
         "rules": [{"id": "high", "match": {"quote": "USDT"}, "when": {"price": {"above": 50000}}}]}
        """
    }

    @Test(
        "check: a rule-file source's market list is kept in markets-NAME.json; when its market-list REST is down, the kept list is followed (said at warning) and its match rules apply"
    )
    func checkKeepsAndFollowsARuleFileSourcesList() async throws {
        let dir = try Self.folder("")
        defer { try? FileManager.default.removeItem(at: dir) }
        let rulesFile = dir.appendingPathComponent("rules.json")
        let rules = { (endpoint: String) in
            """
            {"version": 3, "sources": {"bx": {"type": "binance", "endpoint": "\(endpoint)"}},
             "sinks": {"out": {"type": "stdout", "format": "json"}}, "defaults": {"notify": ["out"]},
             "rules": [{"id": "eth", "match": {"base": "ETH", "quote": "BTC"}, "when": {"price": {"above": 1}}}]}
            """
        }
        let ticker = try FeedSymbolsDaemonTests.fixture("binance_ticker24hr.json")
        let serving = ScriptedExchange(
            rest: [
                "/api/v3/exchangeInfo": try FeedSymbolsDaemonTests.fixture("binance_exchangeInfo.json"),
                "/api/v3/ticker/24hr": ticker
            ])
        let servingPort = try await serving.start()
        try rules("http://127.0.0.1:\(servingPort)").write(to: rulesFile, atomically: true, encoding: .utf8)
        let first = try await PriceAlertBinary.run(["check", "--rules", "rules.json", "--state", "st"], in: dir)
        await serving.stop()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains(#""symbol":"ETH/BTC""#), "\(first.stdout)")
        let kept = dir.appendingPathComponent("st/markets-bx.json")
        #expect(try String(contentsOf: kept, encoding: .utf8).contains(#""base":"ETH""#))

        // The market list is not served (404), the tickers are. A fresh state folder holding
        // only the kept list: the check follows it, says so, and the match rule fires.
        let down = ScriptedExchange(rest: ["/api/v3/ticker/24hr": ticker])
        let downPort = try await down.start()
        try rules("http://127.0.0.1:\(downPort)").write(to: rulesFile, atomically: true, encoding: .utf8)
        let fresh = dir.appendingPathComponent("st2")
        try FileManager.default.createDirectory(at: fresh, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: kept, to: fresh.appendingPathComponent("markets-bx.json"))
        let second = try await PriceAlertBinary.run(["check", "--rules", "rules.json", "--state", "st2"], in: dir)
        await down.stop()
        #expect(second.status == 0, "\(second.stderr)")
        #expect(
            second.stderr.contains("bx:") && second.stderr.contains("using the market list saved"), "\(second.stderr)")
        #expect(second.stdout.contains(#""symbol":"ETH/BTC""#), "\(second.stdout)")
    }

    @Test(
        "run: a rule-file source whose REST API is down at start follows the list the state folder kept (said at warning), subscribes from it, and its match rules apply"
    )
    func aSourceWhoseRESTIsDownFollowsItsKeptList() async throws {
        let dir = try Self.folder("")
        defer { try? FileManager.default.removeItem(at: dir) }
        try await Self.runFollowsAKeptList(keeping: ["--state", "st"], in: dir) {
            FileManager.default.fileExists(atPath: dir.appendingPathComponent("st/markets-bx.json").path)
        }
    }

    /// `run` with `keeping` (`--state DIR`, `--store URL`) against a Binance look-alike that
    /// serves its market list (`kept` then says the list is kept), then again against one whose
    /// REST API is down (404) and whose websocket is up: the second follows the kept list, says
    /// so, subscribes from it, and its match rule fires with the source. `leading`: the line
    /// after which the first run keeps what it keeps (on a shared store, once it leads).
    static func runFollowsAKeptList(
        keeping: [String], leading: String? = nil, in dir: URL, kept: () async throws -> Bool
    ) async throws {
        let rulesFile = dir.appendingPathComponent("rules.json")
        let arguments = ["run", "--rules", "rules.json"] + keeping
        let serving = ScriptedExchange(
            rest: ["/api/v3/exchangeInfo": try FeedSymbolsDaemonTests.fixture("binance_exchangeInfo.json")])
        let servingPort = try await serving.start()
        try binanceRules(endpoint: "http://127.0.0.1:\(servingPort)").write(
            to: rulesFile, atomically: true, encoding: .utf8)
        let first = try PriceAlertBinary.start(arguments, in: dir)
        defer { if first.process.isRunning { first.process.terminate() } }
        let connection = try await serving.connection(1)
        _ = try await connection.waitForTexts(1)
        if let leading { _ = try await first.waitForStderrLine(containing: leading, timeout: 60) }
        #expect(try await first.stop(signal: SIGTERM) == 0, "\(first.stderr)")
        await serving.stop()
        #expect(try await kept(), "\(first.stderr)")

        let down = ScriptedExchange(rest: [:])
        let downPort = try await down.start()
        try binanceRules(endpoint: "http://127.0.0.1:\(downPort)").write(
            to: rulesFile, atomically: true, encoding: .utf8)
        let second = try PriceAlertBinary.start(arguments, in: dir)
        defer { if second.process.isRunning { second.process.terminate() } }
        let warning = try await second.waitForStderrLine(containing: "following the list saved", timeout: 60)
        #expect(warning.contains("binance") && warning.contains("markets"), "\(warning)")
        let live = try await down.connection(1)
        let subscribed = try await live.waitForTexts(1)
        #expect(subscribed.first?.contains("btcusdt@ticker") == true, "\(subscribed)")
        live.send(ExchangeSourceCommandTests.binanceTicker(1_700_000_000_000, price: 51000))
        let alert = try await second.waitForStdoutLine(containing: #""rule":"high""#, timeout: 60)
        #expect(alert.contains(#""symbol":"BTC/USDT""#) && alert.contains(#""source":"bx""#), "\(alert)")
        #expect(try await second.stop(signal: SIGTERM) == 0, "\(second.stderr)")
        await down.stop()
    }

    @Test(
        "run: backfill asks each rule-file source for its own keys' candles (bx:BTC/USDT of the Binance look-alike, ok:BTC/USDT of the OKX one), never another's"
    )
    func backfillGoesToTheSourceTheKeyNames() async throws {
        let binance = ScriptedExchange(rest: [
            "/api/v3/exchangeInfo": try FeedSymbolsDaemonTests.fixture("binance_exchangeInfo.json"),
            "/api/v3/klines": try FeedSymbolsDaemonTests.fixture("binance_klines.json")
        ])
        let okx = ScriptedExchange(rest: [
            "/api/v5/public/instruments": try FeedSymbolsDaemonTests.fixture("okx_instruments_spot.json"),
            "/api/v5/market/candles": try FeedSymbolsDaemonTests.fixture("okx_candles.json")
        ])
        let (bxPort, okPort) = (try await binance.start(), try await okx.start())
        let dir = try Self.folder(
            """
            {"version": 3,
             "sources": {"bx": {"type": "binance", "endpoint": "http://127.0.0.1:\(bxPort)"},
                         "ok": {"type": "okx", "endpoint": "http://127.0.0.1:\(okPort)"}},
             "rules": [{"id": "bx-move", "symbol": "bx:BTC/USDT", "when": {"change": {"window": "1h", "above": 5}}},
                       {"id": "ok-move", "symbol": "ok:BTC/USDT", "when": {"change": {"window": "2h", "above": 5}}}]}
            """)
        defer { try? FileManager.default.removeItem(at: dir) }
        let running = try PriceAlertBinary.start(["run", "--rules", "rules.json", "--state", "st"], in: dir)
        defer { if running.process.isRunning { running.process.terminate() } }
        do {
            try await binance.waitUntil("a klines request") {
                binance.requests.contains { $0.hasPrefix("/api/v3/klines?") }
            }
            try await okx.waitUntil("a candles request") {
                okx.requests.contains { $0.hasPrefix("/api/v5/market/candles?") }
            }
        } catch {
            Issue.record("\(error): \(running.stderr); binance: \(binance.requests); okx: \(okx.requests)")
        }
        #expect(try await running.stop(signal: SIGTERM) == 0, "\(running.stderr)")
        await binance.stop()
        await okx.stop()
        let klines = binance.requests.filter { $0.hasPrefix("/api/v3/klines?") }
        #expect(!klines.isEmpty && klines.allSatisfy { $0.contains("symbol=BTCUSDT") }, "\(klines)")
        let candles = okx.requests.filter { $0.contains("candles?") }
        #expect(!candles.isEmpty && candles.allSatisfy { $0.contains("instId=BTC-USDT") }, "\(candles)")
        #expect(
            !okx.requests.contains { $0.contains("klines") } && !binance.requests.contains { $0.contains("candles") })
    }

    @Test(
        "run: a symbol a rule names that its source's market list lacks is named in one warning, with the rule and the source; a listed one is not"
    )
    func aSymbolMissingFromItsSourcesListIsReported() async throws {
        let binance = ScriptedExchange(rest: [
            "/api/v3/exchangeInfo": try FeedSymbolsDaemonTests.fixture("binance_exchangeInfo.json")
        ])
        let port = try await binance.start()
        let dir = try Self.folder(
            """
            {"version": 3, "sources": {"bx": {"type": "binance", "endpoint": "http://127.0.0.1:\(port)"}},
             "rules": [{"id": "btc", "symbol": "bx:BTC/USDT", "when": {"price": {"above": 1}}},
                       {"id": "doge", "symbols": ["bx:DOGE/EUR", "bx:BTC/USDT"], "when": {"price": {"above": 1}}},
                       {"id": "doge-again", "symbol": "bx:doge/eur", "when": {"price": {"below": 1}}}]}
            """)
        defer { try? FileManager.default.removeItem(at: dir) }
        let running = try PriceAlertBinary.start(
            ["run", "--rules", "rules.json", "--listen", "127.0.0.1:0"], in: dir)
        defer { if running.process.isRunning { running.process.terminate() } }
        let warning = try await running.waitForStderrLine(containing: "not on its market list", timeout: 60)
        #expect(warning.contains("bx: 'DOGE/EUR' is not on its market list"), "\(warning)")
        #expect(warning.contains("rule 'doge', rule 'doge-again'"), "\(warning)")
        let metrics = try await CurlHTTPClient.shared.send(
            HTTPRequest(url: "\(try await running.statusBase())/metrics", timeout: 60_000))
        #expect(
            String(decoding: metrics.body, as: UTF8.self).contains(
                #"pricealert_feed_unlisted_symbols{source="bx"} 1.0"#))
        let connection = try await binance.connection(1)
        _ = try await connection.waitForTexts(1)
        #expect(try await running.stop(signal: SIGTERM) == 0, "\(running.stderr)")
        await binance.stop()
        #expect(running.stderr.components(separatedBy: "not on its market list").count - 1 == 1, "\(running.stderr)")
        #expect(!running.stderr.contains("'BTC/USDT' is not"))
    }

    @Test(
        "validate --markets NAME=FILE: a symbol the source's list lacks is a warning naming the source and the rule; the files stay valid (exit 0)"
    )
    func validateWarnsOfASymbolMissingFromAGivenList() async throws {
        let dir = try Self.folder(
            """
            {"version": 3, "sources": {"bx": {"type": "binance"}},
             "rules": [{"id": "btc", "symbol": "bx:BTC/USDT", "when": {"price": {"above": 1}}},
                       {"id": "doge", "symbol": "bx:DOGE/EUR", "when": {"price": {"above": 1}}}]}
            """)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(try FeedSymbolsDaemonTests.fixture("binance_exchangeInfo.json")).write(
            to: dir.appendingPathComponent("exchangeInfo.json"))
        let checked = try await PriceAlertBinary.run(
            ["validate", "rules.json", "--markets", "bx=exchangeInfo.json"], in: dir)
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(
            checked.stderr.contains(
                "pricealert: warning: bx: 'DOGE/EUR' is not on its market list: rule 'doge' will get no prices of it from bx"
            ), "\(checked.stderr)")
        #expect(!checked.stderr.contains("BTC/USDT"))
        let plain = try await PriceAlertBinary.run(["validate", "rules.json"], in: dir)
        #expect(plain.status == 0 && plain.stderr.isEmpty, "without --markets nothing is looked up: \(plain.stderr)")
    }
}
