import AlertCore
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

    /// Alertmanager's webhook `Message` (notify/webhook/webhook.go: `template.Data` plus
    /// `version`, `groupKey`, `truncatedAlerts`), so receivers written for Alertmanager work.
    /// One alert per message; the group is the rule; `endsAt` is Go's zero time (still firing).
    static func alertmanager(_ alert: Alert) -> String {
        let labels = object([("alertname", alert.rule), ("condition", alert.condition), ("symbol", alert.symbol)])
        let annotations = object([("summary", alert.message), ("threshold", thresholdText(alert.threshold)),
                                  ("value", JSONNumber.format(alert.value))])
        let group = object([("alertname", alert.rule)])
        let digest = SHA256.hash(data: Array("\(alert.rule)\u{ff}\(alert.symbol)\u{ff}\(alert.condition)".utf8))
        let fingerprint = digest.prefix(8).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
        let startsAt = Timestamp.format(alert.time)
        var out = "{\"version\":\"4\""
        out += ",\"groupKey\":" + JSONString.quote("{}:{alertname=\(JSONString.quote(alert.rule))}")
        out += ",\"truncatedAlerts\":0,\"status\":\"firing\",\"receiver\":\"pricealert\""
        out += ",\"groupLabels\":" + group + ",\"commonLabels\":" + labels + ",\"commonAnnotations\":" + annotations
        out += ",\"externalURL\":\"\",\"alerts\":[{\"status\":\"firing\",\"labels\":" + labels
        out += ",\"annotations\":" + annotations + ",\"startsAt\":" + JSONString.quote(startsAt)
        out += ",\"endsAt\":\"0001-01-01T00:00:00Z\",\"generatorURL\":\"\",\"fingerprint\":\"" + fingerprint + "\"}]}"
        return out
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
