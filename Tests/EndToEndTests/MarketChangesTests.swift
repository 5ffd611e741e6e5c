import AlertHTTP
import AlertTestSupport
import DemoExchange
import Foundation
import Testing

/// `pricealert markets --changes`: change columns from the source's candles, checked against
/// the candles the embedded exchange serves, read by the test itself.
@Suite("end to end: markets --changes", .programs)
struct MarketChangesTests {
    /// The close of the last hour candle of `market` that ends at or before `time`, read from
    /// the exchange's raw `ohlcv` rows.
    func close(_ endpoint: String, market: String, before time: Int64) async throws -> Double? {
        let url = "\(endpoint)/spot/api/v3.2/ohlcv?symbol=\(market)&resolution=60&start=\(time - 7_200_000)&end=\(time)"
        let body = try await CurlHTTPClient().send(HTTPRequest(url: url, timeout: 60_000)).body
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [[Double]])
        return rows.filter { Int64($0[0]) * 1000 + 3_600_000 <= time }.max { $0[0] < $1[0] }?[4]
    }

    @Test func changeColumnsComeFromTheCandlesAndSort() async throws {
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(port: 0, prices: .randomWalk(seed: 9, interval: .seconds(60))))
        let port = try await exchange.start()
        let endpoint = "http://127.0.0.1:\(port)"
        let day: Int64 = 86_400_000
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let json = try await PriceAlertBinary.run([
            "markets", "--source", "btse", "--endpoint", endpoint, "--search", "A",
            "--changes", "24h,7d,500d", "--sort", "change:7d", "--format", "json"
        ])
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        #expect(json.status == 0, "\(json.stderr)")
        let rows = json.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(rows.count > 5)
        // Highest 7-day change first, markets without one last.
        let sevenDays = rows.map { ($0["changes"] as? [String: Any])?["7d"] as? Double }
        let known = sevenDays.prefix { $0 != nil }.compactMap { $0 }
        #expect(known.count > 5)
        #expect(known == known.sorted(by: >))
        #expect(sevenDays.dropFirst(known.count).allSatisfy { $0 == nil })
        // Each value against the candles, for the run's now (between `before` and `after`).
        for row in rows.prefix(3) {
            let price = try #require(row["price"] as? Double)
            let market = try #require(row["name"] as? String)
            let changes = try #require(row["changes"] as? [String: Any])
            #expect(changes["500d"] is NSNull, "the exchange has no candles 500 days back")
            for (label, window) in [("24h", day), ("7d", 7 * day)] {
                let value = try #require(changes[label] as? Double)
                var expected: [Double] = []
                for now in [before, after] {
                    if let close = try await close(endpoint, market: market, before: now - window) {
                        expected.append((price - close) / close * 100)
                    }
                }
                #expect(expected.contains { abs($0 - value) < 1e-9 }, "\(market) \(label): \(value) not in \(expected)")
            }
        }

        let text = try await PriceAlertBinary.run([
            "markets", "--source", "btse", "--endpoint", endpoint, "--search", "BTC",
            "--changes", "7d,500d"
        ])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasSuffix("CHANGE:7D%  CHANGE:500D%") == true, "\(text.stdout)")
        let btc = try #require(lines.first { $0.hasPrefix("BTC ") })
        let cells = btc.split(separator: " ")
        #expect(cells.last == "—")
        #expect(Double(String(cells[cells.count - 2])) != nil, "\(btc)")
        await exchange.stop()
    }

    /// A `24h` window beside the source's own 24 h change: two columns, two names; and a cell
    /// without a value (a future's price, a window without candles) reads the same everywhere.
    @Test func everyColumnHasItsOwnNameAndAMissingValueOneSign() async throws {
        let exchange = DemoExchangeServer(
            configuration: ExchangeConfiguration(port: 0, prices: .randomWalk(seed: 9, interval: .seconds(60))))
        let port = try await exchange.start()
        let text = try await PriceAlertBinary.run([
            "markets", "--source", "btse", "--endpoint", "http://127.0.0.1:\(port)",
            "--search", "BTC", "--changes", "1h,24h,7d,500d"
        ])
        await exchange.stop()
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        let header = try #require(lines.first).split(separator: " ").map(String.init)
        #expect(
            header == [
                "SYMBOL", "NAME", "PAIR", "TYPE", "PRICE", "24H%", "CHANGE:1H%", "CHANGE:24H%", "CHANGE:7D%",
                "CHANGE:500D%"
            ])
        #expect(Set(header).count == header.count, "\(header)")
        let rows = lines.dropFirst().dropLast().map { $0.split(separator: " ").map(String.init) }
        #expect(rows.contains { $0.contains("future") }, "no future (a market without a price) among \(lines)")
        for row in rows {
            #expect(!row.contains("-"), "a missing value shown as '-': \(row)")
            #expect(row.last == "—", "no candles 500 days back: \(row)")
        }
        let future = try #require(rows.first { $0.contains("future") })
        #expect(future.suffix(6) == ["—", "—", "—", "—", "—", "—"], "\(future)")
    }

    @Test func sortingByAWindowNotAskedForIsAnError() async throws {
        let result = try await PriceAlertBinary.run([
            "markets", "--source", "btse", "--changes", "24h", "--sort", "change:7d"
        ])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--sort change:7d needs 7d among --changes"))
    }
}
