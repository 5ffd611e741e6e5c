import AlertRules
import AlertSinks
import AlertTestSupport
import SeededRandom
import Testing

@testable import AlertEngine
@testable import AlertModel

/// The engine against the naive reading of rules v1 + v2 (`ReferenceEngineV2`): random version 2
/// files (every feature) beside random version 1 files, read by `RuleLoader` for the engine and
/// by the reference's own reader for it, seeded history from candles, live streams with dropped
/// ticks; the events must be the same, in the same order.
@Suite("engine v2 agrees with the reference", .computation)
struct EngineReferenceV2Tests {
    /// A `"version": 1` file of `count` random rules over the streams' symbols, with windows
    /// up to two days (minute buckets in a version 1 file).
    static func versionOneFile(_ rng: inout SeededRandom, count: Int, prefix: String) -> String {
        let rules = (0..<count).map { i -> String in
            let x = Double(Int.random(in: 97...103, using: &rng))
            let side = Bool.random(using: &rng) ? "above" : "below"
            let when: String
            var ranged = false
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: when = #"{"price": {"\#(side)": \#(x)}}"#
            case 1: when = #"{"price": {"\#(Bool.random(using: &rng) ? "crossesAbove" : "crossesBelow")": \#(x)}}"#
            case 2:
                when = #"{"price": {"\#(Bool.random(using: &rng) ? "inside" : "outside")": [\#(x - 1), \#(x + 1)]}}"#
                ranged = true
            default:
                let window = ["1m", "5m", "24h", "48h"].randomElement(using: &rng)!
                when =
                    #"{"change": {"window": "\#(window)", "\#(side)": \#(Double(Int.random(in: -3...3, using: &rng)) / 2)}}"#
            }
            var keys = [#""cooldown": "\#(["0s", "30s", "2m"].randomElement(using: &rng)!)""#]
            if !ranged { keys.append(#""hysteresis": \#([0, 0.5, 1].randomElement(using: &rng)!)"#) }
            if Int.random(in: 0..<5, using: &rng) == 0 { keys.append(#""repeat": "once""#) }
            let symbol = RandomRulesV2.symbols.randomElement(using: &rng)!
            return
                #"{"id": "\#(prefix)\#(i)", "symbol": "\#(symbol)", "when": \#(when), \#(keys.joined(separator: ", "))}"#
        }
        return #"{"version": 1, "rules": [\#(rules.joined(separator: ",\n"))]}"#
    }

    /// The same files, history and live ticks through both; returns (engine, reference) events.
    static func run(files: [String], candles: [(String, Candle)], ticks: [Tick]) throws -> ([RefEvent], [RefEvent]) {
        let reference = try ReferenceEngineV2(files: files)
        let sources = files.enumerated().map { RuleSource(path: "r\($0.offset).json", bytes: Array($0.element.utf8)) }
        let loaded = try RuleLoader.load(sources).get()
        let engine = Engine(rules: loaded.rules, portfolios: loaded.portfolios)
        for (symbol, candle) in candles {
            reference.seed(
                symbol: symbol, start: candle.start, end: candle.end, high: candle.high, low: candle.low,
                close: candle.close)
            for tick in candle.seededTicks(symbol: symbol) { #expect(engine.seed(tick) == nil) }
        }
        return events(of: engine, and: reference, over: ticks)
    }

    static let start: Int64 = 1_700_000_000_000

    @Test(arguments: 1...10)
    func randomRuleFilesWithHistory(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let ticks = RandomRulesV2.ticks(&rng, count: 2500, start: Self.start)
        let expiresAt = ticks[ticks.count / 2].time
        var files = [
            RandomRulesV2.file(&rng, count: 40, expiresAt: expiresAt),
            Self.versionOneFile(&rng, count: 15, prefix: "w")
        ]
        if Bool.random(using: &rng) { files.reverse() }
        let candles = RandomRulesV2.candles(&rng, hours: 60, before: Self.start)
        let (ours, theirs) = try Self.run(files: files, candles: candles, ticks: ticks)
        #expect(ours.count > 100)
        #expect(Set(ours.map(\.kind)).count == 3, "alerts, reminders and resolved events all occur")
        #expect(ours == theirs, "\(firstDifference(ours, theirs) ?? "")")
    }

    /// Without history: windows fill from the live stream alone.
    @Test(arguments: 21...24)
    func randomRuleFilesWithoutHistory(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let ticks = RandomRulesV2.ticks(&rng, count: 3000, start: Self.start)
        let files = [
            RandomRulesV2.file(&rng, count: 30, expiresAt: ticks[2000].time),
            RandomRulesV2.file(&rng, count: 0, expiresAt: 0).replacingPortfolioName("pf", with: "two"),
            Self.versionOneFile(&rng, count: 10, prefix: "w")
        ]
        let (ours, theirs) = try Self.run(files: files, candles: [], ticks: ticks)
        #expect(ours.count > 100)
        #expect(ours == theirs, "\(firstDifference(ours, theirs) ?? "")")
    }
}

extension String {
    /// A second file's portfolio under another name (names share one namespace across files).
    func replacingPortfolioName(_ old: String, with new: String) -> String {
        var out = ""
        var rest = Substring(self)
        let needle = "\"\(old)\""
        while let r = rest.range(of: needle) {
            out += rest[..<r.lowerBound] + "\"\(new)\""
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}

/// Version 2 state saved and restored: evaluating a stream in pieces, each piece by a new engine
/// that restores what the previous one saved (through the byte encoding the state folder
/// stores), gives the events of one engine over the whole stream.
@Suite("engine v2 state across runs", .computation)
struct EngineStateV2Tests {
    @Test(arguments: [3, 8, 13] as [UInt64])
    func piecesEqualOneRun(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let ticks = RandomRulesV2.ticks(&rng, count: 2000, start: EngineReferenceV2Tests.start)
        let files = [
            RandomRulesV2.file(&rng, count: 40, expiresAt: ticks[1000].time),
            EngineReferenceV2Tests.versionOneFile(&rng, count: 10, prefix: "w")
        ]
        let candles = RandomRulesV2.candles(&rng, hours: 60, before: EngineReferenceV2Tests.start)
        let sources = files.enumerated().map { RuleSource(path: "r\($0.offset).json", bytes: Array($0.element.utf8)) }
        let loaded = try RuleLoader.load(sources).get()
        func engine() -> Engine { Engine(rules: loaded.rules, portfolios: loaded.portfolios) }
        func events(_ engine: Engine, _ ticks: ArraySlice<Tick>) -> [RefEvent] {
            var alerts: [Alert] = []
            for tick in ticks { engine.process(tick, into: &alerts) }
            return alerts.map(RefEvent.init)
        }
        let whole = engine()
        for (symbol, candle) in candles { for tick in candle.seededTicks(symbol: symbol) { whole.seed(tick) } }
        let expected = events(whole, ticks[...])

        var saved: [String: [UInt8]] = [:]
        var got: [RefEvent] = []
        var start = 0
        var first = true
        while start < ticks.count {
            let end = min(ticks.count, start + Int.random(in: 1...300, using: &rng))
            let piece = engine()
            piece.restore(try saved.values.map { try SymbolSnapshot(decoding: $0) })
            if first {
                for (symbol, candle) in candles { for tick in candle.seededTicks(symbol: symbol) { piece.seed(tick) } }
            }
            first = false
            got += events(piece, ticks[start..<end])
            for snapshot in Bool.random(using: &rng) ? piece.takeFinalChanges() : piece.snapshotAll() {
                saved[snapshot.symbol] = snapshot.encoded()
            }
            start = end
        }
        #expect(expected.count > 100)
        #expect(got.count == expected.count)
        if let k = zip(got, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            Issue.record("first difference at \(k): pieces \(got[k]) vs one run \(expected[k])")
        }
    }
}
