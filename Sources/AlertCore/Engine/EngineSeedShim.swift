// TEMPORARY (branch r14-edges only): stands in for the engine helper's `Engine.seed` and
// `Engine.historyReach(of:)` (v2-model.md) until r14-engine is merged; removed at that merge.

extension Engine {
    /// A seeded history tick: enters the minute history, counts for coverage, nothing else.
    @discardableResult
    public func seed(_ tick: Tick) -> DropReason? {
        core.seed(tick)
    }

    /// Milliseconds of history the longest change window of `rules` needs (0: none).
    public static func historyReach(of rules: [Rule]) -> Int64 {
        rules.reduce(0) { reach, rule in
            guard rule.enabled, case .change(let window, _) = rule.condition else { return reach }
            return max(reach, window)
        }
    }
}

extension EngineCore {
    mutating func seed(_ tick: Tick) -> DropReason? {
        guard tick.price.isFinite, tick.price > 0 else { return .invalidPrice }
        guard !tick.symbol.isEmpty else { return .emptySymbol }
        let symbol = Symbol.normalize(tick.symbol)
        let s: Int
        if let known = symbolIndex[symbol] {
            s = known
        } else if let state = makeState(symbol) {
            s = symbols.count
            symbols.append(state)
            symbolIndex[symbol] = s
        } else {
            return nil
        }
        if let last = symbols[s].lastTime, tick.time < last { return .outOfOrder }
        if symbols[s].firstTime == nil { symbols[s].firstTime = tick.time }
        symbols[s].lastTime = tick.time
        symbols[s].changed = true
        symbols[s].quiet = QuietWindow()
        if keepMinutes > 0, symbols[s].keepsHistory {
            symbols[s].history.record(minute: floorDivMod(tick.time, 60_000).0, price: tick.price, keepMinutes: keepMinutes)
        }
        return nil
    }
}
