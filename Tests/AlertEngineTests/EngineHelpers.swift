import AlertTestSupport

@testable import AlertEngine
@testable import AlertModel

/// Runs `ticks` (time, price[, change24h]) for one symbol through a fresh engine and returns
/// the times at which alerts fired.
func fireTimes(_ rules: [Rule], _ ticks: [(Int64, Double)], symbol: String = "BTC") -> [Int64] {
    let engine = Engine(rules: rules)
    var alerts: [Alert] = []
    for (t, p) in ticks { engine.process(Tick(time: t, symbol: symbol, price: p), into: &alerts) }
    return alerts.map(\.time)
}

func rule(
    _ condition: Condition, symbols: [String] = ["BTC"], cooldown: Int64 = 0,
    hysteresis: Double = 0, repeatMode: RepeatMode = .rearm, message: String? = nil,
    enabled: Bool = true
) -> Rule {
    rule(
        "r", condition, symbols: symbols, cooldown: cooldown, hysteresis: hysteresis, repeatMode: repeatMode,
        message: message, enabled: enabled)
}

func rule(
    _ id: String, _ condition: Condition, symbols: [String] = ["BTC"], cooldown: Int64 = 0,
    hysteresis: Double = 0, repeatMode: RepeatMode = .rearm, message: String? = nil,
    enabled: Bool = true
) -> Rule {
    Rule(
        id: id, scope: .symbols(symbols), condition: condition, cooldown: cooldown, hysteresis: hysteresis,
        message: message, enabled: enabled
    )
    .with(repeatMode: repeatMode)
}

extension Rule {
    func with(repeatMode: RepeatMode) -> Rule {
        var copy = self
        copy.repeatMode = repeatMode
        return copy
    }
}

/// Ticks one second apart starting at t = 1000 s.
func seconds(_ prices: [Double]) -> [(Int64, Double)] {
    prices.enumerated().map { (Int64(1_000_000 + $0.offset * 1000), $0.element) }
}

let minute: Int64 = 60_000

/// Runs `ticks` through the indexed engine and the naive reference, and returns both alert
/// lists as `id value` lines, ready to compare.
func bothEngines(_ rules: [Rule], _ ticks: [Tick], markets: MarketList? = nil) -> (ours: [String], theirs: [String]) {
    let engine = Engine(rules: rules, markets: markets)
    let reference = ReferenceEngine(rules: rules, markets: markets)
    var ours: [Alert] = []
    var theirs: [String] = []
    for tick in ticks {
        engine.process(tick, into: &ours)
        theirs += reference.process(tick).map { "\($0.4) \($0.3)" }
    }
    return (ours.map { "\($0.id) \($0.value)" }, theirs)
}

/// The events `engine` and `reference` give for `ticks`, one tick at a time, each in its own
/// order: what the engine-against-reference tests compare.
func events(
    of engine: Engine, and reference: ReferenceEngineV2, over ticks: [Tick]
) -> (ours: [RefEvent], theirs: [RefEvent]) {
    var ours: [RefEvent] = []
    var theirs: [RefEvent] = []
    var alerts: [Alert] = []
    for tick in ticks {
        alerts.removeAll(keepingCapacity: true)
        engine.process(tick, into: &alerts)
        ours += alerts.map(RefEvent.init)
        theirs += reference.process(tick)
    }
    return (ours, theirs)
}
