/// One event of the reference: what a sink receives, reduced to the fields the engine must
/// agree on (the message and condition text are left out).
public struct RefEvent: Equatable, CustomStringConvertible, Sendable {
    public enum Kind: String, Sendable { case alert, reminder, resolved }
    public enum Threshold: Equatable, Sendable { case none, number(Double), range(Double, Double) }

    public var kind: Kind
    public var rule: String
    public var symbol: String
    public var time: Int64
    public var price: Double
    public var value: Double
    public var threshold: Threshold
    /// The reminder's number since the pair last fired normally; nil for other kinds.
    public var reminder: Int?
    /// The source of the tick (rules v3 §6); nil without one, and for portfolios and series.
    public var source: String?

    public init(
        _ kind: Kind, _ rule: String, _ symbol: String, _ time: Int64, price: Double, value: Double,
        threshold: Threshold, reminder: Int? = nil
    ) {
        self.kind = kind
        self.rule = rule
        self.symbol = symbol
        self.time = time
        self.price = price
        self.value = value
        self.threshold = threshold
        self.reminder = reminder
    }

    /// Which event of its pair with this `baseID` it is (1: the first).
    public var occurrence = 1

    /// `rule:SYMBOL:epochMs` (`rule:SOURCE:SYMBOL:epochMs` with a source), with `:resolved`
    /// after it for a resolved event.
    public var baseID: String {
        "\(rule):" + (source.map { "\($0):" } ?? "") + "\(symbol):\(time)" + (kind == .resolved ? ":resolved" : "")
    }

    /// `baseID`, with `:n` after it for the n-th event (n ≥ 2) of the pair with that base id.
    public var id: String { occurrence > 1 ? "\(baseID):\(occurrence)" : baseID }

    public var description: String {
        let th: String
        switch threshold {
        case .none: th = "null"
        case .number(let x): th = "\(x)"
        case .range(let l, let h): th = "[\(l),\(h)]"
        }
        return "\(kind.rawValue) \(id) price=\(price) value=\(value) threshold=\(th)"
            + (reminder.map { " reminder=\($0)" } ?? "")
    }
}
