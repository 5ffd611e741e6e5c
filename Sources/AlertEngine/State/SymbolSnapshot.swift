/// What the engine keeps of one symbol between runs (a `check` and the next, a daemon and its
/// restart): the time order, `prev`, first-tick time (for window coverage), the minute history,
/// and every (rule, symbol) pair whose state differs from a fresh, armed one.
///
/// Restoring a snapshot and going on gives exactly the alerts that continuing would have given
/// (Docs/rules.md#firing-and-re-arming): each pair's armed/spent/last-fired state is what
/// decides, and the first tick after a restore looks at every pair (so one cooling down is
/// queued again).
import AlertModel

public struct SymbolSnapshot: Sendable, Equatable {
    /// Upper-cased.
    public var symbol: String
    public var firstTime: Int64?
    public var lastTime: Int64?
    public var lastPrice: Double?
    /// The minute history (Docs/rules.md#change-windows): each minute's last price, oldest first.
    public var minutes: [Int64]
    public var prices: [Double]
    public var pairs: [PairSnapshot]
    /// The plain evaluator's state of the symbol (version 2 rules, portfolios), when it has one.
    public var series: SeriesSnapshot?
    /// How many events each pair of the symbol emitted in their latest millisecond, so ids stay
    /// unique and stable across restarts (see `EventNumbers`); nil when it emitted none.
    public var events: EventCounts?

    public init(symbol: String, firstTime: Int64? = nil, lastTime: Int64? = nil, lastPrice: Double? = nil,
                minutes: [Int64] = [], prices: [Double] = [], pairs: [PairSnapshot] = []) {
        self.symbol = symbol
        self.firstTime = firstTime
        self.lastTime = lastTime
        self.lastPrice = lastPrice
        self.minutes = minutes
        self.prices = prices
        self.pairs = pairs
    }
}

/// The state of one (rule, symbol) pair. `fingerprint` is the rule's `RuleFingerprint` when the
/// state was saved: a rule whose condition, hysteresis, cooldown or repeat changed starts over.
public struct PairSnapshot: Sendable, Equatable {
    // In an order that packs (a restore may hold 100 000 until their symbols tick): 40 bytes, not 48.
    public var rule: String
    public var fingerprint: UInt64
    public var lastFired: Int64?
    public var armed: Bool
    public var spent: Bool

    public init(rule: String, fingerprint: UInt64, armed: Bool, spent: Bool, lastFired: Int64?) {
        self.rule = rule
        self.fingerprint = fingerprint
        self.armed = armed
        self.spent = spent
        self.lastFired = lastFired
    }
}

/// A saved snapshot that cannot be read (written by something else, or damaged).
public struct SnapshotError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

extension SymbolSnapshot {
    /// The format tag of `encoded()`: 1 without `series` (what every version writes for
    /// version 1 rules), 2 with it appended, 3 with a flags byte (1: `series`, 2: `events`)
    /// and those that are there appended (written only when `events` is there); a reader
    /// refuses other tags.
    static let formatVersion: UInt8 = 1
    static let seriesFormatVersion: UInt8 = 2
    static let flaggedFormatVersion: UInt8 = 3

    /// A compact little-endian encoding, for the state database.
    public func encoded() -> [UInt8] {
        var w = ByteWriter()
        w.byte(events != nil ? Self.flaggedFormatVersion : series == nil ? Self.formatVersion : Self.seriesFormatVersion)
        w.string(symbol)
        w.optional(firstTime)
        w.optional(lastTime)
        w.optional(lastPrice)
        w.count(minutes.count)
        w.reserve(minutes.count * 16)
        for (m, p) in zip(minutes, prices) {
            w.int64(m)
            w.double(p)
        }
        w.count(pairs.count)
        for pair in pairs {
            w.string(pair.rule)
            w.uint64(pair.fingerprint)
            w.byte((pair.armed ? 1 : 0) | (pair.spent ? 2 : 0))
            w.optional(pair.lastFired)
        }
        if let events {
            w.byte((series == nil ? 0 : 1) | 2)
            if let series { w.series(series) }
            w.int64(events.time)
            w.count(events.counts.count)
            for (key, n) in events.counts.sorted(by: { $0.key < $1.key }) {
                w.string(key)
                w.int64(Int64(n))
            }
        } else if let series {
            w.series(series)
        }
        return w.bytes
    }

    public init(decoding bytes: [UInt8]) throws(SnapshotError) {
        var r = ByteReader(bytes)
        let version = try r.byte()
        guard (Self.formatVersion...Self.flaggedFormatVersion).contains(version) else {
            throw SnapshotError(reason: "unknown symbol state format \(version)")
        }
        symbol = try r.string()
        firstTime = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
        lastTime = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
        lastPrice = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.double() }
        let historyCount = try r.count(itemSize: 16)
        minutes = []
        prices = []
        minutes.reserveCapacity(historyCount)
        prices.reserveCapacity(historyCount)
        for _ in 0..<historyCount {
            minutes.append(try r.int64())
            prices.append(try r.double())
        }
        let pairCount = try r.count(itemSize: 14)
        pairs = []
        pairs.reserveCapacity(pairCount)
        for _ in 0..<pairCount {
            let rule = try r.string()
            let fingerprint = try r.uint64()
            let flags = try r.byte()
            let lastFired = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
            pairs.append(PairSnapshot(rule: rule, fingerprint: fingerprint, armed: flags & 1 != 0,
                                      spent: flags & 2 != 0, lastFired: lastFired))
        }
        let flags = version == Self.flaggedFormatVersion ? try r.byte() : version == Self.seriesFormatVersion ? 1 : 0
        series = flags & 1 != 0 ? try r.series() : nil
        if flags & 2 != 0 {
            var counts = EventCounts(time: try r.int64())
            for _ in 0..<(try r.count(itemSize: 12)) {
                let key = try r.string()
                counts.counts[key] = Int(try r.int64())
            }
            events = counts
        } else {
            events = nil
        }
        guard r.isAtEnd else { throw SnapshotError(reason: "symbol state has \(r.remaining) bytes too many") }
    }
}

/// The minute history kept apart from the rest of a snapshot, one chunk per hour, so that a save
/// rewrites only the hours that changed (the newest, and the oldest when it was trimmed) instead
/// of a whole day for every symbol.
extension SymbolSnapshot {
    /// The format tag of a history chunk.
    static let historyFormatVersion: UInt8 = 1

    /// The hour a minute (epoch minutes) belongs to: the key of the chunk that holds it.
    public static func hour(ofMinute minute: Int64) -> Int64 {
        minute >= 0 ? minute / 60 : (minute - 59) / 60
    }

    /// History entries `range` (indices into `minutes`/`prices`) as one chunk.
    public func encodedHistory(_ range: Range<Int>) -> [UInt8] {
        var w = ByteWriter()
        w.byte(Self.historyFormatVersion)
        w.count(range.count)
        w.reserve(range.count * 16)
        for i in range {
            w.int64(minutes[i])
            w.double(prices[i])
        }
        return w.bytes
    }

    /// Makes room for `count` more history entries, so that appending a symbol's chunks
    /// allocates its history once.
    public mutating func reserveHistory(_ count: Int) {
        minutes.reserveCapacity(minutes.count + count)
        prices.reserveCapacity(prices.count + count)
    }

    /// Appends a chunk's entries to the history (chunks are read oldest first), read in place
    /// from the database's page.
    public mutating func appendHistory(decoding bytes: UnsafeRawBufferPointer) throws(SnapshotError) {
        guard let version = bytes.first else { throw SnapshotError(reason: "symbol state is truncated") }
        guard version == Self.historyFormatVersion else {
            throw SnapshotError(reason: "unknown minute history format \(version)")
        }
        guard bytes.count >= 5 else { throw SnapshotError(reason: "symbol state is truncated") }
        let count = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 1, as: UInt32.self)))
        guard count * 16 <= bytes.count - 5 else { throw SnapshotError(reason: "symbol state is truncated") }
        guard count * 16 == bytes.count - 5 else {
            throw SnapshotError(reason: "minute history has \(bytes.count - 5 - count * 16) bytes too many")
        }
        var previous = minutes.last ?? .min
        for i in 0..<count {
            let minute = Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 5 + 16 * i, as: Int64.self))
            guard minute > previous || (minutes.isEmpty && i == 0) else {
                throw SnapshotError(reason: "minute history out of order at minute \(minute)")
            }
            previous = minute
            minutes.append(minute)
            prices.append(Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 13 + 16 * i, as: UInt64.self))))
        }
    }
}

/// What the plain evaluator keeps of one symbol or portfolio between runs (Docs/rules.md,
/// "How version 2 is evaluated"): coverage, `prev`, the minute and hour buckets with their
/// highs and lows, and each pair's state (since, reminders, move reference).
public struct SeriesSnapshot: Sendable, Equatable {
    var firstTime: Int64?
    var prev: Double?
    var lastTime: Int64?
    var newest: Int64?
    var minutes: Buckets
    var hours: Buckets
    var pairs: [SeriesPairSnapshot]
}

/// One plain pair's state; `fingerprint` as in `PairSnapshot`.
struct SeriesPairSnapshot: Sendable, Equatable {
    var rule: String
    var fingerprint: UInt64
    var pair: PlainPair
}

extension ByteWriter {
    mutating func series(_ s: SeriesSnapshot) {
        optional(s.firstTime)
        optional(s.prev)
        optional(s.lastTime)
        optional(s.newest)
        buckets(s.minutes)
        buckets(s.hours)
        count(s.pairs.count)
        for p in s.pairs {
            string(p.rule)
            uint64(p.fingerprint)
            byte(p.pair.armed ? 1 : 0)
            optional(p.pair.lastFired)
            optional(p.pair.since)
            int64(Int64(p.pair.reminders))
            optional(p.pair.reference)
        }
    }

    private mutating func buckets(_ b: Buckets) {
        count(b.keys.count)
        reserve(b.keys.count * 32)
        for i in b.keys.indices {
            int64(b.keys[i])
            double(b.last[i])
            double(b.high[i])
            double(b.low[i])
        }
    }
}

extension ByteReader {
    mutating func series() throws(SnapshotError) -> SeriesSnapshot {
        let firstTime = try optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
        let prev = try optional { (r: inout ByteReader) throws(SnapshotError) in try r.double() }
        let lastTime = try optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
        let newest = try optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
        let minutes = try buckets()
        let hours = try buckets()
        var pairs: [SeriesPairSnapshot] = []
        for _ in 0..<(try count(itemSize: 17)) {
            let rule = try string()
            let fingerprint = try uint64()
            var pair = PlainPair()
            pair.armed = try byte() & 1 != 0
            pair.lastFired = try optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
            pair.since = try optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
            pair.reminders = Int(try int64())
            pair.reference = try optional { (r: inout ByteReader) throws(SnapshotError) in try r.double() }
            pairs.append(SeriesPairSnapshot(rule: rule, fingerprint: fingerprint, pair: pair))
        }
        return SeriesSnapshot(firstTime: firstTime, prev: prev, lastTime: lastTime, newest: newest,
                              minutes: minutes, hours: hours, pairs: pairs)
    }

    private mutating func buckets() throws(SnapshotError) -> Buckets {
        let n = try count(itemSize: 32)
        var keys: [Int64] = [], last: [Double] = [], high: [Double] = [], low: [Double] = []
        keys.reserveCapacity(n); last.reserveCapacity(n); high.reserveCapacity(n); low.reserveCapacity(n)
        for _ in 0..<n {
            let key = try int64()
            guard keys.last.map({ key > $0 }) ?? true else { throw SnapshotError(reason: "buckets out of order at \(key)") }
            keys.append(key)
            last.append(try double())
            high.append(try double())
            low.append(try double())
        }
        return Buckets(keys: keys, last: last, high: high, low: low)
    }
}
