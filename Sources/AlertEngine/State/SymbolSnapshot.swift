import AlertModel

/// What the engine keeps of one key (an upper-cased symbol, or a portfolio's `@NAME`) between
/// runs (a `check` and the next, a daemon and its restart): one record for everything its
/// `KeyState` holds: the time order, `prev`, first-tick time (for window coverage), the minute
/// history of the indexed change windows, the minute and hour buckets with highs and lows, and
/// every (rule, key) pair whose state differs from a fresh, armed one.
///
/// Restoring a snapshot and going on gives exactly the alerts that continuing would have given
/// (Docs/rules.md#firing-and-re-arming): each pair's state is what decides, and the first tick
/// after a restore looks at every pair (so one cooling down is queued again).
public struct SymbolSnapshot: Sendable, Equatable {
    /// Upper-cased.
    public var symbol: String
    public var firstTime: Int64?
    public var lastTime: Int64?
    /// `prev`: the key's last live price.
    public var lastPrice: Double?
    /// The newest tick recorded, live or seeded (nil: as `lastTime`).
    public var newest: Int64?
    /// The minute history (Docs/rules.md#change-windows): each minute's last price, oldest first;
    /// empty for a key with buckets, whose minute buckets hold its minutes. The state database
    /// keeps it apart, one chunk per hour.
    public var minutes: [Int64]
    public var prices: [Double]
    /// Minute and hour buckets with highs and lows, for the rules evaluated pair by pair.
    var minuteBuckets = Buckets()
    var hourBuckets = Buckets()
    /// Whether the key evaluates rules pair by pair (or a portfolio holds it).
    var evaluatesPairs = false
    public var pairs: [PairSnapshot]
    /// The pairs of the rules evaluated pair by pair whose state is not a fresh one.
    var pairStates: [PairStateSnapshot] = []
    /// How many events each pair of the key emitted in their latest millisecond, so ids stay
    /// unique and stable across restarts (see `EventNumbers`); nil when it emitted none.
    public var events: EventCounts?

    public init(
        symbol: String, firstTime: Int64? = nil, lastTime: Int64? = nil, lastPrice: Double? = nil,
        minutes: [Int64] = [], prices: [Double] = [], pairs: [PairSnapshot] = []
    ) {
        self.symbol = symbol
        self.firstTime = firstTime
        self.lastTime = lastTime
        self.lastPrice = lastPrice
        self.minutes = minutes
        self.prices = prices
        self.pairs = pairs
    }
}

/// The state of one (rule, key) pair of an indexed rule. `fingerprint` is the rule's
/// `RuleFingerprint` when the state was saved: a rule whose condition, hysteresis, cooldown or
/// repeat changed starts over.
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

/// The state of one (rule, key) pair of a rule evaluated pair by pair (armed, last fired, a
/// `for` start, reminders, a move's reference); `fingerprint` as in `PairSnapshot`. Kept apart
/// from the indexed pairs so that those (most of them) stay small.
struct PairStateSnapshot: Sendable, Equatable {
    var rule: String
    var fingerprint: UInt64
    var state: PairState
}

/// A saved snapshot that cannot be read (written by something else, or damaged).
public struct SnapshotError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}

extension SymbolSnapshot {
    /// The format tag of `encoded()`, the one this version writes: the key's times, a flags byte
    /// (1: buckets, 2: event counts), then its minutes, each once: the minute and hour buckets
    /// with highs and lows (flag 1), else the minute history; the event counts (flag 2), the
    /// indexed rules' pairs (flags 1 armed, 2 spent), then the other rules' pairs.
    static let formatVersion: UInt8 = 5
    /// Tag 4, read and migrated: the minute history, then the flags byte and what it says. A key
    /// with buckets wrote its minutes twice, once in each (their last prices are the same); read,
    /// they are one again (`Buckets.merging`).
    static let format4: UInt8 = 4
    /// Tags 1–3, read and migrated (`init(decodingBeforeFormat4:)`): written by the version that
    /// kept the pair-by-pair rules' state apart, as a "series" after the indexed pairs.
    static let formatsBefore4: ClosedRange<UInt8> = 1...3

    /// A compact little-endian encoding, for the state database. A key with buckets writes no
    /// minute history: its minute buckets hold every minute, with the history's last prices.
    public func encoded() -> [UInt8] {
        var w = ByteWriter()
        w.byte(Self.formatVersion)
        w.string(symbol)
        w.optional(firstTime)
        w.optional(lastTime)
        w.optional(lastPrice)
        w.optional(newest)
        w.byte((evaluatesPairs ? 1 : 0) | (events != nil ? 2 : 0))
        if evaluatesPairs {
            w.buckets(minutes.isEmpty ? minuteBuckets : minuteBuckets.merging((minutes, prices)))
            w.buckets(hourBuckets)
        } else {
            w.history(minutes[...], prices[...])
        }
        if let events {
            w.int64(events.time)
            w.count(events.counts.count)
            for (key, n) in events.counts.sorted(by: { $0.key < $1.key }) {
                w.string(key)
                w.int64(Int64(n))
            }
        }
        w.count(pairs.count)
        for pair in pairs {
            w.string(pair.rule)
            w.uint64(pair.fingerprint)
            w.byte((pair.armed ? 1 : 0) | (pair.spent ? 2 : 0))
            w.optional(pair.lastFired)
        }
        w.pairStates(pairStates)
        return w.bytes
    }

    public init(decoding bytes: [UInt8]) throws(SnapshotError) {
        var r = ByteReader(bytes)
        let version = try r.byte()
        if Self.formatsBefore4.contains(version) {
            try self.init(decodingBeforeFormat4: &r, version: version)
        } else {
            guard version == Self.formatVersion || version == Self.format4 else {
                throw SnapshotError(reason: "unknown symbol state format \(version)")
            }
            self.init(symbol: try r.string())
            firstTime = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
            lastTime = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
            lastPrice = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.double() }
            newest = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
            if version == Self.format4 { try readHistory(&r) }
            let flags = try r.byte()
            if flags & 1 != 0 {
                evaluatesPairs = true
                minuteBuckets = try r.buckets()
                hourBuckets = try r.buckets()
                mergeHistoryIntoBuckets()
            } else if version == Self.formatVersion {
                try readHistory(&r)
            }
            if flags & 2 != 0 { events = try r.eventCounts() }
            try readPairs(&r)
            pairStates = try r.pairStates()
        }
        guard r.isAtEnd else { throw SnapshotError(reason: "symbol state has \(r.remaining) bytes too many") }
    }

    /// A key with buckets keeps its minutes there, each once: a minute history read beside them
    /// (format 4 wrote both, the history also as the state database's hourly chunks) is merged
    /// into the minute buckets, and the history emptied. Nothing changes for a key without.
    public mutating func mergeHistoryIntoBuckets() {
        guard evaluatesPairs, !minutes.isEmpty else { return }
        minuteBuckets = minuteBuckets.merging((minutes, prices))
        minutes = []
        prices = []
    }

    private mutating func readHistory(_ r: inout ByteReader) throws(SnapshotError) {
        let historyCount = try r.count(itemSize: 16)
        minutes.reserveCapacity(historyCount)
        prices.reserveCapacity(historyCount)
        for _ in 0..<historyCount {
            minutes.append(try r.int64())
            prices.append(try r.double())
        }
    }

    private mutating func readPairs(_ r: inout ByteReader) throws(SnapshotError) {
        let pairCount = try r.count(itemSize: 14)
        pairs.reserveCapacity(pairCount)
        for _ in 0..<pairCount {
            let rule = try r.string()
            let fingerprint = try r.uint64()
            let flags = try r.byte()
            let lastFired = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
            pairs.append(
                PairSnapshot(
                    rule: rule, fingerprint: fingerprint, armed: flags & 1 != 0,
                    spent: flags & 2 != 0, lastFired: lastFired))
        }
    }

    /// Formats 1–3, migrated: the indexed rules' part (times, `prev`, minute history, pairs),
    /// then the pair-by-pair rules' "series" (tag 2; tag 3: when flag 1 says so) with its own
    /// times, buckets and pairs, then the event counts (tag 3, flag 2). The two parts' times
    /// become one: the earlier first tick, the later last tick with its price.
    private init(decodingBeforeFormat4 r: inout ByteReader, version: UInt8) throws(SnapshotError) {
        self.init(symbol: try r.string())
        firstTime = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
        lastTime = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
        lastPrice = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.double() }
        try readHistory(&r)
        try readPairs(&r)
        let flags = version == 3 ? try r.byte() : version == 2 ? 1 : 0
        if flags & 1 != 0 {
            let seriesFirst = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
            let seriesPrev = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.double() }
            let seriesLast = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
            newest = try r.optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
            evaluatesPairs = true
            minuteBuckets = try r.buckets()
            hourBuckets = try r.buckets()
            pairStates = try r.pairStates()
            if let first = seriesFirst { firstTime = min(firstTime ?? first, first) }
            if let last = seriesLast, last >= lastTime ?? .min {
                lastTime = last
                lastPrice = seriesPrev ?? lastPrice
            } else if lastPrice == nil {
                lastPrice = seriesPrev
            }
        }
        if flags & 2 != 0 { events = try r.eventCounts() }
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
        w.history(minutes[range], prices[range])
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
            prices.append(
                Double(
                    bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 13 + 16 * i, as: UInt64.self)))
            )
        }
    }
}

extension ByteWriter {
    /// Minute history entries: their count, then each minute and its price.
    mutating func history(_ minutes: ArraySlice<Int64>, _ prices: ArraySlice<Double>) {
        count(minutes.count)
        reserve(minutes.count * 16)
        for (m, p) in zip(minutes, prices) {
            int64(m)
            double(p)
        }
    }

    mutating func pairStates(_ pairs: [PairStateSnapshot]) {
        count(pairs.count)
        for p in pairs {
            string(p.rule)
            uint64(p.fingerprint)
            byte(p.state.armed ? 1 : 0)
            optional(p.state.lastFired)
            optional(p.state.since)
            int64(Int64(p.state.reminders))
            optional(p.state.reference)
        }
    }

    /// Highs and lows not kept are written as the last prices.
    mutating func buckets(_ b: Buckets) {
        let e = b.keepingExtremes(true).entries
        count(e.keys.count)
        reserve(e.keys.count * 32)
        for i in e.keys.indices {
            int64(e.keys[i])
            double(e.last[i])
            double(e.high[i])
            double(e.low[i])
        }
    }
}

extension ByteReader {
    mutating func pairStates() throws(SnapshotError) -> [PairStateSnapshot] {
        var pairs: [PairStateSnapshot] = []
        for _ in 0..<(try count(itemSize: 17)) {
            let rule = try string()
            let fingerprint = try uint64()
            var state = PairState()
            state.armed = try byte() & 1 != 0
            state.lastFired = try optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
            state.since = try optional { (r: inout ByteReader) throws(SnapshotError) in try r.int64() }
            state.reminders = Int(try int64())
            state.reference = try optional { (r: inout ByteReader) throws(SnapshotError) in try r.double() }
            pairs.append(PairStateSnapshot(rule: rule, fingerprint: fingerprint, state: state))
        }
        return pairs
    }

    mutating func eventCounts() throws(SnapshotError) -> EventCounts {
        var counts = EventCounts(time: try int64())
        for _ in 0..<(try count(itemSize: 12)) {
            let key = try string()
            counts.counts[key] = Int(try int64())
        }
        return counts
    }

    mutating func buckets() throws(SnapshotError) -> Buckets {
        let n = try count(itemSize: 32)
        var keys: [Int64] = [], last: [Double] = [], high: [Double] = [], low: [Double] = []
        keys.reserveCapacity(n); last.reserveCapacity(n); high.reserveCapacity(n); low.reserveCapacity(n)
        for _ in 0..<n {
            let key = try int64()
            guard keys.last.map({ key > $0 }) ?? true else {
                throw SnapshotError(reason: "buckets out of order at \(key)")
            }
            keys.append(key)
            last.append(try double())
            high.append(try double())
            low.append(try double())
        }
        return Buckets(taking: &keys, last: &last, high: &high, low: &low, keepsExtremes: true)
    }
}

extension SymbolSnapshot {
    /// Roughly the bytes this snapshot's copy holds (its arrays, not what it shares with the
    /// engine): what a save on its way to the store costs in memory while it waits to be written.
    public var approximateBytes: Int {
        let history = minutes.count * 16
        let buckets = (minuteBuckets.keys.count + hourBuckets.keys.count) * 32
        return 128 + history + buckets + pairs.count * MemoryLayout<PairSnapshot>.stride
            + pairStates.count * MemoryLayout<PairStateSnapshot>.stride + (events?.counts.count ?? 0) * 32
    }
}
