import AlertEngine
import AlertModel
import Foundation
import GRDB
import Synchronization

/// The engine's state between runs, beside the outbox in the same database: each
/// symbol's `SymbolSnapshot` (pair states, `prev`, buckets; its minute history, if it has one
/// rather than buckets, in `symbol_history`, one row per symbol and hour) and the last market
/// list. A save is one transaction, so a crash leaves the previous save or the new one, never a
/// mix.
public final class EngineStateStore: Sendable {
    private let database: DatabasePool
    /// Per symbol, the oldest and newest minute of its history on disk, as this process loaded
    /// or saved it: a save rewrites only the hours from the newest on (history only grows at
    /// its end) and the oldest hour when it was trimmed. Absent: every hour is written.
    private let onDisk = Mutex<[String: (first: Int64, last: Int64)]>([:])
    /// Per symbol read by `load(lookingUp:)`: the minute the longest window looks up for the
    /// newest tick (the smallest upper end of its lookups). Only when a save's history starts at
    /// or before it are the hours before that start known to be unneeded (see `save`).
    private let partialFloors = Mutex<[String: Int64]>([:])

    init(database: DatabasePool) {
        self.database = database
    }

    /// Every saved symbol. A row that cannot be read is an error naming the symbol: state is
    /// never silently dropped. Read on the writer's connection (no reader connection is opened
    /// for it), whose page cache is emptied afterwards: a daemon keeps what it loaded, not the
    /// pages it read it from.
    public func load() throws -> [SymbolSnapshot] {
        defer { database.releaseMemory() }
        return try database.write { db in
            // Entries per symbol first, so each history is allocated once at its full size.
            var sizes: [String: Int] = [:]
            let counted = try Row.fetchCursor(
                db,
                sql: """
                    SELECT symbol, (length(entries) - 5) / 16 FROM symbol_history NOT INDEXED
                    """)
            while let row = try counted.next() { sizes[row[0], default: 0] += row[1] as Int }
            var snapshots: [SymbolSnapshot] = []
            // Where each symbol's snapshot is, when its history is read from `symbol_history`.
            var positions: [String: Int] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT symbol, snapshot FROM symbol_state ORDER BY symbol")
            while let row = try rows.next() {
                let symbol: String = row[0]
                var snapshot = try row.withUnsafeData(atIndex: 1) { blob in
                    try Self.bytes(of: blob) { try Self.snapshot(symbol, $0) }
                }
                // A snapshot saved by schema 3 or older holds its history itself: it is kept, and
                // the next save writes it as chunks (no extent recorded).
                if snapshot.minutes.isEmpty {
                    snapshot.reserveHistory(sizes[symbol] ?? 0)
                    positions[symbol] = snapshots.count
                }
                snapshots.append(snapshot)
            }
            // In the table's order (hour, then symbol): each symbol's chunks come oldest first.
            let chunks = try Row.fetchCursor(
                db, sql: "SELECT symbol, entries FROM symbol_history ORDER BY hour, symbol")
            while let row = try chunks.next() {
                let symbol: String = row[0]
                guard let i = positions[symbol] else { continue }
                try row.withUnsafeData(atIndex: 1) { blob in
                    try Self.bytes(of: blob) { try Self.append($0, of: symbol, to: &snapshots[i]) }
                }
            }
            var extents: [String: (first: Int64, last: Int64)] = [:]
            for (symbol, i) in positions {
                // Chunks of a key with buckets (saved by format 4) go into its buckets: the next
                // save writes its minutes once, and deletes the chunks.
                snapshots[i].mergeHistoryIntoBuckets()
                if let first = snapshots[i].minutes.first, let last = snapshots[i].minutes.last {
                    extents[symbol] = (first, last)
                }
            }
            onDisk.withLock { $0.merge(extents) { $1 } }
            return snapshots
        }
    }

    /// The saved state of the symbols in `lookups` only (a run that evaluates a few ticks: `check`),
    /// each with only the hours of its minute history that those ticks can look up: for each
    /// range of minutes, the hours it spans and the newest hour before them (where the price
    /// at or before its first minute may be), and the newest hour (which new minutes extend).
    /// Hours not read stay on disk as they are; a later save writes only hours it read or made.
    /// Read on the writer's connection (in a transaction that writes nothing), which the save
    /// that follows uses too: one page cache instead of two.
    ///
    /// The history is read hour by hour, each hour's rows of all the symbols that need it in one
    /// query: the table is keyed by hour first, so those rows share pages (a `check` of every
    /// symbol reads a few runs of pages, not a few pages for each symbol).
    public func load(lookingUp lookups: [String: [ClosedRange<Int64>]]) throws -> [SymbolSnapshot] {
        try database.write { db in
            let state = try db.cachedStatement(sql: "SELECT snapshot FROM symbol_state WHERE symbol = ?")
            // A symbol's hours on disk, from the index on (symbol, hour) alone.
            let hours = try db.cachedStatement(sql: "SELECT hour FROM symbol_history WHERE symbol = ? ORDER BY hour")
            var snapshots: [SymbolSnapshot] = []
            // Per hour, the snapshots (indices into `snapshots`) that read it.
            var wanted: [Int64: [Int]] = [:]
            // Per snapshot with a history on disk: whether its oldest hour there is read.
            var readsOldest: [Int: Bool] = [:]
            for (symbol, ranges) in lookups.sorted(by: { $0.key < $1.key }) {
                guard let row = try Row.fetchOne(state, arguments: [symbol]) else { continue }
                let snapshot = try row.withUnsafeData(atIndex: 0) { blob in
                    try Self.bytes(of: blob) { try Self.snapshot(symbol, $0) }
                }
                let index = snapshots.count
                snapshots.append(snapshot)
                // A snapshot saved by schema 3 or older holds its history itself (see `load()`).
                guard snapshot.minutes.isEmpty else { continue }
                let stored = try Int64.fetchAll(hours, arguments: [symbol])
                guard let oldest = stored.first, let newest = stored.last else { continue }
                let hour = SymbolSnapshot.hour(ofMinute:)
                var spans: [ClosedRange<Int64>] = [newest...newest]
                for range in ranges {
                    let (low, high) = (hour(range.lowerBound), hour(range.upperBound))
                    let previous = stored.last { $0 < low } ?? low
                    spans.append(previous...max(high, previous))
                }
                let read = Self.merged(spans)
                for hour in stored where read.contains(where: { $0.contains(hour) }) {
                    wanted[hour, default: []].append(index)
                }
                readsOldest[index] = read.first.map { $0.contains(oldest) } ?? false
            }
            try Self.readHours(wanted, into: &snapshots, db: db)
            // As in `load()`: the chunks of a key with buckets go into its buckets.
            for i in snapshots.indices { snapshots[i].mergeHistoryIntoBuckets() }
            var extents: [String: (first: Int64, last: Int64)] = [:]
            for (index, readOldest) in readsOldest {
                let snapshot = snapshots[index]
                if let first = snapshot.minutes.first, let last = snapshot.minutes.last {
                    // When the oldest hour was not read, its first minute is unknown: the next save
                    // rewrites the oldest hour it has (see `save` for which hours it drops).
                    extents[snapshot.symbol] = (readOldest ? first : .min, last)
                }
            }
            onDisk.withLock { $0.merge(extents) { $1 } }
            partialFloors.withLock { floors in
                for (symbol, ranges) in lookups { floors[symbol] = ranges.map(\.upperBound).min() ?? .min }
            }
            return snapshots
        }
    }

    /// Appends to `snapshots` the chunks of the hours in `wanted` (hour: indices of the snapshots
    /// that read it), oldest hour first, with one query per hour for up to 500 symbols.
    private static func readHours(_ wanted: [Int64: [Int]], into snapshots: inout [SymbolSnapshot], db: Database) throws
    {
        for hour in wanted.keys.sorted() {
            let indices = wanted[hour]!
            for start in stride(from: 0, to: indices.count, by: 500) {
                let batch = indices[start..<min(start + 500, indices.count)]
                let statement = try db.cachedStatement(
                    sql: """
                        SELECT symbol, entries FROM symbol_history
                        WHERE hour = ? AND symbol IN (\(Array(repeating: "?", count: batch.count).joined(separator: ", ")))
                        """)
                let positions = Dictionary(batch.map { (snapshots[$0].symbol, $0) }, uniquingKeysWith: { a, _ in a })
                let arguments: [any DatabaseValueConvertible] = [hour] + batch.map { snapshots[$0].symbol }
                let rows = try Row.fetchCursor(statement, arguments: StatementArguments(arguments))
                while let row = try rows.next() {
                    let symbol: String = row[0]
                    guard let i = positions[symbol] else { continue }
                    try row.withUnsafeData(atIndex: 1) { blob in
                        try Self.bytes(of: blob) { try Self.append($0, of: symbol, to: &snapshots[i]) }
                    }
                }
            }
        }
    }

    /// `spans` sorted, overlapping and adjacent ones joined.
    static func merged(_ spans: [ClosedRange<Int64>]) -> [ClosedRange<Int64>] {
        var result: [ClosedRange<Int64>] = []
        for span in spans.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = result.last, span.lowerBound <= last.upperBound + 1 {
                result[result.count - 1] = last.lowerBound...max(last.upperBound, span.upperBound)
            } else {
                result.append(span)
            }
        }
        return result
    }

    /// A `symbol_state` blob decoded; one that cannot be is an error naming the symbol.
    private static func snapshot(_ symbol: String, _ blob: UnsafeRawBufferPointer) throws -> SymbolSnapshot {
        try reading(symbol) { () throws(SnapshotError) in try SymbolSnapshot(decoding: [UInt8](blob)) }
    }

    /// A `symbol_history` chunk of `symbol` appended to `snapshot`'s history, read in place.
    private static func append(
        _ chunk: UnsafeRawBufferPointer, of symbol: String, to snapshot: inout SymbolSnapshot
    ) throws {
        try reading(symbol) { () throws(SnapshotError) in try snapshot.appendHistory(decoding: chunk) }
    }

    /// A blob that cannot be decoded is an error naming the symbol.
    private static func reading<T>(_ symbol: String, _ body: () throws(SnapshotError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw StateReadError(symbol: symbol, reason: error.reason)
        }
    }

    /// `body` on a blob's bytes in place (no copy; an absent blob is empty).
    private static func bytes<T>(of blob: Data?, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try (blob ?? Data()).withUnsafeBytes(body)
    }

    /// Writes `snapshots` (replacing those symbols' rows; of their minute history only the hours
    /// that changed since this process loaded or saved it) and, when given, the market list, in
    /// one transaction.
    public func save(_ snapshots: [SymbolSnapshot], markets: MarketsSave? = nil, now: Int64) throws {
        guard !snapshots.isEmpty || markets != nil else { return }
        let known = onDisk.withLock { $0 }
        let floors = partialFloors.withLock { $0 }
        var extents: [String: (first: Int64, last: Int64)?] = [:]
        try database.write { db in
            let statement = try db.makeStatement(
                sql: """
                    INSERT OR REPLACE INTO symbol_state (symbol, snapshot, saved_at) VALUES (?, ?, ?)
                    """)
            // An hour already on disk is updated in place: its index entry stays as it is.
            let chunk = try db.makeStatement(
                sql: """
                    INSERT INTO symbol_history (hour, symbol, entries) VALUES (?, ?, ?)
                    ON CONFLICT (hour, symbol) DO UPDATE SET entries = excluded.entries
                    """)
            // Hours outside the history go: two ranges of the index on (symbol, hour), each
            // sought directly (`hour < ? OR hour > ?` in one statement reads all of the symbol's).
            let trimBefore = try db.makeStatement(sql: "DELETE FROM symbol_history WHERE symbol = ? AND hour < ?")
            let trimAfter = try db.makeStatement(sql: "DELETE FROM symbol_history WHERE symbol = ? AND hour > ?")
            for var snapshot in snapshots {
                // Each minute is written once: a key with buckets writes no history chunks.
                snapshot.mergeHistoryIntoBuckets()
                var bare = snapshot
                bare.minutes = []
                bare.prices = []
                try statement.execute(arguments: [snapshot.symbol, Data(bare.encoded()), now])
                guard let first = snapshot.minutes.first, let last = snapshot.minutes.last else {
                    try trimBefore.execute(arguments: [snapshot.symbol, Int64.max])
                    extents[snapshot.symbol] = .some(nil)
                    continue
                }
                let hour = SymbolSnapshot.hour(ofMinute:)
                // Hours before the history's first are dropped: no window looks them up any more.
                // Unless only part of the history was read and it starts after the minute the
                // longest window looked up last: then no minute at or before that one was on disk
                // (the window found nothing yet), and the unread hours before it are still needed.
                let dropBefore = floors[snapshot.symbol].map { first > $0 } == true ? Int64.min : hour(first)
                // Where the disk's extent is known (loaded or saved by this process) and nothing
                // lies outside the history, there is nothing to look for.
                let disk = known[snapshot.symbol]
                if dropBefore != .min, disk.map({ $0.first == .min || hour($0.first) < dropBefore }) ?? true {
                    try trimBefore.execute(arguments: [snapshot.symbol, dropBefore])
                }
                if disk.map({ hour($0.last) > hour(last) }) ?? true {
                    try trimAfter.execute(arguments: [snapshot.symbol, hour(last)])
                }
                for range in Self.changedHours(snapshot, since: disk) {
                    try chunk.execute(arguments: [
                        hour(snapshot.minutes[range.lowerBound]), snapshot.symbol,
                        Data(snapshot.encodedHistory(range))
                    ])
                }
                extents[snapshot.symbol] = (first, last)
            }
            if let markets { try Self.write(markets, db: db) }
        }
        onDisk.withLock { disk in
            for (symbol, extent) in extents { disk[symbol] = extent }
        }
    }

    /// The index ranges of `snapshot`'s history, one per hour, that differ from what is on disk
    /// when the disk holds minutes `disk.first...disk.last` of the same history: the hours from
    /// the newest on disk to the end, and the oldest hour when its first minutes were trimmed.
    /// Every hour when nothing is known.
    static func changedHours(_ snapshot: SymbolSnapshot, since disk: (first: Int64, last: Int64)?) -> [Range<Int>] {
        let minutes = snapshot.minutes
        let hour = SymbolSnapshot.hour(ofMinute:)
        var ranges: [Range<Int>] = []
        var start = 0
        for i in 1...minutes.count where i == minutes.count || hour(minutes[i]) != hour(minutes[start]) {
            ranges.append(start..<i)
            start = i
        }
        guard let disk else { return ranges }
        return ranges.filter { range in
            let h = hour(minutes[range.lowerBound])
            return h >= hour(disk.last) || (range.lowerBound == 0 && minutes[0] != disk.first)
        }
    }

    /// The market list saved last, and where and when it came from; nil when none was saved.
    /// Read on the writer's connection, as `load(lookingUp:)` is: a `check` then never opens a
    /// second connection (with its own page cache).
    public func loadMarkets() throws -> MarketsSave? {
        try database.write { db in
            guard let meta = try Row.fetchOne(db, sql: "SELECT source, fetched_at FROM market_list_meta") else {
                return nil
            }
            let markets = try Row.fetchAll(
                db, sql: "SELECT symbol, name, base, quote, future, active FROM market_list ORDER BY position"
            )
            .map { row in
                Market(symbol: row[0], name: row[1], base: row[2], quote: row[3], future: row[4], active: row[5])
            }
            return MarketsSave(markets: markets, source: meta[0], fetchedAt: meta[1])
        }
    }

    private static func write(_ save: MarketsSave, db: Database) throws {
        try db.execute(sql: "DELETE FROM market_list; DELETE FROM market_list_meta")
        try db.execute(
            sql: "INSERT INTO market_list_meta (source, fetched_at) VALUES (?, ?)",
            arguments: [save.source, save.fetchedAt])
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO market_list (position, symbol, name, base, quote, future, active) VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
        for (i, m) in save.markets.enumerated() {
            try statement.execute(arguments: [i, m.symbol, m.name, m.base, m.quote, m.future, m.active])
        }
    }

    /// Symbols with saved state.
    public func count() throws -> Int {
        try database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM symbol_state") ?? 0 }
    }

    static func migrate(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE symbol_state (
                  symbol TEXT PRIMARY KEY NOT NULL, snapshot BLOB NOT NULL, saved_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE market_list_meta (source TEXT NOT NULL, fetched_at INTEGER NOT NULL);
                CREATE TABLE market_list (
                  position INTEGER PRIMARY KEY, symbol TEXT NOT NULL, name TEXT NOT NULL, base TEXT NOT NULL,
                  quote TEXT NOT NULL, future INTEGER NOT NULL, active INTEGER NOT NULL
                );
                PRAGMA user_version = 2;
                """)
    }

    /// Schema 4: the minute history in hourly chunks beside the snapshots.
    static func migrateHistory(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE symbol_history (
                  symbol TEXT NOT NULL, hour INTEGER NOT NULL, entries BLOB NOT NULL, PRIMARY KEY (symbol, hour)
                ) WITHOUT ROWID;
                PRAGMA user_version = 4;
                """)
    }

    /// Schema 5: the minute history keyed by hour first, so that one hour of every symbol shares
    /// pages: a `check` of all symbols reads and rewrites a few runs of pages instead of a few
    /// pages per symbol. The index on (symbol, hour) finds a symbol's oldest, newest and earlier
    /// hours.
    static func migrateHistoryByHour(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE symbol_history_by_hour (
                  hour INTEGER NOT NULL, symbol TEXT NOT NULL, entries BLOB NOT NULL, PRIMARY KEY (hour, symbol)
                ) WITHOUT ROWID;
                INSERT INTO symbol_history_by_hour (hour, symbol, entries)
                  SELECT hour, symbol, entries FROM symbol_history ORDER BY hour, symbol;
                DROP TABLE symbol_history;
                ALTER TABLE symbol_history_by_hour RENAME TO symbol_history;
                CREATE INDEX symbol_history_symbol ON symbol_history (symbol, hour);
                PRAGMA user_version = 5;
                """)
    }
}

/// A market list as saved: the entries, the source (name or file) and when (epoch ms).
public struct MarketsSave: Sendable, Equatable {
    public var markets: [Market]
    public var source: String
    public var fetchedAt: Int64

    public init(markets: [Market], source: String, fetchedAt: Int64) {
        self.markets = markets
        self.source = source
        self.fetchedAt = fetchedAt
    }
}

/// A saved symbol that cannot be read.
public struct StateReadError: Error, Sendable, CustomStringConvertible {
    public var symbol: String
    public var reason: String
    public var description: String { "saved state of \(symbol) cannot be read: \(reason)" }
}
