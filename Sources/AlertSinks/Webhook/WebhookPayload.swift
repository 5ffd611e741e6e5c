import AlertCore
import AlertPolicy
import Crypto

/// What a webhook sends for one alert: the body and the headers that go with it, by preset.
///
/// - `json`: the alert event (`AlertFormat.json`, Docs/rules.md#the-alert-event), `application/json`.
/// - `slack`: `{"text": MESSAGE}`; `discord`: `{"content": MESSAGE}`.
/// - `ntfy`: the message as plain text, with `Title: pricealert: RULE SYMBOL` and
///   `Tags: chart_with_upwards_trend` (ntfy publishes to the topic in the URL).
/// - `telegram`: `{"chat_id": ID, "text": MESSAGE}`; the chat id comes from the URL's
///   `chat_id` query parameter, which `WebhookSink` moves into the body.
/// - `alertmanager`: an Alertmanager webhook payload, version "4", with one firing alert.
/// - `template`: the rule file's `template` filled with the placeholders of Docs/rules.md#messages,
///   `text/plain`.
public enum WebhookPayload: Sendable, Equatable {
    case json
    case slack
    case discord
    case ntfy
    case telegram(chatID: String)
    case alertmanager
    case template(String)

    /// The body and its default headers (configured headers of the same name replace these).
    public func render(_ alert: Alert) -> (body: String, headers: [(name: String, value: String)]) {
        let json = [(name: "Content-Type", value: "application/json")]
        switch self {
        case .json:
            return (AlertFormat.json(alert), json)
        case .slack:
            return ("{\"text\":\(JSONString.quote(alert.message))}", json)
        case .discord:
            return ("{\"content\":\(JSONString.quote(alert.message))}", json)
        case .ntfy:
            return (alert.message, [(name: "Content-Type", value: "text/plain; charset=utf-8"),
                                    (name: "Title", value: "pricealert: \(alert.rule) \(alert.symbol)"),
                                    (name: "Tags", value: "chart_with_upwards_trend")])
        case .telegram(let chatID):
            return ("{\"chat_id\":\(JSONString.quote(chatID)),\"text\":\(JSONString.quote(alert.message))}", json)
        case .alertmanager:
            return (Self.alertmanager(alert), json)
        case .template(let template):
            let body = MessageTemplate.render(template, rule: alert.rule, symbol: alert.symbol, time: alert.time,
                                              price: alert.price, condition: alert.condition,
                                              threshold: alert.threshold, value: alert.value)
            return (body, [(name: "Content-Type", value: "text/plain; charset=utf-8")])
        }
    }

    /// The body and default headers for a digest (Docs/sinks.md#digests): `json` the digest
    /// object; `alertmanager` one payload with every event as an alert; the chat presets one
    /// message listing at most `DigestFormat.chatLines` events and "and N more"; `template` the
    /// template filled for each listed event, one per line, in the same frame.
    public func render(_ digest: AlertPolicy.Digest) -> (body: String, headers: [(name: String, value: String)]) {
        let json = [(name: "Content-Type", value: "application/json")]
        switch self {
        case .json:
            return (DigestFormat.json(digest), json)
        case .slack:
            return ("{\"text\":\(JSONString.quote(DigestFormat.chatText(digest)))}", json)
        case .discord:
            return ("{\"content\":\(JSONString.quote(DigestFormat.chatText(digest)))}", json)
        case .ntfy:
            return (DigestFormat.chatText(digest), [(name: "Content-Type", value: "text/plain; charset=utf-8"),
                                                    (name: "Title", value: "pricealert: \(digest.events.count) alerts"),
                                                    (name: "Tags", value: "chart_with_upwards_trend")])
        case .telegram(let chatID):
            return ("{\"chat_id\":\(JSONString.quote(chatID)),\"text\":\(JSONString.quote(DigestFormat.chatText(digest)))}", json)
        case .alertmanager:
            return (Self.alertmanager(digest.events, groupKey: digest.id), json)
        case .template:
            let text = DigestFormat.chatText(digest) { alert in self.render(alert).body }
            return (text, [(name: "Content-Type", value: "text/plain; charset=utf-8")])
        }
    }

    /// Alertmanager's webhook `Message` (notify/webhook/webhook.go: `template.Data` plus
    /// `version`, `groupKey`, `truncatedAlerts`), so receivers written for Alertmanager work.
    /// One alert per message; the group is the rule; `endsAt` is Go's zero time (still firing).
    static func alertmanager(_ alert: Alert) -> String {
        alertmanager([alert], groupKey: "{}:{alertname=\(JSONString.quote(alert.rule))}")
    }

    /// A `Message` with `alerts` (firing): `commonLabels` and `commonAnnotations` are the pairs
    /// all of them share, as Alertmanager computes them; `groupLabels` holds `alertname` when
    /// they are all of one rule, and nothing otherwise.
    static func alertmanager(_ alerts: [Alert], groupKey: String) -> String {
        let labels = alerts.map { [("alertname", $0.rule), ("condition", $0.condition), ("symbol", $0.symbol)] }
        let annotations = alerts.map { [("summary", $0.message), ("threshold", thresholdText($0.threshold)),
                                        ("value", JSONNumber.format($0.value))] }
        let commonLabels = common(labels)
        let group = commonLabels.filter { $0.0 == "alertname" }
        var out = "{\"version\":\"4\""
        out += ",\"groupKey\":" + JSONString.quote(groupKey)
        out += ",\"truncatedAlerts\":0,\"status\":\"firing\",\"receiver\":\"pricealert\""
        out += ",\"groupLabels\":" + object(group) + ",\"commonLabels\":" + object(commonLabels)
        out += ",\"commonAnnotations\":" + object(common(annotations))
        out += ",\"externalURL\":\"\",\"alerts\":["
        out += zip(alerts, zip(labels, annotations)).map { alert, pair in
            let digest = SHA256.hash(data: Array("\(alert.rule)\u{ff}\(alert.symbol)\u{ff}\(alert.condition)".utf8))
            let fingerprint = digest.prefix(8).map { byte in
                let hex = String(byte, radix: 16)
                return byte < 16 ? "0" + hex : hex
            }.joined()
            var item = "{\"status\":\"firing\",\"labels\":" + object(pair.0)
            item += ",\"annotations\":" + object(pair.1) + ",\"startsAt\":" + JSONString.quote(Timestamp.format(alert.time))
            item += ",\"endsAt\":\"0001-01-01T00:00:00Z\",\"generatorURL\":\"\",\"fingerprint\":\"" + fingerprint + "\"}"
            return item
        }.joined(separator: ",")
        return out + "]}"
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

    /// A JSON object of strings, keys in the order given (Alertmanager sorts label names).
    private static func object(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { JSONString.quote($0.0) + ":" + JSONString.quote($0.1) }.joined(separator: ",") + "}"
    }
}
