/// A validated alert rule (Docs/rules.md#rules). Built by `AlertRules` from a rule file; the
/// engine trusts it.
public struct Rule: Sendable, Equatable {
    // Stored in an order that packs (a daemon may hold 100 000 rules): 80 bytes (the three
    // one-byte fields sit in the condition's tail, before the 8-byte-aligned scope; `message`
    // and the version 2 keys, which most rules lack, share one boxed pointer).
    public var id: String
    /// Sink names, in the order given.
    public var notify: [String]
    /// Milliseconds.
    public var cooldown: Int64
    /// Percent for price conditions, percentage points for change conditions (Docs/rules.md#hysteresis).
    public var hysteresis: Double
    public var condition: Condition
    public var repeatMode: RepeatMode
    public var enabled: Bool
    /// 1 or 2: the `version` of the file the rule came from. In a version 2 file a window over
    /// 24 h uses hour buckets (Docs/rules.md#change-windows); in a version 1 file it keeps
    /// minute buckets.
    public var fileVersion: UInt8
    public var scope: Scope
    /// `message` and `extras`; nil when the rule has neither.
    private var rare: Rare?

    /// The `message` template as written, or nil for the default message.
    public var message: String? {
        get { rare?.message }
        set { rare = Rare.make(message: newValue, extras: extras) }
    }

    /// The version 2 rule keys; nil when the rule uses none of them.
    public var extras: RuleExtras? {
        get { rare?.extras }
        set { rare = Rare.make(message: message, extras: newValue) }
    }

    /// Immutable, so copies of a rule share it safely.
    private final class Rare: Sendable, Equatable {
        let message: String?
        let extras: RuleExtras?

        private init(message: String?, extras: RuleExtras?) {
            self.message = message
            self.extras = extras
        }

        static func make(message: String?, extras: RuleExtras?) -> Rare? {
            message == nil && extras == nil ? nil : Rare(message: message, extras: extras)
        }

        static func == (a: Rare, b: Rare) -> Bool { a.message == b.message && a.extras == b.extras }
    }

    public init(
        id: String, scope: Scope, condition: Condition, notify: [String] = ["stdout"],
        repeatMode: RepeatMode = .rearm, cooldown: Int64 = 0, hysteresis: Double = 0,
        message: String? = nil, enabled: Bool = true, fileVersion: UInt8 = 1, extras: RuleExtras? = nil
    ) {
        self.id = id
        self.scope = scope
        self.condition = condition
        self.notify = notify
        self.repeatMode = repeatMode
        self.cooldown = cooldown
        self.hysteresis = hysteresis
        self.enabled = enabled
        self.fileVersion = fileVersion
        self.rare = Rare.make(message: message, extras: extras)
    }
}

/// The version 2 keys of a rule (Docs/rules.md): `for`, `repeat: {"every": D}`, `expires`,
/// `resolve`, `priority`.
public struct RuleExtras: Sendable, Equatable {
    /// `for`: milliseconds the condition must hold before the pair fires.
    public var sustain: Int64?
    /// `repeat: {"every": D}`: reminder interval in milliseconds (the pair otherwise re-arms as `rearm`).
    public var remindEvery: Int64?
    /// `expires`: epoch milliseconds; the rule applies only to ticks with time before it.
    public var expires: Int64?
    /// `resolve: true`.
    public var resolve: Bool
    /// `priority: "high"`; false for "normal" and when absent.
    public var highPriority: Bool

    public init(
        sustain: Int64? = nil, remindEvery: Int64? = nil, expires: Int64? = nil,
        resolve: Bool = false, highPriority: Bool = false
    ) {
        self.sustain = sustain
        self.remindEvery = remindEvery
        self.expires = expires
        self.resolve = resolve
        self.highPriority = highPriority
    }
}

public enum Scope: Sendable, Equatable {
    /// `symbol` or `symbols`, upper-cased.
    case symbols([String])
    /// Boxed: it is rare, and would make every rule 40 bytes bigger inline.
    indirect case match(MarketFilter)
    /// `portfolio: NAME` (the name as written; its ticks have the symbol `@` + NAME upper-cased).
    /// Boxed for the same reason as `match`.
    indirect case portfolio(String)
    /// `series: NAME` (rules v3 §4; the name as written; its ticks have the symbol `@` + NAME
    /// upper-cased). Boxed for the same reason as `match`.
    indirect case series(String)
}

public enum RepeatMode: String, Sendable {
    case rearm
    case once
}

public enum Condition: Sendable, Equatable {
    case price(PriceCondition)
    /// `window` in milliseconds.
    case change(window: Int64, ChangeCondition)
    /// `fromHigh`: percent from the window's highest price (window in milliseconds).
    case fromHigh(window: Int64, ChangeCondition)
    /// `fromLow`: percent from the window's lowest price (window in milliseconds).
    case fromLow(window: Int64, ChangeCondition)
    /// `pnl`: percent of the portfolio's value against its cost (portfolio rules only).
    case pnl(ChangeCondition)
    /// `move`: never inside `all`/`any`.
    case move(MoveCondition)
    /// 2...8 members, at most 3 levels of `all`/`any`.
    case all([Condition])
    case any([Condition])
    /// `{"listed": true}` on a `match` rule: fires once for each market a fresh market list adds.
    case listed
    /// `volume` (rules v3 §5): on the tick's `volume24h`, unknown on a tick without one.
    case volume(VolumeCondition)
}

/// `{"volume": {"above": V}}` or `{"volume": {"below": V}}`: V is finite and ≥ 0.
public enum VolumeCondition: Sendable, Equatable {
    case above(Double)
    case below(Double)
}

public enum MoveCondition: Sendable, Equatable {
    case percent(Double)
    case step(Double)
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
        case .change(_, .above(let c)), .change(_, .below(let c)),
            .fromHigh(_, .above(let c)), .fromHigh(_, .below(let c)),
            .fromLow(_, .above(let c)), .fromLow(_, .below(let c)),
            .pnl(.above(let c)), .pnl(.below(let c)),
            .volume(.above(let c)), .volume(.below(let c)):
            return .value(c)
        case .move, .all, .any, .listed:
            // A move's threshold depends on the tick (the engine gives it per event).
            return .none
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
        case .fromHigh(let w, let side): return "fromHigh \(DurationText.format(w)) \(side.summary)"
        case .fromLow(let w, let side): return "fromLow \(DurationText.format(w)) \(side.summary)"
        case .pnl(let side): return "pnl \(side.summary)"
        case .move(.percent(let p)): return "move percent \(JSONNumber.format(p))"
        case .move(.step(let s)): return "move step \(JSONNumber.format(s))"
        case .all(let members): return "all(\(members.map(\.summary).joined(separator: ", ")))"
        case .any(let members): return "any(\(members.map(\.summary).joined(separator: ", ")))"
        case .listed: return "listed"
        case .volume(.above(let v)): return "volume above \(JSONNumber.format(v))"
        case .volume(.below(let v)): return "volume below \(JSONNumber.format(v))"
        }
    }
}

extension ChangeCondition {
    /// `above 5`, `below -10`.
    var summary: String {
        switch self {
        case .above(let c): return "above \(JSONNumber.format(c))"
        case .below(let c): return "below \(JSONNumber.format(c))"
        }
    }
}

public enum Threshold: Sendable, Equatable {
    case value(Double)
    case range(Double, Double)
    /// JSON null: combinations (`all`/`any`), and the event kinds that carry no threshold.
    case none
}

/// A portfolio (Docs/rules.md#portfolios); holdings keep their file order.
public struct Portfolio: Sendable, Equatable {
    public var name: String
    public var holdings: [Holding]
    public var cost: Double?

    public struct Holding: Sendable, Equatable {
        /// Upper-cased.
        public var symbol: String
        public var amount: Double

        public init(symbol: String, amount: Double) {
            self.symbol = symbol
            self.amount = amount
        }
    }

    public init(name: String, holdings: [Holding], cost: Double? = nil) {
        self.name = name
        self.holdings = holdings
        self.cost = cost
    }

    /// The symbol of the portfolio's ticks: `@` + the name upper-cased.
    public var symbol: String { "@" + Symbol.normalize(name) }
}
