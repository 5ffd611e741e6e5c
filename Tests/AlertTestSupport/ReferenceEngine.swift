public import AlertModel

/// A deliberately naive reading of Docs/rules.md: every rule, every tick, every stored tick for
/// the change base. The real engine must agree with it alert for alert.
public final class ReferenceEngine {
    struct Pair { var armed = true; var lastFired: Int64?; var spent = false }
    struct Seen { var ticks: [(Int64, Double)] = []; var prev: Double?; var lastTime: Int64? }

    let rules: [Rule]
    public var markets: MarketList?
    var pairs: [String: Pair] = [:]
    var seen: [String: Seen] = [:]

    public init(rules: [Rule], markets: MarketList? = nil) {
        self.rules = rules
        self.markets = markets
    }

    /// How many alerts had each base id `rule:SYMBOL:time` so far.
    var emitted: [String: Int] = [:]

    /// (rule id, symbol, time, value, event id) for each alert. The event id is `rule:SYMBOL:time`,
    /// with `:n` for the n-th alert of the pair at that time (rules-v3 §6).
    public func process(_ tick: Tick) -> [(String, String, Int64, Double, String)] {
        guard tick.price.isFinite, tick.price > 0, !tick.symbol.isEmpty else { return [] }
        let symbol = tick.symbol.uppercased()
        // A symbol no rule applies to is not remembered (Docs/rules.md): if one applies after a
        // market-list reload, the symbol starts then.
        guard seen[symbol] != nil || rules.contains(where: { $0.enabled && applies($0, symbol) }) else { return [] }
        var s = seen[symbol] ?? Seen()
        if let last = s.lastTime, tick.time < last { return [] }
        let t = tick.time, p = tick.price
        var out: [(String, String, Int64, Double, String)] = []
        for rule in rules where rule.enabled && applies(rule, symbol) {
            var value: Double
            switch rule.condition {
            case .price: value = p
            case .change(let w, _):
                if w == 86_400_000, let c = tick.change24h {
                    value = c
                } else {
                    guard let first = s.ticks.first, first.0 <= t - w else { continue }
                    let boundary = (floorDiv(t - w, 60_000) + 1) * 60_000
                    guard let base = s.ticks.last(where: { $0.0 < boundary })?.1 else { continue }
                    value = (p - base) / base * 100
                }
            default:
                // Version 2 conditions: `ReferenceEngineV2`.
                continue
            }
            let key = rule.id + "|" + symbol
            var pair = pairs[key] ?? Pair()
            defer { pairs[key] = pair }
            if pair.spent { continue }
            if pair.armed, fires(rule, value, s.prev),
                pair.lastFired == nil || t - pair.lastFired! >= rule.cooldown
            {
                let base = "\(rule.id):\(symbol):\(t)"
                emitted[base, default: 0] += 1
                out.append((rule.id, symbol, t, value, emitted[base]! > 1 ? "\(base):\(emitted[base]!)" : base))
                pair.lastFired = t
                pair.armed = false
                if rule.repeatMode == .once { pair.spent = true }
            } else if !pair.armed, rule.repeatMode == .rearm, rearms(rule, value) {
                pair.armed = true
            }
        }
        s.ticks.append((t, p))
        s.prev = p
        s.lastTime = t
        seen[symbol] = s
        return out
    }

    private func applies(_ rule: Rule, _ symbol: String) -> Bool {
        switch rule.scope {
        case .symbols(let list): return list.contains { $0.uppercased() == symbol }
        case .match(let filter):
            guard let markets else { return false }
            return markets.markets.contains { $0.symbol.uppercased() == symbol && filter.matches($0) }
        case .portfolio, .series: return false
        }
    }

    private func fires(_ rule: Rule, _ v: Double, _ prev: Double?) -> Bool {
        switch rule.condition {
        case .price(.above(let x)): return v > x
        case .price(.below(let x)): return v < x
        case .price(.crossesAbove(let x)): return prev.map { $0 <= x && v > x } ?? false
        case .price(.crossesBelow(let x)): return prev.map { $0 >= x && v < x } ?? false
        case .price(.inside(let l, let h)): return l <= v && v <= h
        case .price(.outside(let l, let h)): return v < l || v > h
        case .change(_, .above(let c)): return v > c
        case .change(_, .below(let c)): return v < c
        default: return false
        }
    }

    private func rearms(_ rule: Rule, _ v: Double) -> Bool {
        let h = rule.hysteresis
        switch rule.condition {
        case .price(.above(let x)), .price(.crossesAbove(let x)): return v <= x * (1 - h / 100)
        case .price(.below(let x)), .price(.crossesBelow(let x)): return v >= x * (1 + h / 100)
        case .price(.inside(let l, let hi)): return v < l || v > hi
        case .price(.outside(let l, let hi)): return l <= v && v <= hi
        case .change(_, .above(let c)): return v <= c - h
        case .change(_, .below(let c)): return v >= c + h
        default: return false
        }
    }

    private func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }
}
