import AlertModel

/// Alerts about the feed itself: users must learn that their rules are blind. They have the
/// alert event's shape (Docs/rules.md#the-alert-event); their rule names start with `@`, which
/// no rule id can, so they never clash.
enum FeedAlert {
    static let staleRule = "@feed-stale"
    static let recoveredRule = "@feed-recovered"

    /// `value` is the silence in seconds; `threshold` the configured limit in seconds. `tag`:
    /// the rule-file source's name, which the alert carries as its `source` (rules v3 §6); nil
    /// for `--source`.
    static func stale(
        source: String, tag: String? = nil, silentFor: Duration, staleAfter: Duration, at time: Int64,
        notify: [String]
    ) -> Alert {
        let seconds = Double(silentFor.milliseconds) / 1000
        let limit = Double(staleAfter.milliseconds) / 1000
        var alert = Alert(
            rule: staleRule, symbol: source.uppercased(), time: time, price: 0,
            condition: "feed silent for \(JSONNumber.format(limit))s", threshold: .value(limit),
            value: seconds,
            message:
                "\(source) feed: no prices for \(JSONNumber.format(seconds.rounded()))s; alerts are blind until it recovers",
            notify: notify)
        alert.source = tag
        return alert
    }

    static func recovered(
        source: String, tag: String? = nil, silentFor: Duration, at time: Int64, notify: [String]
    ) -> Alert {
        let seconds = Double(silentFor.milliseconds) / 1000
        var alert = Alert(
            rule: recoveredRule, symbol: source.uppercased(), time: time, price: 0,
            condition: "feed recovered", threshold: .value(0), value: seconds,
            message: "\(source) feed: prices again after \(JSONNumber.format(seconds.rounded()))s of silence",
            notify: notify)
        alert.source = tag
        return alert
    }
}
