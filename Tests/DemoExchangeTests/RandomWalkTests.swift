import Foundation
import Testing

@testable import DemoExchange

/// The simulated market moves like a real one: per minute, and whatever the interval.
@Suite("random walk")
struct RandomWalkTests {
    static let symbols = MarketCatalog.embedded.spot.map(\.symbol)

    /// The well-known coins, a stablecoin and the first 20 others (each symbol walks on its own).
    static let sample = ["BTC", "ETH", "SOL", "USDT"] + symbols.filter { RandomWalk.knownStarts[$0] == nil }.prefix(20)

    /// Each sampled symbol's largest move over any minute of 20 minutes, in percent (absolute).
    func largestMinuteMoves(interval: Duration, stepsPerMinute: Int) -> [String: Double] {
        var walk = RandomWalk(symbols: Self.sample, seed: 1, interval: interval)
        var paths: [[Double]] = Array(repeating: [], count: Self.sample.count)
        for _ in 0...(20 * stepsPerMinute) {
            let step = walk.next()!
            for (i, entry) in step.prices.enumerated() { paths[i].append(entry.price) }
        }
        var largest: [String: Double] = [:]
        for (i, path) in paths.enumerated() {
            largest[Self.sample[i]] = stride(from: stepsPerMinute, to: path.count, by: 1)
                .map { abs(path[$0] / path[$0 - stepsPerMinute] - 1) * 100 }.max()
        }
        return largest
    }

    /// Over 20 minutes, no symbol moves 2 % in a minute (a real market does a few times a year),
    /// BTC stays under half a percent, and the majors do move (a dead market shows nothing).
    @Test(arguments: [(Duration.seconds(1), 60), (Duration.milliseconds(200), 300)])
    func minuteMovesArePlausible(interval: Duration, stepsPerMinute: Int) {
        let moves = largestMinuteMoves(interval: interval, stepsPerMinute: stepsPerMinute)
        let wild = moves.filter { $0.value >= 2 }
        #expect(wild.isEmpty, "\(wild)")
        #expect(moves["BTC"]! < 0.5, "\(moves["BTC"]!)")
        for symbol in ["BTC", "ETH", "SOL"] { #expect(moves[symbol]! > 0.05, "\(symbol): \(moves[symbol]!)") }
        #expect(moves["USDT"]! < 0.05)
    }

    /// The minutes before the first step end at the start price and move like the walk.
    @Test func historyEndsAtTheStartPrice() {
        let walk = RandomWalk(symbols: Self.symbols, seed: 1, interval: .seconds(1))
        let history = walk.history(minutes: 6)
        #expect(history.map(\.symbol) == Self.symbols)
        for ((symbol, closes), start) in zip(history, walk.publishedPrices) {
            #expect(closes.count == 6)
            #expect(closes.last == start, "\(symbol)")
            for (a, b) in zip(closes, closes.dropFirst()) { #expect(abs(b / a - 1) < 0.02, "\(symbol): \(closes)") }
        }
        #expect(walk.history(minutes: 0).isEmpty)
    }

    /// A symbol's path depends on the seed and the symbol alone, not on the symbols beside it.
    @Test func aSymbolsPathIsItsOwn() {
        var alone = RandomWalk(symbols: ["BTC"], seed: 3, interval: .seconds(1))
        var among = RandomWalk(symbols: ["ETH", "BTC", "SOL"], seed: 3, interval: .seconds(1))
        for _ in 0..<100 {
            #expect(alone.next()!.prices[0].price == among.next()!.prices[1].price)
        }
    }
}
