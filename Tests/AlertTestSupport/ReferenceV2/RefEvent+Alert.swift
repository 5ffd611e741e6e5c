public import AlertModel

extension RefEvent {
    /// An engine event in the reference's terms (message and condition text left out).
    public init(_ alert: Alert) {
        let kind: Kind
        switch alert.kind {
        case .alert: kind = .alert
        case .reminder: kind = .reminder
        case .resolved: kind = .resolved
        }
        let threshold: Threshold
        switch alert.threshold {
        case .value(let x): threshold = .number(x)
        case .range(let l, let h): threshold = .range(l, h)
        case .none: threshold = .none
        }
        self.init(
            kind, alert.rule, alert.symbol, alert.time, price: alert.price, value: alert.value,
            threshold: threshold, reminder: alert.reminder)
        occurrence = alert.occurrence
        source = alert.source
    }
}
