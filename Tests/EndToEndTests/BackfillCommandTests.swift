import AlertFeeds
import AlertHTTP
import AlertModel
import AlertTestSupport
import DemoExchange
import Foundation
import Hummingbird
import Synchronization
import Testing

/// `check --source` fills the history its rules need from the exchange's candles, once per
/// symbol (Docs/candles.md): the built binary against a real local exchange.
@Suite("end to end: backfill from candles", .programs)
struct BackfillCommandTests {
    static let sevenDays: Int64 = 7 * 86_400_000

    func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-backfill-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A rule file with stdout JSON alerts and `rules` (JSON objects).
    func rules(_ rules: [String], in dir: URL) throws {
        let text =
            #"{"version": 1, "sinks": {"out": {"type": "stdout", "format": "json"}}, "defaults": {"notify": ["out"]}, "rules": ["#
            + rules.joined(separator: ", ") + "]}"
        try text.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
    }

    func check(_ endpoint: String, in dir: URL) async throws -> PriceAlertBinary.Result {
        try await PriceAlertBinary.run(
            ["check", "--rules", "rules.json", "--source", "btse", "--endpoint", endpoint, "--state", "st"], in: dir)
    }

    /// The alerts on standard output, as JSON objects.
    func alerts(_ stdout: String) -> [[String: Any]] {
        stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    static let sevenDayRule = #"{"id": "btc-7d", "symbol": "BTC", "when": {"change": {"window": "7d", "above": -100}}}"#
    static let priceRule = #"{"id": "btc-price", "symbol": "BTC", "when": {"price": {"above": 0}}}"#

    /// The candle requests the exchange received so far.
    static func candleRequests(_ exchange: DemoExchangeServer) -> [String] {
        exchange.requestLog.filter { $0.contains("/ohlcv?") }
    }

    /// A 7-day change rule fires on the very first check (its window is covered by the candles),
    /// with the change against a price the exchange's candles hold at `t − 7d`. A second check,
    /// with one more 7-day rule, finds the history in the state folder: the new rule fires too
    /// and no candle is fetched again.
    @Test func aSevenDayRuleFiresOnTheFirstCheckAndCandlesAreFetchedOnce() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try rules([Self.sevenDayRule], in: dir)
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(port: 0, prices: .randomWalk(seed: 5, interval: .seconds(1))))
        let port = try await exchange.start()
        let endpoint = "http://127.0.0.1:\(port)"

        let first = try await check(endpoint, in: dir)
        #expect(first.status == 0, "\(first.stderr)")
        let fired = alerts(first.stdout)
        #expect(fired.map { $0["rule"] as? String } == ["btc-7d"], "\(first.stdout)\n\(first.stderr)")
        let fetched = Self.candleRequests(exchange)
        #expect(!fetched.isEmpty)
        #expect(fetched.allSatisfy { $0.hasPrefix("/spot/api/v3.2/ohlcv?symbol=BTC-USD&") })

        // The change is the price against one the exchange's candles seeded near t − 7d.
        let alert = try #require(fired.first)
        let price = try #require(alert["price"] as? Double), value = try #require(alert["value"] as? Double)
        let stamp = try #require(alert["time"] as? String)
        let time = try #require(Timestamp.parse(Array(stamp.utf8)))
        let target = time - Self.sevenDays
        let base = price / (1 + value / 100)
        let candles = try await BTSESource(endpoint: endpoint).candles(
            of: "BTC", since: target - 7_200_000, until: target + 7_200_000,
            now: time, http: NIOHTTPClient())
        let seeded = candles.flatMap { [$0.low, $0.high, $0.close] }
        #expect(seeded.contains { abs($0 - base) <= 1e-6 * base }, "base \(base) not among \(seeded)")

        let before = Self.candleRequests(exchange).count
        try rules(
            [
                Self.sevenDayRule,
                #"{"id": "btc-7d-again", "symbol": "BTC", "when": {"change": {"window": "7d", "above": -100}}}"#
            ], in: dir)
        let second = try await check(endpoint, in: dir)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(
            alerts(second.stdout).map { $0["rule"] as? String } == ["btc-7d-again"],
            "\(second.stdout)\n\(second.stderr)")
        #expect(Self.candleRequests(exchange).count == before)
        await exchange.stop()
    }

    /// `run` fills the history before the first tick, so a 7-day rule fires at once; a restart
    /// on the same state folder finds the symbol in the ledger and fetches no candle.
    @Test func runFillsOncePerStateFolder() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try rules([Self.sevenDayRule], in: dir)
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(port: 0, prices: .randomWalk(seed: 5, interval: .milliseconds(200))))
        let port = try await exchange.start()
        let args = [
            "run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)", "--state",
            "st"
        ]
        let first = try PriceAlertBinary.start(args, in: dir)
        _ = try await first.waitForStdoutLine(containing: "\"rule\":\"btc-7d\"", timeout: 60)
        #expect(try await first.stop(signal: SIGTERM) == 0)
        let fetched = Self.candleRequests(exchange)
        #expect(!fetched.isEmpty)

        let second = try PriceAlertBinary.start(args, in: dir)
        _ = try await second.waitForStderrLine(containing: "markets, 1 rules", timeout: 60)
        #expect(second.stderr.contains("restored the saved state"))
        #expect(try await second.stop(signal: SIGTERM) == 0)
        #expect(Self.candleRequests(exchange) == fetched)
        await exchange.stop()
    }

    /// A SIGHUP that adds a longer window for a symbol already filled (BTC: 24 h, then 7 d) and a
    /// window on a new symbol (ETH) fills both before evaluating them, so both 7-day rules fire
    /// at once; the ledger records it, so a restart fetches nothing.
    @Test func aReloadFillsWhatTheNewRulesNeed() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let dayRule = #"{"id": "btc-24h", "symbol": "BTC", "when": {"change": {"window": "24h", "above": -100}}}"#
        try rules([dayRule], in: dir)
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(port: 0, prices: .randomWalk(seed: 5, interval: .milliseconds(200))))
        let port = try await exchange.start()
        defer { Task { await exchange.stop() } }
        let args = [
            "run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)", "--state",
            "st"
        ]
        let running = try PriceAlertBinary.start(args, in: dir)
        _ = try await running.waitForStdoutLine(containing: "\"rule\":\"btc-24h\"", timeout: 60)
        let atStart = Self.candleRequests(exchange)
        #expect(atStart.allSatisfy { $0.contains("symbol=BTC-USD&") })

        let ethRule = #"{"id": "eth-7d", "symbol": "ETH", "when": {"change": {"window": "7d", "above": -100}}}"#
        try rules([dayRule, Self.sevenDayRule, ethRule], in: dir)
        kill(running.pid, SIGHUP)
        _ = try await running.waitForStderrLine(containing: "rules reloaded: 3 rules", timeout: 60)
        _ = try await running.waitForStdoutLine(containing: "\"rule\":\"btc-7d\"", timeout: 60)
        _ = try await running.waitForStdoutLine(containing: "\"rule\":\"eth-7d\"", timeout: 60)
        #expect(try await running.stop(signal: SIGTERM) == 0, "\(running.stderr)")
        #expect(running.stderr.contains("btse: history of 2 of 2 symbols filled"), "\(running.stderr)")
        let afterReload = Self.candleRequests(exchange)
        #expect(afterReload.dropFirst(atStart.count).contains { $0.contains("symbol=ETH-USD&") })
        #expect(afterReload.dropFirst(atStart.count).contains { $0.contains("symbol=BTC-USD&") })

        let again = try PriceAlertBinary.start(args, in: dir)
        _ = try await again.waitForStderrLine(containing: "markets, 3 rules", timeout: 60)
        #expect(try await again.stop(signal: SIGTERM) == 0)
        #expect(Self.candleRequests(exchange) == afterReload)
    }

    /// A market-list reload that brings in a market a `match` rule with a window reaches
    /// (NEWCOIN, listed after the first list) asks for its candles; the exchange has none for
    /// it, and the run says so.
    @Test func aMarketListReloadFillsTheMarketsItBringsIn() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try rules(
            [#"{"id": "newcoin-7d", "match": {"base": "NEWCOIN"}, "when": {"change": {"window": "7d", "above": 1}}}"#],
            in: dir)
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(
                port: 0, prices: .randomWalk(seed: 5, interval: .milliseconds(200)), newMarketAfter: 1))
        let port = try await exchange.start()
        defer { Task { await exchange.stop() } }
        let running = try PriceAlertBinary.start(
            [
                "run", "--rules", "rules.json", "--source", "btse", "--endpoint",
                "http://127.0.0.1:\(port)", "--markets-every", "1s"
            ], in: dir)
        _ = try await running.waitForStderrLine(containing: "market list reloaded", timeout: 60)
        _ = try await running.waitForStderrLine(containing: "btse: no candles for NEWCOIN", timeout: 60)
        // Two reloads more: NEWCOIN was filled (with nothing) once, so it is not asked again.
        for _ in 0..<1_200 where running.stderr.components(separatedBy: "market list reloaded").count - 1 < 3 {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try await running.stop(signal: SIGTERM) == 0, "\(running.stderr)")
        #expect(running.stderr.components(separatedBy: "market list reloaded").count - 1 >= 3, "\(running.stderr)")
        #expect(
            Self.candleRequests(exchange).filter { $0.hasPrefix("/spot/api/v3.2/ohlcv?symbol=NEWCOIN-USD&") }.count == 1
        )
    }

    /// An exchange without candles (the embedded one replaying a file): the run says so for the
    /// symbol, evaluates the rest, and does not ask again on the next run.
    @Test func aSourceWithoutCandlesIsNamedAndTheRunGoesOn() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try rules([Self.sevenDayRule, Self.priceRule], in: dir)
        let ticks = [Tick(time: 1_700_000_000_000, symbol: "BTC", price: 43_000)]
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(port: 0, prices: .replay(ticks: ticks, speed: 0)))
        let port = try await exchange.start()
        let endpoint = "http://127.0.0.1:\(port)"
        let first = try await check(endpoint, in: dir)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            first.stderr.contains(
                "pricealert: note: btse: no candles for BTC: its windows wait until live prices cover them"),
            "\(first.stderr)")
        #expect(alerts(first.stdout).map { $0["rule"] as? String } == ["btc-price"])
        let fetched = Self.candleRequests(exchange)
        #expect(fetched.contains { $0.hasPrefix("/spot/api/v3.2/ohlcv?symbol=BTC-USD&") })
        #expect(fetched.contains { $0.hasPrefix("/futures/api/v2.1/ohlcv?symbol=BTCPFC&") })

        let second = try await check(endpoint, in: dir)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(!second.stderr.contains("no candles"))
        #expect(Self.candleRequests(exchange) == fetched)
        await exchange.stop()
    }

    /// A candle endpoint that fails: a warning naming the URL (without the query), the rules
    /// evaluated, exit 0; the symbol is not recorded, so the next run asks again.
    @Test func aFailingCandleEndpointIsNamedAndAskedAgainNextRun() async throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        try rules([Self.sevenDayRule, Self.priceRule], in: dir)
        let asked = Mutex(0)
        let router = Router()
        router.get("/spot/api/v3.2/market_summary") { _, _ -> Response in
            let body =
                #"[{"symbol":"BTC-USD","last":43000,"percentageChange":1.5,"base":"BTC","quote":"USD","active":true,"futures":false}]"#
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        router.get("/spot/api/v3.2/ohlcv") { _, _ -> Response in
            asked.withLock { $0 += 1 }
            return Response(status: .internalServerError)
        }
        try await LoopbackServer.with(router) { port in
            let endpoint = "http://127.0.0.1:\(port)"
            let first = try await check(endpoint, in: dir)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(
                first.stderr.contains(
                    "pricealert: warning: btse: candles for BTC not fetched: \(endpoint)/spot/api/v3.2/ohlcv: HTTP 500"),
                "\(first.stderr)")
            #expect(!first.stderr.contains("start="))
            #expect(alerts(first.stdout).map { $0["rule"] as? String } == ["btc-price"])
            let second = try await check(endpoint, in: dir)
            #expect(second.status == 0, "\(second.stderr)")
            #expect(second.stderr.contains("candles for BTC not fetched"))
            #expect(asked.withLock { $0 } == 2)
        }
    }
}
