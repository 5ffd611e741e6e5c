import AlertEngine
import AlertModel
import AlertStore
import Logging
import Platform
import PostgresNIO

/// `pricealert store copy`: what a state folder holds, written into the store in one
/// transaction. Copying again adds nothing twice: a pending row is known by (delivery id, sink),
/// a dead letter by (delivery id, sink, when it died), a silence by its id, a ledger entry by
/// (source, symbol), a symbol's engine state by its symbol, a held event by (sink, event id);
/// the market list and the known markets are copied when the store has none, and each rule-file
/// source's market list and known markets when the store has none for that source. What the
/// store has already is kept as it is.
extension PostgresStore {
    /// What a state folder holds that the store takes.
    public struct Folder: Sendable {
        public var pending: [OutboxEntry]
        public var dead: [OutboxEntry]
        public var silences: [SilenceRecord]
        public var backfill: [BackfillLedger.Entry]
        public var engine: [SymbolSnapshot] = []
        public var markets: MarketsSave?
        public var held: [PolicyStateStore.Pending] = []
        public var listings: (known: Set<String>?, pending: Set<String>) = (nil, [])
        /// Each rule-file source's last market list (`markets-NAME.json`).
        public var sourceMarkets: [MarketsSave] = []
        /// Each rule-file source's known markets (`listings-NAME.txt`).
        public var sourceListings: [SavedListings] = []

        public init(
            pending: [OutboxEntry], dead: [OutboxEntry], silences: [SilenceRecord], backfill: [BackfillLedger.Entry]
        ) {
            self.pending = pending
            self.dead = dead
            self.silences = silences
            self.backfill = backfill
        }
    }

    /// Of each kind, how many rows were written and how many the store had already.
    public struct Copied: Sendable, Equatable {
        public var pending = (written: 0, present: 0)
        public var dead = (written: 0, present: 0)
        public var silences = (written: 0, present: 0)
        public var backfill = (written: 0, present: 0)
        /// Symbols' engine state.
        public var engine = (written: 0, present: 0)
        /// The market list of ticks without a source (0 or 1), and each rule-file source's.
        public var markets = (written: 0, present: 0)
        /// Events held by quiet hours or open digests.
        public var held = (written: 0, present: 0)
        /// The known markets of `listed` rules: of ticks without a source (0 or 1 list), and of
        /// each rule-file source.
        public var listings = (written: 0, present: 0)

        public static func == (a: Copied, b: Copied) -> Bool {
            [a.pending, a.dead, a.silences, a.backfill, a.engine, a.markets, a.held, a.listings].elementsEqual(
                [b.pending, b.dead, b.silences, b.backfill, b.engine, b.markets, b.held, b.listings], by: { $0 == $1 })
        }
    }

    /// Writes `folder` into the store in one transaction (all or nothing).
    public func copy(_ folder: Folder) async throws(PostgresStoreError) -> Copied {
        try await describing("cannot copy the state folder") {
            try await self.queue.transaction { connection in
                try await Self.copy(folder, connection, self.queue.logger)
            }
        }
    }

    private static func copy(
        _ folder: Folder, _ connection: PostgresConnection, _ logger: Logger
    ) async throws
        -> Copied
    {
        var copied = Copied()
        for row in folder.pending {
            let written = try await PostgresOutbox.insert(
                row.delivery, sinks: [row.sink], urgent: row.urgent, now: row.createdAt, connection, logger)
            guard let id = written.first?.id else {
                copied.pending.present += 1
                continue
            }
            try await connection.query(
                """
                UPDATE outbox SET attempts = \(Int64(row.attempts)), next_attempt_at = \(row.nextAttemptAt),
                  last_error = \(row.lastError)
                WHERE id = \(id)
                """, logger: logger)
            copied.pending.written += 1
        }
        for row in folder.dead {
            let exists = try await connection.query(
                """
                SELECT 1 FROM dead_letters WHERE delivery_id = \(row.deliveryID) AND sink = \(row.sink)
                  AND died_at = \(row.nextAttemptAt)
                """, logger: logger)
            var present = false
            for try await _ in exists.decode(Int.self) { present = true }
            if present {
                copied.dead.present += 1
                continue
            }
            try await PostgresOutbox.insertDead(
                row.delivery, sink: row.sink, reason: row.deadReason ?? "", now: row.nextAttemptAt, connection, logger,
                copied: row)
            copied.dead.written += 1
        }
        for silence in folder.silences {
            let rows = try await connection.query(
                """
                INSERT INTO silences (id, rule, symbol, starts_at, ends_at, comment, created_at, expired_at)
                VALUES (\(silence.id), \(silence.rule), \(silence.symbol), \(silence.from), \(silence.until),
                  \(silence.comment), \(silence.createdAt), \(silence.expiredAt))
                ON CONFLICT (id) DO NOTHING RETURNING id
                """, logger: logger)
            var written = false
            for try await _ in rows.decode(String.self) { written = true }
            if written { copied.silences.written += 1 } else { copied.silences.present += 1 }
        }
        for entry in folder.backfill {
            let rows = try await connection.query(
                """
                INSERT INTO backfill_ledger (source, symbol, reach, fetched_at, candles)
                VALUES (\(entry.source), \(entry.symbol), \(entry.reach), \(entry.fetchedAt), \(Int64(entry.candles)))
                ON CONFLICT (source, symbol) DO NOTHING RETURNING symbol
                """, logger: logger)
            var written = false
            for try await _ in rows.decode(String.self) { written = true }
            if written { copied.backfill.written += 1 } else { copied.backfill.present += 1 }
        }
        try await copyState(folder, into: &copied, connection, logger)
        return copied
    }

    /// The engine state, market list, held events and known markets of `folder`.
    private static func copyState(
        _ folder: Folder, into copied: inout Copied, _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        let present = try await connection.query(
            "SELECT symbol FROM engine_symbols WHERE symbol = ANY(\(folder.engine.map(\.symbol)))", logger: logger)
        var there = Set<String>()
        for try await symbol in present.decode(String.self) { there.insert(symbol) }
        let missing = folder.engine.filter { !there.contains($0.symbol) }
        copied.engine = (missing.count, folder.engine.count - missing.count)
        var markets: MarketsSave?
        if let list = folder.markets {
            if try await exists("market_list_meta", connection, logger) {
                copied.markets.present = 1
            } else {
                markets = list
                copied.markets.written = 1
            }
        }
        _ = try await PostgresEngineState.write(
            missing, markets: markets, now: Wallclock.millis(), known: [:], connection, logger)
        for row in folder.held {
            try await unlessFound(
                "SELECT 1 FROM policy_pending WHERE sink = \(row.sink) AND alert_id = \(row.alert.id)",
                counting: &copied.held, connection, logger
            ) { try await PostgresPolicyJournal.insert([row], connection, logger) }
        }
        if let known = folder.listings.known {
            if try await exists("listings_meta", connection, logger) {
                copied.listings.present = 1
            } else {
                let symbols = known.sorted()
                try await PostgresListings.replace(
                    symbols, pending: symbols.map { folder.listings.pending.contains($0) }, connection, logger)
                copied.listings.written = 1
            }
        }
        for list in folder.sourceMarkets {
            try await unlessFound(
                "SELECT 1 FROM source_market_lists WHERE source = \(list.source)", counting: &copied.markets,
                connection, logger
            ) { try await PostgresSourceMarkets.write(list, connection, logger) }
        }
        for listings in folder.sourceListings {
            guard let source = listings.source, let known = listings.known else { continue }
            try await unlessFound(
                "SELECT 1 FROM source_listings WHERE source = \(source)", counting: &copied.listings, connection,
                logger
            ) {
                try await PostgresListings.replace(
                    source: source, known: known.sorted(), pending: listings.pending.sorted(), connection, logger)
            }
        }
    }

    /// Runs `write` unless `query` finds a row, and counts it in `counts` as written or present.
    private static func unlessFound(
        _ query: PostgresQuery, counting counts: inout (written: Int, present: Int),
        _ connection: PostgresConnection, _ logger: Logger, write: () async throws -> Void
    ) async throws {
        let rows = try await connection.query(query, logger: logger)
        var found = false
        for try await _ in rows.decode(Int.self) { found = true }
        if found {
            counts.present += 1
        } else {
            try await write()
            counts.written += 1
        }
    }

    private static func exists(_ table: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> Bool
    {
        let rows = try await connection.query("SELECT COUNT(*) FROM \(unescaped: table)", logger: logger)
        var count = 0
        for try await value in rows.decode(Int.self) { count = value }
        return count > 0
    }
}
