import AlertModel
import Platform

/// When to try a failed delivery again, and when to give up: the shared `Backoff` (full jitter
/// up to `base · 2^(attempts-1)`, capped, never sooner than the receiver's `Retry-After`), until
/// the row is older than `maxAge`.
public struct RetryPolicy: Sendable, Equatable {
    public var backoff: Backoff
    /// Milliseconds.
    public var maxAge: Int64

    /// Milliseconds. Defaults: 1 s base, 5 min cap, 24 h maximum age.
    public init(base: Int64 = 1_000, cap: Int64 = 300_000, maxAge: Int64 = 86_400_000) {
        self.backoff = Backoff(base: .milliseconds(base), cap: .milliseconds(cap))
        self.maxAge = maxAge
    }

    /// A sink's own `retry` settings over this policy. A `backoff` longer than the cap raises the
    /// cap to it (the first retry waits up to `backoff`).
    public func applying(_ settings: DeliverySettings) -> RetryPolicy {
        let base = settings.backoff ?? backoff.base.milliseconds
        return RetryPolicy(
            base: base, cap: settings.maxBackoff ?? max(backoff.cap.milliseconds, base),
            maxAge: settings.maxAge ?? maxAge)
    }

    /// The delay (ms) before the next attempt after `attempts` failed ones (1 after the first);
    /// `retryAfter` (ms) is a minimum. `random` picks in `0...upper`, injectable for tests.
    public func delay(
        attempts: Int, retryAfter: Int64?,
        random: (ClosedRange<Int64>) -> Int64 = { Int64.random(in: $0) }
    ) -> Int64 {
        backoff.delay(afterFailures: attempts, atLeast: .milliseconds(retryAfter ?? 0), random: random).milliseconds
    }

    /// True when a row created at `createdAt` is too old to try again at `now`.
    public func givesUp(createdAt: Int64, now: Int64) -> Bool {
        now - createdAt >= maxAge
    }

    /// `24h`, `90s`, `250ms`: the maximum age for dead-letter reasons.
    public static func describe(millis: Int64) -> String {
        if millis >= 3_600_000, millis % 3_600_000 == 0 { return "\(millis / 3_600_000)h" }
        if millis >= 60_000, millis % 60_000 == 0 { return "\(millis / 60_000)m" }
        if millis >= 1_000, millis % 1_000 == 0 { return "\(millis / 1_000)s" }
        return "\(millis)ms"
    }
}
