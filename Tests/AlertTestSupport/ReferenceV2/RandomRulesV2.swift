public import AlertModel
public import SeededRandom

/// Random version 2 rule files, tick streams and candles for comparing an implementation with
/// `ReferenceEngineV2`. Every rule is valid by the rules' text: `for` never on a crossing or a
/// `move`, no `repeat` or `resolve` on a `move`, no `resolve` with `once`, no hysteresis on a
/// percent move or on a range that is the whole condition, windows over 24 h in whole hours.
public enum RandomRulesV2 {
    /// The symbols the streams use; the portfolio `pf` holds the first two.
    public static let symbols = ["AAA", "BBB", "CCC"]

    /// One `"version": 2` file: `count` rules over `symbols`, every fifth one on the portfolio.
    /// `expiresAt` (epoch ms) is the instant some rules expire at.
    public static func file(_ rng: inout SeededRandom, count: Int, expiresAt: Int64) -> String {
        var rules: [String] = []
        for i in 0..<count {
            let portfolio = i % 5 == 4
            let scope = portfolio ? #""portfolio": "pf""# : #""symbol": "\#(symbols.randomElement(using: &rng)!)""#
            let level = portfolio ? 300.0 : 100.0
            var keys: [String] = []
            let when: String
            let kind = Int.random(in: 0..<10, using: &rng)
            var crossingOrMove = false, move = false, percentMove = false
            switch kind {
            case 0, 1:
                let (w, crossing) = leaf(&rng, level: level, portfolio: portfolio)
                when = w
                crossingOrMove = crossing
            case 2, 3, 4:
                let members = (0..<Int.random(in: 2...3, using: &rng)).map { _ in
                    leaf(&rng, level: level, portfolio: portfolio)
                }
                let inner = members.map(\.0).joined(separator: ", ")
                crossingOrMove = members.contains { $0.1 }
                if Bool.random(using: &rng) {
                    when = #"{"\#(Bool.random(using: &rng) ? "all" : "any")": [\#(inner)]}"#
                } else {
                    let extra = leaf(&rng, level: level, portfolio: portfolio)
                    crossingOrMove = crossingOrMove || extra.1
                    when = #"{"all": [{"any": [\#(inner)]}, \#(extra.0)]}"#
                }
            case 5:
                when = #"{"move": {"percent": \#([0.5, 1, 2].randomElement(using: &rng)!)}}"#
                move = true
                percentMove = true
            case 6:
                when = #"{"move": {"step": \#(portfolio ? 5 : [1, 2].randomElement(using: &rng)!)}}"#
                move = true
            default:
                let (w, crossing) = leaf(&rng, level: level, portfolio: portfolio)
                when = w
                crossingOrMove = crossing
            }
            crossingOrMove = crossingOrMove || move
            keys.append(#""cooldown": "\#(["0s", "0s", "30s", "2m"].randomElement(using: &rng)!)""#)
            // A range that is the whole condition takes no hysteresis (an error in both versions);
            // the value is still drawn, so every seed gives the streams it always gave.
            let loneRange =
                !when.hasPrefix(#"{"all""#) && !when.hasPrefix(#"{"any""#)
                && (when.contains(#""inside""#) || when.contains(#""outside""#))
            if !percentMove {
                let h = [0, 0, 0.5, 1].randomElement(using: &rng)!
                if !loneRange { keys.append(#""hysteresis": \#(h)"#) }
            }
            if !crossingOrMove, Int.random(in: 0..<3, using: &rng) == 0 {
                keys.append(#""for": "\#(["20s", "1m", "3m"].randomElement(using: &rng)!)""#)
            }
            var once = false
            if !move {
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: keys.append(#""repeat": "once""#); once = true
                case 1: keys.append(#""repeat": {"every": "\#(["1m", "5m"].randomElement(using: &rng)!)"}"#)
                default: break
                }
                if !once, Bool.random(using: &rng) { keys.append(#""resolve": true"#) }
            }
            if Int.random(in: 0..<6, using: &rng) == 0 { keys.append(#""expires": "\#(Timestamp.format(expiresAt))""#) }
            rules.append(#"{"id": "v\#(i)", \#(scope), "when": \#(when), \#(keys.joined(separator: ", "))}"#)
        }
        return #"""
            {"version": 2,
             "portfolios": {"pf": {"holdings": {"AAA": 1, "BBB": 2}, "cost": 300}},
             "rules": [\#(rules.joined(separator: ",\n"))]}
            """#
    }

    /// One leaf condition and whether it is a crossing. Levels sit near `level`, where the
    /// streams move; windows run from one minute to two days.
    static func leaf(_ rng: inout SeededRandom, level: Double, portfolio: Bool) -> (String, Bool) {
        let x = level * Double(Int.random(in: 97...103, using: &rng)) / 100
        let side = Bool.random(using: &rng) ? "above" : "below"
        let c = Double(Int.random(in: -3...3, using: &rng)) / 2
        let window = ["1m", "5m", "24h", "48h"].randomElement(using: &rng)!
        switch Int.random(in: 0..<(portfolio ? 8 : 7), using: &rng) {
        case 0: return (#"{"price": {"\#(side)": \#(x)}}"#, false)
        case 1: return (#"{"price": {"\#(Bool.random(using: &rng) ? "crossesAbove" : "crossesBelow")": \#(x)}}"#, true)
        case 2:
            return (
                #"{"price": {"\#(Bool.random(using: &rng) ? "inside" : "outside")": [\#(x * 0.99), \#(x * 1.01)]}}"#,
                false
            )
        case 3, 4: return (#"{"change": {"window": "\#(window)", "\#(side)": \#(c)}}"#, false)
        case 5: return (#"{"fromHigh": {"window": "\#(window)", "below": \#(-abs(c) - 0.5)}}"#, false)
        case 6: return (#"{"fromLow": {"window": "\#(window)", "above": \#(abs(c) + 0.5)}}"#, false)
        default: return (#"{"pnl": {"\#(side)": \#(c * 2)}}"#, false)
        }
    }

    /// `count` live ticks from `start`: small random steps around 100 with jumps, equal
    /// times, gaps of minutes, and some invalid ticks (bad price, out of order) to be dropped.
    public static func ticks(_ rng: inout SeededRandom, count: Int, start: Int64) -> [Tick] {
        var price = Dictionary(uniqueKeysWithValues: symbols.map { ($0, 100.0) })
        var time = start
        return (0..<count).map { _ in
            let symbol = symbols.randomElement(using: &rng)!
            time += [0, 1_000, 5_000, 20_000, 61_000, 300_000].randomElement(using: &rng)!
            if Int.random(in: 0..<15, using: &rng) == 0 {
                price[symbol] = Double(Int.random(in: 96...104, using: &rng))
            } else {
                price[symbol]! *= 1 + Double.random(in: -0.006...0.006, using: &rng)
            }
            var t = time, p = price[symbol]!
            switch Int.random(in: 0..<60, using: &rng) {
            case 0: t -= 120_000
            case 1: p = -p
            default: break
            }
            let change: Double? =
                Int.random(in: 0..<4, using: &rng) == 0 ? Double(Int.random(in: -4...4, using: &rng)) : nil
            return Tick(time: t, symbol: symbol, price: p, change24h: change)
        }
    }

    /// Hourly candles for every symbol over the `hours` hours before `start`, near 100.
    public static func candles(_ rng: inout SeededRandom, hours: Int, before start: Int64) -> [(String, Candle)] {
        let first = (start / 3_600_000 - Int64(hours)) * 3_600_000
        return symbols.flatMap { symbol in
            (0..<hours).map { h in
                let s = first + Int64(h) * 3_600_000
                let open = 100 * Double.random(in: 0.95...1.05, using: &rng)
                let close = 100 * Double.random(in: 0.95...1.05, using: &rng)
                return (
                    symbol,
                    Candle(
                        start: s, end: s + 3_600_000, open: open, high: max(open, close) * 1.01,
                        low: min(open, close) * 0.99, close: close)
                )
            }
        }
    }
}
