public import AlertCore

/// TEST ONLY: AlertCore rules built from the reference's reading of the same rule files, so the
/// engine can be compared with `ReferenceEngineV2` on the engine's own input. Production rules
/// come from `AlertRules`' parser and validation; this mapping checks nothing.
public enum TestOnlyRuleConversion {
    public static func rules(_ set: RefRuleSet) -> (rules: [Rule], portfolios: [Portfolio]) {
        let portfolios = set.portfolios.map { p in
            Portfolio(name: p.name, holdings: p.holdings.map { Portfolio.Holding(symbol: $0.0, amount: $0.1) }, cost: p.cost)
        }
        return (set.rules.map(rule), portfolios)
    }

    static func rule(_ r: RefRule) -> Rule {
        let scope: Scope
        switch r.scope {
        case .symbols(let list): scope = .symbols(list)
        case .portfolio(let name): scope = .portfolio(name)
        case .match(let filter):
            var f = MarketFilter()
            for (key, value) in filter {
                switch key {
                case "future": f.future = value.bool
                case "active": f.active = value.bool
                case "quote": f.quote = value.string
                case "base": f.base = value.string
                default: break
                }
            }
            scope = .match(f)
        }
        var every: Int64?
        let repeatMode: RepeatMode
        switch r.repeatMode {
        case .rearm: repeatMode = .rearm
        case .once: repeatMode = .once
        case .every(let d): repeatMode = .rearm; every = d
        }
        var extras: RuleExtras? = RuleExtras(sustain: r.sustain, remindEvery: every, expires: r.expires, resolve: r.resolve)
        if extras == RuleExtras() { extras = nil }
        return Rule(id: r.id, scope: scope, condition: condition(r.condition), repeatMode: repeatMode,
                    cooldown: r.cooldown, hysteresis: r.hysteresis, enabled: r.enabled,
                    fileVersion: UInt8(r.version), extras: extras)
    }

    static func condition(_ c: RefRule.Condition) -> Condition {
        func side(_ s: RefRule.Side, _ x: Double) -> ChangeCondition { s == .above ? .above(x) : .below(x) }
        switch c {
        case .above(let x): return .price(.above(x))
        case .below(let x): return .price(.below(x))
        case .crossesAbove(let x): return .price(.crossesAbove(x))
        case .crossesBelow(let x): return .price(.crossesBelow(x))
        case .inside(let l, let h): return .price(.inside(l, h))
        case .outside(let l, let h): return .price(.outside(l, h))
        case .change(let w, let s, let x): return .change(window: w, side(s, x))
        case .fromHigh(let w, let s, let x): return .fromHigh(window: w, side(s, x))
        case .fromLow(let w, let s, let x): return .fromLow(window: w, side(s, x))
        case .pnl(let s, let x): return .pnl(side(s, x))
        case .movePercent(let p): return .move(.percent(p))
        case .moveStep(let s): return .move(.step(s))
        case .all(let members): return .all(members.map(condition))
        case .any(let members): return .any(members.map(condition))
        }
    }
}

extension RefEvent {
    /// An engine event in the reference's terms (message and condition text left out).
    public init(_ alert: Alert) {
        let kind: Kind
        switch alert.kind {
        case .alert: kind = .alert
        case .reminder: kind = .reminder
        case .resolved: kind = .resolved
        }
        let threshold: Threshold
        switch alert.threshold {
        case .value(let x): threshold = .number(x)
        case .range(let l, let h): threshold = .range(l, h)
        case .none: threshold = .none
        }
        self.init(kind, alert.rule, alert.symbol, alert.time, price: alert.price, value: alert.value,
                  threshold: threshold, reminder: alert.reminder)
    }
}
