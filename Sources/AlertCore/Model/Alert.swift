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

    public init(rule: String, symbol: String, time: Int64, price: Double, condition: String,
                threshold: Threshold, value: Double, message: String, notify: [String],
                kind: AlertKind = .alert, reminder: Int? = nil) {
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
    public init(rule: String, symbol: String, time: Int64, price: Double, condition: String,
                threshold: Threshold, value: Double, template: String, notify: [String],
                kind: AlertKind = .alert, reminder: Int? = nil) {
        self.init(rule: rule, symbol: symbol, time: time, price: price, condition: condition,
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
            MessageTemplate.render(template, rule: rule, symbol: symbol, time: time, price: price,
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
    }

    /// `rule:SYMBOL:epochMillis`, plus `:resolved` for a resolved event — stable, so receivers
    /// can de-duplicate retried deliveries.
    public var id: String {
        kind == .resolved ? "\(rule):\(symbol):\(time):resolved" : "\(rule):\(symbol):\(time)"
    }
}

/// What an event says (Docs/rules.md#the-alert-event): the rule fired, reminds that its
/// condition still holds, or its condition is over.
public enum AlertKind: String, Sendable {
    case alert
    case reminder
    case resolved
}
