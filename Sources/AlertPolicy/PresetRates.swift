import AlertModel

/// The rate a webhook preset gets when its sink has no `rate` key: the platform's published
/// limit for one chat, channel or topic (sources in Docs/sinks.md#preset-rates).
public enum PresetRates {
    public static func rate(for preset: String) -> RateSpec? {
        switch preset {
        case "telegram": return RateSpec(count: 1, per: 1_000)     // one message per second per chat
        case "slack": return RateSpec(count: 1, per: 1_000)        // incoming webhooks: one per second
        case "discord": return RateSpec(count: 1, per: 2_000)      // 30 per minute per channel, 5 per 2 s per webhook
        case "ntfy": return RateSpec(count: 60, per: 300_000)      // a burst of 60, then one per 5 s
        default: return nil
        }
    }

    /// The sink's own `rate`, else its preset's.
    public static func effectiveRate(of sink: SinkDefinition) -> RateSpec? {
        if let rate = sink.policy.rate { return rate }
        if case .webhook(let spec) = sink.kind, spec.template == nil { return rate(for: spec.preset) }
        return nil
    }
}
