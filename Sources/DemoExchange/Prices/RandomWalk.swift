import Foundation
import SeededRandom

/// A seeded random walk over a fixed list of symbols. Step `k` depends only on the seed and
/// `k`: one generator draws for every symbol in list order, so the same seed replays exactly.
///
/// Each step moves a price by a small normal return; about one step in 40 per symbol is a
/// larger jump (2–6 %), so percentage and threshold rules fire within a short demo.
struct RandomWalk: PriceSource {
    let symbols: [String]
    let interval: Duration
    private(set) var prices: [Double]
    private var generator: SeededRandom
    private var started = false

    /// Start prices near real ones for the well-known coins (a demo should look familiar);
    /// the others are drawn log-uniformly between 0.001 and 200.
    static let knownStarts: [String: Double] = [
        "BTC": 43_000, "ETH": 2_300, "SOL": 60, "LTC": 70, "BNB": 240, "XRP": 0.6, "ADA": 0.3,
        "DOGE": 0.08, "DOT": 5, "LINK": 7, "AVAX": 12, "USDT": 1, "USDD": 1, "XAUT": 1_950,
    ]
    /// Stablecoins and gold barely move.
    static let calm: Set<String> = ["USDT", "USDD", "XAUT"]

    init(symbols: [String], seed: UInt64, interval: Duration) {
        self.symbols = symbols
        self.interval = interval
        var generator = SeededRandom(seed: seed)
        prices = symbols.map { symbol in
            let drawn = exp(generator.uniform(log(0.001)...log(200)))
            return Self.knownStarts[symbol] ?? drawn
        }
        self.generator = generator
    }

    /// The start prices as published (what the first step sends).
    var publishedPrices: [Double] { prices.map(Self.published) }

    /// The first call returns the start prices; each later call moves every price one step.
    mutating func next() -> PriceStep? {
        if started {
            for i in prices.indices {
                prices[i] *= exp(move(calm: Self.calm.contains(symbols[i])))
            }
        }
        started = true
        return PriceStep(prices: zip(symbols, prices).map { ($0, Self.published($1)) }, delay: interval)
    }

    /// A log return: 0.3 % standard deviation, or a 2–6 % jump either way.
    private mutating func move(calm: Bool) -> Double {
        let normal = generator.normal() * (calm ? 0.0002 : 0.003)
        let jumpRoll = generator.unit()
        let jumpSize = generator.uniform(0.02...0.06) * (generator.unit() < 0.5 ? -1 : 1)
        return calm || jumpRoll >= 0.025 ? normal : jumpSize
    }

    /// Six significant digits, as an exchange would quote them.
    static func published(_ price: Double) -> Double {
        let digits = max(0, 5 - Int(floor(log10(price))))
        let scale = pow(10, Double(min(digits, 12)))
        return (price * scale).rounded() / scale
    }
}
