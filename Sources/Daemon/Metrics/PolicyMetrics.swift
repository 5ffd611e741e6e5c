import CoreMetrics

/// The policy stages' counter, `pricealert_events_silenced_total`, through swift-metrics: with
/// no backend bootstrapped (`replay`, `check`) it does nothing.
public enum PolicyMetrics {
    public static let silencedName = "pricealert_events_silenced_total"

    /// One event a silence kept from every sink.
    public static func silenced() {
        Counter(label: silencedName).increment()
    }
}
