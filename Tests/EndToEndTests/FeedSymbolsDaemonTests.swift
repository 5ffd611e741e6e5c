import AlertTestSupport
import Foundation
import Testing

/// `run` subscribes only the symbols the rules need (Docs/sources.md#the-symbols-a-feed-follows):
/// the built binary against a scripted Binance on 127.0.0.1 serving the documentation's market
/// list (ETH/BTC and BTC/USDT active), which records every subscribe message.
@Suite("end to end: a feed subscribes the symbols the rules need", .programs)
struct FeedSymbolsDaemonTests {
    static func fixture(_ name: String) throws -> [UInt8] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/exchanges")
        return Array(try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    static func rules(symbol: String, endpoint: String) -> String {
        """
        {"version": 3,
         "sources": {"bx": {"type": "binance", "endpoint": "\(endpoint)"}},
         "rules": [{"id": "one", "symbol": "\(symbol)", "when": {"price": {"above": 1}}}]}
        """
    }

    /// A scripted Binance serving the documentation's market list, its port, and a folder.
    static func binanceAndFolder() async throws -> (ScriptedExchange, Int, URL) {
        let exchange = ScriptedExchange(rest: ["/api/v3/exchangeInfo": try fixture("binance_exchangeInfo.json")])
        let port = try await exchange.start()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pricealert-sym-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return (exchange, port, dir)
    }

    /// A rule on `bx:BTC/USDT` subscribes BTC/USDT alone; after a SIGHUP that names
    /// `bx:ETH/BTC` instead, the feed subscribes afresh on a new connection, ETH/BTC alone.
    @Test func aRuleFileNamingOneSymbolSubscribesOnlyIt() async throws {
        let (exchange, port, dir) = try await Self.binanceAndFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let rulesFile = dir.appendingPathComponent("rules.json")
        let endpoint = "http://127.0.0.1:\(port)"
        try Self.rules(symbol: "bx:BTC/USDT", endpoint: endpoint).write(
            to: rulesFile, atomically: true, encoding: .utf8)
        let daemon = try PriceAlertBinary.start(["run", "--rules", "rules.json", "--state", "st"], in: dir)
        let first = try await exchange.connection(1)
        #expect(try await first.waitForTexts(1) == [#"{"method":"SUBSCRIBE","params":["btcusdt@ticker"],"id":1}"#])

        try Self.rules(symbol: "bx:ETH/BTC", endpoint: endpoint).write(to: rulesFile, atomically: true, encoding: .utf8)
        kill(daemon.pid, SIGHUP)
        _ = try await daemon.waitForStderrLine(containing: "the rules need other symbols", timeout: 60)
        let second = try await exchange.connection(2)
        #expect(try await second.waitForTexts(1) == [#"{"method":"SUBSCRIBE","params":["ethbtc@ticker"],"id":1}"#])
        #expect(try await daemon.stop(signal: SIGTERM) == 0, "\(daemon.stderr)")
        await exchange.stop()
    }

    /// The `--source` feed too: a rule on BTC/USDT subscribes it alone; after a SIGHUP whose
    /// rules name ETH/BTC instead, the feed resubscribes on a new connection, ETH/BTC alone.
    @Test func theSourceFeedResubscribesWhenTheRulesNeedOtherSymbols() async throws {
        let (exchange, port, dir) = try await Self.binanceAndFolder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let rulesFile = dir.appendingPathComponent("rules.json")
        func rules(_ symbol: String) -> String {
            #"{"version": 1, "rules": [{"id": "one", "symbol": "\#(symbol)", "when": {"price": {"above": 1}}}]}"#
        }
        try rules("BTC/USDT").write(to: rulesFile, atomically: true, encoding: .utf8)
        let daemon = try PriceAlertBinary.start(
            [
                "run", "--rules", "rules.json", "--state", "st", "--source", "binance", "--endpoint",
                "http://127.0.0.1:\(port)"
            ], in: dir)
        let first = try await exchange.connection(1)
        #expect(try await first.waitForTexts(1) == [#"{"method":"SUBSCRIBE","params":["btcusdt@ticker"],"id":1}"#])

        try rules("ETH/BTC").write(to: rulesFile, atomically: true, encoding: .utf8)
        kill(daemon.pid, SIGHUP)
        _ = try await daemon.waitForStderrLine(containing: "the rules need other symbols", timeout: 60)
        let second = try await exchange.connection(2)
        #expect(try await second.waitForTexts(1) == [#"{"method":"SUBSCRIBE","params":["ethbtc@ticker"],"id":1}"#])
        try await first.waitUntilClosed()
        #expect(try await daemon.stop(signal: SIGTERM) == 0, "\(daemon.stderr)")
        await exchange.stop()
    }
}
