import AlertModel
import AlertSinks
import Platform

/// `sinks test`: one sample alert through one sink, once (no retries), and one line saying what
/// happened and how long it took: `sink 'ops' (webhook): delivered in 12.3 ms`.
public enum SinkTest {
    /// What the one send gave: the line to print, and whether the sink took the alert.
    public struct Outcome: Sendable {
        public let line: String
        public let delivered: Bool
    }

    /// Sends `sampleAlert` (notifying `name`) through `sink`, whose definition is `definition`.
    public static func send(through sink: any Sink, named name: String, definition: SinkDefinition) async -> Outcome {
        let start = Monotonic.nanoseconds()
        let result = await sink.send(sampleAlert(notify: [name]))
        let elapsed = milliseconds(Double(Monotonic.nanoseconds() - start) / 1_000_000)
        let label = "sink \(UserText.single(name)) (\(definition.kind.typeName))"
        switch result {
        case .delivered:
            return Outcome(line: "\(label): delivered in \(elapsed)", delivered: true)
        case .retry(let reason, let after):
            let wait = after.map { " after \($0) ms" } ?? ""
            return Outcome(line: "\(label): failed in \(elapsed): \(reason) — would retry\(wait)", delivered: false)
        case .permanent(let reason):
            return Outcome(
                line: "\(label): failed in \(elapsed): \(reason) — permanent (not retried)", delivered: false)
        }
    }

    /// Rule `sinks-test`, BTC at a plausible price crossing a round threshold, now.
    static func sampleAlert(notify: [String]) -> Alert {
        Alert(
            rule: "sinks-test", symbol: "BTC", time: Wallclock.millis(), price: 100_012.5,
            condition: "price crossesAbove 100000", threshold: .value(100_000), value: 100_012.5,
            message: "pricealert test alert", notify: notify)
    }

    /// `12.3 ms` below a second, `5001 ms` above.
    static func milliseconds(_ value: Double) -> String {
        if value >= 1000 { return "\(Int(value.rounded())) ms" }
        return "\((value * 10).rounded() / 10) ms"
    }
}
