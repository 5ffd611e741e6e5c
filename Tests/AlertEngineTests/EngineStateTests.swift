import AlertTestSupport
import SeededRandom
import Testing

@testable import AlertEngine
@testable import AlertModel

/// Saving and restoring: a stream evaluated in pieces, each by a new engine that restores what
/// the previous one saved (as `check` does across cron runs), gives exactly the alerts of one
/// engine over the whole stream.
@Suite("engine state across runs", .computation)
struct EngineStateTests {
    /// Evaluates `ticks` cut at `cuts`, saving changed symbols after each piece into a store of
    /// encoded snapshots (only what `takeFinalChanges` returns is written, as `check` does).
    /// `rulesForPiece`, when given, makes each piece's rules (as if the files were edited between runs).
    static func inPieces(
        _ rules: [Rule], _ ticks: [Tick], cuts: [Int], markets: MarketList? = nil,
        rulesForPiece: ((Int) -> [Rule])? = nil
    ) throws -> [String] {
        var store: [String: [UInt8]] = [:]
        var alerts: [Alert] = []
        var start = 0
        for (piece, end) in (cuts + [ticks.count]).enumerated() {
            let engine = Engine(rules: rulesForPiece?(piece) ?? rules, markets: markets)
            engine.restore(try store.values.map { try SymbolSnapshot(decoding: $0) })
            for tick in ticks[start..<end] { engine.process(tick, into: &alerts) }
            for snapshot in engine.takeFinalChanges() { store[snapshot.symbol] = snapshot.encoded() }
            start = end
        }
        return alerts.map { "\($0.id) \($0.value)" }
    }

    static func whole(_ rules: [Rule], _ ticks: [Tick], markets: MarketList? = nil) -> [String] {
        let engine = Engine(rules: rules, markets: markets)
        var alerts: [Alert] = []
        for tick in ticks { engine.process(tick, into: &alerts) }
        return alerts.map { "\($0.id) \($0.value)" }
    }

    static func randomCuts(_ rng: inout SeededRandom, count: Int, pieces: Int) -> [Int] {
        (0..<(pieces - 1)).map { _ in Int.random(in: 0...count, using: &rng) }.sorted()
    }

    /// 60 random rules, 3 000 random ticks cut at random into `pieces`, and the alerts of one
    /// engine over all of them; `rng` goes on from there.
    static func randomStream(
        _ rng: inout SeededRandom, pieces: Int
    ) -> (rules: [Rule], ticks: [Tick], cuts: [Int], whole: [String]) {
        let rules = EngineReferenceTests.randomRules(&rng, count: 60)
        let ticks = EngineReferenceTests.randomTicks(&rng, count: 3000)
        let cuts = randomCuts(&rng, count: ticks.count, pieces: pieces)
        return (rules, ticks, cuts, whole(rules, ticks))
    }

    @Test(arguments: 1...10)
    func randomStreamsInPieces(seed: UInt64) throws {
        var rng = SeededRandom(seed: 500 + seed)
        let (rules, ticks, cuts, whole) = Self.randomStream(&rng, pieces: 25)
        #expect(whole.count > 50)
        #expect(try Self.inPieces(rules, ticks, cuts: cuts) == whole)
    }

    @Test func everyTickItsOwnRun() throws {
        var rng = SeededRandom(seed: 77)
        let rules = EngineReferenceTests.randomRules(&rng, count: 40)
        let ticks = EngineReferenceTests.randomTicks(&rng, count: 600)
        let whole = Self.whole(rules, ticks)
        #expect(whole.count > 10)
        #expect(try Self.inPieces(rules, ticks, cuts: Array(1..<ticks.count)) == whole)
    }

    @Test func matchRulesInPieces() throws {
        var rng = SeededRandom(seed: 4242)
        let (markets, rules) = EngineReferenceTests.matchRules(&rng, count: 30)
        let ticks = EngineReferenceTests.randomTicks(&rng, count: 3000)
        let cuts = Self.randomCuts(&rng, count: ticks.count, pieces: 40)
        let whole = Self.whole(rules, ticks, markets: markets)
        #expect(whole.count > 30)
        #expect(try Self.inPieces(rules, ticks, cuts: cuts, markets: markets) == whole)
    }

    /// Rule files edited between runs by moving rules around (and adding one): every rule keeps
    /// its state. Saved pairs are found in file order first; here that order keeps changing,
    /// so they must be found by id.
    @Test(arguments: 1...4)
    func rulesInAnotherOrderEachRunKeepTheirState(seed: UInt64) throws {
        var rng = SeededRandom(seed: 900 + seed)
        let (rules, ticks, cuts, whole) = Self.randomStream(&rng, pieces: 20)
        #expect(whole.count > 50)
        let pieces = try Self.inPieces(rules, ticks, cuts: cuts) { piece in
            var shuffled = rules.shuffled(using: &rng)
            if piece % 2 == 1 {
                shuffled.insert(rule("new-\(piece)", .price(.above(1e12))), at: piece % shuffled.count)
            }
            return shuffled
        }
        // Within a tick, alerts come in rule order, which changed: compare them as a set.
        #expect(pieces.sorted() == whole.sorted())
    }

    /// Without the saved state the pieces would not agree: the test can tell.
    @Test func forgettingStateIsCaught() {
        var rng = SeededRandom(seed: 501)
        let rules = EngineReferenceTests.randomRules(&rng, count: 60)
        let ticks = EngineReferenceTests.randomTicks(&rng, count: 3000)
        var alerts: [Alert] = []
        for piece in stride(from: 0, to: ticks.count, by: 300) {
            let engine = Engine(rules: rules)
            for tick in ticks[piece..<min(piece + 300, ticks.count)] { engine.process(tick, into: &alerts) }
        }
        #expect(alerts.map { "\($0.id) \($0.value)" } != Self.whole(rules, ticks))
    }

    @Test func onceSurvivesARestart() throws {
        let rules = [rule("once", .price(.above(100))).with(repeatMode: .once)]
        var alerts: [Alert] = []
        let first = Engine(rules: rules)
        first.process(Tick(time: 1000, symbol: "BTC", price: 101), into: &alerts)
        first.process(Tick(time: 2000, symbol: "BTC", price: 90), into: &alerts)
        let saved = first.takeChanges().map { $0.encoded() }
        let second = Engine(rules: rules)
        second.restore(try saved.map { try SymbolSnapshot(decoding: $0) })
        second.process(Tick(time: 3000, symbol: "BTC", price: 105), into: &alerts)
        #expect(alerts.map(\.time) == [1000])
    }

    /// Editing one rule resets that rule's pairs only; the others keep their state.
    @Test func changedRuleStartsOverAlone() throws {
        let before = [rule("kept", .price(.above(100))), rule("edited", .price(.above(100)))]
        var alerts: [Alert] = []
        let first = Engine(rules: before)
        first.process(Tick(time: 1000, symbol: "BTC", price: 101), into: &alerts)
        #expect(alerts.map(\.rule) == ["kept", "edited"])
        let saved = first.takeChanges()

        var after = before
        after[1].condition = .price(.above(100.5))
        after[0].message = "a new message keeps the state"
        let second = Engine(rules: after)
        second.restore(saved)
        alerts.removeAll()
        second.process(Tick(time: 2000, symbol: "BTC", price: 101), into: &alerts)
        #expect(alerts.map(\.rule) == ["edited"])
    }

    @Test func takeChangesReturnsOnlyWhatChanged() {
        let engine = Engine(rules: [rule(.price(.above(100)), symbols: ["BTC", "ETH"])])
        var alerts: [Alert] = []
        engine.process(Tick(time: 1000, symbol: "btc", price: 101), into: &alerts)
        engine.process(Tick(time: 1000, symbol: "ETH", price: 99), into: &alerts)
        #expect(engine.takeChanges().map(\.symbol).sorted() == ["BTC", "ETH"])
        engine.process(Tick(time: 2000, symbol: "ETH", price: 98), into: &alerts)
        let changed = engine.takeChanges()
        #expect(changed.map(\.symbol) == ["ETH"])
        #expect(changed.first?.lastPrice == 98)
        // A dropped tick changes nothing.
        engine.process(Tick(time: 1500, symbol: "ETH", price: 97), into: &alerts)
        #expect(engine.takeChanges().isEmpty)
    }

    /// Two engines with the same 40 random rules, given the same 2 000 random ticks.
    static func twins(seed: UInt64) -> (Engine, Engine) {
        var rng = SeededRandom(seed: seed)
        let rules = EngineReferenceTests.randomRules(&rng, count: 40)
        let ticks = EngineReferenceTests.randomTicks(&rng, count: 2000)
        let engines = (Engine(rules: rules), Engine(rules: rules))
        var alerts: [Alert] = []
        for tick in ticks {
            engines.0.process(tick, into: &alerts)
            engines.1.process(tick, into: &alerts)
        }
        return engines
    }

    /// The final save moves the histories out instead of copying them; what it saves is the same.
    @Test func finalChangesEqualChanges() {
        let (copying, moving) = Self.twins(seed: 31)
        let expected = copying.takeChanges()
        #expect(expected.contains { $0.minutes.count > 10 })
        #expect(moving.takeFinalChanges() == expected)
    }

    /// A save taken a part at a time (`takeChanges(limit:)`, as `run` saves): at most `limit`
    /// symbols a call, and together exactly what one `takeChanges` gives.
    @Test func changesTakenInPartsAddUpToTheWhole() {
        let (whole, parts) = Self.twins(seed: 37)
        let expected = whole.takeChanges().sorted { $0.symbol < $1.symbol }
        #expect(expected.count > 2)
        var taken: [SymbolSnapshot] = []
        var calls = 0
        while case let part = parts.takeChanges(limit: 2), !part.isEmpty {
            #expect(part.count <= 2)
            taken += part
            calls += 1
        }
        #expect(calls == (expected.count + 1) / 2)
        #expect(taken.sorted { $0.symbol < $1.symbol } == expected)
        #expect(parts.takeChanges().isEmpty)
    }

    /// A reload hands every symbol on, including restored ones that have not ticked since.
    @Test func snapshotAllKeepsUnusedRestoredSymbols() {
        let rules = [rule(.price(.above(100)), symbols: ["BTC", "ETH"])]
        let old = SymbolSnapshot(
            symbol: "ETH", lastTime: 5, lastPrice: 1,
            pairs: [PairSnapshot(rule: "r", fingerprint: 1, armed: false, spent: false, lastFired: 5)])
        let engine = Engine(rules: rules)
        engine.restore([old])
        var alerts: [Alert] = []
        engine.process(Tick(time: 1000, symbol: "BTC", price: 101), into: &alerts)
        #expect(engine.snapshotAll().map(\.symbol) == ["BTC", "ETH"])
        #expect(engine.snapshotAll().last == old)
    }

    /// The restored last time still orders ticks: an earlier tick after a restart is dropped.
    @Test func restoredTimeOrdersTicks() {
        let engine = Engine(rules: [rule(.price(.above(100)))])
        engine.restore([SymbolSnapshot(symbol: "BTC", lastTime: 10_000, lastPrice: 50)])
        var alerts: [Alert] = []
        #expect(engine.process(Tick(time: 9_000, symbol: "BTC", price: 101), into: &alerts) == .outOfOrder)
        #expect(alerts.isEmpty)
        #expect(engine.process(Tick(time: 10_000, symbol: "BTC", price: 101), into: &alerts) == nil)
        #expect(alerts.count == 1)
    }
}

@Suite("symbol snapshot encoding")
struct SymbolSnapshotCodingTests {
    static let sample = SymbolSnapshot(
        symbol: "BTC-PERP", firstTime: -5, lastTime: 1_700_000_000_123, lastPrice: 43_000.25,
        minutes: [28_333_333, 28_333_334], prices: [1.0E-5, .greatestFiniteMagnitude],
        pairs: [
            PairSnapshot(rule: "r.1", fingerprint: .max, armed: false, spent: true, lastFired: nil),
            PairSnapshot(rule: "é", fingerprint: 0, armed: true, spent: false, lastFired: 42)
        ])

    /// History chunks are read in place from the database's bytes; every bound is checked.
    @Test func historyChunksRoundTripAndDamageIsRefused() throws {
        let chunk = Self.sample.encodedHistory(0..<2)
        func read(_ bytes: [UInt8], after: [Int64] = []) -> String {
            var snapshot = SymbolSnapshot(symbol: "X", minutes: after, prices: after.map(Double.init))
            do {
                try bytes.withUnsafeBytes { try snapshot.appendHistory(decoding: $0) }
                return "\(snapshot.minutes) \(snapshot.prices)"
            } catch {
                return (error as? SnapshotError)?.reason ?? "\(error)"
            }
        }
        #expect(read(chunk) == "[28333333, 28333334] [1e-05, 1.7976931348623157e+308]")
        #expect(read(Array(chunk.dropLast())) == "symbol state is truncated")
        #expect(read(chunk + [0]) == "minute history has 1 bytes too many")
        #expect(read(Array(chunk.prefix(3))) == "symbol state is truncated")
        #expect(read(chunk, after: [28_333_333]) == "minute history out of order at minute 28333333")
    }

    @Test func roundTrips() throws {
        #expect(try SymbolSnapshot(decoding: Self.sample.encoded()) == Self.sample)
        let empty = SymbolSnapshot(symbol: "X")
        #expect(try SymbolSnapshot(decoding: empty.encoded()) == empty)
    }

    @Test func damagedBytesAreRefused() {
        let bytes = Self.sample.encoded()
        for length in [0, 1, 5, bytes.count / 2, bytes.count - 1] {
            #expect(throws: SnapshotError.self) { try SymbolSnapshot(decoding: Array(bytes.prefix(length))) }
        }
        #expect(throws: SnapshotError.self) { try SymbolSnapshot(decoding: bytes + [0]) }
        var otherVersion = bytes
        otherVersion[0] = 9
        #expect(throws: SnapshotError.self) { try SymbolSnapshot(decoding: otherVersion) }
    }

    @Test func fingerprintFollowsWhatDecidesFiring() {
        let base = Rule(id: "a", scope: .symbols(["BTC"]), condition: .change(window: 3_600_000, .above(5)))
        var renamed = base
        renamed.notify = ["ops"]
        renamed.message = "m"
        renamed.scope = .symbols(["ETH"])
        #expect(RuleFingerprint.of(base) == RuleFingerprint.of(renamed))
        var variants: [Rule] = []
        for change in 0..<5 {
            var r = base
            switch change {
            case 0: r.condition = .change(window: 7_200_000, .above(5))
            case 1: r.condition = .change(window: 3_600_000, .below(5))
            case 2: r.hysteresis = 0.5
            case 3: r.cooldown = 1
            default: r.repeatMode = .once
            }
            variants.append(r)
        }
        let prints = Set(([base] + variants).map(RuleFingerprint.of))
        #expect(prints.count == 6)
        // Stable across processes: a fixed value, not Swift's seeded Hasher.
        #expect(RuleFingerprint.of(base) == RuleFingerprint.of(base))
    }
}
