import AlertModel
import AlertPolicy
import Crypto

/// The two Alertmanager shapes (Docs/sinks.md#the-presets-exactly).
///
/// Every event is one alert with the labels `alertname` (the rule), `condition`, `source` (for
/// an event of a tick with a source, rules v3 §6) and `symbol` —
/// the same for an alert, its reminders and its resolved event, so Alertmanager sees one alert
/// that fires, is refreshed and ends — and the annotations `summary` (the message as a person
/// reads it, `AlertFormat.said`), `kind`, `reminder` (reminders only), `price`, `threshold`
/// and `value`.
enum AlertmanagerPayload {
    /// What Alertmanager's API takes at `POST /api/v2/alerts` (`postableAlerts` in its
    /// openapi.yaml): an array of alerts with `labels`, `annotations`, `startsAt`, `endsAt` and
    /// `generatorURL`. A resolved event ends its alert (`endsAt` is its time); an alert or a
    /// reminder leaves `endsAt` out, so Alertmanager keeps it firing for its `resolve_timeout`
    /// unless a resolved event ends it first.
    static func postable(_ alerts: [Alert]) -> String {
        "["
            + alerts.map { alert in
                let time = JSONString.quote(Timestamp.format(alert.time))
                var item = "{\"labels\":" + object(labels(alert)) + ",\"annotations\":" + object(annotations(alert))
                item += ",\"startsAt\":" + time
                if alert.kind == .resolved { item += ",\"endsAt\":" + time }
                return item + ",\"generatorURL\":\"\"}"
            }.joined(separator: ",") + "]"
    }

    /// Alertmanager's webhook `Message`, what Alertmanager sends *to* its receivers
    /// (notify/webhook/webhook.go: `template.Data` plus `version`, `groupKey`,
    /// `truncatedAlerts`), for receivers written for Alertmanager. Each alert's `status` is
    /// `resolved` for a resolved event (its `endsAt` the event's time) and `firing` otherwise
    /// (`endsAt` Go's zero time); the message's `status` is `resolved` when every alert is.
    /// `commonLabels` and `commonAnnotations` are the pairs all alerts share, as Alertmanager
    /// computes them; `groupLabels` holds `alertname` when they are all of one rule.
    static func webhook(_ alerts: [Alert], groupKey: String) -> String {
        let labelSets = alerts.map(Self.labels)
        let annotationSets = alerts.map(Self.annotations)
        let commonLabels = common(labelSets)
        let group = commonLabels.filter { $0.0 == "alertname" }
        let status = alerts.allSatisfy { $0.kind == .resolved } ? "resolved" : "firing"
        var out = "{\"version\":\"4\""
        out += ",\"groupKey\":" + JSONString.quote(groupKey)
        out += ",\"truncatedAlerts\":0,\"status\":\"\(status)\",\"receiver\":\"pricealert\""
        out += ",\"groupLabels\":" + object(group) + ",\"commonLabels\":" + object(commonLabels)
        out += ",\"commonAnnotations\":" + object(common(annotationSets))
        out += ",\"externalURL\":\"\",\"alerts\":["
        out += zip(alerts, zip(labelSets, annotationSets)).map { alert, pair in
            let resolved = alert.kind == .resolved
            let time = Timestamp.format(alert.time)
            var item = "{\"status\":\"" + (resolved ? "resolved" : "firing") + "\",\"labels\":" + object(pair.0)
            item += ",\"annotations\":" + object(pair.1) + ",\"startsAt\":" + JSONString.quote(time)
            item += ",\"endsAt\":" + JSONString.quote(resolved ? time : "0001-01-01T00:00:00Z")
            item += ",\"generatorURL\":\"\",\"fingerprint\":\"" + fingerprint(alert) + "\"}"
            return item
        }.joined(separator: ",")
        return out + "]}"
    }

    /// The `groupKey` of a single event's message: its rule.
    static func groupKey(_ alert: Alert) -> String {
        "{}:{alertname=\(JSONString.quote(alert.rule))}"
    }

    /// Label names sorted, as Alertmanager sorts them.
    static func labels(_ alert: Alert) -> [(String, String)] {
        [("alertname", alert.rule), ("condition", alert.condition)] + (alert.source.map { [("source", $0)] } ?? [])
            + [("symbol", alert.symbol)]
    }

    static func annotations(_ alert: Alert) -> [(String, String)] {
        var pairs = [("kind", alert.kind.rawValue), ("price", JSONNumber.format(alert.price))]
        if let n = alert.reminder { pairs.append(("reminder", String(n))) }
        pairs += [
            ("summary", AlertFormat.said(alert)), ("threshold", thresholdText(alert.threshold)),
            ("value", JSONNumber.format(alert.value))
        ]
        return pairs
    }

    /// 16 hex digits from the labels: the same for an alert, its reminders and its resolved event.
    private static func fingerprint(_ alert: Alert) -> String {
        // The source goes in only when there is one, so events without one keep their fingerprints.
        let symbol = alert.source.map { "\($0):\(alert.symbol)" } ?? alert.symbol
        let digest = SHA256.hash(data: Array("\(alert.rule)\u{ff}\(symbol)\u{ff}\(alert.condition)".utf8))
        return digest.prefix(8).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The pairs of the first list that every list holds.
    private static func common(_ lists: [[(String, String)]]) -> [(String, String)] {
        guard let first = lists.first else { return [] }
        return first.filter { pair in lists.allSatisfy { list in list.contains { $0 == pair } } }
    }

    private static func thresholdText(_ threshold: Threshold) -> String {
        if case .value(let x) = threshold { return JSONNumber.format(x) }
        return AlertFormat.thresholdJSON(threshold)
    }

    /// A JSON object of strings, keys in the order given.
    private static func object(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { JSONString.quote($0.0) + ":" + JSONString.quote($0.1) }.joined(separator: ",") + "}"
    }
}
