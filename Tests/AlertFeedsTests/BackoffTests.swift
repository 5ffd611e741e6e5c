import Platform
import Testing

/// The one backoff, as feeds use it (counting their own failures) and as sinks use it (by the
/// number of attempts of a row).
@Suite struct BackoffTests {
    @Test func aFeedsWaitsDoubleUpToTheCapAndStartAgainAfterASuccess() {
        var backoff = Backoff(base: .milliseconds(500), cap: .seconds(60))
        let ceilings = (1...10).map { backoff.ceiling(afterFailures: $0) }
        #expect(
            ceilings.map(\.milliseconds) == [500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000])
        for _ in 0..<200 {
            let wait = backoff.next()
            #expect(wait >= .zero && wait <= backoff.ceiling(afterFailures: backoff.failures))
        }
        #expect(backoff.failures == 200)
        backoff.reset()
        #expect(backoff.failures == 0)
        #expect(backoff.next() <= .milliseconds(500))
    }

    @Test func theWaitIsJitteredAndRetryAfterIsAMinimum() {
        let backoff = Backoff(base: .seconds(1), cap: .seconds(300))
        #expect(backoff.delay(afterFailures: 3, random: { $0.upperBound }) == .seconds(4))
        #expect(backoff.delay(afterFailures: 3, random: { $0.lowerBound }) == .zero)
        #expect(backoff.delay(afterFailures: 3, atLeast: .seconds(9), random: { $0.upperBound }) == .seconds(9))
        #expect(backoff.delay(afterFailures: 1_000, random: { $0.upperBound }) == .seconds(300))
        // Never a bound of zero: a wait of at least some jitter even for a tiny base.
        #expect(Backoff(base: .zero, cap: .zero).ceiling(afterFailures: 1) == .milliseconds(1))
    }
}
