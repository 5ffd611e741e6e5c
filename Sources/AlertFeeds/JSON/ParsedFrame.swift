/// A usable price: finite and greater than zero (Docs/rules.md#ticks); anything else skips the entry.
@inline(__always)
func usablePrice(_ price: Double?) -> Double? {
    guard let price, price.isFinite, price > 0 else { return nil }
    return price
}

/// What a frame parser found, before it becomes a `FeedFrame`: the ticks and how many
/// entries were skipped for a null, missing or non-positive price (or a missing symbol).
public struct ParsedFrame: Sendable, Equatable {
    public var frame: FeedFrame
    public var skipped: Int

    public init(_ frame: FeedFrame, skipped: Int = 0) {
        self.frame = frame
        self.skipped = skipped
    }
}
