import AlertTestSupport
import Foundation
import Testing

/// `markets`, `check`, `run` and `record` with `--source binance|coinbase|kraken|bybit|okx`: the
/// built binary against a scripted exchange on 127.0.0.1 serving the documentation fixtures
/// (Tests/Fixtures/exchanges).
@Suite("end to end: the five v3 exchanges", .programs)
struct ExchangeSourceCommandTests {
    /// Per source: the REST bodies (path without query → fixture), a symbol its 24 h ticker
    /// lists, and that ticker's price.
    struct Case: Sendable, CustomStringConvertible {
        var source: String
        var rest: [String: String]
        var symbol: String
        var price: Double
        var description: String { source }
    }

    static let cases = [
        Case(
            source: "binance",
            rest: [
                "/api/v3/exchangeInfo": "binance_exchangeInfo.json", "/api/v3/ticker/24hr": "binance_ticker24hr.json"
            ],
            symbol: "ETH/BTC", price: 4.000002),
        Case(
            source: "coinbase", rest: ["/api/v3/brokerage/market/products": "coinbase_products.json"],
            symbol: "BTC/USD", price: 37000.01),
        Case(
            source: "kraken",
            rest: ["/0/public/AssetPairs": "kraken_AssetPairs.json", "/0/public/Ticker": "kraken_Ticker.json"],
            symbol: "BTC/USD", price: 30303.2),
        Case(
            source: "bybit",
            rest: [
                "/v5/market/instruments-info": "bybit_instruments_spot.json",
                "/v5/market/tickers": "bybit_tickers_spot.json"
            ], symbol: "BTC/USDT", price: 20533.13),
        Case(
            source: "okx",
            rest: [
                "/api/v5/public/instruments": "okx_instruments_spot.json",
                "/api/v5/market/tickers": "okx_tickers_spot.json"
            ], symbol: "BTC/USDT", price: 9999.99)
    ]

    static func exchange(_ rest: [String: String]) throws -> ScriptedExchange {
        let folder = PriceAlertBinary.repo.appendingPathComponent("Tests/Fixtures/exchanges")
        return ScriptedExchange(
            rest: try rest.mapValues { Array(try Data(contentsOf: folder.appendingPathComponent($0))) })
    }

    func tempFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-v3src-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test(arguments: cases)
    func marketsListsTheMarketsInCommonSymbolsWithPrices(_ c: Case) async throws {
        let exchange = try Self.exchange(c.rest)
        let port = try await exchange.start()
        let result = try await PriceAlertBinary.run([
            "markets", "--source", c.source, "--endpoint", "http://127.0.0.1:\(port)", "--format", "json"
        ])
        await exchange.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try result.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let row = try #require(rows.first { $0["symbol"] as? String == c.symbol }, "\(result.stdout)")
        #expect(row["price"] as? Double == c.price)
        #expect(rows.allSatisfy { ($0["symbol"] as? String)?.contains("/") == true })
    }

    @Test(arguments: cases)
    func checkTakesOneSnapshotAndAlerts(_ c: Case) async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let rules = """
            {"version": 1, "sinks": {"out": {"type": "stdout", "format": "json"}}, "defaults": {"notify": ["out"]},
             "rules": [{"id": "above", "symbol": "\(c.symbol)", "when": {"price": {"above": \(c.price / 2)}}}]}
            """
        try rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let exchange = try Self.exchange(c.rest)
        let port = try await exchange.start()
        let result = try await PriceAlertBinary.run(
            ["check", "--rules", "rules.json", "--source", c.source, "--endpoint", "http://127.0.0.1:\(port)"],
            in: dir)
        await exchange.stop()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""rule":"above","symbol":"\#(c.symbol)""#), "\(result.stdout)")
    }

    static func binanceTicker(_ time: Int, price: Double) -> String {
        #"{"e":"24hrTicker","E":\#(time),"s":"BTCUSDT","c":"\#(price)","P":"1.0","q":"5"}"#
    }

    /// `run --source binance` alerts on the websocket's ticks, and goes on after a reset.
    @Test func runFollowsBinanceAcrossAReset() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let rules = """
            {"version": 1, "sinks": {"out": {"type": "stdout", "format": "json"}}, "defaults": {"notify": ["out"]},
             "rules": [{"id": "high", "symbol": "BTC/USDT", "when": {"price": {"above": 50000}}}]}
            """
        try rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        let exchange = try Self.exchange(Self.cases[0].rest)
        let port = try await exchange.start()
        let running = try PriceAlertBinary.start(
            ["run", "--rules", "rules.json", "--source", "binance", "--endpoint", "http://127.0.0.1:\(port)"], in: dir)
        let first = try await exchange.connection(1)
        try await first.waitForTexts(1)
        first.send(Self.binanceTicker(1_700_000_000_000, price: 51000))
        _ = try await running.waitForStdoutLine(containing: #""rule":"high","symbol":"BTC/USDT""#, timeout: 60)
        first.reset()
        let second = try await exchange.connection(2)
        #expect(try await second.waitForTexts(1) == first.texts)
        second.send(Self.binanceTicker(1_700_000_001_000, price: 40000))
        second.send(Self.binanceTicker(1_700_000_002_000, price: 52000))
        try await running.occurrences(.stdout, of: #""rule":"high""#, atLeast: 2, timeout: 60)
        #expect(try await running.stop(signal: SIGTERM) == 0)
        await exchange.stop()
    }

    /// `record --source binance` writes every tick once: those of the first connection, then,
    /// after a reset, the new connection's, without the repeat of the last tick before it.
    @Test func recordLosesAndDoublesNoTickAcrossAReconnect() async throws {
        let dir = try tempFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = try Self.exchange(Self.cases[0].rest)
        let port = try await exchange.start()
        let running = try PriceAlertBinary.start(
            ["record", "--source", "binance", "--endpoint", "http://127.0.0.1:\(port)", "--out", "ticks.jsonl"], in: dir
        )
        let first = try await exchange.connection(1)
        try await first.waitForTexts(1)
        for i in 1...3 { first.send(Self.binanceTicker(1_700_000_000_000 + i * 1000, price: 40000 + Double(i))) }
        let out = dir.appendingPathComponent("ticks.jsonl").path
        let lines = { (FileManager.default.contents(atPath: out) ?? Data()).count(where: { $0 == 0x0A }) }
        try await exchange.waitUntil("3 ticks written") { lines() >= 3 }
        first.close()
        let second = try await exchange.connection(2)
        try await second.waitForTexts(1)
        for i in 3...5 { second.send(Self.binanceTicker(1_700_000_000_000 + i * 1000, price: 40000 + Double(i))) }
        try await exchange.waitUntil("5 ticks written") { lines() >= 5 }
        #expect(try await running.stop(signal: SIGTERM) == 0)
        await exchange.stop()
        let written = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(
            written.compactMap { ($0["time"] as? NSNumber)?.int64Value }
                == (1...5).map { 1_700_000_000_000 + $0 * 1000 })
        #expect(written.allSatisfy { $0["symbol"] as? String == "BTC/USDT" })
    }
}
