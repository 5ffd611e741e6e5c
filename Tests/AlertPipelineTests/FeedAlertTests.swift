import Testing

@testable import AlertPipeline

/// `@feed-stale` / `@feed-recovered` of a rule-file source (rules v3 §6): they carry the
/// source, their symbol is its name upper-cased, and their ids name the source.
@Suite struct FeedAlertTests {
    @Test func aRuleFileSourcesFeedAlertsCarryItsName() {
        let stale = FeedAlert.stale(
            source: "kraken-eu", tag: "kraken-eu", silentFor: .seconds(75), staleAfter: .seconds(60), at: 1_000,
            notify: ["out"])
        #expect(stale.source == "kraken-eu")
        #expect(stale.symbol == "KRAKEN-EU")
        #expect(stale.id == "@feed-stale:kraken-eu:KRAKEN-EU:1000")
        let recovered = FeedAlert.recovered(
            source: "kraken-eu", tag: "kraken-eu", silentFor: .seconds(75), at: 2_000, notify: ["out"])
        #expect(recovered.source == "kraken-eu")
        #expect(recovered.id == "@feed-recovered:kraken-eu:KRAKEN-EU:2000")
        // --source's feed alerts have no source, as before.
        let plain = FeedAlert.stale(
            source: "btse", silentFor: .seconds(75), staleAfter: .seconds(60), at: 1_000, notify: [])
        #expect(plain.source == nil)
        #expect(plain.id == "@feed-stale:BTSE:1000")
    }
}
