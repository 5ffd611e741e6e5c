import AlertModel
import AlertPolicy

/// What a webhook sends for one alert: the body and the headers that go with it, by preset
/// (Docs/sinks.md#the-presets-exactly). Chat presets send the message as a person reads it
/// (`AlertFormat.said`: marked `resolved: ` or `reminder N: `), escaped and shortened to the
/// platform's limit by `ChatText`.
///
/// - `json`: the alert event (`AlertFormat.json`, Docs/rules.md#the-alert-event), `application/json`.
/// - `slack`: `{"text": MESSAGE}` (`&`, `<`, `>` escaped, 40 000 characters).
/// - `discord`: `{"content": MESSAGE, "allowed_mentions": {"parse": []}}` (2000 characters; no
///   text pings anyone).
/// - `ntfy`: the message as plain text (4096 bytes), with `Title: pricealert: RULE SYMBOL` and
///   `Tags` following the move (`NtfyTag`).
/// - `telegram`: `{"chat_id": ID, "text": MESSAGE}` (4096 characters); the chat id and an optional
///   `parse_mode` come from the URL's query, which `WebhookSink` moves into the body, and the
///   text is escaped for that `parse_mode`.
/// - `alertmanager`: Alertmanager's API body (`POST /api/v2/alerts`), an array of alerts.
/// - `alertmanagerWebhook`: the payload Alertmanager sends to its receivers, version "4".
/// - `template`: the rule file's `template` filled with the placeholders of Docs/rules.md#messages,
///   `text/plain`.
public enum WebhookPayload: Sendable, Equatable {
    case json
    case slack
    case discord
    case ntfy
    case telegram(chatID: String, parseMode: String? = nil)
    case alertmanager
    case alertmanagerWebhook
    case template(String)

    /// The `parse_mode` values Telegram knows, and the escapes each needs.
    public static let telegramParseModes: [String: ChatText.Escape] = [
        "HTML": .html, "MarkdownV2": .markdownV2, "Markdown": .markdown
    ]

    /// The text rules of a chat preset; nil for the others.
    public var chat: ChatText? {
        switch self {
        case .slack: return .slack
        case .discord: return .discord
        case .ntfy: return .ntfy
        case .telegram(_, let parseMode): return .telegram(parseMode.flatMap { Self.telegramParseModes[$0] } ?? .plain)
        case .json, .alertmanager, .alertmanagerWebhook, .template: return nil
        }
    }

    /// The body and its default headers (configured headers of the same name replace these).
    public func render(_ alert: Alert) -> (body: String, headers: [(name: String, value: String)]) {
        switch self {
        case .json:
            return (AlertFormat.json(alert), Self.jsonHeaders)
        case .alertmanager:
            return (AlertmanagerPayload.postable([alert]), Self.jsonHeaders)
        case .alertmanagerWebhook:
            return (
                AlertmanagerPayload.webhook([alert], groupKey: AlertmanagerPayload.groupKey(alert)), Self.jsonHeaders
            )
        case .template(let template):
            return (MessageTemplate.render(template, alert), Self.plainHeaders)
        case .slack, .discord, .ntfy, .telegram:
            let title = "pricealert: " + AlertFormat.marker(alert) + "\(alert.rule) \(alert.symbol)"
            return chatBody(chat!.event(alert), title: title, tag: NtfyTag.of([alert]))
        }
    }

    /// The body and default headers for a digest (Docs/sinks.md#digests): `json` the digest
    /// object; `alertmanager` every event as an alert; the chat presets one message listing at
    /// most `DigestFormat.chatLines` events, as many as the platform's limit takes, and "and N
    /// more"; `template` the template filled for each listed event, one per line, in the same frame.
    public func render(_ digest: AlertModel.Digest) -> (body: String, headers: [(name: String, value: String)]) {
        switch self {
        case .json:
            return (DigestFormat.json(digest), Self.jsonHeaders)
        case .alertmanager:
            return (AlertmanagerPayload.postable(digest.events), Self.jsonHeaders)
        case .alertmanagerWebhook:
            return (AlertmanagerPayload.webhook(digest.events, groupKey: digest.id), Self.jsonHeaders)
        case .template:
            let text = DigestFormat.chatText(digest) { alert in self.render(alert).body }
            return (text, Self.plainHeaders)
        case .slack, .discord, .ntfy, .telegram:
            return chatBody(
                chat!.digest(digest), title: "pricealert: \(digest.events.count) alerts", tag: NtfyTag.of(digest.events)
            )
        }
    }

    private static let jsonHeaders = [(name: "Content-Type", value: "application/json")]
    private static let plainHeaders = [(name: "Content-Type", value: "text/plain; charset=utf-8")]

    /// A chat preset's body around `text` (already escaped and fitted).
    private func chatBody(
        _ text: String, title: String, tag: String
    ) -> (body: String, headers: [(name: String, value: String)]) {
        switch self {
        case .slack:
            return ("{\"text\":\(JSONString.quote(text))}", Self.jsonHeaders)
        case .discord:
            return ("{\"content\":\(JSONString.quote(text)),\"allowed_mentions\":{\"parse\":[]}}", Self.jsonHeaders)
        case .telegram(let chatID, let parseMode):
            var body = "{\"chat_id\":\(JSONString.quote(chatID)),\"text\":\(JSONString.quote(text))"
            if let parseMode { body += ",\"parse_mode\":" + JSONString.quote(parseMode) }
            return (body + "}", Self.jsonHeaders)
        default:
            return (
                text, Self.plainHeaders + [(name: "Title", value: HeaderText.clean(title)), (name: "Tags", value: tag)]
            )
        }
    }
}

/// ntfy's `Tags` for what a message says (emoji short codes ntfy shows before the title):
/// `white_check_mark` when every event is resolved, else the way the price moved —
/// `chart_with_upwards_trend` or `chart_with_downwards_trend` when all moved one way, `bell`
/// when they disagree or the condition says no way.
enum NtfyTag {
    static func of(_ alerts: [Alert]) -> String {
        if alerts.allSatisfy({ $0.kind == .resolved }) { return "white_check_mark" }
        let ways = Set(alerts.filter { $0.kind != .resolved }.map(direction))
        switch ways {
        case [.up]: return "chart_with_upwards_trend"
        case [.down]: return "chart_with_downwards_trend"
        default: return "bell"
        }
    }

    enum Direction { case up, down, neither }

    /// Read from the condition text (`Condition.summary`): a price above or below a line, a
    /// price outside a range on one side, a drop from a high or a rise from a low; for change,
    /// pnl and percent moves the sign of `value`; for step moves the price against the line.
    static func direction(_ alert: Alert) -> Direction {
        let condition = alert.condition
        func sign(_ x: Double) -> Direction { x > 0 ? .up : x < 0 ? .down : .neither }
        if condition.hasPrefix("price ") {
            if condition.hasPrefix("price above") || condition.hasPrefix("price crossesAbove") { return .up }
            if condition.hasPrefix("price below") || condition.hasPrefix("price crossesBelow") { return .down }
            if condition.hasPrefix("price outside"), case .range(let low, let high) = alert.threshold {
                return alert.price > high ? .up : alert.price < low ? .down : .neither
            }
            return .neither
        }
        if condition.hasPrefix("fromHigh ") { return .down }
        if condition.hasPrefix("fromLow ") { return .up }
        if condition.hasPrefix("change ") || condition.hasPrefix("pnl ") || condition.hasPrefix("move percent ") {
            return sign(alert.value)
        }
        if condition.hasPrefix("move step "), case .value(let line) = alert.threshold {
            return sign(alert.price - line)
        }
        return .neither
    }
}

/// A header value made of text that may come from a feed: control characters (CR and LF
/// above all, which would end the header) become spaces.
enum HeaderText {
    static func clean(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}"
                        || scalar == "\u{2029}" ? " " : scalar
                }))
    }
}
