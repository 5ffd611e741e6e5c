/// The rules the threshold index does not serve (`Rule.isIndexed` false: version 2 conditions,
/// `for`, reminders, `expires`, `resolve`, windows over 24 h with hour buckets, portfolios),
/// evaluated pair by pair exactly as Docs/rules.md words it, and the portfolios' synthetic
/// ticks. Readable first: each tick looks at every pair of its symbol.
import AlertModel

final class PlainEvaluator {
    let rules: [Rule]
    let portfolios: [Portfolio]
    /// Enabled plain rules by upper-cased symbol, for `symbol`/`symbols` rules.
    private let bySymbol: [String: [Int32]]
    /// Enabled plain `match` rules.
    private let matchRules: [Int32]
    /// Enabled rules by portfolio symbol (`@NAME`).
    private let byPortfolio: [String: [Int32]]
    /// Portfolio indices by the upper-cased symbols they hold, in the order the files define them.
    private let holders: [String: [Int]]
    /// Minutes and hours of history the longest window of each bucket size needs (0: none).
    let keepMinutes: Int64
    let keepHours: Int64
    private(set) var markets: MarketList?

    var series: [String: PlainSeries] = [:]
    /// Symbols with no plain rule and no portfolio holding them, so their ticks skip the lookup;
    /// emptied when the market list changes.
    private var ignored: Set<String> = []
    /// Synthetic ticks dropped for being earlier than their portfolio's previous one.
    private(set) var droppedSynthetic = 0
    /// Saved state of symbols not seen yet in this run (see `Engine.restore`).
    var restoring: [String: SeriesSnapshot] = [:]
    /// Each rule's `RuleFingerprint` once needed (nil: not computed yet).
    private var fingerprints: [Int32: UInt64] = [:]
    /// Rule ids to indices, built on the first restore.
    private var ruleIndexByID: [String: Int32]?

    /// Nil when no rule needs it and there is no portfolio: the engine then runs as before.
    init?(rules: [Rule], markets: MarketList?, portfolios: [Portfolio]) {
        var bySymbol: [String: [Int32]] = [:]
        var match: [Int32] = []
        var byPortfolio: [String: [Int32]] = [:]
        var minutes: Int64 = 0, hours: Int64 = 0
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
            }
            for window in Self.windows(rules[i].condition) {
                if Self.bucketSize(window: window, fileVersion: rules[i].fileVersion) == Self.hour {
                    hours = max(hours, window / Self.hour)
                } else {
                    minutes = max(minutes, window / Self.minute)
                }
            }
        }
        if bySymbol.isEmpty, match.isEmpty, byPortfolio.isEmpty, portfolios.isEmpty { return nil }
        var holders: [String: [Int]] = [:]
        for (k, portfolio) in portfolios.enumerated() {
            for holding in portfolio.holdings where holders[Symbol.normalize(holding.symbol)]?.last != k {
                holders[Symbol.normalize(holding.symbol), default: []].append(k)
            }
        }
        self.rules = rules
        self.portfolios = portfolios
        self.bySymbol = bySymbol
        self.matchRules = match
        self.byPortfolio = byPortfolio
        self.holders = holders
        self.keepMinutes = minutes
        self.keepHours = hours
        self.markets = markets
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
        case .price, .pnl, .move, .listed: return []
        }
    }

    var hasPortfolios: Bool { !portfolios.isEmpty }

    /// The other symbols a tick of `symbol` reads: the holdings and the portfolio symbol of
    /// every portfolio holding it.
    func related(to symbol: String) -> [String] {
        (holders[symbol] ?? []).flatMap { k in
            portfolios[k].holdings.map { Symbol.normalize($0.symbol) } + [portfolios[k].symbol]
        }
    }

    /// Whether a live tick of `symbol` at `time` comes before the symbol's previous valid one.
    func isOutOfOrder(_ symbol: String, time: Int64) -> Bool {
        guard let last = series[symbol]?.lastTime else { return false }
        return time < last
    }

    /// Seeded history (Docs/rules.md#seeded-history): enters the symbol's buckets and its
    /// coverage; no `prev`, no evaluation.
    func seed(_ symbol: String, time t: Int64, price p: Double) {
        guard let s = seriesIndex(symbol) else { return }
        series[s]!.record(time: t, price: p, keepMinutes: keepMinutes, keepHours: keepHours)
    }

    /// Evaluates a valid live tick: the symbol's plain rules, merged in rule order with the
    /// alerts the indexed path gave (`indexed`: their rule indices, ascending, one per alert
    /// appended from `start` on), then every portfolio holding the symbol (Docs/rules.md#event-order).
    /// Returns whether a plain rule or a portfolio watches `symbol`.
    @discardableResult
    func process(_ symbol: String, _ tick: Tick, indexed: ArraySlice<Int32>, start: Int, into alerts: inout [Alert]) -> Bool {
        guard let s = seriesIndex(symbol) else { return false }
        var own: [(Int32, Alert)] = []
        evaluate(s, time: tick.time, price: tick.price, change24h: tick.change24h, portfolio: nil, into: &own)
        if !own.isEmpty {
            if indexed.isEmpty {
                alerts += own.map(\.1)
            } else {
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
        }
        for k in holders[symbol] ?? [] {
            let portfolio = portfolios[k]
            var value = 0.0
            var defined = true
            for holding in portfolio.holdings {
                // A holding not ticked yet in this run has its saved `prev`.
                let held = Symbol.normalize(holding.symbol)
                guard let p = series[held]?.prev ?? restoring[held]?.prev else { defined = false; break }
                value += holding.amount * p
            }
            guard defined, let ps = seriesIndex(portfolio.symbol) else { continue }
            if let last = series[ps]!.lastTime, tick.time < last {
                droppedSynthetic += 1
                continue
            }
            var events: [(Int32, Alert)] = []
            evaluate(ps, time: tick.time, price: value, change24h: nil, portfolio: portfolio, into: &events)
            alerts += events.map(\.1)
        }
        return true
    }

    /// The series of `symbol`, made on first use; nil when nothing here needs the symbol.
    private func seriesIndex(_ symbol: String) -> String? {
        if series[symbol] != nil { return symbol }
        if ignored.contains(symbol) { return nil }
        let applicable = applicableRules(symbol)
        var made = PlainSeries(rules: applicable)
        if let snapshot = restoring.removeValue(forKey: symbol) { restore(&made, from: snapshot) }
        if applicable.isEmpty, holders[symbol] == nil, made.pairs.isEmpty {
            if ignored.count < EngineCore.unwatchedLimit { ignored.insert(symbol) }
            return nil
        }
        series[symbol] = made
        return symbol
    }

    /// Indices of the enabled plain rules that apply to `symbol`, in rule order.
    private func applicableRules(_ symbol: String) -> [Int32] {
        if symbol.hasPrefix("@") { return byPortfolio[symbol] ?? [] }
        let applicable = bySymbol[symbol] ?? []
        guard !matchRules.isEmpty, let markets else { return applicable }
        return markets.adding(matchRules, of: rules, to: applicable, for: symbol)
    }

    /// A new market list: every known symbol's `match` rules are resolved again; pairs keep
    /// their state by rule.
    func replaceMarkets(_ list: MarketList?) {
        markets = list
        ignored = []
        guard !matchRules.isEmpty else { return }
        for symbol in series.keys where !symbol.hasPrefix("@") {
            series[symbol]!.rules = applicableRules(symbol)
        }
    }

    // MARK: Saved state

    /// Takes over a saved series: its history and `prev`, and the pairs of rules whose id and
    /// fingerprint are unchanged (an edited rule starts over, Docs/rules.md#state).
    private func restore(_ series: inout PlainSeries, from snapshot: SeriesSnapshot) {
        series.firstTime = snapshot.firstTime
        series.prev = snapshot.prev
        series.lastTime = snapshot.lastTime
        series.newest = snapshot.newest
        series.minutes = snapshot.minutes
        series.hours = snapshot.hours
        if ruleIndexByID == nil {
            var byID: [String: Int32] = [:]
            for i in rules.indices { byID[rules[i].id] = Int32(i) }
            ruleIndexByID = byID
        }
        for saved in snapshot.pairs {
            guard let r = ruleIndexByID?[saved.rule], fingerprint(r) == saved.fingerprint else { continue }
            series.pairs[r] = saved.pair
        }
    }

    private func fingerprint(_ r: Int32) -> UInt64 {
        if let known = fingerprints[r] { return known }
        let value = RuleFingerprint.of(rules[Int(r)])
        fingerprints[r] = value
        return value
    }

    /// The saved form of a symbol's series (fresh pairs, armed and never fired, are left out).
    func snapshot(_ symbol: String) -> SeriesSnapshot? {
        guard let s = series[symbol] else { return restoring[symbol] }
        let pairs = s.pairs.filter { $0.value != PlainPair() }.sorted { $0.key < $1.key }.map {
            SeriesPairSnapshot(rule: rules[Int($0.key)].id, fingerprint: fingerprint($0.key), pair: $0.value)
        }
        return SeriesSnapshot(firstTime: s.firstTime, prev: s.prev, lastTime: s.lastTime, newest: s.newest,
                              minutes: s.minutes, hours: s.hours, pairs: pairs)
    }

    /// The symbols whose series took a tick since the last call (all known ones with `all`,
    /// including saved ones not used yet); they count as saved afterwards.
    func takeChanged(all: Bool) -> [String] {
        var out: [String] = []
        for (symbol, s) in series where all || s.changed {
            out.append(symbol)
            series[symbol]!.changed = false
        }
        if all { out += restoring.keys }
        return out.sorted()
    }

    // MARK: Evaluation

    /// What one condition says on one tick (Docs/rules.md#conditions): fire `f`, re-arm `r`,
    /// holds `k`; an unknown value makes all three false.
    struct Verdict {
        var f = false, r = false, k = false
        var value = Double.nan
        var threshold = Threshold.none
    }

    /// The symbol's rules on one tick, in rule order; the tick is recorded first (a window's
    /// high and low include it), and becomes `prev` last.
    private func evaluate(_ key: String, time t: Int64, price p: Double, change24h: Double?, portfolio: Portfolio?,
                          into events: inout [(Int32, Alert)]) {
        var s = series.removeValue(forKey: key)!
        defer { series[key] = s }
        let prev = s.prev
        s.record(time: t, price: p, keepMinutes: keepMinutes, keepHours: keepHours)
        s.prev = p
        s.lastTime = t
        let symbol = key
        for r in s.rules {
            let rule = rules[Int(r)]
            let extras = rule.extras
            if let expires = extras?.expires, t >= expires { continue }
            var pair = s.pairs[r] ?? PlainPair()
            let cooled = pair.lastFired.map { t - $0 >= rule.cooldown } ?? true
            switch rule.condition {
            case .move(let move):
                guard let reference = pair.reference else {
                    pair.reference = move.reference(at: p)
                    break
                }
                if cooled, let (value, threshold) = move.fires(price: p, reference: reference, hysteresis: rule.hysteresis) {
                    events.append((r, alert(rule, symbol, t, p, value: value, threshold: .value(threshold))))
                    pair.reference = move.reference(at: p)
                    pair.lastFired = t
                }
            default:
                let v = verdict(rule.condition, rule, s, t: t, p: p, prev: prev, change24h: change24h, portfolio: portfolio)
                var sustained = true
                if let sustain = extras?.sustain {
                    pair.since = pair.armed && v.f ? (pair.since ?? t) : nil
                    sustained = pair.since.map { t - $0 >= sustain } ?? false
                }
                step(&pair, rule, r, symbol, t, p, v, fire: cooled && sustained, into: &events)
            }
            s.pairs[r] = pair
        }
        s.changed = true
    }

    /// Firing (step 1), reminding (step 1½) and re-arming (step 2) of Docs/rules.md#firing-and-re-arming.
    private func step(_ pair: inout PlainPair, _ rule: Rule, _ r: Int32, _ symbol: String, _ t: Int64, _ p: Double,
                      _ v: Verdict, fire allowed: Bool, into events: inout [(Int32, Alert)]) {
        if pair.armed, v.f, allowed {
            events.append((r, alert(rule, symbol, t, p, value: v.value, threshold: v.threshold)))
            pair.lastFired = t
            pair.armed = false
            pair.since = nil
            pair.reminders = 0
        } else if let every = rule.extras?.remindEvery, !pair.armed, v.k,
                  let last = pair.lastFired, t - last >= max(every, rule.cooldown) {
            pair.reminders += 1
            events.append((r, alert(rule, symbol, t, p, value: v.value, threshold: v.threshold,
                                    kind: .reminder, reminder: pair.reminders)))
            pair.lastFired = t
        } else if !pair.armed, rule.repeatMode != .once, v.r {
            pair.armed = true
            if rule.extras?.resolve == true {
                events.append((r, alert(rule, symbol, t, p, value: v.value, threshold: v.threshold, kind: .resolved)))
            }
        }
    }

    private func alert(_ rule: Rule, _ symbol: String, _ t: Int64, _ p: Double, value: Double, threshold: Threshold,
                       kind: AlertKind = .alert, reminder: Int? = nil) -> Alert {
        Alert(rule: rule.id, symbol: symbol, time: t, price: p, condition: rule.condition.summary,
              threshold: threshold, value: value,
              template: rule.message ?? MessageTemplate.defaultTemplate(for: rule.condition),
              notify: rule.notify, kind: kind, reminder: reminder)
    }

    private func verdict(_ condition: Condition, _ rule: Rule, _ s: PlainSeries, t: Int64, p: Double, prev: Double?,
                         change24h: Double?, portfolio: Portfolio?) -> Verdict {
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
            let vs = members.map { verdict($0, rule, s, t: t, p: p, prev: prev, change24h: change24h, portfolio: portfolio) }
            return Verdict(f: vs.allSatisfy(\.f), r: vs.contains(where: \.r), k: vs.allSatisfy(\.k), value: p)
        case .any(let members):
            let vs = members.map { verdict($0, rule, s, t: t, p: p, prev: prev, change24h: change24h, portfolio: portfolio) }
            return Verdict(f: vs.contains(where: \.f), r: vs.allSatisfy(\.r), k: vs.contains(where: \.k), value: p)
        case .move, .listed:
            return Verdict()
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

/// One (rule, symbol) pair of a plain rule (Docs/rules.md#firing-and-re-arming, #for, #reminders, #moves).
struct PlainPair: Sendable, Equatable {
    var armed = true
    var lastFired: Int64?
    /// `for`: since when the condition has held while armed.
    var since: Int64?
    /// Reminders since the pair last fired normally.
    var reminders = 0
    /// `move`: the reference price (`percent`) or level `K` (`step`); nil before the pair's first tick.
    var reference: Double?
}

/// Everything the plain evaluator keeps for one symbol (or portfolio).
struct PlainSeries: Sendable {
    /// The plain rules that apply, in rule order.
    var rules: [Int32]
    /// The earliest tick, live or seeded (window coverage).
    var firstTime: Int64?
    /// The previous valid live tick: `prev` and its time.
    var prev: Double?
    var lastTime: Int64?
    /// The newest tick recorded, live or seeded.
    var newest: Int64?
    var minutes = Buckets()
    var hours = Buckets()
    /// The minute and hour bucket the last seeded tick older than `newest` opened
    /// (`Buckets.record`). Not saved: it matters only while one backfill's ticks arrive.
    var seededMinute: Int64?
    var seededHour: Int64?
    var pairs: [Int32: PlainPair] = [:]
    /// Took a tick since its state was last saved.
    var changed = false

    init(rules: [Int32]) {
        self.rules = rules
    }

    mutating func record(time t: Int64, price p: Double, keepMinutes: Int64, keepHours: Int64) {
        firstTime = min(firstTime ?? t, t)
        let latest = newest.map { t >= $0 } ?? true
        if latest { newest = t }
        if keepMinutes > 0 {
            minutes.record(key: floorDivMod(t, PlainEvaluator.minute).0, price: p, latest: latest, keep: keepMinutes, seeded: &seededMinute)
        }
        if keepHours > 0 {
            hours.record(key: floorDivMod(t, PlainEvaluator.hour).0, price: p, latest: latest, keep: keepHours, seeded: &seededHour)
        }
        changed = true
    }

    /// `c` of Docs/rules.md#change-windows, or nil while unknown.
    func change(t: Int64, p: Double, window w: Int64, change24h: Double?, fileVersion: UInt8) -> Double? {
        if w == PlainEvaluator.day, let c = change24h, c.isFinite { return c }
        let (start, overflow) = t.subtractingReportingOverflow(w)
        guard !overflow, let first = firstTime, first <= start else { return nil }
        let size = PlainEvaluator.bucketSize(window: w, fileVersion: fileVersion)
        let buckets = size == PlainEvaluator.hour ? hours : minutes
        guard let base = buckets.price(atOrBefore: floorDivMod(start, size).0) else { return nil }
        return (p - base) / base * 100
    }

    /// `d` of Docs/rules.md#highs-and-lows, or nil while unknown.
    func fromExtreme(t: Int64, p: Double, window w: Int64, high: Bool) -> Double? {
        let (start, overflow) = t.subtractingReportingOverflow(w)
        guard !overflow, let first = firstTime, first <= start else { return nil }
        let size = PlainEvaluator.bucketSize(window: w, fileVersion: 2)
        let buckets = size == PlainEvaluator.hour ? hours : minutes
        guard let e = buckets.extreme(from: floorDivMod(start, size).0, high: high) else { return nil }
        return (p - e) / e * 100
    }
}
