// Peak memory of the engine holding a 400-day window at hour buckets for 227 symbols: each
// symbol gets a `fromHigh` rule over 400d (a version 2 rule), SEEDED days (default: the window)
// of seeded hourly history (three seeded ticks an hour, as a candle seeds them) and then a day of
// live ticks a minute. Seeding more days than the window shows whether memory stays bounded.
//   swift run -c release window-memory-benchmark [SYMBOLS] [DAYS] [SEEDED]
import AlertEngine
import AlertModel
import Glibc
import SeededRandom

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let symbolCount = arguments.first ?? 227
let days = arguments.dropFirst().first ?? 400
let seededDays = arguments.dropFirst(2).first ?? days
let hour: Int64 = 3_600_000
let start: Int64 = 1_700_000_000_000 / hour * hour

func residentMiB(_ field: String) -> Double {
    guard let file = fopen("/proc/self/status", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, 256, file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix(field + ":") {
            return Double(text.split(separator: " ").dropFirst().first { !$0.isEmpty }.flatMap { Double($0) } ?? 0)
                / 1024
        }
    }
    return 0
}

let before = residentMiB("VmRSS")
let symbols = (0..<symbolCount).map { "S\($0)" }
let rules = symbols.map { symbol in
    Rule(
        id: "\(symbol.lowercased())-400d", scope: .symbols([symbol]),
        condition: .fromHigh(window: Int64(days) * 24 * hour, .below(-10)), fileVersion: 2)
}
let engine = Engine(rules: rules)
var random = SeededRandom(seed: 7)
var prices = symbols.map { _ in Double.random(in: 10...1000, using: &random) }
for h in 0..<(seededDays * 24) {
    let s = start + Int64(h) * hour
    for (i, symbol) in symbols.enumerated() {
        prices[i] *= 1 + Double.random(in: -0.01...0.01, using: &random)
        let low = prices[i] * 0.995, high = prices[i] * 1.005
        _ = engine.seed(Tick(time: s, symbol: symbol, price: low))
        _ = engine.seed(Tick(time: s, symbol: symbol, price: high))
        _ = engine.seed(Tick(time: s + hour - 1, symbol: symbol, price: prices[i]))
    }
}
var alerts: [Alert] = []
let live = start + Int64(seededDays * 24) * hour
for minute in 0..<1440 {
    for (i, symbol) in symbols.enumerated() {
        prices[i] *= 1 + Double.random(in: -0.001...0.001, using: &random)
        engine.process(Tick(time: live + Int64(minute) * 60_000, symbol: symbol, price: prices[i]), into: &alerts)
    }
}
print(
    "symbols=\(symbolCount) window=\(days)d seeded=\(seededDays)d hour_buckets_per_symbol=\(days * 24) alerts=\(alerts.count) "
        + "rss_before_MiB=\(Int(before)) rss_MiB=\(Int(residentMiB("VmRSS"))) peak_rss_MiB=\(Int(residentMiB("VmHWM")))"
)
