public import AlertModel

/// A deliberately naive reading of rules v1, v2 and v3 (Docs/rules.md, rules-v3.md): every tick
/// of every key is kept, sorted by time, and every value is recomputed from them on each tick.
/// The engine must agree with it event for event.
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
    /// The market list of ticks without a source (v1 §4).
    let markets: [Market]?
    /// Each source's market list (rules v3 §3).
    let sourceMarkets: [String: [Market]]
    /// By key: `SYMBOL`, `source:SYMBOL`, or a portfolio's or series' `@NAME`.
    var series: [String: Series] = [:]
    var pairs: [String: Pair] = [:]
    /// Live ticks dropped as invalid (bad price, empty symbol, out of order, `@` symbol).
    public private(set) var dropped = 0
    /// Synthetic portfolio ticks dropped for being earlier than the portfolio's previous one.
    public private(set) var droppedSynthetic = 0

    public init(_ set: RefRuleSet, markets: [Market]? = nil, sourceMarkets: [String: [Market]] = [:]) {
        self.set = set
        self.markets = markets
        self.sourceMarkets = sourceMarkets
    }

    public convenience init(files: [String], markets: [Market]? = nil, sourceMarkets: [String: [Market]] = [:]) throws {
        self.init(try RefRuleSet(files: files), markets: markets, sourceMarkets: sourceMarkets)
    }

    /// A seeded history tick: it enters the symbol's history (buckets, highs and lows,
    /// coverage) and does nothing else.
    /// Choice: a seeded tick is dropped only for a bad price or an empty symbol. It is never
    /// out of order (history is kept sorted by time), and it does not move the time that later
    /// live ticks are checked against, so a backfill that overlaps the live stream loses no
    /// live tick. `@NAME` symbols may be seeded like any other.
    public func seed(_ tick: Tick) {
        guard tick.price.isFinite, tick.price > 0, !tick.symbol.isEmpty else { return }
        series[RefKey.of(tick), default: Series()].insert(Stored(time: tick.time, price: tick.price))
    }

    /// A candle's seeded ticks, in the order the rules give: `(s, low)`, `(s, high)`,
    /// `(e − 1 ms, close)`. Written out here rather than taken from `Candle.seededTicks`, so
    /// that the reference checks that function instead of sharing it.
    public func seed(symbol: String, start: Int64, end: Int64, high: Double, low: Double, close: Double) {
        seed(Tick(time: start, symbol: symbol, price: low))
        seed(Tick(time: start, symbol: symbol, price: high))
        seed(Tick(time: end - 1, symbol: symbol, price: close))
    }

    /// The events of one live tick, in order: the key's rules in rule order, then each
    /// portfolio holding the key in file order, with its rules in rule order, then each series
    /// having the key as a member in file order, with its rules in rule order.
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

    /// Where a tick comes from: its key, its source and upper-cased symbol (what its events
    /// carry), or the portfolio or series that made it.
    struct Origin {
        var key: String
        var source: String?
        var symbol: String
        var portfolio: RefPortfolio?
        var seriesName: String?
    }

    private func evaluateTick(_ tick: Tick) -> [RefEvent] {
        let symbol = tick.symbol.uppercased()
        let key = RefKey.of(tick)
        // Choice: a live tick whose symbol starts with `@` is dropped as invalid; only a
        // portfolio or a series makes `@` ticks.
        guard tick.price.isFinite, tick.price > 0, !symbol.isEmpty, !symbol.hasPrefix("@") else {
            dropped += 1
            return []
        }
        if let last = series[key]?.lastTime, tick.time < last {
            dropped += 1
            return []
        }
        // Choice: a `volume24h` that is not a finite number ≥ 0 is no figure (as the tick
        // reader ignores it).
        let volume = tick.volume24h.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        var events = evaluate(
            Origin(key: key, source: tick.source, symbol: symbol), time: tick.time, price: tick.price,
            change24h: tick.change24h, volume24h: volume)
        // Choice: the value uses live prices only (`prev`); seeded history does not make a
        // holding count as having ticked.
        for portfolio in set.portfolios where portfolio.holdings.contains(where: { $0.0 == key }) {
            var value = 0.0
            var defined = true
            for (held, amount) in portfolio.holdings {
                guard let p = series[held]?.prev else { defined = false; break }
                value += amount * p
            }
            guard defined else { continue }
            events += synthetic(
                Origin(key: portfolio.symbol, symbol: portfolio.symbol, portfolio: portfolio), time: tick.time,
                value: value)
        }
        for definition in set.series where definition.members.contains(key) {
            // Fresh: the last valid (live) tick at or after t − maxAge; the ticking member is.
            var fresh: [Double] = []
            for member in definition.members {
                guard let last = series[member]?.lastTime, let p = series[member]?.prev else { continue }
                if member == key || last >= tick.time - definition.maxAge { fresh.append(p) }
            }
            let pair = definition.kind == .spread || definition.kind == .ratio
            guard pair ? fresh.count == 2 : fresh.count >= definition.quorum else { continue }
            let value: Double
            switch definition.kind {
            case .median:
                let sorted = fresh.sorted()
                let n = sorted.count
                value = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
            case .mean: value = fresh.reduce(0, +) / Double(fresh.count)
            case .min: value = fresh.min()!
            case .max: value = fresh.max()!
            case .spread: value = (fresh[0] - fresh[1]) / fresh[1] * 100
            case .ratio: value = fresh[0] / fresh[1]
            }
            // A spread may be ≤ 0; every other value is a price (finite, > 0) (v1 §6).
            guard definition.kind == .spread ? value.isFinite : value.isFinite && value > 0 else {
                droppedSynthetic += 1
                continue
            }
            events += synthetic(
                Origin(key: definition.symbol, symbol: definition.symbol, seriesName: definition.name),
                time: tick.time, value: value)
        }
        return events
    }

    /// A portfolio's or series' tick: dropped when earlier than its previous one.
    private func synthetic(_ origin: Origin, time: Int64, value: Double) -> [RefEvent] {
        if let last = series[origin.key]?.lastTime, time < last {
            droppedSynthetic += 1
            return []
        }
        return evaluate(origin, time: time, price: value, change24h: nil, volume24h: nil)
    }

    private func evaluate(
        _ origin: Origin, time t: Int64, price p: Double, change24h: Double?, volume24h: Double?
    ) -> [RefEvent] {
        let symbol = origin.symbol
        let portfolio = origin.portfolio
        var s = series[origin.key] ?? Series()
        s.insert(Stored(time: t, price: p))
        series[origin.key] = s
        var events: [RefEvent] = []
        func event(
            _ kind: RefEvent.Kind, _ rule: RefRule, value: Double, threshold: RefEvent.Threshold,
            reminder: Int? = nil
        ) -> RefEvent {
            var e = RefEvent(kind, rule.id, symbol, t, price: p, value: value, threshold: threshold, reminder: reminder)
            e.source = origin.source
            return e
        }
        for rule in set.rules where rule.enabled && applies(rule, origin) {
            if let expires = rule.expires, t >= expires { continue }
            let key = rule.id + "\u{1}" + origin.key
            var pair = pairs[key] ?? Pair()
            let cooled = pair.lastFired.map { t - $0 >= rule.cooldown } ?? true
            switch rule.condition {
            case .movePercent(let percent):
                guard let ref = pair.reference else { pair.reference = p; break }
                let m = (p - ref) / ref * 100
                if abs(m) >= percent, cooled {
                    // Choice: a percent move's threshold is ±P, signed like the move.
                    events.append(event(.alert, rule, value: m, threshold: .number(m > 0 ? percent : -percent)))
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
                    events.append(event(.alert, rule, value: p, threshold: .number(up ? k * step : (k + 1) * step)))
                    pair.reference = k
                    pair.lastFired = t
                }
            default:
                let v = verdict(
                    rule.condition, rule, s, t: t, p: p, change24h: change24h, volume24h: volume24h,
                    portfolio: portfolio)
                if rule.sustain != nil {
                    if pair.armed && v.f { pair.since = pair.since ?? t } else { pair.since = nil }
                }
                // Choice: a reminder and a resolved event carry the alert's fields as they are
                // at their own tick: `value` and `threshold` of the condition (`p` and null
                // for `all`/`any`).
                let sustained = rule.sustain.map { d in pair.since.map { t - $0 >= d } ?? false } ?? true
                if pair.armed, v.f, sustained, cooled {
                    events.append(event(.alert, rule, value: v.value, threshold: v.threshold))
                    pair.lastFired = t
                    pair.armed = false
                    pair.since = nil
                    pair.reminders = 0
                } else if case .every(let every) = rule.repeatMode, !pair.armed, v.k,
                    let last = pair.lastFired, t - last >= max(every, rule.cooldown)
                {
                    pair.reminders += 1
                    events.append(
                        event(.reminder, rule, value: v.value, threshold: v.threshold, reminder: pair.reminders))
                    pair.lastFired = t
                } else if !pair.armed, rule.repeatMode != .once, v.r {
                    pair.armed = true
                    if rule.resolve {
                        events.append(event(.resolved, rule, value: v.value, threshold: v.threshold))
                    }
                }
            }
            pairs[key] = pair
        }
        s = series[origin.key]!
        s.prev = p
        s.lastTime = t
        series[origin.key] = s
        return events
    }

    /// Rules v3 §3. Choice: an unqualified entry or a `match` of a version 1 or 2 file applies
    /// to the ticks of every source too, as one of a version 3 file does (those files know no
    /// sources; their rules are about the symbol).
    private func applies(_ rule: RefRule, _ origin: Origin) -> Bool {
        let synthetic = origin.portfolio != nil || origin.seriesName != nil
        switch rule.scope {
        case .portfolio(let name): return origin.portfolio?.name == name
        case .series(let name): return origin.seriesName == name
        case .symbols(let list):
            guard !synthetic else { return false }
            return list.contains { entry in
                let key = RefKey.of(entry: entry, version: rule.version)
                // A qualified entry names a key of a source: exactly that key.
                if rule.version >= 3, entry.contains(":") { return origin.source != nil && key == origin.key }
                return key == origin.symbol
            }
        case .match(let filter):
            guard !synthetic else { return false }
            let list = origin.source.map { sourceMarkets[$0] } ?? markets
            guard let list else { return false }
            return list.contains { market in
                market.symbol.uppercased() == origin.symbol
                    && filter.allSatisfy { key, want in
                        switch key {
                        case "future": return want.bool == market.future
                        case "active": return want.bool == market.active
                        case "quote": return want.string?.uppercased() == market.quote.uppercased()
                        case "base": return want.string?.uppercased() == market.base.uppercased()
                        case "source":
                            let names = want.string.map { [$0] } ?? (want.array ?? []).compactMap(\.string)
                            return origin.source.map(names.contains) ?? false
                        default: return false
                        }
                    }
            }
        }
    }

    private func verdict(
        _ condition: RefRule.Condition, _ rule: RefRule, _ s: Series, t: Int64, p: Double,
        change24h: Double?, volume24h: Double?, portfolio: RefPortfolio?
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
            let vs = members.map {
                verdict($0, rule, s, t: t, p: p, change24h: change24h, volume24h: volume24h, portfolio: portfolio)
            }
            if isAll {
                return Verdict(f: vs.allSatisfy(\.f), r: vs.contains(where: \.r), k: vs.allSatisfy(\.k), value: p)
            }
            return Verdict(f: vs.contains(where: \.f), r: vs.allSatisfy(\.r), k: vs.contains(where: \.k), value: p)
        case .volume(let side, let limit):
            // Unknown without `volume24h` (rules v3 §5); re-arming as for a price level.
            guard let vol = volume24h else { return Verdict(threshold: .number(limit)) }
            var v = Verdict(value: vol, threshold: .number(limit))
            switch side {
            case .above: v.f = vol > limit; v.r = vol <= limit * (1 - h / 100)
            case .below: v.f = vol < limit; v.r = vol >= limit * (1 + h / 100)
            }
            v.k = v.f
            return v
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
