import Platform
import SeededRandom

/// A run of one parser over inputs `from..<from + count` of seed `seed`. Input `i` depends only
/// on (parser, seed, i), so any one of them can be made again alone (`input(_:)`).
public struct FuzzCampaign: Sendable {
    public let target: FuzzTarget
    public let seed: UInt64
    public let seeds: [[UInt8]]

    /// Reads the seeds: `repository` holds Rules/ and Samples/, `fixtures` the recorded payloads.
    public init(target: FuzzTarget, seed: UInt64, repository: String, fixtures: String) throws {
        self.target = target
        self.seed = seed
        self.seeds = try Seeds.load(target, repository: repository, fixtures: fixtures)
    }

    public struct Outcome: Sendable {
        public var inputs = 0
        /// The slowest input and how long it took.
        public var slowestIndex = 0
        public var slowestSeconds = 0.0
        public var largestInputBytes = 0
        /// A sum of the parser's results, printed so the work is not optimised away.
        public var checksum = 0
    }

    /// Input `index`: one of the seeds, unchanged one time in sixteen, else mutated.
    public func input(_ index: Int) -> [UInt8] {
        var rng = SeededRandom(seed: seed ^ Self.hash(target.name))
        var mixed = SeededRandom(seed: rng.next() &+ UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15)
        let base = seeds[mixed.below(seeds.count)]
        return mixed.below(16) == 0 ? base : Mutator(seeds: seeds).mutate(base, rng: &mixed)
    }

    /// Runs the inputs in order on this thread, telling `watchdog` when each starts and ends.
    public func run(from: Int, count: Int, watchdog: Watchdog? = nil) -> Outcome {
        var outcome = Outcome()
        for index in from..<(from + count) {
            let bytes = input(index)
            let start = Monotonic.nanoseconds()
            watchdog?.begin(index, at: start)
            outcome.checksum &+= target.run(bytes)
            let seconds = Double(Monotonic.nanoseconds() - start) / 1e9
            watchdog?.end()
            outcome.inputs += 1
            outcome.largestInputBytes = max(outcome.largestInputBytes, bytes.count)
            if seconds > outcome.slowestSeconds {
                outcome.slowestSeconds = seconds
                outcome.slowestIndex = index
            }
        }
        return outcome
    }

    /// FNV-1a: a fixed number per parser name, so parsers draw different inputs from one seed.
    static func hash(_ name: String) -> UInt64 {
        name.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
    }
}
