import AlertEngine
import AlertModel
import AlertStore
import AlertTestSupport
import Foundation
import GRDB
import SeededRandom
import Testing

/// `check` reads only the hours of minute history its ticks can look up. Runs over the pieces
/// of a stream of several days, with gaps of hours in the prices, each restoring that much from
/// the real database and saving, give exactly the alerts of one engine over the whole stream.
@Suite(.computation) struct PartialHistoryTests {
    static let windows: [(String, Int64)] = [("5m", 5), ("1h", 60), ("90m", 90), ("24h", 1440)]

    static func rules() -> [Rule] {
        var rules: [Rule] = []
        for (i, (name, minutes)) in windows.enumerated() {
            for symbol in ["AAA", "BBB"] {
                rules.append(
                    Rule(
                        id: "\(symbol)-\(name)-up", scope: .symbols([symbol]),
                        condition: .change(window: minutes * 60_000, .above(0.4 + Double(i) * 0.3)),
                        cooldown: 120_000, hysteresis: 0.1))
                rules.append(
                    Rule(
                        id: "\(symbol)-\(name)-down", scope: .symbols([symbol]),
                        condition: .change(window: minutes * 60_000, .below(-0.4 - Double(i) * 0.3))))
            }
        }
        rules.append(Rule(id: "level", scope: .symbols(["AAA", "BBB"]), condition: .price(.crossesAbove(100))))
        return rules
    }

    /// About three days of ticks, a few per minute, with hours (sometimes many) without any
    /// when `gaps`.
    static func stream(seed: UInt64, gaps: Bool = true) -> [Tick] {
        var rng = SeededRandom(seed: seed)
        var time: Int64 = 1_700_000_000_000
        var price = ["AAA": 100.0, "BBB": 100.0]
        var ticks: [Tick] = []
        while ticks.count < 6_000 {
            if gaps, Int.random(in: 0..<200, using: &rng) == 0 {
                time += Int64.random(in: 1...30, using: &rng) * 3_600_000 // a gap of hours
            }
            time += Int64.random(in: 5_000...90_000, using: &rng)
            let symbol = Bool.random(using: &rng) ? "AAA" : "BBB"
            price[symbol]! *= 1 + Double.random(in: -0.004...0.004, using: &rng)
            ticks.append(Tick(time: time, symbol: symbol, price: price[symbol]!))
        }
        return ticks
    }

    static func whole(_ ticks: [Tick]) -> [String] {
        let engine = Engine(rules: rules())
        var alerts: [Alert] = []
        for tick in ticks { engine.process(tick, into: &alerts) }
        return alerts.map { "\($0.id) \($0.value)" }
    }

    /// Short pieces (about an hour of ticks) and long ones (several hours: the hours before a
    /// piece are then mostly not read, yet a day's window needs them later).
    @Test(
        arguments: [(1, 60, true), (2, 60, true), (3, 60, true), (4, 12, true), (5, 12, false), (6, 8, false)]
            as [(UInt64, Int, Bool)])
    func piecesOverPartialHistoryEqualTheWhole(seed: UInt64, pieces: Int, gaps: Bool) throws {
        let ticks = Self.stream(seed: seed, gaps: gaps)
        let expected = Self.whole(ticks)
        #expect(expected.count > 100)
        #expect(Set(expected.map { $0.split(separator: ":")[0] }).count > 10, "most rules should fire")
        var rng = SeededRandom(seed: seed * 31)
        let cuts = ((1..<pieces).map { _ in Int.random(in: 1..<ticks.count, using: &rng) } + [ticks.count]).sorted()
        let folder = temporaryFolder()
        var alerts: [Alert] = []
        var start = 0
        var partialReads = 0
        for end in cuts {
            let piece = Array(ticks[start..<end])
            start = end
            let store = try StateStore.open(folder)
            let engine = Engine(rules: Self.rules())
            let lookups = engine.historyLookups(for: piece)
            // Counted on a connection of its own: a full load by the store would also tell it
            // the whole extent of each history, which a `check` never learns.
            let onDisk = try DatabaseQueue(path: folder.databasePath).read { db in
                try Int.fetchOne(db, sql: "SELECT COALESCE(SUM((length(entries) - 5) / 16), 0) FROM symbol_history")
                    ?? 0
            }
            let restored = try store.engineState.load(lookingUp: lookups)
            if restored.map(\.minutes.count).reduce(0, +) < onDisk { partialReads += 1 }
            engine.restore(restored)
            for tick in piece { engine.process(tick, into: &alerts) }
            try store.engineState.save(engine.takeFinalChanges(), now: 0)
            store.close()
        }
        #expect(alerts.map { "\($0.id) \($0.value)" } == expected)
        // Long pieces look up most of the history anyway; short ones read a part of it.
        if pieces >= 60 { #expect(partialReads > 20, "most runs should read only part of the history") }
    }

    @Test func lookupsCoverEachWindowOfTheTicksMinutes() {
        let engine = Engine(rules: Self.rules())
        let lookups = engine.historyLookups(for: [
            Tick(time: 600_000, symbol: "aaa", price: 1),
            Tick(time: 720_500, symbol: "AAA", price: 1),
            Tick(time: 60_000, symbol: "BBB", price: 1)
        ])
        let windows: [Int64] = [5, 60, 90, 1440]
        #expect(lookups["AAA"] == windows.map { (10 - $0)...(12 - $0) })
        #expect(lookups["BBB"] == windows.map { (1 - $0)...(1 - $0) })
    }
}
