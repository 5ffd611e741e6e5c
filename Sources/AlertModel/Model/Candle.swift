/// One candle of an exchange's price history: the interval `[start, end)` in Unix epoch
/// milliseconds and its open, high, low and close prices.
public struct Candle: Sendable, Equatable {
    public var start: Int64
    public var end: Int64
    public var open: Double
    public var high: Double
    public var low: Double
    public var close: Double

    public init(start: Int64, end: Int64, open: Double, high: Double, low: Double, close: Double) {
        self.start = start
        self.end = end
        self.open = open
        self.high = high
        self.low = low
        self.close = close
    }

    /// True when the candle can seed history: `start < end` and every price finite and > 0.
    /// A source's parser skips candles that fail this.
    public var isUsable: Bool {
        start < end && [open, high, low, close].allSatisfy { $0.isFinite && $0 > 0 }
    }

    /// The history ticks the candle seeds (Docs/rules.md, seeded history): `(start, low)`,
    /// `(start, high)`, `(end − 1 ms, close)`, in that order, so the lowest comes first and the
    /// candle's last price is its close. `open` seeds nothing: the low and high already bound
    /// it, and the close is what the next candle starts from. No `change24h`.
    public func seededTicks(symbol: String) -> [Tick] {
        [
            Tick(time: start, symbol: symbol, price: low),
            Tick(time: start, symbol: symbol, price: high),
            Tick(time: end - 1, symbol: symbol, price: close)
        ]
    }
}
