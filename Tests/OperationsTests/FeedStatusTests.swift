import Operations
import Testing

/// `/healthz` and the watchdog's questions, at chosen instants.
@Suite("feed status")
struct FeedStatusTests {
    let start = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant {
        start + .milliseconds(Int(seconds * 1000))
    }

    @Test func startingIsNeitherFreshNorHealthy() {
        let status = FeedStatus(staleAfter: .seconds(10), now: start)
        #expect(status.health(now: at(1)) == .unhealthy(reason: "starting: loading the market list"))
        status.marketsLoaded(3)
        #expect(status.freshness(now: at(1)) == .unhealthy(reason: "starting: connecting to the feed"))
        #expect(!status.isReady)
    }

    @Test func pricesWithinTheLimitAreHealthyAndSilenceIsNot() {
        let status = FeedStatus(staleAfter: .seconds(10), now: start)
        #expect(status.connected(now: at(1)))
        #expect(!status.connected(now: at(2))) // only the first connect completes startup
        #expect(status.health(now: at(5)) == .healthy) // a fresh connection gets its own limit
        status.pricesArrived(now: at(6))
        #expect(status.health(now: at(15)) == .healthy)
        #expect(status.secondsSinceLastPrices(now: at(15)) == 9)
        #expect(status.freshness(now: at(16)) == .unhealthy(reason: "stale: no prices for 10 s"))
    }

    /// Prices that come but are all refused as timed ahead of the local clock leave the rules
    /// blind: unhealthy after the stale limit of them, healthy again with the first taken tick.
    @Test func ticksAllRefusedForTheStaleLimitAreUnhealthy() {
        let status = FeedStatus(staleAfter: .seconds(10), now: start)
        status.connected(now: at(0))
        for second in 1...12 {
            status.pricesArrived(now: at(Double(second)))
            status.ticksEvaluated(allRefused: true, now: at(Double(second)))
        }
        #expect(status.health(now: at(10)) == .healthy)
        #expect(
            status.health(now: at(12))
                == .unhealthy(
                    reason: "every tick for 11 s was timed more than --max-tick-skew ahead of the local clock"))
        #expect(status.freshness(now: at(12)) == .healthy) // not wedged: a restart would not help
        status.ticksEvaluated(allRefused: false, now: at(13))
        #expect(status.health(now: at(13)) == .healthy)
    }

    @Test func aDisconnectIsUnhealthyButStillFreshForTheWatchdog() {
        let status = FeedStatus(staleAfter: .seconds(10), now: start)
        status.connected(now: at(0))
        status.pricesArrived(now: at(1))
        status.disconnected(reason: "connection closed by the server")
        #expect(status.health(now: at(2)) == .unhealthy(reason: "disconnected: connection closed by the server"))
        #expect(status.freshness(now: at(2)) == .healthy)
        #expect(
            status.freshness(now: at(12))
                == .unhealthy(reason: "stale: no prices for 11 s (disconnected: connection closed by the server)"))
        status.connected(now: at(3))
        status.pricesArrived(now: at(3))
        #expect(status.health(now: at(4)) == .healthy)
    }

    @Test func aFeedDeclaredStaleStaysUnhealthyUntilPricesArrive() {
        let status = FeedStatus(staleAfter: .seconds(10), now: start)
        status.connected(now: at(0))
        status.pricesArrived(now: at(1))
        status.stale(now: at(2))
        #expect(status.health(now: at(3)) == .unhealthy(reason: "stale: no prices for 2 s"))
        status.pricesArrived(now: at(4))
        #expect(status.health(now: at(5)) == .healthy)
        status.stopping()
        #expect(status.health(now: at(5)) == .unhealthy(reason: "stopping"))
    }

    /// A fatal fault (the state folder deleted) makes `/healthz` fail from then on, whatever the feed does.
    @Test func aFatalFaultIsUnhealthyFromThenOn() {
        let status = FeedStatus(staleAfter: .seconds(10), now: start)
        status.connected(now: at(1))
        status.pricesArrived(now: at(2))
        #expect(status.health(now: at(3)) == .healthy)
        status.failed("state folder st was deleted or moved while in use: st/pricealert.lock was deleted")
        status.pricesArrived(now: at(4))
        #expect(
            status.health(now: at(5))
                == .unhealthy(
                    reason: "state folder st was deleted or moved while in use: st/pricealert.lock was deleted"))
    }
}

/// Several feeds (the `--source` feed and the rule files' sources): `/healthz` is healthy only
/// while every feed is, and names each; the watchdog is fed while any feed is fresh.
extension FeedStatusTests {
    @Test func eachFeedHasItsOwnHealthAndTheWholeNeedsThemAll() {
        let status = FeedStatus(now: start)
        status.addFeed("alpha", staleAfter: .seconds(10), now: start)
        status.addFeed("beta", staleAfter: .seconds(10), now: start)
        #expect(status.connected(feed: "alpha", now: at(1)))
        #expect(!status.connected(feed: "beta", now: at(1))) // startup completed with the first
        status.pricesArrived(feed: "alpha", now: at(2))
        status.pricesArrived(feed: "beta", now: at(2))
        #expect(status.health(now: at(3)) == .healthy)

        status.disconnected(reason: "connection refused", feed: "beta")
        #expect(
            status.health(now: at(4))
                == .unhealthy(reason: "1 of 2 sources unhealthy: beta: disconnected: connection refused"))
        #expect(
            status.sources(now: at(4)).map(\.verdict) == [
                .healthy, .unhealthy(reason: "disconnected: connection refused")
            ])
        #expect(status.sources(now: at(4)).map(\.name) == ["alpha", "beta"])

        // beta silent past its limit, alpha fresh: not wedged, the watchdog goes on.
        status.pricesArrived(feed: "alpha", now: at(13))
        #expect(status.freshness(now: at(14)) == .healthy)
        #expect(status.secondsSinceLastPrices(feed: "beta", now: at(14)) == 12)
        // Both silent: the watchdog is withheld, with each reason.
        #expect(
            status.freshness(now: at(24))
                == .unhealthy(
                    reason:
                        "2 of 2 sources unhealthy: alpha: stale: no prices for 11 s; beta: stale: no prices for 22 s (disconnected: connection refused)"
                ))

        // A removed feed no longer counts.
        status.removeFeed("beta")
        status.pricesArrived(feed: "alpha", now: at(25))
        #expect(status.health(now: at(26)) == .healthy)
        #expect(status.feedNames == ["alpha"])
    }
}
