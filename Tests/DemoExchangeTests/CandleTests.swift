import Foundation
import Testing

@testable import DemoExchange

/// The exchange's candles are its random walk extended into the past: closes are the walk's
/// minute prices, the start minute closes at the first price the feed sends.
@Suite("demo exchange candles")
struct DemoCandleTests {
    static let symbols = MarketCatalog.embedded.spot.map(\.symbol)

    @Test func minuteCandlesAreTheWalksMinutesAndHoursAggregateThem() throws {
        let walk = RandomWalk(symbols: Self.symbols, seed: 3, interval: .seconds(1))
        // 20 minutes into an hour: the hour it is in is not served (later minutes are live).
        let startMinute: Int64 = 29_000_000
        let book = DemoCandles(walk: walk, startMinute: startMinute)
        let closes = try #require(walk.history(of: "ETH", minutes: 200))
        let first = walk.publishedPrices[try #require(Self.symbols.firstIndex(of: "ETH"))]
        #expect(closes.last == first)

        // Minute candles, newest first: the newest ends with the start minute, at the first price.
        let end = (startMinute + 1) * 60_000
        let minutes = book.rows(symbol: "ETH", resolution: 1, start: end - 120 * 60_000, end: end)
        #expect(minutes.count == 120)
        #expect(minutes[0][0] == Double(startMinute * 60))
        #expect(minutes.map { $0[4] } == Array(closes.suffix(120).reversed()))
        // Each opens at the close before it.
        #expect(minutes.dropLast().indices.allSatisfy { minutes[$0][1] == minutes[$0 + 1][4] })

        // An hour candle: the open of its first minute, the close of its last, high and low over all.
        let hours = book.rows(symbol: "ETH", resolution: 60, start: end - 3 * 3_600_000, end: end)
        let hour = try #require(hours.first)
        let inside = minutes.filter { $0[0] >= hour[0] && $0[0] < hour[0] + 3600 }
        #expect(inside.count == 60)
        #expect(hour[1] == inside.last?[1])
        #expect(hour[4] == inside.first?[4])
        #expect(hour[2] == inside.map { $0[2] }.max())
        #expect(hour[3] == inside.map { $0[3] }.min())
        // Only hours whose minutes all lie at or before the start minute.
        #expect(hours.allSatisfy { Int64($0[0]) / 60 + 60 <= startMinute + 1 })
    }

    @Test func unknownSymbolsAndRangesAfterTheStartHaveNone() {
        let book = DemoCandles(
            walk: RandomWalk(symbols: Self.symbols, seed: 3, interval: .seconds(1)), startMinute: 1_000)
        #expect(book.rows(symbol: "NOPE", resolution: 1, start: 0, end: 60_060_000).isEmpty)
        #expect(book.rows(symbol: "BTC", resolution: 1, start: 1_001 * 60_000, end: 1_100 * 60_000).isEmpty)
        #expect(book.rows(symbol: "BTC", resolution: 1, start: 0, end: 60_060_000).count == DemoCandles.maxCandles)
    }
}
