/// One alert event (Docs/rules.md#the-alert-event). Every sink receives exactly this value.
public struct Alert: Sendable, Equatable {
    public var rule: String
    /// Upper-cased.
    public var symbol: String
    /// Epoch milliseconds of the tick that fired it.
    public var time: Int64
    public var price: Double
    public var condition: String
    public var threshold: Threshold
    /// `p` for price conditions, `c` (percent) for change conditions.
    public var value: Double
    /// The message text, or the rule's template: rendering waits until a sink asks, so firing
    /// an alert on the tick path costs a few reference counts, not string formatting.
    private(set) var messageSource: MessageSource
    /// Sink names the rule notifies. Not part of the event's JSON.
    public var notify: [String]
    public var kind: AlertKind
    /// The n-th reminder since the pair last fired normally; nil unless `kind` is `.reminder`.
    public var reminder: Int?
    /// Which of its pair's events with the same `baseID` this is (1 for the first): two events
    /// of a pair in one millisecond get `:2`, `:3`, … on their ids (Docs/rules.md#the-alert-event).
    /// Set by the engine, which counts them across restarts; not part of the event's other fields.
    public var occurrence: Int = 1
    /// The rule-file source of the tick that fired it (rules v3 §6); nil for ticks without a
    /// source, portfolios and series.
    public var source: String?

    public init(
        rule: String, symbol: String, time: Int64, price: Double, condition: String,
        threshold: Threshold, value: Double, message: String, notify: [String],
        kind: AlertKind = .alert, reminder: Int? = nil
    ) {
        self.rule = rule
        self.symbol = symbol
        self.time = time
        self.price = price
        self.condition = condition
        self.threshold = threshold
        self.value = value
        self.messageSource = .text(message)
        self.notify = notify
        self.kind = kind
        self.reminder = reminder
    }

    /// An alert whose message is `template` filled with its own fields (Docs/rules.md#messages).
    public init(
        rule: String, symbol: String, time: Int64, price: Double, condition: String,
        threshold: Threshold, value: Double, template: String, notify: [String],
        kind: AlertKind = .alert, reminder: Int? = nil
    ) {
        self.init(
            rule: rule, symbol: symbol, time: time, price: price, condition: condition,
            threshold: threshold, value: value, message: "", notify: notify, kind: kind, reminder: reminder)
        self.messageSource = .template(template)
    }

    public var message: String {
        get {
            switch messageSource {
            case .text(let text): return text
            case .template(let template):
                return MessageTemplate.render(template, self)
            }
        }
        set { messageSource = .text(newValue) }
    }

    /// Appends `message`'s UTF-8 bytes to `out`, rendering a template straight into it.
    func appendMessage(to out: inout [UInt8]) {
        switch messageSource {
        case .text(let text):
            out.append(contentsOf: text.utf8)
        case .template(let template):
            MessageTemplate.render(
                template, rule: rule, symbol: symbol, time: time, price: price,
                condition: condition, threshold: threshold, value: value,
                kind: kind, reminder: reminder, to: &out)
        }
    }

    enum MessageSource: Sendable, Equatable {
        case text(String)
        case template(String)
    }

    public static func == (a: Alert, b: Alert) -> Bool {
        a.rule == b.rule && a.symbol == b.symbol && a.time == b.time && a.price == b.price
            && a.condition == b.condition && a.threshold == b.threshold && a.value == b.value
            && a.message == b.message && a.notify == b.notify && a.kind == b.kind && a.reminder == b.reminder
            && a.occurrence == b.occurrence && a.source == b.source
    }

    /// `rule:SYMBOL:epochMillis` (`rule:SOURCE:SYMBOL:epochMillis` for a tick with a source),
    /// plus `:resolved` for a resolved event: what every event of the pair at that time and of
    /// that kind shares.
    public var baseID: String {
        let pair = source.map { "\(rule):\($0):\(symbol)" } ?? "\(rule):\(symbol)"
        return kind == .resolved ? "\(pair):\(time):resolved" : "\(pair):\(time)"
    }

    /// `baseID`, plus `:n` for the n-th event (n ≥ 2) of the pair with that base id — unique
    /// per event and stable across retries and restarts, so receivers can de-duplicate
    /// retried deliveries without losing an event.
    public var id: String {
        occurrence > 1 ? "\(baseID):\(occurrence)" : baseID
    }

    /// Takes the occurrence from `id`, the id this event was stored under (an outbox row): the
    /// event rebuilt from its columns gets the same id again.
    public mutating func adoptOccurrence(fromID id: String) {
        let base = baseID
        guard id.count > base.count, id.hasPrefix(base + ":"),
            let n = Int(id.dropFirst(base.count + 1)), n >= 2
        else { return }
        occurrence = n
    }
}

/// What an event says (Docs/rules.md#the-alert-event): the rule fired, reminds that its
/// condition still holds, or its condition is over.
public enum AlertKind: String, Sendable {
    case alert
    case reminder
    case resolved
}
