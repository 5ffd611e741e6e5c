import Metrics

/// Delivery outcomes as a swift-metrics counter, `pricealert_deliveries_total{sink, outcome}`,
/// so whatever metrics backend the process bootstraps (Prometheus for `run --listen`) sees them;
/// without one they cost next to nothing. Labelled by sink *name*: never a URL or a secret.
public enum DeliveryMetric {
    public static let name = "pricealert_deliveries_total"

    public enum Outcome: String, Sendable, CaseIterable {
        /// The sink took the alert.
        case delivered
        /// An outbox attempt failed and will be tried again.
        case retried
        /// An outbox row given up on: now a dead letter.
        case dead
        /// A direct (stdout, file) delivery failed; direct sinks are not retried.
        case failed
    }

    public static func count(sink: String, _ outcome: Outcome, by amount: Int = 1) {
        guard amount > 0 else { return }
        Counter(label: name, dimensions: [("sink", sink), ("outcome", outcome.rawValue)]).increment(by: amount)
    }
}
