import AlertModel
import Synchronization
import Testing

@testable import AlertPipeline

/// Flap damping of the feed's own alerts (Docs/observability.md#a-flapping-feed), at chosen times.
@Suite struct FeedFlapDampingTests {
    static let minute: Int64 = 60_000

    func stale(_ time: Int64, source: String = "btse") -> Alert {
        FeedAlert.stale(source: source, silentFor: .seconds(2), staleAfter: .seconds(1), at: time, notify: ["out"])
    }

    func recovered(_ time: Int64, source: String = "btse") -> Alert {
        FeedAlert.recovered(source: source, silentFor: .seconds(2), at: time, notify: ["out"])
    }

    /// One outage a while is delivered as it happens, change by change.
    @Test func occasionalOutagesPassAtOnce() {
        var damping = FeedFlapDamping()
        for hour in 0..<5 {
            let t = Int64(hour) * 60 * Self.minute
            #expect(damping.take(stale(t)) == .deliver)
            #expect(damping.take(recovered(t + Self.minute)) == .deliver)
        }
        #expect(damping.damped == 0)
        #expect(damping.due(now: 10 * 60 * Self.minute).isEmpty)
    }

    /// A change every 4 seconds: the first three are delivered, the rest held; the last one
    /// held is delivered once the feed has been steady for the hold-down, and only if it differs
    /// from the last delivered.
    @Test func aFlappingFeedIsHeldUntilSteady() {
        var damping = FeedFlapDamping()
        var delivered: [String] = []
        var held = 0
        for i in 0..<30 {
            let t = Int64(i) * 4_000
            let alert = i % 2 == 0 ? stale(t) : recovered(t)
            switch damping.take(alert) {
            case .deliver: delivered.append(alert.rule)
            case .held(let began):
                held += 1
                #expect(began == (held == 1))
            }
        }
        #expect(delivered == ["@feed-stale", "@feed-recovered", "@feed-stale"])
        let last: Int64 = 29 * 4_000
        #expect(damping.due(now: last + FeedFlapDamping.holdDown - 1).isEmpty)
        let released = damping.due(now: last + FeedFlapDamping.holdDown)
        #expect(released.map(\.rule) == ["@feed-recovered"])
        #expect(released.first?.time == last)
        #expect(damping.damped == 26)
        // Steady again: the next outage is delivered as it happens.
        #expect(damping.take(stale(last + 60 * Self.minute)) == .deliver)
    }

    /// A feed that ends flapping in the state last delivered: nothing more to say.
    @Test func endingInTheStateLastDeliveredSaysNothingMore() {
        let counted = Mutex(0)
        var damping = FeedFlapDamping { counted.withLock { $0 += 1 } }
        for i in 0..<6 { _ = damping.take(i % 2 == 0 ? stale(Int64(i) * 1_000) : recovered(Int64(i) * 1_000)) }
        _ = damping.take(stale(6_000))
        #expect(damping.flush().isEmpty)
        #expect(damping.damped == 4)
        #expect(counted.withLock { $0 } == 4)
    }

    /// At shutdown a held change that differs from the last delivered is delivered; sources are
    /// damped each on their own; other alerts pass.
    @Test func flushDeliversWhatPeopleDidNotHearAndSourcesAreApart() {
        var damping = FeedFlapDamping()
        for i in 0..<4 { _ = damping.take(i % 2 == 0 ? stale(Int64(i) * 1_000) : recovered(Int64(i) * 1_000)) }
        #expect(damping.isHolding)
        #expect(damping.take(stale(5_000, source: "kraken")) == .deliver)
        let price = Alert(
            rule: "btc-up", symbol: "BTC", time: 5_000, price: 1, condition: "price > 0", threshold: .value(0),
            value: 1, message: "", notify: ["out"])
        #expect(damping.take(price) == .deliver)
        #expect(damping.flush().map(\.rule) == ["@feed-recovered"])
        #expect(!damping.isHolding)
    }
}
