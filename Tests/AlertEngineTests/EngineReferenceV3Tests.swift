import AlertRules
import AlertSinks
import AlertTestSupport
import SeededRandom
import Testing

@testable import AlertEngine
@testable import AlertModel

/// The engine against the naive reading of rules v1 + v2 + v3 (`ReferenceEngineV2`, which reads
/// version 3 too): random multi-source streams (ticks from three sources and from none, wicks,
/// outages, volumes) over random version 3 files (every kind of series, qualified and
/// unqualified symbols, `match` with `source`, a sourced portfolio, volume leaves) with version 1
/// and 2 files beside, read by `RuleLoader` for the engine and by the reference's own reader for
/// it; the events must be the same, in the same order.
@Suite("engine v3 agrees with the reference", .computation)
struct EngineReferenceV3Tests {
    /// The files a seed gives: two version 3 files (the second with series and a portfolio of
    /// its own names), a version 2 file and a version 1 file, in a random order.
    static func files(_ rng: inout SeededRandom, expiresAt: Int64) -> [String] {
        var files = [
            RandomRulesV3.file(&rng, count: 50, prefix: "x"),
            RandomRulesV3.file(&rng, count: 15, prefix: "y", names: "-2"),
            RandomRulesV2.file(&rng, count: 25, expiresAt: expiresAt),
            EngineReferenceV2Tests.versionOneFile(&rng, count: 10, prefix: "w")
        ]
        // The sources must be defined in some file; any order of the files will do.
        if Bool.random(using: &rng) { files.reverse() }
        return files
    }

    /// The same files, markets and live ticks through both; returns (engine, reference) events.
    static func run(files: [String], ticks: [Tick]) throws -> ([RefEvent], [RefEvent]) {
        let markets = RandomRulesV3.markets()
        let reference = try ReferenceEngineV2(files: files, markets: markets.none, sourceMarkets: markets.bySource)
        let sources = files.enumerated().map { RuleSource(path: "r\($0.offset).json", bytes: Array($0.element.utf8)) }
        let loaded = try RuleLoader.load(sources).get()
        let engine = Engine(
            rules: loaded.rules, markets: MarketList(markets.none), portfolios: loaded.portfolios,
            series: loaded.series, sourceMarkets: markets.bySource.mapValues(MarketList.init))
        return events(of: engine, and: reference, over: ticks)
    }

    static let start: Int64 = 1_700_000_000_000

    @Test(arguments: 1...8)
    func randomMultiSourceStreams(seed: UInt64) throws {
        var rng = SeededRandom(seed: seed)
        let ticks = RandomRulesV3.ticks(&rng, count: 4000, start: Self.start)
        let files = Self.files(&rng, expiresAt: ticks[2000].time)
        let (ours, theirs) = try Self.run(files: files, ticks: ticks)
        #expect(ours.count > 200)
        // What the streams are for: every feature gives events.
        #expect(ours.contains { $0.source != nil } && ours.contains { $0.source == nil && !$0.symbol.hasPrefix("@") })
        // Not every series' random rules fire on every seed, but most do.
        let silent = RandomRulesV3.series.map(\.name).filter { name in
            !ours.contains { $0.symbol == "@" + name.uppercased() }
        }
        #expect(silent.count <= 2, "series without events: \(silent)")
        #expect(ours.contains { $0.symbol == "@PF3" })
        #expect(ours == theirs, "\(firstDifference(ours, theirs) ?? "")")
    }
}
