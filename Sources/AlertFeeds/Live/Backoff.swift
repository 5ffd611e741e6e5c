/// Exponential backoff with full jitter: the n-th retry waits a random time in
/// `[0, min(maximum, base · 2ⁿ)]`, so many clients that lost the same server do not come back
/// at the same moment. A wait the server asked for (`Retry-After`) is honoured as a minimum.
public struct Backoff: Sendable {
    public var base: Duration
    public var maximum: Duration
    public private(set) var attempt = 0

    public init(base: Duration = .milliseconds(500), maximum: Duration = .seconds(60)) {
        self.base = base
        self.maximum = maximum
    }

    /// The wait before the next attempt; counts the attempt.
    public mutating func next<R: RandomNumberGenerator>(atLeast floor: Duration = .zero, using rng: inout R) -> Duration {
        let exponent = min(attempt, 30)
        attempt += 1
        let ceiling = min(maximum, base * (1 << exponent))
        let ceilingMs = max(ceiling.milliseconds, 1)
        let wait = Duration.milliseconds(Int64.random(in: 0...ceilingMs, using: &rng))
        return max(wait, floor)
    }

    public mutating func next(atLeast floor: Duration = .zero) -> Duration {
        var rng = SystemRandomNumberGenerator()
        return next(atLeast: floor, using: &rng)
    }

    /// After a connection that delivered prices: start again from `base`.
    public mutating func reset() {
        attempt = 0
    }
}
