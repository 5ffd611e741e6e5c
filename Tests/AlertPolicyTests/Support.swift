import AlertModel
import AlertPolicy

/// An alert of `rule` on `symbol` at `time` (epoch ms) that notifies `sinks`.
func alert(_ rule: String, _ symbol: String = "BTC-USD", at time: Int64, sinks: [String] = ["chat"]) -> Alert {
    Alert(
        rule: rule, symbol: symbol, time: time, price: 1, condition: "price above 1", threshold: .value(1),
        value: 1, message: "\(rule) \(symbol)", notify: sinks)
}

/// Epoch ms of an ISO 8601 UTC time such as `2026-03-29T05:30:00.000Z`.
func utc(_ text: String) -> Int64 {
    Timestamp.parse(Array(text.utf8))!
}

/// Each delivery's event ids, in order.
func ids(_ deliveries: [Delivery]) -> [[String]] {
    deliveries.map { $0.events.map(\.id) }
}

/// The deliveries among `decisions`, for `sink`.
func deliveries(_ decisions: [PolicyDecision], sink: String = "chat") -> [Delivery] {
    decisions.compactMap {
        if case .deliver(sink, let delivery, _) = $0 { return delivery }
        return nil
    }
}

let second: Int64 = 1_000
let minute: Int64 = 60_000
