/// One frame's worth of prices, and how long to wait before the next.
struct PriceStep: Sendable, Equatable {
    /// `(symbol, price)` in frame order; a symbol appears at most once.
    var prices: [(symbol: String, price: Double)]
    /// Pause after this step.
    var delay: Duration

    static func == (a: PriceStep, b: PriceStep) -> Bool {
        a.delay == b.delay && a.prices.elementsEqual(b.prices) { $0.symbol == $1.symbol && $0.price == $1.price }
    }
}

/// What makes the demo exchange's prices, step by step: a random walk or a recorded file.
/// `nil` means no more prices. (Exchanges the feed reads are `AlertFeeds.PriceSource`.)
protocol PriceGenerator: Sendable {
    mutating func next() -> PriceStep?
}
