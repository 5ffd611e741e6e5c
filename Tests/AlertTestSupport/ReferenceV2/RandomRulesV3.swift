public import AlertModel
public import SeededRandom

/// Random version 3 rule files and multi-source tick streams for comparing an implementation
/// with the reference (rules-v3.md): three sources and ticks without one, wicks on one source,
/// outages (a source silent for longer than the series' `maxAge`), volumes, every kind of
/// series, sourced portfolios. Every file is valid by the rules' text (a `spread` series'
/// rules use `price` leaves only, without hysteresis).
public enum RandomRulesV3 {
    /// The sources the files define and the streams tick from.
    public static let sources = ["ex-a", "ex-b", "ex-c"]
    /// Each source's type: its market list file (`--markets NAME=FILE`) is in that type's format.
    public static let types = ["ex-a": "btse", "ex-b": "poloniex", "ex-c": "btse"]
    /// The symbols of every source (the same as version 2's streams, so v1 and v2 files beside
    /// apply to them).
    public static let symbols = RandomRulesV2.symbols

    /// The series every version 3 file defines (one of each kind), by name, kind and level.
    public static let series: [(name: String, kind: String, level: Double, definition: String)] = [
        (
            "aaa-median", "median", 100,
            #"{"median": ["ex-a:AAA", "ex-b:aaa", "ex-c:AAA"], "maxAge": "90s", "quorum": 2}"#
        ),
        ("bbb-mean", "mean", 100, #"{"mean": ["ex-a:BBB", "ex-b:BBB", "BBB"], "maxAge": "2m"}"#),
        ("ccc-min", "min", 100, #"{"min": ["ex-a:CCC", "ex-c:CCC"], "quorum": 2, "maxAge": "1m"}"#),
        ("aaa-max", "max", 100, #"{"max": ["ex-a:AAA", "ex-b:AAA", "ex-c:AAA", "AAA"], "quorum": 3}"#),
        ("aaa-gap", "spread", 0, #"{"spread": ["ex-a:AAA", "ex-b:AAA"], "maxAge": "45s"}"#),
        ("aaa-bbb", "ratio", 1, #"{"ratio": ["ex-c:AAA", "ex-c:BBB"], "maxAge": "5m"}"#)
    ]

    /// One `"version": 3` file of `count` rules: qualified and unqualified symbols, `match`
    /// with and without `source`, series scopes, a sourced portfolio, volume leaves.
    /// `names` makes the file's series and portfolio names unique among the files given.
    public static func file(_ rng: inout SeededRandom, count: Int, prefix: String = "x", names: String = "") -> String {
        var rules: [String] = []
        for i in 0..<count {
            var scope: String
            var level = 100.0
            var spread = false
            var synthetic = false
            switch Int.random(in: 0..<9, using: &rng) {
            case 0, 1:
                let s = sources.randomElement(using: &rng)!
                scope = #""symbol": "\#(s):\#(symbols.randomElement(using: &rng)!.lowercased())""#
            case 2:
                let entries = (0..<2).map { _ in
                    Bool.random(using: &rng)
                        ? "\(sources.randomElement(using: &rng)!):\(symbols.randomElement(using: &rng)!)"
                        : symbols.randomElement(using: &rng)!
                }
                scope = #""symbols": ["\#(entries[0])", "\#(entries[1])"]"#
            case 3:
                scope = #""symbol": "\#(symbols.randomElement(using: &rng)!)""#
            case 4:
                var filter = [#""quote": "USD""#]
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: filter.append(#""source": "\#(sources.randomElement(using: &rng)!)""#)
                case 1: filter.append(#""source": ["ex-a", "ex-c"]"#)
                default: break
                }
                scope = #""match": {\#(filter.joined(separator: ", "))}"#
            case 5:
                scope = #""portfolio": "pf3\#(names)""#
                level = 400
                synthetic = true
            default:
                let s = series.randomElement(using: &rng)!
                scope = #""series": "\#(s.name)\#(names)""#
                level = s.level
                spread = s.kind == "spread"
                synthetic = true
            }
            var keys: [String] = []
            let when: String
            var crossing = false
            if spread {
                // A spread's rules: `price` leaves, no hysteresis (rules v3 §4); the gap moves
                // around 0 in percent.
                let x = Double(Int.random(in: -4...4, using: &rng)) / 4
                let leaves = [
                    #"{"price": {"above": \#(x)}}"#, #"{"price": {"below": \#(x)}}"#,
                    #"{"price": {"crossesAbove": \#(x)}}"#, #"{"price": {"outside": [\#(x - 0.5), \#(x + 0.5)]}}"#
                ]
                let k = Int.random(in: 0..<leaves.count, using: &rng)
                when =
                    Bool.random(using: &rng)
                    ? leaves[k] : #"{"any": [\#(leaves[k]), \#(leaves.randomElement(using: &rng)!)]}"#
                if k == 2 { crossing = true }
            } else {
                let scale = level == 1 ? 0.01 : level / 100
                let pick = Int.random(in: 0..<4, using: &rng)
                if pick == 0, !synthetic {
                    let v = Double(Int.random(in: 8...12, using: &rng)) * 100_000
                    when = #"{"volume": {"\#(Bool.random(using: &rng) ? "above" : "below")": \#(v)}}"#
                } else if pick == 1, !synthetic {
                    let v = Double(Int.random(in: 8...12, using: &rng)) * 100_000
                    let (leaf, c) = RandomRulesV2.leaf(&rng, level: level, portfolio: false)
                    crossing = c
                    when = #"{"all": [{"volume": {"above": \#(v)}}, \#(leaf)]}"#
                } else if level == 1 {
                    let x = Double(Int.random(in: 95...105, using: &rng)) * scale
                    when = #"{"price": {"\#(Bool.random(using: &rng) ? "above" : "crossesBelow")": \#(x)}}"#
                    crossing = when.contains("crosses")
                } else {
                    let (leaf, c) = RandomRulesV2.leaf(&rng, level: level, portfolio: scope.contains("portfolio"))
                    crossing = c
                    when = leaf
                }
                // A range that is the whole condition takes no hysteresis.
                let h = [0, 0.5, 1].randomElement(using: &rng)!
                let loneRange = when.hasPrefix(#"{"price""#) && (when.contains("inside") || when.contains("outside"))
                if !loneRange { keys.append(#""hysteresis": \#(h)"#) }
            }
            keys.append(#""cooldown": "\#(["0s", "0s", "30s"].randomElement(using: &rng)!)""#)
            crossing = crossing || when.contains("crosses")
            if !crossing, Int.random(in: 0..<4, using: &rng) == 0 { keys.append(#""for": "20s""#) }
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: keys.append(#""repeat": "once""#)
            case 1: keys.append(#""repeat": {"every": "2m"}, "resolve": true"#)
            case 2: keys.append(#""resolve": true"#)
            default: break
            }
            rules.append(#"{"id": "\#(prefix)\#(i)", \#(scope), "when": \#(when), \#(keys.joined(separator: ", "))}"#)
        }
        let seriesText = series.map { #""\#($0.name)\#(names)": \#($0.definition)"# }.joined(separator: ",\n  ")
        let sourcesText =
            names.isEmpty ? sources.map { #""\#($0)": {"type": "\#(types[$0]!)"}"# }.joined(separator: ", ") : ""
        return #"""
            {"version": 3,
             "sources": {\#(sourcesText)},
             "series": {
              \#(seriesText)
             },
             "portfolios": {"pf3\#(names)": {"holdings": {"ex-a:AAA": 1, "ex-b:BBB": 2, "CCC": 1}, "cost": 400}},
             "rules": [\#(rules.joined(separator: ",\n"))]}
            """#
    }

    /// `count` live ticks from `start`: each source and the ticks without one walk near 100
    /// apart; sometimes one source wicks (one tick 4–8 % off), sometimes one goes silent for two
    /// to six minutes (longer than every series' `maxAge` but one); most source ticks carry a
    /// volume near 1 000 000; a few ticks are invalid (bad price, out of order) and are dropped.
    public static func ticks(_ rng: inout SeededRandom, count: Int, start: Int64) -> [Tick] {
        let origins: [String?] = sources + [nil]
        var price: [String: Double] = [:]
        var volume: [String: Double] = [:]
        var silentUntil: [String: Int64] = [:]
        var time = start
        var out: [Tick] = []
        out.reserveCapacity(count)
        while out.count < count {
            time += [0, 1_000, 2_000, 5_000, 15_000, 40_000, 70_000].randomElement(using: &rng)!
            let source = origins.randomElement(using: &rng)!
            let name = source ?? "-"
            if let until = silentUntil[name], time < until { continue }
            if source != nil, Int.random(in: 0..<120, using: &rng) == 0 {
                silentUntil[name] = time + Int64(Int.random(in: 120...360, using: &rng)) * 1000
                continue
            }
            let symbol = symbols.randomElement(using: &rng)!
            let key = name + ":" + symbol
            var p = price[key] ?? 100 * Double.random(in: 0.99...1.01, using: &rng)
            if Int.random(in: 0..<20, using: &rng) == 0 {
                p = Double(Int.random(in: 97...103, using: &rng)) * Double.random(in: 0.998...1.002, using: &rng)
            } else {
                p *= 1 + Double.random(in: -0.004...0.004, using: &rng)
            }
            price[key] = p
            var tickPrice = p
            var t = time
            switch Int.random(in: 0..<50, using: &rng) {
            case 0, 1: tickPrice = p * (Bool.random(using: &rng) ? 1.06 : 0.94) // a wick: one tick, then back
            case 2: t -= 90_000
            case 3: tickPrice = -p
            default: break
            }
            var v: Double?
            if source != nil, Int.random(in: 0..<6, using: &rng) != 0 {
                let old = volume[key] ?? Double(Int.random(in: 8...12, using: &rng)) * 100_000
                v = max(0, old * (1 + Double.random(in: -0.05...0.05, using: &rng)))
                volume[key] = v
            }
            let change: Double? =
                Int.random(in: 0..<5, using: &rng) == 0 ? Double(Int.random(in: -4...4, using: &rng)) : nil
            let written = Bool.random(using: &rng) ? symbol.lowercased() : symbol
            out.append(
                Tick(time: t, symbol: written, price: tickPrice, change24h: change, source: source, volume24h: v))
        }
        return out
    }

    /// One market list per source and one for ticks without a source: every symbol quoted in
    /// USD but `CCC`, which `ex-b` lists in EUR and the list without a source does not list at all.
    public static func markets() -> (none: [Market], bySource: [String: [Market]]) {
        func list(_ cccQuote: String?) -> [Market] {
            symbols.compactMap { symbol in
                let quote = symbol == "CCC" ? cccQuote : "USD"
                return quote.map { Market(symbol: symbol, base: symbol, quote: $0, future: false, active: true) }
            }
        }
        return (list(nil), ["ex-a": list("USD"), "ex-b": list("EUR"), "ex-c": list("USD")])
    }

    /// `markets()` as the files `replay` and `check` read: the list without a source and each
    /// source's in its type's REST format (BTSE `initial/market` entries, Poloniex `markets`).
    public static func marketFiles() -> (none: String, bySource: [String: String]) {
        func btse(_ list: [Market]) -> String {
            "["
                + list.map {
                    #"{"symbol":"\#($0.symbol)","baseCurrency":"\#($0.base)","quoteCurrency":"\#($0.quote)","future":false,"active":true}"#
                }.joined(separator: ",") + "]"
        }
        func poloniex(_ list: [Market]) -> String {
            "["
                + list.map {
                    #"{"symbol":"\#($0.symbol)","baseCurrencyName":"\#($0.base)","quoteCurrencyName":"\#($0.quote)","displayName":"\#($0.base)/\#($0.quote)","state":"NORMAL"}"#
                }.joined(separator: ",") + "]"
        }
        let lists = markets()
        return (
            btse(lists.none),
            Dictionary(
                uniqueKeysWithValues: lists.bySource.map { name, list in
                    (name, types[name] == "poloniex" ? poloniex(list) : btse(list))
                })
        )
    }
}
