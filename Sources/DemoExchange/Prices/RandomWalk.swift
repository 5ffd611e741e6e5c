import Foundation
import SeededRandom

/// A seeded random walk over a fixed list of symbols. Step `k` of a symbol depends only on the
/// seed, the symbol and `k`: each symbol draws from its own generator, so the same seed replays
/// exactly and a symbol's path does not depend on which other symbols are listed.
///
/// Each step moves a price by a normal log return whose size follows the symbol's volatility
/// per minute (`volatility`), scaled to the step's interval: the walk moves as much per minute
/// at any `interval`, and about as much as a real market does (a tenth of a percent a minute
/// for BTC, a few tenths for small coins).
struct RandomWalk: PriceGenerator {
    let symbols: [String]
    let interval: Duration
    private(set) var prices: [Double]
    private var generators: [SeededRandom]
    /// Per symbol, the standard deviation of one step's log return.
    private let stepDeviations: [Double]
    private let seed: UInt64
    private var started = false

    /// Start prices near real ones for the well-known coins (a demo should look familiar);
    /// the others are drawn log-uniformly between 0.001 and 200.
    static let knownStarts: [String: Double] = [
        "BTC": 43_000, "ETH": 2_300, "SOL": 60, "LTC": 70, "BNB": 240, "XRP": 0.6, "ADA": 0.3,
        "DOGE": 0.08, "DOT": 5, "LINK": 7, "AVAX": 12, "USDT": 1, "USDD": 1, "XAUT": 1_950
    ]
    /// Stablecoins and gold barely move.
    static let calm: Set<String> = ["USDT", "USDD", "XAUT"]

    /// The standard deviation of a symbol's log return over one minute.
    static func volatility(_ symbol: String) -> Double {
        switch symbol {
        case _ where calm.contains(symbol): return 0.000_05
        case "BTC": return 0.0010
        case "ETH": return 0.0013
        case "SOL": return 0.0020
        default: return 0.0025
        }
    }

    init(symbols: [String], seed: UInt64, interval: Duration) {
        self.symbols = symbols
        self.interval = interval
        self.seed = seed
        var generator = SeededRandom(seed: seed)
        prices = symbols.map { symbol in
            let drawn = exp(generator.uniform(log(0.001)...log(200)))
            return Self.knownStarts[symbol] ?? drawn
        }
        generators = symbols.map { SeededRandom(seed: Self.symbolSeed(seed, $0)) }
        let minutes = Double(interval.components.seconds) / 60 + Double(interval.components.attoseconds) / 60e18
        stepDeviations = symbols.map { Self.volatility($0) * minutes.squareRoot() }
    }

    /// The start prices as published (what the first step sends).
    var publishedPrices: [Double] { prices.map(Self.published) }

    /// The first call returns the start prices; each later call moves every price one step.
    mutating func next() -> PriceStep? {
        if started {
            for i in prices.indices {
                prices[i] *= exp(generators[i].normal() * stepDeviations[i])
            }
        }
        started = true
        return PriceStep(prices: zip(symbols, prices).map { ($0, Self.published($1)) }, delay: interval)
    }

    /// The published price at the close of each of the `count` minutes before the walk's
    /// first step, oldest first; the last is the start price. The market as it was before
    /// anyone listened: walked backwards from the start, one minute's volatility per minute,
    /// from a generator of its own (so the walk forward is the same with or without it).
    func history(minutes count: Int) -> [(symbol: String, closes: [Double])] {
        guard count > 0 else { return [] }
        return symbols.indices.map { i in (symbols[i], closes(ofSymbolAt: i, minutes: count)) }
    }

    /// `history(minutes:)` of one symbol; nil for a symbol the walk does not price.
    func history(of symbol: String, minutes count: Int) -> [Double]? {
        guard count > 0, let i = symbols.firstIndex(of: symbol) else { return nil }
        return closes(ofSymbolAt: i, minutes: count)
    }

    private func closes(ofSymbolAt i: Int, minutes count: Int) -> [Double] {
        var generator = SeededRandom(seed: Self.symbolSeed(seed, symbols[i]) ^ 0x4849_5354_4F52_5921)
        var price = prices[i]
        var closes = [Self.published(price)]
        closes.reserveCapacity(count)
        for _ in 1..<count {
            price *= exp(-generator.normal() * Self.volatility(symbols[i]))
            closes.append(Self.published(price))
        }
        return closes.reversed()
    }

    /// A symbol's generator seed: `seed` mixed with the FNV-1a hash of the symbol's bytes.
    static func symbolSeed(_ seed: UInt64, _ symbol: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in symbol.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return seed ^ hash
    }

    /// Six significant digits, as an exchange would quote them.
    static func published(_ price: Double) -> Double {
        let digits = max(0, 5 - Int(floor(log10(price))))
        let scale = pow(10, Double(min(digits, 12)))
        return (price * scale).rounded() / scale
    }
}
