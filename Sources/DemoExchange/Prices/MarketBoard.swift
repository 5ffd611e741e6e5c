import AlertModel
import Foundation
import SeededRandom

/// The 24-hour figures `market_summary` reports for each spot market, moved by every price
/// step. The simulated day starts at a seeded open a few percent away from the start price,
/// so `percentageChange` is not zero from the first request.
struct MarketBoard: Sendable {
    struct Entry: Sendable, Equatable {
        var last: Double
        var open: Double
        var high: Double
        var low: Double
        /// Base-currency volume over the simulated day.
        var volume: Double

        /// Percent, as BTSE reports it (already ×100).
        var percentageChange: Double { (last - open) / open * 100 }

        /// The figures with the last price multiplied by `factor` (six significant digits, as
        /// published), and the day's range stretched to hold it.
        func wicked(_ factor: Double) -> Entry {
            var entry = self
            entry.last = RandomWalk.published(last * factor)
            entry.high = max(high, entry.last)
            entry.low = min(low, entry.last)
            return entry
        }
    }

    private(set) var entries: [String: Entry] = [:]

    init(symbols: [String], startPrices: [Double], seed: UInt64) {
        var generator = SeededRandom(seed: seed ^ 0x5EED_B0A2D)
        for (symbol, price) in zip(symbols, startPrices) {
            let open = price * exp(generator.uniform(-0.04...0.04))
            let volume = generator.uniform(1_000...5_000_000) / max(price, 0.01).squareRoot()
            entries[symbol] = Entry(
                last: price, open: open, high: max(open, price) * 1.005,
                low: min(open, price) * 0.995, volume: volume)
        }
    }

    /// Replaces `symbol`'s figures (a look-alike's wick).
    mutating func set(_ symbol: String, _ entry: Entry) {
        entries[symbol] = entry
    }

    /// Adds `symbol` at `price` unless it is on the board already.
    mutating func list(_ symbol: String, price: Double) {
        if entries[symbol] == nil {
            entries[symbol] = Entry(last: price, open: price, high: price, low: price, volume: 0)
        }
    }

    /// Records a step. Symbols not on the board (a replay may name any) are added.
    mutating func apply(_ step: PriceStep) {
        for (symbol, price) in step.prices {
            guard var entry = entries[symbol] else {
                entries[symbol] = Entry(last: price, open: price, high: price, low: price, volume: 0)
                continue
            }
            entry.volume += abs(price - entry.last) / max(entry.last, 1e-12) * entry.volume * 0.01
            entry.last = price
            entry.high = max(entry.high, price)
            entry.low = min(entry.low, price)
            entries[symbol] = entry
        }
    }
}
