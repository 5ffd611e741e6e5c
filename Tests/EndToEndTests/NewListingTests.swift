import AlertTestSupport
import DemoExchange
import Foundation
import Testing

/// `listed` rules against the embedded exchange, which lists NEWCOIN once its market list has
/// been served N times (ExchangeConfiguration.newMarketAfter).
@Suite("end to end: new listings", .programs)
struct NewListingTests {
    static let rules = """
        {"version": 2, "sinks": {"out": {"type": "stdout", "format": "json"}}, "defaults": {"notify": ["out"]},
         "rules": [{"id": "new-usd", "match": {"quote": "USD", "future": false}, "when": {"listed": true}},
                   {"id": "new-usdt", "match": {"quote": "USDT"}, "when": {"listed": true}}]}
        """

    static func folder() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pricealert-listing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try rules.write(to: dir.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        return dir
    }

    static func events(_ stdout: String) throws -> [[String: Any]] {
        try stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test(
        "check --source: the first list fires nothing; a refetched list that adds a market fires once for it, then never again"
    )
    func checkSeesANewListing() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(
                port: 0, prices: .randomWalk(seed: 5, interval: .seconds(1)), newMarketAfter: 1))
        let port = try await exchange.start()
        defer { Task { await exchange.stop() } }
        // --markets-every 1ms: every check refetches the list.
        let args = [
            "check", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
            "--state", "st", "--markets-every", "1ms"
        ]
        let first = try await PriceAlertBinary.run(args, in: dir)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.isEmpty, "the first list a state folder sees fires nothing")

        let second = try await PriceAlertBinary.run(args, in: dir)
        #expect(second.status == 0, "\(second.stderr)")
        let events = try Self.events(second.stdout)
        #expect(events.count == 1)
        let event = try #require(events.first)
        #expect(event["rule"] as? String == "new-usd")
        #expect(event["symbol"] as? String == "NEWCOIN")
        #expect(event["kind"] as? String == "alert")
        #expect(event["condition"] as? String == "listed")
        #expect(event["threshold"] is NSNull)
        #expect(event["price"] as? Double == 1.2345)
        #expect(event["message"] as? String == "NEWCOIN listed (price 1.2345)")

        let third = try await PriceAlertBinary.run(args, in: dir)
        #expect(third.status == 0, "\(third.stderr)")
        #expect(third.stdout.isEmpty, "a market is announced once")
    }

    @Test(
        "run: a market-list reload that adds a market fires its listed rules once, and the state folder keeps it announced"
    )
    func runSeesANewListing() async throws {
        let dir = try Self.folder()
        defer { try? FileManager.default.removeItem(at: dir) }
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(
                port: 0, prices: .randomWalk(seed: 5, interval: .milliseconds(200)), newMarketAfter: 1))
        let port = try await exchange.start()
        defer { Task { await exchange.stop() } }
        let running = try PriceAlertBinary.start(
            [
                "run", "--rules", "rules.json", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
                "--state", "st", "--markets-every", "1s"
            ], in: dir)
        let line = try await running.waitForStdoutLine(containing: "\"condition\":\"listed\"", timeout: 60)
        #expect(line.contains("\"rule\":\"new-usd\",\"symbol\":\"NEWCOIN\""))
        // Two more reloads (the list served 4 times): still one listing event.
        _ = try await running.waitForStderrLine(containing: "market list reloaded", timeout: 60)
        try await waitForReloads(running, count: 3)
        let status = try await running.stop(signal: SIGTERM)
        #expect(status == 0, "\(running.stderr)")
        #expect(running.stdout.components(separatedBy: "\"condition\":\"listed\"").count - 1 == 1)
        let saved = try String(contentsOf: dir.appendingPathComponent("st/listings.txt"), encoding: .utf8)
        #expect(saved.contains("\nNEWCOIN\n"), "announced, no longer waiting: \(saved)")
    }

    private func waitForReloads(_ running: PriceAlertBinary.Running, count: Int) async throws {
        for _ in 0..<600 {
            if running.stderr.components(separatedBy: "market list reloaded").count - 1 >= count { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("fewer than \(count) market list reloads: \(running.stderr)")
    }
}
