/// One alert event (spec §7). Every sink receives exactly this value.
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
    public var message: String
    /// Sink names the rule notifies. Not part of the event's JSON.
    public var notify: [String]

    public init(rule: String, symbol: String, time: Int64, price: Double, condition: String,
                threshold: Threshold, value: Double, message: String, notify: [String]) {
        self.rule = rule
        self.symbol = symbol
        self.time = time
        self.price = price
        self.condition = condition
        self.threshold = threshold
        self.value = value
        self.message = message
        self.notify = notify
    }

    /// `rule:SYMBOL:epochMillis` — stable, so receivers can de-duplicate retried deliveries.
    public var id: String { "\(rule):\(symbol):\(time)" }
}
