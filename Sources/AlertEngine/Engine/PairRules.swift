import AlertModel

/// The rules the threshold index does not serve (`Rule.isIndexed` false: version 2 conditions,
/// `for`, reminders, `expires`, `resolve`, windows over 24 h with hour buckets, portfolios):
/// which keys they apply to (`PairRuleIndex`), and their evaluation on a key's `KeyState`, pair
/// by pair exactly as Docs/rules.md words it, with the portfolios' synthetic ticks. Part of the
/// one engine: the key table, restore, fingerprints and snapshots are `EngineCore`'s.
struct PairRuleIndex: Sendable {
    /// Enabled pair-by-pair rules by upper-cased symbol, for `symbol`/`symbols` rules.
    private let bySymbol: [String: [Int32]]
    /// Enabled pair-by-pair `match` rules.
    private let matchRules: [Int32]
    /// Enabled rules by portfolio symbol (`@NAME`).
    private let byPortfolio: [String: [Int32]]
    /// Portfolio indices by the upper-cased symbols they hold, in the order the files define them.
    let holders: [String: [Int]]
    let portfolios: [Portfolio]
    /// Minutes and hours of history the longest window of each bucket size needs (0: none).
    let keepMinutes: Int64
    let keepHours: Int64
    /// Some enabled rule reads highs or lows (`from_high`, `from_low`): keys evaluating rules
    /// pair by pair keep them.
    let readsExtremes: Bool

    init(rules: [Rule], portfolios: [Portfolio]) {
        var bySymbol: [String: [Int32]] = [:]
        var match: [Int32] = []
        var byPortfolio: [String: [Int32]] = [:]
        var minutes: Int64 = 0, hours: Int64 = 0
        var extremes = false
        for i in rules.indices where rules[i].enabled && !rules[i].isIndexed {
            if case .listed = rules[i].condition { continue }
            switch rules[i].scope {
            case .symbols(let list):
                var seen = Set<String>()
                for symbol in list where seen.insert(Symbol.normalize(symbol)).inserted {
                    bySymbol[Symbol.normalize(symbol), default: []].append(Int32(i))
                }
            case .match:
                match.append(Int32(i))
            case .portfolio(let name):
                byPortfolio["@" + Symbol.normalize(name), default: []].append(Int32(i))
            case .series:
                // Series ticks (rules v3 §4) are not made yet: no tick reaches these rules.
                continue
            }
            extremes = extremes || Self.readsExtremes(rules[i].condition)
            for window in Self.windows(rules[i].condition) {
                if Self.bucketSize(window: window, fileVersion: rules[i].fileVersion) == Self.hour {
                    hours = max(hours, window / Self.hour)
                } else {
                    minutes = max(minutes, window / Self.minute)
                }
            }
        }
        var holders: [String: [Int]] = [:]
        for (k, portfolio) in portfolios.enumerated() {
            for holding in portfolio.holdings where holders[Symbol.normalize(holding.symbol)]?.last != k {
                holders[Symbol.normalize(holding.symbol), default: []].append(k)
            }
        }
        self.portfolios = portfolios
        self.bySymbol = bySymbol
        self.matchRules = match
        self.byPortfolio = byPortfolio
        self.holders = holders
        self.keepMinutes = minutes
        self.keepHours = hours
        self.readsExtremes = extremes
    }

    static let minute: Int64 = 60_000
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000

    /// Hour buckets for windows over 24 h in version 2 files; minute buckets otherwise
    /// (Docs/rules.md#change-windows).
    static func bucketSize(window: Int64, fileVersion: UInt8) -> Int64 {
        fileVersion >= 2 && window > day ? hour : minute
    }

    static func windows(_ condition: Condition) -> [Int64] {
        switch condition {
        case .change(let w, _), .fromHigh(let w, _), .fromLow(let w, _): return [w]
        case .all(let members), .any(let members): return members.flatMap(windows)
        case .price, .pnl, .move, .listed, .volume: return []
        }
    }

    static func readsExtremes(_ condition: Condition) -> Bool {
        switch condition {
        case .fromHigh, .fromLow: return true
        case .all(let members), .any(let members): return members.contains(where: readsExtremes)
        case .price, .change, .pnl, .move, .listed, .volume: return false
        }
    }

    var hasPortfolios: Bool { !portfolios.isEmpty }
    var hasMatchRules: Bool { !matchRules.isEmpty }

    @inline(__always)
    func isHeld(_ symbol: String) -> Bool { !holders.isEmpty && holders[symbol] != nil }

    /// The other keys a tick of `symbol` reads: the holdings and the portfolio symbol of
    /// every portfolio holding it.
    func related(to symbol: String) -> [String] {
        (holders[symbol] ?? []).flatMap { k in
            portfolios[k].holdings.map { Symbol.normalize($0.symbol) } + [portfolios[k].symbol]
        }
    }

    /// Indices of the enabled pair-by-pair rules that apply to `key`, in rule order.
    func applicable(to key: String, markets: MarketList?, of rules: [Rule]) -> [Int32] {
        if key.hasPrefix("@") { return byPortfolio[key] ?? [] }
        let applicable = bySymbol[key] ?? []
        guard !matchRules.isEmpty, let markets else { return applicable }
        return markets.adding(matchRules, of: rules, to: applicable, for: key)
    }
}

extension KeyState {
    /// Enters a tick (live or seeded) into the minute and hour buckets and the coverage.
    mutating func recordBuckets(time t: Int64, price p: Double, keepMinutes: Int64, keepHours: Int64) {
        firstTime = min(firstTime ?? t, t)
        let latest = newest.map { t >= $0 } ?? true
        if latest { newest = t }
        if keepMinutes > 0 {
            minutes.record(key: floorDivMod(t, PairRuleIndex.minute).0, price: p, latest: latest, keep: keepMinutes)
        }
        if keepHours > 0 {
            hours.record(key: floorDivMod(t, PairRuleIndex.hour).0, price: p, latest: latest, keep: keepHours)
        }
        changed = true
    }

    /// `c` of Docs/rules.md#change-windows, or nil while unknown.
    func change(t: Int64, p: Double, window w: Int64, change24h: Double?, fileVersion: UInt8) -> Double? {
        if w == PairRuleIndex.day, let c = change24h, c.isFinite { return c }
        let (start, overflow) = t.subtractingReportingOverflow(w)
        guard !overflow, let first = firstTime, first <= start else { return nil }
        let size = PairRuleIndex.bucketSize(window: w, fileVersion: fileVersion)
        let buckets = size == PairRuleIndex.hour ? hours : minutes
        guard let base = buckets.price(atOrBefore: floorDivMod(start, size).0) else { return nil }
        return (p - base) / base * 100
    }

    /// `d` of Docs/rules.md#highs-and-lows, or nil while unknown.
    func fromExtreme(t: Int64, p: Double, window w: Int64, high: Bool) -> Double? {
        let (start, overflow) = t.subtractingReportingOverflow(w)
        guard !overflow, let first = firstTime, first <= start else { return nil }
        let size = PairRuleIndex.bucketSize(window: w, fileVersion: 2)
        let buckets = size == PairRuleIndex.hour ? hours : minutes
        guard let e = buckets.extreme(from: floorDivMod(start, size).0, high: high) else { return nil }
        return (p - e) / e * 100
    }
}

extension EngineCore {
    mutating func recordBuckets(_ s: Int, time t: Int64, price p: Double) {
        symbols[s].recordBuckets(time: t, price: p, keepMinutes: pairKeepMinutes, keepHours: pairRules.keepHours)
    }

    /// Evaluates key `s`'s pair-by-pair rules on a valid tick already in its buckets, merged in
    /// rule order with the events the indexed rules gave (`indexed`: their rule indices,
    /// ascending, one per event appended from `start` on) (Docs/rules.md#event-order).
    mutating func evaluatePairs(
        _ s: Int, time t: Int64, price p: Double, change24h: Double?, prev: Double?,
        portfolio: Portfolio?, indexed: ArraySlice<Int32>, start: Int, into alerts: inout [Alert]
    ) {
        guard !symbols[s].pairRules.isEmpty else { return }
        var own: [(Int32, Alert)] = []
        evaluate(s, time: t, price: p, change24h: change24h, prev: prev, portfolio: portfolio, into: &own)
        guard !own.isEmpty else { return }
        if indexed.isEmpty {
            alerts += own.map(\.1)
            return
        }
        let fast = Array(zip(indexed, alerts[start...]))
        alerts.removeSubrange(start...)
        var i = 0, j = 0
        while i < fast.count || j < own.count {
            if j == own.count || (i < fast.count && fast[i].0 < own[j].0) {
                alerts.append(fast[i].1); i += 1
            } else {
                alerts.append(own[j].1); j += 1
            }
        }
    }

    /// Every portfolio holding `symbol`, in the order the files define them: its value from the
    /// holdings' `prev` (a holding not ticked yet in this run has its saved one) as a synthetic
    /// tick of its `@NAME` key (Docs/rules.md#portfolios).
    mutating func evaluatePortfolios(holding symbol: String, time t: Int64, into alerts: inout [Alert]) {
        for k in pairRules.holders[symbol] ?? [] {
            let portfolio = pairRules.portfolios[k]
            var value = 0.0
            var defined = true
            for holding in portfolio.holdings {
                let held = Symbol.normalize(holding.symbol)
                guard let p = symbolIndex[held].flatMap({ symbols[$0].lastPrice }) ?? restoring[held]?.lastPrice else {
                    defined = false
                    break
                }
                value += holding.amount * p
            }
            guard defined, let ps = stateIndex(portfolio.symbol) else { continue }
            if let last = symbols[ps].lastTime, t < last {
                droppedSynthetic += 1
                continue
            }
            let prev = symbols[ps].lastPrice
            recordBuckets(ps, time: t, price: value)
            evaluatePairs(
                ps, time: t, price: value, change24h: nil, prev: prev, portfolio: portfolio, indexed: [],
                start: alerts.count, into: &alerts)
            symbols[ps].lastTime = t
            symbols[ps].lastPrice = value
        }
    }

    /// What one condition says on one tick (Docs/rules.md#conditions): fire `f`, re-arm `r`,
    /// holds `k`; an unknown value makes all three false.
    struct Verdict {
        var f = false, r = false, k = false
        var value = Double.nan
        var threshold = Threshold.none
    }

    /// The key's pair-by-pair rules on one tick, in rule order; the tick is in the buckets
    /// already (a window's high and low include it); `prev` is the previous live price.
    private mutating func evaluate(
        _ s: Int, time t: Int64, price p: Double, change24h: Double?, prev: Double?,
        portfolio: Portfolio?, into events: inout [(Int32, Alert)]
    ) {
        let symbol = symbols[s].symbol
        for r in symbols[s].pairRules {
            let rule = rules[Int(r)]
            let extras = rule.extras
            if let expires = extras?.expires, t >= expires { continue }
            var pair = symbols[s].pairs[r] ?? PairState()
            let cooled = pair.lastFired.map { t - $0 >= rule.cooldown } ?? true
            switch rule.condition {
            case .move(let move):
                guard let reference = pair.reference else {
                    pair.reference = move.reference(at: p)
                    break
                }
                if cooled,
                    let (value, threshold) = move.fires(price: p, reference: reference, hysteresis: rule.hysteresis)
                {
                    events.append((r, alert(rule, symbol, t, p, value: value, threshold: .value(threshold))))
                    pair.reference = move.reference(at: p)
                    pair.lastFired = t
                }
            default:
                let v = Self.verdict(
                    rule.condition, rule, symbols[s], t: t, p: p, prev: prev, change24h: change24h, portfolio: portfolio
                )
                var sustained = true
                if let sustain = extras?.sustain {
                    pair.since = pair.armed && v.f ? (pair.since ?? t) : nil
                    sustained = pair.since.map { t - $0 >= sustain } ?? false
                }
                step(&pair, rule, r, symbol, t, p, v, fire: cooled && sustained, into: &events)
            }
            symbols[s].pairs[r] = pair
        }
    }

    /// Firing (step 1), reminding (step 1½) and re-arming (step 2) of Docs/rules.md#firing-and-re-arming.
    private func step(
        _ pair: inout PairState, _ rule: Rule, _ r: Int32, _ symbol: String, _ t: Int64, _ p: Double,
        _ v: Verdict, fire allowed: Bool, into events: inout [(Int32, Alert)]
    ) {
        if pair.armed, v.f, allowed {
            events.append((r, alert(rule, symbol, t, p, value: v.value, threshold: v.threshold)))
            pair.lastFired = t
            pair.armed = false
            pair.since = nil
            pair.reminders = 0
        } else if let every = rule.extras?.remindEvery, !pair.armed, v.k,
            let last = pair.lastFired, t - last >= max(every, rule.cooldown)
        {
            pair.reminders += 1
            events.append(
                (
                    r,
                    alert(
                        rule, symbol, t, p, value: v.value, threshold: v.threshold,
                        kind: .reminder, reminder: pair.reminders)
                ))
            pair.lastFired = t
        } else if !pair.armed, rule.repeatMode != .once, v.r {
            pair.armed = true
            if rule.extras?.resolve == true {
                events.append((r, alert(rule, symbol, t, p, value: v.value, threshold: v.threshold, kind: .resolved)))
            }
        }
    }

    private func alert(
        _ rule: Rule, _ symbol: String, _ t: Int64, _ p: Double, value: Double, threshold: Threshold,
        kind: AlertKind = .alert, reminder: Int? = nil
    ) -> Alert {
        Alert(
            rule: rule.id, symbol: symbol, time: t, price: p, condition: rule.condition.summary,
            threshold: threshold, value: value,
            template: rule.message ?? MessageTemplate.defaultTemplate(for: rule.condition),
            notify: rule.notify, kind: kind, reminder: reminder)
    }

    private static func verdict(
        _ condition: Condition, _ rule: Rule, _ s: KeyState, t: Int64, p: Double, prev: Double?,
        change24h: Double?, portfolio: Portfolio?
    ) -> Verdict {
        let h = rule.hysteresis
        func level(_ x: Double, above: Bool, crossing: Bool) -> Verdict {
            var v = Verdict(value: p, threshold: .value(x))
            if above {
                v.k = p > x
                v.f = crossing ? (prev.map { $0 <= x } ?? false) && p > x : p > x
                v.r = p <= x * (1 - h / 100)
            } else {
                v.k = p < x
                v.f = crossing ? (prev.map { $0 >= x } ?? false) && p < x : p < x
                v.r = p >= x * (1 + h / 100)
            }
            return v
        }
        func percent(_ c: Double?, _ side: ChangeCondition) -> Verdict {
            switch side {
            case .above(let limit):
                guard let c else { return Verdict(threshold: .value(limit)) }
                return Verdict(f: c > limit, r: c <= limit - h, k: c > limit, value: c, threshold: .value(limit))
            case .below(let limit):
                guard let c else { return Verdict(threshold: .value(limit)) }
                return Verdict(f: c < limit, r: c >= limit + h, k: c < limit, value: c, threshold: .value(limit))
            }
        }
        switch condition {
        case .price(.above(let x)): return level(x, above: true, crossing: false)
        case .price(.below(let x)): return level(x, above: false, crossing: false)
        case .price(.crossesAbove(let x)): return level(x, above: true, crossing: true)
        case .price(.crossesBelow(let x)): return level(x, above: false, crossing: true)
        case .price(.inside(let l, let hi)):
            let inside = l <= p && p <= hi
            return Verdict(f: inside, r: !inside, k: inside, value: p, threshold: .range(l, hi))
        case .price(.outside(let l, let hi)):
            let outside = p < l || p > hi
            return Verdict(f: outside, r: !outside, k: outside, value: p, threshold: .range(l, hi))
        case .change(let w, let side):
            return percent(s.change(t: t, p: p, window: w, change24h: change24h, fileVersion: rule.fileVersion), side)
        case .fromHigh(let w, let side):
            return percent(s.fromExtreme(t: t, p: p, window: w, high: true), side)
        case .fromLow(let w, let side):
            return percent(s.fromExtreme(t: t, p: p, window: w, high: false), side)
        case .pnl(let side):
            return percent(portfolio?.cost.map { (p - $0) / $0 * 100 }, side)
        case .all(let members):
            let vs = members.map {
                Self.verdict($0, rule, s, t: t, p: p, prev: prev, change24h: change24h, portfolio: portfolio)
            }
            return Verdict(f: vs.allSatisfy(\.f), r: vs.contains(where: \.r), k: vs.allSatisfy(\.k), value: p)
        case .any(let members):
            let vs = members.map {
                Self.verdict($0, rule, s, t: t, p: p, prev: prev, change24h: change24h, portfolio: portfolio)
            }
            return Verdict(f: vs.contains(where: \.f), r: vs.allSatisfy(\.r), k: vs.contains(where: \.k), value: p)
        case .move, .listed:
            return Verdict()
        case .volume(.above(let v)), .volume(.below(let v)):
            // The engine does not carry `volume24h` yet: unknown, as on a tick without one.
            return Verdict(threshold: .value(v))
        }
    }
}

extension MoveCondition {
    /// The reference a price sets: the price itself (`percent`), or its level `floor(p / S)` (`step`).
    func reference(at p: Double) -> Double {
        switch self {
        case .percent: return p
        case .step(let s): return (p / s).rounded(.down)
        }
    }

    /// The alert's value and threshold when the move fires at `p` (Docs/rules.md#moves), else nil.
    func fires(price p: Double, reference: Double, hysteresis h: Double) -> (Double, Double)? {
        switch self {
        case .percent(let percent):
            let m = (p - reference) / reference * 100
            guard abs(m) >= percent else { return nil }
            return (m, m > 0 ? percent : -percent)
        case .step(let s):
            let g = s * h / 100
            let up = p >= (reference + 1) * s + g
            let down = p < reference * s - g
            guard up || down else { return nil }
            let k = (p / s).rounded(.down)
            return (p, up ? k * s : (k + 1) * s)
        }
    }
}

/// The state of one (rule, key) pair of a rule evaluated pair by pair
/// (Docs/rules.md#firing-and-re-arming, #for, #reminders, #moves).
struct PairState: Sendable, Equatable {
    var armed = true
    var lastFired: Int64?
    /// `for`: since when the condition has held while armed.
    var since: Int64?
    /// Reminders since the pair last fired normally.
    var reminders = 0
    /// `move`: the reference price (`percent`) or level `K` (`step`); nil before the pair's first tick.
    var reference: Double?
}
