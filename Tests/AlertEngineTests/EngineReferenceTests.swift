import AlertTestSupport
import SeededRandom
import Testing

@testable import AlertEngine
@testable import AlertModel

/// The indexed engine against the naive reading of Docs/rules.md, on random streams and rule sets
/// built to hit boundaries: integer thresholds that prices land on exactly, equal times,
/// dropped ticks, cooldowns, `once`, hysteresis, several windows and source 24h figures.
@Suite("engine agrees with the reference", .computation)
struct EngineReferenceTests {
    static func randomRules(_ rng: inout SeededRandom, count: Int) -> [Rule] {
        let symbols = ["AAA", "BBB", "CCC"]
        return (0..<count).map { i in
            let x = Double(Int.random(in: 90...110, using: &rng))
            let w = Double(Int.random(in: 1...8, using: &rng))
            let condition: Condition
            switch Int.random(in: 0..<8, using: &rng) {
            case 0: condition = .price(.above(x))
            case 1: condition = .price(.below(x))
            case 2: condition = .price(.crossesAbove(x))
            case 3: condition = .price(.crossesBelow(x))
            case 4: condition = .price(.inside(x - w, x + w))
            case 5: condition = .price(.outside(x - w, x + w))
            case 6:
                let window = [1, 2, 5, 1440].randomElement(using: &rng)! * minute
                condition = .change(window: window, .above(Double(Int.random(in: -3...6, using: &rng))))
            default:
                let window = [1, 3, 1440].randomElement(using: &rng)! * minute
                condition = .change(window: window, .below(Double(Int.random(in: -6...3, using: &rng))))
            }
            let ranged: Bool
            if case .price(.inside) = condition {
                ranged = true
            } else if case .price(.outside) = condition {
                ranged = true
            } else {
                ranged = false
            }
            var scope = [symbols.randomElement(using: &rng)!]
            if Bool.random(using: &rng) { scope.append(symbols.randomElement(using: &rng)!.lowercased()) }
            return Rule(
                id: "r\(i)", scope: .symbols(scope), condition: condition,
                repeatMode: Int.random(in: 0..<6, using: &rng) == 0 ? .once : .rearm,
                cooldown: [0, 0, 1000, 30_000, 120_000].randomElement(using: &rng)!,
                hysteresis: ranged ? 0 : [0, 0, 1, 2.5].randomElement(using: &rng)!,
                enabled: Int.random(in: 0..<20, using: &rng) != 0)
        }
    }

    static func randomTicks(_ rng: inout SeededRandom, count: Int) -> [Tick] {
        var price = ["AAA": 100.0, "BBB": 100.0, "CCC": 100.0]
        var time: Int64 = 1_700_000_000_000
        return (0..<count).map { _ in
            let symbol = ["AAA", "BBB", "CCC", "aaa"].randomElement(using: &rng)!
            time += [0, 500, 1000, 15_000, 61_000].randomElement(using: &rng)!
            let key = symbol.uppercased()
            switch Int.random(in: 0..<10, using: &rng) {
            case 0: price[key] = Double(Int.random(in: 88...112, using: &rng)) // land on thresholds
            case 1: break
            default: price[key]! *= 1 + Double.random(in: -0.02...0.02, using: &rng)
            }
            var t = time
            var p = price[key]!
            switch Int.random(in: 0..<40, using: &rng) {
            case 0: t -= 70_000 // out of order
            case 1: p = -p
            case 2: p = .nan
            default: break
            }
            let change: Double? =
                Int.random(in: 0..<3, using: &rng) == 0 ? Double(Int.random(in: -8...8, using: &rng)) : nil
            return Tick(time: t, symbol: symbol, price: p, change24h: change)
        }
    }

    @Test(arguments: 1...12)
    func randomStreams(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        let rules = Self.randomRules(&rng, count: 60)
        let (ours, theirs) = bothEngines(rules, Self.randomTicks(&rng, count: 3000))
        #expect(ours.count > 50)
        #expect(ours == theirs)
    }

    /// Two listed markets, and `count` random rules of which every third is a `match` rule.
    static func matchRules(_ rng: inout SeededRandom, count: Int) -> (MarketList, [Rule]) {
        let markets = MarketList([
            Market(symbol: "AAA", base: "AAA", quote: "USD", future: false, active: true),
            Market(symbol: "BBB", base: "BBB", quote: "EUR", future: true, active: true)
        ])
        var rules = randomRules(&rng, count: count)
        for i in rules.indices where i % 3 == 0 {
            rules[i].scope = .match(i % 2 == 0 ? MarketFilter(quote: "usd") : MarketFilter(future: true))
        }
        return (markets, rules)
    }

    @Test func matchRulesAgreeWithReference() {
        var rng = SeededRandom(seed: 99)
        let (markets, rules) = Self.matchRules(&rng, count: 30)
        let (ours, theirs) = bothEngines(rules, Self.randomTicks(&rng, count: 3000), markets: markets)
        #expect(ours.count > 30)
        #expect(ours == theirs)
    }
}

/// Small moves, as real feeds make them: most ticks cross no level and take the engine's
/// quiet path; the alerts must still be exactly the reference's.
@Suite("engine agrees with the reference on quiet streams", .computation)
struct EngineQuietStreamTests {
    @Test(arguments: [5, 6, 7])
    func smallMovesLongStreams(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        let symbols = ["AAA", "BBB", "CCC"]
        let rules: [Rule] = (0..<150).map { i in
            let x = 100 * Double.random(in: 0.97...1.03, using: &rng)
            let condition: Condition
            switch i % 7 {
            case 0: condition = .price(.above(x))
            case 1: condition = .price(.crossesBelow(x))
            case 2: condition = .price(.inside(x, x * 1.004))
            case 3: condition = .change(window: 2 * minute, .above(Double.random(in: 0.05...0.6, using: &rng)))
            case 4: condition = .change(window: 10 * minute, .below(-Double.random(in: 0.05...0.8, using: &rng)))
            case 5: condition = .change(window: 1440 * minute, .above(Double.random(in: -1...1, using: &rng)))
            default: condition = .price(.outside(x * 0.99, x))
            }
            let ranged = i % 7 == 2 || i % 7 == 6
            return Rule(
                id: "q\(i)", scope: .symbols([symbols[i % 3]]), condition: condition,
                cooldown: [0, 20_000, 90_000].randomElement(using: &rng)!,
                hysteresis: ranged ? 0 : [0, 0.1].randomElement(using: &rng)!)
        }
        var price = [100.0, 100.0, 100.0]
        var daily = [0.2, -0.3, 0.5]
        var time: Int64 = 1_700_000_000_000
        let ticks: [Tick] = (0..<8_000).map { _ in
            let s = Int.random(in: 0..<3, using: &rng)
            let step = Double.random(in: -0.0004...0.0004, using: &rng)
            price[s] *= 1 + step
            daily[s] += step * 100
            time += Int64.random(in: 0...900, using: &rng)
            // AAA carries the source's 24 h figure, BBB only sometimes, CCC never.
            let carries = s == 0 || (s == 1 && Bool.random(using: &rng))
            return Tick(time: time, symbol: symbols[s], price: price[s], change24h: carries ? daily[s] : nil)
        }
        let (ours, theirs) = bothEngines(rules, ticks)
        #expect(ours.count > 100)
        #expect(ours == theirs)
    }
}

/// The quiet window is renewed at a minute boundary without looking at the groups, and it
/// lets ticks through while a change window is not covered yet. Streams built for those two
/// paths: short windows (1–3 min) whose base moves under a steady price, ticks on and just
/// before minute boundaries, gaps of several minutes, symbols that get their first tick late
/// (so windows become covered mid-stream), and the source's 24 h figure on some ticks only,
/// sometimes before the history covers 24 h.
@Suite("engine agrees with the reference across minute boundaries and uncovered windows", .computation)
struct EngineMinuteBoundaryTests {
    @Test(arguments: [11, 12, 13, 14])
    func trendingPricesAcrossMinutes(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        let symbols = ["AAA", "BBB", "CCC", "DDD"]
        let rules: [Rule] = (0..<120).map { i in
            let x = 100 * Double.random(in: 0.98...1.02, using: &rng)
            let condition: Condition
            switch i % 6 {
            case 0: condition = .change(window: minute, .above(Double.random(in: 0.02...0.3, using: &rng)))
            case 1: condition = .change(window: 2 * minute, .below(-Double.random(in: 0.02...0.4, using: &rng)))
            case 2: condition = .change(window: 3 * minute, .above(Double.random(in: -0.1...0.3, using: &rng)))
            case 3: condition = .change(window: 1440 * minute, .below(Double.random(in: -1...1, using: &rng)))
            case 4: condition = .price(.above(x))
            default: condition = .price(.inside(x, x * 1.003))
            }
            return Rule(
                id: "m\(i)", scope: .symbols([symbols[i % 4]]), condition: condition,
                cooldown: [0, 30_000, 70_000].randomElement(using: &rng)!,
                hysteresis: i % 6 == 5 ? 0 : [0, 0.05].randomElement(using: &rng)!)
        }
        var price = [100.0, 100.0, 100.0, 100.0]
        let drift = symbols.map { _ in Double.random(in: -0.00004...0.00004, using: &rng) }
        var daily = [0.1, -0.2, 0.3, 0.0]
        var time: Int64 = 1_700_000_040_000
        var ticks: [Tick] = []
        for _ in 0..<9_000 {
            // DDD starts trading an hour in, so its windows become covered mid-stream.
            let s = Int.random(in: 0..<(ticks.count < 4_000 ? 3 : 4), using: &rng)
            switch Int.random(in: 0..<50, using: &rng) {
            case 0: time += Int64.random(in: 1...4, using: &rng) * minute // a gap of minutes
            case 1, 2: time = (time / minute + 1) * minute - Int64.random(in: 0...1, using: &rng) // at a boundary
            default: time += Int64.random(in: 0...1_500, using: &rng)
            }
            let step = drift[s] + Double.random(in: -0.0002...0.0002, using: &rng)
            price[s] *= 1 + step
            daily[s] += step * 100
            // AAA always carries the source's 24 h figure, BBB and DDD now and then, CCC never.
            let carries = s == 0 || (s != 2 && Int.random(in: 0..<4, using: &rng) == 0)
            ticks.append(Tick(time: time, symbol: symbols[s], price: price[s], change24h: carries ? daily[s] : nil))
        }
        let (ours, theirs) = bothEngines(rules, ticks)
        #expect(ours.count > 100)
        #expect(ours == theirs)
    }
}
