import CoreMetrics

/// The policy stages' counters, `pricealert_events_silenced_total` and
/// `pricealert_feed_alerts_damped_total`, through swift-metrics: with no backend bootstrapped
/// (`replay`, `check`) they do nothing.
public enum PolicyMetrics {
    public static let silencedName = "pricealert_events_silenced_total"
    public static let feedAlertsDampedName = "pricealert_feed_alerts_damped_total"

    /// One `@feed-stale`/`@feed-recovered` of a flapping feed that was not delivered.
    @Sendable public static func feedAlertDamped() {
        Counter(label: feedAlertsDampedName).increment()
    }

    /// One event a silence kept from every sink.
    public static func silenced() {
        Counter(label: silencedName).increment()
    }
}
