/// A validated alert rule (Docs/rules.md#rules). Built by `AlertRules` from a rule file; the
/// engine trusts it.
public struct Rule: Sendable, Equatable {
    // Stored in an order that packs (a daemon may hold 100 000 rules): 88 bytes, not 112 (the
    // two one-byte fields sit in the condition's tail, before the 8-byte-aligned scope).
    public var id: String
    /// The `message` template as written, or nil for the default message.
    public var message: String?
    /// Sink names, in the order given.
    public var notify: [String]
    /// Milliseconds.
    public var cooldown: Int64
    /// Percent for price conditions, percentage points for change conditions (Docs/rules.md#hysteresis).
    public var hysteresis: Double
    public var condition: Condition
    public var repeatMode: RepeatMode
    public var enabled: Bool
    public var scope: Scope

    public init(id: String, scope: Scope, condition: Condition, notify: [String] = ["stdout"],
                repeatMode: RepeatMode = .rearm, cooldown: Int64 = 0, hysteresis: Double = 0,
                message: String? = nil, enabled: Bool = true) {
        self.id = id
        self.scope = scope
        self.condition = condition
        self.notify = notify
        self.repeatMode = repeatMode
        self.cooldown = cooldown
        self.hysteresis = hysteresis
        self.message = message
        self.enabled = enabled
    }
}

public enum Scope: Sendable, Equatable {
    /// `symbol` or `symbols`, upper-cased.
    case symbols([String])
    /// Boxed: it is rare, and would make every rule 40 bytes bigger inline.
    indirect case match(MarketFilter)
}

public enum RepeatMode: String, Sendable {
    case rearm
    case once
}

public enum Condition: Sendable, Equatable {
    case price(PriceCondition)
    /// `window` in milliseconds.
    case change(window: Int64, ChangeCondition)
}

public enum PriceCondition: Sendable, Equatable {
    case above(Double)
    case below(Double)
    case crossesAbove(Double)
    case crossesBelow(Double)
    case inside(Double, Double)
    case outside(Double, Double)
}

public enum ChangeCondition: Sendable, Equatable {
    case above(Double)
    case below(Double)
}

extension Condition {
    /// The threshold as the alert event carries it (Docs/rules.md#the-alert-event).
    public var threshold: Threshold {
        switch self {
        case .price(.above(let x)), .price(.below(let x)),
             .price(.crossesAbove(let x)), .price(.crossesBelow(let x)):
            return .value(x)
        case .price(.inside(let l, let h)), .price(.outside(let l, let h)):
            return .range(l, h)
        case .change(_, .above(let c)), .change(_, .below(let c)):
            return .value(c)
        }
    }

    /// A short human description used in alerts, e.g. `price crossesAbove 100000` or
    /// `change 1h above 8` or `price inside [40000, 45000]`.
    public var summary: String {
        switch self {
        case .price(.above(let x)): return "price above \(JSONNumber.format(x))"
        case .price(.below(let x)): return "price below \(JSONNumber.format(x))"
        case .price(.crossesAbove(let x)): return "price crossesAbove \(JSONNumber.format(x))"
        case .price(.crossesBelow(let x)): return "price crossesBelow \(JSONNumber.format(x))"
        case .price(.inside(let l, let h)): return "price inside [\(JSONNumber.format(l)), \(JSONNumber.format(h))]"
        case .price(.outside(let l, let h)): return "price outside [\(JSONNumber.format(l)), \(JSONNumber.format(h))]"
        case .change(let w, .above(let c)): return "change \(DurationText.format(w)) above \(JSONNumber.format(c))"
        case .change(let w, .below(let c)): return "change \(DurationText.format(w)) below \(JSONNumber.format(c))"
        }
    }
}

public enum Threshold: Sendable, Equatable {
    case value(Double)
    case range(Double, Double)
}
