import AlertModel

/// The rate the outbox paces a sink by.
public enum PresetRates {
    /// The sink's own `rate`, else its kind's default (a webhook preset's published limit:
    /// `WebhookSpec.presetRate`).
    public static func effectiveRate(of sink: SinkDefinition) -> RateSpec? {
        sink.policy.rate ?? sink.kind.defaultRate
    }
}
