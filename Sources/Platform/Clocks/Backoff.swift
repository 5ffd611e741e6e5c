/// Exponential backoff with full jitter, the one backoff of pricealert: feeds reconnecting and
/// sinks retrying a delivery both wait by it. The n-th wait in a row (n = 1 after the first
/// failure) is a random time in `[0, min(cap, base · 2ⁿ⁻¹)]` (the bound at least 1 ms), so many
/// clients that lost the same server do not come back at the same moment, and never less than a
/// wait the server asked for (`Retry-After`).
public struct Backoff: Sendable, Equatable {
    public var base: Duration
    public var cap: Duration
    /// Waits handed out since the last success (`next`, `reset`); `delay` does not count.
    public private(set) var failures = 0

    public init(base: Duration, cap: Duration) {
        self.base = base
        self.cap = cap
    }

    /// The upper bound of the wait after `failures` failures in a row: `base · 2^(failures-1)`,
    /// no more than `cap`, at least 1 ms. Doubling stops at 2⁴⁰ (no overflow, long past any cap).
    public func ceiling(afterFailures failures: Int) -> Duration {
        let shift = min(max(failures - 1, 0), 40)
        let (scaled, overflow) = base.milliseconds.multipliedReportingOverflow(by: Int64(1) << shift)
        let upper = overflow ? cap.milliseconds : min(cap.milliseconds, scaled)
        return .milliseconds(max(upper, 1))
    }

    /// The wait after `failures` failures in a row, never less than `floor` (a `Retry-After`).
    /// `random` picks in `0...ceiling` in whole milliseconds; injectable for tests.
    public func delay(
        afterFailures failures: Int, atLeast floor: Duration = .zero,
        random: (ClosedRange<Int64>) -> Int64 = { Int64.random(in: $0) }
    ) -> Duration {
        let wait = Duration.milliseconds(random(0...ceiling(afterFailures: failures).milliseconds))
        return max(wait, floor)
    }

    /// The wait before the next attempt of a caller that keeps its own count (a feed's
    /// reconnects); counts the failure.
    public mutating func next(atLeast floor: Duration = .zero) -> Duration {
        failures += 1
        return delay(afterFailures: failures, atLeast: floor)
    }

    /// After an attempt that succeeded (a connection that delivered prices): start again from `base`.
    public mutating func reset() {
        failures = 0
    }
}
