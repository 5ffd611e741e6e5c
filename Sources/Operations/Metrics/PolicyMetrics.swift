import CoreMetrics

/// The policy stages' metrics through swift-metrics: with no backend bootstrapped (`replay`,
/// `check`) they do nothing.
public enum PolicyMetrics {
    public static let silencedName = "pricealert_events_silenced_total"
    public static let heldTotalName = "pricealert_events_held_total"
    public static let heldName = "pricealert_events_held"
    public static let openDigestsName = "pricealert_digests_open"
    public static let inDigestsName = "pricealert_digest_events"
    public static let feedAlertsDampedName = "pricealert_feed_alerts_damped_total"

    /// One `@feed-stale`/`@feed-recovered` of a flapping feed that was not delivered.
    @Sendable public static func feedAlertDamped() {
        Counter(label: feedAlertsDampedName).increment()
    }

    /// One event a silence kept from every sink.
    public static func silenced() {
        Counter(label: silencedName).increment()
    }

    /// One event quiet hours held for one sink.
    public static func held() {
        Counter(label: heldTotalName).increment()
    }

    /// What the stages keep now: events held by quiet hours, open digests and the events in them.
    public static func waiting(held: Int, openDigests: Int, inDigests: Int) {
        Gauge(label: heldName).record(held)
        Gauge(label: openDigestsName).record(openDigests)
        Gauge(label: inDigestsName).record(inDigests)
    }
}
