import AlertEngine
import AlertModel
import AlertStore
import Logging
import PostgresNIO
import Synchronization

/// The engine's state in PostgreSQL, as `AlertStore.EngineStateStore` keeps it in SQLite: each
/// symbol's `SymbolSnapshot` without its minute history in `engine_symbols`, the history in
/// `engine_history` one row per symbol and hour, and the last market list.
///
/// A save is one transaction on the store's queue, behind every outbox write handed over
/// before it, and it commits together with any outbox write that failed before
/// (`PostgresOutbox.afterUnwritten`): state that says an alert fired never commits without the
/// alert's outbox row. It writes only the hours that changed since this process loaded or saved
/// the symbol (`EngineStateStore.hoursToWrite`), and drops the hours outside the history.
/// A load reads a symbol's whole history (also for `check`'s `load(lookingUp:)`), so what is
/// stored is always known.
public final class PostgresEngineState: EngineStateKeeper {
    let queue: PostgresQueue
    let outbox: PostgresOutbox
    /// Per symbol, the oldest and newest minute of its history in the store, as this process
    /// loaded or saved it.
    private let stored = Mutex<[String: (first: Int64, last: Int64)]>([:])

    init(_ queue: PostgresQueue, outbox: PostgresOutbox) {
        self.queue = queue
        self.outbox = outbox
    }

    public func load() async throws -> [SymbolSnapshot] {
        try await read(nil)
    }

    public func load(lookingUp lookups: [String: [ClosedRange<Int64>]]) async throws -> [SymbolSnapshot] {
        try await read(lookups.keys.sorted())
    }

    /// The saved symbols (only `symbols` when given), by symbol, each with its whole history.
    private func read(_ symbols: [String]?) async throws -> [SymbolSnapshot] {
        let logger = queue.logger
        let snapshots = try await queue.perform { connection in
            var snapshots: [SymbolSnapshot] = []
            var positions: [String: Int] = [:]
            let rows = try await connection.query(
                """
                SELECT symbol, snapshot FROM engine_symbols
                WHERE \(symbols)::TEXT[] IS NULL OR symbol = ANY(\(symbols)) ORDER BY symbol
                """, logger: logger)
            for try await (symbol, blob) in rows.decode((String, ByteBuffer).self) {
                let snapshot = try Self.reading(symbol) { try SymbolSnapshot(decoding: Array(blob.readableBytesView)) }
                if snapshot.minutes.isEmpty { positions[symbol] = snapshots.count }
                snapshots.append(snapshot)
            }
            let chunks = try await connection.query(
                """
                SELECT symbol, entries FROM engine_history
                WHERE \(symbols)::TEXT[] IS NULL OR symbol = ANY(\(symbols)) ORDER BY symbol, hour
                """, logger: logger)
            for try await (symbol, blob) in chunks.decode((String, ByteBuffer).self) {
                guard let i = positions[symbol] else { continue }
                try Self.reading(symbol) {
                    try blob.withUnsafeReadableBytes { try snapshots[i].appendHistory(decoding: $0) }
                }
            }
            // As in `EngineStateStore.load()`: a key with buckets keeps its minutes there.
            for i in snapshots.indices { snapshots[i].mergeHistoryIntoBuckets() }
            return snapshots
        }
        stored.withLock { extents in
            for snapshot in snapshots {
                if let first = snapshot.minutes.first, let last = snapshot.minutes.last {
                    extents[snapshot.symbol] = (first, last)
                } else {
                    extents[snapshot.symbol] = nil
                }
            }
        }
        return snapshots
    }

    public func save(_ snapshots: [SymbolSnapshot], markets: MarketsSave?, now: Int64) async throws {
        guard !snapshots.isEmpty || markets != nil else { return }
        let known = stored.withLock { $0 }
        let logger = queue.logger
        let outbox = self.outbox
        let leases = outbox.fencing.current
        let extents = try await queue.perform { connection, attempt in
            try await outbox.afterUnwritten(connection, attempt) { connection in
                guard let leases else {
                    return try await Self.write(snapshots, markets: markets, now: now, known: known, connection, logger)
                }
                let (kept, keptMarkets) = try await Self.fenced(
                    snapshots, markets: markets, leases, outbox.fencing, connection, logger)
                return try await Self.write(kept, markets: keptMarkets, now: now, known: known, connection, logger)
            }
        }
        stored.withLock { disk in
            for (symbol, extent) in extents { disk[symbol] = extent }
        }
    }

    /// Inside the save's transaction: checks the fence of each lease `snapshots` (by key) and
    /// `markets` (the home lease's) belong to, and keeps only what this instance leads under
    /// the epoch the store holds; what another instance leads now is dropped and logged (that
    /// leader saves its own), so a paused old leader that wakes saves nothing. A lease still
    /// this instance's or no one's throws `AwaitingLease`: the save is kept for the next one.
    static func fenced(
        _ snapshots: [SymbolSnapshot], markets: MarketsSave?, _ leases: SourceLeases, _ fencing: StoreFencing,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> ([SymbolSnapshot], MarketsSave?) {
        let byLease = Dictionary(grouping: snapshots) { leases.lease(ofKey: $0.symbol) }
        var led: Set<String> = []
        for lease in Set(byLease.keys).union(markets == nil ? [] : [leases.home]).sorted() {
            do {
                try await PostgresLeadership.check(StoreFencing.fence(leases, lease: lease), connection, logger)
                led.insert(lease)
            } catch let lost as LostLeadership {
                if let awaiting = fencing.refusal(lost) { throw awaiting }
                logger.warning("state of \(byLease[lease]?.count ?? 0) symbols not saved: \(lost)")
            }
        }
        return (
            snapshots.filter { led.contains(leases.lease(ofKey: $0.symbol)) }, led.contains(leases.home) ? markets : nil
        )
    }

    /// Writes `snapshots` and `markets` on `connection` (in the caller's transaction); returns
    /// each symbol's history extent now stored. However many symbols a save holds, it is at
    /// most three statements (the symbols, the hours dropped, the hours written), each with
    /// its rows as arrays: a save's time is the rows' work, not a round trip per row. A symbol
    /// named twice is written as its last snapshot.
    static func write(
        _ snapshots: [SymbolSnapshot], markets: MarketsSave?, now: Int64,
        known: [String: (first: Int64, last: Int64)], _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [String: (first: Int64, last: Int64)?] {
        var extents: [String: (first: Int64, last: Int64)?] = [:]
        let hour = SymbolSnapshot.hour(ofMinute:)
        var last: [String: Int] = [:]
        for (i, snapshot) in snapshots.enumerated() { last[snapshot.symbol] = i }
        var symbols: [String] = [], blobs: [ByteBuffer] = []
        // Per symbol of `symbols`, the hours its history keeps; a symbol without history keeps
        // none (Int64.max...Int64.min: every stored hour falls outside).
        var kept: (first: [Int64], last: [Int64]) = ([], [])
        var chunks: (symbols: [String], hours: [Int64], entries: [ByteBuffer]) = ([], [], [])
        for (i, original) in snapshots.enumerated() where last[original.symbol] == i {
            // Each minute is written once: a key with buckets writes no history chunks.
            var snapshot = original
            snapshot.mergeHistoryIntoBuckets()
            var bare = snapshot
            bare.minutes = []
            bare.prices = []
            let symbol = snapshot.symbol
            symbols.append(symbol)
            blobs.append(ByteBuffer(bytes: bare.encoded()))
            guard let first = snapshot.minutes.first, let newest = snapshot.minutes.last else {
                kept.first.append(.max)
                kept.last.append(.min)
                extents[symbol] = .some(nil)
                continue
            }
            kept.first.append(hour(first))
            kept.last.append(hour(newest))
            for range in EngineStateStore.hoursToWrite(snapshot, since: known[symbol]) {
                chunks.symbols.append(symbol)
                chunks.hours.append(hour(snapshot.minutes[range.lowerBound]))
                chunks.entries.append(ByteBuffer(bytes: snapshot.encodedHistory(range)))
            }
            extents[symbol] = (first, newest)
        }
        if !symbols.isEmpty {
            try await connection.query(
                """
                INSERT INTO engine_symbols (symbol, snapshot, saved_at)
                SELECT symbol, snapshot, \(now) FROM UNNEST(\(symbols)::TEXT[], \(blobs)::BYTEA[]) AS s(symbol, snapshot)
                ON CONFLICT (symbol) DO UPDATE SET snapshot = excluded.snapshot, saved_at = excluded.saved_at
                """, logger: logger)
            try await connection.query(
                """
                DELETE FROM engine_history h
                USING UNNEST(\(symbols)::TEXT[], \(kept.first)::BIGINT[], \(kept.last)::BIGINT[]) AS k(symbol, first, last)
                WHERE h.symbol = k.symbol AND (h.hour < k.first OR h.hour > k.last)
                """, logger: logger)
        }
        if !chunks.symbols.isEmpty {
            try await connection.query(
                """
                INSERT INTO engine_history (symbol, hour, entries)
                SELECT * FROM UNNEST(\(chunks.symbols)::TEXT[], \(chunks.hours)::BIGINT[], \(chunks.entries)::BYTEA[])
                ON CONFLICT (symbol, hour) DO UPDATE SET entries = excluded.entries
                """, logger: logger)
        }
        if let markets { try await write(markets, connection, logger) }
        return extents
    }

    private static func write(_ save: MarketsSave, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("DELETE FROM market_list", logger: logger)
        try await connection.query(
            """
            INSERT INTO market_list_meta (one, source, fetched_at) VALUES (TRUE, \(save.source), \(save.fetchedAt))
            ON CONFLICT (one) DO UPDATE SET source = excluded.source, fetched_at = excluded.fetched_at
            """, logger: logger)
        guard !save.markets.isEmpty else { return }
        let m = save.markets
        try await connection.query(
            """
            INSERT INTO market_list (position, symbol, name, base, quote, future, active)
            SELECT * FROM UNNEST(\(Array(Int64(0)..<Int64(m.count))), \(m.map(\.symbol)), \(m.map(\.name)),
              \(m.map(\.base)), \(m.map(\.quote)), \(m.map(\.future)), \(m.map(\.active)))
            """, logger: logger)
    }

    public func loadMarkets() async throws -> MarketsSave? {
        let logger = queue.logger
        return try await queue.perform { connection in
            let meta = try await connection.query("SELECT source, fetched_at FROM market_list_meta", logger: logger)
            var found: (String, Int64)?
            for try await row in meta.decode((String, Int64).self) { found = row }
            guard let (source, fetchedAt) = found else { return nil }
            let rows = try await connection.query(
                "SELECT symbol, name, base, quote, future, active FROM market_list ORDER BY position", logger: logger)
            var markets: [Market] = []
            for try await row in rows.decode((String, String, String, String, Bool, Bool).self) {
                markets.append(
                    Market(symbol: row.0, name: row.1, base: row.2, quote: row.3, future: row.4, active: row.5))
            }
            return MarketsSave(markets: markets, source: source, fetchedAt: fetchedAt)
        }
    }

    public func count() async throws -> Int {
        let logger = queue.logger
        return try await queue.perform { connection in
            let rows = try await connection.query("SELECT COUNT(*) FROM engine_symbols", logger: logger)
            var count = 0
            for try await value in rows.decode(Int.self) { count = value }
            return count
        }
    }

    /// A blob that cannot be decoded is an error naming the symbol: state is never silently
    /// dropped.
    private static func reading<T>(_ symbol: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SnapshotError {
            throw StateReadError(symbol, reason: error.reason)
        }
    }
}

/// The markets `listed` rules know, in PostgreSQL (`ListingStore` keeps them in files): for the
/// list of ticks without a source, one row per symbol in `listings`, `pending` for one whose
/// first tick has not come yet; for each rule-file source, one row in `source_listings` with
/// its known and pending symbols. Each list is replaced whole, in one transaction.
public final class PostgresListings: ListingKeeper {
    let queue: PostgresQueue

    init(_ queue: PostgresQueue) {
        self.queue = queue
    }

    public var place: String { "store \(queue.url) (tables listings, source_listings)" }

    /// The list of ticks without a source and each of `sources`' lists, when saved.
    public func load(sources: [String] = []) async throws -> [SavedListings] {
        let logger = queue.logger
        return try await queue.perform { connection in
            var saved: [SavedListings] = []
            let meta = try await connection.query("SELECT saved_at FROM listings_meta", logger: logger)
            var hasPlain = false
            for try await _ in meta.decode(Int64.self) { hasPlain = true }
            if hasPlain {
                var known = Set<String>(), pending = Set<String>()
                let rows = try await connection.query("SELECT symbol, pending FROM listings", logger: logger)
                for try await (symbol, isPending) in rows.decode((String, Bool).self) {
                    known.insert(symbol)
                    if isPending { pending.insert(symbol) }
                }
                saved.append(SavedListings(source: nil, known: known, pending: pending))
            }
            guard !sources.isEmpty else { return saved }
            let rows = try await connection.query(
                "SELECT source, known, pending FROM source_listings WHERE source = ANY(\(sources)) ORDER BY source",
                logger: logger)
            for try await (source, known, pending) in rows.decode((String, [String], [String]).self) {
                saved.append(SavedListings(source: source, known: Set(known), pending: Set(pending)))
            }
            return saved
        }
    }

    /// Replaces each list in `lists` (those with a known set) with its known and pending symbols.
    public func save(_ lists: [NewListings]) async throws {
        let lists = lists.filter { $0.known != nil }
        guard !lists.isEmpty else { return }
        let logger = queue.logger
        try await queue.transaction { connection in
            for listings in lists {
                let symbols = (listings.known ?? []).sorted()
                if let source = listings.source {
                    try await Self.replace(
                        source: source, known: symbols, pending: listings.pending.sorted(), connection, logger)
                } else {
                    try await Self.replace(
                        symbols, pending: symbols.map { listings.pending.contains($0) }, connection, logger)
                }
            }
        }
    }

    /// Replaces rule-file source `source`'s known markets.
    static func replace(
        source: String, known: [String], pending: [String], _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO source_listings (source, known, pending, saved_at)
            VALUES (\(source), \(known), \(pending), (extract(epoch FROM now()) * 1000)::BIGINT)
            ON CONFLICT (source) DO UPDATE SET known = excluded.known, pending = excluded.pending,
              saved_at = excluded.saved_at
            """, logger: logger)
    }

    static func replace(
        _ symbols: [String], pending: [Bool], _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        try await connection.query("DELETE FROM listings", logger: logger)
        try await connection.query(
            """
            INSERT INTO listings_meta (one, saved_at) VALUES (TRUE, (extract(epoch FROM now()) * 1000)::BIGINT)
            ON CONFLICT (one) DO UPDATE SET saved_at = excluded.saved_at
            """, logger: logger)
        guard !symbols.isEmpty else { return }
        try await connection.query(
            "INSERT INTO listings (symbol, pending) SELECT * FROM UNNEST(\(symbols), \(pending))", logger: logger)
    }
}
