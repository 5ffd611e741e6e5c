import AlertModel

/// The rules the threshold index does not serve (`Rule.isIndexed` false: version 2 conditions,
/// `for`, reminders, `expires`, `resolve`, windows over 24 h with hour buckets, portfolios):
/// which keys they apply to (`PairRuleIndex`), and their evaluation on a key's `KeyState`, pair
/// by pair exactly as Docs/rules.md words it, with the portfolios' synthetic ticks. Part of the
/// one engine: the key table, restore, fingerprints and snapshots are `EngineCore`'s.
struct PairRuleIndex: Sendable {
    /// Enabled pair-by-pair rules with `symbol`/`symbols` and `match` scopes.
    private let scoped: ScopeIndex
    /// Enabled rules by portfolio or series symbol (`@NAME`; the two share one namespace).
    private let bySynthetic: [String: [Int32]]
    /// Portfolio indices by the keys they hold, in the order the files define them.
    let holders: [String: [Int]]
    let portfolios: [Portfolio]
    /// Series indices by the keys that are their members, in the order the files define them.
    let seriesOf: [String: [Int]]
    /// Each series with its members as keys.
    let series: [SeriesDefinition]
    /// Minutes and hours of history the longest window of each bucket size needs (0: none).
    let keepMinutes: Int64
    let keepHours: Int64
    /// Some enabled rule reads highs or lows (`from_high`, `from_low`): keys evaluating rules
    /// pair by pair keep them.
    let readsExtremes: Bool

    init(rules: [Rule], portfolios: [Portfolio], series: [SeriesDefinition] = []) {
        var bySynthetic: [String: [Int32]] = [:]
        var minutes: Int64 = 0, hours: Int64 = 0
        var extremes = false
        func pairwise(_ rule: Rule) -> Bool {
            if case .listed = rule.condition { return false }
            return !rule.isIndexed
        }
        for i in rules.indices where rules[i].enabled && pairwise(rules[i]) {
            switch rules[i].scope {
            case .symbols, .match:
                break
            case .portfolio(let name), .series(let name):
                bySynthetic["@" + Symbol.normalize(name), default: []].append(Int32(i))
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
            for holding in portfolio.holdings where holders[Key.of(holding.symbol)]?.last != k {
                holders[Key.of(holding.symbol), default: []].append(k)
            }
        }
        var seriesOf: [String: [Int]] = [:]
        var keyed: [SeriesDefinition] = []
        for (k, var definition) in series.enumerated() {
            definition.members = definition.members.map(Key.of)
            for member in definition.members where seriesOf[member]?.last != k {
                seriesOf[member, default: []].append(k)
            }
            keyed.append(definition)
        }
        self.scoped = ScopeIndex(rules: rules, includes: pairwise)
        self.portfolios = portfolios
        self.bySynthetic = bySynthetic
        self.holders = holders
        self.seriesOf = seriesOf
        self.series = keyed
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

    /// Some portfolio or series makes `@` ticks.
    var hasSynthetic: Bool { !portfolios.isEmpty || !series.isEmpty }
    var hasPortfolios: Bool { !portfolios.isEmpty }
    var hasMatchRules: Bool { !scoped.match.isEmpty }

    @inline(__always)
    func isHeld(_ key: String) -> Bool { !holders.isEmpty && holders[key] != nil }

    @inline(__always)
    func isMember(_ key: String) -> Bool { !seriesOf.isEmpty && seriesOf[key] != nil }

    /// The other keys a tick of `key` reads: the holdings and the portfolio symbol of every
    /// portfolio holding it, the members and the series symbol of every series it is in.
    func related(to key: String) -> [String] {
        (holders[key] ?? []).flatMap { k in
            portfolios[k].holdings.map { Key.of($0.symbol) } + [portfolios[k].symbol]
        }
            + (seriesOf[key] ?? []).flatMap { k in series[k].members + [series[k].symbol] }
    }

    /// Indices of the enabled pair-by-pair rules that apply to `key`, in rule order; `markets`
    /// is the market list of the key's source.
    func applicable(key: String, source: String?, symbol: String, markets: MarketList?, of rules: [Rule]) -> [Int32] {
        if source == nil, key.hasPrefix("@") { return bySynthetic[key] ?? [] }
        return scoped.applicable(key: key, source: source, symbol: symbol, markets: markets, of: rules)
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
        _ s: Int, time t: Int64, price p: Double, change24h: Double?, volume24h: Double?, prev: Double?,
        portfolio: Portfolio?, indexed: ArraySlice<Int32>, start: Int, into alerts: inout [Alert]
    ) {
        guard !symbols[s].pairRules.isEmpty else { return }
        var own: [(Int32, Alert)] = []
        let tick = TickFigures(t: t, p: p, prev: prev, change24h: change24h, volume24h: volume24h)
        evaluate(s, tick, portfolio: portfolio, into: &own)
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

    /// Every portfolio holding `key`, in the order the files define them: its value from the
    /// holdings' `prev` (a holding not ticked yet in this run has its saved one) as a synthetic
    /// tick of its `@NAME` key (Docs/rules.md#portfolios).
    mutating func evaluatePortfolios(holding key: String, time t: Int64, into alerts: inout [Alert]) {
        for k in pairRules.holders[key] ?? [] {
            let portfolio = pairRules.portfolios[k]
            var value = 0.0
            var defined = true
            for holding in portfolio.holdings {
                guard let p = last(of: Key.of(holding.symbol))?.price else {
                    defined = false
                    break
                }
                value += holding.amount * p
            }
            guard defined else { continue }
            evaluateSynthetic(portfolio.symbol, time: t, value: value, portfolio: portfolio, into: &alerts)
        }
    }

    /// Every series having `key` as a member, in the order the files define them: its value over
    /// the fresh members' last valid prices (a member not ticked yet in this run has its saved
    /// one) as a synthetic tick of its `@NAME` key, when enough members are fresh (rules v3 §4).
    mutating func evaluateSeries(member key: String, time t: Int64, into alerts: inout [Alert]) {
        for k in pairRules.seriesOf[key] ?? [] {
            let series = pairRules.series[k]
            let (oldest, overflow) = t.subtractingReportingOverflow(series.maxAge)
            var prices: [Double] = []
            var missing = false
            for member in series.members {
                if let seen = last(of: member), member == key || overflow || seen.time >= oldest {
                    prices.append(seen.price)
                } else {
                    missing = true
                }
            }
            if series.kind.isPair ? missing : (prices.count < series.quorum) { continue }
            let value = series.kind.value(of: prices)
            guard series.kind == .spread ? value.isFinite : value.isFinite && value > 0 else {
                droppedSynthetic += 1
                continue
            }
            evaluateSynthetic(series.symbol, time: t, value: value, portfolio: nil, into: &alerts)
        }
    }

    /// The time and price of `key`'s last valid tick: in this run, or saved by an earlier one.
    private func last(of key: String) -> (time: Int64, price: Double)? {
        if let s = symbolIndex[key] {
            guard let time = symbols[s].lastTime, let price = symbols[s].lastPrice else { return nil }
            return (time, price)
        }
        guard let saved = restoring[key], let time = saved.lastTime, let price = saved.lastPrice else { return nil }
        return (time, price)
    }

    /// A portfolio's or series' synthetic tick `(t, symbol, value)`: its own `prev`, history and
    /// pairs; dropped when earlier than the previous one (Docs/rules.md#portfolios).
    private mutating func evaluateSynthetic(
        _ symbol: String, time t: Int64, value: Double, portfolio: Portfolio?, into alerts: inout [Alert]
    ) {
        guard let ps = stateIndex(symbol, source: nil) else { return }
        if let last = symbols[ps].lastTime, t < last {
            droppedSynthetic += 1
            return
        }
        let prev = symbols[ps].lastPrice
        recordBuckets(ps, time: t, price: value)
        evaluatePairs(
            ps, time: t, price: value, change24h: nil, volume24h: nil, prev: prev, portfolio: portfolio, indexed: [],
            start: alerts.count, into: &alerts)
        symbols[ps].lastTime = t
        symbols[ps].lastPrice = value
    }

    /// What a tick gives the conditions: its time, price, `prev` and the source's figures.
    struct TickFigures {
        var t: Int64
        var p: Double
        var prev: Double?
        var change24h: Double?
        var volume24h: Double?
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
        _ s: Int, _ tick: TickFigures, portfolio: Portfolio?, into events: inout [(Int32, Alert)]
    ) {
        let t = tick.t, p = tick.p
        let names = EventNames(symbol: symbols[s].tickSymbol, source: symbols[s].source)
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
                    events.append((r, alert(rule, names, t, p, value: value, threshold: .value(threshold))))
                    pair.reference = move.reference(at: p)
                    pair.lastFired = t
                }
            default:
                let v = Self.verdict(rule.condition, rule, symbols[s], tick, portfolio: portfolio)
                var sustained = true
                if let sustain = extras?.sustain {
                    pair.since = pair.armed && v.f ? (pair.since ?? t) : nil
                    sustained = pair.since.map { t - $0 >= sustain } ?? false
                }
                step(&pair, rule, r, names, t, p, v, fire: cooled && sustained, into: &events)
            }
            symbols[s].pairs[r] = pair
        }
    }

    /// Firing (step 1), reminding (step 1½) and re-arming (step 2) of Docs/rules.md#firing-and-re-arming.
    private func step(
        _ pair: inout PairState, _ rule: Rule, _ r: Int32, _ names: EventNames, _ t: Int64, _ p: Double,
        _ v: Verdict, fire allowed: Bool, into events: inout [(Int32, Alert)]
    ) {
        if pair.armed, v.f, allowed {
            events.append((r, alert(rule, names, t, p, value: v.value, threshold: v.threshold)))
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
                        rule, names, t, p, value: v.value, threshold: v.threshold,
                        kind: .reminder, reminder: pair.reminders)
                ))
            pair.lastFired = t
        } else if !pair.armed, rule.repeatMode != .once, v.r {
            pair.armed = true
            if rule.extras?.resolve == true {
                events.append((r, alert(rule, names, t, p, value: v.value, threshold: v.threshold, kind: .resolved)))
            }
        }
    }

    /// The symbol and source an event of a key carries (rules v3 §6).
    struct EventNames {
        var symbol: String
        var source: String?
    }

    private func alert(
        _ rule: Rule, _ names: EventNames, _ t: Int64, _ p: Double, value: Double, threshold: Threshold,
        kind: AlertKind = .alert, reminder: Int? = nil
    ) -> Alert {
        var alert = Alert(
            rule: rule.id, symbol: names.symbol, time: t, price: p, condition: rule.condition.summary,
            threshold: threshold, value: value,
            template: rule.message ?? MessageTemplate.defaultTemplate(for: rule.condition),
            notify: rule.notify, kind: kind, reminder: reminder)
        alert.source = names.source
        return alert
    }

    private static func verdict(
        _ condition: Condition, _ rule: Rule, _ s: KeyState, _ tick: TickFigures, portfolio: Portfolio?
    ) -> Verdict {
        let h = rule.hysteresis
        let t = tick.t, p = tick.p, prev = tick.prev, change24h = tick.change24h
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
            let vs = members.map { Self.verdict($0, rule, s, tick, portfolio: portfolio) }
            return Verdict(f: vs.allSatisfy(\.f), r: vs.contains(where: \.r), k: vs.allSatisfy(\.k), value: p)
        case .any(let members):
            let vs = members.map { Self.verdict($0, rule, s, tick, portfolio: portfolio) }
            return Verdict(f: vs.contains(where: \.f), r: vs.allSatisfy(\.r), k: vs.contains(where: \.k), value: p)
        case .move, .listed:
            return Verdict()
        case .volume(.above(let limit)):
            // Unknown on a tick without `volume24h` (every synthetic tick) (rules v3 §5); a figure
            // that is not finite and ≥ 0 is none, as the tick reader takes it.
            guard let vol = tick.volume24h, vol.isFinite, vol >= 0 else { return Verdict(threshold: .value(limit)) }
            return Verdict(
                f: vol > limit, r: vol <= limit * (1 - h / 100), k: vol > limit, value: vol, threshold: .value(limit))
        case .volume(.below(let limit)):
            guard let vol = tick.volume24h, vol.isFinite, vol >= 0 else { return Verdict(threshold: .value(limit)) }
            return Verdict(
                f: vol < limit, r: vol >= limit * (1 + h / 100), k: vol < limit, value: vol, threshold: .value(limit))
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

extension SeriesDefinition.Kind {
    /// The series' value over the fresh members' last valid prices, in member order (rules v3
    /// §4); `spread` and `ratio` take `[A, B]`.
    func value(of prices: [Double]) -> Double {
        switch self {
        case .median:
            let sorted = prices.sorted()
            let middle = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        case .mean: return prices.reduce(0, +) / Double(prices.count)
        case .min: return prices.min()!
        case .max: return prices.max()!
        case .spread: return (prices[0] - prices[1]) / prices[1] * 100
        case .ratio: return prices[0] / prices[1]
        }
    }
}
