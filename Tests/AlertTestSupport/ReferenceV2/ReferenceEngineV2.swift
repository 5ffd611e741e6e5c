public import AlertModel

/// A deliberately naive reading of rules v1 and v2 (Docs/rules.md): every tick of every symbol
/// is kept, sorted by time, and every value is recomputed from them on each tick. The engine
/// must agree with it event for event.
///
/// Choices where the rules' text is silent are marked `Choice:` below.
public final class ReferenceEngineV2 {
    struct Stored { var time: Int64; var price: Double }
    struct Series {
        /// Live and seeded ticks, ordered by time; equal times keep arrival order.
        /// Choice: "the last price before the boundary" means the latest by time (arrival
        /// order among equal times), also when seeded ticks arrive after live ones. Seeded
        /// history serves the rules of version 1 files too: it is the symbol's history.
        var ticks: [Stored] = []
        /// The last live price and time. Seeded ticks set neither.
        var prev: Double?
        var lastTime: Int64?

        mutating func insert(_ s: Stored) {
            let at = ticks.lastIndex { $0.time <= s.time }.map { $0 + 1 } ?? 0
            ticks.insert(s, at: at)
        }
    }
    struct Pair {
        var armed = true
        var lastFired: Int64?
        var since: Int64?
        var reminders = 0
        /// `move`: the reference price (percent) or level `K` (step); nil before the first tick.
        var reference: Double?
    }
    /// What one condition says on one tick; unknown is already false in `f`, `r` and `k`.
    struct Verdict { var f = false, r = false, k = false, value = Double.nan, threshold = RefEvent.Threshold.none }

    let set: RefRuleSet
    let markets: [Market]?
    var series: [String: Series] = [:]
    var pairs: [String: Pair] = [:]
    /// Live ticks dropped as invalid (bad price, empty symbol, out of order, `@` symbol).
    public private(set) var dropped = 0
    /// Synthetic portfolio ticks dropped for being earlier than the portfolio's previous one.
    public private(set) var droppedSynthetic = 0

    public init(_ set: RefRuleSet, markets: [Market]? = nil) {
        self.set = set
        self.markets = markets
    }

    public convenience init(files: [String], markets: [Market]? = nil) throws {
        self.init(try RefRuleSet(files: files), markets: markets)
    }

    /// A seeded history tick: it enters the symbol's history (buckets, highs and lows,
    /// coverage) and does nothing else.
    /// Choice: a seeded tick is dropped only for a bad price or an empty symbol. It is never
    /// out of order (history is kept sorted by time), and it does not move the time that later
    /// live ticks are checked against, so a backfill that overlaps the live stream loses no
    /// live tick. `@NAME` symbols may be seeded like any other.
    public func seed(_ tick: Tick) {
        guard tick.price.isFinite, tick.price > 0, !tick.symbol.isEmpty else { return }
        series[tick.symbol.uppercased(), default: Series()].insert(Stored(time: tick.time, price: tick.price))
    }

    /// A candle's seeded ticks, in the order the rules give: `(s, low)`, `(s, high)`,
    /// `(e − 1 ms, close)`. Written out here rather than taken from `Candle.seededTicks`, so
    /// that the reference checks that function instead of sharing it.
    public func seed(symbol: String, start: Int64, end: Int64, high: Double, low: Double, close: Double) {
        seed(Tick(time: start, symbol: symbol, price: low))
        seed(Tick(time: start, symbol: symbol, price: high))
        seed(Tick(time: end - 1, symbol: symbol, price: close))
    }

    /// The events of one live tick, in order: the symbol's rules in rule order, then each
    /// portfolio holding the symbol in file order, with its rules in rule order.
    public func process(_ tick: Tick) -> [RefEvent] {
        var events = evaluateTick(tick)
        // Every id unique (rules-v3 §6): the n-th event of a pair with one base id gets `:n`.
        for i in events.indices {
            let base = events[i].baseID
            emitted[base, default: 0] += 1
            events[i].occurrence = emitted[base]!
        }
        return events
    }

    /// How many events had each base id so far (every one ever: the naive reading of the rule).
    var emitted: [String: Int] = [:]

    private func evaluateTick(_ tick: Tick) -> [RefEvent] {
        let symbol = tick.symbol.uppercased()
        // Choice: a live tick whose symbol starts with `@` is dropped as invalid; only a
        // portfolio makes `@` ticks.
        guard tick.price.isFinite, tick.price > 0, !symbol.isEmpty, !symbol.hasPrefix("@") else {
            dropped += 1
            return []
        }
        if let last = series[symbol]?.lastTime, tick.time < last {
            dropped += 1
            return []
        }
        var events = evaluate(
            symbol: symbol, time: tick.time, price: tick.price, change24h: tick.change24h, portfolio: nil)
        // Choice: the value uses live prices only (`prev`); seeded history does not make a
        // holding count as having ticked.
        for portfolio in set.portfolios where portfolio.holdings.contains(where: { $0.0 == symbol }) {
            var value = 0.0
            var defined = true
            for (held, amount) in portfolio.holdings {
                guard let p = series[held]?.prev else { defined = false; break }
                value += amount * p
            }
            guard defined else { continue }
            if let last = series[portfolio.symbol]?.lastTime, tick.time < last {
                droppedSynthetic += 1
                continue
            }
            events += evaluate(
                symbol: portfolio.symbol, time: tick.time, price: value, change24h: nil, portfolio: portfolio)
        }
        return events
    }

    private func evaluate(
        symbol: String, time t: Int64, price p: Double, change24h: Double?,
        portfolio: RefPortfolio?
    ) -> [RefEvent] {
        var s = series[symbol] ?? Series()
        s.insert(Stored(time: t, price: p))
        series[symbol] = s
        var events: [RefEvent] = []
        for rule in set.rules where rule.enabled && applies(rule, symbol, portfolio) {
            if let expires = rule.expires, t >= expires { continue }
            let key = rule.id + "\u{1}" + symbol
            var pair = pairs[key] ?? Pair()
            let cooled = pair.lastFired.map { t - $0 >= rule.cooldown } ?? true
            switch rule.condition {
            case .movePercent(let percent):
                guard let ref = pair.reference else { pair.reference = p; break }
                let m = (p - ref) / ref * 100
                if abs(m) >= percent, cooled {
                    // Choice: a percent move's threshold is ±P, signed like the move.
                    events.append(
                        RefEvent(
                            .alert, rule.id, symbol, t, price: p, value: m,
                            threshold: .number(m > 0 ? percent : -percent)))
                    pair.reference = p
                    pair.lastFired = t
                }
            case .moveStep(let step):
                guard let level = pair.reference else { pair.reference = (p / step).rounded(.down); break }
                let g = step * rule.hysteresis / 100
                let up = p >= (level + 1) * step + g
                let down = p < level * step - g
                if up || down, cooled {
                    let k = (p / step).rounded(.down)
                    events.append(
                        RefEvent(
                            .alert, rule.id, symbol, t, price: p, value: p,
                            threshold: .number(up ? k * step : (k + 1) * step)))
                    pair.reference = k
                    pair.lastFired = t
                }
            default:
                let v = verdict(rule.condition, rule, s, t: t, p: p, change24h: change24h, portfolio: portfolio)
                if rule.sustain != nil {
                    if pair.armed && v.f { pair.since = pair.since ?? t } else { pair.since = nil }
                }
                // Choice: a reminder and a resolved event carry the alert's fields as they are
                // at their own tick: `value` and `threshold` of the condition (`p` and null
                // for `all`/`any`).
                let sustained = rule.sustain.map { d in pair.since.map { t - $0 >= d } ?? false } ?? true
                if pair.armed, v.f, sustained, cooled {
                    events.append(
                        RefEvent(.alert, rule.id, symbol, t, price: p, value: v.value, threshold: v.threshold))
                    pair.lastFired = t
                    pair.armed = false
                    pair.since = nil
                    pair.reminders = 0
                } else if case .every(let every) = rule.repeatMode, !pair.armed, v.k,
                    let last = pair.lastFired, t - last >= max(every, rule.cooldown)
                {
                    pair.reminders += 1
                    events.append(
                        RefEvent(
                            .reminder, rule.id, symbol, t, price: p, value: v.value,
                            threshold: v.threshold, reminder: pair.reminders))
                    pair.lastFired = t
                } else if !pair.armed, rule.repeatMode != .once, v.r {
                    pair.armed = true
                    if rule.resolve {
                        events.append(
                            RefEvent(.resolved, rule.id, symbol, t, price: p, value: v.value, threshold: v.threshold))
                    }
                }
            }
            pairs[key] = pair
        }
        s = series[symbol]!
        s.prev = p
        s.lastTime = t
        series[symbol] = s
        return events
    }

    private func applies(_ rule: RefRule, _ symbol: String, _ portfolio: RefPortfolio?) -> Bool {
        switch rule.scope {
        case .portfolio(let name): return portfolio?.name == name
        case .symbols(let list): return portfolio == nil && list.contains(symbol)
        case .match(let filter):
            guard portfolio == nil, let markets else { return false }
            return markets.contains { market in
                market.symbol.uppercased() == symbol
                    && filter.allSatisfy { key, want in
                        switch key {
                        case "future": return want.bool == market.future
                        case "active": return want.bool == market.active
                        case "quote": return want.string?.uppercased() == market.quote.uppercased()
                        case "base": return want.string?.uppercased() == market.base.uppercased()
                        default: return false
                        }
                    }
            }
        }
    }

    private func verdict(
        _ condition: RefRule.Condition, _ rule: RefRule, _ s: Series, t: Int64, p: Double,
        change24h: Double?, portfolio: RefPortfolio?
    ) -> Verdict {
        let h = rule.hysteresis
        func level(_ x: Double, above: Bool, crossing: Bool) -> Verdict {
            var v = Verdict(value: p, threshold: .number(x))
            if above {
                v.k = p > x
                v.f = crossing ? (s.prev.map { $0 <= x } ?? false) && p > x : p > x
                v.r = p <= x * (1 - h / 100)
            } else {
                v.k = p < x
                v.f = crossing ? (s.prev.map { $0 >= x } ?? false) && p < x : p < x
                v.r = p >= x * (1 + h / 100)
            }
            return v
        }
        /// `f`/`r` of a percentage `c` against `C` (change, fromHigh/fromLow, pnl); all false
        /// when `c` is unknown.
        func percent(_ c: Double?, _ side: RefRule.Side, _ limit: Double) -> Verdict {
            guard let c else { return Verdict(threshold: .number(limit)) }
            var v = Verdict(value: c, threshold: .number(limit))
            switch side {
            case .above: v.f = c > limit; v.r = c <= limit - h
            case .below: v.f = c < limit; v.r = c >= limit + h
            }
            v.k = v.f
            return v
        }
        switch condition {
        case .above(let x): return level(x, above: true, crossing: false)
        case .below(let x): return level(x, above: false, crossing: false)
        case .crossesAbove(let x): return level(x, above: true, crossing: true)
        case .crossesBelow(let x): return level(x, above: false, crossing: true)
        case .inside(let l, let hi):
            let inside = l <= p && p <= hi
            return Verdict(f: inside, r: !inside, k: inside, value: p, threshold: .range(l, hi))
        case .outside(let l, let hi):
            let outside = p < l || p > hi
            return Verdict(f: outside, r: !outside, k: outside, value: p, threshold: .range(l, hi))
        case .change(let w, let side, let limit):
            return percent(change(s, t: t, p: p, window: w, change24h: change24h, version: rule.version), side, limit)
        case .fromHigh(let w, let side, let limit):
            return percent(extreme(s, t: t, p: p, window: w, high: true), side, limit)
        case .fromLow(let w, let side, let limit):
            return percent(extreme(s, t: t, p: p, window: w, high: false), side, limit)
        case .pnl(let side, let limit):
            let c = portfolio?.cost.map { (p - $0) / $0 * 100 }
            return percent(c, side, limit)
        case .all(let members), .any(let members):
            var isAll = false
            if case .all = condition { isAll = true }
            let vs = members.map { verdict($0, rule, s, t: t, p: p, change24h: change24h, portfolio: portfolio) }
            if isAll {
                return Verdict(f: vs.allSatisfy(\.f), r: vs.contains(where: \.r), k: vs.allSatisfy(\.k), value: p)
            }
            return Verdict(f: vs.contains(where: \.f), r: vs.allSatisfy(\.r), k: vs.contains(where: \.k), value: p)
        case .movePercent, .moveStep:
            return Verdict()
        }
    }

    /// Minute buckets up to 24 h; hour buckets above 24 h in version 2 files. A version 1 file
    /// keeps minute buckets for every window.
    private func bucket(_ window: Int64, version: Int) -> Int64 {
        version >= 2 && window > 86_400_000 ? 3_600_000 : 60_000
    }

    private func change(_ s: Series, t: Int64, p: Double, window w: Int64, change24h: Double?, version: Int) -> Double?
    {
        if w == 86_400_000, let c = change24h { return c }
        guard let first = s.ticks.first, first.time <= t - w else { return nil }
        let size = bucket(w, version: version)
        let boundary = (floorDiv(t - w, size) + 1) * size
        guard let base = s.ticks.last(where: { $0.time < boundary })?.price else { return nil }
        return (p - base) / base * 100
    }

    private func extreme(_ s: Series, t: Int64, p: Double, window w: Int64, high: Bool) -> Double? {
        guard let first = s.ticks.first, first.time <= t - w else { return nil }
        let m0 = floorDiv(t - w, bucket(w, version: 2)) * bucket(w, version: 2)
        let prices = s.ticks.filter { $0.time >= m0 && $0.time <= t }.map(\.price)
        guard let e = high ? prices.max() : prices.min() else { return nil }
        return (p - e) / e * 100
    }

    private func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }
}
